"""Rules with two ABox premises: joins within the window, run only when the window can feed them.

The seed closures (`closure.py`) hold every entailment that needs one window
triple and the background B*. What is left are derivations whose premises come
from two or more window triples (a schema triple streamed in, owl:sameAs
between individuals, a functional property's two values): those need a join of
the window with itself, expiration = min of the premises.

Which rules can do that is decided from the relations the window holds (per
stored batch: the predicates of its triples and its other relations, and
whether a triple is reflexive): a rule needs the join only if two of its body
atoms can each be matched by window facts. A reflexive fact (`p
rdfs:subPropertyOf p`, which rdfs6 gives every predicate in use) does not count
for an atom where it is inert: put the two variables equal, and the rule either
derives one of its other premises (transitivity: `?p sp ?q, ?q sp ?r`) or its
comparisons fail (`?p != ?q`). So for RDFS over instance data nothing is left:
every entailment is a seed's, and no join is run.

The joins, when needed, are Spark DataFrame plans (`StageB`): semi-naive
rounds over the window's facts and B*, each fact carrying its instant interval
[k1, k2], a join intersecting them; what is new (not within a known fact's
interval) goes to the next round, until a round finds nothing.
"""

from __future__ import annotations

from dataclasses import dataclass

from ...lars.program import Var
from ...terms import Dictionary
from .closure import CompiledRule

#: relation name of triples
TRIPLE_REL = "triple"


@dataclass(frozen=True)
class Present:
    """A relation the window holds: ("triple", predicate key, reflexive) or (relation, None, False)."""

    relation: str
    predicate: str | None
    reflexive: bool


def inert_reflexive(rule: CompiledRule, position: int, terms: Dictionary) -> bool:
    """Does a reflexive fact at this atom (a triple pattern `?a P ?b`) derive nothing new?"""
    predicate, args = rule.atoms[position]
    if terms.key(predicate) != TRIPLE_REL or len(args) != 3:
        return False
    a, p, b = args
    if not (isinstance(a, Var) and isinstance(b, Var)) or a == b or isinstance(p, Var):
        return False

    def same(term):
        return a if term == b else term

    for op, left, right in rule.comparisons:
        if op == "!=" and same(left) == same(right):
            return True
    head = (rule.head[0], tuple(same(t) for t in rule.head[1]))
    for other, (other_predicate, other_args) in enumerate(rule.atoms):
        if other != position and (other_predicate, tuple(same(t) for t in other_args)) == head:
            return True
    return False


class JoinAnalysis:
    """Per rule and body position: which window relations it can match, and whether reflexive facts are inert."""

    def __init__(self, rules: list[CompiledRule], terms: Dictionary):
        self.rules = rules
        self.terms = terms
        keys = terms.keys
        self.atoms = []
        for rule in rules:
            described = []
            for position, (predicate, args) in enumerate(rule.atoms):
                relation = keys[predicate]
                constant = None
                if relation == TRIPLE_REL and len(args) == 3 and not isinstance(args[1], Var):
                    constant = keys[args[1]]
                described.append((relation, constant, inert_reflexive(rule, position, terms)))
            self.atoms.append(described)

    def matchable(self, rule_number: int, position: int, present: set[Present]) -> bool:
        relation, constant, inert = self.atoms[rule_number][position]
        for fact in present:
            if fact.relation != relation:
                continue
            if constant is not None and fact.predicate != constant:
                continue
            if inert and fact.reflexive:
                continue
            return True
        return False

    def joining(self, present: set[Present]) -> list[tuple[int, list[int]]]:
        """The rules (and their positions) that two window facts can meet in."""
        out = []
        for number, rule in enumerate(self.rules):
            positions = [i for i in range(len(rule.atoms)) if self.matchable(number, i, present)]
            if len(positions) >= 2:
                out.append((number, positions))
        return out


def present_of(facts) -> set[Present]:
    """The `Present` set of (relation, args) facts (keys)."""
    out = set()
    for relation, args in facts:
        if relation == TRIPLE_REL:
            out.add(Present(relation, args[1], args[0] == args[2]))
        else:
            out.add(Present(relation, None, False))
    return out


__all__ = ["JoinAnalysis", "Present", "present_of", "inert_reflexive", "TRIPLE_REL"]
