"""`rsp-plugin query ... --engine spark [--master URL] [--checkpoint DIR] [--mode driver|distributed] [--partition-by VAR]`.

The stream files are read by the `rdf` source (parsed in the executors); then

- `--mode driver` (default): the micro-batch driver feeds the same engine as
  `--engine local`, on the driver;
- `--mode distributed`: windows, entailment, joins and aggregates run as Spark
  plans on the executors (`rsp_plugin.spark.distributed`); a query with a part
  it does not cover yet is said so in one line on stderr and runs in driver mode;
- `--partition-by VAR`: one engine per key on the executors
  (`rsp_plugin.spark.partitioned`); a query that is not key-local is refused.

The same JSON lines come out on stdout (partitioned mode: one line per key and
instant, with its "key"). Lines set aside are reported on stderr as
`FILE:LINE: reason`; a progress line per micro-batch goes to stderr too.
"""

from __future__ import annotations

import sys

from .. import limits
from ..lines import count_lines
from .query import engine_for, readable_for
from ..spark.sinks import ConsoleSink

#: Lines of a stream file per micro-batch (a replay reads its files in batches of this size).
BATCH_LINES = 50_000


def cli_run(options, user_error) -> int:
    """Run `rsp-plugin query` with `--engine spark`; `options` are the command line's (argparse)."""
    return start(options, user_error).finish()


class Started:
    """A query the command line has started on Spark: `finish()` waits for its end (a replay reads
    its files, then reports the last windows) and says on stderr how many lines were set aside."""

    def __init__(self, wait):
        self._wait = wait

    def finish(self) -> int:
        count = self._wait()
        if count:
            print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
        return 0


def start(options, user_error, *, out=None) -> Started:
    """Start what `rsp-plugin query ... --engine spark` asks for, writing its JSON lines to `out`
    (stdout by default). Several may run at once in one Spark session (each its own streaming query)."""
    from ..spark import run_query
    from ..spark.driver import Progress
    from ..spark.session import spark_session

    engine, registered, sources = engine_for(options, user_error)
    if any(source.live for source in sources):
        raise user_error("--engine spark reads stream files; standard input (IRI=-) and sockets are read by --engine local")
    sources = [(source.iri, source.path, source.moment) for source in sources]

    mode = getattr(options, "mode", None) or "driver"
    key = getattr(options, "partition_by", None)
    if key and getattr(options, "mode", None) == "distributed":
        raise user_error("--partition-by runs partitioned mode; --mode distributed is another: choose one")
    plan = None
    if mode == "distributed" and not key:
        from ..spark.distributed import NotDistributed, plan_of

        try:
            plan = plan_of(engine)
        except NotDistributed as why:
            print(f"rsp-plugin: --mode distributed: {why} is not distributed yet; the query runs in --mode driver",
                  file=sys.stderr)
    spark = spark_session(getattr(options, "master", None))
    frames = []
    for iri, path, moment in sources:
        reader = (spark.readStream.format("rdf").option("stream", iri)
                  .option("maxLinesPerTrigger", getattr(options, "batch_lines", None) or BATCH_LINES)
                  .option("maxLineBytes", str(getattr(options, "max_line_bytes", limits.MAX_LINE_BYTES))))
        if path.suffix.lower() not in (".tnt", ".trig", ".nq", ".nquads"):
            reader = reader.option("timestamp", str(moment))
        frames.append((iri, reader.load(str(path.resolve()))))
    quiet = getattr(options, "quiet", False)
    progress = None if quiet else Progress(total_rows=count_lines(p for _, p, _ in sources))
    checkpoint = getattr(options, "checkpoint", None)
    sink = ConsoleSink(out, fmt=options.format, readable=readable_for(options, registered.query))
    if key:
        from ..spark.partitioned import run_partitioned_engine

        state = run_partitioned_engine(spark, engine, frames, sink, key=key, checkpoint=checkpoint,
                                       progress=progress)
        return Started(lambda: state.set_aside)
    if plan is not None:
        from ..spark.distributed import run_distributed

        run = run_distributed(spark, engine, frames, sink, checkpoint=checkpoint, progress=progress)
    else:
        run = run_query(spark, engine, frames, sink, checkpoint=checkpoint, progress=progress)
    return Started(lambda: run.wait().state.set_aside)
