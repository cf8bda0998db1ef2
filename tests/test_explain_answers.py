"""Explanations of answer streams (the LARS papers' Def. 5, the clingo path: rsp_plugin/asp/explain.py).

On generated programs with loops through `not` (those the guess-and-check reference can try),
every atom of the chosen answer at every time point is explained, and the explanation is checked
against an answer stream the guess-and-check reference (no solver) finds with the same output:
each rule instance's head is the atom, its positive atoms hold in that interpretation at the
points claimed, its `not`s have no grounding there, its comparisons hold; no atom explains itself
(a loop through positive atoms is never an explanation); the leaves are data."""

import pytest

from lars_cases import LoopGenerator, _facts
from rsp_plugin.asp.check import GuessAndCheck
from rsp_plugin.asp.engine import AnswerStreamEngine
from rsp_plugin.lars.explain import ExplanationUnavailable
from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.builtins import compare
from rsp_plugin.lars.program import BOX, Comparison, Var
from rsp_plugin.lars.syntax import parse_program


class Interpretations(GuessAndCheck):
    """The reference, keeping the whole interpretation (data + derived atoms) of each answer stream."""

    def _answers(self, t):
        self.found = []
        return super()._answers(t)

    def _check(self, guess, t):
        output = super()._check(guess, t)
        if output is not None:
            stream = {u: set(facts) for u, facts in self.data.items()}
            for point, fact in guess:
                stream.setdefault(point, set()).add(fact)
            self.found.append((output, stream))
        return output


def holds_in(tree: dict, stream: dict, reference: Interpretations, program, t: int, above=()) -> bool:
    terms = program.terms
    bodies = reference.bodies
    facts = {format_fact(f, terms): f for u in stream for f in stream[u]}
    fact = facts.get(tree["fact"])
    if fact is None or fact not in stream.get(tree["t"], ()):
        return False
    if tree["by"] == "data":
        return fact in reference.data.get(tree["t"], ())
    assert tree["by"] == "rule", tree
    if (tree["fact"], tree["t"]) in above:
        return False  # explains itself
    rule = next(r for r in program.rules if str(r.location) == tree["at"] and r.text == tree["rule"])
    binding = {Var(name): terms.find(key) for name, key in tree["binding"].items()}
    head = (rule.head.predicate, tuple(bodies._value(a, binding) for a in rule.head.args))
    if head != fact:
        return False
    if rule.head_time is not None and terms.number(bodies._value(rule.head_time, binding)) != tree["t"]:
        return False
    bodies.stream = stream
    for literal, item in zip(rule.body, tree["body"]):
        if isinstance(literal, Comparison):
            if not compare(literal.op, bodies._value(literal.left, binding), bodies._value(literal.right, binding),
                           terms.numbers):
                return False
            continue
        if literal.negated:
            if any(True for _ in bodies._groundings(literal, binding, t)):
                return False
            continue
        points, shown = bodies._window(literal, t)
        ground = (literal.atom.predicate, tuple(bodies._value(a, binding) for a in literal.atom.args))
        if not item["witness"] or not all(u in points and ground in shown.get(u, ()) for u in item["witness"]):
            return False
        if literal.modality == BOX and item["witness"] != list(points):
            return False
        for child in item["because"]:
            if not holds_in(child, stream, reference, program, t, above + ((tree["fact"], tree["t"]),)):
                return False
    return len(tree["body"]) == len(rule.body)


@pytest.mark.parametrize("seed", range(80))
def test_explanations_of_answer_streams_hold_in_an_answer_stream_with_the_same_output(seed):
    generator = LoopGenerator(seed)
    text, stream = generator.program(), generator.stream()
    program = parse_program(text, semantics="answer-stream")
    engine = AnswerStreamEngine(program, start=0)
    reference = Interpretations(program, start=0)
    for t in range(len(stream)):
        facts = _facts(program, stream.get(t, []), t)
        engine.advance_to(t, facts)
        reference.advance_to(t, facts)
        chosen = frozenset(engine.holding())
        if not chosen:
            continue  # nothing to explain (or no answer stream at all)
        candidates = [s for output, s in reference.found if output == chosen]
        assert candidates, (text, stream, t)
        for fact in engine.holding():
            tree = engine.explain(fact)
            assert tree is not None and tree["t"] == t
            assert any(holds_in(tree, s, reference, program, t) for s in candidates), (text, stream, t, tree)


def test_a_choice_is_explained_by_what_the_answer_left_out():
    program = parse_program("on(X) :- sensor(X), not off(X) .  off(X) :- sensor(X), not on(X) .",
                            semantics="answer-stream")
    engine = AnswerStreamEngine(program, start=0)
    engine.advance_to(0, _facts(program, ["sensor(a)"], 0))
    (chosen,) = engine.holding()
    tree = engine.explain(chosen)
    assert tree["fact"] == "off(a)" and tree["body"][1] == {"literal": "not on(a)", "absent": [0, 0]}
    assert engine.explain((program.terms.find("on"), (program.terms.find("a"),))) is None
    engine.advance_to(1)
    with pytest.raises(ExplanationUnavailable):
        engine.explain(chosen, 0)
