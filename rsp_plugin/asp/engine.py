"""Answer streams time point after time point: driven as `IncrementalEngine` is.

    engine = AnswerStreamEngine(program)           # loops through `not` allowed
    for t in timeline:
        step = engine.advance_to(t, arrivals(t))   # ground at t, solve, sort
        step.models                                # every answer at t, in the deterministic order
        step.started, step.stopped                 # change of the first one since the last call

The models at t are the output of each answer stream (the atoms rules derive at t),
sorted in one deterministic order: atoms sorted within a model, models compared as
those lists (Python's order: a list before every longer list it begins). The first
is what a caller that wants one answer gets (`holding()`, `--models 1`, a query's
RULES); `[]` means no answer stream at t.

`models="first"` (the default) finds only the first answer, without enumerating the
others (`solve.first_answer`); `models="all"` finds every one.

>>> from rsp_plugin.lars.syntax import parse_program
>>> program = parse_program("a :- not b .  b :- not a .", semantics="answer-stream")
>>> step = AnswerStreamEngine(program, models="all").advance_to(0)
>>> [[format_fact(f, program.terms) for f in model] for model in step.models]
[['a'], ['b']]
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Iterable

from ..io.formats import format_fact
from ..lars.limits import DEFAULT_MAX_DERIVATIONS
from ..lars.program import Program
from .ground import Fact, Grounder, History
from .solve import SolverTimeout, answer_sets, first_answer

#: Seconds one time point may take to ground and solve before it is given up (`--solver-timeout`).
DEFAULT_TIMEOUT = 60.0


@dataclass
class AnswerStep:
    """What one call of `advance_to` found."""

    time_point: int
    #: the answers at the time point, sorted (all of them, or the first); [] when there is none;
    #: None when it timed out
    models: list[list[Fact]] | None = None
    started: list[Fact] = field(default_factory=list)
    stopped: list[Fact] = field(default_factory=list)
    timed_out: str | None = None

    @property
    def inconsistent(self) -> bool:
        return self.models == []

    def __repr__(self) -> str:
        count = "timed out" if self.models is None else len(self.models)
        return f"<AnswerStep t={self.time_point} models={count}>"


class AnswerStreamEngine:
    """Def. 5 of the LARS papers through clingo, one ground program per time point."""

    def __init__(self, program: Program, *, start: int | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                 max_derivations: int = DEFAULT_MAX_DERIVATIONS, models: str = "first"):
        if models not in ("first", "all"):
            raise ValueError(f"models is 'first' or 'all', not {models!r}")
        self.program = program
        self.models = models
        self.terms = program.terms
        self.timeout = timeout
        self.history = History(program, start)
        self.grounder = Grounder(program, max_derivations=max_derivations)
        self.now: int | None = None
        self.chosen: list[Fact] = []

    def __repr__(self) -> str:
        return f"<AnswerStreamEngine rules={len(self.program.rules)} now={self.now}>"

    def advance_to(self, time_point: int, arrivals: Iterable[Fact] = ()) -> AnswerStep:
        """Evaluate every time point up to `time_point` (the skipped ones without data)."""
        if self.now is not None and time_point <= self.now:
            raise ValueError(f"time point {time_point} was already evaluated (now is {self.now}); "
                             "time points are evaluated in increasing order")
        before = self.chosen
        if self.now is None:
            first = self.history.start if self.history.start is not None else time_point
        else:
            first = self.now + 1
        step = AnswerStep(time_point)
        for point in range(first, time_point + 1):
            step = self._step(point, arrivals if point == time_point else ())
        after = set(self.chosen)
        was = set(before)
        step.started = [f for f in self.chosen if f not in was]
        step.stopped = [f for f in before if f not in after]
        return step

    def _step(self, t: int, arrivals: Iterable[Fact]) -> AnswerStep:
        self.now = t
        self.history.add(t, arrivals)
        deadline = None if self.timeout is None else time.monotonic() + self.timeout  # grounding and solving
        try:
            ground = self.grounder.ground(self.history, t, deadline=deadline, timeout=self.timeout)
            if self.models == "all":
                found = answer_sets(ground, self.timeout, deadline=deadline)
            else:
                first = first_answer(ground, self._shown, self.timeout, deadline=deadline)
                found = [] if first is None else [first]
        except SolverTimeout as timeout:
            self.chosen = []
            return AnswerStep(t, None, timed_out=str(timeout))
        models = sorted((sorted(model, key=self._shown) for model in found),
                        key=lambda model: [self._shown(f) for f in model])
        self.chosen = models[0] if models else []
        return AnswerStep(t, models)

    def _shown(self, fact: Fact) -> str:
        return format_fact(fact, self.terms)

    def holding(self) -> list[Fact]:
        """The output of the first answer stream at the last time point."""
        return list(self.chosen)

    def explain(self, fact: Fact, t: int | None = None, sources=None) -> dict | None:
        """Why `fact` is in the first answer at the last time point, as a small tree of plain data;
        None if it is not (`rsp_plugin/asp/explain.py`; made from this state, nothing is kept)."""
        from .explain import explain

        return explain(self, fact, self.now if t is None else t, sources)


def agrees_with_stream_semantics(program: Program) -> bool:
    """Do both semantics give this program the same output at every time point?

    They differ only in what a window sees of earlier derivations: kept in the stream
    (the default) or gone (Def. 5). A program whose windows, `@` atoms, DIAMONDs and BOXes
    (negated or not) read only data predicates, and which reads derived predicates only
    plainly (at t), cannot tell them apart: at t both evaluate the same rules over the same
    data and over the same atoms derived at t."""
    derived = {(rule.head.predicate, len(rule.head.args)) for rule in program.rules}
    for rule in program.rules:
        for literal in rule.body:
            if getattr(literal, "modality", "plain") != "plain" and (
                    (literal.atom.predicate, len(literal.atom.args)) in derived):
                return False
    return True


def answer_stream_engine(program: Program, *, start: int | None = None, timeout: float | None = DEFAULT_TIMEOUT,
                         max_derivations: int = DEFAULT_MAX_DERIVATIONS, pruning: bool = True, models: str = "first",
                         explain: bool = False):
    """The fastest exact path for answer streams: the incremental engine when the program is
    stratified and both semantics agree on it (`agrees_with_stream_semantics`), else the solver.
    `explain`: the incremental engine keeps what explanations need (the solver's are made from
    its state when asked, `rsp_plugin/asp/explain.py`)."""
    if program.stratified and agrees_with_stream_semantics(program):
        from ..lars.engine import IncrementalEngine

        return IncrementalEngine(program, start=start, pruning=pruning, max_derivations=max_derivations,
                                 explain=explain)
    return AnswerStreamEngine(program, start=start, timeout=timeout, max_derivations=max_derivations, models=models)
