"""How much one evaluation of a query may spend: time and solutions, checked as it works.

A registered query is text anyone may hand the engine, evaluated at every
window: a cartesian product of five patterns over a 10k-triple window, or a
pattern that joins everything with everything, would hold the engine (and every
other query, and the stream) for ever. So each evaluation gets a budget:

    budget = Budget(max_ms=10_000, max_solutions=1_000_000)
    budget.check(len(rows))        # EvaluationCut past either bound

Every evaluation path (a compiled plan's backends, the algebra evaluator;
`fastpath.py` and `backend.py`, `algebra.py`, `rsp_plugin.columnar.query`) checks it
between steps and every few dozen rows of a join, so a cut comes within a
fraction of a second of the bound, and no step holds more than about
`max_solutions` rows. A bound hit ends that evaluation only: the report is
marked as cut (`Answer.cut`, `{"t": ..., "cut": "max-eval-ms", "error": ...}`),
and the next windows are evaluated as usual (`runtime.RSPEngine._report`).
The defaults and why: `rsp_plugin.core.limits`.

>>> budget = Budget(max_ms=None, max_solutions=10)
>>> budget.check(10)
>>> try:
...     budget.check(11)
... except EvaluationCut as cut:
...     print(cut.bound, "|", cut)
max-solutions | stopped at more than 10 solutions (--max-solutions 10)
"""

from __future__ import annotations

import sys
from time import monotonic

#: the bounds, as the report names them (`"cut": ...`) and as their options are spelled
TIME = "max-eval-ms"
SOLUTIONS = "max-solutions"
#: rows a join makes between two checks of the budget
CHUNK = 64


class EvaluationCut(Exception):
    """An evaluation stopped at one of its bounds; `bound` is TIME or SOLUTIONS."""

    def __init__(self, bound: str, message: str):
        super().__init__(message)
        self.bound = bound


class Budget:
    """The bounds of one evaluation: a deadline (from now) and the rows any step may hold."""

    __slots__ = ("max_ms", "max_solutions", "deadline")

    def __init__(self, max_ms: int | None = None, max_solutions: int | None = None):
        self.max_ms = max_ms
        self.max_solutions = sys.maxsize if max_solutions is None else max_solutions
        self.deadline = None if max_ms is None else monotonic() + max_ms / 1000

    def __repr__(self) -> str:
        return f"<Budget max_ms={self.max_ms} max_solutions={self.max_solutions}>"

    def check(self, solutions: int = 0) -> None:
        """Raise `EvaluationCut` if `solutions` rows are more than allowed or the time is up."""
        if solutions > self.max_solutions:
            raise EvaluationCut(SOLUTIONS, f"stopped at more than {self.max_solutions} solutions "
                                           f"(--{SOLUTIONS} {self.max_solutions})")
        if self.deadline is not None and monotonic() > self.deadline:
            raise self.out_of_time()

    def out_of_time(self) -> EvaluationCut:
        return EvaluationCut(TIME, f"stopped after {self.max_ms} ms (--{TIME} {self.max_ms})")

    def remaining(self) -> float | None:
        """Seconds left (None: no deadline), at least a millisecond."""
        if self.deadline is None:
            return None
        return max(0.001, self.deadline - monotonic())

    def chunks(self, rows: list, made: list):
        """`rows` in slices of CHUNK, the budget checked before each (and at the end) on how
        many rows the caller `made` so far: the check costs a join next to nothing."""
        check = self.check
        for start in range(0, len(rows), CHUNK):
            check(len(made))
            yield rows[start:start + CHUNK]
        check(len(made))

    def kept(self, rows: list, keep) -> list:
        """The rows for which `keep(row)` holds, the budget checked every CHUNK rows."""
        out: list = []
        for chunk in self.chunks(rows, out):
            out.extend(row for row in chunk if keep(row))
        return out


#: no bound: what an evaluation gets when nobody gave it a budget (a direct caller, a test)
UNBOUNDED = Budget()


__all__ = ["Budget", "EvaluationCut", "UNBOUNDED", "TIME", "SOLUTIONS", "CHUNK"]
