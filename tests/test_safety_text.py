"""Text edges (issue 32): what no writer can write, nesting past Python's stack, numbers and
durations past reading, never a traceback.

- An escape that names no character (a lone surrogate `\\uD800`, a code point past U+10FFFF:
  `\\U00110000`, `\\U8001F600`) is a located bad line in every reader (`.tnt`, `.nt`, `.nq`,
  TriG, Turtle, JSON-LD, `.stream`, DatalogMTL facts; the columnar readers give the per-line
  verdicts), counted, and the stream goes on; a surrogate pair `\\uD83D\\uDE00` is its character.
  In a program, a query or a background document it is one located error.
- Nesting is bounded in every grammar and in JSON-LD: `FILE:LINE:COLUMN: nesting deeper than N
  levels`; just under the bound everything still runs.
- `@tick 0s .` and a tick that rounds to 0 ms, a one-byte `.mtl` file that is not UTF-8, a
  JSON-LD key that makes no IRI, an interval bound or a window of thousands of digits: located.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest

from rsp_plugin.core import limits
from rsp_plugin.columnar.atoms import atom_block, tnt_atom_block
from rsp_plugin.columnar.blocks import read_tnt_blocks, tnt_block
from rsp_plugin.cli.command_line import main
from rsp_plugin.io.sources import read_source
from rsp_plugin.io.documents import DocumentRefused, parse_document
from rsp_plugin.core.errors import LocatedError
from rsp_plugin.io.formats import Rejected, StreamElement, read_atom_stream, read_ntriples_at, read_rdf_document_at, read_timestamped_graphs, read_tnt
from rsp_plugin.mtl.programs import parse_program  # (LARS or DatalogMTL: the one place that tells them apart)
from rsp_plugin.mtl.data import read_atom_lines, read_dataset, read_facts
from rsp_plugin.mtl.syntax import parse_mtl
from rsp_plugin.query.syntax import parse_query
from rsp_plugin.core.terms import BadText, Dictionary, bad_escapes, canonical_literal, unescape

EX = "http://ex.org/"
BAD = [r"\uD800", r"\uDC00", r"\U00110000", r"\U8001F600", r"\U0000D800"]
WHY = {r"\uD800": "half of a surrogate pair, alone", r"\uDC00": "half of a surrogate pair, alone",
       r"\U00110000": "past U+10FFFF", r"\U8001F600": "past U+10FFFF", r"\U0000D800": "half of a surrogate pair, alone"}
PAIR = r"\uD83D\uDE00"  # 😀 as Java and JSON write it


def cli(*args) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(arg) for arg in args])
    return status, out.getvalue(), err.getvalue()


def split(items):
    elements = [item for item in items if isinstance(item, StreamElement)]
    rejected = [item for item in items if isinstance(item, Rejected)]
    assert len(elements) + len(rejected) == len(items)
    return elements, rejected


# the rule of escapes ---------------------------------------------------------------------------------------------


@pytest.mark.parametrize("escape", BAD)
def test_an_escape_of_no_character_is_bad_text_and_a_pair_is_one_character(escape):
    with pytest.raises(BadText, match="not a character"):
        unescape(f"a{escape}b")
    with pytest.raises(BadText):
        canonical_literal(f'"a{escape}b"@en')
    assert [reason for _, reason in bad_escapes(f'<a> <p> "a{escape}b" .')] == [
        f"{escape} is not a character ({WHY[escape]})"]
    assert unescape(f"x{PAIR}y") == "x😀y" and canonical_literal(f'"{PAIR}"') == '"😀"'
    assert unescape(r"\U0010FFFF") == "\U0010ffff" and unescape("\\\\uD800") == "\\uD800"  # an escaped backslash
    assert list(bad_escapes(f'"{PAIR}" "\\\\uD800" "\\u00E9"')) == []


# every line reader: the bad line set aside at its line, the others read ----------------------------------------


def tnt(obj: str, stamp: int) -> str:
    return f"{stamp} <{EX}s> <{EX}p> {obj} ."


@pytest.mark.parametrize("escape", BAD)
def test_timestamped_n_triples_set_aside_the_line_and_go_on(escape):
    lines = [tnt('"ok"', 1), tnt(f'"a{escape}"', 2), tnt(f'"{PAIR}"@en', 3), tnt(f'"b{escape}"^^<{EX}t>', 4),
             tnt('"fine"', 5)]
    for source in (io.BytesIO("\n".join(lines).encode()), lines):  # bytes cut here, or text lines
        terms = Dictionary()
        elements, rejected = split(list(read_tnt(source, terms, filename="s.tnt")))
        assert [(e.line, e.time_point) for e in elements] == [(1, 1), (3, 3), (5, 5)]
        assert terms.key(elements[1].fact[1][2]) == '"😀"@en'
        assert [str(r) for r in rejected] == [f"s.tnt:{n}: {escape} is not a character ({WHY[escape]}); set aside"
                                              for n in (2, 4)]


@pytest.mark.parametrize("escape", BAD)
def test_n_triples_and_n_quads_set_aside_the_line(escape):
    lines = [f'<{EX}s> <{EX}p> "a" .', f'<{EX}s> <{EX}p> "{escape}" .', f'<{EX}s> <{EX}p> "b" .']
    elements, rejected = split(list(read_ntriples_at(io.BytesIO("\n".join(lines).encode()), Dictionary(),
                                                     timestamp=7, filename="d.nt")))
    assert [e.line for e in elements] == [1, 3] and [(r.line, escape in r.reason) for r in rejected] == [(2, True)]
    quads = "\n".join([f'<{EX}s> <{EX}p> "a" <{EX}g> .', f'<{EX}s> <{EX}p> "{escape}" <{EX}g> .',
                       f'<{EX}s> <{EX}p> "{PAIR}" <{EX}g> .', f'<{EX}g> <http://www.w3.org/ns/prov#generatedAtTime> "5" .'])
    elements, rejected = split(list(read_timestamped_graphs(quads, Dictionary(), rdf_format="nquads", filename="s.nq")))
    assert sorted(str(e) for e in elements) == [f'5 <{EX}p>(<{EX}s>,"a")', f'5 <{EX}p>(<{EX}s>,"😀")']
    assert [(r.line, escape in r.reason) for r in rejected] == [(2, True)]


@pytest.mark.parametrize("escape", BAD)
def test_trig_and_turtle_set_aside_the_line_with_its_column(escape):
    lines = ["@prefix prov: <http://www.w3.org/ns/prov#> .", f"<{EX}g> {{",
             f'  <{EX}s> <{EX}p> "a" .', f'  <{EX}s> <{EX}p> "x{escape}" .', f'  <{EX}s> <{EX}q> "{PAIR}" .',
             "}", f'<{EX}g> prov:generatedAtTime "9" .', f"<{EX}h> <{EX}p> <{EX}o{escape}> ."]
    elements, rejected = split(list(read_timestamped_graphs("\n".join(lines), Dictionary(), filename="s.trig")))
    assert sorted(str(e) for e in elements) == [f'9 <{EX}p>(<{EX}s>,"a")', f'9 <{EX}q>(<{EX}s>,"😀")']
    assert [str(r) for r in rejected] == [
        f"s.trig:{n}: {escape} is not a character ({WHY[escape]}) at column {lines[n - 1].index(escape) + 1}; set aside"
        for n in (4, 8)]
    turtle = f'<{EX}s> <{EX}p> "a" .\n<{EX}s> <{EX}p> "{escape}" .\n<{EX}s> <{EX}p> "{PAIR}" .\n'
    elements, rejected = split(list(read_rdf_document_at(turtle, Dictionary(), timestamp=3, filename="d.ttl")))
    assert sorted(str(e) for e in elements) == [f'3 <{EX}p>(<{EX}s>,"a")', f'3 <{EX}p>(<{EX}s>,"😀")']
    assert [r.line for r in rejected] == [2]


@pytest.mark.parametrize("escape", [r"\ud800", r"\udc00"])
def test_json_ld_with_a_lone_surrogate_is_set_aside_at_its_place(escape):
    document = '{"@id": "http://ex.org/a",\n "http://ex.org/p": "x' + escape + '"}'
    (rejected,) = list(read_source(io.BytesIO(document.encode()), "jsonld", Dictionary(), name="d.jsonld"))
    assert str(rejected) == (f"d.jsonld:2: {escape} is not a character (half of a surrogate pair, alone); "
                             "the document is set aside")
    column = document.split("\n")[1].index(escape) + 1
    with pytest.raises(DocumentRefused, match=rf"d.jsonld:2:{column}: .* not a character"):
        parse_document(document, "json-ld", filename="d.jsonld")
    good = document.replace(escape, r"\ud83d\ude00")
    (element,) = list(read_source(io.BytesIO(good.encode()), "jsonld", Dictionary(), name="d.jsonld", moment=4))
    assert str(element) == f'4 <{EX}p>(<{EX}a>,"x😀")'


@pytest.mark.parametrize("escape", BAD)
def test_atom_streams_and_datalogmtl_facts_set_aside_the_line(escape):
    lines = ["1 a(x)", f'2 a("{escape}")', f'3 a("{PAIR}")', "4 a(y)"]
    elements, rejected = split(list(read_atom_stream(io.BytesIO("\n".join(lines).encode()), Dictionary(),
                                                     filename="s.stream")))
    assert [e.line for e in elements] == [1, 3, 4] and [r.line for r in rejected] == [2]
    assert str(elements[1]) == '3 a("😀")'
    facts = ["A(x)@[1,2]", f'A("{escape}")@[3,3]', f'A("{PAIR}")@4']
    items = list(read_dataset(facts, Dictionary(), filename="d.txt"))
    assert [str(item) for item in items] == ["1..2 A(x)", f"d.txt:2: {escape} is not a character ({WHY[escape]})",
                                             '4..4 A("😀")']
    items = list(read_atom_lines(["1 A(x)", f'2 A("{escape}")', "3 A(y)"], Dictionary(), filename="d.stream"))
    assert [getattr(item, "line", None) for item in items] == [1, 2, 3] and isinstance(items[1], Rejected)
    items = list(read_facts("d.tnt", io.BytesIO(f'{tnt(f"{escape}", 1)}\n{tnt("1", 2)}'.replace(
        escape, f'"{escape}"').replace(" 1 .", ' "1" .').encode()), Dictionary()))
    assert [type(item).__name__ for item in items] == ["Rejected", "TimedFact"]


def test_a_lone_surrogate_held_as_such_in_text_lines_is_set_aside():
    """Text handed in already decoded (a JSON string, a Spark row, a Python caller) may hold one."""
    lines = [tnt('"ok"', 1), tnt('"a\ud800b"', 2), tnt('"\ud83d\ude00"', 3), "4 a(\udc00)"]
    elements, rejected = split(list(read_tnt(lines[:3], Dictionary(), filename="s.tnt")))
    assert [e.line for e in elements] == [1, 3] and str(elements[1]).endswith('"😀")')
    assert [str(r) for r in rejected] == ["s.tnt:2: U+D800 is not a character (half of a surrogate pair, alone); set aside"]
    (_, rejected) = split(list(read_atom_stream(lines[3:], Dictionary(), filename="s.stream")))
    assert [r.line for r in rejected] == [1]


# the columnar readers give the per-line verdicts ---------------------------------------------------------------


def edge_lines() -> list[str]:
    out = []
    for k, obj in enumerate(['"ok"', f'"a{BAD[0]}"', f'"{PAIR}"', f'"{BAD[2]}"@en', f"<{EX}o>", f'"x{BAD[3]}"',
                             '"caf\\u00E9"', f'"{BAD[1]}"^^<{EX}t>', '"z"']):
        out.append(tnt(obj, 10 + k))
    return out


def test_the_columnar_tnt_readers_give_the_per_line_verdicts():
    surrogate_bytes = f'30 <{EX}s> <{EX}p> "'.encode() + b'\xed\xa0\x80" .\n'  # (a surrogate as UTF-8: not UTF-8)
    data = ("\n".join(edge_lines()) + "\n").encode() + surrogate_bytes + (tnt('"last"', 31) + "\n").encode()
    expected_terms = Dictionary()
    expected, expected_rejected = split(list(read_tnt(io.BytesIO(data), expected_terms, filename="s.tnt")))
    want = [(e.line, e.time_point, tuple(expected_terms.key(t) for t in e.fact[1])) for e in expected]
    want_rejected = [str(r) for r in expected_rejected]
    assert len(want_rejected) == 5 and "not UTF-8" in want_rejected[-1] and want[-1][1] == 31

    terms = Dictionary()
    block = tnt_block(data, 1, terms, filename="s.tnt")
    got = [(line, time, (terms.key(s), terms.key(p), terms.key(o))) for line, time, s, p, o in
           zip(block.lines.tolist(), block.times.tolist(), block.s.tolist(), block.p.tolist(), block.o.tolist())]
    assert got == want and [str(r) for r in block.rejected] == want_rejected

    terms = Dictionary()
    blocks = list(read_tnt_blocks("s.tnt", terms, handle=io.BytesIO(data), block_bytes=1 << 12))
    assert [str(r) for b in blocks for r in b.rejected] == want_rejected
    assert sum(len(b) for b in blocks) == len(want)

    terms = Dictionary()
    atoms = tnt_atom_block(data, 1, terms, filename="s.tnt")
    assert [(line, time, tuple(terms.key(a) for a in args)) for line, time, _, args in atoms.rows()] == want
    assert [str(r) for r in atoms.rejected] == want_rejected


def test_the_columnar_atom_reader_gives_the_per_line_verdicts():
    lines = ["1 a(x)", f'2 a("{BAD[0]}")', "3 a(y,z)", f'4 b("{PAIR}")', f'5 b("{BAD[2]}", x)', "6 c",
             f"7 d({'9' * 4400})"]
    data = ("\n".join(lines) + "\n").encode()
    want_terms = Dictionary()
    want, want_rejected = split(list(read_atom_stream(io.BytesIO(data), want_terms, filename="s.stream")))
    terms = Dictionary()
    block = atom_block(data, 1, terms, prefixes={}, filename="s.stream")
    assert [(line, t, terms.key(p), [terms.key(a) for a in args]) for line, t, p, args in block.rows()] == [
        (e.line, e.time_point, want_terms.key(e.fact[0]), [want_terms.key(a) for a in e.fact[1]]) for e in want]
    assert [str(r) for r in block.rejected] == [str(r) for r in want_rejected] and len(want_rejected) == 2


# whole command lines ---------------------------------------------------------------------------------------------


def test_the_command_lines_set_the_lines_aside_and_write_the_rest(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("q(X) :- [RANGE 3] DIAMOND a(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text(f'1 a(x)\n2 a("{BAD[0]}")\n3 a("{BAD[3]}")\n4 a("{PAIR}")\n')
    status, out, err = cli("reason", program, "--stream", stream)
    assert status == 0 and "Traceback" not in err, err
    assert json.loads(out.splitlines()[-1]) == {"t": 4, "atoms": ['q("😀")', "q(x)"]}
    assert f"{stream}:2: \\uD800 is not a character" in err and "2 stream lines set aside" in err

    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?o FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ ?s ?p ?o }}\n")
    data = tmp_path / "s.tnt"
    data.write_text("\n".join(edge_lines()[:3]) + "\n")
    status, out, err = cli("query", query, "--stream", f"{EX}s={data}")
    assert status == 0 and "Traceback" not in err, err
    assert {row["o"] for line in out.splitlines() for row in json.loads(line)["bindings"]} == {'"ok"', '"😀"'}
    assert f"{data}:2: \\uD800 is not a character" in err and "1 stream line set aside" in err


def test_a_program_a_query_and_a_background_say_where_the_escape_is(tmp_path):
    with pytest.raises(LocatedError, match=r"p.lars:1:12: \\uD800 is not a character"):
        parse_program('q :- a(X), "\\uD800" = X .', "p.lars")
    with pytest.raises(LocatedError, match=r"p.lars:1:8: \\U00110000 is not a character"):
        parse_program('q :- a("\\U00110000"^^xsd:string) .', "p.lars")
    assert parse_program(f'q :- a("{PAIR}") .').terms.find('"😀"') is not None
    with pytest.raises(LocatedError, match=r"p.mtl:1:9: \\U8001F600 is not a character"):
        parse_mtl('Q(X):-A("\\U8001F600")', "p.mtl")
    text = f'SELECT ?s FROM STREAM <{EX}s> [RANGE 3s STEP 1s]\nWHERE {{ ?s ?p "a\\uDC00" }}'
    with pytest.raises(LocatedError, match=r"q.rq:2:17: \\uDC00 is not a character"):
        parse_query(text, "q.rq")
    parse_query(text.replace("\\uDC00", PAIR))
    # held as such (text handed in by a JSON body or a Python caller: from UTF-8 bytes it cannot come)
    with pytest.raises(LocatedError, match=r"q.rq:2:17: U\+DC00 is not a character"):
        parse_query(text.replace("\\uDC00", "\udc00"), "q.rq")
    with pytest.raises(LocatedError, match=r"p.lars:1:10: U\+D800 is not a character"):
        parse_program('q :- a("x\ud800") .', "p.lars")
    with pytest.raises(LocatedError, match=r"p.mtl:1:10: U\+D83D is not a character"):
        parse_mtl('Q(X):-A("\ud83d\ude00")', "p.mtl")
    background = tmp_path / "bg.ttl"
    background.write_text(f'<{EX}a> <{EX}p> "ok" .\n<{EX}a> <{EX}p> "\\uD800" .\n')
    with pytest.raises(DocumentRefused, match=r"bg.ttl:2:38: \\uD800 is not a character"):
        parse_document(background.read_bytes(), "turtle", filename="bg.ttl")


# nesting -----------------------------------------------------------------------------------------------------------

NEST = limits.MAX_NESTING
QUERY_NEST = limits.MAX_QUERY_NESTING


def query_with(pattern: str) -> str:
    return f"SELECT ?s FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ {pattern} }}"


QUERIES = {  # (the text at nesting n, the deepest n that is read: WHERE { is one level, FILTER( another)
    "filter": (lambda n: query_with("?s ?p ?o FILTER(" + "(" * n + "?o > 1" + ")" * n + ")"), QUERY_NEST - 2),
    "groups": (lambda n: query_with("{" * n + "?s ?p ?o" + "}" * n), QUERY_NEST - 1),
    "blank nodes": (lambda n: query_with("?s <http://ex.org/p> " + "[ <http://ex.org/p> " * n + "1" + " ]" * n),
                    QUERY_NEST - 1),
    "subqueries": (lambda n: query_with("{ SELECT ?s WHERE " * n + "{ ?s ?p ?o }" + " }" * n), QUERY_NEST - 2),
}


@pytest.mark.parametrize("kind", sorted(QUERIES))
def test_a_query_nested_past_the_bound_is_one_located_error(kind):
    make, deepest = QUERIES[kind]
    parse_query(make(deepest), "q.rq")  # read (rdflib too: its parser recurses ~40 frames a level)
    for depth in (deepest + 1, 1000, 100_000):
        with pytest.raises(LocatedError) as raised:
            parse_query(make(depth), "q.rq")
        assert str(raised.value).endswith(f": nesting deeper than {QUERY_NEST} levels")
        assert raised.value.filename == "q.rq" and raised.value.lineno == 1


def test_brackets_in_strings_comments_and_iris_of_a_query_do_not_nest():
    hidden = "(" * 40 + "[" * 40
    text = query_with(f'?s ?p "{hidden}" . ?s ?p \'{hidden}\' . ?s ?p """{hidden}\n""" # {hidden}\n')
    parse_query(text)
    with pytest.raises(LocatedError, match="nesting deeper"):  # a `#` in an IRI starts no comment
        parse_query(query_with("?s <http://ex.org/a#b> ?o FILTER(" + "(" * 40 + "1" + ")" * 40 + ")"))


PROGRAMS = {  # LARS and DatalogMTL: operators nest without brackets too
    "sum": (lambda n: "q(Y) :- a(X), Y = X" + " + X" * n + " .", "p.lars"),
    "negation": (lambda n: "q(Y) :- a(X), Y = " + "- " * n + "X .", "p.lars"),
    "metric body": (lambda n: "q(X) :- " + "[1,1] BOXMINUS " * n + "a(X) .", "p.lars"),
    "metric head": (lambda n: "[1,1] BOXPLUS " * n + "q(X) :- a(X) .", "p.lars"),
    "mtl brackets": (lambda n: "Q(X):-" + "(" * n + "A(X)" + ")" * n, "p.mtl"),
    "mtl operators": (lambda n: "Q(X):-" + "Boxminus[1,1]" * n + "A(X)", "p.mtl"),
    "mtl since": (lambda n: "Q(X):-A(X)" + "Since[0,1]A(X)" * n, "p.mtl"),
    "mtl head": (lambda n: "Boxplus[1,1]" * n + "Q(X):-A(X)", "p.mtl"),
}


@pytest.mark.parametrize("kind", sorted(PROGRAMS))
def test_a_program_nested_past_the_bound_is_one_located_error(kind, tmp_path):
    make, name = PROGRAMS[kind]
    for depth in (NEST + 1, 3000):  # (past Python's stack: lark's LALR parse builds the tree without recursing)
        with pytest.raises(LocatedError) as raised:
            parse_program(make(depth), name)
        assert str(raised.value).endswith(f": nesting deeper than {NEST} levels"), str(raised.value)
        assert raised.value.filename == name and raised.value.lineno == 1 and raised.value.offset > 1
    # just under the bound, the program runs
    depth = NEST - 8
    program = tmp_path / name
    program.write_text(make(depth) + "\n")
    stream = tmp_path / "s.stream"
    stream.write_text("".join(f"{t} {'A' if name.endswith('.mtl') else 'a'}(2)\n" for t in range(1, 4)))
    status, out, err = cli("reason", program, "--stream", stream)
    assert status == 0 and len(out.splitlines()) == 3, err


def test_json_ld_nested_past_the_bound_is_refused_at_its_place():
    deep = '{"@id": "http://ex.org/a",\n "http://ex.org/p": ' + "[" * 200 + "1" + "]" * 200 + "}"
    with pytest.raises(DocumentRefused, match=rf"d.jsonld:2:{20 + NEST}: nesting deeper than {NEST} levels"):
        parse_document(deep, "json-ld", filename="d.jsonld")
    (rejected,) = list(read_source(io.BytesIO(deep.encode()), "jsonld", Dictionary(), name="d.jsonld"))
    assert str(rejected) == f"d.jsonld:2: nesting deeper than {NEST} levels; the document is set aside"
    strings = '{"@id": "http://ex.org/a", "http://ex.org/p": "' + "[{(" * 300 + '"}'  # brackets in a string
    assert len(parse_document(strings, "json-ld", filename="d.jsonld")) == 1
    nested = {"@id": "http://ex.org/n0", "http://ex.org/p": 1}
    for k in range(1, NEST // 2 - 1):
        nested = {"@id": f"http://ex.org/n{k}", "http://ex.org/q": nested}
    assert len(parse_document(json.dumps(nested), "json-ld", filename="d.jsonld")) == NEST // 2 - 1


def test_turtle_and_trig_nested_past_the_bound_are_refused_at_their_place(tmp_path):
    def nested(depth: int) -> str:
        return f"<{EX}a> <{EX}p> " + f"[ <{EX}p> ( " * (depth // 2) + "1" + " ) ]" * (depth // 2) + " ."

    deep, fine = nested(200), nested(NEST - 4)
    column = [k for k, char in enumerate(deep) if char in "[("][NEST] + 1  # (the bracket that opens one level too many)
    with pytest.raises(DocumentRefused, match=rf"bg.ttl:2:{column}: nesting deeper than {NEST} levels"):
        parse_document(f"# a background\n{deep}\n", "turtle", filename="bg.ttl")
    triples = 1 + 3 * ((NEST - 4) // 2)  # (a blank node: one triple; a collection of one: two)
    assert len(parse_document(fine, "turtle", filename="bg.ttl")) == triples
    (rejected,) = list(read_rdf_document_at(f"\n{deep}", Dictionary(), timestamp=1, filename="d.ttl"))
    assert str(rejected) == f"d.ttl:2: nesting deeper than {NEST} levels"
    trig = "\n".join([f"<{EX}g> {{ {fine} }}", f"<{EX}h> {{", deep, "}",
                      f'<{EX}g> <http://www.w3.org/ns/prov#generatedAtTime> "4" .',
                      f'<{EX}h> <http://www.w3.org/ns/prov#generatedAtTime> "5" .'])
    elements, rejected = split(list(read_timestamped_graphs(trig, Dictionary(), filename="s.trig")))
    assert {e.time_point for e in elements} == {4} and len(elements) == triples
    assert [str(r) for r in rejected][:2] == [  # (the graph, then its lines read again: TriG's recovery)
        f"s.trig:2: nesting deeper than {NEST} levels; the statement starting here is set aside",
        f"s.trig:3: nesting deeper than {NEST} levels; the block is set aside"]


# ticks, bytes, keys, digits --------------------------------------------------------------------------------------


@pytest.mark.parametrize("tick, shown", [("0s", "0s is 0 ms"), ("0ms", "0ms is 0 ms"), ("PT0.0005S", "PT0.0005S is 0 ms")])
def test_a_tick_of_no_milliseconds_is_a_located_error(tick, shown, tmp_path):
    program = tmp_path / "p.lars"
    program.write_text(f"@tick {tick} .\nq :- [RANGE 10s] DIAMOND p .\n")
    (tmp_path / "s.stream").write_text("1 p\n")
    status, out, err = cli("reason", program, "--stream", tmp_path / "s.stream")
    assert status == 2 and out == ""
    assert err == f"rsp-plugin: {program}:1:7: a tick lasts at least 1 ms; @tick {shown} (rounded to whole milliseconds)\n"


def test_a_program_of_bytes_that_are_not_utf8_is_a_located_error(tmp_path):
    (tmp_path / "s.stream").write_text("1 A(x)\n")
    for name in ("p.mtl", "p.rules"):  # by extension, and by content
        program = tmp_path / name
        program.write_bytes(b"\xc8")
        status, out, err = cli("reason", program, "--stream", tmp_path / "s.stream")
        assert (status, out, err) == (2, "", f"rsp-plugin: {program}:1:1: not UTF-8 text (byte 0xc8)\n")


def test_a_json_ld_key_that_makes_no_iri_is_located(tmp_path):
    document = '{"@id":"http://ex/a",\n "    ex:l":1}'
    (rejected,) = list(read_source(io.BytesIO(document.encode()), "jsonld", Dictionary(), name="d.jsonld"))
    assert str(rejected) == "d.jsonld:2: not an IRI: <    ex:l>; the document is set aside"
    background = tmp_path / "bg.jsonld"
    background.write_text(document)
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?o FROM STREAM <{EX}s> [RANGE 3s STEP 1s] WHERE {{ ?s ?p ?o }}\n")
    (tmp_path / "s.tnt").write_text(tnt('"x"', 1) + "\n")
    status, out, err = cli("query", query, "--stream", f"{EX}s={tmp_path / 's.tnt'}", "--background", background)
    assert status == 2 and out == "" and err.startswith(f"rsp-plugin: {background}:2:3: not an IRI: <    ex:l>; refused")


def test_numbers_of_thousands_of_digits_are_located_errors(tmp_path):
    digits = "9" * 4400
    with pytest.raises(LocatedError, match=r"p.mtl:1:18: the bound 9{25}\.\.\. has more than 18 digits"):
        parse_mtl(f"Q(X):-Boxminus[0,{digits}]A(X)", "p.mtl")
    with pytest.raises(LocatedError, match=r"p.mtl:1:16: the bound 0\.9{23}\.\.\. has more than 18 digits"):
        parse_mtl(f"Q(X):-Boxminus[0.{digits},1]A(X)", "p.mtl")
    for text, column in ((f"q :- [RANGE {digits}] DIAMOND p .", 13), (f"q :- [COUNT {digits}] DIAMOND p .", 13),
                         (f"q :- ⊞{digits} DIAMOND p .", 6), (f"q(X) :- a(X), X > {digits} .", 19),
                         (f"@tick {digits}s .", 7), (f"@tick 1s .\nq :- [RANGE {digits}s] DIAMOND p .", 13)):
        with pytest.raises(LocatedError) as raised:
            parse_program(text, "p.lars")
        assert raised.value.offset == column and len(str(raised.value)) < 200, str(raised.value)
    items = list(read_dataset(["A(x)@[1,2]", f"A(x)@[1,{digits}]", f"A(x)@{digits}", "A(y)@3"], Dictionary(),
                              filename="d.txt"))
    assert [str(item)[:25] for item in items] == ["1..2 A(x)", "d.txt:2: the bound 999999", "d.txt:3: the bound 999999",
                                                  "3..3 A(y)"]
    items = list(read_atom_lines(["1 A(x)", f"{digits} A(x)", f"2 A({digits})"], Dictionary(), filename="d.stream"))
    assert [type(item).__name__ for item in items] == ["TimedFact", "Rejected", "TimedFact"]
    program = tmp_path / "p.mtl"
    program.write_text(f"Q(X):-Boxminus[0,{digits}]A(X)\n")
    (tmp_path / "s.stream").write_text("1 A(x)\n")
    status, _, err = cli("reason", program, "--stream", tmp_path / "s.stream")
    assert status == 2 and err.startswith(f"rsp-plugin: {program}:1:18: the bound ") and len(err) < 200
