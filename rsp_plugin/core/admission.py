"""Admission: which stream elements are taken, and why the others are set aside, written once.

Every way in (the query engine's `push` and `push_columns`, `reason`'s replays
line by line and a block at a time, DatalogMTL's intervals, the Spark driver)
judges an element by the same rules, in this order, against the stream's time
(the latest timestamp taken and, for the query engine, the watermark):

1. before t0, the start of the timeline: refused;
2. too far ahead of the stream's time (more than the gap bound, `--max-gap`):
   set aside, since every window or time point in between would be reported;
3. late: in a stream read in time order (`in_order`, `reason`), older than
   the latest taken; in the query engine, older than the watermark with no
   window still to be reported that would hold it (`still_open`);
4. too far behind the stream's time (the query engine: taken, it would move
   the start of the timeline back as far);

else taken, and the stream's time moves to it. The stream's time moves only
with what is taken: an element set aside moves nothing.

`Gate.judge` is the per-element form, `Gate.judge_many` the vectorised one
(numpy, for a block or a batch of columns): both give the same verdicts and the
same messages (tests/test_admission.py), and every message is made here.

>>> gate = Gate(t0=0, gap=Gap(3, 1000))
>>> [gate.judge(t) for t in (500, 2000, 9000, -1)]
[None, None, 'timestamp 9000 is 7000 ms ahead of the stream (max gap 3 windows of 1000 ms = 3000 ms; --max-gap); set aside', 'timestamp -1 is before the start of the timeline (0)']
>>> gate.latest
2000
>>> timeline = Gate(in_order=True, gap=Gap(10))
>>> taken, set_aside = timeline.judge_many([1, 2, 2, 1, 30, 5])
>>> taken.tolist(), set_aside
([True, True, True, False, False, True], [(3, 'time point 1 is older than time point 2 read before it; set aside'), (4, 'timestamp 30 is 28 time points ahead of the stream (max gap 10; --max-gap); set aside')])
"""

from __future__ import annotations

from dataclasses import dataclass

#: timestamps whose differences int64 always holds (those beyond are judged one by one, in Python's ints)
_EXACT = 1 << 61
#: rows judged at once by `judge_many` after a row set aside for the gap (doubled while none is)
_RUN = 4096


@dataclass(frozen=True)
class Gap:
    """How far the stream's time may jump at once: `count` (`--max-gap`) windows of `unit_ms` ms,
    or `count` time points (`unit_ms` None: `reason`'s timeline)."""

    count: int
    unit_ms: int | None = None

    @property
    def span(self) -> int:
        """The bound in the stream's own units (ms, or time points)."""
        return self.count if self.unit_ms is None else self.count * self.unit_ms

    @property
    def units(self) -> str:
        return "time points" if self.unit_ms is None else "ms"

    def __str__(self) -> str:
        if self.unit_ms is None:
            return f"max gap {self.count}"
        return f"max gap {self.count} windows of {self.unit_ms} ms = {self.span} ms"


# the messages --------------------------------------------------------------------------------------------

def before_start(t: int, t0: int) -> str:
    return f"timestamp {t} is before the start of the timeline ({t0})"


def too_far(t: int, distance: int, side: str, gap: Gap) -> str:
    """`side`: "ahead of" or "behind" the stream's time."""
    return f"timestamp {t} is {distance} {gap.units} {side} the stream ({gap}; --max-gap); set aside"


def older_than_read(t: int, latest: int) -> str:
    return f"time point {t} is older than time point {latest} read before it; set aside"


def late(t: int, watermark: int) -> str:
    return (f"late: timestamp {t} is older than every window still to be reported (watermark {watermark}); "
            f"set aside")


def starts_before_read(first: int, latest: int) -> str:
    return (f"starts at time point {first}, before time point {latest} read earlier; set aside (a stream is "
            f"read in time order)")


def interval_too_long(first: int, last: int, length: int, gap: Gap) -> str:
    return (f"the interval [{first},{last}] ends {length} {gap.units} after it starts ({gap}; --max-gap); "
            f"set aside")


def beyond_reach(what: str, t: int, reference: int, reference_name: str, gap: Gap, outcome: str) -> str:
    """The service's bound of one request (`service/live.py`): `gap` past `reference` (the watermark, or
    the first element), for an element (`outcome` "set aside") or a time a client names ("refused")."""
    return (f"{what} {t} is {t - reference} ms ahead of {reference_name} {reference} (max gap {gap.count} "
            f"windows = {gap.span} ms; --max-gap); {outcome}")


# the policy ----------------------------------------------------------------------------------------------

@dataclass
class Gate:
    """One stream's time as admission keeps it, and the rules it judges elements by (module docstring).

    `t0`: the start of the timeline (None: none); `gap`: the gap bound (None: none); `in_order`: a
    late element is one older than the latest taken (else: older than the watermark, with no window
    still open for it); `start`: what the gap is measured from before anything is taken (`--from`;
    None: the first element is not measured)."""

    t0: int | None = None
    gap: Gap | None = None
    in_order: bool = False
    start: int | None = None
    #: the latest timestamp taken (None before the first)
    latest: int | None = None
    #: every report up to this time has been made (None before the first; the query engine's)
    watermark: int | None = None

    # one element ----------------------------------------------------------------------------------------

    def judge(self, t: int, still_open: bool = True) -> str | None:
        """Take the element at `t` (None; the stream's time moves to it) or say why it is set aside.
        `still_open`: whether a window still to be reported would hold it (asked only of one older
        than the watermark)."""
        t0 = self.t0
        if t0 is not None and t < t0:
            return before_start(t, t0)
        latest = self.latest
        reference = latest if latest is not None else self.start
        if self.gap is not None and reference is not None and t > reference:
            problem = self._far(t, reference)
            if problem is not None:
                return problem
        if latest is not None and t < latest:
            if self.in_order:
                return older_than_read(t, latest)
            if self.watermark is not None and t < self.watermark and not still_open:
                return late(t, self.watermark)
            if self.gap is not None:  # (taken, it would move the start of the timeline back as far)
                problem = self._far(t, latest)
                if problem is not None:
                    return problem
        elif self.watermark is not None and t < self.watermark and not still_open and not self.in_order:
            return late(t, self.watermark)
        if latest is None or t > latest:
            self.latest = t
        return None

    def judge_interval(self, first: int, last: int) -> str | None:
        """A fact over the time points first..last (DatalogMTL) in a stream read in time order: set aside
        if it starts before the latest taken, or ends more than the gap after the stream's time or its
        own start, whichever is later; else judged by its start."""
        latest = self.latest
        if latest is not None and first < latest:
            return starts_before_read(first, latest)
        if self.gap is not None:
            reference = latest if latest is not None else self.start
            reach = first if reference is None else max(reference, first)
            if last - reach > self.gap.span:
                return interval_too_long(first, last, last - reach, self.gap)
        return self.judge(first)

    def far_from_now(self, t: int) -> str | None:
        """Why `t` is too far from the stream's time (the later of the watermark and the latest taken)
        to be taken or to move the watermark to, or None. A replay asks before it moves the watermark."""
        now = self.latest
        if self.watermark is not None and (now is None or self.watermark > now):
            now = self.watermark
        if self.gap is None or now is None:
            return None
        return self._far(t, now)

    def _far(self, t: int, reference: int) -> str | None:
        now = reference
        if self.watermark is not None and self.watermark > now:
            now = self.watermark
        distance = abs(t - now)
        if distance <= self.gap.span:
            return None
        return too_far(t, distance, "ahead of" if t > now else "behind", self.gap)

    # many elements at once ------------------------------------------------------------------------------

    def judge_many(self, times, still_open=None):
        """`judge` of each element of `times` in its order, in numpy: (a bool array, True where taken;
        [(row, why)] of the others, in row order). `still_open`: a bool array (`judge`'s, per row;
        None: all True). The stream's time moves as `judge` would move it.

        Between two rows set aside for the gap, the latest taken before each row is a running
        maximum (a row set aside otherwise is older than it, or before t0, or refused whatever the
        time: none moves it), so a run of rows is judged at once up to the first row too far; that
        row is judged alone, and the next run starts after it."""
        import numpy as np

        times = np.asarray(times, dtype=np.int64)
        count = len(times)
        taken = np.zeros(count, dtype=bool)
        set_aside: list[tuple[int, str]] = []
        known = [value for value in (self.t0, self.start, self.latest, self.watermark) if value is not None]
        if count and max([int(np.abs(times).max()), *map(abs, known)]) >= _EXACT:  # (int64 could overflow)
            for row, t in enumerate(times.tolist()):
                problem = self.judge(t, True if still_open is None else bool(still_open[row]))
                if problem is None:
                    taken[row] = True
                else:
                    set_aside.append((row, problem))
            return taken, set_aside
        start, size = 0, _RUN
        while start < count:
            stop = min(count, start + size)
            window = slice(start, stop)
            hit = self._run(times[window], None if still_open is None else still_open[window], taken[window],
                            set_aside, start)
            if hit is None:
                start, size = stop, 2 * size
                continue
            row = start + hit  # (too far: judged alone, by the time the rows before it left)
            set_aside.append((row, self.judge(int(times[row]), True if still_open is None else bool(still_open[row]))))
            start, size = row + 1, _RUN
        return taken, set_aside

    def _run(self, times, still_open, taken, set_aside: list, offset: int) -> int | None:
        """Judge `times` up to the first row set aside for the gap (returned, or None: none is); the
        rows before it are marked in `taken` or appended to `set_aside`, and the stream's time moved."""
        import numpy as np

        none = np.iinfo(np.int64).min
        refused = np.zeros(len(times), dtype=bool)  # set aside whatever the stream's time
        if self.t0 is not None:
            before = times < self.t0
            refused |= before
        else:
            before = None
        watermark = self.watermark
        unheld = None
        if not self.in_order and watermark is not None and still_open is not None:
            unheld = (times < watermark) & ~np.asarray(still_open, dtype=bool)
            refused |= unheld
        moving = np.where(refused, none, times)
        latest = np.maximum.accumulate(np.concatenate(([none if self.latest is None else self.latest], moving)))
        prior = latest[:-1]  # the latest taken before each row
        has_latest = prior != none
        older = has_latest & (times < prior)
        late_rows = older if self.in_order else (unheld if unheld is not None else np.zeros(len(times), dtype=bool))
        stop = len(times)
        if self.gap is not None:
            measured = has_latest if self.start is None else np.ones(len(times), dtype=bool)
            reference = np.where(has_latest, prior, times if self.start is None else self.start)
            now = reference if watermark is None else np.maximum(reference, watermark)
            far = np.abs(times - now) > self.gap.span
            ahead = measured & (times > reference) & far
            behind = older & far & ~late_rows
            hits = ahead | behind
            if before is not None:
                hits &= ~before
            found = np.flatnonzero(hits)
            if len(found):
                stop = int(found[0])
        if before is not None:
            kept = ~before[:stop] & ~late_rows[:stop]
        else:
            kept = ~late_rows[:stop]
        taken[:stop] = kept
        if not kept.all():
            for row in np.flatnonzero(~kept).tolist():
                t = int(times[row])
                if before is not None and before[row]:
                    why = before_start(t, self.t0)
                elif self.in_order:
                    why = older_than_read(t, int(prior[row]))
                else:
                    why = late(t, watermark)
                set_aside.append((offset + row, why))
        if stop and int(latest[stop]) != none:
            self.latest = int(latest[stop])
        return stop if stop < len(times) else None


__all__ = ["Gap", "Gate", "before_start", "too_far", "older_than_read", "late", "starts_before_read",
           "interval_too_long", "beyond_reach"]
