"""DatalogMTL onto the one engine: the paper's normal form, written as LARS rules over metric windows.

Each metric operator becomes a bound on the annotations of an extended atom
(`rsp_plugin.lars.metric`), and what has no direct view is rewritten with
auxiliary predicates (named `P#...`, hidden from the output), following the
normal form of Walega et al. (Prop. 6):

    Diamondminus[a,b] p      DIAMOND p over PastWindow(a, b)  (a = 0: [RANGE b] DIAMOND's window)
    Boxminus[a,a] p          the same as Diamondminus[a,a] p (one point)
    Boxminus[a,b] p          BOX p over PastWindow(a, b)
    q Since[a,b] p           SINCE p over PastWindow(a, b, left=q)
    Op[...] (formula)        aux(vars) :- formula ;  Op[...] aux(vars)
    Boxplus[a,b] h :- body   h#placed :- body ;  h :- Diamondminus[a,b] h#placed

A Since whose left operand has variables its right operand lacks is split:
at distances 0 and 1 nothing lies strictly between, so it is a Diamondminus
over the right operand; from distance 2 on, the first point after the
witness is joined in, `A(vars) :- Diamondminus[1,1] p, q`, and the rest is
`q Since[a-1, b-1] A`, whose left operand's variables are all A's. A body
with such a Since is then two rules.

>>> from rsp_plugin.mtl.syntax import parse_mtl
>>> lowered = lower_program(parse_mtl("Boxplus[1,2]Alarm(X):-Fault(X)"))
>>> [rule.text for rule in lowered.program.rules]
['Alarm(X) :- Diamondminus[1,2] Alarm#placed1(X)', 'Alarm#placed1(X) :- Fault(X)']
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass, field

from ..core.errors import RuleSyntaxError
from ..core.terms import Dictionary
from .metric import SINCE, PastWindow
from .metric_check import head_offsets
from .metric_rules import BOXMINUS, DIAMONDMINUS, Binary, MetricRule, Temporal, Written
from .program import (
    BOX,
    DIAMOND,
    Atom,
    Comparison,
    ExtendedAtom,
    Program,
    Rule,
    Var,
    stratify,
)


@dataclass
class Lowered:
    """A DatalogMTL program as the engine runs it."""

    program: Program
    #: auxiliary predicates: derived, never reported
    hidden: set[int] = field(default_factory=set)
    #: the predicates of the user's heads (for a triple head: its RDF predicate, in `head_triples`)
    heads: set[int] = field(default_factory=set)
    head_triples: set[int] = field(default_factory=set)
    #: predicate -> the numbers of arguments the program uses it with
    arities: dict[int, set[int]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.triple = self.program.triple

    def reports(self, fact) -> bool:
        """Is `fact` an atom of one of the program's head predicates?"""
        predicate, args = fact
        if predicate == self.triple and len(args) == 3:
            return args[1] in self.head_triples
        return predicate in self.heads


def lower_program(program) -> Lowered:
    """A checked `MetricProgram` (`syntax.py`) -> the engine's `Program`."""
    rules, hidden = lower_rules(program.rules, program.terms)
    lars_program = Program(rules, program.terms, dict(program.prefixes), None, program.filename)
    lars_program.strata = stratify(rules, _stratify_error)
    lars_program.hidden = hidden
    lowered = Lowered(lars_program, hidden)
    for rule in rules:
        atoms = [rule.head] + [b.atom for b in rule.body if isinstance(b, ExtendedAtom)]
        atoms += [Atom(b.window.left[0], b.window.left[1]) for b in rule.body
                  if isinstance(b, ExtendedAtom) and b.modality == SINCE]
        for atom in atoms:
            lowered.arities.setdefault(atom.predicate, set()).add(len(atom.args))
    triple = lars_program.triple
    for rule in program.rules:
        if rule.head.predicate == triple and len(rule.head.args) == 3 and not isinstance(rule.head.args[1], Var):
            lowered.head_triples.add(rule.head.args[1])
        else:
            lowered.heads.add(rule.head.predicate)
    return lowered


def _stratify_error(message, location):
    if location is None:
        raise RuleSyntaxError(message)
    raise RuleSyntaxError(message, location.filename, location.line, location.column)


def lower_rules(rules: list, terms: Dictionary) -> tuple[list[Rule], set[int]]:
    """`MetricRule`s (and plain LARS `Rule`s, kept as they are) -> LARS rules, and the auxiliary predicates."""
    lowering = _Lowering(terms)
    for rule in rules:
        if isinstance(rule, MetricRule):
            lowering.rule(rule)
        else:
            lowering.rules.append(rule)
    return lowering.rules, lowering.hidden


def _diamond(atom: Atom, low: int, high: int | None, location) -> ExtendedAtom:
    if (low, high) == (0, 0):
        return ExtendedAtom(atom, location=location)
    return ExtendedAtom(atom, DIAMOND, PastWindow(low, high), location=location)


def _box(atom: Atom, low: int, high: int, location) -> ExtendedAtom:
    if low == high:  # one point: every point and some point are the same
        return _diamond(atom, low, high, location)
    return ExtendedAtom(atom, BOX, PastWindow(low, high), location=location)


def _interval_text(low: int, high: int | None) -> str:
    return f"[{low},{'inf)' if high is None else f'{high}]'}"


def _ordered_variables(formula) -> list[Var]:
    seen: dict[Var, None] = {}
    for atom in _atoms(formula):
        for arg in atom.args:
            if isinstance(arg, Var):
                seen[arg] = None
    return list(seen)


def _atoms(formula) -> list[Atom]:
    if isinstance(formula, Atom):
        return [formula]
    if isinstance(formula, Written):
        return [formula.atom]
    if isinstance(formula, Temporal):
        return _atoms(formula.operand)
    return _atoms(formula.left) + _atoms(formula.right)


class _Lowering:
    def __init__(self, terms: Dictionary):
        self.terms = terms
        self.rules: list[Rule] = []
        self.hidden: set[int] = set()
        self._counter = itertools.count(1)
        self._named: dict = {}
        self._source: MetricRule | None = None

    # names ------------------------------------------------------------------------------

    def _key(self, predicate: int) -> str:
        return self.terms.key(predicate)

    def aux(self, base: Atom, purpose: str, args: tuple) -> Atom:
        key = self._key(base.predicate if base.predicate != self.terms.find("triple") else base.args[1])
        predicate = self.terms.intern(f"{key}#{purpose}{next(self._counter)}")
        self.hidden.add(predicate)
        return Atom(predicate, args)

    def text(self, head: Atom, body: list) -> str:
        return f"{self.atom_text(head)} :- {', '.join(self.literal_text(b) for b in body)}"

    def atom_text(self, atom: Atom) -> str:
        keys = self.terms.keys
        args = ",".join(a.name if isinstance(a, Var) else keys[a] for a in atom.args)
        return f"{keys[atom.predicate]}({args})" if atom.args else keys[atom.predicate]

    def literal_text(self, literal) -> str:
        if isinstance(literal, Comparison):
            return "comparison"
        atom = self.atom_text(literal.atom)
        window = literal.window
        if window is None:
            return f"not {atom}" if literal.negated else atom
        if isinstance(window, PastWindow):
            interval = _interval_text(window.low, window.high)
            if literal.modality == SINCE:
                predicate, projection = window.left
                args = tuple(literal.atom.args[value] if kind == 0 else value for kind, value in projection)
                return f"{self.atom_text(Atom(predicate, args))} Since{interval} {atom}"
            return f"{'Boxminus' if literal.modality == BOX else 'Diamondminus'}{interval} {atom}"
        modality = literal.modality.upper() if literal.modality != "at" else f"@{literal.time}"
        return f"{'not ' if literal.negated else ''}[{window.kind.upper()} {window.size}] {modality} {atom}"

    def emit(self, head: Atom, body: list) -> None:
        source = self._source
        self.rules.append(Rule(head, tuple(body), None, self.text(head, body), source.location if source else None))

    # rules ---------------------------------------------------------------------------------

    def rule(self, rule: MetricRule) -> None:
        self._source = rule
        low, high = head_offsets(rule.head_operators)
        target = rule.head
        if (low, high) != (0, 0):
            target = self.aux(rule.head, "placed", rule.head.args)
            self.emit(rule.head, [_diamond(target, low, high, rule.head_location)])
        for alternative in self.body(rule.body):
            self.emit(target, alternative)

    def body(self, literals) -> list[list]:
        alternatives: list[list] = [[]]
        for literal in literals:
            options = self.literal(literal)
            alternatives = [done + option for done in alternatives for option in options]
        return alternatives

    def literal(self, literal) -> list[list]:
        """The alternatives (each a list of LARS literals) that mean `literal`."""
        if isinstance(literal, Written):
            return [[ExtendedAtom(literal.atom, location=literal.location)]]
        if isinstance(literal, Temporal):
            atom = self.as_atom(literal.operand)
            low, high = literal.interval.integers()
            if literal.operator == DIAMONDMINUS:
                return [[_diamond(atom, low, high, literal.location)]]
            if literal.operator == BOXMINUS:
                return [[_box(atom, low, high, literal.location)]]
            raise AssertionError("check.py lets only past operators into a body")
        if isinstance(literal, Binary):
            left, right = self.as_atom(literal.left), self.as_atom(literal.right)
            low, high = literal.interval.integers()
            return self.since(left, right, low, high, literal.location)
        return [[literal]]  # comparisons and LARS extended atoms

    def as_atom(self, formula) -> Atom:
        """An atom that holds where `formula` does: the formula's own, or an auxiliary one."""
        if isinstance(formula, Written):
            return formula.atom
        known = self._named.get(formula)
        if known is not None:
            return known
        base = _atoms(formula)[-1]
        atom = self.aux(base, "sub", tuple(_ordered_variables(formula)))
        self._named[formula] = atom
        for alternative in self.literal(formula):
            self.emit(atom, alternative)
        return atom

    def since(self, left: Atom, right: Atom, low: int, high: int | None, location) -> list[list]:
        left_only = left.variables() - right.variables()
        if not left_only:
            projection = tuple(
                (0, right.args.index(arg)) if isinstance(arg, Var) else (1, arg) for arg in left.args
            )
            window = PastWindow(low, high, (left.predicate, projection))
            return [[ExtendedAtom(right, SINCE, window, location=location)]]
        options = []
        if low <= 1:  # nothing strictly between the witness and now: the left operand is not needed
            options.append([_diamond(right, low, 1 if high is None else min(high, 1), location)])
        if high is None or high >= 2:
            first = max(low, 2)
            variables = tuple(_ordered_variables(right) + [v for v in _ordered_variables(left)
                                                           if v not in right.variables()])
            joined = self.aux(right, "since", variables)
            self.emit(joined, [_diamond(right, 1, 1, location), ExtendedAtom(left, location=location)])
            options.extend(self.since(left, joined, first - 1, None if high is None else high - 1, location))
        return options
