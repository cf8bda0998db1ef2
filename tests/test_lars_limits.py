"""What a program may ask for (issue 9, the LARS parts): windows no machine can hold, numbers
past their range and rules that derive without end are one located line, never a traceback
or a hang."""

import json
import subprocess
import sys

import pytest

from lars_cases import run
from rsp_plugin.core.errors import LocatedError
from rsp_plugin.lars.limits import LimitError
from rsp_plugin.lars.syntax import parse_program


def rsp(*args):
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("program, column, message", [
    ("h :- [COUNT 99999999999999999999] DIAMOND p .", 6,
     "[COUNT 99999999999999999999] is more than a tuple window can hold (at most 2147483647 atoms)"),
    ("h :- [RANGE 99999999999999999999] DIAMOND p .", 13,
     "[RANGE 99999999999999999999] is more time points than a window can hold"),
    ("@tick 1s .\nh :- [RANGE 99999999999999999999999s] BOX p .", 13,
     "[RANGE 99999999999999999999999s] is more time points than a window can hold"),
    ("h :- ⊞#99999999999999999999 DIAMOND p .", 6, "is more than a tuple window can hold"),
    ("h(X) :- p(X), X > 1e999 .", 19, "the number 1e999 is beyond the range of numbers"),
    ("h(1e400) :- p .", 3, "the number 1e400 is beyond the range of numbers"),
    ("h(X) :- p(Y), X = Y + " + "9" * 400 + " .", 23, "is beyond the range of numbers"),
    ("h :- @99999999999999999999 p .", 7, "the time point 99999999999999999999 is beyond the timeline"),
])
def test_what_cannot_be_held_is_a_located_error(program, column, message):
    with pytest.raises(LocatedError) as raised:
        parse_program(program, "big.lars")
    error = raised.value
    assert (error.filename, error.offset) == ("big.lars", column)
    assert message in error.msg


def test_arithmetic_past_the_range_of_numbers_stops_at_the_comparison():
    program = "big(X) :- p(Y), X = Y * 1e300 * 1e300 ."
    with pytest.raises(LimitError) as raised:
        run(program, {0: ["p(1)"], 1: ["p(5)"]})
    assert str(raised.value).startswith("<program>:1:17: at time point 0, inf is beyond the range of numbers")
    assert "rule 'big(X) :- p(Y), X = Y * 1e300 * 1e300 .'" in str(raised.value)


def test_an_integer_that_grows_without_end_stops_too():
    # doubling: 2^1024 is past the range after 1024 time points; at most 1100 are needed
    program = "n(1) :- start .\n@U n(X) :- @T n(Y), X = Y * 2, U = T + 1 ."
    with pytest.raises(LimitError) as raised:
        run(program, {0: ["start"], 1100: []})
    assert "is beyond the range of numbers" in str(raised.value)
    assert str(raised.value).startswith("<program>:2:")


@pytest.mark.parametrize("engine", ["incremental", "reference"])
def test_a_rule_that_invents_values_stops_at_the_bound_naming_the_rule(engine):
    program = "seed(0) .\np(X) :- seed(X) .\np(X) :- p(Y), X = Y + 1 ."
    with pytest.raises(LimitError) as raised:
        run(program, {0: []}, engine=engine, max_derivations=500)
    assert str(raised.value) == (
        "<program>:3:1: more than 500 new atoms at time point 0: the rule 'p(X) :- p(Y), X = Y + 1 .' "
        "keeps deriving new ones (a rule that invents values, such as X = Y + 1 in a recursive rule, "
        "never stops); raise the bound with --max-derivations N (max_derivations=N)")


def test_a_bounded_recursion_below_the_bound_runs_to_its_end():
    program = "p(0) :- go .\np(X) :- p(Y), X = Y + 1, X <= 300 .\ndone :- p(300) ."
    assert "done" in run(program, {0: ["go"]}, max_derivations=400)[0]


def test_the_command_line_stops_with_one_line_and_keeps_the_lines_before(tmp_path):
    program = tmp_path / "loop.lars"
    program.write_text("q(X) :- start(X) .\nq(X) :- q(Y), X = Y + 1 .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("0 other\n1 start(0)\n")
    done = rsp("reason", program, "--stream", stream, "--max-derivations", "50")
    assert done.returncode == 2
    assert [json.loads(line) for line in done.stdout.splitlines()] == [{"t": 0, "atoms": []}]
    assert done.stderr.splitlines() == [
        f"rsp-plugin: {program}:2:1: more than 50 new atoms at time point 1: the rule 'q(X) :- q(Y), X = Y + 1 .' "
        "keeps deriving new ones (a rule that invents values, such as X = Y + 1 in a recursive rule, "
        "never stops); raise the bound with --max-derivations N (max_derivations=N)"]


def test_a_window_too_large_on_the_command_line(tmp_path):
    program = tmp_path / "big.lars"
    program.write_text("h :- [COUNT 99999999999999999999] DIAMOND p .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("0 p\n")
    done = rsp("reason", program, "--stream", stream)
    assert done.returncode == 2 and "Traceback" not in done.stderr
    assert done.stderr.strip() == (f"rsp-plugin: {program}:1:6: [COUNT 99999999999999999999] is more than "
                                   "a tuple window can hold (at most 2147483647 atoms)")


PRODUCT = "q(X,Y,Z,W) :- a(X), a(Y), a(Z), a(W), X != Y ."


@pytest.mark.parametrize("semi_naive", [True, False])
def test_a_product_stops_while_it_joins_not_when_memory_ends(semi_naive):
    # 100 facts make 10^8 derivations; counted while the join runs, it stops at 4 x the bound
    # (before, derivations were counted after the join: MemoryError past 6 GB)
    with pytest.raises(LimitError) as raised:
        run(PRODUCT, {0: [f"a({i})" for i in range(100)]}, max_derivations=1000, semi_naive=semi_naive)
    assert str(raised.value) == (
        "<program>:1:1: more than 4000 derivations of one rule at time point 0: the rule "
        f"'{PRODUCT}' joins more than can be held (atoms that share no variable make every combination); "
        "raise the bound with --max-derivations N (max_derivations=N; a rule's joins may make 4 x N derivations)")


def test_a_join_with_many_repeats_below_the_bound_runs_to_its_end():
    # 30^2 = 900 derivations of one atom h each time point: repeats are no reason to stop
    program = "h :- a(X), a(Y) .\nboth(X, Y) :- a(X), a(Y), X < Y ."
    output = run(program, {0: [f"a({i})" for i in range(30)]}, max_derivations=500)
    assert "h" in output[0] and len(output[0]) == 1 + 30 * 29 // 2


def test_the_command_line_stops_a_product_with_one_located_line(tmp_path):
    program = tmp_path / "product.lars"
    program.write_text(f"% four atoms, no shared variable\n{PRODUCT}\n")
    stream = tmp_path / "s.stream"
    stream.write_text("".join(f"1 a({i})\n" for i in range(100)))
    done = rsp("reason", program, "--stream", stream, "--max-derivations", "2000")
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"rsp-plugin: {program}:2:1: more than 8000 derivations of one rule at time point 1: the rule '{PRODUCT}' "
        "joins more than can be held (atoms that share no variable make every combination); raise the bound with "
        "--max-derivations N (max_derivations=N; a rule's joins may make 4 x N derivations)"]
