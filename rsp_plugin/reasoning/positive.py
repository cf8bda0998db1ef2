"""Positive rules compiled once: the form every closure but the reference reads.

The per-fact `Materializer` runs the materialization as a LARS program (the
reference: windows, `not`, @, everything the rule language has). The other
closures (the columnar one, `rsp_plugin.columnar.materialize`; the per-shape
templates, `templates.py`, which the Spark backend joins and partitions by; the
Spark joins of two window facts) evaluate plain positive rules only, and read
them in this one form:

    PositiveRule(head, atoms, comparisons, text)
        head         Pattern(predicate id, args: Var | id)
        atoms        the body's atoms, Patterns, in the rule's order
        comparisons  Test(op, left, right): Var | id, decided once both sides are bound

A fact a rule derives holds as long as the premises that bound it: its
expiration is the earliest of its body's (Barbieri et al.), so every atom bounds
it and none is special; under a static TBox that is the window premise's
(`templates.py`: SEED, or LASTING when only facts that never expire made it).

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> rules, axioms = compile_profile("rdfs", terms)
>>> rule = rules[1]; rule.text
'?x a ?c :- ?p rdfs:domain ?c, ?x ?p ?y .'
>>> [terms.key(atom.predicate) for atom in rule.atoms], [v.name for v in rule.atoms[1].variables]
(['triple', 'triple'], ['x', 'p', 'y'])
>>> len(rules), len(axioms), sorted(readers(rules)) == [terms.intern("triple")]
(11, 0, True)
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import NamedTuple

from ..core.terms import TRIPLE, Dictionary
from ..lars.program import PLAIN, Comparison, ExtendedAtom, Program, Rule, Var
from .materializer import (
    BACKGROUND_TRIPLE,
    FALSE_PREFIX,
    PROFILES,
    WINDOW_TRIPLE,
    is_ground_triple_fact,
    profile_name,
)
from .rulesets import rules_of


class NotPositive(Exception):
    """A rule the compiled form does not hold (a window, @, `not` or arithmetic in a body, an @ head,
    no atom): it stays with the LARS engine."""


class Pattern(NamedTuple):
    """An atom: its predicate's id and arguments (a `Var`, or a term's id)."""

    predicate: int
    args: tuple

    @property
    def variables(self) -> tuple[Var, ...]:
        """Its variables, each once, in the order they first appear."""
        return tuple(dict.fromkeys(arg for arg in self.args if isinstance(arg, Var)))


class Test(NamedTuple):
    """A comparison of the body (`lars.builtins.compare`'s meaning): a Var or an id on each side."""

    op: str
    left: object
    right: object


@dataclass(frozen=True)
class PositiveRule:
    """A plain positive rule: head :- atoms, comparisons."""

    head: Pattern
    atoms: tuple[Pattern, ...]
    comparisons: tuple[Test, ...]
    text: str = ""


def compile_rule(rule: Rule) -> PositiveRule:
    """The compiled form of one rule; NotPositive with the reason when it has none."""
    if rule.head_time is not None:
        raise NotPositive(f"an @ head: {rule.text}")
    atoms, comparisons = [], []
    for literal in rule.body:
        if isinstance(literal, ExtendedAtom):
            if not _plain(literal):
                raise NotPositive(f"a window, @ or not in the body of '{rule.text}'")
            atoms.append(Pattern(literal.atom.predicate, tuple(literal.atom.args)))
        elif isinstance(literal, Comparison):
            if not _simple(literal):
                raise NotPositive(f"arithmetic in '{rule.text}'")
            comparisons.append(Test(literal.op, literal.left, literal.right))
        else:  # pragma: no cover - the model has no other literal
            raise NotPositive(rule.text)
    if not atoms:
        raise NotPositive(f"a rule without atoms: {rule.text}")
    return PositiveRule(Pattern(rule.head.predicate, tuple(rule.head.args)), tuple(atoms), tuple(comparisons),
                        rule.text)


def compile_program(program: Program, terms: Dictionary) -> list[PositiveRule]:
    """The rules of a materialization program (`materializer.materialization_program`), the rules
    that lift window and background triples left out (a closure holds those triples itself)."""
    lifted = {terms.intern(WINDOW_TRIPLE), terms.intern(BACKGROUND_TRIPLE)}
    return [compile_rule(rule) for rule in program.rules
            if not (rule.head_time is None and _reads_lifted(rule, lifted))]


def compile_profile(profile: str, terms: Dictionary) -> tuple[list[PositiveRule], list[tuple[int, int, int]]]:
    """A profile's rules, those with a `false` head left out (a template names no inconsistency), and
    its axioms (the ground triples of its rule files), interned in `terms`."""
    triple = terms.intern(TRIPLE)
    rules, axioms = [], []
    for name in PROFILES[profile_name(profile)][0]:
        for rule in rules_of(name, terms):
            if is_ground_triple_fact(rule, triple):
                axioms.append(tuple(rule.head.args))
            elif not terms.key(rule.head.predicate).startswith(FALSE_PREFIX):
                rules.append(compile_rule(rule))
    return rules, axioms


def readers(rules: list[PositiveRule]) -> dict[int, list[tuple[int, int]]]:
    """predicate -> (rule number, body position) of each atom that reads it: where a new fact of
    that predicate goes in a semi-naive round."""
    found: dict[int, list[tuple[int, int]]] = {}
    for number, rule in enumerate(rules):
        for position, atom in enumerate(rule.atoms):
            found.setdefault(atom.predicate, []).append((number, position))
    return found


def unify(pattern: tuple, values: tuple, binding: dict) -> dict | None:
    """`binding` extended so that `pattern` (Var | id) matches `values`, a new dict; None if it cannot."""
    if len(pattern) != len(values):
        return None
    out = binding
    copied = False
    for term, value in zip(pattern, values):
        if isinstance(term, Var):
            bound = out.get(term)
            if bound is None:
                if not copied:
                    out, copied = dict(out), True
                out[term] = value
            elif bound != value:
                return None
        elif term != value:
            return None
    return out if copied else dict(out)


class NoFacts:
    """An empty annotated store (`weakest_bindings` over lasting facts alone)."""

    @staticmethod
    def match(predicate: int, pattern: tuple) -> tuple:
        return ()

    @staticmethod
    def note(fact) -> None:
        return None


def weakest_bindings(rule: PositiveRule, rest: list[int], binding: dict, note: int, lasting, annotated, holds):
    """The bindings of `rule`'s atoms at positions `rest`, extending `binding`, each with the weakest note of
    its premises: over facts that hold for good (`lasting.match(predicate, pattern)`, None in a pattern
    free) and annotated ones (`annotated.match`, `annotated.note(fact)`: an expiry or a tag, None once
    gone), the note being the least of `note` and those of the annotated facts used. The most-bound atom
    is joined first; `holds(rule, binding)` decides the comparisons bound so far.

    Every closure of positive rules whose facts carry a note joins this way: the shapes' expiries
    (`shapes.Joins`), the templates' SEED / LASTING tags (`templates.Closure`), B* itself (no notes)."""
    if not rest:
        yield binding, note
        return
    choice = max(rest, key=lambda i: sum(1 for a in rule.atoms[i].args if not isinstance(a, Var) or a in binding))
    predicate, args = rule.atoms[choice]
    pattern = tuple(binding.get(a) if isinstance(a, Var) else a for a in args)
    others = [i for i in rest if i != choice]
    for candidate in lasting.match(predicate, pattern):
        extended = unify(args, candidate, binding)
        if extended is not None and holds(rule, extended):
            yield from weakest_bindings(rule, others, extended, note, lasting, annotated, holds)
    for candidate in annotated.match(predicate, pattern):
        known = annotated.note((predicate, candidate))
        if known is None:
            continue
        extended = unify(args, candidate, binding)
        if extended is not None and holds(rule, extended):
            yield from weakest_bindings(rule, others, extended, min(note, known), lasting, annotated, holds)


def _plain(literal: ExtendedAtom) -> bool:
    return not literal.negated and literal.modality == PLAIN and literal.window is None and literal.time is None


def _simple(comparison: Comparison) -> bool:
    return all(isinstance(side, (Var, int)) for side in (comparison.left, comparison.right))


def _reads_lifted(rule: Rule, lifted: set[int]) -> bool:
    """Does the rule read window_triple / background_triple, before anything that has no compiled form?"""
    for literal in rule.body:
        if isinstance(literal, ExtendedAtom) and not _plain(literal):
            return literal.atom.predicate in lifted
        if isinstance(literal, Comparison) and not _simple(literal):
            return False
    return any(isinstance(literal, ExtendedAtom) and literal.atom.predicate in lifted for literal in rule.body)


__all__ = ["NoFacts", "NotPositive", "Pattern", "PositiveRule", "Test", "compile_profile", "compile_program",
           "compile_rule", "readers", "unify", "weakest_bindings"]
