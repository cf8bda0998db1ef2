"""Bad bytes and long lines: one line set aside at its own place, every other line read, in every reader.

Issue 9: "Invalid UTF-8 on one line is a traceback and every good line is lost
(`query` on .tnt, `reason` on .stream and .lars); the Spark source drops the
whole file and names line 1 instead of the bad line." and "a 10 MB literal on
one line costs 2.3 GB".
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import random
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.io.formats import Rejected, StreamElement, read_stream_file, read_tnt
from rsp_plugin.io.lines import check_line, read_document, read_lines
from rsp_plugin.core.terms import Dictionary

EX = "http://ex.org/"
BAD = b"\xff\xfe"  # never UTF-8


def run(*args) -> tuple[int, list[dict], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue().splitlines()


def query_file(tmp_path, window="[RANGE 10s STEP 5s]", where="?s ?p ?o") -> Path:
    path = tmp_path / "q.rq"
    path.write_text(f"SELECT ?s ?o FROM STREAM <{EX}s> {window} WHERE {{ {where} }}\n")
    return path


# The line cutter -----------------------------------------------------------------------------------------


@pytest.mark.parametrize("seed", range(40))
def test_lines_cut_from_blocks_are_the_lines_of_the_file(seed):
    """Whatever the block size, each physical line is one item: its text, or why it is set aside."""
    draw = random.Random(seed)
    for _ in range(200):
        data = bytes(draw.choice(b"ab \n\xff\xc3\xa9\r") for _ in range(draw.randrange(80)))
        bound = draw.choice([None, 1, 3, 8, 100])
        got = list(read_lines(io.BytesIO(data), filename="f", max_line_bytes=bound, block_bytes=draw.randint(1, 9)))
        raw = data.split(b"\n")
        if raw[-1] == b"":
            raw.pop()
        expected = []
        for number, line in enumerate(raw, 1):
            checked = check_line(line, bound)
            expected.append(checked if isinstance(checked, str) else ("rejected", number))
        assert [item if isinstance(item, str) else ("rejected", item.line) for item in got] == expected


def test_a_line_past_the_bound_is_never_held_whole():
    class Counting(io.BytesIO):
        largest = 0

        def read(self, size=-1):
            data = super().read(size)
            Counting.largest = max(Counting.largest, len(data))
            return data

    data = b"1 a(x)\n" + b"2 a(" + b"y" * 5_000_000 + b")\n3 a(z)\n"
    got = list(read_lines(Counting(data), filename="s.stream", max_line_bytes=1000, block_bytes=4096))
    assert got[0] == "1 a(x)" and got[2] == "3 a(z)"
    assert str(got[1]) == "s.stream:2: line longer than 1000 bytes (the bound; --max-line-bytes); set aside unread"
    assert Counting.largest <= 4096


def test_a_document_keeps_its_line_numbers_with_bad_lines_blanked():
    text, rejected = read_document(b"a\n" + BAD + b"\nc", filename="d.trig")
    assert text == "a\n\nc" and [str(r) for r in rejected] == [
        "d.trig:2: not UTF-8 text (byte 0xff at column 1); set aside"]


def test_a_literal_with_a_line_separator_in_it_stays_one_line():
    line = f'5 <{EX}a> <{EX}p> "x\u2028y\x0cz" .\n'.encode()
    elements = list(read_tnt(io.BytesIO(line + line), Dictionary(), filename="s.tnt"))
    assert [type(e) for e in elements] == [StreamElement, StreamElement] and elements[1].line == 2


# Every reader: the bad line named, every other line read --------------------------------------------------


def test_reason_on_a_stream_with_a_bad_line(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("b(X) :- a(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_bytes(b"1 a(x)\n2 a(" + BAD + b")\n3 a(z)\n")
    status, lines, err = run("reason", program, "--stream", stream)
    assert status == 0
    assert lines == [{"t": 1, "atoms": ["b(x)"]}, {"t": 2, "atoms": []}, {"t": 3, "atoms": ["b(z)"]}]
    assert err[0] == f"{stream}:2: not UTF-8 text (byte 0xff at column 5); set aside"


def test_reason_on_a_tnt_stream_with_a_bad_line(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text(f"@prefix ex: <{EX}> .\nhot(?s) :- ?s ex:p ?o .\n")
    stream = tmp_path / "s.tnt"
    stream.write_bytes(f"1 <{EX}a> <{EX}p> \"1\" .\n".encode() + f"2 <{EX}b> <{EX}p> \"".encode() + BAD
                       + b"\" .\n" + f"3 <{EX}c> <{EX}p> \"3\" .\n".encode())
    status, lines, err = run("reason", program, "--stream", stream)
    assert status == 0 and [line["atoms"] for line in lines] == [["hot(<http://ex.org/a>)"], [],
                                                                  ["hot(<http://ex.org/c>)"]]
    assert err[0].startswith(f"{stream}:2: not UTF-8 text")


@pytest.mark.parametrize("suffix", [".tnt", ".nt", ".nq", ".trig", ".ttl"])
def test_query_on_each_format_with_a_bad_line(tmp_path, suffix):
    good = [f"<{EX}a{k}> <{EX}p> \"{k}\"" for k in range(3)]
    if suffix == ".tnt":
        lines = [f"{1000 * (k + 1)} {triple} ." for k, triple in enumerate(good)]
    elif suffix in (".nt", ".ttl"):
        lines = [f"{triple} ." for triple in good]
    elif suffix == ".nq":
        lines = [f"{triple} <{EX}g> ." for triple in good] + [
            f'<{EX}g> <http://www.w3.org/ns/prov#generatedAtTime> "1000" .']
    else:
        lines = [f"<{EX}g> {{ {good[0]} . {good[1]} . }}",
                 f"<{EX}h> {{ {good[2]} . }}",
                 f"<{EX}g> <http://www.w3.org/ns/prov#generatedAtTime> \"1000\" .",
                 f"<{EX}h> <http://www.w3.org/ns/prov#generatedAtTime> \"2000\" ."]
    data = [line.encode() for line in lines]
    data.insert(1, f"<{EX}x> <{EX}p> \"".encode() + BAD + b"\" .")  # line 2
    stream = tmp_path / f"s{suffix}"
    stream.write_bytes(b"\n".join(data) + b"\n")
    status, results, err = run("query", query_file(tmp_path), "--stream", f"{EX}s={stream}")
    assert status == 0
    assert err[0].startswith(f"{stream}:2: not UTF-8 text (byte 0xff at column "), err
    seen = {binding["s"] for result in results for binding in result["bindings"]}
    assert seen == {f"<{EX}a{k}>" for k in range(3)}


def test_the_spark_rdf_source_names_the_bad_line_and_reads_the_rest(tmp_path):
    from rsp_plugin.spark.source import FilePiece, parse_piece

    stream = tmp_path / "s.tnt"
    data = b"".join(f"{k} <{EX}a> <{EX}p> \"{k}\" .\n".encode() for k in range(1, 4))
    before_bad = f"4 <{EX}a> <{EX}p> \"".encode()
    data += before_bad + BAD + b"\" .\n"
    data += b"".join(f"{k} <{EX}a> <{EX}p> \"{k}\" .\n".encode() for k in range(5, 9))
    stream.write_bytes(data)
    second = data.index(b"5 <")
    pieces = [FilePiece(str(stream), "tnt", 0, second, 0, "inline", None),
              FilePiece(str(stream), "tnt", second, len(data), 4, "inline", None)]
    rows = [row for piece in pieces for row in parse_piece(piece)]
    assert [row[3] for row in rows if row[4] is None] == [1, 2, 3, 5, 6, 7, 8]
    assert [row[4] for row in rows if row[4]] == [
        f"{stream}:4: not UTF-8 text (byte 0xff at column {len(before_bad) + 1}); set aside"]


def test_the_spark_sources_long_line_is_a_dead_letter(tmp_path):
    from rsp_plugin.spark.source import SourceOptions, _pieces, parse_piece

    stream = tmp_path / "s.tnt"
    stream.write_bytes(f"1 <{EX}a> <{EX}p> \"1\" .\n".encode() + f"2 <{EX}a> <{EX}p> \"{'x' * 2000}\" .\n".encode()
                       + f"3 <{EX}a> <{EX}p> \"3\" .\n".encode())
    options = SourceOptions.from_options({"path": str(stream), "maxLineBytes": "1000"})
    rows = [row for piece in _pieces(options, stream, 0, stream.stat().st_size, 0) for row in parse_piece(piece)]
    assert [row[3] for row in rows if row[4] is None] == [1, 3]
    assert [row[4] for row in rows if row[4]] == [
        f"{stream}:2: line longer than 1000 bytes (the bound; --max-line-bytes); set aside unread"]


def test_the_rdf_http_source_reads_bytes_line_by_line():
    from rsp_plugin.spark.http import parse_body

    body = f"1 <{EX}a> <{EX}p> \"1\" .\n".encode() + b"2 <" + BAD + b"> <x:p> <x:o> .\n" + \
        f"3 <{EX}a> <{EX}p> \"3\" .\n".encode()
    rows = parse_body(body, "tnt", "s", "http://h/s")
    assert [row[4] for row in rows if row[5] is None] == [1, 3]
    assert [row[5] for row in rows if row[5]] == ["http://h/s:2: not UTF-8 text (byte 0xff at column 4); set aside"]


def test_program_and_query_files_with_bad_bytes_are_located_errors(tmp_path):
    program = tmp_path / "p.lars"
    program.write_bytes(b"b(X) :- a(X) .\nc(X) :- a(X), X != \"" + BAD + b"\" .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 a(x)\n")
    status, _, err = run("reason", program, "--stream", stream)
    assert status == 2 and err == [f"rsp-plugin: {program}:2:21: not UTF-8 text (byte 0xff)"]
    query = tmp_path / "q.rq"
    query.write_bytes(b"SELECT ?s\nFROM STREAM <http://ex.org/s> [RANGE 1s STEP 1s]\nWHERE { ?s ?p \"\xe9\" }\n")
    status, _, err = run("query", query, "--stream", f"{EX}s={stream}")
    assert status == 2 and err == [f"rsp-plugin: {query}:3:16: not UTF-8 text (byte 0xe9)"]


def test_a_rules_program_of_a_query_with_bad_bytes_is_a_located_error(tmp_path):
    rules = tmp_path / "r.lars"
    rules.write_bytes(b"% rules\n" + BAD + b"\n")
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 1s STEP 1s] RULES <r.lars> WHERE {{ ?s ?p ?o }}\n")
    stream = tmp_path / "s.tnt"
    stream.write_text(f"1 <{EX}a> <{EX}p> <{EX}o> .\n")
    status, _, err = run("query", query, "--stream", f"{EX}s={stream}")
    assert status == 2 and err == [f"rsp-plugin: {rules}:2:1: not UTF-8 text (byte 0xff)"]


# Long lines and memory --------------------------------------------------------------------------------------


def test_a_line_longer_than_the_bound_is_set_aside_and_the_others_read(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text(f"1000 <{EX}a> <{EX}p> \"1\" .\n2000 <{EX}b> <{EX}p> \"{'y' * 5000}\" .\n"
                      f"3000 <{EX}c> <{EX}p> \"3\" .\n")
    status, results, err = run("query", query_file(tmp_path), "--stream", f"{EX}s={stream}", "--max-line-bytes", "1K")
    assert status == 0 and err[0] == (f"{stream}:2: line longer than 1024 bytes (the bound; --max-line-bytes); "
                                      "set aside unread")
    assert {b["s"] for r in results for b in r["bindings"]} == {f"<{EX}a>", f"<{EX}c>"}
    status, results, err = run("query", query_file(tmp_path), "--stream", f"{EX}s={stream}")
    assert status == 0 and not err and {b["s"] for r in results for b in r["bindings"]} == {
        f"<{EX}a>", f"<{EX}b>", f"<{EX}c>"}


def peak_rss_mb(args: list[str]) -> tuple[float, str, str]:
    """Run the command line in a fresh process: what its peak RSS grew (MB) past the
    process started with every library the run uses imported, stdout, stderr.

    The libraries' own start-up (polars, pyarrow, numpy, rdflib: ~150 MB here, more
    on a machine with many cores, where thread pools size themselves) is not what a
    long line costs, so it is measured first and taken off; the thread pools are
    fixed at two so the figure is the same on every machine.
    """
    script = textwrap.dedent(f"""
        import contextlib, io, resource, sys
        import numpy, polars, pyarrow, rdflib
        from rsp_plugin.cli import main
        polars.DataFrame({{"a": [1, 2]}}).sum()
        start = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main({args!r})
        print((resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - start) / 1024)
        print(status)
        print(out.getvalue(), end="")
        sys.stderr.write(err.getvalue())
    """)
    threads = {name: "2" for name in ("POLARS_MAX_THREADS", "OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS",
                                      "RAYON_NUM_THREADS", "MKL_NUM_THREADS")}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=300,
                          env={**os.environ, **threads})
    first, status, *rest = done.stdout.split("\n", 2)
    assert status == "0", done.stderr
    return float(first), "".join(rest), done.stderr


@pytest.fixture(scope="module")
def ten_mb_literal(tmp_path_factory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("big")
    stream = folder / "big.tnt"
    with stream.open("w") as out:
        out.write(f'1000 <{EX}a> <{EX}p> "x" .\n')
        out.write(f'2000 <{EX}a> <{EX}p> "' + "y" * 10_000_000 + '" .\n')
        out.write(f'3000 <{EX}b> <{EX}p> "z" .\n')
    query = folder / "q.rq"
    query.write_text(f"SELECT ?s ?o FROM STREAM <{EX}s> [RANGE 2s STEP 1s] "
                     f"WHERE {{ ?s <{EX}p> ?o FILTER(STRLEN(?o) < 5) }}\n")
    return stream, query


def test_the_10_mb_literal_is_set_aside_by_default_in_little_memory(ten_mb_literal):
    stream, query = ten_mb_literal
    peak, out, err = peak_rss_mb(["query", str(query), "--stream", f"{EX}s={stream}"])
    assert f"{stream}:2: line longer than 4194304 bytes" in err
    assert len(out.splitlines()) == 4
    assert peak < 150, f"peak RSS grew {peak:.0f} MB"


def test_the_10_mb_literal_read_under_a_raised_bound_costs_tens_of_mb(ten_mb_literal):
    stream, query = ten_mb_literal
    peak, out, err = peak_rss_mb(["query", str(query), "--stream", f"{EX}s={stream}", "--max-line-bytes", "16M"])
    assert "set aside" not in err
    assert [json.loads(line)["t"] for line in out.splitlines()] == [2000, 3000, 4000, 5000]
    assert peak < 300, f"peak RSS grew {peak:.0f} MB (it grew 2.1 GB before the bound)"


def test_reading_a_stream_file_in_binary_gives_what_the_text_reader_gave(tmp_path):
    """The binary path is the text path's twin on a clean file (the generated CSRBench stream)."""
    stream = Path(__file__).parent / "data" / "csrbench" / "stream-6s.tnt"
    binary = [str(e) for e in read_stream_file(stream, Dictionary(), tick_ms=1)]
    with stream.open(encoding="utf-8") as handle:
        text = [str(e) for e in read_tnt(handle, Dictionary(), tick_ms=1, filename=str(stream))]
    assert binary == text and len(binary) > 100


def test_a_rejected_record_reads_as_the_contract_says():
    assert str(Rejected("s.tnt", 3, "not UTF-8 text")) == "s.tnt:3: not UTF-8 text"
