"""`rsp-plugin query`'s replay of one `.tnt` (or `.nt`) file, a block at a time.

The per-line replay advances the watermark to each new timestamp and then
pushes the elements of that timestamp. A block of lines in time order does the
same with one `push_columns` and one `advance_to` (a window keeps an element
until the first boundary after it, so pushing a block early changes nothing);
a line older than one before it (out of order) is pushed on its own after
the watermark reached the lines before it, exactly as the per-line replay
would: taken if a window that is still to come holds it, set aside otherwise.
Dead letters come out in line order, the late ones among them.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

import numpy as np

from ..core import limits
from ..core.arrays import unique_sorted
from ..io.formats import Rejected
from . import blocks
from .blocks import read_tnt_blocks


def replay_file(engine, iri: str, path: Path, *, moment: int | None = None,
                on_rejected: Callable[[Rejected], None] = lambda record: None,
                block_bytes: int | None = None, max_line_bytes: int | None = limits.MAX_LINE_BYTES,
                on_block: Callable[[int], None] = lambda rows: None) -> int:
    """Push the file's elements into `engine`'s stream `iri`, moving the watermark as the per-line
    replay does (the caller calls `engine.finish()`); returns how many elements were read.
    `on_block(rows)`: after each block, the lines read so far (a progress line)."""
    source = str(path)
    seen = len(engine.rejected)
    count = 0
    size = block_bytes or blocks.BLOCK_BYTES
    lanes = np.zeros(0, dtype=np.int64)
    for block in read_tnt_blocks(path, engine.terms, tick_ms=1, moment=moment, block_bytes=size,
                                 max_line_bytes=max_line_bytes):
        count += len(block.times)
        if len(lanes) < len(block.times):
            lanes = np.zeros(len(block.times), dtype=np.int64)
        feed(engine, [iri], lanes[:len(block.times)], block.times, block.s, block.p, block.o,
             lines=block.lines, source=source)
        records = list(block.rejected) + engine.rejected[seen:]
        seen = len(engine.rejected)
        for record in sorted(records, key=lambda record: record.line):
            on_rejected(record)
        on_block(int(block.lines[-1]) if len(block.lines) else count)
    return count


def feed(engine, streams: list[str], lanes, times, s, p, o, *, delay: int = 0, lines=None,
         source: str | None = None) -> None:
    """Push rows (each of stream `streams[lane]`) in their order, as a per-element feed does: the
    watermark moves to a row's timestamp (minus `delay`) before the row is pushed. Rows in time
    order go as columns, one push per stream and one watermark move per run; a row older than
    one before it is pushed alone, after the watermark reached the rows before it."""
    count = len(times)
    if not count:
        return
    lanes = np.asarray(lanes, dtype=np.int64)
    times = np.asarray(times, dtype=np.int64)
    before = engine.watermark + delay if engine.watermark is not None else int(times[0])
    running = np.maximum.accumulate(np.concatenate(([before], times)))
    late = np.flatnonzero(times < running[:-1]).tolist()
    start = 0
    for row in [*late, count]:
        if row > start:
            _push_run(engine, streams, lanes, times, s, p, o, start, row, delay, lines, source)
        if row < count:
            _push_run(engine, streams, lanes, times, s, p, o, row, row + 1, delay, lines, source)
        start = row + 1


def _push_run(engine, streams, lanes, times, s, p, o, start, stop, delay, lines, source) -> None:
    chosen = lanes[start:stop]
    first = int(chosen[0])
    if stop - start == 1 or bool(np.all(chosen == first)):
        groups = [(first, slice(start, stop))]
    else:  # several streams: each its rows, in stream order (at equal times, as a merge by (time, stream))
        groups = [(int(lane), start + np.flatnonzero(chosen == lane)) for lane in unique_sorted(chosen).tolist()]
    for lane, rows in groups:
        engine.push_columns(streams[lane], times[rows], s[rows], p[rows], o[rows],
                            lines=lines[rows] if lines is not None else None, source=source)
    top = int(times[start:stop].max())
    if engine.gap_problem(top) is not None:  # the rows too far ahead were set aside by the push: not followed
        top = engine.latest_timestamp
        if top is None:
            return
    target = top - delay
    if engine.watermark is None or target > engine.watermark:
        engine.advance_to(target, collect=False)
