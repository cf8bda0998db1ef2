"""The distributed micro-batch driver: what `foreachBatch` calls; it coordinates, the executors compute.

Per micro-batch (each step a Spark job on the executors unless said):

1. the batch is kept (persist) and looked over once (`admission.batch_stats`):
   counts, time order, the gap bound's jumps, dead letters;
2. the driver decides what is taken (`admission.Admission`: a filter, or for
   elements out of time order a walk of their timestamps on the driver);
3. the taken triples become facts with instant intervals (`content.window_rows`:
   Spark expressions); those a later report reaches are written as the
   batch's files (`store.FactStore`; found by a timestamp bound first, so the
   kept batch's earlier blocks are skipped), by a job run in a thread of its
   own while step 4 runs. Under ENTAILMENT the first pass noted the shapes the
   triples hold (`expand`: their closures are joined when read); for OWL 2
   RL's datatypes, their closures are written with them (and step 4 waits);
4. the instants the watermark passed are reported: the stored batches that
   reach them and the kept batch are read, the rules with two window premises
   joined if the window can feed them (`rules.StageB`), the query's plan run
   (`evaluate.QueryStage`), and the few rows per instant collected;
5. the driver finishes each instant's answer (`evaluate.Finisher`), applies
   RSTREAM / ISTREAM / DSTREAM, writes the results and the dead letters, and
   saves its state (plain, versioned: `rsp_plugin.runtime.state`) with the batch id.

A restarted job (same checkpoint directory) reads its state back: a batch id
seen before is a no-op, a batch that was in flight is run again (its files
overwritten, its results cut back by the sinks' positions).
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import NamedTuple

from ...core.admission import before_start, too_far
from ...reasoning.templates import JoinAnalysis, Present
from ..driver import BatchEnds, BatchReport, Progress
from ..sinks import DeadLetters, Sink
from .admission import STATS_SCHEMA, Admission, Decision, batch_stats, plan_gate
from .content import (
    FACTS_SCHEMA,
    Content,
    background_rows,
    numbers_table,
    pointwise_windows,
    report_bounds,
    stored_closures,
    window_rows,
    within,
)
from .evaluate import Finisher, QueryStage
from .expand import Expansion, lazy
from .plan import DistributedPlan
from .store import FactStore, StoredBatch


@dataclass
class DistributedState:
    """What a restarted distributed driver needs (stored after each committed batch)."""

    fingerprint: str
    admission: Admission
    stored: list = field(default_factory=list)
    #: the last instant index evaluated (None: none yet)
    reported: int | None = None
    last_batch: int = -1
    #: R2S memory: the last answer's rows (keys) with counts, or the last ASK boolean
    previous: list | None = None
    previous_boolean: bool = False
    rows: int = 0
    set_aside: int = 0
    results: int = 0
    finished: bool = False
    sink_position: object = None
    dead_position: object = None
    #: the time-slice path (`slices`) still runs the batches (False once one went the general way)
    sliced: bool = True
    #: the time-slice path's carry: the file (under the fact store) of the triples later reports reach
    carry: str | None = None


#: the most rows the facts seen at every instant may make when spread over a report's instants (beyond,
#: a report's joins intersect intervals instead: `Content.pointwise`)
POINTWISE_LIMIT = 1_000_000


class DistributedDriver(BatchEnds):
    """`foreachBatch(driver)` for distributed mode."""

    def __init__(self, spark, plan: DistributedPlan, sink: Sink, *, lanes: list[str], store: FactStore,
                 states=None, dead_letters: DeadLetters | None = None, progress: Progress | None = None,
                 delay_ms: int = 0, pieces: bool = False):
        from pyspark.sql import functions as F

        self.spark = spark
        # a plan's code is compiled once per text: stage numbers out of the generated classes' names,
        # so that every batch's reports run the code the batch before compiled (and the JVM optimized)
        spark.conf.set("spark.sql.codegen.useIdInClassName", "false")
        self.plan = plan
        self.sink = sink
        self.store = store
        self.states = states
        self.dead_letters = dead_letters or DeadLetters()
        self.progress = progress
        self.delay_ms = delay_ms
        #: the batches are the `rdf` source's pieces of files (parsed by the time slices, or made rows)
        self.pieces = pieces
        self.reports: list[BatchReport] = []
        self.stage = QueryStage(plan)
        self.finisher = Finisher(plan)
        self.reasoner = None
        self.background = None
        self.analysis = None
        #: under ENTAILMENT with shapes Spark can tell: the windows keep their triples, their closures
        #: are joined when read (`expand`); else (OWL 2 RL's datatypes) the closures are written
        self.expansion = None
        if plan.entailment is not None and plan.rules is None:  # (RULES: the engine's materialization only)
            from ...reasoning.templates import SeedReasoner

            self.reasoner = SeedReasoner(plan.entailment, plan.background)
            self.background = spark.sparkContext.broadcast("\n".join(plan.background))
            self.analysis = JoinAnalysis(self.reasoner.rules, self.reasoner.terms)
            if lazy(self.reasoner):
                self.expansion = Expansion(spark, plan, self.reasoner, self.background)
        rows = background_rows(plan, self.reasoner)
        # reports may match their joins on the instant (`Content.pointwise`) when every window fact is seen
        # at one instant and no fact lasts (closures written per triple can hold lasting ones): then the
        # rows B* and the static graphs make, spread over a report's instants (else None)
        lasting = self.reasoner is not None and self.expansion is None
        self.pointwise_base = len(rows) if pointwise_windows(plan) and not lasting else None
        #: B* and the static graphs as facts, written as a file when the general way first needs them
        self._base_rows = rows
        self._base = None
        self._empty = spark.createDataFrame([], FACTS_SCHEMA)
        #: stored batches no report reaches any more, their files deleted at the next cleanup
        self._unreachable: list[int] = []
        saved = states.load() if states is not None else None
        if saved is not None:
            if saved.fingerprint != plan_fingerprint(plan):
                from ...runtime.state import StateError

                raise StateError(f"{states.directory}: the checkpoint is of another query or other sources; "
                                 "start from a new checkpoint directory")
            self.state = saved
            self.sink.rewind(saved.sink_position)
            self.dead_letters.rewind(saved.dead_position)
        else:
            self.state = DistributedState(plan_fingerprint(plan), Admission(list(lanes), plan_gate(plan)))
            if states is not None:  # where the outputs begin: a run killed inside its first batch is cut back here
                self.state.sink_position = self.sink.position()
                self.state.dead_position = self.dead_letters.position()
                states.save_start(self.state)
        self.resumed = saved is not None
        from dataclasses import replace

        from .slices import carry_files, slice_function, slices_apply

        #: why the time-slice path does not run this query (None: it does, while batches come in order)
        self.slices_refused = slices_apply(plan, lanes)
        #: the key split (`keys`) answers the batches the time slices cannot take, for a key-local query
        self.keyed = plan.key is not None
        if plan.rules is not None and self.slices_refused is not None and not self.keyed:
            from .plan import NotDistributed  # (`plan_of` says so before: a safety net)

            raise NotDistributed(f"a RULES program with {self.slices_refused}")
        self._slice_background = None
        if self.slices_refused is None or self.keyed:
            if plan.entailment is not None and self.background is None:
                self.background = spark.sparkContext.broadcast("\n".join(plan.background))
            self._slice_background = self.background if plan.entailment is not None else None
        if self.slices_refused is None:
            # (the background goes to the executors once, as a broadcast: not with every task's function)
            self._slice_function = slice_function(replace(plan, background=[]), lanes[0], self._slice_background,
                                                  delay_ms, pieces)
        for path in carry_files(store.root):  # (a run stopped after writing a carry it did not commit)
            if path.name != self.state.carry:
                path.unlink(missing_ok=True)
        # (a run stopped between forgetting a stored batch and deleting its files left them behind)
        kept = {entry.batch for entry in self.state.stored}
        for batch in store.batches():
            if batch not in kept:
                store.drop(batch)
        self._last_end = time.perf_counter()
        self._F = F
        #: a carry file the next saved state no longer names (deleted once it is saved)
        self._stale_carry: str | None = None
        self.timings: dict[str, float] = {}

    @property
    def base(self):
        """B* and the static graphs as a file too: Spark then knows their size and broadcasts them into the
        joins (a cached DataFrame's size is unknown until it is computed: every join with it would be a
        sort-merge join with a shuffle of both sides). Written when the general way first reads it (the
        time slices never do: a run of them has no Spark job for it)."""
        if self._base is None and self._base_rows:
            path = self.store.write(self.spark.createDataFrame(self._base_rows, FACTS_SCHEMA).coalesce(1), "base")
            self._base = self.store.read_paths(self.spark, path)
        return self._base

    def __repr__(self) -> str:
        state = self.state
        return (f"<DistributedDriver {self.plan.name} last_batch={state.last_batch} rows={state.rows} "
                f"results={state.results} stored={len(state.stored)}>")

    # foreachBatch ---------------------------------------------------------------------------------------

    def __call__(self, batch_df, batch_id: int) -> None:
        self.process(batch_df, batch_id)

    def process(self, batch_df, batch_id: int) -> BatchReport:
        state = self.state
        if batch_id <= state.last_batch:
            report = BatchReport(batch_id, skipped=True, watermark=state.admission.gate.watermark)
            self._done(report)
            return report
        if state.finished:
            raise RuntimeError("the replay has finished; new data needs a new checkpoint location")
        started = time.perf_counter()
        known = admitted = None
        if self.carried and state.sliced:
            if self.slices_refused is None:
                report, known = self._process_sliced(batch_df, batch_id, started)
                if report is not None:
                    return report
            if self.keyed:
                report, admitted = self._process_keyed(batch_df, batch_id, started, known)
                if report is not None:
                    return report
            elif self.plan.rules is not None:
                return self._process_on_driver(batch_df, batch_id, started, known)
            self._leave_slices(batch_id)
        return self._process_general(batch_df, batch_id, started, known, admitted)

    @property
    def carried(self) -> bool:
        """Do the batches go by the carry (the time slices, the key split) while they can?"""
        return self.slices_refused is None or self.keyed

    def _admitted(self, batch_df, batch_id: int, known=None):
        """Admission on the driver (`admission.Admission`): the batch kept, its stats, the decision, and the
        rows taken (a frame with each row's `floor`, null when it came in time order). Unpersist `kept`."""
        F = self._F
        plan = self.plan
        admission = self.state.admission
        if self.pieces:  # (the pieces parsed into the source's rows, as the general way reads them)
            from ..source import SCHEMA
            from .slices import pieces_as_rows

            batch_df = batch_df.mapInArrow(pieces_as_rows(admission.lanes[0]), SCHEMA).withColumn("lane", F.lit(0))
        # (the stream's name is its lane's: `admission.lanes`, not a column kept per row)
        frame = batch_df.selectExpr("s", "p", "o", "ts", "rejected", "lane", "monotonically_increasing_id() AS row")
        held = None
        if self.expansion is not None:
            # the shapes of the batch's triples, observed while the first pass reads (and keeps) them
            from pyspark.sql import Observation

            held = Observation(f"rsp-shapes-{batch_id}-{time.time_ns()}")
            frame = self.expansion.held(frame, held)
        # the kept batch is read three times and lives for one batch: kept as it is, not compressed
        # (compressing it cost a fifth of the first pass; a million triples take ~150 MB, spilled to
        # disk past the executors' storage memory). The setting is the streaming query's own session's
        # (a clone made by Spark for the stream), not the user's.
        batch_df.sparkSession.conf.set("spark.sql.inMemoryColumnarStorage.compressed", "false")
        frame = frame.persist()
        try:
            if known is not None:
                stats, decision = known
            else:
                clock = self._step("stats")
                # (only the columns it reads cross to Python: the terms stay in the JVM)
                stats = [row.asDict() for row in frame.select("lane", "ts", "rejected")
                         .mapInArrow(batch_stats(plan.gap, plan.grid.t0), STATS_SCHEMA).collect()]
                self._time("stats", clock)
                decision = None
            dead = [row["dead"] for row in stats if row["dead"] is not None]
            rows = sum(row["n"] for row in stats if row["dead"] is None) + len(dead)
            good = frame.where(F.col("rejected").isNull())
            if decision is not None or admission.in_order(stats):
                if decision is None:
                    decision = admission.decide_in_order(plan, stats)
                taken = self._in_order(good, decision, stats)
            else:
                clock = self._step("admission")
                arrived = good.select("row", "lane", "ts").toArrow().sort_by("row")
                walk = _merged(list(zip(*(arrived.column(n).to_pylist() for n in ("row", "lane", "ts")))),
                               len(admission.lanes))
                # (a materialized window takes a late element only at or after its last boundary)
                decision = admission.sequential(plan, walk, self.delay_ms,
                                                materialized=plan.entailment is not None or plan.rules is not None)
                taken = self._sequential(good, decision)
                self._time("admission", clock)
        except BaseException:
            frame.unpersist()
            raise
        return _Admitted(frame, held, stats, decision, dead, rows, taken)

    def _process_general(self, batch_df, batch_id: int, started: float, known=None, admitted=None) -> BatchReport:
        """The general way: admission on the driver, facts with instant intervals, Spark plans.
        `known`: (stats, decision) the time-slice path found and decided already; `admitted`: the batch
        admitted already (`_admitted`: the key split found a schema triple in it)."""
        state = self.state
        plan = self.plan
        admission = state.admission
        frame, held, _, decision, dead, rows, taken = admitted or self._admitted(batch_df, batch_id, known)
        try:
            facts = window_rows(plan, taken, admission.lanes)
            if self.reasoner is not None and self.expansion is None:
                # (closures made by Python: written once, then read back)
                facts = facts.mapInArrow(stored_closures(plan, self.background), FACTS_SCHEMA)
                entry = self._keep(facts, batch_id)
                if entry is not None:
                    state.stored.append(entry)
                results = self._report_through(admission.done)
            else:
                # the facts a later report reaches are written while this batch's reports run (a job of
                # their own, in a thread: the executors write while the driver plans the reports), and
                # these reports read all of the batch's facts from the kept batch, not from the files
                shapes = None if held is None else self.expansion.shapes_of(held.get)
                present = self.expansion.present(shapes) if self.expansion is not None else []
                later = facts if admission.done is None else window_rows(plan, taken, admission.lanes,
                                                                         after=admission.done)
                writing = _Background(self._keep, later, batch_id, shapes, present)
                try:
                    current = CurrentBatch(facts, present, shapes if shapes is not None else [])
                    results = self._report_through(admission.done, current)
                finally:
                    entry = writing.result()
                if entry is not None:
                    state.stored.append(entry)
        finally:
            frame.unpersist()
        report = BatchReport(batch_id, rows=rows)
        self._commit(batch_id, results, dead + decision.set_aside, report, started)
        return report

    def _process_on_driver(self, batch_df, batch_id: int, started: float, known=None) -> BatchReport:
        """A batch the time slices cannot take, under RULES (the general way's Spark plans have no LARS
        engine): admission on the driver as the general way decides it, then the batch's taken rows come to
        the driver and one engine, the local engine's code, runs over the carry and them, each late row given
        once the watermark is where the local engine's was when it came (`slices.answers_over`'s floors); the
        instants reported are its, the carry kept as the time slices keep it, so a later batch in time order
        goes back to them."""
        import pyarrow as pa

        admission = self.state.admission
        frame, _, _, decision, dead, rows, taken = self._admitted(batch_df, batch_id, known)
        try:
            clock = self._step("driver")
            arrived = taken.select("row", "ts", "s", "p", "o", "floor").toArrow().sort_by("row")
        finally:
            frame.unpersist()
        carry = self._carry()
        arrived = arrived.append_column("lane", pa.array([0] * arrived.num_rows, pa.int32()))
        arrived = arrived.select(["ts", "s", "p", "o", "floor", "lane"]).cast(carry.schema)
        timeline = pa.concat_tables([carry, arrived]) if carry.num_rows else arrived
        results = self._report_sliced(admission.done, {}, timeline)
        self._keep_carry(batch_id, timeline)
        self._time("driver", clock)
        report = BatchReport(batch_id, rows=rows)
        self._commit(batch_id, results, dead + decision.set_aside, report, started)
        return report

    def _process_keyed(self, batch_df, batch_id: int, started: float, known=None):
        """A batch the time slices cannot take, for a key-local query (`keys`): admission on the driver as
        the general way decides it; then the carry and the taken rows routed to their keys, a bucket of keys
        per task, each bucket's engine (the local engine's code) answering the instants due over its rows
        and sending back the rows a later report reaches; the driver joins each instant's answers and keeps
        the carry, so a later batch in time order from one source goes back to the time slices.
        (its `BatchReport`, None), or (None, the batch admitted) when a schema triple in it (ENTAILMENT)
        sends it the general way."""
        from dataclasses import replace

        import pyarrow as pa
        import pyarrow.compute as pc

        from ..session import task_slots
        from .keys import KEYED_SCHEMA, SCHEMA, keyed_function, keyed_rows, merge_payloads
        from .slices import needed_from

        state = self.state
        plan = self.plan
        admission = state.admission
        admitted = self._admitted(batch_df, batch_id, known)
        frame, _, _, decision, dead, rows, taken = admitted
        try:
            clock = self._step("keys")
            k_lo = self._first_due(admission.done)
            k_hi = admission.done if k_lo is not None else None
            start = self._timeline_start(k_lo) if k_lo is not None else None
            reported = k_hi if k_hi is not None else state.reported
            carry_from = needed_from(plan, reported + 1) if reported is not None else None
            fresh = taken.selectExpr("ts", "s", "p", "o", "floor", "CAST(lane AS INT) AS lane", "row")
            carry = self._carry()
            if carry.num_rows:  # (before the batch's rows at equal times, in their order)
                carry = carry.append_column("row", pa.array(range(-carry.num_rows, 0), pa.int64()))
                fresh = self.spark.createDataFrame(carry).unionByName(fresh)
            function = keyed_function(replace(plan, background=[]), admission.lanes, self._slice_background,
                                      k_lo=k_lo, k_hi=k_hi, start=start, carry_from=carry_from)
            table = keyed_rows(plan, fresh, task_slots(self.spark)).mapInArrow(function, KEYED_SCHEMA).toArrow()
            self._time("keys", clock)
        except BaseException:
            frame.unpersist()
            raise
        kinds = table.column("kind")
        if pc.any(pc.equal(kinds, SCHEMA)).as_py():
            return None, admitted
        frame.unpersist()
        clock = self._step("keys-driver")
        found: dict[int, list[str]] = {}
        answers = table.filter(pc.equal(kinds, "answer"))
        for k, text in zip(answers.column("k").to_pylist(), answers.column("text").to_pylist()):
            found.setdefault(k, []).append(text)
        results = []
        if k_lo is not None:
            results = self._answers(k_lo, k_hi, {}, given={k: merge_payloads(texts) for k, texts in found.items()})
            state.reported = k_hi
        kept = table.filter(pc.equal(kinds, "carry"))
        kept = kept.take(pc.sort_indices(kept, sort_keys=[("ts", "ascending"), ("lane", "ascending")]))
        self._keep_carry(batch_id, kept.select(["ts", "s", "p", "o", "floor", "lane"]))
        self._time("keys-driver", clock)
        report = BatchReport(batch_id, rows=rows)
        self._commit(batch_id, results, dead + decision.set_aside, report, started)
        return report, None

    def finish(self) -> list:
        """A replay ends: every instant whose windows still reach the last elements is reported."""
        state = self.state
        if state.finished:
            return []
        started = time.perf_counter()
        plan = self.plan
        admission = state.admission
        ends = []
        for window in plan.windows:
            last = admission.last_of_stream.get(window.stream)
            if last is not None:
                ends.append(plan.grid.replay_end(window, last))
        results = []
        if ends and admission.first_seen is not None:
            end = plan.grid.last_at_or_before(max(ends))
            if self.carried and state.sliced:
                results = self._report_sliced(end, {}, self._carry())
            else:
                results = self._report_through(end)
        state.finished = True
        report = BatchReport(state.last_batch)
        self._commit(state.last_batch, results, [], report, started, final=True)
        self.store_cleanup(all_of_it=True)
        self._settle()
        self._drop_unreachable()
        self.store.drop("base")
        if state.carry is not None:
            (self.store.root / state.carry).unlink(missing_ok=True)
        return results

    # admission ------------------------------------------------------------------------------------------

    def _in_order(self, good, decision: Decision, stats: list[dict]):
        plan = self.plan
        condition = f"ts >= {plan.grid.t0}"
        counts = _counts(self.state.admission, stats)
        if decision.cut is not None or _early(plan, stats):
            decision.set_aside.extend(self._name_refused(good, decision, counts))
        self._clock_moved(counts)
        taken = good.where(condition)
        if decision.cut is not None:  # (as data, not written into the plan: `report_bounds`)
            cut = numbers_table(self.spark, _cut=decision.cut)
            taken = taken.crossJoin(self._F.broadcast(cut)).where("ts < _cut").drop("_cut")
        return taken.selectExpr("*", "CAST(NULL AS BIGINT) AS floor")

    def _clock_moved(self, counts: dict[str, int]) -> None:
        """An in-order batch taken: the streams' counts and last times, the watermark, the instants due."""
        admission = self.state.admission
        for stream, count in counts.items():
            admission.pushed[stream] = admission.pushed.get(stream, 0) + count
        for lane, stream in enumerate(admission.lanes):
            taken = admission.lane_taken[lane]
            if taken is not None:
                before = admission.last_of_stream.get(stream)
                admission.last_of_stream[stream] = taken if before is None else max(before, taken)
        admission.catch_up(self.plan, self.delay_ms)

    # the time-slice path ------------------------------------------------------------------------------

    def _process_sliced(self, batch_df, batch_id: int, started: float):
        """One Spark job: each partition answers the instants inside it (`slices`); the driver checks the
        batch was in order with nothing set aside, answers the instants at the edges, keeps the carry.
        (its `BatchReport`, None) or, when the batch must go the general way, (None, None or the
        (stats, decision) found already)."""
        import json

        import pyarrow as pa
        import pyarrow.compute as pc

        from .slices import SLICE_SCHEMA

        plan = self.plan
        state = self.state
        admission = state.admission
        clock = self._step("slices")
        frame = batch_df if self.pieces else batch_df.select("s", "p", "o", "ts", "rejected", "lane")
        table = frame.mapInArrow(self._slice_function, SLICE_SCHEMA).toArrow()
        self._time("slices", clock)
        kinds = table.column("kind")
        if pc.any(pc.equal(kinds, "skipped")).as_py():
            return None, None
        texts = table.column("text").to_pylist()
        parts = table.column("part").to_pylist()
        stats, dead, interior = [], [], {}
        ks = table.column("k").to_pylist()
        for kind, text, part, k in zip(kinds.to_pylist(), texts, parts, ks):
            if kind == "stats":
                stats.append(json.loads(text))
            elif kind == "dead":
                dead.append(text)
                stats.append({"part": part, "lane": None, "n": None, "first": None, "last": None, "low": None,
                              "high": None, "ordered": None, "jumps": [], "dead": text})
            elif kind == "answer":
                interior[k] = text
        if not admission.in_order(stats):
            return None, None
        decision = admission.decide_in_order(plan, stats)
        if decision.cut is not None or _early(plan, stats):
            return None, (stats, decision)
        self._clock_moved(_counts(admission, stats))
        rows = sum(row["n"] for row in stats if row["dead"] is None) + len(dead)
        edges = table.filter(pc.equal(kinds, "edge")).select(["part", "ts", "s", "p", "o"])
        order = pc.sort_indices(edges, sort_keys=[("part", "ascending")])  # (stable: each part's rows in order)
        edges = edges.take(order).select(["ts", "s", "p", "o"])
        edges = edges.append_column("floor", pa.nulls(edges.num_rows, pa.int64()))
        edges = edges.append_column("lane", pa.array([0] * edges.num_rows, pa.int32()))
        carry = self._carry()
        timeline = pa.concat_tables([carry, edges.cast(carry.schema)]) if carry.num_rows else edges
        clock = self._step("edges")
        results = self._report_sliced(admission.done, interior, timeline)
        self._keep_carry(batch_id, timeline)
        self._time("edges", clock)
        report = BatchReport(batch_id, rows=rows)
        self._commit(batch_id, results, dead, report, started)
        return report, None

    def _carry(self):
        from .slices import empty_carry, read_carry

        name = self.state.carry
        if name is None:
            return empty_carry()
        return read_carry(self.store.root / name)

    def _keep_carry(self, batch_id: int, timeline) -> None:
        """The triples a report after the last one made reaches, as this batch's carry file."""
        import pyarrow.compute as pc

        from .slices import carry_path, needed_from, write_carry

        state = self.state
        done = state.reported
        if done is not None and timeline.num_rows:
            timeline = timeline.filter(pc.greater_equal(timeline.column("ts"), needed_from(self.plan, done + 1)))
        previous = state.carry
        path = carry_path(self.store.root, batch_id)
        write_carry(path, timeline)
        state.carry = path.name
        if previous is not None and previous != path.name:
            self._stale_carry = previous

    def _first_due(self, last: int | None) -> int | None:
        """The first instant to report when the reports go up to `last` (None: none is due)."""
        state = self.state
        first = state.admission.first_instant(self.plan) if last is not None else None
        if first is None:
            return None
        k_lo = first if state.reported is None else max(first, state.reported + 1)
        return k_lo if k_lo <= last else None

    def _timeline_start(self, k: int) -> int | None:
        """Where an engine answering instants from k on starts (`slices.answers_over`'s `start`): the first
        time their reports read (`needed_from`) when the stream had elements before it, else None (it starts
        at its first element, as the whole run's did)."""
        from .slices import needed_from

        start = needed_from(self.plan, k)
        seen = self.state.admission.first_seen
        return None if seen is None or seen >= start else start

    def _report_sliced(self, last: int | None, interior: dict, timeline) -> list:
        """The instants after the last one made, up to `last`: those inside a partition as it answered
        them, the others by an engine over the edges and the carry (`timeline`), an empty window's answer
        where neither has one."""
        from .slices import timeline_answers

        state = self.state
        k_lo = self._first_due(last)
        if k_lo is None:
            return []
        background = self._slice_background.value if self._slice_background is not None else ""

        # each run of instants no partition answered, by an engine over the rows its reports read: from the
        # first one's `needed_from` (the carry's start at the earliest) to the last one. When the stream had
        # elements before that, a RULES materialization starts its timeline there, not at its first triple,
        # and the engine reports every instant after it (a gap's too, though its first triple may come later)
        edges = {}
        for run_first, run_last in _runs([k for k in range(k_lo, last + 1) if k not in interior]):
            edges.update(timeline_answers(
                self.plan, background, self.state.admission.lanes, timeline, self.plan.grid.instant(run_last),
                lambda k, low=run_first, high=run_last: low <= k <= high, self._timeline_start(run_first)))
        results = self._answers(k_lo, last, {}, given={**edges, **{k: v for k, v in interior.items()
                                                                  if k_lo <= k <= last}})
        state.reported = last
        return results

    def _leave_slices(self, batch_id: int) -> None:
        """A batch goes the general way: from now on every batch does; the carry becomes a stored batch of
        facts (as the general way keeps them), under the name `c<batch>`."""
        state = self.state
        state.sliced = False
        carry = self._carry()
        name = state.carry
        state.carry = None
        if name is not None:
            self._stale_carry = name
        if not carry.num_rows:
            return
        # (each late row with its floor: the key split's carry keeps them, as the general way takes them)
        frame = self.spark.createDataFrame(carry.to_pandas(), "ts BIGINT, s STRING, p STRING, o STRING, "
                                                              "floor BIGINT, lane INT")
        frame = frame.selectExpr("s", "p", "o", "ts", "CAST(NULL AS STRING) AS rejected", "lane",
                                 "monotonically_increasing_id() AS row", "floor")
        shapes = present = None
        if self.expansion is not None:
            from pyspark.sql import Observation

            held = Observation(f"rsp-carry-shapes-{batch_id}-{time.time_ns()}")
            frame = self.expansion.held(frame, held)
            frame.count()
            shapes = self.expansion.shapes_of(held.get)
            present = self.expansion.present(shapes)
        facts = window_rows(self.plan, frame, state.admission.lanes)
        if self.reasoner is not None and self.expansion is None:
            facts = facts.mapInArrow(stored_closures(self.plan, self.background), FACTS_SCHEMA)
        entry = self._keep(facts, f"c{batch_id}", shapes, present)
        if entry is not None:
            state.stored.append(entry)

    def _name_refused(self, good, decision: Decision, counts: dict[str, int]) -> list[str]:
        """Set-aside elements of an in-order batch, named as the driver-side mode names them."""
        F = self._F
        plan = self.plan
        admission = self.state.admission
        refused = F.col("ts") < F.lit(plan.grid.t0)
        if decision.cut is not None:
            refused = refused | (F.col("ts") >= F.lit(decision.cut))
        lanes = admission.lanes
        rows = [(row.ts, row.lane, row.row, lanes[row.lane])
                for row in good.where(refused).select("row", "lane", "ts").collect()]
        rows.sort()
        before: dict[str, int] = {}
        if decision.cut is not None:
            for row in good.where((F.col("ts") >= plan.grid.t0) & (F.col("ts") < decision.cut)) \
                    .groupBy("lane").count().collect():
                before[lanes[row.lane]] = before.get(lanes[row.lane], 0) + row["count"]
        messages = []
        seen: dict[str, int] = {}
        now = admission.gate.latest
        for ts, _, _, stream in rows:
            seen[stream] = seen.get(stream, 0) + 1
            if ts < plan.grid.t0:
                number = admission.pushed.get(stream, 0) + seen[stream]
                messages.append(f"{stream}:{number}: {before_start(ts, plan.grid.t0)}")
                continue
            # (its stream's elements before it: those pushed before this batch, this batch's taken ones
            # before the cut, and the refused ones before it in time order: `seen`, counting itself)
            number = admission.pushed.get(stream, 0) + before.get(stream, 0) + seen[stream]
            distance = abs(ts - now) if now is not None else 0
            messages.append(f"{stream}:{number}: {too_far(ts, distance, 'ahead of', admission.gate.gap)}")
        return messages

    def _sequential(self, good, decision: Decision):
        F = self._F
        if not decision.exceptions:
            return good.withColumn("floor", F.lit(None).cast("long"))
        rows = [(row, floor, floor is None) for row, floor in decision.exceptions.items()]
        exceptions = self.spark.createDataFrame(rows, "row BIGINT, floor BIGINT, drop BOOLEAN")
        joined = good.join(F.broadcast(exceptions), on="row", how="left")
        return joined.where(F.col("drop").isNull() | ~F.col("drop")).drop("drop")

    # the window's state ---------------------------------------------------------------------------------

    def _keep(self, facts, batch_id: int, shapes: list | None = None,
              present: list | None = None) -> StoredBatch | None:
        """Write the batch's facts that later reports reach (`facts`: cut by the caller); their
        `StoredBatch` (None: none written): what they reach, and what they hold (`present`,
        from the batch's triples' shapes when the files hold triples only), observed as they are
        written (Spark's `observe`: metrics of the writing job itself, no second job over the files)."""
        import uuid

        from pyspark.sql import Observation

        F = self._F
        clock = self._step("facts")
        observed = Observation(f"rsp-facts-{batch_id}-{uuid.uuid4().hex[:8]}")
        measures = [F.min("k1").alias("low"), F.max("k2").alias("high"), F.count(F.lit(1)).alias("n")]
        closures = self.expansion is None and self.plan.entailment is not None
        if closures:  # (all written)
            measures.append(F.collect_set(F.struct(
                F.col("rel"), F.when(F.col("rel") == "triple", F.col("c1")).alias("pred"),
                ((F.col("rel") == "triple") & (F.col("c0") == F.col("c2"))).alias("refl"))).alias("present"))
        self.store.write(facts.observe(observed, *measures), batch_id)
        summary = observed.get
        if closures:
            present = sorted([[row["rel"], row["pred"], bool(row["refl"])] for row in summary["present"]],
                             key=lambda item: (item[0], item[1] or "", item[2]))
        elif present is None:
            present = []
        entry = None
        if summary.get("n"):
            entry = StoredBatch(batch_id, summary["low"], summary["high"], summary["n"], present, shapes)
        else:
            self.store.drop(batch_id)
        self._time("facts", clock)
        return entry

    def store_cleanup(self, all_of_it: bool = False) -> None:
        """Forget the stored batches no later report reaches; delete the files of those forgotten at the
        cleanup before. (Not at once: a stage Spark's adaptive execution started and then found it did
        not need can still be reading them, and its task failing on a missing file is logged as an
        error although no result depends on it.)"""
        state = self.state
        self._drop_unreachable()
        kept = []
        for entry in state.stored:
            if all_of_it or (state.reported is not None and entry.high <= state.reported):
                self._unreachable.append(entry.batch)
            else:
                kept.append(entry)
        state.stored = kept

    def _drop_unreachable(self) -> None:
        for batch in self._unreachable:
            self.store.drop(batch)
        self._unreachable = []

    def _settle(self, seconds: float = 10.0) -> None:
        """Wait (a while at most) for the stages still running to end: the last files go after them."""
        tracker = self.spark.sparkContext.statusTracker()
        until = time.monotonic() + seconds
        while tracker.getActiveStageIds() and time.monotonic() < until:
            time.sleep(0.05)

    # reports ----------------------------------------------------------------------------------------------

    def _report_through(self, last: int | None, current: CurrentBatch | None = None) -> list:
        """Evaluate the instants after the last one evaluated, up to `last`; their results."""
        state = self.state
        k_lo = self._first_due(last)
        if k_lo is None:
            return []
        clock = self._step("query")
        content = self._content(k_lo, last, current)
        data = self.stage.collect(content)
        self._time("query", clock)
        results = self._answers(k_lo, last, data)
        state.reported = last
        return results

    def _content(self, k_lo: int, k_hi: int, current: CurrentBatch | None = None) -> Content:
        """What the reports of instants [k_lo, k_hi] read: the stored batches that reach them, the
        batch being run (`current`: its facts no later report reaches, not written), B*."""
        reaching = [entry for entry in self.state.stored if entry.high >= k_lo and entry.low <= k_hi]
        bounds = report_bounds(self.spark, k_lo, k_hi)
        holding = [entry.present for entry in reaching] + ([current.present] if current is not None else [])
        joining = []
        if self.analysis is not None:
            present = {Present(rel, pred, refl) for held in holding for rel, pred, refl in held}
            joining = self.analysis.joining(present)
        # batches that keep their closures (or need none), and batches that keep their triples only
        written = [entry for entry in reaching if entry.shapes is None]
        triples = [entry for entry in reaching if entry.shapes is not None]
        lazy_current = current is not None and self.expansion is not None
        parts = [self.store.read(self.spark, written), self.base,
                 current.facts if current is not None and not lazy_current else None]
        parts = [part for part in parts if part is not None]
        content = parts[0] if parts else self._empty
        for part in parts[1:]:
            content = content.unionByName(part)
        content = within(content, bounds)
        stored = self.store.read(self.spark, triples) if triples and self.expansion is not None else None
        if lazy_current:
            stored = current.facts if stored is None else stored.unionByName(current.facts)
        if stored is None:
            derive = None
        else:
            stored = within(stored, bounds)
            shapes = [shape for entry in triples for shape in entry.shapes] + (current.shapes if lazy_current else [])
            if joining:  # every fact, for the joins
                every, _ = self.expansion.facts(stored, shapes)
                content = content if every is None else content.unionByName(every)
                derive = None
            else:
                expansion = self.expansion

                def derive(pattern):
                    return expansion.facts(stored, shapes, pattern)
        if joining:
            from .rules import StageB

            content = StageB(self.spark, self.reasoner, self.analysis).close(content, joining, k_lo, k_hi)
        # (not with rules joining window facts: the intervals they intersect are not one instant each)
        pointwise = (self.pointwise_base is not None and not joining
                     and self.pointwise_base * (k_hi - k_lo + 1) <= POINTWISE_LIMIT)
        return Content(content, derive, repeats=self.reasoner is not None and (self.expansion is None or bool(joining)),
                       pointwise=pointwise, bounds=bounds)

    def _answers(self, k_lo: int, k_hi: int, data: dict, given: dict | None = None) -> list:
        """Each instant's answer through RSTREAM / ISTREAM / DSTREAM: from what the executors' plans
        collected (`data`, finished here), or as they answered it (`given`: k -> `slices` payload)."""
        from collections import Counter

        from ...core.rdfterms import TermCache
        from ...core.terms import Dictionary
        from ...query.model import R2S
        from ...query.results import QueryResult, ResultStream

        state = self.state
        plan = self.plan
        terms = Dictionary()
        cache = TermCache(terms)
        stream = ResultStream(R2S(plan.r2s))
        if state.previous is not None:
            stream._previous = Counter({tuple(None if v is None else terms.intern(v) for v in row): count
                                        for row, count in state.previous})
        stream._previous_boolean = state.previous_boolean
        results = []
        from .slices import payload_answer

        given = given or {}
        for k in range(k_lo, k_hi + 1):
            tau = plan.grid.instant(k)
            payload = given.get(k)
            answer = (payload_answer(payload, terms) if payload is not None
                      else self.finisher.answer(tau, data.get(k), cache))
            results.append(QueryResult(plan.name, tau, stream.report(answer), terms))
        keys = terms.keys
        if stream._previous is not None:
            state.previous = [[[None if v is None else keys[v] for v in row], count]
                              for row, count in stream._previous.items()]
        state.previous_boolean = stream._previous_boolean
        return results

    # results out ------------------------------------------------------------------------------------------

    def _commit(self, batch_id: int, results: list, set_aside: list[str], report: BatchReport, started: float,
                final: bool = False) -> None:
        def save() -> None:
            if not final:
                self.store_cleanup()
            if self.states is not None:
                self.states.save(batch_id, self.state)

        self._end_batch(batch_id, results, set_aside, report, started, watermark=self.state.admission.gate.watermark,
                        save=save, final=final)
        stale, self._stale_carry = self._stale_carry, None
        if stale is not None:  # (the saved state names the new carry: the old one is no one's)
            (self.store.root / stale).unlink(missing_ok=True)

    def _step(self, stage: str) -> float:
        """Name the Spark jobs of a step (Spark's UI and REST API show them by it); the clock."""
        self.spark.sparkContext.setJobDescription(f"rsp-distributed: {stage}")
        return time.perf_counter()

    def _time(self, stage: str, since: float) -> None:
        self.timings[stage] = self.timings.get(stage, 0.0) + time.perf_counter() - since


class _Admitted(NamedTuple):
    """A batch through admission (`DistributedDriver._admitted`)."""

    kept: object
    held: object
    stats: list
    decision: Decision
    dead: list
    rows: int
    taken: object


class CurrentBatch(NamedTuple):
    """The batch being run, as its own reports read it: all its facts (from the kept frame, not the
    files), what they hold, and their triples' shapes."""

    facts: object
    present: list
    shapes: list


class _Background:
    """A call run in a thread of its own (Spark runs its jobs alongside the caller's), its result
    or its exception given back by `result`."""

    def __init__(self, function, *args):
        from pyspark import InheritableThread

        self._value = self._error = None

        def run() -> None:
            try:
                self._value = function(*args)
            except BaseException as error:  # (given back to the caller)
                self._error = error

        self._thread = InheritableThread(target=run, daemon=True)
        self._thread.start()

    def result(self):
        self._thread.join()
        if self._error is not None:
            raise self._error
        return self._value


def _counts(admission: Admission, stats: list[dict]) -> dict[str, int]:
    """Elements per stream in a batch's stats (dead letters aside)."""
    counts: dict[str, int] = {}
    for row in stats:
        if row["dead"] is None:
            stream = admission.lanes[row["lane"]]
            counts[stream] = counts.get(stream, 0) + row["n"]
    return counts


def _early(plan: DistributedPlan, stats: list[dict]) -> bool:
    """Has the batch an element before t0 (set aside)?"""
    return any(row["dead"] is None and row["first"] is not None and row["first"] < plan.grid.t0 for row in stats)


#: instants apart beyond which the edges' instants are answered by engines of their own (`_runs`): a fresh
#: engine costs about what 50 reports of an empty window cost
RUN_GAP = 64


def _runs(ks: list[int], gap: int = RUN_GAP) -> list[tuple[int, int]]:
    """Ascending instants as runs (first, last), a run going on over fewer than `gap` instants left out.

    >>> _runs([1, 2, 3, 200, 201, 250, 400], gap=64)
    [(1, 3), (200, 250), (400, 400)]
    >>> _runs([])
    []
    """
    runs: list[list[int]] = []
    for k in ks:
        if runs and k - runs[-1][1] <= gap:
            runs[-1][1] = k
        else:
            runs.append([k, k])
    return [(low, high) for low, high in runs]


def _merged(rows: list[tuple], lanes: int) -> list[tuple]:
    """(row, lane, ts) in the order the driver-side mode takes them: one lane in arrival order; several
    merged by time as its `_release` merges them (the smallest head first, a run while it stays smallest)."""
    if lanes <= 1:
        return rows
    from collections import deque

    queues = [deque() for _ in range(lanes)]
    for item in rows:
        queues[item[1]].append(item)
    out = []
    while True:
        live = [lane for lane in range(lanes) if queues[lane]]
        if not live:
            return out
        heads = sorted((queues[lane][0][2], lane) for lane in live)
        chosen = heads[0][1]
        bound = heads[1] if len(heads) > 1 else None
        queue = queues[chosen]
        while queue and (bound is None or (queue[0][2], chosen) < bound):
            out.append(queue.popleft())


def plan_fingerprint(plan: DistributedPlan) -> str:
    import hashlib
    import json

    parts = [plan.text, plan.streams, [vars(w) for w in plan.windows], plan.entailment,
             plan.background, sorted((str(k), v) for k, v in plan.static.items())]
    if plan.rules is not None:  # (the program's text: a restart with another program is another query)
        parts += [plan.rules, plan.depths]
    data = json.dumps(parts, sort_keys=True)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()


__all__ = ["DistributedDriver", "DistributedState"]
