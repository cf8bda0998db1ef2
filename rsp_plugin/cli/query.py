"""`rsp-plugin query QUERY --stream IRI=FILE|IRI=-|IRI=tcp://HOST:PORT|IRI=mqtt://HOST:PORT/TOPIC ...`: a continuous query.

One JSON object per evaluation on stdout by default (DESIGN.md, "Command line"):
`{"t": 10000, "bindings": [{"x": "<http://ex/a>"}]}`, `{"t": ..., "triples": [...]}`
or `{"t": ..., "boolean": true}`; `--format` picks another writer
(`rsp_plugin.query.writers`: sparql-json, sparql-xml, csv, tsv, nt, trig).

The sources are read in time order, merged; the watermark follows the
timestamps read, so an out-of-order line is still taken while a window that
will hold it is not reported yet, and is late otherwise. A bad or late line is
reported on stderr as `FILE:LINE: reason`, counted, and skipped; the run ends
with the last windows that still reach the data (standard input and sockets:
when they close; a broker's topic: after `--mqtt-idle` seconds without a message). `--publish
mqtt://HOST:PORT/TOPIC` sends each report to a topic instead (`commands/publish.py`). `--from T` / `--to T` keep the elements with T_from <= t <= T_to
(a live source is closed at its first element after `--to`). A replay that
takes longer than a few seconds shows a progress line on stderr unless `-q`.
An evaluation that fails or passes `--max-eval-ms` / `--max-solutions` is said
on stderr as it happens, and its report says so (`"error"`, `"cut"`).
"""

from __future__ import annotations

import re
import sys
from dataclasses import replace
from pathlib import Path
from urllib.parse import urljoin

from ..core.errors import UserError
from ..io.lines import count_lines
from ..io.sources import StreamSource, stream_source
from ..query.model import ReportPolicy
from ..query.readable import Readable
from ..query.syntax import parse_query_file
from ..query.writers import FormatError, writer_for
from ..runtime.engine import RSPEngine
from ..runtime.replay import replay
from .progress import Progress, Quiet
from .startup import collector_paused


def run_query(options) -> int:
    with collector_paused():  # (the query read, its plan and engine made: rdflib's parser, polars)
        engine, registered, sources = engine_for(options)
    query = registered.query
    variables = tuple(str(v) for v in (query.algebra.algebra.get("PV") or ())) if query.form == "SELECT" else ()
    readable = readable_for(options, query)
    try:
        writer = writer_for(options.format, sys.stdout, form=query.form, variables=variables,
                            readable=readable)
        if options.publish:
            from .publish import ReportPublisher, publisher_for

            writer = ReportPublisher(publisher_for(options.publish, options.mqtt),
                                     options.format, form=query.form, variables=variables)
    except FormatError as error:
        raise UserError(str(error)) from None
    first, last = options.first, options.last
    if first is not None and last is not None and first > last:
        raise UserError(f"--from {first} is after --to {last}")

    results = 0
    progress = None
    said = 0  # the engine's errors said so far (an evaluation that failed, or was cut at a bound)

    def write(result) -> None:
        nonlocal results, said
        results += 1
        writer.write(result)
        if len(engine.errors) > said:  # said as it happens: a live stream may never end
            for error in engine.errors[said:]:
                progress.note(f"rsp-plugin: {error}")
            said = len(engine.errors)

    registered.subscribe(write)
    if options.explain:  # why each row is there, after its report (rsp_plugin/cli/explain.py)
        from .explain import print_explanations

        if options.format != "json":
            raise UserError("--explain writes between the reports: it goes with --format json (the default)")
        registered.subscribe(print_explanations(engine, sys.stdout, options.explain_format, readable=readable,
                                                depth=options.explain_depth))
    files = [source.path for source in sources if source.kind == "file"]
    if options.quiet:
        progress = Quiet()
    else:
        progress = Progress(total_rows=(lambda: count_lines(files)) if len(files) == len(sources) else None)
    set_aside = replay(engine, sources, first=first, last=last, progress=progress,
                       results=lambda: results,
                       max_line_bytes=options.max_line_bytes)
    writer.close()
    progress.finish()
    for error in engine.errors[said:]:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    if set_aside:
        print(f"rsp-plugin: {set_aside} stream line{'s' if set_aside != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def readable_for(options, query) -> Readable:
    """How the output shows terms and times (`--prefixes`: the query's prefixes; `--time iso`)."""
    return Readable(dict(query.prefixes) if options.prefixes else None,
                    iso_time=options.time == "iso")


def engine_for(options):
    """The runtime the command line asks for (both engines): its streams, background and
    graphs registered, the query registered; returns (engine, query, [StreamSource])."""
    query = parse_query_file(options.query, dialect=options.dialect or "auto")
    for note in query.notes:  # an undeclared well-known prefix and what it was read as
        print(note, file=sys.stderr)
    input_format = options.input_format or "tnt"
    mqtt = None
    if any(text.partition("=")[2].startswith(("mqtt://", "mqtts://")) for text in options.stream):
        mqtt = options.mqtt.resolved()
    sources = [as_written(stream_source(text, input_format, mqtt), query) for text in options.stream]
    if sum(source.kind == "stdin" for source in sources) > 1:
        raise UserError("only one --stream can read standard input (IRI=-)")
    contexts = dict(context_argument(text) for text in options.jsonld_context or ())
    engine = RSPEngine(max_gap=options.max_gap,
                       max_eval_ms=options.max_eval_ms,
                       max_solutions=options.max_solutions,
                       allow_service=options.allow_service or (),
                       allow_graphs=options.allow_graph or (), jsonld_contexts=contexts,
                       explain=options.explain)
    for source in sources:
        engine.register_stream(source.iri)
    for text in options.background:
        iri, _, path = text.rpartition("=") if "=" in text and not Path(text).exists() else ("", "", text)
        if not Path(path).is_file():
            raise UserError(f"{path}: cannot read the background graph: no such file")
        if iri:
            engine.add_graph(iri, path)
        else:
            engine.add_background(path)
    report = options.report
    registered = engine.register_query(query, report=ReportPolicy(report) if report else None)
    return engine, registered, sources


def as_written(source: StreamSource, query) -> StreamSource:
    """`--stream stream2=FILE` is the stream the query writes as `<stream2>` (or as the bare name
    `stream2`): a relative name given on the command line resolves against the query's base, as the
    query's own relative IRIs did (a query file's base is its folder). Any other name is kept."""
    streams = {clause.stream for clause in query.windows}
    if source.iri in streams or not query.base or re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", source.iri):
        return source
    resolved = urljoin(query.base, source.iri)
    return replace(source, iri=resolved) if resolved in streams else source


def context_argument(text: str) -> tuple[str, str]:
    """--jsonld-context IRI=FILE: a JSON-LD context read from a local file instead of fetched."""
    iri, equals, file = text.rpartition("=")
    if not equals or not iri or not file:
        raise UserError(f"--jsonld-context {text}: expected IRI=FILE, e.g. --jsonld-context https://schema.org/=ctx.jsonld")
    if not Path(file).is_file():
        raise UserError(f"{file}: cannot read the JSON-LD context: no such file")
    return iri, file
