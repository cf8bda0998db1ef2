"""`rsp-plugin query`: the command-line contract of DESIGN.md, run as a real process."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import owlrl
import pytest
from rdflib import Graph

ROOT = Path(__file__).parent.parent
QUERIES = ROOT / "queries"
CSRBENCH = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
FIG2 = ["--stream", f"http://mobileservice.org/positions.trdf={QUERIES / 'data' / 'positions.tnt'}",
        "--background",
        f"http://mobileservice.org/meansOfTransportation.rdf={QUERIES / 'data' / 'meansOfTransportation.ttl'}"]


def rsp(*args, cwd=None):
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *map(str, args)],
                          capture_output=True, text=True, cwd=cwd)


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def window_graph(stream: Path, tau: int, size: int) -> Graph:
    """The oracle's window: the triples of a .tnt file with tau - size <= t < tau, in a fresh graph."""
    graph = Graph()
    text = "\n".join(line.split(" ", 1)[1] for line in stream.read_text().splitlines()
                     if line.strip() and tau - size <= int(line.split(" ", 1)[0]) < tau)
    graph.parse(data=text, format="nt")
    return graph


def rows(result, names) -> list[dict]:
    """rdflib's answer in the contract's form (N-Triples terms), sorted as the command sorts them."""
    out = []
    for row in result:
        out.append({name: row[name].n3() for name in names if row[name] is not None})
    return sorted(out, key=lambda row: tuple(row.get(name, "") for name in names))


def test_barbieri_fig2_prints_the_expected_lines_and_agrees_with_rdflib():
    done = rsp("query", QUERIES / "barbieri-fig2.rq", *FIG2)
    assert done.returncode == 0, done.stderr
    expected = [json.loads(line) for line in (QUERIES / "barbieri-fig2.expected.jsonl").read_text().splitlines()]
    assert lines(done.stdout) == expected
    assert done.stdout.splitlines()[0] == (
        '{"t": 1000, "bindings": [{"user": "<http://example/alice>", "type": "<http://example/RegionalTrain>", '
        '"x": "<http://example/train_R2041>"}]}')
    # every 1 s from the first element (0) up to the last window reaching the last one (12000 + 10 s)
    assert [line["t"] for line in expected] == list(range(1000, 23000, 1000))
    body = (QUERIES / "barbieri-fig2.rq").read_text()
    sparql = "\n".join(line for line in body.splitlines()
                       if not line.startswith(("REGISTER", "FROM", "#")))
    background = Graph().parse(QUERIES / "data" / "meansOfTransportation.ttl")
    for line in expected:
        graph = window_graph(QUERIES / "data" / "positions.tnt", line["t"], 10_000)
        graph += background
        assert line["bindings"] == rows(graph.query(sparql), ["user", "type", "x"]), line["t"]


def test_barbieri_fig2_under_rdfs_sees_entailed_commuters_and_trains():
    done = rsp("query", QUERIES / "barbieri-fig2-rdfs.rq", *FIG2)
    assert done.returncode == 0, done.stderr
    got = lines(done.stdout)
    assert got == [json.loads(line) for line in (QUERIES / "barbieri-fig2-rdfs.expected.jsonl").read_text().splitlines()]
    body = (QUERIES / "barbieri-fig2-rdfs.rq").read_text()
    sparql = "\n".join(line for line in body.splitlines() if not line.startswith(("REGISTER", "FROM", "#", "ENTAIL")))
    background = Graph().parse(QUERIES / "data" / "meansOfTransportation.ttl")
    for line in got:
        graph = window_graph(QUERIES / "data" / "positions.tnt", line["t"], 10_000)
        graph += background
        owlrl.DeductiveClosure(owlrl.RDFS_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(graph)
        expected = [row for row in rows(graph.query(sparql), ["user", "type", "x"])
                    if row["type"] != "<http://www.w3.org/2000/01/rdf-schema#Resource>"]  # owlrl's rdfs4 extras
        assert line["bindings"] == expected, line["t"]
    bob = {"user": "<http://example/bob>", "type": "<http://example/Station>", "x": "<http://example/MilanoCentrale>"}
    assert bob in got[2]["bindings"]  # bob is a Pendolare: a Commuter by rdfs:subClassOf


def test_a_csrbench_query_with_a_join_filter_and_aggregates_agrees_with_rdflib():
    query = QUERIES / "csrbench" / "max-temperature.rq"
    done = rsp("query", query, "--stream", f"http://ex.org/csrbench={CSRBENCH}")
    assert done.returncode == 0, done.stderr
    got = lines(done.stdout)
    assert [line["t"] for line in got] == [1000, 2000, 3000, 4000, 5000, 6000, 7000, 8000]
    sparql = "\n".join(line for line in query.read_text().splitlines() if not line.startswith(("REGISTER", "FROM", "#")))
    for line in got:
        result = window_graph(CSRBENCH, line["t"], 3000).query(sparql)
        expected = [{name: row[name].n3() for name in ("sensor", "max", "avg", "n")} for row in result]
        for ours, theirs in zip(line["bindings"], expected, strict=True):
            assert ours["sensor"] == theirs["sensor"] and ours["n"] == theirs["n"]
            # values by value: the stream writes "79"^^xsd:double, rdflib's parser makes it "79.0"
            for name in ("max", "avg"):
                assert float(ours[name].split('"')[1]) == pytest.approx(float(theirs[name].split('"')[1]))


def test_construct_prints_triples_and_ask_a_boolean(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text("500 <http://ex/a> <http://ex/p> <http://ex/b> .\n")
    construct = tmp_path / "c.rq"
    construct.write_text("CONSTRUCT { ?o <http://ex/back> ?s } FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                         "WHERE { ?s <http://ex/p> ?o }")
    ask = tmp_path / "a.rq"
    ask.write_text("ASK FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/p> ?o }")
    assert rsp("query", construct, "--stream", f"http://ex/s={stream}").stdout.splitlines() == [
        '{"t": 1000, "triples": ["<http://ex/b> <http://ex/back> <http://ex/a> ."]}']
    assert rsp("query", ask, "--stream", f"http://ex/s={stream}").stdout.splitlines() == [
        '{"t": 1000, "boolean": true}']


def test_sparql_json_results_on_request(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text('500 <http://ex/a> <http://ex/p> "5"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
                      '600 <http://ex/b> <http://ex/p> "x"@en .\n')
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?s ?o FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/p> ?o }")
    done = rsp("query", query, "--stream", f"http://ex/s={stream}", "--format", "sparql-jsonl")
    assert lines(done.stdout) == [{"t": 1000, "head": {"vars": ["s", "o"]}, "results": {"bindings": [
        {"s": {"type": "uri", "value": "http://ex/a"},
         "o": {"type": "literal", "value": "5", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
        {"s": {"type": "uri", "value": "http://ex/b"}, "o": {"type": "literal", "value": "x", "xml:lang": "en"}},
    ]}}]
    # sparql-json: the whole run is one W3C document, the time its first variable (as CSV's first column)
    done = rsp("query", query, "--stream", f"http://ex/s={stream}", "--format", "sparql-json")
    time = {"type": "literal", "value": "1000", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}
    assert json.loads(done.stdout) == {"head": {"vars": ["t", "s", "o"]}, "results": {"bindings": [
        {"t": time, "s": {"type": "uri", "value": "http://ex/a"},
         "o": {"type": "literal", "value": "5", "datatype": "http://www.w3.org/2001/XMLSchema#integer"}},
        {"t": time, "s": {"type": "uri", "value": "http://ex/b"}, "o": {"type": "literal", "value": "x", "xml:lang": "en"}},
    ]}}


def test_bad_and_late_lines_are_reported_counted_and_skipped(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text(
        "0 <http://ex/a> <http://ex/p> <http://ex/o> .\n"
        "500 <http://ex/b> <http://ex/p> .\n"                  # no object
        "1500 <http://ex/c> <http://ex/p> <http://ex/o> .\n"
        "1200 <http://ex/d> <http://ex/p> <http://ex/o> .\n"   # out of order, inside the current window: taken
        "noon <http://ex/e> <http://ex/p> <http://ex/o> .\n"   # not a timestamp
        "2500 <http://ex/f> <http://ex/p> <http://ex/o> .\n"
        "900 <http://ex/g> <http://ex/p> <http://ex/o> .\n")   # older than every window still to come: late
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x <http://ex/p> ?o }")
    done = rsp("query", query, "--stream", f"http://ex/s={stream}")
    assert done.returncode == 0
    assert [(line["t"], [b["x"] for b in line["bindings"]]) for line in lines(done.stdout)] == [
        (1000, ["<http://ex/a>"]), (2000, ["<http://ex/c>", "<http://ex/d>"]), (3000, ["<http://ex/f>"])]
    errors = done.stderr.splitlines()
    assert errors[0] == f"{stream}:2: not an N-Triples triple after the timestamp: expected <s> <p> <o> ."
    assert errors[1].startswith(f"{stream}:5: not a timestamp: 'noon'")
    assert errors[2].startswith(f"{stream}:7: late: timestamp 900 is older than every window still to be reported")
    assert errors[3] == "rsp-plugin: 3 stream lines set aside (see above)"
    assert "Traceback" not in done.stderr


def test_a_syntax_error_is_one_line_and_exit_status_2(tmp_path):
    query = tmp_path / "bad.rq"
    query.write_text("SELECT ?x\nFROM STREAM <http://ex/s> [RANGE 1s STEP 1s]\nWHERE { ?x ?p }\n")
    stream = tmp_path / "s.tnt"
    stream.write_text("")
    done = rsp("query", query, "--stream", f"http://ex/s={stream}")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.count("\n") == 1 and done.stderr.startswith(f"rsp-plugin: {query}:3:")
    assert "Traceback" not in done.stderr


@pytest.mark.parametrize("args, message", [
    (["--background", "missing.ttl"], "rsp-plugin: missing.ttl: cannot read the background graph"),
    (["--background", "http://ex/g=missing.ttl"], "rsp-plugin: missing.ttl: cannot read the background graph"),
])
def test_user_mistakes_on_the_command_line_are_one_line(tmp_path, args, message):
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ?p ?o }")
    stream = tmp_path / "s.tnt"
    stream.write_text("")
    done = rsp("query", query, "--stream", f"http://ex/s={stream}", *args, cwd=tmp_path)
    assert done.returncode == 2 and done.stderr.startswith(message) and done.stderr.count("\n") == 1


def test_a_missing_stream_file_and_an_unread_stream_are_one_line_errors(tmp_path):
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ?p ?o }")
    done = rsp("query", query, "--stream", f"http://ex/s={tmp_path / 'nope.tnt'}")
    assert done.returncode == 2 and "nope.tnt: cannot read the stream" in done.stderr
    other = tmp_path / "s.tnt"
    other.write_text("")
    done = rsp("query", query, "--stream", f"http://ex/other={other}")
    assert done.returncode == 2
    assert done.stderr == f"rsp-plugin: {query}:1:11: stream <http://ex/s> is not registered (registered: <http://ex/other>)\n"


def test_timestamped_graphs_in_trig_and_nquads(tmp_path):
    trig = tmp_path / "s.trig"
    trig.write_text("""@prefix ex: <http://ex/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
@prefix xsd: <http://www.w3.org/2001/XMLSchema#> .
ex:g1 { ex:a ex:p ex:o . ex:b ex:p ex:o . }
ex:g1 prov:generatedAtTime "1970-01-01T00:00:00.500Z"^^xsd:dateTime .
ex:g2 { ex:c ex:p }
ex:g3 { ex:d ex:p ex:o }
ex:g3 prov:generatedAtTime "1500" .
ex:g4 { ex:e ex:p ex:o }
""")
    nquads = tmp_path / "s.nq"
    nquads.write_text("<http://ex/f> <http://ex/p> <http://ex/o> <http://ex/g5> .\n"
                      "<http://ex/g5> <http://www.w3.org/ns/prov#generatedAtTime> \"700\" .\n"
                      "not a quad\n")
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM STREAM <http://ex/t> [RANGE 1s STEP 1s] "
                     "WHERE { ?x <http://ex/p> ?o }")
    done = rsp("query", query, "--stream", f"http://ex/s={trig}", "--stream", f"http://ex/t={nquads}")
    assert [(line["t"], [b["x"][-2] for b in line["bindings"]]) for line in lines(done.stdout)] == [
        (1000, ["a", "b", "f"]), (2000, ["d"])]
    assert done.stderr.splitlines() == [
        f"{trig}:6: not TriG: objectList expected; the block is set aside",
        f"{trig}:9: graph <http://ex/g4> has no prov:generatedAtTime; set aside",
        f"{nquads}:3: not an N-Quads line: expected <s> <p> <o> <g> .",
        "rsp-plugin: 3 stream lines set aside (see above)",
    ]


def test_plain_ntriples_and_turtle_documents_are_one_moment_each(tmp_path):
    first = tmp_path / "a.nt"
    first.write_text("<http://ex/a> <http://ex/p> <http://ex/o> .\n")
    second = tmp_path / "b.ttl"
    second.write_text("@prefix ex: <http://ex/> . ex:b ex:p ex:o .\n")
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x <http://ex/p> ?o }")
    done = rsp("query", query, "--stream", f"http://ex/s={first}", "--stream", f"http://ex/s={second}@1500")
    assert [(line["t"], [b["x"] for b in line["bindings"]]) for line in lines(done.stdout)] == [
        (1000, ["<http://ex/a>"]), (2000, ["<http://ex/a>", "<http://ex/b>"]), (3000, ["<http://ex/b>"])]


def test_a_small_file_is_replayed_element_by_element_and_prints_what_the_block_way_prints(tmp_path, monkeypatch,
                                                                                         capsys):
    """A stream file smaller than `BLOCK_REPLAY_BYTES` is replayed element by element (the block way's start
    costs more than its lines: issue 29, start-up): the same reports, the same lines set aside, the same
    messages, byte for byte, as the block way, on bad, late, long, undecodable and out-of-range lines (and
    an out-of-range moment, which the block way's reader once failed on with a traceback)."""
    import rsp_plugin.runtime.replay as replay
    from rsp_plugin.bench import sosa
    from rsp_plugin.cli import main

    bad = tmp_path / "bad.tnt"
    bad.write_bytes(
        b"0 <http://ex/a> <http://ex/p> <http://ex/o> .\n"
        b"500 <http://ex/b> <http://ex/p> .\n"
        b"1500 <http://ex/c> <http://ex/p> \"caf\xe9\" .\n"              # not UTF-8
        b"1200 <http://ex/d> <http://ex/p> \"" + b"x" * 300 + b"\" .\n"  # longer than --max-line-bytes
        b"1300 <http://ex/d> <http://ex/p> \"d\"@en .\n"
        b"99999999999999999999 <http://ex/e> <http://ex/p> <http://ex/o> .\n"
        b"noon <http://ex/e> <http://ex/p> <http://ex/o> .\n"
        b"2500 <http://ex/f> <http://ex/p> _:b1 .\n"
        b"900 <http://ex/g> <http://ex/p> <http://ex/o> .\n"
        b"2600 <http://ex/h> <http://ex/p> <http://ex/o> ")
    moment = tmp_path / "a.nt"
    moment.write_text("<http://ex/a> <http://ex/p> <http://ex/o> .\n<http://ex/b> <http://ex/p> .\n")
    select = tmp_path / "q.rq"
    select.write_text("SELECT ?x ?o FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x <http://ex/p> ?o }")
    construct = tmp_path / "c.rq"
    construct.write_text("CONSTRUCT { ?o <http://ex/back> ?x } FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] "
                         "WHERE { ?x <http://ex/p> ?o }")
    readings = tmp_path / "sosa.tnt"
    sosa.write(readings, 300, rate=10)
    aggregate = tmp_path / "aggregate.rq"
    aggregate.write_text(sosa.query_text("off") + "\n")
    runs = [[select, "--stream", f"http://ex/s={bad}", "--max-line-bytes", "200"],
            [construct, "--stream", f"http://ex/s={bad}", "--max-line-bytes", "200", "--format", "trig"],
            [select, "--stream", f"http://ex/s={moment}@1500", "--format", "csv"],
            [select, "--stream", f"http://ex/s={moment}@{1 << 62}"],  # (a moment out of range: set aside)
            [select, "--stream", f"http://ex/s={moment}@{10 ** 20}"],  # (and one no int64 holds)
            [aggregate, "--stream", f"{sosa.STREAM}={readings}"]]
    assert all(replay._small_file(path) for path in (bad, moment, readings))
    ways = {}
    for way, smallest_block in (("elements", replay.BLOCK_REPLAY_BYTES), ("blocks", 0)):
        monkeypatch.setattr(replay, "BLOCK_REPLAY_BYTES", smallest_block)
        for arguments in runs:
            status = main(["query", *map(str, arguments)])
            ways.setdefault(way, []).append((status, *capsys.readouterr()))
    assert ways["elements"] == ways["blocks"]
    printed = [out for _, out, _ in ways["blocks"]]
    assert all(printed[:3]) and not printed[3] and not printed[4] and len(printed[5].splitlines()) > 5
    assert ways["blocks"][3][2].splitlines() == [
        f"{moment}:1: time point {1 << 62} is out of range (at most {(1 << 62) - 1} either way)",
        f"{moment}:2: not an N-Triples triple: expected <s> <p> <o> .",
        "rsp-plugin: 2 stream lines set aside (see above)"]
    assert ways["blocks"][4][2].splitlines()[0] == (
        f"{moment}:1: time point {10 ** 20} is out of range (at most {(1 << 62) - 1} either way)")
    assert [line.split(":")[1] for line in ways["blocks"][0][2].splitlines()[:-1]] == [
        "2", "3", "4", "6", "7", "9", "10"]
