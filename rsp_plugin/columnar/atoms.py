"""Rule streams read a block at a time: `.stream` atoms and `.tnt` triples for the rule engine.

The rule engine takes facts as tuples of ids, so this reader makes tuples
directly, with no columnar library to load (a `reason` run is a short process:
importing numpy, pyarrow and polars would cost more than reading a 5 MB
stream). One regex `findall` per block splits every line into its parts in C;
`zip` turns the rows into columns; each column is interned in bulk
(`Dictionary.intern_keys`: one dictionary pass, new terms added at once) and
zipped back into argument tuples. The lines in another form (prefixed names,
IRIs, literals, odd spacing, mistakes) go to the per-line reader of
`rsp_plugin.io.formats`, so their facts and their dead letters are exactly the
per-line path's.

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> block = atom_block("36 a(x1,y)\\n38 b(y\\n\\n40 temp(105)\\n", 1, terms, prefixes={}, filename="s.stream")
>>> [(line, t, terms.key(p), [terms.key(a) for a in args]) for line, t, p, args in block.rows()]
[(1, 36, 'a', ['x1', 'y']), (4, 40, 'temp', ['105'])]
>>> print(*block.rejected)
s.stream:2: expected ')' after the arguments
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from itertools import compress
from operator import eq, le, not_
from pathlib import Path
from typing import Iterator

from ..core import limits
from ..core.terms import TRIPLE, XSD_STRING, Dictionary
from ..core.time import out_of_range
from ..io.lines import Rejected, byte_blocks, check_line

#: bytes read per block (whole lines)
BLOCK_BYTES = 1 << 18

_NAME = r"[a-z][A-Za-z0-9_]*"
_VALUE = rf"(?:{_NAME}|-?[0-9]{{1,18}}(?:\.[0-9]+)?)"
_TS = r"(-?[0-9]{1,18})"
#: ts, predicate, up to three arguments, or (last group) a line in any other form
_ATOM_LINE = re.compile(
    rf"^(?:{_TS} ({_NAME})(?:\(({_VALUE})(?:,({_VALUE}))?(?:,({_VALUE}))?\))?|(.*))$", re.M)
#: a block of lines `TS name(v1,...,vk)`, all of arity k (index k), each line ended by a newline
_SIMPLE_LINES = [re.compile(rf"(?:-?[0-9]{{1,18}} {_NAME}{arguments}\n)*") for arguments in (
    "", rf"\({_VALUE}\)", rf"\({_VALUE},{_VALUE}\)", rf"\({_VALUE},{_VALUE},{_VALUE}\)")]
#: the same with every argument a name and every time point >= 0 (the usual stream), checked
#: faster: no alternative to try per argument, no backtracking (possessive repeats); a block it
#: does not take is checked by `_SIMPLE_LINES`
_NAME_LINES = [re.compile(rf"(?:[0-9]{{1,18}}+ [a-z][A-Za-z0-9_]*+{arguments}\n)*+") for arguments in (
    "", r"\([a-z][A-Za-z0-9_]*+\)", r"\([a-z][A-Za-z0-9_]*+,[a-z][A-Za-z0-9_]*+\)",
    r"\([a-z][A-Za-z0-9_]*+,[a-z][A-Za-z0-9_]*+,[a-z][A-Za-z0-9_]*+\)")]
_TO_SPACES = str.maketrans("(),", "   ")
_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_BLANK = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
_PLAIN_LITERAL = r'"[^"\\\n\r]*"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRI + r")?"
_TNT_LINE = re.compile(
    rf"^(?:{_TS} ({_IRI}|{_BLANK}) ({_IRI}) ({_IRI}|{_BLANK}|{_PLAIN_LITERAL}) \.|(.*))$", re.M)
_STRING_SUFFIX = '"^^' + XSD_STRING


@dataclass
class AtomBlock:
    """Facts read from one block, in line order: where, when, which predicate, which arguments.

    `repeats`: the lines left out because they repeat the line just before them word for word
    (a stream that sends each reading twice): each stands for a row equal to the one before it.
    A consumer that keeps every line in order and none is set aside can ignore them (a fact
    twice at one time point is the fact once); one that judges lines one by one takes
    `expanded()`."""

    lines: list[int]
    times: list[int]
    predicates: list[int]
    args: list[tuple]
    rejected: list[Rejected] = field(default_factory=list)
    repeats: list[int] = field(default_factory=list)

    def __len__(self) -> int:
        return len(self.lines) + len(self.repeats)

    def rows(self):
        block = self.expanded()
        return zip(block.lines, block.times, block.predicates, block.args)

    def expanded(self) -> "AtomBlock":
        """This block with a row for each repeated line too."""
        if not self.repeats:
            return self
        lines, times, predicates, args = [], [], [], []
        repeats = iter(self.repeats)
        waiting = next(repeats, None)
        for line, time, predicate, arguments in zip(self.lines, self.times, self.predicates, self.args):
            while True:
                lines.append(line)
                times.append(time)
                predicates.append(predicate)
                args.append(arguments)
                if waiting != line + 1:
                    break
                line, waiting = waiting, next(repeats, None)
        return AtomBlock(lines, times, predicates, args, self.rejected)


def _text(data: bytes) -> str | None:
    """The block as text with Python's universal newlines, or None if it is not all UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    if "\r" in text:
        text = text.replace("\r\n", "\n").replace("\r", "\n")
    return text[:-1] if text.endswith("\n") else text


def _lines_of(data: bytes) -> list:
    """The block's lines: text, or `(reason,)` for a line that is not UTF-8 (`lines.check_line`)."""
    out: list = [check_line(raw, None) for raw in data.split(b"\n")]
    if out and out[-1] == "":
        out.pop()
    return out


def atom_block(data: bytes | str, first_line: int, terms: Dictionary, *, prefixes: dict[str, str],
               tick_ms: int | None = None, filename: str = "<stream>") -> AtomBlock:
    """One block of `.stream` lines; `prefixes` learns the block's `@prefix` lines."""
    text = data if isinstance(data, str) else _text(data)
    if text is None:
        return _slowly(list(enumerate(_lines_of(data))), first_line, terms, prefixes, tick_ms, filename,
                       "atoms")
    simple = _simple_block(text, terms, first_line, tick_ms)
    if simple is not None:
        return simple
    rows = _ATOM_LINE.findall(text)
    stamps, names, first, second, third, other = zip(*rows) if rows else ((),) * 6
    odd = [k for k, rest in enumerate(other) if rest] if any(other) else []
    blank = "" in stamps
    if odd or blank:
        keep = [k for k, stamp in enumerate(stamps) if stamp]
        pick = _picker(keep)
        stamps, names, first, second, third = pick(stamps), pick(names), pick(first), pick(second), pick(third)
        lines = [first_line + k for k in keep]
    else:
        lines = list(range(first_line, first_line + len(stamps)))
    times = _times(stamps, tick_ms)
    predicates = terms.intern_keys(names)
    args = _tuples(terms, first, second, third)
    block = AtomBlock(lines, times, predicates, args)
    if odd:
        pieces = text.split("\n")
        slow = _slowly([(k, pieces[k]) for k in odd], first_line, terms, prefixes, tick_ms, filename, "atoms")
        block = _merge(block, slow)
    return block


def _simple_block(text: str, terms: Dictionary, first_line: int, tick_ms: int | None) -> AtomBlock | None:
    """The usual block (every line `TS name(v,...)`, one arity) split without a row per line:
    one regex pass checks the whole block, `str.split` cuts it into tokens and slices of the token
    list are the columns. None when any line is in another form (the general reader judges it)."""
    end = text.find("\n")
    head = text if end < 0 else text[:end]
    if "(" not in head:
        arity = 0
    else:
        arity = head.count(",") + 1
        if arity > 3:
            return None
    repeats: list[int] = []
    pieces = text.split("\n") if _repeats_early(text) else None
    same = list(map(eq, pieces[1:], pieces[:-1])) if pieces is not None else ()
    if any(same):  # a line that repeats the one before it is read once (`AtomBlock.repeats`)
        keep = [True, *map(not_, same)]
        lines = list(compress(range(first_line, first_line + len(pieces)), keep))
        repeats = list(compress(range(first_line + 1, first_line + len(pieces)), same))
        text = "\n".join(compress(pieces, keep))
    else:
        lines = list(range(first_line, first_line + text.count("\n") + 1))
    lined = text + "\n"
    named = _NAME_LINES[arity].fullmatch(lined) is not None  # (every argument a name: no number)
    if not named and not _SIMPLE_LINES[arity].fullmatch(lined):
        return None
    tokens = text.translate(_TO_SPACES).split()
    step = arity + 2
    stamps = tokens[0::step]
    names = tokens[1::step]
    count = len(stamps)
    if names.count(names[0]) == count:
        predicates = [terms.intern_keys(names[:1])[0]] * count
    else:
        predicates = terms.intern_keys(names)
    if arity == 0:
        args = [()] * count
    else:
        if arity == 1:
            args = list(zip(terms.intern_keys(tokens[2::step], names=named)))
        else:
            ids = terms.intern_keys(tokens[2::step] + tokens[3::step] + (tokens[4::step] if arity == 3 else []),
                                    names=named)
            args = list(zip(*(ids[k * count:(k + 1) * count] for k in range(arity))))
    return AtomBlock(lines, _times(stamps, tick_ms), predicates, args, repeats=repeats)


def _repeats_early(text: str) -> bool:
    """Does a line repeat the one before it among the block's first lines? (A stream that repeats
    lines does so throughout; the others are not searched further: reading repeated lines as they
    come is as right, only slower.)"""
    pieces = text[:4096].split("\n")
    return any(map(eq, pieces[1:], pieces[:-1]))


def tnt_atom_block(data: bytes | str, first_line: int, terms: Dictionary, *, tick_ms: int | None = None,
                   filename: str = "<stream>") -> AtomBlock:
    """One block of `.tnt` lines as `triple(s, p, o)` facts."""
    text = data if isinstance(data, str) else _text(data)
    if text is None:
        return _slowly(list(enumerate(_lines_of(data))), first_line, terms, {}, tick_ms, filename, "triples")
    rows = _TNT_LINE.findall(text)
    stamps, subjects, predicates, objects, other = zip(*rows) if rows else ((),) * 5
    odd = [k for k, rest in enumerate(other) if rest] if any(other) else []
    if odd or "" in stamps:
        keep = [k for k, stamp in enumerate(stamps) if stamp]
        pick = _picker(keep)
        stamps, subjects, predicates, objects = pick(stamps), pick(subjects), pick(predicates), pick(objects)
        lines = [first_line + k for k in keep]
    else:
        lines = list(range(first_line, first_line + len(stamps)))
    if any(text.endswith(_STRING_SUFFIX) for text in set(objects)):
        size = len(_STRING_SUFFIX) - 1
        objects = [text[:-size] if text.endswith(_STRING_SUFFIX) else text for text in objects]
    triple = terms.intern(TRIPLE)
    block = AtomBlock(lines, _times(stamps, tick_ms), [triple] * len(lines),
                      list(zip(terms.intern_keys(subjects), terms.intern_keys(predicates),
                               terms.intern_keys(objects))))
    if odd:
        pieces = text.split("\n")
        slow = _slowly([(k, pieces[k]) for k in odd], first_line, terms, {}, tick_ms, filename, "triples")
        block = _merge(block, slow)
    return block


def _picker(keep: list[int]):
    if not keep:
        return lambda column: []
    if len(keep) == 1:
        return lambda column: [column[keep[0]]]
    from operator import itemgetter

    getter = itemgetter(*keep)
    return lambda column: list(getter(column))


def _times(stamps, tick_ms: int | None) -> list[int]:
    if len(stamps) > 1 and stamps[0] == stamps[1]:  # many atoms per time point: each stamp read once
        values = {stamp: int(stamp) for stamp in dict.fromkeys(stamps)}
        times = list(map(values.__getitem__, stamps))
    else:
        times = list(map(int, stamps))
    if tick_ms is not None and tick_ms != 1:
        times = [stamp // tick_ms for stamp in times]
    return times


def _tuples(terms: Dictionary, first, second, third) -> list[tuple]:
    """Argument tuples from the argument columns ('' where a row has no such argument)."""
    count = len(first)
    if not count:
        return []
    intern = terms.intern_keys
    if all(third):
        return list(zip(intern(first), intern(second), intern(third)))
    if all(second) and not any(third):
        return list(zip(intern(first), intern(second)))
    if all(first) and not any(second):
        return list(zip(intern(first)))
    if not any(first):
        return [()] * count
    values = [value for column in (first, second, third) for value in column if value]
    table = dict(zip(values, intern(values)))
    return [tuple(table[value] for value in row if value) for row in zip(first, second, third)]


def _slowly(numbered, first_line, terms, prefixes, tick_ms, filename, kind) -> AtomBlock:
    """The per-line reader on (row in block, text or (reason,) if not UTF-8) pairs."""
    from ..io.formats import _PREFIX_LINE, read_atom_stream, read_tnt

    lines, times, predicates, args, rejected = [], [], [], [], []
    for row, text in numbered:
        number = first_line + row
        if type(text) is tuple:
            rejected.append(Rejected(filename, number, text[0]))
            continue
        if kind == "atoms":
            items = read_atom_stream([text + "\n"], terms, prefixes=prefixes, tick_ms=tick_ms, filename=filename)
        else:  # (as read from a file: with its newline)
            items = read_tnt([text + "\n"], terms, tick_ms=tick_ms, filename=filename)
        for item in items:
            if isinstance(item, Rejected):
                rejected.append(Rejected(filename, number, item.reason))
            elif (reason := out_of_range(item.time_point)) is not None:
                rejected.append(Rejected(filename, number, reason))
            else:
                lines.append(number)
                times.append(item.time_point)
                predicates.append(item.fact[0])
                args.append(tuple(item.fact[1]))
        if kind == "atoms":
            found = _PREFIX_LINE.match(text.strip())
            if found:
                prefixes[found.group(1) or ""] = found.group(2)
    return AtomBlock(lines, times, predicates, args, rejected)


def _merge(fast: AtomBlock, slow: AtomBlock) -> AtomBlock:
    if not slow.lines:
        fast.rejected = slow.rejected
        return fast
    rows = sorted(zip(fast.lines + slow.lines, fast.times + slow.times, fast.predicates + slow.predicates,
                      fast.args + slow.args), key=lambda row: row[0])
    lines, times, predicates, args = (list(column) for column in zip(*rows))
    return AtomBlock(lines, times, predicates, args, slow.rejected)


def read_atom_blocks(path: str | Path, terms: Dictionary, *, prefixes: dict[str, str] | None = None,
                     tick_ms: int | None = None, handle=None, block_bytes: int = BLOCK_BYTES,
                     filename: str | None = None,
                     max_line_bytes: int | None = limits.MAX_LINE_BYTES) -> Iterator[AtomBlock]:
    """A rule stream file a block at a time: `.tnt` / `.nt` as triples, anything else as atoms; a
    line longer than `max_line_bytes` is set aside unread (`rsp_plugin.io.lines.byte_blocks`)."""
    path = Path(path)
    name = filename or str(path)
    triples = path.suffix in (".tnt", ".nt")
    known = dict(prefixes or {})
    opened = handle if handle is not None else open(path, "rb")
    try:
        for first_line, data, too_long in byte_blocks(opened, block_bytes, filename=name,
                                                       max_line_bytes=max_line_bytes):
            data = bytes(data)
            if triples:
                block = tnt_atom_block(data, first_line, terms, tick_ms=tick_ms, filename=name)
            else:
                block = atom_block(data, first_line, terms, prefixes=known, tick_ms=tick_ms, filename=name)
            if too_long:
                block.rejected = sorted(block.rejected + too_long, key=lambda record: record.line)
            yield block
    finally:
        if handle is None:
            opened.close()


def in_order(times: list[int]) -> bool:
    """Are the time points non-decreasing?"""
    return all(map(le, times, times[1:]))


def broker_atom_blocks(reader, batches, terms, *, prefixes: dict[str, str], tick_ms: int | None) -> Iterator[AtomBlock]:
    """`reason`'s blocks over a broker's topic (`io.mqtt.PayloadReader`): `.stream` atom lines or `.tnt`
    lines, each block's terms interned as it is made (one batch of messages at a time), its lines
    numbered by message and its bad lines located in them."""
    for messages, data, owners, records in reader.line_batches(batches):
        if messages:
            if reader.fmt == "tnt":
                block = tnt_atom_block(data, 1, terms, tick_ms=tick_ms, filename=reader.name)
            else:
                block = atom_block(data, 1, terms, prefixes=prefixes, tick_ms=tick_ms, filename=reader.name)
            block = block.expanded()
            for record in block.rejected:
                index, line, count = owners[record.line - 1]
                records.append(reader.rejected(messages[index], record.reason, line, count))
            lines = [messages[owners[line - 1][0]].number for line in block.lines]
            block = AtomBlock(lines, block.times, block.predicates, block.args)
        else:
            block = AtomBlock([], [], [], [])
        block.rejected = sorted(records, key=lambda record: record.line)
        yield block
