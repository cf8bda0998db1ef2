"""RDFS / OWL 2 RL with expiration times, a micro-batch at a time (Barbieri et al. 2010, in columns).

The per-fact `Materializer` (rsp_plugin.reasoning) runs the materialization as a
LARS program; this is its batch twin over the same program and the same
annotations. Every relation (the triples, and the rule sets' helper predicates
such as `list_member` or `false_cax_dw`) is a polars table of argument columns
and one column `h`, the horizon (the last time point the fact holds):

- a window triple arriving at time point t has h = t + window, background and
  axioms h = NEVER_EXPIRES;
- a rule's head gets h = min over its body's h (expiration = the earliest
  expiration of the premises); a fact keeps the max over its derivations;
- semi-naive: each round joins, for every rule and every body position, the
  delta table of that position (the facts that are new or hold longer than
  known) with the full tables of the other positions (hash joins, the atoms
  with constants first); the round's heads are grouped (max h) and compared with
  the tables, and what is new or longer-lived is the next delta;
- time point t first drops the rows with h < t (a filter), then takes the
  batch: expired facts go by inspection, nothing is deleted and re-derived.

At every time point the triples that hold, and their horizons, are the
per-fact materializer's (the tests compare both on generated ontologies and
streams). Rules must be positive and plain (no windows, @, `not` or arithmetic
in bodies): the shipped rule sets are; a user's LARS rules on top of
entailment, which may use windows, keep the per-fact path (`supports`). The
rules are read in the compiled form every closure but the reference reads
(`rsp_plugin.reasoning.positive`).

>>> from rsp_plugin.core.terms import Dictionary, RDF_TYPE
>>> terms = Dictionary()
>>> ex = lambda name: terms.intern(f"<http://example.org/{name}>")
>>> sub = terms.intern("<http://www.w3.org/2000/01/rdf-schema#subClassOf>")
>>> m = BatchMaterializer("rdfs", window=2, background=[(ex("A"), sub, ex("B"))], terms=terms)
>>> _ = m.advance_to(1, [(ex("x"), terms.intern(RDF_TYPE), ex("A"))])
>>> m.expires((ex("x"), terms.intern(RDF_TYPE), ex("B")))
3
>>> _ = m.advance_to(4); m.expires((ex("x"), terms.intern(RDF_TYPE), ex("B"))) is None
True
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Iterable

import numpy as np
import polars as pl

from ..core.terms import TRIPLE, Dictionary
from ..core.time import NEVER_EXPIRES
from ..lars.builtins import compare
from ..lars.program import Var
from ..reasoning.background import load_background
from ..reasoning.datatypes import literal_facts
from ..reasoning.materializer import (
    Inconsistency,
    false_heads,
    inconsistency_event,
    materialization_program,
    profile_name,
)
from ..reasoning.positive import (
    NotPositive,
    Pattern,
    PositiveRule,
    compile_program,
    readers,
)

Triple = tuple[int, int, int]


@dataclass
class BatchReport:
    """What one `advance_to` changed (counts: the rows are in the tables)."""

    time_point: int
    added: int = 0
    removed: int = 0
    rounds: int = 0
    inconsistencies: list[Inconsistency] = field(default_factory=list)


def _name(var: Var) -> str:
    return f"v_{var.name}"


def _columns(arity: int) -> list[str]:
    return [f"c{k}" for k in range(arity)]


def _empty(arity: int) -> pl.DataFrame:
    return pl.DataFrame(schema={**{name: pl.Int64 for name in _columns(arity)}, "h": pl.Int64})


def _variables(atom: Pattern) -> list[str]:
    """The columns an atom's variables are named by in a join."""
    return [_name(var) for var in atom.variables]


def supports(profile: str | None, rules=None, terms: Dictionary | None = None) -> bool:
    """Can the batch path materialize this profile with these user rules?"""
    if rules is None:
        return True
    try:
        scratch = terms if terms is not None else Dictionary()
        program, _ = materialization_program(profile_name(profile), 0, scratch, rules)
        compile_program(program, scratch)
    except NotPositive:
        return False
    return True


class BatchMaterializer:
    """The materialization of window + background under a profile, a micro-batch at a time.

    Arguments as `rsp_plugin.reasoning.Materializer` (`window`: a triple arriving at time point
    t holds on [t, t + window]; None: never expires).
    """

    def __init__(self, profile: str | None = "rdfs", *, window: int | None = None, background=(),
                 terms: Dictionary | None = None, rules=None, trivial: bool = False):
        self.profile = profile_name(profile)
        self.window = window
        self.terms = terms if terms is not None else Dictionary()
        self._triple = self.terms.intern(TRIPLE)
        program, axioms = materialization_program(self.profile, window, self.terms, rules, trivial)
        self.program = program
        self.rules = compile_program(program, self.terms)
        self._false = false_heads(program, self.terms)
        reads = {atom.predicate for rule in self.rules for atom in rule.atoms}
        self._literal_predicates = {
            name: self.terms.intern(name) for name in ("datatype_of", "ill_formed")
            if self.terms.intern(name) in reads}
        self._seen_literals: set[int] = set()
        self.arity: dict[int, int] = {self._triple: 3}
        for rule in self.rules:
            for atom in (*rule.atoms, rule.head):
                self.arity.setdefault(atom.predicate, len(atom.args))
        self._readers = readers(self.rules)
        #: relations other than triples -> their table
        self.tables: dict[int, pl.DataFrame] = {}
        #: the triples, per predicate (columns c0, c1, c2, h)
        self._parts: dict[int, pl.DataFrame] = {}
        self._all_triples: pl.DataFrame | None = None
        self._started_false: list = []
        self.now: int | None = None
        self.rounds = 0
        given = list(axioms) + load_background(background, self.terms)
        self.background_size = len(given)
        delta = {self._triple: self._triple_frame(given, NEVER_EXPIRES)}
        self._add_literals(given, delta)
        self._fixpoint(delta, None)

    def __getstate__(self) -> dict:
        """All but the compiled rules and who reads them: made again from the program by `__setstate__` (a
        checkpoint holds no rule's structure: its rules are parsed again from their text, `rsp_plugin.runtime.state`)."""
        state = dict(self.__dict__)
        del state["rules"], state["_readers"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.rules = compile_program(self.program, self.terms)
        self._readers = readers(self.rules)

    def __repr__(self) -> str:
        return (f"<BatchMaterializer profile={self.profile} window={self.window} now={self.now} "
                f"triples={sum(len(part) for part in self._parts.values())}>")

    # time ---------------------------------------------------------------------------------------

    def advance_to(self, time_point: int, triples: Iterable[Triple] = (), *, columns=None) -> BatchReport:
        """Time point `time_point`: what expired before it goes, then the triples arriving at it
        (id triples, or `columns` = (s, p, o) numpy arrays) and what they entail."""
        if self.now is not None and time_point < self.now:
            raise ValueError(f"time point {time_point} was already evaluated (now is {self.now})")
        report = BatchReport(time_point)
        report.removed = self._expire(time_point)
        self.now = time_point
        horizon = NEVER_EXPIRES if self.window is None else min(time_point + self.window, NEVER_EXPIRES)
        if columns is not None:
            s, p, o = (np.asarray(column, dtype=np.int64) for column in columns)
            frame = pl.DataFrame({"c0": s, "c1": p, "c2": o}).with_columns(h=pl.lit(horizon, dtype=pl.Int64))
        else:
            frame = self._triple_frame(list(triples), horizon)
        if not len(frame):
            return report
        delta = {self._triple: frame}
        if self._literal_predicates:
            self._add_literals(None, delta, frame["c2"])
        report.added, report.rounds, report.inconsistencies = self._fixpoint(delta, time_point)
        return report

    def _expire(self, time_point: int) -> int:
        removed = 0
        for tables in (self.tables, self._parts):
            for key, table in list(tables.items()):
                if len(table) and table["h"].min() < time_point:
                    kept = table.filter(pl.col("h") >= time_point)
                    removed += len(table) - len(kept)
                    if len(kept):
                        tables[key] = kept
                    else:
                        del tables[key]
        if removed:
            self._all_triples = None
        return removed

    # the fixpoint ---------------------------------------------------------------------------------

    def _fixpoint(self, delta: dict[int, pl.DataFrame], time_point: int | None):
        """Merge `delta` and run the rules until nothing is new; (facts new or longer-lived, rounds, events)."""
        added = 0
        events: list[Inconsistency] = []
        seen_events: set = set()
        self._started_false = []
        delta = self._merge(delta)
        rounds = 0
        while delta:
            rounds += 1
            if time_point is not None and self._started_false:
                events.extend(self._events(self._started_false, time_point, seen_events))
            self._started_false = []
            added += sum(len(frame) for frame in delta.values())
            derived: dict[int, list[pl.DataFrame]] = {}
            for predicate, frame in delta.items():
                readers = self._readers.get(predicate, ())
                present = None
                if predicate == self._triple and len(readers) > 1:  # the delta's predicates, read once
                    present = set(frame["c1"].unique().to_list())
                for number, position in readers:
                    rule = self.rules[number]
                    if present is not None:
                        wanted = rule.atoms[position].args[1]
                        if not isinstance(wanted, Var) and wanted not in present:
                            continue  # a triple pattern whose predicate the delta has not: nothing to match
                    heads = self._evaluate(rule, position, frame)
                    if heads is not None and len(heads):
                        derived.setdefault(rule.head.predicate, []).append(heads)
            delta = self._merge({predicate: pl.concat(frames) if len(frames) > 1 else frames[0]
                                 for predicate, frames in derived.items()})
        self.rounds += rounds
        return added, rounds, events

    def _merge(self, candidates: dict[int, pl.DataFrame]) -> dict[int, pl.DataFrame]:
        """Keep the candidates that are new or hold longer than known; put them in the tables.
        Triples are kept per predicate (a partition each), so a merge touches the predicates derived."""
        fresh: dict[int, pl.DataFrame] = {}
        for predicate, frame in candidates.items():
            arity = self.arity.setdefault(predicate, len(frame.columns) - 1)
            keys = _columns(arity)
            best = frame.group_by(keys).agg(pl.col("h").max()) if len(frame) > 1 else frame
            if predicate == self._triple:
                pieces = [self._merge_into(self._parts, p, part, keys, None)
                          for (p,), part in best.partition_by("c1", as_dict=True).items()]
                pieces = [piece for piece in pieces if piece is not None]
                if pieces:
                    fresh[predicate] = pl.concat(pieces) if len(pieces) > 1 else pieces[0]
                    self._all_triples = None
                continue
            new = self._merge_into(self.tables, predicate, best, keys, predicate if predicate in self._false else None)
            if new is not None:
                fresh[predicate] = new
        return fresh

    def _merge_into(self, tables: dict, key: int, best: pl.DataFrame, keys: list[str], false) -> pl.DataFrame | None:
        table = tables.get(key)
        if table is None or not len(table):
            tables[key] = best
            if false is not None:
                self._started_false.append((false, best))
            return best
        known = best.join(table.rename({"h": "h_known"}), on=keys, how="inner")
        if not len(known):  # all of it is new
            tables[key] = pl.concat([table, best])
            if false is not None:
                self._started_false.append((false, best))
            return best
        longer = known.filter(pl.col("h") > pl.col("h_known")).drop("h_known")
        new = pl.concat([best.join(known.select(keys), on=keys, how="anti"), longer])
        if not len(new):
            return None
        if false is not None:
            started = best.join(known.select(keys), on=keys, how="anti")
            if len(started):
                self._started_false.append((false, started))
        if len(longer):
            table = table.join(longer.select(keys), on=keys, how="anti")
        tables[key] = pl.concat([table, new])
        return new

    def _evaluate(self, rule: PositiveRule, position: int, delta: pl.DataFrame) -> pl.DataFrame | None:
        """The heads the rule derives with the delta at `position` and the full tables elsewhere."""
        frame = _match(delta, rule.atoms[position], "h")
        if not len(frame):
            return None
        bound = set(_variables(rule.atoms[position]))
        comparisons = list(rule.comparisons)
        frame = self._compare(frame, comparisons, bound)
        rest = [k for k in range(len(rule.atoms)) if k != position]
        while rest:
            connected = [k for k in rest if bound & set(_variables(rule.atoms[k]))] or rest
            choice = max(connected, key=lambda k: (sum(not isinstance(a, Var) for a in rule.atoms[k].args),
                                                   -self._size(rule.atoms[k])))
            rest.remove(choice)
            atom = rule.atoms[choice]
            table = self._relation(atom)
            if table is None or not len(table):
                return None
            other = _match(table, atom, "h2")
            if not len(other):
                return None
            shared = [name for name in _variables(atom) if name in bound]
            frame = frame.join(other, on=shared, how="inner") if shared else frame.join(other, how="cross")
            frame = frame.with_columns(h=pl.min_horizontal("h", "h2")).drop("h2")
            bound |= set(_variables(atom))
            frame = self._compare(frame, comparisons, bound)
            if not len(frame):
                return None
        return _project(frame, rule.head)

    def _relation(self, atom: Pattern) -> pl.DataFrame | None:
        """The facts an atom may match: a triple pattern with a constant predicate reads its partition."""
        if atom.predicate != self._triple:
            return self.tables.get(atom.predicate)
        predicate = atom.args[1]
        if not isinstance(predicate, Var):
            return self._parts.get(predicate)
        if self._all_triples is None:
            parts = [part for part in self._parts.values() if len(part)]
            self._all_triples = pl.concat(parts) if parts else _empty(3)
        return self._all_triples

    def _size(self, atom: Pattern) -> int:
        if atom.predicate == self._triple and isinstance(atom.args[1], Var):
            return sum(len(part) for part in self._parts.values())
        table = self._relation(atom)
        return 0 if table is None else len(table)

    def _compare(self, frame: pl.DataFrame, comparisons: list, bound: set) -> pl.DataFrame:
        """Apply the comparisons whose variables are bound (once per distinct tuple of values)."""
        numbers = self.terms.numbers
        for comparison in [c for c in comparisons
                           if all(not isinstance(side, Var) or _name(side) in bound
                                  for side in (c.left, c.right))]:
            comparisons.remove(comparison)
            names = list(dict.fromkeys(_name(side) for side in (comparison.left, comparison.right)
                                       if isinstance(side, Var)))
            if not names:
                if not compare(comparison.op, comparison.left, comparison.right, numbers):
                    return frame.clear()
                continue
            passing = []
            for values in frame.select(names).unique().rows():
                value_of = dict(zip(names, values))
                left = value_of[_name(comparison.left)] if isinstance(comparison.left, Var) else comparison.left
                right = value_of[_name(comparison.right)] if isinstance(comparison.right, Var) else comparison.right
                if compare(comparison.op, left, right, numbers):
                    passing.append(values)
            keep = pl.DataFrame(passing, schema={name: pl.Int64 for name in names}, orient="row")
            frame = frame.join(keep, on=names, how="semi")
        return frame

    # facts in and out -------------------------------------------------------------------------------

    def _triple_frame(self, triples: list, horizon: int) -> pl.DataFrame:
        if not triples:
            return _empty(3)
        columns = np.array(triples, dtype=np.int64).reshape(len(triples), 3)
        return pl.DataFrame({"c0": columns[:, 0], "c1": columns[:, 1], "c2": columns[:, 2]}).with_columns(
            h=pl.lit(horizon, dtype=pl.Int64))

    def _add_literals(self, triples, delta: dict, objects: pl.Series | None = None) -> None:
        """datatype_of / ill_formed facts (background, never expire) for literals seen the first time."""
        if not self._literal_predicates:
            return
        if objects is None:
            candidates = {triple[2] for triple in triples}
        else:
            candidates = set(objects.unique().to_list())
        keys = self.terms.keys
        rows: dict[int, list] = {}
        for term in candidates - self._seen_literals:
            key = keys[term]
            if key[0] != '"':
                continue
            self._seen_literals.add(term)
            for name, datatype in literal_facts(key):
                predicate = self._literal_predicates.get(name)
                if predicate is None:
                    continue
                args = (term,) if datatype is None else (term, self.terms.intern(datatype))
                rows.setdefault(predicate, []).append(args + (NEVER_EXPIRES,))
        for predicate, facts in rows.items():
            arity = len(facts[0]) - 1
            self.arity.setdefault(predicate, arity)
            frame = pl.DataFrame(facts, schema={**{name: pl.Int64 for name in _columns(arity)}, "h": pl.Int64},
                                 orient="row")
            delta[predicate] = pl.concat([delta[predicate], frame]) if predicate in delta else frame

    def _events(self, started, time_point: int, seen: set) -> list[Inconsistency]:
        """Inconsistency events of the false facts that started to hold."""
        events = []
        for predicate, frame in started:
            head = self._false[predicate]
            for row in frame.drop("h", strict=False).drop("h_known", strict=False).rows():
                event = inconsistency_event(head, row, time_point)
                key = (event.rule, frozenset(event.triples))
                if key not in seen:
                    seen.add(key)
                    events.append(event)
        return events

    # reading ----------------------------------------------------------------------------------------

    def triple_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, p, o) of the triples that hold now (each once)."""
        table = self._relation(Pattern(self._triple, (Var("s"), Var("p"), Var("o"))))
        if table is None or not len(table):
            empty = np.empty(0, dtype=np.int64)
            return empty, empty, empty
        return table["c0"].to_numpy(), table["c1"].to_numpy(), table["c2"].to_numpy()

    def holding(self) -> list[Triple]:
        s, p, o = self.triple_columns()
        return list(zip(s.tolist(), p.tolist(), o.tolist()))

    def expires(self, triple: Triple) -> int | None:
        table = self._parts.get(triple[1])
        if table is None:
            return None
        found = table.filter((pl.col("c0") == triple[0]) & (pl.col("c1") == triple[1]) & (pl.col("c2") == triple[2]))
        return int(found["h"][0]) if len(found) else None

    def inconsistent(self) -> list[Inconsistency]:
        found = {}
        now = self.now if self.now is not None else 0
        for predicate, head in self._false.items():
            table = self.tables.get(predicate)
            if table is None:
                continue
            for row in table.drop("h").rows():
                event = inconsistency_event(head, row, now)
                found.setdefault((event.rule, frozenset(event.triples)), event)
        return list(found.values())

    def live_terms(self):
        from itertools import chain

        parts = [table.drop("h").to_numpy().ravel().tolist()
                 for table in chain(self.tables.values(), self._parts.values()) if len(table)]
        parts.append(list(self.tables.keys()))
        if self._seen_literals:
            held = set(chain.from_iterable(parts[:-1]))
            self._seen_literals &= held
        return chain.from_iterable(parts)


def _match(frame: pl.DataFrame, atom: Pattern, horizon: str) -> pl.DataFrame:
    """The rows of a relation that match an atom, as one column per variable and the horizon."""
    condition = None
    first: dict[str, str] = {}
    for position, arg in enumerate(atom.args):
        column = f"c{position}"
        if isinstance(arg, Var):
            name = _name(arg)
            if name in first:
                test = pl.col(first[name]) == pl.col(column)
            else:
                first[name] = column
                continue
        else:
            test = pl.col(column) == arg
        condition = test if condition is None else condition & test
    chosen = frame.filter(condition) if condition is not None else frame
    return chosen.select([pl.col(column).alias(name) for name, column in first.items()]
                         + [pl.col("h").alias(horizon)])


def _project(frame: pl.DataFrame, head: Pattern) -> pl.DataFrame:
    return frame.select([(pl.col(_name(arg)) if isinstance(arg, Var) else pl.lit(arg, dtype=pl.Int64)).alias(f"c{k}")
                         for k, arg in enumerate(head.args)] + [pl.col("h")])


__all__ = ["BatchMaterializer", "BatchReport", "supports"]
