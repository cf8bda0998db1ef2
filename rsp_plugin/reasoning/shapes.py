"""RDFS / OWL 2 RL over a window under a static TBox: a template per triple shape, with expiration times.

The background and the profile's axioms are closed once (B*, never expiring).
A window triple w arriving at time point t holds on [t, t + window]; what it
entails with B* alone, closure({w} | B*) - B*, holds exactly as long (Barbieri
et al.: the expiration of an entailment is the earliest of its premises', B*
never expires). That closure depends only on w's shape (`templates.py`: the
terms B* and the rules name stay, the others are slots), so an arriving batch is
expanded by a lookup per distinct shape and numpy columns, and its entailments
go in the pane of its expiry: a step costs its delta, and expiry drops whole
panes (`h < now`), nothing is deleted and re-derived.

Only rules where two window facts can meet need more (`Joins`): an owl:sameAs
chain, a transitive or functional property over window data, a disjointness of
two classes the window types something with, or the window holding schema
triples itself. Which rules those are is decided from what the panes hold (the
predicates, the classes of rdf:type triples, the other relations), constrained
by B*: `?x ?p ?y` with `?p a owl:TransitiveProperty` only meets window triples
whose predicate B* calls transitive. For those rules, and only while they can
fire, an annotated semi-naive fixpoint runs over the window facts they read
(expiration = min over the body, max over derivations), and what it derives is
expanded by templates again. Rules with a `false` head are among the rules:
inconsistencies are found as the per-fact reference finds them, at the time
point their fact starts to hold.

One implementation for the per-fact view (`query.views.MaterializedView`, which
asks for the triples that started and stopped holding: `track=True`) and the
columnar one (`columnar.views.BatchMaterializedView`, which reads the panes as
columns). A user's RULES program, explanations and the `trivial` rules keep the
reference (`Materializer`); `supports` tells.

>>> from rsp_plugin.core.terms import Dictionary, RDF_TYPE
>>> terms = Dictionary()
>>> ex = lambda name: terms.intern(f"<http://example.org/{name}>")
>>> sub = terms.intern("<http://www.w3.org/2000/01/rdf-schema#subClassOf>")
>>> m = ShapeMaterializer("rdfs", window=2, background=[(ex("A"), sub, ex("B"))], terms=terms)
>>> _ = m.advance_to(1, [(ex("x"), terms.intern(RDF_TYPE), ex("A"))])
>>> m.expires((ex("x"), terms.intern(RDF_TYPE), ex("B")))
3
>>> _ = m.advance_to(4); m.expires((ex("x"), terms.intern(RDF_TYPE), ex("B"))) is None
True
"""

from __future__ import annotations

from collections import Counter, defaultdict, deque
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Iterable

import numpy as np

from ..core.arrays import unique_sorted
from ..core.terms import RDF_TYPE, TRIPLE, Dictionary
from ..core.time import NEVER_EXPIRES
from ..lars.program import Var
from .background import load_background
from .datatypes import literal_facts
from .materializer import (
    Inconsistency,
    false_heads,
    inconsistency_event,
    materialization_program,
    profile_name,
)
from .positive import NoFacts, PositiveRule, compile_program, unify, weakest_bindings
from .templates import LASTING, SEED, Closure, FactBase, inert_reflexive

Triple = tuple[int, int, int]
_SLOT = "<urn:x-rsp-plugin:slot:{}>"
_EMPTY = np.empty(0, dtype=np.int64)


def supports(profile: str | None, rules=None, trivial: bool = False, explain: bool = False) -> bool:
    """Does the template path hold this materialization (a profile, no user rules, no explanations)?"""
    return profile is not None and rules is None and not trivial and not explain


@dataclass
class ShapeReport:
    """What one `advance_to` changed. `added` / `removed`: the triples that started / stopped holding
    (kept only by a tracking materializer), `inconsistencies`: the false facts that started to hold."""

    time_point: int
    added: list = field(default_factory=list)
    removed: list = field(default_factory=list)
    inconsistencies: list[Inconsistency] = field(default_factory=list)
    #: window facts derived (rows, duplicates across panes included) and join rounds run
    derived: int = 0
    rounds: int = 0


class _Pane:
    """The window triples and entailments that expire at one time point (columns, appended a step at a
    time), the other facts with that expiry, and what each addition brought to the summary."""

    __slots__ = ("parts", "others", "_columns", "_terms", "present")

    def __init__(self):
        self.parts: list[tuple[np.ndarray, np.ndarray, np.ndarray]] = []
        self.others: list[tuple] = []
        self._columns = None
        self._terms = None
        #: per addition, the summary entries it holds (("p", predicate), ("n", predicate of a triple
        #: whose subject is not its object), ("c", class), ("r", relation)): counted by the owner
        self.present: list[set] = []

    def add(self, s, p, o) -> None:
        if len(s):
            self.parts.append((s, p, o))
            self._columns = self._terms = None

    def add_other(self, fact) -> None:
        self.others.append(fact)
        self._terms = None

    def terms(self) -> np.ndarray:
        """The distinct ids it holds (found once: forgetting walks the panes many times over)."""
        if self._terms is None:
            s, p, o = self.columns()
            others = [term for _, args in self.others for term in args]
            self._terms = unique_sorted(np.concatenate([s, p, o, np.array(others, dtype=np.int64)]))
        return self._terms

    def columns(self):
        if self._columns is None:
            if not self.parts:
                self._columns = (_EMPTY, _EMPTY, _EMPTY)
            elif len(self.parts) == 1:
                self._columns = self.parts[0]
            else:
                self._columns = tuple(np.concatenate(c) for c in zip(*self.parts))
                self.parts = [self._columns]
        return self._columns



def _present_of(s, p, o, rdf_type: int) -> set:
    """The summary entries of triples given as columns."""
    predicates = unique_sorted(p).tolist()
    found = {("p", value) for value in predicates}
    unequal = s != o
    found |= {("n", value) for value in (predicates if bool(unequal.all()) else unique_sorted(p[unequal]).tolist())}
    if rdf_type in predicates:
        found |= {("c", value) for value in unique_sorted(o[p == rdf_type]).tolist()}
    return found


class _Ring:
    """What a report reads, in one buffer: B* (and what never expires), then the panes' rows in the order
    of their expiry; expiry moves the start past the panes that left and writes B* again just before
    the rows that stay, so a step costs its delta and a report reads views. An entailment that
    expires before the latest pane (a join's, min over two window facts) makes it `stale`: it is
    made again from the panes when next read."""

    def __init__(self):
        self.stale = True
        self.columns_ = (_EMPTY, _EMPTY, _EMPTY)

    def rebuild(self, prefix, panes: list) -> None:
        """`prefix`: B*'s columns (and the rows that never expire); `panes`: (h, columns), by h."""
        self.prefix = prefix
        parts = [prefix] + [columns for _, columns in panes]
        size = sum(len(part[0]) for part in parts)
        capacity = max(1024, 2 * size)
        self.buffers = [np.empty(capacity, dtype=np.int64) for _ in range(3)]
        at = 0
        for part in parts:
            n = len(part[0])
            for buffer, column in zip(self.buffers, part):
                buffer[at:at + n] = column
            at += n
        self.begin, self.end = 0, at
        self.segments = deque([h, len(columns[0])] for h, columns in panes)
        self.stale = False

    def append(self, h: int, s, p, o) -> None:
        if self.stale:
            return
        if self.segments and h < self.segments[-1][0]:
            self.stale = True
            return
        n = len(s)
        if self.end + n > len(self.buffers[0]):
            live = self.end - self.begin
            capacity = max(len(self.buffers[0]), 2 * (live + n))
            fresh = [np.empty(capacity, dtype=np.int64) for _ in range(3)]
            for new, old in zip(fresh, self.buffers):
                new[:live] = old[self.begin:self.end]
            self.buffers, self.begin, self.end = fresh, 0, live
        for buffer, column in zip(self.buffers, (s, p, o)):
            buffer[self.end:self.end + n] = column
        self.end += n
        if self.segments and self.segments[-1][0] == h:
            self.segments[-1][1] += n
        else:
            self.segments.append([h, n])

    def expire(self, time_point: int) -> None:
        if self.stale:
            return
        gone = 0
        while self.segments and self.segments[0][0] < time_point:
            gone += self.segments.popleft()[1]
        if gone:
            self.begin += gone
            n = len(self.prefix[0])
            for buffer, column in zip(self.buffers, self.prefix):
                buffer[self.begin:self.begin + n] = column

    def columns(self):
        return tuple(buffer[self.begin:self.end] for buffer in self.buffers)


class ShapeMaterializer:
    """The materialization of window + background under a profile, by templates per triple shape.

    `window`: a triple arriving at time point t holds on [t, t + window] (None: never expires).
    `background`: as `Materializer`'s; `track`: keep which triples started / stopped holding (the
    per-fact view reads them), else the content is read as columns (`triple_columns`).
    """

    def __init__(self, profile: str | None = "rdfs", *, window: int | None = None, background=(),
                 terms: Dictionary | None = None, track: bool = False):
        self.profile = profile_name(profile)
        self.window = window
        self.terms = terms = terms if terms is not None else Dictionary()
        self.track = track
        self._triple = terms.intern(TRIPLE)
        self._type = terms.intern(RDF_TYPE)
        program, axioms = materialization_program(self.profile, window, terms)
        self.program = program
        self.rules: list[PositiveRule] = compile_program(program, terms)
        self._false = false_heads(program, terms)
        reads = {atom.predicate for rule in self.rules for atom in rule.atoms}
        self._literal_predicates = {name: terms.intern(name) for name in ("datatype_of", "ill_formed")
                                    if terms.intern(name) in reads}
        self._literal_ids = set(self._literal_predicates.values())
        self.closure = Closure(self.rules, terms)
        self._given = load_background(background, terms)
        given = list(axioms) + self._given
        self.background_size = len(given)
        facts = [(self._triple, tuple(triple)) for triple in given]
        facts.extend(self._literal_facts(triple[2] for triple in given))
        self.base: FactBase = _background_closure(self.rules, self.closure, facts)
        base_triples = list(self.base.by_predicate.get(self._triple, ()))
        array = np.array(base_triples, dtype=np.int64).reshape(len(base_triples), 3)
        self._base_columns = (array[:, 0].copy(), array[:, 1].copy(), array[:, 2].copy())
        schema = {term for _, args in self.base.facts() for term in args}
        for rule in self.rules:
            for term in (*rule.head.args, *(a for atom in rule.atoms for a in atom.args),
                         *(side for test in rule.comparisons for side in (test.left, test.right))):
                if not isinstance(term, Var):
                    schema.add(term)
        self._schema_set = schema
        self._schema = np.array(sorted(schema), dtype=np.int64)
        self._slots = [terms.intern(_SLOT.format(k)) for k in range(3)]
        terms.pin(self._slots)
        #: (shape, numeric slots) -> compiled template, or None when it must be derived per triple
        self._templates: dict[tuple, tuple | None] = {}
        #: literal id -> its code in `_signatures` (what literal facts a slot standing for it brings)
        self._literal_codes: dict[int, int] = {}
        self._signatures: list[tuple] = [((), False)]
        self.panes: dict[int, _Pane] = {}
        #: summary entry -> how many additions of the panes hold it (`_Pane.present`)
        self._present: Counter = Counter()
        self._summary_cache = None
        self._ring = _Ring()
        #: combined shape key -> (shape, template), while the schema's ranks and the codes stay
        self._by_key: dict[int, tuple] = {}
        self.joins = Joins(self)
        #: tracking: triple -> its expiry (window facts only; B* is apart); false facts -> expiry
        self._held: dict[Triple, int] = {}
        self._false_held: dict[tuple, int] = {}
        self.now: int | None = None
        self.started = False
        #: the panes (expiry time points) that triples went into since a reader last cleared it
        #: (`columnar.views` keeps a `PaneLedger` of them: a pane reader recomputes only those);
        #: not kept when tracking (the per-fact view reads what changed instead)
        self.touched: set[int] = set()
        #: (the lasting pane's first column, B* with it), for `fixed_columns`
        self._fixed_cache: tuple | None = None
        #: entailments of triples taken ahead of their time point (`run_ahead`): expiry -> [(s, p, o, summary
        #: entries, other facts)], into the panes when the triples arrive
        self._ahead: dict[int, list[tuple]] = {}

    def __getstate__(self) -> dict:
        """Plain data for a checkpoint: the background given, the panes (columns and other facts) and the
        time; rules, B*, templates and the joins' store are made again (`__setstate__`)."""
        panes = [[h, *pane.columns(), [[predicate, list(args)] for predicate, args in pane.others]]
                 for h, pane in sorted(self.panes.items())]
        ahead = [[h, *(np.concatenate([part[k] for part in parts]) for k in range(3)),
                  [[predicate, list(args)] for part in parts for predicate, args in part[4]]]
                 for h, parts in sorted(self._ahead.items())]
        return {"profile": self.profile, "window": self.window, "track": self.track, "terms": self.terms,
                "given": [list(triple) for triple in self._given], "now": self.now, "started": self.started,
                "panes": panes, "ahead": ahead}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["profile"], window=state["window"], background=[tuple(t) for t in state["given"]],
                      terms=state["terms"], track=state["track"])
        self.now, self.started = state["now"], state["started"]
        for h, s, p, o, others in state["panes"]:
            pane = self.panes[h] = _Pane()
            pane.add(s, p, o)
            if len(s):
                self._note_present(pane, _present_of(s, p, o, self._type))
            for predicate, args in others:
                pane.add_other((predicate, tuple(args)))
                self._note_present(pane, {("r", predicate)})
                if predicate in self._false:
                    self._false_held[(predicate, tuple(args))] = max(h, self._false_held.get((predicate, tuple(args)), h))
            if self.track:
                for triple in zip(s.tolist(), p.tolist(), o.tolist()):
                    if self._held.get(triple, -1) < h:
                        self._held[triple] = h
        for h, s, p, o, others in state.get("ahead", ()):
            self._ahead[h] = [(s, p, o, _present_of(s, p, o, self._type) if len(s) else set(),
                               [(predicate, tuple(args)) for predicate, args in others])]
            self.touched.add(h)  # (a pane reader read back computes them again)

    def __repr__(self) -> str:
        rows = sum(len(pane.columns()[0]) for pane in self.panes.values())
        return (f"<ShapeMaterializer {self.profile} window={self.window} now={self.now} panes={len(self.panes)} "
                f"rows={rows} B*={len(self._base_columns[0])} templates={len(self._templates)}>")

    # time ---------------------------------------------------------------------------------------------

    def advance_to(self, time_point: int, triples: Iterable[Triple] = (), *, columns=None) -> ShapeReport:
        """Time point `time_point`: what expired before it goes, then the triples arriving at it (id
        triples, or `columns` = (s, p, o) numpy arrays) and what they entail."""
        if self.now is not None and time_point < self.now:
            raise ValueError(f"time point {time_point} was already evaluated (now is {self.now})")
        report = ShapeReport(time_point)
        self.now = time_point
        if not self.started:
            self.started = True
            self._base_inconsistencies(report)
        self._expire(time_point, report)
        if self._ahead:
            self._arrive_ahead(time_point, report)
        if columns is not None:
            s, p, o = (np.asarray(column, dtype=np.int64) for column in columns)
        else:
            listed = list(triples)
            array = np.array(listed, dtype=np.int64).reshape(len(listed), 3)
            s, p, o = array[:, 0], array[:, 1], array[:, 2]
        horizon = NEVER_EXPIRES if self.window is None else min(time_point + self.window, NEVER_EXPIRES)
        if len(s):
            self._expand(s, p, o, horizon, report)
        self.joins.run(report)
        if len(report.inconsistencies) > 1:  # each once (two facts of one rule may name the same triples)
            found = {}
            for event in report.inconsistencies:
                found.setdefault((event.rule, frozenset(event.triples)), event)
            report.inconsistencies = list(found.values())
        return report

    def _expire(self, time_point: int, report: ShapeReport) -> None:
        gone = [h for h in self.panes if h < time_point]
        for h in gone:
            pane = self.panes.pop(h)
            self._forget_present(pane)
            if self.track:
                held = self._held
                s, p, o = pane.columns()
                for triple in zip(s.tolist(), p.tolist(), o.tolist()):
                    if held.get(triple, NEVER_EXPIRES) < time_point:
                        del held[triple]
                        report.removed.append(triple)
        if gone and self.touched:  # (a reader that never reads them keeps only the panes that hold)
            self.touched.difference_update(gone)
        if gone and self._false_held:
            for fact in [f for f, h in self._false_held.items() if h < time_point]:
                del self._false_held[fact]
        self.joins.expire(time_point)
        self._ring.expire(time_point)

    def _note_present(self, pane: _Pane, found: set) -> None:
        pane.present.append(found)
        counts = self._present
        for entry in found:
            if not counts[entry]:
                self._summary_cache = None
            counts[entry] += 1

    def _forget_present(self, pane: _Pane) -> None:
        counts = self._present
        for found in pane.present:
            for entry in found:
                counts[entry] -= 1
                if counts[entry] <= 0:
                    del counts[entry]
                    self._summary_cache = None

    def summary(self) -> tuple:
        """(predicates, predicates of a triple whose subject is not its object, classes, other relations)
        of what the panes hold."""
        if self._summary_cache is None:
            kinds = {"p": set(), "n": set(), "c": set(), "r": set()}
            for kind, value in self._present:
                kinds[kind].add(value)
            self._summary_cache = tuple(frozenset(kinds[kind]) for kind in "pncr")
        return self._summary_cache

    # working ahead ------------------------------------------------------------------------------------------

    def run_ahead(self, points: np.ndarray, s, p, o) -> int:
        """Expand now, in one pass, triples that arrive at later time points (`points`: each one's,
        in order, all after `now`): their entailments wait apart, by expiry, and go into the panes
        when their time point comes (`advance_to`), as they would have been made then; their panes
        are marked `touched` now, so that a reader that works per pane computes them at once
        (`pane_rows` gives them). Only the triples of shapes whose template holds on its own go
        ahead (no triple derived one by one, no fact that never expires); which rules two window
        facts meet in is decided by what has arrived (`Joins`). Returns how many rows were taken:
        all those before the first time point where one may not go."""
        if self.track or self.window is None or self.now is None or not len(s):
            return 0
        keys, codes, combined = self._shape_columns(s, p, o)
        if combined is None:
            return 0
        distinct, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        inverse = inverse.reshape(-1)
        templates, refused = [], []
        for number, row in enumerate(first.tolist()):
            template = self._template_at(keys, codes, row, int(distinct[number]))
            if template is None or any(tag != SEED for _, tag, _, _ in template[0]) or \
                    any(tag != SEED for _, tag in template[1]):
                refused.append(number)
                template = None
            templates.append(template)
        taken = len(s)
        if refused:
            stop = int(points[np.isin(inverse, refused)].min())
            taken = int(np.searchsorted(points, stop, side="left"))
            if not taken:
                return 0
            points, s, p, o, inverse = points[:taken], s[:taken], p[:taken], o[:taken], inverse[:taken]
        hs = np.minimum(points + self.window, NEVER_EXPIRES)
        order = np.argsort(inverse, kind="stable")
        bounds = np.searchsorted(inverse[order], np.arange(len(templates) + 1))
        parts = []
        brought: dict[int, set] = {}  # (per shape, what its triples bring to the summary, when its template says)
        present: dict[int, set] = defaultdict(set)
        others: dict[int, list] = defaultdict(list)
        for number, template in enumerate(templates):
            chosen = order[bounds[number]:bounds[number + 1]]
            if template is None or not len(chosen):
                continue
            columns, at_h = (s[chosen], p[chosen], o[chosen]), hs[chosen]
            fixed = brought[number] = set()
            for args, _, unique_over, static in template[0]:
                if unique_over is None:
                    made, made_h = tuple(columns[-1 - a] if a < 0 else np.full(len(chosen), a, dtype=np.int64)
                                         for a in args), at_h
                else:  # (fewer slots than the shape: each combination once per time point)
                    made_h, *values = _unique_rows([at_h, *(columns[k] for k in unique_over)])
                    at = dict(zip(unique_over, values))
                    made = tuple(at[-1 - a] if a < 0 else np.full(len(made_h), a, dtype=np.int64) for a in args)
                parts.append((args, (*made, made_h)))
                if static is not None:
                    fixed |= static
                else:  # (a predicate or a class that is a slot: what it brings, per time point)
                    self._note_ahead_present(present, made, made_h)
            if template[1]:  # (other relations: fact by fact, as a step makes them)
                rows = list(zip(*(column.tolist() for column in columns)))
                for h, row in zip(at_h.tolist(), rows):
                    for (predicate, args), _ in template[1]:
                        others[h].append((predicate, tuple(row[-1 - a] if a < 0 else a for a in args)))
        for h, number in zip(*(column.tolist() for column in _unique_rows([hs, inverse]))):
            present[h] |= brought[number]
        fs, fp, fo, fh = _merged(parts, with_time=True)
        by_h = np.argsort(fh, kind="stable")
        fs, fp, fo, fh = fs[by_h], fp[by_h], fo[by_h], fh[by_h]
        starts = np.flatnonzero(np.concatenate(([True], fh[1:] != fh[:-1]))) if len(fh) else _EMPTY
        ends = np.append(starts[1:], len(fh))
        for start, end in zip(starts.tolist(), ends.tolist()):
            h = int(fh[start])
            self._ahead.setdefault(h, []).append((fs[start:end], fp[start:end], fo[start:end], present[h],
                                                  others.pop(h, [])))
            self.touched.add(h)
        for h, facts in others.items():  # (only other relations at that time point)
            self._ahead.setdefault(h, []).append((_EMPTY, _EMPTY, _EMPTY, set(), facts))
        return taken

    def _note_ahead_present(self, present: dict, made: tuple, made_h: np.ndarray) -> None:
        """What triples made ahead bring to the summary at their expiry, as `_present_of` per pane."""
        s, p, o = made
        for h, value in zip(*(column.tolist() for column in _unique_rows([made_h, p]))):
            present[h].add(("p", value))
        unequal = s != o
        for h, value in zip(*(column.tolist() for column in _unique_rows([made_h[unequal], p[unequal]]))):
            present[h].add(("n", value))
        typed = p == self._type
        if bool(typed.any()):
            for h, value in zip(*(column.tolist() for column in _unique_rows([made_h[typed], o[typed]]))):
                present[h].add(("c", value))

    def ahead_until(self) -> int | None:
        """The last time point whose triples were taken ahead and have not arrived yet (None: none)."""
        return max(self._ahead) - self.window if self._ahead else None

    def arrivals_until(self, time_point: int) -> list[int]:
        """The time points up to `time_point` at which triples taken ahead arrive, in order (a reader
        advances to each, as it would have with the triples)."""
        window = self.window
        return sorted(h - window for h in self._ahead if h - window <= time_point) if self._ahead else []

    def _arrive_ahead(self, time_point: int, report: ShapeReport) -> None:
        """The entailments taken ahead of the triples that arrive now go into their panes."""
        for h in sorted(h for h in self._ahead if h - self.window <= time_point):
            parts = self._ahead.pop(h)
            for s, p, o, present, _ in parts:
                self._add_triples(h, s, p, o, report, fresh=True, present=present, announced=True)
            for _, _, _, _, facts in parts:
                for fact in facts:
                    self._add_other(fact, h, report)

    # expansion by templates ------------------------------------------------------------------------------

    def _expand(self, s, p, o, horizon: int, report: ShapeReport) -> None:
        """Every triple's template instantiated, by distinct shape, into the pane of `horizon`."""
        keys, codes, combined = self._shape_columns(s, p, o)
        if combined is not None:
            distinct, first, inverse = np.unique(combined, return_index=True, return_inverse=True)
        else:
            rows = np.stack([*keys, *codes], axis=1)
            _, first, inverse = np.unique(rows, axis=0, return_index=True, return_inverse=True)
            distinct = None
        inverse = inverse.reshape(-1)
        many = len(first) > 8
        if many:
            order = np.argsort(inverse, kind="stable")
            bounds = np.searchsorted(inverse[order], np.arange(len(first) + 1))
        out: dict[int, list] = defaultdict(list)
        present: dict[int, set] = defaultdict(set)
        others: list[tuple] = []
        for number, row in enumerate(first.tolist()):
            template = self._template_at(keys, codes, row, None if distinct is None else int(distinct[number]))
            chosen = order[bounds[number]:bounds[number + 1]] if many else np.flatnonzero(inverse == number)
            if len(chosen) == len(s):
                columns = (s, p, o)
            else:
                columns = (s[chosen], p[chosen], o[chosen])
            if template is None:  # a comparison read a number: derived triple by triple
                for triple in zip(*(c.tolist() for c in columns)):
                    for fact, tag in self._concrete(triple):
                        h = horizon if tag == SEED else NEVER_EXPIRES
                        if fact[0] == self._triple:
                            made = tuple(np.array([t], dtype=np.int64) for t in fact[1])
                            out[h].append(((-1, -2, -3), made))
                            present[h] |= _present_of(*made, self._type)
                        else:
                            others.append((fact, h))
                continue
            triples, rest, _ = template
            n = len(chosen)
            for args, tag, unique_over, static in triples:
                h = horizon if tag == SEED else NEVER_EXPIRES
                if unique_over is None:
                    made = tuple(columns[-1 - a] if a < 0 else np.full(n, a, dtype=np.int64) for a in args)
                elif not unique_over:  # no slot: one row
                    made = tuple(np.array([a], dtype=np.int64) for a in args)
                else:  # fewer slots than the shape: each combination once
                    values = np.unique(np.stack([columns[k] for k in unique_over], axis=1), axis=0) \
                        if len(unique_over) > 1 else unique_sorted(columns[unique_over[0]]).reshape(-1, 1)
                    at = {k: values[:, i] for i, k in enumerate(unique_over)}
                    made = tuple(at[-1 - a] if a < 0 else np.full(len(values), a, dtype=np.int64) for a in args)
                out[h].append((args, made))
                if static is not None:
                    present[h] |= static
                else:
                    present[h] |= _present_of(*made, self._type)
            if rest:
                values = list(zip(*(c.tolist() for c in columns)))
                for (predicate, args), tag in rest:
                    h = horizon if tag == SEED else NEVER_EXPIRES
                    for row in values:
                        others.append(((predicate, tuple(row[-1 - a] if a < 0 else a for a in args)), h))
        for h, parts in out.items():
            fs, fp, fo = _merged(parts)
            self._add_triples(h, fs, fp, fo, report, fresh=True, present=present[h])
        for fact, h in others:
            self._add_other(fact, h, report)

    def _template_at(self, keys, codes, row: int, key: int | None):
        """The template of the shape of row `row` of `_shape_columns`' keys and codes, found once per
        packed shape key (`key`; None: not packed)."""
        found = self._by_key.get(key) if key is not None else None
        if found is None:
            shape = tuple(int(column[row]) for column in keys) + tuple(int(column[row]) for column in codes)
            found = (shape, self._template(shape))
            if key is not None:
                self._by_key[key] = found
        return found[1]

    def _shape_columns(self, s, p, o):
        """Per row and position: the term if B* or the rules name it, else -1 - the position of the
        first slot-term equal to it (0 = s, 1 = p, 2 = o; slots are numbered by position), and the code
        of what a literal or number in that position brings (0: nothing); and one int64 key per row
        for the whole shape (None when the schema is too large to pack one)."""
        schema = self._schema
        size = len(schema)
        rows = np.stack((s, p, o))  # (the three positions at once: a step's arrays are short)
        at = np.minimum(np.searchsorted(schema, rows), size - 1)
        named = schema[at] == rows
        key = np.where(named, rows, _MINUS_POSITION)
        rank = np.where(named, at, size + _POSITION)
        same = ~named[1] & (p == s)
        key[1][same], rank[1][same] = -1, size
        same = ~named[2] & (o == s)
        key[2][same], rank[2][same] = -1, size
        same = ~named[2] & (o == p) & (o != s)
        key[2][same], rank[2][same] = -2, size + 1
        keys, ranks, named_columns = list(key), list(rank), list(named)
        codes = self._codes((s, p, o), named_columns)
        base = size + 3
        combined = None
        if base < 8192 and len(self._signatures) < 256:
            combined = ((ranks[0] * base + ranks[1]) * base + ranks[2]) << 24
            combined |= (codes[0] << 16) | (codes[1] << 8) | codes[2]
        return keys, codes, combined

    def _codes(self, columns, named_columns) -> list[np.ndarray]:
        """The literal code of each slot-term of the columns (found once per distinct term of a step)."""
        free_parts = [column[~named] for column, named in zip(columns, named_columns)]
        everything = np.concatenate(free_parts)
        out = [np.zeros(len(column), dtype=np.int64) for column in columns]
        if not len(everything):
            return out
        values, inverse = np.unique(everything, return_inverse=True)
        keys, numbers, cache = self.terms.keys, self.terms.numbers, self._literal_codes
        terms = values.tolist()
        found = list(map(cache.get, terms))
        if None in found:
            for number, term in enumerate(terms):
                if found[number] is None:
                    key = keys[term]
                    code = 0 if key[0] != '"' and numbers.get(term) is None else self._literal_code(term, key)
                    if code:
                        if len(cache) > 200_000:
                            cache.clear()
                        cache[term] = code
                    found[number] = code
        if not any(found):
            return out
        all_codes = np.array(found, dtype=np.int64)[inverse.reshape(-1)]
        at = 0
        for column, named, part in zip(out, named_columns, free_parts):
            column[~named] = all_codes[at:at + len(part)]
            at += len(part)
        return out

    def _literal_code(self, term: int, key: str) -> int:
        signature = tuple(literal_facts(key)) if self._literal_predicates and key[0] == '"' else ()
        numeric = self.terms.numbers[term] is not None
        entry = (signature, numeric)
        try:
            return self._signatures.index(entry)
        except ValueError:
            self._signatures.append(entry)
            return len(self._signatures) - 1

    def _template(self, shape: tuple) -> tuple | None:
        """The compiled template of a shape: (triple facts, other facts), each with its tag; args are
        ids, or -1 - k for the term at position k of the triple. None: derive such triples one by one."""
        if shape in self._templates:
            return self._templates[shape]
        keys, codes = shape[:3], shape[3:]
        ids, numeric, seeds = [], set(), {}
        slot_position = {}
        for position, (key, code) in enumerate(zip(keys, codes)):
            if key >= 0:
                ids.append(key)
                continue
            slot = self._slots[-1 - key]
            slot_position[slot] = -1 - key
            ids.append(slot)
            signature, is_number = self._signatures[code]
            if is_number:
                numeric.add(slot)
            for name, datatype in signature:
                predicate = self._literal_predicates.get(name)
                if predicate is not None:
                    args = (slot,) if datatype is None else (slot, self.terms.intern(datatype))
                    seeds[(predicate, args)] = LASTING
        seeds[(self._triple, tuple(ids))] = SEED
        closure = self.closure
        closure.numeric_slots, closure.touched = numeric, False
        derived = closure.close(self.base, seeds)
        reusable = not closure.touched
        closure.numeric_slots = set()
        if not reusable:
            self._templates[shape] = None
            return None

        def arg(term):
            position = slot_position.get(term)
            return term if position is None else -1 - position

        shape_slots = tuple(sorted(set(slot_position.values())))
        triples, rest = [], []
        for (predicate, args), tag in derived.items():
            if predicate in self._literal_ids:
                continue  # a literal's facts: held as B*'s are, per literal (they never expire)
            compiled = tuple(arg(a) for a in args)
            if predicate != self._triple:
                rest.append(((predicate, compiled), tag))
                continue
            used = tuple(sorted({-1 - a for a in compiled if a < 0}))
            unique_over = None if used == shape_slots else used  # fewer slots: rows repeat, taken once
            static = None
            s_arg, p_arg, o_arg = compiled
            if p_arg >= 0 and (p_arg != self._type or o_arg >= 0):
                static = {("p", p_arg)}
                if s_arg != o_arg:
                    static.add(("n", p_arg))
                if p_arg == self._type:
                    static.add(("c", o_arg))
            triples.append((compiled, tag, unique_over, static))
        self._templates[shape] = template = (tuple(triples), tuple(rest), shape_slots)
        return template

    def _concrete(self, triple: Triple) -> list:
        """One triple's seed closure computed for itself (no slots): (fact, tag) pairs."""
        seeds = {(self._triple, tuple(triple)): SEED}
        for fact in self._literal_facts([triple[2]]):
            seeds.setdefault(fact, LASTING)
        derived = self.closure.close(self.base, seeds)
        return [(fact, tag) for fact, tag in derived.items() if fact[0] not in self._literal_ids]

    def derive_fact(self, fact) -> list:
        """A fact's seed closure with B* (a triple by its shape's template), for facts joins derive."""
        if fact[0] == self._triple:
            triple = fact[1]
            columns = tuple(np.array([term], dtype=np.int64) for term in triple)
            keys, codes, _ = self._shape_columns(*columns)
            shape = tuple(int(k[0]) for k in keys) + tuple(int(c[0]) for c in codes)
            template = self._template(shape)
            if template is None:
                return self._concrete(triple)
            out = []
            for args, tag, _, _ in template[0]:
                out.append(((self._triple, tuple(triple[-1 - a] if a < 0 else a for a in args)), tag))
            for (predicate, args), tag in template[1]:
                out.append(((predicate, tuple(triple[-1 - a] if a < 0 else a for a in args)), tag))
            return out
        derived = self.closure.close(self.base, {fact: SEED})
        return [(f, tag) for f, tag in derived.items() if f[0] not in self._literal_ids]

    def _literal_facts(self, objects) -> list:
        if not self._literal_predicates:
            return []
        out, seen, keys = [], set(), self.terms.keys
        for term in objects:
            if term in seen or keys[term][0] != '"':
                continue
            seen.add(term)
            for name, datatype in literal_facts(keys[term]):
                predicate = self._literal_predicates.get(name)
                if predicate is not None:
                    out.append((predicate, (term,) if datatype is None else (term, self.terms.intern(datatype))))
        return out

    # storing --------------------------------------------------------------------------------------------

    def _add_triples(self, h: int, s, p, o, report: ShapeReport, fresh: bool, present: set | None = None,
                     announced: bool = False) -> None:
        """Triples that hold until h into their pane (and, new this step, into what joins read);
        `announced`: taken ahead, their pane was already marked `touched` with them (`run_ahead`)."""
        if h < self.now or not len(s):
            return
        pane = self.panes.get(h)
        if pane is None:
            pane = self.panes[h] = _Pane()
        pane.add(s, p, o)
        self._note_present(pane, present if present is not None else _present_of(s, p, o, self._type))
        if h != NEVER_EXPIRES and not self.track and not announced:
            self.touched.add(h)
        if h == NEVER_EXPIRES or self.track:  # (held with B*, before the panes; a tracking materializer's
            self._ring.stale = True           # reader applies what changed: it keeps no buffer up to date)
        else:
            self._ring.append(h, s, p, o)
        report.derived += len(s)
        if self.track:
            held, added = self._held, report.added
            for triple in zip(s.tolist(), p.tolist(), o.tolist()):
                before = held.get(triple)
                if before is None:
                    added.append(triple)
                    held[triple] = h
                elif h > before:
                    held[triple] = h
        if fresh:
            self.joins.arrived(h, s, p, o)

    def _add_other(self, fact, h: int, report: ShapeReport, fresh: bool = True) -> None:
        if h < self.now:
            return
        pane = self.panes.get(h)
        if pane is None:
            pane = self.panes[h] = _Pane()
        pane.add_other(fact)
        self._note_present(pane, {("r", fact[0])})
        report.derived += 1
        head = self._false.get(fact[0])
        if head is not None:
            before = self._false_held.get(fact)
            if before is None:
                report.inconsistencies.append(inconsistency_event(head, fact[1], self.now))
            if before is None or h > before:
                self._false_held[fact] = h
        if fresh:
            self.joins.arrived_other(fact, h)

    def _base_inconsistencies(self, report: ShapeReport) -> None:
        for predicate, head in self._false.items():
            for args in self.base.by_predicate.get(predicate, ()):
                report.inconsistencies.append(inconsistency_event(head, args, self.now))

    # reading ------------------------------------------------------------------------------------------

    def distinct(self) -> bool:
        """Can no triple be in `triple_columns` twice (else a reader takes each once)?"""
        return not any(pane.parts for h, pane in self.panes.items() if self.now is None or h >= self.now)

    def triple_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, p, o) of the triples that hold now (a triple may be there more than once): views of one
        buffer (`_Ring`), valid until the next `advance_to`."""
        ring = self._ring
        if ring.stale:
            live = sorted((h, pane.columns()) for h, pane in self.panes.items()
                          if (self.now is None or h >= self.now) and pane.parts)
            lasting = [columns for h, columns in live if h == NEVER_EXPIRES]
            prefix = self._base_columns
            if lasting:
                prefix = tuple(np.concatenate([prefix[k], lasting[0][k]]) for k in range(3))
            ring.rebuild(prefix, [(h, columns) for h, columns in live if h != NEVER_EXPIRES])
        return ring.columns()

    def pane_rows(self, low: int, high: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(h, s, p, o) of the triples in the panes that expire at low <= h < high (B* and what never
        expires are in no pane: `fixed_columns`), by h."""
        panes = self.panes  # (a live reader asks for one pane of a window's many: the keys only are walked)
        parts = [(h, panes[h].columns()) for h in sorted(h for h in panes if low <= h < high and h != NEVER_EXPIRES)
                 if panes[h].parts]
        if self._ahead:  # (a reader that works per pane reads the panes to come too)
            parts += [(h, tuple(np.concatenate([part[k] for part in ahead]) for k in range(3)))
                      for h, ahead in self._ahead.items() if low <= h < high]
            parts.sort(key=lambda part: part[0])
        if not parts:
            return _EMPTY, _EMPTY, _EMPTY, _EMPTY
        t = np.concatenate([np.full(len(columns[0]), h, dtype=np.int64) for h, columns in parts])
        return (t, *(np.concatenate([columns[k] for _, columns in parts]) for k in range(3)))

    def fixed_columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """(s, p, o) of the triples that hold in no pane: B*, and what never expires."""
        lasting = self.panes.get(NEVER_EXPIRES)
        if lasting is None or not lasting.parts:
            return self._base_columns
        more = lasting.columns()
        cached = self._fixed_cache  # (the same arrays while nothing new lasts: a pane reader keys on them)
        if cached is None or cached[0] is not more[0]:
            self._fixed_cache = cached = (more[0], tuple(np.concatenate([self._base_columns[k], more[k]])
                                                         for k in range(3)))
        return cached[1]

    def holding(self) -> list[Triple]:
        if self.track:
            s, p, o = self._base_columns
            return list(zip(s.tolist(), p.tolist(), o.tolist())) + list(self._held)
        s, p, o = self.triple_columns()
        return list(dict.fromkeys(zip(s.tolist(), p.tolist(), o.tolist())))

    def expires(self, triple: Triple) -> int | None:
        """The last time point `triple` holds (NEVER_EXPIRES for B*), None if it does not hold."""
        triple = tuple(triple)
        if (self._triple, triple) in self.base:
            return NEVER_EXPIRES
        if self.track:
            h = self._held.get(triple)
            return h if h is not None and (self.now is None or h >= self.now) else None
        best = None
        for h, pane in self.panes.items():
            if self.now is not None and h < self.now or (best is not None and h <= best):
                continue
            s, p, o = pane.columns()
            if bool(np.any((s == triple[0]) & (p == triple[1]) & (o == triple[2]))):
                best = h
        return best

    def inconsistent(self) -> list[Inconsistency]:
        """The inconsistencies whose facts hold now (each once)."""
        now = self.now if self.now is not None else 0
        found = {}
        for predicate, head in self._false.items():
            for args in self.base.by_predicate.get(predicate, ()):
                event = inconsistency_event(head, args, now)
                found.setdefault((event.rule, frozenset(event.triples)), event)
        for h, pane in self.panes.items():
            if h < now:
                continue
            for predicate, args in pane.others:
                head = self._false.get(predicate)
                if head is not None:
                    event = inconsistency_event(head, args, now)
                    found.setdefault((event.rule, frozenset(event.triples)), event)
        return list(found.values())

    def live_terms(self):
        """The ids the materialization holds (B* and the slots are pinned or held here too)."""
        held = np.concatenate([pane.terms() for pane in self.panes.values()]
                              + [column for parts in self._ahead.values() for part in parts for column in part[:3]]
                              + [np.array([term for _, args in part[4] for term in args], dtype=np.int64)
                                 for parts in self._ahead.values() for part in parts]
                              or [_EMPTY]).tolist()
        return chain(held, (term for _, args in self.base.facts() for term in args), self._slots,
                     self._schema_set, self.joins.live_terms())


#: per position (rows s, p, o): its number, and -1 - it (the key of a term in no rule, first seen there)
_POSITION = np.arange(3, dtype=np.int64).reshape(3, 1)
_MINUS_POSITION = -1 - _POSITION


def _unique_rows(columns: list[np.ndarray]) -> list[np.ndarray]:
    """The distinct rows of equal-length columns, in order (np.unique's rows, without its costly
    row-wise path)."""
    order = np.lexsort(columns[::-1])
    columns = [column[order] for column in columns]
    if len(order) < 2:
        return columns
    starts = np.zeros(len(order), dtype=bool)
    starts[0] = True
    for column in columns:
        starts[1:] |= column[1:] != column[:-1]
    return [column[starts] for column in columns]


@lru_cache(maxsize=4096)
def _pattern_of(args: tuple) -> tuple:
    """A template fact's constants in their places (None: a slot), once per template fact."""
    return tuple(a if a >= 0 else None for a in args)


def _merged(parts: list, with_time: bool = False) -> tuple:
    """The rows of a step's template facts, one set of columns: facts of one pattern (the same constants
    in the same places, `sensor a Observation` from two shapes) taken once each. `with_time`: each
    part's columns end with the rows' expiry, and a fact is taken once per expiry (several steps)."""
    by_pattern: dict[tuple, list] = defaultdict(list)
    for args, made in parts:
        by_pattern[_pattern_of(args)].append(made)
    width = 4 if with_time else 3
    out = []
    for pattern, group in by_pattern.items():
        if len(group) == 1:
            out.append(group[0])
            continue
        columns = [np.concatenate(c) for c in zip(*group)]
        free = [k for k, a in enumerate(pattern) if a is None] + ([3] if with_time else [])
        if with_time and free:
            at = dict(zip(free, _unique_rows([columns[k] for k in free])))
            size = len(at[free[0]])
            out.append(tuple(at[k] if k in at else np.full(size, pattern[k], dtype=np.int64) for k in range(width)))
        elif len(free) == 1:
            values = unique_sorted(columns[free[0]])
            out.append(tuple(values if k == free[0] else np.full(len(values), pattern[k], dtype=np.int64)
                             for k in range(width)))
        elif free:
            values = np.unique(np.stack([columns[k] for k in free], axis=1), axis=0)
            at = {k: values[:, i] for i, k in enumerate(free)}
            out.append(tuple(at[k] if k in at else np.full(len(values), pattern[k], dtype=np.int64)
                             for k in range(width)))
        else:
            out.append(tuple(np.array([a], dtype=np.int64) for a in pattern))
    if not out:
        return tuple(_EMPTY for _ in range(width))
    if len(out) == 1:
        return out[0]
    return tuple(np.concatenate(c) for c in zip(*out))


def _background_closure(rules: list[PositiveRule], closure: Closure, facts) -> FactBase:
    """B*: the closure of the background, semi-naive over one indexed base (the closure grows in it)."""
    base = FactBase()
    delta = [fact for fact in dict.fromkeys(facts) if base.add(*fact)]
    readers: dict[int, list] = defaultdict(list)
    for number, rule in enumerate(rules):
        for position, atom in enumerate(rule.atoms):
            readers[atom.predicate].append((number, position))
    while delta:
        fresh = []
        for predicate, args in delta:
            for number, position in readers.get(predicate, ()):
                rule = rules[number]
                binding = unify(rule.atoms[position].args, args, {})
                if binding is None or not closure._comparisons_hold(rule, binding):
                    continue
                rest = [i for i in range(len(rule.atoms)) if i != position]
                for bound, _ in weakest_bindings(rule, rest, binding, 0, _Snapshot(base), NoFacts,
                                                 closure._comparisons_hold):
                    head = (rule.head.predicate, tuple(bound[a] if isinstance(a, Var) else a for a in rule.head.args))
                    if base.add(*head):
                        fresh.append(head)
        delta = fresh
    return base


class _Snapshot:
    """A base that grows while it is joined over: each match a copy, as it was when asked."""

    def __init__(self, base: FactBase):
        self.base = base

    def match(self, predicate: int, pattern: tuple) -> list[tuple]:
        return list(self.base.match(predicate, pattern))


def _distinct(s, p, o):
    """Each row once (rows repeat when many triples entail the same fact: `sensor a Device`)."""
    if len(s) < 2:
        return s, p, o
    rows = np.stack([s, p, o], axis=1)
    unique = np.unique(rows, axis=0)
    if len(unique) == len(rows):
        return s, p, o
    return unique[:, 0].copy(), unique[:, 1].copy(), unique[:, 2].copy()


# rules two window facts meet in ------------------------------------------------------------------------------


class Joins:
    """The rules two window facts can meet in, given what the panes hold, and their annotated fixpoint.

    An atom can be matched by a window fact when the panes hold its relation (a triple's predicate,
    an rdf:type triple's class; a reflexive triple does not count where it is inert,
    `templates.inert_reflexive`); a variable predicate or class that another atom binds, one only
    B* can match, ranges over what B* gives it. A rule two such atoms are in runs as a join over the
    window facts it reads (`_store`), semi-naive from what arrived; a rule that becomes such a rule
    runs over everything the panes hold once.
    """

    def __init__(self, owner: ShapeMaterializer):
        self.owner = owner
        rules, terms, base = owner.rules, owner.terms, owner.base
        self._type = owner._type
        self._triple = owner._triple
        #: per rule and atom: (kind, constant, variable) with kind "triple-p" (a constant predicate),
        #: "triple-v" (a variable one), "other"; candidates of variables from atoms only B* matches
        self._atoms = []
        for number, rule in enumerate(rules):
            described = []
            for position, (predicate, args) in enumerate(rule.atoms):
                if predicate == self._triple and len(args) == 3:
                    if isinstance(args[1], Var):
                        described.append(("triple-v", None, args[1], False))
                    elif args[1] == self._type:
                        described.append(("type", args[2] if not isinstance(args[2], Var) else None,
                                          args[2] if isinstance(args[2], Var) else None, False))
                    else:
                        described.append(("triple-p", args[1], None, inert_reflexive(rule, position, terms)))
                else:
                    described.append(("other", predicate, None, False))
            self._atoms.append(described)
        #: per rule and atom: variable -> the values B* gives it there (every variable of the atom)
        self._base_values = []
        for rule in rules:
            per_atom = []
            for predicate, args in rule.atoms:
                pattern = tuple(None if isinstance(a, Var) else a for a in args)
                values: dict[Var, set] = {a: set() for a in args if isinstance(a, Var)}
                matched = False
                for found in base.match(predicate, pattern):
                    if len(found) != len(args) or unify(args, found, {}) is None:
                        continue
                    matched = True
                    for a, value in zip(args, found):
                        if isinstance(a, Var):
                            values[a].add(value)
                per_atom.append((matched, values))
            self._base_values.append(per_atom)
        self._decided: dict[tuple, tuple] = {}
        self.active: tuple = ()
        self._spec = None
        self._store: _Annotated | None = None
        self._delta: list = []

    # which rules --------------------------------------------------------------------------------------

    def decide(self, summary) -> tuple:
        """(active rules: (number, readable positions), spec: what of the panes they read)."""
        found = self._decided.get(summary)
        if found is not None:
            return found
        predicates, nonreflexive, classes, relations = summary
        active, spec = [], {}
        for number, described in enumerate(self._atoms):
            first = [self._matchable_constant(kind, constant, inert, summary) for kind, constant, _, inert in described]
            candidates: dict[Var, set] = {}
            dead = False
            for position, matchable in enumerate(first):
                if matchable is False:  # only B* matches it: its variables range over what B* gives
                    matched, values = self._base_values[number][position]
                    dead |= not matched
                    for var, found in values.items():
                        candidates[var] = found if var not in candidates else candidates[var] & found
            if dead:  # an atom nothing matches: the rule cannot fire
                continue
            positions = []
            for position, (kind, constant, var, _) in enumerate(described):
                matchable = first[position]
                if matchable is None:  # decided by a variable: the predicate or the class
                    pool = predicates if kind == "triple-v" else classes
                    matchable = bool(pool) if var not in candidates else bool(pool & candidates[var])
                if matchable:
                    positions.append(position)
            if len(positions) < 2:
                continue
            active.append(number)
            for position, (kind, constant, var, _) in enumerate(described):
                if kind == "triple-p":
                    spec.setdefault(constant, set()).add(None)
                elif kind == "type":
                    wanted = spec.setdefault(self._type, set())
                    if constant is not None:
                        wanted.add(constant)
                    elif var in candidates:
                        wanted |= candidates[var]
                    else:
                        wanted.add(None)
                elif kind == "triple-v":
                    if var in candidates:
                        for value in candidates[var]:
                            spec.setdefault(value, set()).add(None)
                    else:
                        spec.setdefault(None, set()).add(None)
                else:
                    spec.setdefault(("other", constant), set()).add(None)
        result = (tuple(active), _freeze(spec))
        if len(self._decided) > 64:
            self._decided.clear()
        self._decided[summary] = result
        return result

    def _matchable_constant(self, kind, constant, inert, summary):
        """True / False for atoms their constants decide; None when a variable decides."""
        predicates, nonreflexive, classes, relations = summary
        if kind == "triple-p":
            return constant in (nonreflexive if inert else predicates)
        if kind == "type":
            if self._type not in predicates:
                return False
            return constant in classes if constant is not None else None
        if kind == "triple-v":
            return None if predicates else False
        return constant in relations

    # the fixpoint ---------------------------------------------------------------------------------------

    def arrived(self, h: int, s, p, o) -> None:
        """Triples new this step: the delta of the next run (kept when a store reads them)."""
        if self._spec is not None and len(s):
            self._delta.extend(self._wanted(h, s, p, o))

    def arrived_other(self, fact, h: int) -> None:
        if self._spec is not None and ("other", fact[0]) in self._spec_keys:
            self._delta.append((fact, h))

    def _wanted(self, h, s, p, o):
        spec = self._spec_map
        if None in self._spec_keys:
            mask = np.ones(len(s), dtype=bool)
        else:
            mask = np.isin(p, self._spec_predicates)
            classes = spec.get(self._type)
            if classes is not None and None not in classes:
                is_type = p == self._type
                mask &= ~is_type | np.isin(o, np.array(sorted(classes), dtype=np.int64))
        rows = np.flatnonzero(mask)
        triple = self._triple
        return [((triple, args), h) for args in zip(s[rows].tolist(), p[rows].tolist(), o[rows].tolist())]

    def expire(self, time_point: int) -> None:
        if self._store is not None:
            self._store.expire(time_point)

    def run(self, report: ShapeReport) -> None:
        """The annotated fixpoint of the active rules from what arrived (from everything held, when the
        active rules changed), until the rules that can fire stay the same."""
        while True:
            active, spec = self.decide(self.owner.summary())
            if not active:
                self.active, self._spec, self._store, self._delta = (), None, None, []
                return
            if active != self.active or spec != self._spec:
                self.active = active
                self._set_spec(spec)
                self._store = _Annotated()
                self._delta = self._held_facts()
            delta, self._delta = self._delta, []
            self._fixpoint(delta, report)
            again, _ = self.decide(self.owner.summary())
            if again == self.active:
                return

    def _set_spec(self, spec) -> None:
        self._spec = spec
        self._spec_map = dict(spec)
        self._spec_keys = set(self._spec_map)
        self._spec_predicates = np.array(sorted(k for k in self._spec_map if isinstance(k, int)), dtype=np.int64)

    def _held_facts(self) -> list:
        out = []
        now = self.owner.now
        for h, pane in self.owner.panes.items():
            if now is not None and h < now:
                continue
            out.extend(self._wanted(h, *pane.columns()))
            out.extend((fact, h) for fact in pane.others if ("other", fact[0]) in self._spec_keys)
        return out

    def _fixpoint(self, arrived: list, report: ShapeReport) -> None:
        owner, store, base = self.owner, self._store, self.owner.base
        now = owner.now
        rules = owner.rules
        numbers = owner.terms.numbers

        def holds(rule: PositiveRule, binding: dict) -> bool:
            return _tests_hold(rule, binding, numbers)

        readers: dict[int, list] = defaultdict(list)
        for number in self.active:
            for position, atom in enumerate(rules[number].atoms):
                readers[atom.predicate].append((number, position))
        delta = []
        for fact, h in arrived:
            if store.raise_to(fact, h):
                delta.append(fact)
        while delta:
            report.rounds += 1
            fresh = []
            for fact in delta:
                h = store.get(fact)
                if h is None:
                    continue
                for number, position in readers.get(fact[0], ()):
                    rule = rules[number]
                    binding = unify(rule.atoms[position].args, fact[1], {})
                    if binding is None or not holds(rule, binding):
                        continue
                    rest = [i for i in range(len(rule.atoms)) if i != position]
                    for bound, weakest in weakest_bindings(rule, rest, binding, h, base, store, holds):
                        if weakest < now:
                            continue
                        head = (rule.head.predicate,
                                tuple(bound[a] if isinstance(a, Var) else a for a in rule.head.args))
                        if head in base or store.get(head, -1) >= weakest:
                            continue
                        for derived, tag in [(head, SEED)] + owner.derive_fact(head):
                            if derived in base:
                                continue
                            hh = weakest if tag == SEED else NEVER_EXPIRES
                            if store.raise_to(derived, hh):
                                fresh.append(derived)
                                if derived[0] == owner._triple:
                                    owner._add_triples(hh, *(np.array([t], dtype=np.int64) for t in derived[1]),
                                                       report, fresh=False)
                                else:
                                    owner._add_other(derived, hh, report, fresh=False)
            delta = fresh

    def live_terms(self):
        return self._store.live_terms() if self._store is not None else ()


def _freeze(spec: dict):
    return tuple(sorted(((key, frozenset(values)) for key, values in spec.items()), key=repr))


class _Annotated:
    """Facts with their expiry, indexed on bound positions (built when a pattern first asks)."""

    def __init__(self):
        self.h: dict[tuple, int] = {}
        self.by_predicate: dict[int, set] = defaultdict(set)
        self._indexes: dict[tuple, dict] = {}
        self._expiring: dict[int, list] = defaultdict(list)

    def get(self, fact, default=None):
        return self.h.get(fact, default)

    def note(self, fact) -> int | None:
        """Its expiry (None: not held), as `positive.weakest_bindings` reads it."""
        return self.h.get(fact)

    def raise_to(self, fact, h: int) -> bool:
        """Hold `fact` until h at least; True if that is new or longer."""
        before = self.h.get(fact)
        if before is not None and before >= h:
            return False
        self.h[fact] = h
        self._expiring[h].append(fact)
        if before is None:
            predicate, args = fact
            self.by_predicate[predicate].add(args)
            for (indexed, positions), index in self._indexes.items():
                if indexed == predicate and len(args) > max(positions, default=-1):
                    index.setdefault(tuple(args[i] for i in positions), set()).add(args)
        return True

    def expire(self, time_point: int) -> None:
        for h in [h for h in self._expiring if h < time_point]:
            for fact in self._expiring.pop(h):
                if self.h.get(fact, NEVER_EXPIRES) < time_point:
                    del self.h[fact]
                    predicate, args = fact
                    self.by_predicate[predicate].discard(args)
                    for (indexed, positions), index in self._indexes.items():
                        if indexed == predicate and len(args) > max(positions, default=-1):
                            bucket = index.get(tuple(args[i] for i in positions))
                            if bucket is not None:
                                bucket.discard(args)

    def match(self, predicate: int, pattern: tuple):
        positions = tuple(i for i, value in enumerate(pattern) if value is not None)
        if not positions:
            return [args for args in self.by_predicate.get(predicate, ()) if len(args) == len(pattern)]
        key = (predicate, positions)
        index = self._indexes.get(key)
        if index is None:
            index = self._indexes[key] = {}
            for args in self.by_predicate.get(predicate, ()):
                if len(args) == len(pattern):
                    index.setdefault(tuple(args[i] for i in positions), set()).add(args)
        return list(index.get(tuple(pattern[i] for i in positions), ()))

    def live_terms(self):
        return (term for _, args in self.h for term in args)


def _tests_hold(rule: PositiveRule, binding: dict, numbers) -> bool:
    from ..lars.builtins import compare

    for op, left, right in rule.comparisons:
        a = binding.get(left) if isinstance(left, Var) else left
        b = binding.get(right) if isinstance(right, Var) else right
        if a is None or b is None:
            continue
        if not compare(op, a, b, numbers):
            return False
    return True


__all__ = ["Joins", "ShapeMaterializer", "ShapeReport", "supports"]
