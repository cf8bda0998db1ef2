"""The model of a LARS program: rules over extended atoms, and its stratification.

A rule `h :- b1, ..., bn .` has a head atom (optionally `@T h`) and a body of
extended atoms and comparisons. An extended atom composes four things (Laser's
28-member enum is, for us, a product of small values):

    ExtendedAtom(atom, modality, window, time, negated)

    p(X)                      PLAIN
    @T p(X)                   AT over the whole timeline
    [RANGE 3] DIAMOND p(X)    DIAMOND in a time window of 3 (+1) points
    [COUNT 3] BOX p(X)        BOX in the window of the last 3 data atoms
    [RANGE 5] @T p(X)         AT in a time window
    not ...                   negated (stratified)

Terms in atoms are ints (constants, see `rsp_plugin.core.terms`) or `Var`s.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Union

from ..core.terms import TRIPLE, Dictionary

PLAIN = "plain"
DIAMOND = "diamond"
BOX = "box"
AT = "at"

RANGE = "range"
COUNT = "count"


@dataclass(frozen=True)
class Var:
    name: str

    def __str__(self) -> str:
        return self.name


Term = Union[int, Var]


@dataclass(frozen=True)
class Location:
    filename: str
    line: int
    column: int

    def __str__(self) -> str:
        return f"{self.filename}:{self.line}:{self.column}"


@dataclass(frozen=True)
class Atom:
    """`predicate(args)`; RDF triples are `Atom(triple, (s, p, o))`."""

    predicate: int
    args: tuple[Term, ...]

    def variables(self) -> set[Var]:
        return {a for a in self.args if isinstance(a, Var)}


@dataclass(frozen=True)
class Window:
    """`[RANGE size]` (time points) or `[COUNT size]` (data atoms)."""

    kind: str
    size: int


@dataclass(frozen=True)
class ExtendedAtom:
    atom: Atom
    modality: str = PLAIN
    window: Window | None = None
    time: Term | None = None
    negated: bool = False
    location: Location | None = field(default=None, compare=False)

    def variables(self) -> set[Var]:
        found = self.atom.variables()
        if isinstance(self.time, Var):
            found.add(self.time)
        return found

    @property
    def view_key(self) -> tuple:
        """What two extended atoms must share to be served by one view (p/1 and p/2 are two predicates)."""
        return (self.atom.predicate, len(self.atom.args), self.constant_filter, self.modality, self.window)

    @property
    def constant_filter(self) -> tuple[tuple[int, int], ...]:
        return tuple((i, a) for i, a in enumerate(self.atom.args) if not isinstance(a, Var))


@dataclass(frozen=True)
class Arithmetic:
    """`left op right` with op in + - * /."""

    op: str
    left: "Expression"
    right: "Expression"

    def variables(self) -> set[Var]:
        return expression_variables(self.left) | expression_variables(self.right)


Expression = Union[int, Var, Arithmetic]


def expression_variables(expression: Expression) -> set[Var]:
    if isinstance(expression, Var):
        return {expression}
    if isinstance(expression, Arithmetic):
        return expression.variables()
    return set()


@dataclass(frozen=True)
class Comparison:
    """`left op right` with op in = != < <= > >=; `X = expr` binds X when X is free."""

    op: str
    left: Expression
    right: Expression
    location: Location | None = field(default=None, compare=False)

    def variables(self) -> set[Var]:
        return expression_variables(self.left) | expression_variables(self.right)


Literal = Union[ExtendedAtom, Comparison]


#: the kinds of text an `Origin` holds: a LARS program, a DatalogMTL program, or the name of a rule
#: file shipped in `rsp_plugin.reasoning` (`rulesets.rules_of`)
LARS_TEXT = "lars"
DATALOGMTL_TEXT = "datalogmtl"
RULESET = "ruleset"


@dataclass(eq=False)
class Origin:
    """The text a program's rules were parsed from, all it takes to parse them again.

    A checkpoint stores a rule as its origin, its number among the origin's rules,
    its text and its place (`rsp_plugin.runtime.state`), never its structure: on load the
    origin's text is parsed again, with the same dictionary, and each rule is the
    one at its number (`rsp_plugin.runtime.state.parse_again`)."""

    kind: str
    #: the program's text (a ruleset: the shipped file's name)
    text: str
    filename: str
    terms: Dictionary
    semantics: str = "stream"


@dataclass(frozen=True)
class Rule:
    head: Atom
    body: tuple[Literal, ...]
    head_time: Term | None = None
    text: str = ""
    location: Location | None = field(default=None, compare=False)
    #: (the Origin it was parsed from, its number among the origin's rules); None: made by hand, never stored
    origin: tuple | None = field(default=None, compare=False, repr=False)

    @property
    def positive(self) -> list[ExtendedAtom]:
        return [b for b in self.body if isinstance(b, ExtendedAtom) and not b.negated]

    @property
    def negative(self) -> list[ExtendedAtom]:
        return [b for b in self.body if isinstance(b, ExtendedAtom) and b.negated]

    @property
    def comparisons(self) -> list[Comparison]:
        return [b for b in self.body if isinstance(b, Comparison)]

    def __str__(self) -> str:
        return self.text or repr(self)


@dataclass
class Program:
    """Rules, the dictionary their constants live in, and their strata."""

    rules: list[Rule]
    terms: Dictionary
    prefixes: dict[str, str] = field(default_factory=dict)
    tick_ms: int | None = None
    filename: str = "<program>"
    strata: list[list[Rule]] = field(default_factory=list)
    #: False when a loop goes through `not` (accepted under answer-stream semantics only)
    stratified: bool = True
    #: Auxiliary predicates (DatalogMTL's normal form, `lars/metric_lower.py`): derived, never reported.
    hidden: set[int] = field(default_factory=set)

    @property
    def triple(self) -> int:
        return self.terms.intern(TRIPLE)

    def __repr__(self) -> str:
        return f"<Program {self.filename!r} rules={len(self.rules)} strata={len(self.strata)}>"


def from_origin(rules: list[Rule], origin: Origin) -> list[Rule]:
    """`rules`, in the order the origin's text gives them, each told where it comes from."""
    for number, rule in enumerate(rules):
        object.__setattr__(rule, "origin", (origin, number))  # (just made: nobody holds it yet)
    return rules


def may_unify(head: Atom, body: Atom) -> bool:
    """Could a fact derived by `head` match `body`? (Constants must agree.)"""
    if head.predicate != body.predicate or len(head.args) != len(body.args):
        return False
    return all(
        isinstance(h, Var) or isinstance(b, Var) or h == b for h, b in zip(head.args, body.args)
    )


class Producers:
    """Which rules may derive facts that match a body atom, found by the head's
    predicate and first constant rather than by trying every rule."""

    def __init__(self, rules: list[Rule]):
        self.rules = rules
        self._by_key: dict[tuple, list[int]] = {}
        for index, rule in enumerate(rules):
            self._by_key.setdefault(self._key(rule.head), []).append(index)

    @staticmethod
    def _key(atom: Atom) -> tuple:
        first = next(((i, a) for i, a in enumerate(atom.args) if not isinstance(a, Var)), None)
        return (atom.predicate, len(atom.args), first)

    def of(self, atom: Atom) -> list[int]:
        """Indexes (in `rules`) of the rules whose head may unify with `atom`."""
        found: list[int] = []
        for key, indexes in self._by_key.items():
            if key[0] == atom.predicate and key[1] == len(atom.args):
                found.extend(i for i in indexes if may_unify(self.rules[i].head, atom))
        return sorted(found)


def stratify(rules: list[Rule], error) -> list[list[Rule]]:
    """Group rules into strata so that `not` only reads lower strata.

    The graph has one node per rule and an edge r -> r' when r' may derive a
    fact r's body reads; an edge is negative when read under `not`. A cycle with
    a negative edge is a loop through `not` and is reported by calling
    `error(message, location)`. The stratum of a rule is the largest number of
    negative edges on a path from it. A program with such a loop has no strata: [] when
    `error` returns.
    """
    producers = Producers(rules)
    reads: list[list[tuple[int, bool, ExtendedAtom]]] = []
    for rule in rules:
        edges = []
        for literal in rule.body:
            if isinstance(literal, ExtendedAtom):
                edges.extend((j, literal.negated, literal) for j in producers.of(literal.atom))
        reads.append(edges)

    component = _strongly_connected(len(rules), [[j for j, _, _ in e] for e in reads])
    looped = False
    for i, edges in enumerate(reads):
        for j, negated, literal in edges:
            if negated and component[i] == component[j]:
                looped = True
                error(
                    f"a loop through `not`: rule '{rules[i].text}' depends on itself "
                    "through this negated atom; the program is not stratified (answer-stream "
                    "semantics accepts it: --semantics answer-stream)",
                    literal.location or rules[i].location,
                )

    if looped:  # `error` let it pass (answer-stream semantics): there are no strata
        return []
    level = [0] * len(rules)
    order = sorted(range(len(rules)), key=lambda i: component[i])  # reverse topological
    changed = True
    while changed:
        changed = False
        for i in order:
            for j, negated, _ in reads[i]:
                wanted = level[j] + (1 if negated else 0)
                if wanted > level[i]:
                    level[i] = wanted
                    changed = True
    strata: dict[int, list[Rule]] = {}
    for i, rule in enumerate(rules):
        strata.setdefault(level[i], []).append(rule)
    return [strata[k] for k in sorted(strata)]


def _strongly_connected(size: int, successors: list[list[int]]) -> list[int]:
    """Tarjan's algorithm, iterative; components numbered in reverse topological order."""
    index = [-1] * size
    low = [0] * size
    on_stack = [False] * size
    stack: list[int] = []
    component = [-1] * size
    counter = 0
    components = 0
    for root in range(size):
        if index[root] != -1:
            continue
        work = [(root, 0)]
        while work:
            node, child = work.pop()
            if child == 0:
                index[node] = low[node] = counter
                counter += 1
                stack.append(node)
                on_stack[node] = True
            recurse = False
            for k in range(child, len(successors[node])):
                nxt = successors[node][k]
                if index[nxt] == -1:
                    work.append((node, k + 1))
                    work.append((nxt, 0))
                    recurse = True
                    break
                if on_stack[nxt]:
                    low[node] = min(low[node], index[nxt])
            if recurse:
                continue
            if low[node] == index[node]:
                while True:
                    member = stack.pop()
                    on_stack[member] = False
                    component[member] = components
                    if member == node:
                        break
                components += 1
            if work:
                parent = work[-1][0]
                low[parent] = min(low[parent], low[node])
    return component
