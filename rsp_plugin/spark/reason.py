"""`rsp-plugin reason PROGRAM --stream FILE --engine spark`: LARS and DatalogMTL programs with Spark reading the stream.

Two modes, both writing the lines of `--engine local` byte for byte (the same
readers, the same judgment of late and unreadable lines, the same engine):

- driver: Spark reads the stream file (`reason_source`: parsed in the
  executors, micro-batches of `batch_lines` lines) and the driver runs the one
  engine over the micro-batches in order (`columnar.reason.Replay`,
  `mtl.run.MetricReplay`), writing each batch's lines when it ends. With a
  checkpoint, the driver's state (the engine, its lines' memory, how far the
  stream was read, where the output ended) is saved after every batch in the
  plain authenticated format (`runtime.state`, `checkpoint.StateStore`); a
  restarted run cuts what a killed one wrote after its last saved batch (when
  stdout is a file appended to) and goes on from there: nothing is lost or
  written twice.
- distributed: the stream is read once as a batch, its lines judged on the
  driver (`reason_parts.admit`), and the work split on the executors as
  `rule_split` proves it may be (by key, or by time slices with a margin): each
  part runs the same engine over its share (`groupBy(part).applyInArrow`), and
  the parts' changes are merged per time point on the driver.

`plan` decides, without Spark, which mode runs and why (a program that does not
split runs on the driver, said in one line).
"""

from __future__ import annotations

import hashlib
import io
import json
import sys
from dataclasses import dataclass
from pathlib import Path

from ..core import limits
from .reason_rows import (
    DATALOGMTL,
    LARS,
    Reading,
    block_of,
    in_line_order,
    items_of,
    reading_for,
)
from .rule_split import KeyLocal, OnDriver, TimeSliced, split_of, time_reach

#: lines of the stream file per micro-batch in driver mode
BATCH_LINES = 50_000


@dataclass
class Settings:
    """What `reason --engine spark` was asked (the command line's options, checked)."""

    program: str
    stream: str
    language: str
    mode: str = "driver"
    first: int | None = None
    last: int | None = None
    changes: bool = False
    pruning: bool = True
    max_derivations: int | None = None
    max_gap: int | None = limits.MAX_GAP_TIME_POINTS
    max_line_bytes: int | None = limits.MAX_LINE_BYTES
    checkpoint: str | None = None
    checkpoint_key: str | None = None
    batch_lines: int = BATCH_LINES


@dataclass
class Plan:
    """The program parsed and what will run: `mode` (driver | distributed), `split` for distributed, and
    `note`: the one line saying why a distributed run stays on the driver (None: nothing to say)."""

    settings: Settings
    text: str
    program: object          # the engine's Program
    lowered: object | None   # DatalogMTL: its lowering (`lars.metric_lower.Lowered`)
    reading: Reading
    mode: str
    split: object = None
    reach: object = None     # `rule_split.TimeSliced` when the program's reach is bounded (None: it is not)
    note: str | None = None


def plan(settings: Settings) -> Plan:
    """Parse the program (a mistake is its located error) and choose the mode, all before Spark starts."""
    from ..core.errors import RuleSyntaxError
    from ..io.lines import decode_text

    path = Path(settings.program)
    try:
        text = decode_text(path.read_bytes(), str(path), RuleSyntaxError)
    except OSError as error:
        raise RuleSyntaxError(f"cannot read the program: {error.strerror}", str(path), 1, 1) from None
    if settings.language == DATALOGMTL:
        from ..mtl import load_program
        from ..mtl.syntax import parse_mtl

        lowered = load_program(text, str(path))
        program, source = lowered.program, parse_mtl(text, str(path))
    else:
        from ..lars.syntax import parse_program

        program = source = parse_program(text, str(path))
        lowered = None
    reading = reading_for(Path(settings.stream).resolve(), settings.language, source, settings.max_line_bytes)
    result = Plan(settings, text, program, lowered, reading, "driver")
    if settings.mode != "distributed":
        return result
    if settings.checkpoint is not None:
        result.note = ("--mode distributed runs this program on the driver: --checkpoint keeps the state of a "
                       "driver-side run (a distributed run reads the stream as one job)")
        return result
    split = split_of(program)
    if isinstance(split, OnDriver):
        result.note = f"--mode distributed runs this program on the driver: {split.reason}"
        return result
    result.mode, result.split = "distributed", split
    reach = time_reach(program)
    result.reach = reach if isinstance(reach, TimeSliced) else None
    return result


def run(chosen: Plan, spark, out=None, err=None) -> int:
    """Run the plan on `spark`, its lines to `out` (stdout), set-aside lines to `err` (stderr); returns how
    many lines were set aside."""
    from .reason_source import register

    register(spark)
    if chosen.mode == "distributed":
        return _distributed(chosen, spark, out, err)
    return _driver(chosen, spark, out, err)


# driver mode --------------------------------------------------------------------------------------------------


@dataclass
class ReasonState:
    """What a restarted driver-side run needs, saved after every micro-batch: the replay (the engine and its
    lines' memory), the last batch done, where the output ended, the lines set aside so far, and what the run
    is (`fingerprint`: the same program, stream and options, or the checkpoint is refused)."""

    replay: object
    fingerprint: str
    last_batch: int = -1
    set_aside: int = 0
    out_position: object = None
    finished: bool = False


class ReasonDriver:
    """`foreachBatch(driver)`: each micro-batch's rows into the replay, its lines out, the state saved."""

    def __init__(self, chosen: Plan, out, err, store=None):
        from .sinks import ConsoleSink

        self.chosen, self.out, self.err, self.store = chosen, out, err, store
        self.console = ConsoleSink(out)  # (where stdout, a file appended to, ended: its position / rewind)
        settings = chosen.settings
        fingerprint = _fingerprint(chosen)
        saved = store.load() if store is not None else None
        if saved is not None:
            if saved.fingerprint != fingerprint:
                from ..runtime.state import StateError

                raise StateError(f"{store.directory}: the checkpoint is of another run (another program, stream or "
                                 f"options); start from a new checkpoint directory")
            self.state = saved
            self.console.rewind(saved.out_position)
        else:
            self.state = ReasonState(_new_replay(chosen), fingerprint)
            if store is not None:  # where the output begins: a run killed inside its first batch is cut back here
                self.state.out_position = self.console.position()
                store.save_start(self.state)
        self.terms = self.state.replay.terms
        self.name = settings.stream

    def _rejected(self, record) -> None:
        self.state.set_aside += 1
        print(record, file=self.err or sys.stderr)

    def __call__(self, frame, batch_id: int) -> None:
        if batch_id <= self.state.last_batch:
            return  # (Spark runs again the batch a killed run had not committed: it was done and saved)
        self.process(frame.toArrow(), batch_id)

    def process(self, table, batch_id: int) -> None:
        state = self.state
        buffer = io.StringIO()
        replay = state.replay
        if not state.finished and not replay.cut:
            table = in_line_order(table)
            if self.chosen.settings.language == LARS:
                replay.take(block_of(table, self.terms, self.name), buffer, self._rejected)
            else:
                replay.take(items_of(table, self.terms, self.name), buffer, self._rejected)
        self._commit(batch_id, buffer)

    def finish(self) -> None:
        """The stream ended: the last time points, then the state saved as finished."""
        state = self.state
        if state.finished:
            return
        buffer = io.StringIO()
        state.replay.end(buffer)
        state.finished = True
        self._commit(state.last_batch, buffer)

    def _commit(self, batch_id: int, buffer) -> None:
        out = self.out or sys.stdout
        text = buffer.getvalue()
        if text:
            out.write(text)
        out.flush()
        state = self.state
        state.last_batch = batch_id
        state.out_position = self.console.position()
        if self.store is not None:
            self.store.save(max(batch_id, 0), state)


def _new_replay(chosen: Plan):
    settings = chosen.settings
    if settings.language == LARS:
        from ..columnar.reason import Replay

        return Replay(chosen.program, first=settings.first, last=settings.last, pruning=settings.pruning,
                      changes=settings.changes, max_derivations=settings.max_derivations, max_gap=settings.max_gap,
                      filename=settings.stream)
    from ..mtl.run import MetricReplay

    return MetricReplay(chosen.lowered, first=settings.first, last=settings.last, changes=settings.changes,
                        max_gap=settings.max_gap, filename=settings.stream)


def _fingerprint(chosen: Plan) -> str:
    settings = chosen.settings
    what = [chosen.text, str(Path(settings.stream).resolve()), settings.language, settings.first, settings.last,
            settings.changes, settings.pruning, settings.max_derivations, settings.max_gap, settings.max_line_bytes]
    return hashlib.sha256(json.dumps(what).encode("utf-8")).hexdigest()


def _driver(chosen: Plan, spark, out, err) -> int:
    from .checkpoint import StateStore
    from .reason_source import NAME, reading_option
    from .session import task_slots

    settings = chosen.settings
    store = StateStore(settings.checkpoint, settings.checkpoint_key) if settings.checkpoint else None
    driver = ReasonDriver(chosen, out, err, store)
    frame = (spark.readStream.format(NAME).option("reading", reading_option(chosen.reading))
             .option("maxLinesPerTrigger", str(settings.batch_lines)).option("numPartitions", str(task_slots(spark)))
             .load(str(Path(settings.stream).resolve())))
    writer = frame.writeStream.foreachBatch(driver).trigger(availableNow=True)
    if settings.checkpoint:
        writer = writer.option("checkpointLocation", str(Path(settings.checkpoint) / "spark"))
    query = writer.start()
    query.awaitTermination()
    driver.finish()
    return driver.state.set_aside


# distributed mode -------------------------------------------------------------------------------------------------


def _distributed(chosen: Plan, spark, out, err) -> int:
    settings = chosen.settings
    if chosen.reach is not None and settings.language == LARS and _sliced(chosen, spark, out):
        return 0  # (the stream read clean: nothing was set aside)
    return _judged(chosen, spark, out, err)


def _sliced(chosen: Plan, spark, out) -> bool:
    """The time slices read straight from the file (`reason_slices`); False if the stream did not read clean
    (or an engine stopped at its limit): nothing was written then, and the lines are judged on the driver."""
    import pyarrow as pa

    from .reason_slices import SliceJob, byte_cuts, declarations, run_task, verified
    from .session import task_slots

    settings = chosen.settings
    path = str(Path(settings.stream).resolve())
    size = Path(path).stat().st_size
    reading = chosen.reading
    job = SliceJob(reading, chosen.text, settings.program, settings.stream, chosen.reach.reach, settings.first,
                   settings.last, settings.max_gap, settings.changes, settings.pruning, settings.max_derivations,
                   byte_cuts(path, size, task_slots(spark)),
                   declarations(path, size, reading.max_line_bytes) if reading.learns_prefixes else ())

    def task(batches):
        from ..lars.limits import LimitError

        for batch in batches:
            for k in batch.column(0).to_pylist():
                try:
                    text, report = run_task(job, k)
                except LimitError as error:
                    text, report = "", {"task": k, "clean": False, "error": str(error)}
                pieces = [text[start:start + (1 << 20)] for start in range(0, len(text), 1 << 20)] or [""]
                yield pa.RecordBatch.from_arrays(
                    [pa.array([k] * (len(pieces) + 1), pa.int32()), pa.array(range(len(pieces) + 1), pa.int32()),
                     pa.array([json.dumps(report)] + pieces, pa.string())], names=["task", "seq", "text"])

    table = (spark.range(0, job.tasks, 1, job.tasks).mapInArrow(task, "task INT, seq INT, text STRING")
             .toArrow().sort_by([("task", "ascending"), ("seq", "ascending")]))
    seq = table.column("seq").to_pylist()
    texts = table.column("text").to_pylist()
    reports = [json.loads(text) for number, text in zip(seq, texts) if number == 0]
    if any("error" in report for report in reports) or verified(job, reports) is None:
        return False
    target = out or sys.stdout
    for number, text in zip(seq, texts):
        if number:
            target.write(text)
    target.flush()
    return True


def _judged(chosen: Plan, spark, out, err) -> int:
    """The general way: every line judged on the driver (`reason_parts.admit`), the taken rows shared out by
    key or by time slice through Spark (`groupBy(part).applyInArrow`), the parts' changes merged."""
    import pyarrow as pa
    from pyspark.sql import functions as F

    from .reason_parts import PART_SCHEMA, Merge, admit, assign, plan_job, run_part
    from .reason_source import NAME, reading_option
    from .session import task_slots

    settings = chosen.settings
    slots = task_slots(spark)
    frame = (spark.read.format(NAME).option("reading", reading_option(chosen.reading))
             .option("numPartitions", str(slots)).load(str(Path(settings.stream).resolve())))
    narrow = frame.select("line", "first", "last", "predicate",
                          F.coalesce(F.size("args"), F.lit(0)).alias("arity"), "rejected").toArrow()
    narrow = in_line_order(narrow)
    admission = admit(settings.language, narrow, terms=chosen.program.terms, lowered=chosen.lowered,
                      first=settings.first, last=settings.last, max_gap=settings.max_gap, filename=settings.stream)
    for record in admission.records:
        print(record, file=err or sys.stderr)
    if admission.span is None:
        return len(admission.records)
    parts = slots * 2 if isinstance(chosen.split, KeyLocal) else slots
    job = plan_job(settings.language, chosen.text, settings.program, settings.stream, chosen.program, chosen.split,
                   admission.span, parts, pruning=settings.pruning, max_derivations=settings.max_derivations)
    labels = _labels(spark, job.parts, slots)
    part_of = {label: part for part, label in enumerate(labels)}
    cut_line, first, dropped = admission.cut_line, admission.first, sorted(admission.dropped)

    def share(batches):
        import numpy as np

        drop = np.asarray(dropped, dtype=np.int64)
        for batch in batches:
            table = pa.Table.from_batches([batch])
            lines = np.asarray(table.column("line").to_numpy(), dtype=np.int64)
            keep = np.ones(len(lines), dtype=bool)
            if cut_line is not None:
                keep &= lines < cut_line
            if first is not None:
                keep &= np.asarray(table.column("first").to_numpy(), dtype=np.int64) >= first
            if len(drop):
                keep &= ~np.isin(lines, drop)
            if not keep.all():
                table = table.filter(pa.array(keep))
            given = assign(job, table)
            if given.num_rows:
                numbers = np.asarray(given.column("part").to_numpy(), dtype=np.int64)
                given = given.set_column(given.column_names.index("part"), "part",
                                         pa.array(np.asarray(labels, dtype=np.int32)[numbers]))
                yield from given.to_batches()

    def engine(key, table):
        return run_part(job, part_of[key[0].as_py()], table.drop_columns(["part"]))

    from pyspark.sql.types import IntegerType, StructField, StructType

    schema = StructType([*frame.schema.fields, StructField("part", IntegerType())])
    shared = frame.where("rejected IS NULL").mapInArrow(share, schema)
    results = shared.groupBy("part").applyInArrow(engine, PART_SCHEMA)
    before = spark.conf.get("spark.sql.adaptive.coalescePartitions.enabled", "true")
    partitions = spark.conf.get("spark.sql.shuffle.partitions")
    spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", "false")  # one part per task slot, kept
    spark.conf.set("spark.sql.shuffle.partitions", str(slots))
    try:
        table = results.toArrow()
    finally:
        spark.conf.set("spark.sql.adaptive.coalescePartitions.enabled", before)
        spark.conf.set("spark.sql.shuffle.partitions", partitions)
    Merge(job, out or sys.stdout, settings.changes).write(table)
    (out or sys.stdout).flush()
    return len(admission.records)


def _labels(spark, parts: int, slots: int) -> list[int]:
    """A label per part such that part k's label lands in shuffle partition k mod `slots` (Spark hashes a
    group's key: labels 0, 1 may share a partition and leave a slot idle)."""
    from pyspark.sql import functions as F

    wanted = [k % slots for k in range(parts)]
    rows = (spark.range(0, 64 * max(parts, slots)).select(F.col("id").cast("int").alias("label"))
            .select("label", F.pmod(F.hash("label"), F.lit(slots)).alias("slot")).toArrow())
    free: dict[int, list[int]] = {}
    for label, slot in zip(rows.column("label").to_pylist(), rows.column("slot").to_pylist()):
        free.setdefault(slot, []).append(label)
    return [free[slot].pop(0) for slot in wanted]


__all__ = ["Settings", "Plan", "plan", "run", "ReasonDriver", "ReasonState", "BATCH_LINES"]
