"""Bytes in, lines out: every reader's first step, with the checks a line must pass before it is parsed.

A stream file is read in binary blocks and cut into lines here, so that one
bad line never costs the others:

- a line that is not UTF-8 is set aside as `FILE:LINE: not UTF-8 text (...)`;
- a line longer than the bound (`rsp_plugin.core.limits.MAX_LINE_BYTES`) is set
  aside without ever being held whole: once a line passes the bound, the rest
  of it is skipped block by block up to the next newline.

Lines are cut at `\\n` only (a `\\r` before it stays on the line; the readers
take it as white space), so line numbers are those of any editor, and a
literal holding U+2028 or a form feed stays one line (str.splitlines would cut
there). Every physical line gives exactly one item, a `str` or a `Rejected`
record, so a reader numbering its input counts right.

    read_lines(handle, filename=...)      -> Iterator[str | Rejected]  (a binary file)
    read_blocks(handle, filename=...)     -> Iterator[list[str | Rejected]]  (the same, a block at a time)
    read_document(handle, filename=...)   -> (text, [Rejected])   bad lines blanked, numbering kept
    set_aside_bad_escapes(text, filename) -> (text, [Rejected])   lines with escapes of no character blanked
    check_line(raw, ...)                  -> str | reason         one line's bytes, decoded or why not
    decode_text(data, filename, error)    -> str                  a program or query: a located error
    count_lines(paths)                    -> int                  newlines in files (a progress line's total)

>>> import io
>>> data = io.BytesIO(b'a\\n\\xff\\xfe b\\n' + b'x' * 20 + b'\\nlast')
>>> [str(item) for item in read_lines(data, filename="s.tnt", max_line_bytes=10)]
['a', 's.tnt:2: not UTF-8 text (byte 0xff at column 1); set aside', 's.tnt:3: line longer than 10 bytes (the bound; --max-line-bytes); set aside unread', 'last']
"""

from __future__ import annotations

import os
import stat
import sys
from bisect import bisect_right
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator

from ..core import limits
from ..core.errors import short_words
from ..core.regexes import LazyPattern
from ..core.terms import BadText, bad_escapes, paired_surrogates

BLOCK_BYTES = 1 << 20


@dataclass(frozen=True)
class Rejected:
    """A line (or element) set aside: where it is, and why."""

    filename: str
    line: int
    reason: str

    def __post_init__(self) -> None:
        if len(self.reason) > 100:  # (a reason quoting a token of thousands of characters: its start)
            object.__setattr__(self, "reason", short_words(self.reason))

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}: {self.reason}"


def not_utf8(raw: bytes, error: UnicodeDecodeError | None = None) -> str:
    """Why a line is not read: its first byte that is not UTF-8, and where."""
    if error is None:
        try:
            raw.decode("utf-8")
            return "not UTF-8 text; set aside"
        except UnicodeDecodeError as found:
            error = found
    column = len(raw[:error.start].decode("utf-8", "replace")) + 1
    return f"not UTF-8 text (byte 0x{raw[error.start]:02x} at column {column}); set aside"


def too_long(bound: int) -> str:
    return f"line longer than {bound} bytes (the bound; --max-line-bytes); set aside unread"


def check_line(raw: bytes, max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> str | tuple[str]:
    """A line's bytes (without its newline) decoded, or `(reason,)` if it must be set aside.

    >>> check_line(b"36 a(x1,y)"), check_line(b"36 \\xc3("), check_line(b"abc", 2)
    ('36 a(x1,y)', ('not UTF-8 text (byte 0xc3 at column 4); set aside',), ('line longer than 2 bytes (the bound; --max-line-bytes); set aside unread',))
    """
    if max_line_bytes is not None and len(raw) > max_line_bytes:
        return (too_long(max_line_bytes),)
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as error:
        return (not_utf8(raw, error),)


def read_blocks(
    handle: BinaryIO | bytes,
    *,
    filename: str = "<stream>",
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
    limit: int | None = None,
    first_line: int = 1,
    block_bytes: int = BLOCK_BYTES,
) -> Iterator[list[str | Rejected]]:
    """The lines of a binary file (or bytes), a block at a time: each item a `str` or a `Rejected`.

    `limit`: read at most this many bytes from where the handle is (a piece of a
    file); `first_line`: the number of the first line (for the records).
    """
    if isinstance(handle, (bytes, bytearray, memoryview)):
        import io

        handle = io.BytesIO(handle)
    bound = max_line_bytes
    number = first_line - 1
    carry: list[bytes] = []  # the start of a line that goes on in the next block
    carried = 0
    skipping = False  # inside a line past the bound: dropped up to its newline
    remaining = limit
    # read1: what is there now (a socket, standard input: the lines as they come), at most a block
    read = getattr(handle, "read1", handle.read)
    while True:
        size = block_bytes if remaining is None else min(block_bytes, remaining)
        data = read(size) if size > 0 else b""
        if not data:
            break
        if remaining is not None:
            remaining -= len(data)
        start = 0
        out: list[str | Rejected] = []
        if skipping:
            end = data.find(b"\n")
            if end < 0:
                continue
            number += 1
            out.append(Rejected(filename, number, too_long(bound)))
            skipping = False
            start = end + 1
        last = data.rfind(b"\n", start)
        if last < 0:
            if start < len(data):
                carry.append(data[start:] if start else data)
                carried += len(data) - start
            if bound is not None and carried > bound:
                carry, carried, skipping = [], 0, True
            if out:
                yield out
            continue
        if carry:
            head_end = data.find(b"\n", start)
            head = b"".join(carry) + data[start:head_end]
            carry, carried = [], 0
            number += 1
            item = check_line(head, bound)
            out.append(item if type(item) is str else Rejected(filename, number, item[0]))
            start = head_end + 1
        if start <= last:
            number = _cut(data[start:last], filename, number, bound, out)
        tail = len(data) - last - 1
        if tail:
            carry.append(data[last + 1:])
            carried = tail
            if bound is not None and carried > bound:
                carry, carried, skipping = [], 0, True
        yield out
    if skipping:
        yield [Rejected(filename, number + 1, too_long(bound))]
    elif carry:
        item = check_line(b"".join(carry), bound)
        yield [item if type(item) is str else Rejected(filename, number + 1, item[0])]


def _file_size(handle: BinaryIO, otherwise: int) -> int:
    """The size of the regular file `handle` reads (`otherwise` for a pipe, a socket, a wrapper):
    a block buffer need not be bigger (fresh memory costs page faults, ~2 ms for the 4 MB block of
    a 3-line file)."""
    try:
        status = os.fstat(handle.fileno())
    except (AttributeError, OSError, ValueError):  # (no file behind it: io.UnsupportedOperation is an OSError)
        return otherwise
    return status.st_size if stat.S_ISREG(status.st_mode) else otherwise


def byte_blocks(handle: BinaryIO, size: int = BLOCK_BYTES, *, filename: str = "<stream>",
                max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> Iterator[tuple[int, memoryview | bytes, list]]:
    """(number of the block's first line, its bytes: whole lines, lines set aside) from a binary file,
    for the block readers (`rsp_plugin.columnar`) that parse bytes without cutting them into lines first.

    A line longer than `max_line_bytes` is set aside (a `Rejected` record) and left in the block
    as an empty line, so the numbering of the others holds; once it passes the bound, the rest of
    it is skipped unread up to its newline. The bytes are a view of one buffer read into again for
    the next block (fresh memory costs page faults): a block must be done with before the next."""
    numpy = sys.modules.get("numpy")  # counts newlines 5x faster, but importing it costs 60 ms: only if loaded
    bound = max_line_bytes
    if bound is not None:
        size = max(4096, min(size, bound - (1 << 16)))  # blocks no longer than the bound: nor their lines
    size = min(size, max(4096, _file_size(handle, size)))
    buffer = bytearray(size + (1 << 16))
    view = memoryview(buffer)
    line = 1
    held = 0  # bytes of an unfinished line carried from the last read, at the buffer's start
    skipping = False  # inside a line past the bound: dropped up to its newline
    rejected: list = []
    while True:
        if held >= len(buffer) - (1 << 15):  # a line longer than the buffer (and the bound allows it)
            bigger = bytearray(2 * len(buffer))
            bigger[:held] = buffer[:held]
            view.release()
            buffer, view = bigger, memoryview(bigger)
        count = handle.readinto(view[held:])
        if not count:
            break
        filled = held + count
        if skipping:
            cut = buffer.find(b"\n", 0, filled)
            if cut < 0:
                held = 0
                continue
            buffer[:filled - cut] = buffer[cut:filled]  # the long line stays as an empty one
            filled -= cut
            skipping = False
            rejected.append(Rejected(filename, line, too_long(bound)))
        end = buffer.rfind(b"\n", 0, filled)
        if end < 0:
            held = filled
            if bound is not None and held > bound:
                skipping, held = True, 0
            continue
        block = view[: end + 1]
        if bound is not None and end + 1 > bound:  # (a small bound, or a grown buffer) lines past it?
            block = _blank_long_lines(bytes(block), line, bound, filename, rejected)
        yield line, block, rejected
        rejected = []
        if numpy is not None:
            line += int(numpy.count_nonzero(numpy.frombuffer(buffer, dtype=numpy.uint8, count=end + 1) == 10))
        else:
            line += buffer.count(b"\n", 0, end + 1)
        held = filled - end - 1
        buffer[:held] = buffer[end + 1: filled]
        if bound is not None and held > bound:
            skipping, held = True, 0
    if skipping:
        rejected.append(Rejected(filename, line, too_long(bound)))
        yield line, b"\n", rejected
    elif held:
        block = view[:held]
        if bound is not None and held > bound:
            block = _blank_long_lines(bytes(block), line, bound, filename, rejected)
        yield line, block, rejected
    elif rejected:
        yield line, b"", rejected


def _blank_long_lines(block: bytes, first_line: int, bound: int, filename: str, rejected: list) -> bytes:
    pieces = block.split(b"\n")
    for number, piece in enumerate(pieces):
        if len(piece) > bound:
            rejected.append(Rejected(filename, first_line + number, too_long(bound)))
            pieces[number] = b""
    return b"\n".join(pieces)


def _cut(chunk: bytes, filename: str, number: int, bound: int | None, out: list) -> int:
    """Whole lines (`chunk` without its last newline) into `out`; returns the last line's number."""
    try:
        lines = chunk.decode("utf-8").split("\n")
    except UnicodeDecodeError:
        for raw in chunk.split(b"\n"):
            number += 1
            item = check_line(raw, bound)
            out.append(item if type(item) is str else Rejected(filename, number, item[0]))
        return number
    if bound is None or len(chunk) <= bound:
        out.extend(lines)
        return number + len(lines)
    quarter = bound // 4  # a character is at most 4 bytes: shorter lines cannot pass the bound
    for line in lines:
        number += 1
        if len(line) > quarter and (len(line) > bound or len(line.encode("utf-8")) > bound):
            out.append(Rejected(filename, number, too_long(bound)))
        else:
            out.append(line)
    return number


def read_lines(handle: BinaryIO | bytes, **options) -> Iterator[str | Rejected]:
    """The lines of a binary file, one item per line (see `read_blocks` for the options)."""
    for block in read_blocks(handle, **options):
        yield from block


def lines_of(source, *, filename: str = "<stream>",
             max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> Iterable[str | Rejected]:
    """What a reader iterates: a binary file or bytes cut here; text lines (a list, a text file) as they are,
    but for the checks of `_checked_text`."""
    if _binary(source):
        return read_lines(source, filename=filename, max_line_bytes=max_line_bytes)
    return _checked_text(source, filename, max_line_bytes)


def _checked_text(lines: Iterable, filename: str, bound: int | None) -> Iterator[str | Rejected]:
    """Text lines (already decoded by someone else): a line of more than `bound` characters is set
    aside, and so is a line holding a lone surrogate (text decoded from UTF-8 holds none, but a
    JSON string or a Python caller may hand one in, and no writer could write it out); a surrogate
    pair becomes its character (`terms.paired_surrogates`). An ASCII line costs one flag test."""
    for number, line in enumerate(lines, 1):
        if type(line) is str:
            if bound is not None and len(line) > bound:
                yield Rejected(filename, number, too_long(bound))
                continue
            if not line.isascii():
                try:
                    line = paired_surrogates(line)
                except BadText as problem:
                    yield Rejected(filename, number, f"{problem}; set aside")
                    continue
        yield line


def _binary(source) -> bool:
    return isinstance(source, (bytes, bytearray, memoryview)) or hasattr(source, "readinto")


def read_document(source, *, filename: str = "<stream>",
                  max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> tuple[str, list[Rejected]]:
    """A whole document (TriG, N-Quads, Turtle) as text, its bad lines blanked (so lines keep their
    numbers) and returned as `Rejected` records. `source`: a binary file, bytes, or text."""
    if isinstance(source, str):
        return source, []
    if not _binary(source):
        return source.read(), []
    parts: list[str] = []
    rejected: list[Rejected] = []
    for block in read_blocks(source, filename=filename, max_line_bytes=max_line_bytes):
        for item in block:
            if type(item) is str:
                parts.append(item)
            else:
                rejected.append(item)
                parts.append("")
    return "\n".join(parts), rejected


#: `<`, IRI characters, then a backslash that does not start an escape (Turtle's IRIREF allows none)
_BACKSLASH_IN_IRI = LazyPattern(r'<[^\s<>"{}|^`\\]*\\(?![uU])')


def set_aside_bad_escapes(text: str, filename: str) -> tuple[str, list[Rejected]]:
    """A document's text (TriG, Turtle) with each line that holds an escape naming no character
    (`\\uD800`, `\\U00110000`: `terms.bad_escapes`) blanked, so lines keep their numbers, and
    those lines as `Rejected` records. A text with no backslash and only ASCII is not scanned.

    >>> text, bad = set_aside_bad_escapes('<a> <p> "x" .\\n<a> <p> "\\\\uDC00" .\\n', "d.ttl")
    >>> text, [str(record) for record in bad]
    ('<a> <p> "x" .\\n\\n', ['d.ttl:2: \\\\uDC00 is not a character (half of a surrogate pair, alone) at column 10; set aside'])
    """
    found = list(bad_escapes(text))
    if "\\" in text:  # an IRI holds no backslash but a \\u / \\U escape (rdflib reads `<a\\\\uD800>` as one)
        found += [(hit.start(), "a backslash in an IRI that starts no \\u or \\U escape")
                  for hit in _BACKSLASH_IN_IRI.finditer(text)]
        found.sort()
    if not found:
        return text, []
    lines = text.split("\n")
    starts = [0]
    for line in lines[:-1]:
        starts.append(starts[-1] + len(line) + 1)
    rejected: list[Rejected] = []
    for offset, reason in found:
        number = bisect_right(starts, offset)
        if rejected and rejected[-1].line == number:
            continue  # one record a line
        rejected.append(Rejected(filename, number, f"{reason} at column {offset - starts[number - 1] + 1}; set aside"))
        lines[number - 1] = ""
    return "\n".join(lines), rejected


def decode_text(data: bytes, filename: str, error=None) -> str:
    """A program's or a query's bytes as text; bytes that are not UTF-8 raise a located error
    (`error`: the LocatedError subclass to raise) at their line and column."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as problem:
        if error is None:
            from ..core.errors import LocatedError as error
        before = data[:problem.start]
        line = before.count(b"\n") + 1
        line_start = before.rfind(b"\n") + 1
        column = len(before[line_start:].decode("utf-8", "replace")) + 1
        raise error(f"not UTF-8 text (byte 0x{data[problem.start]:02x})", filename, line, column) from None


def count_lines(paths: Iterable) -> int:
    """The newlines in the files at `paths`: the total a progress line counts up to.

    Here, below both `rsp-plugin query`'s local replay (`rsp_plugin.cli`) and the
    Spark runner (`rsp_plugin.spark`), so that each counts the same way without the Spark
    layer importing the command layer above it. A directory counts its files (not those of
    its subdirectories); a path that is neither a file nor a directory counts 0."""
    total = 0
    for path in map(Path, paths):
        files = [path] if path.is_file() else [p for p in path.glob("*") if p.is_file()] if path.is_dir() else []
        for file in files:
            with file.open("rb") as handle:
                total += sum(block.count(b"\n") for block in iter(lambda: handle.read(1 << 22), b""))
    return total


class BoundedReader:
    """A binary file read up to `limit` bytes from where it stands (a piece of a larger file)."""

    def __init__(self, handle, limit: int):
        self.handle, self.left = handle, limit

    def readinto(self, view) -> int:
        if self.left <= 0:
            return 0
        wanted = min(len(view), self.left)
        count = self.handle.readinto(view[:wanted])
        self.left -= count
        return count

    def read(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.handle.read(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def readline(self, size: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        data = self.handle.readline(self.left if size < 0 else min(size, self.left))
        self.left -= len(data)
        return data

    def __iter__(self):
        while True:
            line = self.readline()
            if not line:
                return
            yield line


__all__ = ["BoundedReader", "Rejected", "check_line", "count_lines", "decode_text", "lines_of", "read_blocks", "read_document", "read_lines",
           "set_aside_bad_escapes"]
