"""Corners that once broke the engine, each as the issue found it, then their kin on generated
programs: constants and expressions wherever a time or a term may stand, one predicate name
with two arities. Every case runs on the engine (sSNE on and off) and on the reference."""

import pytest

from lars_cases import CornerGenerator, run

ENGINES = [
    pytest.param({"engine": "incremental"}, id="incremental"),
    pytest.param({"engine": "incremental", "semi_naive": False}, id="no-sSNE"),
    pytest.param({"engine": "reference"}, id="reference"),
]


@pytest.mark.parametrize("engine", ENGINES)
def test_one_predicate_name_with_two_arities_is_two_predicates(engine):
    # as in ASP: p/1 and p/2; the rule reads p/2 only
    output = run("h(Y,X) :- p(X,Y) .", {0: ["p(a,b)", "p(a)"], 1: ["p(c)"]}, **engine)
    assert output == {0: {"h(b,a)"}, 1: set()}


@pytest.mark.parametrize("engine", ENGINES)
def test_both_arities_read_and_derived(engine):
    program = """
        h(X)   :- p(X) .
        h(X,Y) :- p(X,Y) .
        both(X) :- h(X), h(X,Y) .
    """
    output = run(program, {0: ["p(a,b)", "p(a)", "p(b)"]}, **engine)
    assert output == {0: {"h(a)", "h(b)", "h(a,b)", "both(a)"}}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_constant_time_in_at_picks_that_time_point(engine):
    #   0     1   2   3     4   5
    #   p(a)          p(b)      q         [RANGE 5] at 5 = [0, 5]
    output = run("h(X) :- [RANGE 5] @3 p(X) .", {0: ["p(a)"], 3: ["p(b)"], 5: ["q"]}, last=9, **engine)
    assert output == {0: set(), 1: set(), 2: set(), 3: {"h(b)"}, 4: {"h(b)"}, 5: {"h(b)"},
                      6: {"h(b)"}, 7: {"h(b)"}, 8: {"h(b)"},  # 3 is in [t - 5, t] through 8
                      9: set()}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_constant_time_without_a_window_holds_from_then_on(engine):
    output = run("h(X) :- @1 p(X), q .", {0: ["p(a)"], 1: ["p(b)"], 2: ["q"], 3: ["q"]}, **engine)
    assert output == {0: set(), 1: set(), 2: {"h(b)"}, 3: {"h(b)"}}


@pytest.mark.parametrize("engine", ENGINES)
@pytest.mark.parametrize("shift", [1, 2])
def test_a_head_time_computed_by_arithmetic_fires_when_its_time_comes(engine, shift):
    # p(a) at 0 and p(b) at 3; @U h with U = T + shift while T is in the window of 3
    program = f"@U h(X) :- [RANGE 3] @T p(X), U = T + {shift} ."
    output = run(program, {0: ["p(a)"], 3: ["p(b)"], 6: []}, **engine)
    expected = {t: set() for t in range(7)}
    expected[shift] = {"h(a)"}
    expected[3 + shift] = {"h(b)"}
    assert output == expected


@pytest.mark.parametrize("engine", ENGINES)
def test_a_head_time_past_the_window_never_comes(engine):
    # U = T + 2 but T leaves the window of 1 before U: the body no longer holds at U
    output = run("@U h(X) :- [RANGE 1] @T p(X), U = T + 2 .", {0: ["p(a)"], 4: []}, **engine)
    assert output == {t: set() for t in range(5)}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_written_head_time_places_the_atom_at_that_time_point(engine):
    # the body holds from 1 on; at 4 the rule places h at 4 (and later evaluations at 4 again)
    output = run("@4 h :- [RANGE 9] DIAMOND p .", {1: ["p"], 6: []}, **engine)
    assert output == {1: set(), 2: set(), 3: set(), 4: {"h"}, 5: set(), 6: set()}


@pytest.mark.parametrize("engine", ENGINES)
def test_a_head_time_in_the_past_is_seen_by_later_windows(engine):
    program = """
        @U late(X) :- p(X), T = 0, U = T + 1 .
        seen(X)    :- [RANGE 5] DIAMOND late(X) .
    """
    output = run(program, {3: ["p(a)"], 4: []}, first=0, **engine)
    assert output[3] == {"seen(a)"} and output[4] == {"seen(a)"}
    assert output[1] == set()  # emitted outputs are final


@pytest.mark.parametrize("engine", ENGINES)
def test_negative_numbers_and_constants_in_heads(engine):
    program = """
        cold(X, below)  :- val(X, N), N < 0 .
        shifted(X, M)   :- val(X, N), M = N - 2 .
    """
    output = run(program, {0: ["val(a,-1)", "val(b,3)"]}, **engine)
    assert output == {0: {"cold(a,below)", "shifted(a,-3)", "shifted(b,1)"}}


def _agree(generator, **options):
    program, stream = generator.program(), generator.stream()
    expected = run(program, stream, engine="reference")
    assert run(program, stream, **options) == expected, f"program:\n{program}\nstream: {stream}"


@pytest.mark.parametrize("seed", range(300))
def test_engine_agrees_with_reference_on_corners(seed):
    _agree(CornerGenerator(seed))


@pytest.mark.parametrize("seed", range(300, 400))
def test_engine_without_ssne_or_pruning_agrees_with_reference_on_corners(seed):
    _agree(CornerGenerator(seed), semi_naive=False, pruning=False)
