"""What an engine keeps, when asked, to say later why a fact holds: light provenance.

`IncrementalEngine(program, explain=True)` gives the engine a `Provenance`,
fed by three small hooks (`engine.py`): the data of each time point, the
background given, and each batch a rule derived. It keeps

    records    by the time point they may be forgotten at: one per new piece of
               presence, the FIRST derivation that put the fact on time points no
               earlier derivation covered
    background fact -> the first time point it holds from (None: from the start)
    sources    fact -> [(first, last, source)]  where data atoms were read (the time points
                                                they hold at), when the caller says; nothing
                                                otherwise
    data       time point -> {fact: None}      the data atoms in arrival order, only when
                                                the program has tuple windows, or windows
                                                whose witness must be searched for (Since,
                                                an unbounded Diamondminus)

A record is `(start, end, at, batch, plan, args, a1, h1, a2, h2, ...)`: the
fact `(plan.rule.head.predicate, args)` is on the stream on [start, end]
because rule `plan.rule` fired at time point `at`
(a plain head: start == at, end its horizon; an `@T` head places it at
start == end == T <= at); (at, batch) orders records as they were made (the
derivations of one batch, one rule's firing, were all found before any was applied);
then, per positive body atom in written order, its grounding and its horizon
as the compiled rule saw them (`plan.py` emits them beside each derivation).
A derivation that adds nothing (the same fact, no later horizon than the
engine's output already has) is not kept: the cost is one dictionary lookup
per derivation and one record per new fact, appended to the list of the time
point it will be forgotten at. Looking a fact's records up is for explaining
only: an index over every kept record is made when asked, and kept until the
engine moves on.

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

from collections import deque
from collections.abc import Mapping

from ..core.time import NEVER_EXPIRES
from .program import AT, BOX, COUNT, DIAMOND, ExtendedAtom

Fact = tuple[int, tuple[int, ...]]
#: (start, end, at, batch, plan, args, grounding, horizon, grounding, horizon, ...)
Record = tuple
#: where a record's body starts
BODY = 6

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
        #: fact -> [(first, last, source)]: where data atoms were read, when the caller says
        self.sources: dict[Fact, list[tuple[int, int, object]]] = {}
        self._source_order: deque[tuple[int, Fact]] = deque()
        self.background: dict[Fact, int | None] = {}
        #: records of plain heads by the time point they are forgotten at (`forever`: never)
        self.ending: dict[int, list[Record]] = {}
        self.forever: list[Record] = []
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
        #: keep the data atoms (see the module's text)
        self.keeps_data = bool(counts) or any(
            isinstance(literal, ExtendedAtom) and getattr(literal.window, "kind", None) not in (None, COUNT, "range")
            and (literal.modality not in (DIAMOND, BOX) or literal.window.high is None)
            for rule in engine.program.rules for literal in rule.body)
        self.data_reach = max(self.need.values(), default=keep)
        #: data atoms kept
        self._counted = 0
        #: fact -> records, made when an explanation asks (None: to be made again)
        self._index: dict[Fact, list[Record]] | None = None

    def __repr__(self) -> str:
        records = sum(len(bucket) for bucket in self.ending.values()) + len(self.forever)
        return f"<Provenance records={records} sources={len(self.sources)} background={len(self.background)}>"

    # hooks (called by the engine) -------------------------------------------------------------

    def arrived(self, now: int, arrivals):
        """The data of `now`; returns them for the engine to ingest. Kept only for tuple windows
        (what else is on the stream the engine's horizons promise, see `lars.py`)."""
        self.bodies.clear()  # (left over only if a rule's evaluation failed)
        self._index = None
        self._forget(now)
        if not self.keeps_data:
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
        self._index = None
        if plan.head_at:
            self._record_placed(plan, out, now, predicate, need, batch)
            bodies.clear()
            return
        holding = self.engine.output.until.get(predicate)  # what already holds from now, until when
        ending = self.ending
        forever = need >= NEVER_EXPIRES
        seen: dict[tuple, int] = {}  # in this batch (the output learns it after)
        for (args, horizon), body in zip(out, bodies):
            if holding is not None:
                old = holding.get(args)
                if old is not None and old >= horizon:
                    continue
            old = seen.get(args)
            if old is not None and old >= horizon:
                continue
            seen[args] = horizon
            record = (now, horizon, now, batch, plan, args) + body
            if forever or horizon >= NEVER_EXPIRES:
                self.forever.append(record)
                continue
            due = horizon + need + 1
            bucket = ending.get(due)
            if bucket is None:
                ending[due] = [record]
            else:
                bucket.append(record)
        bodies.clear()

    def _record_placed(self, plan, out: list, now: int, predicate: int, need: int, batch: int) -> None:
        """An @T head's derivations: new where the head's relation (or the output, at now) did
        not have the atom at T yet. An atom placed before now on a predicate nobody reads is
        seen by nothing (not the output, not a window): it is not kept."""
        relation = self._relation(plan)
        stored = relation is not None and relation.history >= 0
        runs = stored and relation.keeps_runs
        holding = self.engine.output.until.get(predicate)
        numbers = self.numbers
        t0 = self.engine._t0
        ending = self.ending
        seen = set()
        for (args, time_term), body in zip(out, self.bodies):
            point = numbers[time_term]
            if type(point) is not int or point > now or point < t0:
                continue
            if runs:
                if relation.run_containing(args, point) is not None:
                    continue
            elif point == now:
                if holding is not None and holding.get(args, -1) >= now:  # (what stopped at now - 1 is still there)
                    continue
            elif not stored:
                continue
            key = (args, point)
            if key in seen:
                continue
            seen.add(key)
            record = (point, point, now, batch, plan, args) + body
            if need >= NEVER_EXPIRES:
                self.forever.append(record)
                continue
            due = point + need + 1
            bucket = ending.get(due)
            if bucket is None:
                ending[due] = [record]
            else:
                bucket.append(record)

    def _relation(self, plan):
        """The engine's relation of the rule's head (relations are keyed by predicate, or by
        predicate and arity), or None."""
        relations = self.engine.relations
        head = plan.rule.head
        found = relations.get((head.predicate, len(head.args)))
        return found if found is not None else relations.get(head.predicate)

    # keeping and forgetting -------------------------------------------------------------------

    def note_sources(self, point: int, sources) -> None:
        """Where the data atoms of time point `point` were read: (fact, source) pairs, a source
        being plain data (a file and line, a stream and arrival). The first source of a fact wins."""
        for fact, source in sources:
            self.note_source(point, point, fact, source)

    def note_source(self, first: int, last: int, fact: Fact, source) -> None:
        """Where the data atom `fact`, holding at the time points first..last, was read."""
        found = self.sources.get(fact)
        if found is None:
            self.sources[fact] = [(first, last, source)]
        else:
            found.append((first, last, source))
        self._source_order.append((last, fact))

    def _forget(self, now: int) -> None:
        """Drop the records and data no explanation asked at now - keep or later can reach."""
        self.ending.pop(now, None)
        reach = self.data_reach
        if reach >= NEVER_EXPIRES:
            return
        oldest = now - reach
        order, sources = self._source_order, self.sources
        while order and order[0][0] < oldest:  # (given about in time order)
            last, fact = order.popleft()
            kept = [entry for entry in sources.get(fact, ()) if entry[1] >= oldest]
            if kept:
                sources[fact] = kept
            else:
                sources.pop(fact, None)
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
        """The kept records of `fact`, in the order they were made."""
        if self._index is None:
            index: dict[Fact, list[Record]] = {}
            for bucket in (*self.ending.values(), self.forever):
                for record in bucket:
                    key = (record[4].rule.head.predicate, record[5])
                    found = index.get(key)
                    if found is None:
                        index[key] = [record]
                    else:
                        found.append(record)
            self._index = index
        return self._index.get(fact, [])

    def source(self, point: int, fact: Fact):
        """Where the data atom `fact` of `point` was read (None: not said, or not data)."""
        for first, last, source in self.sources.get(fact, ()):
            if first <= point <= last:
                return source
        return None

    def is_data(self, point: int, fact: Fact) -> bool | None:
        """Is `fact` a data atom of `point`? None when nothing tells (no data kept, no source)."""
        if self.source(point, fact) is not None:
            return True
        if self.keeps_data:
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
