"""A report outlives its terms: the dictionary forgets a term once nothing in the engine can reach it,
and a report held past that still writes what it wrote when it was made (`Dictionary.resolved`)."""

from rdflib import Literal, URIRef

from rsp_plugin.runtime.engine import RSPEngine

QUERY = """REGISTER RSTREAM <http://ex/q> AS
SELECT ?s ?o FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/p> ?o }"""


def _engine():
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    engine.register_query(QUERY)
    return engine


def _push(engine, second: int) -> None:
    triples = [(URIRef(f"http://ex/s{second}_{n}"), URIRef("http://ex/p"), Literal(f"v{second}_{n}"))
               for n in range(5)]
    engine.push("http://ex/s", triples, timestamp=second * 1000)


def test_reports_held_across_forgetting_write_what_they_wrote_when_made():
    engine = _engine()
    held, written = [], []
    for second in range(60):
        _push(engine, second)
        for result in engine.advance_to(second * 1000):
            held.append(result)
            written.append(result.to_json())
        if second % 10 == 9:
            engine.forget_unreachable()
    for result in engine.finish():
        held.append(result)
        written.append(result.to_json())
    assert engine.terms.forgotten > 200  # (the early seconds' terms are gone from the dictionary)
    assert engine.terms.find('"v0_0"') is None
    assert [result.to_json() for result in held] == written
    assert any(row for line in written for row in line["bindings"])
