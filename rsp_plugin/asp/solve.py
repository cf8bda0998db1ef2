"""clingo on a ground program: every answer set at t, projected on what the output shows.

One `clingo.Control` per time point (Ticker's one-shot mode): the program is handed
over through clingo's backend as numbered atoms and rules, nothing is parsed. Two
answer sets that differ only in atoms the output does not show (an atom placed at an
earlier time point, a window's own atom) are one answer here: clingo projects them.
A time point that takes longer than `timeout` seconds is cancelled.

>>> from rsp_plugin.asp.ground import GroundProgram
>>> ground = GroundProgram(0, atoms=2, rules=[(1, (), (2,)), (2, (), (1,))], shown={1: (7, ()), 2: (8, ())})
>>> sorted(sorted(model) for model in answer_sets(ground))    # a :- not b.  b :- not a.
[[(7, ())], [(8, ())]]
"""

from __future__ import annotations

import clingo

from .ground import Fact, GroundProgram


class SolverTimeout(Exception):
    """A time point whose answer sets took longer than the time-out."""


def answer_sets(ground: GroundProgram, timeout: float | None = None) -> list[frozenset[Fact]]:
    """The distinct projections of the answer sets on `ground.shown` ([] when there is none)."""
    control = clingo.Control(["--models=0", "--project=project", "--warn=none"])
    with control.backend() as backend:
        atom = [0] + [backend.add_atom() for _ in range(ground.atoms)]
        for head, positive, negative in ground.rules:
            backend.add_rule([atom[head]], [atom[a] for a in positive] + [-atom[a] for a in negative])
        shown = [(atom[a], fact) for a, fact in ground.shown.items()]
        backend.add_project([literal for literal, _ in shown])
    found: set[frozenset[Fact]] = set()

    def on_model(model: clingo.Model) -> None:
        found.add(frozenset(fact for literal, fact in shown if model.is_true(literal)))

    with control.solve(on_model=on_model, async_=True) as handle:
        if not handle.wait(timeout if timeout is not None else -1):
            handle.cancel()
            raise SolverTimeout(f"no answer within {timeout:g} s")
        handle.get()
    return list(found)
