"""Which RDFS / OWL 2 RL rules stay within a key, given the TBox: the locality analysis of PARTITION BY ... ENTAILMENT.

Partitioned mode gives each key its own engine, fed the triples routed to it
(by predicate: the subject or the object holds the key). Under ENTAILMENT a
key's engine materializes its triples with the background; its answers are
the driver-side engine's exactly when every entailment the query can read
about key K follows from K's triples and the background. Checked per rule,
against the TBox (the background's closure B*):

- one window premise (subclass, subproperty, domain, range, inverse, ...):
  the entailments of a triple `s p o` with B* are computed for its shape (the
  seed templates of `rsp_plugin.reasoning.templates`: `S0 p S1`, `S0 rdf:type C`, for
  every predicate and class B* names and one it does not). An entailment the
  query can read must have the key in a place the triple has it too: the
  subject (`S0 a C` from a domain) routes p by subject, the object (`S1 a C`
  from a range) routes it by object. A predicate routed both ways, or an
  entailment about a fixed term (`p a rdf:Property`) that a key-local pattern
  can read, is refused with the reason;
- two window premises (`x p y, y p z` of a transitive property, a functional
  property's two values, owl:sameAs): the rule is instantiated against B*
  (its schema atoms bound to the TBox's facts) and stays within a key only if
  one variable holds the key place of every window premise; else refused.

Schema triples in the stream (a predicate the rules read as schema, such as
rdfs:subClassOf, or a type of the rule sets' own vocabulary, such as
owl:TransitiveProperty) are set aside, with that reason: in partitioned mode
the ontology is the background.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..lars.program import Var
from ..reasoning.templates import Present, SeedReasoner

RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
_ABOX_PREDICATES = {RDF_TYPE, "<http://www.w3.org/2002/07/owl#sameAs>",
                    "<http://www.w3.org/2002/07/owl#differentFrom>"}
_VOCABULARIES = ("<http://www.w3.org/2002/07/owl#", "<http://www.w3.org/2000/01/rdf-schema#",
                 "<http://www.w3.org/1999/02/22-rdf-syntax-ns#")


class NotLocal(Exception):
    """An entailment that may join the triples of several keys: the reason."""


@dataclass
class Locality:
    """The routing an ENTAILMENT query needs: predicate -> "s" | "o", and what the stream must not carry."""

    positions: dict[str, str]
    #: predicates whose triples are schema (set aside when they arrive on the stream)
    schema_predicates: set[str] = field(default_factory=set)
    #: classes whose type triples are schema
    schema_classes: set[str] = field(default_factory=set)

    def set_aside(self, p: str, o: str) -> str | None:
        """Why a stream triple is set aside, or None."""
        if p in self.schema_predicates or (p == RDF_TYPE and o in self.schema_classes):
            return ("a schema triple in the stream: partitioned mode reads the ontology from the background "
                    "(--background) only; set aside")
        return None


def analyse(profile: str, background: list[str], patterns: list[tuple], key: str,
            positions: dict[str, str]) -> Locality:
    """`patterns`: the query's triple patterns as ((kind, value), ...) with kind "v" or "c" (keys);
    `positions`: the routing the query itself needs. Raises NotLocal with the reason."""
    reasoner = SeedReasoner(profile, background)
    keys = reasoner.terms.keys
    routing = dict(positions)
    origin = {predicate: "the query's pattern" for predicate in positions}
    schema_predicates, schema_classes = _schema_vocabulary(reasoner)

    def route(predicate: str, place: str, why: str) -> None:
        if predicate in schema_predicates:
            return
        before = routing.get(predicate)
        if before is not None and before != place:
            raise NotLocal(f"{predicate} would be routed by {_word(before)} ({origin[predicate]}) and by "
                           f"{_word(place)} ({why})")
        routing[predicate] = place
        origin.setdefault(predicate, why)

    # one window premise: the shapes of the triples that can arrive
    predicates, classes = set(), set()
    for _, args in reasoner.base.facts():
        for term in args:
            key_text = keys[term]
            if key_text.startswith("<"):
                predicates.add(key_text)
                classes.add(key_text)
    for pattern in patterns:
        if pattern[1][0] == "c":
            predicates.add(pattern[1][1])
        if pattern[1] == ("c", RDF_TYPE) and pattern[2][0] == "c":
            classes.add(pattern[2][1])
    fresh_predicate, fresh_class = "<urn:x-rsp-plugin:any-predicate>", "<urn:x-rsp-plugin:any-class>"
    objects = ["<urn:x-rsp-plugin:o>"]
    if reasoner.literal_predicates:  # a literal's datatype facts take part (OWL 2 RL's dt- rules)
        objects += ['"x"', '"0"^^<http://www.w3.org/2001/XMLSchema#integer>']
    enumerated = predicates | classes
    shapes = [("<urn:x-rsp-plugin:s>", p, o) for p in [fresh_predicate, *sorted(predicates)] if p != RDF_TYPE
              for o in objects]
    shapes += [("<urn:x-rsp-plugin:s>", RDF_TYPE, c) for c in [fresh_class, *sorted(classes)]
               if c not in schema_classes]
    present: set[Present] = set()
    for triple in shapes:
        if triple[1] in schema_predicates:
            continue
        shape = reasoner.shape(triple)
        facts, _ = reasoner.template(shape)
        slot_at: dict[int, int] = {}
        for position, part in enumerate(shape):
            if part[0] == "s":
                slot_at.setdefault(part[1], position)
        names = {slot: ("?s", "?p", "?o")[position] for slot, position in slot_at.items()}
        seed_name = "'" + " ".join(names[part[1]] if part[0] == "s" else part[1] for part in shape) + "'"
        for (relation, args), _ in facts:
            if relation != "triple":
                present.add(Present(relation, None, False))
                continue
            fact = tuple(args)
            constant_p = fact[1][1] if fact[1][0] == "c" else None
            present.add(Present("triple", constant_p, fact[0] == fact[2]))
            for pattern in patterns:
                place = _key_place(pattern, key)
                if place is None or not _unifies(fact, pattern, enumerated | reasoner.schema):
                    continue
                term = fact[0 if place == "s" else 2]
                shown = "'" + " ".join(names[value] if kind == "s" else value for kind, value in fact) + "'"
                if term[0] == "c":
                    raise NotLocal(f"the {profile} entailment {shown} of a triple {seed_name} is about the fixed "
                                   f"term {term[1]}, which ?{key} can read from any key's triples")
                at = slot_at[term[1]]
                if at == 1:
                    raise NotLocal(f"the {profile} entailment {shown} of a triple {seed_name} is about the "
                                   f"triple's predicate, which ?{key} can read from any key's triples")
                route(triple[1], "s" if at == 0 else "o", f"{shown} from a triple {seed_name}")
    # two window premises
    relations = {fact.relation for fact in present if fact.relation != "triple"}
    window_predicates = {fact.predicate for fact in present if fact.relation == "triple"} | set(routing)
    for rule in reasoner.rules:
        matchable = [i for i, atom in enumerate(rule.atoms)
                     if _window_atom(atom, keys, relations, window_predicates, schema_predicates, schema_classes)]
        if len(matchable) < 2:
            continue
        for bound in _instances(reasoner, rule, matchable):
            _check_join(reasoner, rule, bound, matchable, routing, key)
    return Locality(routing, schema_predicates, schema_classes)


def _window_atom(atom, keys, relations: set, predicates: set, schema_predicates: set, schema_classes: set) -> bool:
    """Can window facts (the stream's triples routed to a key, and their seed closures) match this atom?"""
    predicate, args = atom
    if keys[predicate] != "triple":
        return keys[predicate] in relations
    p, o = args[1], args[2]
    if isinstance(p, Var):
        return True
    name = keys[p]
    if name in schema_predicates:
        return False
    if name == RDF_TYPE and not isinstance(o, Var) and keys[o] in schema_classes:
        return False
    return name in predicates or name in _ABOX_PREDICATES


def _schema_vocabulary(reasoner: SeedReasoner) -> tuple[set[str], set[str]]:
    keys = reasoner.terms.keys
    predicates, classes = set(), set()
    for rule in reasoner.rules:
        for predicate, args in rule.atoms:
            if keys[predicate] != "triple" or len(args) != 3:
                continue
            p, o = args[1], args[2]
            if not isinstance(p, Var) and keys[p] not in _ABOX_PREDICATES:
                predicates.add(keys[p])
            if not isinstance(p, Var) and keys[p] == RDF_TYPE and not isinstance(o, Var) and \
                    keys[o].startswith(_VOCABULARIES):
                classes.add(keys[o])
    return predicates, classes


def _key_place(pattern: tuple, key: str) -> str | None:
    if pattern[0] == ("v", key):
        return "s"
    if pattern[2] == ("v", key):
        return "o"
    return None


def _unifies(fact: tuple, pattern: tuple, named: set[str]) -> bool:
    """Can a fact of the template (("c", key) | ("s", slot)) be a match of the pattern (("c" | "v", ...))?
    A slot stands for a term B* and the enumerated shapes do not name."""
    bound: dict = {}
    for term, want in zip(fact, pattern):
        if want[0] == "c":
            if term[0] == "c" and term[1] != want[1]:
                return False
            if term[0] == "s" and want[1] in named:
                return False
        else:
            seen = bound.get(want[1])
            if seen is not None and seen != term and seen[0] == "c" and term[0] == "c":
                return False
            bound[want[1]] = term
    return True


def _instances(reasoner: SeedReasoner, rule, matchable: list[int]):
    """Bindings of the rule's schema atoms (those no window fact can match) in B*; ({},) when it has none."""
    schema = [i for i in range(len(rule.atoms)) if i not in matchable]
    bindings = [{}]
    for index in schema:
        predicate, args = rule.atoms[index]
        extended = []
        for binding in bindings:
            pattern = tuple(binding.get(a) if isinstance(a, Var) else a for a in args)
            for candidate in reasoner.base.match(predicate, pattern):
                new = dict(binding)
                ok = True
                for term, value in zip(args, candidate):
                    if isinstance(term, Var):
                        if new.setdefault(term, value) != value:
                            ok = False
                            break
                if ok:
                    extended.append(new)
        bindings = extended
        if not bindings:
            return []
    return bindings


def _check_join(reasoner: SeedReasoner, rule, binding: dict, matchable: list[int], routing: dict, key: str):
    keys = reasoner.terms.keys
    candidates = None
    for index in matchable:
        predicate, args = rule.atoms[index]
        args = tuple(binding.get(a, a) if isinstance(a, Var) else a for a in args)
        if keys[predicate] != "triple":
            raise NotLocal(f"the rule '{_text(rule)}' joins {keys[predicate]} facts of several keys")
        p = args[1]
        if isinstance(p, Var):
            raise NotLocal(f"the rule '{_text(rule)}' joins window triples of any predicate, which may belong "
                           "to different keys")
        place = routing.get(keys[p])
        if place is None:
            continue  # a predicate nothing routes: such triples do not reach the keys' engines
        term = args[0 if place == "s" else 2]
        found = {term} if isinstance(term, Var) else set()
        candidates = found if candidates is None else candidates & found
        if not candidates:
            raise NotLocal(f"the rule '{_text(rule)}' joins two window triples that may belong to different keys"
                           + _binding_text(binding, keys))


def _binding_text(binding: dict, keys) -> str:
    if not binding:
        return ""
    shown = ", ".join(f"?{var.name} = {keys[value]}" for var, value in sorted(binding.items(),
                                                                            key=lambda item: item[0].name))
    return f" (with {shown})"


def _text(rule) -> str:
    return " ".join(rule.text.split()) if rule.text else "a rule"


def _word(place: str) -> str:
    return "subject" if place == "s" else "object"


__all__ = ["analyse", "Locality", "NotLocal"]
