"""`RSPEngine.window_graph`: the live window (and its materialization) as an rdflib Graph."""

from __future__ import annotations

from pathlib import Path

import pytest
from rdflib import RDF, RDFS, Graph, Namespace, URIRef

from rsp_plugin import RSPEngine
from rsp_plugin.io.formats import read_tnt
from rsp_plugin.query.graphs import WindowNotKept

ROOT = Path(__file__).parent.parent
CSRBENCH = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
EX = Namespace("http://ex/")


def oracle(tau: int, size: int) -> set:
    """The triples of the CSRBench file with tau - size <= t < tau, read by rdflib."""
    graph = Graph()
    text = "\n".join(line.split(" ", 1)[1] for line in CSRBENCH.read_text().splitlines()
                     if tau - size <= int(line.split(" ", 1)[0]) < tau)
    graph.parse(data=text, format="nt")
    return set(graph)


def replay(engine: RSPEngine, on_report) -> None:
    elements = list(read_tnt(CSRBENCH.read_text().splitlines(), engine.terms, tick_ms=1, filename="s.tnt"))
    engine.subscribe(on_report)
    for element in elements:
        if engine.watermark is None or element.time_point > engine.watermark:
            engine.advance_to(element.time_point)
        engine.push("http://ex.org/csrbench", [element])
    engine.finish()


def test_the_window_graph_is_the_window_at_every_report():
    engine = RSPEngine()
    engine.register_stream("http://ex.org/csrbench")
    query = engine.register_query("""REGISTER QUERY q AS SELECT ?s
        FROM STREAM <http://ex.org/csrbench> [RANGE 2s STEP 1s] WHERE { ?s ?p ?o }""")
    seen = []

    def check(result):
        graph = engine.window_graph("q")
        # rdflib's own tools work on it: serialization (read back as the oracle is read), SPARQL
        assert set(Graph().parse(data=graph.serialize(format="nt"), format="nt")) == oracle(result.t, 2000)
        count = next(iter(graph.query("SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }")))[0]
        assert int(count) == len(oracle(result.t, 2000)) == len(graph)
        seen.append(result.t)

    replay(engine, check)
    assert seen == [1000, 2000, 3000, 4000, 5000, 6000, 7000]
    with pytest.raises(TypeError):
        engine.window_graph(query).add((EX.a, EX.p, EX.b))  # read-only


def test_with_entailment_the_graph_is_the_materialization():
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    background = Graph()
    background.add((EX.Train, RDFS.subClassOf, EX.Vehicle))
    engine.add_graph("http://ex/tbox", background)
    engine.register_query("""REGISTER QUERY q AS SELECT ?x
        FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] FROM <http://ex/tbox>
        ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>
        WHERE { ?x a <http://ex/Vehicle> }""")
    engine.push("http://ex/s", [(EX.t1, RDF.type, EX.Train)], timestamp=100)
    engine.advance_to(1000)
    graph = engine.window_graph("q")
    assert (EX.t1, RDF.type, EX.Vehicle) in graph          # entailed
    assert (EX.Train, RDFS.subClassOf, EX.Vehicle) in graph  # background
    engine.advance_to(3000)
    assert (EX.t1, RDF.type, EX.Vehicle) not in graph       # expired with its premise, live
    assert (EX.Train, RDFS.subClassOf, EX.Vehicle) in graph


def test_a_later_boundary_can_be_looked_at_before_the_query_reports_it():
    # COMPUTE EVERY 4s over a [RANGE 2s STEP 1s] window: the query reads every 4 s, the window moves every 1 s
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    query = engine.register_query("""REGISTER QUERY q COMPUTE EVERY 4s AS SELECT ?x
        FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x <http://ex/p> ?y }""")
    for t, name in [(500, "a"), (1500, "b"), (2500, "c"), (4500, "d")]:
        engine.push("http://ex/s", [(EX[name], EX.p, EX.o)], timestamp=t)
    engine.advance_to(4000)
    assert sorted(str(s) for s in engine.window_graph(query).subjects()) == ["http://ex/c"]  # [2000, 4000)
    engine.advance_to(7000)  # the query reports next at 8000
    assert sorted(str(s) for s in engine.window_graph(query, at=6000).subjects()) == ["http://ex/d"]  # [4000, 6000)
    assert len(engine.window_graph(query, at=7000)) == 0                                           # [5000, 7000)
    assert sorted(str(s) for s in engine.window_graph(query).subjects()) == ["http://ex/c"]  # as last read
    with pytest.raises(WindowNotKept, match="after the watermark"):
        engine.window_graph(query, at=9000)


def test_a_named_window_by_its_name():
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    engine.register_query("""REGISTER RSTREAM <http://ex/q> AS SELECT ?x
        FROM NAMED WINDOW <http://ex/w> ON <http://ex/s> [RANGE PT2S STEP PT1S]
        WHERE { WINDOW <http://ex/w> { ?x <http://ex/p> ?y } }""")
    engine.push("http://ex/s", [(EX.a, EX.p, EX.b)], timestamp=100)
    engine.advance_to(1000)
    assert set(engine.window_graph("http://ex/q", window="http://ex/w")) == {(EX.a, EX.p, EX.b)}
    assert len(engine.window_graph("http://ex/q")) == 0  # the default graph holds nothing
    with pytest.raises(KeyError, match="has no window"):
        engine.window_graph("http://ex/q", window="http://ex/other")
    assert isinstance(engine.window_graph("http://ex/q", window=URIRef("http://ex/w")).identifier, URIRef)
