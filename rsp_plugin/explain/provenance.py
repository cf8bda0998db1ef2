"""What an engine keeps, when asked, to say later why a fact holds: light provenance.

`IncrementalEngine(program, explain=True)` gives the engine a `Provenance`,
fed by three small hooks (`engine.py`): the data of each time point, the
background given, and each batch a rule derived. It keeps

    derived    predicate -> args -> record     one per new piece of presence: the FIRST
               (placed: ... -> point -> record  derivation that put the fact on time points
                for @T heads)                   no earlier derivation covered
    background fact -> the first time point it holds from (None: from the start)
    sources    time point -> {fact: source}    where data atoms were read, when the caller
                                                says (`note_sources`); nothing otherwise
    data       time point -> {fact: None}      the data atoms in arrival order, only when
                                                the program has tuple windows

A record is `(start, end, at, batch, plan, a1, h1, a2, h2, ...)`: the fact is
on the stream on [start, end] because rule `plan.rule` fired at time point `at`
(a plain head: start == at, end its horizon; an `@T` head places it at
start == end == T <= at); (at, batch) orders records as they were made (the
derivations of one batch, one rule's firing, were all found before any was applied);
then, per positive body atom in written order, its grounding and its horizon
as the compiled rule saw them (`plan.py` emits them beside each derivation).
A derivation that adds nothing (the same fact, no later horizon) is not kept:
the cost is one dictionary lookup per derivation and one record per new fact.

Data atoms need no record: what is on the stream at a time point and is not
put there by a kept record is data (or background), as the engine's horizons
promise; their sources are kept only when the caller gives them.

How long things are kept: an explanation at time point t looks at the body's
windows at t, and recursively at the windows of the facts found there. So the
records of a predicate p are kept while they may be reached from an
explanation asked at now - `keep` or later:

    need(p) = keep, or need(q) + how far back a body atom over p looks
              (its window; unbounded for an unwindowed @T; nothing for
              `@T q :- [W] @T p`, whose witness is where q is placed),
              for each rule with head q reading p

A loop through windows (`r(X) :- [RANGE 2] DIAMOND r(Y), e(Y, X)`) has no
bound: its need stops at `keep + LOOP_REACH`, and an explanation that goes
further back says it was forgotten. Sources are kept for the largest need,
data for it and for the longest tuple window (the last n data atoms, however old).

The explanation itself is made on demand from these records (`lars.py`).
"""

from __future__ import annotations

from collections.abc import Mapping

from ..lars.program import AT, COUNT, ExtendedAtom
from ..timeline import NEVER_EXPIRES

Fact = tuple[int, tuple[int, ...]]
#: (start, end, at, batch, plan, grounding, horizon, grounding, horizon, ...)
Record = tuple
#: where a record's body starts
BODY = 5

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
                # `@T h :- [W] @T p`: the witness of p is where h is placed, not further back
                same_time = literal.modality == AT and rule.head_time is not None and literal.time == rule.head_time
                edges.append((literal.atom.predicate, head, 0 if same_time else reach_of(literal)))
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
        #: what the compiled rules emit beside each derivation: its body (`plan.py`)
        self.bodies: list[tuple] = []
        #: time point -> {fact: None}: the data atoms, in arrival order (kept for tuple windows only)
        self.data: dict[int, dict[Fact, None]] = {}
        #: time point -> {fact: source}: where data atoms were read, when the caller says
        self.sources: dict[int, dict[Fact, object]] = {}
        self.background: dict[Fact, int | None] = {}
        #: plain heads: predicate -> args -> record, or a list of records (rarely more than one)
        self.derived: dict[int, dict[tuple, Record | list[Record]]] = {}
        #: @T heads: predicate -> args -> time point -> record
        self.placed: dict[int, dict[tuple, dict[int, Record]]] = {}
        #: records are ordered by (time point made at, batch): each call of `record` within a time
        #: point is one batch, whose derivations were all found before any of them was applied
        self.batch = 0
        self._batch_time = None
        self.need = needs(engine.program, keep)
        #: the longest tuple window over data: its last n atoms are kept however old
        counts = [literal.window.size for rule in engine.program.rules for literal in rule.body
                  if isinstance(literal, ExtendedAtom) and literal.window is not None
                  and getattr(literal.window, "kind", None) == COUNT]
        self.count_reach = max(counts, default=0)
        self.data_reach = max(self.need.values(), default=keep)
        #: time point -> [table, args, table, args, ...] whose records may be forgotten then
        self._ending: dict[int, list] = {}
        self._ending_placed: dict[int, list] = {}
        #: data atoms kept
        self._counted = 0

    def __repr__(self) -> str:
        plain = sum(1 if isinstance(r, tuple) else len(r) for table in self.derived.values() for r in table.values())
        placed = sum(len(points) for table in self.placed.values() for points in table.values())
        return f"<Provenance records={plain + placed} data points={len(self.data)} background={len(self.background)}>"

    # hooks (called by the engine) -------------------------------------------------------------

    def arrived(self, now: int, arrivals):
        """The data of `now`; returns them for the engine to ingest. Kept only for tuple windows
        (what else is on the stream the engine's horizons promise, see `lars.py`)."""
        self.bodies.clear()  # (left over only if a rule's evaluation failed)
        self._forget(now)
        if not self.count_reach:
            return arrivals
        if isinstance(arrivals, Mapping):
            facts = dict.fromkeys((p, a) for p, batch in arrivals.items() for a in batch)
        else:
            if not isinstance(arrivals, (list, tuple)):
                arrivals = list(arrivals)
            facts = dict.fromkeys(arrivals)
        if facts:
            self.data[now] = facts
            self._counted += len(facts)
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

    def record(self, plan, out: list, now: int) -> None:
        """Keep the first derivation of what is new in `out` (its bodies are in `self.bodies`)."""
        bodies = self.bodies
        predicate = plan.rule.head.predicate
        need = self.need.get(predicate, self.keep)
        if self._batch_time != now:
            self._batch_time, self.batch = now, 0
        self.batch = batch = self.batch + 1
        if plan.head_at:
            table = self.placed.get(predicate)
            if table is None:
                table = self.placed[predicate] = {}
            numbers = self.numbers
            t0 = self.engine._t0
            ending = None
            for (args, time_term), body in zip(out, bodies):
                point = numbers[time_term]
                if type(point) is not int or point > now or point < t0:
                    continue
                points = table.get(args)
                if points is None:
                    points = table[args] = {}
                elif point in points:
                    continue
                points[point] = (point, point, now, batch, plan) + body
                if need < NEVER_EXPIRES:
                    due = point + need + 1
                    ending = self._ending_placed.get(due)
                    if ending is None:
                        self._ending_placed[due] = [table, args]
                    else:
                        ending.append(table)
                        ending.append(args)
        else:
            table = self.derived.get(predicate)
            if table is None:
                table = self.derived[predicate] = {}
            endings = self._ending
            for (args, horizon), body in zip(out, bodies):
                found = table.get(args)
                if found is not None:
                    if found.__class__ is tuple:
                        if found[1] >= horizon:  # (every kept record starts at or before now)
                            continue
                        table[args] = [found]
                    elif any(record[1] >= horizon for record in found):
                        continue
                    table[args].append((now, horizon, now, batch, plan) + body)
                else:
                    table[args] = (now, horizon, now, batch, plan) + body
                if horizon < NEVER_EXPIRES and need < NEVER_EXPIRES:
                    due = horizon + need + 1
                    ending = endings.get(due)
                    if ending is None:
                        endings[due] = [table, args]
                    else:
                        ending.append(table)
                        ending.append(args)
        bodies.clear()

    # keeping and forgetting -------------------------------------------------------------------

    def note_sources(self, point: int, sources) -> None:
        """Where the data atoms of time point `point` were read: (fact, source) pairs, a source
        being plain data (a file and line, a stream and arrival). The first source of a fact wins."""
        bucket = self.sources.get(point)
        if bucket is None:
            bucket = self.sources[point] = {}
        for fact, source in sources:
            bucket.setdefault(fact, source)

    def _forget(self, now: int) -> None:
        """Drop the records and data no explanation asked at now - keep or later can reach."""
        due = self._ending.pop(now, None)
        if due:
            for k in range(0, len(due), 2):
                table, args = due[k], due[k + 1]
                found = table.get(args)
                if found is None:
                    continue
                if found.__class__ is tuple:
                    oldest = now - self.need.get(found[4].rule.head.predicate, self.keep)
                    if found[1] < oldest:
                        del table[args]
                    continue
                oldest = now - self.need.get(found[0][4].rule.head.predicate, self.keep)
                kept = [record for record in found if record[1] >= oldest]
                if not kept:
                    del table[args]
                else:
                    table[args] = kept[0] if len(kept) == 1 else kept
        due = self._ending_placed.pop(now, None)
        if due:
            for k in range(0, len(due), 2):
                table, args = due[k], due[k + 1]
                points = table.get(args)
                if not points:
                    continue
                for point in [p for p, record in points.items()
                              if p < now - self.need.get(record[4].rule.head.predicate, self.keep)]:
                    del points[point]
                if not points:
                    del table[args]
        reach = self.data_reach
        if reach >= NEVER_EXPIRES:
            return
        oldest = now - reach
        sources = self.sources
        while sources:
            point = next(iter(sources))
            if point >= oldest:
                break
            del sources[point]
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
        """The kept records of `fact`: plain heads' first, then @T heads'."""
        found = self.derived.get(fact[0], {}).get(fact[1])
        plain = [] if found is None else [found] if found.__class__ is tuple else list(found)
        points = self.placed.get(fact[0], {}).get(fact[1])
        return plain + list(points.values()) if points else plain

    def source(self, point: int, fact: Fact):
        """Where the data atom `fact` of `point` was read (None: not said, or not data)."""
        bucket = self.sources.get(point)
        return None if bucket is None else bucket.get(fact)

    def is_data(self, point: int, fact: Fact) -> bool | None:
        """Is `fact` a data atom of `point`? None when nothing tells (no tuple window, no source)."""
        bucket = self.sources.get(point)
        if bucket is not None and fact in bucket:
            return True
        if self.count_reach:
            bucket = self.data.get(point)
            return bucket is not None and fact in bucket
        return None

    def since(self, fact: Fact):
        """The first time point a background fact holds from (t0 if given before the start);
        None if `fact` is not background."""
        if fact not in self.background:
            return None
        since = self.background[fact]
        return self.engine._t0 if since is None else since
