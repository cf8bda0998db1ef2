"""How a LARS or DatalogMTL program's work splits over Spark's executors, or why it does not.

`reason --engine spark --mode distributed` runs several copies of the one engine
(`lars/engine.py`, through `columnar.reason.Replay` or `mtl.run.MetricReplay`),
each over a share of the stream, and merges their lines per time point on the
driver. Two shares are proved here to give, together, the lines of one engine
over the whole stream (`--engine local`); the analysis is on the program the
engine runs (a DatalogMTL program after its lowering to metric windows), so
the auxiliary predicates of the lowering are checked like the user's.

(a) Key-local: one engine per bucket of key values
---------------------------------------------------

Each predicate (a name with a number of arguments: p/1 and p/2 are two) gets a
key place, and every rule has one term k (a variable, or a constant) in the key
place of every atom it has: its head, each body atom (positive, under `not`,
in any window), and the left operand of a `Since`. Then every ground instance of
a rule has all its atoms about one key value, k's. The key of an atom is the
value in its key place; the stream's atoms are routed by it (a hash of the
written term, `bucket_of`) and each bucket's engine reports only atoms whose key
is its own.

Why that is the whole run's output: fix a key value c. Whether a rule instance
with key c fires at t depends on atoms with key c only: its positive atoms and
windows (DIAMOND, BOX, @T, the metric operators) look at the presence of those
very atoms over time, its negated atoms at their absence, its comparisons at its
own variables. By induction on time points, and inside one time point on the
strata and the rounds of the fixpoint, the atoms with key c holding (or placed
at a past point by an `@T` head) in the engine of c's bucket are those of the
whole run: the data with key c is the same, and every derivation of an atom
with key c reads atoms with key c only. Atoms with other keys may be derived
wrongly in that engine (a program fact `node(n1)` or a rule `r(b) :- not p(b)`
holds in every engine, though p(b) arrives in one only), but only atoms with
their own key can read them, and those are not reported there. Every engine
runs the whole timeline (the same first and last time point, so BOX windows
clip at the same start), and the buckets' reports are disjoint: the union per
time point is the whole run's line. Excluded: tuple windows ([COUNT n] counts
the last n atoms of the whole stream, of every key), and a predicate without
arguments (it has no key place).

(b) Time slices: one engine per stretch of time, fed a margin before it
-----------------------------------------------------------------------

Give each body literal a reach w: 0 for an atom now, n for a window [RANGE n]
(any operator), b for a metric interval [a, b], and unbounded for `@T p`
without a window (the whole past) or an interval without an end. The reach of a
predicate, d(P), is 0 for one no rule derives and otherwise the largest
d(Q) + w over the body literals (Q, w) of its rules; L is the largest d. L is
finite exactly when no literal is unbounded, no tuple window is used, and no
recursion goes through a window of positive reach (every cycle of the
dependency graph has reach 0: recursion within a time point is fine). RDF
triples are one predicate to the engine; here a triple with a constant
property is a predicate of its own (triples of two properties never unify),
and one with a variable property stands for all of them.

Claim: an engine started at s and fed the stream's atoms from s on gives, for
every predicate P and time point t >= s + d(P), the same atoms of P at t as
the whole run. By induction on t (and inside t on strata and rounds): at t, a
rule reads its body atoms at the points [t - w, t] of each literal, that is
atoms of Q at points u >= t - w >= s + d(Q), which are right by the induction;
so the rule's instances at t are the whole run's, and so are the atoms it puts
at t (or, with an `@T` head, at a past point u: the instances placing atoms at
u are evaluated at times >= u, all right when u >= s + d(P)). Derived atoms stay
in the stream: they are read back only through windows, and at points the
claim covers. BOX, `not` and Boxminus read presence and absence at right points
only; a BOX window is clipped at the start of the timeline, but for
t >= s + d(P) its window [t - n, t] starts at or after s, so neither start
clips it. So the timeline is cut into slices [a, b); the engine of a slice
starts at s = max(start, a - L), is fed the atoms of [s, b) (a DatalogMTL fact
over an interval: the points of it in [s, b)) and reports [a, b): its output at
a is its whole line there (the driver takes the difference with the line before),
then its changes. The first slice (s = start) is the whole run's prefix.

Neither: the program runs on the driver, with the reasons in one line
(`OnDriver.reason`). The engine's bound on new atoms per time point
(`--max-derivations`) applies to each engine's share.

`tests/test_spark_reason_split.py` checks both claims on many generated
programs, running the shares in-process (`rsp_plugin.spark.reason_parts`).
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass

from ..core.terms import TRIPLE
from ..lars.metric import SINCE, PastWindow
from ..lars.program import AT, COUNT, PLAIN, Atom, ExtendedAtom, Program, Rule, Var

#: the largest number of key assignments tried before the program is called not key-local
SEARCH_STEPS = 200_000

Node = tuple[int, int]  # (predicate id, number of arguments)

#: why a rule with a tuple window splits neither way
TUPLE_WINDOW = "has a tuple window ([COUNT n] counts the last n atoms of every key, however far back)"


@dataclass(frozen=True)
class KeyLocal:
    """Every rule keeps one term in its atoms' key places: `keys` (predicate, arity) -> key place."""

    keys: dict[Node, int]

    def describe(self, terms) -> str:
        return ", ".join(f"{terms.key(p)}/{a} by argument {k + 1}" for (p, a), k in sorted(
            self.keys.items(), key=lambda item: (terms.key(item[0][0]), item[0][1])))


@dataclass(frozen=True)
class TimeSliced:
    """How far back a rule can see, through every chain of windows: `reach` time points."""

    reach: int


@dataclass(frozen=True)
class OnDriver:
    """Neither split holds: why, in one line (`rule`: the rule it is about, written; `what`: the rest)."""

    rule: str
    what: str

    @property
    def reason(self) -> str:
        return f"{self.rule} {self.what}"


def bucket_of(key: str, buckets: int) -> int:
    """The bucket of a key value (its written term): the same in every process (not `hash`, which is salted)."""
    return zlib.crc32(key.encode("utf-8", "surrogatepass")) % buckets


def split_of(program: Program) -> KeyLocal | TimeSliced | OnDriver:
    """Key-local if it holds (no atom is given to two engines), else time slices, else on the driver."""
    keyed = key_places(program)
    if isinstance(keyed, KeyLocal):
        return keyed
    reach = time_reach(program)
    if isinstance(reach, TimeSliced):
        return reach
    if keyed.reason == reach.reason:
        return keyed
    if keyed == reach:
        return keyed
    if keyed.rule == reach.rule:
        return OnDriver(keyed.rule, f"{keyed.what}, and {reach.what}")
    return OnDriver(keyed.rule, f"{keyed.what}, and {reach.reason}")


# (a) key places ------------------------------------------------------------------------------------------------


def rule_atoms(rule: Rule) -> list[Atom]:
    """Every atom of a rule: its head, its body atoms (negated too), the left operands of its `Since`s."""
    atoms = [rule.head]
    for literal in rule.body:
        if isinstance(literal, ExtendedAtom):
            atoms.append(literal.atom)
            window = literal.window
            if literal.modality == SINCE and isinstance(window, PastWindow) and window.left is not None:
                predicate, places = window.left
                args = tuple(literal.atom.args[value] if kind == 0 else value for kind, value in places)
                atoms.append(Atom(predicate, args))
    return atoms


def key_places(program: Program) -> KeyLocal | OnDriver:
    """A key place per predicate that every rule keeps (see the module's (a)), or why there is none."""
    rules = program.rules
    for rule in rules:
        if _counts(rule):
            return OnDriver(_named(rule), TUPLE_WINDOW)
        if any(not atom.args for atom in rule_atoms(rule)):
            return OnDriver(_named(rule), "has an atom without arguments (no key to split by)")
    for rule in rules:  # a rule that cannot keep a key on its own is the clearest reason
        if _assign([rule]) is None:
            return OnDriver(_named(rule), f"joins {_joined(rule, program.terms)} on different arguments")
    for count in range(2, len(rules) + 1):  # else the first rule that cannot keep the same places as those before
        if _assign(rules[:count]) is None:
            return OnDriver(_named(rules[count - 1]), "keys its atoms by other arguments than the rules before it")
    keys = _assign(rules)
    return KeyLocal(keys if keys is not None else {})


def _assign(rules: list[Rule]) -> dict[Node, int] | None:
    """A key place per predicate such that every rule has one term in all its atoms' key places; None: none
    (or more than SEARCH_STEPS tries). Depth-first over the predicates, most constrained first."""
    rule_nodes = [[((atom.predicate, len(atom.args)), atom.args) for atom in rule_atoms(rule)] for rule in rules]
    nodes: list[Node] = []
    for atoms in rule_nodes:
        for node, _ in atoms:
            if node not in nodes:
                nodes.append(node)
    touching: dict[Node, list[int]] = {node: [] for node in nodes}
    for number, atoms in enumerate(rule_nodes):
        for node in dict.fromkeys(node for node, _ in atoms):
            touching[node].append(number)
    order = sorted(nodes, key=lambda node: (node[1], -len(touching[node])))
    chosen: dict[Node, int] = {}
    steps = [0]

    def consistent(node: Node) -> bool:
        for number in touching[node]:
            term = None
            for other, args in rule_nodes[number]:
                place = chosen.get(other)
                if place is None:
                    continue
                if term is None:
                    term = args[place]
                elif args[place] != term:
                    return False
        return True

    def search(index: int) -> bool:
        if index == len(order):
            return True
        steps[0] += 1
        if steps[0] > SEARCH_STEPS:
            return False
        node = order[index]
        for place in range(node[1]):
            chosen[node] = place
            if consistent(node) and search(index + 1):
                return True
        del chosen[node]
        return False

    return dict(chosen) if search(0) else None


def _counts(rule: Rule) -> bool:
    return any(isinstance(literal, ExtendedAtom) and literal.window is not None
               and getattr(literal.window, "kind", None) == COUNT for literal in rule.body)


def _joined(rule: Rule, terms) -> str:
    """What a rule that keeps no key joins: its atoms' predicates, as written."""
    names = list(dict.fromkeys(terms.key(atom.predicate) for atom in rule_atoms(rule)[1:]))
    return " and ".join(names) if len(names) > 1 else (names[0] if names else terms.key(rule.head.predicate))


# (b) reach back in time ----------------------------------------------------------------------------------------

_UNBOUNDED = None


def time_reach(program: Program) -> TimeSliced | OnDriver:
    """L, how far back the program can see through chains of windows (see the module's (b)), or why it is
    unbounded. RDF triples are one predicate to the engine, but a triple with a constant property never
    unifies with one of another: each property is a predicate of its own here (`_reach_nodes`)."""
    triple = program.terms.find(TRIPLE)
    properties = {atom.args[1] for rule in program.rules for atom in rule_atoms(rule)
                  if atom.predicate == triple and len(atom.args) == 3 and not isinstance(atom.args[1], Var)}
    edges: list[tuple[tuple, tuple, int | None, Rule]] = []  # (body node, head node, reach, rule)
    for rule in program.rules:
        if _counts(rule):
            return OnDriver(_named(rule), TUPLE_WINDOW)
        heads = _reach_nodes(rule.head, triple, properties)
        for literal in rule.body:
            if not isinstance(literal, ExtendedAtom):
                continue
            reach = literal_reach(literal)
            if reach is _UNBOUNDED:
                return OnDriver(_named(rule), f"reads the whole past ({_unbounded_why(literal)})")
            for atom in rule_atoms(Rule(rule.head, (literal,)))[1:]:
                edges.extend((source, head, reach, rule) for source in _reach_nodes(atom, triple, properties)
                             for head in heads)
    nodes = sorted({node for source, target, _, _ in edges for node in (source, target)}
                   | {node for r in program.rules for node in _reach_nodes(r.head, triple, properties)},
                   key=repr)
    index = {node: k for k, node in enumerate(nodes)}
    successors: list[list[int]] = [[] for _ in nodes]
    for source, target, _, _ in edges:
        successors[index[source]].append(index[target])
    component = _components(len(nodes), successors)
    for source, target, reach, rule in edges:
        if reach and component[index[source]] == component[index[target]]:
            return OnDriver(_named(rule), f"reaches back through a recursion over windows (its window feeds "
                            f"{_node_name(target, program.terms)} back)")
    # longest reach over the graph of components, a DAG (Tarjan numbers a component after every one it
    # reaches: an edge goes from a higher number to a lower or the same). Inside a component every edge
    # has reach 0 and every member reaches every other: they all see as far back as the farthest.
    depth: dict[int, int] = {}
    into: dict[int, list[tuple[int, int]]] = {}
    for source, target, reach, _ in edges:
        low, high = component[index[source]], component[index[target]]
        if low != high:
            into.setdefault(high, []).append((low, reach))
    for number in sorted(set(component), reverse=True):
        depth[number] = max((depth[source] + reach for source, reach in into.get(number, ())), default=0)
    return TimeSliced(max(depth.values(), default=0))


#: the reach graph's node of triples whose property is a variable (they may be of any property)
_ANY_PROPERTY = "any"


def _reach_nodes(atom: Atom, triple: int | None, properties: set) -> list[tuple]:
    """The nodes of the reach graph an atom stands for: (predicate, arity), or for an RDF triple (triple,
    3, its property); a triple whose property is a variable stands for every property's node and the
    `_ANY_PROPERTY` one (a rule deriving such triples feeds every rule reading triples, and the other way)."""
    if atom.predicate != triple or len(atom.args) != 3:
        return [(atom.predicate, len(atom.args), None)]
    prop = atom.args[1]
    if isinstance(prop, Var):
        return [(triple, 3, other) for other in sorted(properties)] + [(triple, 3, _ANY_PROPERTY)]
    return [(triple, 3, prop)]


def _node_name(node: tuple, terms) -> str:
    predicate, _, prop = node
    if prop is None:
        return terms.key(predicate)
    return "triples of any property" if prop == _ANY_PROPERTY else f"triples of {terms.key(prop)}"


def literal_reach(literal: ExtendedAtom) -> int | None:
    """How far back one body literal looks, in time points (None: without bound)."""
    window = literal.window
    if window is None:
        return 0 if literal.modality == PLAIN else _UNBOUNDED  # `@T p` over the whole timeline
    if isinstance(window, PastWindow):
        return window.high  # (None: an interval without an end)
    return window.size


def _unbounded_why(literal: ExtendedAtom) -> str:
    if isinstance(literal.window, PastWindow):
        return f"an interval without an end, {literal.window}"
    if literal.modality == AT:
        return "@T without a window"
    return "a window without a bound"


def _components(size: int, successors: list[list[int]]) -> list[int]:
    from ..lars.program import _strongly_connected

    return _strongly_connected(size, successors)


# naming rules as their user wrote them --------------------------------------------------------------------------


def _named(rule: Rule) -> str:
    """`rule TEXT at FILE:LINE`, the text as the user wrote it (a DatalogMTL rule's line, not its lowering)."""
    text = rule.text
    where = rule.location
    origin = rule.origin[0] if rule.origin else None
    if where is not None and origin is not None and getattr(origin, "kind", "") == "datalogmtl":
        lines = origin.text.splitlines()
        if 0 < where.line <= len(lines):
            text = lines[where.line - 1].strip()
    place = f" at {where.filename}:{where.line}" if where is not None else ""
    return f"rule {text.strip()}{place}"


__all__ = ["KeyLocal", "TimeSliced", "OnDriver", "split_of", "key_places", "time_reach", "bucket_of",
           "rule_atoms", "literal_reach", "Var"]
