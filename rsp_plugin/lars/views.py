"""Window semantics, in one place: which groundings of an extended atom hold now, and until when.

A view serves one extended atom shape (predicate, constants, window, modality)
for every rule that uses it. It keeps the groundings that hold at the current
time point, each with its *horizon*: the last time point it is guaranteed to
hold (Laser's annotation [c, h]; the consideration time c is when the view
reported it). Each time point it reports in `delta` what is new: a grounding
that starts to hold, or one whose horizon grew. Rules only fire on something
new (sSNE), and groundings leave when `now > horizon`.

Time windows (`[RANGE n]`) at time point t hold [low, t] with
low = max(t0, t - n): n + 1 points, clipped at the start t0 of the timeline.
For an atom whose presence (see `facts.py`) has runs [S, E]:

    PLAIN        p(x)           holds while a run contains now      horizon E
    DIAMOND      [RANGE n] ◇    some point of the window            horizon (last E) + n
    BOX          [RANGE n] □    a run covers the whole window        horizon E; new when
                                                                     low reaches S (at S + n)
    AT           [RANGE n] @T   each present point T in the window  horizon T + n
    AT           @T (no window) each present point T since t0       never expires

Tuple windows (`[COUNT n]`) hold the last n data atoms of the whole stream
(all predicates, in arrival order) and the time points from the oldest of them
to now (from t0 while fewer than n arrived). Nothing about the next time point
is guaranteed (one more atom may push a grounding out), so count views are
rebuilt every time point and their groundings hold until now only.
"""

from __future__ import annotations

from collections import deque

from ..core.time import NEVER_EXPIRES
from .facts import Change, Relation
from .program import AT, BOX, DIAMOND, PLAIN


class View:
    """Groundings of one extended atom that hold now -> their horizon."""

    modality = PLAIN

    def __init__(self, relation: Relation | None, constant_filter: tuple, size: int | None):
        self.relation = relation
        self.constant_filter = constant_filter
        #: The window size n (None: no window, or an unwindowed @).
        self.size = size
        self.horizon: dict[tuple, int] = {}
        #: positions -> key -> the groundings with that key; the key of one position is the term
        #: itself (no tuple to make per grounding), of several the tuple of terms
        self.indexes: dict[tuple[int, ...], dict[object, dict[tuple, None]]] = {}
        #: What became new (or got a later horizon) at this time point, and since the last take.
        self.delta: dict[tuple, int] = {}
        self.recent: dict[tuple, int] = {}
        self._expiring: dict[int, list[tuple]] = {}
        self.start = 0  # t0, set by the engine
        #: The latest time point a matching atom is known to be present at (PLAIN and BOX views).
        self.latest_end = -1
        #: A cascade of switched-off rules assumes no data arrive for this view.
        self.watched = False
        #: False when no rule looks groundings up here (they only start joins, from the delta)
        #: and only data feed it: then nothing is kept between time points.
        self.stateful = True

    def __repr__(self) -> str:
        window = f"[{self.size}] " if self.size is not None else ""
        return f"<{type(self).__name__} {window}holding={len(self.horizon)}>"

    def accepts(self, args: tuple) -> bool:
        for position, constant in self.constant_filter:
            if args[position] != constant:
                return False
        return True

    def low(self, now: int) -> int:
        """The first time point of the window at `now`."""
        if self.size is None:
            return self.start
        return max(self.start, now - self.size)

    def index_for(self, positions: tuple[int, ...]) -> dict[tuple, dict[tuple, None]]:
        index = self.indexes.get(positions)
        if index is None:
            index = self.indexes[positions] = {}
            _index({positions: index}, list(self.horizon))
        return index

    def hold(self, args: tuple, horizon: int) -> None:
        """`args` holds until `horizon`; recorded as new unless it was already known to."""
        if not self.stateful:
            if horizon > self.delta.get(args, -1):
                self.delta[args] = horizon
                self.recent[args] = horizon
            return
        old = self.horizon.get(args)
        if old is not None:
            if horizon <= old:
                return
        elif self.indexes:
            for positions, index in self.indexes.items():
                key = args[positions[0]] if len(positions) == 1 else tuple([args[p] for p in positions])
                bucket = index.get(key)
                if bucket is None:
                    index[key] = {args: None}
                else:
                    bucket[args] = None
        self.horizon[args] = horizon
        if horizon < NEVER_EXPIRES:
            bucket = self._expiring.get(horizon)
            if bucket is None:
                self._expiring[horizon] = [args]
            else:
                bucket.append(args)
        self.delta[args] = horizon
        self.recent[args] = horizon

    def hold_all(self, batch: list[tuple], horizon: int) -> None:
        """`hold(args, horizon)` for each of `batch` (a repeat holds nothing more), one pass per structure: what
        a time point's data do to a view, with the same result (and dict orders) as one by one."""
        if not self.stateful:
            if self.delta or self.recent or horizon < 0:  # (`hold` keeps no negative horizon here)
                for args in batch:
                    self.hold(args, horizon)
            else:
                self.delta = dict.fromkeys(batch, horizon)
                self.recent = self.delta.copy()
            return
        held = self.horizon
        get = held.get
        changed = [args for args in batch if get(args, _BEFORE_ALL) < horizon]
        if not changed:
            return
        if self.indexes:
            fresh = [args for args in changed if args not in held] if held else changed
            if fresh:
                _index(self.indexes, fresh)
        now_new = dict.fromkeys(changed, horizon)
        held.update(now_new)
        if horizon < NEVER_EXPIRES:
            bucket = self._expiring.get(horizon)
            if bucket is None:
                self._expiring[horizon] = changed
            else:
                bucket += changed
        if self.delta:
            self.delta.update(now_new)
        else:
            self.delta = now_new.copy()
        if self.recent:
            self.recent.update(now_new)
        else:
            self.recent = now_new

    def _unindex(self, args: tuple) -> None:
        for positions, index in self.indexes.items():
            key = args[positions[0]] if len(positions) == 1 else tuple([args[p] for p in positions])
            bucket = index[key]
            del bucket[args]
            if not bucket:
                del index[key]

    def begin(self, now: int) -> int:
        """Start time point `now`: forget what expired; returns how many groundings left."""
        if self.delta:
            self.delta = {}
        if self.recent:
            self.recent = {}
        due = self._expiring.pop(now - 1, None)
        if not due:
            return 0
        expired = now - 1
        horizon = self.horizon
        get = horizon.get
        gone = [args for args in due if get(args) == expired]  # the others got a later horizon meanwhile
        if not gone:
            return 0
        if len(gone) > 1:
            gone = list(dict.fromkeys(gone))
        deque(map(horizon.__delitem__, gone), 0)
        if self.indexes:
            _unindex_all(self.indexes, gone)
        return len(gone)

    def take_recent(self) -> dict[tuple, int]:
        recent, self.recent = self.recent, {}
        return recent

    # Window semantics: subclasses say what a change of presence means.
    def on_learn(self, args: tuple, change: Change, now: int) -> None:
        raise NotImplementedError

    def on_data(self, batch: list[tuple], now: int) -> None:
        """`batch` (repeats allowed) arrived at `now` in a relation that keeps no runs (its change is
        (now, now, now, now) for each): `on_learn` of each, or in bulk where a subclass can."""
        change = (now, now, now, now)
        on_learn = self.on_learn
        for args in batch:
            on_learn(args, change, now)

    def on_time(self, now: int) -> None:
        """Groundings that start to hold at `now` only because time passed."""

    def present_at(self, now: int) -> bool:
        """Does some atom matching this view hold at `now`? (PLAIN and BOX views.)"""
        if self.latest_end >= now:
            return True
        relation = self.relation
        if relation is not None and relation.dormant:
            for point, batch in reversed(relation.buffer):
                if point < now:
                    break
                if batch and (not self.constant_filter or any(self.accepts(args) for args in batch)):
                    return True
        return False


class PlainView(View):
    modality = PLAIN

    def on_learn(self, args, change, now):
        run_start, run_end, _, last_new = change
        if run_end > self.latest_end:
            self.latest_end = run_end
        if last_new >= now and run_start <= now:
            self.hold(args, run_end)

    def on_data(self, batch, now):
        if now > self.latest_end:
            self.latest_end = now
        self.hold_all(batch, now)


class DiamondView(View):
    modality = DIAMOND
    #: In a loop through DIAMOND (`p :- [RANGE 1] ◇ q .  q :- [RANGE 1] ◇ p .`) the promised end of
    #: a derived atom would grow by n at every round of one fixpoint, for ever. A view in such a
    #: loop counts presence only up to now, and renews its promise at each time point (`on_time`).
    capped = False

    def cap(self) -> None:
        """Mark this view as read inside a loop through DIAMOND (the engine's set-up)."""
        self.capped = True
        #: args -> the end of presence known beyond now
        self.beyond: dict[tuple, int] = {}

    def on_learn(self, args, change, now):
        end = change[1]
        if self.capped and end > now:
            if end > self.beyond.get(args, now):
                self.beyond[args] = end
            end = now
        horizon = min(end + self.size, NEVER_EXPIRES)
        if horizon >= now:
            self.hold(args, horizon)

    def on_data(self, batch, now):
        if self.capped:
            super().on_data(batch, now)
            return
        horizon = min(now + self.size, NEVER_EXPIRES)
        if horizon >= now:
            self.hold_all(batch, horizon)

    def on_time(self, now):
        if not self.capped or not self.beyond:
            return
        beyond, size = self.beyond, self.size
        for args, end in list(beyond.items()):
            if end <= now:
                del beyond[args]
                self.hold(args, min(end + size, NEVER_EXPIRES))
            else:
                self.hold(args, now + size)


class BoxView(View):
    modality = BOX

    def __init__(self, relation, constant_filter, size):
        super().__init__(relation, constant_filter, size)
        #: time point -> atoms whose run will cover the whole window from then on
        self.scheduled: dict[int, list[tuple]] = {}

    def on_learn(self, args, change, now):
        run_start, run_end, _, _ = change
        if run_end > self.latest_end:
            self.latest_end = run_end
        if run_end < now or run_start > now:
            return
        if run_start <= self.low(now):
            self.hold(args, run_end)
        elif run_end >= run_start + self.size:
            self.scheduled.setdefault(run_start + self.size, []).append(args)

    def on_time(self, now):
        due = self.scheduled.pop(now, None)
        if not due:
            return
        low = self.low(now)
        for args in due:
            run = self.relation.run_containing(args, now)
            if run is not None and run[0] <= low:
                self.hold(args, run[1])


class AtView(View):
    """`[RANGE n] @T p(x)`: groundings are p's arguments followed by the time point T."""

    modality = AT

    def __init__(self, relation, constant_filter, size, terms):
        super().__init__(relation, constant_filter, size)
        self.terms = terms

    def on_learn(self, args, change, now):
        _, _, first_new, last_new = change
        first = max(first_new, self.low(now))
        last = min(last_new, now)
        size = self.size
        intern_int = self.terms.intern_int
        for point in range(first, last + 1):
            self.hold(args + (intern_int(point),), NEVER_EXPIRES if size is None else point + size)

    def on_ongoing(self, args: tuple, now: int) -> None:
        """`args` is present at `now` by a run learned earlier: the point `now` enters the window."""
        self.hold(args + (self.terms.intern_int(now),), NEVER_EXPIRES if self.size is None else now + self.size)


class CountView(View):
    """A view over `[COUNT n]`: rebuilt from the last n data atoms at every time point."""

    def __init__(self, predicate: int, constant_filter, size, terms, modality, arity: int):
        super().__init__(None, constant_filter, size)
        self.predicate = predicate
        self.arity = arity
        self.terms = terms
        self.modality = modality

    def rebuild(self, now: int, window: list[tuple[int, int, tuple]], window_start: int) -> None:
        """`window`: the (time point, predicate, args) of the last n data atoms, oldest first."""
        self.horizon.clear()  # plans hold these very dicts
        for index in self.indexes.values():
            index.clear()
        self._expiring.clear()
        self.delta = {}
        self.recent = {}
        predicate, arity = self.predicate, self.arity
        matching = [(t, args) for t, p, args in window if p == predicate and len(args) == arity and self.accepts(args)]
        if self.modality == DIAMOND:
            for _, args in matching:
                self.hold(args, now)
        elif self.modality == AT:
            intern_int = self.terms.intern_int
            for t, args in matching:
                self.hold(args + (intern_int(t),), now)
        elif self.modality == BOX:
            points: dict[tuple, set[int]] = {}
            for t, args in matching:
                points.setdefault(args, set()).add(t)
            span = now - window_start + 1
            for args, seen in points.items():
                if len(seen) == span:
                    self.hold(args, now)

    def begin(self, now: int) -> int:
        return 0


#: below every horizon (time points are within +-NEVER_EXPIRES)
_BEFORE_ALL = -(1 << 64)


def _index(indexes: dict, fresh: list[tuple]) -> None:
    """Add groundings new to a view to each of its indexes."""
    for positions, index in indexes.items():
        get = index.get
        if len(positions) == 1:
            (position,) = positions
            for args in fresh:
                key = args[position]
                bucket = get(key)
                if bucket is None:
                    index[key] = {args: None}
                else:
                    bucket[args] = None
        else:
            for args in fresh:
                key = tuple([args[p] for p in positions])
                bucket = get(key)
                if bucket is None:
                    index[key] = {args: None}
                else:
                    bucket[args] = None


def _unindex_all(indexes: dict, gone: list[tuple]) -> None:
    """Take groundings that left a view out of each of its indexes."""
    for positions, index in indexes.items():
        if len(positions) == 1:
            (position,) = positions
            for args in gone:
                key = args[position]
                bucket = index[key]
                del bucket[args]
                if not bucket:
                    del index[key]
        else:
            for args in gone:
                key = tuple([args[p] for p in positions])
                bucket = index[key]
                del bucket[args]
                if not bucket:
                    del index[key]
