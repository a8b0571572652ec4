"""The ISR a controller states before removing a replica is its own view, read before its write is judged.

Independent truth: danisharora's lines (Kafka 0.9.0.0) and Kafka's source: 0.9.0.0
core/src/main/scala/kafka/controller/KafkaController.scala ``removeReplicaFromIsr`` logs (DEBUG) "Removing replica R
from ISR <partitionLeadershipInfo's ISR> for partition P." and then writes the ISR without R, leader epoch + 1 (the
leader kept unless it is R); ``doControlledShutdown`` runs it for each partition the shutting broker follows.
"""
import pytest

from conftest import REAL_LOGS2, real_cluster_events
from forensics.pipeline import drop_log_copies, replay_order
from replay_engine.api import replay_cluster

NAME = "danisharora__helloworld"


@pytest.mark.skipif(not (REAL_LOGS2 / NAME).is_dir(), reason="../shared/real_logs2 absent")
def test_a_follower_removed_in_a_controlled_shutdown_is_judged_on_the_isr_the_controller_stated():
    """controller.log.2016-11-23-10.gz:61-65: "Shutting down broker 2" at 11:33:35, then "Removing replica 2 from ISR
    0,1,2 for partition [__consumer_offsets,43]." (:64) and "New leader and ISR for partition [__consumer_offsets,43]
    is {"leader":0,"leader_epoch":2,"isr":[0,1]}" (:65). No earlier line shows broker 2 joining that ISR (a leader's
    ISR expansion); the controller's own line states it. The write is re-derived from it and agrees; on main it was
    left uncompared ('not re-derivable': the replay's ISR lacked the replica removed)."""
    events = drop_log_copies(sorted(real_cluster_events(NAME, folder="real_logs2"), key=replay_order))[0]
    res = replay_cluster(events, NAME)
    (c,) = [c for c in res.comparisons if c.record.source_file.endswith("/controller.log.2016-11-23-10.gz")
            and c.record.source_pos == 65]
    assert c.tp == ("__consumer_offsets", 43)
    assert c.recorded == {"leader": 0, "isr": [0, 1], "leader_epoch": 2}
    assert c.verdict == "agreed" and c.replayed == c.recorded
