"""Where results go: console, files (JSON lines, N-Triples, TriG), Spark's memory table, a callback, HTTP POST.

A sink takes the results of one micro-batch at a time: `write(batch_id, results)`.
Sinks that can rewind tell where they are (`position()`) and go back there
(`rewind(position)`): the driver saves the position with its state, so that a
restarted job first cuts what the interrupted batch had written, and no result
is written twice. A file sink is exactly once this way, and so is the console when stdout is a file
appended to (`>> out.jsonl`); a terminal, a pipe and the HTTP sink are at least
once for the batch that was in flight (the HTTP sink sends the batch id with
each request, so that a receiver can drop a repeat).

>>> sink = sink_for("console")
>>> sink
<ConsoleSink json>
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Callable, Iterable

PROV_GENERATED_AT_TIME = "http://www.w3.org/ns/prov#generatedAtTime"


class Sink:
    """The results of a micro-batch go somewhere; by default a sink cannot rewind."""

    def write(self, batch_id: int, results: list) -> None:
        raise NotImplementedError

    def position(self):
        return None

    def rewind(self, position) -> None:
        pass

    def close(self) -> None:
        pass


def result_line(result, fmt: str = "json", readable=None) -> str:
    """The command line's JSON line of a result (`sparql-jsonl`: W3C SPARQL JSON with "t"), its
    terms and time as `readable` shows them (`rsp_plugin.query.readable`; default: as they are)."""
    value = result.to_sparql_json() if fmt in ("sparql-jsonl", "sparql-json") else result.to_json()
    if readable is not None:
        value = readable.report(value)
    return json.dumps(value, ensure_ascii=False)


class ConsoleSink(Sink):
    """One JSON line per result on stdout (the `rsp-plugin query` contract)."""

    def __init__(self, out=None, fmt: str = "json", readable=None):
        self.out = out
        self.fmt = fmt
        self.readable = readable

    def __repr__(self) -> str:
        return f"<ConsoleSink {self.fmt}>"

    def write(self, batch_id: int, results: list) -> None:
        out = self.out or sys.stdout
        for result in results:
            out.write(result_line(result, self.fmt, self.readable) + "\n")
        out.flush()

    def _file(self):
        """The descriptor of the output when it is a regular file (`>> out.jsonl`), else None."""
        import stat

        out = self.out or sys.stdout
        try:
            descriptor = out.fileno()
            return descriptor if stat.S_ISREG(os.fstat(descriptor).st_mode) else None
        except (AttributeError, OSError, ValueError):
            return None

    def position(self):
        """Where a file behind stdout ends: a restart appending to it (`>>`) cuts a half-written batch."""
        descriptor = self._file()
        if descriptor is None:
            return None
        (self.out or sys.stdout).flush()
        return os.fstat(descriptor).st_size

    def rewind(self, position) -> None:
        descriptor = self._file()
        if descriptor is not None and position is not None and os.fstat(descriptor).st_size > position:
            os.ftruncate(descriptor, position)


class _FileSink(Sink):
    """Appends to one file; its length is the position, so a restart cuts a half-written batch."""

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.path.touch(exist_ok=True)

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.path}>"

    def write(self, batch_id: int, results: list) -> None:
        text = "".join(self.render(result) for result in results)
        if not text:
            return
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())

    def render(self, result) -> str:
        raise NotImplementedError

    def position(self) -> int:
        return self.path.stat().st_size

    def rewind(self, position) -> None:
        if position is not None and self.path.stat().st_size > position:
            with self.path.open("r+b") as handle:
                handle.truncate(position)


class JSONLinesSink(_FileSink):
    """One JSON line per result, as on the console."""

    def __init__(self, path, fmt: str = "json"):
        super().__init__(path)
        self.fmt = fmt

    def render(self, result) -> str:
        return result_line(result, self.fmt) + "\n"


class NTriplesSink(_FileSink):
    """CONSTRUCT results as N-Triples; in a `.tnt` file each line starts with the result's time (ms)."""

    def __init__(self, path):
        super().__init__(path)
        self.timestamped = self.path.suffix == ".tnt"

    def render(self, result) -> str:
        _construct_only(result, "N-Triples")
        prefix = f"{result.t} " if self.timestamped else ""
        return "".join(f"{prefix}{line}\n" for line in result.triples())


class TriGSink(_FileSink):
    """CONSTRUCT results as timestamped graphs (RSP-QL): one named graph per result, its time in prov."""

    def render(self, result) -> str:
        _construct_only(result, "TriG")
        graph = f"<urn:x-rsp-plugin:result:{result.query}:{result.t}>"
        body = "".join(f"  {line}\n" for line in result.triples())
        return f"{graph} {{\n{body}}}\n{graph} <{PROV_GENERATED_AT_TIME}> \"{result.t}\" .\n"


def _construct_only(result, what: str) -> None:
    if result.form != "CONSTRUCT":
        raise ValueError(f"query {result.query} is a {result.form} query: {what} holds triples of CONSTRUCT "
                         "results; write bindings to a .jsonl file")


class CallbackSink(Sink):
    """Calls `callback(result)` for every result, in order."""

    def __init__(self, callback: Callable):
        self.callback = callback

    def __repr__(self) -> str:
        return f"<CallbackSink {getattr(self.callback, '__name__', self.callback)!s}>"

    def write(self, batch_id: int, results: list) -> None:
        for result in results:
            self.callback(result)


class MemorySink(Sink):
    """Spark's memory table: a temporary view `name(query, t, result)` with each result as a JSON string."""

    SCHEMA = "query STRING, t BIGINT, result STRING"

    def __init__(self, spark, name: str):
        self.spark = spark
        self.name = name
        self.rows: list[tuple] = []
        spark.createDataFrame([], self.SCHEMA).createOrReplaceTempView(name)

    def __repr__(self) -> str:
        return f"<MemorySink {self.name} rows={len(self.rows)}>"

    def write(self, batch_id: int, results: list) -> None:
        if not results:
            return
        self.rows.extend((result.query, result.t, result_line(result)) for result in results)
        self.spark.createDataFrame(self.rows, self.SCHEMA).createOrReplaceTempView(self.name)

    def position(self) -> int:
        return len(self.rows)

    def rewind(self, position) -> None:
        if position is not None:
            del self.rows[position:]


class HTTPPostSink(Sink):
    """POSTs each batch's results as JSON lines (application/x-ndjson), with the batch id in a header."""

    def __init__(self, url: str, *, timeout: float = 10.0, session=None, fmt: str = "json"):
        import requests

        self.url = url
        self.timeout = timeout
        self.session = session or requests.Session()
        self.fmt = fmt

    def __repr__(self) -> str:
        return f"<HTTPPostSink {self.url}>"

    def write(self, batch_id: int, results: list) -> None:
        if not results:
            return
        body = "".join(result_line(result, self.fmt) + "\n" for result in results).encode("utf-8")
        response = self.session.post(self.url, data=body, timeout=self.timeout,
                                     headers={"Content-Type": "application/x-ndjson", "X-Batch-Id": str(batch_id)})
        response.raise_for_status()


class Sinks(Sink):
    """Several sinks, each given every batch."""

    def __init__(self, sinks: Iterable[Sink]):
        self.sinks = list(sinks)

    def __repr__(self) -> str:
        return f"<Sinks {self.sinks}>"

    def write(self, batch_id: int, results: list) -> None:
        for sink in self.sinks:
            sink.write(batch_id, results)

    def position(self):
        return [sink.position() for sink in self.sinks]

    def rewind(self, position) -> None:
        if position is not None:
            for sink, where in zip(self.sinks, position):
                sink.rewind(where)

    def close(self) -> None:
        for sink in self.sinks:
            sink.close()


def sink_for(target, spark=None, *, fmt: str = "json") -> Sink:
    """A sink from what a user gives: a Sink, a callable, "console", "memory:NAME", a URL, or a file path.

    Files by extension: `.jsonl` / `.json` JSON lines, `.nt` / `.tnt` N-Triples, `.trig` TriG.
    """
    if isinstance(target, Sink):
        return target
    if isinstance(target, (list, tuple)):
        return Sinks(sink_for(item, spark, fmt=fmt) for item in target)
    if callable(target):
        return CallbackSink(target)
    text = str(target)
    if text == "console":
        return ConsoleSink(fmt=fmt)
    if text.startswith("memory:"):
        if spark is None:
            raise ValueError("a memory sink needs the Spark session")
        return MemorySink(spark, text.partition(":")[2])
    if text.startswith(("http://", "https://")):
        return HTTPPostSink(text, fmt=fmt)
    suffix = Path(text).suffix.lower()
    if suffix in (".jsonl", ".json", ".ndjson"):
        return JSONLinesSink(text, fmt=fmt)
    if suffix in (".nt", ".tnt"):
        return NTriplesSink(text)
    if suffix == ".trig":
        return TriGSink(text)
    raise ValueError(f"no sink for {text!r}: expected console, memory:NAME, an http(s) URL, "
                     "or a .jsonl / .nt / .tnt / .trig file")


class DeadLetters:
    """Records set aside ("FILE:LINE: reason"): on stderr, or appended to a file, one per line."""

    def __init__(self, path: str | os.PathLike | None = None, *, err=None):
        self.path = Path(path) if path is not None else None
        self.err = err
        if self.path is not None:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self.path.touch(exist_ok=True)

    def __repr__(self) -> str:
        return f"<DeadLetters {self.path or 'stderr'}>"

    def write(self, batch_id: int, records: list[str]) -> None:
        if not records:
            return
        text = "".join(f"{record}\n" for record in records)
        if self.path is None:
            (self.err or sys.stderr).write(text)
            return
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(text)

    def position(self):
        return self.path.stat().st_size if self.path is not None else None

    def rewind(self, position) -> None:
        if self.path is not None and position is not None and self.path.stat().st_size > position:
            with self.path.open("r+b") as handle:
                handle.truncate(position)
