"""A rule stream's lines as Spark rows, and back: what `reason --engine spark` moves between executors and driver.

The executors read their piece of the stream file (bytes [start, end), cut at
newlines) with the readers of `--engine local` (`columnar.atoms` for a LARS
program's `.stream` and `.tnt` lines, `mtl.data` for a DatalogMTL program's
datasets, atom lines and `.tnt` lines), so each line reads here as there, and
give each line as a row:

    line BIGINT, first BIGINT, last BIGINT, predicate STRING, args ARRAY<STRING>, rejected STRING

`first` and `last` are the time points the fact holds at (a LARS atom: one
point; a DatalogMTL fact: its interval), terms are written as the dictionary
writes them (`core.terms`), `rejected` is why a line was set aside (its row has
no fact). On the driver the rows of a micro-batch become an `AtomBlock` (LARS)
or the items of a `FactTimeline` (DatalogMTL) for the one engine, interned in
the program's dictionary: the engine sees what it sees reading the file.

A piece reads `@prefix` lines declared before it from `prefixes` (the planner
scans for them: `declared_prefixes`). Nothing here needs a Spark session: the
tests read pieces in-process.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

from ..core import limits
from ..io.lines import BoundedReader, Rejected

#: the rows' columns (a DDL string, as a data source's schema may be)
SCHEMA = "line BIGINT, first BIGINT, last BIGINT, predicate STRING, args ARRAY<STRING>, rejected STRING"
COLUMNS = ("line", "first", "last", "predicate", "args", "rejected")

LARS = "lars"
DATALOGMTL = "datalogmtl"

_PREFIX = re.compile(rb"@prefix")


@dataclass(frozen=True)
class Reading:
    """How the stream file is read: by which program's reader (`language`), in which form (`kind`: LARS
    `atoms` / `triples`; DatalogMTL one of `mtl.data.facts_kind`'s), with the program's prefixes and
    `@tick` (LARS), and the longest line taken."""

    path: str
    language: str
    kind: str
    prefixes: tuple = ()
    tick_ms: int | None = None
    max_line_bytes: int | None = limits.MAX_LINE_BYTES

    @property
    def learns_prefixes(self) -> bool:
        """Do its lines declare prefixes for the lines after them (`@prefix` in atom lines)?"""
        return self.kind == "atoms"


def reading_for(path: str | Path, language: str, program, max_line_bytes: int | None) -> Reading:
    """The reading `--engine local` does of `path` for `program` (parsed: LARS `Program`, DatalogMTL
    `MetricProgram` or its lowering)."""
    prefixes = tuple(sorted(dict(getattr(program, "prefixes", None) or {}).items()))
    if language == LARS:
        kind = "triples" if Path(path).suffix in (".tnt", ".nt") else "atoms"
        return Reading(str(path), LARS, kind, prefixes, getattr(program, "tick_ms", None), max_line_bytes)
    from ..mtl.data import facts_kind

    return Reading(str(path), DATALOGMTL, facts_kind(path, max_line_bytes=max_line_bytes), prefixes, None,
                   max_line_bytes)


def prefix_lines(data: bytes, max_line_bytes: int | None) -> Iterator[tuple[int, str, str]]:
    """(byte where the line starts, prefix, IRI) of each `@prefix` line of `data` (whole lines), as the atom
    readers learn them (`io.formats`'s pattern; a line too long or not UTF-8 declares nothing)."""
    from ..io.formats import _PREFIX_LINE

    for match in _PREFIX.finditer(data):
        begin = data.rfind(b"\n", 0, match.start()) + 1
        stop = data.find(b"\n", match.start())
        stop = len(data) if stop < 0 else stop
        raw = data[begin:stop]
        if max_line_bytes is not None and len(raw) + 1 > max_line_bytes:
            continue
        try:
            text = raw.decode("utf-8").rstrip("\r")
        except UnicodeDecodeError:
            continue
        declared = _PREFIX_LINE.match(text)
        if declared:
            yield begin, declared.group(1) or "", declared.group(2)


def declared_prefixes(path: str | Path, end: int, max_line_bytes: int | None = limits.MAX_LINE_BYTES,
                      since: tuple[int, dict] | None = None) -> dict[str, str]:
    """The `@prefix` lines in bytes [0, end) of the file, as the readers learn them (a later one wins);
    `since` = (byte, prefixes): what a scan up to that byte found, to go on from."""
    start, found = (0, {}) if since is None else (since[0], dict(since[1]))
    if end <= start:
        return found
    with open(path, "rb") as handle:
        whole = start == 0
        if not whole:
            handle.seek(start - 1)
            whole = handle.read(1) == b"\n"
        handle.seek(start)
        data = handle.read(end - start)
    for begin, name, iri in prefix_lines(data, max_line_bytes):
        if begin == 0 and not whole:
            continue  # (a line that began before `start` was seen by the scan before)
        found[name] = iri
    return found


# executors: a piece of the file as rows -------------------------------------------------------------------------


def read_piece(reading: Reading, start: int, end: int, first_line: int, prefixes: dict[str, str],
               name: str | None = None) -> Iterator:
    """Bytes [start, end) of the stream file (whole lines, the first numbered `first_line` + 1) as Arrow
    record batches of `COLUMNS`, rows in line order. `prefixes`: the program's and those the file
    declared before `start`."""
    from ..core.terms import Dictionary

    name = name or reading.path
    terms = Dictionary()
    with open(reading.path, "rb") as handle:
        handle.seek(start)
        bounded = BoundedReader(handle, end - start)
        if reading.language == LARS:
            yield from _lars_batches(reading, bounded, first_line, dict(prefixes), terms, name)
        else:
            yield from _metric_batches(reading, bounded, first_line, dict(prefixes), terms, name)


def _lars_batches(reading: Reading, handle, shift: int, prefixes: dict, terms, name: str) -> Iterator:
    from ..columnar.atoms import BLOCK_BYTES, atom_block, tnt_atom_block
    from ..io.lines import byte_blocks

    for first_line, data, too_long in byte_blocks(handle, BLOCK_BYTES, filename=name,
                                                   max_line_bytes=reading.max_line_bytes):
        data = bytes(data)
        if reading.kind == "triples":
            block = tnt_atom_block(data, first_line, terms, tick_ms=reading.tick_ms, filename=name)
        else:
            block = atom_block(data, first_line, terms, prefixes=prefixes, tick_ms=reading.tick_ms, filename=name)
        block = block.expanded()
        dead = block.rejected + too_long
        keys = terms.keys
        yield _batch([line + shift for line in block.lines], block.times, block.times,
                     [keys[p] for p in block.predicates], [[keys[a] for a in args] for args in block.args],
                     [(record.line + shift, record.reason) for record in dead])
        terms.retain(())  # (this block's terms: its rows hold them written)


def _metric_batches(reading: Reading, handle, shift: int, prefixes: dict, terms, name: str,
                    rows_per_batch: int = 8192) -> Iterator:
    from ..mtl.data import read_facts_as

    keys = terms.keys
    lines, firsts, lasts, predicates, args, dead = [], [], [], [], [], []
    for item in read_facts_as(reading.kind, name, handle, terms, prefixes=prefixes,
                              max_line_bytes=reading.max_line_bytes):
        if isinstance(item, Rejected):
            dead.append((item.line + shift, item.reason))
        else:
            predicate, arguments = item.fact
            lines.append(item.line + shift)
            firsts.append(item.first)
            lasts.append(item.last)
            predicates.append(keys[predicate])
            args.append([keys[a] for a in arguments])
        if len(lines) + len(dead) >= rows_per_batch:
            yield _batch(lines, firsts, lasts, predicates, args, dead)
            lines, firsts, lasts, predicates, args, dead = [], [], [], [], [], []
    if lines or dead:
        yield _batch(lines, firsts, lasts, predicates, args, dead)


def _batch(lines, firsts, lasts, predicates, args, dead):
    """Facts and set-aside lines as one record batch, in line order."""
    import pyarrow as pa

    if dead:
        count = len(lines)
        rows = sorted(range(count + len(dead)), key=lambda k: lines[k] if k < count else dead[k - count][0])
        every = lines + [line for line, _ in dead]
        lines = [every[k] for k in rows]
        firsts = [firsts[k] if k < count else None for k in rows]
        lasts = [lasts[k] if k < count else None for k in rows]
        predicates = [predicates[k] if k < count else None for k in rows]
        args = [args[k] if k < count else None for k in rows]
        rejected = [None if k < count else dead[k - count][1] for k in rows]
    else:
        rejected = pa.nulls(len(lines), pa.string())
    return pa.RecordBatch.from_arrays(
        [pa.array(lines, pa.int64()), pa.array(firsts, pa.int64()), pa.array(lasts, pa.int64()),
         pa.array(predicates, pa.string()), pa.array(args, pa.list_(pa.string())),
         rejected if isinstance(rejected, pa.Array) else pa.array(rejected, pa.string())],
        names=list(COLUMNS))


# the driver: rows back into the engine's input -------------------------------------------------------------------


def in_line_order(table):
    """The table's rows by line (a micro-batch's partitions come in order; this makes sure)."""
    import numpy as np
    import pyarrow as pa

    if table.num_rows < 2:
        return table
    lines = np.asarray(table.column("line").to_numpy(), dtype=np.int64)
    if bool((lines[1:] >= lines[:-1]).all()):
        return table
    return table.take(pa.array(np.argsort(lines, kind="stable")))


def interned_args(table, terms) -> list[tuple]:
    """The `args` column as tuples of ids of `terms` (rows without a fact: ())."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    from ..columnar.encode import encode

    column = table.column("args").combine_chunks() if table.num_rows else pa.array([], pa.list_(pa.string()))
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    offsets = np.asarray(pc.fill_null(column.offsets, 0).to_numpy(), dtype=np.int64) if len(column) else \
        np.zeros(1, dtype=np.int64)
    values = column.values if len(column) else pa.array([], pa.string())
    if len(column) and column.offset:
        values = column.flatten()
        offsets = offsets - offsets[0]
    ids = encode(values, terms).tolist() if len(values) else []
    sizes = np.diff(offsets).tolist()
    if not sizes:
        return []
    if min(sizes) == max(sizes):
        width = sizes[0]
        if width == 0:
            return [()] * len(sizes)
        if width == 1:
            return list(zip(ids))
        return list(zip(*(ids[k::width] for k in range(width))))
    out = []
    start = 0
    for size in sizes:
        out.append(tuple(ids[start:start + size]))
        start += size
    return out


def block_of(table, terms, filename: str):
    """A LARS micro-batch's rows (in line order) as an `AtomBlock` of `terms`' ids, its set-aside lines
    as `Rejected` records of `filename`."""
    import numpy as np
    import pyarrow.compute as pc

    from ..columnar.atoms import AtomBlock
    from ..columnar.encode import encode

    rejected = table.column("rejected")
    dead = []
    if rejected.null_count < table.num_rows:
        mask = pc.is_valid(rejected)
        gone = table.filter(mask)
        dead = [Rejected(filename, line, reason) for line, reason in zip(gone.column("line").to_pylist(),
                                                                        gone.column("rejected").to_pylist())]
        table = table.filter(pc.invert(mask))
    lines = table.column("line").to_pylist()
    times = np.asarray(table.column("first").to_numpy(), dtype=np.int64).tolist()
    predicates = encode(table.column("predicate"), terms).tolist()
    return AtomBlock(lines, times, predicates, interned_args(table, terms), dead)


def items_of(table, terms, filename: str) -> list:
    """A DatalogMTL micro-batch's rows (in line order) as the timeline's items: `TimedFact`s of `terms`'
    ids and `Rejected` records of `filename`."""
    from ..columnar.encode import encode
    from ..mtl.data import TimedFact

    lines = table.column("line").to_pylist()
    firsts = table.column("first").to_pylist()
    lasts = table.column("last").to_pylist()
    reasons = table.column("rejected").to_pylist()
    facts = table.filter(table.column("rejected").is_null()) if table.column("rejected").null_count < len(lines) \
        else table
    predicates = iter(encode(facts.column("predicate"), terms).tolist())
    args = iter(interned_args(facts, terms))
    items = []
    for line, first, last, reason in zip(lines, firsts, lasts, reasons):
        if reason is not None:
            items.append(Rejected(filename, line, reason))
        else:
            items.append(TimedFact(first, last, (next(predicates), next(args)), line, terms))
    return items
