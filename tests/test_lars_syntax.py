"""The rule language: everything DESIGN.md lists parses, and every mistake is one located line."""

import pytest

from rsp_plugin.core.errors import RuleSyntaxError
from rsp_plugin.lars.program import AT, BOX, COUNT, DIAMOND, PLAIN, RANGE, Comparison, Var, Window
from rsp_plugin.lars.syntax import parse_program

DESIGN_EXAMPLE = """\
@prefix ex: <http://example.org/> .
% comments start with % or #
warning(?b)  :- [RANGE 10] DIAMOND highTemp(?b) .
error(?b)    :- [RANGE 3] BOX highTemp(?b) .
shutdown(?b) :- error(?b) .
@?T steam(?v) :- [RANGE 5] @?T temp(?v), ?v >= 100 .
q(X, Y, Z)   :- [RANGE 3] DIAMOND a(X, Y), [COUNT 3] DIAMOND b(Y, Z) .
freeze       :- not alarm, not normal .
ex:hot(?s)   :- ?s ex:temperature ?v, ?v > 30 .      % triple sugar
?s a ex:Hot  :- ex:hot(?s) .                         # a triple as head
alarm :- x .
normal :- y .
"""


def test_the_design_example_parses():
    program = parse_program(DESIGN_EXAMPLE, "design.lars")
    terms = program.terms
    rules = program.rules
    assert len(rules) == 10
    assert rules[0].body[0].modality == DIAMOND and rules[0].body[0].window == Window(RANGE, 10)
    assert rules[1].body[0].modality == BOX and rules[1].body[0].window == Window(RANGE, 3)
    assert rules[2].body[0].modality == PLAIN and rules[2].body[0].window is None
    steam = rules[3]
    assert steam.head_time == Var("T") and steam.body[0].modality == AT and steam.body[0].time == Var("T")
    assert isinstance(steam.body[1], Comparison) and steam.body[1].op == ">="
    assert rules[4].body[1].window == Window(COUNT, 3)
    assert [b.negated for b in rules[5].body] == [True, True]
    hot = rules[6]
    assert terms.key(hot.head.predicate) == "<http://example.org/hot>"
    assert terms.key(hot.body[0].atom.predicate) == "triple"
    assert terms.key(hot.body[0].atom.args[1]) == "<http://example.org/temperature>"
    head = rules[7].head
    assert [terms.key(a) if isinstance(a, int) else a for a in head.args] == [
        Var("s"), "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<http://example.org/Hot>"]
    assert [len(s) for s in program.strata] == [9, 1]  # freeze reads alarm and normal under `not`


def test_unicode_operators_mean_the_same():
    ascii_rules = parse_program("r(X) :- [RANGE 3] DIAMOND a(X), [COUNT 2] BOX b(X), [RANGE 4] @T c(X), X ≥ 1 .")
    unicode_rules = parse_program("r(X) :- ⊞3 ◇ a(X), ⊞#2 □ b(X), ⊞^4 @T c(X), X >= 1 .")
    assert ascii_rules.rules[0].body == unicode_rules.rules[0].body


def test_constants_of_every_kind():
    program = parse_program(
        '@prefix ex: <http://example.org/> .\n'
        'p(a, 42, -7, 2.5, "s", "x"@en, "1"^^xsd:integer, <http://x/y>, ex:z) :- q .'
    )
    keys = [program.terms.key(a) for a in program.rules[0].head.args]
    assert keys == ["a", "42", "-7", "2.5", '"s"', '"x"@en', '"1"^^<http://www.w3.org/2001/XMLSchema#integer>',
                    "<http://x/y>", "<http://example.org/z>"]


def test_numbers_inside_triples_are_turtle_literals():
    program = parse_program("@prefix ex: <http://example.org/> .\nh(S) :- S ex:p 30 .")
    assert program.terms.key(program.rules[0].body[0].atom.args[2]) == (
        '"30"^^<http://www.w3.org/2001/XMLSchema#integer>')


def test_durations_need_a_tick():
    program = parse_program("@tick 1s .\nw(X) :- [RANGE 10s] DIAMOND p(X) .")
    assert program.tick_ms == 1000 and program.rules[0].body[0].window == Window(RANGE, 10)


@pytest.mark.parametrize(
    "text, where, message",
    [
        ("p(X) :- q(Y) .", "1:1", "unsafe variable X in the head"),
        ("p(X) :- q(X), X > Y .", "1:15", "unsafe variable Y"),
        ("p(X) :- q(X), not r(X, Y) .", "1:15", "unsafe variable Y under `not`"),
        ("@T p :- q .", "1:1", "unsafe variable T in the head"),
        ("ok :- a .\nbad :- b, not good .\ngood :- c, not bad .", "2:11", "a loop through `not`"),
        ("p(X) :- [COUNT 3] DIAMOND q(X) .\nq(X) :- r(X) .", "1:9", "tuple window ([COUNT n]) over an intensional predicate"),
        ("p(X) :- foo:bar(X) .", "1:9", "unknown prefix 'foo:'"),
        ("p(X) :- [RANGE 3] q(X) .", "1:9", "a window needs an operator"),
        ("p(X) :- DIAMOND q(X) .", "1:9", "DIAMOND needs a window"),
        ("p(X) :- q(X)", "1:13", "unexpected end of file"),
        ("p(X :- q(X) .", "1:5", "unexpected ':-'"),
        ("p(X) :- q(X) $ .", "1:14", "unexpected character '$'"),
        ("w(X) :- [RANGE 10s] DIAMOND p(X) .", "1:16", "needs a tick length"),
        ("p :- [COUNT 0] DIAMOND q .", "1:6", "at least one atom"),
        # a misspelt window operator reads as an atom: it is named where it is written, not at the atom after it
        ("hot(X) :- [RANGE 2] DIAMOD hot(X) .", "1:21",
         "unknown window operator 'DIAMOD' (did you mean DIAMOND?); expected DIAMOND, BOX or @T after the window"),
        ("p(X) :- [COUNT 3] BOXX q(X) .", "1:19", "unknown window operator 'BOXX' (did you mean BOX?)"),
        ("p(X) :- ⊞3 diamond q(X) .", "1:12", "unknown window operator 'diamond' (did you mean DIAMOND?)"),
        ("p(X) :- [RANGE 2] SOMETIME q(X) .", "1:19", "unknown window operator 'SOMETIME'; expected DIAMOND, BOX"),
        ("p(S) :-\n  [RANGE 2]\n  DIAMND S <http://ex/p> ?o .", "3:3", "unknown window operator 'DIAMND'"),
    ],
)
def test_every_mistake_is_one_located_line(text, where, message):
    with pytest.raises(RuleSyntaxError) as raised:
        parse_program(text, "prog.lars")
    line = str(raised.value)
    assert line.startswith(f"prog.lars:{where}: "), line
    assert message in line
    assert "\n" not in line
    assert (raised.value.filename, f"{raised.value.lineno}:{raised.value.offset}") == ("prog.lars", where)
