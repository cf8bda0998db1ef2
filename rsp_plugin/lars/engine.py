"""The incremental engine: a LARS program evaluated time point after time point.

    engine = IncrementalEngine(program)
    for t in timeline:                               # every time point, data or not
        report = engine.advance_to(t, arrivals(t))   # expire, ingest, fixpoint per stratum
        report.started, report.stopped               # the change of what holds
    engine.holding()                                 # what holds now

Semantics (DESIGN.md, "Time"): at each time point t the engine computes the
least model of the rules applied at t over the data and everything derived so
far; what is derived at t stays in the stream at t (an `@T` head puts its atom
at T), so later windows see it. The output at t is the atoms derived by rules
that hold at t.

How (Laser, Alg. 1): facts carry their presence (`facts.py`); every extended
atom is a view with horizons (`views.py`); a rule fires only on a grounding new
at t (sSNE) through a plan compiled per body position (`plan.py`); strata are
evaluated bottom-up, each to a semi-naive fixpoint. A derived fact holds from
t to the smallest horizon of its body, and stays in the output until then
without being derived again.
"""

from __future__ import annotations

import gc
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Mapping

from ..core.time import NEVER_EXPIRES
from .facts import Relation
from .limits import (
    DEFAULT_MAX_DERIVATIONS,
    LimitError,
    NumericOverflow,
    TooManyDerivations,
    derivation_bound,
    too_large_a_join,
    too_many_derivations,
)
from .metric import TIMED_VIEWS, PastWindow, metric_view
from .output import Output
from .plan import RulePlan, compile_rule
from .program import (
    AT,
    BOX,
    COUNT,
    DIAMOND,
    PLAIN,
    RANGE,
    Arithmetic,
    ExtendedAtom,
    Producers,
    Program,
)
from .pruning import DEFAULT_THRESHOLD, Pruning
from .views import AtView, BoxView, CountView, DiamondView, PlainView, View

#: A fact: (predicate id, argument ids). RDF triples are (triple id, (s, p, o)).
Fact = tuple[int, tuple[int, ...]]


@dataclass
class StepReport:
    """What one call of `advance_to` did."""

    time_point: int
    started: list[Fact] = field(default_factory=list)
    stopped: list[Fact] = field(default_factory=list)
    #: Rule plans run (a rule evaluated on one delta, or in full).
    rule_evaluations: int = 0
    #: Head instances produced (duplicates included).
    derivations: int = 0
    #: Facts that were new: new atoms, or atoms that hold longer than known.
    new_facts: int = 0
    #: Formulas (body literals) of the rules evaluated: Laser2's measure of work.
    formula_evaluations: int = 0
    #: Rules switched off at this time point because they cannot fire (impossible derivations).
    rules_switched_off: int = 0
    #: Groundings that left their windows.
    expired: int = 0
    #: Data atoms received.
    arrivals: int = 0

    def __repr__(self) -> str:
        return (
            f"<StepReport t={self.time_point} started={len(self.started)} stopped={len(self.stopped)} "
            f"evaluations={self.rule_evaluations} derivations={self.derivations}>"
        )


class _Stratum:
    def __init__(self, plans: list[RulePlan]):
        self.plans = plans
        self.views: list[View] = []
        for plan in plans:
            for _, view, _ in plan.on_delta:
                if view not in self.views:
                    self.views.append(view)


class IncrementalEngine:
    """Evaluates a stratified plain LARS program incrementally.

    `semi_naive=False` switches sSNE off: every rule is then evaluated in full at
    every time point and fixpoint round (the baseline of the benchmarks).
    `pruning=False` switches off impossible-derivation pruning (`pruning.py`);
    `pruning_threshold` is the smallest BOX window it acts on. `max_derivations` bounds the
    new atoms of one time point: a program that derives without end stops with a `LimitError`
    naming the rule, as does arithmetic past the range of numbers, and a rule whose joins make
    more than `limits.derivation_bound` derivations (counted as they are made).
    `explain=True` keeps, for each new fact, its first derivation (`lars/explain.py`),
    so that `explain(fact, t)` can say why it holds at now; `explain=n` also at the n time
    points before now. Off (the default), nothing is kept.
    """

    def __init__(
        self,
        program: Program,
        *,
        semi_naive: bool = True,
        start: int | None = None,
        pruning: bool = True,
        pruning_threshold: int = DEFAULT_THRESHOLD,
        max_derivations: int = DEFAULT_MAX_DERIVATIONS,
        explain: bool | int = False,
    ):
        self.program = program
        #: New atoms one time point may derive (`limits.py`): past it, a `LimitError` names the rule.
        self.max_derivations = max_derivations
        self.terms = program.terms
        self.semi_naive = semi_naive
        self.start = start
        self.now: int | None = None
        #: (predicate, arity) -> its presence: p/1 and p/2 are two predicates, as in ASP
        self.relations: dict[tuple[int, int], Relation] = {}
        self.views: dict[tuple, View] = {}
        self._count_views: list[CountView] = []
        self._count_log: deque | None = None
        self._build_views()
        #: predicate -> the arities the program reads it with (data of other arities are nobody's)
        self._arities: dict[int, tuple[int, ...]] = {}
        for predicate, arity in self.relations:
            self._arities[predicate] = self._arities.get(predicate, ()) + (arity,)
        #: Explanations (`lars/explain.py`): what derived each new fact; None unless asked.
        self.provenance = None
        if explain:
            from .provenance import Provenance

            self.provenance = Provenance(self, keep=0 if explain is True else int(explain))
        bodies = None if self.provenance is None else self.provenance.bodies
        self.strata = [
            _Stratum([compile_rule(rule, self.views, self.terms, provenance=bodies,
                                   max_emitted=derivation_bound(max_derivations)) for rule in stratum])
            for stratum in program.strata or [program.rules]
        ]
        self._time_views = [v for v in self.views.values() if not isinstance(v, CountView)]
        for key in _diamonds_in_loops(program.rules):
            if type(self.views[key]) is DiamondView:
                self.views[key].cap()
        self._box_views = [v for v in self._time_views if isinstance(v, (BoxView, *TIMED_VIEWS))
                           or getattr(v, "capped", False)]
        self._at_relations = [r for r in self.relations.values() if r.keeps_ongoing]
        for relation in self.relations.values():
            relation.keeps_runs = not all(isinstance(v, (PlainView, DiamondView)) for v in relation.views)
        self._stored = [r for r in self.relations.values() if r.stored and r.keeps_runs]
        all_plans = [plan for stratum in self.strata for plan in stratum.plans]
        for plan in all_plans:
            for _, view in plan.positive_views + plan.negative_views:
                if view.relation is not None and plan not in view.relation.readers:
                    view.relation.readers.append(plan)
        looked_up = {id(view) for plan in all_plans for view in plan.looked_up}
        looked_up |= {id(view) for plan in all_plans for _, view in plan.negative_views}
        looked_up |= {
            id(view) for plan in all_plans if plan.every_time_point or not semi_naive for view in plan.looked_up_in_full
        }
        producers = Producers(program.rules)
        atoms = {b.view_key: b.atom for r in program.rules for b in r.body if isinstance(b, ExtendedAtom)}
        for key, view in self.views.items():
            view.stateful = (
                id(view) in looked_up
                or isinstance(view, (CountView, BoxView))
                or bool(producers.of(atoms[key]))
            )
        self.pruning = Pruning(all_plans, list(self.relations.values()), pruning_threshold) if pruning else None
        self.output = Output()
        self._t0 = 0
        self._background: list[Fact] = []

    def __repr__(self) -> str:
        return f"<IncrementalEngine rules={len(self.program.rules)} now={self.now} holding={len(self.output)}>"

    def __setstate__(self, state: dict) -> None:
        """An engine is stored whole (a checkpoint) but for its rule plans: each is compiled again from its
        rule (parsed again from its program's text, `rsp_plugin.runtime.state`), and the switching reads them again."""
        self.__dict__.update(state)
        for view in self.views.values():  # made again by the plans, in this version's form
            view.indexes = {}
        provenance = getattr(self, "provenance", None)
        if provenance is not None:  # the dictionary's numbers, as they grow (a copy was stored)
            provenance.numbers = self.terms.numbers
        for stratum in self.strata:
            for plan in stratum.plans:
                plan.compiled_again(compile_rule(plan.rule, self.views, self.terms,
                                                 provenance=None if provenance is None else provenance.bodies,
                                                 max_emitted=derivation_bound(self.max_derivations)))
        if self.pruning is not None:
            self.pruning.link()

    # set-up --------------------------------------------------------------------------

    def relation(self, predicate: int, arity: int) -> Relation:
        found = self.relations.get((predicate, arity))
        if found is None:
            found = self.relations[(predicate, arity)] = Relation(predicate)
        return found

    def _build_views(self) -> None:
        for rule in self.program.rules:
            self.relation(rule.head.predicate, len(rule.head.args))
            for literal in rule.body:
                if isinstance(literal, ExtendedAtom) and literal.view_key not in self.views:
                    self.views[literal.view_key] = self._view(literal)

    def _view(self, literal: ExtendedAtom) -> View:
        if isinstance(literal.window, PastWindow):  # DatalogMTL's past operators (metric.py)
            return metric_view(literal, self.relation)
        predicate = literal.atom.predicate
        window = literal.window
        if window is not None and window.kind == COUNT:
            view = CountView(predicate, literal.constant_filter, window.size, self.terms, literal.modality,
                             len(literal.atom.args))
            self._count_views.append(view)
            longest = max(v.size for v in self._count_views)
            self._count_log = deque(maxlen=longest)
            return view
        relation = self.relation(predicate, len(literal.atom.args))
        size = window.size if window is not None else None
        view_class = {PLAIN: PlainView, DIAMOND: DiamondView, BOX: BoxView}.get(literal.modality)
        view = AtView(relation, literal.constant_filter, size, self.terms) if view_class is None else (
            view_class(relation, literal.constant_filter, size)
        )
        needed = NEVER_EXPIRES if (literal.modality == AT and size is None) else (size or 0)
        relation.history = max(relation.history, needed)
        relation.keeps_ongoing |= literal.modality == AT
        relation.add_view(view)
        return view

    # evaluation ------------------------------------------------------------------

    def advance_to(self, time_point: int, arrivals: Iterable[Fact] = ()) -> StepReport:
        """Evaluate every time point up to `time_point`, the data `arrivals` arriving at it.

        Time points skipped since the last call are evaluated without data; the
        report then gives the net change since the last call.

        Python's cyclic garbage collector is paused meanwhile: the engine makes no
        reference cycles, and scanning its many small live tuples would make each
        time point cost more the wider the windows are.
        """
        collecting = gc.isenabled()
        if collecting:
            gc.disable()
        try:
            return self._advance(time_point, arrivals)
        finally:
            if collecting:
                gc.enable()

    def _advance(self, time_point: int, arrivals: Iterable[Fact]) -> StepReport:
        if self.now is None:
            self.now = (self.start if self.start is not None else time_point) - 1
            self._t0 = self.now + 1
            for view in self.views.values():
                view.start = self._t0
        elif time_point <= self.now:
            raise ValueError(
                f"time point {time_point} was already evaluated (now is {self.now}); "
                "time points are evaluated in increasing order"
            )
        if time_point - self.now == 1:
            return self._step(time_point, arrivals)
        before = set(self.output.facts())
        total = StepReport(time_point)
        while self.now < time_point:
            point = self.now + 1
            report = self._step(point, arrivals if point == time_point else ())
            total.rule_evaluations += report.rule_evaluations
            total.derivations += report.derivations
            total.new_facts += report.new_facts
            total.expired += report.expired
            total.arrivals += report.arrivals
            total.formula_evaluations += report.formula_evaluations
            total.rules_switched_off += report.rules_switched_off
        after = set(self.output.facts())
        total.started = [f for f in after if f not in before]
        total.stopped = [f for f in before if f not in after]
        return total

    def add_background(self, facts: Iterable[Fact]) -> None:
        """Facts that hold at every time point from the next one on and never expire (LARS's B)."""
        if self.provenance is not None:
            facts = self.provenance.given(facts)
        self._background.extend(facts)

    def holding(self) -> list[Fact]:
        """The derived facts that hold now."""
        return self.output.facts()

    def live_terms(self):
        """Every term id the engine's state still holds (the stream's runs, the views' groundings,
        the output, data waiting while asleep, the tuple-window log): what a dictionary that
        forgets (`Dictionary.retain`) must keep. The program's constants are the caller's to pin."""
        from itertools import chain

        flat = chain.from_iterable
        parts: list = [self.relations.keys()]
        for relation in self.relations.values():
            parts.append(flat(relation.runs))
            parts.append(flat(relation.ongoing))
            parts.extend(flat(batch) for _, batch in relation.buffer)
            if relation.pending:
                parts.append(flat(relation.pending))
        for view in self.views.values():
            parts.append(flat(view.horizon))
            parts.append(flat(view.delta))
        for predicate, table in self.output.until.items():
            parts.append((predicate,))
            parts.append(flat(table))
        for predicate, args in self._background:
            parts.append((predicate,))
            parts.append(args)
        if self._count_log is not None:
            for _, predicate, args in self._count_log:
                parts.append((predicate,))
                parts.append(args)
        return flat(parts)

    def holds_until(self, fact: Fact) -> int | None:
        """The last time point `fact` is known to hold (None if it does not hold now)."""
        return self.output.horizon(fact)

    def explain(self, fact: Fact, t: int | None = None) -> dict | None:
        """Why `fact` holds at `t` (default: now), as a small tree of plain data; None if it
        does not. Needs `explain=True` (`rsp_plugin/lars/explain.py`)."""
        from .explain import explain

        return explain(self, fact, self.now if t is None else t)

    def _step(self, now: int, arrivals: Iterable[Fact]) -> StepReport:
        self.now = now
        report = StepReport(now)
        for view in self._time_views:
            report.expired += view.begin(now)
        for relation in self._stored:
            relation.forget_before(now)
        for view in self._box_views:
            view.on_time(now)
        for relation in self._at_relations:
            ongoing = relation.ongoing_at(now)
            if ongoing:
                for view in relation.views:
                    if isinstance(view, AtView):
                        for args in ongoing:
                            if view.accepts(args):
                                view.on_ongoing(args, now)

        pruning = self.pruning
        if pruning is not None:
            pruning.begin(now)
        if self._background:
            for predicate, args in self._background:
                relation = self.relations.get((predicate, len(args)))
                if relation is not None and relation.history >= 0:
                    if relation.watched:
                        pruning.data_arrived(relation, args, now)
                    change = relation.learn(args, now, NEVER_EXPIRES, now)
                    if change is not None:
                        relation.spread(args, change, now)
            self._background = []
        self._ingest(now, arrivals, report)
        for stratum in self.strata:
            self._fixpoint(stratum, now, report)
        if pruning is not None:
            pruning.after(now, report)
        report.stopped = self.output.stopped_at(now)
        return report

    def _ingest(self, now: int, arrivals, report: StepReport) -> None:
        """Data of `now`: facts, or a mapping predicate -> argument tuples (columnar input:
        a sleeping relation then takes a whole batch at once)."""
        if self.provenance is not None:
            arrivals = self.provenance.arrived(now, arrivals)
        if isinstance(arrivals, Mapping):
            grouped = arrivals
        else:
            grouped = {}
            for predicate, args in arrivals:
                batch = grouped.get(predicate)
                if batch is None:
                    grouped[predicate] = [args]
                else:
                    batch.append(args)
        log = self._count_log
        if log is not None:  # tuple windows count each atom once per time point, in arrival order
            facts = dict.fromkeys((p, a) for p, batch in grouped.items() for a in batch) if isinstance(
                arrivals, Mapping) else dict.fromkeys(arrivals)
            log.extend((now, predicate, args) for predicate, args in facts)
        relations = self.relations
        arities = self._arities
        received = 0
        for predicate, batch in grouped.items():
            received += len(batch)
            read_with = arities.get(predicate)
            if read_with is None:
                continue
            for arity in read_with:
                self._ingest_relation(relations[(predicate, arity)], arity, batch, now)
        if self.pruning is not None:
            self.pruning.end_of_data(now)
        report.arrivals = received
        if log is not None:
            window = list(log)
            for view in self._count_views:
                kept = window[-view.size :]
                window_start = kept[0][0] if len(kept) >= view.size else view.start
                view.rebuild(now, kept, window_start)

    def _ingest_relation(self, relation: Relation, arity: int, batch: list, now: int) -> None:
        pending = relation.pending
        if pending is not None:  # asleep: nobody reads it now
            pending.extend(args for args in batch if len(args) == arity)
            return
        if relation.history < 0:
            return
        if not relation.keeps_runs and not relation.watched and batch:  # each view takes the batch at once
            if min(map(len, batch)) != arity or max(map(len, batch)) != arity:
                batch = [args for args in batch if len(args) == arity]
            relation.spread_data(batch, now)  # (a fact twice is held once: no need to drop repeats here)
            return
        for args in batch:
            if len(args) != arity:
                continue  # p(a) is not p(a,b): another predicate, read by nobody or by another relation
            if relation.watched:
                self.pruning.data_arrived(relation, args, now)
                if relation.dormant:
                    self.pruning.buffer(relation, args, now)
                    continue
            change = relation.learn(args, now, now, now)
            if change is not None:
                relation.spread(args, change, now)

    def _fixpoint(self, stratum: _Stratum, now: int, report: StepReport) -> None:
        """Rules of one stratum until nothing new: round 1 on everything new at `now`, then on what the last round added."""
        for view in stratum.views:
            view.recent = {}
        batches: dict[View, dict] | None = None
        bound = self.max_derivations
        while True:
            for plan in stratum.plans:
                if plan.disabled_until >= now:
                    continue
                out: list = []
                try:
                    if not self.semi_naive or (batches is None and plan.every_time_point):
                        plan.full(None, out, now)
                        report.rule_evaluations += 1
                        report.formula_evaluations += len(plan.rule.body)
                    else:
                        for _, view, fire in plan.on_delta:
                            batch = view.delta if batches is None else batches[view]
                            if batch:
                                fire(batch.items(), out, now)
                                report.rule_evaluations += 1
                                report.formula_evaluations += len(plan.rule.body)
                except NumericOverflow as overflow:
                    raise _overflow(plan.rule, overflow, now) from None
                except TooManyDerivations:  # (counted while it joined: `plan.py`)
                    raise too_large_a_join(plan.rule, bound, now) from None
                if out:
                    report.derivations += len(out)
                    self._apply(plan, out, now, report)
                    if report.new_facts > bound:
                        raise too_many_derivations(plan.rule, bound, now)
            batches = {view: view.take_recent() for view in stratum.views}
            if not any(batches.values()):
                return

    def _apply(self, plan: RulePlan, out: list, now: int, report: StepReport) -> None:
        """Put what a rule derived into the stream (and the output)."""
        if self.provenance is not None:  # keeps the first derivation of each new fact
            self.provenance.record(plan, out, now)
        predicate = plan.rule.head.predicate
        relation = self.relations[(predicate, len(plan.rule.head.args))]
        stored = relation.history >= 0
        output = self.output
        table = output.table(predicate)
        started = report.started
        if plan.head_at:
            numbers = self.terms.numbers
            for args, time_term in out:
                point = numbers[time_term]
                if type(point) is not int or point > now or point < self._t0:
                    continue  # an @T head only places atoms on the timeline so far
                if point == now:
                    output.hold(predicate, table, args, now, started)
                if stored:
                    change = relation.learn(args, point, point, now)
                    if change is not None:
                        report.new_facts += 1
                        relation.spread(args, change, now)
            return
        if not stored:  # nobody reads the head: the output only
            output.hold_all(predicate, table, out, started)
            return
        for args, horizon in out:
            old = table.get(args)
            if old is None or horizon > old:
                output.hold(predicate, table, args, horizon, started)
            if stored:
                change = relation.learn(args, now, horizon, now)
                if change is not None:
                    report.new_facts += 1
                    relation.spread(args, change, now)


def _overflow(rule, overflow: NumericOverflow, now: int) -> LimitError:
    computing = [c for c in rule.comparisons if Arithmetic in (type(c.left), type(c.right))]
    where = computing[0].location if computing and computing[0].location is not None else rule.location
    message = f"at time point {now}, {overflow} (rule '{rule.text}')"
    if where is None:
        return LimitError(message)
    return LimitError(message, where.filename, where.line, where.column)


def _diamonds_in_loops(rules) -> set[tuple]:
    """The keys of DIAMOND views whose predicate depends on the head of a rule that reads them."""
    reads: dict[tuple, set[tuple]] = {}
    for rule in rules:
        head = (rule.head.predicate, len(rule.head.args))
        for literal in rule.body:
            if isinstance(literal, ExtendedAtom):
                reads.setdefault(head, set()).add((literal.atom.predicate, len(literal.atom.args)))

    def depends(start: tuple, goal: tuple) -> bool:
        seen, todo = set(), [start]
        while todo:
            node = todo.pop()
            if node == goal:
                return True
            if node not in seen:
                seen.add(node)
                todo.extend(reads.get(node, ()))
        return False

    keys = set()
    for rule in rules:
        head = (rule.head.predicate, len(rule.head.args))
        for literal in rule.body:
            if (isinstance(literal, ExtendedAtom) and literal.modality == DIAMOND and literal.window is not None
                    and literal.window.kind == RANGE
                    and depends((literal.atom.predicate, len(literal.atom.args)), head)):
                keys.add(literal.view_key)
    return keys

