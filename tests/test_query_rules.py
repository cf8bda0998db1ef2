"""A query's RULES: a derived triple lives as long as its premises are in the window (issue 30).

The semantics (docs/queries.md, "RULES"): the window's triples hold while they are in it, and
a triple the program derives holds as long as the premises it was derived from, as under
ENTAILMENT. Checked against the naive LARS evaluator (`rsp_plugin.lars.reference`):

- a program that reads no time: at each report tau, the window's content computed from the
  definition (tau - RANGE <= t < tau) is given to the reference at one time point; what it
  derives, with the window, is what the query must see;
- a program that reads time: the reference runs the program over the window's triples, each
  holding at the ticks whose window holds it (`[RANGE n] DIAMOND` of its arrival tick).
"""

from __future__ import annotations

import random

import pytest
from rdflib import Literal, URIRef

from rsp_plugin.core.errors import QuerySyntaxError
from rsp_plugin.lars.reference import ReferenceEvaluator
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.core.rdfterms import term_key
from rsp_plugin.runtime.engine import RSPEngine
from rsp_plugin.core.terms import TRIPLE, Dictionary

EX = "http://ex/"
STREAM = EX + "s"
HOT = "@prefix ex: <http://ex/> .\n?s a ex:Hot :- ?s ex:temp ?v, ?v > 30 .\n"


def run(query: str, elements, program: str, tmp_path, **register) -> dict[int, list]:
    (tmp_path / "rules.lars").write_text(program)
    engine = RSPEngine()
    engine.register_stream(STREAM)
    engine.register_query(query.replace("RULES_FILE", (tmp_path / "rules.lars").as_uri()), **register)
    for t, triple in elements:
        engine.push(STREAM, [triple], timestamp=t)
    return {result.t: sorted(tuple(row.values()) for row in result.to_json()["bindings"]) for result in engine.finish()}


def triple(s, p, o):
    return URIRef(EX + s), URIRef(EX + p), o if isinstance(o, Literal) else URIRef(EX + o)


def test_a_derived_triple_holds_while_its_premise_is_in_the_window_as_under_entailment(tmp_path):
    query = ("PREFIX ex: <http://ex/>\nSELECT ?s FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] RULES <RULES_FILE> "
             "WHERE { ?s a ex:Hot }")
    stream = [(500, triple("a", "temp", Literal(31)))]
    # the temperature is in the windows of 1000 and 2000: so is ?s a Hot (it was gone at 2000 before)
    assert run(query, stream, HOT, tmp_path) == {1000: [("<http://ex/a>",)], 2000: [("<http://ex/a>",)]}
    entailed = query.replace("RULES <RULES_FILE>", "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> RULES <RULES_FILE>")
    assert run(entailed, stream, HOT, tmp_path) == run(query, stream, HOT, tmp_path)


def test_a_derived_triple_lives_as_long_as_its_shortest_lived_premise(tmp_path):
    program = "@prefix ex: <http://ex/> .\n?s ex:near ?o :- ?s ex:at ?place, ?o ex:at ?place, ?s != ?o .\n"
    query = ("PREFIX ex: <http://ex/>\nSELECT ?s ?o FROM STREAM <http://ex/s> [RANGE 3s STEP 1s] RULES <RULES_FILE> "
             "WHERE { ?s ex:near ?o }")
    stream = [(100, triple("ann", "at", "hall")), (2100, triple("bob", "at", "hall"))]
    # ann's triple is in the windows of 1000..3000, bob's of 3000..5000: they are near at 3000 only
    shown = run(query, stream, program, tmp_path)
    ann, bob = "<http://ex/ann>", "<http://ex/bob>"
    assert shown == {1000: [], 2000: [], 3000: [(ann, bob), (bob, ann)], 4000: [], 5000: []}


def test_a_program_that_reads_time_counts_ticks_of_the_step_which_must_divide_the_window(tmp_path):
    program = "@prefix ex: <http://ex/> .\n?x a ex:Alarm :- [RANGE 1] BOX ?x ex:state ex:hot .\n"
    query = ("PREFIX ex: <http://ex/>\nSELECT ?x FROM STREAM <http://ex/s> [RANGE 1500ms STEP 1s] RULES <RULES_FILE> "
             "WHERE { ?x a ex:Alarm }")
    with pytest.raises(QuerySyntaxError, match=r"ticks of one STEP \(1000 ms; @tick sets another\).*set @tick 500ms"):
        run(query, [], program, tmp_path)
    assert run(query, [(100, triple("a", "state", "hot"))], program.replace(" .\n", " .\n@tick 500ms .\n", 1),
               tmp_path) is not None
    # a program that reads no time needs no tick: any window
    assert run(query.replace("ex:Alarm", "ex:Hot"), [(100, triple("a", "temp", Literal(40)))], HOT, tmp_path) == {
        1000: [("<http://ex/a>",)]}


# against the reference evaluator -------------------------------------------------------------------

PLAIN_PROGRAMS = [
    HOT,
    "@prefix ex: <http://ex/> .\n?s a ex:Hot :- ?s ex:temp ?v, ?v > 4 .\n?s ex:warns ?o :- ?s a ex:Hot, ?s ex:p ?o .\n",
    "@prefix ex: <http://ex/> .\n?a ex:reach ?b :- ?a ex:p ?b .\n?a ex:reach ?c :- ?a ex:reach ?b, ?b ex:p ?c .\n",
    "@prefix ex: <http://ex/> .\n?a ex:alone ?v :- ?a ex:temp ?v, not ?a ex:p ex:i0 .\n",
    "@prefix ex: <http://ex/> .\n?a ex:double ?w :- ?a ex:temp ?v, ?w = ?v * 2 .\n",
]
TEMPORAL_PROGRAMS = [
    "@prefix ex: <http://ex/> .\n?a a ex:Steady :- [RANGE 1] BOX ?a ex:p ?b .\n",
    "@prefix ex: <http://ex/> .\n?a a ex:Recent :- [RANGE 2] DIAMOND ?a ex:temp ?v, ?v > 5 .\n",
    "@prefix ex: <http://ex/> .\n?a ex:hot ?v :- ?a ex:temp ?v, ?v > 3 .\n?a a ex:Alarm :- [RANGE 1] BOX ?a ex:hot ?v .\n",
]


class Case:
    def __init__(self, seed: int, programs: list[str], *, even: bool):
        draw = random.Random(seed)
        self.program = programs[seed % len(programs)]
        self.step = draw.choice([500, 1000])
        multiples = [1, 2, 3] if even else [1, 1.5, 2, 2.5, 3]
        self.range = int(self.step * draw.choice(multiples))
        self.elements = []
        for _ in range(draw.randint(1, 12)):
            t = draw.randint(0, 4000)
            subject = f"i{draw.randrange(4)}"
            if draw.random() < 0.5:
                self.elements.append((t, triple(subject, "p", f"i{draw.randrange(4)}")))
            else:
                self.elements.append((t, triple(subject, "temp", Literal(draw.randint(0, 9)))))
        self.elements.sort(key=lambda element: element[0])

    def query(self) -> str:
        return (f"SELECT ?s ?p ?o FROM STREAM <{STREAM}> [RANGE {self.range}ms STEP {self.step}ms] "
                "RULES <RULES_FILE> WHERE { ?s ?p ?o }")

    def reports(self) -> list[int]:
        first, last = self.elements[0][0], self.elements[-1][0]
        tau = (first // self.step + 1) * self.step
        out = []
        while tau - self.range <= last:
            out.append(tau)
            tau += self.step
        return out

    def window(self, tau: int) -> set:
        return {tuple(map(term_key, triple)) for t, triple in self.elements if tau - self.range <= t < tau}

    def expected_plain(self) -> dict[int, list]:
        """Each report's window, and what the reference derives from it at one time point."""
        out = {}
        for tau in self.reports():
            terms = Dictionary()
            program = parse_program(self.program, "rules.lars", terms)
            reference = ReferenceEvaluator(program)
            window = self.window(tau)
            facts = [(terms.intern(TRIPLE), tuple(terms.intern(key) for key in keys)) for keys in window]
            derived = reference.advance_to(0, facts)
            shown = set(window) | {tuple(terms.key(term) for term in args) for predicate, args in derived
                                   if predicate == terms.find(TRIPLE) and len(args) == 3}
            out[tau] = sorted(shown)
        return out

    def expected_temporal(self) -> dict[int, list]:
        """The reference over the window's triples, each at the ticks (of one STEP) whose window holds it."""
        terms = Dictionary()
        lift = f"?s ?p ?o :- [RANGE {self.range // self.step - 1}] DIAMOND in_window(?s, ?p, ?o) .\n"
        program = parse_program(self.program + lift, "rules.lars", terms)
        # the program's timeline starts at the first element's tick (DESIGN.md: windows reach back to t0)
        reference = ReferenceEvaluator(program, start=self.elements[0][0] // self.step + 1)
        arrivals: dict[int, list] = {}
        for t, element in self.elements:
            arrivals.setdefault(t // self.step + 1, []).append(
                (terms.intern("in_window"), tuple(terms.intern(term_key(term)) for term in element)))
        out = {}
        for tau in self.reports():
            point = tau // self.step
            for earlier in sorted(p for p in arrivals if reference.now is None or reference.now < p < point):
                reference.advance_to(earlier, arrivals[earlier])
            holding = reference.advance_to(point, arrivals.get(point, ()))
            out[tau] = sorted(tuple(terms.key(term) for term in args) for predicate, args in holding
                              if predicate == terms.find(TRIPLE) and len(args) == 3)
        return out


@pytest.mark.parametrize("seed", range(40))
def test_a_program_that_reads_no_time_derives_from_each_reports_window_as_the_reference(seed, tmp_path):
    case = Case(seed, PLAIN_PROGRAMS, even=False)
    got = run(case.query(), case.elements, case.program, tmp_path)
    assert got == case.expected_plain(), (case.program, case.range, case.step, case.elements)


@pytest.mark.parametrize("seed", range(24))
def test_a_program_that_reads_time_agrees_with_the_reference_over_the_windows_ticks(seed, tmp_path):
    case = Case(seed, TEMPORAL_PROGRAMS, even=True)
    got = run(case.query(), case.elements, case.program, tmp_path)
    assert got == case.expected_temporal(), (case.program, case.range, case.step, case.elements)


def test_the_cases_derive_something_beyond_their_windows():
    plain = [Case(seed, PLAIN_PROGRAMS, even=False) for seed in range(40)]
    temporal = [Case(seed, TEMPORAL_PROGRAMS, even=True) for seed in range(24)]
    assert sum(any(len(shown) > len(case.window(tau)) for tau, shown in case.expected_plain().items())
               for case in plain) >= 20
    assert sum(any(len(shown) > len(case.window(tau)) for tau, shown in case.expected_temporal().items())
               for case in temporal) >= 12
    assert any(case.range % case.step for case in plain)  # windows that are no whole number of steps


def test_a_rules_number_and_the_same_literal_from_the_stream_are_one_triple_while_either_holds(tmp_path):
    program = "@prefix ex: <http://ex/> .\n?s ex:limit ?l :- ?s ex:on ex:x, ?l = 30 .\n"   # a bare 30: "30"^^xsd:integer
    query = ("PREFIX ex: <http://ex/>\nSELECT ?s ?l FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] RULES <RULES_FILE> "
             "WHERE { ?s ex:limit ?l }")
    stream = [(100, triple("a", "limit", Literal(30))), (1100, triple("a", "on", "x"))]
    row = [("<http://ex/a>", '"30"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    # the stream's triple is in the windows of 1000 and 2000, the derived one in those of 2000 and 3000
    assert run(query, stream, program, tmp_path) == {1000: row, 2000: row, 3000: row}
