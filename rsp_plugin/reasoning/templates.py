"""Templates per triple shape: the entailments of one window triple with a static TBox, computed once per shape.

With the TBox (the background and the profile's axioms) closed once, B*, an
RDFS / OWL 2 RL entailment that needs one window triple w and otherwise only
B* holds exactly as long as w does: its expiration time is w's (Barbieri et
al.'s min over the premises, B* never expiring). So these are derived per
triple (by a backend where it reads the triple: Spark's executors) and cut by
the window with it:

    closure({w} | B*) - B*        one triple's entailments ("seed closure")

A rule that joins two window triples (two ABox premises, expiration = min) is
not covered here: `JoinAnalysis` tells, from the relations a window holds,
which rules can have two window facts meet in them; a backend runs those as
joins over the window (Spark: `rsp_plugin.spark.distributed.rules.StageB`), and
only then.

Most triples differ only in terms the rules and B* never name (an observation's
IRI, a sensor, a value): those terms are slots, and the closure of
(slot0, ex:observedBy, slot1) is computed once and instantiated for every
observation (a template per distinct shape). A slot stands for a term, a
literal's datatype facts (`datatype_of`, `ill_formed`) go with it, and a
template that compares a slot standing for a number (OWL 2 RL's cardinality
tests) is not reused: that triple is derived as it is.

Facts are (predicate key, argument keys); the relation of triples is `triple`.
Literal facts hold from their literal's arrival on and never expire (as the
per-fact materializer learns them): a fact that needs them but not w is marked
"lasting". The rules are the profile's compiled positive rules (`positive.py`),
the form every closure but the per-fact reference reads.

>>> reasoner = SeedReasoner("rdfs", ["<http://ex/A> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://ex/B> ."])
>>> [f for f, _ in reasoner.derive(("<http://ex/x>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<http://ex/A>"))
...  if f[1][2] == "<http://ex/B>"]
[('triple', ('<http://ex/x>', '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', '<http://ex/B>'))]
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ..core.terms import TRIPLE, Dictionary
from ..lars.builtins import compare
from ..lars.program import Var
from .datatypes import literal_facts
from .materializer import profile_name
from .positive import PositiveRule, compile_profile, readers, unify, weakest_bindings

Fact = tuple[str, tuple[str, ...]]
#: a derived fact that needs the seed triple (expires with it), or only literal facts (never expires)
SEED, LASTING = 0, 1
_SLOT = "<urn:x-rsp-plugin:slot:{}>"


class FactBase:
    """Facts by predicate, with lazily built indexes on bound argument positions."""

    def __init__(self):
        self.by_predicate: dict[int, set[tuple]] = defaultdict(set)
        self._indexes: dict[tuple, dict] = {}

    def __contains__(self, fact) -> bool:
        return fact[1] in self.by_predicate.get(fact[0], ())

    def add(self, predicate: int, args: tuple) -> bool:
        found = self.by_predicate[predicate]
        if args in found:
            return False
        found.add(args)
        for (indexed, positions), index in self._indexes.items():
            if indexed == predicate:
                index.setdefault(tuple(args[i] for i in positions), []).append(args)
        return True

    def match(self, predicate: int, pattern: tuple) -> list[tuple] | set[tuple]:
        """Facts of `predicate` with the bound positions of `pattern` (None: free)."""
        positions = tuple(i for i, value in enumerate(pattern) if value is not None)
        if not positions:
            return self.by_predicate.get(predicate, ())
        key = (predicate, positions)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = {}
            for args in self.by_predicate.get(predicate, ()):
                if len(args) == len(pattern):
                    index.setdefault(tuple(args[i] for i in positions), []).append(args)
        return index.get(tuple(pattern[i] for i in positions), ())

    def facts(self):
        for predicate, found in self.by_predicate.items():
            for args in found:
                yield predicate, args


class Closure:
    """Semi-naive evaluation of compiled rules over a base that stays as it is, from seed facts."""

    def __init__(self, rules: list[PositiveRule], terms: Dictionary):
        self.rules = rules
        self.terms = terms
        self.readers = readers(rules)
        #: ids standing for numbers the comparisons must not see (set by the caller); seen: `touched`
        self.numeric_slots: set[int] = set()
        self.touched = False

    def close(self, base: FactBase, seeds: dict[tuple, int]) -> dict[tuple, int]:
        """The facts derivable from `seeds` (fact -> SEED | LASTING) with `base`, not in `base`."""
        known: dict[tuple, int] = {}
        by_predicate: dict[int, list[tuple]] = defaultdict(list)
        delta = []
        for fact, tag in seeds.items():
            if fact in base:
                continue
            if known.get(fact, -1) < tag:
                if fact not in known:
                    by_predicate[fact[0]].append(fact[1])
                known[fact] = tag
                delta.append(fact)
        while delta:
            fresh = []
            for fact in delta:
                tag = known[fact]
                for number, position in self.readers.get(fact[0], ()):
                    rule = self.rules[number]
                    binding = unify(rule.atoms[position].args, fact[1], {})
                    if binding is None:
                        continue
                    for bound, derived_tag in self._join(rule, position, binding, tag, base, known, by_predicate):
                        head = (rule.head.predicate,
                                tuple(bound[a] if isinstance(a, Var) else a for a in rule.head.args))
                        if head in base:
                            continue
                        before = known.get(head, -1)
                        if derived_tag > before:
                            if before < 0:
                                by_predicate[head[0]].append(head[1])
                            known[head] = derived_tag
                            fresh.append(head)
            delta = fresh
        return known

    def _join(self, rule: PositiveRule, skip: int, binding: dict, tag: int, base: FactBase, known: dict,
              by_predicate: dict):
        """Bindings of the rule's other atoms over base + known, with the tag of the weakest premise."""
        if not self._comparisons_hold(rule, binding):
            return
        rest = [i for i in range(len(rule.atoms)) if i != skip]
        yield from weakest_bindings(rule, rest, binding, tag, base, _Tagged(known, by_predicate),
                                    self._comparisons_hold)

    def _comparisons_hold(self, rule: PositiveRule, binding: dict) -> bool:
        numbers = self.terms.numbers
        slots = self.numeric_slots
        for op, left, right in rule.comparisons:
            a = binding.get(left) if isinstance(left, Var) else left
            b = binding.get(right) if isinstance(right, Var) else right
            if a is None or b is None:
                continue  # decided once both sides are bound
            if a in slots or b in slots:
                self.touched = True
            if not compare(op, a, b, numbers):
                return False
        return True

    def fixpoint(self, facts) -> FactBase:
        """The closure of `facts` (predicate id, args) from nothing."""
        base = FactBase()
        derived = self.close(base, {fact: LASTING for fact in facts})
        for fact in derived:
            base.add(*fact)
        return base


class _Tagged:
    """The facts a closure derived, with their tags, as `weakest_bindings` reads annotated facts."""

    def __init__(self, known: dict, by_predicate: dict):
        self.known, self.by_predicate = known, by_predicate

    def match(self, predicate: int, pattern: tuple) -> list[tuple]:
        return [candidate for candidate in self.by_predicate.get(predicate, ())
                if len(candidate) == len(pattern) and all(p is None or p == c for p, c in zip(pattern, candidate))]

    def note(self, fact) -> int | None:
        return self.known.get(fact)


class SeedReasoner:
    """B* once, then the closure of single window triples with it, by templates.

    `background`: N-Triples lines (or (s, p, o) key triples) of the background graphs.
    """

    def __init__(self, profile: str, background):
        self.profile = profile_name(profile)
        self.terms = terms = Dictionary()
        self.triple = terms.intern(TRIPLE)
        self.rules, axioms = compile_profile(self.profile, terms)
        self.closure = Closure(self.rules, terms)
        reads = {atom.predicate for rule in self.rules for atom in rule.atoms}
        self.literal_predicates = {name: terms.intern(name) for name in ("datatype_of", "ill_formed")
                                   if terms.intern(name) in reads}
        given = [(self.triple, triple) for triple in axioms]
        for item in background:
            s, p, o = split_ntriple(item) if isinstance(item, str) else item
            given.append((self.triple, (terms.intern(s), terms.intern(p), terms.intern(o))))
        given.extend(self._literal_facts([args for _, args in given]))
        self.base = self.closure.fixpoint(given)
        #: terms the rules or B* name: kept as they are in templates
        self.schema: set[str] = {terms.key(term) for _, args in self.base.facts() for term in args}
        for rule in self.rules:
            for term in (*rule.head.args, *(a for atom in rule.atoms for a in atom.args),
                         *(side for test in rule.comparisons for side in (test.left, test.right))):
                if not isinstance(term, Var):
                    self.schema.add(terms.key(term))
        self._slots = [terms.intern(_SLOT.format(k)) for k in range(3)]
        self.templates: dict[tuple, tuple] = {}

    def __repr__(self) -> str:
        return f"<SeedReasoner {self.profile} B*={sum(len(v) for v in self.base.by_predicate.values())} " \
               f"templates={len(self.templates)}>"

    def background_closure(self) -> list[Fact]:
        """B*: every fact of the background's closure, as keys."""
        keys = self.terms.keys
        return [(keys[p], tuple(keys[a] for a in args)) for p, args in self.base.facts()]

    def _literal_facts(self, triples) -> list[tuple]:
        if not self.literal_predicates:
            return []
        out, seen = [], set()
        keys = self.terms.keys
        for triple in triples:
            term = triple[2]
            if term in seen or keys[term][0] != '"':
                continue
            seen.add(term)
            for name, datatype in literal_facts(keys[term]):
                predicate = self.literal_predicates.get(name)
                if predicate is not None:
                    out.append((predicate, (term,) if datatype is None else (term, self.terms.intern(datatype))))
        return out

    # one triple -----------------------------------------------------------------------------------

    def shape(self, triple: tuple[str, str, str]) -> tuple:
        """The template key of a triple: schema terms as they are, other terms as slots (numbered by
        first appearance), a literal slot with its datatype facts."""
        schema = self.schema
        slots: dict[str, int] = {}
        shape = []
        for key in triple:
            if key in schema:
                shape.append(("c", key))
                continue
            slot = slots.get(key)
            if slot is None:
                slot = slots[key] = len(slots)
            signature = tuple(literal_facts(key)) if self.literal_predicates and key[0] == '"' else ()
            shape.append(("s", slot, signature))
        return tuple(shape)

    def template(self, shape: tuple, triple: tuple[str, str, str] | None = None, numeric_positions=()):
        """(facts with slots, reusable): the seed closure of a shape. Facts are (predicate key,
        args as ("c", key) | ("s", slot)) with their tag. The slots that may stand for numbers are
        those of `triple` that are, or at `numeric_positions`; a template is kept per shape and
        those slots (a comparison reading a slot that is no number decides as for any term). Not
        reusable when a comparison read a slot that may be a number (then computed per triple)."""
        terms = self.terms
        ids, numeric = [], set()
        for position, part in enumerate(shape):
            if part[0] == "c":
                ids.append(terms.intern(part[1]))
            else:
                slot = self._slots[part[1]]
                ids.append(slot)
                if position in numeric_positions or (
                        triple is not None and terms.numbers[terms.intern(triple[position])] is not None):
                    numeric.add(slot)
        cached = (shape, frozenset(numeric))
        found = self.templates.get(cached)
        if found is not None:
            return found
        seeds = {(self.triple, tuple(ids)): SEED}
        for part, term in zip(shape, ids):
            if part[0] == "s" and part[2]:
                for name, datatype in part[2]:
                    predicate = self.literal_predicates.get(name)
                    if predicate is not None:
                        args = (term,) if datatype is None else (term, terms.intern(datatype))
                        seeds[(predicate, args)] = LASTING
        self.closure.numeric_slots = numeric
        self.closure.touched = False
        derived = self.closure.close(self.base, seeds)
        reusable = not self.closure.touched
        self.closure.numeric_slots = set()
        slot_of = {slot: k for k, slot in enumerate(self._slots)}
        keys = terms.keys
        facts = tuple(((keys[predicate], tuple(("s", slot_of[a]) if a in slot_of else ("c", keys[a]) for a in args)),
                       tag) for (predicate, args), tag in derived.items())
        result = (facts, reusable)
        if reusable:
            self.templates[cached] = result
        return result

    def derive(self, triple: tuple[str, str, str]) -> list[tuple[Fact, int]]:
        """The seed closure of one triple (keys), the triple itself included if not in B*."""
        shape = self.shape(triple)
        facts, reusable = self.template(shape, triple)
        if not reusable:
            facts = self._concrete(triple)
        values = {}
        for part, key in zip(shape, triple):
            if part[0] == "s":
                values[part[1]] = key
        return [((predicate, tuple(values[v] if kind == "s" else v for kind, v in args)), tag)
                for (predicate, args), tag in facts]

    def _concrete(self, triple) -> tuple:
        """A triple's seed closure computed for the triple itself (no slots)."""
        terms = self.terms
        ids = tuple(terms.intern(key) for key in triple)
        seeds = {(self.triple, ids): SEED}
        for fact in self._literal_facts([ids]):
            seeds.setdefault(fact, LASTING)
        derived = self.closure.close(self.base, seeds)
        keys = terms.keys
        return tuple(((keys[predicate], tuple(("c", keys[a]) for a in args)), tag)
                     for (predicate, args), tag in derived.items())


# rules two window facts can meet in -------------------------------------------------------------------
#
# Decided from the relations a window holds (per stored batch: the predicates of its triples and its other
# relations, and whether a triple is reflexive): a rule needs a join of the window with itself only if two
# of its body atoms can each be matched by window facts. A reflexive fact (`p rdfs:subPropertyOf p`, which
# rdfs6 gives every predicate in use) does not count for an atom where it is inert: put the two variables
# equal, and the rule either derives one of its other premises (transitivity: `?p sp ?q, ?q sp ?r`) or its
# comparisons fail (`?p != ?q`). So for RDFS over instance data nothing is left: every entailment is a
# seed's.


#: relation name of triples
TRIPLE_REL = TRIPLE
#: a `Present` predicate standing for any (what a window's shapes derive without naming it)
ANY_PREDICATE = "*"


@dataclass(frozen=True)
class Present:
    """A relation the window holds: ("triple", predicate key, reflexive) or (relation, None, False)."""

    relation: str
    predicate: str | None
    reflexive: bool


def inert_reflexive(rule: PositiveRule, position: int, terms: Dictionary) -> bool:
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
    head = (rule.head.predicate, tuple(same(t) for t in rule.head.args))
    for other, (other_predicate, other_args) in enumerate(rule.atoms):
        if other != position and (other_predicate, tuple(same(t) for t in other_args)) == head:
            return True
    return False


class JoinAnalysis:
    """Per rule and body position: which window relations it can match, and whether reflexive facts are inert."""

    def __init__(self, rules: list[PositiveRule], terms: Dictionary):
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
            if constant is not None and fact.predicate not in (constant, ANY_PREDICATE):
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


def split_ntriple(line: str) -> tuple[str, str, str]:
    """The three keys of an N-Triples line written by `ntriple` (one space between terms)."""
    text = line.rstrip()
    if text.endswith(" ."):
        text = text[:-2]
    s, rest = text.split(" ", 1)
    p, o = rest.split(" ", 1)
    return s, p, o


def ntriple(s: str, p: str, o: str) -> str:
    return f"{s} {p} {o} ."


__all__ = ["ANY_PREDICATE", "Closure", "FactBase", "JoinAnalysis", "LASTING", "Present", "SEED", "SeedReasoner",
           "TRIPLE_REL", "inert_reflexive", "ntriple", "present_of", "split_ntriple"]
