"""The dashboards' outages are the replay's episodes read back from its partition_timeline rows: one class
(replay_engine.common.timeline.Episode, which dashboards.model.Episode extends with the replay's cause) cut by one
rule (outage_runs). Truth: the replay's own leaderless episodes of the same hand-written trace (broker 1 dies at
t=100: dw-0 and dw-3, RF 1 on it, have no leader until the end; orders-0 has none until it fails over to 2 at
t=100.3), and its causes as replay.json states them."""
from __future__ import annotations

from dashboards.model import cluster_view
from replay_engine.api import replay_cluster
from replay_engine.common.timeline import Episode
from test_dashboard_figures import hand_trace


def test_the_dashboards_episodes_are_the_replays_read_back_from_the_timeline_rows():
    res = replay_cluster(hand_trace().events, "k")
    view = cluster_view(res.to_json(), res.timeline_rows())
    replayed = [lp.episode for lp in res.leaderless]
    assert [(e.topic, e.partition, e.duration_us) for e in replayed] == \
        [("dw", 0, None), ("dw", 3, None), ("orders", 0, 300_000)]
    assert all(isinstance(e, Episode) for e in view.episodes)
    assert [(e.topic, e.partition, e.start, e.end, e.duration_us, len(e.intervals)) for e in view.episodes] == \
        [(e.topic, e.partition, e.start, e.end, e.duration_us, len(e.intervals)) for e in replayed]
    # each with the cause the replay gave it
    assert [(e.kind, e.summary) for e in view.episodes] == [(lp.cause.kind, lp.cause.summary) for lp in res.leaderless]
