"""The template materializer (`reasoning/shapes.py`) holds what the per-fact reference holds, with the same
horizons and inconsistencies, at every time point: generated ontologies and streams (schema triples and
owl:sameAs in the window, triples leaving and coming back), RDFS and OWL 2 RL, tracking and columnar."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_reasoning_differential import generated_case  # noqa: E402

from rsp_plugin.core.terms import Dictionary
from rsp_plugin.reasoning import Materializer, intern_triples
from rsp_plugin.reasoning.shapes import ShapeMaterializer


def _events(events) -> set:
    return {(event.rule, frozenset(event.triples)) for event in events}


def _compare(seed: int, profile: str, track: bool, gaps: bool = False):
    background, stream, window = generated_case(seed, profile)
    terms = Dictionary()
    background_ids = intern_triples(background, terms)
    reference = Materializer(profile, window=window, background=background_ids, terms=terms)
    shapes = ShapeMaterializer(profile, window=window, background=background_ids, terms=terms, track=track)
    assert set(shapes.holding()) == set(reference.holding())
    draw = random.Random(seed)
    last = max(stream, default=0) + window + 2
    point = 0
    mirror = set(reference.holding())
    while point <= last:
        arriving = intern_triples(stream.get(point, []), terms)
        step = reference.advance_to(point, arriving)
        report = shapes.advance_to(point, arriving)
        held = set(reference.holding())
        assert set(shapes.holding()) == held, f"time point {point}"
        assert set(zip(*(column.tolist() for column in shapes.triple_columns()))) == held, point
        for triple in held:
            assert shapes.expires(triple) == reference.expires(triple), (point, triple)
        assert _events(report.inconsistencies) == _events(step.inconsistencies), point
        assert _events(shapes.inconsistent()) == _events(reference.inconsistent()), point
        if track:  # what started and stopped holding: the per-fact view applies these
            mirror -= set(report.removed)
            mirror |= set(report.added)
            assert mirror == held, point
        point += draw.choice([1, 1, 2]) if gaps else 1


@pytest.mark.parametrize("seed", range(16))
def test_rdfs_templates_equal_per_fact(seed):
    _compare(seed, "rdfs", track=seed % 2 == 0, gaps=seed % 3 == 0)


@pytest.mark.parametrize("seed", range(16))
def test_owl_rl_templates_equal_per_fact(seed):
    _compare(seed, "owl-rl", track=seed % 2 == 1, gaps=seed % 3 == 0)


@pytest.mark.parametrize("profile", ["rdfs", "owl-rl"])
def test_a_columnar_template_materializer_restored_mid_stream_goes_on(profile):
    """A checkpoint holds the background given and the panes; rules, B*, templates and joins are made again."""
    from rsp_plugin.runtime.state import dumps, loads

    key = b"the tests' key: 16 bytes or more"
    background, stream, window = generated_case(5, profile)
    made = []
    for _ in range(2):
        terms = Dictionary()
        made.append(ShapeMaterializer(profile, window=window, background=intern_triples(background, terms),
                                      terms=terms))
    whole, cut = made
    last = max(stream) + window + 2

    def keyed(m, triples):
        return {tuple(m.terms.key(term) for term in triple) for triple in triples}

    def keyed_events(m, events):
        return {(event.rule, frozenset(keyed(m, event.triples))) for event in events}

    for point in range(last + 1):
        if point == last // 2:
            cut = loads(dumps(cut, key=key), key=key)
        expected = whole.advance_to(point, intern_triples(stream.get(point, []), whole.terms))
        got = cut.advance_to(point, intern_triples(stream.get(point, []), cut.terms))
        assert keyed(cut, cut.holding()) == keyed(whole, whole.holding()), point
        assert keyed_events(cut, got.inconsistencies) == keyed_events(whole, expected.inconsistencies), point
