"""Which broker a source is: from what its own lines say, else from ``--broker-map``.

A broker names itself at start-up (``[KafkaServer id=1] started``, ``[BrokerServer id=1]``),
in its configuration dump (``broker.id = 1``, ``node.id = 1``) and as controller
(``[Controller id=1]``, ``[QuorumController id=1]``): Kafka writes these idents with the
local id, never a peer's (KafkaServer.scala ``logIdent``, KafkaConfig's ``logAll``).
The container's name says nothing reliable (``kafka-1`` may run broker 101), so it is
used only when the operator maps it.
"""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass
from typing import Iterable

# What a line says of its own id, split in two so that a search starts only at a '[' (re scans for a
# pattern's leading literal in C): a bracketed log ident anywhere in the line, or a whole line of the
# configuration dump. No line is both (the dump's line holds no '[').
_BRACKETED = re.compile(
    r"\[(?:(?:KafkaServer|BrokerServer|ControllerServer|QuorumController) id=(\d+)\]"
    r"|KafkaRaftServer nodeId=(\d+)\]"
    r"|Controller id=(\d+)[\] ])"
)
_CONFIGURED = re.compile(r"^\s*(?:broker|node)\.id = (\d+)\s*$")
# _BRACKETED's matches whole, no groups (``findall`` gives the words)
_IDENTS = re.compile(_BRACKETED.pattern.replace("(\\d+)", "\\d+"))


def idents(text: str) -> set[str]:
    """The distinct bracketed idents ``text`` holds (``_BRACKETED``'s matches)."""
    return set(_IDENTS.findall(text))


def ident_id(words: str) -> str:
    """The id a bracketed ident names ('[Controller id=01]' -> '1')."""
    m = _BRACKETED.match(words)
    return str(int(next(g for g in m.groups() if g is not None)))


def self_named(text: str) -> Iterable[re.Match]:
    """The places where ``text`` names its writer's id, in order; the id is a match's one group that is set."""
    if ".id = " in text:
        m = _CONFIGURED.match(text)
        if m is not None:
            return (m,)
    return _BRACKETED.finditer(text)


def first_named(text: str, width: int = 0, words_in: Iterable[str] | None = None) -> list[tuple[int, str, str]]:
    """Where lines joined by '\n' first name each of their writer's ids: (offset in ``text``, the words, the id),
    in file order, as ``self_named`` reads line by line; each line's text starts ``width`` characters in (past
    a prefix that names no id and holds no '['). The words of a bracketed ident are found by one search over
    the text (or are ``words_in``, the distinct words of a text holding this one), and each one's first place
    by a plain search (an ident's '[' starts no other ident, so a plain occurrence is a match); the few lines
    of a configuration dump are matched each."""
    firsts: dict[str, tuple[int, str]] = {}
    for words in idents(text) if words_in is None else words_in:
        bid = ident_id(words)
        at = text.find(words)
        if at < 0:
            continue
        if bid not in firsts or at < firsts[bid][0]:
            firsts[bid] = (at, words.strip().rstrip(" "))
    at = text.find(".id = ")
    while at >= 0:
        start = text.rfind("\n", 0, at) + 1
        end = text.find("\n", at)
        end = len(text) if end < 0 else end
        m = _CONFIGURED.match(text[start + width:end])
        if m is not None:
            bid = str(int(m.group(1)))
            if bid not in firsts or start < firsts[bid][0]:
                firsts[bid] = (start, m.group(0).strip().rstrip(" "))
        at = text.find(".id = ", end)
    return sorted((at, words, bid) for bid, (at, words) in firsts.items())


# The same searches over lines still as ASCII bytes (``survey._survey_raw``): a byte pattern finds there what the
# text pattern finds in their characters.
_IDENTS_BYTES = re.compile(_IDENTS.pattern.encode())


def ident_places(body: bytes, start: int) -> dict[str, list[int]]:
    """The bracketed idents of ``body[start:]`` (``idents``), each with every place where it is."""
    places: dict[str, list[int]] = {}
    for m in _IDENTS_BYTES.finditer(body, start):
        places.setdefault(m.group(), []).append(m.start())
    return {w.decode(): at for w, at in places.items()}


_DUMP_ID_BYTES = re.compile(rb"\.id = ")


def configured_raw(body: bytes, start: int, width: int) -> list[tuple[int, bytes, str, str]]:
    """The configuration dump lines of ``body[start:]`` (``_CONFIGURED``, on each line past its ``width``
    characters of prefix), in order: (the line's start, its prefix, the words, the id)."""
    out = []
    line = -1
    for m in _DUMP_ID_BYTES.finditer(body, start):
        if m.start() < line:
            continue  # (a second '.id = ' in a line already read)
        line = body.rfind(b"\n", 0, m.start()) + 1
        end = body.find(b"\n", m.start())
        got = _CONFIGURED.match(body[line + width:end].decode())
        if got is not None:
            out.append((line, body[line:line + width], got.group(0).strip().rstrip(" "), str(int(got.group(1)))))
        line = end
    return out


@dataclass(frozen=True)
class Identity:
    broker_id: int | None
    how: str  # a sentence fragment: "from '[KafkaServer id=1]' at x.txt:12", "from --broker-map kafka-1=1"
    conflict: str | None = None  # another id the source names, when there is one


def named_ids(texts: list[str], positions: list[int]) -> dict[int, tuple[str, int]]:
    """Each id the lines name as their own -> (the words that name it, file line of the first)."""
    found: dict[int, tuple[str, int]] = {}
    for text, pos in zip(texts, positions):
        if "id" not in text:
            continue
        for m in self_named(text):
            bid = int(next(g for g in m.groups() if g is not None))
            if bid not in found:
                found[bid] = (m.group(0).strip().rstrip(" "), pos)
    return found


def resolve(name: str, texts: list[str], positions: list[int], path: str,
            broker_map: tuple[tuple[str, int], ...], file_hint: int | None, single: bool) -> Identity:
    return resolve_found(name, named_ids(texts, positions), path, broker_map, file_hint, single)


def resolve_found(name: str, found: dict[int, tuple[str, int]], path: str,
                  broker_map: tuple[tuple[str, int], ...], file_hint: int | None, single: bool) -> Identity:
    """``resolve`` from the ids already gathered (a big stream's first pass gathers them, ``named_ids``)."""
    mapped = next(((pat, bid) for pat, bid in broker_map if _map_matches(pat, name)), None)
    if len(found) == 1:
        bid, (words, pos) = next(iter(found.items()))
        conflict = None
        if mapped is not None and mapped[1] != bid:
            conflict = f"--broker-map {mapped[0]}={mapped[1]} says {mapped[1]}; its own lines win"
        return Identity(bid, f"from '{words}' at {path}:{pos}", conflict)
    if mapped is not None:
        conflict = None
        if found:
            conflict = "its lines name several ids: " + ", ".join(
                f"{b} ('{w}' at {path}:{p})" for b, (w, p) in sorted(found.items()))
        return Identity(mapped[1], f"from --broker-map {mapped[0]}={mapped[1]}", conflict)
    if found:
        names = ", ".join(f"{b} ('{w}' at {path}:{p})" for b, (w, p) in sorted(found.items()))
        return Identity(None, f"unknown: its lines name several ids ({names}); lines are attributed by their own "
                              f"log idents; give --broker-map '{name}=ID' to settle it")
    if single and file_hint is not None:
        return Identity(file_hint, "from the file's path or --broker-map on it")
    return Identity(None, f"unknown: no line names its id; give --broker-map '{name}=ID'")


def _map_matches(pattern: str, name: str) -> bool:
    pod = name.split("/", 1)[0]
    return fnmatch.fnmatchcase(name, pattern) or fnmatch.fnmatchcase(pod, pattern)
