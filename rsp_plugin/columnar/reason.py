"""`rsp-plugin reason`'s replay: the stream read a block at a time, the output kept from the changes.

The rule engine stays the per-fact `IncrementalEngine` (the home of temporal
rules); what changes is the way in and the way out:

- in: `atoms.py` reads a block of lines into columns (a line repeating the one
  before it read once); late lines (older than one read before them) are found
  per block, and each time point's facts go to the engine at once (a mapping
  predicate -> argument tuples, or the facts in arrival order when tuple windows
  count them), where each view takes them at once (`View.hold_all`);
- out: the snapshot line of a time point is kept as a sorted list of written
  atoms, changed by what started and stopped (an insertion for a few changes;
  for many, the stopped cut out as runs and the started merged in by a sort of
  two sorted runs), and written as one join between its two ends: no snapshot
  is rebuilt, re-sorted or JSON-encoded atom by atom.

The lines are byte for byte those of the per-line replay (`replay.timeline`
and `json.dumps`), the dead letters too (same order, same words). A dictionary
that forgets (`Forgetting`) keeps the memory of a long stream bounded by what
the engine still holds.
"""

from __future__ import annotations

import gc
import json
import re
from bisect import bisect_left, bisect_right, insort
from itertools import chain
from pathlib import Path
from typing import Callable, TextIO

from ..core import limits
from ..core.admission import Gap, Gate
from ..core.terms import TRIPLE, Forgetting
from ..io.lines import Rejected
from ..lars.engine import IncrementalEngine
from .atoms import read_atom_blocks

#: characters json.dumps escapes with ensure_ascii=False
_NEEDS_ESCAPE = re.compile(r'["\\\x00-\x1f]')
_ESCAPED_BYTES = bytes(range(32)) + b'"\\'


def _escapes(text: str) -> bool:
    """Would json.dumps escape a character of `text`? (`_NEEDS_ESCAPE.search`, in UTF-8 bytes
    deleted in one C pass: those characters are ASCII, and no byte of a longer UTF-8 sequence is)"""
    data = text.encode("utf-8", "surrogatepass")
    return len(data.translate(None, _ESCAPED_BYTES)) != len(data)


class SnapshotLines:
    """What holds now, as the sorted written atoms of the contract's line.

    Two facts never print alike (ids are distinct terms; an IRI predicate with two
    arguments is a triple), so the written atoms are a set. They are kept as sorted chunks of
    about `CHUNK` atoms, each with its piece of the line (its atoms joined) made when it is
    first written after a change: what starts or stops together sits together (atoms of one
    time point), so a time point re-joins the few chunks it changed, and a line is one join of
    the chunks' pieces.
    """

    #: atoms per chunk (a chunk grown past twice as many is cut)
    CHUNK = 512

    def __init__(self) -> None:
        self.shown: dict = {}            # fact -> written atom
        self.chunks: list[list[str]] = []  # the written atoms, sorted, cut in chunks (none empty)
        self.lasts: list[str] = []       # each chunk's last atom
        self.pieces: list = []           # each chunk's atoms joined by '", "' (None: changed since)
        self.special: set = set()        # atoms json.dumps would escape
        self.size = 0                    # how many atoms hold

    @property
    def ordered(self) -> list[str]:
        """The written atoms, sorted."""
        return list(chain.from_iterable(self.chunks))

    def change(self, started, stopped, terms) -> None:
        shown = self.shown
        gone = list(map(shown.pop, stopped))
        new = written(started, terms)
        shown.update(zip(started, new))
        self.change_written(new, gone)

    def change_written(self, new: list[str], gone: list[str]) -> None:
        """The change as written atoms: `new` started (none held), `gone` stopped (all held). For a
        caller that has the written atoms only (the lines of a distributed run, merged on the driver:
        `shown` is not kept then). The lists are sorted in place."""
        self.size += len(new) - len(gone)
        if new and _escapes("".join(new)):
            self.special.update(text for text in new if _NEEDS_ESCAPE.search(text))
        if self.special and gone:
            self.special.difference_update(gone)
        if gone:
            gone.sort()
            self._cut(gone)
        if new:
            new.sort()
            self._merge(new)
        if len(self.chunks) > 8 + 2 * self.size // self.CHUNK:  # chunks worn small: cut afresh
            ordered = self.ordered
            self.chunks = []
            if ordered:
                self._merge(ordered)

    def _cut(self, gone: list[str]) -> None:
        """Take the atoms of `gone` (sorted, all held) out of their chunks."""
        chunks, lasts, pieces = self.chunks, self.lasts, self.pieces
        low = 0
        count = len(gone)
        index = bisect_left(lasts, gone[0])
        emptied = False
        while low < count:
            high = bisect_right(gone, lasts[index], low)
            if high > low:
                chunk = chunks[index]
                if high - low <= (len(chunk) >> 4) + 2:
                    for text in gone[low:high]:
                        del chunk[bisect_left(chunk, text)]
                else:
                    chunk = chunks[index] = without(chunk, gone[low:high])
                pieces[index] = None
                if chunk:
                    lasts[index] = chunk[-1]
                else:
                    emptied = True
                low = high
                if low < count:
                    index = bisect_left(lasts, gone[low], index + 1)
            else:
                index += 1
        if emptied:
            kept = [k for k, chunk in enumerate(chunks) if chunk]
            self.chunks = [chunks[k] for k in kept]
            self.lasts = [lasts[k] for k in kept]
            self.pieces = [pieces[k] for k in kept]

    def _merge(self, new: list[str]) -> None:
        """Put the atoms of `new` (sorted, none held) into their chunks, cutting those grown too long."""
        chunks, lasts, pieces = self.chunks, self.lasts, self.pieces
        size = self.CHUNK
        if not chunks:
            self.chunks = [new[k:k + size] for k in range(0, len(new), size)]
            self.lasts = [chunk[-1] for chunk in self.chunks]
            self.pieces = [None] * len(self.chunks)
            return
        low = 0
        count = len(new)
        last = len(chunks) - 1
        grown = False
        index = min(bisect_left(lasts, new[0]), last)
        while low < count:
            high = count if index == last else bisect_right(new, lasts[index], low)
            if high > low:
                chunk = chunks[index]
                if high - low <= (len(chunk) >> 4) + 2:
                    for text in new[low:high]:
                        insort(chunk, text)
                else:  # two sorted runs: one merge
                    chunk += new[low:high]
                    chunk.sort()
                pieces[index] = None
                lasts[index] = chunk[-1]
                grown |= len(chunk) > 2 * size
                low = high
                if low < count:
                    index = min(bisect_left(lasts, new[low], index + 1), last)
            else:
                index += 1
        if grown:
            cut_chunks, cut_pieces = [], []
            for chunk, piece in zip(chunks, pieces):
                if len(chunk) > 2 * size:
                    parts = [chunk[k:k + size] for k in range(0, len(chunk), size)]
                    cut_chunks += parts
                    cut_pieces += [None] * len(parts)
                else:
                    cut_chunks.append(chunk)
                    cut_pieces.append(piece)
            self.chunks = cut_chunks
            self.lasts = [chunk[-1] for chunk in cut_chunks]
            self.pieces = cut_pieces

    def _joined(self) -> list[str]:
        pieces = self.pieces
        for index, piece in enumerate(pieces):
            if piece is None:
                pieces[index] = '", "'.join(self.chunks[index])
        return pieces

    def line(self, point: int) -> str:
        if not self.chunks:
            return f'{{"t": {point}, "atoms": []}}\n'
        if self.special:
            return json.dumps({"t": point, "atoms": self.ordered}, ensure_ascii=False) + "\n"
        return f'{{"t": {point}, "atoms": ["' + '", "'.join(self._joined()) + '"]}\n'

    def write_line(self, point: int, out: TextIO) -> None:
        """`out.write(self.line(point))`, the atoms written as one joined piece (a snapshot line
        is often hundreds of kilobytes: no copy of it is made to put its ends on)."""
        if not self.chunks or self.special:
            out.write(self.line(point))
            return
        out.write(f'{{"t": {point}, "atoms": ["')
        out.write('", "'.join(self._joined()))
        out.write('"]}\n')


def without(ordered: list[str], gone: list[str]) -> list[str]:
    """`ordered` (sorted, distinct) less `gone` (sorted, all in `ordered`), cut as runs: what stops
    together often sits together (atoms that started together), so each run of `gone` found
    side by side in `ordered` costs one bisection and a gallop, not one bisection per atom.

    If `ordered[p + k - 1] == gone[i + k - 1]` where `ordered[p] == gone[i]`, the k atoms of `gone`
    fill `ordered[p : p + k]` (k distinct atoms of `ordered` between two of its places k - 1 apart),
    so a run's length is found by galloping on that one test."""
    kept = []
    start = 0          # the first place of `ordered` not yet kept or cut
    count = len(gone)
    size = len(ordered)
    i = 0
    while i < count:
        place = bisect_left(ordered, gone[i], start)
        limit = min(count - i, size - place)   # the longest run that fits
        run, step = 1, 1
        while run + step <= limit and ordered[place + run + step - 1] == gone[i + run + step - 1]:
            run += step
            step += step
        high = min(run + step, limit + 1)        # a length known too long
        while high - run > 1:
            middle = (run + high) >> 1
            if ordered[place + middle - 1] == gone[i + middle - 1]:
                run = middle
            else:
                high = middle
        if place > start:
            kept.append(ordered[start:place])
        start = place + run
        i += run
    kept.append(ordered[start:])
    return kept[0] if len(kept) == 1 else list(chain.from_iterable(kept))


def written(facts: list, terms) -> list[str]:
    """`format_fact` of many facts; those of one predicate and arity (the usual batch) in one pass."""
    if not facts:
        return []
    keys = terms.keys
    predicate, args = facts[0]
    arity = len(args)
    name = keys[predicate]
    if name != TRIPLE and arity in (1, 2):
        try:  # (a fact of another arity does not unpack; one of another predicate is left out)
            if arity == 1:
                texts = [f"{name}({keys[x]})" for p, (x,) in facts if p == predicate]
            else:
                texts = [f"{name}({keys[x]},{keys[y]})" for p, (x, y) in facts if p == predicate]
        except ValueError:
            texts = None
        if texts is not None and len(texts) == len(facts):
            return texts
    from ..io.formats import format_fact

    return [format_fact(fact, terms) for fact in facts]


def replay(program, stream: str | Path, out: TextIO, *, first: int | None = None, last: int | None = None,
           pruning: bool = True, changes: bool = False,
           on_rejected: Callable[[Rejected], None] = lambda record: None,
           forget: bool = True, blocks=None, handle=None, max_derivations: int | None = None,
           max_line_bytes: int | None = limits.MAX_LINE_BYTES,
           max_gap: int | None = limits.MAX_GAP_TIME_POINTS) -> IncrementalEngine:
    """Evaluate `program` over the stream file and write one JSON line per time point to `out`.

    `blocks`: the stream as `AtomBlock`s already (instead of reading the file), e.g. a generator
    that interns each block's terms as it makes it (the dictionary forgets, between two blocks,
    the terms the engine no longer holds: a block interned ahead of its turn would lose them);
    `handle`: the file opened already (binary). A line older than one read before it, or more than
    `max_gap` time points ahead of the stream, is set aside (`rsp_plugin.core.admission`, as
    `replay.timeline` does).

    Python's cyclic garbage collector is paused meanwhile (as `advance_to` does): reading makes
    many small tuples and no cycles, and scanning them costs more the longer the stream."""
    collecting = gc.isenabled()
    if collecting:
        gc.disable()
    try:
        run = Replay(program, first=first, last=last, pruning=pruning, changes=changes, forget=forget,
                     max_derivations=max_derivations, max_gap=max_gap, filename=str(stream))
        if blocks is None:
            blocks = read_atom_blocks(stream, program.terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                      handle=handle, max_line_bytes=max_line_bytes)
        for block in blocks:
            if not run.take(block, out, on_rejected):
                break
        run.end(out)
        return run.engine
    finally:
        if collecting:
            gc.enable()


class Replay:
    """`replay` a block at a time, for a caller that is handed the blocks (a Spark micro-batch driver):
    `take(block, out, on_rejected)` evaluates the time points the block completes and writes their lines,
    `end(out)` the rest. Everything it holds is state a checkpoint stores as it is (`runtime.state_schema`:
    the engine, the lines' memory, the admission `Gate`, the time point being filled); where the lines
    and the set-aside records go is not, and is given with each call.

    `write(point, started, stopped, out)` writes a time point's line; a subclass may keep the changes
    instead (the Spark executors' share of a distributed run, `rsp_plugin.spark.reason_parts`)."""

    def __init__(self, program, *, first: int | None = None, last: int | None = None,
                 pruning: bool = True, changes: bool = False, forget: bool = True,
                 max_derivations: int | None = None, max_gap: int | None = limits.MAX_GAP_TIME_POINTS,
                 filename: str = "<stream>"):
        terms = program.terms
        terms.pin(list(terms.ids()))  # the program's constants
        self.program = program
        self.terms = terms
        # the live set below names all the replay holds (the engine, the time point being filled);
        # a block's terms are interned when it is read, after the one before was pushed
        self.forgetting = Forgetting(terms, keep_young=False) if forget else None
        bounds = {} if max_derivations is None else {"max_derivations": max_derivations}
        self.engine = IncrementalEngine(program, start=first, pruning=pruning, **bounds)
        self.counted = self.engine._count_log is not None  # tuple windows count atoms in arrival order
        self.hidden = set(program.hidden)  # DatalogMTL's auxiliary predicates: derived, never written
        self.snapshot = SnapshotLines()
        self.filename = filename
        self.first, self.last, self.changes = first, last, changes
        self.gate = Gate(in_order=True, gap=Gap(max_gap) if max_gap is not None else None, start=first)
        self.current = first   # the time point being filled (None: no data yet)
        self.waiting = None    # its facts so far
        self.cut = False       # a line after --to was read: the stream is done

    def take(self, block, out: TextIO | None, on_rejected: Callable[[Rejected], None]) -> bool:
        """Evaluate the time points `block` completes (their lines to `out`, the lines set aside to
        `on_rejected`); False once a line after `--to` was read (the blocks after it are not read)."""
        if self.cut:
            return False
        first, last = self.first, self.last
        block, rows, dead = _admitted(self.gate, block, self.filename)
        times = block.times
        lines = block.lines
        cut = None
        if last is not None and rows and times[rows[-1]] > last:
            cut = next(k for k in rows if times[k] > last)
            rows = [k for k in rows if k < cut]
        if dead:
            dead.sort(key=lambda record: record.line)
            for record in dead:
                if cut is None or record.line < lines[cut]:
                    on_rejected(record)
        if first is not None and rows and times[rows[0]] < first:
            rows = [k for k in rows if times[k] >= first]
        for point, facts in _by_time_point(block, rows, self.counted):
            if self.current is None:
                self.current = point
            while self.current < point:
                self._evaluate(self.current, self.waiting, out)
                self.waiting = None
                self.current += 1
            self.waiting = facts if self.waiting is None else _joined(self.waiting, facts)
        forgetting = self.forgetting
        if forgetting is not None and forgetting.due():
            held = _as_facts(self.waiting) if self.waiting is not None else []
            forgetting.run(chain(self.engine.live_terms(), (predicate for predicate, _ in held),
                                 chain.from_iterable(args for _, args in held)))
        if cut is not None:
            self.cut = True
            return False
        return True

    def end(self, out: TextIO | None) -> None:
        """The stream ended: every time point up to `--to` (or the last one read) is evaluated."""
        if self.current is None:
            if self.first is None or self.last is None:
                return
            self.current = self.first
        end = self.last if self.last is not None else self.current
        while self.current <= end:
            self._evaluate(self.current, self.waiting, out)
            self.waiting = None
            self.current += 1

    def _evaluate(self, point: int, facts, out: TextIO | None) -> None:
        report = self.engine.advance_to(point, facts if facts is not None else ())
        started, stopped = report.started, report.stopped
        hidden = self.hidden
        if hidden:
            started = [fact for fact in started if fact[0] not in hidden]
            stopped = [fact for fact in stopped if fact[0] not in hidden]
        self.write(point, started, stopped, out)

    def write(self, point: int, started: list, stopped: list, out: TextIO | None) -> None:
        """The line of `point`: what holds (a snapshot), or with `changes` what started and stopped."""
        snapshot, terms = self.snapshot, self.terms
        if self.changes:
            started_lines = sorted(written(started, terms))
            stopped_lines = sorted(snapshot.shown[f] for f in stopped)
            snapshot.change(started, stopped, terms)
            out.write(json.dumps({"t": point, "started": started_lines, "stopped": stopped_lines},
                                 ensure_ascii=False) + "\n")
        else:
            snapshot.change(started, stopped, terms)
            snapshot.write_line(point, out)


def _admitted(gate: Gate, block, filename: str) -> tuple:
    """(the block, the rows of it taken (a `range` if all are), the dead letters (unsorted)), judged at
    once (`Gate.judge_many`). A repeated line stands for a row equal to the one before it, taken or set
    aside with it: a block whose rows are all taken takes its repeats too; otherwise the block is
    `block.expanded()`, each repeat judged (and, if set aside, named) on its own."""
    dead = list(block.rejected)
    if not block.times:
        return block, range(0), dead
    latest = gate.latest
    taken, set_aside = gate.judge_many(block.times)
    if not set_aside:
        return block, range(len(block.times)), dead
    if block.repeats:
        gate.latest = latest  # (judged again, with the repeats)
        block = block.expanded()
        taken, set_aside = gate.judge_many(block.times)
    lines = block.lines
    dead.extend(Rejected(filename, lines[row], why) for row, why in set_aside)
    return block, taken.nonzero()[0].tolist(), dead


def _by_time_point(block, rows, in_order: bool):
    """(time point, facts) of the chosen rows (non-decreasing times): a mapping predicate ->
    argument tuples, or (in_order: tuple windows count them) the facts in arrival order."""
    if not rows:
        return
    times, predicates, args = block.times, block.predicates, block.args
    if not isinstance(rows, range) or len(rows) != len(times):
        times = [times[k] for k in rows]
        predicates = [predicates[k] for k in rows]
        args = [args[k] for k in rows]
    one = len(set(predicates)) == 1
    start = 0
    count = len(times)
    while start < count:
        point = times[start]
        end = bisect_right(times, point, start)
        if in_order:
            yield point, list(zip(predicates[start:end], args[start:end]))
        elif one:
            yield point, {predicates[start]: args[start:end]}
        else:
            grouped: dict = {}
            for predicate, arguments in zip(predicates[start:end], args[start:end]):
                found = grouped.get(predicate)
                if found is None:
                    grouped[predicate] = [arguments]
                else:
                    found.append(arguments)
            yield point, grouped
        start = end


def _joined(batch, facts):
    if isinstance(batch, dict) and isinstance(facts, dict):
        for predicate, args in facts.items():
            batch.setdefault(predicate, []).extend(args)
        return batch
    return _as_facts(batch) + _as_facts(facts)


def _as_facts(batch) -> list:
    if isinstance(batch, dict):
        return [(predicate, args) for predicate, group in batch.items() for args in group]
    return list(batch)


__all__ = ["replay", "Replay", "SnapshotLines", "written"]
