"""Readers and writers of the stream formats (DESIGN.md, "Stream formats").

Readers yield, per line, either a `StreamElement` (a fact at a time point) or
a `Rejected` record (file, line, reason) for a line they cannot read: bad
input is a side output, never an exception, and the stream goes on.

    .tnt      TIMESTAMP <s> <p> <o> .      timestamped N-Triples
    .stream   TIMESTAMP atom               atom streams for rule programs, e.g. `36 a(x1,y)`

TIMESTAMP is an integer (a time point, or ms when a tick is given) or an
xsd:dateTime lexical form (see `timeline.py`).

>>> from rsp_plugin.terms import Dictionary
>>> terms = Dictionary()
>>> for element in read_atom_stream(["36 a(x1,y)", "38 b(y", "40 temp(105)"], terms, filename="s.stream"):
...     print(element)
36 a(x1,y)
s.stream:2: expected ')' after the arguments
40 temp(105)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator, TextIO

from .terms import TRIPLE, Dictionary, canonical_literal
from .timeline import datetime_time_point, time_point

Fact = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class StreamElement:
    """One fact of a stream at a time point, and where it was read."""

    time_point: int
    fact: Fact
    line: int
    terms: Dictionary | None = None

    def __str__(self) -> str:
        shown = format_fact(self.fact, self.terms) if self.terms is not None else str(self.fact)
        return f"{self.time_point} {shown}"


@dataclass(frozen=True)
class Rejected:
    """A line set aside: where it is, and why."""

    filename: str
    line: int
    reason: str

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}: {self.reason}"


class StreamFormatError(ValueError):
    pass


# Terms of N-Triples and of the rule language -------------------------------------------

_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_BLANK = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
_LITERAL = r'"(?:[^"\\\n\r]|\\.)*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRI + r")?"
_TIMESTAMP = r"(?P<ts>-?\d+|\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)?)"
_TNT_LINE = re.compile(
    rf"\s*{_TIMESTAMP}\s+(?P<s>{_IRI}|{_BLANK})\s*(?P<p>{_IRI})\s*(?P<o>{_IRI}|{_BLANK}|{_LITERAL})\s*\.\s*(?:#.*)?\Z"
)
_PREFIXED = r"(?:[A-Za-z][A-Za-z0-9_\-]*)?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_\-.]*[A-Za-z0-9_\-])?)?"
_ATOM_TERM = re.compile(
    rf"\s*({_IRI}|{_LITERAL}|{_BLANK}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|{_PREFIXED}|[a-z][A-Za-z0-9_]*)\s*"
)
_ATOM_HEAD = re.compile(rf"\s*{_TIMESTAMP}\s+({_IRI}|{_PREFIXED}|[a-z][A-Za-z0-9_]*)\s*")
_PREFIX_LINE = re.compile(r"\s*@prefix\s+([A-Za-z][A-Za-z0-9_\-]*)?:\s*<([^>]*)>\s*\.?\s*\Z")


def _time(text: str, tick_ms: int | None) -> int:
    if "T" in text:
        return datetime_time_point(text, tick_ms)
    return time_point(int(text), tick_ms)


def read_tnt(
    lines: Iterable[str], terms: Dictionary, *, tick_ms: int | None = None, filename: str = "<stream>"
) -> Iterator[StreamElement | Rejected]:
    """Timestamped N-Triples: `TIMESTAMP <s> <p> <o> .` per line."""
    triple = terms.intern(TRIPLE)
    intern = terms.intern
    for number, line in enumerate(lines, 1):
        match = _TNT_LINE.match(line)
        if match is None:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            yield Rejected(filename, number, _tnt_problem(line))
            continue
        try:
            point = _time(match.group("ts"), tick_ms)
        except ValueError:
            yield Rejected(filename, number, f"not a timestamp: {match.group('ts')!r}")
            continue
        obj = match.group("o")
        if obj[0] == '"':
            obj = canonical_literal(obj)
        fact = (triple, (intern(match.group("s")), intern(match.group("p")), intern(obj)))
        yield StreamElement(point, fact, number, terms)


def _tnt_problem(line: str) -> str:
    text = line.strip()
    parts = text.split(None, 1)
    if len(parts) < 2:
        return "expected a timestamp and a triple: TIMESTAMP <s> <p> <o> ."
    if not re.fullmatch(_TIMESTAMP, parts[0]):
        return f"not a timestamp: {parts[0]!r} (an integer or an xsd:dateTime)"
    if not text.endswith("."):
        return "a triple ends with ' .'"
    return "not an N-Triples triple after the timestamp: expected <s> <p> <o> ."


def read_atom_stream(
    lines: Iterable[str],
    terms: Dictionary,
    *,
    prefixes: dict[str, str] | None = None,
    tick_ms: int | None = None,
    filename: str = "<stream>",
) -> Iterator[StreamElement | Rejected]:
    """Atom streams: `TIMESTAMP atom` per line (`@prefix` lines allowed, `%`/`#` comments)."""
    prefixes = dict(prefixes or {})
    triple = terms.intern(TRIPLE)
    for number, raw in enumerate(lines, 1):
        line = raw.strip()
        if not line or line[0] in "%#":
            continue
        prefix = _PREFIX_LINE.match(line)
        if prefix:
            prefixes[prefix.group(1) or ""] = prefix.group(2)
            continue
        try:
            point, fact = _parse_atom_line(line, terms, prefixes, tick_ms, triple)
        except StreamFormatError as problem:
            yield Rejected(filename, number, str(problem))
            continue
        yield StreamElement(point, fact, number, terms)


def _parse_atom_line(line, terms, prefixes, tick_ms, triple) -> tuple[int, Fact]:
    head = _ATOM_HEAD.match(line)
    if head is None:
        if not re.match(r"\s*" + _TIMESTAMP + r"\s", line + " "):
            raise StreamFormatError(f"expected 'TIMESTAMP atom', e.g. '36 a(x1,y)'; got {line[:40]!r}")
        raise StreamFormatError("expected an atom after the timestamp, e.g. 'a(x1,y)'")
    try:
        point = _time(head.group("ts"), tick_ms)
    except ValueError:
        raise StreamFormatError(f"not a timestamp: {head.group('ts')!r}") from None
    predicate_text = head.group(2)
    position = head.end()
    args: list[int] = []
    if position < len(line) and line[position] == "(":
        position += 1
        while True:
            term = _ATOM_TERM.match(line, position)
            if term is None:
                raise StreamFormatError(f"expected a term at column {position + 1}")
            args.append(_intern_term(term.group(1), terms, prefixes))
            position = term.end()
            if position < len(line) and line[position] == ",":
                position += 1
                continue
            if position < len(line) and line[position] == ")":
                position += 1
                break
            raise StreamFormatError("expected ')' after the arguments")
    rest = line[position:].strip()
    if rest not in ("", "."):
        raise StreamFormatError(f"unexpected text after the atom: {rest[:30]!r}")
    if predicate_text[0] == "<" or ":" in predicate_text:
        predicate = _intern_term(predicate_text, terms, prefixes)
        if len(args) == 2:
            return point, (triple, (args[0], predicate, args[1]))
        return point, (predicate, tuple(args))
    return point, (terms.intern(predicate_text), tuple(args))


def _intern_term(text: str, terms: Dictionary, prefixes: dict[str, str]) -> int:
    if text[0] in "<\"" or text.startswith("_:") or text[0].isdigit() or text[0] == "-" or ":" not in text:
        return terms.intern(canonical_literal(text) if text[0] == '"' else text)
    prefix, _, local = text.partition(":")
    if prefix not in prefixes:
        raise StreamFormatError(f"unknown prefix '{prefix}:'")
    return terms.intern(f"<{prefixes[prefix]}{local}>")


def read_stream_file(
    path: str | Path,
    terms: Dictionary,
    *,
    prefixes: dict[str, str] | None = None,
    tick_ms: int | None = None,
    handle: TextIO | None = None,
) -> Iterator[StreamElement | Rejected]:
    """Pick the reader by the file's extension (`.tnt`, `.nt`; anything else: atom stream)."""
    path = Path(path)
    lines = handle if handle is not None else path.open(encoding="utf-8")
    try:
        if path.suffix in (".tnt", ".nt"):
            yield from read_tnt(lines, terms, tick_ms=tick_ms, filename=str(path))
        else:
            yield from read_atom_stream(lines, terms, prefixes=prefixes, tick_ms=tick_ms, filename=str(path))
    finally:
        if handle is None:
            lines.close()


# Writers -------------------------------------------------------------------------------------


def format_fact(fact: Fact, terms: Dictionary) -> str:
    """The contract's form: `q(x1,y)`, `alarm`, `<p>(<s>,<o>)` for a triple."""
    predicate, args = fact
    keys = terms.keys
    name = keys[predicate]
    if name == TRIPLE and len(args) == 3:
        return f"{keys[args[1]]}({keys[args[0]]},{keys[args[2]]})"
    if not args:
        return name
    return f"{name}({','.join(keys[a] for a in args)})"
