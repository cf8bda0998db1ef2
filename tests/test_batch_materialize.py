"""The batch materializer holds what the per-fact materializer holds, with the same horizons,
at every time point (generated ontologies and streams, RDFS and OWL 2 RL)."""

from __future__ import annotations

import random
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))
from test_reasoning_differential import generated_case  # noqa: E402

from rsp_plugin.columnar.materialize import BatchMaterializer
from rsp_plugin.reasoning import Materializer, intern_triples  # noqa: E402
from rsp_plugin.core.terms import Dictionary


def _compare(seed: int, profile: str, trivial: bool = False, gaps: bool = False):
    background, stream, window = generated_case(seed, profile)
    terms = Dictionary()
    background_ids = intern_triples(background, terms)
    reference = Materializer(profile, window=window, background=background_ids, terms=terms, trivial=trivial)
    batch = BatchMaterializer(profile, window=window, background=background_ids, terms=terms, trivial=trivial)
    assert set(batch.holding()) == set(reference.holding())
    draw = random.Random(seed)
    points = sorted(stream)
    last = max(points, default=0) + window + 2
    point = 0
    while point <= last:
        arriving = intern_triples(stream.get(point, []), terms)
        step = reference.advance_to(point, arriving)
        report = batch.advance_to(point, arriving)
        held = set(reference.holding())
        assert set(batch.holding()) == held, f"time point {point}"
        for triple in held:
            assert batch.expires(triple) == reference.expires(triple), (point, triple)
        expected_events = {(event.rule, frozenset(event.triples)) for event in step.inconsistencies}
        assert {(event.rule, frozenset(event.triples)) for event in report.inconsistencies} == expected_events
        point += draw.choice([1, 1, 2]) if gaps else 1


@pytest.mark.parametrize("seed", range(30))
def test_rdfs_batch_equals_per_fact(seed):
    _compare(seed, "rdfs", gaps=seed % 3 == 0)


@pytest.mark.parametrize("seed", range(30))
def test_owl_rl_batch_equals_per_fact(seed):
    _compare(seed, "owl-rl", gaps=seed % 3 == 0)


@pytest.mark.parametrize("seed", range(4))
def test_trivial_rules_too(seed):
    _compare(seed, "owl-rl" if seed % 2 else "rdfs", trivial=True)
