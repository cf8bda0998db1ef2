"""A column window's RDFS / OWL 2 RL materialization, as queries read it (the batch twin of
`rsp_plugin.query.views.MaterializedView`, with the same mapping of window time onto time points).

A window [RANGE r STEP s] with t0 is read at boundaries tau = t0 + k*s; with one
tick g = gcd(r, s), an element seen at t arrives at time point floor((t - t0) / g)
+ 1 and holds r/g - 1 more points: exactly the boundaries that hold it. At each
boundary the elements that entered the window go to the materializer a time
point at a time (columns, no tuples), then the boundary's own time point expires
what no longer holds; the content is the materializer's triples. Under a static
TBox (no RULES) the materializer is the one the per-fact view uses too, by
templates per triple shape (`rsp_plugin.reasoning.shapes`: a step costs its
delta); with RULES, the `BatchMaterializer`'s fixpoint.
"""

from __future__ import annotations

from itertools import chain
from math import gcd

import numpy as np

from ..core.time import NEVER_EXPIRES
from ..reasoning.shapes import ShapeMaterializer, supports
from .columns import ColumnTimeWindow, PaneLedger, pane_columns, triple_columns


#: how many time points past the boundary a materialization under templates works ahead, on how many
#: rows at most (`BatchMaterializedView._run_ahead`)
AHEAD_POINTS = 64
AHEAD_ROWS = 1 << 15


class BatchMaterializedView:
    """The column window's materialization under an entailment profile, with the background."""

    panes = None

    def __init__(self, window: ColumnTimeWindow, profile: str | None, *, terms, background=(), rules=None):
        self.window = window
        spec = window.spec
        self.tick = gcd(spec.range, spec.step)
        horizon = spec.range // self.tick - 1
        #: under templates: which of the materializer's panes (expiry time points) changed when, so
        #: that a query's partial aggregates per pane (`panes.py`) are computed once per pane
        self.panes: PaneLedger | None = None
        if supports(profile, rules):
            self.materializer = ShapeMaterializer(profile, window=horizon, background=list(background), terms=terms)
            self.panes = PaneLedger(1, 0, horizon + 1)
        else:
            from .materialize import BatchMaterializer  # (the path of RULES: not imported otherwise)

            self.materializer = BatchMaterializer(profile, window=horizon, background=list(background), terms=terms,
                                                  rules=rules)
        self.now: int | None = None
        self.inconsistencies: list = []
        self.content = self._content()

    def accepts(self, timestamp: int) -> bool:
        boundary = self.window.boundary
        return timestamp >= self.window.t0 and (boundary is None or timestamp >= boundary)

    def offer(self, timestamp: int, triple) -> None:
        self.window.offer(timestamp, triple)

    def advance(self, tau: int) -> None:
        window = self.window
        before = window.boundary
        window.advance(tau)
        if window.boundary == before:
            return
        t, s, p, o = window.entered
        boundary = (window.boundary - window.t0) // self.tick
        steps: list[tuple[int, tuple | None]] = []
        if len(t):
            points = (t - window.t0) // self.tick + 1  # a triple holds from the tick after it
            starts = np.concatenate(([0], np.flatnonzero(np.diff(points)) + 1))
            ends = np.concatenate((starts[1:], [len(points)]))
            steps = [(int(points[start]), (s[start:end], p[start:end], o[start:end]))
                     for start, end in zip(starts.tolist(), ends.tolist())]
        if isinstance(self.materializer, ShapeMaterializer):  # (what was taken ahead arrives at its own time point)
            stepped = {point for point, _ in steps}
            steps += [(point, None) for point in self.materializer.arrivals_until(boundary) if point not in stepped]
            steps.sort(key=lambda step: step[0])
        for point, columns in steps:
            self._advance(point, columns)
        self._advance(boundary, None)
        if isinstance(self.materializer, ShapeMaterializer) and self.now is not None:
            self._run_ahead()
        self.content = self._content()

    def _run_ahead(self) -> None:
        """When what was taken ahead has all arrived: the rows of the next `AHEAD_POINTS` time points
        (at most about `AHEAD_ROWS`) that the window already holds go to the materializer at once
        (`ShapeMaterializer.run_ahead`): a report then costs what its time point adds, not a pass of
        the templates (a stream read from a file, or a burst, holds many time points at a time)."""
        materializer = self.materializer
        if materializer.ahead_until() is not None:
            return
        window = self.window
        t, s, p, o = window.take_ahead(window.t0 + (self.now + AHEAD_POINTS) * self.tick)
        if not len(t):
            return
        points = (t - window.t0) // self.tick + 1
        offered = len(t)
        if offered > AHEAD_ROWS:  # (cut at a time point: at least the first one's rows)
            offered = int(np.searchsorted(points, points[AHEAD_ROWS], side="left")) or \
                int(np.searchsorted(points, points[0], side="right"))
        window.give_back(materializer.run_ahead(points[:offered], s[:offered], p[:offered], o[:offered]))

    def start_at(self, time_ms: int) -> None:
        """Where the timeline starts changes nothing here: the batch path's rules are positive and read no
        window but the lifting DIAMOND (`materialize.supports`), so no BOX clips at a start
        (`query.views.MaterializedView.start_at`)."""

    def _content(self):
        materializer = self.materializer
        if not isinstance(materializer, ShapeMaterializer):
            return triple_columns(*materializer.triple_columns())
        ledger = self.panes
        if ledger is None:  # (a state stored before panes were counted: every pane is new)
            ledger = self.panes = PaneLedger(1, 0, materializer.window + 1)
            materializer.touched.update(h for h in materializer.panes if h != NEVER_EXPIRES)
        if materializer.touched:
            ledger.touched(np.array(sorted(materializer.touched), dtype=np.int64))
            materializer.touched.clear()
        if self.now is None:
            content = triple_columns(*materializer.triple_columns())
            content.distinct = materializer.distinct()  # panes may repeat a triple: readers take it once
            return content
        ledger.forget_before(self.now)
        return pane_columns(*materializer.triple_columns(), distinct=materializer.distinct(), ledger=ledger,
                            low=self.now, source=materializer)

    def _advance(self, point: int, columns) -> None:
        if self.now is not None and point <= self.now:
            if columns is None:
                return
            point = self.now  # pragma: no cover - accepts() keeps arrivals after the last boundary
        report = self.materializer.advance_to(point, columns=columns)
        self.now = point
        if report.inconsistencies:
            self.inconsistencies.extend(report.inconsistencies)

    def live_terms(self):
        found = [triple for event in self.inconsistencies for triple in event.triples]
        return chain(self.window.live_terms(), self.materializer.live_terms(), chain.from_iterable(found))


__all__ = ["BatchMaterializedView"]
