"""`rsp_plugin.RSPEngine`, the embeddable runtime: registration, input, time, observation, snapshots."""

from __future__ import annotations

import random

import pytest
from rdflib import Graph, Literal, Namespace

import rsp_plugin
from rsp_plugin.runtime import state
from rsp_plugin import QueryResult, ReportPolicy, RSPEngine, TimestampedGraph
from rsp_plugin.core.errors import QuerySyntaxError
from rsp_plugin.io.formats import read_tnt

EX = Namespace("http://ex/")
S = "http://ex/s"
SELECT = "PREFIX ex: <http://ex/> SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?o }"


def engine_with(query: str = SELECT, **options) -> tuple[RSPEngine, object]:
    engine = RSPEngine()
    engine.register_stream(S)
    return engine, engine.register_query(query, **options)


def xs(result: QueryResult) -> list[str]:
    return [str(row["x"]).rsplit("/", 1)[1] for row in result.bindings]


def test_the_package_exports_the_runtime():
    assert rsp_plugin.RSPEngine is RSPEngine and rsp_plugin.parse_query and rsp_plugin.R2S.ISTREAM


def test_push_triples_graphs_and_timestamped_graphs_and_observe_by_callback_and_iterator():
    engine, query = engine_with()
    seen, everything = [], []
    query.subscribe(seen.append)
    engine.subscribe(everything.append)
    iterated = query.results()
    list(iterated)  # start collecting
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=100)
    graph = Graph()
    graph.add((EX.b, EX.p, EX.o))
    engine.push(S, graph, timestamp=600)
    second = Graph()
    second.add((EX.c, EX.p, Literal(5)))
    engine.push(S, TimestampedGraph(second, 1500))
    returned = engine.advance_to(2000)
    assert [(r.t, xs(r)) for r in returned] == [(1000, ["a", "b"]), (2000, ["a", "b", "c"])]
    assert seen == returned and everything == returned
    assert [(r.t, xs(r)) for r in query.results()] == [(1000, ["a", "b"]), (2000, ["a", "b", "c"])]
    assert list(query.results()) == []  # drained
    assert returned[1].bindings[2] == {"x": EX.c}


def test_the_watermark_reports_every_tau_up_to_it_and_nothing_after():
    engine, _ = engine_with()
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=100)
    assert [r.t for r in engine.advance_to(999)] == []
    assert [r.t for r in engine.advance_to(1000)] == [1000]
    assert [r.t for r in engine.advance_to(1000)] == []
    engine.push(S, [(EX.b, EX.p, EX.o)], timestamp=1000)  # at the watermark: on time, for tau = 2000
    assert [(r.t, xs(r)) for r in engine.advance_to(3500)] == [(2000, ["a", "b"]), (3000, ["b"])]


def test_micro_batches_give_the_same_results_as_one_push():
    rnd = random.Random(7)
    lines = sorted((rnd.randint(0, 9000), f"<http://ex/i{rnd.randint(0, 9)}>") for _ in range(120))
    text = [f"{t} {s} <http://ex/p> <http://ex/o> ." for t, s in lines]

    def run(batches: int):
        engine, _ = engine_with()
        out = []
        size = len(text) // batches + 1
        for start in range(0, len(text), size):
            chunk = text[start:start + size]
            engine.push(S, read_tnt(chunk, engine.terms, tick_ms=1))
            out += engine.advance_to(int(chunk[-1].split()[0]))  # the watermark follows the data
        out += engine.finish()
        return [(r.t, xs(r)) for r in out]

    once = run(1)
    assert once and run(7) == once and run(40) == once


def test_registration_mistakes_are_raised_with_their_place():
    engine, _ = engine_with()
    with pytest.raises(QuerySyntaxError, match="stream <http://ex/nowhere> is not registered"):
        engine.register_query("SELECT ?x FROM STREAM <http://ex/nowhere> [RANGE 1s STEP 1s] WHERE { ?x ?p ?o }")
    engine.register_query("REGISTER QUERY q AS " + SELECT)
    with pytest.raises(QuerySyntaxError, match="a query named 'q' is registered already"):
        engine.register_query("REGISTER QUERY q AS " + SELECT)
    with pytest.raises(QuerySyntaxError, match=r"\[NOW\] needs COMPUTE EVERY"):
        engine.register_query("SELECT ?x FROM STREAM <http://ex/s> [NOW] WHERE { ?x ?p ?o }")
    with pytest.raises(KeyError, match="stream <http://ex/t> is not registered"):
        engine.push("http://ex/t", [(EX.a, EX.p, EX.o)], timestamp=0)


def test_streams_and_queries_come_and_go_at_any_time():
    engine, first = engine_with()
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=100)
    assert [r.query for r in engine.advance_to(1000)] == [first.name]
    second = engine.register_query("REGISTER QUERY later AS " + SELECT)
    assert second.windows[0][1] is first.windows[0][1]  # the same window, shared
    engine.push(S, [(EX.b, EX.p, EX.o)], timestamp=1200)
    assert [(r.query, r.t, xs(r)) for r in engine.advance_to(2000)] == [
        (first.name, 2000, ["a", "b"]), ("later", 2000, ["a", "b"])]  # reports after its registration
    with pytest.raises(ValueError, match="read by queries"):
        engine.unregister_stream(S)
    engine.unregister_query(first)
    assert [(r.query, r.t) for r in engine.advance_to(3000)] == [("later", 3000)]
    engine.unregister_query("later")
    assert engine.queries == {} and not engine._windows
    engine.unregister_stream(S)
    assert engine.streams == []


def test_malformed_and_late_input_goes_to_rejected_and_the_stream_goes_on():
    engine, _ = engine_with()
    engine.push(S, [(EX.a, EX.p, EX.o), ("not", "a triple", "at all", "!"), (EX.b, EX.p, EX.o)], timestamp=100)
    engine.advance_to(3000)
    engine.push(S, [(EX.c, EX.p, EX.o)], timestamp=500)   # no window still to come holds 500
    engine.push(S, [(EX.d, EX.p, EX.o)], timestamp=-5)
    assert [(r.filename, r.line, r.reason.split(":")[0]) for r in engine.rejected] == [
        (S, 2, "not an RDF triple"), (S, 4, "late"), (S, 5, "timestamp -5 is before the start of the timeline (0)")]


def test_non_empty_content_policy_and_sparql_json_results():
    engine, _ = engine_with(report=ReportPolicy.NON_EMPTY_CONTENT)
    engine.push(S, [(EX.a, EX.p, Literal("x", lang="en"))], timestamp=100)
    engine.push(S, [(EX.b, EX.p, EX.o)], timestamp=5100)
    results = engine.finish()
    assert [r.t for r in results] == [1000, 2000, 6000, 7000]
    assert results[0].to_sparql_json() == {"t": 1000, "head": {"vars": ["x"]}, "results": {"bindings": [
        {"x": {"type": "uri", "value": "http://ex/a"}}]}}


def test_the_engine_state_is_stored_as_plain_data_and_goes_on_where_it_stopped():
    engine, registered = engine_with("REGISTER ISTREAM <http://ex/q> AS " + SELECT)
    registered.subscribe(lambda result: None)  # subscribers are not state: a lambda does not stop it
    engine.subscribe(lambda result: None)
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=100)
    engine.advance_to(1000)
    key = b"a test key of 16+ bytes"
    restored = state.loads(state.dumps(engine, key=key), key=key)
    assert restored._callbacks == [] and restored.queries[registered.name]._callbacks == []
    for run in (engine, restored):
        run.push(S, [(EX.b, EX.p, EX.o)], timestamp=1500)
    assert [(r.t, xs(r)) for r in restored.advance_to(3000)] == [(r.t, xs(r)) for r in engine.advance_to(3000)] == [
        (2000, ["b"]), (3000, [])]


def test_push_ids_for_micro_batch_drivers():
    engine, _ = engine_with()
    a, p, o = (engine.terms.intern(f"<http://ex/{name}>") for name in ("a", "p", "o"))
    engine.push_ids(S, [(100, (a, p, o)), (1200, (a, p, o))])
    assert [(r.t, xs(r)) for r in engine.finish()] == [(1000, ["a"]), (2000, ["a"]), (3000, ["a"])]


def test_evaluation_time_is_the_reports_time_never_the_clock():
    engine, _ = engine_with("PREFIX ex: <http://ex/> SELECT ?now FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                            "WHERE { ?x ex:p ?o BIND(NOW() AS ?now) }")
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=86_400_000 + 100)
    (result,) = engine.finish()
    assert result.to_json()["bindings"] == [
        {"now": '"1970-01-02T00:00:01+00:00"^^<http://www.w3.org/2001/XMLSchema#dateTime>'}]


def test_advance_to_also_returns_what_pushes_reported():
    # a tuple window reports as its n-th element arrives, inside `push`
    query = "PREFIX ex: <http://ex/> SELECT ?x FROM STREAM <http://ex/s> [TRIPLES 2] WHERE { ?x ex:p ?o }"
    engine, registered = engine_with(query)
    seen = []
    registered.subscribe(seen.append)
    engine.push(S, [(EX.a, EX.p, EX.o)], timestamp=100)
    engine.push(S, [(EX.b, EX.p, EX.o)], timestamp=200)
    returned = engine.advance_to(300)
    assert returned == seen and [(r.t, xs(r)) for r in returned] == [(100, ["a"]), (200, ["a", "b"])]
    assert engine.advance_to(400) == []
