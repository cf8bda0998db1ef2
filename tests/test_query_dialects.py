"""Every RSP dialect into one plan: CQELS-QL, SPARQLstream, the RSP-QL drafts and C-SPARQL.

Each form runs over the same small stream; the expected reports are worked out by
hand from DESIGN.md's window semantics (a window reported at tau holds the
elements with tau - range <= t < tau - end) and the dialect table of docs/queries.md:

    t:      500    1500    2500          4200
            ex:a   ex:b    ex:c          ex:d          (each `?x ex:p ?v`)
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from rdflib import RDF, RDFS, Graph, Literal, URIRef

from rsp_plugin.core.errors import QuerySyntaxError
from rsp_plugin.query import R2S, CountWindow, NowWindow, RangeWindow, ReportPolicy, parse_query
from rsp_plugin.runtime.engine import RSPEngine

EX = "http://ex/"
PREFIX = "PREFIX ex: <http://ex/>\n"
STREAM = [(500, "a"), (1500, "b"), (2500, "c"), (4200, "d")]


def run(query: str, *, report=None, dialect="auto", background=None) -> dict[int, list[str]]:
    """{t: sorted local names of ?x} for every report of `query` over STREAM."""
    engine = RSPEngine()
    engine.register_stream(EX + "s")
    if background is not None:
        engine.add_background(background)
    registered = engine.register_query(PREFIX + query, report=report, dialect=dialect)
    reports: dict[int, list[str]] = {}

    def seen(result):
        shown = result.to_json()
        rows = shown.get("bindings")
        if rows is None:  # CONSTRUCT: the subjects of the triples made
            rows = [{"x": triple.split(" ")[0]} for triple in shown["triples"]]
        reports[result.t] = sorted(row["x"][len("<" + EX):-1] for row in rows)

    registered.subscribe(seen)
    for number, (t, name) in enumerate(STREAM, 1):
        engine.push(EX + "s", [(URIRef(EX + name), URIRef(EX + "p"), Literal(number))], timestamp=t)
    engine.finish()
    return reports


SLIDING = {1000: ["a"], 2000: ["a", "b"], 3000: ["b", "c"], 4000: ["c"], 5000: ["d"], 6000: ["d"]}
#: [.. TO NOW-1s ..]: the window of tau holds tau - 2s <= t < tau - 1s
PAST = {1000: [], 2000: ["a"], 3000: ["b"], 4000: ["c"], 5000: [], 6000: ["d"]}
NEW = {1000: ["a"], 2000: ["b"], 3000: ["c"], 4000: [], 5000: ["d"], 6000: []}
GONE = {1000: [], 2000: [], 3000: ["a"], 4000: ["b"], 5000: ["c"], 6000: []}


# CQELS-QL ------------------------------------------------------------------------------------

@pytest.mark.parametrize("query, expected", [
    # [RANGE 2s SLIDE 1s], reported when the content changed: at 6000 it is {d} as at 5000
    ("SELECT ?x WHERE { STREAM ex:s [RANGE 2s SLIDE 1s] { ?x ex:p ?v } }",
     {1000: ["a"], 2000: ["a", "b"], 3000: ["b", "c"], 4000: ["c"], 5000: ["d"]}),
    # [RANGE 2s]: a sliding window answered on every arrival (t + 1 ms: the window (t - 2s, t]) and
    # when an element leaves (b at 3501, c at 4501); d would leave at 6201, after the replay's end
    ("SELECT ?x WHERE { STREAM <http://ex/s> [RANGE 2s] { ?x ex:p ?v } }",
     {501: ["a"], 1501: ["a", "b"], 2501: ["b", "c"], 3501: ["c"], 4201: ["c", "d"], 4501: ["d"]}),
    ("select ?x where { stream <http://ex/s> [range 2000ms] { ?x ex:p ?v } }",
     {501: ["a"], 1501: ["a", "b"], 2501: ["b", "c"], 3501: ["c"], 4201: ["c", "d"], 4501: ["d"]}),
    # [NOW]: the elements of the latest timestamp; empty again 1 ms later
    ("SELECT ?x WHERE { STREAM ex:s [NOW] { ?x ex:p ?v } }",
     {501: ["a"], 502: [], 1501: ["b"], 1502: [], 2501: ["c"], 2502: [], 4201: ["d"]}),
    # [TRIPLES 2]: the last two elements, after each one
    ("SELECT ?x WHERE { STREAM ex:s [TRIPLES 2] { ?x ex:p ?v } }",
     {500: ["a"], 1500: ["a", "b"], 2500: ["b", "c"], 4200: ["c", "d"]}),
    # two durations: 1s 1000ms = 2 s
    ("SELECT ?x WHERE { STREAM ex:s [RANGE 1s 1000ms SLIDE 1s] { ?x ex:p ?v } }",
     {1000: ["a"], 2000: ["a", "b"], 3000: ["b", "c"], 4000: ["c"], 5000: ["d"]}),
])
def test_cqels_ql_stream_patterns(query, expected):
    assert run(query) == expected
    assert run(query, dialect="cqels") == expected


def test_cqels_ql_reports_on_content_change_and_on_window_close_on_request():
    query = "SELECT ?x WHERE { STREAM ex:s [RANGE 2s SLIDE 1s] { ?x ex:p ?v } }"
    parsed = parse_query(PREFIX + query)
    assert parsed.dialect == "cqels" and parsed.report is ReportPolicy.ON_CONTENT_CHANGE
    assert run(query, report=ReportPolicy.ON_WINDOW_CLOSE) == SLIDING


def test_cqels_ql_windows_are_named_graphs_the_static_part_reads_the_background():
    background = Graph()
    background.add((URIRef(EX + "b"), RDF.type, URIRef(EX + "Car")))
    background.add((URIRef(EX + "d"), RDF.type, URIRef(EX + "Car")))
    query = "SELECT ?x WHERE { ?x a ex:Car STREAM ex:s [RANGE 2s SLIDE 1s] { ?x ex:p ?v } }"
    assert run(query, background=background) == {1000: [], 2000: ["b"], 3000: ["b"], 4000: [], 5000: ["d"]}


def test_two_cqels_windows_over_one_stream():
    query = PREFIX + ("SELECT ?x ?y WHERE { STREAM ex:s [NOW] { ?x ex:p ?v } "
                      "STREAM ex:s [RANGE 2s] { ?y ex:p ?w } }")
    parsed = parse_query(query)
    assert [(w.stream, w.window) for w in parsed.windows] == [
        (EX + "s", RangeWindow(1, 1)), (EX + "s", RangeWindow(2000, 1))]
    assert len({w.name for w in parsed.windows}) == 2


# SPARQLstream ----------------------------------------------------------------------------------

@pytest.mark.parametrize("query, expected", [
    ("SELECT ?x FROM NAMED STREAM ex:s [NOW-2 S SLIDE 1 S] WHERE { ?x ex:p ?v }", SLIDING),
    ("SELECT ?x FROM NAMED STREAM <http://ex/s> [NOW - 2000 MS SLIDE 1 SECONDS] WHERE { ?x ex:p ?v }", SLIDING),
    ("SELECT ?x FROM NAMED STREAM ex:s [NOW-2 S SLIDE 1] WHERE { ?x ex:p ?v }", SLIDING),  # SLIDE's unit: S
    ("SELECT ?x FROM NAMED STREAM ex:s [NOW-2 S TO NOW-1 S SLIDE 1 S] WHERE { ?x ex:p ?v }", PAST),
    ("SELECT ISTREAM ?x FROM NAMED STREAM ex:s [NOW-2 S SLIDE 1 S] WHERE { ?x ex:p ?v }", NEW),
    ("SELECT DSTREAM ?x FROM NAMED STREAM ex:s [NOW-2 S SLIDE 1 S] WHERE { ?x ex:p ?v }", GONE),
    # no SLIDE: the window tumbles (it moves by its own width)
    ("SELECT ?x FROM NAMED STREAM ex:s [NOW-2 S] WHERE { ?x ex:p ?v }", {2000: ["a", "b"], 4000: ["c"], 6000: ["d"]}),
    ("SELECT ?x FROM NAMED STREAM ex:s [TRIPLES 2] WHERE { ?x ex:p ?v }",
     {500: ["a"], 1500: ["a", "b"], 2500: ["b", "c"], 4200: ["c", "d"]}),
])
def test_sparqlstream_windows(query, expected):
    assert run(query) == expected
    assert run(query, dialect="sparqlstream") == expected


@pytest.mark.parametrize("window, expected", [
    ("[NOW-10 S SLIDE 10 S]", RangeWindow(10_000, 10_000)),
    ("[NOW-10 S TO NOW-5 S SLIDE 10 S]", RangeWindow(10_000, 10_000, end=5000)),
    ("[NOW - 500 MS SLIDE 100 MS]", RangeWindow(500, 100)),
    ("[NOW- 1 S SLIDE 1 S]", RangeWindow(1000, 1000)),
    ("[NOW-30 MINUTES TO NOW-10 MINUTES SLIDE 5 MINUTES]", RangeWindow(1_800_000, 300_000, end=600_000)),
    ("[NOW-2 HOURS SLIDE 1 HOURS]", RangeWindow(7_200_000, 3_600_000)),
    ("[NOW-1 DAY SLIDE 1 HOUR]", RangeWindow(86_400_000, 3_600_000)),
    ("[NOW-10 s TO NOW SLIDE 2 s]", RangeWindow(10_000, 2000)),
])
def test_sparqlstream_time_units(window, expected):
    query = parse_query(f"SELECT ?x FROM NAMED STREAM <http://ex/s> {window} WHERE {{ ?x ?p ?o }}")
    assert query.windows[0].window == expected and query.windows[0].name is None
    assert query.dialect == "sparqlstream" and query.report is ReportPolicy.ON_WINDOW_CLOSE


# RSP-QL drafts ---------------------------------------------------------------------------------

WINDOW_BLOCK = "WHERE { WINDOW ex:w { ?x ex:p ?v } }"


@pytest.mark.parametrize("query, expected", [
    (f"SELECT ISTREAM ?x FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] {WINDOW_BLOCK}", NEW),
    (f"SELECT RSTREAM ?x FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] {WINDOW_BLOCK}", SLIDING),
    (f"SELECT DSTREAM ?x FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] {WINDOW_BLOCK}", GONE),
    (f"REGISTER STREAM ex:q AS SELECT ISTREAM ?x FROM NAMED WINDOW ex:w ON STREAM ex:s [RANGE PT2S SLIDE PT1S] "
     f"{WINDOW_BLOCK}", NEW),
    (f"SELECT ?x FROM NAMED WINDOW ON STREAM ex:s [RANGE PT2S STEP PT1S] AS ex:w {WINDOW_BLOCK}", SLIDING),
    (f"SELECT ?x FROM NAMED WINDOW ex:w ON ex:s [FROM NOW-PT2S TO NOW-PT1S STEP PT1S] {WINDOW_BLOCK}", PAST),
    # RSP4J (YASPER) writes the window before ON, a comma between its parts, units apart
    (f"SELECT ?x FROM NAMED WINDOW ex:w [RANGE 2 s, SLIDE 1s] ON STREAM ex:s {WINDOW_BLOCK}", SLIDING),
    (f"CONSTRUCT ISTREAM {{ ?x a ex:Seen }} FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] "
     f"{WINDOW_BLOCK}", NEW),
    # a window declared in a subquery
    ("SELECT ?x WHERE { { SELECT ?x FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] "
     "WHERE { WINDOW ex:w { ?x ex:p ?v } } } }", SLIDING),
])
def test_rsp_ql_draft_forms(query, expected):
    assert run(query) == expected
    assert run(query, dialect="rspql") == expected


def test_rsp_ql_under_entailment_regime():
    background = Graph()
    background.add((URIRef(EX + "Cat"), RDFS.subClassOf, URIRef(EX + "Animal")))
    engine = RSPEngine()
    engine.register_stream(EX + "s")
    engine.add_background(background)
    query = engine.register_query(
        PREFIX + "REGISTER STREAM ex:out UNDER ENTAILMENT REGIME <http://www.w3.org/ns/entailment/RDFS> AS "
        "SELECT ?x FROM NAMED WINDOW ex:w ON ex:s [RANGE PT2S STEP PT1S] WHERE { WINDOW ex:w { ?x a ex:Animal } }",
        dialect="rspql")
    assert query.query.entailment == "rdfs"
    engine.push(EX + "s", [(URIRef(EX + "a"), RDF.type, URIRef(EX + "Cat"))], timestamp=500)
    assert [result.to_json() for result in engine.finish()] == [
        {"t": 1000, "bindings": [{"x": "<http://ex/a>"}]}, {"t": 2000, "bindings": [{"x": "<http://ex/a>"}]}]


def test_rsp_ql_construct_istream_registered_as_a_stream_and_graph_keywords():
    query = parse_query(PREFIX + "REGISTER STREAM ex:out AS CONSTRUCT ISTREAM { ?x a ex:Seen } "
                        "FROM NAMED WINDOW ex:w ON ex:s [RANGE PT10M STEP PT5M] FROM NAMED GRAPH ex:g "
                        "FROM GRAPH ex:h " + WINDOW_BLOCK)
    assert query.r2s is R2S.ISTREAM and query.output_stream == EX + "out" and query.form == "CONSTRUCT"
    assert query.named_graphs == (EX + "g",) and query.graphs == (EX + "h",)
    assert query.windows[0].window == RangeWindow(600_000, 300_000)
    assert "ISTREAM" not in query.sparql and "FROM" not in query.sparql


# C-SPARQL ----------------------------------------------------------------------------------------

def test_c_sparql_register_stream_as_select_is_a_stream_of_bindings():
    query = "REGISTER STREAM DownStream AS SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?v }"
    parsed = parse_query(PREFIX + query)
    assert parsed.name == "DownStream" and parsed.form == "SELECT" and parsed.output_stream is None
    assert run(query) == SLIDING


@pytest.mark.parametrize("query, expected", [
    ("REGISTER QUERY q AS SELECT ?x FROM STREAM ex:s [RANGE 2s STEP 1s] WHERE { ?x ex:p ?v }", SLIDING),
    ("REGISTER QUERY q AS SELECT ?x FROM STREAM ex:s [RANGE 2s TUMBLING] WHERE { ?x ex:p ?v }",
     {2000: ["a", "b"], 4000: ["c"], 6000: ["d"]}),
    ("REGISTER QUERY q AS SELECT ?x FROM STREAM ex:s [RANGE TRIPLES 2] WHERE { ?x ex:p ?v }",
     {500: ["a"], 1500: ["a", "b"], 2500: ["b", "c"], 4200: ["c", "d"]}),
    ("REGISTER QUERY q COMPUTE EVERY 2s AS SELECT ?x FROM STREAM ex:s [RANGE 2s STEP 1s] WHERE { ?x ex:p ?v }",
     {2000: ["a", "b"], 4000: ["c"], 6000: ["d"]}),
    # CityBench's C-SPARQL files name the streams without FROM
    ("select ?x stream <http://ex/s> [range 2000ms slide 1s] where { ?x ex:p ?v }", SLIDING),
])
def test_c_sparql_forms(query, expected):
    assert run(query) == expected
    assert run(query, dialect="csparql") == expected


# one query, three dialects ----------------------------------------------------------------------

CITY = "PREFIX ct: <http://ex/ct#> PREFIX ssn: <http://ex/ssn#> PREFIX sao: <http://ex/sao#>\n"
CSPARQL = CITY + """REGISTER QUERY congestion AS
SELECT ?ob1 ?ob2 ?v1 ?v2
FROM STREAM <http://ex/traffic/1> [RANGE 3s STEP 1s]
FROM STREAM <http://ex/traffic/2> [RANGE 3s STEP 1s]
WHERE {
  ?p1 a ct:CongestionLevel . ?p2 a ct:CongestionLevel .
  { ?ob1 ssn:observedProperty ?p1 ; sao:hasValue ?v1 ; ssn:observedBy <http://ex/sensor/1> . }
  { ?ob2 ssn:observedProperty ?p2 ; sao:hasValue ?v2 ; ssn:observedBy <http://ex/sensor/2> . }
}"""
CQELS = CITY + """select ?ob1 ?ob2 ?v1 ?v2
where {
  ?p1 a ct:CongestionLevel . ?p2 a ct:CongestionLevel .
  stream <http://ex/traffic/1> [range 3000ms slide 1s]
  { ?ob1 ssn:observedProperty ?p1 ; sao:hasValue ?v1 ; ssn:observedBy <http://ex/sensor/1> . }
  stream <http://ex/traffic/2> [range 3000ms slide 1s]
  { ?ob2 ssn:observedProperty ?p2 ; sao:hasValue ?v2 ; ssn:observedBy <http://ex/sensor/2> . }
}"""
RSPQL = CITY + """REGISTER RSTREAM <http://ex/q/congestion> AS
SELECT ?ob1 ?ob2 ?v1 ?v2
FROM NAMED WINDOW <http://ex/w1> ON <http://ex/traffic/1> [RANGE PT3S STEP PT1S]
FROM NAMED WINDOW <http://ex/w2> ON <http://ex/traffic/2> [RANGE PT3S STEP PT1S]
WHERE {
  ?p1 a ct:CongestionLevel . ?p2 a ct:CongestionLevel .
  WINDOW <http://ex/w1> { ?ob1 ssn:observedProperty ?p1 ; sao:hasValue ?v1 ; ssn:observedBy <http://ex/sensor/1> . }
  WINDOW <http://ex/w2> { ?ob2 ssn:observedProperty ?p2 ; sao:hasValue ?v2 ; ssn:observedBy <http://ex/sensor/2> . }
}"""
SENSORS = """@prefix ct: <http://ex/ct#> .
<http://ex/p1> a ct:CongestionLevel . <http://ex/p2> a ct:CongestionLevel . <http://ex/q1> a ct:Speed .
"""
#: (stream, t, observation, property, value): sensor 1's 3700 observation is a speed, not a congestion level
OBSERVATIONS = [(1, 200, "o1a", "p1", 10), (2, 900, "o2a", "p2", 20), (2, 2600, "o2b", "p2", 25),
                (1, 3500, "o1c", "p1", 30), (1, 3700, "o1b", "q1", 50)]
#: by hand: the windows of tau hold tau - 3000 <= t < tau; the replay ends at 6000 (3700 + 3000, floored)
ON_WINDOW_CLOSE = {
    1000: [("o1a", "o2a", 10, 20)], 2000: [("o1a", "o2a", 10, 20)],
    3000: [("o1a", "o2a", 10, 20), ("o1a", "o2b", 10, 25)],
    4000: [("o1c", "o2b", 30, 25)], 5000: [("o1c", "o2b", 30, 25)], 6000: [],
}
#: the same, at the instants whose windows changed (2000 and 5000 hold what 1000 and 4000 held)
ON_CONTENT_CHANGE = {t: rows for t, rows in ON_WINDOW_CLOSE.items() if t not in (2000, 5000)}


def _city_files(tmp_path):
    (tmp_path / "sensors.ttl").write_text(SENSORS)
    for number in (1, 2):
        lines = []
        for stream, t, observation, prop, value in OBSERVATIONS:
            if stream == number:
                o = f"<http://ex/{observation}>"
                lines += [f"{t} {o} <http://ex/ssn#observedProperty> <http://ex/{prop}> .",
                          f"{t} {o} <http://ex/sao#hasValue> \"{value}\"^^<http://www.w3.org/2001/XMLSchema#integer> .",
                          f"{t} {o} <http://ex/ssn#observedBy> <http://ex/sensor/{number}> ."]
        (tmp_path / f"traffic{number}.tnt").write_text("\n".join(lines) + "\n")
    for name, text in (("csparql.rq", CSPARQL), ("cqels.rq", CQELS), ("rspql.rq", RSPQL)):
        (tmp_path / name).write_text(text)


def _query_cli(tmp_path, name, *options):
    done = subprocess.run(
        [sys.executable, "-m", "rsp_plugin.cli", "query", str(tmp_path / name),
         "--stream", f"http://ex/traffic/1={tmp_path / 'traffic1.tnt'}",
         "--stream", f"http://ex/traffic/2={tmp_path / 'traffic2.tnt'}",
         "--background", str(tmp_path / "sensors.ttl"), *options],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    reports = {}
    for line in done.stdout.splitlines():
        report = json.loads(line)
        reports[report["t"]] = sorted(
            (row["ob1"][len("<http://ex/"):-1], row["ob2"][len("<http://ex/"):-1],
             int(row["v1"].split('"')[1]), int(row["v2"].split('"')[1])) for row in report["bindings"])
    return reports


def test_one_citybench_query_in_c_sparql_cqels_ql_and_rsp_ql_gives_the_same_answers(tmp_path):
    _city_files(tmp_path)
    # C-SPARQL and RSP-QL report every window; CQELS-QL when the windows' content changed
    assert _query_cli(tmp_path, "csparql.rq") == ON_WINDOW_CLOSE
    assert _query_cli(tmp_path, "rspql.rq") == ON_WINDOW_CLOSE
    assert _query_cli(tmp_path, "cqels.rq") == ON_CONTENT_CHANGE
    # with the same report policy, the same answers
    assert _query_cli(tmp_path, "cqels.rq", "--report", "on-window-close") == ON_WINDOW_CLOSE
    for name in ("csparql.rq", "rspql.rq"):
        assert _query_cli(tmp_path, name, "--report", "on-content-change") == ON_CONTENT_CHANGE
    for name, dialect in (("csparql.rq", "csparql"), ("cqels.rq", "cqels"), ("rspql.rq", "rspql")):
        assert _query_cli(tmp_path, name, "--dialect", dialect, "--report", "on-window-close") == ON_WINDOW_CLOSE


def test_the_three_dialects_parse_into_the_same_windows():
    plans = [parse_query(text) for text in (CSPARQL, CQELS, RSPQL)]
    assert [plan.dialect for plan in plans] == ["csparql", "cqels", "rspql"]
    for plan in plans:
        assert [(w.stream, w.window) for w in plan.windows] == [
            ("http://ex/traffic/1", RangeWindow(3000, 1000)), ("http://ex/traffic/2", RangeWindow(3000, 1000))]


# the plan, form by form ---------------------------------------------------------------------------

@pytest.mark.parametrize("text, dialect, window, name_given", [
    ("SELECT * FROM STREAM <http://s> [RANGE 10s STEP 2s] WHERE { ?a ?b ?c }", "csparql",
     RangeWindow(10_000, 2000), False),
    ("SELECT * FROM NAMED WINDOW <http://w> ON <http://s> [RANGE PT10S STEP PT2S] WHERE { WINDOW <http://w> "
     "{ ?a ?b ?c } }", "rspql", RangeWindow(10_000, 2000), True),
    ("SELECT * WHERE { STREAM <http://s> [RANGE 10s SLIDE 2s] { ?a ?b ?c } }", "cqels", RangeWindow(10_000, 2000),
     True),
    ("SELECT * FROM NAMED STREAM <http://s> [NOW-10 S SLIDE 2 S] WHERE { ?a ?b ?c }", "sparqlstream",
     RangeWindow(10_000, 2000), False),
    ("SELECT * WHERE { STREAM <http://s> [RANGE 10s TUMBLING] { ?a ?b ?c } }", "cqels", RangeWindow(10_000, 10_000),
     True),
    ("SELECT * WHERE { STREAM <http://s> [TRIPLES 7] { ?a ?b ?c } }", "cqels", CountWindow(7), True),
    ("SELECT * FROM NAMED WINDOW <http://w> ON <http://s> [ELEMENTS 7 STEP 2] WHERE { WINDOW <http://w> "
     "{ ?a ?b ?c } }", "rspql", CountWindow(7, 2), True),
    ("REGISTER QUERY q COMPUTE EVERY 1s AS SELECT * FROM STREAM <http://s> [NOW] WHERE { ?a ?b ?c }", "csparql",
     NowWindow(), False),
    ("SELECT * FROM NAMED WINDOW <http://w> ON <http://s> [FROM NOW-PT2H TO NOW-PT1H STEP PT1H] WHERE "
     "{ WINDOW <http://w> { ?a ?b ?c } }", "rspql", RangeWindow(7_200_000, 3_600_000, end=3_600_000), True),
])
def test_every_dialect_parses_into_the_same_plan(text, dialect, window, name_given):
    query = parse_query(text)
    assert query.dialect == dialect
    assert query.windows[0].window == window and query.windows[0].stream == "http://s"
    assert (query.windows[0].name is not None) == name_given
    assert parse_query(text, dialect=dialect).windows == query.windows


# errors name the dialect --------------------------------------------------------------------------

@pytest.mark.parametrize("dialect, text, place, message", [
    ("csparql", "SELECT ?s WHERE { STREAM <s> [RANGE 3s SLIDE 1s] { ?s ?p ?o } }", "1:19",
     "STREAM <s> [...] { ... } inside WHERE is CQELS-QL, not C-SPARQL"),
    ("cqels", "REGISTER QUERY q COMPUTE EVERY 1s AS SELECT ?s FROM STREAM <s> [RANGE 3s STEP 1s] WHERE { ?s ?p ?o }",
     "1:18", "COMPUTE EVERY is C-SPARQL / RSP-QL, not CQELS-QL"),
    ("cqels", "SELECT ?s FROM STREAM <s> [RANGE TRIPLES 3] WHERE { ?s ?p ?o }", "1:27",
     "[RANGE TRIPLES n] is C-SPARQL, not CQELS-QL"),
    ("rspql", "SELECT ?s FROM NAMED STREAM <s> [NOW-1 S SLIDE 1 S] WHERE { ?s ?p ?o }", "1:11",
     "FROM NAMED STREAM <s> [...] is SPARQLstream, not RSP-QL"),
    ("sparqlstream", "SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE PT1S STEP PT1S] WHERE { WINDOW <w> { ?s ?p ?o } }",
     "1:11", "FROM NAMED WINDOW <w> ON <s> [...] is RSP-QL, not SPARQLstream"),
    ("csparql", "SELECT ?s FROM STREAM <s> [ELEMENTS 3] WHERE { ?s ?p ?o }", "1:27",
     "[ELEMENTS n STEP m] is RSP-QL, not C-SPARQL"),
    ("cqels", "SELECT ?s WHERE { STREAM <s> [RANGE 3s SLIDEX 1s] { ?s ?p ?o } }", "1:40",
     "unexpected 'SLIDEX'; expected a number, a duration (10s, PT10S), SLIDE, STEP, TUMBLING, ',' or ']' "
     "(read as CQELS-QL)"),
    ("auto", "SELECT ?s WHERE { STREAM <s> [RANGE 3s SLIDEX 1s] { ?s ?p ?o } }", "1:40", "(read as CQELS-QL)"),
    ("sparqlstream", "SELECT ?s FROM NAMED STREAM <s> [NOW-10 S SLIDE 10 S] WHERE { ?s ?p ?o } ORDER ?s", "1:80",
     "unexpected '?s'; expected BY (read as SPARQLstream)"),
    ("auto", "SELECT ?s FROM NAMED STREAM <s> [NOW-10 SLIDE 10 S] WHERE { ?s ?p ?o }", "1:38",
     "10 needs a time unit: 10 MS, 10 S, 10 MINUTES, 10 HOURS or 10 DAYS (read as SPARQLstream)"),
    ("auto", "SELECT ?s FROM NAMED STREAM <s> [NOW-1 S TO NOW-5 S SLIDE 1 S] WHERE { ?s ?p ?o }", "1:33",
     "a window from NOW-1000ms to NOW-5000ms holds nothing"),
    ("auto", "SELECT ?s FROM NAMED STREAM <s> [NOW-1 MONTHS SLIDE 1 S] WHERE { ?s ?p ?o }", "1:40",
     "MONTHS: months and years have no fixed length"),
    ("auto", "SELECT ?s WHERE { STREAM ?v [NOW] { ?s ?p ?o } }", "1:26", "a stream is named by its IRI"),
    ("auto", "SELECT ?s WHERE { STREAM <s> [ALL] { ?s ?p ?o } }", "1:30", "[ALL] keeps every element for ever"),
    ("auto", "CONSTRUCT { ?s ?p ?o } WHERE { STREAM <s> [NOW] { ?s ?p ?o } } ", None, None),
    ("auto", "REGISTER STREAM <o> UNDER ENTAILMENT REGIME <http://www.w3.org/ns/entailment/RIF> AS SELECT ?s FROM "
             "STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o }", "1:45",
     "unsupported entailment <http://www.w3.org/ns/entailment/RIF>; UNDER ENTAILMENT REGIME takes one of"),
    ("auto", "SELECT ?s FROM NAMED STREAM <s> [NOW-10 S TO NOW-5 S] ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> "
             "WHERE { ?s ?p ?o }", "1:11", "a window that ends before NOW cannot be combined with ENTAILMENT"),
    ("auto", "REGISTER ISTREAM <q> AS SELECT RSTREAM ?s FROM NAMED WINDOW <w> ON <s> [RANGE PT1S STEP PT1S] WHERE "
             "{ WINDOW <w> { ?s ?p ?o } }", "1:32", "the query says REGISTER ISTREAM and SELECT RSTREAM"),
    ("auto", "CONSTRUCT { STREAM <s> [NOW] { ?s ?p ?o } } WHERE { ?s ?p ?o }", "1:13",
     "a CONSTRUCT template lists the triples to make"),
])
def test_errors_are_located_and_name_the_dialect(dialect, text, place, message):
    if message is None:
        parse_query(text, "q.rq", dialect=dialect)  # accepted
        return
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(text, "q.rq", dialect=dialect)
    shown = str(caught.value)
    assert shown.startswith(f"q.rq:{place}: ") and message in shown and "\n" not in shown, shown


def test_an_unknown_dialect_is_refused():
    with pytest.raises(ValueError, match="unknown dialect 'cql'"):
        parse_query("SELECT * FROM STREAM <s> [RANGE 1s] WHERE { ?a ?b ?c }", dialect="cql")


def test_the_query_command_reads_the_dialect_flag(tmp_path):
    (tmp_path / "q.rq").write_text("REGISTER QUERY q COMPUTE EVERY 1s AS\nPREFIX ex: <http://ex/>\nSELECT ?x\n"
                                   "FROM STREAM ex:s [RANGE 2s STEP 1s]\nWHERE { ?x ex:p ?v }\n")
    (tmp_path / "s.tnt").write_text("500 <http://ex/a> <http://ex/p> \"1\" .\n")
    base = [sys.executable, "-m", "rsp_plugin.cli", "query", str(tmp_path / "q.rq"),
            "--stream", f"http://ex/s={tmp_path / 's.tnt'}"]
    done = subprocess.run([*base, "--dialect", "cqels"], capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip() == (f"rsp-plugin: {tmp_path / 'q.rq'}:1:18: COMPUTE EVERY is C-SPARQL / RSP-QL, not "
                                   "CQELS-QL (the query is read as CQELS-QL: --dialect cqels; --dialect auto reads "
                                   "every dialect)")
    for dialect in ("auto", "csparql"):
        done = subprocess.run([*base, "--dialect", dialect], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0, done.stderr
        assert [json.loads(line)["t"] for line in done.stdout.splitlines()] == [1000, 2000]


# queries people bring from other engines (issue 30) -----------------------------------------------------

SOSA = "http://www.w3.org/ns/sosa/"
LOW_BATTERY = ("REGISTER QUERY LowBattery AS SELECT ?obs ?soc FROM STREAM Telemetry [NOW] WHERE { STREAM Telemetry "
               "{ ?obs sosa:hasSimpleResult ?soc . } FILTER(?soc < 20) }")


def _telemetry(query, *, stream="Telemetry", background=None) -> dict[int, list[str]]:
    """{t: sorted ?obs local names} for `query` over a battery stream: o1 (soc 50) at 500, o2 (soc 10)
    at 1500, o3 (soc 15) at 2500."""
    engine = RSPEngine()
    engine.register_stream(stream)
    if background is not None:
        engine.add_background(background)
    registered = engine.register_query(query)
    reports: dict[int, list[str]] = {}
    registered.subscribe(lambda result: reports.__setitem__(
        result.t, sorted(str(row["obs"])[len(EX):] for row in result.bindings)))
    for t, name, soc in ((500, "o1", 50), (1500, "o2", 10), (2500, "o3", 15)):
        engine.push(stream, [(URIRef(EX + name), URIRef(SOSA + "hasSimpleResult"), Literal(soc))], timestamp=t)
    engine.finish()
    return reports


@pytest.mark.parametrize("dialect", ["auto", "cqels"])
def test_a_cqels4j_query_with_bare_stream_names_reads_as_cqels_ql(dialect):
    # CQELS4J: REGISTER QUERY name AS, FROM STREAM Name [window] declares the window, STREAM Name { }
    # in WHERE reads it; [NOW] is the latest timestamp's elements, answered as they arrive
    query = parse_query(LOW_BATTERY, "low.rq", dialect=dialect)
    assert (query.name, query.dialect, query.report) == ("LowBattery", "cqels", ReportPolicy.ON_CONTENT_CHANGE)
    [clause] = query.windows
    assert (clause.stream, clause.window, clause.name is not None) == ("Telemetry", RangeWindow(1, 1), True)
    assert query.notes == ("low.rq:1:107: note: prefix sosa: not declared; read as <http://www.w3.org/ns/sosa/>",)
    # o2 (10) and o3 (15) are low, each while it is the latest element; the window is empty again 1 ms later
    assert _telemetry(LOW_BATTERY) == {501: [], 502: [], 1501: ["o2"], 1502: [], 2501: ["o3"]}


def test_cqels4j_stream_patterns_read_their_window_alone_and_bare_patterns_the_default_graph():
    background = Graph()
    background.add((URIRef(EX + "o2"), RDF.type, URIRef(EX + "Critical")))
    # one FROM STREAM and no STREAM block: the patterns read the stream (CQELS4J's implicit binding)
    implicit = ("PREFIX ex: <http://ex/>\nSELECT ?obs FROM STREAM Telemetry [RANGE 1s] "
                "WHERE { ?obs sosa:hasSimpleResult ?soc FILTER(?soc < 20) }")
    assert parse_query(implicit).windows[0].name is None
    assert _telemetry(implicit) == {1000: [], 2000: ["o2"], 3000: ["o3"]}   # [RANGE r]: tumbling
    # a STREAM block reads the window; the pattern outside it reads the background only
    joined = ("PREFIX ex: <http://ex/>\nSELECT ?obs FROM STREAM Telemetry [RANGE 1s STEP 1s] "
              "WHERE { STREAM Telemetry { ?obs sosa:hasSimpleResult ?soc } ?obs a ex:Critical }")
    assert parse_query(joined, dialect="cqels").dialect == "cqels"
    assert _telemetry(joined, background=background) == {1000: [], 2000: ["o2"], 3000: []}
    # a STREAM block with no window of its own needs the FROM STREAM it reads
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query("SELECT ?obs FROM STREAM Telemetry [NOW] WHERE { STREAM Sensors { ?obs ?p ?v } }", "q.rq")
    assert str(caught.value) == ("q.rq:1:56: STREAM Sensors { ... } reads the window of FROM STREAM Sensors [...]: "
                                 "declare it before WHERE, or give the window here: STREAM Sensors [RANGE 10s] "
                                 "{ ... } (read as CQELS-QL)")


def test_bare_stream_names_are_cqels4j_s_and_resolve_like_relative_iris():
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(LOW_BATTERY, "low.rq", dialect="csparql")
    assert str(caught.value).startswith("low.rq:1:59: a stream named without <...> (FROM STREAM Telemetry, CQELS4J) "
                                        "is CQELS-QL, not C-SPARQL")
    # a bare name is the relative IRI <Telemetry>: as written without a base, resolved against one
    assert parse_query(LOW_BATTERY, base="http://ex.org/").windows[0].stream == "http://ex.org/Telemetry"
    # RSP-QL's ON takes a bare name too (CQELS4J writes FROM NAMED WINDOW :w ON Sensors [...])
    named = parse_query("PREFIX : <http://ex/> SELECT ?s FROM NAMED WINDOW :w ON Sensors [RANGE 10s] "
                        "WHERE { WINDOW :w { ?s ?p ?o } }")
    assert (named.windows[0].stream, named.windows[0].name) == ("Sensors", "http://ex/w")


def test_well_known_prefixes_may_be_used_undeclared_each_noted_once():
    query = parse_query("PREFIX ex: <http://ex/>\nPREFIX time: <http://ex/mytime#>\n"
                        "SELECT ?s FROM STREAM <http://ex/s> [RANGE 1s STEP 1s]\n"
                        "WHERE { ?s a sosa:Observation ; ssn:x ?v ; time:at ?t . ?s sosa:madeBySensor ?x .\n"
                        "        FILTER(?v > \"1\"^^xsd:integer && datatype(?v) = xsd:integer) }", "q.rq")
    # in text order, at each prefix's first use; a declared prefix (time:) is the query's own
    assert query.notes == (
        "q.rq:4:14: note: prefix sosa: not declared; read as <http://www.w3.org/ns/sosa/>",
        "q.rq:4:33: note: prefix ssn: not declared; read as <http://www.w3.org/ns/ssn/>",
        "q.rq:5:26: note: prefix xsd: not declared; read as <http://www.w3.org/2001/XMLSchema#>",
    )
    assert query.prefixes["time"] == "http://ex/mytime#" and query.prefixes["sosa"] == SOSA
    algebra = str(query.algebra.algebra)
    assert "http://www.w3.org/ns/sosa/Observation" in algebra and "http://ex/mytime#at" in algebra
    # a declared query has no notes; a prefix nobody knows is still an error, where it is written
    assert parse_query("PREFIX sosa: <http://ex/> SELECT ?s FROM STREAM <s> [RANGE 1s] "
                       "WHERE { ?s a sosa:O }").notes == ()
    with pytest.raises(QuerySyntaxError, match=r"q.rq:1:59: unknown prefix 'foo:' \(declare it with PREFIX foo:"):
        parse_query("SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s a sosa:O, foo:Bar }", "q.rq")


def test_the_query_command_prints_each_note_once_on_stderr(tmp_path):
    (tmp_path / "low.rq").write_text(LOW_BATTERY.replace("WHERE", "\nWHERE") + "\n")
    (tmp_path / "t.tnt").write_text(f'1500 <{EX}o2> <{SOSA}hasSimpleResult> "10"^^<http://www.w3.org/2001/'
                                    'XMLSchema#integer> .\n')
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "query", "low.rq", "--stream", "Telemetry=t.tnt",
                           "-q"], capture_output=True, text=True, timeout=120, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    assert done.stderr == "low.rq:2:33: note: prefix sosa: not declared; read as <http://www.w3.org/ns/sosa/>\n"
    assert [json.loads(line)["t"] for line in done.stdout.splitlines()] == [1501]


SRBENCH_Q1 = """PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
PREFIX weather: <http://knoesis.wright.edu/ssw/ont/weather.owl#>
PREFIX srbench: <http://www.cwi.nl/SRBench/>
SELECT ISTREAM ?sensor ?value ?uom
FROM NAMED WINDOW ON STREAM srbench:observations [RANGE PT1H] AS :win
WHERE {
  WINDOW :win {
    ?observation om-owl:procedure ?sensor ;
    a weather:RainfallObservation ;
    om-owl:result ?result .
    ?result om-owl:floatValue ?value ;
    om-owl:uom ?uom .
  }}
"""


def test_the_rsp_ql_drafts_undeclared_default_prefix_is_the_querys_base(tmp_path):
    # SRBench Q1 as the RSP-QL drafts write it: `:win` with no PREFIX :
    (tmp_path / "q1.rq").write_text(SRBENCH_Q1)
    from rsp_plugin.query import parse_query_file

    query = parse_query_file(tmp_path / "q1.rq")
    base = query.base
    assert base.startswith("file:///") and base.endswith("/")
    assert query.windows[0].name == base + "win"
    assert query.windows[0].stream == "http://www.cwi.nl/SRBench/observations"
    assert query.notes == (f"{tmp_path / 'q1.rq'}:5:66: note: prefix : not declared; read as the query's base <{base}>",)
    # a declared BASE is the base; with none at all, `:win` is the relative IRI <win>
    assert parse_query("BASE <http://acme.org/rsp/>\n" + SRBENCH_Q1).windows[0].name == "http://acme.org/rsp/win"
    bare = parse_query(SRBENCH_Q1, "q1.rq")
    assert bare.windows[0].name == "win"
    assert bare.notes == ("q1.rq:5:66: note: prefix : not declared and the query has no base; :win is read as the "
                          "relative IRI <win>",)
    # the window named before ON and again after AS (as issue 30 quotes the drafts): one window
    twice = parse_query(SRBENCH_Q1.replace("WINDOW ON STREAM", "WINDOW :win ON STREAM"), "q1.rq", base="http://ex/")
    assert [(clause.name, clause.stream) for clause in twice.windows] == [
        ("http://ex/win", "http://www.cwi.nl/SRBench/observations")]
    with pytest.raises(QuerySyntaxError, match=r"q1.rq:5:71: the window is named twice, <win> and <other>"):
        parse_query(SRBENCH_Q1.replace("WINDOW ON STREAM", "WINDOW :win ON STREAM").replace("AS :win", "AS :other"),
                    "q1.rq")
    # the drafts' DEBS query: FROM NAMED WINDOW :wind ON s:trips
    debs = parse_query("PREFIX s: <http://debs2015.org/streams/>\nSELECT (COUNT(?ride) AS ?rideCount)\n"
                       "FROM NAMED WINDOW :wind ON s:trips [RANGE PT1H STEP PT1H]\n"
                       "WHERE { WINDOW :wind { ?ride <http://debs2015.org/onto#distance> ?distance "
                       "FILTER(?distance > 2) } }", base="http://ex.org/q/")
    assert (debs.windows[0].name, debs.windows[0].stream) == ("http://ex.org/q/wind", "http://debs2015.org/streams/trips")


def test_rsp4j_relative_stream_iris_match_the_stream_given_as_written(tmp_path):
    # RSP4J writes FROM NAMED WINDOW <window2> ON <stream2>; `--stream stream2=FILE` names that stream,
    # in a folder whose name has a '+' (an IRI keeps it: RFC 3987; Path.as_uri() would write %2B)
    folder = tmp_path / "a+b"
    folder.mkdir()
    (folder / "r.rq").write_text("REGISTER RSTREAM <s2> AS\nSELECT ?s\n"
                                 "FROM NAMED WINDOW <window2> ON <stream2> [RANGE PT2S STEP PT2S]\n"
                                 "WHERE { WINDOW <window2> { ?s ?p ?o } }\n")
    (folder / "s2.tnt").write_text("500 <http://ex/a> <http://ex/p> <http://ex/b> .\n"
                                   "2500 <http://ex/c> <http://ex/p> <http://ex/d> .\n")
    from rsp_plugin.query import parse_query_file

    query = parse_query_file(folder / "r.rq")
    assert query.base.endswith("/a+b/") and query.windows[0].stream == query.base + "stream2"
    run = [sys.executable, "-m", "rsp_plugin.cli", "query", "r.rq"]
    for given in ("stream2", query.base + "stream2"):
        done = subprocess.run([*run, "--stream", f"{given}=s2.tnt"], capture_output=True, text=True, timeout=120,
                              cwd=folder)
        assert done.returncode == 0, done.stderr
        assert [json.loads(line) for line in done.stdout.splitlines()] == [
            {"t": 2000, "bindings": [{"s": "<http://ex/a>"}]}, {"t": 4000, "bindings": [{"s": "<http://ex/c>"}]}]
    done = subprocess.run([*run, "--stream", "stream3=s2.tnt"], capture_output=True, text=True, timeout=120,
                          cwd=folder)
    assert done.returncode == 2
    assert done.stderr == (f"rsp-plugin: r.rq:3:1: stream <{query.base}stream2> is not registered "
                           "(registered: <stream3>)\n")


def test_a_file_iri_encodes_only_what_an_iri_must():
    # RFC 3987: sub-delimiters, ':' and '@' and non-ASCII letters stay; space, '%', '#', '?' and the like
    # are percent-encoded (UTF-8), and the engine reads the path back from it
    from rsp_plugin.core.iris import file_iri
    from rsp_plugin.runtime.engine import _local_path

    path = "/data/a+b/x=1,y;z(2)!$&'*@host:8/é 日 %#?[x].ttl"
    iri = file_iri(path)
    assert iri == "file:///data/a+b/x=1,y;z(2)!$&'*@host:8/é%20日%20%25%23%3F%5Bx%5D.ttl"
    assert str(_local_path(iri)) == path


ENTAILMENT_RDFS = "<http://www.w3.org/ns/entailment/RDFS>"


@pytest.mark.parametrize("text", [
    # inside REGISTER (the drafts' example), before the query, after SELECT's projection, after FROM NAMED
    # WINDOW, after a CONSTRUCT template
    f"REGISTER RSTREAM <q> UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS} AS SELECT ?x FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] "
    "WHERE { WINDOW <w> { ?x a ex:C } }",
    f"UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS}\nSELECT ?x FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] WHERE {{ WINDOW <w> "
    "{ ?x a ex:C } }",
    f"SELECT ?x UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS} FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] WHERE {{ WINDOW <w> "
    "{ ?x a ex:C } }",
    f"SELECT ?x FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS} WHERE {{ WINDOW <w> "
    "{ ?x a ex:C } }",
    f"CONSTRUCT {{ ?x a ex:D }} UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS} FROM NAMED WINDOW <w> ON <s> [RANGE PT1S] "
    "WHERE { WINDOW <w> { ?x a ex:C } }",
])
def test_under_entailment_regime_is_read_wherever_the_rsp_ql_drafts_write_it(text):
    query = parse_query(PREFIX + text.replace("{{", "{").replace("}}", "}"), "q.rq")
    assert (query.entailment, query.dialect) == ("rdfs", "rspql")
    assert query.windows[0].window == RangeWindow(1000, 1000)


def test_two_different_entailment_regimes_are_one_too_many():
    with pytest.raises(QuerySyntaxError, match="q.rq:1:103: a query has one ENTAILMENT"):
        parse_query(f"SELECT ?x UNDER ENTAILMENT REGIME <http://www.w3.org/ns/entailment/OWL-RL> FROM STREAM <s> "
                    f"[RANGE 1s] UNDER ENTAILMENT REGIME {ENTAILMENT_RDFS} WHERE {{ ?x ?p ?o }}", "q.rq")
