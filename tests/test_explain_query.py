"""Explanations of continuous query results (rsp_plugin/query/explain.py) and `--explain` on the
command line: every row of every report of the example queries is explained at its report, and
each explanation is checked: as many matches as the row stands for (an aggregate's COUNT), every
matched triple in the window or graph it claims, every stream element at the file and line it
names (read back from the file), inside the window at its timestamp."""

import json
import re
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.lars.explain import ExplanationUnavailable
from rsp_plugin.io.formats import read_tnt
from rsp_plugin.runtime.engine import RSPEngine
from rsp_plugin.core.terms import Dictionary

ROOT = Path(__file__).resolve().parent.parent
CSRBENCH = ROOT / "tests/data/csrbench/stream-6s.tnt"
POSITIONS = ROOT / "queries/data/positions.tnt"
TRANSPORT = ROOT / "queries/data/meansOfTransportation.ttl"


def replay(query_file: Path, streams: dict[str, Path], graphs: dict[str, Path] = None, on_report=None):
    """Run `query_file` over the streams with explanations on; `on_report(engine, result)` at each report."""
    engine = RSPEngine(explain=True)
    for iri in streams:
        engine.register_stream(iri)
    for iri, path in (graphs or {}).items():
        engine.add_graph(iri, str(path))
    registered = engine.register_query(query_file.read_text(), filename=str(query_file), base=str(query_file))
    if on_report is not None:
        registered.subscribe(lambda result: on_report(engine, result))
    for iri, path in streams.items():
        elements = list(read_tnt(path.open(encoding="utf-8"), engine.terms, tick_ms=1, filename=str(path)))
        for element in elements:
            if engine.watermark is None or element.time_point > engine.watermark:
                engine.advance_to(element.time_point)
            engine.push(iri, [element], source=str(path))
    engine.finish()
    return engine, registered


def stream_leaves(node):
    if node.get("by") == "stream":
        yield node
    for item in node.get("body", ()):
        for child in item.get("because", ()):
            yield from stream_leaves(child)


def check_element(leaf, window_range: int, tau: int, end: int = 0):
    """The element is in the window of tau, and the file has it at the line named."""
    assert tau - window_range <= leaf["timestamp"] < tau - end, leaf
    source = leaf["source"]
    line = Path(source["file"]).read_text(encoding="utf-8").splitlines()[source["line"] - 1]
    (element,) = list(read_tnt([line], Dictionary(), tick_ms=1))
    assert element.time_point == leaf["timestamp"]
    written = " ".join(element.terms.key(term) for term in element.fact[1]) + " ."
    assert written == leaf["triple"], (written, leaf)


def test_every_row_of_an_aggregate_query_is_its_group_of_matches():
    checked = []

    def on_report(engine, result):
        for row in result.to_json()["bindings"]:
            tree = engine.explain(result.query, result.t, row)
            count = int(re.match(r'"(\d+)"', row["n"]).group(1))
            assert tree["matches"] == count and len(tree["body"]) == min(count, 10), (row, tree)
            for match in tree["body"]:
                assert len(match["because"]) == 4      # the 4 patterns of the WHERE, each a triple
                for leaf in match["because"]:
                    assert leaf["by"] == "stream"
                    check_element(leaf, 3000, result.t)
            checked.append(row)

    replay(ROOT / "queries/csrbench/max-temperature.rq", {"http://ex.org/csrbench": CSRBENCH}, on_report=on_report)
    assert len(checked) > 10


def test_entailed_triples_are_explained_down_to_the_stream_and_the_background():
    kinds = set()

    def on_report(engine, result):
        for row in result.to_json()["bindings"]:
            tree = engine.explain(result.query, result.t, row)
            assert tree["matches"] >= 1
            for match in tree["body"]:
                assert len(match["because"]) == 4
                for triple in match["because"]:
                    kinds.add(triple["by"])
                    assert triple["by"] in ("stream", "rule", "background"), triple
                    for leaf in stream_leaves(triple):
                        check_element(leaf, 10_000, result.t)

    replay(ROOT / "queries/barbieri-fig2-rdfs.rq", {"http://mobileservice.org/positions.trdf": POSITIONS},
           {"http://mobileservice.org/meansOfTransportation.rdf": TRANSPORT}, on_report=on_report)
    assert kinds == {"stream", "rule", "background"}


def test_a_static_graph_is_named(tmp_path):
    seen = []

    def on_report(engine, result):
        for row in result.to_json()["bindings"]:
            tree = engine.explain(result.query, result.t, row)
            seen.extend(t for m in tree["body"] for t in m["because"] if t["by"] == "graph")

    replay(ROOT / "queries/barbieri-fig2.rq", {"http://mobileservice.org/positions.trdf": POSITIONS},
           {"http://mobileservice.org/meansOfTransportation.rdf": TRANSPORT}, on_report=on_report)
    assert seen and {t["graph"] for t in seen} == {"http://mobileservice.org/meansOfTransportation.rdf"}
    assert {t["source"]["file"] for t in seen} == {str(TRANSPORT)}


CONSTRUCT = """
REGISTER RSTREAM <http://ex/q> AS
CONSTRUCT { ?x <http://ex/hot> true }
FROM STREAM <http://ex/s> [RANGE 2s STEP 1s]
WHERE { ?x <http://ex/temp> ?v FILTER (?v > 30) }
"""


def test_a_construct_triple_and_its_filter():
    from rdflib import Literal, URIRef

    engine = RSPEngine(explain=True)
    engine.register_stream("http://ex/s")
    engine.register_query(CONSTRUCT, name="q")
    temp = URIRef("http://ex/temp")
    engine.push("http://ex/s", [(URIRef("http://ex/a"), temp, Literal(35))], timestamp=100)
    engine.push("http://ex/s", [(URIRef("http://ex/a"), temp, Literal(20))], timestamp=200)
    engine.push("http://ex/s", [(URIRef("http://ex/b"), temp, Literal(10))], timestamp=300)
    (report,) = engine.advance_to(1000)
    assert report.to_json()["triples"] == ['<http://ex/a> <http://ex/hot> "true"^^<http://www.w3.org/2001/XMLSchema#boolean> .']
    tree = engine.explain("q", 1000, report.to_json()["triples"][0])
    (match,) = tree["body"]                 # 20 does not pass the FILTER
    (leaf,) = match["because"]
    assert leaf["triple"].endswith('"35"^^<http://www.w3.org/2001/XMLSchema#integer> .')
    assert leaf["timestamp"] == 100 and leaf["source"] == {"stream": "http://ex/s", "arrival": 1}
    with pytest.raises(ExplanationUnavailable):
        engine.explain("q", 0, report.to_json()["triples"][0])   # not the latest report


RULES = """
@prefix ex: <http://ex/> .
?x ex:alarm ?v :- [RANGE 2] BOX ?x ex:temp ?v, ?v > 30 .
"""
RULES_QUERY = """
REGISTER RSTREAM <http://ex/q> AS
SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s]
RULES <{rules}>
WHERE {{ ?x <http://ex/alarm> ?v }}
"""


def test_a_rules_derived_triple_is_explained_down_to_the_stream(tmp_path):
    from rdflib import Literal, URIRef

    (tmp_path / "alarm.lars").write_text(RULES)
    engine = RSPEngine(explain=True)
    engine.register_stream("http://ex/s")
    engine.register_query(RULES_QUERY.format(rules=tmp_path / "alarm.lars"), name="q")
    for second in range(4):
        engine.push("http://ex/s", [(URIRef("http://ex/a"), URIRef("http://ex/temp"), Literal(40))],
                    timestamp=second * 1000 + 10)
    reports = engine.advance_to(4000)
    assert reports[-1].to_json()["bindings"] == [{"x": "<http://ex/a>"}]
    tree = engine.explain("q", 4000, {"x": "<http://ex/a>"})
    (derived,) = tree["body"][0]["because"]
    assert derived["by"] == "rule" and derived["rule"].startswith("?x ex:alarm ?v :- [RANGE 2] BOX")
    box = derived["body"][0]
    # time points as the report times they stand for: an element seen at 1010 is in the window of 2000 on
    assert box["window"] == [2000, 4000] and box["witness"] == [2000, 3000, 4000]
    assert [leaf["timestamp"] for leaf in box["because"]] == [1010, 2010, 3010]
    assert {leaf["by"] for leaf in box["because"]} == {"stream"}


def test_without_explain_the_runtime_keeps_nothing():
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    engine.register_query(CONSTRUCT, name="q")
    assert engine.explanations is None
    with pytest.raises(ExplanationUnavailable):
        engine.explain("q", 1000, "<http://ex/a> <http://ex/hot> true .")


# the command line ------------------------------------------------------------------------------------


def test_query_explain_prints_each_report_then_why(capsys):
    code = main(["query", str(ROOT / "queries/barbieri-fig2.rq"),
                 "--stream", f"http://mobileservice.org/positions.trdf={POSITIONS}",
                 "--background", f"http://mobileservice.org/meansOfTransportation.rdf={TRANSPORT}",
                 "--explain", "--explain-format", "json"])
    assert code == 0
    lines = [json.loads(line) for line in capsys.readouterr().out.splitlines()]
    reports = [line for line in lines if "bindings" in line]
    explained = [line for line in lines if "explain" in line]
    assert len(explained) == sum(len(report["bindings"]) for report in reports) > 0
    for line in explained:
        assert line["why"]["matches"] >= 1 and line["why"]["answer"] == line["explain"]


ALARM = """
hot(S)      :- temp(S, V), V >= 30 .
alarm(S)    :- [RANGE 2] BOX hot(S), not maintenance(S) .
@T peak(S)  :- [RANGE 5] @T temp(S, V), V >= 40 .
notify(S)   :- alarm(S), [RANGE 10] DIAMOND peak(S) .
"""
ALARM_STREAM = "1 temp(s7,31)\n2 temp(s7,42)\n3 temp(s7,35)\n3 maintenance(s1)\n4 temp(s7,33)\n"


def test_reason_explain_as_text_and_json(tmp_path, capsys):
    (tmp_path / "alarm.lars").write_text(ALARM)
    (tmp_path / "s.stream").write_text(ALARM_STREAM)
    args = ["reason", str(tmp_path / "alarm.lars"), "--stream", str(tmp_path / "s.stream"), "--explain", "notify(s7)"]
    assert main(args + ["--at", "4"]) == 0
    text = capsys.readouterr().out
    assert text.splitlines()[0] == f"notify(s7) at 4, until 4: rule {tmp_path / 'alarm.lars'}:5:1"
    assert f"temp(s7,42) at 2: stream element, {tmp_path / 's.stream'}:2" in text
    assert "- not maintenance(s7): none at 4" in text
    assert main(args + ["--explain-format", "json"]) == 0          # --at: the last time point, 4
    tree = json.loads(capsys.readouterr().out)
    assert (tree["fact"], tree["t"], tree["horizon"], tree["bounded_by"]) == ("notify(s7)", 4, 4, 0)
    peak = tree["body"][1]
    assert peak["literal"] == "[RANGE 10] DIAMOND peak(s7)" and peak["witness"] == [2]
    assert peak["because"][0]["placed"] == 2


def test_reason_explain_of_what_does_not_hold_and_of_a_mistake(tmp_path, capsys):
    (tmp_path / "alarm.lars").write_text(ALARM)
    (tmp_path / "s.stream").write_text(ALARM_STREAM)
    args = ["reason", str(tmp_path / "alarm.lars"), "--stream", str(tmp_path / "s.stream")]
    assert main(args + ["--explain", "notify(s1)", "--at", "3"]) == 1
    program = tmp_path / "alarm.lars"
    # why not: each rule that could derive it, down the first missing premise that rules derive in turn
    assert capsys.readouterr().out.splitlines() == [
        "notify(s1) does not hold at 3",
        f"  rule {program}:5:1: notify(S) :- alarm(S), [RANGE 10] DIAMOND peak(S) .   with S = s1",
        "    - alarm(s1): none at 3   <- missing",
        f"      rule {program}:3:1: alarm(S) :- [RANGE 2] BOX hot(S), not maintenance(S) .   with S = s1",
        "        - [RANGE 2] BOX hot(s1): none at 1..3   <- missing"]
    assert main(args + ["--explain", "notify(s1", "--at", "3"]) == 2
    assert capsys.readouterr().err.startswith("rsp-plugin: --explain 'notify(s1': ")
    assert main(args + ["--at", "3"]) == 2


def test_reason_explain_a_datalogmtl_program(capsys):
    program, stream = ROOT / "examples/short-stop.mtl", ROOT / "examples/short-stop.txt"
    assert main(["reason", str(program), "--stream", str(stream), "--explain", "ShortStop(veh2)", "--at", "7",
                 "--explain-format", "json"]) == 0
    tree = json.loads(capsys.readouterr().out)
    assert (tree["fact"], tree["t"], tree["horizon"]) == ("ShortStop(veh2)", 7, 7)
    assert [item["literal"] for item in tree["body"]] == [
        "NotPos(veh2)", "Diamondminus[1,1] Pos(veh2)", "Diamondminus[2,2] NotPos(veh2)"]
    lines = stream.read_text().splitlines()
    for item in tree["body"]:
        (leaf,) = item["because"]
        assert leaf["by"] == "data" and item["witness"] == [leaf["t"]]
        written = lines[leaf["source"]["line"] - 1]
        assert written.startswith(leaf["fact"] + "@") and f"{leaf['t']}" in written


def test_reason_explain_an_answer_stream(tmp_path, capsys):
    (tmp_path / "loop.lars").write_text("on(X) :- sensor(X), not off(X) .\noff(X) :- sensor(X), not on(X) .\n"
                                        "alarm :- on(X), [RANGE 2] DIAMOND hot(X) .\n")
    (tmp_path / "s.stream").write_text("1 sensor(a)\n1 hot(a)\n2 sensor(a)\n")
    args = ["reason", str(tmp_path / "loop.lars"), "--stream", str(tmp_path / "s.stream"),
            "--semantics", "answer-stream", "--explain", "alarm", "--explain-format", "json"]
    assert main(args) == 0
    tree = json.loads(capsys.readouterr().out)
    on, hot = tree["body"]
    assert on["because"][0]["body"][1] == {"literal": "not off(a)", "absent": [2, 2]}
    assert hot["witness"] == [1] and hot["because"][0]["source"] == {"file": str(tmp_path / "s.stream"), "line": 2}


def test_query_explain_needs_the_local_engine_and_json(capsys):
    args = ["query", str(ROOT / "queries/barbieri-fig2.rq"), "--stream", f"http://mobileservice.org/positions.trdf={POSITIONS}",
            "--background", f"http://mobileservice.org/meansOfTransportation.rdf={TRANSPORT}", "--explain"]
    assert main(args + ["--engine", "spark"]) == 2
    assert "--explain is given by --engine local" in capsys.readouterr().err
    assert main(args + ["--format", "csv"]) == 2
    assert "--explain writes between the reports" in capsys.readouterr().err
