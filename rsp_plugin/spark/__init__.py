"""rsp_plugin on Apache Spark: Structured Streaming in, continuous queries per micro-batch, results out.

    from rsp_plugin.spark import run, spark_session

    spark = spark_session()                              # local[2] by default; any master URL
    query = run(spark, "queries/hot.rq", {"http://ex/sensors": "data/sensors/"}, "out/hot.jsonl",
                checkpoint="chk/hot")                    # mode="driver" | "distributed" | "partitioned"
    query.wait()                                         # a replay: until the files are read, then the last windows

One entry point, `run`, for the three modes: `driver` (one engine on the driver,
fed by Spark: every query), `distributed` (windows, entailment, joins and
aggregates as Spark plans on the executors: `distributed`), `partitioned` (one
engine per key in Spark's state store: `partitioned`); each returns a `SparkRun`.
`check_mode` says, without Spark, whether a query runs in a mode.

Modules: `session` (a session with the right Python and the `rdf` source),
`source` (the `rdf` data source), `http` (the `rdf-http` source), `lines`
(Spark's own text / socket sources as .tnt lines), `driver` (the micro-batch
driver for foreachBatch), `sinks`, `checkpoint` (the driver's state),
`distributed`, `partitioned`, `locality` (which entailments keep to a key).
`rsp-plugin reason --engine spark` (LARS and DatalogMTL programs): `reason`
(the plan and both modes), `rule_split` (which programs split by key or by
time slices, and the proofs), `reason_rows` / `reason_source` (the stream file
as rows, the `rsp-reason` source), `reason_parts` (judged rows shared out and
merged), `reason_slices` (time slices read straight from the file).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..core.extras import require

require("spark", "rsp_plugin.spark")

from .session import register, spark_session, use_this_python  # noqa: E402 (after the check naming the extra)

COLUMNS = ("stream", "s", "p", "o", "ts", "rejected")

#: how a query runs on Spark (`run(..., mode=...)`)
MODES = ("driver", "distributed", "partitioned")


class SparkRun:
    """A query running on Spark, whichever its mode: the streaming query and the driver it feeds.

    `wait()` until it ends (a replay: once its sources are read; then its last windows are reported),
    `stop()` a live one; `set_aside` (stream lines set aside so far), `state` (the driver's counts and,
    in driver mode, its engine) and `batch_seconds` (each micro-batch's latency)."""

    def __init__(self, mode: str, query, driver, replay: bool, scratch: str | Path | None = None):
        self.mode = mode
        self.query = query
        self.driver = driver
        self.replay = replay
        self._scratch = scratch

    def __repr__(self) -> str:
        return f"<SparkRun {self.mode} {self.query.id} replay={self.replay} {self.driver!r}>"

    @property
    def state(self):
        return self.driver.state

    @property
    def set_aside(self) -> int:
        return self.driver.state.set_aside

    @property
    def batch_seconds(self) -> list[float]:
        return self.driver.batch_seconds

    @property
    def engine(self):
        """Driver mode: the engine being fed (after a restart, the one restored from the checkpoint)."""
        return self.driver.engine

    def wait(self, timeout: float | None = None) -> SparkRun:
        """Wait for the streaming query to end (at most `timeout` seconds); a replay then reports its last
        windows. A key's state that an executor refused (partitioned mode) is its one line: `StateError`."""
        try:
            if timeout is None:
                self.query.awaitTermination()
            elif not self.query.awaitTermination(timeout):
                return self
            if self.replay:
                self.driver.finish()
        except Exception as error:
            self._clean()
            refused = _state_error_in(error)
            if refused is None:
                raise
            raise refused from None
        self._clean()
        return self

    def stop(self) -> None:
        self.query.stop()

    def _clean(self) -> None:
        """The scratch directory of a run without a checkpoint (its window files, its state store)."""
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None


def run(spark, query, sources, sink="console", *, mode: str | None = None, key: str | None = None,
        checkpoint: str | Path | None = None, checkpoint_key: str | Path | None = None, background: Iterable = (),
        graphs: dict | None = None, report: str | None = None, trigger: str | dict = "availableNow",
        delay_ms: int = 0, dead_letters=None, progress=None, max_lines_per_trigger: int | None = None,
        options: dict | None = None, name: str | None = None, plan=None) -> SparkRun:
    """Run a continuous query on Spark: `sources` in, `sink` out; returns a `SparkRun` (call `.wait()`).

    query    the query's text or file, or an `RSPEngine` with the query registered (its streams, background
             and graphs as the caller read them)
    sources  {stream IRI: DataFrame with the `rdf` columns, or a path read with format("rdf")}
             (or a list of (IRI, source) pairs)
    sink     a `Sink`, a callable, "console", "memory:NAME", an http(s) URL, a .jsonl / .nt / .trig file, or a list
    mode     "driver" (one engine on the driver: every query), "distributed" (`NotDistributed` for a query it
             does not run yet) or "partitioned" (one engine per value of ?`key`, or of the query's first line
             `PARTITION BY ?key`; `NotKeyLocal` for a query it cannot split); default: partitioned when a key
             is given, else driver. Both refusals come before anything runs (`check_mode`; `plan`: its answer).
    trigger  "availableNow" (a replay: read what is there, then `wait()` reports the last windows),
             "once", or {"processingTime": "1 second"} for a live stream
    checkpoint  a directory: Spark's offsets and the driver's state; a restarted run goes on from there
    checkpoint_key  a key file (private: mode 0600) the driver's states are authenticated with; default
             $RSP_PLUGIN_CHECKPOINT_KEY, else `checkpoint`/rsp-plugin.key, made at the first write
    progress True (a line per micro-batch on stderr), False / None, or an object with `report` and `note`
    """
    from ..io.lines import count_lines
    from .driver import Progress
    from .sinks import DeadLetters, sink_for

    register(spark)
    pairs = list(sources.items()) if isinstance(sources, dict) else list(sources)
    if not pairs:
        raise ValueError("run needs at least one source")
    engine, written_key = _engine_of(query, pairs, background, graphs, report)
    key = key or written_key
    mode = mode or ("partitioned" if key else "driver")
    if mode not in MODES:
        raise ValueError(f"mode {mode!r}: expected one of {', '.join(MODES)}")
    if key and mode != "partitioned":
        raise ValueError(f"a key (?{key.lstrip('?')}) splits the stream in partitioned mode, not in {mode} mode")
    if plan is None:
        plan = check_mode(engine, mode, key=key, name=name, lanes=len(pairs))
    frame = None
    total = 0
    # distributed mode over one stream of files: the executors parse the files' pieces themselves, into the
    # engine's ids (`distributed.slices`): the triples never become Spark rows
    pieces = mode == "distributed" and len(pairs) == 1 and (isinstance(pairs[0][1], (str, Path))
                                                          or _holds_pieces(pairs[0][1]))
    for lane, (iri, source) in enumerate(pairs):
        part = _stream_frame(spark, str(iri), source, max_lines_per_trigger, options or {}, lane, pieces=pieces)
        if progress is not True or total is None or not isinstance(source, (str, Path)):
            total = None  # (the lines are counted only for the progress bar: it reads every file)
        else:
            total += count_lines([source])
        frame = part if frame is None else frame.unionByName(part)
    if progress is True:
        progress = Progress(total_rows=total)
    elif progress is False:
        progress = None
    target = sink_for(sink, spark)
    dead = dead_letters if isinstance(dead_letters, DeadLetters) else DeadLetters(dead_letters)
    lanes = [str(iri) for iri, _ in pairs]  # one per source, merged by time as the local replay merges files
    if mode == "partitioned":
        from .partitioned import start_partitioned

        return start_partitioned(spark, plan, engine, frame, lanes, target, checkpoint=checkpoint,
                                 checkpoint_key=checkpoint_key, dead_letters=dead, progress=progress, trigger=trigger)
    if mode == "distributed":
        from .distributed import start_distributed

        return start_distributed(spark, plan, frame, lanes, target, checkpoint=checkpoint,
                                 checkpoint_key=checkpoint_key, dead_letters=dead, progress=progress,
                                 delay_ms=delay_ms, trigger=trigger, pieces=pieces)
    from .checkpoint import StateStore
    from .driver import MicroBatchDriver

    store = StateStore(checkpoint, checkpoint_key) if checkpoint is not None else None
    driver = MicroBatchDriver(engine, target, streams=lanes, delay_ms=delay_ms, store=store, dead_letters=dead,
                              progress=progress)
    started, replay = _start(frame.writeStream.foreachBatch(driver), _offsets(checkpoint), trigger)
    return SparkRun("driver", started, driver, replay)


def _offsets(checkpoint) -> Path | None:
    """Where Spark keeps a run's offsets: `<checkpoint>/spark` (None: no checkpoint, Spark's own scratch)."""
    return None if checkpoint is None else Path(checkpoint) / "spark"


def check_mode(engine, mode: str, *, key: str | None = None, name: str | None = None, lanes: int | None = None):
    """Whether the query registered on `engine` runs in `mode`, decided without Spark: its plan (distributed:
    a `DistributedPlan`; partitioned: a `KeyPlan` for ?`key`; driver: None), or `NotDistributed` /
    `NotKeyLocal` saying why not. `name`: which query, when several are registered (distributed mode);
    `lanes`: how many sources feed it."""
    if mode == "distributed":
        from .distributed import plan_of

        return plan_of(engine, name, lanes)
    if mode == "partitioned":
        from .partitioned import engine_key_plan

        return engine_key_plan(engine, key)
    return None


def _engine_of(query, pairs, background, graphs, report) -> tuple:
    """(the `RSPEngine` that runs `query`, with the sources' streams registered; the key of a `PARTITION BY`
    line of a query's text, else None)."""
    from ..core.iris import file_iri
    from ..query.model import ReportPolicy
    from ..runtime.engine import RSPEngine

    streams = list(dict.fromkeys(str(iri) for iri, _ in pairs))
    if isinstance(query, RSPEngine):
        for iri in streams:
            query.register_stream(iri)
        return query, None
    from .partitioned import split_partition_clause

    engine = RSPEngine()
    for iri in streams:
        engine.register_stream(iri)
    for source in background:
        engine.add_background(source)
    for iri, source in (graphs or {}).items():
        engine.add_graph(iri, source)
    text, filename = _query_text(query)
    text, key = split_partition_clause(text)
    base = None if filename.startswith("<") else file_iri(Path(filename).resolve().parent) + "/"  # as the CLI's
    engine.register_query(text, filename=filename, base=base, report=ReportPolicy(report) if report else None)
    return engine, key


def _state_error_in(error: Exception):
    """The `StateError` an executor raised (a key's state refused), in its own words, from the exception Spark
    made of it; None for any other error."""
    import re

    from ..runtime.state import StateError

    if isinstance(error, StateError):
        return error
    found = re.search(r"rsp_plugin\.(?:runtime\.)?state\.StateError: ([^\n]+)", str(error))
    return StateError(found.group(1)) if found else None


def _start(writer, location, trigger):
    """Start a stream (`writer`: its `writeStream`, with its foreachBatch) under `trigger`: (the
    StreamingQuery, whether it is a replay that ends by itself). Spark's offsets (and state store)
    go to `location` when given: `<checkpoint>/spark`."""
    if location is not None:
        writer = writer.option("checkpointLocation", str(location))
    if trigger == "availableNow":
        writer = writer.trigger(availableNow=True)
    elif trigger == "once":
        writer = writer.trigger(once=True)
    elif isinstance(trigger, dict):
        writer = writer.trigger(**trigger)
    return writer.start(), trigger in ("availableNow", "once")


def _query_text(query) -> tuple[str, str]:
    text = str(query)
    if "\n" not in text and len(text) < 4096 and Path(text).is_file():
        from ..core.errors import QuerySyntaxError
        from ..io.lines import decode_text

        return decode_text(Path(text).read_bytes(), text, QuerySyntaxError), text
    return text, "<query>"


def _holds_pieces(source) -> bool:
    """Is `source` a DataFrame of the `rdf` source's pieces of files (`emit` pieces), not of its triples?"""
    columns = getattr(source, "columns", None)
    return columns is not None and "path" in columns and "s" not in columns


def _stream_frame(spark, iri: str, source, max_lines: int | None, options: dict, lane: int, pieces: bool = False):
    """The source's rows with their `lane`; with `pieces`, the pieces of files the `rdf` source would parse
    (`emit` pieces: a path source only)."""
    from pyspark.sql import functions as F

    if isinstance(source, (str, Path)):
        reader = spark.readStream.format("rdf").option("stream", iri)
        if pieces:
            reader = reader.option("emit", "pieces")
        if not any(key.lower() == "numpartitions" for key in options):
            from .session import task_slots

            reader = reader.option("numPartitions", task_slots(spark))  # a parse task per task slot
        if max_lines:
            reader = reader.option("maxLinesPerTrigger", max_lines)
        for key, value in options.items():
            reader = reader.option(key, value)
        frame = reader.load(str(source))
        if pieces:
            return frame
    else:
        frame = source
        if _holds_pieces(frame):  # (the `rdf` source's `emit` pieces: the caller chose the executors parse)
            if not pieces:
                raise ValueError("a frame of the rdf source's pieces (emit=pieces) is read by distributed mode "
                                 "over one source only")
            return frame
    if "rejected" not in frame.columns:
        frame = frame.withColumn("rejected", F.lit(None).cast("string"))
    return frame.select(*COLUMNS).withColumn("lane", F.lit(lane))


__all__ = ["COLUMNS", "MODES", "SparkRun", "check_mode", "register", "run", "spark_session", "use_this_python"]
