"""Time: durations, timestamps and the integer time points the engine runs on.

A stream element carries a timestamp; a program (`@tick 1s`) or a query (its
STEP) says how long one tick is; the time point is floor(timestamp / tick).
Without a tick, integer timestamps are time points already and xsd:dateTime
timestamps count seconds since the Unix epoch.

>>> parse_duration_ms("10s"), parse_duration_ms("PT1M30S"), parse_duration_ms("250ms")
(10000, 90000, 250)
>>> time_point(12_345, tick_ms=1000), time_point(7, tick_ms=None)
(12, 7)
>>> parse_timestamp_ms("2004-08-08T06:05:00Z")
1091945100000
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)

#: The horizon of what never expires (background knowledge, unwindowed @).
NEVER_EXPIRES = 1 << 62

_UNITS_MS = {"ms": 1, "s": 1000, "m": 60_000, "h": 3_600_000, "d": 86_400_000}
_SHORT = re.compile(r"(\d+)(ms|s|m|h|d)\Z")
_ISO = re.compile(
    r"P(?:(?P<d>\d+(?:\.\d+)?)D)?(?:T(?:(?P<h>\d+(?:\.\d+)?)H)?(?:(?P<m>\d+(?:\.\d+)?)M)?"
    r"(?:(?P<s>\d+(?:\.\d+)?)S)?)?\Z"
)


def parse_duration_ms(text: str) -> int:
    """`10s`, `500ms`, `2m`, `1h`, `1d` or ISO 8601 `PT10S` -> milliseconds."""
    text = text.strip()
    if len(text) > 40:  # (more than 10^30 ms: no tick or window lasts so long; and thousands of digits cost)
        raise ValueError(f"the duration {text[:25]}... is too long")
    short = _SHORT.match(text)
    if short:
        return int(short.group(1)) * _UNITS_MS[short.group(2)]
    iso = _ISO.match(text.upper())
    if iso and text.upper() not in ("P", "PT") and any(iso.groupdict().values()):
        total = 0.0
        for unit, scale in (("d", 86_400_000), ("h", 3_600_000), ("m", 60_000), ("s", 1000)):
            if iso.group(unit):
                total += float(iso.group(unit)) * scale
        return int(round(total))
    raise ValueError(f"not a duration: {text!r} (expected e.g. 10s, 500ms, 2m, PT10S)")


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
