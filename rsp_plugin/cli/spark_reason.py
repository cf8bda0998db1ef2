"""`rsp-plugin reason PROGRAM --stream FILE --engine spark [--mode driver|distributed] [--master M] [--checkpoint DIR]`.

Every refusal is said before Spark starts (a usage error: one line, exit
status 2), and so is the line saying why `--mode distributed` runs a program on
the driver (`rsp_plugin.spark.reason.plan`); then `rsp_plugin.spark.reason`
runs it and the lines set aside are counted on stderr as `--engine local`
counts them.
"""

from __future__ import annotations

import sys
from pathlib import Path

from ..core import limits

#: the options only `--engine spark` reads
SPARK_ONLY = ("mode", "master", "checkpoint", "checkpoint_key", "batch_lines")


def reason_on_spark(options, user_error) -> int:
    """The `reason` command with `--engine spark` (or a Spark option given without it: refused)."""
    settings = _settings(options, user_error)
    from ..runtime.state import StateError
    from ..spark.reason import plan, run

    chosen = plan(settings)  # (a mistake in the program: its located error, before Spark starts)
    if chosen.note:
        print(f"rsp-plugin: {chosen.note}", file=sys.stderr, flush=True)
    from ..spark.session import spark_session

    spark = spark_session(getattr(options, "master", None))
    try:
        count = run(chosen, spark)
    except StateError as refused:  # a checkpoint refused: its one line, not a traceback
        raise user_error(str(refused)) from None
    if count:
        print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def _settings(options, user_error):
    from ..mtl.run import DATALOGMTL, detect_language
    from ..spark.reason import BATCH_LINES, Settings

    if options.engine != "spark":
        given = next(name for name in SPARK_ONLY if getattr(options, name, None) is not None)
        raise user_error(f"--{given.replace('_', '-')} is read by --engine spark")
    stream = options.stream
    if stream == "-" or stream.startswith(("mqtt://", "mqtts://")):
        raise user_error("--engine spark reads a stream file; standard input (-) and brokers (mqtt://) are read by "
                         "--engine local")
    if options.input_format:
        raise user_error("--input-format is the format of standard input (--stream -); a file's extension says "
                         "how it is read")
    if options.explain is not None or options.at is not None:
        raise user_error("--explain is given by --engine local (the explanations are kept by its engine)")
    if options.semantics != "stream":
        raise user_error("--semantics answer-stream is run by --engine local")
    if options.models != "1" or options.solver_timeout is not None:
        raise user_error("--models and --solver-timeout are for --semantics answer-stream")
    if options.checkpoint_key is not None and options.checkpoint is None:
        raise user_error("--checkpoint-key authenticates the states of --checkpoint DIR: give both")
    if options.batch_lines is not None and options.batch_lines < 1:
        raise user_error(f"--batch-lines {options.batch_lines}: expected a positive number of lines")
    try:
        with Path(stream).open("rb"):
            pass
    except OSError as error:
        raise user_error(f"{stream}: cannot read the stream: {error.strerror}") from None
    if Path(stream).is_dir():
        raise user_error(f"{stream}: cannot read the stream: it is a directory")
    if options.first is not None and options.last is not None and options.first > options.last:
        raise user_error(f"--from {options.first} is after --to {options.last}")
    language = options.language or detect_language(options.program, stream)
    return Settings(program=options.program, stream=str(Path(stream)), language=DATALOGMTL if language == DATALOGMTL else "lars",
                    mode=options.mode or "driver", first=options.first, last=options.last,
                    changes=options.changes, pruning=not options.no_pruning, max_derivations=options.max_derivations,
                    max_gap=getattr(options, "max_gap", limits.MAX_GAP_TIME_POINTS),
                    max_line_bytes=getattr(options, "max_line_bytes", limits.MAX_LINE_BYTES),
                    checkpoint=options.checkpoint, checkpoint_key=options.checkpoint_key,
                    batch_lines=options.batch_lines or BATCH_LINES)
