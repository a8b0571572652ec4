"""Where the simulator's log lines go before they are files: per broker, per log file, in time order."""
from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from samplegen.kafka.templates28 import TEMPLATES, Template
from samplegen.writers.log4j import entry


@dataclass(slots=True)
class Line:
    ms: int
    seq: int
    level: str
    logger: str
    message: str
    throwable: tuple[str, ...]
    template: str

    def text(self) -> str:
        return entry(self.ms, self.level, self.logger, self.message, self.throwable)


class LogSink:
    """Collects lines per (broker, file); ``seq`` keeps the order of lines with the same millisecond."""

    def __init__(self):
        self.files: dict[tuple[int, str], list[Line]] = defaultdict(list)
        self._seq = 0

    def add(self, broker: int, ms: int, template: str | Template, /, throwable=(), **fields) -> Line:
        t = template if isinstance(template, Template) else TEMPLATES[template]
        self._seq += 1
        line = Line(ms, self._seq, t.level, t.logger, t.render(**fields), tuple(throwable), t.name)
        self.files[(broker, t.file)].append(line)
        return line

    def sorted_lines(self, broker: int, file: str) -> list[Line]:
        return sorted(self.files.get((broker, file), []), key=lambda x: (x.ms, x.seq))

    def templates_used(self) -> set[str]:
        return {ln.template for lines in self.files.values() for ln in lines}
