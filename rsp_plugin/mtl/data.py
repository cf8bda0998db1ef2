"""DatalogMTL data as a stream: facts over intervals, read line by line, in time order.

MeTeoR's dataset format, one fact per line:

    Pos(veh21)@[1,1]          a punctual fact
    Fault(m1)@(2,5]           over the interval: the time points 3, 4, 5
    Alarm@7                   a nullary atom at 7 (also @[7])

On the integer timeline a fact holds at the integer time points of its
interval (`(2.5,4]` covers 3 and 4). The facts of a stream come in the order
of their first time point; one that starts before a fact read earlier is late
and set aside, as is a line that cannot be read or covers no time point: each
is a `Rejected` record (`FILE:LINE: reason`) and the stream goes on. Atom
streams (`TIMESTAMP atom`, `.stream`, atoms as in the datasets) and
timestamped N-Triples (`.tnt`) are read too, as punctual facts.

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> for item in read_dataset(["Pos(veh1)@[1,1]", "Fault(m1)@(2,5]", "Bad(x)@[3", "Gap(x)@(1,2)"], terms, filename="d.txt"):
...     print(item)
1..1 Pos(veh1)
3..5 Fault(m1)
d.txt:3: expected ',' or a closing ']' / ')' in the interval
d.txt:4: the interval (1,2) covers no time point of the integer timeline
"""

from __future__ import annotations

import itertools
import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Callable, Iterable, Iterator

from ..core import limits
from ..core.admission import Gap, Gate
from ..core.errors import RuleSyntaxError
from ..core.terms import Dictionary
from ..io.formats import Rejected, format_fact, read_tnt
from ..io.lines import lines_of
from .syntax import _PREFIX, STANDARD_PREFIXES, Scanner, _Reader

Fact = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class TimedFact:
    """A fact over the time points first..last, and the line it was read from."""

    first: int
    last: int
    fact: Fact
    line: int
    terms: Dictionary | None = None

    def __str__(self) -> str:
        shown = format_fact(self.fact, self.terms) if self.terms is not None else str(self.fact)
        return f"{self.first}..{self.last} {shown}"


def read_dataset(
    lines: Iterable[str], terms: Dictionary, *, prefixes: dict[str, str] | None = None, filename: str = "<stream>"
) -> Iterator[TimedFact | Rejected]:
    """MeTeoR dataset lines -> `TimedFact`s, or `Rejected` records for the lines that cannot be used."""
    reader = _Reader(filename, terms)
    reader.prefixes = {**STANDARD_PREFIXES, **(prefixes or {})}
    fast = _FAST_FACT.match
    names: dict[str, tuple[int, bool]] = {}  # predicate as written -> (id, is an IRI)
    intern = terms.intern
    for number, raw in enumerate(lines, 1):
        simple = fast(raw)
        if simple is not None:  # `Pred(a,b)@[1,2]` with plain names and integers: no need to scan
            predicate_text, arguments, first, last, point = simple.groups()
            first, last = (int(point), int(point)) if point is not None else (int(first), int(last))
            known = names.get(predicate_text)
            if known is None:
                key, is_iri = reader.name_key(predicate_text)
                known = names[predicate_text] = (intern(key), is_iri)
            args = () if not arguments else tuple(
                intern(reader.name_key(a)[0] if ":" in a else a) for a in arguments.replace(" ", "").split(",")
            )
            if first <= last and not (known[1] and len(args) == 2):
                yield TimedFact(first, last, (known[0], args), number, terms)
                continue
        line = raw.rstrip("\n")
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        try:
            yield _fact(reader, Scanner(line, filename, number), terms)
        except RuleSyntaxError as problem:
            yield Rejected(filename, number, problem.msg)


_SIMPLE_NAME = r"[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*(?::[A-Za-z0-9_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)?"
_SIMPLE_TERM = rf"\s*(?:{_SIMPLE_NAME}|-?\d+)\s*"
_FAST_FACT = re.compile(  # (time points of at most 18 digits: the others are judged by the full reader)
    rf"\s*({_SIMPLE_NAME})\s*(?:\(((?:{_SIMPLE_TERM},)*{_SIMPLE_TERM})\))?\s*@\s*"
    rf"(?:\[\s*(-?\d{{1,18}})\s*,\s*(-?\d{{1,18}})\s*\]|(-?\d{{1,18}}))\s*\Z"
)
_POINT = re.compile(r"-?\d+(?:\.\d+)?")


def _fact(reader: _Reader, s: Scanner, terms: Dictionary) -> TimedFact:
    atom = reader.atom(s, constants=True)
    if not s.take("@"):
        s.error("expected '@' and the time, e.g. Pred(a,b)@[1,2]")
    s.skip()
    start = s.pos
    if s.text.startswith(("[", "("), s.pos):
        interval = reader.interval(s, distances=False)
    else:
        point = s.match(_POINT)
        if point is None:
            s.error("expected the time after '@': a time point or an interval such as [1,2]")
        interval = reader.point_interval(point.group(0), s, point.start())
    written = s.text[start : s.pos].strip()
    if not s.at_end():
        s.error(f"unexpected text after the fact: {s.rest()!r}")
    points = interval.integers()
    if points is None:
        s.error(f"the interval {written} covers no time point of the integer timeline", start)
    first, last = points
    if last is None:
        s.error(f"the interval {written} has no end: a stream element must end", start)
    return TimedFact(first, last, (atom.predicate, atom.args), s.line, terms)


def read_facts(
    path: str | Path, lines: Iterable[str] | BinaryIO, terms: Dictionary, *, prefixes: dict[str, str] | None = None,
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
) -> Iterator[TimedFact | Rejected]:
    """Any stream file for a DatalogMTL program, by its name: `.tnt` / `.nt` (timestamped N-Triples),
    `.stream` (`TIMESTAMP atom`), else a MeTeoR dataset, unless its first line is `TIMESTAMP atom`."""
    name = str(path)
    suffix = Path(path).suffix
    if suffix in (".tnt", ".nt"):
        return read_facts_as(TRIPLES, name, lines, terms, max_line_bytes=max_line_bytes)
    return _with_bad_lines(lines, name, max_line_bytes, lambda text: _read_text_facts(
        name, suffix, text, terms, prefixes))


#: how a stream file for a DatalogMTL program is read (`facts_kind`)
TRIPLES, ATOMS, DATASET = "triples", "atoms", "dataset"


def facts_kind(path: str | Path, handle: BinaryIO | None = None,
               max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> str:
    """How `read_facts` reads the file: TRIPLES (.tnt, .nt), ATOMS (.stream, or a first line
    `TIMESTAMP atom`) or DATASET; for a reader of part of it (`read_facts_as`, a Spark task)."""
    suffix = Path(path).suffix
    if suffix in (".tnt", ".nt"):
        return TRIPLES
    if suffix == ".stream":
        return ATOMS
    opened = handle if handle is not None else open(path, "rb")
    try:
        for item in lines_of(opened, filename=str(path), max_line_bytes=max_line_bytes):
            line = item if type(item) is str else ""
            if line.strip() and line.strip()[0] not in "#%@":
                return ATOMS if _ATOM_LINE.match(line) else DATASET
    finally:
        if handle is None:
            opened.close()
    return DATASET


def read_facts_as(kind: str, name: str, lines: Iterable[str] | BinaryIO, terms: Dictionary, *,
                  prefixes: dict[str, str] | None = None,
                  max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> Iterator[TimedFact | Rejected]:
    """`read_facts` of some lines of a file `facts_kind` judged whole (lines numbered from 1)."""
    if kind == TRIPLES:
        return _punctual(read_tnt(lines, terms, filename=name, max_line_bytes=max_line_bytes))
    read = read_atom_lines if kind == ATOMS else read_dataset
    return _with_bad_lines(lines, name, max_line_bytes, lambda text: read(text, terms, prefixes=prefixes,
                                                                        filename=name))


def _with_bad_lines(lines, name: str, max_line_bytes: int | None, read) -> Iterator[TimedFact | Rejected]:
    """`read` over the lines as text; a line that is not UTF-8 or too long is set aside (`rsp_plugin.io.lines`)
    and read as a blank line, so that the others keep their numbers."""
    bad: list[Rejected] = []

    def text():
        for item in lines_of(lines, filename=name, max_line_bytes=max_line_bytes):
            if type(item) is str:
                yield item
            else:
                bad.append(item)
                yield ""

    for found in read(text()):
        while bad:
            yield bad.pop(0)
        yield found
    yield from bad


def _read_text_facts(name, suffix, lines, terms, prefixes) -> Iterator[TimedFact | Rejected]:
    if suffix == ".stream":
        return read_atom_lines(lines, terms, prefixes=prefixes, filename=name)
    lines = iter(lines)
    head = []
    for line in lines:
        head.append(line)
        if line.strip() and line.strip()[0] not in "#%@":
            break
    rest = itertools.chain(head, lines)
    if head and _ATOM_LINE.match(head[-1]):
        return read_atom_lines(rest, terms, prefixes=prefixes, filename=name)
    return read_dataset(rest, terms, prefixes=prefixes, filename=name)


def read_atom_lines(
    lines: Iterable[str], terms: Dictionary, *, prefixes: dict[str, str] | None = None, filename: str = "<stream>"
) -> Iterator[TimedFact | Rejected]:
    """`TIMESTAMP atom` lines (`36 Pos(veh1)`), atoms written as in MeTeoR's datasets: punctual facts."""
    reader = _Reader(filename, terms)
    reader.prefixes = {**STANDARD_PREFIXES, **(prefixes or {})}
    for number, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        declared = _PREFIX.match(line)
        if declared:
            reader.prefixes[declared.group(1) or ""] = declared.group(2)
            continue
        s = Scanner(line, filename, number)
        try:
            point = s.match(_TIME_POINT)
            if point is None:
                s.error("expected 'TIMESTAMP atom', e.g. '36 Pos(veh1)'")
            if len(point.group(0).lstrip("-")) > 18:
                s.error(f"the time point {point.group(0)[:25]}... has more than 18 digits", point.start())
            atom = reader.atom(s, constants=True)
            s.take(".")
            if not s.at_end():
                s.error(f"unexpected text after the atom: {s.rest()!r}")
        except RuleSyntaxError as problem:
            yield Rejected(filename, number, problem.msg)
            continue
        t = int(point.group(0))
        yield TimedFact(t, t, (atom.predicate, atom.args), number, terms)


_TIME_POINT = re.compile(r"-?\d+(?=\s)")


#: `36 a(x1,y)`: a time point, a space, then an atom with no '@' after it
_ATOM_LINE = re.compile(r"\s*-?\d+\s+[^@\s][^@]*\Z")


def _punctual(elements) -> Iterator[TimedFact | Rejected]:
    for element in elements:
        if isinstance(element, Rejected):
            yield element
        else:
            yield TimedFact(element.time_point, element.time_point, element.fact, element.line, element.terms)


def with_arities(items: Iterable[TimedFact | Rejected], arities: dict[int, set[int]], terms: Dictionary,
                 filename: str = "<stream>") -> Iterator[TimedFact | Rejected]:
    """Set aside facts whose predicate the program uses with another number of arguments."""
    for item in items:
        if isinstance(item, TimedFact):
            predicate, args = item.fact
            used = arities.get(predicate)
            if used is not None and len(args) not in used:
                wanted = " or ".join(str(n) for n in sorted(used))
                yield Rejected(filename, item.line, f"{terms.key(predicate)} has {wanted} argument"
                                                    f"{'s' if wanted != '1' else ''} in the program, "
                                                    f"{len(args)} here; set aside")
                continue
        yield item


def fact_timeline(
    items: Iterable[TimedFact | Rejected],
    *,
    first: int | None = None,
    last: int | None = None,
    on_rejected: Callable[[Rejected], None] = lambda rejected: None,
    filename: str = "<stream>",
    max_gap: int | None = limits.MAX_GAP_TIME_POINTS,
) -> Iterator[tuple[int, list[Fact]]]:
    """(time point, the facts that hold at it) for every time point of the timeline, in order.

    The timeline runs from `first` (default: the first fact's first point) to
    `last` (default: the last point any fact covers). A fact over an interval
    is given again at each of its time points. A fact that starts, or whose
    interval ends, more than `max_gap` time points ahead of the stream is set
    aside (`rsp_plugin.core.limits`; the rules: `rsp_plugin.core.admission`): the timeline never
    walks a stretch no one asked for.

    >>> items = [TimedFact(1, 3, "a", 1), TimedFact(2, 2, "b", 2), TimedFact(1, 1, "c", 3)]
    >>> rejected = []
    >>> list(fact_timeline(items, on_rejected=rejected.append))
    [(1, ['a']), (2, ['a', 'b']), (3, ['a'])]
    >>> [str(r) for r in rejected]
    ['<stream>:3: starts at time point 1, before time point 2 read earlier; set aside (a stream is read in time order)']
    """
    timeline = FactTimeline(first=first, last=last, filename=filename, max_gap=max_gap)
    for item in items:
        yield from timeline.push(item, on_rejected)
        if timeline.cut:
            break
    yield from timeline.finish()


#: what `FactTimeline.admit` says of an item
TAKEN, SKIPPED, CUT = "taken", "skipped", "cut"


class FactTimeline:
    """`fact_timeline` an item at a time, for a caller that is handed the items (a Spark micro-batch
    driver): `push(item, on_rejected)` gives the time points the item completes, `finish()` the rest.
    `admit(item, on_rejected)` is its judgment alone (set aside, before `--from`, after `--to`, or
    taken), for a caller that only needs to know which items the timeline takes and where it ends
    (`span`). Everything it holds is state a checkpoint stores as it is (`runtime.state_schema`); where
    the lines set aside go is given with each call."""

    def __init__(self, *, first: int | None = None, last: int | None = None, filename: str = "<stream>",
                 max_gap: int | None = limits.MAX_GAP_TIME_POINTS):
        self.first, self.last, self.filename = first, last, filename
        self.gate = Gate(in_order=True, gap=Gap(max_gap) if max_gap is not None else None, start=first)
        self.current = first        # the next time point to give (None: no fact taken yet)
        self.active: list[TimedFact] = []
        self.end = last             # the last time point of the timeline, so far
        self.cut = False            # a fact after --to was read: the stream is done

    def admit(self, item, on_rejected: Callable[[Rejected], None]) -> str:
        """TAKEN, SKIPPED (set aside, and said so to `on_rejected`; or wholly before `--from`) or CUT
        (after `--to`: this item and those after it are not read). A taken item moves the timeline's
        start and end."""
        if self.cut:
            return CUT
        if isinstance(item, Rejected):
            on_rejected(item)
            return SKIPPED
        problem = self.gate.judge_interval(item.first, item.last)
        if problem is not None:
            on_rejected(Rejected(self.filename, item.line, problem))
            return SKIPPED
        if self.first is not None and item.last < self.first:
            return SKIPPED
        if self.last is not None and item.first > self.last:
            self.cut = True
            return CUT
        if self.current is None:
            self.current = item.first
        if self.last is None and (self.end is None or item.last > self.end):
            self.end = item.last
        return TAKEN

    def push(self, item, on_rejected: Callable[[Rejected], None]) -> Iterator[tuple[int, list[Fact]]]:
        """The time points before `item`'s first, now complete; the item joins those from its first on."""
        if self.admit(item, on_rejected) != TAKEN:
            return
        while self.current < item.first:
            yield from self._give()
        self.active.append(item)

    def finish(self) -> Iterator[tuple[int, list[Fact]]]:
        """The stream ended: the time points up to the timeline's end."""
        if self.current is None:
            if self.first is None or self.last is None:
                return
            self.current = self.first
        if self.end is None:
            self.end = self.current if self.last is None else self.last
        while self.current <= self.end:
            yield from self._give()

    def span(self) -> tuple[int, int] | None:
        """(first, last) time point of the timeline once every item was admitted; None: no time point."""
        if self.current is None:
            if self.first is None or self.last is None:
                return None
            return self.first, self.last
        return self.current, self.end if self.end is not None else self.current

    def _give(self):
        current = self.current
        yield current, [timed.fact for timed in self.active]
        self.current = current + 1
        self.active = [timed for timed in self.active if timed.last > current]
