"""Kafka 2.8's znodes: paths and the JSON it writes into them (ZkData)."""
from __future__ import annotations

import base64
import json
import random

from samplegen.kafka.scala import mutable_hashmap_order

# KafkaZkClient.createTopLevelPaths (ZkData.PersistentZkPaths), in Kafka's order.
PERSISTENT_PATHS = (
    "/consumers", "/brokers/ids", "/brokers/topics", "/config/changes", "/admin/delete_topics",
    "/brokers/seqid", "/isr_change_notification", "/latest_producer_id_block", "/log_dir_event_notification",
    "/config/topics", "/config/clients", "/config/users", "/config/brokers",
)


def _j(obj) -> bytes:
    return json.dumps(obj, separators=(",", ":")).encode()


def uuid_base64(rng: random.Random) -> str:
    """A Kafka Uuid as printed: URL-safe base64 of 16 bytes, no padding."""
    return base64.urlsafe_b64encode(rng.getrandbits(128).to_bytes(16, "big")).decode().rstrip("=")


def broker_info(host: str, port: int, timestamp_ms: int) -> bytes:
    return _j({
        "listener_security_protocol_map": {"PLAINTEXT": "PLAINTEXT"},
        "endpoints": [f"PLAINTEXT://{host}:{port}"],
        "jmx_port": -1, "features": {}, "host": host, "timestamp": str(timestamp_ms), "port": port, "version": 5,
    })


def controller(broker_id: int, timestamp_ms: int) -> bytes:
    return _j({"version": 1, "brokerid": broker_id, "timestamp": str(timestamp_ms)})


def controller_epoch(epoch: int) -> bytes:
    return str(epoch).encode()


def topic_assignment(assignment: dict[int, list[int]], topic_id: str) -> bytes:
    parts = {k: assignment[int(k)] for k in mutable_hashmap_order(str(p) for p in assignment)}
    fields = {"version": 3, "topic_id": topic_id, "partitions": parts, "adding_replicas": {}, "removing_replicas": {}}
    return _j({k: fields[k] for k in mutable_hashmap_order(fields)})


def partition_state(leader: int, leader_epoch: int, isr: list[int], controller_epoch: int) -> bytes:
    return _j({"controller_epoch": controller_epoch, "leader": leader, "version": 1, "leader_epoch": leader_epoch, "isr": isr})


def topic_config(config: dict[str, str]) -> bytes:
    return _j({"version": 1, "config": config})


def cluster_id(cid: str) -> bytes:
    return _j({"version": "1", "id": cid})


def producer_id_block(broker: int, start: int, end: int) -> bytes:
    return _j({"version": 1, "broker": broker, "block_start": str(start), "block_end": str(end)})


FEATURE = _j({"features": {}, "version": 1, "status": 1})
