"""A cluster's replay kept between batches of evidence, for ``kafka-forensics watch``.

The replay is *settled* up to a time: every fact before it has been stepped once into the kept replay, and is
never stepped again. The events after it (the *tail*) are turned into facts again at every batch, by the same
converters the whole replay uses (``build_facts``, ``kraft_facts``), with the cluster's context as far as it is
known, and stepped on a copy of the settled replay; the copy, finished and assembled as ``replay_cluster`` ends
(``api.zk_result``, ``api.kraft_result``), is the *picture*: the answer on the evidence read so far.

Why a tail, not one fact at a time: what a line means can depend on lines written after it (a controller's election
and the epoch line that follows it, a shutdown whose last ZooKeeper close is the broker leaving, a quorum
controller's start-up burst, the records a renounce rolled back), and the files being followed do not arrive in
the cluster's order (each broker's file is read as it grows). Facts are settled only once every file followed has
passed their time by ``settle_lag`` (the caller's ``horizon``), so they are stepped in the order the whole replay
steps them. The converters look back too (the session that registered a broker, the first quorum epochs): the tail
keeps ``lookback`` of events before the settled time, and events the converters or the report read whenever they
were written (``STICKY``) are kept for ``keep``. The facts they give again before the settled time are dropped.

An event that arrives after its time was settled (a broker whose clock is behind, a folder that appears late) is
still stepped, at the start of the tail, out of the cluster's order: ``late`` lists it, for the caller to say.

The kept replay's state is plain data: ``pickle`` copies it (the picture's copy, and ``watch``'s restart).
"""
from __future__ import annotations

import pickle
from dataclasses import dataclass, field, replace
from typing import Any

from parsers.common.gc_pause import cycle_gc_paused
from parsers.schema import Event
from replay_engine.common import facts as F
from replay_engine.zk.from_events import LOG_KINDS, ClusterContext, cluster_context
from replay_engine.result import Leaderless, ReplayResult

# Events read across any stretch of time: by the converters (registrations, sessions, versions, configuration,
# quorum epochs, the files' spans) and by the result and the report (client errors, restarts, ISR shrinks for the
# data-loss estimate, controlled shutdowns). Kept for ``keep`` after their time, whatever the tail keeps.
STICKY = frozenset({
    "broker_registered", "controller_znode_created", "controller_znode_deleted", "zk_session_closed",
    "kafka_version", "broker_config", "broker_config_written", "topic_config_written", "topic_assignment_written",
    "topic_created", "kraft_leader_change", "kraft_quorum_epoch", "kraft_snapshot_load",
    "topic_record", "feature_level", "config_record", "client_error", "broker_startup", "broker_fatal_error",
    "controlled_shutdown_requested", "isr_shrink", "become_leader", "become_follower",
    # a controller's statements of the brokers it held live (LiveSet: the explanation of an outage reads the one
    # in force when it began, hours before, World.view_at)
    "broker_failed", "controller_startup_state",
})
# Stated again, whole, each time the file it is about grows: the latest statement replaces the ones before.
RESTATED = frozenset({"zk_txnlog_span"})
_RECORDS = ("partition_record", "partition_change")


def replay_key(e: Event) -> tuple:
    """The order events are replayed in (as ``forensics.pipeline.replay_order``): time, then where each was read."""
    return (e.ts or 0, e.source_file or "", e.source_pos or 0, e.source_sub)


def _where(e: Event | F.Fact) -> tuple:
    r = e.ref if isinstance(e, F.Fact) else e
    return (r.source_file, r.source_pos)


@dataclass
class LiveSettings:
    settle_lag_us: int = 30_000_000  # a fact is settled once every followed file has passed its time by this
    lookback_us: int = 120_000_000  # events kept before the settled time, for the converters' look back
    keep_us: int = 6 * 3600_000_000  # how long STICKY events are kept after their time
    # a file quiet this long (ZooKeeper's transactions, the controller's state-change or controller log) is taken to
    # reach on (nothing happened that it would record), and the facts after its last line are settled
    quiet_us: int = 600_000_000
    version_wait_us: int = 600_000_000  # how long the first settling waits for a broker's 'Kafka version:' line


@dataclass
class LiveReplay:
    cluster: str | None
    settings: LiveSettings = field(default_factory=LiveSettings)
    ctx: ClusterContext = field(default_factory=ClusterContext)
    tail: list[Event] = field(default_factory=list)  # events after settled - lookback (and late ones), any order
    sticky: dict[tuple, Event] = field(default_factory=dict)  # (file, pos, sub, type) -> event, for ``keep``
    settled: int | None = None  # facts before this time are in the kept replay
    kind: str | None = None  # "zk" or "kraft", once the evidence says
    late: list[Event] = field(default_factory=list)  # arrived after their time was settled, not yet stepped
    paths: set[str] = field(default_factory=set)  # every file of the evidence (a release named by its folder)
    counts: dict[str, int] = field(default_factory=dict)  # events by type (which replay, as is_kraft_counts)
    first_record: Event | None = None  # the metadata log's first partition record
    controller: int | None = None  # the controller in office at the settled time, as the replay holds it
    alive: frozenset = frozenset()  # the brokers registered at the settled time, as the replay holds them
    forgotten: int | None = None  # the settled replay holds nothing that ended before this (forget_before)
    # outages closed half of ``keep`` before the settled time: their explanation as it was given while the lines
    # it read were kept (the replay learns no more about them that could change it)
    frozen: dict[tuple, Leaderless] = field(default_factory=dict)
    frozen_upto: int | None = None  # the settled time of the last picture (what it could freeze)
    _replay: bytes | None = None  # the settled replay, pickled (the picture's copy is made from it)
    _version: str | None = None  # KRaft: the version the settled replay was started with

    # ------------------------------------------------------------------ evidence in

    def add(self, events: list[Event]) -> list[Event]:
        """New events of this cluster (any order); returns those that arrived after their time was settled."""
        late = []
        new_ctx = cluster_context(events)
        _merge(self.ctx, new_ctx)
        for e in events:
            if e.source_file:
                self.paths.add(e.source_file)
            self.counts[e.event_type] = self.counts.get(e.event_type, 0) + 1
            if e.event_type in RESTATED:
                # a statement a growing file makes again as it grows (a txn log's span): the latest one holds
                self.sticky[(e.source_file, e.source_pos, e.source_sub, e.event_type)] = e
                continue
            if self.settled is not None and e.ts is not None and e.ts < self.settled:
                late.append(e)
            self.tail.append(e)
            if e.event_type in STICKY:
                self.sticky[(e.source_file, e.source_pos, e.source_sub, e.event_type)] = e
            elif self.first_record is None and e.source_kind == "kraft_metadata" and e.event_type in _RECORDS:
                # where the metadata log's records begin (kraft_pass.records_from): told once, at that record
                self.first_record = e
        _merge_kraft(self.ctx, events)
        self.late.extend(late)
        return late

    def attribute(self, source_file: str, broker: int) -> None:
        """The file's writer became known: its events still in the tail that named none are its (as the
        whole-file parser attributes them)."""
        for e in self.tail:
            if e.source_file == source_file and e.broker_id is None and e.source_kind in LOG_KINDS:
                e.broker_id = broker

    # ------------------------------------------------------------------ settling

    def settle(self, horizon: int | None) -> None:
        """Every followed file has passed ``horizon``: step the facts before ``horizon - settle_lag`` for good."""
        if horizon is None:
            return
        upto = horizon - self.settings.settle_lag_us
        for end in self._window_ends():
            if end < upto and horizon - end < self.settings.quiet_us:
                # how far the evidence reaches decides what a fact means (a log line inside ZooKeeper's window is
                # the transactions' echo, outside it the broker's word; a decision the controller's state-change
                # log covers is its record's to tell): where a file has written nothing since, whether it will
                # is not known yet
                upto = end
        if self.settled is not None and upto <= self.settled and not self.late:
            return
        if self.kind is None:
            self.kind = self._which()
            if self.kind is None:
                return
        if self._replay is None and "kafka_version" not in self.counts and self.ctx.trace_start is not None \
                and horizon - self.ctx.trace_start < self.settings.version_wait_us:
            # the rules of the release that wrote the evidence apply from its first line: wait a while for a
            # broker to say which (a start-up's 'Kafka version:' line), as the whole replay reads it anywhere
            return
        with cycle_gc_paused():
            if self._replay is None:
                replay = self._start()
                lo = None
            else:
                replay = pickle.loads(self._replay)
                lo = self.settled
            upto = max(upto, lo) if lo is not None else upto
            facts, stream = self._facts(upto)
            late = {_where(e) for e in self.late}
            self._begin(replay, stream)
            for f in facts:
                if (lo is None or f.ts >= lo or _where(f) in late) and f.ts < upto:
                    replay.step(f)
            cutoff = self._cutoff(upto)
            if cutoff is not None:
                forget_before(replay, cutoff)
                self.forgotten = cutoff
            self._replay = pickle.dumps(replay, protocol=pickle.HIGHEST_PROTOCOL)
            self.controller = getattr(replay, "controller", None)
            self.alive = frozenset(getattr(replay, "registered", ()))
        self.settled = upto
        self.late = []
        self._prune()

    def _cutoff(self, upto: int) -> int | None:
        """What the settled replay may forget now: what ended ``keep`` before the settled time, once a picture has
        frozen the outages that ended then (``_frozen``); a quarter of ``keep`` at a time."""
        if self.frozen_upto is None or self.ctx.trace_start is None:
            return None
        cutoff = min(upto - self.settings.keep_us, self.frozen_upto - self.settings.keep_us // 2)
        if cutoff <= self.ctx.trace_start or (self.forgotten is not None
                                              and cutoff < self.forgotten + self.settings.keep_us // 4):
            return None
        return cutoff

    def _window_ends(self) -> list[int]:
        """The ends of the spans of evidence the replay's next steps judge by: ZooKeeper's transactions, and the
        acting controller's state-change and controller logs (``Coverage``)."""
        ends = [self.ctx.log_windows[(kind, self.controller)][1] for kind in ("state_change", "controller_log")
                if (kind, self.controller) in self.ctx.log_windows]
        if self.ctx.zk_window is not None:
            ends.append(self.ctx.zk_window[1])
        return ends

    def _which(self) -> str | None:
        from replay_engine.kraft.facts import KRAFT_TYPES, ZK_CONTROLLER_TYPES, is_kraft_counts

        if not any(t in ZK_CONTROLLER_TYPES or t in KRAFT_TYPES and t != "metadata_record" for t in self.counts):
            return None  # no controller's activity yet: which replay is not known
        return "kraft" if is_kraft_counts(self.counts) else "zk"

    def _start(self):
        events = self._events()
        if self.kind == "kraft":
            from replay_engine.common.config import ConfigState, parse_version
            from replay_engine.kraft.replay import KraftReplay

            self._version = next(((e.detail or {}).get("version") for e in events if e.event_type == "kafka_version"),
                                 None)
            config = ConfigState(version=parse_version(self._version))
            if config.version is not None:
                config.version_source = f"logged 'Kafka version: {self._version}'"
            return KraftReplay(config)
        from replay_engine.api import zk_replay_of

        replay, _ = zk_replay_of(events, self.ctx, paths=sorted(self.paths))
        replay.start()
        return replay

    def state_bytes(self) -> int:
        """The size of the settled replay, pickled: its working state (flat over a long run: forget_before)."""
        return len(self._replay or b"")

    def kept(self) -> list[Event]:
        """The events kept (the tail and the sticky ones), in the replay's order: what the picture was made of."""
        return self._events()

    def _events(self) -> list[Event]:
        """The tail and the sticky events, once each, in the replay's order."""
        seen = set()
        out = []
        for e in self.tail:
            seen.add(id(e))
            out.append(e)
        out.extend(e for e in self.sticky.values() if id(e) not in seen)
        if self.first_record is not None and id(self.first_record) not in seen:
            out.append(self.first_record)
        out.sort(key=replay_key)
        return out

    def _facts(self, settling: int | None = None) -> tuple[list[F.Fact], Any]:
        """The facts of the kept events, in the replay's order, with the stream they came in. ``settling``: facts
        before that time are settled, ZooKeeper's window taken to reach it."""
        events = self._events()
        if self.kind == "kraft":
            from replay_engine.common.config import parse_version
            from replay_engine.kraft.facts import kraft_facts, prepared

            ordered, _ = prepared(events, self.ctx)
            stream = kraft_facts(ordered, parse_version(self._version), None, self.ctx)
            return stream.facts, stream
        from replay_engine.zk.from_events import build_facts

        ctx = self.ctx
        if settling is not None:
            # a span ended before the settled time is quiet for longer than quiet_us (see settle): ZooKeeper's, and
            # the logs of brokers still up, go on (nothing happened they would record); a broker that went down
            # has written its last line
            def reach(w):
                return w if w is None or w[1] >= settling else (w[0], settling)

            ctx = replace(ctx, zk_window=reach(ctx.zk_window),
                          log_windows={k: reach(w) if k[1] in self.alive else w for k, w in ctx.log_windows.items()})
        stream = build_facts(events, ctx, sorted(self.paths))
        return stream.facts, stream

    def _begin(self, replay, stream) -> None:
        """What the whole cluster's evidence says besides the facts, as far as it reaches now."""
        if self.kind == "kraft":
            replay.start(stream)
            return
        # the windows of the evidence grow as it is read: the replay's own coverage is the one it judges by
        cov = replay.coverage
        cov.zk[:] = stream.coverage.zk
        cov.state_change.clear()
        cov.state_change.update(stream.coverage.state_change)
        cov.controller_log.clear()
        cov.controller_log.update(stream.coverage.controller_log)

    def _prune(self) -> None:
        keep_from = self.settled - self.settings.lookback_us
        self.tail = [e for e in self.tail if e.ts is None or e.ts >= keep_from]
        # an event a closed outage's explanation may read stays until a picture has frozen the outage
        sticky_from = self.settled - self.settings.keep_us
        if self.frozen_upto is None:
            return
        sticky_from = min(sticky_from, self.frozen_upto - self.settings.keep_us // 2)
        self.sticky = {k: e for k, e in self.sticky.items() if e.ts is None or e.ts >= sticky_from}

    # ------------------------------------------------------------------ the picture

    def picture(self) -> ReplayResult | None:
        """The result on the evidence read so far: the settled replay, then the tail, finished (None before any
        event)."""
        events = self._events()
        if not events:
            return None
        from replay_engine import api

        with cycle_gc_paused():
            if self._replay is None:
                return api.replay_cluster(events, self.cluster, context=self.ctx)
            return self._frozen(self._picture(events))

    def _picture(self, events: list[Event]) -> ReplayResult:
        from replay_engine import api

        replay = pickle.loads(self._replay)
        facts, stream = self._facts()
        late = {_where(e) for e in self.late}
        self._begin(replay, stream)
        lo = self.settled
        for f in facts:
            if f.ts >= lo or _where(f) in late:
                replay.step(f)
        if self.kind == "kraft":
            replay.finish(stream)
            return api.kraft_result(replay, events, self.cluster, self._version, self.ctx)
        replay.finish(self.ctx.trace_end)
        stream.coverage = replay.coverage
        return api.zk_result(replay, stream, events, self.cluster)

    def _frozen(self, result: ReplayResult) -> ReplayResult:
        """Outages closed long before the settled time keep the explanation given while their lines were at hand;
        the others are told as the picture tells them now."""
        upto = self.settled
        out = []
        seen = set()
        by_partition: dict[tuple, list[tuple]] = {}
        for key, was in self.frozen.items():
            by_partition.setdefault(key[:2], []).append((key, was))
        for lp in result.leaderless:
            ep = lp.episode
            key = (ep.topic, ep.partition, ep.start)
            # the outage frozen before, told again now: by its start, or by its time when the replay has since
            # forgotten the line it started with (forget_before) and dates it by the next one
            key = next((k for k, was in by_partition.get(key[:2], ()) if k == key or _overlap(was.episode, ep)),
                       key)
            if key in seen:
                continue
            seen.add(key)
            if key in self.frozen:
                lp = self.frozen[key]
            elif ep.end is not None and ep.end < upto - self.settings.keep_us // 2:
                self.frozen[key] = lp
            out.append(lp)
        out.extend(lp for key, lp in self.frozen.items() if key not in seen)
        out.sort(key=lambda lp: (lp.episode.topic, lp.episode.partition, lp.episode.start))
        self.frozen_upto = upto
        return replace(result, leaderless=out)


def _overlap(a, b) -> bool:
    """Do two leaderless episodes of a partition share a moment (an open one reaches on)?"""
    far = 1 << 62
    return a.start < (b.end if b.end is not None else far) and b.start < (a.end if a.end is not None else far)


def _merge(ctx: ClusterContext, new: ClusterContext) -> None:
    """``ctx`` grown by the context of new events (the rules of ``cluster_context``: spans by min and max)."""
    def span(a, b):
        if a is None:
            return b
        if b is None:
            return a
        return (min(a[0], b[0]), max(a[1], b[1]))

    for k, w in new.log_windows.items():
        ctx.log_windows[k] = span(ctx.log_windows.get(k), w)
    ctx.zk_window = span(ctx.zk_window, new.zk_window)
    ctx.zk = ctx.zk or new.zk
    if new.trace_start is not None:
        ctx.trace_start = new.trace_start if ctx.trace_start is None else min(ctx.trace_start, new.trace_start)
        ctx.trace_end = new.trace_end if ctx.trace_end is None else max(ctx.trace_end, new.trace_end)


def _merge_kraft(ctx: ClusterContext, events: list[Event]) -> None:
    """What ``kraft_pass.kraft_context`` reads of every event, grown by new ones: each file's writer (its lowest
    broker id), topic ids' names (the earliest), the span of the controller's own evidence."""
    from replay_engine.kraft.context import kraft_context

    new = kraft_context(events, ClusterContext())
    for f, w in new.writers.items():
        ctx.writers[f] = w if f not in ctx.writers else min(w, ctx.writers[f])
    for t, n in new.topic_ids.items():
        ctx.topic_ids.setdefault(t, n)
    a, b = ctx.controller_view, new.controller_view
    ctx.controller_view = b if a is None else a if b is None else (min(a[0], b[0]), max(a[1], b[1]))


def forget_before(replay, cutoff: int) -> None:
    """The settled replay without the history that ended before ``cutoff``: closed timeline intervals, decisions
    and verdicts, evidence, failed elections, broker periods and controller tenures, assignments and configurations
    superseded before it (the last one before it stays: it is the state in force). What a closed outage was told
    from is frozen first (``LiveReplay._frozen``); this is what lets a long ``watch`` run in flat memory. Both
    replays keep these under the same names (``assemble`` reads them); a replay without one is left as it is."""
    def recent(items, end=lambda x: x):
        items[:] = [x for x in items if (end(x) if end(x) is not None else cutoff) >= cutoff]

    timeline = getattr(replay, "timeline", None)
    since = _outages_from(timeline, cutoff) if timeline is not None else {}
    if timeline is not None:
        timeline.closed[:] = [iv for iv in timeline.closed if iv.end >= since.get((iv.topic, iv.partition), cutoff)]
    for name in ("decisions", "unclean_elections"):
        lst = getattr(replay, name, None)
        if lst is not None:
            lst[:] = [d for d in lst if d.ts >= cutoff or d.status == "pending"]
    lst = getattr(replay, "comparisons", None)
    if lst is not None:
        recent(lst, lambda c: c.ts)
    # a partition's outage still told (open, or ended after the cutoff) keeps the lines it began with, and the
    # brokers' and the controllers' history since the earliest of those
    earliest = min(since.values(), default=cutoff)
    for name in ("evidence_by_tp", "failed_elections"):
        table = getattr(replay, name, None) or {}
        for k in list(table):
            table[k] = [r for r in table[k] if r.ts is None or r.ts >= since.get(k, cutoff)]
            if not table[k]:
                del table[k]
    table = getattr(replay, "evidence_by_broker", None) or {}
    for k in list(table):
        table[k] = [r for r in table[k] if r.ts is None or r.ts >= earliest]
        if not table[k]:
            del table[k]
    for ps in (getattr(replay, "periods", None) or {}).values():
        ps[:] = [p for p in ps[:-1] if p.end is None or p.end >= earliest] + ps[-1:]
    tenures = getattr(replay, "tenures", None)
    if tenures:
        tenures[:] = [t for t in tenures[:-1] if t.end is None or t.end >= earliest] + tenures[-1:]
    for hist in (getattr(replay, "ar_history", None) or {}).values():
        _since(hist, cutoff)
    history = getattr(replay, "config_history", None)
    if history:
        _since(history, cutoff)


def _outages_from(timeline, cutoff: int) -> dict[tuple, int]:
    """Per partition whose history reaching the cutoff is an outage (leaderless, or its leader not serving) that
    began before it: when that outage began, less the interval before it (the state it was lost from). Forgetting
    from the cutoff alone would date the outage by a later interval of it, and lose the line it began with."""
    def out(iv) -> bool:
        return iv.view.leaderless or iv.view.unavailable

    by_tp: dict[tuple, list] = {}
    for iv in timeline.closed:
        by_tp.setdefault((iv.topic, iv.partition), []).append(iv)
    since = {}
    for tp, ivs in by_tp.items():
        chain = sorted(ivs, key=lambda iv: iv.start) + ([timeline.open[tp]] if tp in timeline.open else [])
        k = next((i for i, iv in enumerate(chain) if iv.end is None or iv.end >= cutoff), None)
        if k is None or not out(chain[k]):
            continue
        while k > 0 and chain[k - 1].end == chain[k].start and out(chain[k - 1]):
            k -= 1
        k = max(0, k - 1)
        if chain[k].start < cutoff:
            since[tp] = chain[k].start
    return since


def _since(history: list[tuple], cutoff: int) -> None:
    """(time, value) changes in order: those from ``cutoff`` on, and the one in force at it."""
    k = 0
    while k + 1 < len(history) and history[k + 1][0] <= cutoff:
        k += 1
    del history[:k]
