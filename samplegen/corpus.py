"""Large corpora for benchmarks, and a months-long multi-cluster audit tree: streaming, seeded.

The per-incident simulator (:mod:`samplegen.kafka.cluster`) keeps every line in
memory; here a cluster of many brokers and ~100k partitions runs for days, so
lines are rendered hour by hour and streamed to disk. The grammar is the same
(:mod:`samplegen.kafka.templates28`); the model is lighter: partitions follow
Kafka's rack-unaware assignment (start index and shift 0 per topic), state is a
leader / leader-epoch array, and incidents (a broker killed and restarted, a
controlled restart, the controller's own failover) produce the controller's,
the state machines' and the brokers' lines for every partition they touch.

Routine server.log noise (segment rolls and retention, group coordinator,
expired offsets, transient ISR shrink/expand) fills the byte budget; the
controller's scheduler writes its auto-rebalance check every 5 minutes.
"""
from __future__ import annotations

import datetime as dt
import gzip
import heapq
import random
import time
from array import array
from dataclasses import dataclass, field
from pathlib import Path

from samplegen.kafka import templates28 as T
from samplegen.kafka.config28 import config_dump
from samplegen.kafka.templates28 import TEMPLATES
from samplegen.writers.log4j import HourlyFile

HOUR = 3_600_000
TOPIC_SIZE = 500  # partitions per topic
LOG_DIR = "/var/lib/kafka/data"
SESSION_TIMEOUT = 18_000


@dataclass(frozen=True)
class CorpusSpec:
    brokers: int = 30
    partitions: int = 100_000
    days: float = 3
    size_bytes: int = 2_000_000_000
    gzip_fraction: float = 0.5
    seed: int = 1
    start: str = "2023-03-01"
    incidents_per_day: float = 2.0
    rf1_fraction: float = 0.05  # share of partitions in replication-factor-1 topics (the ones that go leaderless)
    cluster: str = "bench"


@dataclass
class Stats:
    files: int = 0
    raw_bytes: int = 0
    disk_bytes: int = 0
    lines: int = 0
    incidents: int = 0
    incident_log: list = field(default_factory=list)


class Stamp:
    """``[yyyy-MM-dd HH:mm:ss,SSS]`` with the date part cached per second (strftime is the slow part)."""

    __slots__ = ("sec", "prefix")

    def __init__(self):
        self.sec = -1
        self.prefix = ""

    def __call__(self, ms: int) -> str:
        sec = ms // 1000
        if sec != self.sec:
            self.sec = sec
            self.prefix = time.strftime("[%Y-%m-%d %H:%M:%S,", time.gmtime(sec))
        return f"{self.prefix}{ms % 1000:03d}]"


class Topology:
    """Topics of TOPIC_SIZE partitions; the first ``rf1`` topics have one replica, the rest three."""

    def __init__(self, spec: CorpusSpec):
        self.n = spec.brokers
        self.partitions = spec.partitions
        n_topics = max(1, -(-spec.partitions // TOPIC_SIZE))
        self.rf1_topics = max(1, round(n_topics * spec.rf1_fraction)) if spec.rf1_fraction > 0 else 0
        names = []
        for k in range(n_topics):
            names.append(f"logs-raw-{k:03d}" if k < self.rf1_topics else f"events-{k:03d}")
        self.topic_names = names
        self.tps = [f"{names[p // TOPIC_SIZE]}-{p % TOPIC_SIZE}" for p in range(spec.partitions)]

    def rf(self, p: int) -> int:
        return 1 if p // TOPIC_SIZE < self.rf1_topics else min(3, self.n)

    def replicas(self, p: int) -> list[int]:
        """Broker ids (1-based) in AR order: AdminUtils rack-unaware with start index 0, shift 0."""
        n, local = self.n, p % TOPIC_SIZE
        shift = local // n
        first = local % n
        out = [first]
        for j in range(self.rf(p) - 1):
            out.append((first + 1 + (shift + j) % (n - 1)) % n)
        return [b + 1 for b in out]


class Files:
    """All appenders of one cluster; rolled hours gzipped with probability ``gzip_fraction``."""

    def __init__(self, root: Path, spec: CorpusSpec, rng: random.Random, stats: Stats):
        self.root, self.spec, self.rng, self.stats = root, spec, rng, stats
        self.open: dict[tuple[int, str], HourlyFile] = {}

    def get(self, b: int, kind: str) -> HourlyFile:
        hf = self.open.get((b, kind))
        if hf is None:
            seed = self.rng.random()
            frac = self.spec.gzip_fraction

            def gz(suffix: str, _s=seed) -> bool:
                return random.Random(f"{_s}{suffix}").random() < frac

            hf = HourlyFile(self.root / f"broker-{b}", f"{kind}.log", gzip_rolled=gz, level=1)
            self.open[(b, kind)] = hf
        return hf

    def close(self) -> None:
        for hf in self.open.values():
            hf.close()
            self.stats.files += len(hf.files)
            self.stats.raw_bytes += hf.bytes
            self.stats.disk_bytes += sum(p.stat().st_size for p in hf.files)


class Cluster:
    """The light model: who leads what, epochs, which brokers are up, who is controller."""

    def __init__(self, spec: CorpusSpec, rng: random.Random):
        self.spec = spec
        self.rng = rng
        self.topo = Topology(spec)
        n = spec.partitions
        self.leader = array("i", (self.topo.replicas(p)[0] for p in range(n)))
        self.epoch = array("i", [0]) * n
        self.zkv = array("i", [0]) * n
        self.dead: set[int] = set()
        self.controller = 1
        self.controller_epoch = 1
        self.broker_epoch = {b: 4294967296 + 20 + 17 * b for b in range(1, spec.brokers + 1)}
        self.corr = 0


def _first(item: tuple) -> int:
    return item[0]


_FAST: dict[str, tuple] = {}


def _line(stamp: Stamp, ms: int, name: str, /, **kw) -> str:
    fast = _FAST.get(name)
    if fast is None:
        t = TEMPLATES[name]
        fast = _FAST[name] = (f" {t.level} ", t.fast(), f" ({t.logger})\n")
    return f"{stamp(ms)}{fast[0]}{fast[1](**kw)}{fast[2]}"


class Hour:
    """Lines of one hour, per (broker, kind), for the non-streamed parts (incidents, controller, state-change)."""

    def __init__(self):
        self.lines: dict[tuple[int, str], list[tuple[int, int, str]]] = {}
        self.seq = 0

    def add(self, b: int, kind: str, ms: int, text: str) -> None:
        self.seq += 1
        self.lines.setdefault((b, kind), []).append((ms, self.seq, text))


def _kind(name: str) -> str:
    return TEMPLATES[name].file


class Generator:
    def __init__(self, spec: CorpusSpec, out: Path, stats: Stats, *, bytes_per_broker_hour: float | None = None):
        self.spec = spec
        self.rng = random.Random(spec.seed)
        self.stamp = Stamp()
        self.stats = stats
        self.cl = Cluster(spec, self.rng)
        self.files = Files(out, spec, self.rng, stats)
        self.t0 = int(dt.datetime.fromisoformat(spec.start).replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
        self.hours = max(1, int(spec.days * 24))
        self.budget = bytes_per_broker_hour
        self._delayed: list = []  # (ms, seq, fn(hour, ms)): restarts, rebalances
        self._qseq = 0
        self.incidents = self._plan_incidents()

    # --- planning ----------------------------------------------------------------------------------
    def _plan_incidents(self) -> list[tuple[int, str, int, int]]:
        """(start ms, kind, broker, down ms): a kill -9 and restart, or a controlled restart.

        Starts and restarts fall between minute 2 and 50 of an hour, so each burst of lines
        stays inside the hour that produces it.
        """
        rng = random.Random(self.spec.seed * 31 + 7)
        n = int(self.spec.incidents_per_day * self.spec.days + 0.5)
        out = []
        for _ in range(n):
            h = rng.randrange(self.hours)
            at = self.t0 + h * HOUR + rng.randint(2 * 60, 50 * 60) * 1000
            kind = rng.choice(("kill9", "kill9", "controlled_restart"))
            b = rng.randint(1, self.spec.brokers)
            down = rng.randint(3, 45) * 60_000 if kind == "kill9" else rng.randint(2, 6) * 60_000
            back = at + down
            if (back - self.t0) % HOUR > 50 * 60_000:
                back += HOUR - (back - self.t0) % HOUR + 2 * 60_000
            if back < self.t0 + self.hours * HOUR:
                out.append((at, kind, b, back - at))
        out.sort()
        kept, busy_until = [], 0  # one incident at a time
        for inc in out:
            if inc[0] > busy_until + 10 * 60_000:
                kept.append(inc)
                busy_until = inc[0] + inc[3] + 10 * 60_000
        return kept

    # --- the run -----------------------------------------------------------------------------------
    def run(self) -> Stats:
        """Hour by hour: incidents and timers first, then every broker's routine lines, then write.

        Memory is bounded by one hour of the whole cluster, whatever the number of days.
        """
        total_broker_hours = self.spec.brokers * self.hours
        for h in range(self.hours):
            start = self.t0 + h * HOUR
            hour = Hour()
            self._controller_tasks(hour, start)
            for inc in self.incidents:
                if start <= inc[0] < start + HOUR:
                    self._incident(hour, *inc)
            while self._delayed and self._delayed[0][0] < start + HOUR:  # a restart may schedule a rebalance
                ms_, _, fn = heapq.heappop(self._delayed)
                fn(hour, ms_)
            remaining = max(1, total_broker_hours - h * self.spec.brokers)
            per_broker = self.budget if self.budget is not None else \
                max(10_000, (self.spec.size_bytes - self._written()) / remaining)
            server = {b: self._routine(hour, b, start, per_broker) for b in range(1, self.spec.brokers + 1)}
            for b in range(1, self.spec.brokers + 1):
                for kind in ("controller", "state-change", "server"):
                    lines = [(ms_, text) for ms_, _, text in hour.lines.get((b, kind), [])]
                    if kind == "server":
                        lines += server[b]
                    if lines:
                        self._write_sorted(self.files.get(b, kind), lines)
        self.files.close()
        self.stats.incidents += len(self.incidents)  # an audit tree runs one generator per cluster on one Stats
        return self.stats

    def _write_sorted(self, hf, lines: list[tuple[int, str]]) -> None:
        lines.sort(key=_first)
        for i in range(0, len(lines), 4000):
            part = lines[i: i + 4000]
            chunk = "".join(x[1] for x in part)
            self.stats.lines += chunk.count("\n")
            hf.write(part[0][0], chunk)

    def _written(self) -> int:
        return sum(hf.bytes for hf in self.files.open.values())

    def _delay(self, ms: int, fn) -> None:
        self._qseq += 1
        heapq.heappush(self._delayed, (ms, self._qseq, fn))

    # --- routine server.log ------------------------------------------------------------------------
    def _routine(self, hour: Hour, b: int, start: int, budget: float) -> list[tuple[int, str]]:
        """One broker-hour of routine server.log lines, as (ms, seq, text).

        The hot loop of the benchmark corpus: templates are bound to plain format strings
        once, timestamps are built by arithmetic within the hour.
        """
        up = self._up_intervals(b, start)
        if not up:
            return []
        topo, rng = self.cl.topo, self.rng
        n, tps = topo.n, topo.tps
        nparts = len(tps)
        seconds = self._second_prefixes(start)

        def ts(ms: int) -> str:
            r = ms - start
            return f"{seconds[r // 1000]}{r % 1000:03d}]"

        def bind(name: str):
            t = TEMPLATES[name]
            return f" {t.level} ", t.fast(), f" ({t.logger})\n"

        snap_l, snap, snap_r = bind("producer_snapshot")
        roll_l, roll, roll_r = bind("log_rolled")
        ret_l, ret, ret_r = bind("segment_retention")
        inc_l, inc, inc_r = bind("log_start_incremented")
        del_l, dele, del_r = bind("segment_files_deleted")
        prep_l, prep, prep_r = bind("group_preparing")
        stab_l, stab, stab_r = bind("group_stabilized")
        asg_l, asg, asg_r = bind("group_assignment")
        left_l, left, left_r = bind("group_member_left")
        exp_l, expf, exp_r = bind("expired_offsets")
        rnd, expo, bits = rng.random, rng.expovariate, rng.getrandbits
        mean_gap = max(1.0, HOUR * 330.0 / max(budget, 1.0))  # ~330 bytes per routine event
        end = start + HOUR
        out: list[tuple[int, str]] = []  # sorted later by time only: the sort is stable
        add = out.append
        whole_hour = up == [(start, end)]
        written = 0
        t = start + int(expo(1.0 / mean_gap))
        next_expire = start + ((b * 37_000) % 600_000)
        while t < end and written < budget:
            if not whole_hour and not any(a <= t < z for a, z in up):
                t += int(expo(1.0 / mean_gap)) + 1
                continue
            if t >= next_expire:
                add((next_expire, f"{ts(next_expire)}{exp_l}{expf(id=b, n=0, ms=0)}{exp_r}"))
                next_expire += 600_000
            # A partition this broker leads (its first replica) in a random topic.
            p = (int(rnd() * nparts) // n) * n + (b - 1)
            if p >= nparts:
                p -= n
            tp = tps[p]
            stamp = ts(t)
            r = rnd()
            if r < 0.45:
                off = 10_000_000 + int(rnd() * 890_000_000)
                line = f"{stamp}{snap_l}{snap(tp=tp, offset=off)}{snap_r}"
                add((t, line))
                line2 = f"{stamp}{roll_l}{roll(tp=tp, dir=LOG_DIR, offset=off, ms=1 + int(rnd() * 12))}{roll_r}"
                add((t, line2))
                written += len(line) + len(line2)
            elif r < 0.80:
                base = 1_000_000 + int(rnd() * 799_000_000)
                mt = t - 604_800_000 - int(rnd() * 200_000)
                kw = dict(tp=tp, dir=LOG_DIR, base=base, size=100_000_000 + int(rnd() * 973_741_000), mtime=mt,
                          largest=mt - int(rnd() * 5000))
                line = f"{stamp}{ret_l}{ret(**kw)}{ret_r}"
                add((t, line))
                line2 = f"{stamp}{inc_l}{inc(tp=tp, dir=LOG_DIR, offset=base + 1 + int(rnd() * 9_000_000))}{inc_r}"
                add((t, line2))
                written += len(line) + len(line2)
                if t + 60_000 < end:  # file.delete.delay.ms later
                    line3 = f"{ts(t + 60_000)}{del_l}{dele(**kw)}{del_r}"
                    add((t + 60_000, line3))
                    written += len(line3)
            elif r < 0.93:
                g = f"consumer-group-{1 + int(rnd() * 400):03d}"
                gen = 1 + int(rnd() * 900)
                part = int(rnd() * 50)
                members = 1 + int(rnd() * 12)
                member = f"consumer-{g}-{1 + int(rnd() * 9)}-{bits(64):016x}"
                lines = (f"{stamp}{prep_l}{prep(id=b, group=g, gen=gen, p=part, member=member)}{prep_r}",
                         f"{ts(t + 3)}{stab_l}{stab(id=b, group=g, gen=gen + 1, p=part, n=members)}{stab_r}",
                         f"{ts(t + 41)}{asg_l}{asg(id=b, group=g, gen=gen + 1, n=members)}{asg_r}")
                add((t, lines[0]))
                add((t + 3, lines[1]))
                add((t + 41, lines[2]))
                written += len(lines[0]) + len(lines[1]) + len(lines[2])
            elif r < 0.97:
                g = f"consumer-group-{1 + int(rnd() * 400):03d}"
                line = f"{stamp}{left_l}{left(id=b, member=f'consumer-{g}-{1 + int(rnd() * 9)}-{bits(64):016x}', group=g)}{left_r}"
                add((t, line))
                written += len(line)
            elif topo.rf(p) > 1 and self.cl.leader[p] == b:  # only the current leader shrinks the ISR
                written += self._transient_isr_shrink(hour, b, t, p, add, end)
            t += int(expo(1.0 / mean_gap)) + 1
        return [x for x in out if x[0] < end]

    def _second_prefixes(self, start: int) -> list[str]:
        """``[yyyy-MM-dd HH:mm:ss,`` for every second of the hour (built once per hour)."""
        if getattr(self, "_prefix_hour", None) != start:
            base = time.strftime("[%Y-%m-%d %H:", time.gmtime(start // 1000))
            self._prefixes = [f"{base}{x // 60:02d}:{x % 60:02d}," for x in range(3600)]
            self._prefix_hour = start
        return self._prefixes


    def _transient_isr_shrink(self, hour: Hour, b: int, t: int, p: int, add, end: int) -> int:
        """A follower falls behind for a moment: the leader shrinks and re-expands the ISR (AlterIsr)."""
        cl, topo, s = self.cl, self.cl.topo, self.stamp
        tp = topo.tps[p]
        reps = topo.replicas(p)
        lag = next(x for x in reversed(reps) if x != b)  # a follower: the leader (b) never drops itself
        leo = self.rng.randint(1_000_000, 900_000_000)
        isr = ",".join(map(str, reps))
        new = ",".join(str(x) for x in reps if x != lag)
        cl.zkv[p] += 1
        lines = [(t, _line(s, t, "isr_shrink", tp=tp, id=b, old=isr, new=new, hw=leo - self.rng.randint(1000, 90_000),
                           leo=leo, oos=f"(brokerId: {lag}, endOffset: {leo - self.rng.randint(100_000, 900_000)})")),
                 (t + 9, _line(s, t + 9, "isr_updated", tp=tp, id=b, isr=new, version=cl.zkv[p]))]
        self._controller_isr(hour, t, tp, new, cl.zkv[p])
        if t + 12_000 < end:
            cl.zkv[p] += 1
            lines.append((t + 12_000, _line(s, t + 12_000, "isr_updated", tp=tp, id=b, isr=isr, version=cl.zkv[p])))
            self._controller_isr(hour, t + 12_000, tp, isr, cl.zkv[p])
        for item in lines:
            add(item)
        return sum(len(x[1]) for x in lines)

    def _controller_isr(self, hour: Hour, t: int, tp: str, isr: str, zkv: int) -> None:
        c = self.cl.controller
        if c in self.cl.dead:
            return
        s = self.stamp
        hour.add(c, "controller", t + 4, _line(s, t + 4, "updating_isrs", id=c, parts=f"Set({tp})"))
        hour.add(c, "controller", t + 6, _line(s, t + 6, "isr_zk_updated", id=c, tp=tp, isr=isr, zkv=zkv))

    def _up_intervals(self, b: int, start: int) -> list[tuple[int, int]]:
        """When broker b runs during this hour (incidents take it down)."""
        ivs = [(start, start + HOUR)]
        for at, kind, broker, down in self.incidents:
            if broker != b:
                continue
            lo, hi = at, at + down
            nxt = []
            for a, z in ivs:
                if hi <= a or lo >= z:
                    nxt.append((a, z))
                    continue
                if a < lo:
                    nxt.append((a, lo))
                if hi < z:
                    nxt.append((hi, z))
            ivs = nxt
        return ivs

    # --- the controller's periodic task --------------------------------------------------------
    def _controller_tasks(self, hour: Hour, start: int) -> None:
        cl, s = self.cl, self.stamp
        c = cl.controller
        t = start + 12_345
        while t < start + HOUR:
            if c not in cl.dead:
                hour.add(c, "controller", t, _line(s, t, "auto_rebalance", id=c))
                hour.add(c, "controller", t, _line(s, t, "auto_check", id=c))
                for b in range(1, self.spec.brokers + 1):
                    hour.add(c, "controller", t + 1, _line(s, t + 1, "not_preferred", id=c, b=b, parts=""))
                    hour.add(c, "controller", t + 1, _line(s, t + 1, "imbalance", id=c, b=b, ratio="0.0"))
            t += 300_000

    # --- incidents -----------------------------------------------------------------------------
    def _incident(self, hour: Hour, at: int, kind: str, b: int, down: int) -> None:
        self.stats.incident_log.append({"at": at, "kind": kind, "broker": b, "down_ms": down})
        if kind == "kill9":
            self._broker_failure(hour, at + SESSION_TIMEOUT, b, clean=False)
        else:
            self._controlled_shutdown(hour, at, b)
        self._delay(at + down, lambda hr, ms_, _b=b: self._broker_start(hr, ms_, _b))

    def _led(self, b: int) -> list[int]:
        return [p for p in range(self.cl.topo.partitions) if self.cl.leader[p] == b]

    def _hosting(self, b: int) -> list[int]:
        topo = self.cl.topo
        return [p for p in range(topo.partitions) if b in topo.replicas(p)]

    def _new_controller(self, hour: Hour, t: int) -> int:
        cl, s = self.cl, self.stamp
        c = min(x for x in range(1, self.spec.brokers + 1) if x not in cl.dead)
        cl.controller = c
        cl.controller_epoch += 1
        hour.add(c, "controller", t, _line(s, t, "elected", id=c, epoch=cl.controller_epoch, zkv=cl.controller_epoch))
        for name in ("registering_handlers", "deleting_logdir_notif", "deleting_isr_notif", "init_context"):
            hour.add(c, "controller", t + 2, _line(s, t + 2, name, id=c))
        live = sorted(x for x in range(1, self.spec.brokers + 1) if x not in cl.dead)
        hour.add(c, "controller", t + 9, _line(s, t + 9, "active_brokers", id=c, brokers=f"HashSet({', '.join(map(str, live))})"))
        hour.add(c, "controller", t + 400, _line(s, t + 400, "ready", id=c, epoch=cl.controller_epoch))
        hour.add(c, "controller", t + 450, _line(s, t + 450, "scheduler", id=c))
        self.stats.incident_log.append({"at": t, "kind": "controller_elected", "broker": c, "epoch": cl.controller_epoch})
        return c

    def _broker_failure(self, hour: Hour, t: int, b: int, *, clean: bool) -> None:
        """The controller processes a broker's disappearance (after session expiry or a clean close)."""
        cl, topo, s = self.cl, self.cl.topo, self.stamp
        cl.dead.add(b)
        if cl.controller == b:
            c = self._new_controller(hour, t + 12)
            t += 500
        else:
            c = cl.controller
        t += 12
        live = sorted(x for x in range(1, self.spec.brokers + 1) if x not in cl.dead)
        ce = cl.controller_epoch
        hour.add(c, "controller", t, _line(s, t, "broker_change", id=c, added="", deleted=str(b), live=",".join(map(str, live))))
        hour.add(c, "controller", t, _line(s, t, "failure_callback", id=c, brokers=str(b)))
        t += 20
        for p in self._led(b):
            reps = topo.replicas(p)
            tp = topo.tps[p]
            alive = [r for r in reps if r not in cl.dead]
            if not alive:
                hour.add(c, "state-change", t, _line(s, t, "sc_failed", id=c, epoch=ce, tp=tp, frm="OfflinePartition"))
                for line in T.trace("kafka.common.StateChangeFailedException: Failed to elect leader for partition "
                                    f"{tp} under strategy OfflinePartitionLeaderElectionStrategy(false)",
                                    T.ELECTION_TRACE_BROKER_FAILURE):
                    hour.add(c, "state-change", t, line + "\n")
                cl.leader[p] = -1
                cl.epoch[p] += 1
                cl.zkv[p] += 1
                hour.add(c, "state-change", t + 1, _line(s, t + 1, "sc_removed_from_isr", id=c, epoch=ce, tp=tp, leader=-1,
                                                         isr=str(b), le=cl.epoch[p], ce=ce, replica=b))
                self.stats.incident_log.append({"at": t, "kind": "leaderless", "partition": tp, "broker": b})
            else:
                cl.leader[p] = alive[0]
                cl.epoch[p] += 1
                cl.zkv[p] += 1
                isr = ", ".join(map(str, alive))
                hour.add(c, "state-change", t, _line(s, t, "sc_online", id=c, epoch=ce, tp=tp, frm="OfflinePartition",
                                                     leader=alive[0], le=cl.epoch[p], isr=f"List({isr})", zkv=cl.zkv[p]))
                nl = alive[0]
                hour.add(nl, "state-change", t + 30, _line(s, t + 30, "sb_leader", id=nl, tp=tp, le=cl.epoch[p],
                                                            offset=self.rng.randint(10**6, 9 * 10**8), hw=0,
                                                            isr=",".join(map(str, alive)), prev=cl.epoch[p] - 1))
            t += 1
        for p in self._hosting(b):
            if cl.leader[p] in (b, -1) or topo.rf(p) == 1:
                continue
            # OfflineReplica: the dead follower leaves the ISR (the leader stays).
            cl.epoch[p] += 1
            cl.zkv[p] += 1
            isr = ",".join(str(r) for r in topo.replicas(p) if r not in cl.dead)
            hour.add(c, "state-change", t, _line(s, t, "sc_removed_from_isr", id=c, epoch=ce, tp=topo.tps[p],
                                                 leader=cl.leader[p], isr=isr, le=cl.epoch[p], ce=ce, replica=b))
        hour.add(c, "controller", t, _line(s, t, "epochs_updated", id=c,
                                           epochs=", ".join(f"{x} -> {cl.broker_epoch[x]}" for x in live)))

    def _controlled_shutdown(self, hour: Hour, t: int, b: int) -> None:
        cl, topo, s = self.cl, self.cl.topo, self.stamp
        c = cl.controller
        hour.add(b, "server", t, _line(s, t, "server_shutting_down", id=b))
        hour.add(b, "server", t + 2, _line(s, t + 2, "cs_starting", id=b))
        hour.add(c, "controller", t + 9, _line(s, t + 9, "cs_controller", id=c, b=b))
        ce = cl.controller_epoch
        tt = t + 12
        remaining = []
        for p in self._led(b):
            reps = topo.replicas(p)
            alive = [r for r in reps if r not in cl.dead and r != b]
            tp = topo.tps[p]
            if not alive:
                remaining.append(p)
                continue
            cl.leader[p] = alive[0]
            cl.epoch[p] += 1
            cl.zkv[p] += 1
            hour.add(c, "state-change", tt, _line(s, tt, "sc_online", id=c, epoch=ce, tp=tp, frm="OnlinePartition",
                                                  leader=alive[0], le=cl.epoch[p], isr=f"List({', '.join(map(str, alive))})",
                                                  zkv=cl.zkv[p]))
        if remaining:  # RF 1: the controller cannot move them; the broker gives up after 3 retries
            for k in range(3):
                hour.add(b, "server", tt + 5 + k * 5000, _line(s, tt + 5 + k * 5000, "cs_starting", id=b))
        else:
            hour.add(b, "server", tt + 40, _line(s, tt + 40, "cs_succeeded", id=b))
        hour.add(b, "server", tt + 16_000, _line(s, tt + 16_000, "server_shut_down", id=b))
        self._broker_failure(hour, tt + 16_100, b, clean=True)

    def _broker_start(self, hour: Hour, t: int, b: int) -> None:
        cl, topo, s = self.cl, self.cl.topo, self.stamp
        spec_host = f"kafka-{b:02d}.{self.spec.cluster}.internal"
        hour.add(b, "server", t, _line(s, t, "server_starting", id=b))
        body = config_dump(broker_id=b, host=spec_host, log_dir=LOG_DIR, zk_connect="zk1:2181,zk2:2181,zk3:2181",
                           unclean="false", zk_timeout=SESSION_TIMEOUT, lag=30000)
        t1 = t + 900
        hour.add(b, "server", t1, f"{s(t1)} INFO {TEMPLATES['kafka_config'].render(body=body)} (kafka.server.KafkaConfig)\n")
        cl.dead.discard(b)
        cl.broker_epoch[b] += 1000
        t2 = t + 2500
        hour.add(b, "server", t2, _line(s, t2, "registered_broker", id=b, host=spec_host, port=9092, epoch=cl.broker_epoch[b]))
        hour.add(b, "server", t2 + 400, _line(s, t2 + 400, "server_started", id=b))
        c = cl.controller
        tc = t2 + 12
        live = sorted(x for x in range(1, self.spec.brokers + 1) if x not in cl.dead)
        ce = cl.controller_epoch
        hour.add(c, "controller", tc, _line(s, tc, "broker_change", id=c, added=str(b), deleted="", live=",".join(map(str, live))))
        hour.add(c, "controller", tc, _line(s, tc, "startup_callback", id=c, brokers=str(b)))
        tc += 30
        for p in range(topo.partitions):
            if cl.leader[p] == -1 and topo.replicas(p) == [b]:
                cl.leader[p] = b
                cl.epoch[p] += 1
                cl.zkv[p] += 1
                hour.add(c, "state-change", tc, _line(s, tc, "sc_online", id=c, epoch=ce, tp=topo.tps[p], frm="OfflinePartition",
                                                      leader=b, le=cl.epoch[p], isr=f"List({b})", zkv=cl.zkv[p]))
                self.stats.incident_log.append({"at": tc, "kind": "leader_back", "partition": topo.tps[p], "broker": b})
        # The next rebalance check moves preferred leaderships back.
        self._delay(tc + 300_000, lambda hr, ms_, _b=b: self._preferred(hr, ms_, _b))

    def _preferred(self, hour: Hour, t: int, b: int) -> None:
        cl, topo, s = self.cl, self.cl.topo, self.stamp
        if b in cl.dead or cl.controller in cl.dead:
            return
        c, ce = cl.controller, cl.controller_epoch
        moved = [p for p in range(topo.partitions) if topo.replicas(p)[0] == b and cl.leader[p] not in (b, -1)]
        hour.add(c, "controller", t, _line(s, t, "pre_starting", id=c, parts=",".join(topo.tps[p] for p in moved[:2000]),
                                           trigger="AutoTriggered"))
        for p in moved:
            cl.leader[p] = b
            cl.epoch[p] += 1
            cl.zkv[p] += 1
            hour.add(c, "state-change", t + 5, _line(s, t + 5, "sc_online", id=c, epoch=ce, tp=topo.tps[p], frm="OnlinePartition",
                                                     leader=b, le=cl.epoch[p], isr=f"List({', '.join(map(str, topo.replicas(p)))})",
                                                     zkv=cl.zkv[p]))


def write_corpus(spec: CorpusSpec, out: Path) -> Stats:
    """A benchmark corpus: ``out/broker-N/{server,controller,state-change}.log[.YYYY-MM-DD-HH[.gz]]``."""
    if spec.brokers < 3:
        raise ValueError("a corpus needs at least 3 brokers")
    stats = Stats()
    Generator(spec, Path(out), stats).run()
    return stats


@dataclass(frozen=True)
class AuditSpec:
    clusters: int = 3
    days: int = 90
    brokers: int = 3
    bytes_per_file: int = 50_000
    seed: int = 1
    start: str = "2023-01-01"
    partitions: int = 600
    incidents_per_day: float = 0.15


def write_audit_tree(spec: AuditSpec, out: Path) -> Stats:
    """Months of logs of several clusters as an archive keeps them, one folder per cluster, day and broker:

    ``cluster=NAME/date=YYYY-MM-DD/broker=N/{server,controller,state-change}.log.gz`` (each file = that day).
    """
    stats = Stats()
    names = [f"kafka-{x}" for x in ("payments", "logs", "events", "search", "metrics", "ads")][: spec.clusters]
    while len(names) < spec.clusters:
        names.append(f"kafka-c{len(names) + 1}")
    for ci, name in enumerate(names):
        cspec = CorpusSpec(brokers=spec.brokers, partitions=spec.partitions, days=spec.days, seed=spec.seed * 100 + ci,
                           start=spec.start, incidents_per_day=spec.incidents_per_day, size_bytes=0, cluster=name,
                           gzip_fraction=0.0)
        day_budget = spec.bytes_per_file / 24
        with _DailyFiles(Path(out) / f"cluster={name}", stats) as files:
            gen = Generator(cspec, Path(out), stats, bytes_per_broker_hour=day_budget)
            gen.files = files
            gen.run()
    return stats


class _DailyFiles:
    """Files per (broker, kind) and UTC day: ``date=YYYY-MM-DD/broker=N/<kind>.log.gz``."""

    def __init__(self, root: Path, stats: Stats):
        self.root, self.stats = root, stats
        self.open: dict[tuple[int, str], _DayFile] = {}

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def get(self, b: int, kind: str) -> "_DayFile":
        f = self.open.get((b, kind))
        if f is None:
            f = self.open[(b, kind)] = _DayFile(self.root, b, kind, self.stats)
        return f

    def close(self) -> None:
        for f in self.open.values():
            f.close()
        self.open = {}


class _DayFile:
    def __init__(self, root: Path, b: int, kind: str, stats: Stats):
        self.root, self.b, self.kind, self.stats = root, b, kind, stats
        self.day = None
        self.fh = None
        self.bytes = 0
        self.files: list[Path] = []

    def write(self, ms: int, text: str) -> None:
        day = time.strftime("%Y-%m-%d", time.gmtime(ms // 1000))
        if day != self.day:
            self.close()
            self.day = day
            d = self.root / f"date={day}" / f"broker={self.b}"
            d.mkdir(parents=True, exist_ok=True)
            path = d / f"{self.kind}.log.gz"
            self.files.append(path)
            self.fh = gzip.GzipFile(filename="", mode="wb", fileobj=open(path, "wb"), mtime=0, compresslevel=6)
        data = text.encode()
        self.bytes += len(data)
        self.stats.raw_bytes += len(data)
        self.fh.write(data)

    def close(self) -> None:
        if self.fh is not None:
            raw = self.fh.fileobj
            self.fh.close()
            raw.close()
            self.stats.files += 1
            self.stats.disk_bytes += self.files[-1].stat().st_size
            self.fh = None
