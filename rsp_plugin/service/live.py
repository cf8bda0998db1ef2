"""The engine behind the service: one `RSPEngine`, worked by one thread, watched by many readers.

Every engine call (register, push, advance) runs on the engine's own thread, in
the order the requests came, so the engine needs no lock and the event loop stays
free for readers. A report is turned into its JSON value once, numbered per
query (`seq`), kept in a short history, and handed to the readers on the loop.

Time: the watermark is the oldest of the latest timestamps of the streams the
queries read (a stream no element has reached yet holds it back too), so each
client can push its own stream in its own time order and nothing is late;
`advance(t)` moves it on by hand (a stream gone quiet), `finish()` ends a
replay as the command line does.
Documents without times of their own are seen at the request's `?t=`, else at
their arrival (the wall clock, in ms).

Nothing a client sends makes the engine read a file or open a URL: FROM and
FROM NAMED graphs must be configured or uploaded, RULES programs likewise,
SERVICE is refused.
"""

from __future__ import annotations

import asyncio
import json
import queue
import threading
import time
from collections import deque
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from ..core.admission import beyond_reach
from ..core.errors import LocatedError, QuerySyntaxError
from ..io.formats import Rejected
from ..query.model import ReportPolicy
from ..query.syntax import parse_query
from ..runtime.engine import RSPEngine
from .bodies import body_format, read_body
from .settings import ServiceSettings


class ServiceError(Exception):
    """A client's mistake: an HTTP status and a message (one line, located when it is in their text)."""

    def __init__(self, status: int, message: str, **detail):
        super().__init__(message)
        self.status = status
        self.message = message
        self.detail = detail


class Meter:
    """Counts per wall-clock second over the last `seconds` (a rate and a plot's points)."""

    def __init__(self, seconds: int = 120):
        self.seconds = seconds
        self.buckets: deque[list] = deque()
        self.total = 0

    def add(self, count: int, now: float | None = None) -> None:
        second = int(now if now is not None else time.time())
        self.total += count
        if self.buckets and self.buckets[-1][0] == second:
            self.buckets[-1][1] += count
        else:
            self.buckets.append([second, count])
            while self.buckets and self.buckets[0][0] <= second - self.seconds:
                self.buckets.popleft()

    def rate(self, now: float | None = None, over: int = 5) -> float:
        """Per second over the last `over` complete seconds."""
        second = int(now if now is not None else time.time())
        return sum(count for at, count in self.buckets if second - over <= at < second) / over

    def series(self, now: float | None = None) -> list[list[int]]:
        second = int(now if now is not None else time.time())
        return [[at, count] for at, count in self.buckets if at > second - self.seconds]


@dataclass
class StreamState:
    iri: str
    pushes: int = 0
    latest: int | None = None
    #: when an element was last taken (or the stream registered), time.monotonic()
    heard: float = field(default_factory=time.monotonic)
    triples: Meter = field(default_factory=Meter)
    rejected: int = 0
    recent_rejected: deque = field(default_factory=lambda: deque(maxlen=20))

    def info(self) -> dict:
        return {"iri": self.iri, "triples": self.triples.total, "rate": self.triples.rate(),
                "latest": self.latest, "rejected": self.rejected,
                "recent_rejected": [str(record) for record in self.recent_rejected]}


def json_bytes(value) -> bytes:
    """A JSON value as UTF-8 bytes that always encode: text that holds a lone surrogate (an escape such as
    \\uD800 a reader let through) is written as JSON's own escape for it instead of failing the answer."""
    return json.dumps(value, ensure_ascii=False, allow_nan=False, separators=(",", ":")).encode("utf-8",
                                                                                              "backslashreplace")


def text_bytes(text: str) -> bytes:
    """Text (N-Triples) as UTF-8 bytes that always encode: a lone surrogate as its \\uXXXX escape."""
    return text.encode("utf-8", "backslashreplace")


@dataclass
class QueryState:
    name: str
    text: str
    registered: object
    seq: int = 0
    #: the latest reports, (seq, JSON bytes), within `history` reports and `history_bytes` bytes
    history: deque = field(default_factory=deque)
    history_bytes: int = 0
    results: Meter = field(default_factory=Meter)
    latencies: deque = field(default_factory=lambda: deque(maxlen=200))

    def keep(self, seq: int, data: bytes, most: int, most_bytes: int) -> None:
        """Keep a report for late readers; forget the oldest beyond the bounds (the latest is always kept)."""
        self.history.append((seq, data))
        self.history_bytes += len(data)
        while len(self.history) > 1 and (len(self.history) > most or self.history_bytes > most_bytes):
            self.history_bytes -= len(self.history.popleft()[1])

    def info(self) -> dict:
        query = self.registered.query
        latencies = sorted(self.latencies)
        return {
            "name": self.name, "query": self.text, "form": query.form, "r2s": query.r2s.value,
            "variables": [str(v) for v in (query.algebra.algebra.get("PV") or ())] if query.form == "SELECT" else [],
            "windows": [{"stream": c.stream, "window": repr(c.window), "name": c.name} for c in query.windows],
            "entailment": query.entailment, "rules": query.rules,
            "notes": list(query.notes),  # an undeclared well-known prefix and what it was read as
            "evaluations": self.registered.evaluations, "results": self.seq, "rate": self.results.rate(),
            "latency_ms": {"last": self.latencies[-1] if self.latencies else None,
                           "p50": latencies[len(latencies) // 2] if latencies else None,
                           "p99": latencies[min(len(latencies) - 1, int(len(latencies) * 0.99))] if latencies else None},
        }


class EngineThread:
    """One daemon thread that runs the engine's calls in the order they came. A daemon, and `close`
    waits only so long: a process told to stop (SIGTERM) ends within seconds even while a long
    evaluation runs, instead of waiting for it (the engine keeps nothing that must be saved)."""

    def __init__(self):
        self.calls: queue.SimpleQueue = queue.SimpleQueue()
        self.closed = False
        self.thread = threading.Thread(target=self._work, name="rsp-engine", daemon=True)
        self.thread.start()

    def submit(self, function, *args) -> Future:
        future: Future = Future()
        if self.closed:
            future.set_exception(ServiceError(503, "the service is stopping"))
        else:
            self.calls.put((future, function, args))
        return future

    def _work(self) -> None:
        while True:
            call = self.calls.get()
            if call is None:
                return
            future, function, args = call
            if not future.set_running_or_notify_cancel():  # the request went away while it waited
                continue
            try:
                result = function(*args)
            except BaseException as error:  # handed to the request that asked
                future.set_exception(error)
            else:
                future.set_result(result)

    def close(self, wait: float) -> None:
        """Take no more calls; wait at most `wait` seconds for the one running."""
        self.closed = True
        self.calls.put(None)
        self.thread.join(wait)


class LiveEngine:
    """The service's engine: streams, queries, pushes and reports, on one worker thread."""

    def __init__(self, settings: ServiceSettings, *, explainer: Callable | None = None):
        self.settings = settings
        # explanations kept only when served; an element too far from the stream's time is set aside
        self.engine = RSPEngine(explain=explainer is not None, max_gap=settings.max_gap)
        self.engine.subscribe(self._on_result)
        self.worker = EngineThread()
        self.streams: dict[str, StreamState] = {}
        self.queries: dict[str, QueryState] = {}
        self.graphs: set[str] = set()
        self.rules: set[str] = set()
        self.results = Meter()
        self.finished = False
        #: called on the event loop with (query name, seq, report as JSON bytes) for every report
        self.listeners: list[Callable[[str, int, bytes], None]] = []
        #: the streams the queries read (None: to be worked out again, after a registration)
        self._read: set[str] | None = None
        #: the earliest time of an element taken (the reference of `--max-gap` before the first report)
        self._first: int | None = None
        #: `explainer(engine, query_name, t, item)` -> an explanation (a JSON value) or None
        self.explainer = explainer
        self.loop: asyncio.AbstractEventLoop | None = None
        self._request_started: float | None = None
        for iri, path in settings.graphs.items():
            self.engine.add_graph(iri, path)
            self.graphs.add(iri)
        for path in settings.background:
            self.engine.add_background(path)
        for iri, path in settings.rules.items():
            self.engine.add_rules(iri, Path(path).read_text(encoding="utf-8"))
            self.rules.add(iri)

    async def call(self, function, *args):
        """Run `function(*args)` on the engine's thread, after every call made before it."""
        self.loop = asyncio.get_running_loop()
        return await asyncio.wrap_future(self.worker.submit(function, *args))

    def close(self, wait: float = 1.0) -> None:
        self.worker.close(wait)

    # streams ----------------------------------------------------------------------------------

    def register_stream(self, iri: str) -> tuple[dict, bool]:
        created = iri not in self.streams
        if created:
            self.engine.register_stream(iri)
            self.streams[iri] = StreamState(iri)
        return self.streams[iri].info(), created

    def unregister_stream(self, iri: str) -> None:
        self._stream(iri)
        try:
            self.engine.unregister_stream(iri)
        except ValueError as error:
            raise ServiceError(409, str(error)) from None
        del self.streams[iri]

    def stream_info(self, iri: str) -> dict:
        return self._stream(iri).info()

    def _stream(self, iri: str) -> StreamState:
        state = self.streams.get(iri)
        if state is None:
            raise ServiceError(404, f"no stream <{brief(iri, 200)}> is registered (registered: "
                                    f"{_some(f'<{known}>' for known in self.streams)})")
        return state

    def push(self, iri: str, data: bytes, content_type: str | None, fmt: str | None, t: int | None) -> dict:
        """Read a body into elements, push the good ones, move the watermark; the bad lines, located."""
        started = time.perf_counter()
        self._request_started = started
        state = self._stream(iri)
        if self.finished:
            raise ServiceError(409, "the replay has finished (POST /finish): the engine takes no more elements")
        try:
            kind = body_format(content_type, fmt)
        except ValueError as error:
            raise ServiceError(415, str(error)) from None
        if t is not None:
            self._check_time(t, "?t=")
        state.pushes += 1
        name = f"<{iri}> push {state.pushes}"
        timestamp = t if t is not None else int(time.time() * 1000)
        return self.take(iri, read_body(data, kind, self.engine.terms, timestamp, name), name, started)

    def take(self, iri: str, read, source: str, started: float | None = None) -> dict:
        """Push what was read (`ReadBody`: a request's body, or a broker's messages), move the watermark;
        the bad lines, located. On the engine's thread."""
        started = time.perf_counter() if started is None else started
        self._request_started = started
        state = self._stream(iri)
        if self.finished:
            raise ServiceError(409, "the replay has finished (POST /finish): the engine takes no more elements")
        far = self._too_far(read.elements)
        if far:
            read.elements = [element for element in read.elements if element.line not in far]
        before = len(self.engine.rejected)
        if read.elements:
            self.engine.push(iri, read.elements, source=source)
            # time follows only what admission took: an element set aside (too far ahead, late) moves nothing
            set_aside = {record.line for record in self.engine.rejected[before:] if record.filename == source}
            taken = [element.time_point for element in read.elements if element.line not in set_aside]
            if taken:
                state.heard = time.monotonic()
            if taken and (state.latest is None or max(taken) > state.latest):
                state.latest = max(taken)
            if taken and (self._first is None or min(taken) < self._first):
                self._first = min(taken)
            state.triples.add(len(taken))
        late = [*(Rejected(source, line, reason) for line, reason in far.items()), *self.engine.rejected[before:]]
        self._advance_to(self._watermark())
        del self.engine.rejected[:]
        del self.engine.errors[:-100]  # evaluation failures: the last ones are enough to show
        for record in (*read.rejected, *late):
            state.rejected += 1
            state.recent_rejected.append(record)
        self._request_started = None
        return {
            "accepted": len(read.elements) - len(late) + len(far),
            "rejected": [{"line": r.line, "reason": r.reason} for r in read.rejected],
            "late": [{"line": r.line, "reason": r.reason} for r in late],
            "watermark": self.engine.watermark,
            "took_ms": round((time.perf_counter() - started) * 1000, 3),
        }

    def _watermark(self) -> int | None:
        """The oldest latest timestamp of the streams queries read (a stream not fed yet holds time back:
        its elements would be late); with no query reading a pushed stream, of the streams fed. With
        `--idle-timeout S`, a stream that has taken nothing for S seconds holds nothing back (as a Flink
        source marked idle): the others' time moves on, and its own elements then older than the
        watermark are taken while a window still to be reported holds them, else listed as late."""
        if self._read is None:  # (once per change of the queries, not per push)
            produced = {state.registered.query.output_stream for state in self.queries.values()}
            self._read = {clause.stream for state in self.queries.values()
                          for clause in state.registered.query.windows if clause.stream not in produced}
        read = self._read
        if read:
            idle = self.settings.idle_timeout
            if idle is not None:
                quiet_since = time.monotonic() - idle
                speaking = [iri for iri in read if iri not in self.streams or self.streams[iri].heard > quiet_since]
                read = speaking or read  # (all quiet: nothing new came, time stays where they left it)
            latest = [self.streams[iri].latest if iri in self.streams else None for iri in read]
            return None if None in latest else min(latest)
        latest = [state.latest for state in self.streams.values() if state.latest is not None]
        return min(latest) if latest else None

    def _advance_to(self, watermark: int | None) -> None:
        if watermark is None or self.finished:
            return
        reach = self._reach()
        if reach is not None and self.engine.watermark is not None:
            # (elements taken under a coarser STEP, then a query with a finer one: the rest on later requests)
            watermark = min(watermark, reach[1])
        if self.engine.watermark is not None and watermark < self.engine.watermark:
            watermark = self.engine.watermark  # (time only moves on: a stream quiet for a while speaks again)
        # (at the same watermark too: a window that reported nothing yet may have reports due before it)
        self.engine.advance_to(watermark, collect=False)  # (the observers take each report)

    def _reach(self, first: int | None = None) -> tuple[int, int] | None:
        """(the time a request's jump is measured from, the latest time it may reach), or None (no bound).

        `--max-gap` windows past the watermark (past the first element taken, before the first report),
        fixed for the whole request: every window in between is reported, so each request walks at most
        that many, whatever steps its elements take (element by element, each within the engine's gap of
        the one before, a body could climb for ever)."""
        gap = self.engine.gap_ms
        reference = self.engine.watermark
        if reference is None:
            reference = self._first if self._first is not None else first
        return None if gap is None or reference is None else (reference, reference + gap)

    def _too_far(self, elements) -> dict[int, str]:
        """{line: why} for the elements past the request's reach (`_reach`), set aside before the engine sees them."""
        reach = self._reach(elements[0].time_point if elements else None)
        if reach is None:
            return {}
        reference, latest = reach
        gap = self.engine.gate.gap
        return {element.line: beyond_reach("timestamp", element.time_point, reference, self._from(), gap, "set aside")
                for element in elements if element.time_point > latest}

    def _from(self) -> str:
        return "the watermark" if self.engine.watermark is not None else "the first element"

    def _check_time(self, t: int, what: str) -> None:
        """A time a client names obeys the engine's bounds: a 64-bit number of ms, within the request's
        reach (`_reach`: a far jump would make every window in between be reported)."""
        if not -2 ** 63 <= t < 2 ** 63:
            raise ServiceError(400, f"{what} {brief(t)} is not a time in ms (a 64-bit integer)")
        reach = self._reach()
        if reach is not None and t > reach[1]:
            raise ServiceError(400, beyond_reach(what, t, reach[0], self._from(), self.engine.gate.gap, "refused"))

    def advance(self, t: int) -> dict:
        self._request_started = time.perf_counter()
        if self.engine.watermark is not None and t < self.engine.watermark:
            raise ServiceError(409, f"the watermark is at {self.engine.watermark} already; time only moves on")
        self._check_time(t, "watermark:")
        self._advance_to(t)
        self._request_started = None
        return {"watermark": self.engine.watermark}

    def finish(self) -> dict:
        self._request_started = time.perf_counter()
        if not self.finished:
            self.engine.finish(collect=False)
            self.finished = True
        self._request_started = None
        return {"watermark": self.engine.watermark, "finished": True}

    # static graphs and rules ----------------------------------------------------------------------

    def put_graph(self, iri: str, data: bytes, content_type: str | None, fmt: str | None) -> dict:
        from rdflib import Graph

        try:
            kind = body_format(content_type, fmt) if fmt or content_type else "ttl"
        except ValueError as error:
            raise ServiceError(415, f"graph <{brief(iri, 200)}>: {error}") from None
        if kind in ("tnt", "trig", "nq"):
            raise ServiceError(415, "a static graph is Turtle, N-Triples or JSON-LD")
        read = read_body(data, kind, self.engine.terms, 0, f"graph <{iri}>")
        if read.rejected:
            raise ServiceError(400, "the graph is not read: " + "; ".join(map(str, read.rejected[:5])),
                               rejected=[{"line": r.line, "reason": r.reason} for r in read.rejected])
        from ..core.rdfterms import key_term

        graph = Graph()
        keys = self.engine.terms.keys
        for element in read.elements:
            s, p, o = element.fact[1]
            graph.add((key_term(keys[s]), key_term(keys[p]), key_term(keys[o])))
        self.engine.add_graph(iri, graph)
        self.graphs.add(iri)
        return {"iri": iri, "triples": len(graph)}

    def put_rules(self, iri: str, text: str) -> dict:
        from ..core.errors import RuleSyntaxError
        from ..mtl.programs import parse_program

        try:
            parse_program(text, f"<rules {iri}>")
        except RuleSyntaxError as error:
            raise ServiceError(400, str(error)) from None
        except RecursionError:
            raise ServiceError(400, f"<rules {brief(iri, 200)}>:1:1: the program nests too deeply") from None
        self.engine.add_rules(iri, text)
        self.rules.add(iri)
        return {"iri": iri}

    # queries --------------------------------------------------------------------------------------

    def register_query(self, name: str | None, text: str, *, rules: str | None = None,
                       graphs: dict[str, tuple[bytes, str]] | None = None, report: str | None = None,
                       dialect: str | None = None) -> tuple[dict, str]:
        filename = f"<query {name}>" if name else "<query>"
        try:
            query = _parse(text, filename, dialect)
        except QuerySyntaxError as error:
            raise ServiceError(400, str(error)) from None
        except RecursionError:
            raise ServiceError(400, f"{filename}:1:1: the query nests too deeply") from None
        name = name or query.name
        if name is not None and name in self.queries:
            raise ServiceError(409, f"a query named {brief(name)!r} is registered already")
        if len(self.queries) >= self.settings.max_queries:
            raise ServiceError(409, f"{len(self.queries)} queries are registered, as many as the service takes "
                                    f"(--max-queries {self.settings.max_queries}): unregister one first")
        for iri, (data, fmt) in (graphs or {}).items():
            self.put_graph(iri, data, None, fmt)
        if rules is not None:
            if query.rules is None:
                raise ServiceError(400, f"{filename}:1:1: rules are given but the query names no RULES <iri>")
            self.put_rules(query.rules, rules)
        _check_reads_nothing_unknown(query, self.graphs, self.rules)
        try:
            policy = ReportPolicy(report) if report else ReportPolicy.ON_WINDOW_CLOSE
        except ValueError:
            raise ServiceError(400, f"report: expected on-window-close or non-empty-content, got {report!r}") from None
        try:
            registered = self.engine.register_query(query, name=name, report=policy)
        except LocatedError as error:  # (the query, or the RULES program it names)
            raise ServiceError(400, str(error)) from None
        except RecursionError:
            raise ServiceError(400, f"{filename}:1:1: the query or its program nests too deeply") from None
        state = QueryState(registered.name, text, registered)
        self.queries[registered.name] = state
        self._read = None
        if query.output_stream is not None and query.output_stream not in self.streams:
            self.streams[query.output_stream] = StreamState(query.output_stream)
        return state.info(), registered.name

    def unregister_query(self, name: str) -> None:
        self._query(name)
        self.engine.unregister_query(name)
        del self.queries[name]
        self._read = None

    def query_info(self, name: str) -> dict:
        return self._query(name).info()

    def _query(self, name: str) -> QueryState:
        state = self.queries.get(name)
        if state is None:
            raise ServiceError(404, f"no query named {brief(name)!r} is registered (registered: "
                                    f"{_some(repr(known) for known in self.queries)})")
        return state

    def kept_after(self, name: str, after: int) -> list[tuple[int, bytes]]:
        """The reports kept after number `after`, (seq, JSON bytes): what a reader that comes back missed."""
        return [(seq, data) for seq, data in self._query(name).history if seq > after]

    def results_page(self, name: str, after: int) -> bytes:
        """`GET .../results?after=N`: the reports kept after N, as many as `page_bytes` holds (at least one),
        with the last report's number, how many after N are no longer kept, and whether more follow."""
        state = self._query(name)
        page, size, more = [], 0, False
        for seq, data in state.history:
            if seq <= after:
                continue
            if page and size + len(data) > self.settings.page_bytes:
                more = True
                break
            page.append(data)
            size += len(data) + 1
        first = state.history[0][0] if state.history else state.seq + 1
        missed = max(0, min(first, state.seq + 1) - after - 1)
        return b'{"results":[%s],"last":%d,"missed":%d,"more":%s}' % (b",".join(page), state.seq, missed,
                                                                       b"true" if more else b"false")

    def window(self, name: str, at: int | None, window: str | None, limit: int | None):
        from ..query.graphs import WindowNotKept

        state = self._query(name)
        try:
            graph = self.engine.window_graph(state.registered, at, window=window)
        except WindowNotKept as error:
            raise ServiceError(409, str(error)) from None
        except KeyError as error:
            raise ServiceError(404, error.args[0]) from None
        limit = limit or self.settings.window_limit
        keys = self.engine.terms.keys
        store = graph.store
        triples = []
        for number, (s, p, o) in enumerate(store.content.match(None, None, None)):
            if number >= limit:
                break
            triples.append(f"{keys[s]} {keys[p]} {keys[o]} .")
        size = len(store.content)
        return {"query": name, "watermark": self.engine.watermark, "boundary": at or state.registered.last_instant,
                "size": size, "truncated": size > len(triples), "triples": sorted(triples)}

    def explain(self, name: str, t: int, item: dict):
        state = self._query(name)
        if self.explainer is None:
            return None
        return self.explainer(self.engine, state.name, t, item)

    # reports --------------------------------------------------------------------------------------

    def _on_result(self, result) -> None:
        """On the engine's thread: number, keep, meter the report; hand it to the readers on the loop."""
        state = self.queries.get(result.query)
        if state is None:
            return
        state.seq += 1
        value = {"query": result.query, "seq": state.seq, **result.to_json()}
        if self._request_started is not None:
            latency = round((time.perf_counter() - self._request_started) * 1000, 3)
            value["latency_ms"] = latency
            state.latencies.append(latency)
        data = json_bytes(value)  # once: the history, every reader and the pages share these bytes
        state.keep(state.seq, data, self.settings.history, self.settings.history_bytes)
        state.results.add(1)
        self.results.add(1)
        if self.loop is not None and self.listeners:
            self.loop.call_soon_threadsafe(self._deliver, result.query, state.seq, data)

    def _deliver(self, name: str, seq: int, data: bytes) -> None:
        for listener in list(self.listeners):
            listener(name, seq, data)

    # the whole picture --------------------------------------------------------------------------

    def stats(self) -> dict:
        now = time.time()
        triples = Meter()
        for state in self.streams.values():
            for second, count in state.triples.series(now):
                triples.add(count, second)
        return {
            "watermark": self.engine.watermark, "finished": self.finished,
            "streams": [state.info() for state in self.streams.values()],
            "queries": [state.info() for state in self.queries.values()],
            "triples_per_second": triples.series(now), "results_per_second": self.results.series(now),
            "rates": {"triples": triples.rate(now), "results": self.results.rate(now)},
        }


def _some(names, shown: int = 10) -> str:
    """The first few of many names, and how many in all (a message stays short)."""
    names = list(names)
    if not names:
        return "none"
    listed = ", ".join(brief(name, 200) for name in names[:shown])
    return listed if len(names) <= shown else f"{listed}, ... ({len(names)} in all)"


def brief(value, limit: int = 40) -> str:
    """A client's value in a message: cut when long (a message stays one short line)."""
    text = str(value)
    return text if len(text) <= limit else f"{text[:limit]}... ({len(text)} characters)"


def _parse(text: str, filename: str, dialect: str | None):
    return parse_query(text, filename, dialect=dialect or "auto")


def _check_reads_nothing_unknown(query, graphs: set[str], rules: set[str]) -> None:
    """FROM / FROM NAMED graphs and RULES must be configured or uploaded; SERVICE is refused."""
    for iri in (*query.graphs, *query.named_graphs):
        if iri not in graphs:
            place = query.places.get("query")
            raise ServiceError(400, f"{query.filename}:{place.line if place else 1}:{place.column if place else 1}: "
                                    f"graph <{iri}> is not known to the service: upload it (PUT /graphs/{{iri}}) "
                                    f"or start the service with --graph IRI=FILE; the service reads no file or URL "
                                    f"a query names")
    if query.rules is not None and query.rules not in rules:
        place = query.places.get("rules")
        raise ServiceError(400, f"{query.filename}:{place.line if place else 1}:{place.column if place else 1}: "
                                f"RULES <{query.rules}> is not known to the service: give its text (\"rules\") "
                                f"or upload it (PUT /rules/{{iri}})")
    service = _service_clause(query.algebra)
    if service is not None:
        raise ServiceError(400, f"{query.filename}:1:1: SERVICE <{service}> is refused: the service does not "
                                "query other endpoints")


def _service_clause(node, depth: int = 0):
    """The endpoint of the first SERVICE pattern in rdflib's algebra, if any."""
    if depth > 200:
        return None
    name = getattr(node, "name", None)
    if name == "ServiceGraphPattern":
        return str(node.get("term"))
    if isinstance(node, dict):
        values = node.values()
    elif isinstance(node, (list, tuple)):
        values = node
    else:
        values = [node.algebra] if hasattr(node, "algebra") and not isinstance(node, dict) else ()
    for value in values:
        found = _service_clause(value, depth + 1)
        if found is not None:
            return found
    return None


__all__ = ["LiveEngine", "Meter", "ServiceError", "brief", "json_bytes", "text_bytes"]
