"""The query language: C-SPARQL and RSP-QL forms, the SPARQL 1.1 body, and one-line located errors."""

from __future__ import annotations

import pytest

from rsp_plugin.core.errors import LocatedError, QuerySyntaxError
from rsp_plugin.query import R2S, CountWindow, NowWindow, RangeWindow, parse_query

STREAM = "FROM STREAM <http://ex/s> [RANGE 10s STEP 1s]"


def test_the_c_sparql_query_of_barbieri_et_al_fig_2():
    query = parse_query("""REGISTER QUERY TotalAmountPerBroker COMPUTE EVERY 1sec AS
PREFIX ex: <http://example/>
PREFIX xsd: <http://www.w3.org/2001/XMLSchema#>
SELECT DISTINCT ?user ?type ?x
FROM <http://mobileservice.org/meansOfTransportation.rdf>
FROM STREAM <http://mobileservice.org/positions.trdf>
[RANGE 10sec STEP 1sec]
WHERE {
  ?user ex:isIn ?x .
  ?user a ex:Commuter .
  ?x a ?type .
  ?user ex:remainingTravelTime ?t .
  FILTER (?t >= "PT30M"^^xsd:duration )
}""")
    assert query.name == "TotalAmountPerBroker" and query.r2s is R2S.RSTREAM and query.form == "SELECT"
    assert query.compute_every == 1000
    assert query.graphs == ("http://mobileservice.org/meansOfTransportation.rdf",)
    assert [(w.stream, w.window, w.name) for w in query.windows] == [
        ("http://mobileservice.org/positions.trdf", RangeWindow(10_000, 1000), None)]


@pytest.mark.parametrize("clause, window", [
    ("[RANGE 10s STEP 1s]", RangeWindow(10_000, 1000)),
    ("[RANGE 500ms STEP 250ms]", RangeWindow(500, 250)),
    ("[RANGE 2m STEP 30s]", RangeWindow(120_000, 30_000)),
    ("[RANGE 1h STEP 1m]", RangeWindow(3_600_000, 60_000)),
    ("[RANGE 1d STEP 1h]", RangeWindow(86_400_000, 3_600_000)),
    ("[RANGE PT10S STEP PT1S]", RangeWindow(10_000, 1000)),
    ("[RANGE PT1M30S STEP PT0.5S]", RangeWindow(90_000, 500)),
    ("[RANGE 10s TUMBLING]", RangeWindow(10_000, 10_000)),
    ("[RANGE TRIPLES 5]", CountWindow(5)),
    ("[TRIPLES 5]", CountWindow(5)),
    ("[NOW]", NowWindow()),
    ("[range 10S step 1S]", RangeWindow(10_000, 1000)),
])
def test_c_sparql_windows(clause, window):
    query = parse_query(f"REGISTER QUERY q COMPUTE EVERY 1s AS SELECT * FROM STREAM <http://ex/s> {clause} "
                        "WHERE { ?s ?p ?o }")
    assert query.windows[0].window == window


def test_rsp_ql_registration_named_windows_and_window_blocks():
    query = parse_query("""
        PREFIX : <http://ex/>
        REGISTER ISTREAM :out AS
        SELECT ?x ?w
        FROM NAMED WINDOW :w1 ON :s [RANGE PT10S STEP PT1S]
        FROM NAMED WINDOW :w2 ON STREAM :t [ELEMENTS 10 STEP 2]
        WHERE { WINDOW :w1 { ?x :p ?y } WINDOW ?w { ?x :q ?z } }""")
    assert query.name == "http://ex/out" and query.r2s is R2S.ISTREAM
    assert [(w.name, w.stream, w.window) for w in query.windows] == [
        ("http://ex/w1", "http://ex/s", RangeWindow(10_000, 1000)),
        ("http://ex/w2", "http://ex/t", CountWindow(10, 2)),
    ]
    assert "GRAPH  :w1 {" in query.sparql and "GRAPH  ?w {" in query.sparql and "WINDOW" not in query.sparql


@pytest.mark.parametrize("register, r2s, stream", [
    ("REGISTER RSTREAM <http://ex/q> AS", R2S.RSTREAM, "http://ex/q"),
    ("REGISTER DSTREAM <http://ex/q> AS", R2S.DSTREAM, "http://ex/q"),
    ("REGISTER STREAM HotRooms AS", R2S.RSTREAM, "HotRooms"),
    ("REGISTER QUERY q AS", R2S.RSTREAM, None),
    ("", R2S.RSTREAM, None),
])
def test_construct_queries_registered_by_iri_make_streams(register, r2s, stream):
    query = parse_query(f"{register} CONSTRUCT {{ ?s <http://ex/hot> true }} {STREAM} WHERE {{ ?s ?p ?o }}")
    assert query.r2s is r2s and query.output_stream == stream and query.form == "CONSTRUCT"


def test_static_graphs_entailment_and_rules_resolve_against_the_base():
    query = parse_query(f"""BASE <file:///data/queries/>
        PREFIX ex: <http://ex/>
        SELECT ?s {STREAM} FROM <onto.ttl> FROM NAMED ex:g
        ENTAILMENT <http://www.w3.org/ns/owl-profile/RL> RULES <hot.lars>
        WHERE {{ ?s ?p ?o GRAPH ex:g {{ ?s ?q ?r }} }}""")
    assert query.graphs == ("file:///data/queries/onto.ttl",)
    assert query.named_graphs == ("http://ex/g",)
    assert query.entailment == "owl-rl" and query.rules == "file:///data/queries/hot.lars"


BODIES = [
    "SELECT ?s WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?r } }",
    "SELECT ?s WHERE { { ?s <http://ex/a> ?o } UNION { ?s <http://ex/b> ?o } }",
    "SELECT ?s WHERE { ?s ?p ?o MINUS { ?s <http://ex/c> ?z } }",
    "SELECT ?s ?w WHERE { ?s ?p ?o BIND(STR(?o) AS ?w) FILTER(STRLEN(?w) > 2 && !isBlank(?s)) }",
    "SELECT ?s WHERE { VALUES ?s { <http://ex/a> <http://ex/b> } ?s ?p ?o }",
    "SELECT ?s ?n WHERE { { SELECT ?s (COUNT(*) AS ?n) WHERE { ?s ?p ?o } GROUP BY ?s } }",
    "SELECT ?p (AVG(?o) AS ?a) (GROUP_CONCAT(?s; SEPARATOR=\",\") AS ?all) WHERE { ?s ?p ?o } GROUP BY ?p "
    "HAVING (COUNT(*) > 1) ORDER BY DESC(?a) LIMIT 10 OFFSET 1",
    "ASK WHERE { ?s ?p ?o FILTER NOT EXISTS { ?o ?p ?s } }",
    "CONSTRUCT WHERE { ?s <http://ex/a> ?o }",
    "SELECT * WHERE { ?s <http://ex/a>/<http://ex/b>* ?o }",
    "SELECT ?s WHERE { ?s ?p ?o } VALUES ?p { <http://ex/a> }",
]


@pytest.mark.parametrize("body", BODIES)
def test_the_sparql_1_1_body_goes_through_rdflib(body):
    form, _, rest = body.partition(" WHERE ")
    if not rest:
        form, rest = body.split(" ", 1)[0], body.split(" ", 1)[1]
    text = f"REGISTER QUERY q AS {form} {STREAM} WHERE {rest}"
    query = parse_query(text)
    assert query.algebra is not None


def test_comments_anywhere_and_keywords_in_any_case():
    query = parse_query("""# a comment before everything
        register query  Q  compute EVERY 2S as   # after the header
        prefix ex: <http://ex/#not-a-comment>
        select ?s # between the parts
        from stream ex:s # the stream
           [range 4S # inside the window
            Step 2s]
        where { ?s ex:p "# not a comment either" . # in the body
        } # at the end""")
    assert query.windows[0].stream == "http://ex/#not-a-comments"  # ex:s, the prefix keeps its #
    assert query.windows[0].window == RangeWindow(4000, 2000) and query.compute_every == 2000


ERRORS = [
    # (query, line, column, message start)
    ("SELECT ?s FROM STREAM <s> [RANGE 10 STEP 1s] WHERE { ?s ?p ?o }", 1, 34, "a duration needs a unit"),
    ("SELECT ?s FROM STREAM <s> [RANGE 10s STEPS 1s] WHERE { ?s ?p ?o }", 1, 38, "unexpected 'STEPS'"),
    ("SELECT ?s FROM STREAM <s> [RANGE 10s STEP 1s]\nWHERE { ?s ?p ?o", 2, 17, "unexpected end of the query"),
    ("SELECT ?s FROM STREAM ex:s [RANGE 10s STEP 1s] WHERE { ?s ?p ?o }", 1, 23, "unknown prefix 'ex:'"),
    ("SELECT ?s FROM STREAM <s> [RANGE 10s STEP 1s]\nWHERE { ?s ex:p ?o }", 2, 12, "unknown prefix 'ex:'"),
    ("SELECT ?s FROM STREAM <s> [RANGE 10s STEP 1s]\nWHERE {\n  ?s ?p ?o .\n  FILTER(?o > ) }", 4, 15,
     "unexpected ')'; expected an expression"),
    ("SELECT ?s WHERE { ?s ?p ?o }", 1, 1, "a continuous query reads a stream"),
    ("SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE 1s STEP 1s]\nWHERE { WINDOW <v> { ?s ?p ?o } }", 2, 16,
     "no window named <v>"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s STEP 1s] ENTAILMENT <http://ex/rdfs> WHERE { ?s ?p ?o }", 1, 57,
     "unsupported entailment <http://ex/rdfs>"),
    ("REGISTER ISTREAM <q> AS SELECT RSTREAM ?s FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }", 1, 32,
     "the query says REGISTER ISTREAM and SELECT RSTREAM"),
    ("REGISTER QUERY a AS REGISTER QUERY b AS SELECT ?s FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }",
     1, 21, "a query is registered once"),
    ("DESCRIBE ?s FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o }", 1, 1, "unexpected 'DESCRIBE'"),
    ("SELECT ?s FROM STREAM <s> [TRIPLES 0] WHERE { ?s ?p ?o }", 1, 36, "expected a positive number"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?s ?p ?o } }", 1, 65, "unexpected '}'"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s STEP 1s] WHERE { ?s ?p \"open }", 1, 60, "unexpected character"),
]


@pytest.mark.parametrize("text, line, column, message", ERRORS)
def test_every_syntax_error_is_one_line_with_line_and_column(text, line, column, message):
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(text, "bad.rq")
    error = caught.value
    assert isinstance(error, LocatedError) and isinstance(error, SyntaxError)
    shown = str(error)
    assert "\n" not in shown
    assert shown.startswith(f"bad.rq:{line}:{column}: {message}"), shown
    assert (error.filename, error.lineno, error.offset) == ("bad.rq", line, column)
