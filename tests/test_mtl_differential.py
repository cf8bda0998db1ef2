"""The engine against the reference evaluator on generated DatalogMTL programs and streams.

Every operator and bound kind (`mtl_cases.py`): the engine (the program compiled
to its normal form over metric windows) and the reference (the definitions,
over the program as written) must agree at every time point; so must the
same program written in the LARS rule language.
"""

import pytest

from mtl_cases import ProgramGenerator, run, run_lars_form


def _agree(generator: ProgramGenerator, last: int = 14):
    program, stream = generator.program(), generator.stream()
    expected = run(program, stream, engine="reference", last=last)
    assert run(program, stream, last=last) == expected, f"program:\n{program}\nstream: {stream}"
    lars = generator.lars_program()
    if lars is not None:
        assert run_lars_form(lars, stream, last=last) == expected, f"LARS form:\n{lars}\nstream: {stream}"


@pytest.mark.parametrize("seed", range(600))
def test_engine_agrees_with_reference(seed):
    _agree(ProgramGenerator(seed))


@pytest.mark.parametrize("seed", range(10_000, 10_080))
def test_engine_agrees_with_reference_on_longer_streams_with_nesting_since_and_placed_heads(seed):
    _agree(ProgramGenerator(seed, rules=5, time_points=24, nesting=0.5, since=0.4, heads=0.5), last=26)
