"""Replica assignment at topic creation: AdminUtils.assignReplicasToBrokers, rack-unaware.

Brokers sorted by id. The first replica of partition p sits on broker
``(p + startIndex) % n``; the others follow it at a shift that grows by one
every n partitions. Kafka draws ``startIndex`` and ``nextReplicaShift`` at
random; a scenario fixes them (or draws them from its seeded RNG) so the
result can be derived by hand.
"""
from __future__ import annotations

import random


def assign_replicas(n_partitions: int, replication_factor: int, brokers: list[int], *,
                    start_index: int | None = None, replica_shift: int | None = None,
                    rng: random.Random | None = None, start_partition: int = 0) -> dict[int, list[int]]:
    ids = sorted(brokers)
    n = len(ids)
    if replication_factor < 1 or replication_factor > n:
        raise ValueError(f"replication factor {replication_factor} larger than the {n} available brokers")
    rng = rng or random.Random(0)
    start = start_index if start_index is not None else rng.randrange(n)
    shift = replica_shift if replica_shift is not None else rng.randrange(n)
    out: dict[int, list[int]] = {}
    for p in range(start_partition, start_partition + n_partitions):
        if p > 0 and p % n == 0:
            shift += 1
        first = (p + start) % n
        replicas = [ids[first]]
        for j in range(replication_factor - 1):
            replicas.append(ids[(first + 1 + (shift + j) % (n - 1)) % n])
        out[p] = replicas
    return out
