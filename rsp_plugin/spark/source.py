"""The `rdf` data source: directories of RDF stream files as a Spark table or stream.

    spark.readStream.format("rdf").option("path", "data/sensors/").option("stream", "http://ex/s").load()
    spark.read.format("rdf").load("data/sensors.tnt")

Columns: `stream, s, p, o, ts, rejected`. Terms are in N-Triples form (the keys
of `rsp_plugin.core.terms.Dictionary`), `ts` is in milliseconds. A record that
cannot be read is a row with only `stream` and `rejected` ("FILE:LINE: reason")
set: a dead letter, passed on rather than dropped, so that the micro-batch
driver can count it and write it to its dead-letter output.

Formats (by extension, or the `format` option): `.tnt` timestamped N-Triples,
`.nt` N-Triples, `.ttl` Turtle, `.trig` / `.nq` timestamped graphs (each named
graph one element, its time from `prov:generatedAtTime`). Parsing happens in
the executors, with the same readers as the local engine (line formats a block
at a time by `rsp_plugin.columnar.blocks`, documents by `rsp_plugin.io.formats`), so a
file reads the same here and there.

Options:
    path                 a file or a directory (its files are read in name order)
    stream               the stream IRI of every row (default: the path's file: URI)
    format               auto (default) | tnt | nt | ttl | trig | nq
    timestamp            inline (.tnt) | graph (.trig/.nq) | filename | arrival | an integer (ms);
                         default: inline, graph, and arrival for .nt/.ttl (arrival: the file's
                         modification time, so that a re-read batch is the same batch)
    timestampScale       filename timestamps: the last integer of the name times this (default 1)
    maxLinesPerTrigger   streaming: at most this many lines per micro-batch (default: all there is)
    numPartitions        how many parse tasks a large range is split into (default 2; the
                         streaming queries of `rsp_plugin.spark` ask for one per task slot)
    maxLineBytes         a longer line is a dead letter, never held whole (default 4 MiB, `rsp_plugin.core.limits`)
    emit                 triples (default) | pieces: a row per piece of a file to parse (`PIECES_SCHEMA`), not
                         its triples: for a reader that parses them itself, into ids (distributed mode's time
                         slices, `piece_blocks`): the triples then never become rows of Spark's

Bytes are cut into lines by `rsp_plugin.io.lines`, as the local readers cut them:
a line that is not UTF-8 (or too long) is a dead letter naming its own line,
and every other line of the file is read. Planning (on the driver) never
holds a file in memory: pieces are cut at newlines found by seeking. Nor does
it count lines it need not count (a line budget counts them; reading all there
is finds the last newline from the end): counting is a pass over every byte,
0.08 s per million triples on the driver while the executors wait, twice a
batch before. A piece knows the lines before some byte of its file at or
before its start (`FilePiece.counted_to`), and counts the rest itself only
when it names a dead letter's line.

Streaming offsets are `{"file": name, "byte": b, "line": l}`: every file whose
name sorts before `name` is read, and `name` up to byte b (line l; null when
the lines were not counted). Line-based
files (.tnt, .nt) are read up to their last complete line, so a file that grows
is tailed; a Turtle or TriG file is read whole when it is first seen. Write a
new file under a temporary name (starting with `.` or `_`) and rename it when
complete; files are taken in name order, so name them in arrival order.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    InputPartition,
)
from pyspark.sql.streaming.datasource import SupportsTriggerAvailableNow

from ..core import limits
from ..core.iris import file_iri
from ..io.lines import BoundedReader

#: The source's columns (a DDL string, as `DataSource.schema` may return).
SCHEMA = "stream STRING, s STRING, p STRING, o STRING, ts BIGINT, rejected STRING"
COLUMNS = ("stream", "s", "p", "o", "ts", "rejected")
#: the columns of `emit` pieces: a `FilePiece` per row
PIECES_SCHEMA = ("path STRING, fmt STRING, start BIGINT, end BIGINT, first_line BIGINT, timestamp STRING, "
                 "file_time BIGINT, max_line_bytes BIGINT, counted_to BIGINT")

EXTENSIONS = {".tnt": "tnt", ".nt": "nt", ".ttl": "ttl", ".trig": "trig", ".nq": "nq", ".nquads": "nq"}
LINE_FORMATS = ("tnt", "nt")
TIMESTAMPS = ("inline", "graph", "filename", "arrival")
_TARGET_PIECE_BYTES = 256 * 1024


class SourceOptionError(ValueError):
    """An option of the `rdf` source that cannot be used, said in one line."""


@dataclass(frozen=True)
class SourceOptions:
    """The `rdf` source's options, checked once on the driver."""

    path: str
    stream: str
    format: str = "auto"
    timestamp: str | None = None
    timestamp_scale: int = 1
    max_lines: int | None = None
    partitions: int = 2
    max_line_bytes: int | None = limits.MAX_LINE_BYTES
    #: "triples" (rows of `SCHEMA`) or "pieces" (a row per piece, `PIECES_SCHEMA`)
    emit: str = "triples"

    @classmethod
    def from_options(cls, options) -> SourceOptions:
        options = {str(key).lower(): value for key, value in dict(options).items()}
        path = options.get("path")
        if not path:
            raise SourceOptionError('the rdf source needs a path: .option("path", DIR_OR_FILE) or .load(PATH)')
        fmt = options.get("format", "auto").lower().lstrip(".")
        if fmt not in ("auto", *set(EXTENSIONS.values())):
            raise SourceOptionError(f"format {fmt!r}: expected auto, tnt, nt, ttl, trig or nq")
        stamp = options.get("timestamp")
        if stamp is not None and stamp not in TIMESTAMPS and not re.fullmatch(r"-?\d+", stamp):
            raise SourceOptionError(f"timestamp {stamp!r}: expected inline, graph, filename, arrival or an integer (ms)")
        emit = str(options.get("emit", "triples")).lower()
        if emit not in ("triples", "pieces"):
            raise SourceOptionError(f"emit {emit!r}: expected triples or pieces")
        return cls(
            emit=emit,
            path=str(path),
            stream=options.get("stream") or file_iri(Path(path).resolve()),
            format=fmt,
            timestamp=stamp,
            timestamp_scale=_positive(options, "timestampscale", 1),
            max_lines=_positive(options, "maxlinespertrigger", None),
            partitions=_positive(options, "numpartitions", 2),
            max_line_bytes=None if str(options.get("maxlinebytes", "")).lower() == "none"
            else _positive(options, "maxlinebytes", limits.MAX_LINE_BYTES),
        )

    def files(self) -> list[Path]:
        """The files to read, in name order (hidden and `_` files skipped: they are being written)."""
        root = Path(self.path)
        if root.is_file():
            return [root]
        if not root.is_dir():
            return []
        return sorted((f for f in root.iterdir()
                       if f.is_file() and not f.name.startswith((".", "_")) and self.format_of(f) is not None),
                      key=lambda f: f.name)

    def format_of(self, path: Path) -> str | None:
        if self.format != "auto":
            return self.format
        return EXTENSIONS.get(path.suffix.lower())

    def timestamp_of(self, fmt: str) -> str:
        if self.timestamp is not None:
            return self.timestamp
        return {"tnt": "inline", "trig": "graph", "nq": "graph"}.get(fmt, "arrival")


def _positive(options: dict, key: str, default):
    value = options.get(key)
    if value is None:
        return default
    try:
        number = int(value)
    except ValueError:
        number = 0
    if number < 1:
        raise SourceOptionError(f"{key}: expected a positive integer, got {value!r}")
    return number


class FilePiece(InputPartition):
    """Bytes [start, end) of one file: one parse task. The file has `first_line` lines before byte
    `counted_to` (default: `start`, so its first line is line `first_line` + 1); the lines between
    there and `start` are counted only when a dead letter is named (`lines_before`)."""

    def __init__(self, path, fmt, start, end, first_line, timestamp, file_time,
                 max_line_bytes: int | None = limits.MAX_LINE_BYTES, counted_to: int | None = None):
        super().__init__(path)
        self.path, self.fmt, self.start, self.end = path, fmt, start, end
        self.first_line, self.timestamp, self.file_time = first_line, timestamp, file_time
        self.max_line_bytes = max_line_bytes
        self.counted_to = start if counted_to is None else counted_to

    def lines_before(self) -> int:
        """The lines of the file before `start` (counted from `counted_to` the first time it is asked)."""
        if self.counted_to < self.start:
            with open(self.path, "rb") as handle:
                self.first_line += _newlines(handle, self.counted_to, self.start)
            self.counted_to = self.start
        return self.first_line


class RDFDataSource(DataSource):
    """Spark's handle on RDF stream files: `format("rdf")`."""

    @classmethod
    def name(cls) -> str:
        return "rdf"

    def schema(self) -> str:
        return PIECES_SCHEMA if str(self.options.get("emit", "")).lower() == "pieces" else SCHEMA

    def reader(self, schema) -> DataSourceReader:
        return RDFBatchReader(SourceOptions.from_options(self.options))

    def streamReader(self, schema) -> DataSourceStreamReader:
        return RDFStreamReader(SourceOptions.from_options(self.options))


class RDFBatchReader(DataSourceReader):
    """Every file once; line-based files split into pieces parsed in parallel."""

    def __init__(self, options: SourceOptions):
        self.options = options

    def partitions(self) -> list[FilePiece]:
        pieces: list[FilePiece] = []
        for path in self.options.files():
            pieces.extend(_pieces(self.options, path, 0, path.stat().st_size, 0))
        return pieces or [FilePiece("", "none", 0, 0, 0, "inline", None)]

    def read(self, partition: FilePiece):
        if self.options.emit == "pieces":
            yield piece_row(partition)
            return
        yield from read_piece(partition, self.options.stream)


class RDFStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):
    """New files, and new complete lines of line-based files, as micro-batches."""

    def __init__(self, options: SourceOptions):
        self.options = options
        self._cap: dict[str, int] | None = None

    def initialOffset(self) -> dict:
        return {"file": "", "byte": 0, "line": 0}

    def getDefaultReadLimit(self):
        from pyspark.sql.streaming.datasource import ReadAllAvailable, ReadMaxRows

        return ReadMaxRows(self.options.max_lines) if self.options.max_lines else ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:
        """Trigger.AvailableNow: read what is there now, not what arrives while we read."""
        self._cap = {f.name: f.stat().st_size for f in self.options.files()}

    def latestOffset(self, start: dict, limit=None) -> dict:
        budget = getattr(limit, "max_rows", None)
        position = dict(start)
        for path in self.options.files():
            if path.name < start["file"]:
                continue
            size = self._size(path)
            if size is None:
                continue
            fmt = self.options.format_of(path)
            begin, line = (start["byte"], start["line"]) if path.name == start["file"] else (0, 0)
            if begin >= size:
                continue
            if fmt not in LINE_FORMATS:
                end, lines = size, 1
            elif budget is None:  # (all there is: its lines are not counted, `FilePiece.lines_before`)
                end, lines = _last_line_end(path, begin, size), None
            else:
                end, lines = _scan_lines(path, begin, size, budget)
            if end == begin:
                continue  # no complete line yet
            position = {"file": path.name, "byte": end,
                        "line": None if line is None or lines is None else line + lines}
            if budget is not None:
                budget -= lines
                if budget <= 0:
                    break
        return position

    def _size(self, path: Path) -> int | None:
        if self._cap is not None:
            return self._cap.get(path.name)
        return path.stat().st_size

    def partitions(self, start: dict, end: dict) -> list[FilePiece]:
        pieces: list[FilePiece] = []
        if start == end:
            return pieces
        for path in self.options.files():
            if not (start["file"] <= path.name <= end["file"]):
                continue
            begin, line = (start["byte"], start["line"]) if path.name == start["file"] else (0, 0)
            stop = end["byte"] if path.name == end["file"] else path.stat().st_size
            if path.name != end["file"] and self.options.format_of(path) in LINE_FORMATS:
                stop = _last_line_end(path, begin, stop)
            if stop <= begin:
                continue
            # (the lines before `begin` not counted: the pieces count from the file's start if they must)
            pieces.extend(_pieces(self.options, path, begin, stop, 0, 0) if line is None
                          else _pieces(self.options, path, begin, stop, line))
        return pieces

    def read(self, partition: FilePiece):
        if self.options.emit == "pieces":
            yield piece_row(partition)
            return
        yield from read_piece(partition, self.options.stream)

    def commit(self, end: dict) -> None:
        pass


# Planning (driver) --------------------------------------------------------------------------


def _scan_lines(path: Path, begin: int, size: int, budget: int | None) -> tuple[int, int]:
    """(byte after the last complete line within [begin, size) and at most `budget` lines, lines)."""
    lines, end = 0, begin
    with path.open("rb") as handle:
        handle.seek(begin)
        offset = begin
        while offset < size:
            block = handle.read(min(1 << 22, size - offset))
            if not block:
                break
            count = block.count(b"\n")
            if budget is not None and lines + count >= budget:  # (the budget ends in this block)
                end = offset + _after_nth_newline(block, budget - lines)
                lines = budget
                break
            if count:
                lines += count
                end = offset + block.rfind(b"\n") + 1
            offset += len(block)
    return end, lines


def _last_line_end(path: Path, begin: int, size: int) -> int:
    """The byte after the last newline within [begin, size) (`begin` when there is none), read from the end."""
    with path.open("rb") as handle:
        stop = size
        while stop > begin:
            start = max(begin, stop - (1 << 16))
            handle.seek(start)
            found = handle.read(stop - start).rfind(b"\n")
            if found >= 0:
                return start + found + 1
            stop = start
    return begin


def _after_nth_newline(block: bytes, n: int) -> int:
    """The position after the n-th newline of `block` (it has at least n): a binary search by
    `bytes.count` (C speed; a find per line cost 0.2 s of the driver's time per million lines)."""
    if n <= 0:
        return 0
    low, high = 0, len(block)  # the answer is in (low, high]
    while high - low > 1:
        middle = (low + high) // 2
        if block.count(b"\n", 0, middle) >= n:
            high = middle
        else:
            low = middle
    return high


def _pieces(options: SourceOptions, path: Path, begin: int, end: int, first_line: int,
            counted_to: int | None = None) -> list[FilePiece]:
    """Bytes [begin, end) of `path` cut at newlines into at most `numPartitions` pieces; the file has
    `first_line` lines before `counted_to` (default `begin`): a piece counts the rest when it must."""
    fmt = options.format_of(path)
    stamp = options.timestamp_of(fmt)
    if stamp == "graph" and fmt not in ("trig", "nq"):
        raise SourceOptionError(f"timestamp graph: only .trig / .nq files carry graph times, not {path.name}")
    if fmt in ("trig", "nq") and stamp != "graph":
        raise SourceOptionError(f"{path.name}: a timestamped-graph file takes its times from the graphs "
                                "(timestamp graph)")
    if stamp == "inline" and fmt != "tnt":
        raise SourceOptionError(f"timestamp inline: only .tnt lines carry a timestamp, not {path.name}")
    file_time = None
    if stamp == "arrival":
        file_time = int(path.stat().st_mtime * 1000)  # when the file arrived; the same on a re-read
    elif stamp == "filename":
        numbers = re.findall(r"\d+", path.stem)
        if not numbers:
            raise SourceOptionError(f"timestamp filename: no number in the file name {path.name}")
        file_time = int(numbers[-1]) * options.timestamp_scale
    elif re.fullmatch(r"-?\d+", stamp):
        file_time = int(stamp)
    bound = options.max_line_bytes
    counted_to = begin if counted_to is None else counted_to
    if fmt not in LINE_FORMATS or end - begin <= _TARGET_PIECE_BYTES:
        return [FilePiece(str(path), fmt, begin, end, first_line, stamp, file_time, bound, counted_to)]
    count = max(1, min(options.partitions, (end - begin) // _TARGET_PIECE_BYTES))
    pieces = []
    cut = begin
    with path.open("rb") as handle:
        for k in range(1, count + 1):
            stop = end if k == count else _after_newline(handle, begin + (end - begin) * k // count, end)
            if stop > cut:
                pieces.append(FilePiece(str(path), fmt, cut, stop, first_line, stamp, file_time, bound, counted_to))
                cut = stop
    return pieces


def _after_newline(handle, position: int, end: int) -> int:
    """The byte after the first newline at or after `position` (or `end`), read a block at a time."""
    handle.seek(position)
    while position < end:
        block = handle.read(min(1 << 16, end - position))
        if not block:
            break
        found = block.find(b"\n")
        if found >= 0:
            return position + found + 1
        position += len(block)
    return end


def _newlines(handle, start: int, stop: int) -> int:
    handle.seek(start)
    count, position = 0, start
    while position < stop:
        block = handle.read(min(1 << 22, stop - position))
        if not block:
            break
        count += block.count(b"\n")
        position += len(block)
    return count


# Parsing (executors) --------------------------------------------------------------------------


def read_piece(piece: FilePiece, stream: str) -> Iterator:
    """Parse one piece into Arrow record batches of the source's columns.

    Line formats are read a block at a time by the batch path's reader (`rsp_plugin.columnar.blocks`:
    the same triples, times and dead letters as the per-line readers, checked by its tests), and
    each block leaves as one record batch built from its distinct terms: no Python object per row."""
    import pyarrow as pa

    if piece.fmt == "none":
        return
    if piece.fmt in LINE_FORMATS:
        yield from _block_batches(piece, stream)
        return
    columns = {name: [] for name in COLUMNS}
    for row in parse_piece(piece):
        s, p, o, ts, rejected = row
        columns["s"].append(s)
        columns["p"].append(p)
        columns["o"].append(o)
        columns["ts"].append(ts)
        columns["rejected"].append(rejected)
    if not columns["s"]:
        return
    columns["stream"] = [stream] * len(columns["s"])
    yield pa.RecordBatch.from_arrays(
        [pa.array(columns[name], type=pa.int64() if name == "ts" else pa.string()) for name in COLUMNS],
        names=list(COLUMNS))


def piece_row(piece: FilePiece) -> tuple:
    """A piece as a row of `PIECES_SCHEMA` (`emit` pieces)."""
    return (piece.path, piece.fmt, piece.start, piece.end, piece.first_line, piece.timestamp, piece.file_time,
            piece.max_line_bytes, piece.counted_to)


def piece_of(row: dict) -> FilePiece:
    """The piece a `PIECES_SCHEMA` row names."""
    return FilePiece(row["path"], row["fmt"], row["start"], row["end"], row["first_line"], row["timestamp"],
                     row["file_time"], row["max_line_bytes"], row.get("counted_to"))


def piece_blocks(piece: FilePiece, terms) -> Iterator[tuple]:
    """A line-format piece parsed a block at a time into ids of `terms`: (block, times, dead letters as
    "FILE:LINE: reason" texts in line order), as the source's rows are made from them (`_block_batches`)."""
    import numpy as np

    from ..columnar.blocks import read_tnt_blocks

    fixed = piece.file_time
    moment = None if piece.fmt == "tnt" else 0
    bound = getattr(piece, "max_line_bytes", limits.MAX_LINE_BYTES)
    with open(piece.path, "rb") as handle:
        handle.seek(piece.start)
        reader = BoundedReader(handle, piece.end - piece.start)
        for block in read_tnt_blocks(piece.path, terms, tick_ms=1, handle=reader, moment=moment,
                                     filename=piece.path, max_line_bytes=bound):
            good = len(block)
            if not good and not block.rejected:
                continue
            times = block.times if fixed is None else np.full(good, fixed, dtype=np.int64)
            dead = []
            if block.rejected:
                shift = piece.lines_before()
                dead = [f"{r.filename}:{r.line + shift}: {r.reason}" for r in block.rejected]
            yield block, times, dead


def look_back(piece: FilePiece, span: int, most_bytes: int) -> FilePiece | None:
    """The lines just before a `.tnt` piece, back to the first one more than `span` ms older than the last
    of them (in a file in time order: every line that a window of `span` ms ending after the piece's
    first line could hold), as a piece of their own; None when there is none within `most_bytes`, or the
    file's start comes first (a window there may reach an earlier file or batch), or a line there is not
    a timestamped one."""
    if piece.fmt != "tnt" or piece.file_time is not None or piece.start <= 0:
        return None
    with open(piece.path, "rb") as handle:
        size = 1 << 16
        while True:
            begin = max(0, piece.start - size)
            handle.seek(begin)
            data = handle.read(piece.start - begin)
            lines = data.split(b"\n")[:-1]  # (the piece starts after a newline)
            if begin > 0:
                lines = lines[1:]  # (the first is cut)
            stamps = []
            for line in (lines[0], lines[-1]) if lines else ():
                head = line.split(b" ", 1)[0]
                if not head.lstrip(b"-").isdigit():
                    return None
                stamps.append(int(head))
            if stamps and stamps[0] < stamps[1] - span:
                # (the lines from the first one within the span: found in the bytes read)
                offset = piece.start - len(data)
                position = offset + (data.index(b"\n") + 1 if begin > 0 else 0)
                for line in lines:
                    head = line.split(b" ", 1)[0]
                    if head.lstrip(b"-").isdigit() and int(head) >= stamps[1] - span:
                        break
                    position += len(line) + 1
                return FilePiece(piece.path, piece.fmt, position, piece.start, 0, piece.timestamp, None,
                                 piece.max_line_bytes)
            if begin == 0 or size >= most_bytes:
                return None
            size *= 4


def _block_batches(piece: FilePiece, stream: str) -> Iterator:
    """A line-format piece as Arrow record batches, a block of lines at a time, rows in line order
    (a dead letter where its line was)."""
    import numpy as np
    import pyarrow as pa

    from ..columnar.encode import decode_arrow
    from ..core.terms import Dictionary

    terms = Dictionary()
    for block, times, texts in piece_blocks(piece, terms):
        good = len(block)
        dead = block.rejected
        lines = block.lines
        s, p, o = (decode_arrow(column, terms) for column in (block.s, block.p, block.o))
        ts = pa.array(times, pa.int64())
        rejected = pa.nulls(good, pa.string())
        if dead:  # the dead letters in their lines' places among the triples
            count = len(dead)
            order = np.argsort(np.concatenate([lines, np.array([r.line for r in dead], dtype=np.int64)]),
                               kind="stable")
            nothing = pa.nulls(count, pa.string())
            s, p, o = (pa.concat_arrays([column, nothing]).take(order) for column in (s, p, o))
            ts = pa.concat_arrays([ts, pa.nulls(count, pa.int64())]).take(order)
            rejected = pa.concat_arrays([rejected, pa.array(texts, pa.string())]).take(order)
        rows = len(ts)
        yield pa.RecordBatch.from_arrays(
            [pa.array([stream], pa.string()).take(np.zeros(rows, dtype=np.int32)), s, p, o, ts, rejected],
            names=list(COLUMNS))
        # ids are of this piece only: what the block named is forgotten before the next
        terms.retain(())


def parse_piece(piece: FilePiece) -> Iterator[tuple]:
    """(s, p, o, ts, None) per triple and (None, None, None, None, "FILE:LINE: reason") per dead letter."""
    from ..core.terms import Dictionary
    from ..io.formats import (
        read_ntriples_at,
        read_rdf_document_at,
        read_timestamped_graphs,
        read_tnt,
    )
    from ..io.lines import read_document, read_lines

    terms = Dictionary()
    name = piece.path
    bound = getattr(piece, "max_line_bytes", limits.MAX_LINE_BYTES)
    with open(piece.path, "rb") as handle:
        handle.seek(piece.start)
        if piece.fmt in LINE_FORMATS:  # cut here, block by block: a bad line is one dead letter
            lines = read_lines(handle, filename=name, max_line_bytes=bound, limit=piece.end - piece.start)
            if piece.fmt == "tnt":
                elements = read_tnt(lines, terms, tick_ms=1, filename=name)
            else:
                elements = read_ntriples_at(lines, terms, timestamp=0, filename=name)
            yield from _rows(elements, terms, piece)
            return
        text, bad_lines = read_document(handle.read(piece.end - piece.start), filename=name, max_line_bytes=bound)
    if piece.fmt == "ttl":
        elements = read_rdf_document_at(text, terms, timestamp=0, rdf_format="turtle", filename=name)
    else:
        elements = read_timestamped_graphs(text, terms, rdf_format="trig" if piece.fmt == "trig" else "nquads",
                                           filename=name)
    yield from _rows(bad_lines, terms, piece)
    yield from _rows(elements, terms, piece)


def _rows(elements, terms, piece: FilePiece) -> Iterator[tuple]:
    from ..io.formats import Rejected

    keys = terms.keys
    fixed = piece.file_time
    for element in elements:
        if isinstance(element, Rejected):
            line = element.line + piece.lines_before()
            yield None, None, None, None, f"{element.filename}:{line}: {element.reason}"
            continue
        s, p, o = element.fact[1]
        yield keys[s], keys[p], keys[o], element.time_point if fixed is None else fixed, None
