"""What an engine keeps, when asked, to say later why a fact holds: light provenance.

`IncrementalEngine(program, explain=True)` gives the engine a `Provenance`,
fed by three small hooks (`engine.py`): the data of each time point, the
background given, and each batch a rule derived. It keeps

    data       time point -> {fact: source}      every data atom, in arrival order
                                                  (source: where it was read, if the caller says)
    background fact -> the first time point it holds from (None: from the start)
    derived    fact -> its records               one per new piece of presence: the FIRST
                                                  derivation that put the fact on time points
                                                  no earlier derivation covered

A record is `(start, end, at, seq, plan, body)`: the fact is in the stream on
[start, end] because rule `plan.rule` fired at time point `at` (for a plain
head start == at and end is the horizon; an `@T` head places it at
start == end == T <= at); `seq` numbers records in the order they were made;
`body` is flat, `(grounding, horizon, grounding, horizon, ...)`, one pair per
positive body atom in written order, as the compiled rule emitted it. A
derivation that adds nothing (the same fact, no later horizon) is not kept:
the cost is one dictionary lookup per derivation and one record per new fact.

How long things are kept: an explanation at time point t looks at the body's
windows at t, and recursively at the windows of the facts found there. So the
records of a predicate p are kept while they may be reached from an
explanation asked at now - `keep` or later:

    need(p) = keep, or need(q) + how far back a body atom over p looks
              (its window; unbounded for an unwindowed @T), for each rule
              with head q reading p

A loop through windows (`r(X) :- [RANGE 2] DIAMOND r(Y), e(Y, X)`) has no
bound: its need stops at `keep + LOOP_REACH`, and an explanation that goes
further back says it was forgotten. Data are kept for the largest need, and
for the longest tuple window (the last n data atoms, however old).

The explanation itself is made on demand from these records (`lars.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..lars.program import AT, COUNT, ExtendedAtom
from ..timeline import NEVER_EXPIRES

Fact = tuple[int, tuple[int, ...]]
#: (start, end, at, seq, plan, body)
Record = tuple

#: How far back (time points) records are kept beyond `keep` along a loop through windows.
LOOP_REACH = 64


def reach_of(literal: ExtendedAtom) -> int:
    """How many time points before the time it is evaluated at a body atom looks (COUNT: 0,
    its data are kept by count instead)."""
    window = literal.window
    if window is None:
        return NEVER_EXPIRES if literal.modality == AT else 0
    if getattr(window, "kind", None) == COUNT:
        return 0
    return window.size


def needs(program, keep: int) -> dict[int, int]:
    """need(p) for every predicate the program mentions (see the module's text)."""
    predicates = set()
    edges = []  # (body predicate, head predicate, reach)
    for rule in program.rules:
        head = rule.head.predicate
        predicates.add(head)
        for literal in rule.body:
            if isinstance(literal, ExtendedAtom):
                predicates.add(literal.atom.predicate)
                edges.append((literal.atom.predicate, head, reach_of(literal)))
    finite = sum(reach for _, _, reach in edges if reach < NEVER_EXPIRES)
    #: no path without a loop goes further back than every window together
    limit = min(NEVER_EXPIRES, keep + finite + LOOP_REACH)
    need = {p: keep for p in predicates}

    def spread(clamp: int) -> set[int]:
        changed: set[int] = set()
        for body, head, reach in edges:
            wanted = need[head] + reach
            wanted = NEVER_EXPIRES if wanted >= NEVER_EXPIRES else min(wanted, clamp)
            if wanted > need[body]:
                need[body] = wanted
                changed.add(body)
        return changed

    for _ in range(len(predicates) + 1):
        looping = spread(NEVER_EXPIRES)
        if not looping:
            return need
    for predicate in looping:  # still growing after every path was walked: a loop through windows
        need[predicate] = max(need[predicate] if need[predicate] >= NEVER_EXPIRES else 0, limit)
    for _ in range(len(predicates) + 1):
        if not spread(limit):
            break
    return need


class Provenance:
    """The records of one engine (see the module's text). `keep`: how many time points
    before now an explanation may still be asked for (0: at now only)."""

    def __init__(self, engine, keep: int = 0):
        self.engine = engine
        self.numbers = engine.terms.numbers
        self.keep = keep
        self.data: dict[int, dict[Fact, object]] = {}
        self.background: dict[Fact, int | None] = {}
        self.derived: dict[Fact, Record | list[Record]] = {}
        self.seq = 0
        self.need = needs(engine.program, keep)
        self._head_need = {}
        #: the longest tuple window over data: its last n atoms are kept however old
        counts = [literal.window.size for rule in engine.program.rules for literal in rule.body
                  if isinstance(literal, ExtendedAtom) and literal.window is not None
                  and getattr(literal.window, "kind", None) == COUNT]
        self.count_reach = max(counts, default=0)
        self.data_reach = max(self.need.values(), default=keep)
        self._ending: dict[int, list[Fact]] = {}
        #: data atoms kept
        self._counted = 0

    def __repr__(self) -> str:
        return (f"<Provenance records={sum(1 if isinstance(r, tuple) else len(r) for r in self.derived.values())} "
                f"data points={len(self.data)} background={len(self.background)}>")

    # hooks (called by the engine) -------------------------------------------------------------

    def arrived(self, now: int, arrivals):
        """The data of `now`; returns them for the engine to ingest (iterated once here)."""
        if isinstance(arrivals, Mapping):
            facts = dict.fromkeys((p, a) for p, batch in arrivals.items() for a in batch)
        else:
            if not isinstance(arrivals, (list, tuple)):
                arrivals = list(arrivals)
            facts = dict.fromkeys(arrivals)
        if facts:
            self.data[now] = facts
            self._counted += len(facts)
        self._forget(now)
        return arrivals

    def given(self, facts) -> list:
        """Background facts, holding from the engine's next time point on."""
        facts = list(facts)
        now = self.engine.now
        since = None if now is None else now + 1
        background = self.background
        for fact in facts:
            if fact not in background:
                background[fact] = since
        return facts

    def record(self, plan, out: list, now: int) -> list:
        """Keep the first derivation of what is new in `out`; `out` without the bodies."""
        predicate = plan.rule.head.predicate
        derived = self.derived
        need = self._head_need.get(predicate)
        if need is None:
            need = self._head_need[predicate] = self.need.get(predicate, self.keep)
        stripped = []
        keep = stripped.append
        if plan.head_at:
            numbers = self.numbers
            t0 = self.engine._t0
            for args, time_term, body in out:
                keep((args, time_term))
                point = numbers[time_term]
                if type(point) is not int or point > now or point < t0:
                    continue
                fact = (predicate, args)
                found = derived.get(fact)
                if found is not None and _covers(found, point, point):
                    continue
                self.seq += 1
                self._add(fact, found, (point, point, now, self.seq, plan, body), need, now)
            return stripped
        for args, horizon, body in out:
            keep((args, horizon))
            fact = (predicate, args)
            found = derived.get(fact)
            if found is None:
                self.seq += 1
                derived[fact] = (now, horizon, now, self.seq, plan, body)
                self._note_end(fact, horizon, need)
            elif not _covers(found, now, horizon):
                self.seq += 1
                self._add(fact, found, (now, horizon, now, self.seq, plan, body), need, now)
        return stripped

    # keeping and forgetting -------------------------------------------------------------------

    def note_source(self, point: int, fact: Fact, source) -> None:
        """Where the data atom `fact` of time point `point` was read (a file and line, an arrival)."""
        bucket = self.data.get(point)
        if bucket is not None and fact in bucket and bucket[fact] is None:
            bucket[fact] = source

    def _add(self, fact: Fact, found, record: Record, need: int, now: int) -> None:
        if found is None:
            self.derived[fact] = record
        elif isinstance(found, list):
            found.append(record)
        else:
            self.derived[fact] = [found, record]
        self._note_end(fact, record[1], need)

    def _note_end(self, fact: Fact, end: int, need: int) -> None:
        if end >= NEVER_EXPIRES or need >= NEVER_EXPIRES:
            return
        due = end + need + 1
        bucket = self._ending.get(due)
        if bucket is None:
            self._ending[due] = [fact]
        else:
            bucket.append(fact)

    def _forget(self, now: int) -> None:
        """Drop the records and data no explanation asked at now - keep or later can reach."""
        due = self._ending.pop(now, None)
        if due:
            derived = self.derived
            for fact in due:
                found = derived.get(fact)
                if found is None:
                    continue
                need = self.need.get(fact[0], self.keep)
                oldest = now - need
                if isinstance(found, tuple):
                    if found[1] < oldest:
                        del derived[fact]
                    continue
                kept = [record for record in found if record[1] >= oldest]
                if not kept:
                    del derived[fact]
                else:
                    derived[fact] = kept[0] if len(kept) == 1 else kept
        reach = self.data_reach
        if reach >= NEVER_EXPIRES:
            return
        oldest = now - reach
        data = self.data
        while data:  # points come in increasing order: the oldest is first
            point = next(iter(data))
            if point >= oldest:
                break
            size = len(data[point])
            if self.count_reach and self._counted - size < self.count_reach:
                break  # a tuple window may still show them
            del data[point]
            self._counted -= size

    # questions (asked by `lars.py`) -----------------------------------------------------------

    def records(self, fact: Fact) -> list[Record]:
        found = self.derived.get(fact)
        if found is None:
            return []
        return [found] if isinstance(found, tuple) else found

    def source(self, point: int, fact: Fact):
        bucket = self.data.get(point)
        return None if bucket is None else bucket.get(fact)

    def is_data(self, point: int, fact: Fact) -> bool:
        bucket = self.data.get(point)
        return bucket is not None and fact in bucket

    def since(self, fact: Fact):
        """The first time point a background fact holds from (t0 if given before the start);
        None if `fact` is not background."""
        if fact not in self.background:
            return None
        since = self.background[fact]
        return self.engine._t0 if since is None else since


def _covers(found, start: int, end: int) -> bool:
    """Does one kept record already put the fact on every point of [start, end]?"""
    if isinstance(found, tuple):
        return found[0] <= start and found[1] >= end
    for record in found:
        if record[0] <= start and record[1] >= end:
            return True
    return False
