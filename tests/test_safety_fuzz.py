"""Fuzzing the readers and parsers with random mutations of valid files.

Each case mutates some lines (or the whole text) of a valid `.tnt`, `.nq`,
TriG, `.stream`, `.lars` or query file at the byte level: bytes that are not
UTF-8, NULs, quotes, brackets, braces, new lines, huge or negative timestamps,
cut or doubled pieces. Asserted for every case:

- no exception escapes (a reader sets a bad line aside; a parser raises a
  located `LocatedError`, nothing else);
- no hang (each case is timed; the whole file has a budget);
- every good line is still counted: each untouched line of a line format gives
  its element (same time, same fact) at its new line number, and every
  physical line gives at most one outcome; in TriG / N-Quads each untouched
  graph (its block and its time) gives all its triples at its time.

A few hundred cases also go through the command line (`reason`, `query`) whole:
exit status 0 or 2, never a traceback. And through the service: mutated pushes
(every untouched line kept), JSON registrations mutated in their values and
bytes, mutated query texts, times and parameters: never a 5xx, an error is one
line.
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import time
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.core.errors import LocatedError
from rsp_plugin.io.formats import Rejected, StreamElement, read_atom_stream, read_timestamped_graphs, read_tnt
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.io.lines import decode_text, read_document
from rsp_plugin.query.syntax import parse_query
from rsp_plugin.core.terms import Dictionary

ROOT = Path(__file__).parent.parent
EX = "http://ex.org/"
PROV = "<http://www.w3.org/ns/prov#generatedAtTime>"
PIECES = [b"\xff", b"\xc3", b"\xe2\x82", b"\x00", b'"', b"'", b"<", b">", b"\\", b".", b" ", b"\t", b"\r", b"\n",
          b"{", b"}", b"(", b")", b",", b"@", b"#", b"%", b":", b"?", b"-", b"9" * 25, b"0", b"T", b"^^", b"_:",
          b"\xf0\x9f\x98\x80", b"\xed\xa0\x80", b"e+99", b"2004-08-08T06:05:00Z", b"[RANGE 99999999999]"]
#: a case's CPU time bound (the work it does, whatever else the machine runs), and its wall bound
#: (a wait on something outside the process)
CASE_SECONDS = 2.0
CASE_WALL_SECONDS = 20.0


def mutate(line: bytes, draw: random.Random) -> bytes:
    for _ in range(draw.randint(1, 3)):
        kind = draw.randrange(7)
        at = draw.randint(0, len(line))
        if kind == 0 and line:  # flip a byte
            at = min(at, len(line) - 1)
            line = line[:at] + bytes([line[at] ^ (1 << draw.randrange(8))]) + line[at + 1:]
        elif kind == 1:  # insert something nasty
            line = line[:at] + draw.choice(PIECES) + line[at:]
        elif kind == 2:  # cut a piece out
            line = line[:at] + line[at + draw.randint(1, 12):]
        elif kind == 3:  # double a piece
            line = line[:at] + line[at:at + draw.randint(1, 20)] * 2 + line[at:]
        elif kind == 4:  # a timestamp of another kind
            line = draw.choice([b"-5", b"99999999999999999999999", b"2004-08-08T06:05:00Z", b"1e9", b""]) + \
                line[line.find(b" "):] if b" " in line else line
        elif kind == 5:  # truncate
            line = line[:at]
        else:  # a random byte anywhere
            line = line[:at] + bytes([draw.randrange(256)]) + line[at:]
    return line


def mutated_lines(lines: list[bytes], draw: random.Random, share: float, frozen=()):
    """(file bytes, {original index: new line number} for the untouched lines)."""
    out: list[bytes] = []
    kept: dict[int, int] = {}
    physical = 0
    for index, line in enumerate(lines):
        if index not in frozen and draw.random() < share:
            line = mutate(line, draw)
        else:
            kept[index] = physical + 1
        out.append(line)
        physical += line.count(b"\n") + 1
    return b"\n".join(out) + b"\n", kept


def timed(case):
    started, cpu = time.monotonic(), time.process_time()
    result = case()
    assert time.process_time() - cpu < CASE_SECONDS, "a case took too long"
    assert time.monotonic() - started < CASE_WALL_SECONDS, "a case waited too long"
    return result


def outcomes_by_line(items) -> dict[int, list]:
    by_line: dict[int, list] = {}
    for item in items:
        by_line.setdefault(item.line, []).append(item)
    return by_line


# Line formats: .tnt and .stream --------------------------------------------------------------------------------


def tnt_lines(draw: random.Random, count: int) -> list[bytes]:
    out, stamp = [], 1000
    for k in range(count):
        stamp += draw.choice((0, 250, 1000))
        obj = draw.choice([f"<{EX}o{k}>", f'"{k}"^^<http://www.w3.org/2001/XMLSchema#integer>', f'"t\\"x{k}"@en',
                           f"_:b{k}"])
        shown = str(stamp) if draw.random() < 0.9 else f"2020-01-01T00:00:{k % 60:02d}Z"
        out.append(f"{shown} <{EX}s{k % 7}> <{EX}p{k % 3}> {obj} .".encode())
    return out


def stream_lines(draw: random.Random, count: int) -> list[bytes]:
    out = []
    for k in range(count):
        args = ",".join(draw.choice(["x1", "y", str(k), '"s t"', "<http://ex/a>", "-2.5"])
                        for _ in range(draw.randrange(3)))
        atom = f"p{k % 4}({args})" if args else f"q{k % 3}"
        out.append(f"{k + draw.randrange(2)} {atom}".encode())
    return out


@pytest.mark.parametrize("fmt", ["tnt", "stream"])
@pytest.mark.parametrize("seed", range(15))
def test_line_formats_keep_every_good_line(fmt, seed):
    draw = random.Random(f"{fmt}-{seed}")
    for _ in range(100):
        lines = (tnt_lines if fmt == "tnt" else stream_lines)(draw, draw.randrange(1, 25))
        reader = read_tnt if fmt == "tnt" else read_atom_stream
        clean = list(reader(io.BytesIO(b"\n".join(lines)), Dictionary(), filename=f"s.{fmt}"))
        original = {e.line: str(e) for e in clean if isinstance(e, StreamElement)}
        data, kept = mutated_lines(lines, draw, draw.choice([0.1, 0.3, 0.8]))
        got = timed(lambda: list(reader(io.BytesIO(data), Dictionary(), filename=f"s.{fmt}", max_line_bytes=200)))
        assert all(isinstance(item, (StreamElement, Rejected)) for item in got)
        by_line = outcomes_by_line(got)
        physical = data.count(b"\n")
        assert all(1 <= line <= physical and len(items) == 1 for line, items in by_line.items())
        for index, line in kept.items():
            if index + 1 in original:
                (item,) = by_line[line]
                assert str(item) == original[index + 1], (data, index, line)


# Graph formats: N-Quads and TriG ---------------------------------------------------------------------------------


def graphs(draw: random.Random, count: int):
    """[(graph IRI, time, [(s, p, o)])]"""
    return [(f"<{EX}g{k}>", 1000 * (k + 1) + draw.randrange(500),
             [(f"<{EX}s{k}>", f"<{EX}p{j}>", f'"{k}.{j}"') for j in range(draw.randint(1, 3))]) for k in range(count)]


def nquads(made) -> tuple[list[bytes], dict[str, list[int]]]:
    lines, owned = [], {}
    for name, stamp, triples in made:
        for s, p, o in triples:
            owned.setdefault(name, []).append(len(lines))
            lines.append(f"{s} {p} {o} {name} .".encode())
        owned[name].append(len(lines))
        lines.append(f'{name} {PROV} "{stamp}" .'.encode())
    return lines, owned


def trig(made) -> tuple[list[bytes], dict[str, list[int]]]:
    lines, owned = [f"@prefix prov: <http://www.w3.org/ns/prov#> .".encode()], {}
    for name, _, triples in made:
        owned[name] = [len(lines)]
        lines.append(f"{name} {{ {' '.join(f'{s} {p} {o} .' for s, p, o in triples)} }}".encode())
    for name, stamp, _ in made:
        owned[name].append(len(lines))
        lines.append(f'{name} prov:generatedAtTime "{stamp}" .'.encode())
    return lines, owned


@pytest.mark.parametrize("fmt", ["nq", "trig"])
@pytest.mark.parametrize("seed", range(12))
def test_graph_formats_keep_every_good_graph(fmt, seed):
    draw = random.Random(f"{fmt}-{seed}")
    for _ in range(40 if fmt == "nq" else 15):
        made = graphs(draw, draw.randint(1, 6))
        lines, owned = (nquads if fmt == "nq" else trig)(made)
        frozen = {0} if fmt == "trig" else set()  # the prefix line: every graph needs it
        data, kept = mutated_lines(lines, draw, draw.choice([0.15, 0.4]), frozen)

        def read():
            text, bad = read_document(data, filename=f"s.{fmt}")
            return bad + list(read_timestamped_graphs(text, Dictionary(), filename=f"s.{fmt}",
                                                      rdf_format="nquads" if fmt == "nq" else "trig"))

        got = timed(read)
        assert all(isinstance(item, (StreamElement, Rejected)) for item in got)
        elements = {str(item) for item in got if isinstance(item, StreamElement)}
        for name, stamp, triples in made:
            if all(index in kept for index in owned[name]):
                for s, p, o in triples:
                    assert f"{stamp} {p}({s},{o})" in elements, (data, name)


# Programs and queries: parsed or one located error ------------------------------------------------------------

PROGRAMS = [
    (ROOT / "examples" / "hightemp.lars").read_text(),
    "@prefix ex: <http://example.org/> .\n@tick 1s .\nex:hot(?s) :- ?s ex:temperature ?v, ?v > 30 .\n"
    "?s a ex:Hot :- ex:hot(?s) .\nfreeze :- not alarm, not normal .\n",
    "q(X, Y, Z) :- [RANGE 3] DIAMOND a(X, Y), [COUNT 3] DIAMOND b(Y, Z) .\n@?T steam(?v) :- [RANGE 5] @?T temp(?v), "
    "?v >= 100 .\nn(X, W) :- a(X, V), W = V * 2 + 1 .\n",
]
QUERIES = [path.read_text() for path in sorted((ROOT / "queries").rglob("*.rq"))]


@pytest.mark.parametrize("kind", ["program", "query"])
@pytest.mark.parametrize("seed", range(10))
def test_programs_and_queries_parse_or_give_one_located_error(kind, seed):
    draw = random.Random(f"{kind}-{seed}")
    texts = PROGRAMS if kind == "program" else QUERIES
    for _ in range(60 if kind == "program" else 25):
        lines = draw.choice(texts).encode().split(b"\n")
        data, _ = mutated_lines(lines, draw, draw.choice([0.05, 0.2]))

        def parse():
            try:
                text = decode_text(data, f"f.{kind}")
                if kind == "program":
                    parse_program(text, "f.lars")
                else:
                    parse_query(text, "f.rq")
            except LocatedError as error:
                assert error.lineno >= 1 and error.offset >= 1 and "\n" not in str(error), str(error)

        timed(parse)


# Whole command lines --------------------------------------------------------------------------------------------


def cli(args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("seed", range(8))
def test_the_command_lines_never_crash_on_mutated_input(tmp_path, seed):
    draw = random.Random(f"cli-{seed}")
    program = tmp_path / "p.lars"
    program.write_text("p(X) :- [RANGE 3] DIAMOND p0(X) .\nq :- [RANGE 2] BOX q1 .\n")
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ ?s ?p ?o }} "
                     "GROUP BY ?s\n")
    for _ in range(12):
        stream = tmp_path / "s.stream"
        stream.write_bytes(mutated_lines(stream_lines(draw, 15), draw, 0.3)[0])
        tnt = tmp_path / "s.tnt"
        tnt.write_bytes(mutated_lines(tnt_lines(draw, 15), draw, 0.3)[0])
        nq = tmp_path / "s.nq"
        nq.write_bytes(mutated_lines(nquads(graphs(draw, 3))[0], draw, 0.3)[0])
        for args in (["reason", program, "--stream", stream], ["reason", program, "--stream", tnt],
                     ["query", query, "--stream", f"{EX}s={tnt}"], ["query", query, "--stream", f"{EX}s={nq}"]):
            started = time.monotonic()
            status, out, err = cli(args)
            assert time.monotonic() - started < 10
            assert status == 0 and "Traceback" not in err, err
            assert all(isinstance(json.loads(line), dict) for line in out.splitlines())


# Text edges (issue 32): escapes of no character, digits past reading, nesting, DatalogMTL ------------------------
# (kept apart from the cases above: pieces of their own, test functions of their own)

#: what no writer can write (escapes of no character, a surrogate as UTF-8 bytes), what is one character
#: (a surrogate pair), what Python cannot read as a number, ticks of no milliseconds, brackets past any bound
EDGE_PIECES = [rb"\uD800", rb"\uDFFF", rb"\U00110000", rb"\U8001F600", rb"\U0000D800", rb"\uD83D\uDE00",
               rb"\\uD800", b"\xed\xa0\x80", b"9" * 4400, b"0." + b"9" * 4400, b"@tick 0s .", b"PT0.0005S",
               b"(" * 300, b"[" * 300, b"{" * 300, b"[1,1] BOXMINUS " * 80, b"Boxminus[1,1]" * 80, b" + X" * 80]


def edge_mutate(line: bytes, draw: random.Random) -> bytes:
    """An edge piece put in a line (inside a string if it has one, where escapes are read), and
    sometimes an ordinary mutation too."""
    piece = draw.choice(EDGE_PIECES)
    quote = line.find(b'"')
    at = quote + 1 if quote >= 0 and draw.random() < 0.7 else draw.randint(0, len(line))
    line = line[:at] + piece + line[at:]
    return mutate(line, draw) if draw.random() < 0.3 else line


def edge_mutated_lines(lines: list[bytes], draw: random.Random, share: float, frozen=()):
    """`mutated_lines` with the edge pieces: (file bytes, {original index: new line number} of untouched lines)."""
    out, kept, physical = [], {}, 0
    for index, line in enumerate(lines):
        if index not in frozen and draw.random() < share:
            line = edge_mutate(line, draw)
        else:
            kept[index] = physical + 1
        out.append(line)
        physical += line.count(b"\n") + 1
    return b"\n".join(out) + b"\n", kept


def writable(text: str) -> bool:
    """What a writer writes must be UTF-8 (a lone surrogate is not: the crash of issue 32)."""
    text.encode("utf-8")
    return True


@pytest.mark.parametrize("fmt", ["tnt", "stream"])
@pytest.mark.parametrize("seed", range(4))
def test_line_formats_set_aside_the_text_edges_and_keep_every_good_line(fmt, seed):
    draw = random.Random(f"edge-{fmt}-{seed}")
    for _ in range(40):
        lines = (tnt_lines if fmt == "tnt" else stream_lines)(draw, draw.randrange(1, 20))
        reader = read_tnt if fmt == "tnt" else read_atom_stream
        clean = list(reader(io.BytesIO(b"\n".join(lines)), Dictionary(), filename=f"s.{fmt}"))
        original = {e.line: str(e) for e in clean if isinstance(e, StreamElement)}
        data, kept = edge_mutated_lines(lines, draw, draw.choice([0.2, 0.6]))
        got = timed(lambda: list(reader(io.BytesIO(data), Dictionary(), filename=f"s.{fmt}")))
        assert all(isinstance(item, (StreamElement, Rejected)) and writable(str(item)) for item in got)
        by_line = outcomes_by_line(got)
        assert all(len(items) == 1 for items in by_line.values())
        for index, line in kept.items():
            if index + 1 in original:
                (item,) = by_line[line]
                assert str(item) == original[index + 1], (data, index, line)


@pytest.mark.parametrize("fmt", ["nq", "trig"])
@pytest.mark.parametrize("seed", range(3))
def test_graph_formats_set_aside_the_text_edges_and_keep_every_good_graph(fmt, seed):
    draw = random.Random(f"edge-{fmt}-{seed}")
    for _ in range(12 if fmt == "nq" else 6):
        made = graphs(draw, draw.randint(1, 5))
        lines, owned = (nquads if fmt == "nq" else trig)(made)
        data, kept = edge_mutated_lines(lines, draw, 0.3, {0} if fmt == "trig" else set())

        def read():
            text, bad = read_document(data, filename=f"s.{fmt}")
            return bad + list(read_timestamped_graphs(text, Dictionary(), filename=f"s.{fmt}",
                                                      rdf_format="nquads" if fmt == "nq" else "trig"))

        got = timed(read)
        assert all(isinstance(item, (StreamElement, Rejected)) and writable(str(item)) for item in got)
        elements = {str(item) for item in got if isinstance(item, StreamElement)}
        for name, stamp, triples in made:
            if all(index in kept for index in owned[name]):
                for s, p, o in triples:
                    assert f"{stamp} {p}({s},{o})" in elements, (data, name)


def test_json_ld_documents_with_text_edges_are_read_or_set_aside_whole():
    from rsp_plugin.io.sources import read_source

    draw = random.Random("edge-jsonld")
    values = ['"x"', '"x\\ud800"', '"\\udc00y"', '"\\ud83d\\ude00"', "1", '{"@id": "http://ex.org/b"}',
              '"' + "[" * 100 + '"', "[" * 100 + "1" + "]" * 100, '{"@value": "a\\ud800", "@language": "en"}']
    keys = ['"http://ex.org/p"', '"    ex:l"', '"http://ex.org/q r"', '"@type"', '"http://ex.org/\\ud800"']
    for _ in range(60):
        fields = [f"{draw.choice(keys)}: {draw.choice(values)}" for _ in range(draw.randint(1, 3))]
        document = '{"@id": "http://ex.org/a",\n ' + ",\n ".join(fields) + "}"
        got = timed(lambda: list(read_source(io.BytesIO(document.encode()), "jsonld", Dictionary(), name="d.jsonld")))
        assert all(isinstance(item, (StreamElement, Rejected)) and writable(str(item)) for item in got), document
        if any(isinstance(item, Rejected) for item in got):
            assert len(got) == 1 and 1 <= got[0].line <= document.count("\n") + 1, (document, got)


def mtl_datasets(draw: random.Random) -> list[bytes]:
    from mtl_cases import ProgramGenerator

    return [line.encode() for line in ProgramGenerator(draw.randrange(10**6)).stream()]


@pytest.mark.parametrize("seed", range(6))
def test_datalogmtl_datasets_keep_every_good_line(seed):
    from rsp_plugin.mtl.data import TimedFact, read_facts

    draw = random.Random(f"mtl-data-{seed}")
    for _ in range(40):
        lines = mtl_datasets(draw)
        clean = list(read_facts("d.txt", io.BytesIO(b"\n".join(lines)), Dictionary()))
        original = {item.line: str(item) for item in clean if isinstance(item, TimedFact)}
        share = draw.choice([0.1, 0.3, 0.8])
        # (the first line says which format the file is in, `read_facts` reads it so: it is kept)
        data, kept = (edge_mutated_lines if draw.random() < 0.5 else mutated_lines)(lines, draw, share, {0})
        got = timed(lambda: list(read_facts("d.txt", io.BytesIO(data), Dictionary(), max_line_bytes=20_000)))
        assert all(isinstance(item, (TimedFact, Rejected)) and writable(str(item)) for item in got)
        by_line = outcomes_by_line(got)
        assert all(1 <= line <= data.count(b"\n") and len(items) == 1 for line, items in by_line.items())
        for index, line in kept.items():
            if index + 1 in original:
                (item,) = by_line[line]
                assert str(item) == original[index + 1], (data, index, line)


@pytest.mark.parametrize("seed", range(6))
def test_datalogmtl_programs_parse_or_give_one_located_error(seed):
    from mtl_cases import ProgramGenerator

    draw = random.Random(f"mtl-program-{seed}")
    texts = [(ROOT / "examples" / "short-stop.mtl").read_text()] + [ProgramGenerator(k).program() for k in range(8)]
    for _ in range(60):
        lines = draw.choice(texts).encode().split(b"\n")
        share = draw.choice([0.1, 0.3])
        data, _ = (edge_mutated_lines if draw.random() < 0.5 else mutated_lines)(lines, draw, share)

        def parse():
            try:
                parse_program(decode_text(data, "f.mtl"), "f.mtl")
            except LocatedError as error:
                assert error.lineno >= 1 and error.offset >= 1 and "\n" not in str(error), str(error)
                assert len(str(error)) < 400 and writable(str(error)), str(error)

        timed(parse)


@pytest.mark.parametrize("seed", range(4))
def test_programs_and_queries_with_text_edges_parse_or_give_one_located_error(seed):
    draw = random.Random(f"edge-text-{seed}")
    for _ in range(30):
        kind = draw.choice(["program", "query"])
        lines = draw.choice(PROGRAMS if kind == "program" else QUERIES).encode().split(b"\n")
        data, _ = edge_mutated_lines(lines, draw, draw.choice([0.1, 0.3]))

        def parse():
            try:
                text = decode_text(data, f"f.{kind}")
                if kind == "program":
                    parse_program(text, "f.lars")
                else:
                    parse_query(text, "f.rq")
            except LocatedError as error:
                assert error.lineno >= 1 and error.offset >= 1 and "\n" not in str(error), str(error)
                assert len(str(error)) < 400 and writable(str(error)), str(error)

        timed(parse)


def nested(draw: random.Random, depth: int, language: str) -> str:
    """Random nesting `depth` levels deep in a language's own ways (brackets, operators), with junk between."""
    if language == "query":
        opens = [("{ ", " }"), ("FILTER(", ")"), ("(", ")"), ("[ <http://ex.org/p> ", " ]"), ("{ SELECT * WHERE ", " }")]
        inner = "?s ?p ?o"
    elif language == "json":
        opens = [('{"http://ex.org/p": ', "}"), ("[", "]"), ('{"@list": [', "]}")]
        inner = "1"
    elif language == "turtle":
        opens = [("[ <http://ex.org/p> ", " ]"), ("( ", " )"), ('( "(" ', " )"), ("[ <http://ex.org/p#> ", " ]")]
        inner = "1"
    elif language == "lars":
        opens = [("[1,1] BOXMINUS ", ""), ("-", ""), ("(", ")")]
        inner = "a(X)"
    else:
        opens = [("Boxminus[1,1]", ""), ("(", ")"), ("Diamondminus[0,2]", "")]
        inner = "A(X)"
    chosen = [draw.choice(opens) for _ in range(depth)]
    return "".join(start for start, _ in chosen) + inner + "".join(end for _, end in reversed(chosen))


@pytest.mark.parametrize("seed", range(3))
def test_deep_nesting_in_every_grammar_is_one_located_error(seed):
    from rsp_plugin.core import limits
    from rsp_plugin.io.sources import read_source
    from rsp_plugin.io.documents import DocumentRefused, parse_document
    from rsp_plugin.io.formats import read_rdf_document_at

    draw = random.Random(f"nesting-{seed}")
    for _ in range(24):
        language = draw.choice(["query", "json", "turtle", "lars", "mtl"])
        depth = draw.choice([draw.randint(1, 80), draw.randint(80, 3000)])
        body = nested(draw, depth, language)

        def parse():
            try:
                if language == "query":
                    parse_query(f"SELECT * FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ {body} }}", "f.rq")
                elif language == "json":
                    document = '{"@id": "http://ex.org/a", "http://ex.org/q": ' + body + "}"
                    items = list(read_source(io.BytesIO(document.encode()), "jsonld", Dictionary(), name="d.jsonld"))
                    assert all(isinstance(item, (StreamElement, Rejected)) for item in items)
                    parse_document(document, "json-ld", filename="d.jsonld")
                elif language == "turtle":
                    document = f"<{EX}a> <{EX}p> {body} ."
                    items = list(read_rdf_document_at(document, Dictionary(), timestamp=1, filename="d.ttl"))
                    assert all(isinstance(item, (StreamElement, Rejected)) for item in items)
                    parse_document(document, "turtle", filename="d.ttl")
                elif language == "lars":
                    parse_program(f"q(X) :- {body.replace('-a(X)', 'a(X), X = -X')} .", "f.lars")
                else:
                    parse_program(f"Q(X):-{body}", "f.mtl")
            except (LocatedError, DocumentRefused) as error:
                assert "\n" not in str(error) and error.offset >= 1, str(error)
                if "nesting" in str(error):
                    bound = limits.MAX_QUERY_NESTING if language == "query" else limits.MAX_NESTING
                    assert str(error).endswith(f"nesting deeper than {bound} levels"), str(error)

        timed(parse)


@pytest.mark.parametrize("seed", range(3))
def test_the_command_lines_never_crash_on_text_edges(tmp_path, seed):
    draw = random.Random(f"edge-cli-{seed}")
    program = tmp_path / "p.lars"
    program.write_text("p(X) :- [RANGE 3] DIAMOND p0(X) .\nq :- [RANGE 2] BOX q1 .\n")
    mtl = tmp_path / "p.mtl"
    mtl.write_text("H(X):-Diamondminus[0,2]P(X)\n")
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s ?o FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ ?s ?p ?o }}\n")
    for _ in range(4):
        stream = tmp_path / "s.stream"
        stream.write_bytes(edge_mutated_lines(stream_lines(draw, 12), draw, 0.4)[0])
        tnt = tmp_path / "s.tnt"
        tnt.write_bytes(edge_mutated_lines(tnt_lines(draw, 12), draw, 0.4)[0])
        nq = tmp_path / "s.nq"
        nq.write_bytes(edge_mutated_lines(nquads(graphs(draw, 3))[0], draw, 0.4)[0])
        facts = tmp_path / "facts.txt"
        facts.write_bytes(edge_mutated_lines(mtl_datasets(draw), draw, 0.4)[0])
        for args in (["reason", program, "--stream", stream], ["reason", program, "--stream", tnt],
                     ["reason", mtl, "--stream", facts], ["query", query, "--stream", f"{EX}s={tnt}"],
                     ["query", query, "--stream", f"{EX}s={nq}"]):
            status, out, err = cli(args)
            assert status == 0 and "Traceback" not in err, err
            assert writable(out) and writable(err)
            assert all(isinstance(json.loads(line), dict) for line in out.splitlines())


# The service's request bodies and JSON registrations -------------------------------------------------------------

SERVICE_STREAM = f"{EX}s"
SERVICE_QUERY = (f"REGISTER QUERY q AS SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{SERVICE_STREAM}> [RANGE 3s STEP 1s] "
                 "WHERE { ?s ?p ?o } GROUP BY ?s")
#: what a JSON value in a registration may be turned into
ODD_VALUES = [None, 5, -1.5, True, [], [1], {}, {"data": 5}, "", "x" * 300, "\ud800", "[RANGE 99999999999]",
              {"urn:g": {"data": "<a> <b> <c> .", "format": "nope"}}, {"urn:g": [1]}, [[[[[]]]]]]


def service_client():
    import warnings

    from rsp_plugin.service import ServiceSettings, create_app

    warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
    from starlette.testclient import TestClient

    # (a jump of max_gap windows is walked: the default, 100,000, costs seconds, more than a case may take)
    return TestClient(create_app(ServiceSettings(rate=1e6, burst=10**6, max_gap=1000)), base_url="http://localhost",
                      raise_server_exceptions=False)


def mutated_registration(draw: random.Random) -> bytes:
    spec = {"query": draw.choice(QUERIES + [SERVICE_QUERY]), "report": "non-empty-content",
            "graphs": {"urn:g": {"data": "<http://ex.org/a> <http://ex.org/b> <http://ex.org/c> .", "format": "nt"}},
            "rules": "p(X) :- q(X) .", "dialect": "auto"}
    for _ in range(draw.randint(1, 3)):
        key = draw.choice([*spec, "extra"])
        if draw.random() < 0.2:
            spec.pop(key, None)
        else:
            spec[key] = draw.choice(ODD_VALUES)
    data = json.dumps(spec).encode()
    if draw.random() < 0.4:  # and at the byte level too
        data, _ = mutated_lines([data], draw, 1.0)
    return data


@pytest.mark.parametrize("seed", range(12))
def test_the_service_never_answers_a_mutated_request_with_a_5xx(seed):
    draw = random.Random(f"service-{seed}")
    from urllib.parse import quote

    stream = quote(SERVICE_STREAM, safe="")
    with service_client() as client:
        assert client.put(f"/streams/{stream}").status_code == 201
        assert client.put("/queries/q", content=SERVICE_QUERY,
                          headers={"content-type": "application/sparql-query"}).status_code == 201
        for _ in range(20):  # pushes: every good line kept
            fmt = draw.choice(["tnt", "tnt", "nq", "trig"])
            if fmt == "tnt":
                lines = tnt_lines(draw, draw.randrange(1, 25))
                data, kept = mutated_lines(lines, draw, draw.choice([0.1, 0.3, 0.8]))
            else:
                lines, _ = (nquads if fmt == "nq" else trig)(graphs(draw, draw.randint(1, 4)))
                data, kept = mutated_lines(lines, draw, 0.3, {0} if fmt == "trig" else set())
            media = {"tnt": "application/x-tnt", "nq": "application/n-quads", "trig": "application/trig"}[fmt]
            answer = timed(lambda: client.post(f"/streams/{stream}", content=data, headers={"content-type": media}))
            assert answer.status_code in (200, 400), (data, answer.text)
            if fmt == "tnt":
                bad = {record["line"] for record in answer.json()["rejected"]}
                assert not bad & set(kept.values()), (data, answer.text)  # no untouched line set aside
        for _ in range(15):  # registrations: JSON and query text
            name = f"r{draw.randrange(10**6)}"
            data = mutated_registration(draw)
            answer = timed(lambda: client.put(f"/queries/{name}", content=data,
                                              headers={"content-type": "application/json"}))
            assert answer.status_code in (201, 400, 409), (data, answer.text)
            assert "\n" not in answer.json().get("error", ""), answer.text
            text, _ = mutated_lines(draw.choice(QUERIES).encode().split(b"\n"), draw, 0.2)
            answer = timed(lambda: client.put(f"/queries/{name}x", content=text,
                                              headers={"content-type": "application/sparql-query"}))
            assert answer.status_code in (201, 400, 409), (text, answer.text)
        for _ in range(10):  # time, parameters, other bodies
            value = draw.choice(ODD_VALUES + [10**30, 1e300, -(2**70), "9" * 5000, 5000])
            shown = quote(str(value).encode("utf-8", "surrogatepass"), safe="")
            for method, url, body in (("POST", "/watermark", json.dumps({"t": value})),
                                      ("POST", f"/streams/{stream}?t={shown}", "<a> <b> <c> ."),
                                      ("GET", f"/queries/q/results?after={shown}", None),
                                      ("GET", f"/queries/q/window?at={shown}&limit=3", None),
                                      ("POST", "/queries/q/observers", json.dumps({"url": value})),
                                      ("PUT", f"/graphs/{shown}", json.dumps(value))):
                answer = timed(lambda: client.request(method, url, content=body,
                                                      headers={"content-type": "application/json"}))
                assert answer.status_code < 500, (method, url, body, answer.text)
        assert client.get("/queries/q/results?after=0").status_code == 200
        assert client.get("/stats").status_code == 200
