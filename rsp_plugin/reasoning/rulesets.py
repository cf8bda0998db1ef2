"""The rule sets shipped with the package, parsed once per process and handed to any dictionary.

Parsing and checking a rule set of 150 rules takes a good part of a second;
materializers are made often (one per query, one per test case, one per
from-scratch recompute in the benchmark). So each file is parsed once into a
template with a private dictionary, and `rules_of` copies its rules into the
caller's dictionary by re-interning the few constants they use.

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> rules = rules_of("rdfs.lars", terms)
>>> len(rules), str(rules[1])
(11, '?x a ?c :- ?p rdfs:domain ?c, ?x ?p ?y .')
>>> terms.key(rules[1].body[0].atom.args[1])
'<http://www.w3.org/2000/01/rdf-schema#domain>'
"""

from __future__ import annotations

from dataclasses import replace
from importlib import resources

from ..core.terms import TRIPLE, Dictionary
from ..lars.program import (
    RULESET,
    Arithmetic,
    Atom,
    Comparison,
    ExtendedAtom,
    Origin,
    Program,
    Rule,
    Var,
)
from ..lars.syntax import parse_program

_TEMPLATES: dict[str, Program] = {}


def rule_file_text(name: str) -> str:
    return resources.files(__package__).joinpath(name).read_text(encoding="utf-8")


def template(name: str) -> Program:
    """The parsed rule file `name` (in rsp_plugin/reasoning), with its own dictionary."""
    found = _TEMPLATES.get(name)
    if found is None:
        terms = Dictionary()
        terms.intern(TRIPLE)  # an empty dictionary is falsy, and parse_program would make its own
        found = _TEMPLATES[name] = parse_program(rule_file_text(name), name, terms)
    return found


def shipped() -> list[str]:
    """The names of the rule files shipped in this package (a checkpoint names one to have its rules made again)."""
    return sorted(entry.name for entry in resources.files(__package__).iterdir() if entry.name.endswith(".lars"))


def rules_of(name: str, terms: Dictionary) -> list[Rule]:
    """The rules of the shipped file `name`, their constants interned in `terms`."""
    if name not in _TEMPLATES and name not in shipped():
        raise ValueError(f"{name!r} is not a rule file of rsp_plugin.reasoning ({', '.join(shipped())})")
    source = template(name)
    keys = source.terms.keys
    cache: dict[int, int] = {}

    def term(value):
        if isinstance(value, Var) or value is None:
            return value
        if isinstance(value, Arithmetic):
            return Arithmetic(value.op, term(value.left), term(value.right))
        found = cache.get(value)
        if found is None:
            found = cache[value] = terms.intern(keys[value])
        return found

    def atom(given: Atom) -> Atom:
        return Atom(term(given.predicate), tuple(term(arg) for arg in given.args))

    def literal(given):
        if isinstance(given, ExtendedAtom):
            return replace(given, atom=atom(given.atom), time=term(given.time))
        if isinstance(given, Comparison):
            return replace(given, left=term(given.left), right=term(given.right))
        raise TypeError(f"unexpected body literal {given!r}")  # pragma: no cover

    origin = Origin(RULESET, name, name, terms)
    return [
        replace(rule, head=atom(rule.head), body=tuple(literal(b) for b in rule.body), head_time=term(rule.head_time),
                origin=(origin, number))
        for number, rule in enumerate(source.rules)
    ]
