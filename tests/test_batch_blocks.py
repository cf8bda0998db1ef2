"""The block readers give what the per-line readers give: elements, term forms, dead letters."""

from __future__ import annotations

import io
import random

import pytest

from rsp_plugin.columnar.atoms import read_atom_blocks
from rsp_plugin.columnar.blocks import read_tnt_blocks
from rsp_plugin.io.formats import Rejected, read_atom_stream, read_ntriples_at, read_tnt
from rsp_plugin.core.terms import Dictionary

TNT_LINES = [
    '0 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '1 <http://ex/s> <http://ex/p> "plain" .',
    '2 <http://ex/s> <http://ex/p> "typed"^^<http://www.w3.org/2001/XMLSchema#string> .',
    '3 <http://ex/s> <http://ex/p> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    '4 _:b1 <http://ex/p> _:b2 .',
    '5 <http://ex/s> <http://ex/p> "hi"@en-GB .',
    '6 <http://ex/s> <http://ex/p> "esc\\u00E9\\"q" .',
    '7\t<http://ex/s>  <http://ex/p>\t<http://ex/o>  .  ',
    '8 <http://ex/s> <http://ex/p> <http://ex/o> . # a comment',
    '',
    '# a comment line',
    '   ',
    '2004-08-08T06:05:00Z <http://ex/s> <http://ex/p> <http://ex/o> .',
    'x <http://ex/s> <http://ex/p> <http://ex/o> .',
    '9 <http://ex/s> <http://ex/p> <http://ex/o>',
    '10 <http://ex/s> <http://ex/p>',
    '11 <http://ex/s> <http ://ex/p> <http://ex/o> .',
    '-12 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '13 <http://ex/s> <http://ex/p> "line\\nbreak"^^<http://ex/dt> .',
    '14 <http://ex/s><http://ex/p><http://ex/o>.',
    '99999999999999999999 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '15 <http://ex/é> <http://ex/p> "ü" .',
    '+16 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '0000000000000000000017 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '999999999999999999 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '1000000000000000000 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '-9223372036854775808 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '9223372036854775807 <http://ex/s> <http://ex/p> <http://ex/o> .',
    '-0 <http://ex/s> <http://ex/p> "-0"^^<http://www.w3.org/2001/XMLSchema#integer> .',
    '٣ <http://ex/s> <http://ex/p> <http://ex/o> .',
    '1_8 <http://ex/s> <http://ex/p> <http://ex/o> .',
]


def _per_line(lines, reader, **options):
    terms = Dictionary()
    out = []
    for item in reader(lines, terms, filename="f", **options):
        if isinstance(item, Rejected):
            out.append(("rejected", item.line, item.reason))
        elif abs(item.time_point) >= 1 << 62:  # the block readers hold time points in int64
            out.append(("rejected", item.line, f"time point {item.time_point} is out of range "
                                               f"(at most {(1 << 62) - 1} either way)"))
        else:
            out.append((item.line, item.time_point, tuple(terms.key(t) for t in item.fact[1])))
    return out


def _blocks(data: bytes, block_bytes: int, **options):
    terms = Dictionary()
    out = []
    for block in read_tnt_blocks("f", terms, handle=io.BytesIO(data), block_bytes=block_bytes, **options):
        rows = [(line, time, tuple(terms.key(t) for t in (s, p, o))) for line, time, s, p, o in
                zip(block.lines.tolist(), block.times.tolist(), block.s.tolist(), block.p.tolist(), block.o.tolist())]
        out.extend(rows)
        out.extend(("rejected", r.line, r.reason) for r in block.rejected)
    return sorted(out, key=lambda item: item[1] if item[0] == "rejected" else item[0])


@pytest.mark.parametrize("block_bytes", [64, 300, 1 << 20])
@pytest.mark.parametrize("ending", ["\n", "\r\n"])
def test_tnt_blocks_equal_the_per_line_reader(block_bytes, ending):
    text = ending.join(TNT_LINES) + ending
    expected = _per_line(io.StringIO(text, newline=None), read_tnt, tick_ms=1)
    got = _blocks(text.encode("utf-8"), block_bytes, tick_ms=1)
    assert got == sorted(expected, key=lambda item: item[1] if item[0] == "rejected" else item[0])


def test_ntriples_at_a_moment():
    lines = [line.split(" ", 1)[1] for line in TNT_LINES if line[:1].isdigit()]
    text = "\n".join(lines) + "\n"
    expected = _per_line(io.StringIO(text), read_ntriples_at, timestamp=7)
    assert _blocks(text.encode(), 1 << 20, moment=7) == expected


def test_generated_lines_with_ticks():
    draw = random.Random(3)
    lines = []
    for number in range(2000):
        stamp = number * 7
        kind = draw.random()
        if kind < 0.9:
            lines.append(f'{stamp} <http://ex/s{draw.randrange(50)}> <http://ex/p{draw.randrange(3)}> '
                         f'"{draw.randrange(100)}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
        elif kind < 0.95:
            choice = draw.choice(["_:x", "<a:b>", '"q"@fr'])
            lines.append(f"{stamp} <http://ex/s> <http://ex/p> {choice} .")
        else:
            lines.append(draw.choice(TNT_LINES))
    text = "\n".join(lines)  # no newline at the end
    expected = _per_line(io.StringIO(text), read_tnt, tick_ms=1000)
    got = _blocks(text.encode(), 4096, tick_ms=1000)
    assert got == sorted(expected, key=lambda item: item[1] if item[0] == "rejected" else item[0])


@pytest.mark.parametrize("seed", range(3))
def test_edge_cases_among_thousands_of_lines_go_through_arrow_s_kernels_as_the_per_line_reader_reads_them(seed):
    """Blocks of thousands of lines (past `encode.SMALL`: Arrow's dictionary encoding and regex kernels,
    not the dict of a short block), the edge cases above among them, some with a character changed."""
    draw = random.Random(seed)
    odd = ["_:x", "<a:b>", '"q"@fr', '"x"^^<http://www.w3.org/2001/XMLSchema#string>', '"é"', '"a b c"',
           '<http://ex/o p>', '"unterminated', '""', '"1.50"^^<http://www.w3.org/2001/XMLSchema#decimal>']
    lines = []
    for number in range(3000):
        kind = draw.random()
        if kind < 0.8:
            lines.append(f'{number * 7} <http://ex/s{draw.randrange(500)}> <http://ex/p{draw.randrange(3)}> '
                         f'"{draw.randrange(100)}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
        elif kind < 0.9:
            lines.append(f"{number * 7} <http://ex/s> <http://ex/p> {draw.choice(odd)} .")
        else:
            line = draw.choice(TNT_LINES)
            if line and draw.random() < 0.3:
                at = draw.randrange(len(line))
                line = line[:at] + draw.choice([" ", "", "\t", ".", "<", '"', "\\", "x"]) + line[at + 1:]
            lines.append(line)
    ending = draw.choice(["\n", "\r\n"])
    text = ending.join(lines) + draw.choice(["", ending])
    expected = _per_line(io.StringIO(text, newline=None), read_tnt, tick_ms=1)
    got = _blocks(text.encode(), draw.choice([1 << 20, 50_000]), tick_ms=1)
    assert got == sorted(expected, key=lambda item: item[1] if item[0] == "rejected" else item[0])


def test_invalid_utf8_is_a_dead_letter_and_the_rest_is_read():
    data = b"1 <a:s> <a:p> <a:o> .\n2 <a:s> <a:p> \"\xff\" .\n3 <a:s> <a:p> <a:o> .\n"
    got = _blocks(data, 1 << 20, tick_ms=1)
    assert got == [(1, 1, ("<a:s>", "<a:p>", "<a:o>")), ("rejected", 2, "not UTF-8 text (byte 0xff at column 16); set aside"),
                   (3, 3, ("<a:s>", "<a:p>", "<a:o>"))]


ATOM_LINES = [
    "1 a(x1,y)", "1 b", "2 temp(105)", "2 temp(-3)", "3 q(1.5,x,y_2)", "@prefix ex: <http://ex/> .",
    "4 ex:p(a,b)", "4 <http://ex/q>(a)", "5 a(x1,y", "% comment", "", "6 c( x )", "7 d(\"lit\")", "x a(b)",
    "8 e(A)", "9 a(x1,y) .",
]


@pytest.mark.parametrize("block_bytes", [16, 1 << 20])
def test_atom_blocks_equal_the_per_line_reader(block_bytes):
    text = "\n".join(ATOM_LINES) + "\n"
    terms = Dictionary()
    expected = []
    for item in read_atom_stream(io.StringIO(text), terms, filename="f"):
        if isinstance(item, Rejected):
            expected.append(("rejected", item.line, item.reason))
        else:
            expected.append((item.line, item.time_point, terms.key(item.fact[0]),
                             tuple(terms.key(t) for t in item.fact[1])))
    mine = Dictionary()
    got = []
    for block in read_atom_blocks("f.stream", mine, handle=io.BytesIO(text.encode()), block_bytes=block_bytes,
                                  filename="f"):
        for line, time, predicate, args in block.rows():
            got.append((line, time, mine.key(predicate), tuple(mine.key(t) for t in args)))
        got.extend(("rejected", r.line, r.reason) for r in block.rejected)
    key = lambda item: item[1] if item[0] == "rejected" else item[0]  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)


@pytest.mark.parametrize("block_bytes", [64, 1 << 20])
def test_rule_stream_tnt_blocks_equal_the_per_line_reader(block_bytes):
    text = "\n".join(TNT_LINES) + "\n"
    expected = _per_line(io.StringIO(text), read_tnt)
    terms = Dictionary()
    got = []
    for block in read_atom_blocks("f.tnt", terms, handle=io.BytesIO(text.encode()), block_bytes=block_bytes,
                                  filename="f"):
        got.extend((line, time, tuple(terms.key(t) for t in args)) for line, time, _, args in block.rows())
        got.extend(("rejected", r.line, r.reason) for r in block.rejected)
    key = lambda item: item[1] if item[0] == "rejected" else item[0]  # noqa: E731
    assert sorted(got, key=key) == sorted(expected, key=key)


def test_a_small_file_is_read_in_one_block_through_a_buffer_of_its_size(tmp_path, monkeypatch):
    """`byte_blocks` sizes its buffer to a regular file smaller than a block (a 4 MB buffer's page faults
    cost ~2 ms of a short run's start); a pipe or a wrapper keeps the block size. The blocks are the same."""
    import os

    from rsp_plugin.io import lines

    path = tmp_path / "s.tnt"
    path.write_bytes(b"1 <http://ex/a> <http://ex/p> <http://ex/b> .\n" * 3)
    sizes = []
    real = bytearray
    monkeypatch.setattr(lines, "bytearray", lambda size: sizes.append(size) or real(size), raising=False)
    with open(path, "rb") as handle:
        blocks = [(first, bytes(data)) for first, data, _ in lines.byte_blocks(handle, 8 << 20)]
    assert blocks == [(1, path.read_bytes())] and sizes == [4096 + (1 << 16)]
    read, write = os.pipe()
    os.write(write, path.read_bytes())
    os.close(write)
    sizes.clear()
    with os.fdopen(read, "rb") as handle:
        assert [(first, bytes(data)) for first, data, _ in lines.byte_blocks(handle, 8 << 20)] == blocks
    assert sizes == [(4 << 20) - (1 << 16) + (1 << 16)]  # (the block the line bound allows)
    sizes.clear()
    assert [(first, bytes(data)) for first, data, _ in lines.byte_blocks(io.BytesIO(path.read_bytes()), 8 << 20)] \
        == blocks and sizes == [4 << 20]
