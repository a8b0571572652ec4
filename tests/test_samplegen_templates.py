"""Every log template the simulator writes exists in real Kafka logs (shared/real_logs).

For each template marked ``real``, some line in the real Kafka 2.8.0 logs has the
same level, logger and words with other values; ``real:<dir>`` points at another
version's real logs for a text that did not change. ``source`` templates have no
real line at hand (their text is from Kafka 2.8's source); they are few and listed.
"""
from __future__ import annotations

import gzip
import re
from functools import lru_cache

import pytest

from samplegen.kafka.templates28 import TEMPLATES
from samplegen.scenarios import SCENARIOS, play
from tests.conftest import REAL_LOGS

REAL_28 = "AndreasTraut__kafka_2.13-2.8.0"
HEADER = re.compile(r"^\[\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}\] (TRACE|DEBUG|INFO|WARN|ERROR|FATAL) (.*)$")


@lru_cache(maxsize=None)
def real_lines(folder: str) -> tuple[tuple[str, str], ...]:
    out = []
    for f in sorted((REAL_LOGS / folder).rglob("*.gz")):
        with gzip.open(f, "rt", encoding="utf-8", errors="replace") as fh:
            for raw in fh:
                m = HEADER.match(raw.rstrip("\n"))
                if m:
                    out.append((m.group(1), m.group(2)))
    return tuple(out)


def find_real(t) -> str | None:
    folder = REAL_28 if t.evidence == "real" else t.evidence.split(":", 1)[1]
    shape = t.shape()
    multi_line = "\n" in t.text
    suffix = f" ({t.logger})"
    for level, rest in real_lines(folder):
        if level != t.level:
            continue
        if multi_line:  # the logger closes the last line of such messages, not the first
            if shape.match(rest) or shape.match(rest.rstrip()):
                return rest
        elif rest.endswith(suffix) and shape.match(rest[: -len(suffix)]):
            return rest
    return None


CHECKED = sorted(n for n, t in TEMPLATES.items() if t.evidence != "source")


@pytest.mark.parametrize("name", CHECKED)
def test_template_has_a_real_instance(name):
    t = TEMPLATES[name]
    found = find_real(t)
    assert found is not None, f"no real {t.evidence} line of template {name!r}: {t.text[:120]}"


def test_source_only_templates_are_few_and_known():
    source_only = sorted(n for n, t in TEMPLATES.items() if t.evidence == "source")
    # Kafka 2.8 source: KafkaServer.initZkClient (chroot), Log.truncateTo, NetworkClient with the
    # fetcher's log context (the controller's variant of that line is real 2.8).
    assert source_only == ["created_chroot", "fetch_conn_failed", "truncate"]


def test_compiled_templates_render_like_the_templates():
    import string

    for name, t in TEMPLATES.items():
        fields = {f for _, f, _, _ in string.Formatter().parse(t.text) if f}
        values = {f: f"<{f}:{i}>" for i, f in enumerate(sorted(fields))}
        assert t.fast()(**values) == t.render(**values), name


def test_every_line_the_samples_write_comes_from_a_template():
    for sc in SCENARIOS.values():
        pl = play(sc)
        used = pl.cluster.log.templates_used()
        assert used <= set(TEMPLATES), used - set(TEMPLATES)
        # The key templates of each incident are really used.
        assert {"broker_change", "sc_online", "kafka_config", "registered_broker"} <= used
