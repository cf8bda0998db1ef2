"""Explanations of RDFS / OWL 2 RL entailments over windows (rsp_plugin/reasoning/explain.py).

On the generated cases of the differential test (an ontology partly in the
background, partly streamed, instance triples through a window), every triple
that holds at every time point is explained, and every explanation is checked
to be a valid application of the rule it names: its binding, put into the rule,
gives the triple as head and the triples below as body, its comparisons hold,
its horizon is the least of its body's; and its leaves are triples that arrived
in the window (and hold until arrival + window) or background triples.
"""

import pytest

from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.builtins import compare
from rsp_plugin.lars.program import Comparison, Var
from rsp_plugin.reasoning import Materializer, intern_triples
from rsp_plugin.reasoning.datatypes import literal_facts
from rsp_plugin.core.terms import Dictionary
from rsp_plugin.core.time import NEVER_EXPIRES
from test_reasoning_differential import TIME_POINTS, generated_case


class EntailmentChecker:
    def __init__(self, m: Materializer, background: set, stream: dict, window: int, terms: Dictionary):
        self.m = m
        self.terms = terms
        self.background = background
        self.stream = stream
        self.window = window
        self.rules = {str(rule.location): rule for rule in m.program.rules}
        self.axioms = {tuple(rule.head.args) for rule in self._rule_set_facts()}
        self.leaves = {"window": 0, "background": 0}

    def _rule_set_facts(self):
        from rsp_plugin.reasoning.materializer import PROFILES, is_ground_triple_fact
        from rsp_plugin.reasoning.rulesets import rules_of

        files, _ = PROFILES[self.m.profile]
        for name in files:
            for rule in rules_of(name, self.terms):
                if is_ground_triple_fact(rule, self.m._triple):
                    yield rule

    def triple_of(self, node) -> tuple:
        s, p, o = node["triple"].rstrip(" .").split(" ", 2) if "triple" in node else (None, None, None)
        return tuple(self.terms.find(key) for key in (s, p, o))

    def check(self, node: dict) -> int:
        """Check the node; its horizon (NEVER_EXPIRES for none)."""
        by = node["by"]
        if by == "same":
            return None
        if by == "window":
            triple = self.triple_of(node)
            arrived = node["arrived"]
            assert node["t"] - self.window <= arrived <= node["t"], node
            assert triple in self.stream.get(arrived, ()), node
            assert node["horizon"] == arrived + self.window, node
            self.leaves["window"] += 1
            return node["horizon"]
        if by == "background":
            if "triple" in node:
                assert self.triple_of(node) in self.background | self.axioms, node
            else:  # a fact about a literal the materializer learned (datatype_of, ill_formed)
                name, _, rest = node["fact"].partition("(")
                literal = self.terms.find(rest[:-1].split(",")[0]) if rest else None
                assert literal is not None and name in {n for n, _ in literal_facts(self.terms.key(literal))}, node
            self.leaves["background"] += 1
            return NEVER_EXPIRES
        assert by == "rule", node
        rule = self.rules[node["at"]]
        binding = {Var(name): self.terms.find(key) for name, key in node["binding"].items()}
        value = lambda a: binding[a] if isinstance(a, Var) else a
        head = (rule.head.predicate, tuple(value(a) for a in rule.head.args))
        assert format_fact(head, self.terms) == node["fact"], node
        horizons = []
        for literal, item in zip(rule.body, node["body"]):
            if isinstance(literal, Comparison):
                assert compare(literal.op, value(literal.left), value(literal.right), self.terms.numbers), node
                continue
            assert not literal.negated, node
            atom = (literal.atom.predicate, tuple(value(a) for a in literal.atom.args))
            (child,) = item["because"]
            assert child["fact"] == format_fact(atom, self.terms), (node, item)
            below = self.check(child)
            claimed = NEVER_EXPIRES if item["horizon"] is None else item["horizon"]
            assert below is None or claimed >= below, (node, item)
            horizons.append(claimed)
        assert len(node["body"]) == len(rule.body), node
        horizon = NEVER_EXPIRES if node["horizon"] is None else node["horizon"]
        assert horizon == min(horizons, default=NEVER_EXPIRES), node
        return horizon


def explain_every_entailment(seed: int, profile: str) -> dict:
    background, stream, window = generated_case(seed, profile)
    terms = Dictionary()
    given = intern_triples(background, terms)
    m = Materializer(profile, window=window, background=given, terms=terms, explain=True)
    ids = {t: intern_triples(stream.get(t, []), terms) for t in range(TIME_POINTS)}
    checker = EntailmentChecker(m, set(map(tuple, given)), {t: set(map(tuple, x)) for t, x in ids.items()},
                                window, terms)
    for t in range(TIME_POINTS):
        m.advance_to(t, ids[t])
        for triple in m.holding():
            tree = m.explain(triple)
            assert tree is not None, [terms.key(x) for x in triple]
            assert tree["t"] == t
            assert checker.check(tree) == (m.expires(triple) if m.expires(triple) < NEVER_EXPIRES
                                           else NEVER_EXPIRES)
    return checker.leaves


@pytest.mark.parametrize("seed", range(60))
def test_rdfs_entailments_are_rule_applications_down_to_window_and_background(seed):
    explain_every_entailment(seed, "rdfs")


@pytest.mark.parametrize("seed", range(40))
def test_owl_rl_entailments_are_rule_applications_down_to_window_and_background(seed):
    explain_every_entailment(seed, "owl-rl")


def test_the_checked_explanations_reach_both_kinds_of_leaves():
    leaves = {"window": 0, "background": 0}
    for seed in range(5):
        for kind, count in explain_every_entailment(seed, "owl-rl").items():
            leaves[kind] += count
    assert leaves["window"] > 100 and leaves["background"] > 100


def test_a_transitive_chain_through_the_window():
    from rsp_plugin.core.terms import RDF_TYPE

    terms = Dictionary()
    ex = lambda name: terms.intern(f"<http://example.org/{name}>")
    is_in, a, b, c = ex("isIn"), ex("A"), ex("B"), ex("C")
    transitive = (is_in, terms.intern(RDF_TYPE), terms.intern("<http://www.w3.org/2002/07/owl#TransitiveProperty>"))
    m = Materializer("owl-rl", window=10, background=[transitive], terms=terms, explain=True)
    m.advance_to(1, [(a, is_in, b)])
    m.advance_to(2, [(b, is_in, c)])
    tree = m.explain((a, is_in, c))
    assert (tree["name"], tree["horizon"], tree["bounded_by"]) == ("prp-trp", 11, 1)   # A isIn B expires first
    assert [item["because"][0]["by"] for item in tree["body"]] == ["background", "window", "window"]
    assert [item["because"][0].get("arrived") for item in tree["body"]] == [None, 1, 2]
    assert m.explain((a, is_in, a)) is None
