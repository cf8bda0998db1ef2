"""The reference for answer streams without a solver: guess, then check the definition.

At time point t (the LARS papers' Def. 5): an interpretation stream I = D ∪ M adds to
the data D a set M of derived atoms (each at a time point of [t0, t]); I is an answer
stream if it is a minimal model of the reduct P^{I,t}, the rules whose body holds in I
at t. This module tries every M over a small set of candidates and checks exactly that:

1. I is a model: every rule whose body holds in I at t has its head in I;
2. I is minimal: J, grown from D by the rules of the reduct whose body holds in J, ends
   at I. (Every extended atom is monotone in the stream, and `not` of it antimonotone,
   so a rule of the reduct, whose `not`s hold in I, has them hold in every J ⊆ I: the
   J so grown is the least model of the reduct below I, and I is minimal iff it is J.)

Candidates: the heads of rules applied over D and the candidates themselves with every
`not` assumed true, to a fixpoint (no answer stream holds an atom outside them). The
output of an answer stream is the atoms placed at t by rules of its reduct, as on the
other paths. Bodies are evaluated by the naive reference's reading of windows
(`lars/reference.py`); nothing is shared with the grounder or the solver.

>>> from rsp_plugin.lars.syntax import parse_program
>>> from rsp_plugin.io.formats import format_fact
>>> program = parse_program("a :- not b .  b :- not a .  c :- a .", semantics="answer-stream")
>>> models = GuessAndCheck(program).advance_to(0)
>>> sorted(sorted(format_fact(f, program.terms) for f in m) for m in models)
[['a', 'c'], ['b']]
"""

from __future__ import annotations

from typing import Iterable

from ..lars.program import ExtendedAtom, Program
from ..lars.reference import ReferenceEvaluator

Fact = tuple[int, tuple[int, ...]]


class _Bodies(ReferenceEvaluator):
    """The reference's reading of bodies over a stream given here (any program)."""

    def __init__(self, program: Program):  # noqa: D107 - nothing of the evaluator's loop is used
        self.program = program
        self.terms = program.terms
        self.t0 = 0
        self.stream: dict[int, set[Fact]] = {}
        self.arrivals: list[tuple[int, Fact]] = []


class GuessAndCheck:
    """All answer streams of a program at each time point, by trying every candidate set."""

    def __init__(self, program: Program, *, start: int | None = None, max_candidates: int = 14):
        self.program = program
        self.terms = program.terms
        self.start = start
        self.max_candidates = max_candidates
        self.bodies = _Bodies(program)
        self.data: dict[int, set[Fact]] = {}
        self.now: int | None = None

    def advance_to(self, time_point: int, arrivals: Iterable[Fact] = ()) -> set[frozenset[Fact]]:
        """Evaluate every time point up to `time_point`; the outputs of its answer streams."""
        if self.now is None:
            self.bodies.t0 = self.start if self.start is not None else time_point
            self.now = self.bodies.t0 - 1
        found: set[frozenset[Fact]] = set()
        while self.now < time_point:
            self.now += 1
            here = self.data.setdefault(self.now, set())
            for fact in arrivals if self.now == time_point else ():
                if fact not in here:
                    here.add(fact)
                    self.bodies.arrivals.append((self.now, fact))
            found = self._answers(self.now)
        return found

    # one time point ---------------------------------------------------------------------

    def _answers(self, t: int) -> set[frozenset[Fact]]:
        candidates = sorted(self._candidates(t), key=repr)
        if len(candidates) > self.max_candidates:
            raise ValueError(f"{len(candidates)} candidate atoms at time point {t}: more than the "
                             f"guess-and-check reference tries ({self.max_candidates})")
        found = set()
        for mask in range(1 << len(candidates)):
            guess = [candidates[i] for i in range(len(candidates)) if mask >> i & 1]
            output = self._check(guess, t)
            if output is not None:
                found.add(output)
        return found

    def _candidates(self, t: int) -> set[tuple[int, Fact]]:
        candidates: set[tuple[int, Fact]] = set()
        while True:
            self._use(candidates)
            new = set()
            for rule in self.program.rules:
                body = [b for b in rule.body if not (isinstance(b, ExtendedAtom) and b.negated)]
                for binding in self.bodies._satisfy(body, {}, t):
                    placed = self._head(rule, binding, t)
                    if placed is not None and placed[1] not in self.data.get(placed[0], ()):
                        new.add(placed)
            if new <= candidates:
                return candidates
            candidates |= new

    def _check(self, guess: list[tuple[int, Fact]], t: int) -> frozenset[Fact] | None:
        """The output at t if data + guess is an answer stream, else None."""
        guessed = set(guess)
        self._use(guessed)
        reduct = []  # (rule, binding, head) whose body holds in I
        for rule in self.program.rules:
            for binding in self.bodies._satisfy(list(rule.body), {}, t):
                placed = self._head(rule, binding, t)
                if placed is None:
                    continue
                if placed not in guessed and placed[1] not in self.data.get(placed[0], ()):
                    return None  # not a model: a rule whose body holds lacks its head
                reduct.append((rule, binding, placed))
        grown: set[tuple[int, Fact]] = set()
        changed = True
        while changed:
            changed = False
            self._use(grown)
            for rule, binding, placed in reduct:
                if placed not in grown and placed in guessed and any(
                        True for _ in self.bodies._satisfy(list(rule.body), binding, t)):
                    grown.add(placed)
                    changed = True
        if grown != guessed:
            return None  # not minimal: a smaller model of the reduct exists
        return frozenset(fact for _, _, (point, fact) in reduct if point == t)

    def _use(self, derived: set[tuple[int, Fact]]) -> None:
        """Let the bodies read the data plus `derived`."""
        stream = {u: set(facts) for u, facts in self.data.items()}
        for point, fact in derived:
            stream.setdefault(point, set()).add(fact)
        self.bodies.stream = stream

    def _head(self, rule, binding: dict, t: int) -> tuple[int, Fact] | None:
        point = t
        if rule.head_time is not None:
            point = self.terms.number(self.bodies._value(rule.head_time, binding))
            if type(point) is not int or not (self.bodies.t0 <= point <= t):
                return None  # an @U head only places atoms on the timeline so far
        args = tuple(self.bodies._value(a, binding) for a in rule.head.args)
        return point, (rule.head.predicate, args)
