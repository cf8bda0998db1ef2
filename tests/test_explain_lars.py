"""Explanations of LARS facts (rsp_plugin/explain/): every explanation of every output
fact at every time point of generated programs is checked against the reference
evaluator (`explain_check.py`); explanations on or off, the engine's output is the same."""

import json

import pytest

from explain_check import Checker, RecordingReference
from lars_cases import ProgramGenerator, _facts, run
from rsp_plugin.lars.explain import ExplanationUnavailable
from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.syntax import parse_program


def explain_all(program_text: str, stream: dict[int, list[str]], keep: int = 10_000, at_every_point=True):
    """Run engine and reference side by side; explain every output fact at every time point; check."""
    program = parse_program(program_text)
    first, last = min(stream), max(stream)
    engine = IncrementalEngine(program, start=first, explain=keep)
    reference = RecordingReference(program, start=first)
    checker = Checker(program, reference)
    explained = 0
    for t in range(first, last + 1):
        facts = _facts(program, stream.get(t, []), t)
        engine.advance_to(t, facts)
        reference.advance_to(t, facts)
        for fact in engine.holding():
            tree = engine.explain(fact, t)
            assert tree is not None, format_fact(fact, program.terms)
            text = json.dumps(tree)
            assert '"forgotten"' not in text and '"truncated"' not in text, text
            checker.check_tree(tree, t)
            explained += 1
    checker.check_horizons(last)
    return explained, checker


def _check_generated(generator: ProgramGenerator):
    program = generator.program()
    stream = generator.stream()
    try:
        explain_all(program, stream)
    except AssertionError as failure:
        raise AssertionError(f"program:\n{program}\nstream: {stream}\n{failure}") from None


@pytest.mark.parametrize("seed", range(200))
def test_explanations_of_generated_programs_hold_in_the_reference(seed):
    _check_generated(ProgramGenerator(seed))


@pytest.mark.parametrize("seed", range(1000, 1100))
def test_explanations_with_box_rules_chains_and_gaps(seed):
    _check_generated(ProgramGenerator(seed, box_bias=0.5, chains=True))


@pytest.mark.parametrize("seed", range(3000, 3080))
def test_explanations_when_data_carry_derived_predicates(seed):
    _check_generated(ProgramGenerator(seed, box_bias=0.5, chains=True, derived_in_data=True))


@pytest.mark.parametrize("seed", range(40))
def test_output_is_the_same_with_explanations_on(seed):
    generator = ProgramGenerator(seed, box_bias=0.3, chains=True)
    program, stream = generator.program(), generator.stream()
    assert run(program, stream, explain=True) == run(program, stream)


def test_a_hand_worked_explanation():
    #  t:        0    1    2    3    4
    #  highTemp  b    b    b    b    .
    #  temp      105  .    .    50   .
    program = """
    warning(B)  :- [RANGE 10] DIAMOND highTemp(B) .
    error(B)    :- [RANGE 3] BOX highTemp(B) .
    shutdown(B) :- error(B), not ok(B) .
    @T steam(V) :- [RANGE 5] @T temp(V), V >= 100 .
    """
    stream = {0: ["highTemp(b)", "temp(105)"], 1: ["highTemp(b)"], 2: ["highTemp(b)"],
              3: ["highTemp(b)", "temp(50)"], 4: []}
    parsed = parse_program(program)
    engine = IncrementalEngine(parsed, start=0, explain=True)
    for t in range(0, 4):
        engine.advance_to(t, _facts(parsed, stream[t], t))
    terms = parsed.terms
    shutdown = (terms.find("shutdown"), (terms.find("b"),))
    tree = engine.explain(shutdown)
    assert tree["rule"] == "shutdown(B) :- error(B), not ok(B) ."
    # error(b) holds until 3 (highTemp's run ends there), `not` promises nothing past now: a tie,
    # and the first body item that reaches the least horizon is named
    assert (tree["t"], tree["derived_at"], tree["horizon"], tree["bounded_by"]) == (3, 3, 3, 0)
    error, absence = tree["body"]
    assert error["literal"] == "error(b)" and error["witness"] == [3]
    assert absence == {"literal": "not ok(b)", "absent": [3, 3]}
    (box,) = error["because"][0]["body"]
    assert box["literal"] == "[RANGE 3] BOX highTemp(b)"
    assert box["window"] == [0, 3] and box["witness"] == [0, 1, 2, 3]
    assert [leaf["t"] for leaf in box["because"]] == [0, 1, 2, 3]
    assert {leaf["by"] for leaf in box["because"]} == {"data"}
    warning = engine.explain((terms.find("warning"), (terms.find("b"),)))
    assert warning["horizon"] == 13 and warning["body"][0]["witness"] == [3]   # the latest point, 3 + 10
    assert engine.explain((terms.find("warning"), (terms.find("c"),))) is None


def test_without_explain_the_engine_keeps_nothing_and_says_so():
    program = parse_program("q(X) :- p(X) .")
    engine = IncrementalEngine(program)
    engine.advance_to(0, _facts(program, ["p(a)"], 0))
    assert engine.provenance is None
    with pytest.raises(ExplanationUnavailable):
        engine.explain((program.terms.find("q"), (program.terms.find("a"),)))


def test_records_are_forgotten_with_the_windows_that_can_reach_them():
    program = parse_program("q(X) :- [RANGE 2] DIAMOND p(X) .")
    engine = IncrementalEngine(program, start=0, explain=True)
    terms = program.terms
    provenance = engine.provenance
    for t in range(200):
        fact = (terms.intern("p"), (terms.intern(f"a{t}"),))
        provenance.note_sources(t, [(fact, {"line": t + 1})])
        engine.advance_to(t, [fact])
    assert provenance.data == {}                      # no tuple window: data atoms are not kept
    assert len(provenance.sources) == 3               # their sources, for p's window: 3 points
    assert sum(map(len, provenance.ending.values())) == 3   # q: what holds now (horizons t..t+2)
    (diamond,) = engine.explain((terms.find("q"), (terms.find("a198"),)))["body"]
    assert diamond["witness"] == [198] and diamond["because"][0]["source"] == {"line": 199}


def test_an_engine_that_explains_goes_on_explaining_after_a_checkpoint():
    from rsp_plugin.runtime.state import dumps, loads

    program = parse_program(ALARM)
    engine = IncrementalEngine(program, start=1, explain=True)
    for t in (1, 2, 3):
        engine.advance_to(t, _facts(program, ALARM_STREAM[t], t))
    key = b"a test key of 16+ bytes"
    engine = loads(dumps(engine, key=key), key=key)  # the plain state codec; rules parsed and compiled again
    engine.advance_to(4, _facts(engine.program, ALARM_STREAM[4], 4))
    terms = engine.terms
    tree = engine.explain((terms.find("notify"), (terms.find("s7"),)))
    assert tree["body"][1]["witness"] == [2]         # peak(s7), placed before the checkpoint
    assert [leaf["t"] for leaf in tree["body"][0]["because"][0]["body"][0]["because"]] == [2, 3, 4]


ALARM = """
hot(S)      :- temp(S, V), V >= 30 .
alarm(S)    :- [RANGE 2] BOX hot(S), not maintenance(S) .
@T peak(S)  :- [RANGE 5] @T temp(S, V), V >= 40 .
notify(S)   :- alarm(S), [RANGE 10] DIAMOND peak(S) .
"""
ALARM_STREAM = {1: ["temp(s7,31)"], 2: ["temp(s7,42)"], 3: ["temp(s7,35)"], 4: ["temp(s7,33)"]}
