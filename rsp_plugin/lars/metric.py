"""Metric windows over the past: DatalogMTL's operators as views of the one engine.

DatalogMTL (`rsp_plugin.mtl`) looks at distances before now. On the integer
timeline, at time point t:

    Diamondminus[a, b] p    some point of [t - b, t - a] has p
    Boxminus[a, b] p        every point of [t - b, t - a] has p
    q Since[a, b] p         p at some t' in [t - b, t - a], and q at every point strictly between t' and t

A `PastWindow(low=a, high=b)` is such a window (`high=None`: no bound). It is
a bound on the same annotations as LARS windows: the presence of an atom is
a set of runs [S, E] (`facts.py`), and a run makes

    Diamondminus[a, b]  hold on [S + a, E + b]     (Diamondminus[0, n] is [RANGE n] DIAMOND)
    Boxminus[a, b]      hold on [S + b, E + a]     (if the run is long enough)

so a grounding holds from its start, with the end of that interval as its
horizon. When a > 0 (or for a box, b > 0) the start may lie ahead of the time
point that learned the run: the view keeps it in `scheduled` and starts it then.
This is also how facts are placed in the future: a `Boxplus[a, b]` head is
rewritten (`lars/metric_lower.py`) into an auxiliary head read through
`Diamondminus[a, b]`, so its atoms start at t + a, when the schedule says so.

A relation keeps what the widest window over it can still see (`history`,
the paper's t_Pi): the memory bound is the engine's ordinary expiration.

Unlike `[RANGE n] BOX`, which LARS clips at the start of the timeline,
`Boxminus` never clips: nothing holds before the stream starts.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar

from ..core.time import NEVER_EXPIRES
from .program import BOX, DIAMOND, ExtendedAtom
from .views import View

PAST = "past"
#: The modality of `q Since[a, b] p`: the extended atom is p's, the window carries q.
SINCE = "since"


@dataclass(frozen=True)
class PastWindow:
    """The distances [low, high] before now (`high` None: unbounded).

    For `Since`, `left` is the left operand: its predicate and, per argument,
    `(0, i)` (the i-th argument of the right operand) or `(1, constant)`.
    """

    low: int
    high: int | None
    left: tuple | None = None
    kind: ClassVar[str] = PAST

    @property
    def size(self) -> int:
        """How far back the window looks (what a relation must keep)."""
        return NEVER_EXPIRES if self.high is None else self.high

    def __str__(self) -> str:
        return f"[{self.low},{'inf' if self.high is None else self.high}]"


def _reach(end: int, high: int | None) -> int:
    return NEVER_EXPIRES if high is None else min(end + high, NEVER_EXPIRES)


class _Scheduled(View):
    """A view that finds, for a grounding, the interval it holds on around now, and acts on it:

    - starting later: it is kept in `scheduled` and looked at again then;
    - holding now: it holds until the interval's end, but promises at most
      `reach` time points ahead. A longer promise is cut and looked at again
      when it runs out. Recursion through these windows (`p :- Diamondminus[1,1] q`,
      `q :- Diamondminus[1,1] p` with q present at two consecutive points)
      makes presence grow without end; each time point then adds a bounded
      amount, and the fixpoint of a time point ends.
    """

    def __init__(self, relation, constant_filter, window: PastWindow):
        super().__init__(relation, constant_filter, window.size)
        self.low = window.low
        self.high = window.high
        #: How far ahead a horizon may be promised.
        self.reach = 2 * (window.high if window.high is not None else window.low) + 16
        #: time point -> groundings to look at again then (a dict: one entry per grounding)
        self.scheduled: dict[int, dict[tuple, None]] = {}

    def schedule(self, point: int, args: tuple) -> None:
        bucket = self.scheduled.get(point)
        if bucket is None:
            self.scheduled[point] = {args: None}
        else:
            bucket[args] = None

    def announce(self, args: tuple, horizon: int, now: int) -> None:
        """`args` holds from now until `horizon` (promised up to `reach` ahead, then renewed)."""
        if horizon >= NEVER_EXPIRES:  # what never ends stays there (NEVER_EXPIRES + a is still never)
            horizon = NEVER_EXPIRES
        elif horizon > now + self.reach:
            horizon = now + self.reach
            self.schedule(horizon, args)
        self.hold(args, horizon)

    def act(self, args: tuple, intervals, now: int) -> None:
        """Hold or schedule `args` by the first of its intervals (start, end) that does not end before now."""
        for start, end in intervals:
            if end < now:
                continue
            if start <= now:
                self.announce(args, end, now)
            else:
                self.schedule(start, args)
            return

    def on_time(self, now):
        due = self.scheduled.pop(now, None)
        if due:
            for args in due:
                self.recompute(args, now)

    def recompute(self, args: tuple, now: int) -> None:
        raise NotImplementedError

    def pending(self) -> int:
        """Groundings waiting to be looked at again (memory the view holds beyond `horizon`)."""
        return sum(len(bucket) for bucket in self.scheduled.values())


class PastDiamondView(_Scheduled):
    """`Diamondminus[a, b] p`: a run [S, E] of p makes it hold on [S + a, E + b]."""

    modality = DIAMOND

    def on_learn(self, args, change, now):
        high = self.high
        horizon = NEVER_EXPIRES if high is None else change[1] + high
        if horizon < now:
            return
        start = change[0] + self.low
        if start <= now:
            self.announce(args, horizon, now)
        else:
            self.schedule(start, args)

    def recompute(self, args, now):
        runs = self.relation.runs.get(args)
        if not runs:
            return
        low, high = self.low, self.high
        if len(runs) == 2:  # one run: one interval
            self.act(args, ((runs[0] + low, _reach(runs[1], high)),), now)
            return
        # runs are sorted and apart, so their intervals come sorted by start
        self.act(args, _merged([(runs[i] + low, _reach(runs[i + 1], high)) for i in range(0, len(runs), 2)],
                               presorted=True), now)


class PastBoxView(_Scheduled):
    """`Boxminus[a, b] p` (b finite): a run [S, E] of p makes it hold on [S + b, E + a]."""

    modality = BOX

    def on_learn(self, args, change, now):
        end = change[1] + self.low
        start = change[0] + self.high
        if end < now or start > end:
            return
        if start <= now:
            self.announce(args, end, now)
        else:
            self.schedule(start, args)

    def recompute(self, args, now):
        run = self.relation.run_containing(args, now - self.high)
        if run is not None and run[1] + self.low >= now:
            self.announce(args, run[1] + self.low, now)


def _merged(intervals, presorted: bool = False) -> list[tuple[int, int]]:
    """Sorted, with overlapping or adjacent intervals joined."""
    merged: list[tuple[int, int]] = []
    for start, end in (intervals if presorted else sorted(intervals)):
        if merged and start <= merged[-1][1] + 1:
            if end > merged[-1][1]:
                merged[-1] = (merged[-1][0], end)
        else:
            merged.append((start, end))
    return merged


class SinceView(_Scheduled):
    """`q Since[a, b] p`, q's variables among p's: groundings are p's arguments.

    It holds at t for p(g) if p(g) is present at some t' with t - t' in [a, b]
    and q(proj(g)) at every point of (t', t). From what is known of both
    atoms' runs (`since_intervals`) the view finds the intervals where that is
    so from now on: it holds the one that contains now until its end, and
    schedules the start of the next. Whatever either atom learns later makes
    it look again.
    """

    modality = SINCE

    def __init__(self, relation, constant_filter, window: PastWindow, left_relation):
        super().__init__(relation, constant_filter, window)
        self.left_relation = left_relation
        _, projection = window.left
        self.projection = projection
        #: q's arguments -> the groundings g of p whose q they are (those p may still witness)
        self.users: dict[tuple, dict[tuple, None]] = {}
        self._forgetting: dict[int, list[tuple]] = {}
        self.left_port = _SinceLeft(self, tuple((i, c) for i, (kind, c) in enumerate(projection) if kind == 1))

    def left_of(self, args: tuple) -> tuple:
        return tuple(args[value] if kind == 0 else value for kind, value in self.projection)

    def on_learn(self, args, change, now):
        left = self.left_of(args)
        users = self.users.get(left)
        if users is None:
            self.users[left] = {args: None}
        else:
            users[args] = None
        if self.high is not None:
            due = max(change[1] + self.high + 1, now + 1)
            bucket = self._forgetting.get(due)
            if bucket is None:
                self._forgetting[due] = [args]
            else:
                bucket.append(args)
        self.recompute(args, now)

    def on_left(self, left: tuple, now: int) -> None:
        users = self.users.get(left)
        if users:
            for args in list(users):
                self.recompute(args, now)

    def on_time(self, now):
        super().on_time(now)
        gone = self._forgetting.pop(now, None)
        if gone:
            runs_of = self.relation.runs
            for args in gone:
                runs = runs_of.get(args)
                if runs is None or runs[-1] + self.high < now:
                    left = self.left_of(args)
                    users = self.users.get(left)
                    if users is not None:
                        users.pop(args, None)
                        if not users:
                            del self.users[left]

    def recompute(self, args: tuple, now: int) -> None:
        right = self.relation.runs.get(args)
        if not right:
            return
        left = self.left_relation.runs.get(self.left_of(args))
        intervals = since_intervals(right, left or (), self.low, self.high, now)
        self.act(args, intervals, now)
        if len(intervals) > 1 and intervals[0][0] <= now:
            self.schedule(intervals[1][0], args)

    def pending(self) -> int:
        return super().pending() + sum(len(users) for users in self.users.values())


class _SinceLeft:
    """Where a Since view hears about its left operand: registered with q's relation."""

    def __init__(self, view: SinceView, constant_filter: tuple):
        self.view = view
        self.constant_filter = constant_filter

    def accepts(self, args: tuple) -> bool:
        for position, constant in self.constant_filter:
            if args[position] != constant:
                return False
        return True

    def on_learn(self, args, change, now):
        self.view.on_left(args, now)


def since_intervals(right: list[int], left, low: int, high: int | None, first: int) -> list[tuple[int, int]]:
    """The maximal intervals [s, e] with e >= `first` where `q Since[low, high] p` holds.

    `right` and `left` are the runs of p and q (flat `[S1, E1, S2, E2, ...]`).
    A witness t' of p holds the Since on [t' + low, min(t' + high, c)], c being
    t' + 1 when q is absent at t' + 1 and E + 1 when q's run [S, E] covers it:
    per run of p this is a few intervals, one per run of q it meets.

    >>> since_intervals([2, 2], [3, 6], 2, 10, 0)   # p at 2, q on 3..6: holds on 4..7
    [(4, 7)]
    >>> since_intervals([2, 2], [], 0, 3, 0)         # nothing between: only at 2 and 3
    [(2, 3)]
    """
    found: list[tuple[int, int]] = []
    add = found.append
    count = len(left)
    for i in range(0, len(right), 2):
        s2, e2 = right[i], right[i + 1]
        if high is not None and e2 + high < first:
            continue
        cursor = s2  # the next witness t' not yet classified
        for j in range(0, count, 2):
            s1, e1 = left[j], left[j + 1]
            if e1 < s2 or s1 > e2 + 1:
                continue
            u = s1 - 1 if s1 - 1 > cursor else cursor
            v = e1 - 1 if e1 - 1 < e2 else e2
            if u > v:
                continue
            if cursor < u:
                _uncovered(cursor, u - 1, low, high, add)
            last = v if v < e1 + 1 - low else e1 + 1 - low
            if u <= last:
                end = e1 + 1 if high is None or last + high > e1 + 1 else last + high
                add((u + low, end))
            cursor = v + 1
        if cursor <= e2:
            _uncovered(cursor, e2, low, high, add)
    if not found:
        return found
    return [(s, e) for s, e in _merged(found) if e >= first]


def _uncovered(u: int, v: int, low: int, high: int | None, add) -> None:
    """Witnesses t' in [u, v] with q absent at t' + 1: only t' + low .. t' + 1 can hold."""
    if low == 0:
        add((u, v if high == 0 else v + 1))
    elif low == 1:
        add((u + 1, v + 1))


#: The view classes that start groundings at scheduled time points (the engine calls `on_time`).
TIMED_VIEWS = (PastDiamondView, PastBoxView, SinceView)


def metric_view(literal: ExtendedAtom, relation_of) -> View:
    """The view of an extended atom with a `PastWindow`; `relation_of(predicate, arity)` gives relations."""
    window: PastWindow = literal.window
    relation = relation_of(literal.atom.predicate, len(literal.atom.args))
    constants = literal.constant_filter
    if literal.modality == SINCE:
        left_predicate, projection = window.left
        left_relation = relation_of(left_predicate, len(projection))
        view = SinceView(relation, constants, window, left_relation)
        left_relation.history = max(left_relation.history, window.size, 1)
        left_relation.add_view(view.left_port)
    elif literal.modality == BOX:
        if window.high is None:
            raise ValueError("Boxminus needs a bounded interval")
        view = PastBoxView(relation, constants, window)
    else:
        view = PastDiamondView(relation, constants, window)
    needed = window.size if literal.modality != DIAMOND or window.high is not None else max(window.low, 1)
    relation.history = max(relation.history, needed, 1)
    relation.add_view(view)
    return view
