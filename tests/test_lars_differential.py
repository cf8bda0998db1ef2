"""The engine against the reference evaluator on generated programs and streams
(datafrog's property test): both must agree at every time point."""

import pytest

from lars_cases import ProgramGenerator, run


def _agree(generator: ProgramGenerator, **options):
    program = generator.program()
    stream = generator.stream()
    expected = run(program, stream, engine="reference")
    got = run(program, stream, **options)
    assert got == expected, f"program:\n{program}\nstream: {stream}"


@pytest.mark.parametrize("seed", range(500))
def test_engine_agrees_with_reference(seed):
    _agree(ProgramGenerator(seed))


@pytest.mark.parametrize("seed", range(1000, 1300))
def test_engine_agrees_with_reference_on_box_rules_chains_and_gaps(seed):
    _agree(ProgramGenerator(seed, box_bias=0.5, chains=True))


@pytest.mark.parametrize("seed", range(3000, 3200))
def test_engine_agrees_with_reference_when_data_carry_derived_predicates(seed):
    _agree(ProgramGenerator(seed, box_bias=0.5, chains=True, derived_in_data=True))


@pytest.mark.parametrize("seed", range(2000, 2100))
def test_engine_without_ssne_agrees_with_reference(seed):
    _agree(ProgramGenerator(seed, box_bias=0.2, chains=True), semi_naive=False)
