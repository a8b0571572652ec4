"""A bundled incident as containers and log shippers would have handed it over.

Each broker's files (server, controller and state-change logs, rotated ones included)
are interleaved by time into one stream, as a container's stdout carries all loggers of
one broker when log4j writes to the console (Strimzi, Bitnami and Confluent images do).
That stream is then written in a collector's format: ``docker compose logs``, Docker's
json-file driver, CRI files, ``kubectl logs``, an Elasticsearch export of Filebeat's
documents, Loki's ``logcli`` output. The tests check that the analysis of the converted
evidence equals the analysis of the original files.
"""
from __future__ import annotations

import datetime as dt
import gzip
import hashlib
import json
import re
import shutil
from pathlib import Path

_HEADER = re.compile(r"^\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3})\] ")
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)
_KAFKA_FILES = ("server.log", "controller.log", "state-change.log")


def _read(path: Path) -> list[str]:
    raw = path.read_bytes()
    if raw[:2] == b"\x1f\x8b":
        raw = gzip.decompress(raw)
    text = raw.decode("utf-8")
    lines = text.split("\n")
    if lines and lines[-1] == "":
        lines.pop()
    return lines


def _entries(lines: list[str]) -> list[list[str]]:
    out: list[list[str]] = []
    for line in lines:
        if _HEADER.match(line) or not out:
            out.append([line])
        else:
            out[-1].append(line)
    return out


def broker_stream(broker_dir: Path) -> list[tuple[str, list[str]]]:
    """(log4j stamp, lines) of every entry of one broker's log files, in time order.

    Entries of one millisecond keep their file's order, files taken in name order
    (a console appender has no second file to tell them apart)."""
    tagged = []
    files = sorted(p for p in broker_dir.iterdir() if p.is_file() and p.name.startswith(_KAFKA_FILES))
    for rank, path in enumerate(files):
        for i, entry in enumerate(_entries(_read(path))):
            m = _HEADER.match(entry[0])
            tagged.append((m.group(1) if m else "", rank, i, entry))
    tagged.sort(key=lambda t: (t[0], t[1], t[2]))
    return [(t[0], t[3]) for t in tagged]


def _ns(log4j_stamp: str) -> int:
    d = dt.datetime.strptime(log4j_stamp, "%Y-%m-%d %H:%M:%S,%f").replace(tzinfo=dt.timezone.utc)
    return ((d - _EPOCH) // dt.timedelta(microseconds=1)) * 1000


def rfc3339_ns(ns: int) -> str:
    d = _EPOCH + dt.timedelta(microseconds=ns // 1000)
    return d.strftime("%Y-%m-%dT%H:%M:%S.") + f"{ns % 1_000_000_000:09d}Z"


def rfc3339(log4j_stamp: str) -> str:
    """'2021-08-16 09:00:13,000' (UTC) -> '2021-08-16T09:00:13.000000000Z'."""
    return rfc3339_ns(_ns(log4j_stamp))


def stamped_lines(entries: list[tuple[str, list[str]]]) -> list[tuple[str, str]]:
    """(runtime stamp, line): a runtime stamps each line when it reads it, so the stamps rise
    through an entry's lines and never go back (a nanosecond apart where the entry's own
    millisecond is shared)."""
    out = []
    last = -1
    for stamp, lines in entries:
        base = _ns(stamp) if stamp else last + 1
        for line in lines:
            last = max(base, last + 1)
            out.append((rfc3339_ns(last), line))
    return out


def brokers(sample: Path) -> dict[str, Path]:
    """Service name (kafka-1, ...) -> the broker's folder."""
    out = {}
    for d in sorted(sample.iterdir()):
        m = re.fullmatch(r"kafka-broker-(\d+)", d.name)
        if m and d.is_dir():
            out[f"kafka-{m.group(1)}"] = d
    return out


def copy_rest(sample: Path, out: Path) -> None:
    """Everything but the broker logs (ZooKeeper's data, zkCli dumps, client logs), as is."""
    for d in sorted(sample.iterdir()):
        if d.is_dir() and not d.name.startswith("kafka-broker-"):
            shutil.copytree(d, out / d.name)


def merged(streams: dict[str, list[tuple[str, str]]]) -> list[tuple[str, str, str]]:
    """(name, stamp, line) of all streams, interleaved by time as `docker compose logs` prints them."""
    rows = [(stamp, name, i, line) for name, lines in streams.items() for i, (stamp, line) in enumerate(lines)]
    rows.sort(key=lambda r: (r[0], r[1], r[2]))
    return [(name, stamp, line) for stamp, name, _, line in rows]


def _streams(sample: Path) -> dict[str, list[tuple[str, str]]]:
    return {name: stamped_lines(broker_stream(d)) for name, d in brokers(sample).items()}


# Compose's palette for service prefixes (cyan, yellow, green, ...), and its reset code.
_COLOURS = ("\x1b[36m", "\x1b[33m", "\x1b[32m", "\x1b[35m", "\x1b[34m")
_RESET = "\x1b[0m"


def compose_text(streams: dict[str, list[tuple[str, str]]], colour: bool = False, timestamps: bool = False) -> str:
    width = max(len(n) for n in streams)
    colours = {n: _COLOURS[i % len(_COLOURS)] for i, n in enumerate(sorted(streams))}
    out = [f"Attaching to {', '.join(sorted(streams))}"]
    for name, stamp, line in merged(streams):
        prefix = f"{name.ljust(width)} |"
        if colour:
            prefix = f"{colours[name]}{prefix}{_RESET}"
        out.append(f"{prefix} {stamp + ' ' if timestamps else ''}{line}")
    return "\n".join(out) + "\n"


def write_compose(sample: Path, out: Path, colour: bool = False, extra: dict[str, list[tuple[str, str]]] | None = None,
                  rename: dict[str, str] | None = None) -> Path:
    copy_rest(sample, out)
    streams = _streams(sample)
    if rename:
        streams = {rename.get(k, k): v for k, v in streams.items()}
    streams.update(extra or {})
    path = out / "incident.txt"
    path.write_text(compose_text(streams, colour=colour))
    return path


def docker_json_lines(lines: list[tuple[str, str]], split_at: int = 16384) -> list[str]:
    """Docker's json-file records; a line longer than ``split_at`` bytes goes into several records."""
    out = []
    for stamp, line in lines:
        data = line.encode("utf-8")
        parts = [data[i:i + split_at] for i in range(0, len(data), split_at)] or [b""]
        for k, part in enumerate(parts):
            text = part.decode("utf-8", "ignore") + ("\n" if k == len(parts) - 1 else "")
            out.append(json.dumps({"log": text, "stream": "stdout", "time": stamp}, separators=(",", ":")))
    return out


def write_docker_json(sample: Path, out: Path, split_at: int = 16384) -> list[Path]:
    copy_rest(sample, out)
    paths = []
    for name, lines in _streams(sample).items():
        cid = hashlib.sha256(name.encode()).hexdigest()
        path = out / "containers" / cid / f"{cid}-json.log"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(docker_json_lines(lines, split_at)) + "\n")
        paths.append(path)
    return paths


def cri_lines(lines: list[tuple[str, str]], split_at: int = 16384) -> list[str]:
    out = []
    for stamp, line in lines:
        parts = [line[i:i + split_at] for i in range(0, len(line), split_at)] or [""]
        for k, part in enumerate(parts):
            out.append(f"{stamp} stdout {'F' if k == len(parts) - 1 else 'P'} {part}")
    return out


def write_cri(sample: Path, out: Path, split_at: int = 16384) -> list[Path]:
    copy_rest(sample, out)
    paths = []
    for name, lines in _streams(sample).items():
        uid = hashlib.md5(name.encode()).hexdigest()
        uid = f"{uid[:8]}-{uid[8:12]}-{uid[12:16]}-{uid[16:20]}-{uid[20:32]}"
        path = out / "var" / "log" / "pods" / f"kafka_{name}_{uid}" / "kafka" / "0.log"
        path.parent.mkdir(parents=True)
        path.write_text("\n".join(cri_lines(lines, split_at)) + "\n")
        paths.append(path)
    return paths


def write_kubectl(sample: Path, out: Path, prefix: bool, timestamps: bool) -> list[Path]:
    """`kubectl logs --prefix` of all brokers in one file, or one file per pod."""
    copy_rest(sample, out)
    streams = _streams(sample)
    if prefix:
        rows = [f"[pod/{name}/kafka] {stamp + ' ' if timestamps else ''}{line}"
                for name, stamp, line in merged(streams)]
        path = out / "kubectl-logs.txt"
        path.write_text("\n".join(rows) + "\n")
        return [path]
    paths = []
    for name, lines in streams.items():
        path = out / f"{name}.log"
        path.write_text("\n".join(f"{stamp + ' ' if timestamps else ''}{line}" for stamp, line in lines) + "\n")
        paths.append(path)
    return paths


# Filebeat's Kafka module (filebeat/module/kafka/log/ingest/pipeline.yml): what it keeps of an entry.
_MODULE = re.compile(r"^\[(\S+ \S+)\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) +(.*) \(([\w.$]+)\)$")
_COMPONENT = re.compile(r"^\[([^\]]*)\][,:.]? +(.*)$")
_TRACE = re.compile(r"^([\w.$]+):\s*(.*)$")


def ecs_documents(name: str, entries: list[tuple[str, list[str]]], module: bool) -> list[dict]:
    """One document per entry; with ``module``, as the Kafka module's ingest pipeline leaves it."""
    docs = []
    for offset, (stamp, lines) in enumerate(entries):
        doc: dict = {"@timestamp": rfc3339(stamp)[:23] + "Z", "host": {"name": name},
                     "log": {"file": {"path": "/opt/kafka/logs/server.log"}, "offset": offset},
                     "input": {"type": "log"}, "message": "\n".join(lines)}
        m = _MODULE.match(lines[0]) if module else None
        if m is not None:
            message = m.group(3)
            doc["kafka.log.class"] = m.group(4)
            doc["log.level"] = m.group(2)
            c = _COMPONENT.match(message)
            doc["kafka.log.component"] = c.group(1) if c else "unknown"
            doc["message"] = c.group(2) if c else message
            t = _TRACE.match(lines[1]) if len(lines) > 1 else None
            if t:
                doc["kafka.log.trace.class"], doc["kafka.log.trace.message"] = t.group(1), t.group(2)
            doc["fileset.name"] = "log"
        docs.append(doc)
    return docs


def write_ecs(sample: Path, out: Path, module: bool, hits: bool) -> Path:
    """An export as newline-delimited JSON, in no time order (as an index returns it)."""
    copy_rest(sample, out)
    docs = []
    for name, d in brokers(sample).items():
        docs.extend(ecs_documents(name, broker_stream(d), module))
    rows = [json.dumps({"_index": "filebeat-7.17.0", "_id": str(i), "_source": doc} if hits else doc, sort_keys=True)
            for i, doc in enumerate(docs)]
    rows.sort(key=lambda r: hashlib.sha256(r.encode()).hexdigest())
    path = out / "export.ndjson"
    path.write_text("\n".join(rows) + "\n")
    return path


def write_loki(sample: Path, out: Path, jsonl: bool) -> Path:
    """`logcli query` output: newest first, as logcli prints without --forward."""
    copy_rest(sample, out)
    rows = []
    for name, stamp, line in reversed(merged(_streams(sample))):
        labels = {"container": "kafka", "namespace": "kafka", "pod": name}
        if jsonl:
            rows.append(json.dumps({"labels": labels, "line": line, "timestamp": stamp}))
        else:
            lab = ", ".join(f'{k}="{v}"' for k, v in sorted(labels.items()))
            rows.append(f"{stamp} {{{lab}}} {line}")
    path = out / ("loki.jsonl" if jsonl else "loki.txt")
    path.write_text("\n".join(rows) + "\n")
    return path


def write_loki_raw(sample: Path, out: Path) -> list[Path]:
    """`logcli query '{pod="..."}' --output=raw` per pod, without --forward: the pod's lines, newest first."""
    copy_rest(sample, out)
    paths = []
    for name, lines in _streams(sample).items():
        path = out / f"{name}.log"
        path.write_text("\n".join(line for _, line in reversed(lines)) + "\n")
        paths.append(path)
    return paths
