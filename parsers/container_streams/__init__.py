"""Logs as container runtimes and log shippers hand them over: several sources in one stream.

``docker compose logs``, Docker's json-file driver, Kubernetes CRI files, ``kubectl logs``
(``--timestamps``, ``--prefix``), Elasticsearch/OpenSearch exports of Filebeat's Kafka
module, Loki's ``logcli`` output. Each grammar module turns the file's lines into
:class:`~parsers.container_streams.records.Piece` s (one source's log line, with the file
line it came from); :mod:`~parsers.container_streams.demux` groups them per source and hands
each source to the broker-log parser, as if it were a broker's own file.
"""
from parsers.container_streams.demux import parse_container_stream
from parsers.container_streams.detect import detect_format

__all__ = ["detect_format", "parse_container_stream"]
