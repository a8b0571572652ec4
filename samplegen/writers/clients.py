"""Producer application logs during an outage: a Java application (kafka-clients 2.8) and a Go one (sarama).

Given, per partition the application writes to, when its leader's process died,
when the controller declared it leaderless and when a leader came back, write
what each client prints. Wording is the clients' own:

- Java: ``Sender``/``NetworkClient`` warnings and the ``TimeoutException``
  "Expiring N record(s) for T-P:MS ms has passed since batch creation"
  (delivery.timeout.ms = 120000) that the application's callback logs;
- sarama: its ``Logger`` lines (``producer/broker/N state change to [closing]
  because EOF``, ``client/metadata found some partitions to be leaderless``,
  ``client/metadata retrying after 250ms... (N attempts remaining)``) and the
  application's ``ProducerError`` lines ("kafka: Failed to produce message to
  topic T: kafka server: In the middle of a leadership election, ...").
"""
from __future__ import annotations

import datetime as dt
import random
from dataclasses import dataclass

from samplegen.writers.log4j import entry

_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
DELIVERY_TIMEOUT_MS = 120_000
LEADER_NOT_AVAILABLE = ("kafka server: In the middle of a leadership election, there is currently no leader for this "
                        "partition and hence it is unavailable for writes.")


@dataclass(frozen=True)
class Outage:
    topic: str
    partition: int
    broker: int  # the leader that died
    host: str
    ip: str
    dead_ms: int  # its process died: connections drop
    no_leader_ms: int  # the controller wrote leader -1: metadata shows no leader
    back_ms: int  # a leader again

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"


def java_producer_log(outages: list[Outage], start_ms: int, end_ms: int, seed: int, *,
                      app_logger: str = "com.example.logship.KafkaSink", client_id: str = "producer-1",
                      batch_every_ms: int = 10_000) -> str:
    rng = random.Random(seed)
    out: list[tuple[int, int, str]] = []
    seq = [0]

    def add(ms, level, logger, msg, throwable=()):
        seq[0] += 1
        out.append((ms, seq[0], entry(ms, level, logger, msg, throwable)))

    pfx = f"[Producer clientId={client_id}] "
    sender, nc = "org.apache.kafka.clients.producer.internals.Sender", "org.apache.kafka.clients.NetworkClient"
    t = start_ms + rng.randint(0, 59_000)
    while t < end_ms:  # the application's own heartbeat: it is alive and shipping
        add(t, "INFO", "com.example.logship.Stats", f"shipped {rng.randint(52_000, 61_000)} records in the last 60 s")
        t += 60_000
    corr = rng.randint(800_000, 900_000)
    for o in outages:
        ms = o.dead_ms + rng.randint(2, 40)
        corr += rng.randint(1, 9)
        add(ms, "WARN", sender, f"{pfx}Got error produce response with correlation id {corr} on topic-partition {o.tp}, "
                                "retrying (2147483646 attempts left). Error: NETWORK_EXCEPTION")
        add(ms, "WARN", sender, f"{pfx}Received invalid metadata error in produce request on partition {o.tp} due to "
                                "org.apache.kafka.common.errors.NetworkException: The server disconnected before a response "
                                "was received.. Going to request metadata update now")
    if outages:
        first = min(outages, key=lambda x: x.dead_ms)
        t = first.dead_ms + rng.randint(50, 300)
        until = min(o.no_leader_ms for o in outages) + rng.randint(50, 400)
        while t < until:  # reconnect.backoff.max.ms = 1000
            add(t, "WARN", nc, f"{pfx}Connection to node {first.broker} ({first.host}/{first.ip}:9092) could not be "
                               "established. Broker may not be available.")
            t += rng.randint(900, 1100)
    for o in outages:
        created = o.dead_ms - rng.randint(0, batch_every_ms)
        while created < o.back_ms - 50:
            expire = created + DELIVERY_TIMEOUT_MS + rng.randint(0, 15)
            if expire < o.back_ms and expire < end_ms:
                n = rng.randint(18, 90)
                add(expire, "ERROR", app_logger, f"send to {o.topic} failed, {n} record(s) dropped",
                    [f"org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for {o.tp}:"
                     f"{expire - created} ms has passed since batch creation"])
            created += batch_every_ms + rng.randint(-300, 300)
    return "".join(text for _, _, text in sorted(out))


def _go_stamp(ms: int) -> str:
    return (_EPOCH + dt.timedelta(milliseconds=ms)).strftime("%Y/%m/%d %H:%M:%S")


def sarama_producer_log(outages: list[Outage], start_ms: int, end_ms: int, seed: int, *,
                        bootstrap: str = "kafka-broker-2:9092", send_every_ms: int = 15_000) -> str:
    rng = random.Random(seed)
    out: list[tuple[int, int, str]] = []
    seq = [0]

    def sarama(ms, msg):
        seq[0] += 1
        out.append((ms, seq[0], f"[sarama] {_go_stamp(ms)} {msg}\n"))

    def app(ms, msg):
        seq[0] += 1
        out.append((ms, seq[0], f"{_go_stamp(ms)} {msg}\n"))

    t = start_ms + rng.randint(0, 59_000)
    while t < end_ms:
        app(t, f"logagent: {rng.randint(20_000, 26_000)} lines sent in the last minute")
        t += 60_000
    by_broker: dict[int, list[Outage]] = {}
    for o in outages:
        by_broker.setdefault(o.broker, []).append(o)
    for broker, os_ in sorted(by_broker.items()):
        o0 = os_[0]
        addr = f"{o0.host}:9092"
        refused = f"dial tcp {o0.ip}:9092: connect: connection refused"
        t = o0.dead_ms + rng.randint(1, 30)
        sarama(t, f"producer/broker/{broker} state change to [closing] because EOF")
        sarama(t, f"Closed connection to broker {addr}")
        for o in os_:
            sarama(t, f"producer/leader/{o.topic}/{o.partition} state change to [retrying-1]")
            sarama(t, f"producer/leader/{o.topic}/{o.partition} abandoning broker {broker}")
        # Until the controller acts, metadata still names the dead broker: connections are refused.
        t += 100
        while t < o0.no_leader_ms:
            sarama(t, f"client/metadata fetching metadata for [{o0.topic}] from broker {bootstrap}")
            sarama(t + 2, f"producer/broker/{broker} starting up")
            sarama(t + 3, f"Failed to connect to broker {addr}: {refused}")
            sarama(t + 3, f"producer/broker/{broker} state change to [closing] because {refused}")
            for o in os_:
                app(t + 4, f"produce failed (partition {o.partition}): kafka: Failed to produce message to topic {o.topic}: {refused}")
            t += send_every_ms + rng.randint(-200, 200)
        # Then the partitions have no leader at all.
        t = max(t, o0.no_leader_ms + rng.randint(100, 900))
        back = min(o.back_ms for o in os_)
        while t < back:
            sarama(t, f"client/metadata fetching metadata for [{o0.topic}] from broker {bootstrap}")
            sarama(t + 1, "client/metadata found some partitions to be leaderless")
            for left, after in ((3, 250), (2, 250), (1, 250)):
                sarama(t + 1 + (4 - left) * after - after, f"client/metadata retrying after {after}ms... ({left} attempts remaining)")
            for o in os_:
                app(t + 760, f"produce failed (partition {o.partition}): kafka: Failed to produce message to topic {o.topic}: "
                             f"{LEADER_NOT_AVAILABLE}")
            t += send_every_ms + rng.randint(-200, 200)
        for o in os_:
            t = o.back_ms + rng.randint(200, 4000)
            sarama(t, f"producer/leader/{o.topic}/{o.partition} selected broker {broker}")
            sarama(t, f"producer/broker/{broker} starting up")
            sarama(t, f"producer/broker/{broker} state change to [open] on {o.topic}/{o.partition}")
            sarama(t + 3, f"Connected to broker at {addr} (registered as #{broker})")
    return "".join(text for _, _, text in sorted(out))


# --- acks=all producers while the ISR is below min.insync.replicas ---------------------------------
# Partition.appendRecordsToLeader refuses the write (NOT_ENOUGH_REPLICAS); the Java producer retries it
# (retries = MAX_INT in 2.8) every retry.backoff.ms (this application sets 10000) until delivery.timeout.ms
# (120000) expires the batch; sarama gives up after Producer.Retry.Max (3) and the application logs the
# ProducerError with sarama's ErrNotEnoughReplicas text.
NOT_ENOUGH_REPLICAS = "kafka server: Messages are rejected since there are fewer in-sync replicas than required."


@dataclass(frozen=True)
class ShortIsr:
    topic: str
    partition: int
    start_ms: int  # the ISR written below min.insync.replicas
    end_ms: int  # large enough again

    @property
    def tp(self) -> str:
        return f"{self.topic}-{self.partition}"


def java_acks_all_log(windows: list[ShortIsr], start_ms: int, end_ms: int, seed: int, *,
                      app_logger: str = "com.example.payments.LedgerWriter", client_id: str = "payments-writer-1",
                      retry_backoff_ms: int = 10_000, batch_every_ms: int = 30_000) -> str:
    rng = random.Random(seed)
    out: list[tuple[int, int, str]] = []
    seq = [0]

    def add(ms, level, logger, msg, throwable=()):
        seq[0] += 1
        out.append((ms, seq[0], entry(ms, level, logger, msg, throwable)))

    sender = "org.apache.kafka.clients.producer.internals.Sender"
    t = start_ms + rng.randint(0, 59_000)
    while t < end_ms:
        add(t, "INFO", "com.example.payments.Stats", f"acked {rng.randint(2_800, 3_200)} payments in the last 60 s")
        t += 60_000
    corr = rng.randint(40_000, 50_000)
    for w in windows:
        t = w.start_ms + rng.randint(5, 400)
        while t < w.end_ms:
            corr += rng.randint(1, 30)
            add(t, "WARN", sender, f"[Producer clientId={client_id}] Got error produce response with correlation id "
                                   f"{corr} on topic-partition {w.tp}, retrying (2147483646 attempts left). "
                                   "Error: NOT_ENOUGH_REPLICAS")
            t += retry_backoff_ms + rng.randint(0, 40)
        created = w.start_ms - rng.randint(0, batch_every_ms)
        while created < w.end_ms - 50:
            expire = created + DELIVERY_TIMEOUT_MS + rng.randint(0, 15)
            if expire < w.end_ms and expire < end_ms:
                n = rng.randint(5, 40)
                add(expire, "ERROR", app_logger, f"payment batch to {w.topic} not acknowledged, {n} record(s) failed",
                    [f"org.apache.kafka.common.errors.TimeoutException: Expiring {n} record(s) for {w.tp}:"
                     f"{expire - created} ms has passed since batch creation"])
            created += batch_every_ms + rng.randint(-300, 300)
    return "".join(text for _, _, text in sorted(out))


def sarama_acks_all_log(windows: list[ShortIsr], start_ms: int, end_ms: int, seed: int, *,
                        send_every_ms: int = 15_000) -> str:
    rng = random.Random(seed)
    out: list[tuple[int, int, str]] = []
    seq = [0]

    def app(ms, msg):
        seq[0] += 1
        out.append((ms, seq[0], f"{_go_stamp(ms)} {msg}\n"))

    t = start_ms + rng.randint(0, 59_000)
    while t < end_ms:
        app(t, f"ledger: {rng.randint(900, 1_100)} entries written in the last minute")
        t += 60_000
    for w in windows:
        t = w.start_ms + rng.randint(300, 2_000)
        while t < w.end_ms:
            app(t, f"produce failed (partition {w.partition}): kafka: Failed to produce message to topic {w.topic}: "
                   f"{NOT_ENOUGH_REPLICAS}")
            t += send_every_ms + rng.randint(-200, 200)
    return "".join(text for _, _, text in sorted(out))
