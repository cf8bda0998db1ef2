"""The embeddable engine: register streams and continuous queries, push triples, move time on.

    rt = RSPEngine()
    rt.register_stream("http://ex/sensors")
    q = rt.register_query(text, name="hot")          # QuerySyntaxError on a mistake
    q.subscribe(print)                                # QueryResult(t, bindings | triples | boolean)
    rt.push("http://ex/sensors", triples, timestamp=10_000)   # rdflib triples or a Graph
    rt.advance_to(20_000)      # the watermark: every report with tau <= 20_000 happens now
    for result in rt.advance(30_000): ...   # the same, each report handed out as it is made
    rt.finish()                # a replay ends: the last windows that still reach the data
    rt.rejected                # late or malformed input, each with where and why

Time is the caller's: timestamps and watermarks are integers (ms), nothing reads
a clock, and the same pushes and watermarks give the same results, so a
micro-batch driver can push a batch and then advance the watermark.

Order of work inside `advance_to(w)`: stream elements (with timestamp < w) and
report instants (tau <= w) are taken in time order; at equal times the reports
at tau come first, since the window of tau holds only what is older than tau.
An element pushed with a timestamp older than the watermark is still accepted
when a window that is not reported yet would hold it; otherwise it is late and
set aside in `rejected`.

Reports go to the subscribers as they are made. `advance_to` also returns them
as a list; `advance` (and `finishing`) hand them out one by one instead, and
`advance_to(w, collect=False)` keeps none: a watermark that moves far over a
1 ms STEP makes a million reports, which must not all be held at once.

Each evaluation is bounded (`max_eval_ms`, `max_solutions`; `rsp_plugin.core.limits`,
`query/bounds.py`): past a bound, its report is marked as cut, one line in
`errors` names the query and the time, and the next windows go on.

>>> rt = RSPEngine()
>>> _ = rt.register_stream("http://ex/s")
>>> q = rt.register_query('''
...     REGISTER RSTREAM <http://ex/q> AS
...     SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x <http://ex/p> ?y }''')
>>> from rdflib import URIRef as I
>>> rt.push("http://ex/s", [(I("http://ex/a"), I("http://ex/p"), I("http://ex/b"))], timestamp=500)
>>> [result.to_json() for result in rt.advance_to(3000)]
[{'t': 1000, 'bindings': [{'x': '<http://ex/a>'}]}, {'t': 2000, 'bindings': [{'x': '<http://ex/a>'}]}, {'t': 3000, 'bindings': []}]
"""

from __future__ import annotations

import heapq
from collections import deque
from itertools import chain
from typing import Callable, Iterable, Iterator

from ..columnar.columns import ColumnTimeWindow
from ..columnar.query import ColumnarState, columnar_supported
from ..core import limits
from ..core.admission import Gap, Gate
from ..core.errors import QuerySyntaxError
from ..core.rdfterms import TermCache
from ..core.terms import TRIPLE, Dictionary
from ..io.formats import Rejected, StreamElement
from ..query.bounds import Budget
from ..query.evaluate import QueryEvaluator
from ..query.model import ContinuousQuery, NowWindow, RangeWindow, ReportPolicy
from ..query.results import Answer, QueryResult
from ..query.safety import check_query
from ..query.syntax import parse_query
from ..query.views import MaterializedView, PlainView, RulesView
from ..query.windows import CountingWindow, TimeWindow
from .datasets import Datasets, rules_place
from .forgetting import TermKeeper, live_parts
from .queries import RegisteredQuery, SharedWindow, Stream, TimestampedGraph
from .scheduling import Schedule

Triple = tuple[int, int, int]


class RSPEngine:
    """Streams in, continuous queries over windows, results out; time moves only when told.

    Its parts, each with what it owns: `datasets` (graphs, background, RULES programs, remote
    fetch; `runtime/datasets.py`), `gate` (admission: the stream's time and the rules an element
    is judged by; `core/admission.py`), `schedule` (when the queries report;
    `runtime/scheduling.py`), `keeper` (what the dictionary may forget; `runtime/forgetting.py`).
    The registry (streams, shared windows, queries; `runtime/queries.py`), the input not taken
    yet and the reports made are the engine's own."""

    def __init__(self, *, t0: int = 0, terms: Dictionary | None = None, fast_path: bool = True,
                 max_gap: int | None = limits.MAX_GAP_WINDOWS, allow_service: Iterable[str] = (),
                 allow_graphs: Iterable[str] = (), jsonld_contexts: dict[str, str] | None = None,
                 allow_files: bool = True, explain: bool = False, forget_terms: bool = True,
                 batch: bool = True, max_eval_ms: int | None = limits.MAX_EVAL_MS,
                 max_solutions: int | None = limits.MAX_SOLUTIONS):
        """`max_gap`: how many windows (of the smallest STEP) an element may jump ahead of the
        current time before it is set aside (None: no bound; `rsp_plugin.core.limits`).
        `allow_service`, `allow_graphs`: SERVICE endpoints and remote FROM graphs a query may
        reach (IRIs, or prefixes ending in `*`; `rsp_plugin.query.safety`); `jsonld_contexts`:
        JSON-LD context IRI -> local file, for the graphs read (`rsp_plugin.io.documents`).
        `allow_files=False`: a query may not name local files (FROM, RULES), only graphs given here.
        `explain=True`: keep what `explain(query, t, row)` needs (`rsp_plugin/query/explain.py`);
        such an engine keeps every term (the explanations hold them) and runs the per-fact path.
        `forget_terms`: the dictionary forgets the terms nothing can reach any more (bounded
        memory on streams of fresh IRIs). `batch`: queries the fast path covers run on column
        windows (`rsp_plugin.columnar`). `max_eval_ms`, `max_solutions`: the bounds of one
        evaluation (None: no bound; `rsp_plugin.core.limits`, `query/bounds.py`)."""
        self.terms = terms if terms is not None else Dictionary()
        #: what the dictionary may forget, and when (never with `explain`: explanations hold terms)
        self.keeper = TermKeeper(self.terms, forget=forget_terms and not explain)
        self.cache = TermCache(self.terms)
        self.t0 = t0
        self.fast_path = fast_path
        #: queries the fast path covers run on column windows (rsp_plugin.columnar) unless False
        self.batch = batch and fast_path and not explain
        #: the gap bound, in windows of the smallest STEP (`gate.gap` once a query walks one)
        self.max_gap = max_gap
        #: the bounds of one evaluation (a report past one is marked as cut)
        self.max_eval_ms = max_eval_ms
        self.max_solutions = max_solutions
        self.allow_service = tuple(allow_service)
        self.datasets = Datasets(self.terms, self.cache, allow_graphs=allow_graphs, allow_files=allow_files,
                                 jsonld_contexts=jsonld_contexts)
        #: admission: the latest timestamp taken, the watermark, and the rules (`core.admission`)
        self.gate = Gate(t0=t0)
        #: late or malformed input, in the order it was set aside
        self.rejected: list[Rejected] = []
        #: evaluations that failed (the query goes on at the next instant)
        self.errors: list[str] = []
        self.finished = False
        self._streams: dict[str, Stream] = {}
        self._queries: dict[str, RegisteredQuery] = {}
        self._windows: dict[tuple, SharedWindow] = {}
        self.schedule = Schedule(self._queries)
        #: elements taken and not in their windows yet: a heap of (timestamp, sequence, stream, triple)
        self._pending: list[tuple[int, int, str, Triple]] = []
        self._sequence = 0
        #: per stream, elements pushed as columns and not taken yet: [(t, s, p, o), ...]
        self._column_pending: dict[str, list] = {}
        self._callbacks: list[Callable[[QueryResult], None]] = []
        self._results: deque[QueryResult] = deque()
        self._collect = False
        #: reports made since `advance_to` last returned them
        self._emitted: list[QueryResult] = []
        self._anonymous = 0
        self._triple = self.terms.intern(TRIPLE)
        #: `explain=True`: where elements came from, and materializations and rules that keep
        #: their derivations, so that `explain(query, t, row)` can tell (`rsp_plugin/query/explain.py`)
        self.explanations = None
        if explain:
            from ..query.explain import ElementSources

            self.explanations = ElementSources()
        self.terms.pin([self._triple])

    def __repr__(self) -> str:
        return (f"<RSPEngine streams={len(self._streams)} queries={len(self._queries)} "
                f"windows={len(self._windows)} watermark={self.watermark}>")

    # what the parts own, read here too ------------------------------------------------------

    @property
    def watermark(self) -> int | None:
        """Every report up to this time has been made (None before the first `advance_to`)."""
        return self.gate.watermark

    @property
    def latest_timestamp(self) -> int | None:
        """The latest timestamp taken so far (None before the first)."""
        return self.gate.latest

    @property
    def gap_ms(self) -> int | None:
        """How far (ms) time may jump at once: `max_gap` windows of the smallest STEP of the queries
        that report every instant (None: no bound, or no such query)."""
        return None if self.gate.gap is None else self.gate.gap.span

    @property
    def _gap_unit(self) -> int | None:
        """The unit of `max_gap` (`Schedule.gap_unit`; the Spark plan reads it)."""
        return self.schedule.gap_unit

    @property
    def forgetting(self):
        """When the dictionary forgets the terms nothing can reach (`core.terms.Forgetting`; None: never)."""
        return self.keeper.schedule

    @property
    def term_roots(self) -> list:
        """More holders of term ids (objects with `live_terms()`), e.g. a micro-batch driver's queues."""
        return self.keeper.roots

    @property
    def allow_graphs(self) -> tuple:
        return self.datasets.allow_graphs

    @property
    def allow_files(self) -> bool:
        return self.datasets.allow_files

    @property
    def jsonld_contexts(self) -> dict:
        return self.datasets.jsonld_contexts

    # registration ---------------------------------------------------------------------------

    def register_stream(self, iri: str) -> str:
        """Declare a stream by its IRI (idempotent)."""
        iri = str(iri)
        if iri not in self._streams:
            self._streams[iri] = Stream(iri)
        return iri

    def unregister_stream(self, iri: str) -> None:
        stream = self._streams.get(str(iri))
        if stream is None:
            raise KeyError(f"no stream <{iri}> is registered")
        readers = sorted({name for shared in stream.windows for name in shared.readers})
        if readers:
            raise ValueError(f"stream <{iri}> is read by queries {', '.join(readers)}: unregister them first")
        del self._streams[str(iri)]

    @property
    def inconsistencies(self) -> list[str]:
        """What the materializations found inconsistent so far (OWL 2 RL rules with a false head)."""
        found = []
        for shared in self._windows.values():
            for inconsistency in getattr(shared.view, "inconsistencies", ()):
                found.append(f"<{shared.stream}> {shared.key[1]}: {inconsistency.describe(self.terms)}")
        return found

    @property
    def streams(self) -> list[str]:
        return list(self._streams)

    @property
    def queries(self) -> dict[str, RegisteredQuery]:
        return dict(self._queries)

    def add_graph(self, iri: str, source) -> None:
        """The content of graph <iri> (read by FROM <iri> / FROM NAMED <iri>): an rdflib Graph or a file."""
        self.datasets.add_graph(iri, source)

    def add_background(self, source) -> str:
        """A graph every query sees in its default graph (an rdflib Graph or a file)."""
        return self.datasets.add_background(source)

    def add_rules(self, iri: str, source: str) -> None:
        """The LARS program `RULES <iri>` names, given as text (no file is read for it then)."""
        self.datasets.add_rules(iri, source)

    def register_query(self, text: str | ContinuousQuery, *, name: str | None = None,
                       filename: str = "<query>", base: str | None = None,
                       report: ReportPolicy | None = None, dialect: str = "auto",
                       on_result: Callable[[QueryResult], None] | None = None,
                       semantics: str = "stream") -> RegisteredQuery:
        """Parse and register a query; it reports from the next instant after its first element
        (registered while time runs: after the watermark, unless its windows are its own over
        streams nothing has reached yet, `_floor`).

        `report` None: the policy of the query's dialect (on-content-change for CQELS-QL,
        on-window-close for the others); `dialect` as `parse_query`'s. `semantics` is that
        of the query's RULES program: "stream" (default) or "answer-stream" (the LARS papers'
        Def. 5, loops through `not` allowed; the query sees the first answer at each time
        point, in the order of `rsp_plugin.asp.engine`)."""
        mark = self.terms.next_id
        try:
            return self._register_query(text, name, filename, base, report, dialect, on_result, semantics)
        finally:
            self.terms.pin_since(mark)  # the query's constants, rules and graphs are never forgotten

    def _register_query(self, text, name, filename, base, report, dialect, on_result, semantics) -> RegisteredQuery:
        query = text if isinstance(text, ContinuousQuery) else parse_query(text, filename, base=base,
                                                                           dialect=dialect)
        report = report or query.report
        datasets = self.datasets
        check_query(query, allow_service=self.allow_service, allow_graphs=datasets.allow_graphs,
                    given_graphs=datasets.sources, allow_files=datasets.allow_files,
                    given_rules=datasets.rules_sources)
        name = name or query.name or self._fresh_name()
        if name in self._queries:
            raise QuerySyntaxError(f"a query named {name!r} is registered already", query.filename, 1, 1)
        if query.output_stream is not None:
            producer = self._streams.get(query.output_stream)
            if producer is not None and producer.produced_by not in (None, name):
                raise QuerySyntaxError(f"stream <{query.output_stream}> is produced by query {producer.produced_by!r}",
                                       query.filename, 1, 1)
        for clause in query.windows:
            if clause.stream not in self._streams and clause.stream != query.output_stream:
                known = ", ".join(f"<{iri}>" for iri in self._streams) or "none"
                raise QuerySyntaxError(f"stream <{clause.stream}> is not registered (registered: {known})",
                                       query.filename, clause.place.line, clause.place.column)
        period = query.compute_every
        steps = [clause.window.step for clause in query.windows if isinstance(clause.window, RangeWindow)]
        now_period = period or (min(steps) if steps else None)
        if any(isinstance(clause.window, NowWindow) for clause in query.windows) and now_period is None:
            clause = next(c for c in query.windows if isinstance(c.window, NowWindow))
            raise QuerySyntaxError("[NOW] needs COMPUTE EVERY (or a time window's STEP) to know how long now is",
                                   query.filename, clause.place.line, clause.place.column)
        background = datasets.background_triples(query)
        rules_program = datasets.rules_program(query, semantics)
        static_default, static_named = datasets.static_graphs(query, background)
        evaluator = QueryEvaluator(query, self.terms, cache=self.cache, fast=self.fast_path,
                                   services=self.allow_service)
        specs = [RangeWindow(now_period, now_period) if isinstance(clause.window, NowWindow) else clause.window
                 for clause in query.windows]
        columnar = self._columnar(query, evaluator, specs, rules_program)
        if columnar:
            evaluator.columnar = ColumnarState(self.terms)
        shared_windows = []
        for clause, spec in zip(query.windows, specs):
            shared_windows.append((clause, self._shared_window(clause.stream, spec, query, background, rules_program,
                                                               columnar)))
        registered = RegisteredQuery(name, query, evaluator, report, shared_windows, static_default, static_named,
                                     period, self._floor(shared_windows), self.t0)
        if query.output_stream is not None:
            self.register_stream(query.output_stream)
            self._streams[query.output_stream].produced_by = name
        for _, shared in shared_windows:
            shared.readers.add(name)
            if shared not in self._streams[shared.stream].windows:
                self._streams[shared.stream].windows.append(shared)
        if on_result is not None:
            registered.subscribe(on_result)
        self._queries[name] = registered
        self.schedule.added(registered)
        self._gap_changed()
        return registered

    def unregister_query(self, query: str | RegisteredQuery) -> None:
        name = query.name if isinstance(query, RegisteredQuery) else str(query)
        registered = self._queries.pop(name, None)
        if registered is None:
            raise KeyError(f"no query named {name!r} is registered")
        for _, shared in registered.windows:
            shared.readers.discard(name)
            if not shared.readers:
                self._windows.pop(shared.key, None)
                stream = self._streams.get(shared.stream)
                if stream is not None and shared in stream.windows:
                    stream.windows.remove(shared)
        output = registered.query.output_stream
        if output is not None and output in self._streams and self._streams[output].produced_by == name:
            self._streams[output].produced_by = None
        self.schedule.removed(registered)
        self._gap_changed()

    def _fresh_name(self) -> str:
        self._anonymous += 1
        while f"q{self._anonymous}" in self._queries:
            self._anonymous += 1
        return f"q{self._anonymous}"

    def _columnar(self, query: ContinuousQuery, evaluator: QueryEvaluator, specs, rules_program) -> bool:
        """Does this query run on the batch path (column windows, columnar evaluation)?"""
        if not (self.batch and evaluator.plan is not None and columnar_supported(evaluator.plan)
                and all(isinstance(spec, RangeWindow) and not getattr(spec, "end", 0) for spec in specs)):
            return False
        if query.entailment is None:
            return query.rules is None
        if query.rules is None:
            return True
        if rules_program is None or rules_program.semantics != "stream":
            return False
        from ..columnar.materialize import supports

        return supports(query.entailment, rules_program.source)

    def _floor(self, shared_windows) -> int | None:
        """The time after which a query registered now reports. While time runs (a watermark), the
        instants up to it are past: a window that other queries read, or a stream that has had
        elements, no longer holds what those instants saw. Windows of its own over streams nothing
        has reached yet hold everything they will ever see, so such a query reports every window its
        elements reach, those up to the watermark too (a late element is taken into them)."""
        watermark = self.gate.watermark
        if watermark is None:
            return None
        fresh = all(not shared.readers and self._streams[shared.stream].first_timestamp is None
                    for _, shared in shared_windows if shared.stream in self._streams)
        return None if fresh else watermark

    def _shared_window(self, stream: str, spec, query: ContinuousQuery, background: tuple, rules_program,
                       columnar: bool = False):
        reasoning = (query.entailment, tuple(background) if query.entailment else (),
                     query.rules if rules_program is not None else None,
                     rules_program.semantics if rules_program is not None else None)
        key = (stream, spec, reasoning, columnar)
        shared = self._windows.get(key)
        if shared is not None:
            return shared
        if columnar:
            window = ColumnTimeWindow(spec, self.t0)
            if query.entailment is not None:
                from ..columnar.views import BatchMaterializedView

                view = BatchMaterializedView(window, query.entailment, terms=self.terms, background=background,
                                             rules=rules_program.source if rules_program is not None else None)
            else:
                view = PlainView(window)
            shared = self._windows[key] = SharedWindow(key, stream, view)
            return shared
        window = TimeWindow(spec, self.t0) if isinstance(spec, RangeWindow) else CountingWindow(spec)
        explain = self.explanations is not None
        if query.entailment is not None or (rules_program is not None and rules_program.semantics == "stream"):
            # RULES alone too: a derived triple holds while its premises are in the window (query/views.py)
            view = MaterializedView(window, query.entailment, terms=self.terms, background=background,
                                    rules=rules_program.program if rules_program is not None else None,
                                    explain=explain, where=rules_place(query))
        elif rules_program is not None:
            view = RulesView(window, rules_program.program, semantics=rules_program.semantics, explain=explain)
        else:
            view = PlainView(window)
        shared = self._windows[key] = SharedWindow(key, stream, view)
        return shared

    # input ------------------------------------------------------------------------------------

    def push(self, stream: str, data, timestamp: int | None = None, *, source: str | None = None) -> None:
        """Push elements into a stream.

        `data` is an rdflib Graph or an iterable of (s, p, o) rdflib terms, all seen
        at `timestamp` (default: the watermark, i.e. arrival time); or a
        `TimestampedGraph`; or `StreamElement`s from `rsp_plugin.io.formats` readers,
        each with its own time (ms). What is set aside goes to `rejected`, named by
        `source` (a file name) and the element's line, or by the stream and its count.
        """
        if self.finished:
            raise RuntimeError("the engine has finished its replay; make a new one")
        target = self._streams.get(str(stream))
        if target is None:
            known = ", ".join(f"<{iri}>" for iri in self._streams) or "none"
            raise KeyError(f"stream <{stream}> is not registered (registered: {known})")
        if isinstance(data, TimestampedGraph):
            data, timestamp = data.graph, data.timestamp
        if timestamp is None:
            timestamp = self.gate.watermark if self.gate.watermark is not None else self.t0
        intern = self.cache.intern
        if hasattr(data, "triples") and callable(data.triples):
            data = data.triples((None, None, None))
        for item in data:
            target.pushed += 1
            if isinstance(item, StreamElement):
                where = (source or target.iri, item.line)
                predicate, args = item.fact
                if predicate != self._triple or len(args) != 3:
                    self._reject(where, "not an RDF triple")
                    continue
                self._accept(target, item.time_point, tuple(args), where)
                continue
            where = (source or target.iri, target.pushed)
            try:
                s, p, o = item
                triple = (intern(s), intern(p), intern(o))
            except (TypeError, ValueError) as problem:
                self._reject(where, f"not an RDF triple: {problem}")
                continue
            self._accept(target, int(timestamp), triple, where)

    def push_ids(self, stream: str, elements: Iterable[tuple[int, Triple]]) -> None:
        """Push (timestamp, (s, p, o) ids) pairs: the micro-batch driver's way in."""
        target = self._streams.get(str(stream))
        if target is None:
            raise KeyError(f"stream <{stream}> is not registered")
        for timestamp, triple in elements:
            target.pushed += 1
            self._accept(target, timestamp, triple, (target.iri, target.pushed))

    def push_columns(self, stream: str, times, s, p, o, *, lines=None, source: str | None = None) -> None:
        """Push a batch as columns: timestamps (ms) and the ids of subjects, predicates, objects
        (numpy arrays or sequences of ints, any order of time). Where every window of the
        stream is a column window the batch stays columns, judged at once (`Gate.judge_many`);
        otherwise its elements are pushed one by one. `lines` (with `source`) say where each
        element was read, for what is set aside."""
        import numpy as np

        target = self._streams.get(str(stream))
        if target is None:
            known = ", ".join(f"<{iri}>" for iri in self._streams) or "none"
            raise KeyError(f"stream <{stream}> is not registered (registered: {known})")
        if self.finished:
            raise RuntimeError("the engine has finished its replay; make a new one")
        times = np.asarray(times, dtype=np.int64)
        columns = [np.asarray(column, dtype=np.int64) for column in (s, p, o)]
        count = len(times)
        if not count:
            return
        first_number = target.pushed + 1
        target.pushed += count
        numbers = np.asarray(lines, dtype=np.int64) if lines is not None else None
        name = source or target.iri

        def where(row: int) -> tuple[str, int]:
            return (name, int(numbers[row]) if numbers is not None else first_number + row)

        if not target.windows or not all(getattr(shared.window, "columnar", False) for shared in target.windows):
            for row, (stamp, *triple) in enumerate(zip(times.tolist(), *(c.tolist() for c in columns))):
                self._accept(target, stamp, tuple(triple), where(row))
            return
        watermark = self.gate.watermark
        behind = np.flatnonzero(times < watermark).tolist() if watermark is not None else []
        still_open = None
        if behind:  # (a window still to be reported may hold an element older than the watermark)
            still_open = np.ones(count, dtype=bool)
            for row in behind:
                still_open[row] = any(shared.view.accepts(int(times[row])) for shared in target.windows)
        taken, set_aside = self.gate.judge_many(times, still_open)
        for row, reason in set_aside:
            self._reject(where(row), reason)
        for row in behind:  # taken late: straight into the windows that still hold it, as `_accept` does
            if taken[row]:
                taken[row] = False
                stamp, triple = int(times[row]), tuple(int(column[row]) for column in columns)
                target.note(stamp)
                for shared in list(target.windows):
                    if shared.view.accepts(stamp):
                        self._offer(shared, stamp, triple)
        if not taken.all():
            times = times[taken]
            columns = [column[taken] for column in columns]
            if not len(times):
                return
        target.note(int(times.min()))
        target.note(int(times.max()))
        self._column_pending.setdefault(target.iri, []).append((times, *columns))

    def _take_columns(self, watermark: int) -> bool:
        """Elements pushed as columns with a timestamp before the watermark go to their windows
        (a column window keeps an element until the first boundary after it). Any taken?"""
        import numpy as np

        taken = False
        for iri, chunks in list(self._column_pending.items()):
            stream = self._streams.get(iri)
            times = np.concatenate([chunk[0] for chunk in chunks]) if len(chunks) > 1 else chunks[0][0]
            columns = ([np.concatenate([chunk[k] for chunk in chunks]) for k in (1, 2, 3)] if len(chunks) > 1
                       else list(chunks[0][1:]))
            now = times < watermark
            if not now.any():
                if len(chunks) > 1:
                    self._column_pending[iri] = [(times, *columns)]
                continue
            taken = True
            if now.all():
                del self._column_pending[iri]
                ready = (times, *columns)
            else:
                later = ~now
                self._column_pending[iri] = [(times[later], *(column[later] for column in columns))]
                ready = (times[now], *(column[now] for column in columns))
            if stream is not None:
                for shared in list(stream.windows):
                    shared.window.offer_columns(*ready)
        return taken

    def _reject(self, where: tuple[str, int], reason: str) -> None:
        self.rejected.append(Rejected(where[0], where[1], reason))

    def _accept(self, stream: Stream, timestamp: int, triple: Triple, where: tuple[str, int]) -> None:
        """Take one element (`gate.judge`): into the pending heap or, older than the watermark, straight
        into the windows still to be reported that hold it; or set it aside in `rejected`."""
        watermark = self.gate.watermark
        takers = None
        still_open = True
        if watermark is not None and timestamp < watermark:
            takers = [shared for shared in stream.windows if shared.view.accepts(timestamp)]
            still_open = bool(takers) or not stream.windows
        problem = self.gate.judge(timestamp, still_open)
        if problem is not None:
            self._reject(where, problem)
            return
        if self.explanations is not None:
            self.explanations.accepted(self, stream.iri, timestamp, triple, where)
        stream.note(timestamp)
        if takers is not None:
            for shared in takers:
                self._offer(shared, timestamp, triple)
            return
        self._sequence += 1
        heapq.heappush(self._pending, (timestamp, self._sequence, stream.iri, triple))

    def _offer(self, shared: SharedWindow, timestamp: int, triple: Triple) -> None:
        window = shared.window
        if isinstance(window, CountingWindow):
            before = window.committed
            shared.view.offer(timestamp, triple)
            if window.committed != before:
                for name in sorted(shared.readers, key=self._order):
                    query = self._queries[name]
                    if query.tuple_driven:
                        self._report(query, timestamp)
        else:
            shared.view.offer(timestamp, triple)

    def _order(self, name: str) -> int:
        return list(self._queries).index(name)

    def gap_problem(self, timestamp: int) -> str | None:
        """Why an element (or a watermark) at `timestamp` is too far from the current time (the
        watermark, or the latest timestamp taken) to be taken, or None (`max_gap`, in windows of
        the smallest STEP or COMPUTE EVERY of the time-driven queries; `rsp_plugin.core.limits`).
        Ahead, it would make every window in between be reported; behind (while no window that
        would hold it has been reported), it would move the start of the timeline back as far.
        A replay driver asks before it moves the watermark to a timestamp it read."""
        return self.gate.far_from_now(timestamp)

    def _background_triples(self, query: ContinuousQuery) -> tuple:
        """`Datasets.background_triples` (the Spark plan reads it here)."""
        return self.datasets.background_triples(query)

    def _gap_changed(self) -> None:
        """The gate's gap bound, after a query came or went (`Schedule.gap_unit`)."""
        unit = self.schedule.gap_unit
        self.gate.gap = Gap(self.max_gap, unit) if self.max_gap is not None and unit is not None else None

    # time -------------------------------------------------------------------------------------

    def advance_to(self, watermark: int, *, collect: bool = True) -> list[QueryResult]:
        """Move the watermark: take the elements older than it and make every report with tau <= it.

        Returns every report made since the last call, those a `push` made too (tuple
        windows report as their n-th element arrives, a late element may complete one);
        `collect=False`: none (they went to the subscribers; nothing is held meanwhile)."""
        reports = self.advance(watermark)
        if collect:
            return list(reports)
        for _ in reports:
            pass
        return []

    def advance(self, watermark: int) -> Iterator[QueryResult]:
        """`advance_to`, each report handed out as it is made (go through to the end: the
        watermark moves when the last report is made)."""
        if self._column_pending:
            self._take_columns(watermark)
        pending = self._pending
        schedule = self.schedule
        instant, due = schedule.next_due(watermark, pending[0][0] if pending else None)
        yield from self._handed_out()
        while True:
            if pending and pending[0][0] < watermark and (instant is None or pending[0][0] < instant):
                timestamp, _, iri, triple = heapq.heappop(pending)
                stream = self._streams.get(iri)
                if stream is not None:
                    fresh = False
                    for shared in list(stream.windows):
                        fresh |= shared.window.first_timestamp is None
                        self._offer(shared, timestamp, triple)
                    if fresh or schedule.reports_on_change():  # a query may start (or need to) report earlier
                        instant, due = schedule.next_due(watermark, pending[0][0] if pending else None)
                if self._emitted:  # (a tuple window reported)
                    yield from self._handed_out()
                continue
            if instant is not None and instant <= watermark:
                for query in due:
                    self._report(query, instant)
                yield from self._handed_out()
                instant, due = schedule.next_due(watermark, pending[0][0] if pending else None)
                continue
            break
        if self.gate.watermark is None or watermark > self.gate.watermark:
            self.gate.watermark = watermark
        if self.keeper.due():
            self.forget_unreachable()
        yield from self._handed_out()

    def _handed_out(self) -> Iterator[QueryResult]:
        """The reports made and not handed out yet (then none are held here)."""
        while self._emitted:
            emitted, self._emitted = self._emitted, []
            yield from emitted

    # memory ---------------------------------------------------------------------------------------

    def live_terms(self):
        """Every term id the engine can still reach: pending input, windows and what they derive,
        static graphs, the queries' R2S memory, and the `term_roots`."""
        return chain.from_iterable([*live_parts(self), *(root.live_terms() for root in self.term_roots)])

    def forget_unreachable(self) -> int:
        """Make the dictionary forget every term nothing can reach (unless pinned); how many it forgot.
        Called by `advance_to` when the dictionary grew enough (`forgetting`)."""
        return self.keeper.forget(live_parts(self))

    def finish(self, *, max_rounds: int = 1000, collect: bool = True) -> list[QueryResult]:
        """End a replay: every element is taken, and each query reports up to the last tau whose
        windows still reach the last element of their streams (DESIGN.md, "Time").

        Streams made by REGISTER STREAM queries grow while this runs; it goes on until
        nothing is left to take or report (at most `max_rounds` rounds, against a query
        that feeds itself). Returns the reports (`collect=False`: none, as `advance_to`).
        """
        reports = self.finishing(max_rounds=max_rounds)
        if collect:
            return list(reports)
        for _ in reports:
            pass
        return []

    def finishing(self, *, max_rounds: int = 1000) -> Iterator[QueryResult]:
        """`finish`, each report handed out as it is made (go through to the end)."""

        def last_of(iri):
            stream = self._streams.get(iri)
            return stream.last_timestamp if stream is not None else None

        schedule = self.schedule
        for _ in range(max_rounds):
            targets = schedule.cap_at_replay_end(last_of)
            if self._pending:
                targets.append(max(timestamp for timestamp, *_ in self._pending) + 1)
            for chunks in self._column_pending.values():
                targets.append(max(int(chunk[0].max()) for chunk in chunks) + 1)
            if not targets:
                break
            yield from self.advance(max(targets))
            if not self._pending and not self._column_pending and schedule.nothing_due():
                schedule.cap_at_replay_end(last_of)  # a derived stream may have moved an end
                if schedule.nothing_due():
                    break
        self.finished = True

    # evaluation -----------------------------------------------------------------------------------

    def _report(self, query: RegisteredQuery, tau: int) -> None:
        query.last_instant = tau
        for _, shared in query.windows:
            shared.view.advance(tau)
        if query.policy is ReportPolicy.NON_EMPTY_CONTENT and all(
                shared.window.is_empty() for _, shared in query.windows):
            return
        if query.policy is ReportPolicy.ON_CONTENT_CHANGE:
            versions = tuple(getattr(shared.window, "version", None) for _, shared in query.windows)
            if versions == getattr(query, "seen_versions", None):
                return
            query.seen_versions = versions
        try:
            budget = Budget(self.max_eval_ms, self.max_solutions)
            answer = query.evaluator.evaluate(query.snapshot(), tau, budget)
        except Exception as error:  # the evaluator reports its own failures; anything else too
            answer = Answer(query.query.form, error=f"{type(error).__name__}: {error}")
        if answer.cut is not None:  # reported at this window (a result with "cut"); the next go on
            self.errors.append(f"{query.query.filename}: query {query.name} at t={tau}: {answer.error}; "
                               f"its report is marked \"cut\" and the stream goes on")
        elif answer.error is not None:  # reported at this window (a result with "error"); the next go on
            self.errors.append(f"query {query.name} at t={tau}: evaluation failed: {answer.error}")
        query.evaluations += 1
        answer = query.stream.report(answer)
        result = QueryResult(query.name, tau, answer, self.terms)
        if query.query.output_stream is not None and answer.form == "CONSTRUCT":
            stream = self._streams.get(query.query.output_stream)
            if stream is not None:
                for triple in answer.triples:
                    stream.pushed += 1
                    self._accept(stream, tau, triple, (stream.iri, stream.pushed))
        if self._collect:
            self._results.append(result)
        query.deliver(result)
        for callback in self._callbacks:
            callback(result)
        self._emitted.append(result)

    # observing ------------------------------------------------------------------------------------

    def window_graph(self, query: str | RegisteredQuery, at: int | None = None, *, window: str | None = None):
        """What a query reads now, as a read-only rdflib Graph over the engine's indexes (no copy):
        its windows (their materialization under ENTAILMENT / RULES) and FROM graphs, or its named
        window / graph `window`. See `rsp_plugin.query.graphs`."""
        from ..query.graphs import window_graph

        registered = query if isinstance(query, RegisteredQuery) else self._queries.get(str(query))
        if registered is None:
            raise KeyError(f"no query named {query!r} is registered")
        return window_graph(registered, self.cache, self.watermark, at, window)

    def explain(self, query: str | RegisteredQuery, t: int, binding_or_triple=None) -> dict:
        """Why a row ({variable: term}) or a CONSTRUCT triple is in the latest report (at `t`) of
        `query`: the matches of its pattern down to stream elements, graphs, entailments and rule
        derivations, as plain data. Needs `RSPEngine(explain=True)` (`rsp_plugin/query/explain.py`)."""
        from ..query.explain import explain_answer

        name = query.name if isinstance(query, RegisteredQuery) else str(query)
        return explain_answer(self, name, t, binding_or_triple)

    def subscribe(self, callback: Callable[[QueryResult], None]) -> None:
        """Call `callback(result)` for every report of every query."""
        self._callbacks.append(callback)

    def __getstate__(self):
        """All of it (windows, materializations, R2S memory) but the subscribers: they are the
        caller's code, not state; subscribe again after a restore (`rsp_plugin.runtime.state`)."""
        state = dict(self.__dict__)
        state["_emitted"] = list(self._emitted)
        state["_callbacks"] = []
        return state

    def results(self) -> Iterator[QueryResult]:
        """Reports of all queries made since the last call (collected from the first call on)."""
        self._collect = True
        while self._results:
            yield self._results.popleft()


__all__ = ["RSPEngine", "RegisteredQuery", "TimestampedGraph"]
