"""What the engine registers: streams, the windows queries share over them, and the queries themselves.

A window is kept once per stream and shape (and reasoning), however many queries
declare it (`SharedWindow.readers`); a query reads its windows and its static
graphs (`RegisteredQuery.snapshot`) and hands its reports to its subscribers.
When it reports is `scheduling.py`'s.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import Callable, Iterator

from ..query.evaluate import QueryEvaluator, Snapshot
from ..query.model import ContinuousQuery, ReportPolicy, WindowClause
from ..query.results import QueryResult, ResultStream
from ..query.windows import TimeWindow
from .scheduling import next_instant


@dataclass(frozen=True)
class TimestampedGraph:
    """An RSP-QL stream element: a graph and its timestamp (ms)."""

    graph: object
    timestamp: int


@dataclass
class Stream:
    """A registered stream: the windows over it, the query that produces it (if any), its time span."""

    iri: str
    windows: list = field(default_factory=list)
    produced_by: str | None = None
    first_timestamp: int | None = None
    last_timestamp: int | None = None
    #: elements pushed so far (an element set aside is named by its number when it has no line)
    pushed: int = 0

    def note(self, timestamp: int) -> None:
        """An element at `timestamp` was taken."""
        if self.first_timestamp is None or timestamp < self.first_timestamp:
            self.first_timestamp = timestamp
        if self.last_timestamp is None or timestamp > self.last_timestamp:
            self.last_timestamp = timestamp


class SharedWindow:
    """One window over one stream, read by every query that declares the same one."""

    def __init__(self, key, stream: str, view):
        self.key = key
        self.stream = stream
        self.view = view
        self.readers: set[str] = set()

    @property
    def window(self):
        return self.view.window


class RegisteredQuery:
    """A registered continuous query: observe it by callback or iterate its results."""

    def __init__(self, name: str, query: ContinuousQuery, evaluator: QueryEvaluator, policy: ReportPolicy,
                 windows: list[tuple[WindowClause, SharedWindow]], static_default: list, static_named: dict,
                 period: int | None, floor: int | None, t0: int = 0):
        self.name = name
        self.t0 = t0
        self.query = query
        self.evaluator = evaluator
        self.policy = policy
        self.windows = windows
        self.static_default = static_default
        self.static_named = static_named
        #: COMPUTE EVERY (None: the windows' STEPs say when it reports)
        self.period = period
        #: no report before this time (the watermark when it was registered)
        self.floor = floor
        #: no report after this time (a replay's end, `scheduling.replay_end`)
        self.cap: int | None = None
        self.last_instant: int | None = None
        self.stream = ResultStream(query.r2s)
        self.evaluations = 0
        self._callbacks: list[Callable[[QueryResult], None]] = []
        self._results: deque[QueryResult] = deque()
        self.keep_results = False
        #: the windows' content versions at the last evaluation (on-content-change)
        self.seen_versions: tuple | None = None
        time_driven = any(isinstance(shared.window, TimeWindow) for _, shared in windows)
        self.tuple_driven = period is None and not time_driven

    def __repr__(self) -> str:
        return f"<RegisteredQuery {self.name} {self.query.r2s.value} {self.query.form} evaluations={self.evaluations}>"

    def subscribe(self, callback: Callable[[QueryResult], None]) -> None:
        """Call `callback(result)` for every report of this query."""
        self._callbacks.append(callback)

    def __getstate__(self):
        """Subscribers are not state (they are the caller's code): a restored query has none."""
        state = dict(self.__dict__)
        state["_callbacks"] = []
        return state

    def results(self) -> Iterator[QueryResult]:
        """The reports made since the last call (collected from the first call on)."""
        self.keep_results = True
        while self._results:
            yield self._results.popleft()

    def deliver(self, result: QueryResult) -> None:
        """A report of this query to its subscribers (and to `results`, once asked for)."""
        if self.keep_results:
            self._results.append(result)
        for callback in self._callbacks:
            callback(result)

    def snapshot(self) -> Snapshot:
        """What the query reads now: its windows as they were last moved, and its static graphs."""
        default_parts = list(self.static_default)
        named = dict(self.static_named)
        for clause, shared in self.windows:
            if clause.name is None:
                default_parts.append(shared.view.content)
            else:
                named[clause.name] = shared.view.content
        return Snapshot(default_parts, named)

    def next_instant(self) -> int | None:
        """The next tau at which this query reports (time-driven queries), or None (`scheduling`)."""
        return next_instant(self)

    def report_after(self, time: int) -> None:
        """Report every instant after `time`, as if an element had come at `time`: an engine that runs a
        stretch of a longer stream (Spark's time slices) reports the instants of a gap before its first
        element as the whole run does (their windows empty; the background's closure, a RULES program's
        facts still in the answer)."""
        for _, shared in self.windows:
            window = shared.window
            if window.first_timestamp is None or window.first_timestamp > time:
                window.first_timestamp = time


__all__ = ["RegisteredQuery", "SharedWindow", "Stream", "TimestampedGraph"]
