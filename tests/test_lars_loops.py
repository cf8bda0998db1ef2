"""Loops through DIAMOND: `p :- [RANGE 1] DIAMOND q .  q :- [RANGE 1] DIAMOND p .`

Under the derived-stream semantics one q keeps p and q in the stream for ever
(each sees the other in its window). The engine must say so at every time point
and finish each one: a derived atom's promise may not grow without end inside a
fixpoint. Checked on the example and on generated programs with such loops,
against the reference evaluator."""

import random

import pytest

from lars_cases import run


def test_two_diamonds_that_read_each_other_hold_for_ever_after_one_q():
    program = "p :- [RANGE 1] DIAMOND q .\nq :- [RANGE 1] DIAMOND p .\n"
    stream = {0: ["q"], 6: ["r"]}
    expected = {t: {"p", "q"} for t in range(7)}
    assert run(program, stream, engine="reference") == expected
    assert run(program, stream) == expected
    assert run(program, stream, semi_naive=False) == expected


def test_a_loop_that_a_box_cuts_ends_when_the_data_stop():
    # alive needs beat in each of the last 3 points; the loop keeps `up` only as long as alive does
    program = ("alive :- [RANGE 2] BOX beat .\n"
               "up :- alive .\n"
               "up :- [RANGE 1] DIAMOND up, [RANGE 3] DIAMOND alive .\n")
    stream = {0: ["beat"], 1: ["beat"], 2: ["beat"], 3: ["beat"], 9: ["x"]}
    assert run(program, stream) == run(program, stream, engine="reference")


def _looping_program(rnd: random.Random) -> tuple[str, dict[int, list[str]]]:
    derived = {"p": rnd.choice([0, 1]), "q": rnd.choice([0, 1]), "r": rnd.choice([0, 1])}
    data = {"d": 1, "e": 0}

    def atom(name: str, arity: int) -> str:
        return f"{name}(X)" if arity else name

    rules = []
    names = list(derived)
    for head in names:
        for _ in range(rnd.randint(1, 2)):
            body = []
            reads = rnd.sample(names, rnd.randint(1, 2))
            for name in reads:
                window = rnd.choice(["[RANGE 1] DIAMOND ", "[RANGE 2] DIAMOND ", "[RANGE 3] DIAMOND ",
                                     "[RANGE 1] BOX ", ""])
                body.append(window + atom(name, derived[name]))
            source = rnd.choice(list(data))
            body.append(rnd.choice(["[RANGE 2] DIAMOND ", "[RANGE 4] DIAMOND ", ""]) + atom(source, data[source]))
            if derived[head] and not any(data[source] or derived[n] for n in reads):
                continue  # X must be bound by the body
            if derived[head] and not any(("(X)" in b) for b in body):
                continue
            rules.append(f"{atom(head, derived[head])} :- {', '.join(body)} .")
        if derived[head]:  # a way in from the data
            rules.append(f"{head}(X) :- d(X) .")
        else:
            rules.append(f"{head} :- e .")
    stream: dict[int, list[str]] = {}
    for t in range(rnd.randint(6, 14)):
        atoms = []
        if rnd.random() < 0.4:
            atoms.append(f"d({rnd.choice('ab')})")
        if rnd.random() < 0.3:
            atoms.append("e")
        if atoms or t == 0:
            stream[t] = atoms or ["z"]
    return "\n".join(rules) + "\n", stream


@pytest.mark.parametrize("seed", range(150))
def test_generated_loops_through_diamond_agree_with_the_reference(seed):
    program, stream = _looping_program(random.Random(seed))
    expected = run(program, stream, engine="reference")
    assert run(program, stream) == expected, f"program:\n{program}\nstream: {stream}"
