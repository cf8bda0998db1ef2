"""Entailment under a static TBox by templates (`reasoning/shapes.py`), through both materialized views, against
the per-fact reference (`Materializer`, which a view keeps when explanations are asked for): streams at 10,
100, 1k and 10k triples per second of event time, steps from 1 s to 10 s, windows that hold schema triples,
owl:sameAs and triples that leave and come back. The content of every report must be the reference's."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_reasoning_differential import generated_case  # noqa: E402

from rsp_plugin.columnar.columns import ColumnTimeWindow
from rsp_plugin.columnar.views import BatchMaterializedView
from rsp_plugin.core.terms import Dictionary
from rsp_plugin.query.model import RangeWindow
from rsp_plugin.query.views import MaterializedView
from rsp_plugin.query.windows import TimeWindow
from rsp_plugin.reasoning import Materializer, intern_triples
from rsp_plugin.reasoning.shapes import ShapeMaterializer

#: (rate in triples per second of event time, RANGE s, STEP s)
SHAPES = [(10, 10, 5), (10, 4, 1), (100, 6, 2), (100, 10, 10), (1_000, 3, 1), (1_000, 10, 5),
          (10_000, 2, 1), (10_000, 10, 10)]


def _stream(seed: int, profile: str, rate: int, count: int = 240):
    """(background, [(timestamp ms, triple)]): the generated case's triples (instance data, schema
    triples, sameAs) drawn again and again at `rate` per second, so that triples leave and come back."""
    background, stream, _ = generated_case(seed, profile)
    pool = [triple for triples in stream.values() for triple in triples]
    draw = random.Random(seed)
    elements = []
    for k in range(count):
        elements.append((k * 1000 // rate, draw.choice(pool)))
    return background, elements


def _rows(content) -> set:
    if hasattr(content, "rows"):
        return set(content.rows())
    return set(content.match(None, None, None))


@pytest.mark.parametrize("profile", ["rdfs", "owl-rl"])
@pytest.mark.parametrize("rate, range_s, step_s", SHAPES)
def test_views_report_the_reference_content(profile, rate, range_s, step_s):
    seed = rate + range_s + step_s
    background, elements = _stream(seed, profile, rate)
    terms = Dictionary()
    given = intern_triples(background, terms)
    spec = RangeWindow(range_s * 1000, step_s * 1000)
    reference = MaterializedView(TimeWindow(spec), profile, terms=terms, background=given, explain=True)
    per_fact = MaterializedView(TimeWindow(spec), profile, terms=terms, background=given)
    columnar = BatchMaterializedView(ColumnTimeWindow(spec), profile, terms=terms, background=given)
    assert isinstance(reference.materializer, Materializer)
    assert isinstance(per_fact.materializer, ShapeMaterializer)
    assert isinstance(columnar.materializer, ShapeMaterializer)
    views = (reference, per_fact, columnar)
    ids = intern_triples([triple for _, triple in elements], terms)
    last = elements[-1][0]
    tau, k = step_s * 1000, 0
    while tau - range_s * 1000 <= last:
        while k < len(elements) and elements[k][0] < tau:
            for view in views:
                view.offer(elements[k][0], ids[k])
            k += 1
        for view in views:
            view.advance(tau)
        expected = _rows(reference.content)
        assert _rows(per_fact.content) == expected, tau
        assert _rows(columnar.content) == expected, tau
        events = {(e.rule, frozenset(e.triples)) for e in reference.inconsistencies}
        assert {(e.rule, frozenset(e.triples)) for e in per_fact.inconsistencies} == events, tau
        assert {(e.rule, frozenset(e.triples)) for e in columnar.inconsistencies} == events, tau
        tau += step_s * 1000


@pytest.mark.parametrize("profile", ["rdfs", "owl-rl"])
def test_sensor_stream_runs_no_join(profile):
    """The shape of `bench shapes`: instance data under a static ontology is a template lookup per
    triple, no rule joins two window facts, and the content (one buffer, read as views) is the
    reference's at every report."""
    from rdflib import Graph, Literal, Namespace, RDF, XSD

    from rsp_plugin.bench.shapes import ONTOLOGY

    ex = Namespace("http://ex.org/shapes/")
    terms = Dictionary()
    given = intern_triples(Graph().parse(data=ONTOLOGY, format="turtle"), terms)
    spec = RangeWindow(3000, 1000)
    reference = MaterializedView(TimeWindow(spec), profile, terms=terms, background=given, explain=True)
    columnar = BatchMaterializedView(ColumnTimeWindow(spec), profile, terms=terms, background=given)
    draw = random.Random(3)
    stamp = 0
    for tau in range(1000, 12000, 1000):
        while stamp < tau:
            observation = ex[f"obs{stamp}"]
            for triple in ((observation, RDF.type, ex.TempObs), (observation, ex.sensor, ex[f"sensor{draw.randrange(4)}"]),
                           (observation, ex.value, Literal(draw.randrange(5), datatype=XSD.integer))):
                ids = intern_triples([triple], terms)[0]
                reference.offer(stamp, ids)
                columnar.offer(stamp, ids)
            stamp += 250
        reference.advance(tau)
        columnar.advance(tau)
        assert not columnar.materializer.joins.active
        assert _rows(columnar.content) == _rows(reference.content), tau
        assert not columnar.materializer._ring.stale
