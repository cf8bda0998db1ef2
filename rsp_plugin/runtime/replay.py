"""Replaying streams into an engine: every source read in time order, merged, and the replay ended.

    set_aside = replay(engine, sources)      # -> lines set aside (each a `FILE:LINE: reason`)

The watermark follows the timestamps read, so an out-of-order line is still
taken while a window that will hold it is not reported yet, and is late
otherwise. One `.tnt` / `.nt` file goes a block at a time, as columns
(`columnar.replay`), unless it is smaller than `BLOCK_REPLAY_BYTES`; anything
else element by element. Both ways give the same reports and set aside the same
lines. What the command line, the benchmarks and the service's tests replay
(`cli/query.py` writes what comes out).
"""

from __future__ import annotations

import heapq
import os
import stat
from typing import Iterator

from ..core import limits
from ..core.errors import UserError
from ..core.time import out_of_range
from ..io.formats import Rejected, StreamElement
from ..io.sources import OpenSource, StreamSource
from .engine import RSPEngine

#: a regular file smaller than this is replayed element by element: the block way's start (pyarrow
#: and its compute module imported: ~70 ms of CPU) costs more than it saves on so few lines
#: (~7 us a line; the ways break even near 5,000 lines of the SOSA stream, 600 KB)
BLOCK_REPLAY_BYTES = 64 << 10


class _Silent:
    """No progress shown, records set aside not printed (the caller counts them)."""

    def update(self, **_) -> None:
        pass

    def note(self, text: str) -> None:
        pass


def replay(engine: RSPEngine, sources: list[StreamSource], *, first: int | None = None,
           last: int | None = None, progress=None, results=lambda: 0,
           max_line_bytes: int | None = limits.MAX_LINE_BYTES, on_note=None) -> int:
    """Feed the engine from its sources, merged in time order, and end the replay; returns the number
    of lines set aside (each shown through `progress.note` as `FILE:LINE: reason`). A line longer
    than `max_line_bytes` or not UTF-8 is set aside by the readers; a timestamp too far ahead of the
    stream (the engine's `max_gap`) is set aside by the engine and never moves the watermark."""
    progress = progress or _Silent()
    one_file = (len(sources) == 1 and sources[0].kind == "file" and sources[0].fmt in ("tnt", "nt")
                and first is None and last is None)
    if one_file and not _small_file(sources[0].path):
        return _replay_blocks(engine, sources[0], progress, results, max_line_bytes)
    rows = set_aside = shown = 0

    def show_rejected() -> None:
        nonlocal set_aside, shown
        for record in engine.rejected[shown:]:
            progress.note(str(record))
            set_aside += 1
        shown = len(engine.rejected)

    opened: list[OpenSource] = []
    try:
        readers = []
        for number, source in enumerate(sources):
            handle = OpenSource(source, engine.terms, max_line_bytes=max_line_bytes,
                                contexts=engine.jsonld_contexts, note=on_note)
            opened.append(handle)
            # (a small file the block way would read: its reader's range check too, so the same lines are set aside)
            elements = _in_range(handle.elements, source.name) if one_file else handle.elements
            readers.append(_tagged(number, source, elements))
        live = any(source.live for source in sources)
        for time_key, source, batch in _batches(heapq.merge(*readers)):
            if isinstance(batch, Rejected):
                progress.note(str(batch))
                rows += 1
                set_aside += 1
                continue
            rows += len(batch)
            if last is not None and time_key > last:
                if live:
                    break
                continue
            if first is not None and time_key < first:
                continue
            if (engine.watermark is None or time_key > engine.watermark) and engine.gap_problem(time_key) is None:
                engine.advance_to(time_key, collect=False)
            engine.push(source.iri, batch, source=source.name)
            show_rejected()
            progress.update(rows=rows, set_aside=set_aside, results=results())
        engine.finish(collect=False)
        show_rejected()
    finally:
        for handle in opened:
            handle.close()
    return set_aside


def _small_file(path) -> bool:
    """A regular file smaller than `BLOCK_REPLAY_BYTES` (anything that cannot be told: no)."""
    try:
        status = os.stat(path)
    except (OSError, ValueError):  # (the block way says why it cannot be read)
        return False
    return stat.S_ISREG(status.st_mode) and status.st_size < BLOCK_REPLAY_BYTES


def _in_range(items, name: str) -> Iterator:
    """The elements read, one whose time point the block readers set aside (`core.time.out_of_range`)
    turned into the same `Rejected` record."""
    for item in items:
        if isinstance(item, StreamElement):
            reason = out_of_range(item.time_point)
            if reason is not None:
                yield Rejected(name, item.line, reason)
                continue
        yield item


def _replay_blocks(engine: RSPEngine, source: StreamSource, progress, results,
                   max_line_bytes: int | None) -> int:
    """One `.tnt` / `.nt` file read a block at a time and pushed as columns (`rsp_plugin.columnar.replay`):
    the same reports and the same records set aside as the per-line replay, in line order."""
    from ..columnar.replay import replay_file

    set_aside = 0

    def note(record) -> None:
        nonlocal set_aside
        set_aside += 1
        progress.note(str(record))

    try:
        replay_file(engine, source.iri, source.path, moment=source.moment if source.fmt == "nt" else None,
                    on_rejected=note, max_line_bytes=max_line_bytes,
                    on_block=lambda rows: progress.update(rows=rows, set_aside=set_aside, results=results()))
    except BrokenPipeError:  # stdout's reader went away (`| head`): not the stream's fault (cli.main)
        raise
    except OSError as error:
        raise UserError(f"{source.path}: cannot read the stream: {error.strerror}") from None
    shown = len(engine.rejected)
    engine.finish(collect=False)
    for record in engine.rejected[shown:]:
        note(record)
    return set_aside


def _tagged(number: int, source: StreamSource, items) -> Iterator[tuple]:
    """(time, source number, line order, source, item): a rejected line travels with the time before it."""
    last = -(1 << 62)
    for order, item in enumerate(items):
        if isinstance(item, StreamElement):
            last = item.time_point
        yield last, number, order, source, item


def _batches(merged) -> Iterator[tuple]:
    """(time, source, elements or a Rejected): consecutive elements of one source and one time together."""
    batch: list[StreamElement] = []
    key = None
    for time_key, number, _, source, item in merged:
        if batch and (isinstance(item, Rejected) or key[:2] != (time_key, number)):
            yield key[0], key[2], batch
            batch = []
        if isinstance(item, Rejected):
            yield time_key, source, item
            continue
        key = (time_key, number, source)
        batch.append(item)
        if len(batch) >= 10_000:  # a live source may send one timestamp for a long time
            yield key[0], key[2], batch
            batch = []
    if batch:
        yield key[0], key[2], batch


__all__ = ["replay"]
