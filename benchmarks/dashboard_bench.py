"""Benchmark: the dashboard of a 50,000-partition, one-day synthetic incident (build time, file size).

    .venv/bin/python benchmarks/dashboard_bench.py [--partitions 50000] [--out /tmp/kf-bench-dashboard.html]

The incident is a day of a ZooKeeper-mode cluster, as ZooKeeper transaction events (the shape
``parsers.zookeeper.events`` emits, built like ``tests/test_replay_loop.py`` does): 6 brokers, 100
partitions per topic, every tenth topic RF=1 and the rest RF=3; hourly ISR shrinks and expansions
by the leaders; broker 2 loses its session at 10:00 (RF=3 partitions fail over, its RF=1 partitions
stay leaderless until it returns at 12:00); the controller's broker 1 loses its session at 14:00 and
no controller exists for 6 s (its partitions wait for the next controller; its RF=1 partitions stay
down until 15:00); broker 5 stops with a controlled shutdown at 18:00 and returns at 19:00. The
replay of that trace is the dashboard's input; the dashboard build is timed on its own.
"""
from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
if str(REPO) not in sys.path:
    sys.path.insert(0, str(REPO))

from parsers.schema import Event  # noqa: E402

S = 1_000_000
T0 = 1_767_225_600 * S  # 2026-01-01T00:00:00Z
BROKERS = (1, 2, 3, 4, 5, 6)
PER_TOPIC = 100


class Trace:
    """ZooKeeper-style events in zxid order (one zxid per write)."""

    def __init__(self) -> None:
        self.events: list[Event] = []
        self.zxid = 0
        self.epochs: dict[int, int] = {}

    def add(self, t: float, event_type: str, **kw) -> None:
        self.zxid += 1
        self.events.append(Event(event_type, cluster="bench", ts=T0 + int(round(t * S)), source_kind="zk_txnlog",
                                 source_file="version-2/log.1", source_pos=self.zxid * 100, zxid=self.zxid,
                                 raw=f"zxid {self.zxid:#x} {event_type}", **kw))

    def broker_up(self, t: float, b: int, session: int) -> None:
        self.add(t, "broker_registered", subject_broker=b, session_id=session,
                 detail={"via": "zk_create", "broker_epoch": self.zxid + 1})
        self.epochs[b] = self.zxid

    def broker_down(self, t: float, b: int, session: int) -> None:
        self.add(t, "broker_deregistered", subject_broker=b, session_id=session, detail={"cause": "session_expired"})

    def controller(self, t: float, c: int, epoch: int) -> None:
        self.zxid += 1
        for et, kw in (("controller_znode_created", {"controller_id": c}),
                       ("controller_epoch_set", {"controller_epoch": epoch})):
            self.events.append(Event(et, cluster="bench", ts=T0 + int(round(t * S)), source_kind="zk_txnlog",
                                     source_file="version-2/log.1", source_pos=self.zxid * 100, zxid=self.zxid,
                                     raw=f"zxid {self.zxid:#x} {et}", **kw))

    def topic(self, t: float, name: str, assignment: dict[int, list[int]]) -> None:
        self.add(t, "topic_assignment_written", topic=name,
                 detail={"assignment": {str(p): r for p, r in assignment.items()}})

    def state(self, t: float, topic: str, p: int, leader: int, isr: list[int], le: int, ce: int,
              writer: str = "controller", created: bool = False) -> None:
        self.add(t, "partition_state_written", topic=topic, partition=p, leader=leader, isr=isr, leader_epoch=le,
                 controller_epoch=ce, detail={"writer": writer, "created": created})


def synthetic_incident(partitions: int = 50_000, hours: int = 24) -> list[Event]:
    """The day described in the module docstring, scaled to ``partitions`` (a multiple of 100)."""
    tr = Trace()
    sessions = {b: 0x100 + b for b in BROKERS}
    for i, b in enumerate(BROKERS):
        tr.broker_up(0.1 * i, b, sessions[b])
    tr.controller(1.0, 1, 1)
    ce = 1
    state: dict[tuple[str, int], list] = {}  # tp -> [replicas, leader, isr, leader_epoch]
    n_topics = max(1, partitions // PER_TOPIC)
    t = 2.0
    for i in range(n_topics):
        name = f"t{i:03d}"
        rf = 1 if i % 10 == 0 else 3
        asg = {p: [BROKERS[(p + i + k) % len(BROKERS)] for k in range(rf)] for p in range(PER_TOPIC)}
        tr.topic(t, name, asg)
        for p, reps in asg.items():
            tr.state(t + 0.0005, name, p, reps[0], list(reps), 0, ce, created=True)
            state[(name, p)] = [reps, reps[0], list(reps), 0]
        t += 0.002
    tps = sorted(state)

    def write(ts: float, tp, leader: int, isr: list[int], bump: bool, writer: str = "controller") -> None:
        st = state[tp]
        st[1], st[2] = leader, list(isr)
        if bump:
            st[3] += 1
        tr.state(ts, tp[0], tp[1], leader, list(isr), st[3], ce, writer=writer)

    def churn(hour: int) -> None:
        # one broker's followers fall behind for a minute: the leaders shrink the ISR, then expand it
        lagger = BROKERS[hour % len(BROKERS)]
        hit = [tp for tp in tps if lagger in state[tp][2] and state[tp][1] != lagger and state[tp][1] >= 0]
        hit = hit[hour % 7::97][:500]
        for k, tp in enumerate(hit):
            write(hour * 3600 + k * 0.002, tp, state[tp][1], [b for b in state[tp][2] if b != lagger], False, "leader")
        for k, tp in enumerate(hit):
            st = state[tp]
            write(hour * 3600 + 60 + k * 0.002, tp, st[1], [b for b in st[0] if b in st[2] or b == lagger], False,
                  "leader")

    def broker_dies(b: int, elect_at: float, failover: bool = False) -> None:
        led = [tp for tp in tps if state[tp][1] == b]
        follows = [tp for tp in tps if b in state[tp][2] and state[tp][1] != b and state[tp][1] >= 0]
        k = 0
        if failover:
            # a new controller first takes the dead broker out of every ISR (leader -1 where it led),
            # then elects leaders for the offline partitions
            for tp in led + follows:
                st = state[tp]
                isr = st[2] if len(st[2]) == 1 else [r for r in st[2] if r != b]
                write(elect_at + k * 0.001, tp, -1 if st[1] == b else st[1], isr, True)
                k += 1
            for tp in led:
                reps, _, isr, _ = state[tp]
                live = [r for r in reps if r in isr and r not in down]
                if live:
                    write(elect_at + k * 0.001, tp, live[0], [r for r in isr if r not in down], True)
                    k += 1
            return
        for tp in led:  # offline election: first live ISR member in replica order; none -> leader -1, ISR kept
            reps, _, isr, _ = state[tp]
            live = [r for r in reps if r in isr and r not in down]
            if live:
                write(elect_at + k * 0.001, tp, live[0], [r for r in isr if r not in down], True)
            else:
                write(elect_at + k * 0.001, tp, -1, list(isr), True)
            k += 1
        for tp in follows:
            write(elect_at + k * 0.001, tp, state[tp][1], [r for r in state[tp][2] if r != b], True)
            k += 1

    def broker_returns(ts: float, b: int) -> None:
        k = 0
        for tp in tps:
            reps, leader, isr, _ = state[tp]
            if leader == -1 and reps == [b]:
                write(ts + 0.5 + k * 0.001, tp, b, [b], True)  # the RF=1 partitions come back
                k += 1
        for tp in tps:
            reps, leader, isr, _ = state[tp]
            if b in reps and b not in isr and leader >= 0:
                write(ts + 30 + k * 0.001, tp, leader, [r for r in reps if r in isr or r == b], False, "leader")
                k += 1

    def controlled_shutdown(ts: float, b: int) -> None:
        # the request is an RPC: it is in the controller's log, never in ZooKeeper
        tr.zxid += 1
        tr.events.append(Event("controlled_shutdown_requested", cluster="bench", ts=T0 + int(round(ts * S)),
                               source_kind="broker_log", source_file="broker-3/controller.log", source_pos=tr.zxid,
                               broker_id=3, controller_id=3, subject_broker=b, detail={"side": "controller"},
                               raw=f"[Controller id=3] Shutting down broker {b}"))
        k = 0
        for tp in tps:  # leaders move to the next live ISR member; followers leave the ISR
            reps, leader, isr, _ = state[tp]
            others = [r for r in reps if r in isr and r != b and r not in down]
            if leader == b and len(reps) > 1 and others:
                write(ts + 0.05 + k * 0.001, tp, others[0], [r for r in isr if r != b], True)
                k += 1
            elif leader != b and leader >= 0 and b in isr and len(isr) > 1:
                write(ts + 0.05 + k * 0.001, tp, leader, [r for r in isr if r != b], True)
                k += 1
        tr.add(ts + 10, "broker_deregistered", subject_broker=b, session_id=sessions[b],
               detail={"cause": "session_closed"})
        down.add(b)

    down: set[int] = set()
    for hour in range(1, hours):
        if hour == 10:
            tr.broker_down(10 * 3600, 2, sessions[2])
            down.add(2)
            broker_dies(2, 10 * 3600 + 0.2)
        if hour == 12:
            sessions[2] += 0x1000
            tr.broker_up(12 * 3600, 2, sessions[2])
            down.discard(2)
            broker_returns(12 * 3600, 2)
        if hour == 14:
            tr.broker_down(14 * 3600, 1, sessions[1])
            down.add(1)
            tr.controller(14 * 3600 + 6, 3, 2)
            ce = 2
            broker_dies(1, 14 * 3600 + 6.5, failover=True)
        if hour == 15:
            sessions[1] += 0x1000
            tr.broker_up(15 * 3600, 1, sessions[1])
            down.discard(1)
            broker_returns(15 * 3600, 1)
        if hour == 18:
            controlled_shutdown(18 * 3600, 5)
            for tp in tps:  # its RF=1 partitions go down with it
                if state[tp][0] == [5]:
                    write(18 * 3600 + 10.2, tp, -1, [5], True)
        if hour == 19:
            sessions[5] += 0x1000
            tr.broker_up(19 * 3600, 5, sessions[5])
            down.discard(5)
            broker_returns(19 * 3600, 5)
        if hour not in (10, 12, 14, 15, 18, 19):
            churn(hour)
    # the evidence runs to the end of the day (a registration that changes nothing)
    tr.add(hours * 3600 - 1, "broker_registered", subject_broker=4, session_id=sessions[4],
           detail={"via": "zk_create", "broker_epoch": tr.epochs[4]})
    return tr.events


def _browser_seconds(page: Path) -> float | None:
    """Wall time for headless Chromium to open the page and draw every figure (None without Chromium)."""
    import shutil
    import subprocess
    import tempfile

    exe = shutil.which("chromium")
    if exe is None:
        return None
    with tempfile.TemporaryDirectory() as profile:
        t = time.perf_counter()
        run = subprocess.run([exe, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
                              "--disable-background-networking", f"--user-data-dir={profile}", "--dump-dom",
                              page.resolve().as_uri()], capture_output=True, text=True, timeout=300)
        took = time.perf_counter() - t
    if 'data-drawn="' not in run.stdout:
        raise SystemExit("chromium did not draw the page")
    return round(took, 2)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--partitions", type=int, default=50_000)
    ap.add_argument("--hours", type=int, default=24)
    ap.add_argument("--out", type=Path, default=Path("/tmp/kf-bench-dashboard.html"))
    args = ap.parse_args(argv)

    from dashboards.page import results_page
    from replay_engine.api import replay_cluster

    t0 = time.perf_counter()
    events = synthetic_incident(args.partitions, args.hours)
    t1 = time.perf_counter()
    res = replay_cluster(events, "bench")
    t2 = time.perf_counter()
    page = results_page([res])
    t3 = time.perf_counter()
    args.out.write_text(page, encoding="utf-8")
    size = args.out.stat().st_size
    from plotly.offline import get_plotlyjs

    browser_s = _browser_seconds(args.out)

    print(json.dumps({
        "partitions": args.partitions, "hours": args.hours, "events": len(events), "intervals": len(res.intervals),
        "leaderless_episodes": len(res.leaderless), "generate_s": round(t1 - t0, 2), "replay_s": round(t2 - t1, 2),
        "dashboard_build_s": round(t3 - t2, 2), "html_bytes": size, "html_mb": round(size / 1e6, 2),
        "plotly_js_bytes": len(get_plotlyjs().encode("utf-8")), "out": str(args.out),
        "chromium_load_and_draw_s": browser_s,
    }, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
