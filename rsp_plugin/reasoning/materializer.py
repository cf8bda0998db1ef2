"""RDFS / OWL 2 RL materialization over a window, kept up to date with expiration times.

Barbieri et al. (2010) tag every triple, explicit or entailed, with the moment
it expires: window triples with their arrival + the window, entailments with
the earliest expiry of their premises, background knowledge never. Expired
triples are dropped by looking at their tag; a re-derivation with a later tag
replaces the earlier one; nothing is deleted and re-derived. In our engine that
tag is the horizon, so the materializer is one LARS program:

    ?s ?p ?o :- [RANGE n] DIAMOND window_triple(?s, ?p, ?o) .   % holds on [t, t + n]
    ?s ?p ?o :- background_triple(?s, ?p, ?o) .                % never expires
    + the profile's rules (rdfs.lars / owl2rl.lars), over plain triple patterns
    + the user's LARS rules, if any, on top of the materialized triples

and the engine's annotated fixpoint does the rest: every time point is
evaluated, rules fire only on triples that are new or hold longer than known,
and derived triples stop holding when `now` passes their horizon.

>>> from rsp_plugin.core.terms import RDF_TYPE, Dictionary
>>> from rsp_plugin.core.time import NEVER_EXPIRES
>>> terms = Dictionary()
>>> ex = lambda name: terms.intern(f"<http://example.org/{name}>")
>>> is_in, a, b, c = ex("isIn"), ex("A"), ex("B"), ex("C")
>>> transitive = (is_in, terms.intern(RDF_TYPE), terms.intern(f"<{OWL}TransitiveProperty>"))
>>> m = Materializer("owl-rl", window=10, background=[transitive], terms=terms)
>>> _ = m.advance_to(1, [(a, is_in, b)])
>>> report = m.advance_to(2, [(b, is_in, c)])
>>> [terms.key(s)[-2] + terms.key(o)[-2] for s, p, o in sorted(report.added)]
['AC', 'BC']
>>> m.expires((a, is_in, c)), m.expires((b, is_in, c)), m.expires(transitive) == NEVER_EXPIRES
(11, 12, True)
>>> sorted(terms.key(s)[-2] + terms.key(o)[-2] for s, p, o in m.advance_to(12).removed)
['AB', 'AC']
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Iterable

from ..core.errors import RuleSyntaxError
from ..core.terms import TRIPLE, Dictionary
from ..lars.program import COUNT, ExtendedAtom, Program, Rule, Var, stratify
from ..lars.syntax import parse_program, parse_program_file
from .background import load_background
from .datatypes import literal_facts
from .rulesets import rules_of

if TYPE_CHECKING:
    from ..lars.engine import StepReport

OWL = "http://www.w3.org/2002/07/owl#"
Triple = tuple[int, int, int]

#: profile name -> the rule files that make it (in rsp_plugin/reasoning), and the "trivial" extras
PROFILES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "rdfs": (("rdfs.lars",), ("rdfs-trivial.lars",)),
    "owl-rl": (("owl2rl.lars",), ("owl2rl-trivial.lars",)),
}
#: other names of the profiles: the IRIs a query's ENTAILMENT clause uses
PROFILE_ALIASES = {
    "http://www.w3.org/ns/entailment/RDFS": "rdfs",
    "http://www.w3.org/ns/owl-profile/RL": "owl-rl",
    "owl2-rl": "owl-rl",
    "owlrl": "owl-rl",
}

WINDOW_TRIPLE = "window_triple"
BACKGROUND_TRIPLE = "background_triple"
#: heads of rules whose head is `false` in the W3C tables: `false_cax_dw(...)` is rule cax-dw
FALSE_PREFIX = "false_"


@dataclass(frozen=True)
class Inconsistency:
    """A rule with a false head fired: its name and the triples that made it fire."""

    rule: str
    triples: tuple[Triple, ...]
    time_point: int

    def describe(self, terms: Dictionary) -> str:
        shown = "; ".join(" ".join(terms.key(term) for term in triple) for triple in self.triples)
        return f"{self.rule} at {self.time_point}: {shown}"


@dataclass
class MaterializationReport:
    """What one `advance_to` changed: triples that started and stopped holding, inconsistencies found."""

    time_point: int
    added: list[Triple] = field(default_factory=list)
    removed: list[Triple] = field(default_factory=list)
    inconsistencies: list[Inconsistency] = field(default_factory=list)
    #: the engine's own report (rule evaluations, derivations, expiries)
    step: "StepReport | None" = None

    def __repr__(self) -> str:
        return (
            f"<MaterializationReport t={self.time_point} added={len(self.added)} "
            f"removed={len(self.removed)} inconsistencies={len(self.inconsistencies)}>"
        )


class Materializer:
    """The materialization of window + background under a profile, maintained with expiration times.

    `profile`: "rdfs", "owl-rl" (or an entailment IRI, see PROFILE_ALIASES), or None for no entailment.
    `window`: a triple arriving at time point t holds on [t, t + window]; None: it never expires.
    `background`: an rdflib Graph, a path to an RDF file, or (s, p, o) id triples; never expires.
    `terms`: the dictionary to share (created if None); `rules`: extra LARS program text (or a
    path to a .lars file, or a Program parsed with `terms`) evaluated in the same program, on top
    of the materialized triples.
    `trivial`: also the rules true of every term (rdfs4a/b, rdfs8, rdfs1; eq-ref).
    `start`: the first time point (default: the first one `advance_to` is called with).
    `explain`: keep what `explain(triple)` needs to say why a triple holds (`reasoning/explain.py`).
    """

    def __init__(
        self,
        profile: str | None = "rdfs",
        *,
        window: int | None = None,
        background=(),
        terms: Dictionary | None = None,
        rules: str | os.PathLike | Program | None = None,
        trivial: bool = False,
        start: int | None = None,
        explain: bool | int = False,
    ):
        if window is not None and (not isinstance(window, int) or window < 0):
            raise ValueError(f"a window is a number of time points >= 0, got {window!r}")
        self.profile = profile_name(profile)
        self.window = window
        self.terms = terms if terms is not None else Dictionary()
        self._triple = self.terms.intern(TRIPLE)  # (also: parse_program ignores an empty dictionary)
        self._window_triple = self.terms.intern(WINDOW_TRIPLE)
        self._background_triple = self.terms.intern(BACKGROUND_TRIPLE)
        self.program, axioms = self._program(rules, trivial)
        from ..lars.engine import IncrementalEngine  # (not imported with the module: the shape materializer,
        # the path of a static TBox, needs only `materialization_program` from here)

        self.engine = IncrementalEngine(self.program, start=start, explain=explain)
        self._false = false_heads(self.program, self.terms)
        reads = {literal.atom.predicate for rule in self.program.rules for literal in rule.positive}
        self._literal_predicates = {
            name: self.terms.intern(name) for name in ("datatype_of", "ill_formed") if self.terms.intern(name) in reads
        }
        self._seen_terms: set[int] = set()
        #: facts given before the first time point, and what they entail (see `holding`)
        self._given_before_start: list | None = []
        self._before_start: dict | None = None
        given = axioms + load_background(background, self.terms)
        self.background_size = len(given)
        self._add_background(given)

    def __repr__(self) -> str:
        return (
            f"<Materializer profile={self.profile} window={self.window} now={self.engine.now} "
            f"holding={len(self.engine.holding())}>"
        )

    # set-up ----------------------------------------------------------------------------

    def _program(self, rules, trivial: bool) -> tuple[Program, list[Triple]]:
        return materialization_program(self.profile, self.window, self.terms, rules, trivial)

    # evaluation ------------------------------------------------------------------------

    def advance_to(self, time_point: int, triples: Iterable[Triple] = ()) -> MaterializationReport:
        """Evaluate every time point up to `time_point`; `triples` arrive at `time_point`."""
        arrivals = [tuple(triple) for triple in triples]
        if self._literal_predicates:
            self._learn_literals(arrivals)
        if self.window is None:
            self._add_background(arrivals, literals_known=True)
            facts = []
        else:
            predicate = self._window_triple
            facts = [(predicate, triple) for triple in arrivals]
        step = self.engine.advance_to(time_point, facts)
        self._given_before_start = self._before_start = None
        report = MaterializationReport(time_point, step=step)
        triple = self._triple
        false = self._false
        seen_events = set()
        for predicate, args in step.started:
            if predicate == triple:
                report.added.append(args)
            elif predicate in false:
                event = inconsistency_event(false[predicate], args, time_point)
                key = (event.rule, frozenset(event.triples))
                if key not in seen_events:
                    seen_events.add(key)
                    report.inconsistencies.append(event)
        report.removed = [args for predicate, args in step.stopped if predicate == triple]
        return report

    def holding(self) -> list[Triple]:
        """Every triple that holds now: window triples, background and entailments.

        Before the first `advance_to` there is no "now" yet: this is then what holds with no stream,
        the closure of the background.
        """
        triple = self._triple
        return [args for predicate, args in self._holding_facts() if predicate == triple]

    def expires(self, triple: Triple) -> int | None:
        """The last time point `triple` holds (NEVER_EXPIRES if it never expires), None if it does not hold."""
        fact = (self._triple, tuple(triple))
        if self.engine.now is None:
            return self._closure_before_start().get(fact)
        return self.engine.holds_until(fact)

    def explain(self, triple: Triple, t: int | None = None) -> dict | None:
        """Why `triple` holds at time point `t` (default: now): the rule applications down to window
        and background triples, as plain data (`rsp_plugin/reasoning/explain.py`); None if it does not."""
        from .explain import explain_triple

        return explain_triple(self, triple, t)

    def live_terms(self):
        """The ids the materialization holds (for `Dictionary.retain`); literals it no longer
        holds are forgotten here too, so that a literal seen again is learned again."""
        from itertools import chain

        parts = [self.engine.live_terms()]
        if self._given_before_start:
            parts.append(chain.from_iterable(args for _, args in self._given_before_start))
        if self._before_start:
            parts.append(chain.from_iterable(args for _, args in self._before_start))
        if self._seen_terms:
            held = set(self.engine.live_terms())
            self._seen_terms &= held
        return chain.from_iterable(parts)

    def inconsistent(self) -> list[Inconsistency]:
        """The inconsistencies whose triples all hold now (each reported once, when it was found)."""
        found = {}
        false = self._false
        now = self.engine.now if self.engine.now is not None else 0
        for predicate, args in self._holding_facts():
            if predicate in false:
                event = inconsistency_event(false[predicate], args, now)
                found.setdefault((event.rule, frozenset(event.triples)), event)
        return list(found.values())

    def _holding_facts(self):
        if self.engine.now is None:
            return self._closure_before_start()
        return self.engine.holding()

    def _closure_before_start(self) -> dict:
        """The background's closure, asked for before the first time point: computed aside, once.

        (The engine's timeline starts at the first `advance_to`, which computes it into the stream.)
        """
        if self._before_start is None:
            from ..lars.engine import IncrementalEngine

            engine = IncrementalEngine(self.program, start=0)
            engine.add_background(self._given_before_start)
            engine.advance_to(0)
            self._before_start = {fact: engine.holds_until(fact) for fact in engine.holding()}
        return self._before_start

    # background and literals -------------------------------------------------------------

    def _give(self, facts: list) -> None:
        """Facts that hold from the next time point on and never expire."""
        self.engine.add_background(facts)
        if self._given_before_start is not None:
            self._given_before_start.extend(facts)
            self._before_start = None

    def _add_background(self, triples: list[Triple], literals_known: bool = False) -> None:
        if self._literal_predicates and not literals_known:
            self._learn_literals(triples)
        predicate = self._background_triple
        self._give([(predicate, triple) for triple in triples])

    def _learn_literals(self, triples: list[Triple]) -> None:
        """Facts about literals seen for the first time (datatype_of, ill_formed), as background."""
        seen = self._seen_terms
        keys = self.terms.keys
        facts = []
        for triple in triples:
            term = triple[2]
            if term in seen or keys[term][0] != '"':  # (only literals are remembered)
                continue
            seen.add(term)
            for name, datatype in literal_facts(keys[term]):
                predicate = self._literal_predicates.get(name)
                if predicate is None:
                    continue
                if datatype is None:
                    facts.append((predicate, (term,)))
                else:
                    facts.append((predicate, (term, self.terms.intern(datatype))))
        if facts:
            self._give(facts)


# helpers ------------------------------------------------------------------------------------


def materialization_program(profile: str | None, window: int | None, terms: Dictionary, rules=None,
                            trivial: bool = False) -> tuple[Program, list[Triple]]:
    """The one LARS program of a materialization (lifting rules, the profile's rules, the user's
    rules) and the ground triples of the rule sets (axioms, held as background)."""
    triple_id = terms.intern(TRIPLE)
    lift = f"?s ?p ?o :- {BACKGROUND_TRIPLE}(?s, ?p, ?o) .\n"
    if window is not None:
        lift += f"?s ?p ?o :- [RANGE {window}] DIAMOND {WINDOW_TRIPLE}(?s, ?p, ?o) .\n"
    rule_lists = [parse_program(lift, "<materializer>", terms).rules]
    if profile is not None:
        files, extras = PROFILES[profile]
        for name in files + (extras if trivial else ()):
            rule_lists.append(rules_of(name, terms))
    user = None
    if rules is not None:
        user = _parse_user_rules(rules, terms)
        _check_tuple_windows(user, triple_id)
        rule_lists.append(user.rules)

    combined: list[Rule] = []
    axioms: list[Triple] = []
    for rule_list in rule_lists:
        for rule in rule_list:
            if is_ground_triple_fact(rule, triple_id):
                axioms.append(tuple(rule.head.args))  # a fact of the rule set: background, held once
            else:
                combined.append(rule)
    merged = Program(
        combined,
        terms,
        prefixes=user.prefixes if user is not None else {},
        tick_ms=user.tick_ms if user is not None else None,
        filename=user.filename if user is not None else f"<{profile or 'no'} profile>",
    )
    if any(rule.negative for rule in combined):
        merged.strata = stratify(combined, _raise_at)
    else:  # strata only order `not`; a positive program is one fixpoint
        merged.strata = [combined]
    return merged, axioms




def profile_name(profile: str | None) -> str | None:
    """The profile's own name ("rdfs", "owl-rl") for any of its names (`PROFILE_ALIASES`); a ValueError
    that lists them for an unknown one."""
    if profile is None:
        return None
    name = PROFILE_ALIASES.get(profile, profile)
    if name not in PROFILES:
        expected = ", ".join(repr(p) for p in PROFILES)
        raise ValueError(f"unknown reasoning profile {profile!r}; expected {expected} or None")
    return name


def _parse_user_rules(rules, terms: Dictionary) -> Program:
    if isinstance(rules, Program):  # parsed already (with `terms`), e.g. a query's RULES
        return rules
    if isinstance(rules, os.PathLike):
        return parse_program_file(rules, terms)
    return parse_program(rules, "<rules>", terms)


def is_ground_triple_fact(rule: Rule, triple: int) -> bool:
    """Is the rule a ground triple with no body (an axiom of a rule set, held as background)?"""
    return (
        not rule.body
        and rule.head_time is None
        and rule.head.predicate == triple
        and not any(isinstance(arg, Var) for arg in rule.head.args)
    )


def _raise_at(message: str, where) -> None:
    raise RuleSyntaxError(message, where.filename, where.line, where.column)


def _check_tuple_windows(user: Program, triple: int) -> None:
    """Triples are derived here (window, background, entailments), and tuple windows count data atoms only."""
    for rule in user.rules:
        for literal in rule.body:
            if (
                isinstance(literal, ExtendedAtom)
                and literal.window is not None
                and literal.window.kind == COUNT
                and literal.atom.predicate == triple
            ):
                where = literal.location or rule.location
                _raise_at(
                    "a tuple window ([COUNT n]) over triples: with entailment, triples are derived "
                    "(window, background, entailments) and tuple windows count data atoms only",
                    where,
                )


@dataclass(frozen=True)
class _FalseHead:
    rule: str
    #: per triple pattern of the body: per position, ("var", head argument index) or ("const", id)
    patterns: tuple[tuple[tuple[str, int], ...], ...]


def false_heads(program: Program, terms: Dictionary) -> dict[int, _FalseHead]:
    """The predicates of `false` heads -> how to name the triples involved from a head fact."""
    triple = terms.intern(TRIPLE)
    found: dict[int, _FalseHead] = {}
    for rule in program.rules:
        name = terms.key(rule.head.predicate)
        if not name.startswith(FALSE_PREFIX):
            continue
        position = {arg: i for i, arg in enumerate(rule.head.args) if isinstance(arg, Var)}
        patterns = []
        for literal in rule.positive:
            if literal.atom.predicate != triple:
                continue
            pattern = []
            for arg in literal.atom.args:
                if isinstance(arg, Var):
                    if arg not in position:
                        _raise_at(
                            f"the head of a false rule must name every variable of its triple patterns; "
                            f"?{arg.name} is missing",
                            rule.location,
                        )
                    pattern.append(("var", position[arg]))
                else:
                    pattern.append(("const", arg))
            patterns.append(tuple(pattern))
        label = name[len(FALSE_PREFIX):].replace("_", "-")
        if rule.head.predicate in found:
            _raise_at(f"two false rules share the head predicate {name}; give each its own", rule.location)
        found[rule.head.predicate] = _FalseHead(label, tuple(patterns))
    return found


def inconsistency_event(head: _FalseHead, args: tuple, time_point: int) -> Inconsistency:
    """The inconsistency a `false` head's fact (its arguments) names, found at `time_point`."""
    triples = tuple(
        tuple(args[value] if kind == "var" else value for kind, value in pattern) for pattern in head.patterns
    )
    return Inconsistency(head.rule, triples, time_point)
