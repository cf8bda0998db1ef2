"""Windows as queries read them: the stream's triples, plus what ENTAILMENT and RULES add.

    PlainView          the window's content (`windows.py`)
    MaterializedView   the window's RDFS / OWL 2 RL materialization with the background
                       (maintained by templates per triple shape, `rsp_plugin.reasoning.shapes`, or with
                       RULES or explanations by `rsp_plugin.reasoning.Materializer`; never recomputed),
                       and the triples a query's RULES program derives (with or without ENTAILMENT)
    RulesView          + the triples a LARS program derives at each time point alone (a RULES
                       program under answer-stream semantics)

Mapping time onto the Materializer: a window [RANGE r STEP s] with t0 is read at
boundaries tau = t0 + k*s, and holds an element seen at t when t < tau <= t + r.
With one tick g = gcd(r, s) (or a RULES program's, below), time point p stands for tau = t0 + p*g; an element
seen at t arrives at time point floor((t - t0) / g) + 1 and holds for r/g - 1
more points: exactly the boundaries that hold it. A count window [TRIPLES n]
counts elements instead: element number i arrives at point i, holds n - 1 more.

A query's RULES program reads the window's triples as ENTAILMENT does: a
window triple holds while it is in the window, and a triple the rules derive
holds as long as the premises it was derived from (its expiration is the least
of theirs, Barbieri's rule), so `?s a ex:Hot :- ?s ex:temp ?v, ?v > 30` keeps
?s a Hot in every report whose window holds the temperature. A program whose
rules read time (windows, BOX, DIAMOND, @) counts it in ticks of one STEP unless
it says `@tick`; the tick must divide the window's RANGE and STEP (so that each
triple's life in ticks is its life in the window, and reports fall on ticks).
A program that reads no time needs no tick: the view uses gcd(RANGE, STEP).
Under answer-stream semantics (`RulesView`) the rules hold at each time point
alone: an element seen at t is at time point floor((t - t0) / tick), and the
window of boundary tau sees what holds at the last point before tau.
"""

from __future__ import annotations

from itertools import chain
from math import gcd
from typing import Iterable

from ..core.terms import NUMERIC_START, TRIPLE, Dictionary
from ..core.xsd import number_key, rank_of_value
from .content import Triple, TripleIndex, union
from .windows import CountingWindow, TimeWindow


class PlainView:
    """The window itself."""

    def __init__(self, window: TimeWindow | CountingWindow):
        self.window = window

    @property
    def content(self):
        return self.window.content

    def accepts(self, timestamp: int) -> bool:
        return self.window.accepts(timestamp)

    def offer(self, timestamp: int, triple: Triple) -> None:
        self.window.offer(timestamp, triple)

    def advance(self, tau: int) -> None:
        self.window.advance(tau)

    def live_terms(self):
        return self.window.live_terms()


class _DerivedContent(TripleIndex):
    """Triples that hold by reasoning; their timestamps are the window's (None when entailed)."""

    __slots__ = ("window_content",)

    def __init__(self, window_content):
        super().__init__()
        self.window_content = window_content

    def timestamp(self, triple: Triple) -> int | None:
        return self.window_content.timestamp(triple)


class MaterializedView:
    """The window's materialization under an entailment profile, with the background (and rules)."""

    def __init__(self, window: TimeWindow | CountingWindow, profile: str | None, *, terms: Dictionary,
                 background: Iterable[Triple] = (), rules=None, explain: bool = False,
                 where: tuple[str, int, int] = ("<query>", 1, 1)):
        # the reasoning layer (another module of the project)
        from ..reasoning import Materializer
        from ..reasoning.shapes import ShapeMaterializer, supports

        self.window = window
        if isinstance(window, TimeWindow):
            spec = window.spec
            self.tick = rules_tick(rules, spec, where)
            horizon = spec.range // self.tick - 1
        else:
            self.tick = None
            horizon = window.spec.size - 1
        if supports(profile, rules, explain=explain):  # a template per triple shape (reasoning/shapes.py)
            self.materializer = ShapeMaterializer(profile, window=horizon, background=list(background), terms=terms,
                                                  track=True)
        else:  # the reference: a user's rules, explanations
            self.materializer = Materializer(
                profile, window=horizon, background=list(background), terms=terms, rules=rules, explain=explain
            )
        self.content = _DerivedContent(window.content)
        self.now: int | None = None
        self.inconsistencies: list = []
        #: a rule's number in a triple (`?s ex:limit 30`, `?f = 5`) as the RDF literal it stands for
        self._as_rdf = _RuleNumbers(terms, self.materializer) if rules is not None else None
        self._apply(self.materializer.holding(), ())

    def accepts(self, timestamp: int) -> bool:
        return _still_open(self.window, timestamp)

    def offer(self, timestamp: int, triple: Triple) -> None:
        entered = self.window.offer(timestamp, triple)
        if entered:
            first = self.window.committed - len(entered) + 1
            for number, (_, element) in enumerate(entered, first):
                self._advance(number, [element])

    def advance(self, tau: int) -> None:
        moved = _moved(self.window, tau, self.tick, shift=1)  # a triple holds from the tick after it
        if moved is None:
            return
        by_point, boundary = moved
        for point in sorted(by_point):
            self._advance(point, by_point[point])
        self._advance((boundary - self.window.t0) // self.tick, [])

    def start_at(self, time_ms: int) -> None:
        """Start the materialization's timeline at the first time point whose elements are all seen at or
        after `time_ms`, the points before it never evaluated (an engine fed a stream from `time_ms` on:
        Spark's time slices). Its timeline otherwise starts at its first triple's point, and a BOX window
        is clipped at a timeline's start: after a gap in the stream, the whole run's BOX sees the empty
        points of the gap where one started at its first triple would see nothing to clip.
        Called before anything is advanced."""
        engine = getattr(self.materializer, "engine", None)
        if self.tick is None or engine is None or engine.now is not None:
            return
        point = -((self.window.t0 - time_ms) // self.tick) + 1  # ceil((time_ms - t0) / tick) + 1
        engine.start = point
        self.now = point - 1  # (a boundary before it is not evaluated: nothing reads those points)

    def _advance(self, point: int, triples: list[Triple]) -> None:
        if self.now is not None and point <= self.now:
            if not triples:
                return
            point = self.now  # pragma: no cover - accepts() keeps arrivals after the last boundary
        report = self.materializer.advance_to(point, triples)
        self.now = point
        self._apply(report.added, report.removed)
        if report.inconsistencies:
            self.inconsistencies.extend(report.inconsistencies)

    def live_terms(self):
        """Window, materialization, entailed content, inconsistencies found (ids a dictionary keeps)."""
        found = [triple for event in self.inconsistencies for triple in event.triples]
        return chain(self.window.live_terms(), self.materializer.live_terms(), self.content.live_terms(),
                     chain.from_iterable(found), self._as_rdf.live_terms() if self._as_rdf is not None else ())

    def _apply(self, added, removed) -> None:
        content = self.content
        if self._as_rdf is not None:
            removed = self._as_rdf.leaving(removed)
            added = self._as_rdf.coming(added)
        for triple in removed:
            content.discard(tuple(triple))
        for triple in added:
            content.add(tuple(triple))


class _RuleNumbers:
    """Triples a LARS program derives may hold numbers of the rule language (`30`, `2.5`, or
    `?f = 5`); a query reads RDF, where each is the literal Turtle reads it as, in its canonical
    form (`xsdnumbers`). The view keeps the triples so rewritten, counted: two derived triples
    may stand for one RDF triple, and so may the materialization's own (`holds`)."""

    def __init__(self, terms: Dictionary, materializer):
        self.terms = terms
        #: what the materialization holds as written (a number-free triple may be there too)
        self.materializer = materializer
        self.held: dict[tuple, int] = {}

    def _rdf(self, triple) -> tuple | None:
        """The triple with its numbers as RDF literals (None: it has none)."""
        keys = self.terms.keys
        if not any(keys[term][0] in NUMERIC_START and keys[term][0] != '"' for term in triple):
            return None
        numbers = self.terms.numbers
        out = []
        for term in triple:
            value = numbers[term] if keys[term][0] != '"' else None
            out.append(term if value is None or isinstance(value, bool)
                       else self.terms.intern(number_key(value, rank_of_value(value))))
        return tuple(out)

    def coming(self, triples) -> list:
        out = []
        for triple in triples:
            rdf = self._rdf(triple)
            if rdf is None:
                out.append(triple)
                continue
            count = self.held.get(rdf, 0)
            self.held[rdf] = count + 1
            if not count:
                out.append(rdf)
        return out

    def leaving(self, triples) -> list:
        out = []
        for triple in triples:
            rdf = self._rdf(triple)
            if rdf is None:
                if not self.held.get(tuple(triple)):  # (a rule's number may still stand for it)
                    out.append(triple)
                continue
            count = self.held.get(rdf, 0)
            if count <= 1:
                self.held.pop(rdf, None)
                if self.materializer.expires(rdf) is None:  # (the materialization may hold it as written)
                    out.append(rdf)
            else:
                self.held[rdf] = count - 1
        return out

    def live_terms(self):
        return chain.from_iterable(self.held)


class RulesView:
    """The window plus the triples a LARS program derives over the window's stream."""

    def __init__(self, window: TimeWindow | CountingWindow, program, semantics: str = "stream",
                 explain: bool = False):
        from ..lars.engine import IncrementalEngine

        self.window = window
        self.program = program
        if semantics == "answer-stream":  # the first answer at each time point (rsp_plugin.asp)
            from ..asp.engine import answer_stream_engine

            self.engine = answer_stream_engine(program, explain=explain)
        else:
            self.engine = IncrementalEngine(program, explain=explain)
        if program.tick_ms is not None:
            self.tick = program.tick_ms
        elif isinstance(window, TimeWindow):
            self.tick = window.spec.step
        else:
            self.tick = None  # count windows: one time point per element
        self.triple = program.terms.intern(TRIPLE)
        self.derived = TripleIndex()
        self.content = union([window.content, self.derived])
        self.now: int | None = None
        self._elements = 0

    def accepts(self, timestamp: int) -> bool:
        return _still_open(self.window, timestamp)

    def offer(self, timestamp: int, triple: Triple) -> None:
        entered = self.window.offer(timestamp, triple)
        if isinstance(self.window, CountingWindow):
            for _, element in entered:
                self._elements += 1
                self._step(self._elements, [element])

    def advance(self, tau: int) -> None:
        moved = _moved(self.window, tau, self.tick, shift=0)
        if moved is None:
            return
        by_point, boundary = moved
        last = (boundary - self.window.t0 - 1) // self.tick
        for point in sorted(by_point):
            if point <= last:
                self._step(point, by_point[point])
        self._step(last, [])

    def live_terms(self):
        return chain(self.window.live_terms(), self.engine.live_terms(), self.derived.live_terms())

    def _step(self, point: int, triples: list[Triple]) -> None:
        if self.now is not None and point <= self.now:
            if not triples:
                return
            point = self.now + 1
        report = self.engine.advance_to(point, [(self.triple, tuple(t)) for t in triples])
        self.now = point
        derived, triple = self.derived, self.triple
        for predicate, args in report.stopped:
            if predicate == triple and len(args) == 3:
                derived.discard(tuple(args))
        for predicate, args in report.started:
            if predicate == triple and len(args) == 3:
                derived.add(tuple(args))


def rules_tick(rules, spec, where: tuple[str, int, int]) -> int:
    """The time point of a materialized time window, in ms: gcd(RANGE, STEP), or for a RULES
    program that reads time its own tick (`@tick`, else the STEP), which must divide both."""
    fine = gcd(spec.range, spec.step)
    if rules is None or not hasattr(rules, "rules") or not reads_time(rules):
        return fine
    tick = rules.tick_ms if rules.tick_ms is not None else spec.step
    if spec.range % tick or spec.step % tick:
        from ..core.errors import QuerySyntaxError

        said = f"@tick {tick} ms" if rules.tick_ms is not None else f"one STEP ({tick} ms; @tick sets another)"
        raise QuerySyntaxError(
            f"the RULES program counts time in ticks of {said}, and the window's RANGE {spec.range} ms and STEP "
            f"{spec.step} ms are not whole numbers of ticks: set @tick {fine}ms in the program, or make them "
            f"multiples of its tick", *where)
    return tick


def reads_time(program) -> bool:
    """Does a program's meaning depend on how long a tick is (windows, BOX, DIAMOND, @)?"""
    from ..lars.program import PLAIN, ExtendedAtom

    for rule in program.rules:
        if rule.head_time is not None:
            return True
        for literal in rule.body:
            if isinstance(literal, ExtendedAtom) and (literal.window is not None or literal.modality != PLAIN):
                return True
    return False


def _moved(window, tau: int, tick: int, shift: int) -> tuple[dict[int, list], int] | None:
    """A time window moved to `tau`: what entered it by time point (timestamp // tick + shift)
    and its new boundary; None for a count window, or when its boundary stayed."""
    if not isinstance(window, TimeWindow):
        return None
    before = window.boundary
    entered = window.advance(tau)
    if window.boundary == before:
        return None
    by_point: dict[int, list] = {}
    for timestamp, triple in entered:
        by_point.setdefault((timestamp - window.t0) // tick + shift, []).append(triple)
    return by_point, window.boundary


def _still_open(window, timestamp: int) -> bool:
    """Can an element with this timestamp still enter the window (not before its last boundary)?"""
    if isinstance(window, CountingWindow):
        return True
    boundary = window.boundary
    return timestamp >= window.t0 and (boundary is None or timestamp >= boundary)


__all__ = ["PlainView", "MaterializedView", "RulesView"]
