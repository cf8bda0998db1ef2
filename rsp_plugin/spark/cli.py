"""`rsp-plugin query ... --engine spark [--master URL] [--checkpoint DIR]`: the same replay, on Spark.

The stream files are read by the `rdf` source (parsed in the executors), the
micro-batch driver feeds the same engine as `--engine local`, and the same JSON
lines come out on stdout. Lines set aside are reported on stderr as
`FILE:LINE: reason`; a progress line per micro-batch goes to stderr too.
"""

from __future__ import annotations

import sys

from .. import limits
from ..commands.query import engine_for
from .sinks import ConsoleSink

#: Lines of a stream file per micro-batch (a replay reads its files in batches of this size).
BATCH_LINES = 50_000


def cli_run(options, user_error) -> int:
    """Run `rsp-plugin query` with `--engine spark`; `options` are the command line's (argparse)."""
    from . import run_query
    from .driver import Progress
    from .session import spark_session

    engine, _, sources = engine_for(options, user_error)
    if any(source.live for source in sources):
        raise user_error("--engine spark reads stream files; standard input (IRI=-) and sockets are read by --engine local")
    sources = [(source.iri, source.path, source.moment) for source in sources]

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
    run = run_query(spark, engine, frames, ConsoleSink(fmt=options.format),
                    checkpoint=getattr(options, "checkpoint", None),
                    progress=None if quiet else Progress(total_rows=_lines(p for _, p, _ in sources)))
    driver = run.wait()
    if driver.state.set_aside:
        count = driver.state.set_aside
        print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def _lines(paths) -> int:
    total = 0
    for path in paths:
        with open(path, "rb") as handle:
            total += sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 22), b""))
    return total
