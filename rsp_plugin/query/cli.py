"""`rsp-plugin query QUERY --stream IRI=FILE ...`: a continuous query over replayed stream files.

One JSON object per evaluation on stdout (DESIGN.md, "Command line"):
`{"t": 10000, "bindings": [{"x": "<http://ex/a>"}]}`, `{"t": ..., "triples": [...]}`
or `{"t": ..., "boolean": true}`. The files are read in time order, merged; the
watermark follows the timestamps read, so an out-of-order line is still taken
while a window that will hold it is not reported yet, and is late otherwise.
A bad or late line is reported on stderr as `FILE:LINE: reason`, counted, and
skipped; the replay ends with the last windows that still reach the data.
"""

from __future__ import annotations

import heapq
import json
import sys
from pathlib import Path
from typing import Iterator

from ..formats import (
    Rejected,
    StreamElement,
    read_ntriples_at,
    read_rdf_document_at,
    read_timestamped_graphs,
    read_tnt,
)
from ..runtime import RSPEngine
from .model import ReportPolicy
from .syntax import parse_query_file

_PLAIN = {".nt": "nt", ".ttl": "turtle", ".n3": "n3", ".rdf": "xml", ".owl": "xml", ".jsonld": "json-ld"}


def run_query(options, user_error) -> int:
    engine, registered, sources = engine_for(options, user_error)

    out = sys.stdout
    if options.format == "sparql-json":
        registered.subscribe(lambda result: out.write(json.dumps(result.to_sparql_json(), ensure_ascii=False) + "\n"))
    else:
        registered.subscribe(lambda result: out.write(json.dumps(result.to_json(), ensure_ascii=False) + "\n"))

    set_aside = 0
    shown = 0

    def show_rejected() -> None:
        nonlocal set_aside, shown
        for record in engine.rejected[shown:]:
            print(record, file=sys.stderr)
            set_aside += 1
        shown = len(engine.rejected)

    if len(sources) == 1 and sources[0][1].suffix.lower() in (".tnt", ".nt"):
        # one line-based file: read a block at a time, pushed as columns (rsp_plugin.batch.replay)
        from ..batch.replay import replay_file

        def set_aside_record(record) -> None:
            nonlocal set_aside
            print(record, file=sys.stderr)
            set_aside += 1

        iri, path, moment = sources[0]
        try:
            replay_file(engine, iri, path, moment=moment if path.suffix.lower() == ".nt" else None,
                        on_rejected=set_aside_record)
        except OSError as error:
            raise user_error(f"{path}: cannot read the stream: {error.strerror}") from None
        shown = len(engine.rejected)
        engine.finish()
        show_rejected()
        for error in engine.errors:
            print(f"rsp-plugin: {error}", file=sys.stderr)
        if set_aside:
            print(f"rsp-plugin: {set_aside} stream line{'s' if set_aside != 1 else ''} set aside (see above)",
                  file=sys.stderr)
        return 0

    handles = []
    try:
        readers = []
        for number, (iri, path, moment) in enumerate(sources):
            try:
                handle = path.open(encoding="utf-8")
            except OSError as error:
                raise user_error(f"{path}: cannot read the stream: {error.strerror}") from None
            handles.append(handle)
            readers.append(_tagged(number, iri, path, _read(path, handle, engine, moment)))
        for time_key, iri, path, batch in _batches(heapq.merge(*readers)):
            if isinstance(batch, Rejected):
                print(batch, file=sys.stderr)
                set_aside += 1
                continue
            if engine.watermark is None or time_key > engine.watermark:
                engine.advance_to(time_key)
            engine.push(iri, batch, source=str(path))
            show_rejected()
        engine.finish()
        show_rejected()
    finally:
        for handle in handles:
            handle.close()
    for error in engine.errors:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    if set_aside:
        print(f"rsp-plugin: {set_aside} stream line{'s' if set_aside != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def engine_for(options, user_error):
    """The runtime the command line asks for (both engines): its streams, background and
    graphs registered, the query registered; returns (engine, query, [(iri, path, moment)])."""
    query = parse_query_file(options.query)
    sources = [stream_argument(text, user_error) for text in options.stream]
    engine = RSPEngine()
    for iri, _, _ in sources:
        engine.register_stream(iri)
    for text in options.background:
        iri, _, path = text.rpartition("=") if "=" in text and not Path(text).exists() else ("", "", text)
        if not Path(path).is_file():
            raise user_error(f"{path}: cannot read the background graph: no such file")
        if iri:
            engine.add_graph(iri, path)
        else:
            engine.add_background(path)
    registered = engine.register_query(query, report=ReportPolicy(options.report))
    return engine, registered, sources


def stream_argument(text: str, user_error) -> tuple[str, Path, int]:
    """IRI=FILE, or IRI=FILE@T for a document seen at T ms (both engines read --stream so)."""
    iri, equals, file = text.partition("=")
    if not equals or not iri or not file:
        raise user_error(f"--stream {text}: expected IRI=FILE, e.g. --stream http://ex.org/s=data/s.tnt")
    moment = 0
    name, at, when = file.rpartition("@")
    if at and when.lstrip("-").isdigit() and not Path(file).exists():
        file, moment = name, int(when)
    path = Path(file)
    if not path.is_file():
        raise user_error(f"{path}: cannot read the stream: no such file")
    return iri.strip("<>"), path, moment


def _read(path: Path, handle, engine: RSPEngine, moment: int) -> Iterator[StreamElement | Rejected]:
    suffix = path.suffix.lower()
    name = str(path)
    if suffix in (".trig", ".nq", ".nquads"):
        return read_timestamped_graphs(handle.read(), engine.terms, filename=name,
                                       rdf_format="nquads" if suffix != ".trig" else "trig")
    if suffix == ".nt":
        return read_ntriples_at(handle, engine.terms, timestamp=moment, filename=name)
    if suffix in _PLAIN:
        return read_rdf_document_at(handle.read(), engine.terms, timestamp=moment, rdf_format=_PLAIN[suffix],
                                    filename=name)
    return read_tnt(handle, engine.terms, tick_ms=1, filename=name)


def _tagged(number: int, iri: str, path: Path, items) -> Iterator[tuple]:
    """(time, file number, line order, iri, path, item): a rejected line travels with the time before it."""
    last = -(1 << 62)
    for order, item in enumerate(items):
        if isinstance(item, StreamElement):
            last = item.time_point
        yield last, number, order, iri, path, item


def _batches(merged) -> Iterator[tuple]:
    """(time, iri, path, elements or a Rejected): consecutive elements of one file and one time together."""
    batch: list[StreamElement] = []
    key = None
    for time_key, number, _, iri, path, item in merged:
        if batch and (isinstance(item, Rejected) or key[:2] != (time_key, number)):
            yield key[0], key[2], key[3], batch
            batch = []
        if isinstance(item, Rejected):
            yield time_key, iri, path, item
            continue
        key = (time_key, number, iri, path)
        batch.append(item)
    if batch:
        yield key[0], key[2], key[3], batch
