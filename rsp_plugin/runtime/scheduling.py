"""When the registered queries report: the next instant of each, the reports due next, the empty
stretches skipped, a replay's end; and the smallest period walked, the unit of the gap bound.

A time-driven query reports at each instant tau of its grid (COMPUTE EVERY, or the
boundaries of its time windows) from the first after its first element; a query that
reports only non-empty windows or content changes skips the instants that cannot
report. A replay ends at the last tau whose windows still reach the last element of
their streams (DESIGN.md, "Time").
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Callable

from ..core.time import WindowGrid
from ..query.model import ReportPolicy
from ..query.views import PlainView
from ..query.windows import TimeWindow

if TYPE_CHECKING:
    from .queries import RegisteredQuery


def next_instant(query: RegisteredQuery) -> int | None:
    """The next tau at which `query` reports (time-driven queries), or None."""
    if query.tuple_driven:
        return None
    stamps = [shared.window.first_timestamp for _, shared in query.windows
              if shared.window.first_timestamp is not None]
    if not stamps:
        return None
    after = min(stamps)
    if query.last_instant is not None and query.last_instant > after:
        after = query.last_instant
    if query.floor is not None and query.floor > after:
        after = query.floor
    if query.period is not None:
        tau = WindowGrid.every(query.period, query.t0).boundary_after(after)
    elif query.policy is ReportPolicy.ON_CONTENT_CHANGE:
        tau = _next_change(query, after)
        if tau is None:
            return None
    else:
        tau = min(shared.window.next_boundary_after(after) for _, shared in query.windows
                  if isinstance(shared.window, TimeWindow))
    if query.cap is not None and tau > query.cap:
        return None
    return tau


def _next_change(query: RegisteredQuery, after: int) -> int | None:
    """The next boundary after `after` at which one of the time windows changes: the
    instants between them cannot change the answer and are skipped, so a window that
    slides every 1 ms (CQELS-QL's [RANGE r]) costs nothing while nothing arrives or leaves."""
    found = None
    for _, shared in query.windows:
        window = shared.window
        if not isinstance(window, TimeWindow):
            continue
        change = window.next_change()
        if change is None:
            continue
        tau = max(change, window.next_boundary_after(after))
        if found is None or tau < found:
            found = tau
    return found


def replay_end(query: RegisteredQuery, last_of: Callable[[str], int | None]) -> int | None:
    """The last tau whose windows still reach the last element of their streams (`last_of(iri)`)."""
    ends = []
    for _, shared in query.windows:
        window = shared.window
        last = last_of(shared.stream)
        if last is None:
            continue
        if isinstance(window, TimeWindow):
            ends.append(window.grid.last_report(last, query.period))
        elif query.period is not None:
            ends.append(WindowGrid.every(query.period, query.t0).first_report(last))
    return max(ends) if ends else None


def steps_walked(query: RegisteredQuery) -> list[int]:
    """The periods `query` walks every instant of. A query that reports only non-empty windows or
    content changes over plain windows skips empty stretches at no cost (`Schedule.skip_empty`,
    `next_instant`): a gap costs it nothing, and it walks none."""
    if query.tuple_driven:
        return []
    if query.policy is not ReportPolicy.ON_WINDOW_CLOSE and all(
            isinstance(shared.view, PlainView) for _, shared in query.windows):
        return []
    steps = [query.period] if query.period is not None else []
    steps.extend(shared.window.spec.step for _, shared in query.windows if isinstance(shared.window, TimeWindow))
    return steps


class Schedule:
    """The reports of the registered queries (the engine's registry, shared), in time order.

    `gap_unit`: the smallest period a query walks every instant of (`steps_walked`), the unit
    of the engine's gap bound: an element that jumps N such periods makes N reports."""

    def __init__(self, queries: dict[str, RegisteredQuery]):
        self.queries = queries
        self.gap_unit: int | None = None

    def added(self, query: RegisteredQuery) -> None:
        steps = steps_walked(query)  # (not every query's again: n registrations would cost n^2)
        if steps:
            self.gap_unit = min(steps) if self.gap_unit is None else min(self.gap_unit, *steps)

    def removed(self, query: RegisteredQuery) -> None:
        if self.gap_unit in steps_walked(query):
            steps = [step for other in self.queries.values() for step in steps_walked(other)]
            self.gap_unit = min(steps) if steps else None

    def reports_on_change(self) -> bool:
        return any(query.policy is ReportPolicy.ON_CONTENT_CHANGE for query in self.queries.values())

    def next_due(self, limit: int | None = None,
                 next_element: int | None = None) -> tuple[int | None, list[RegisteredQuery]]:
        """(the next tau, the queries that report at it), or (None, []). With `limit` (the watermark),
        stretches of empty windows up to it (or to `next_element`, the next element to take) are skipped."""
        best, due = None, []
        for query in self.queries.values():
            tau = query.next_instant()
            if tau is not None and limit is not None and query.policy is ReportPolicy.NON_EMPTY_CONTENT:
                tau = self.skip_empty(query, tau, limit if next_element is None else min(next_element, limit))
            if tau is None:
                continue
            if best is None or tau < best:
                best, due = tau, [query]
            elif tau == best:
                due.append(query)
        return best, due

    def skip_empty(self, query: RegisteredQuery, tau: int, until: int) -> int | None:
        """A query that reports non-empty windows only skips a stretch of empty ones at no cost:
        while its plain time windows hold nothing (and nothing staged can enter them), every
        instant up to `until` (the next element to take, or the watermark) is empty, so it jumps
        there. Windows with reasoning or rules are not skipped (their engines count every time point)."""
        if tau > until:
            return tau
        last = []
        for _, shared in query.windows:
            window = shared.window
            if not isinstance(shared.view, PlainView) or not isinstance(window, TimeWindow):
                return tau
            if not window.is_empty() or window.boundary is None:
                return tau
            if window.last_timestamp is not None and window.last_timestamp >= window.grid.open_from(window.boundary):
                return tau  # something staged may still enter
            if any(self.queries[name].policy is not ReportPolicy.NON_EMPTY_CONTENT for name in shared.readers):
                return tau
            last.append(window.boundary_at(until))
        if query.period is not None:
            end = WindowGrid.every(query.period, query.t0).boundary_at(until)
        else:
            end = max(last)
        if end < tau:
            return tau
        query.last_instant = end
        for _, shared in query.windows:
            shared.view.advance(end)
        return query.next_instant()

    def cap_at_replay_end(self, last_of: Callable[[str], int | None]) -> list[int]:
        """Each query reports up to its replay's end (`replay_end`) and no further; the ends."""
        for query in self.queries.values():
            query.cap = replay_end(query, last_of)
        return [query.cap for query in self.queries.values() if query.cap is not None]

    def nothing_due(self) -> bool:
        return all(query.next_instant() is None for query in self.queries.values())


__all__ = ["Schedule", "next_instant", "replay_end", "steps_walked"]
