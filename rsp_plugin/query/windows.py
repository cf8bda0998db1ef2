"""S2R: the windows over a stream, kept up to date as elements arrive and time passes.

Time windows (DESIGN.md, "Time"): `[RANGE r STEP s]` has its boundaries at
tau = t0 + k*s; the window of boundary tau holds the elements with
max(t0, tau - r) <= t < tau (half-open, as CSRBench's oracle); a window in the
past (`RangeWindow.end` > 0: `[FROM NOW-PT2H TO NOW-PT1H STEP PT1H]`) stops
`end` before tau: max(t0, tau - r) <= t < tau - end. Those numbers are its
`grid`'s (`core.time.WindowGrid`, as every backend's). An element waits
in `staged` until the first boundary after it, so a window read between two
boundaries shows the content of the last one.

    #  t:    0     1000   2000   3000          [RANGE 2000 STEP 1000]
    #  a@500  |--a--|
    #  window at 1000: {a}, at 2000: {a}, at 3000: {}

Count windows: `[TRIPLES n]`, `[ELEMENTS n STEP m]` hold the last n elements in
arrival order, moved on every m elements.

Every window answers `accepts(t)` (would an element with timestamp t still enter
a window that is not reported yet?), `offer(t, triple)` and `advance(tau)`; both
return the elements that entered the content, for the materialization layer.
`version` counts the changes of the content (for the on-content-change report
policy), and a time window's `next_change()` is the first boundary at which its
content would change, judging by what it holds and has staged.

>>> window = TimeWindow(RangeWindow(2000, 1000))
>>> window.offer(500, (1, 2, 3)); window.offer(1500, (1, 2, 4))
[]
[]
>>> window.advance(1000), sorted(window.content)
([(500, (1, 2, 3))], [(1, 2, 3)])
>>> _ = window.advance(3000); sorted(window.content), window.accepts(1999), window.accepts(2000)
([(1, 2, 4)], False, True)
"""

from __future__ import annotations

import heapq
from collections import deque
from itertools import chain

from ..core.time import WindowGrid
from .content import Triple, WindowContent
from .model import CountWindow, RangeWindow

Arrival = tuple[int, Triple]


class TimeWindow:
    """`[RANGE r STEP s]` over one stream: where it stands on its grid (`core.time.WindowGrid`), and
    the elements it holds as tuples (`columnar.columns.ColumnTimeWindow` holds them as numpy columns
    and is the same window to every reader)."""

    def __init__(self, spec: RangeWindow, t0: int = 0):
        self.spec = spec
        self.grid = WindowGrid(spec.range, spec.step, t0, getattr(spec, "end", 0))
        #: the last boundary whose content `content` holds (None before the first)
        self.boundary: int | None = None
        self.first_timestamp: int | None = None
        self.last_timestamp: int | None = None
        #: how many times the content changed (an element entered or left)
        self.version = 0
        self._hold_nothing()

    def _hold_nothing(self) -> None:
        """The holdings of a window that has seen nothing: its content, and what waits for a boundary."""
        self.content = WindowContent()
        self._staged: list[Arrival] = []
        self._buckets: dict[int, list[Triple]] = {}
        self._times: list[int] = []
        #: the earliest timestamp staged (None when nothing is)
        self._staged_first: int | None = None

    def __repr__(self) -> str:
        return f"<TimeWindow {self.spec} boundary={self.boundary} triples={len(self.content)} staged={len(self._staged)}>"

    @property
    def t0(self) -> int:
        return self.grid.t0

    def boundary_at(self, tau: int) -> int:
        """The last boundary at or before tau."""
        return self.grid.boundary_at(tau)

    def next_boundary_after(self, t: int) -> int:
        """The first boundary strictly after t."""
        return self.grid.boundary_after(t)

    def accepts(self, timestamp: int) -> bool:
        """Would an element seen at `timestamp` still enter a window not reported yet?"""
        if timestamp < self.grid.t0:
            return False
        return self.boundary is None or timestamp >= self.grid.open_from(self.boundary)

    def reaches(self, tau: int, timestamp: int) -> bool:
        """Does the window of boundary tau still hold an element seen at `timestamp`?"""
        return self.grid.reaches(tau, timestamp)

    def offer(self, timestamp: int, triple: Triple) -> list[Arrival]:
        self._staged.append((timestamp, triple))
        if self._staged_first is None or timestamp < self._staged_first:
            self._staged_first = timestamp
        if self.first_timestamp is None:
            self.first_timestamp = timestamp
        if self.last_timestamp is None or timestamp > self.last_timestamp:
            self.last_timestamp = timestamp
        return []

    def advance(self, tau: int) -> list[Arrival]:
        """Move to the last boundary at or before tau; the elements that entered, oldest first."""
        boundary = self.boundary_at(tau)
        if self.boundary is not None and boundary <= self.boundary:
            return []
        low, high = self.grid.bounds(boundary)
        times, buckets, content = self._times, self._buckets, self.content
        left = bool(times) and times[0] < low
        while times and times[0] < low:
            old = heapq.heappop(times)
            for triple in buckets.pop(old):
                content.evict(triple, old)
        entered: list[Arrival] = []
        waiting: list[Arrival] = []
        for arrival in self._staged:
            timestamp = arrival[0]
            if timestamp >= high:
                waiting.append(arrival)
            elif timestamp >= low:
                entered.append(arrival)
        self._staged = waiting
        self._staged_first = min(arrival[0] for arrival in waiting) if waiting else None
        if left or entered:
            self.version += 1
        entered.sort(key=lambda arrival: arrival[0])
        for timestamp, triple in entered:
            bucket = buckets.get(timestamp)
            if bucket is None:
                bucket = buckets[timestamp] = []
                heapq.heappush(times, timestamp)
            bucket.append(triple)
            content.insert(triple, timestamp)
        self.boundary = boundary
        return entered

    def is_empty(self) -> bool:
        return not self.content.stamps

    def next_change(self) -> int | None:
        """The first boundary after the current one at which an element enters or leaves
        (None: nothing held or staged); the on-content-change policy skips the others."""
        grid, candidates = self.grid, []
        if self._staged_first is not None:  # enters at the first window that holds it
            candidates.append(grid.instant(grid.k_range(self._staged_first)[0]))
        if self._times:  # leaves at the window after the last that holds it
            candidates.append(grid.instant(grid.k_range(self._times[0])[1] + 1))
        return min(candidates) if candidates else None

    def live_terms(self):
        """The ids the window holds: its content and what waits for the next boundary."""
        return chain(self.content.live_terms(), chain.from_iterable(triple for _, triple in self._staged))


class CountingWindow:
    """`[TRIPLES n]` / `[ELEMENTS n STEP m]` over one stream."""

    def __init__(self, spec: CountWindow):
        self.spec = spec
        self.content = WindowContent()
        self.first_timestamp: int | None = None
        self.last_timestamp: int | None = None
        #: elements committed so far (the count the window has moved by)
        self.committed = 0
        self._pending: list[Arrival] = []
        self._held: deque[Arrival] = deque()
        #: how many times the content changed
        self.version = 0

    def __repr__(self) -> str:
        return f"<CountingWindow {self.spec} triples={len(self.content)} pending={len(self._pending)}>"

    def accepts(self, timestamp: int) -> bool:
        return True

    def offer(self, timestamp: int, triple: Triple) -> list[Arrival]:
        if self.first_timestamp is None:
            self.first_timestamp = timestamp
        if self.last_timestamp is None or timestamp > self.last_timestamp:
            self.last_timestamp = timestamp
        self._pending.append((timestamp, triple))
        if len(self._pending) < self.spec.step:
            return []
        entered, self._pending = self._pending, []
        held, content, size = self._held, self.content, self.spec.size
        for timestamp, triple in entered:
            held.append((timestamp, triple))
            content.insert(triple, timestamp)
            if len(held) > size:
                old_time, old = held.popleft()
                content.evict(old, old_time)
        self.committed += len(entered)
        self.version += 1
        return entered

    def advance(self, tau: int) -> list[Arrival]:
        return []

    def live_terms(self):
        return chain(self.content.live_terms(), chain.from_iterable(triple for _, triple in self._pending))

    def is_empty(self) -> bool:
        return not self._held
