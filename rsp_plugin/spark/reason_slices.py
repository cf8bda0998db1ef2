"""Time slices read straight from the file: the distributed `reason` of a LARS program whose reach is bounded.

When the program is time-sliceable (`rule_split`, (b): every rule sees at
most L time points back) and the stream is in time order, the file is cut
into byte ranges, one task each; a task reads its range, finds the time
points it owns (those whose first line lies in its range), reads the L + 1
time points before them from the bytes before its range (its margin: L for the
atoms at the first owned point, one more for the change to it) and the rest
of its last point past its range, runs the one engine (`columnar.reason.Replay`)
from the margin's start, and writes the lines of its own time points. No row
crosses Spark: each task parses what it needs once, into its own dictionary,
as `--engine local` would.

The plan assumes what local judging would find nothing to say about: no line
set aside (unreadable, late, too far ahead). Each task checks its own range
with the real reader (every line read, in time order, no gap past `--max-gap`;
lines after `--to`'s cut are not judged, as local stops there), and reports it
with the time points it owns; the driver checks the ranges chain (in order
across them, the gaps bounded) and the owned time points tile the timeline.
Anything else, and the run goes the general way (`reason_parts`: every line
judged on the driver).
"""

from __future__ import annotations

import io
from dataclasses import dataclass

from ..columnar.reason import Replay
from ..io.lines import BoundedReader
from .reason_rows import Reading

#: bytes read at first before a range (doubled until the margin is in)
MARGIN_BYTES = 1 << 16


@dataclass(frozen=True)
class SliceJob:
    """What every task needs: how the file is read, the program's text, the reach L, the options, the byte
    cuts of the ranges (`cuts[k]` to `cuts[k + 1]` is task k's), and the file's `@prefix` lines by byte."""

    reading: Reading
    program_text: str
    program_name: str
    stream_name: str
    reach: int
    first: int | None
    last: int | None
    max_gap: int | None
    changes: bool
    pruning: bool
    max_derivations: int | None
    cuts: tuple
    declarations: tuple = ()

    @property
    def tasks(self) -> int:
        return len(self.cuts) - 1

    def prefixes_at(self, byte: int) -> dict:
        known = dict(self.reading.prefixes)
        for at, name, iri in self.declarations:
            if at < byte:
                known[name] = iri
        return known


def declarations(path: str, size: int, max_line_bytes) -> tuple:
    """The file's `@prefix` lines as (byte of the line, prefix, IRI), in file order."""
    from .reason_rows import prefix_lines

    with open(path, "rb") as handle:
        return tuple(prefix_lines(handle.read(size), max_line_bytes))


def byte_cuts(path: str, size: int, tasks: int) -> tuple:
    """`tasks` + 1 offsets from 0 to `size`, each after a newline (ranges of whole lines)."""
    cuts = [0]
    with open(path, "rb") as handle:
        for k in range(1, tasks):
            handle.seek(max(cuts[-1], size * k // tasks))
            handle.readline()
            at = handle.tell()
            if cuts[-1] < at < size:
                cuts.append(at)
    cuts.append(size)
    return tuple(cuts)


# a task ----------------------------------------------------------------------------------------------------------


def _blocks(job: SliceJob, terms, start: int, end: int) -> list:
    """The blocks of bytes [start, end) (whole lines), read as `--engine local` reads them."""
    from ..columnar.atoms import BLOCK_BYTES, atom_block, tnt_atom_block
    from ..io.lines import byte_blocks

    reading = job.reading
    prefixes = job.prefixes_at(start)
    out = []
    if end <= start:
        return out
    with open(reading.path, "rb") as handle:
        handle.seek(start)
        for first_line, data, too_long in byte_blocks(BoundedReader(handle, end - start), BLOCK_BYTES,
                                                       filename=job.stream_name,
                                                       max_line_bytes=reading.max_line_bytes):
            data = bytes(data)
            if reading.kind == "triples":
                block = tnt_atom_block(data, first_line, terms, tick_ms=reading.tick_ms, filename=job.stream_name)
            else:
                block = atom_block(data, first_line, terms, prefixes=prefixes, tick_ms=reading.tick_ms,
                                   filename=job.stream_name)
            if too_long:
                block.rejected = block.rejected + too_long
            out.append(block)
    return out


def _times(blocks) -> list[int]:
    return [time for block in blocks for time in block.times]


def _line_start(path: str, byte: int) -> int:
    """The start of the line holding `byte` - 1's successor: the first line starting at or after `byte`."""
    if byte <= 0:
        return 0
    with open(path, "rb") as handle:
        handle.seek(byte - 1)
        if handle.read(1) == b"\n":
            return byte
        handle.readline()
        return handle.tell()


class _OwnedLines(Replay):
    """The engine from the margin's start; lines written from the first owned time point on."""

    def __init__(self, owned_from: int, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.owned_from = owned_from

    def write(self, point, started, stopped, out):
        if point < self.owned_from:
            self.snapshot.change(started, stopped, self.terms)
            return
        super().write(point, started, stopped, out)


def run_task(job: SliceJob, k: int) -> tuple[str, dict]:
    """Task k: (its lines, its report: whether its range reads clean, its times, the time points it owns)."""
    from ..lars.syntax import parse_program

    program = parse_program(job.program_text, job.program_name)
    terms = program.terms
    low, high = job.cuts[k], job.cuts[k + 1]
    first, last, gap, reach = job.first, job.last, job.max_gap, job.reach
    blocks = _blocks(job, terms, low, high)
    report: dict = {"task": k, "clean": True, "cut": False, "first_time": None, "last_time": None, "owns": None}
    lines = [line for block in blocks for line in block.lines]
    times = _times(blocks)
    cut = next((n for n, time in enumerate(times) if last is not None and time > last), None)
    if cut is not None:  # (local reading stops at the first line after --to: nothing after it is judged)
        report["cut"] = True
        bad = any(record.line < lines[cut] for block in blocks for record in block.rejected)
        times = times[:cut]
    else:
        bad = any(block.rejected for block in blocks)
    if bad or any(b < a for a, b in zip(times, times[1:])) or (
            gap is not None and any(b - a > gap for a, b in zip(times, times[1:]))):
        report["clean"] = False
        return "", report
    if times:
        report["first_time"], report["last_time"] = times[0], times[-1]
    # before the range: the last time read before it (its time points are another range's), and the margin
    # (the lines of the L + 1 time points before the first one owned), read back until both are in
    margin: list = []
    earlier: list[int] = []
    begin = low
    reached_start = low == 0
    distinct = len(set(times)) if times else 0
    size = max(4096, (high - low) // distinct * (reach + 3) * 5 // 4) if distinct else MARGIN_BYTES
    while not reached_start:
        sooner = _line_start(job.reading.path, max(0, begin - size))
        margin = _blocks(job, terms, sooner, begin) + margin  # (only the bytes not read yet)
        begin = sooner
        earlier = _times(margin)
        reached_start = begin == 0
        if earlier:
            owned_from, _ = _owned(earlier[-1], times, first)
            if owned_from is None or earlier[0] < max(owned_from - reach - 1, first if first is not None
                                                      else owned_from - reach - 1):
                break
        size *= 2
    before = earlier[-1] if earlier else None
    if before is not None and times and before > times[0]:
        report["clean"] = False  # (out of order across the cut: the range before says so too)
        return "", report
    owned_from, start = _owned(before, times, first)
    if owned_from is None or (last is not None and owned_from > last):
        return "", report
    if start is None and reached_start:  # the timeline starts at the file's first time (no --from)
        start = earlier[0] if earlier else times[0]
    # past the range: the rest of its last time point, and the next time (the next owner's first)
    if cut is not None:
        after, next_time = [], last + 1
    else:
        after, next_time = _rest_of(job, terms, high, times[-1]) if times else ([], None)
    owned_to = next_time - 1 if next_time is not None else (last if last is not None else times[-1])
    if last is not None:
        owned_to = min(owned_to, last)
    if owned_to < owned_from:
        return "", report
    engine_from = owned_from - reach - 1
    if start is not None:
        engine_from = max(start, engine_from)
    out = io.StringIO()
    bounds = {} if job.max_derivations is None else {"max_derivations": job.max_derivations}
    replay = _OwnedLines(owned_from, program, first=engine_from, last=owned_to, pruning=job.pruning,
                         changes=job.changes, max_gap=None, filename=job.stream_name, **bounds)
    for block in margin + blocks + after:
        if not replay.take(block, out, _nowhere):
            break
    replay.end(out)
    report["owns"] = [owned_from, owned_to]
    return out.getvalue(), report


def _nowhere(record) -> None:
    """The task's lines read clean (checked before the engine runs): none is set aside."""


def _owned(before: int | None, times: list[int], first: int | None) -> tuple[int | None, int | None]:
    """(the first time point a range owns, the timeline's start if this range knows it). A range owns the
    time points whose first line it holds (times later than `before`, the last time read before it), and
    the empty ones after them; the first range with data owns from the timeline's start (`--from`, else
    its first time). None: it owns none."""
    if before is None:
        if first is not None:
            return first, first
        return (times[0], times[0]) if times else (None, None)
    later = next((time for time in times if time > before), None)
    if later is None:
        return None, first
    return (max(later, first) if first is not None else later), first


def _rest_of(job: SliceJob, terms, high: int, point: int) -> tuple[list, int | None]:
    """The blocks past byte `high` whose lines are of time point `point` (the end of one owned by the range
    before), and the next time after it (None: the file ends)."""
    size = MARGIN_BYTES
    path = job.reading.path
    total = job.cuts[-1]
    while high < total:
        end = min(total, high + size)
        if end < total:
            with open(path, "rb") as handle:
                handle.seek(end)
                handle.readline()
                end = min(total, handle.tell())
        blocks = _blocks(job, terms, high, end)
        times = _times(blocks)
        later = next((time for time in times if time > point), None)
        if later is not None or end >= total:
            return blocks, later
        size *= 2
    return [], None


# the driver's check ---------------------------------------------------------------------------------------------


def verified(job: SliceJob, reports: list[dict]) -> tuple[int, int] | None:
    """The timeline (start, end) if every task read clean and the ranges chain as one stream in time order
    and the owned time points tile [start, end]; None: the general way must judge the lines."""
    reports = sorted(reports, key=lambda report: report["task"])
    previous = None
    for report in reports:
        if not report["clean"]:
            return None
        if report["first_time"] is not None:
            if previous is None:
                if job.first is not None and job.max_gap is not None and report["first_time"] - job.first > job.max_gap:
                    return None
            else:
                if report["first_time"] < previous:
                    return None
                if job.max_gap is not None and report["first_time"] - previous > job.max_gap:
                    return None
            previous = report["last_time"]
        if report["cut"]:
            break
    owned = [report["owns"] for report in reports if report["owns"] is not None]
    if not owned:
        return None
    for (_, to), (begin, _) in zip(owned, owned[1:]):
        if begin != to + 1:
            return None
    start, end = owned[0][0], owned[-1][1]
    if job.first is not None and start != job.first:
        return None
    if job.last is not None and end != job.last:
        return None
    return start, end
