"""clingo on a ground program: the answer sets at t, projected on what the output shows.

One `clingo.Control` per time point (Ticker's one-shot mode): the program is handed
over through clingo's backend as numbered atoms and rules, nothing is parsed. Two
answer sets that differ only in atoms the output does not show (an atom placed at an
earlier time point, a window's own atom) are one answer here: clingo projects them.
A time point that takes longer than `timeout` seconds is given up (`SolverTimeout`).

The order of answers (`engine.py`): atoms sorted within an answer, answers compared as
those lists. `first_answer` finds the first without enumerating them all when there
are many (a program with free choices has exponentially many): with the shown atoms
in their order a1 < a2 < ..., an answer with no further atom comes before any other
(a list before the longer ones it begins), and otherwise one with the next atom true
comes before those without it; so each atom in turn is decided by asking clingo
under assumptions, about two questions per atom.

>>> from rsp_plugin.asp.ground import GroundProgram
>>> ground = GroundProgram(0, atoms=2, rules=[(1, (), (2,)), (2, (), (1,))], shown={1: (7, ()), 2: (8, ())})
>>> sorted(sorted(model) for model in answer_sets(ground))    # a :- not b.  b :- not a.
[[(7, ())], [(8, ())]]
>>> sorted(first_answer(ground, key=repr, few=0))
[(7, ())]
"""

from __future__ import annotations

import time
from typing import Callable

from ..core.extras import require

require("asp", "answer streams (--semantics answer-stream)")

import clingo  # noqa: E402 (after the check that names the extra to install)

from .ground import Fact, GroundProgram

#: Up to this many answers, `first_answer` sorts them all; past it, it decides atom by atom.
FEW = 64


class SolverTimeout(Exception):
    """A time point whose answer sets took longer than the time-out."""


class _Problem:
    """A ground program in clingo, solved as often as asked, within one deadline (`deadline`, a
    `time.monotonic()` value, when the time-out began before: the grounding's time counts too)."""

    def __init__(self, ground: GroundProgram, timeout: float | None, models: int = 0,
                 deadline: float | None = None):
        self.timeout = timeout
        self.deadline = deadline if deadline is not None or timeout is None else time.monotonic() + timeout
        self.control = clingo.Control([f"--models={models}", "--project=project", "--warn=none"])
        with self.control.backend() as backend:
            atom = [0] + [backend.add_atom() for _ in range(ground.atoms)]
            for head, positive, negative in ground.rules:
                backend.add_rule([atom[head]], [atom[a] for a in positive] + [-atom[a] for a in negative])
            self.shown = [(atom[a], fact) for a, fact in ground.shown.items()]
            backend.add_project([literal for literal, _ in self.shown])

    def solve(self, assumptions=(), limit: int = 0) -> list[frozenset[Fact]]:
        """Distinct shown parts of the answer sets under `assumptions` (at most `limit`, 0: all)."""
        self.control.configuration.solve.models = limit
        found: list[frozenset[Fact]] = []
        shown = self.shown

        def on_model(model: clingo.Model) -> None:
            found.append(frozenset(fact for literal, fact in shown if model.is_true(literal)))

        with self.control.solve(assumptions=list(assumptions), on_model=on_model, async_=True) as handle:
            left = -1 if self.deadline is None else max(0.0, self.deadline - time.monotonic())
            if not handle.wait(left):
                handle.cancel()
                raise SolverTimeout(f"no answer within {self.timeout:g} s")
            handle.get()
        return found


def answer_sets(ground: GroundProgram, timeout: float | None = None, *,
                deadline: float | None = None) -> list[frozenset[Fact]]:
    """Every distinct projection of the answer sets on `ground.shown` ([] when there is none)."""
    return list(set(_Problem(ground, timeout, deadline=deadline).solve()))


def first_answer(ground: GroundProgram, key: Callable[[Fact], str], timeout: float | None = None,
                 few: int = FEW, *, deadline: float | None = None) -> frozenset[Fact] | None:
    """The first answer in the order of answers (atoms ordered by `key`); None when there is none."""
    problem = _Problem(ground, timeout, deadline=deadline)
    found = problem.solve(limit=few + 1)
    if not found:
        return None
    if len(set(found)) <= few:
        return min(set(found), key=lambda model: sorted(key(f) for f in model))
    order = sorted(problem.shown, key=lambda item: key(item[1]))
    decided: list[int] = []
    chosen: list[Fact] = []
    for index, (literal, fact) in enumerate(order):
        rest = [-other for other, _ in order[index:]]
        if problem.solve(decided + rest, limit=1):
            break  # an answer with no further atom: nothing comes before it
        if problem.solve(decided + [literal], limit=1):
            decided.append(literal)
            chosen.append(fact)
        else:
            decided.append(-literal)
    return frozenset(chosen)
