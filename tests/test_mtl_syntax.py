"""DatalogMTL programs and data: MeTeoR's syntax, the LARS form, and every mistake as one located line."""

import pytest

from rsp_plugin.core.errors import RuleSyntaxError
from rsp_plugin.io.formats import Rejected
from rsp_plugin.lars.metric import SINCE, PastWindow
from rsp_plugin.lars.program import BOX, DIAMOND, PLAIN
from rsp_plugin.mtl.programs import parse_program  # (LARS or DatalogMTL: the one place that tells them apart)
from rsp_plugin.mtl import load_program
from rsp_plugin.mtl.data import TimedFact, read_dataset
from rsp_plugin.lars.metric_rules import Binary, Temporal
from rsp_plugin.mtl.syntax import parse_mtl
from rsp_plugin.core.terms import Dictionary


def _error(text, filename="p.mtl", parse=parse_mtl):
    with pytest.raises(RuleSyntaxError) as caught:
        parse(text, filename)
    return str(caught.value)


# MeTeoR's syntax ----------------------------------------------------------------------------


def test_the_short_stop_rules_read_as_meteor_writes_them():
    program = parse_mtl("NotPos(V):-NotOnMap(V)\n"
                        "ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)")
    second = program.rules[1]
    assert [type(b).__name__ for b in second.body] == ["Written", "Temporal", "Temporal"]
    assert (second.body[1].operator, str(second.body[1].interval)) == ("Boxminus", "[1,1]")
    assert program.terms.key(second.head.predicate) == "ShortStop"


def test_intervals_open_closed_decimal_one_point_and_unbounded():
    program = parse_mtl("H(X):-Diamondminus(0,3]A(X), Boxminus[0.5,2.5]B(X), Diamondminus[2]C(X), "
                        "Diamondminus[1,+inf)D(X), Diamondminus[1,inf)E(X)")
    bounds = [literal.interval.integers() for literal in program.rules[0].body]
    assert bounds == [(1, 3), (1, 2), (2, 2), (1, None), (1, None)]


def test_since_nested_operators_and_prefixed_predicates():
    program = parse_mtl("a1:LecturerCandidate(X):-a1:publicationAuthor(Y,X)Since(0,1]a1:Publication(Y), "
                        "Boxminus[0,4]Diamondminus[0,2]a1:Signal(X)")
    since, nested = program.rules[0].body
    assert isinstance(since, Binary) and since.operator == "Since"
    assert isinstance(nested, Temporal) and isinstance(nested.operand, Temporal)
    assert program.terms.key(since.right.atom.predicate) == "a1:Publication"  # a name as written


def test_a_declared_prefix_makes_a_binary_predicate_an_rdf_triple():
    program = parse_mtl("@prefix ex: <http://ex/> .\nex:slow(X,Y):-Boxminus[0,2]ex:speed(X,Y)")
    head = program.rules[0].head
    assert program.terms.key(head.predicate) == "triple"
    assert program.terms.key(head.args[1]) == "<http://ex/slow>"


def test_upper_case_terms_are_variables_in_rules_and_constants_in_data():
    program = parse_mtl("H(X):-A(X,c)")
    assert [type(a).__name__ for a in program.rules[0].body[0].atom.args] == ["Var", "int"]
    terms = Dictionary()
    (fact,) = read_dataset(["A(ID1,c)@[1,1]"], terms)
    assert [terms.key(a) for a in fact.fact[1]] == ["ID1", "c"]


def test_old_signed_always_and_sometime_read_as_past_operators():
    program = parse_mtl("Flag(X):-ALWAYS[-4,0]SOMETIME[-2,0]Signal(X)")
    outer = program.rules[0].body[0]
    assert (outer.operator, outer.interval.integers()) == ("Boxminus", (0, 4))
    assert (outer.operand.operator, outer.operand.interval.integers()) == ("Diamondminus", (0, 2))


# what the engine runs ---------------------------------------------------------------------------


def test_operators_become_bounds_on_the_engines_windows():
    lowered = load_program("H(X):-A(X), Diamondminus[0,3]B(X), Diamondminus(1,4]C(X), Boxminus[0,2]D(X), "
                           "Boxminus[2,2]E(X), F(X)Since[0,5]G(X)")
    (rule,) = lowered.program.rules
    shapes = [(b.modality, b.window.low if b.window else None, b.window.high if b.window else None)
              for b in rule.body]
    assert shapes == [(PLAIN, None, None), (DIAMOND, 0, 3), (DIAMOND, 2, 4), (BOX, 0, 2),
                      (DIAMOND, 2, 2),  # one point: Boxminus and Diamondminus agree
                      (SINCE, 0, 5)]
    assert all(isinstance(b.window, PastWindow) for b in rule.body[1:])


def test_a_boxplus_head_is_an_auxiliary_read_through_diamondminus_and_is_hidden():
    lowered = load_program("Boxplus[1,2]Off(X):-Alarm(X)")
    placed, rule = lowered.program.rules
    assert placed.body[0].window == PastWindow(1, 2) and placed.body[0].modality == DIAMOND
    assert rule.head.predicate in lowered.hidden and placed.head.predicate not in lowered.hidden


def test_a_since_whose_left_operand_binds_more_is_split_at_distance_two():
    lowered = load_program("H(X):-A(X,Z)Since[0,4]B(X)")
    texts = sorted(rule.text for rule in lowered.program.rules)
    assert texts == [
        "B#since1(X,Z) :- Diamondminus[1,1] B(X), A(X,Z)",
        "H(X) :- A(X,Z) Since[1,3] B#since1(X,Z)",
        "H(X) :- Diamondminus[0,1] B(X)",
    ]


# the LARS form ---------------------------------------------------------------------------------


def test_the_lars_form_reads_metric_literals_beside_windows_and_comparisons():
    program = parse_program("alarm(X) :- [1,1] BOXMINUS hot(X), quiet(X) SINCE (0,3] reset(X), "
                            "[RANGE 3] DIAMOND smoke(X), X != 2 .")
    body = program.rules[0].body
    assert [(b.modality, str(b.window)) for b in body[:3]] == [
        (DIAMOND, "[1,1]"), (SINCE, "[1,3]"), (DIAMOND, "Window(kind='range', size=3)")]


def test_the_lars_form_places_heads_with_boxplus():
    program = parse_program("[1,2] BOXPLUS off(X) :- alarm(X) .")
    assert len(program.rules) == 2 and len(program.hidden) == 1


def test_a_meteor_program_is_accepted_where_a_lars_program_is():
    program = parse_program("ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V)", "<rules>")
    assert program.rules[0].body[1].window == PastWindow(1, 1)


# mistakes, each one line in the user's words ------------------------------------------------------


@pytest.mark.parametrize("text, expected", [
    ("H(X):-Boxplus[1,2]B(X)",
     "p.mtl:1:7: Boxplus in a body looks into the future: the rule is not forward-propagating"),
    ("H(X):-Diamondplus[0,2]B(X)", "p.mtl:1:7: Diamondplus in a body looks into the future"),
    ("H(X):-A(X)Until[0,2]B(X)", "p.mtl:1:11: Until in a body looks into the future"),
    ("Boxminus[1,2]H(X):-B(X)", "p.mtl:1:1: Boxminus[1,2] in a head puts the atom in the past"),
    ("Diamondplus[1,3]H(X):-B(X)", "p.mtl:1:1: Diamondplus[1,3] in a head would say the atom holds at one unknown"),
    ("H(X):-Diamondminus(0,1)B(X)",
     "p.mtl:1:7: Diamondminus(0,1) contains no time point of the integer timeline"),
    ("H(X):-Boxminus[1,inf)B(X)", "p.mtl:1:7: Boxminus[1,inf) asks for the atom at every past time point"),
    ("H(Z):-A(Z,X)Since[0,2]B(X)", "p.mtl:1:1: unsafe variable Z in the head: it occurs only in the left operand"),
    ("H(Y):-B(X)", "p.mtl:1:1: unsafe variable Y in the head"),
    ("H(X):-Diamondminus[0,2](A(X,Z)Since[0,2]B(X))", "p.mtl:1:31: variable Z occurs only in the left operand"),
    ("H(X):-Boxminus[-1,2]B(X)", "p.mtl:1:15: the interval [-1,2] has a negative bound"),
    ("H(X):-Boxminus[3,2]B(X)", "p.mtl:1:15: the interval [3,2] is empty"),
    ("H(X) B(X)", "p.mtl:1:6: expected ':-' after the head"),
    ("H(X):-B(X", "p.mtl:1:10: expected ')' after the arguments"),
    ("H(X):-", "p.mtl:1:7: expected a body atom"),
])
def test_mistakes_are_one_located_line(text, expected):
    message = _error(text)
    assert message.startswith(expected), message
    assert "\n" not in message and "Tree(" not in message and "Token(" not in message


def test_a_mistake_in_the_lars_form_is_located_too():
    message = _error("h(X) :- [0,2] BOXPLUS b(X) .", "p.lars", parse=parse_program)
    assert message.startswith("p.lars:1:9: Boxplus in a body looks into the future"), message


# data ----------------------------------------------------------------------------------------------


def test_facts_over_intervals_cover_their_integer_time_points():
    terms = Dictionary()
    items = list(read_dataset(["Pos(v)@[1,1]", "Pos(v)@3", "Fault(m)@(2,5]", "Fault(m)@[1.5,3.5)", "Go@[7]"],
                              terms))
    assert [(i.first, i.last) for i in items] == [(1, 1), (3, 3), (3, 5), (2, 3), (7, 7)]
    assert all(isinstance(i, TimedFact) for i in items)


def test_malformed_fact_lines_are_set_aside_with_file_and_line():
    terms = Dictionary()
    items = list(read_dataset(["Pos(v)@[1,1]", "Pos(v)", "Pos(v)@[2,", "Pos(X)@[1,1] extra", "Pos(v)@(1,2)",
                               "Pos(v)@[3,inf)", "Pos(?x)@1"], terms, filename="d.txt"))
    assert [str(i) for i in items if isinstance(i, Rejected)] == [
        "d.txt:2: expected '@' and the time, e.g. Pred(a,b)@[1,2]",
        "d.txt:3: expected a number or 'inf' ending the interval",
        "d.txt:4: unexpected text after the fact: 'extra'",
        "d.txt:5: the interval (1,2) covers no time point of the integer timeline",
        "d.txt:6: the interval [3,inf) has no end: a stream element must end",
        "d.txt:7: a fact has no variables",
    ]
