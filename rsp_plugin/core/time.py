"""Time: durations, timestamps, the integer time points the engine runs on, and window grids.

A stream element carries a timestamp; a program (`@tick 1s`) or a query (its
STEP) says how long one tick is; the time point is floor(timestamp / tick).
Without a tick, integer timestamps are time points already and xsd:dateTime
timestamps count seconds since the Unix epoch.

Every language writes durations its own way (LARS `@tick 1s` and `[RANGE 10s]`,
C-SPARQL `10s`, RSP-QL `PT10S`, SPARQLstream `NOW-10 S`) and reads them with
`parse_duration_ms`: one written duration is one length everywhere. Every backend
(per fact, columns, Spark) places a `[RANGE r STEP s]` window on the timeline
with `WindowGrid`.

>>> parse_duration_ms("10s"), parse_duration_ms("PT1M30S"), parse_duration_ms("1m30s"), parse_duration_ms("1.5s")
(10000, 90000, 90000, 1500)
>>> time_point(12_345, tick_ms=1000), time_point(7, tick_ms=None)
(12, 7)
>>> parse_timestamp_ms("2004-08-08T06:05:00Z")
1091945100000
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from decimal import MAX_EMAX, MIN_EMIN, ROUND_HALF_EVEN, Decimal, localcontext

from .errors import clipped
from .regexes import LazyPattern

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

#: The horizon of what never expires (background knowledge, unwindowed @).
NEVER_EXPIRES = 1 << 62

#: a stream's time points are strictly within this either way (the block readers' columns hold them in
#: int64, with room for a window's bounds); `out_of_range` says why one is not
TIME_LIMIT = NEVER_EXPIRES


def out_of_range(time_point: int) -> str | None:
    """Why a stream line's time point is set aside by a reader (None: it is in range).

    >>> out_of_range(-5), out_of_range(1 << 62)
    (None, 'time point 4611686018427387904 is out of range (at most 4611686018427387903 either way)')
    """
    if -TIME_LIMIT < time_point < TIME_LIMIT:
        return None
    return f"time point {time_point} is out of range (at most {TIME_LIMIT - 1} either way)"

#: The largest duration (ms): a duration is a signed 64-bit count of milliseconds
#: everywhere time is kept (timestamps, Spark, Arrow).
MAX_DURATION_MS = (1 << 63) - 1

# durations -------------------------------------------------------------------------------------------------

_MS, _S, _MIN, _H, _D = Decimal(1), Decimal(1000), Decimal(60_000), Decimal(3_600_000), Decimal(86_400_000)

#: milliseconds per time unit, by every name a program or a query may write it (any case)
UNIT_MS: dict[str, Decimal] = {
    "ns": Decimal("0.000001"),
    "ms": _MS, "msec": _MS, "msecs": _MS, "millisecond": _MS, "milliseconds": _MS,
    "s": _S, "sec": _S, "secs": _S, "second": _S, "seconds": _S,
    "m": _MIN, "min": _MIN, "mins": _MIN, "minute": _MIN, "minutes": _MIN,
    "h": _H, "hr": _H, "hrs": _H, "hour": _H, "hours": _H,
    "d": _D, "day": _D, "days": _D,
}
_ISO_MS = {"d": _D, "h": _H, "m": _MIN, "s": _S}

#: a number as a program or a query writes one, and its unit (apart or not: `10s`, `10 S`, `1.5e3ms`)
_NUMBER = r"(?:[0-9]+(?:\.[0-9]*)?|\.[0-9]+)(?:[eE][+-]?[0-9]+)?"
_PART = re.compile(rf"\s*({_NUMBER})\s*([A-Za-z]+)")
_SHORT = re.compile(rf"([+-]?)((?:\s*{_NUMBER}\s*[A-Za-z]+)+)")
_ISO = LazyPattern(r"P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
                  r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?\Z")
#: past this many ms a duration is not read further: more than any clock counts (and its digits cost)
_TOO_LONG = Decimal(10) ** 40


class DurationError(ValueError):
    """A written duration that is not one, in the writer's words (the caller adds where it stands)."""


class DurationTooLong(DurationError):
    """A duration far longer than any clock counts (more than 10^40 ms: not computed further)."""


def parse_duration_ms(text: str, *, rounded: bool = False) -> int:
    """A written duration -> milliseconds, exactly: `90s`, `1m30s`, `1.5m`, `90000ms`, `10sec`, `2min`,
    `10 S` (a number and its unit apart, as SPARQLstream writes them; its sign too) or ISO 8601
    `PT1M30S`, `P1DT2H`. Each grammar's tokens say which of these its language writes.

    A fraction of a millisecond is a `DurationError`, unless `rounded` (a tick's length) takes the
    nearest whole one; zero and negative lengths are the caller's to refuse (each says why its own way).

    >>> {parse_duration_ms(t) for t in ("90s", "1m30s", "1.5m", "PT1M30S", "90000ms", "1.5 MINUTES")}
    {90000}
    >>> parse_duration_ms("PT0.0005S", rounded=True), parse_duration_ms("1000000ns")
    (0, 1)
    >>> parse_duration_ms("1.5ms")
    Traceback (most recent call last):
    rsp_plugin.core.time.DurationError: 1.5ms is not a whole number of milliseconds
    """
    text = text.strip()
    with localcontext() as exact:
        # every product and sum of the written digits kept whole, however small or large their exponents
        exact.prec, exact.Emax, exact.Emin = len(text) + 40, MAX_EMAX, MIN_EMIN
        short = _SHORT.fullmatch(text)
        if short:
            total = Decimal(0)
            for number, unit in _PART.findall(short.group(2)):
                scale = UNIT_MS.get(unit.lower())
                if scale is None:
                    raise DurationError(f"unknown time unit {clipped(unit)!r} in {clipped(text)} (ms, s, m, h, d)")
                total += _amount(number, scale, text)
            if short.group(1) == "-":
                total = -total
        else:
            found = _ISO.match(text.upper())
            if not found or text.upper() in ("P", "PT") or not any(found.groupdict().values()):
                raise DurationError(f"not a duration: {clipped(text)} (expected e.g. 10s, 500ms, 2m, PT10S)")
            total = sum((_amount(found.group(unit), scale, text) for unit, scale in _ISO_MS.items()
                         if found.group(unit)), Decimal(0))
        if abs(total) > _TOO_LONG:
            raise _too_long(text)
        whole = total.to_integral_value(rounding=ROUND_HALF_EVEN)
        if whole != total and not rounded:
            raise DurationError(f"{clipped(text)} is not a whole number of milliseconds")
        return int(whole)


def _amount(number: str, scale: Decimal, text: str) -> Decimal:
    value = Decimal(number)
    if value.adjusted() > 40:  # (read no further: 1e999999999 would not fit a Decimal's exponent once scaled)
        raise _too_long(text)
    return value * scale


def _too_long(text: str) -> DurationTooLong:
    return DurationTooLong(f"{clipped(text)} is longer than any clock counts (at most {MAX_DURATION_MS} ms, "
                           "292 million years)")


# timestamps and time points ----------------------------------------------------------------------------------

def parse_timestamp_ms(text: str) -> int:
    """An xsd:dateTime lexical form -> milliseconds since the epoch (UTC if no zone)."""
    value = text.strip()
    if value.endswith("Z"):
        value = value[:-1] + "+00:00"
    moment = datetime.fromisoformat(value)
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=timezone.utc)
    # exact (moment.timestamp() * 1000 is a float: "...:00.007Z" came back as 6 ms)
    return (moment - _EPOCH) // timedelta(milliseconds=1)


def time_point(timestamp: int, tick_ms: int | None) -> int:
    """The time point of an integer timestamp (ms when a tick is given)."""
    return timestamp if tick_ms is None else timestamp // tick_ms


def datetime_time_point(text: str, tick_ms: int | None) -> int:
    """The time point of an xsd:dateTime timestamp; one tick is 1 s by default."""
    return parse_timestamp_ms(text) // (tick_ms or 1000)


# window grids ------------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class WindowGrid:
    """`[RANGE r STEP s]` on the timeline that starts at t0 (DESIGN.md, "Time"): its window is reported
    at tau_k = t0 + k*s and holds the elements with max(t0, tau_k - r) <= t < tau_k - end (`end` > 0:
    a window in the past, `[FROM NOW-PT2H TO NOW-PT1H STEP PT1H]`; 0 for every other).

    Every backend asks it where its windows stand: the per-fact and column windows
    (`query.windows`, `columnar.columns`), the local engine's reports and the Spark plan.
    The methods that take a timestamp or an index use only + - * // on it, so one formula
    reads an int, a numpy column (vectorised) or a Spark SQL column expression
    (`spark.distributed.sqltext.Sql`).

    >>> grid = WindowGrid(range=2500, step=1000)
    >>> grid.k_range(600), grid.bounds(grid.instant(3))
    ((1, 3), (500, 3000))
    >>> grid.boundary_at(2999), grid.boundary_after(2999), grid.first_report(600), grid.last_report(600)
    (2000, 3000, 1000, 3000)
    """

    range: int
    step: int
    t0: int = 0
    end: int = 0

    @classmethod
    def every(cls, period: int, t0: int = 0) -> "WindowGrid":
        """The report instants of a period (a query's COMPUTE EVERY): a tumbling grid of it."""
        return cls(period, period, t0)

    # the report instants tau_k = t0 + k*s

    def instant(self, k):
        """tau_k."""
        return self.t0 + k * self.step

    def index_at(self, t):
        """The last k with tau_k <= t."""
        return (t - self.t0) // self.step

    def index_after(self, t):
        """The first k with tau_k > t."""
        return (t - self.t0) // self.step + 1

    def boundary_at(self, t):
        """The last instant at or before t (the window a reader at t sees): instant(index_at(t))."""
        t0, step = self.t0, self.step
        return t0 + (t - t0) // step * step

    def boundary_after(self, t):
        """The first instant after t: instant(index_after(t))."""
        t0, step = self.t0, self.step
        return t0 + ((t - t0) // step + 1) * step

    # what the window at tau holds

    def bounds(self, tau: int) -> tuple[int, int]:
        """(low, high): the window at tau holds low <= t < high."""
        low = tau - self.range
        return (low if low > self.t0 else self.t0), tau - self.end

    def holds(self, tau: int, t: int) -> bool:
        low, high = self.bounds(tau)
        return low <= t < high

    def reaches(self, tau: int, t) -> bool:
        """Does the window at tau (or a later one) still reach back to an element seen at t?"""
        return tau - self.range <= t

    def earliest_reached(self, tau):
        """The earliest timestamp the window at tau's boundary, or a later one, still holds
        (`reaches` solved for t)."""
        return self.boundary_at(tau) - self.range

    def open_from(self, boundary: int) -> int:
        """The earliest timestamp a window after the one at `boundary` holds (t0 aside): what a window
        reported at `boundary` still takes."""
        return boundary + self.step - self.range

    # which windows hold a timestamp

    def span(self, low, high):
        """(k1, k2): the instants with low < tau_k <= high (none when k1 > k2)."""
        return self.index_after(low), self.index_at(high)

    def k_range(self, t):
        """(k1, k2): the instants whose windows hold an element seen at t >= t0 (none when k1 > k2)."""
        return self.span(t + self.end, t + self.range)

    # a replay's reports (DESIGN.md: every tau after the first element, up to the last tau whose
    # window still reaches the last element, tau - r <= last)

    def first_report(self, first: int, period: int | None = None) -> int:
        """The first report after an element seen at `first` (of `every(period)` when the query reports
        on a period of its own)."""
        return (self if period is None else WindowGrid.every(period, self.t0)).boundary_after(first)

    def last_report(self, last: int, period: int | None = None) -> int:
        """The last instant whose window still reaches an element seen at `last`: where a replay ends
        (with a `period`: the last report of `every(period)` that shows that window)."""
        k = self.index_at(last + self.range)
        if period is None:
            return self.instant(k)
        return WindowGrid.every(period, self.t0).instant(self.shown_at(period, k, k)[1])

    def shown_at(self, period: int, k1, k2):
        """The instants j of `every(period, t0)` whose reports show the windows k1..k2 of this grid (a
        report at t shows the window at `boundary_at(t)`): (j1, j2), none when j1 > j2."""
        return -((-(k1 * self.step)) // period), -((-((k2 + 1) * self.step)) // period) - 1
