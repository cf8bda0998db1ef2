"""Impossible derivations (Laser2): switch off rules that cannot fire for a while.

If after time point t no atom matching `p(..)` holds at t, a rule with
`[RANGE x] BOX p(..)` in its body cannot fire at any u in (t, t + x]: each of
those windows contains t. The rule is switched off until t + x (`disabled_until`),
and switched on again by itself when the time is up. Several BOX atoms, or a
later absence, keep the latest time.

It cascades: when every rule that derives atoms matching a body atom `q(..)` of
another rule is off until G, and no such atom holds beyond now (a horizon still
ahead would let the reader fire from facts derived earlier), then `q(..)` is
absent on (now, G]: a rule reading it plainly is off until G, one reading it
under `[RANGE y] BOX` until G + y, recursively. Rules reading it under DIAMOND
or @ can still fire from older atoms in their window, and `not q` becomes true,
so those rules stay on. A data atom of such a predicate (which the cascade
assumed only rules produce) switches the cascaded rules back on at once.

While every rule reading a predicate is off, its data are only buffered, not
indexed (the relation is *dormant*); the first rule to wake replays them. This
is where the time is saved: most of the cost of a stream is ingesting it.

Predicates that an `@T` head may place in the past are never used to switch
rules off: a later time point could fill the gap. Pruning only skips work; the
differential tests check that outputs are those of the unpruned engine.
"""

from __future__ import annotations

from ..core.time import NEVER_EXPIRES
from .program import BOX, PLAIN, RANGE, Producers, may_unify

#: Below this window size, a BOX absence is not worth acting on (measured: `rsp-plugin bench pruning`).
DEFAULT_THRESHOLD = 1


class Pruning:
    """Rule switching for one engine: which rules are off until when, and which relations sleep."""

    def __init__(self, plans: list, relations: list, threshold: int = DEFAULT_THRESHOLD):
        self.plans = plans
        self.threshold = threshold
        #: relations that may sleep while all their readers are off
        self.sleepers = [r for r in relations if r.readers and r.history >= 0]
        self.cascaded: list = []
        self.link()

    def __getstate__(self) -> dict:
        """What switching learnt; what it reads of the rules is linked again (`link`) once they are compiled."""
        return {"plans": self.plans, "threshold": self.threshold, "sleepers": self.sleepers,
                "cascaded": self.cascaded}

    def link(self) -> None:
        """Read the plans: the BOX atoms that switch rules off, and who reads whose heads."""
        plans, threshold = self.plans, self.threshold
        at_heads = [plan.rule.head for plan in plans if plan.rule.head_time is not None]
        #: (view, window size, plans with that BOX atom)
        self.triggers: list[tuple[object, int, list]] = []
        by_view: dict[int, tuple[object, int, list]] = {}
        for plan in plans:
            for literal, view in plan.positive_views:
                if literal.modality != BOX or literal.window is None or literal.window.kind != RANGE:
                    continue
                if literal.window.size < threshold or any(may_unify(h, literal.atom) for h in at_heads):
                    continue
                if id(view) not in by_view:
                    by_view[id(view)] = (view, literal.window.size, [])
                    self.triggers.append(by_view[id(view)])
                by_view[id(view)][2].append(plan)
        # producer.head_readers: [(reader plan, its literal, view, all producers of that literal)]
        heads = Producers([plan.rule for plan in plans])
        for plan in plans:
            plan.head_readers = []
            plan.quiet_sources = []
        for reader in plans:
            for literal, view in reader.positive_views:
                if literal.modality not in (PLAIN, BOX) or (literal.window and literal.window.kind != RANGE):
                    continue
                producers = [plans[i] for i in heads.of(literal.atom)]
                reader.quiet_sources.append((literal, view, producers))
                for producer in producers:
                    producer.head_readers.append((reader, literal, view, producers))

    def begin(self, now: int) -> None:
        """Put to sleep the relations nobody reads at `now`, wake the others (replaying their buffer)."""
        if self.cascaded:
            self._renew(now)
        for relation in self.sleepers:
            asleep = all(plan.disabled_until >= now for plan in relation.readers)
            if asleep:
                relation.dormant = True
                if relation.history < NEVER_EXPIRES:
                    buffer = relation.buffer
                    oldest = now - relation.history
                    while buffer and buffer[0][0] < oldest:
                        buffer.popleft()
                if relation.watched:
                    _flush(relation, now)
                    relation.pending = None
                elif relation.pending is None:
                    relation.pending = []
            elif relation.dormant:
                relation.dormant = False
                _flush(relation, now)
                relation.pending = None
                _replay(relation, now)

    def end_of_data(self, now: int) -> None:
        """The data of `now` are in: file what the sleeping relations received."""
        for relation in self.sleepers:
            if relation.dormant:
                _flush(relation, now)

    @staticmethod
    def buffer(relation, args: tuple, now: int) -> None:
        """A data atom for a sleeping relation that is also watched (the slow path)."""
        buffer = relation.buffer
        if buffer and buffer[-1][0] == now:
            buffer[-1][1].append(args)
        else:
            buffer.append((now, [args]))

    def after(self, now: int, report) -> None:
        """After time point `now`: switch off what cannot fire."""
        for view, size, plans in self.triggers:
            if view.present_at(now):
                continue
            until = now + size
            for plan in plans:
                if plan.trigger_until < until:
                    plan.trigger_until = until
                if plan.disabled_until < until:
                    was_on = plan.disabled_until < now
                    plan.disabled_until = until
                    if was_on:  # extending a rule already off does not touch its readers: see _renew
                        report.rules_switched_off += 1
                        self._cascade(plan, now, report, {id(plan)})

    def _cascade(self, producer, now: int, report, chain: set[int]) -> None:
        for reader, literal, view, producers in producer.head_readers:
            if id(reader) in chain:  # a loop only extends itself: stop at one round
                continue
            quiet_until = min(p.disabled_until for p in producers)
            if quiet_until <= now or view.latest_end > now:
                continue
            until = quiet_until + (literal.window.size if literal.modality == BOX else 0)
            if reader.disabled_until < until:
                if reader.disabled_until < now:
                    report.rules_switched_off += 1
                reader.disabled_until = until
                self.cascaded.append(reader)
                view.watched = True
                if view.relation is not None:
                    view.relation.watched = True
                self._cascade(reader, now, report, chain | {id(reader)})

    def switched_off(self, at: int) -> dict:
        """The rules that will be off at time point `at` (the next one), each with its time."""
        if self.cascaded:
            self._renew(at)
        return {plan.rule.text: plan.disabled_until for plan in self.plans if plan.disabled_until >= at}

    def _renew(self, now: int) -> None:
        """A rule a cascade switched off wakes at `now` only if what it reads may hold again:
        while its producers stay off (their time was extended meanwhile), so does it. Checked
        when it would wake, not each time a producer's time grows: a chain costs nothing per
        time point while it sleeps."""
        changed = True
        while changed:
            changed = False
            for reader in self.cascaded:
                if reader.disabled_until != now - 1:
                    continue
                for literal, view, producers in reader.quiet_sources:
                    quiet_until = min(p.disabled_until for p in producers) if producers else now - 1
                    if quiet_until < now or view.latest_end >= now:
                        continue
                    until = quiet_until + (literal.window.size if literal.modality == BOX else 0)
                    if until > reader.disabled_until:
                        reader.disabled_until = until
                        changed = True

    def data_arrived(self, relation, args: tuple, now: int) -> None:
        """A data atom for a watched relation: if a cascade assumed only rules produce it, undo the cascade."""
        if not any(view.watched and view.accepts(args) for view in relation.views):
            return
        for plan in self.cascaded:
            plan.disabled_until = plan.trigger_until
        self.cascaded = []
        for other in self.sleepers:
            other.watched = False
            for view in other.views:
                view.watched = False
        self.begin(now)


def _flush(relation, now: int) -> None:
    if relation.pending:
        relation.buffer.append((now, relation.pending))
        relation.pending = []


def _replay(relation, now: int) -> None:
    """Index what a relation buffered while it slept."""
    buffer = relation.buffer
    while buffer:
        point, batch = buffer.popleft()
        for args in batch:
            change = relation.learn(args, point, point, now)
            if change is not None:
                relation.spread(args, change, now)
