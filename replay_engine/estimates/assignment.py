"""Kafka's replica assignment (``AdminUtils.assignReplicasToBrokers``), rack-unaware and rack-aware.

Kafka starts from a random index; a what-if needs a deterministic answer, so
the caller passes the start index and shift (``fixedStartIndex`` in Kafka's
terms). :func:`extend_replication` keeps each partition's current first
replica (its preferred leader) and adds followers the way the algorithm would.
"""
from __future__ import annotations

from typing import Mapping, Sequence


def replica_index(first: int, shift: int, j: int, n: int) -> int:
    return (first + 1 + (shift + j) % (n - 1)) % n


def assign_rack_unaware(brokers: Sequence[int], partitions: int, rf: int, start_index: int,
                        replica_shift: int | None = None, start_partition: int = 0) -> dict[int, list[int]]:
    if rf > len(brokers):
        raise ValueError(f"replication factor {rf} larger than the {len(brokers)} available brokers")
    arr = sorted(brokers)
    n = len(arr)
    shift = start_index if replica_shift is None else replica_shift
    out: dict[int, list[int]] = {}
    for p in range(start_partition, start_partition + partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        reps = [arr[first]]
        for j in range(rf - 1):
            reps.append(arr[replica_index(first, shift, j, n)])
        out[p] = reps
    return out


def rack_alternated(racks: Mapping[int, str]) -> list[int]:
    """Brokers ordered rack by rack in turn (racks sorted, brokers sorted within a rack)."""
    by_rack: dict[str, list[int]] = {}
    for b, r in racks.items():
        by_rack.setdefault(r, []).append(b)
    names = sorted(by_rack)
    iters = {r: iter(sorted(by_rack[r])) for r in names}
    out: list[int] = []
    i = 0
    while len(out) < len(racks):
        nxt = next(iters[names[i]], None)
        if nxt is not None:
            out.append(nxt)
        i = (i + 1) % len(names)
    return out


def assign_rack_aware(racks: Mapping[int, str], partitions: int, rf: int, start_index: int,
                      replica_shift: int | None = None, start_partition: int = 0) -> dict[int, list[int]]:
    if rf > len(racks):
        raise ValueError(f"replication factor {rf} larger than the {len(racks)} available brokers")
    arr = rack_alternated(racks)
    n = len(arr)
    num_racks = len(set(racks.values()))
    shift = start_index if replica_shift is None else replica_shift
    out: dict[int, list[int]] = {}
    for p in range(start_partition, start_partition + partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start_index) % n
        leader = arr[first]
        reps = [leader]
        racks_used, brokers_used = {racks[leader]}, {leader}
        k = 0
        for _ in range(rf - 1):
            while True:
                b = arr[replica_index(first, shift * num_racks, k, n)]
                k += 1
                r = racks[b]
                if (r not in racks_used or len(racks_used) == num_racks) and (
                        b not in brokers_used or len(brokers_used) == n):
                    reps.append(b)
                    racks_used.add(r)
                    brokers_used.add(b)
                    break
        out[p] = reps
    return out


def extend_replication(current: Mapping[int, Sequence[int]], brokers: Sequence[int], rf: int,
                       racks: Mapping[int, str] | None = None) -> dict[int, tuple[int, ...]]:
    """New assignment with replication factor ``rf``, keeping every partition's first replica.

    The algorithm is run with the start index that reproduces partition 0's first replica; each
    partition's own first replica is then kept (it may have been placed by hand) and its followers are
    the algorithm's, skipping that first replica.
    """
    arr = sorted(set(brokers))
    if rf > len(arr):
        raise ValueError(f"replication factor {rf} needs at least {rf} brokers; the trace shows {len(arr)}")
    parts = sorted(current)
    if not parts:
        return {}
    rack_aware = racks is not None and all(b in racks for b in arr) and len(set(racks[b] for b in arr)) > 1
    order = rack_alternated({b: racks[b] for b in arr}) if rack_aware else arr  # type: ignore[index]
    first0 = current[parts[0]][0] if current[parts[0]] else order[0]
    start = (order.index(first0) - parts[0]) % len(order) if first0 in order else 0
    if rack_aware:
        base = assign_rack_aware({b: racks[b] for b in arr}, max(parts) + 1, rf, start)  # type: ignore[index]
    else:
        base = assign_rack_unaware(arr, max(parts) + 1, rf, start)
    out: dict[int, tuple[int, ...]] = {}
    for p in parts:
        cur = list(current[p])
        first = cur[0] if cur else base[p][0]
        reps = [first] + [b for b in base[p] if b != first]
        for b in cur[1:] + arr:  # fill from the old followers, then any broker, if the algorithm's pick collided
            if len(reps) >= rf:
                break
            if b not in reps:
                reps.append(b)
        out[p] = tuple(reps[:rf])
    return out
