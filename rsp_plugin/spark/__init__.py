"""rsp_plugin on Apache Spark: Structured Streaming in, continuous queries per micro-batch, results out.

    from rsp_plugin.spark import spark_session, run_query

    spark = spark_session()                              # local[2] by default; any master URL
    run = run_query(spark, "queries/hot.rq", {"http://ex/sensors": "data/sensors/"}, "out/hot.jsonl",
                    checkpoint="chk/hot")
    run.wait()                                           # a replay: until the files are read, then the last windows

Modules: `session` (a session with the right Python and the `rdf` source),
`source` (the `rdf` data source), `http` (the `rdf-http` source), `lines`
(Spark's own text / socket sources as .tnt lines), `driver` (the micro-batch
driver for foreachBatch), `sinks`, `checkpoint` (the driver's state),
`partitioned` (PARTITION BY: per-key state in Spark's state store), `cli`
(`rsp-plugin query --engine spark`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Iterable

from ..core.extras import require

require("spark", "rsp_plugin.spark")

from .session import register, spark_session, use_this_python  # noqa: E402 (after the check naming the extra)

COLUMNS = ("stream", "s", "p", "o", "ts", "rejected")


class SparkRun:
    """A running query: the Spark streaming query and the driver feeding the engine."""

    def __init__(self, query, driver, replay: bool):
        self.query = query
        self.driver = driver
        self.replay = replay

    def __repr__(self) -> str:
        return f"<SparkRun {self.query.id} replay={self.replay} {self.driver!r}>"

    @property
    def engine(self):
        return self.driver.engine

    def wait(self, timeout: float | None = None):
        """Wait for the streaming query to end; a replay then reports its last windows."""
        if timeout is None:
            self.query.awaitTermination()
        elif not self.query.awaitTermination(timeout):
            return self.driver
        if self.replay:
            self.driver.finish()
        return self.driver

    def stop(self) -> None:
        self.query.stop()


def run_query(spark, query, sources, sink="console", *, checkpoint: str | Path | None = None,
              checkpoint_key: str | Path | None = None, background: Iterable = (), graphs: dict | None = None, report: str = "on-window-close",
              trigger: str | dict = "availableNow", delay_ms: int = 0, dead_letters: str | Path | None = None,
              progress=None, max_lines_per_trigger: int | None = None, options: dict | None = None) -> SparkRun:
    """Run a continuous query on Spark: `sources` in, `sink` out; returns a `SparkRun` (call `.wait()`).

    query    the query's text or file, or an `RSPEngine` with queries registered
    sources  {stream IRI: DataFrame with the `rdf` columns, or a path read with format("rdf")}
             (or a list of (IRI, source) pairs)
    sink     a `Sink`, a callable, "console", "memory:NAME", an http(s) URL, or a .jsonl / .nt / .trig file
    trigger  "availableNow" (a replay: read what is there, then `wait()` reports the last windows),
             "once", or {"processingTime": "1 second"} for a live stream
    checkpoint  a directory: Spark's offsets and the driver's state; a restarted run goes on from there
    checkpoint_key  a key file (private: mode 0600) the driver's states are authenticated with; default
             $RSP_PLUGIN_CHECKPOINT_KEY, else `checkpoint`/rsp-plugin.key, made at the first write
    """
    from ..io.lines import count_lines
    from ..query.model import ReportPolicy
    from ..runtime.engine import RSPEngine
    from .checkpoint import StateStore
    from .driver import MicroBatchDriver, Progress
    from .sinks import DeadLetters, sink_for

    register(spark)
    pairs = list(sources.items()) if isinstance(sources, dict) else list(sources)
    if not pairs:
        raise ValueError("run_query needs at least one source")
    streams = list(dict.fromkeys(str(iri) for iri, _ in pairs))
    if isinstance(query, RSPEngine):
        engine = query
        for iri in streams:
            engine.register_stream(iri)
    else:
        engine = RSPEngine()
        for iri in streams:
            engine.register_stream(iri)
        for source in background:
            engine.add_background(source)
        for iri, source in (graphs or {}).items():
            engine.add_graph(iri, source)
        text, filename = _query_text(query)
        engine.register_query(text, filename=filename, report=ReportPolicy(report))
    frame = None
    total = 0
    for lane, (iri, source) in enumerate(pairs):
        part = _stream_frame(spark, str(iri), source, max_lines_per_trigger, options or {}, lane)
        total = None if total is None or not isinstance(source, (str, Path)) else total + count_lines([source])
        frame = part if frame is None else frame.unionByName(part)
    if progress is True:
        progress = Progress(total_rows=total)
    elif progress is False:
        progress = None
    store = StateStore(checkpoint, checkpoint_key) if checkpoint is not None else None
    lanes = [str(iri) for iri, _ in pairs]  # one per source, merged by time as the local replay merges files
    driver = MicroBatchDriver(engine, sink_for(sink, spark), streams=lanes, delay_ms=delay_ms, store=store,
                              dead_letters=DeadLetters(dead_letters), progress=progress)
    started, replay = _start(frame, driver, checkpoint, trigger)
    return SparkRun(started, driver, replay)


def _start(frame, driver, checkpoint, trigger):
    """Start `frame` streaming into `driver` (foreachBatch): (the StreamingQuery, whether it is a
    replay that ends by itself). Spark's offsets go under `checkpoint`/spark when given."""
    writer = frame.writeStream.foreachBatch(driver)
    if checkpoint is not None:
        writer = writer.option("checkpointLocation", str(Path(checkpoint) / "spark"))
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


def _stream_frame(spark, iri: str, source, max_lines: int | None, options: dict, lane: int):
    from pyspark.sql import functions as F

    if isinstance(source, (str, Path)):
        reader = spark.readStream.format("rdf").option("stream", iri)
        if not any(key.lower() == "numpartitions" for key in options):
            from .session import task_slots

            reader = reader.option("numPartitions", task_slots(spark))  # a parse task per task slot
        if max_lines:
            reader = reader.option("maxLinesPerTrigger", max_lines)
        for key, value in options.items():
            reader = reader.option(key, value)
        frame = reader.load(str(source))
    else:
        frame = source
    if "rejected" not in frame.columns:
        frame = frame.withColumn("rejected", F.lit(None).cast("string"))
    return frame.select(*COLUMNS).withColumn("lane", F.lit(lane))


__all__ = ["run_query", "spark_session", "register", "use_this_python", "SparkRun", "COLUMNS"]
