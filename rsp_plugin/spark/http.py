"""The `rdf-http` data source: an HTTP endpoint that serves RDF, as TripleWave does, read with requests.

    spark.readStream.format("rdf-http").option("url", "http://host/stream").option("mode", "chunked").load()

Two ways to read:
    mode=chunked   one long GET whose body arrives in pieces (chunked transfer): one element per line,
                   N-Triples / timestamped N-Triples lines, or JSON-LD documents one per line;
                   reconnects after `interval` seconds when the server ends the response
    mode=poll      a GET every `interval` seconds; each body is one document (N-Triples lines or JSON-LD)

Timestamps: `.tnt` lines carry theirs; a JSON-LD element whose named graph has a
`prov:generatedAtTime` takes that time (the RSP-QL convention TripleWave
follows); anything else is stamped with its arrival time (ms). Columns and dead
letters are the `rdf` source's.

Bodies are read as bytes and cut into lines by `rsp_plugin.io.lines` (a line that
is not UTF-8, or longer than `maxLineBytes`, is a dead letter); a JSON-LD
element's `@context` given as an IRI is never fetched (`rsp_plugin.io.documents`):
map it to a local file with the option `jsonldContexts` ("IRI=FILE IRI=FILE"),
else the element is a dead letter.

Records are fetched on the driver, by a thread of the stream reader, and
numbered; offsets are `{"records": n}`. What was fetched before a restart is
not fetched again: across a restart the source is at most once (HTTP cannot
replay), while everything after it is exactly once like the file source.
"""

from __future__ import annotations

import json
import threading
import time
from typing import Iterator

from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

from ..core import limits
from ..io.lines import read_lines
from .source import SCHEMA, SourceOptionError

FORMATS = ("nt", "tnt", "jsonld")
_CONTENT_TYPES = {"application/n-triples": "nt", "application/ld+json": "jsonld", "application/json": "jsonld"}


class HTTPDataSource(DataSource):
    """Spark's handle on an RDF stream served over HTTP: `format("rdf-http")`."""

    @classmethod
    def name(cls) -> str:
        return "rdf-http"

    def schema(self) -> str:
        return SCHEMA

    def simpleStreamReader(self, schema) -> SimpleDataSourceStreamReader:
        return HTTPStreamReader(HTTPOptions.from_options(self.options))


class HTTPOptions:
    """url, stream, format (nt | tnt | jsonld; default: from the Content-Type), mode, interval, timeout,
    maxLineBytes, jsonldContexts."""

    def __init__(self, url: str, stream: str, fmt: str | None, mode: str, interval: float, timeout: float,
                 max_line_bytes: int | None = limits.MAX_LINE_BYTES, contexts: dict[str, str] | None = None):
        self.url, self.stream, self.format = url, stream, fmt
        self.mode, self.interval, self.timeout = mode, interval, timeout
        self.max_line_bytes = max_line_bytes
        self.contexts = dict(contexts or {})

    @classmethod
    def from_options(cls, options) -> HTTPOptions:
        options = {str(key).lower(): value for key, value in dict(options).items()}
        url = options.get("url") or options.get("path")
        if not url or not str(url).startswith(("http://", "https://")):
            raise SourceOptionError('the rdf-http source needs an http(s) URL: .option("url", "http://...")')
        fmt = options.get("format")
        if fmt is not None and fmt not in FORMATS:
            raise SourceOptionError(f"format {fmt!r}: expected nt, tnt or jsonld")
        mode = options.get("mode", "chunked")
        if mode not in ("chunked", "poll"):
            raise SourceOptionError(f"mode {mode!r}: expected chunked or poll")
        try:
            interval = float(options.get("interval", "1"))
            timeout = float(options.get("timeout", "30"))
        except ValueError:
            raise SourceOptionError("interval and timeout are seconds, e.g. 0.5") from None
        contexts = {}
        for pair in str(options.get("jsonldcontexts", "")).split():
            iri, equals, path = pair.rpartition("=")
            if not equals or not iri or not path:
                raise SourceOptionError(f"jsonldContexts {pair!r}: expected IRI=FILE")
            contexts[iri] = path
        bound = options.get("maxlinebytes")
        try:
            max_line = limits.MAX_LINE_BYTES if bound is None else None if str(bound).lower() == "none" \
                else limits.parse_size(str(bound))
        except ValueError as error:
            raise SourceOptionError(f"maxLineBytes: {error}") from None
        return cls(str(url), options.get("stream") or str(url), fmt, mode, interval, timeout, max_line, contexts)


class HTTPStreamReader(SimpleDataSourceStreamReader):
    """Fetches in a background thread; each micro-batch takes what arrived since the last one."""

    def __init__(self, options: HTTPOptions):
        self.options = options
        self._records: list[tuple] = []
        self._lock = threading.Lock()
        self._thread: threading.Thread | None = None
        self._stop = threading.Event()
        self._base: int | None = None

    def __getstate__(self) -> dict:
        """Spark pickles the reader: the records fetched so far travel, the thread and lock do not."""
        with self._lock:
            return {"options": self.options, "records": list(self._records), "base": self._base}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["options"])
        self._records, self._base = state["records"], state["base"]

    def initialOffset(self) -> dict:
        return {"records": 0}

    def read(self, start: dict):
        self._start_fetching(start)
        with self._lock:
            taken = self._records[start["records"] - self._base:]
        return iter(taken), {"records": start["records"] + len(taken)}

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple]:
        """A batch again (Spark may ask an executor's copy of this reader): from the records kept, no fetching."""
        if self._base is None:
            return iter(())
        with self._lock:
            first = max(0, start["records"] - self._base)
            last = max(0, end["records"] - self._base)
            return iter(self._records[first:last])

    def commit(self, end: dict) -> None:
        pass

    def stop(self) -> None:
        self._stop.set()

    def _start_fetching(self, start: dict) -> None:
        if self._base is None:
            self._base = start["records"]  # after a restart, numbering goes on from the checkpoint
        if self._thread is None:
            self._thread = threading.Thread(target=self._fetch, name="rdf-http", daemon=True)
            self._thread.start()

    # fetching (a thread) -----------------------------------------------------------------------

    def _fetch(self) -> None:
        import requests

        session = requests.Session()
        options = self.options
        while not self._stop.is_set():
            try:
                if options.mode == "poll":
                    response = session.get(options.url, timeout=options.timeout)
                    response.raise_for_status()
                    fmt = options.format or _format_of(response)
                    self._add(parse_body(response.content, fmt, options.stream, options.url,
                                         max_line_bytes=options.max_line_bytes, contexts=options.contexts))
                else:
                    with session.get(options.url, stream=True, timeout=options.timeout) as response:
                        response.raise_for_status()
                        fmt = options.format or _format_of(response)
                        lines = read_lines(_Body(response), filename=options.url, max_line_bytes=options.max_line_bytes)
                        for number, line in enumerate(lines, 1):
                            if self._stop.is_set():
                                return
                            if type(line) is not str:
                                self._add([(options.stream, None, None, None, None, str(line))])
                            elif line.strip():
                                self._add(parse_body(line, fmt, options.stream, f"{options.url}", first_line=number,
                                                     max_line_bytes=None, contexts=options.contexts))
            except requests.RequestException as error:
                self._add([(options.stream, None, None, None, None, f"{options.url}: {type(error).__name__}: "
                                                                     f"{_first_line(error)}; retrying")])
            self._stop.wait(options.interval)

    def _add(self, rows: list[tuple]) -> None:
        if rows:
            with self._lock:
                self._records.extend(rows)


class _Body:
    """A streamed response body as a binary file (for the line cutter): chunks as they arrive."""

    def __init__(self, response):
        self._chunks = response.iter_content(chunk_size=None)
        self._left = b""

    def read(self, size: int = -1) -> bytes:
        if not self._left:
            self._left = next(self._chunks, b"")
        taken, self._left = self._left[:size], self._left[size:]
        return taken


def _format_of(response) -> str:
    kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return _CONTENT_TYPES.get(kind, "nt")


def _first_line(error: Exception) -> str:
    text = str(error).strip()
    return text.splitlines()[0][:200] if text else ""


def parse_body(text: str | bytes, fmt: str, stream: str, where: str, *, first_line: int = 1,
               now: int | None = None, max_line_bytes: int | None = limits.MAX_LINE_BYTES,
               contexts: dict[str, str] | None = None) -> list[tuple]:
    """Rows `(stream, s, p, o, ts, rejected)` of one body (or one line) of an HTTP stream.

    >>> parse_body('<urn:a> <urn:p> "x" .', "nt", "urn:s", "http://h/s", now=7)
    [('urn:s', '<urn:a>', '<urn:p>', '"x"', 7, None)]
    >>> parse_body(b'<urn:a> <urn:p> "\\xff" .', "nt", "urn:s", "http://h/s", now=7)[0][5]
    'http://h/s:1: not UTF-8 text (byte 0xff at column 18); set aside'
    """
    from ..core.terms import Dictionary
    from ..io.formats import Rejected, read_ntriples_at, read_tnt
    from ..io.lines import decode_text, read_lines

    arrival = int(time.time() * 1000) if now is None else now
    terms = Dictionary()
    shift = first_line - 1
    if fmt in ("tnt", "nt"):
        lines = read_lines(text if isinstance(text, bytes) else text.encode("utf-8"), filename=where,
                           max_line_bytes=max_line_bytes)
        if fmt == "tnt":
            elements = read_tnt(lines, terms, tick_ms=1, filename=where)
        else:
            elements = read_ntriples_at(lines, terms, timestamp=arrival, filename=where)
    else:
        shift = 0
        try:
            if isinstance(text, bytes):
                text = decode_text(text, where)
        except SyntaxError as error:
            elements = [Rejected(where, first_line + error.lineno - 1, "not UTF-8 text; set aside")]
        else:
            elements = _jsonld_elements(text, terms, arrival, where, first_line, contexts)
    rows = []
    keys = terms.keys
    for element in elements:
        if isinstance(element, Rejected):
            rows.append((stream, None, None, None, None, f"{element.filename}:{element.line + shift}: {element.reason}"))
            continue
        s, p, o = element.fact[1]
        rows.append((stream, keys[s], keys[p], keys[o], element.time_point, None))
    return rows


def _jsonld_elements(text: str, terms, arrival: int, where: str, line: int, contexts: dict[str, str] | None = None):
    """A JSON-LD document: named graphs with prov:generatedAtTime are timestamped elements, the rest arrives now.
    A remote @context is never fetched (`rsp_plugin.io.documents`): unless mapped to a local file, the element
    is a dead letter."""
    from rdflib import Dataset

    from ..core.rdfterms import term_key as key_of
    from ..core.terms import TRIPLE
    from ..io.documents import DocumentRefused, dataset_calls, parse_document
    from ..io.formats import (
        PROV_GENERATED_AT_TIME,
        Rejected,
        StreamElement,
        read_timestamped_graphs,
    )

    try:
        json.loads(text)
        dataset = Dataset()
        parse_document(text, "json-ld", filename=where, contexts=contexts, graph=dataset)
    except DocumentRefused as refused:
        yield Rejected(where, line, f"{refused.msg.removesuffix('; refused')}; set aside")
        return
    except Exception as error:  # json and rdflib raise many kinds
        yield Rejected(where, line, f"not JSON-LD: {_first_line(error)}; set aside")
        return
    with dataset_calls():
        quads = list(dataset.quads((None, None, None, None)))
        nquads = dataset.serialize(format="nquads")
    timed = {str(s) for s, p, o, g in quads if f"<{p}>" == PROV_GENERATED_AT_TIME and _is_default(g)}
    if timed:
        for element in read_timestamped_graphs(nquads, terms, rdf_format="nquads", filename=where):
            if isinstance(element, Rejected):
                yield Rejected(where, line, element.reason)
            else:
                yield element
        return
    triple = terms.intern(TRIPLE)
    for s, p, o, _ in sorted(quads, key=lambda q: tuple(map(str, q[:3]))):
        fact = (triple, (terms.intern(key_of(s)), terms.intern(key_of(p)), terms.intern(key_of(o))))
        yield StreamElement(arrival, fact, line, terms)


def _is_default(graph) -> bool:
    return graph is None or str(graph) == "urn:x-rdflib:default"
