"""Stream files read a block of lines at a time: columns of ids out, the same dead letters.

A block (a few MB of whole lines) is split into lines, and the lines at their first
spaces, by pyarrow; the lines in the common form (`TIMESTAMP <s> <p> <o> .` with
single spaces, a literal without escapes: each column's distinct values checked by
an anchored regex) are encoded in bulk (`encode.py`). Every
other line (odd whitespace, comments after the dot, escapes, xsd:dateTime
timestamps, mistakes) goes to the per-line reader of `rsp_plugin.io.formats`, so
its result, or its `FILE:LINE: reason`, is exactly the per-line path's. Blank
and comment lines are skipped by both.

    for block in read_tnt_blocks("s.tnt", terms, tick_ms=1):
        block.times, block.s, block.p, block.o      # int64 columns, in line order
        block.lines                                 # where each row was read
        block.rejected                              # Rejected records, in line order

Rule streams for `reason` have their own, lighter reader (`atoms.py`).

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> text = b'5 <a:s> <a:p> "x"^^<http://www.w3.org/2001/XMLSchema#string> .\\n6 <a:s> <a:p> .\\n\\n7  <a:s> <a:p> <a:o> .\\n'
>>> block = tnt_block(text, 1, terms, filename="s.tnt")
>>> block.lines.tolist(), block.times.tolist(), [terms.key(o) for o in block.o.tolist()]
([1, 4], [5, 7], ['"x"', '<a:o>'])
>>> [str(r) for r in block.rejected]
['s.tnt:2: not an N-Triples triple after the timestamp: expected <s> <p> <o> .']
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Iterator

import numpy as np

from ..core import limits
from ..core.terms import XSD_STRING, Dictionary
from ..core.time import out_of_range
from ..io.formats import Rejected, StreamElement, read_ntriples_at, read_tnt
from ..io.lines import byte_blocks, check_line
from . import kernels
from .encode import booleans, encode_checked, int64_array, numbers, string_array

#: bytes read per block (whole lines: a block ends at its last newline)
BLOCK_BYTES = 8 << 20

_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_BLANK = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
_PLAIN_LITERAL = r'"[^"\\\n\r]*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRI + r")?"
_TERM = rf"(?:{_IRI}|{_BLANK})"
_OBJECT = rf"(?:{_IRI}|{_BLANK}|{_PLAIN_LITERAL})"
_SUBJECT = rf"^{_TERM}$"
_PREDICATE = rf"^{_IRI}$"
_OBJECT_ONLY = rf"^{_OBJECT}$"
#: a timestamp the bulk path reads: an integer of at most 18 digits (|t| < 10**18 fits int64; any other
#: goes to the per-line reader, which says what it makes of it)
_TIMESTAMP = r"^-?[0-9]{1,18}$"
_STRING_SUFFIX = '"^^' + XSD_STRING


@dataclass
class TripleBlock:
    """Triples read from one block: id columns in line order, and the lines set aside."""

    lines: np.ndarray
    times: np.ndarray
    s: np.ndarray
    p: np.ndarray
    o: np.ndarray
    rejected: list[Rejected] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lines)

    def take(self, rows) -> "TripleBlock":
        """The rows selected by an index or a mask (no dead letters)."""
        return TripleBlock(self.lines[rows], self.times[rows], self.s[rows], self.p[rows], self.o[rows])


# reading bytes ----------------------------------------------------------------------------


def _lines(data: bytes):
    """The block's lines as an Arrow string array, each with its newline (Python's universal newlines),
    or None if the block is not all UTF-8. The lines are cut by numpy (offsets of the newlines)
    over the block's own bytes: no copy, no Python string per line."""
    import pyarrow as pa

    raw = np.frombuffer(data, dtype=np.uint8)
    if len(raw) and (raw[-1] != 10 or bool(np.any(raw == 13))):  # rare: copy, then translate
        try:
            data = bytes(data).decode("utf-8").replace("\r\n", "\n").replace("\r", "\n").encode("utf-8")
        except UnicodeDecodeError:
            return None
        if not data.endswith(b"\n"):
            data += b"\n"
        raw = np.frombuffer(data, dtype=np.uint8)
    ends = np.flatnonzero(raw == 10)
    offsets = np.empty(len(ends) + 1, dtype=np.int64)
    offsets[0] = 0
    offsets[1:] = ends + 1
    lines = pa.LargeStringArray.from_buffers(len(ends), pa.py_buffer(offsets), pa.py_buffer(data))
    try:
        lines.validate(full=True)  # UTF-8
    except pa.ArrowInvalid:
        return None
    return lines


def _slow_lines(data: bytes, first_line: int, rows=None) -> Iterator[tuple[int, str | None]]:
    """(line number, text, or (reason,) if not UTF-8) of the given rows of the block (all: rows=None)."""
    data = bytes(data)
    text_lines = data.split(b"\n")
    if text_lines and text_lines[-1] == b"":
        text_lines.pop()
    try:
        decoded = data.decode("utf-8")
    except UnicodeDecodeError:
        decoded = None
    if decoded is not None and "\r" in decoded:
        decoded = decoded.replace("\r\n", "\n").replace("\r", "\n")
        lines: list = decoded.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
    elif decoded is not None:
        lines = decoded.split("\n")
        if lines and lines[-1] == "":
            lines.pop()
    else:
        lines = []
        for raw in text_lines:
            lines.append(check_line(raw, None))
    chosen = range(len(lines)) if rows is None else rows
    for row in chosen:
        yield first_line + row, lines[row]


def _per_line(reader, data: bytes, first_line: int, rows, terms, filename: str, **options):
    """The per-line reader on some lines of a block: (line, element) and Rejected records."""
    elements: list[tuple[int, StreamElement]] = []
    rejected: list[Rejected] = []
    for number, text in _slow_lines(data, first_line, rows):
        if type(text) is tuple:
            rejected.append(Rejected(filename, number, text[0]))
            continue
        for item in reader([text + "\n"], terms, filename=filename, **options):
            if isinstance(item, Rejected):
                rejected.append(Rejected(filename, number, item.reason))
            else:
                elements.append((number, item))
    return elements, rejected


# timestamped N-Triples ----------------------------------------------------------------------


def tnt_block(data: bytes, first_line: int, terms: Dictionary, *, tick_ms: int | None = None,
              filename: str = "<stream>", moment: int | None = None) -> TripleBlock:
    """One block of `.tnt` lines (or, with `moment`, plain N-Triples all seen at `moment`).

    Every line is cut at its first spaces (`split_pattern`); each column's distinct values are
    checked (and interned) once (`encode_checked`); a row whose parts are not all in the common
    form takes the per-line reader."""
    if moment is not None and out_of_range(moment) is not None:  # (no int64 column holds it: each line says so)
        return _tnt_slowly(data, first_line, None, terms, tick_ms, filename, moment)
    lines = _lines(data)
    if lines is None:
        return _tnt_slowly(data, first_line, None, terms, tick_ms, filename, moment)
    import pyarrow as pa

    count = len(lines)
    fields = 4 if moment is None else 3
    parts = kernels.split_pattern(lines, " ", fields - 1)
    offsets = numbers(parts.offsets)
    whole = np.diff(offsets) == fields
    if whole.all():  # (the usual block: each line's parts taken in one pass, a quarter of a take's cost)
        places = int64_array(np.arange(fields))  # (an Arrow scalar: a Python int would import pandas)

        def column(number: int):
            return kernels.list_element(parts, places[number])
    else:
        flat = kernels.list_flatten(parts)
        nothing = len(flat)  # (a line of fewer parts reads "" there: no regex takes it)
        flat = pa.concat_arrays([flat, string_array([""])])  # (split_pattern keeps large_string)

        def column(number: int):
            return kernels.take(flat, int64_array(np.where(whole, offsets[:-1] + number, nothing)))

    first = 0 if moment is not None else 1
    rest = column(first + 2)
    good = whole & booleans(kernels.ends_with(rest, " .\n"))
    s, s_ok = encode_checked(column(first), terms, _SUBJECT, numbers=False)
    p, p_ok = encode_checked(column(first + 1), terms, _PREDICATE, numbers=False)
    o, o_ok = encode_checked(kernels.slice_codeunits(rest, 0, -3), terms, _OBJECT_ONLY, canonical=True)
    good &= s_ok & p_ok & o_ok
    if moment is None:
        stamps = column(0)
        good &= booleans(kernels.matches(stamps, _TIMESTAMP))  # (|t| < 10**18: int64)
        times = np.zeros(count, dtype=np.int64)
        valid = np.flatnonzero(good)
        if len(valid):
            times[valid] = numbers(kernels.to_int64(kernels.take(stamps, int64_array(valid)) if len(valid) < count
                                                    else stamps))
        if tick_ms is not None:
            times = times // tick_ms
    else:
        times = np.full(count, moment, dtype=np.int64)
    rows = np.flatnonzero(good)
    all_good = len(rows) == count
    block = TripleBlock(rows + first_line, times if all_good else times[rows], s if all_good else s[rows],
                        p if all_good else p[rows], o if all_good else o[rows])
    if not all_good:
        others = np.flatnonzero(~good).tolist()
        slow = _tnt_slowly(data, first_line, others, terms, tick_ms, filename, moment)
        block = _merge(block, slow)
    return block


def _tnt_slowly(data, first_line, rows, terms, tick_ms, filename, moment) -> TripleBlock:
    if moment is None:
        elements, rejected = _per_line(read_tnt, data, first_line, rows, terms, filename, tick_ms=tick_ms)
    else:
        elements, rejected = _per_line(read_ntriples_at, data, first_line, rows, terms, filename,
                                       timestamp=moment)
    kept = []
    for number, element in elements:
        reason = out_of_range(element.time_point)
        if reason is None:
            kept.append((number, element))
        else:
            rejected.append(Rejected(filename, number, reason))
    elements = kept
    count = len(elements)
    lines = np.fromiter((number for number, _ in elements), dtype=np.int64, count=count)
    times = np.fromiter((element.time_point for _, element in elements), dtype=np.int64, count=count)
    triples = np.array([element.fact[1] for _, element in elements], dtype=np.int64).reshape(count, 3)
    rejected.sort(key=lambda record: record.line)
    return TripleBlock(lines, times, triples[:, 0].copy(), triples[:, 1].copy(), triples[:, 2].copy(), rejected)


def _merge(fast: TripleBlock, slow: TripleBlock) -> TripleBlock:
    lines = np.concatenate([fast.lines, slow.lines])
    order = np.argsort(lines, kind="stable")
    merged = TripleBlock(lines[order], np.concatenate([fast.times, slow.times])[order],
                         np.concatenate([fast.s, slow.s])[order], np.concatenate([fast.p, slow.p])[order],
                         np.concatenate([fast.o, slow.o])[order])
    merged.rejected = sorted(fast.rejected + slow.rejected, key=lambda record: record.line)
    return merged


def read_tnt_blocks(path: str | Path, terms: Dictionary, *, tick_ms: int | None = None,
                    handle=None, block_bytes: int = BLOCK_BYTES, moment: int | None = None,
                    filename: str | None = None,
                    max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> Iterator[TripleBlock]:
    """A `.tnt` file (or plain N-Triples seen at `moment`), a block at a time; a line longer than
    `max_line_bytes` is set aside unread (`rsp_plugin.io.lines.byte_blocks`)."""
    name = filename or str(path)
    opened = handle if handle is not None else open(path, "rb")
    try:
        for first_line, data, too_long in byte_blocks(opened, block_bytes, filename=name,
                                                       max_line_bytes=max_line_bytes):
            block = tnt_block(data, first_line, terms, tick_ms=tick_ms, filename=name, moment=moment)
            if too_long:
                block.rejected = sorted(block.rejected + too_long, key=lambda record: record.line)
            yield block
    finally:
        if handle is None:
            opened.close()
