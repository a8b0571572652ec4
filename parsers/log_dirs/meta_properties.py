"""``meta.properties``: the broker or KRaft node a log directory belongs to, and its cluster.

Kafka writes it as a Java properties file (a ``#`` comment with the date, then ``key=value`` lines):
``version=0``, ``broker.id=N`` and, from 2.4, ``cluster.id=X`` in ZooKeeper mode (2.4.0
``core/src/main/scala/kafka/server/BrokerMetadataCheckpoint.scala`` ``write``); ``version=1``, ``node.id=N``,
``cluster.id=X`` and from 3.7 ``directory.id`` in KRaft mode (3.7.0
``metadata/src/main/java/org/apache/kafka/metadata/properties/MetaProperties.java``). The cluster id is the one
the directory's data (a KRaft metadata log among it) was written for.
"""
from __future__ import annotations

from parsers.common.accounting import FileSummary, Quarantined
from parsers.common.context import SourceContext
from parsers.common.textio import ReadProblems, decode_line, iter_raw_lines
from parsers.schema import Event

MAX_BYTES = 1 << 20  # a meta.properties is a few lines; anything bigger is not one


def parse_meta_properties(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]:
    problems = ReadProblems()
    props: dict[str, tuple[str, int]] = {}
    for n, raw in enumerate(iter_raw_lines(data, problems, limit=MAX_BYTES, max_line=4096), 1):
        line = decode_line(raw, n, problems).strip()
        summary.lines += 1
        if not line or line[0] in "#!":
            summary.count("other")
            continue
        key, sep, value = line.partition("=")
        if not sep:
            summary.count("unrecognized")
            summary.sample(Quarantined(ctx.path, n, "unrecognized", "not a key=value line of meta.properties", line))
            continue
        props[key.strip()] = (value.strip(), n)
        summary.count("other")
    summary.errors.extend(problems.errors)
    cluster = props.get("cluster.id")
    if cluster is None or not cluster[0]:
        summary.notes.append("meta.properties without a cluster.id (a ZooKeeper-mode broker before 2.4)")
        return []
    node = next((props[k][0] for k in ("node.id", "broker.id") if k in props), None)
    summary.other -= 1
    summary.parsed += 1
    ev = Event("cluster_identity", cluster=ctx.cluster, source_kind="log_dir", source_file=ctx.path,
               source_pos=cluster[1], broker_id=ctx.broker_hint,
               subject_broker=int(node) if node is not None and node.isdigit() else None,
               detail={"cluster_id": cluster[0], "via": "meta_properties"}, raw=f"cluster.id={cluster[0]}")
    summary.events += 1
    summary.event_counts[ev.event_type] += 1
    return [ev]
