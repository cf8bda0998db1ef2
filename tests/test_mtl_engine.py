"""DatalogMTL on the engine: the paper's operators over the integer timeline, its benchmarks, its memory bound.

Each story draws its timeline; the expected atoms are those of the program's
head predicates that hold at each time point, from the engine and from the
reference evaluator alike.
"""

import pytest

from mtl_cases import run
from rsp_plugin.mtl import load_program
from rsp_plugin.mtl.data import fact_timeline, read_dataset
from rsp_plugin.mtl.generate import LUBM_NONRECURSIVE, LUBM_RECURSIVE, SHORT_STOP, lubm_stream, sumo_stream
from rsp_plugin.mtl.run import engine_outputs, held_facts, new_engine, reference_outputs
from rsp_plugin.mtl.syntax import parse_mtl


def both(program, lines, first, last):
    """The engine's answer, after checking that the reference evaluator gives the same."""
    expected = run(program, lines, engine="reference", first=first, last=last)
    got = run(program, lines, first=first, last=last)
    assert got == expected
    return {t: sorted(atoms) for t, atoms in got.items()}


def test_short_stop_is_zero_speed_for_a_few_points_between_two_non_zero_ones():
    #  t:      1        2     3        4
    #  v:      NotPos   Pos   NotPos                 stopped at 2 only: a short stop at 3
    #  w:      NotOnMap Pos   Pos      NotPos        stopped at 2 and 3: a short stop at 4
    #  u:               Pos   NotPos                 nothing known at 1: no short stop
    lines = ["NotPos(v)@1", "NotOnMap(w)@1", "Pos(v)@2", "Pos(w)@2", "Pos(u)@2", "NotPos(v)@3", "Pos(w)@3",
             "NotPos(u)@3", "NotPos(w)@4"]
    assert both(SHORT_STOP, lines, 1, 4) == {
        1: ["NotPos(v)", "NotPos(w)"],  # NotPos is a head predicate too: data and derived
        2: [],
        3: ["NotPos(u)", "NotPos(v)", "ShortStop(v)"],
        4: ["NotPos(w)", "ShortStop(w)"],
    }


def test_boxminus_over_punctual_facts_holds_on_the_integer_timeline():
    #  Work at 1, 2, 3, 4 (four punctual facts). Boxminus[0,3] at 4 asks for 1..4: all there.
    #  (On the paper's rational timeline it never holds: nothing says Work between 1 and 2.)
    program = "Busy(X):-Boxminus[0,3]Work(X)"
    lines = [f"Work(a)@[{t},{t}]" for t in (1, 2, 3, 4)]
    assert both(program, lines, 1, 6) == {1: [], 2: [], 3: [], 4: ["Busy(a)"], 5: [], 6: []}


def test_boxminus_does_not_clip_at_the_start_of_the_stream():
    #  LARS's [RANGE 2] BOX holds at the first time point (its window is clipped there);
    #  Boxminus[0,2] needs two points before it, which the stream does not have.
    lines = [f"Work(a)@{t}" for t in (0, 1, 2, 3)]
    assert both("Busy(X):-Boxminus[0,2]Work(X)", lines, 0, 3) == {0: [], 1: [], 2: ["Busy(a)"], 3: ["Busy(a)"]}


def test_open_and_decimal_bounds_mean_the_integers_they_contain():
    #  (0,2) is the distance 1; [0.5,2.5] the distances 1 and 2.
    lines = ["Ping(a)@3"]
    assert both("Next(X):-Diamondminus(0,2)Ping(X)\nSoon(X):-Diamondminus[0.5,2.5]Ping(X)", lines, 3, 6) == {
        3: [], 4: ["Next(a)", "Soon(a)"], 5: ["Soon(a)"], 6: []}


def test_since_needs_its_left_operand_at_every_point_strictly_between():
    #  t:     2       3      4      5      6      7
    #  m:     Reset   Quiet  Quiet  Quiet
    #  Calm from 2 (distance 0) and 3 (nothing between), then while Quiet covers 3..t-1: up to 6.
    lines = ["Reset(m)@2", "Quiet(m)@[3,5]"]
    assert both("Calm(X):-Quiet(X)Since[0,5]Reset(X)", lines, 2, 8) == {
        2: ["Calm(m)"], 3: ["Calm(m)"], 4: ["Calm(m)"], 5: ["Calm(m)"], 6: ["Calm(m)"], 7: [], 8: []}


def test_boxplus_and_punctual_diamondplus_heads_place_atoms_ahead():
    #  Alarm at 3: Off on 4..5 (Boxplus[1,2]), Check at 5 only (Diamondplus[2,2]).
    program = "Boxplus[1,2]Off(X):-Alarm(X)\nDiamondplus[2,2]Check(X):-Alarm(X)"
    assert both(program, ["Alarm(a)@3"], 3, 7) == {
        3: [], 4: ["Off(a)"], 5: ["Check(a)", "Off(a)"], 6: [], 7: []}


def test_recursion_through_diamondminus_goes_on_for_ever_one_point_at_a_time():
    #  The recursive LUBM-temporal rules: a full professor is a scientist one point later, and back.
    lines = ["a1:FullProfessor(p)@1", "a1:doctoralDegreeFrom(q,u)@2"]
    out = both(LUBM_RECURSIVE, lines, 1, 8)
    assert out[2] == ["a1:Scientist(p)"]
    assert out[3] == ["a1:FullProfessor(p)", "a1:ScientistCandidate(q)"]
    assert out[8] == ["a1:Scientist(p)", "a1:Scientist(q)"]


def test_recursion_over_consecutive_points_holds_from_then_on_and_each_time_point_ends():
    #  Q at 1 and 2: P and Q then hold at every later point (an unbounded presence, found a
    #  bounded stretch ahead at a time).
    program = "P(X):-Diamondminus[0,1]Q(X)\nQ(X):-Diamondminus[1,1]P(X)"
    out = both(program, ["Q(a)@[1,2]"], 1, 120)
    assert all(out[t] == ["P(a)", "Q(a)"] for t in range(2, 121))


def test_short_stop_on_a_generated_s1_stream_agrees_with_the_reference():
    lines = sumo_stream(seed=7, time_points=60)
    program = parse_mtl(SHORT_STOP)
    timeline = list(fact_timeline(read_dataset(lines, program.terms)))
    engine = dict(engine_outputs(load_program(SHORT_STOP, terms=program.terms), timeline))
    reference = dict(reference_outputs(program, timeline))
    assert engine == reference
    short_stop = program.terms.find("ShortStop")
    assert sum(1 for facts in engine.values() for p, _ in facts if p == short_stop) > 100


@pytest.mark.parametrize("rules", [LUBM_NONRECURSIVE, LUBM_RECURSIVE], ids=["non-recursive", "recursive"])
def test_lubm_temporal_programs_agree_with_the_reference(rules):
    lines = lubm_stream(seed=3, facts=6000, time_points=100)
    program = parse_mtl(rules)
    timeline = list(fact_timeline(read_dataset(lines, program.terms)))
    engine = dict(engine_outputs(load_program(rules, terms=program.terms), timeline))
    assert engine == dict(reference_outputs(program, timeline))
    assert sum(len(facts) for facts in engine.values()) > 60


def test_memory_stays_flat_as_the_stream_grows():
    #  The same traffic for 150 and for 600 time points: what the engine holds is bounded by what
    #  the rules' past reach (5 points) can still use, not by how long the stream has run.
    def most_held(time_points):
        program = parse_mtl(SHORT_STOP)
        lowered = load_program(SHORT_STOP, terms=program.terms)
        engine = new_engine(lowered)
        lines = sumo_stream(seed=11, time_points=time_points)
        most = 0
        for _ in engine_outputs(lowered, fact_timeline(read_dataset(lines, program.terms)), engine=engine):
            most = max(most, held_facts(engine))
        return most, len(lines)

    short, short_facts = most_held(150)
    long, long_facts = most_held(600)
    assert long_facts > 3.5 * short_facts
    assert long <= 1.1 * short


@pytest.mark.parametrize("seed", range(20))
def test_diamondminus_from_zero_is_a_range_diamond(seed):
    #  Diamondminus[0,n] p and LARS's [RANGE n] DIAMOND p: the same window, the same horizons.
    import random

    from rsp_plugin.io.formats import format_fact
    from rsp_plugin.lars.engine import IncrementalEngine
    from rsp_plugin.lars.syntax import parse_program

    rng = random.Random(seed)
    n = rng.randint(0, 4)
    stream = {t: [("p", (rng.choice("abc"),)) for _ in range(rng.randint(0, 2))] for t in range(25)}

    def outputs(text):
        program = parse_program(text)
        engine = IncrementalEngine(program, start=0)
        terms = program.terms
        seen = {}
        for t, atoms in stream.items():
            engine.advance_to(t, [(terms.intern(p), tuple(terms.intern(a) for a in args)) for p, args in atoms])
            seen[t] = sorted(format_fact(fact, terms) for fact in engine.holding())
        return seen

    expected = outputs(f"h(X) :- [RANGE {n}] DIAMOND p(X) .")
    assert outputs(f"h(X) :- [0,{n}] DIAMONDMINUS p(X) .") == expected
    assert any(expected.values())
