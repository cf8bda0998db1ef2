"""The cross-engine output checks of benchmarks.md: the (t, atom) pairs other LARS engines print."""

import pytest

from lars_cases import _facts
from rsp_plugin.bench.lars import cross_engine_stream
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.syntax import parse_program


@pytest.mark.parametrize(
    "program_text, setting, pairs",
    [
        ("q(X,Y) :- [RANGE 20] DIAMOND p(X,Y) .", (300, 200, 30, 1), 265_825),
        ("q(X,Y) :- [RANGE 3] BOX p(X,Y) .", (300, 150, 15, 2), 13_586),
    ],
)
@pytest.mark.parametrize("pruning", [True, False])
def test_same_number_of_output_pairs_as_the_other_lars_engines(program_text, setting, pairs, pruning):
    program = parse_program(program_text)
    stream = cross_engine_stream(*setting)
    engine = IncrementalEngine(program, start=0, pruning=pruning)
    total = 0
    for t in range(setting[0]):
        engine.advance_to(t, _facts(program, stream[t], t))
        total += len(engine.holding())
    assert total == pairs
