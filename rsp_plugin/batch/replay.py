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

from ..formats import Rejected
from . import blocks
from .blocks import read_tnt_blocks


def replay_file(engine, iri: str, path: Path, *, moment: int | None = None,
                on_rejected: Callable[[Rejected], None] = lambda record: None,
                block_bytes: int | None = None) -> int:
    """Push the file's elements into `engine`'s stream `iri`, moving the watermark as the per-line
    replay does (the caller calls `engine.finish()`); returns how many elements were read."""
    source = str(path)
    seen = len(engine.rejected)
    latest: int | None = None
    count = 0
    size = block_bytes or blocks.BLOCK_BYTES
    for block in read_tnt_blocks(path, engine.terms, tick_ms=1, moment=moment, block_bytes=size):
        times = block.times
        count += len(times)
        if len(times):
            carried = np.concatenate(([latest if latest is not None else times[0]], times))
            running = np.maximum.accumulate(carried)
            late = np.flatnonzero(times < running[:-1])
            start = 0
            for row in [*late.tolist(), len(times)]:
                if row > start:
                    _push(engine, iri, block, start, row, source)
                if row < len(times):
                    _push(engine, iri, block, row, row + 1, source)
                start = row + 1
            top = int(running[-1])
            latest = top if latest is None else max(latest, top)
        records = list(block.rejected) + engine.rejected[seen:]
        seen = len(engine.rejected)
        for record in sorted(records, key=lambda record: record.line):
            on_rejected(record)
    return count


def _push(engine, iri: str, block, start: int, stop: int, source: str) -> None:
    times = block.times[start:stop]
    engine.push_columns(iri, times, block.s[start:stop], block.p[start:stop], block.o[start:stop],
                        lines=block.lines[start:stop], source=source)
    top = int(times.max())
    if engine.watermark is None or top > engine.watermark:
        engine.advance_to(top)
