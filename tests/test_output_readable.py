"""Output a person reads (issue 30): `--prefixes`, `--time iso`, `sparql-json` as one document,
TriG's typed PROV times read back, short explanations and "why not"."""

from __future__ import annotations

import io
import json
import os
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest
from rdflib import Literal, URIRef, Variable
from rdflib.plugins.sparql.results.jsonresults import JSONResultParser
from rdflib.plugins.sparql.results.xmlresults import XMLResultParser

from rsp_plugin.cli.command_line import main
from rsp_plugin.io.formats import Rejected, read_timestamped_graphs
from rsp_plugin.query.readable import Readable, iso_time
from rsp_plugin.core.terms import Dictionary
from rsp_plugin.core.time import parse_timestamp_ms

XSD = "http://www.w3.org/2001/XMLSchema#"
STREAM = (
    '500 <http://ex/a> <http://ex/temp> "54.5"^^<http://www.w3.org/2001/XMLSchema#decimal> .\n'
    '700 <http://ex/b> <http://ex/temp> "79"^^<http://www.w3.org/2001/XMLSchema#double> .\n'
    '1250 <http://ex/a> <http://ex/in> <http://ex/room/1> .\n'
    '1500 <http://other.org/x#y> <http://ex/temp> "7"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
)
SELECT = ("PREFIX ex: <http://ex/>\nSELECT ?s ?v FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
          "WHERE { ?s ex:temp ?v }")


@pytest.fixture
def files(tmp_path):
    (tmp_path / "s.tnt").write_text(STREAM)
    (tmp_path / "q.rq").write_text(SELECT)
    return tmp_path


def query(files, capsys, *options, text=None):
    path = files / "q.rq"
    if text is not None:
        path = files / "other.rq"
        path.write_text(text)
    code = main(["query", str(path), "--stream", f"http://ex/s={files / 's.tnt'}", "-q", *options])
    captured = capsys.readouterr()
    return code, captured.out, captured.err


# --prefixes and --time iso ------------------------------------------------------------------------


def test_prefixes_write_prefixed_names_and_turtles_numbers_keeping_what_cannot_be_short(files, capsys):
    code, out, _ = query(files, capsys, "--prefixes")
    assert code == 0
    assert [json.loads(line) for line in out.splitlines()] == [
        {"t": 1000, "bindings": [{"s": "ex:a", "v": "54.5"}, {"s": "ex:b", "v": '"79"^^xsd:double'}]},
        {"t": 2000, "bindings": [{"s": "<http://other.org/x#y>", "v": "7"}]},
    ]
    code, out, _ = query(files, capsys)  # the contract's default: N-Triples terms
    assert json.loads(out.splitlines()[0])["bindings"][0] == {
        "s": "<http://ex/a>", "v": f'"54.5"^^<{XSD}decimal>'}


def test_time_iso_writes_every_formats_times_as_xsd_datetime(files, capsys):
    _, out, _ = query(files, capsys, "--time", "iso")
    assert [json.loads(line)["t"] for line in out.splitlines()] == ["1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z"]
    _, out, _ = query(files, capsys, "--time", "iso", "--format", "csv")
    assert out.splitlines()[1].startswith("1970-01-01T00:00:01Z,http://ex/a,54.5")
    _, out, _ = query(files, capsys, "--time", "iso", "--format", "tsv")
    assert out.splitlines()[1].split("\t")[0] == f'"1970-01-01T00:00:01Z"^^<{XSD}dateTime>'
    _, out, _ = query(files, capsys, "--time", "iso", "--format", "sparql-xml")
    results = ElementTree.fromstring(out).iter("{http://www.w3.org/2005/sparql-results#}result")
    assert {r.get("{https://w3id.org/rsp-plugin/results#}t") for r in results} == {
        "1970-01-01T00:00:01Z", "1970-01-01T00:00:02Z"}
    _, out, _ = query(files, capsys, "--time", "iso", "--format", "sparql-json")
    times = [binding["t"] for binding in json.loads(out)["results"]["bindings"]]
    assert times[0] == {"type": "literal", "value": "1970-01-01T00:00:01Z", "datatype": XSD + "dateTime"}


def test_prefixes_go_only_with_formats_whose_readers_take_prefixed_names(files, capsys):
    code, _, err = query(files, capsys, "--prefixes", "--format", "csv")
    assert code == 2
    assert "--prefixes writes prefixed names, which --format csv cannot hold: it goes with json or trig" in err


def test_iso_times_are_exact_to_the_millisecond_and_read_back():
    assert iso_time(0) == "1970-01-01T00:00:00Z"
    assert iso_time(5250) == "1970-01-01T00:00:05.25Z"
    assert iso_time(1_091_945_100_007) == "2004-08-08T06:05:00.007Z"
    for ms in [-1, 7, 999, 1_000_001, 1_700_000_000_123, *range(0, 100_000, 37)]:
        assert parse_timestamp_ms(iso_time(ms)) == ms


def test_readable_terms():
    shown = Readable({"ex": "http://ex/", "": "http://base/"})
    assert shown.term("<http://base/w>") == ":w"
    assert shown.term("<http://ex/a.>") == "<http://ex/a.>"      # a local part cannot end with a dot
    assert shown.term(f'"true"^^<{XSD}boolean>') == "true"
    assert shown.term(f'"1.5E2"^^<{XSD}double>') == "1.5E2"
    assert shown.term(f'"2024-01-01T00:00:00Z"^^<{XSD}dateTime>') == '"2024-01-01T00:00:00Z"^^xsd:dateTime'
    assert shown.term('"x"@en') == '"x"@en' and shown.term("_:b1") == "_:b1"
    assert shown.term("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>") == "rdf:type"  # well-known
    assert Readable(None).term("<http://ex/a>") == "<http://ex/a>"


# sparql-json: one W3C document per file ---------------------------------------------------------


def test_sparql_json_is_one_w3c_document_that_a_sparql_client_reads(files, capsys):
    _, out, _ = query(files, capsys, "--format", "sparql-json")
    document = json.loads(out)  # one document, not one per line
    assert document["head"]["vars"] == ["t", "s", "v"]
    result = JSONResultParser().parse(io.StringIO(out))
    t, s, v = Variable("t"), Variable("s"), Variable("v")
    rows = sorted((int(row[t]), str(row[s]), row[v]) for row in result.bindings)
    assert rows == [(1000, "http://ex/a", Literal("54.5", datatype=URIRef(XSD + "decimal"))),
                    (1000, "http://ex/b", Literal("79", datatype=URIRef(XSD + "double"))),
                    (2000, "http://other.org/x#y", Literal(7))]
    _, lines_out, _ = query(files, capsys, "--format", "sparql-jsonl")  # JSON Lines, named as such
    assert [json.loads(line)["t"] for line in lines_out.splitlines()] == [1000, 2000]


def test_sparql_json_of_ask_construct_and_of_nothing_are_documents_too(files, capsys):
    _, out, _ = query(files, capsys, "--format", "sparql-json", text=(
        "ASK FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/in> ?o }"))
    bindings = json.loads(out)["results"]["bindings"]
    assert [(b["t"]["value"], b["boolean"]["value"]) for b in bindings] == [("1000", "false"), ("2000", "true")]
    _, out, _ = query(files, capsys, "--format", "sparql-json", text=(
        "CONSTRUCT { ?o <http://ex/has> ?s } FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
        "WHERE { ?s <http://ex/in> ?o }"))
    assert json.loads(out)["head"]["vars"] == ["t", "subject", "predicate", "object"]
    _, out, _ = query(files, capsys, "--format", "sparql-json", text=(
        "SELECT ?s FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/none> ?o }"))
    assert json.loads(out) == {"head": {"vars": ["t", "s"]}, "results": {"bindings": []}}
    _, out, _ = query(files, capsys, "--format", "sparql-xml")
    assert len(XMLResultParser().parse(io.StringIO(out)).bindings) == 3


# TriG: PROV times typed, read back ------------------------------------------------------------------


@pytest.mark.parametrize("options", [[], ["--prefixes"]])
def test_trig_output_types_its_prov_times_and_our_reader_reads_it_back(files, capsys, options):
    construct = ("PREFIX ex: <http://ex/>\nCONSTRUCT { ?s ex:hot ?v } FROM STREAM <http://ex/s> "
                 "[RANGE 1s STEP 1s] WHERE { ?s ex:temp ?v FILTER(?v > 50) }")
    _, out, _ = query(files, capsys, "--format", "trig", *options, text=construct)
    stamp = ('"1970-01-01T00:00:01Z"^^xsd:dateTime .' if options else
             f'"1970-01-01T00:00:01Z"^^<{XSD}dateTime> .')
    assert any(line.endswith(stamp) and "generatedAtTime" in line for line in out.splitlines())
    if options:
        assert "@prefix prov: <http://www.w3.org/ns/prov#> ." in out.splitlines()
    elements = list(read_timestamped_graphs(out, Dictionary(), filename="out.trig"))
    assert not [e for e in elements if isinstance(e, Rejected)]
    assert sorted(str(e) for e in elements) == [
        f'1000 <http://ex/hot>(<http://ex/a>,"54.5"^^<{XSD}decimal>)',
        f'1000 <http://ex/hot>(<http://ex/b>,"79.0"^^<{XSD}double>)']  # (rdflib's TriG reader writes 79 so)


# reason -------------------------------------------------------------------------------------------


def test_reason_prefixes_and_iso_times_behind_their_options(tmp_path, capsys):
    (tmp_path / "p.lars").write_text("@prefix ex: <http://example.org/> .\n@tick 1s .\n"
                                     "?s a ex:Hot :- ?s ex:temp ?v, ?v > 30 .\n")
    (tmp_path / "s.tnt").write_text(
        f'1000 <http://example.org/a> <http://example.org/temp> "31"^^<{XSD}integer> .\n')
    args = ["reason", str(tmp_path / "p.lars"), "--stream", str(tmp_path / "s.tnt")]
    assert main(args) == 0
    assert json.loads(capsys.readouterr().out) == {"t": 1, "atoms": [
        "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>(<http://example.org/a>,<http://example.org/Hot>)"]}
    assert main(args + ["--prefixes", "--time", "iso"]) == 0
    assert json.loads(capsys.readouterr().out) == {"t": "1970-01-01T00:00:01Z", "atoms": ["rdf:type(ex:a,ex:Hot)"]}
    (tmp_path / "q.lars").write_text("hot(S) :- temp(S, V), V > 30 .\n")
    (tmp_path / "s.stream").write_text("1 temp(a,31)\n")
    assert main(["reason", str(tmp_path / "q.lars"), "--stream", str(tmp_path / "s.stream"), "--time", "iso"]) == 2
    assert "--time iso writes time points as times" in capsys.readouterr().err


# explanations: short, prefixed, why not -------------------------------------------------------------


def test_query_explanations_are_short_and_prefixed_unless_asked_for_the_whole_tree(tmp_path, capsys):
    (tmp_path / "hot.lars").write_text("@prefix ex: <http://ex/> .\n?s a ex:Hot :- ?s ex:temp ?v, ?v > 50 .\n"
                                       "?s a ex:Alarm :- ?s a ex:Hot .\n")
    (tmp_path / "s.tnt").write_text(STREAM)
    (tmp_path / "q.rq").write_text("PREFIX ex: <http://ex/>\nSELECT ?s FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                                   "RULES <hot.lars> WHERE { ?s a ex:Alarm }")
    args = ["query", str(tmp_path / "q.rq"), "--stream", f"http://ex/s={tmp_path / 's.tnt'}", "-q", "--explain"]
    assert main(args + ["--prefixes", "--explain-depth", "2"]) == 0
    short = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("{")]
    assert short[0] == "?s = ex:a at 1000 in q1: 1 match of the pattern"
    assert short[2].startswith("    ex:a rdf:type ex:Alarm . at 1000, until 1000: rule ")
    assert short[2].endswith("hot.lars:3:1")
    assert any("more facts below; --explain-depth all shows them" in line for line in short)
    assert not any("http://" in line for line in short)
    assert main(args + ["--explain-depth", "all"]) == 0
    whole = [line for line in capsys.readouterr().out.splitlines() if not line.startswith("{")]
    assert len(whole) > len(short)
    assert any("element of <http://ex/s> at 500" in line for line in whole)


def test_query_why_not_names_the_triple_pattern_missing_at_that_time(tmp_path):
    from rsp_plugin.core.explanations import render
    from rsp_plugin.runtime.engine import RSPEngine

    engine = RSPEngine(explain=True)
    engine.register_stream("http://ex/s")
    engine.register_query("PREFIX ex: <http://ex/>\nSELECT ?s ?r FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                          "WHERE { ?s ex:temp ?v . ?s ex:in ?r }", name="q")
    engine.push("http://ex/s", [(URIRef("http://ex/a"), URIRef("http://ex/temp"), Literal(54))], timestamp=500)
    engine.advance_to(1000)
    tree = engine.explain("q", 1000, {"s": "<http://ex/a>", "r": "<http://ex/room/1>"})
    assert tree["matches"] == 0
    assert tree["missing"] == [{"pattern": "?s <http://ex/in> ?r", "with": {"s": "<http://ex/a>", "r": "<http://ex/room/1>"},
                                "matches": 0}]
    assert "- missing: ?s <http://ex/in> ?r with ?s = <http://ex/a>, ?r = <http://ex/room/1>: no triple at 1000" \
        in render(tree)


def test_reason_why_not_of_the_documented_example_and_a_short_tree(capsys):
    root = Path(__file__).parent.parent
    args = ["reason", "examples/alarm.lars", "--stream", "examples/alarm.stream"]
    before = os.getcwd()
    os.chdir(root)
    try:
        assert main(args + ["--explain", "notify(s1)", "--at", "4"]) == 1
        text = capsys.readouterr().out
        documented = (root / "docs" / "command-line.md").read_text()
        assert text.strip() in documented  # as docs/ shows it (tests/test_readme.py runs that block too)
        assert main(args + ["--explain", "notify(s1)", "--at", "4", "--explain-format", "json"]) == 1
        tree = json.loads(capsys.readouterr().out)
        (rule,) = tree["why_not"]
        assert (tree["holds"], rule["missing"]["literal"], rule["met"]) == (False, "alarm(s1)", [])
        assert rule["missing"]["why_not"][0]["missing"]["why"] == \
            "not at every point of 2..4: hot(s1) is not there at 2, 3"
        assert main(args + ["--explain", "notify(s7)", "--at", "4", "--explain-depth", "2"]) == 0
        short = capsys.readouterr().out.splitlines()
        assert main(args + ["--explain", "notify(s7)", "--at", "4"]) == 0
        whole = capsys.readouterr().out.splitlines()
        assert len(short) < len(whole) and short[:3] == whole[:3]
        assert any("more facts below; --explain-depth all shows them" in line for line in short)
        assert main(args + ["--explain", "notify(s7)", "--at", "4", "--explain-depth", "1",
                            "--explain-format", "json"]) == 0
        cut = json.loads(capsys.readouterr().out)
        assert all("because" not in item and item.get("more", 0) >= 1 for item in cut["body"] if "witness" in item)
    finally:
        os.chdir(before)


def test_why_not_reads_datalogmtl_windows_too(capsys):
    root = Path(__file__).parent.parent
    assert main(["reason", str(root / "examples/short-stop.mtl"), "--stream", str(root / "examples/short-stop.txt"),
                 "--explain", "ShortStop(veh2)", "--at", "3", "--explain-format", "json"]) == 1
    tree = json.loads(capsys.readouterr().out)
    assert len(tree["why_not"]) == 4  # the four rules of ShortStop
    for rule in tree["why_not"]:
        assert rule["met"] == ["NotPos(veh2)"]
        assert rule["missing"] == {"literal": "Diamondminus[1,1] Pos(veh2)", "why": "none at 2"}
