"""`rsp-plugin reason PROGRAM --stream FILE|-|mqtt://...`: the one place that picks how a program runs.

`reason(options)` decides once: which language the program is in (`--language`,
else `mtl.run.detect_language`: its extension, its content, a peek at the stream
file), then Spark (`--engine spark`: `cli/spark_reason.py`), a broker's topic
(LARS, read as it comes), an explanation (`cli/explain.py`), a DatalogMTL
program, an answer stream (`cli/answers.py`) or a LARS program over its stream
(`columnar.reason`); `--prefixes` / `--time iso` rewrite whichever lines come
out. Around every engine: the stream opened after checking `--from` / `--to` (a
file or standard input, `--stream -`), the lines it sets aside said on stderr
and counted.
"""

from __future__ import annotations

import sys
from contextlib import contextmanager
from pathlib import Path

from ..core.errors import UserError
from ..core.extras import require
from .options import ReasonOptions


def reason(options: ReasonOptions) -> int:
    """The `reason` command: one JSON line per time point on stdout (or an explanation), exit status 0
    (1: the atom explained does not hold)."""
    if options.engine != "spark":
        given = next((name for name, value in options.spark_only.items() if value is not None), None)
        if given is not None:
            raise UserError(f"--{given} is read by --engine spark")
    broker = options.stream.startswith(("mqtt://", "mqtts://"))  # (io.mqtt.is_broker, without its imports)
    language = program_language(options, broker=broker)
    if options.prefixes or options.time != "ms":
        with readable_output(options, language):  # the usual lines, rewritten for people
            return _run(options, language, broker)
    return _run(options, language, broker)


def _run(options: ReasonOptions, language: str, broker: bool) -> int:
    from ..mtl.run import DATALOGMTL

    if options.engine == "spark":  # Spark reads the stream file (rsp_plugin/cli/spark_reason.py)
        from .spark_reason import reason_on_spark

        return reason_on_spark(options, language)
    if broker:  # a broker's topic (rsp_plugin/io/mqtt.py)
        return reason_from_broker(options, language)
    if options.explain is not None:  # why an atom holds (rsp_plugin/cli/explain.py)
        from .explain import reason_explained

        return reason_explained(options, language)
    if options.at is not None:
        raise UserError("--at is the time point of --explain ATOM")
    if language == DATALOGMTL:
        if options.semantics != "stream":
            raise UserError("--semantics answer-stream is for LARS programs; a DatalogMTL program has one model")
        return reason_datalogmtl(options)
    if options.semantics == "answer-stream":
        require("asp", "--semantics answer-stream")
        from .answers import reason_answer_streams

        return reason_answer_streams(options)
    if options.models != "1" or options.solver_timeout is not None:
        raise UserError("--models and --solver-timeout are for --semantics answer-stream")
    return reason_lars(options)


def program_language(options: ReasonOptions, *, broker: bool = False) -> str:
    """`lars` or `datalogmtl`: `--language`, else the program's extension or content, else a peek at the
    stream file (not standard input, read once by the engine, nor a broker's topic)."""
    from ..mtl.run import detect_language

    return options.language or detect_language(options.program, None if broker else peekable_stream(options))


#: `--stream -`: the stream is read from standard input
STDIN = "-"


def stream_path(options) -> Path:
    """The stream as the readers take it: its file, whose extension says how to read it, or for
    `--stream -` standard input, named `<stdin>` (`<stdin>.tnt` with `--input-format tnt`)."""
    if options.stream == STDIN:
        return Path("<stdin>.tnt" if options.input_format == "tnt" else "<stdin>")
    return Path(options.stream)


def peekable_stream(options) -> str | None:
    """The stream file a program's language may be told from (`mtl.run.detect_language`); None for
    standard input, which is read once, by the engine."""
    return None if options.stream == STDIN else options.stream


def open_stream(options):
    """The `--stream` file (or standard input) open for reading (bytes), once `--from` / `--to` are
    known to make sense."""
    if options.input_format and options.stream != STDIN:
        raise UserError("--input-format is the format of standard input (--stream -); a file's extension "
                        "says how it is read")
    if options.stream == STDIN:
        handle = open(sys.stdin.fileno(), "rb", closefd=False)  # (closing it leaves the process's stdin open)
    else:
        stream = Path(options.stream)
        try:
            handle = stream.open("rb")
        except OSError as error:
            raise UserError(f"{stream}: cannot read the stream: {error.strerror}") from None
    if options.first is not None and options.last is not None and options.first > options.last:
        handle.close()
        raise UserError(f"--from {options.first} is after --to {options.last}")
    return handle


@contextmanager
def readable_output(options: ReasonOptions, language: str):
    """`--prefixes` / `--time iso`: standard output rewrites `reason`'s lines for people
    (`readable.ReadableLines`) while the command runs. Times are time points: `--time iso` needs
    the program's `@tick` to know how long one is."""
    from ..mtl.run import DATALOGMTL
    from ..query.readable import Readable, ReadableLines

    if language == DATALOGMTL:
        from ..mtl.syntax import parse_mtl_file

        program = parse_mtl_file(options.program)
    else:
        from ..lars.syntax import parse_program_file

        program = parse_program_file(options.program, semantics=options.semantics)
    tick = getattr(program, "tick_ms", None)
    iso = options.time == "iso"
    if iso and tick is None:
        raise UserError(f"--time iso writes time points as times: {options.program} says how long one is with "
                        f"@tick (e.g. @tick 1s .)")
    if options.explain is not None and iso:
        raise UserError("--time is for the usual lines; --explain shows time points")
    readable = Readable(dict(getattr(program, "prefixes", None) or {}) if options.prefixes else None,
                        iso_time=iso, tick_ms=tick)
    if options.explain is not None:  # (explain/cli.py shows --prefixes itself)
        yield
        return
    real = sys.stdout
    sys.stdout = ReadableLines(real, readable)
    try:
        yield
    finally:
        sys.stdout = real


class SetAside:
    """The stream lines set aside: each on stderr as it comes (`FILE:LINE: reason`), then how many."""

    def __init__(self) -> None:
        self.count = 0

    def __call__(self, record) -> None:
        self.count += 1
        print(record, file=sys.stderr)

    def say_how_many(self) -> None:
        if self.count:
            print(f"rsp-plugin: {self.count} stream line{'s' if self.count != 1 else ''} set aside (see above)",
                  file=sys.stderr)


def reason_lars(options: ReasonOptions) -> int:
    """A LARS program over its stream (`--semantics stream`): the stream read a block at a time, the
    output kept from the engine's changes (`rsp_plugin.columnar.reason`)."""
    from ..columnar.reason import replay
    from ..lars.syntax import parse_program_file

    program = parse_program_file(options.program)
    set_aside = SetAside()
    with open_stream(options) as handle:
        replay(program, stream_path(options), sys.stdout, first=options.first, last=options.last,
               pruning=options.pruning, changes=options.changes, on_rejected=set_aside, handle=handle,
               max_derivations=options.max_derivations, max_line_bytes=options.max_line_bytes,
               max_gap=options.max_gap)
    set_aside.say_how_many()
    return 0


def reason_datalogmtl(options: ReasonOptions) -> int:
    """A DatalogMTL program over its stream: the atoms of its head predicates at each time point
    (`mtl.run.MetricReplay`, handed the whole stream)."""
    from ..lars.metric_lower import lower_program
    from ..mtl.data import read_facts
    from ..mtl.run import MetricReplay
    from ..mtl.syntax import parse_mtl_file

    program = parse_mtl_file(options.program)
    lowered = lower_program(program)
    stream = stream_path(options)
    handle = open_stream(options)
    set_aside = SetAside()
    run = MetricReplay(lowered, first=options.first, last=options.last, changes=options.changes,
                       max_gap=options.max_gap, filename=str(stream))
    with handle:
        run.take(read_facts(stream, handle, program.terms, prefixes=program.prefixes,
                            max_line_bytes=options.max_line_bytes), sys.stdout, set_aside)
        run.end(sys.stdout)
    set_aside.say_how_many()
    return 0


def reason_from_broker(options: ReasonOptions, language: str) -> int:
    """`reason PROGRAM --stream mqtt://HOST:PORT/TOPIC`: a LARS program over a broker's messages (`.stream`
    atom lines, or `.tnt` lines with `--input-format tnt`), evaluated as a file is (`rsp_plugin.columnar.reason`):
    a time point's line is written once a later one has data; the stream ends after `--mqtt-idle` seconds
    without a message, or at its first element after `--to`."""
    from ..columnar.reason import replay
    from ..io.mqtt import BrokerAddress, PayloadReader
    from ..io.sources import StreamSource, subscribe
    from ..lars.syntax import parse_program_file
    from ..mtl.run import DATALOGMTL

    if options.explain is not None or options.at is not None:
        raise UserError("--explain reads a stream file (the explanations name its lines); a broker's stream "
                        "(mqtt://) runs without it")
    if options.semantics != "stream" or language == DATALOGMTL:
        raise UserError("a broker's stream (mqtt://) is read by LARS programs under --semantics stream; "
                        "DatalogMTL programs and answer streams read stream files")
    if options.first is not None and options.last is not None and options.first > options.last:
        raise UserError(f"--from {options.first} is after --to {options.last}")
    try:
        address = BrokerAddress.parse(options.stream)
    except ValueError as error:
        raise UserError(f"--stream {error}") from None
    program = parse_program_file(options.program)
    input_format = options.input_format or "stream"
    source = StreamSource(options.stream, "mqtt", fmt=input_format, broker=address,
                          mqtt=options.mqtt.resolved())
    bound = options.max_line_bytes
    reader = PayloadReader(source.name, input_format, wildcard=address.wildcard, max_line_bytes=bound)
    set_aside = SetAside()
    subscription = subscribe(source)
    out = sys.stdout

    from ..columnar.atoms import broker_atom_blocks

    def blocks():
        for block in broker_atom_blocks(reader, subscription.batches(), program.terms,
                                        prefixes=dict(program.prefixes), tick_ms=program.tick_ms):
            yield block
            out.flush()  # the lines this block let out, now: the next block may be a while

    try:
        replay(program, source.name, out, first=options.first, last=options.last, pruning=options.pruning,
               changes=options.changes, on_rejected=set_aside, blocks=blocks(),
               max_derivations=options.max_derivations,
               max_gap=options.max_gap)
    finally:
        subscription.close()
    set_aside.say_how_many()
    return 0
