"""The oracle: LARS evaluated straight from its definitions, slow on purpose.

At each time point t of the timeline, in order, the least model of the rules
applied at t over the data and everything derived so far (DESIGN.md, "Time"):
every rule's body is checked against the stream as it stands, window by window
and time point by time point, and its head is added (at t, or at T for an `@T`
head) until nothing changes; strata go bottom-up so that `not` reads a finished
lower stratum. No annotations, no indexes, no incremental tricks: the only
thing it shares with the engine is the program model and the meaning of
comparisons and arithmetic (`builtins.py`).

The output at t is the set of atoms derived by rules that hold at t.

With `semantics="answer-stream"` (the LARS papers' Def. 5) each time point stands
alone: the rules are applied at t over the data only, and what an evaluation
derives (at t, or at T by an `@T` head) is gone at the next one. For stratified
programs; `rsp_plugin.asp.check` is the reference for the others.
"""

from __future__ import annotations

from typing import Iterable, Iterator

from .builtins import bind_comparison, bound_value
from .limits import DEFAULT_MAX_DERIVATIONS, too_many_derivations
from .program import (
    AT,
    BOX,
    COUNT,
    DIAMOND,
    PLAIN,
    Atom,
    Comparison,
    ExtendedAtom,
    Program,
    Var,
)

Fact = tuple[int, tuple[int, ...]]


class ReferenceEvaluator:
    def __init__(self, program: Program, *, start: int | None = None,
                 max_derivations: int = DEFAULT_MAX_DERIVATIONS, semantics: str = "stream"):
        if semantics not in ("stream", "answer-stream"):
            raise ValueError(f"unknown semantics {semantics!r}")
        if not program.stratified:
            raise ValueError("a loop through `not`: the naive reference evaluates stratified programs; "
                             "see rsp_plugin.asp.check for the others")
        self.program = program
        self.semantics = semantics
        #: the data alone, at each time point (answer-stream semantics starts from it at every t)
        self.data: dict[int, set[Fact]] = {}
        self.max_derivations = max_derivations
        self.terms = program.terms
        self.start = start
        self.t0: int | None = None
        self.now: int | None = None
        #: v(t): data and derived atoms at each time point
        self.stream: dict[int, set[Fact]] = {}
        self.derived: dict[int, set[Fact]] = {}
        #: data atoms in arrival order (one entry per atom and time point)
        self.arrivals: list[tuple[int, Fact]] = []

    def advance_to(self, time_point: int, arrivals: Iterable[Fact] = ()) -> set[Fact]:
        """Evaluate every time point up to `time_point`; the output at `time_point`."""
        if self.now is None:
            self.t0 = self.start if self.start is not None else time_point
            self.now = self.t0 - 1
        while self.now < time_point:
            self.now += 1
            self._evaluate(self.now, arrivals if self.now == time_point else ())
        return set(self.derived.get(time_point, set()))

    def _evaluate(self, t: int, arrivals: Iterable[Fact]) -> None:
        data = self.data.setdefault(t, set())
        for fact in arrivals:
            if fact not in data:
                self.arrivals.append((t, fact))
                data.add(fact)
        if self.semantics == "answer-stream":  # Def. 5: nothing derived earlier is carried over
            self.stream = {u: set(facts) for u, facts in self.data.items()}
            self.derived = {}
        else:
            self.stream.setdefault(t, set()).update(data)  # nothing is derived at t before t
        made = 0
        for stratum in self.program.strata or [self.program.rules]:
            while True:
                derived = []
                for rule in stratum:
                    for binding in self._satisfy(list(rule.body), {}, t):
                        point = t if rule.head_time is None else self.terms.number(self._value(rule.head_time, binding))
                        if type(point) is not int or not (self.t0 <= point <= t):
                            continue
                        args = tuple(self._value(a, binding) for a in rule.head.args)
                        derived.append((point, (rule.head.predicate, args), rule))
                new = False
                for point, fact, rule in derived:
                    if fact not in self.derived.setdefault(point, set()):
                        self.derived[point].add(fact)
                        self.stream.setdefault(point, set()).add(fact)
                        new = True
                        made += 1
                        if made > self.max_derivations:
                            raise too_many_derivations(rule, self.max_derivations, t)
                if not new:
                    break

    # bodies ------------------------------------------------------------------------

    def _satisfy(self, literals: list, binding: dict, t: int) -> Iterator[dict]:
        """All extensions of `binding` under which every literal holds at t."""
        if not literals:
            yield binding
            return
        literal = self._next(literals, binding)
        rest = [other for other in literals if other is not literal]
        if isinstance(literal, Comparison):
            extended = self._comparison(literal, binding)
            if extended is not None:
                yield from self._satisfy(rest, extended, t)
        elif literal.negated:
            if not any(True for _ in self._groundings(literal, binding, t)):
                yield from self._satisfy(rest, binding, t)
        else:
            for extended in self._groundings(literal, binding, t):
                yield from self._satisfy(rest, extended, t)

    @staticmethod
    def _next(literals: list, binding: dict):
        """Positive atoms first (as written); then what is fully bound; `X = e` binds X."""
        for literal in literals:
            if isinstance(literal, ExtendedAtom) and not literal.negated:
                return literal
        for literal in literals:
            free = literal.variables() - binding.keys()
            if not free:
                return literal
            if isinstance(literal, Comparison) and literal.op == "=" and len(free) == 1:
                (variable,) = free
                if variable in (literal.left, literal.right):
                    return literal
        raise AssertionError("the program's safety check lets no such rule through")

    def _comparison(self, literal: Comparison, binding: dict) -> dict | None:
        return bind_comparison(literal, binding, self.terms)

    def _value(self, expression, binding: dict):
        return bound_value(expression, binding, self.terms)

    # extended atoms -------------------------------------------------------------------

    def _window(self, literal: ExtendedAtom, t: int) -> tuple[list[int], dict[int, set[Fact]]]:
        """The time points of the window at t, and what the window shows at each."""
        window = literal.window
        if window is None:
            points = list(range(self.t0, t + 1)) if literal.modality == AT else [t]
            return points, self.stream
        if window.kind == COUNT:
            past = [(u, fact) for u, fact in self.arrivals if u <= t]
            kept = past[-window.size :]
            first = kept[0][0] if len(past) >= window.size else self.t0
            shown: dict[int, set[Fact]] = {}
            for u, fact in kept:
                shown.setdefault(u, set()).add(fact)
            return list(range(first, t + 1)), shown
        return list(range(max(self.t0, t - window.size), t + 1)), self.stream

    def _groundings(self, literal: ExtendedAtom, binding: dict, t: int) -> Iterator[dict]:
        points, shown = self._window(literal, t)
        atom = literal.atom
        if literal.modality == PLAIN or literal.modality == DIAMOND:
            seen = set()
            for u in points:
                for fact in shown.get(u, ()):
                    if fact in seen:
                        continue
                    seen.add(fact)
                    extended = _unify(atom, fact, binding)
                    if extended is not None:
                        yield extended
        elif literal.modality == BOX:
            for fact in shown.get(t, ()):
                extended = _unify(atom, fact, binding)
                if extended is not None and all(fact in shown.get(u, ()) for u in points):
                    yield extended
        elif literal.modality == AT:
            for u in points:
                time = self.terms.intern_int(u)
                if isinstance(literal.time, Var):
                    bound = binding.get(literal.time)
                    if bound is not None and bound != time:
                        continue
                elif literal.time != time:
                    continue
                for fact in shown.get(u, ()):
                    extended = _unify(atom, fact, binding)
                    if extended is not None:
                        if isinstance(literal.time, Var):
                            extended = {**extended, literal.time: time}
                        yield extended


def _unify(atom: Atom, fact: Fact, binding: dict) -> dict | None:
    predicate, args = fact
    if predicate != atom.predicate or len(args) != len(atom.args):
        return None
    extended = binding
    for pattern, value in zip(atom.args, args):
        if isinstance(pattern, Var):
            bound = extended.get(pattern)
            if bound is None:
                if extended is binding:
                    extended = dict(binding)
                extended[pattern] = value
            elif bound != value:
                return None
        elif pattern != value:
            return None
    return extended
