"""The oracle: DatalogMTL over the integer timeline, straight from the definitions, slow on purpose.

Walega et al., Table 1, read on the integer timeline, at time point t:

    Diamondminus_rho M     M at some t' with t - t' in rho
    Boxminus_rho M         M at every t' with t - t' in rho
    M1 Since_rho M2        M2 at some t' with t - t' in rho, and M1 at every t'' with t' < t'' < t
    Boxplus_rho H (head)   H at every t' with t' - t in rho

Intervals are tested as written (rational endpoints, open or closed), for
each integer distance: the compilation onto the engine (`lower.py`) turns
them into integer bounds, this does not. Nothing holds before the first time
point of the timeline. Because the program is forward-propagating, the least
model is found time point by time point: at t, apply every rule whose body
holds at t until nothing changes (a Boxplus head also fills later time
points), then move on. No normal form, no annotations, no indexes: the only
thing it shares with the engine is the program model and `builtins.py`.
"""

from __future__ import annotations

from math import ceil
from typing import Iterable

from ..lars.builtins import bind_comparison, bound_value
from ..lars.metric_rules import (
    BOXMINUS,
    DIAMONDMINUS,
    SINCE,
    Binary,
    Interval,
    MetricRule,
    Temporal,
    Written,
)
from ..lars.program import Comparison, Var

Fact = tuple[int, tuple[int, ...]]
NO_END = 1 << 62


class ReferenceEvaluator:
    """`advance_to(t, facts)` evaluates every time point up to t; the facts hold at t."""

    def __init__(self, program, *, start: int | None = None, horizon: int | None = None):
        self.program = program
        self.rules: list[MetricRule] = list(program.rules)
        self.terms = program.terms
        self.start = start
        #: the last time point anyone will ask about (Boxplus heads fill the future up to it)
        self.horizon = horizon
        self.now: int | None = None
        self.t0: int | None = None
        #: I(t): every atom that holds at t (data and derived)
        self.holds: dict[int, set[Fact]] = {}
        self._seen: dict = {}

    def facts_at(self, t: int) -> set[Fact]:
        return self.holds.get(t, set())

    def add_data(self, t: int, facts: Iterable[Fact]) -> None:
        """Data over time points not yet evaluated (an interval fact is given at each of its points)."""
        self.holds.setdefault(t, set()).update(facts)

    def advance_to(self, time_point: int, arrivals: Iterable[Fact] = ()) -> set[Fact]:
        if self.now is None:
            self.t0 = self.start if self.start is not None else time_point
            self.now = self.t0 - 1
        self.add_data(time_point, arrivals)
        while self.now < time_point:
            self.now += 1
            self._evaluate(self.now)
        return set(self.facts_at(time_point))

    def _evaluate(self, t: int) -> None:
        self.holds.setdefault(t, set())
        while True:
            self._seen = {}  # what a formula is at a time point, for this round only
            derived = []
            for rule in self.rules:
                for binding in self._body(list(rule.body), {}, t):
                    fact = (rule.head.predicate, tuple(self._value(a, binding) for a in rule.head.args))
                    derived.extend((point, fact) for point in self._placements(rule, t))
            new = False
            for point, fact in derived:
                slot = self.holds.setdefault(point, set())
                if fact not in slot:
                    slot.add(fact)
                    new = new or point == t
            if not new:
                return

    def _placements(self, rule: MetricRule, t: int) -> list[int]:
        """The time points a head puts its atom at, when its body holds at t (Boxplus / punctual Diamondplus)."""
        points = [t]
        for operator in rule.head_operators:
            points = sorted({p + d for p in points for d in self._distances(operator.interval, t, forward=True)})
        if self.horizon is not None:
            points = [p for p in points if p <= self.horizon]
        return points

    def _distances(self, interval: Interval, t: int, forward: bool = False) -> list[int]:
        """The integer distances in `interval` that stay within the timeline (forward: up to `horizon`)."""
        first = ceil(interval.low)
        if forward:
            if self.horizon is None and interval.high is None:
                raise ValueError("an unbounded Boxplus head needs the evaluator's horizon")
            last = NO_END if self.horizon is None else self.horizon - t
        else:
            last = t - self.t0
        if interval.high is not None:
            last = min(last, int(interval.high) + 1)
        return [d for d in range(first, last + 1) if interval.contains(d)]

    # bodies -------------------------------------------------------------------------------

    def _body(self, literals: list, binding: dict, t: int):
        if not literals:
            yield binding
            return
        literal = self._next(literals, binding)
        rest = [other for other in literals if other is not literal]
        if isinstance(literal, Comparison):
            extended = self._comparison(literal, binding)
            if extended is not None:
                yield from self._body(rest, extended, t)
            return
        for found in self._sat(literal, t):
            merged = _merge(binding, found)
            if merged is not None:
                yield from self._body(rest, merged, t)

    @staticmethod
    def _next(literals: list, binding: dict):
        for literal in literals:
            if not isinstance(literal, Comparison):
                return literal
        for literal in literals:
            free = literal.variables() - binding.keys()
            if not free or (literal.op == "=" and len(free) == 1):
                return literal
        raise AssertionError("check.py lets no unsafe comparison through")

    def _sat(self, formula, t: int) -> list[dict]:
        """The bindings of `formula`'s variables under which it holds at t (Since may leave its left operand's
        variables unbound: with nothing strictly between, it says nothing about them)."""
        if t < self.t0:
            return []
        key = (id(formula), t)
        found = self._seen.get(key)
        if found is None:
            found = self._seen[key] = self._satisfy(formula, t)
        return found

    def _satisfy(self, formula, t: int) -> list[dict]:
        if isinstance(formula, Written):
            found = []
            atom = formula.atom
            for predicate, args in self.holds.get(t, ()):
                if predicate == atom.predicate and len(args) == len(atom.args):
                    binding = _match(atom.args, args)
                    if binding is not None:
                        found.append(binding)
            return found
        if isinstance(formula, Temporal):
            distances = self._distances(formula.interval, t)
            if formula.operator == DIAMONDMINUS:
                found = []
                for d in distances:
                    found.extend(self._sat(formula.operand, t - d))
                return _unique(found)
            if formula.operator == BOXMINUS:
                wanted = [d for d in range(ceil(formula.interval.low), int(formula.interval.high) + 1)
                          if formula.interval.contains(d)]
                common = None
                for d in wanted:
                    here = {_frozen(b) for b in self._sat(formula.operand, t - d)}
                    common = here if common is None else common & here
                    if not common:
                        return []
                return [dict(b) for b in common] if common is not None else [{}]
        if isinstance(formula, Binary) and formula.operator == SINCE:
            found = []
            for d in self._distances(formula.interval, t):
                witnesses = self._sat(formula.right, t - d)
                if not witnesses:
                    continue
                if d <= 1:
                    found.extend(witnesses)
                    continue
                between = None
                for u in range(t - d + 1, t):
                    here = {_frozen(b) for b in self._sat(formula.left, u)}
                    between = here if between is None else between & here
                    if not between:
                        break
                for left in between or ():
                    for right in witnesses:
                        merged = _merge(dict(left), right)
                        if merged is not None:
                            found.append(merged)
            return _unique(found)
        raise AssertionError(f"not a past formula: {formula!r}")

    # comparisons ------------------------------------------------------------------------

    def _comparison(self, literal: Comparison, binding: dict) -> dict | None:
        return bind_comparison(literal, binding, self.terms)

    def _value(self, expression, binding: dict):
        return bound_value(expression, binding, self.terms)


def _match(pattern: tuple, args: tuple) -> dict | None:
    binding: dict = {}
    for term, value in zip(pattern, args):
        if isinstance(term, Var):
            known = binding.get(term)
            if known is None:
                binding[term] = value
            elif known != value:
                return None
        elif term != value:
            return None
    return binding


def _merge(a: dict, b: dict) -> dict | None:
    merged = dict(a)
    for key, value in b.items():
        known = merged.get(key)
        if known is None:
            merged[key] = value
        elif known != value:
            return None
    return merged


def _frozen(binding: dict) -> frozenset:
    return frozenset(binding.items())


def _unique(bindings: list[dict]) -> list[dict]:
    seen = {}
    for binding in bindings:
        seen.setdefault(_frozen(binding), binding)
    return list(seen.values())
