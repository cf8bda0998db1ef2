"""The micro-batch driver: what `foreachBatch` calls with each micro-batch of `(stream, s, p, o, ts, rejected)` rows.

    driver = MicroBatchDriver(engine, sink, streams=["http://ex/s"])
    df.writeStream.foreachBatch(driver).start()

Per micro-batch: the rows come over as Arrow (`toArrow`), their terms are
encoded in bulk (`rsp_plugin.columnar.encode`: one dictionary lookup per distinct
term, numpy for the rows), and they go into the `RSPEngine` as columns
(`push_columns`, the batch path), in arrival order; no row is a Python object
on the way. The watermark follows event time: before the first element with a
timestamp ts later than the watermark the engine advances to ts - delay, so
every report up to it is made, as the local replay does; an element older than
the watermark is still taken while a window that will hold it is not reported,
and is late otherwise (the engine sets it aside). Several streams are merged by
time, as the local replay merges its files: an element is taken only once
every stream has one pending (Spark's "min" watermark policy), so a batch of a
fast stream waits for the others.

Dead letters (rows of the source that could not be read) and late elements go
to the dead-letter output and are counted. A `batch_id` seen before is a no-op:
Spark re-runs the last batch after a restart when it had not committed it, and
its results were written already. With a `StateStore`, the driver's state (the
engine with its windows, materialization and annotations; what is pending; the
sinks' positions) is saved before the first batch and after every batch, and a
new driver on the same store goes on from there, its outputs cut back to where
that state left them (a batch written but not saved is written again).
"""

from __future__ import annotations

import sys
import time
from collections import deque
from dataclasses import dataclass, field

from ..runtime.engine import RSPEngine
from .checkpoint import StateStore
from .sinks import DeadLetters, Sink


@dataclass
class BatchReport:
    """What one micro-batch did: the progress line's figures."""

    batch_id: int
    rows: int = 0
    set_aside: int = 0
    results: int = 0
    seconds: float = 0.0
    driver_seconds: float = 0.0
    watermark: int | None = None
    pending: int = 0
    skipped: bool = False

    def line(self) -> str:
        if self.skipped:
            return f"batch {self.batch_id}: seen before (a restart re-runs it); nothing to do"
        rate = f", {self.rows / self.seconds:,.0f} rows/s" if self.seconds > 0 and self.rows else ""
        waiting = f", {self.pending:,} waiting for the other streams" if self.pending else ""
        return (f"batch {self.batch_id}: {self.rows:,} rows in, {self.set_aside:,} set aside, "
                f"{self.results:,} results out, {self.seconds:.2f} s{rate} (engine {self.driver_seconds:.2f} s), "
                f"watermark {self.watermark}{waiting}")


@dataclass
class DriverState:
    """Everything a restarted driver needs; stored whole (`rsp_plugin.runtime.state`) in the checkpoint after each batch.
    The engine's subscribers are not stored: the collector is subscribed again on load."""

    engine: RSPEngine
    streams: list[str]
    collector: _Collector
    last_batch: int = -1
    pending: dict[int, deque] = field(default_factory=dict)
    rows: int = 0
    set_aside: int = 0
    results: int = 0
    rejected_seen: int = 0
    errors_seen: int = 0
    finished: bool = False
    sink_position: object = None
    dead_position: object = None

    def live_terms(self):
        """The ids waiting in the queues (a dictionary that forgets keeps them)."""
        return (term for queue in self.pending.values() for chunk in queue for column in chunk[1:]
                for term in column.tolist())


class Progress:
    """A progress line per micro-batch on stderr, with a bar when the total is known (a replay of files)."""

    def __init__(self, err=None, total_rows: int | None = None, width: int = 24):
        self.err = err
        self.total_rows = total_rows
        self.width = width

    def report(self, report: BatchReport, rows_so_far: int) -> None:
        line = report.line()
        if self.total_rows and not report.skipped:
            done = min(1.0, rows_so_far / self.total_rows)
            filled = int(done * self.width)
            line += f"  [{'#' * filled}{'.' * (self.width - filled)}] {done:4.0%}"
        self.note(line)

    def note(self, text: str) -> None:
        err = self.err or sys.stderr
        err.write(f"rsp-plugin: {text}\n")
        err.flush()


class _Collector:
    """Subscribed to the engine: every report, also those made while pushing (tuple windows, late data)."""

    def __init__(self):
        self.results: list = []

    def __call__(self, result) -> None:
        self.results.append(result)

    def take(self) -> list:
        taken, self.results = self.results, []
        return taken


class BatchEnds:
    """What every micro-batch driver does when a batch ends: its set-aside records and results out,
    the counts and output positions kept in `self.state`, the state saved (`save`), the batch's
    report (its latency: Spark's part and the driver's) and progress line. A driver provides
    `state`, `sink`, `dead_letters`, `progress`, `reports` and `_last_end`."""

    def _end_batch(self, batch_id: int, results: list, set_aside: list[str], report: BatchReport, started: float,
                   *, watermark, save, final: bool) -> None:
        state = self.state
        self.dead_letters.write(batch_id, set_aside)
        self.sink.write(batch_id, results)
        state.last_batch = batch_id
        state.rows += report.rows
        state.set_aside += len(set_aside)
        state.results += len(results)
        state.sink_position = self.sink.position()
        state.dead_position = self.dead_letters.position()
        save()
        report.set_aside = len(set_aside)
        report.results = len(results)
        report.watermark = watermark
        now = time.perf_counter()
        report.driver_seconds = now - started
        report.seconds = now - self._last_end
        self._last_end = now
        if final:
            if self.progress is not None:
                self.progress.note(f"replay finished: {state.rows:,} rows in, {state.set_aside:,} set aside, "
                                   f"{state.results:,} results out")
            return
        self._done(report)

    @property
    def batch_seconds(self) -> list[float]:
        """Each micro-batch's latency (s): from the end of the one before (or the start) to its end."""
        return [report.seconds for report in self.reports if not report.skipped]

    def _done(self, report: BatchReport) -> None:
        self.reports.append(report)
        if self.progress is not None:
            self.progress.report(report, self.state.rows)


class MicroBatchDriver(BatchEnds):
    """`foreachBatch(driver)`: feeds the engine from micro-batches, writes results, saves its state."""

    def __init__(self, engine: RSPEngine, sink: Sink, *, streams: list[str] | None = None, delay_ms: int = 0,
                 store: StateStore | None = None, dead_letters: DeadLetters | None = None,
                 progress: Progress | None = None):
        self.sink = sink
        self.delay_ms = delay_ms
        self.store = store
        self.dead_letters = dead_letters or DeadLetters()
        self.progress = progress
        self.reports: list[BatchReport] = []
        saved = store.load() if store is not None else None
        if saved is not None:
            self.state: DriverState = saved
            saved.engine.subscribe(saved.collector)  # subscribers are not state: subscribe again
            self.sink.rewind(saved.sink_position)
            self.dead_letters.rewind(saved.dead_position)
        else:
            order = list(streams) if streams is not None else list(engine.streams)
            collector = _Collector()
            engine.subscribe(collector)
            self.state = DriverState(engine, order, collector, pending={lane: deque() for lane in range(len(order))})
            engine.term_roots.append(self.state)
            if store is not None:  # where the outputs begin: a run killed inside its first batch is cut back here
                self.state.sink_position = self.sink.position()
                self.state.dead_position = self.dead_letters.position()
                store.save_start(self.state)
        self.resumed = saved is not None
        self._last_end = time.perf_counter()

    def __repr__(self) -> str:
        return (f"<MicroBatchDriver streams={len(self.state.streams)} last_batch={self.state.last_batch} "
                f"rows={self.state.rows} results={self.state.results}>")

    @property
    def engine(self) -> RSPEngine:
        """The engine being fed (after a restart: the one restored from the checkpoint)."""
        return self.state.engine

    # foreachBatch ---------------------------------------------------------------------------------

    def __call__(self, batch_df, batch_id: int) -> None:
        if batch_id <= self.state.last_batch:
            self._done(BatchReport(batch_id, skipped=True, watermark=self.engine.watermark))
            return
        self.process(batch_df.toArrow(), batch_id)

    def process(self, table, batch_id: int) -> BatchReport:
        """One micro-batch as an Arrow table with the source's columns."""
        if batch_id <= self.state.last_batch:
            report = BatchReport(batch_id, skipped=True, watermark=self.engine.watermark)
            self._done(report)
            return report
        if self.state.finished:
            raise RuntimeError("the replay has finished; new data needs a new checkpoint location")
        started = time.perf_counter()
        report = BatchReport(batch_id, rows=table.num_rows)
        dead = self._split(table)
        self._release(final=False)
        self._commit(batch_id, self.state.collector.take(), dead, report, started)
        return report

    def finish(self) -> list:
        """A replay ends: take everything pending, then the engine's last windows (`RSPEngine.finish`)."""
        state = self.state
        if state.finished:
            return []
        started = time.perf_counter()
        self._release(final=True)
        state.engine.finish(collect=False)
        results = state.collector.take()
        state.finished = True
        report = BatchReport(state.last_batch)
        self._commit(state.last_batch, results, [], report, started, final=True)
        return results

    # rows in -------------------------------------------------------------------------------------

    def _split(self, table) -> list[str]:
        """Dead letters out; the rest encoded in bulk (columns of ids, no row in Python) and queued
        per stream as column chunks. Returns the dead letters."""
        import numpy as np
        import pyarrow.compute as pc

        from ..columnar.encode import encode

        dead: list[str] = []
        if table.num_rows == 0:
            return dead
        names = table.column_names
        if "rejected" in names:
            rejected = table.column("rejected")
            if rejected.null_count < table.num_rows:
                mask = pc.is_valid(rejected)
                dead.extend(table.filter(mask).column("rejected").to_pylist())
                table = table.filter(pc.invert(mask))
        if table.num_rows == 0:
            return dead
        terms = self.engine.terms
        columns = (np.asarray(table.column("ts").to_numpy(), dtype=np.int64),
                   encode(table.column("s"), terms), encode(table.column("p"), terms), encode(table.column("o"), terms))
        pending = self.state.pending
        for lane, rows, stray in self._lanes(table):
            if stray is not None:
                count = table.num_rows if rows is None else len(rows)
                dead.extend(f"{stray}: stream <{stray}> is not one of the query's sources; set aside"
                            for _ in range(count))
                continue
            pending[lane].append(columns if rows is None else tuple(column[rows] for column in columns))
        return dead

    def _lanes(self, table):
        """(lane, rows or None for all, None) per source in the batch, rows in arrival order;
        (None, rows, iri) for a stranger. A lane is one source: the `lane` column that `run`
        adds says which, else the stream IRI does (one source per stream)."""
        import numpy as np
        import pyarrow.compute as pc

        streams = self.state.streams
        if "lane" in table.column_names:
            codes = np.asarray(table.column("lane").to_numpy(), dtype=np.int64)
            present = np.unique(codes).tolist()
            labels = {lane: (lane, None) if 0 <= lane < len(streams) else (None, f"lane {lane}") for lane in present}
        else:
            encoded = pc.dictionary_encode(table.column("stream").combine_chunks())
            names = encoded.dictionary.to_pylist()
            codes = encoded.indices.to_numpy(zero_copy_only=False)
            present = list(range(len(names)))
            labels = {code: (streams.index(iri), None) if iri in streams else (None, iri)
                      for code, iri in enumerate(names)}
        if len(present) == 1:
            lane, stray = labels[present[0]]
            yield lane, None, stray
            return
        for code in present:
            lane, stray = labels[code]
            yield lane, np.flatnonzero(codes == code), stray

    def _release(self, *, final: bool) -> None:
        """Feed the engine: one source in arrival order, several merged by time (as heapq.merge does:
        the lane with the smallest head gives its rows up to the next lane's head), the merged rows
        pushed as columns (`rsp_plugin.columnar.replay.feed`)."""
        import numpy as np

        from ..columnar.replay import feed

        state = self.state
        pending = state.pending
        streams = state.streams
        queues = {}
        for lane in range(len(streams)):
            chunks = pending[lane]
            if chunks:
                queues[lane] = [np.concatenate(column) for column in zip(*chunks)] if len(chunks) > 1 \
                    else list(chunks[0])
        if len(streams) == 1:
            if 0 in queues:
                pending[0].clear()
                feed(self.engine, streams, np.zeros(len(queues[0][0]), dtype=np.int64), *queues[0],
                     delay=self.delay_ms)
            return
        heads = {lane: 0 for lane in queues}
        runs = []
        while True:
            live = [lane for lane in queues if heads[lane] < len(queues[lane][0])]
            if not live or (not final and len(live) < len(streams)):
                break
            order = sorted((int(queues[lane][0][heads[lane]]), lane) for lane in live)
            chosen = order[0][1]
            times = queues[chosen][0]
            start = heads[chosen]
            if len(order) > 1:
                bound_time, bound_lane = order[1]
                stop_mask = (times[start:] > bound_time) | ((times[start:] == bound_time) & (chosen >= bound_lane))
                taken = int(np.argmax(stop_mask)) if stop_mask.any() else len(times) - start
            else:
                taken = len(times) - start
            runs.append((chosen, start, start + taken))
            heads[chosen] = start + taken
        for lane in range(len(streams)):
            if lane in queues:
                left = heads[lane]
                pending[lane].clear()
                if left < len(queues[lane][0]):
                    pending[lane].append(tuple(column[left:] for column in queues[lane]))
        if runs:
            lanes = np.concatenate([np.full(stop - start, lane, dtype=np.int64) for lane, start, stop in runs])
            columns = [np.concatenate([queues[lane][k][start:stop] for lane, start, stop in runs]) for k in range(4)]
            feed(self.engine, streams, lanes, *columns, delay=self.delay_ms)

    # results out ---------------------------------------------------------------------------------

    def _commit(self, batch_id: int, results: list, dead: list[str], report: BatchReport, started: float,
                final: bool = False) -> None:
        state = self.state
        engine = state.engine
        late = [str(record) for record in engine.rejected[state.rejected_seen:]]
        state.rejected_seen = len(engine.rejected)
        errors = engine.errors[state.errors_seen:]
        state.errors_seen = len(engine.errors)
        if self.progress is not None:
            for error in errors:
                self.progress.note(error)
        report.pending = sum(len(chunk[0]) for queue in state.pending.values() for chunk in queue)

        def save() -> None:
            if self.store is not None:
                self.store.save(batch_id, state)

        self._end_batch(batch_id, results, dead + late, report, started, watermark=engine.watermark, save=save,
                        final=final)
