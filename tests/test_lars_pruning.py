"""Impossible derivations (Laser2): which rules are switched off, until when, and that outputs never change."""

import pytest

from lars_cases import ProgramGenerator, _facts, run
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.syntax import parse_program


def switched_off(program_text: str, stream: dict[int, list[str]], first: int, last: int):
    """{t: {rule text: disabled_until}} for the rules that are off at t + 1, after evaluating t."""
    program = parse_program(program_text)
    engine = IncrementalEngine(program, start=first)
    table = {}
    for t in range(first, last + 1):
        engine.advance_to(t, _facts(program, stream.get(t, []), t))
        table[t] = engine.pruning.switched_off(t + 1)
    return table


LASER2_EXAMPLE_1 = """
    warning(b1)  :- [RANGE 10] DIAMOND highTemp(b1) .
    error(b2)    :- [RANGE 3] BOX highTemp(b2) .
    shutdown(b2) :- error(b2) .
"""


def test_laser2_example_2_error_and_shutdown_are_off_while_the_gap_at_1_is_in_the_window():
    stream = {2: ["highTemp(b1)", "highTemp(b2)"], 3: ["highTemp(b2)"]}
    table = switched_off(LASER2_EXAMPLE_1, stream, 1, 8)
    error, shutdown = "error(b2) :- [RANGE 3] BOX highTemp(b2) .", "shutdown(b2) :- error(b2) ."
    # no highTemp(b2) at 1: [RANGE 3] windows at 2, 3, 4 all contain 1 (ours hold n + 1 points)
    assert table[1] == {error: 4, shutdown: 4}
    assert table[2] == {error: 4, shutdown: 4} and table[3] == {error: 4, shutdown: 4}
    # none at 4 either: off until 4 + 3; and so on while highTemp(b2) stays away. The cascade
    # moves shutdown's time only when it would wake: error is off through 7 by then, so is shutdown
    assert table[4] == {error: 7, shutdown: 7}
    assert table[5] == {error: 8, shutdown: 7}
    assert table[7] == {error: 10, shutdown: 10}


def test_a_chain_of_rules_is_switched_off_by_one_missing_box_atom():
    program = """
        h1(X) :- [RANGE 10] DIAMOND p(X), [RANGE 10] BOX q(X) .
        h2(X) :- h1(X) .
        h3(X) :- h2(X) .
        h4(X) :- [RANGE 2] BOX h3(X) .
    """
    table = switched_off(program, {0: ["p(a)"], 1: ["p(a)"]}, 0, 3)
    assert table[0] == {
        "h1(X) :- [RANGE 10] DIAMOND p(X), [RANGE 10] BOX q(X) .": 10,
        "h2(X) :- h1(X) .": 10,
        "h3(X) :- h2(X) .": 10,
        "h4(X) :- [RANGE 2] BOX h3(X) .": 12,  # h3 absent on (0, 10]: BOX h3 fails through 10 + 2
    }


def test_negation_and_diamond_readers_stay_on():
    program = """
        h(X) :- [RANGE 5] DIAMOND p(X), [RANGE 5] BOX q(X) .
        calm(X) :- p(X), not h(X) .
        recent(X) :- [RANGE 5] DIAMOND h(X) .
    """
    table = switched_off(program, {0: ["p(a)"]}, 0, 2)
    assert table[0] == {"h(X) :- [RANGE 5] DIAMOND p(X), [RANGE 5] BOX q(X) .": 5}


def test_a_rule_is_not_switched_off_by_an_absence_of_what_it_reads_under_not():
    program = "free(X) :- desk(X), not [RANGE 5] BOX busy(X) ."
    assert switched_off(program, {0: ["desk(a)"], 4: ["desk(a)"]}, 0, 4) == {t: {} for t in range(5)}


def test_data_for_a_derived_predicate_switch_a_cascade_back_on():
    program = """
        h(X) :- [RANGE 4] DIAMOND p(X), [RANGE 4] BOX q(X) .
        g(X) :- h(X) .
    """
    stream = {0: ["p(a)"], 2: ["h(b)"], 3: []}
    for engine in ({"engine": "incremental"}, {"engine": "incremental", "pruning": False}, {"engine": "reference"}):
        assert run(program, stream, **engine) == {0: set(), 1: set(), 2: {"g(b)"}, 3: set()}
    table = switched_off(program, stream, 0, 3)
    assert table[1]["g(X) :- h(X) ."] == 4  # off when h(b) arrives at 2: the data switch it back on


def test_a_sleeping_relation_replays_what_it_buffered_when_a_reader_wakes():
    program = "m(X) :- [RANGE 3] DIAMOND p(X), [RANGE 3] BOX q(X) ."
    stream = {t: ["p(a)"] for t in range(12)}
    for t in range(4, 12):
        stream[t].append("q(a)")
    expected = run(program, stream, engine="reference")
    assert run(program, stream) == expected
    assert {t for t, atoms in expected.items() if atoms} == {7, 8, 9, 10, 11}


@pytest.mark.parametrize("seed", range(4000, 4100))
def test_pruning_on_and_off_agree_with_the_reference(seed):
    generator = ProgramGenerator(seed, box_bias=0.5, chains=True, derived_in_data=seed % 2 == 0)
    program, stream = generator.program(), generator.stream()
    expected = run(program, stream, engine="reference")
    assert run(program, stream, pruning=False) == expected
    assert run(program, stream, pruning=True) == expected
