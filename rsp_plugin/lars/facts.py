"""Where the atoms of one predicate are in the stream: runs of time points.

The stream v maps each time point to a set of atoms. For one predicate, a
`Relation` stores, per argument tuple, the time points where the atom is in the
stream as sorted, disjoint, non-adjacent runs [start, end]:

    data p(a) at 3, 4, 5          runs[(a,)] == [3, 5]
    q(a) derived at 7 until 9     runs[(a,)] == [7, 9]        (a horizon: 8 and 9 are promised)
    @2 q(a) derived at 7          runs[(a,)] == [2, 2, 7, 9]

What is learned at time point `now` is either an interval [now, end] (data and
plain heads) or a single point before now (an `@T` head with T < now), so the
points a `learn` adds are always one contiguous range, which it returns with
the run they joined. Windows (`views.py`) turn that into annotations.

A relation only keeps what its widest window can still see (`history` time
points back); a predicate no rule reads keeps nothing.
"""

from __future__ import annotations

from collections import deque

from ..core.time import NEVER_EXPIRES

#: What `learn` returns when something was new: (run start, run end, first new point, last new point).
Change = tuple[int, int, int, int]


class Relation:
    """The presence of one predicate's atoms, with the views that read it.

    `runs[args]` is flat, `[start1, end1, start2, end2, ...]`: one list per atom,
    since most atoms have a single run and there are many atoms.
    """

    __slots__ = (
        "predicate", "runs", "history", "views", "ongoing", "_ending", "keeps_ongoing", "_unfiltered", "_keyed",
        "readers", "dormant", "buffer", "pending", "watched", "keeps_runs",
    )

    def __init__(self, predicate: int):
        self.predicate = predicate
        self.runs: dict[tuple, list[int]] = {}
        #: How many time points before now a window over this predicate can look (-1: none reads it).
        self.history = -1
        self.views: list = []
        #: Atoms whose latest run reaches past the time point it was learned at -> that run's end.
        self.ongoing: dict[tuple, int] = {}
        self.keeps_ongoing = False
        #: False when only PLAIN and DIAMOND windows read the predicate: they need no more than
        #: the end of what is learned, and keep the latest horizon themselves.
        self.keeps_runs = True
        self._ending: dict[int, list[tuple]] = {}
        self._unfiltered: list = []
        self._keyed: list[tuple[int, dict[int, list]]] = []
        #: The rule plans that read this predicate (through any view, `not` included).
        self.readers: list = []
        #: While every reader is switched off, data are only buffered: (time point, [args, ...]).
        self.dormant = False
        self.buffer: deque[tuple[int, list[tuple]]] = deque()
        #: Where this time point's data go while dormant (None: awake, or watched, so look closer).
        self.pending: list[tuple] | None = None
        #: A view over this predicate is watched by a cascade of switched-off rules (`pruning.py`).
        self.watched = False

    def add_view(self, view) -> None:
        """Views with constants (`?s ex:p ?o`) are found by their first constant, not by scanning."""
        self.views.append(view)
        if not view.constant_filter:
            self._unfiltered.append(view)
            return
        position, constant = view.constant_filter[0]
        for keyed_position, table in self._keyed:
            if keyed_position == position:
                table.setdefault(constant, []).append(view)
                return
        self._keyed.append((position, {constant: [view]}))

    def spread(self, args: tuple, change: Change, now: int) -> None:
        """Tell every view that reads `args` that it is present at more time points."""
        for view in self._unfiltered:
            view.on_learn(args, change, now)
        for position, table in self._keyed:
            views = table.get(args[position])
            if views is not None:
                for view in views:
                    if len(view.constant_filter) == 1 or view.accepts(args):
                        view.on_learn(args, change, now)

    def spread_data(self, batch: list[tuple], now: int) -> None:
        """`spread` of each of `batch` (repeats allowed), data of `now` in a relation that keeps no runs (what
        `learn` returns for each is (now, now, now, now)): each view takes its share at once."""
        for view in self._unfiltered:
            view.on_data(batch, now)
        if not self._keyed:
            return
        shares: dict = {}
        for position, table in self._keyed:
            find = table.get
            for args in batch:
                views = find(args[position])
                if views is not None:
                    for view in views:
                        if len(view.constant_filter) == 1 or view.accepts(args):
                            share = shares.get(view)
                            if share is None:
                                shares[view] = [args]
                            else:
                                share.append(args)
        for view, share in shares.items():
            view.on_data(share, now)

    def __repr__(self) -> str:
        return f"<Relation {self.predicate} atoms={len(self.runs)} history={self.history}>"

    @property
    def stored(self) -> bool:
        return self.history >= 0

    def learn(self, args: tuple, start: int, end: int, now: int) -> Change | None:
        """Add [start, end] to the atom's presence; None if nothing was new.

        `start == now <= end`, or `start == end < now` (a point in the past).
        """
        if end < now - self.history:
            return None
        if not self.keeps_runs:
            return start, end, start, end
        runs = self.runs.get(args)
        if runs is None:
            self.runs[args] = [start, end]
            self._note_end(args, end, now)
            return start, end, start, end
        run_start = runs[-2]
        run_end = runs[-1]
        if start >= run_start:
            if start > run_end + 1:
                runs.append(start)
                runs.append(end)
                self._note_end(args, end, now)
                return start, end, start, end
            if end <= run_end:
                return None
            runs[-1] = end
            self._note_end(args, end, now)
            return run_start, end, run_end + 1, end
        return self._learn_past_point(args, runs, start, now)

    def _learn_past_point(self, args: tuple, runs: list[int], point: int, now: int) -> Change | None:
        at = _run_at_or_before(runs, point)  # index of the start of the last run starting at or before point
        if at >= 0 and runs[at + 1] >= point:
            return None
        after = at + 2
        joins_before = at >= 0 and runs[at + 1] == point - 1
        joins_after = after < len(runs) and runs[after] == point + 1
        if joins_before and joins_after:
            runs[at + 1] = runs[after + 1]
            del runs[after : after + 2]
            merged = at
        elif joins_before:
            runs[at + 1] = point
            merged = at
            self._note_end(args, point, now)
        elif joins_after:
            runs[after] = point
            merged = after
        else:
            runs[after:after] = [point, point]
            merged = after
            self._note_end(args, point, now)
        return runs[merged], runs[merged + 1], point, point

    def _note_end(self, args: tuple, end: int, now: int) -> None:
        if self.history < NEVER_EXPIRES and end < NEVER_EXPIRES:
            due = end + self.history + 1
            ending = self._ending.get(due)
            if ending is None:
                self._ending[due] = [args]
            else:
                ending.append(args)
        if self.keeps_ongoing and end > now:
            self.ongoing[args] = end

    def run_containing(self, args: tuple, point: int) -> tuple[int, int] | None:
        runs = self.runs.get(args)
        if not runs:
            return None
        at = _run_at_or_before(runs, point)
        if at >= 0 and runs[at + 1] >= point:
            return runs[at], runs[at + 1]
        return None

    def present(self, args: tuple, point: int) -> bool:
        return self.run_containing(args, point) is not None

    def forget_before(self, now: int) -> None:
        """Drop runs that ended before any window can see them (now - history)."""
        due = self._ending.pop(now, None)
        if not due:
            return
        oldest_visible = now - self.history
        all_runs = self.runs
        for args in due:
            runs = all_runs.get(args)
            if runs is None:
                continue
            if runs[-1] < oldest_visible:
                del all_runs[args]
                continue
            keep = 0
            while runs[keep + 1] < oldest_visible:
                keep += 2
            if keep:
                del runs[:keep]

    def ongoing_at(self, now: int) -> list[tuple]:
        """Atoms present at `now` by a run learned before `now` (their point `now` is new to @T)."""
        found = []
        finished = []
        for args, end in self.ongoing.items():
            if end >= now:
                found.append(args)
            if end <= now:
                finished.append(args)
        for args in finished:
            del self.ongoing[args]
        return found


def _run_at_or_before(runs: list[int], point: int) -> int:
    """The index of the start of the last run that starts at or before `point` (-1 if none)."""
    if runs[-2] <= point:
        return len(runs) - 2
    low, high = 0, len(runs) // 2  # binary search over run starts runs[0], runs[2], ...
    while low < high:
        middle = (low + high) // 2
        if runs[2 * middle] <= point:
            low = middle + 1
        else:
            high = middle
    return 2 * low - 2
