"""Explanations of DatalogMTL facts (programs compiled onto the engine, `rsp_plugin/mtl/`): every
explanation of every fact at every time point of generated programs is checked against the
reference evaluator reading the compiled rules' metric windows from their definitions
(`explain_check.MetricReference`): Diamondminus' witness, Boxminus' run, Since's witness and
the left operand after it, the horizons."""

import json

import pytest

from explain_check import Checker, MetricReference
from mtl_cases import ProgramGenerator
from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.mtl.data import fact_timeline, read_dataset
from rsp_plugin.lars.metric_lower import lower_program
from rsp_plugin.mtl.syntax import parse_mtl

LAST = 14


def explain_all(text: str, lines: list[str]) -> int:
    program = parse_mtl(text, "<generated>")
    lowered = lower_program(program)
    timeline = list(fact_timeline(read_dataset(lines, program.terms), first=0, last=LAST))
    engine = IncrementalEngine(lowered.program, start=0, pruning=False, explain=10_000)
    reference = MetricReference(lowered.program, start=0)
    checker = Checker(lowered.program, reference)
    explained = 0
    for t, facts in timeline:
        engine.advance_to(t, facts)
        reference.advance_to(t, facts)
        for fact in engine.holding():
            tree = engine.explain(fact, t)
            assert tree is not None, format_fact(fact, program.terms)
            shown = json.dumps(tree)
            assert '"forgotten"' not in shown and '"truncated"' not in shown, shown
            checker.check_tree(tree, t)
            explained += 1
    checker.check_horizons(LAST)
    return explained


@pytest.mark.parametrize("seed", range(150))
def test_explanations_of_generated_datalogmtl_programs_hold_in_the_reference(seed):
    generator = ProgramGenerator(seed)
    text, lines = generator.program(), generator.stream()
    try:
        explain_all(text, lines)
    except AssertionError as failure:
        raise AssertionError(f"program:\n{text}\nstream: {lines}\n{failure}") from None


def test_the_generated_programs_are_explained_through_every_operator():
    seen = set()
    for seed in range(60):
        generator = ProgramGenerator(seed)
        program = parse_mtl(generator.program(), "<generated>")
        lowered = lower_program(program)
        engine = IncrementalEngine(lowered.program, start=0, pruning=False, explain=True)
        for t, facts in fact_timeline(read_dataset(generator.stream(), program.terms), first=0, last=LAST):
            engine.advance_to(t, facts)
            for fact in engine.holding():
                for item in engine.explain(fact, t)["body"]:
                    seen.add(item["literal"].split("[")[0].split()[-1])
    assert {"Diamondminus", "Boxminus", "Since"} <= seen, seen
