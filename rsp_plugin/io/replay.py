"""Replaying a stream file: its elements grouped into every time point of the timeline, in order.

The timeline runs from `first` (default: the first element's time point) to
`last` (default: the last element's). Every time point in between is yielded,
with or without data, since windows, BOX and expiry depend on all of them.
An element older than one read before it is late: it is set aside as a
`Rejected` record, like a malformed line, and the replay goes on. So is an
element more than `max_gap` time points ahead of the stream's current time
point (the latest taken, or `first`): every point in between would be
evaluated and printed, and one far-off line would never let the replay end
(`rsp_plugin.core.limits.MAX_GAP_TIME_POINTS`; the rules: `rsp_plugin.core.admission`).

>>> from rsp_plugin.io.formats import StreamElement
>>> elements = [StreamElement(2, "a", 1), StreamElement(4, "b", 2), StreamElement(3, "c", 3),
...             StreamElement(10**11, "d", 4), StreamElement(5, "e", 5)]
>>> rejected = []
>>> list(timeline(elements, first=1, on_rejected=rejected.append, max_gap=1000))
[(1, []), (2, ['a']), (3, []), (4, ['b']), (5, ['e'])]
>>> [str(r) for r in rejected]
['<stream>:3: time point 3 is older than time point 4 read before it; set aside', '<stream>:4: timestamp 100000000000 is 99999999996 time points ahead of the stream (max gap 1000; --max-gap); set aside']
"""

from __future__ import annotations

from typing import Callable, Iterable, Iterator

from ..core import limits
from ..core.admission import Gap, Gate
from .formats import Rejected, StreamElement


def timeline(
    elements: Iterable[StreamElement | Rejected],
    *,
    first: int | None = None,
    last: int | None = None,
    on_rejected: Callable[[Rejected], None] = lambda rejected: None,
    filename: str = "<stream>",
    max_gap: int | None = limits.MAX_GAP_TIME_POINTS,
) -> Iterator[tuple[int, list]]:
    """(time point, facts arriving at it) for every time point of the timeline."""
    current: int | None = None if first is None else first
    batch: list = []
    gate = Gate(in_order=True, gap=Gap(max_gap) if max_gap is not None else None, start=first)
    for element in elements:
        if isinstance(element, Rejected):
            on_rejected(element)
            continue
        point = element.time_point
        problem = gate.judge(point)
        if problem is not None:
            on_rejected(Rejected(filename, element.line, problem))
            continue
        if first is not None and point < first:
            continue
        if last is not None and point > last:
            break
        if current is None:
            current = point
        while current < point:
            yield current, batch
            batch = []
            current += 1
        batch.append(element.fact)
    if current is None:
        if first is None or last is None:
            return
        current = first
    end = last if last is not None else current
    while current <= end:
        yield current, batch
        batch = []
        current += 1
