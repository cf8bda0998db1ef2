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

from ..core.errors import UserError
from ..core.extras import require
from .options import ReasonOptions


def reason_on_spark(options: ReasonOptions, language: str) -> int:
    """The `reason` command with `--engine spark`, the program in `language` (`cli.reason.program_language`)."""
    settings = _settings(options, language)
    from ..runtime.state import StateError
    from ..spark.reason import plan, run

    chosen = plan(settings)  # (a mistake in the program: its located error, before Spark starts)
    if chosen.note:
        print(f"rsp-plugin: {chosen.note}", file=sys.stderr, flush=True)
    from ..spark.session import spark_session

    spark = spark_session(options.master, log_level=options.spark_log_level or "ERROR")
    try:
        count = run(chosen, spark)
    except StateError as refused:  # a checkpoint refused: its one line, not a traceback
        raise UserError(str(refused)) from None
    if count:
        print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def _settings(options: ReasonOptions, language: str):
    """The run's `spark.reason.Settings`, or the `UserError` saying what `--engine spark` does not do."""
    from ..mtl.run import DATALOGMTL

    stream = options.stream
    if stream == "-" or stream.startswith(("mqtt://", "mqtts://")):
        raise UserError("--engine spark reads a stream file; standard input (-) and brokers (mqtt://) are read by "
                        "--engine local")
    if options.input_format:
        raise UserError("--input-format is the format of standard input (--stream -); a file's extension says "
                        "how it is read")
    if options.explain is not None or options.at is not None:
        raise UserError("--explain is given by --engine local (the explanations are kept by its engine)")
    if options.semantics != "stream":
        raise UserError("--semantics answer-stream is run by --engine local")
    if options.models != "1" or options.solver_timeout is not None:
        raise UserError("--models and --solver-timeout are for --semantics answer-stream")
    if options.checkpoint_key is not None and options.checkpoint is None:
        raise UserError("--checkpoint-key authenticates the states of --checkpoint DIR: give both")
    if options.batch_lines is not None and options.batch_lines < 1:
        raise UserError(f"--batch-lines {options.batch_lines}: expected a positive number of lines")
    path = Path(stream)
    if path.is_dir():
        raise UserError(f"{stream}: cannot read the stream: it is a directory")
    try:
        with path.open("rb"):
            pass
    except OSError as error:
        raise UserError(f"{stream}: cannot read the stream: {error.strerror}") from None
    if options.first is not None and options.last is not None and options.first > options.last:
        raise UserError(f"--from {options.first} is after --to {options.last}")
    require("spark", "--engine spark")
    from ..spark.reason import BATCH_LINES, Settings

    return Settings(program=options.program, stream=str(path),
                    language=DATALOGMTL if language == DATALOGMTL else "lars", mode=options.mode or "driver",
                    first=options.first, last=options.last,
                    changes=options.changes, pruning=options.pruning, max_derivations=options.max_derivations,
                    max_gap=options.max_gap, max_line_bytes=options.max_line_bytes,
                    checkpoint=options.checkpoint, checkpoint_key=options.checkpoint_key,
                    batch_lines=options.batch_lines or BATCH_LINES)
