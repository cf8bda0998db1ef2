"""The entailments of one window triple with the background: what the executors derive as triples arrive.

With the TBox (the background and the profile's axioms) closed once, B*, an
RDFS / OWL 2 RL entailment that needs one window triple w and otherwise only
B* holds exactly as long as w does: its expiration time is w's (Barbieri et
al.'s min over the premises, B* never expiring). So these are derived per
triple, where the triple is parsed, and cut by the window with it:

    closure({w} | B*) - B*        one triple's entailments ("seed closure")

A rule that joins two window triples (two ABox premises, expiration = min) is
not covered here: `rules.py` runs those as joins over the window, and only when
the window holds relations that can meet in them.

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
"lasting".

>>> reasoner = SeedReasoner("rdfs", ["<http://ex/A> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <http://ex/B> ."])
>>> [f for f, _ in reasoner.derive(("<http://ex/x>", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<http://ex/A>"))
...  if f[1][2] == "<http://ex/B>"]
[('triple', ('<http://ex/x>', '<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>', '<http://ex/B>'))]
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass

from ...lars.builtins import compare
from ...lars.program import PLAIN, Comparison, ExtendedAtom, Var
from ...reasoning.datatypes import literal_facts
from ...reasoning.materializer import FALSE_PREFIX, PROFILES, _profile_name
from ...reasoning.rulesets import rules_of
from ...core.terms import TRIPLE, Dictionary

Fact = tuple[str, tuple[str, ...]]
#: a derived fact that needs the seed triple (expires with it), or only literal facts (never expires)
SEED, LASTING = 0, 1
_SLOT = "<urn:x-rsp-plugin:slot:{}>"


class NotCovered(Exception):
    """A rule the seed reasoner does not evaluate (a window, @, `not` or arithmetic in a body)."""


@dataclass(frozen=True)
class CompiledRule:
    head: tuple          # (predicate id, args: Var | id)
    atoms: tuple         # ((predicate id, args), ...)
    comparisons: tuple   # ((op, left, right), ...): Var | id
    text: str = ""


def compile_profile(profile: str, terms: Dictionary) -> tuple[list[CompiledRule], list[tuple[int, int, int]]]:
    """A profile's rules (those with a `false` head left out: inconsistencies are not output here) and
    its axioms (the ground triples of its rule files), interned in `terms`."""
    triple = terms.intern(TRIPLE)
    rules, axioms = [], []
    for name in PROFILES[_profile_name(profile)][0]:
        for rule in rules_of(name, terms):
            if not rule.body and rule.head_time is None and rule.head.predicate == triple and \
                    not any(isinstance(arg, Var) for arg in rule.head.args):
                axioms.append(tuple(rule.head.args))
                continue
            if terms.key(rule.head.predicate).startswith(FALSE_PREFIX):
                continue
            rules.append(compile_rule(rule))
    return rules, axioms


def compile_rule(rule) -> CompiledRule:
    if rule.head_time is not None:
        raise NotCovered(f"an @ head: {rule.text}")
    atoms, comparisons = [], []
    for literal in rule.body:
        if isinstance(literal, ExtendedAtom):
            if literal.negated or literal.modality != PLAIN or literal.window is not None or literal.time is not None:
                raise NotCovered(f"a window, @ or not in the body of '{rule.text}'")
            atoms.append((literal.atom.predicate, tuple(literal.atom.args)))
        elif isinstance(literal, Comparison):
            if not all(isinstance(side, (Var, int)) for side in (literal.left, literal.right)):
                raise NotCovered(f"arithmetic in '{rule.text}'")
            comparisons.append((literal.op, literal.left, literal.right))
        else:  # pragma: no cover - the model has no other literal
            raise NotCovered(rule.text)
    if not atoms:
        raise NotCovered(f"a rule without atoms: {rule.text}")
    return CompiledRule((rule.head.predicate, tuple(rule.head.args)), tuple(atoms), tuple(comparisons), rule.text)


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

    def __init__(self, rules: list[CompiledRule], terms: Dictionary):
        self.rules = rules
        self.terms = terms
        self.readers: dict[int, list[tuple[int, int]]] = defaultdict(list)
        for number, rule in enumerate(rules):
            for position, (predicate, _) in enumerate(rule.atoms):
                self.readers[predicate].append((number, position))
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
                    binding = _unify(rule.atoms[position][1], fact[1], {})
                    if binding is None:
                        continue
                    for bound, derived_tag in self._join(rule, position, binding, tag, base, known, by_predicate):
                        head = (rule.head[0], tuple(bound[a] if isinstance(a, Var) else a for a in rule.head[1]))
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

    def _join(self, rule: CompiledRule, skip: int, binding: dict, tag: int, base: FactBase, known: dict,
              by_predicate: dict):
        """Bindings of the rule's other atoms over base + known, with the tag of the weakest premise."""
        if not self._comparisons_hold(rule, binding):
            return
        rest = [i for i in range(len(rule.atoms)) if i != skip]
        yield from self._extend(rule, rest, binding, tag, base, known, by_predicate)

    def _extend(self, rule, rest, binding, tag, base, known, by_predicate):
        if not rest:
            yield binding, tag
            return
        choice = max(rest, key=lambda i: sum(1 for a in rule.atoms[i][1] if not isinstance(a, Var) or a in binding))
        predicate, args = rule.atoms[choice]
        pattern = tuple(binding.get(a) if isinstance(a, Var) else a for a in args)
        others = [i for i in rest if i != choice]
        for candidate in base.match(predicate, pattern):
            extended = _unify(args, candidate, binding)
            if extended is not None and self._comparisons_hold(rule, extended):
                yield from self._extend(rule, others, extended, tag, base, known, by_predicate)
        for candidate in list(by_predicate.get(predicate, ())):
            if len(candidate) != len(pattern) or any(p is not None and p != c for p, c in zip(pattern, candidate)):
                continue
            extended = _unify(args, candidate, binding)
            if extended is not None and self._comparisons_hold(rule, extended):
                weaker = min(tag, known[(predicate, candidate)])
                yield from self._extend(rule, others, extended, weaker, base, known, by_predicate)

    def _comparisons_hold(self, rule: CompiledRule, binding: dict) -> bool:
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


def _unify(pattern: tuple, values: tuple, binding: dict) -> dict | None:
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


class SeedReasoner:
    """B* once, then the closure of single window triples with it, by templates.

    `background`: N-Triples lines (or (s, p, o) key triples) of the background graphs.
    """

    def __init__(self, profile: str, background):
        self.profile = _profile_name(profile)
        self.terms = terms = Dictionary()
        self.triple = terms.intern(TRIPLE)
        self.rules, axioms = compile_profile(self.profile, terms)
        self.closure = Closure(self.rules, terms)
        reads = {predicate for rule in self.rules for predicate, _ in rule.atoms}
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
            for term in (*rule.head[1], *(a for _, args in rule.atoms for a in args),
                         *(side for _, left, right in rule.comparisons for side in (left, right))):
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


__all__ = ["SeedReasoner", "Closure", "FactBase", "compile_profile", "compile_rule", "NotCovered", "SEED", "LASTING"]
