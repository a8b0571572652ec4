"""Which parser reads a file: sniff its kind from name and first bytes, then route.

Runs inside Spark tasks (on executors), so it decides from the bytes it is
given, not from anything the driver knows.
"""
from __future__ import annotations

import importlib
import re
from typing import Callable

from parsers.common.accounting import FileSummary
from parsers.common.context import SourceContext
from parsers.common.textio import head_bytes
from parsers.schema import Event

# kind -> (module, function); every function has the signature
#   f(data: bytes, ctx: SourceContext, summary: FileSummary) -> list[Event]
# and keeps summary balanced (lines == parsed + other + unrecognized + quarantined).
PARSERS: dict[str, tuple[str, str]] = {
    "broker_log": ("parsers.broker_logs.broker_log", "parse_broker_log"),
    "zk_txnlog": ("parsers.zookeeper.events", "parse_txnlog_file"),
    "zk_snapshot": ("parsers.zookeeper.events", "parse_snapshot_file"),
    "znode_dump": ("parsers.zookeeper.znode_dump", "parse_znode_dump"),
    "kraft_metadata": ("parsers.kraft.events", "parse_metadata_file"),
    "kraft_dump_text": ("parsers.kraft.dump_text", "parse_dump_text"),
    "container_stream": ("parsers.container_streams", "parse_container_stream"),
    "meta_properties": ("parsers.log_dirs.meta_properties", "parse_meta_properties"),
}

# Files that sit next to evidence but carry none we use (counted, not parsed).
AUX_NAMES = re.compile(
    r"(^|/)(leader-epoch-checkpoint|partition\.metadata|recovery-point-offset-checkpoint"
    r"|replication-offset-checkpoint|log-start-offset-checkpoint|cleaner-offset-checkpoint|myid|acceptedEpoch|currentEpoch"
    r"|\.lock)(\.gz)?$|\.(index|timeindex|txnindex|snapshot|deleted|cleaned|swap)(\.gz)?$"
)

ZK_LOG_MAGIC = b"ZKLG"
ZK_SNAP_MAGIC = b"ZKSN"
_ZK_TXN_NAME = re.compile(r"(^|/)log\.[0-9a-f]+(\.gz)?$")
_ZK_SNAP_NAME = re.compile(r"(^|/)snapshot\.[0-9a-f]+(\.gz|\.snappy)?$")
_KRAFT_NAME = re.compile(r"(__cluster_metadata-\d+/\d{20}\.log|\d{20}-\d{10}\.checkpoint)(\.gz)?$")
_SEGMENT_NAME = re.compile(r"(^|/)\d{20}\.log(\.gz)?$")  # any partition's segment: content decides
_META_PROPERTIES = re.compile(r"(^|/)meta\.properties(\.gz)?$")


_CTRL_BYTES = bytes([*range(0, 9), *range(14, 32)])


def _is_text(head: bytes) -> bool:
    if not head:
        return True
    sample = head[:8192]
    if b"\x00" in sample:
        return False
    ctrl = len(sample) - len(sample.translate(None, _CTRL_BYTES))
    return ctrl <= len(sample) // 100


# Line starts of the layouts parsers.broker_logs.log4j_layout reads:
# [yyyy-MM-dd HH:mm:ss, yyyy-MM-dd HH:mm:ss, yyyy/MM/dd HH:mm:ss.
_HEADER_START = re.compile(rb"^\[?\d{4}[-/]\d\d[-/]\d\d[ T]\d\d:\d\d:\d\d", re.MULTILINE)
MIN_HEADERS = 3


def _has_log_headers(head: bytes) -> bool:
    return len(_HEADER_START.findall(head.replace(b"\x00", b""), 0)) >= MIN_HEADERS


def sniff_kind(path: str, data: bytes) -> str:
    """broker_log, container_stream, zk_txnlog, zk_snapshot, znode_dump, kraft_metadata, kraft_dump_text,
    meta_properties, aux, empty, binary."""
    p = path.replace("\\", "/")
    if not data:
        return "empty"
    head, _ = head_bytes(data, 65536)
    if _KRAFT_NAME.search(p):
        # Named as a metadata segment/snapshot (names ZooKeeper never uses): the KRaft reader says where the
        # bytes stop making sense, even when damage happens to look like another format's magic.
        return "kraft_metadata"
    if head.startswith(ZK_LOG_MAGIC):
        return "zk_txnlog"
    if head.startswith(ZK_SNAP_MAGIC):
        return "zk_snapshot"
    if _SEGMENT_NAME.search(p) and len(head) >= 61 and head[16] == 2:
        from parsers.kraft.events import looks_like_metadata

        if looks_like_metadata(head):
            return "kraft_metadata"
    if p.endswith("quorum-state") or p.endswith("quorum-state.gz"):
        return "aux"
    if _META_PROPERTIES.search(p):
        return "meta_properties"
    if AUX_NAMES.search(p):
        return "aux"
    from parsers.container_streams import detect_format

    # Before the text test: a coloured `docker compose logs` has escape bytes on every line.
    if detect_format(head) is not None:
        return "container_stream"
    if not _is_text(head):
        # A Snappy-compressed ZooKeeper snapshot, a JPEG, ... Only names can tell.
        if _ZK_SNAP_NAME.search(p):
            return "zk_snapshot"
        if _ZK_TXN_NAME.search(p):
            return "zk_txnlog"
        if _has_log_headers(head):
            # A log with a few damaged lines (the zeros a crash leaves, junk bytes): the
            # parser quarantines those lines and keeps the rest.
            return "broker_log"
        return "binary"
    text = head.decode("utf-8", "replace")
    if "cZxid = 0x" in text or text.lstrip().startswith("[zk: ") or "\nWATCHER::" in text:
        return "znode_dump"
    stripped = text.lstrip()
    if stripped.startswith("Dumping ") and "baseOffset:" in text or stripped.startswith("baseOffset: "):
        return "kraft_dump_text"
    if (p.endswith(".json") or p.endswith(".json.gz")) and stripped.startswith("{") and '"path"' in text:
        return "znode_dump"
    # The rest of a capture folder (docs/capture-layout.md): its manifest and watch log.
    if p.endswith((".json", ".json.gz")) and stripped.startswith("{") and '"kafka-forensics-capture"' in text:
        return "znode_dump"
    if p.endswith((".jsonl", ".jsonl.gz")) and stripped.startswith("{") and '"observed_ms"' in text and '"kind"' in text:
        return "znode_dump"
    # Notes an operator keeps beside the evidence (README.md, a JSON of their own): not logs.
    if _DOC_NAME.search(p) or (p.endswith((".json", ".json.gz")) and stripped[:1] in "{[" and not _LOG4J_HINT.search(text)):
        return "doc"
    return "broker_log"


_DOC_NAME = re.compile(r"(^|/)(README|NOTES|CHANGELOG)[^/]*$|\.(md|rst|html?|pdf|docx?)$", re.IGNORECASE)
_LOG4J_HINT = re.compile(r"^\[\d{4}-\d\d-\d\d", re.MULTILINE)


def _load(kind: str) -> Callable[[bytes, SourceContext, FileSummary], list[Event]] | None:
    spec = PARSERS.get(kind)
    if spec is None:
        return None
    try:
        mod = importlib.import_module(spec[0])
    except ImportError:
        return None
    return getattr(mod, spec[1], None)


def parse_source(data: bytes, ctx: SourceContext) -> tuple[list[Event], FileSummary]:
    """Parse one file; never raises for bad input (problems go into the summary)."""
    kind = sniff_kind(ctx.path, data)
    summary = FileSummary(path=ctx.path, kind=kind, broker_id=ctx.broker_hint, cluster=ctx.cluster, bytes=len(data))
    if kind == "empty":
        summary.notes.append("empty file")
        return [], summary
    if kind == "aux":
        summary.notes.append("companion file without events (index, checkpoint, metadata); not parsed")
        return [], summary
    if kind == "doc":
        summary.notes.append("documentation or notes beside the evidence (not a log); not parsed")
        return [], summary
    if kind == "binary":
        summary.errors.append("binary file of unknown format (not a ZooKeeper or KRaft file this tool reads)")
        return [], summary
    parser = _load(kind)
    if parser is None:
        summary.errors.append(f"no parser available for {kind} files in this build")
        return [], summary
    try:
        events = parser(data, ctx, summary)
    except Exception as exc:  # noqa: BLE001 - a parser bug must not lose the other files
        summary.errors.append(f"internal parser error ({type(exc).__name__}: {exc}); file skipped after that point")
        events = []
        # Whatever was not accounted for is counted as quarantined, so the identity still holds.
        if summary.lines < summary.parsed + summary.other + summary.unrecognized + summary.quarantined:
            summary.lines = summary.parsed + summary.other + summary.unrecognized + summary.quarantined
        summary.quarantined += summary.lines - (summary.parsed + summary.other + summary.unrecognized + summary.quarantined)
    if summary.broker_id is None:
        summary.broker_id = ctx.broker_hint
    return events, summary
