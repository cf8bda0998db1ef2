"""A distributed `reason` run in three steps, none needing Spark to be checked (`rule_split` proves why they agree):

1. `admit` (driver): the lines of the stream judged in order as `--engine local`
   judges them (late, too far ahead, unreadable: set aside and said; before
   `--from`; after `--to`: the stream ends there), from narrow columns of the
   rows; the result says which rows the engines take and the timeline
   [start, end] every engine runs;
2. `assign` then `run_part` (executors): each taken row goes to the parts that
   need it (its key's bucket, or the time slices whose span or margin holds
   it), and each part runs the one engine (`columnar.reason.Replay` for LARS,
   `mtl.run.MetricReplay` for DatalogMTL) over its rows, keeping what changed
   per time point as written atoms: rows `(t, kind, text)`, kind 1 started,
   -1 stopped, 0 held at a slice's first time point (its whole line there), 2 an
   error (the engine's limit) at t;
3. `Merge` (driver): the parts' rows per time point into `reason`'s lines,
   byte for byte those of `--engine local` (`SnapshotLines` writes them).

    job = Job.of(...)                                # the program's text, the split, the timeline
    table = run_part(job, part, rows)                # per part (Spark: groupBy("part").applyInArrow)
    Merge(job, out, changes).write(all_parts_rows)   # the lines
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from ..columnar.reason import Replay, SnapshotLines, written
from ..io.lines import Rejected
from ..lars.limits import LimitError
from ..mtl.run import MetricReplay
from .reason_rows import DATALOGMTL, LARS, block_of, in_line_order, items_of
from .rule_split import KeyLocal, TimeSliced, bucket_of

#: the part rows' columns
PART_SCHEMA = "t BIGINT, kind TINYINT, text STRING"
STARTED, STOPPED, HELD, ERROR = 1, -1, 0, 2


@dataclass
class Admission:
    """What the engines take of the stream: rows before `cut_line` (None: all), at or after time point
    `first` (LARS, None: all), but those whose lines are in `dropped`; the timeline `span` (first, last
    time point; None: no line is written); the records set aside, in order."""

    span: tuple[int, int] | None
    cut_line: int | None = None
    first: int | None = None
    dropped: list[int] = field(default_factory=list)
    records: list[Rejected] = field(default_factory=list)


def admit(language: str, table, *, terms, lowered=None, first: int | None, last: int | None,
          max_gap: int | None, filename: str) -> Admission:
    """Judge the rows (columns line, first, last, predicate, arity, rejected; in line order) as `--engine
    local` judges the lines: `columnar.reason.Replay.take` (LARS) or `mtl.data.FactTimeline.admit`
    behind `with_arities` (DatalogMTL)."""
    if language == LARS:
        return _admit_lars(table, first, last, max_gap, filename)
    return _admit_metric(table, terms, lowered, first, last, max_gap, filename)


def _admit_lars(table, first, last, max_gap, filename) -> Admission:
    import pyarrow.compute as pc

    from ..core.admission import Gap, Gate

    rejected = table.column("rejected")
    dead = []
    if rejected.null_count < table.num_rows:
        gone = table.filter(pc.is_valid(rejected))
        dead = [Rejected(filename, line, reason) for line, reason in zip(gone.column("line").to_pylist(),
                                                                        gone.column("rejected").to_pylist())]
        table = table.filter(pc.is_null(rejected))
    lines = table.column("line").to_pylist()
    times = table.column("first").to_pylist()
    rows = range(len(times))
    dropped: list[int] = []
    if times:  # (the judgment of `Replay.take`, on the whole stream at once)
        gate = Gate(in_order=True, gap=Gap(max_gap) if max_gap is not None else None, start=first)
        taken, set_aside = gate.judge_many(times)
        if set_aside:
            dead.extend(Rejected(filename, lines[row], why) for row, why in set_aside)
            dropped = [lines[row] for row, _ in set_aside]
            rows = taken.nonzero()[0].tolist()
    cut = None
    if last is not None and rows and times[rows[-1]] > last:
        cut = next(k for k in rows if times[k] > last)
        rows = [k for k in rows if k < cut]
    cut_line = lines[cut] if cut is not None else None
    dead.sort(key=lambda record: record.line)
    records = [record for record in dead if cut_line is None or record.line < cut_line]
    if first is not None and rows and times[rows[0]] < first:
        rows = [k for k in rows if times[k] >= first]
    if rows:
        span = (first if first is not None else times[rows[0]], last if last is not None else times[rows[-1]])
    elif first is not None and last is not None:
        span = (first, last)
    else:
        span = None
    return Admission(span, cut_line, first, dropped, records)


def _admit_metric(table, terms, lowered, first, last, max_gap, filename) -> Admission:
    from ..columnar.encode import encode
    from ..mtl.data import CUT, TAKEN, FactTimeline, TimedFact, with_arities

    records: list[Rejected] = []
    timeline = FactTimeline(first=first, last=last, filename=filename, max_gap=max_gap)
    lines = table.column("line").to_pylist()
    firsts = table.column("first").to_pylist()
    lasts = table.column("last").to_pylist()
    reasons = table.column("rejected").to_pylist()
    arities = table.column("arity").to_pylist()
    predicates = encode(table.column("predicate").fill_null(""), terms).tolist()

    def items():
        for line, start, end, reason, predicate, arity in zip(lines, firsts, lasts, reasons, predicates, arities):
            if reason is not None:
                yield Rejected(filename, line, reason)
            else:
                yield TimedFact(start, end, (predicate, (0,) * arity), line, terms)

    dropped: list[int] = []
    cut_line = None
    arities_of = lowered.arities
    for original in items():
        for item in with_arities((original,), arities_of, terms, filename):  # (a fact of another arity: set aside)
            verdict = timeline.admit(item, records.append)
            if verdict == CUT:
                cut_line = item.line
                break
            if isinstance(original, TimedFact) and (verdict != TAKEN or item is not original):
                dropped.append(original.line)
        if cut_line is not None:
            break
    return Admission(timeline.span(), cut_line, None, dropped, records)


# the job and its parts -------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Job:
    """What every part needs: the program as text (each executor parses it again), how the stream is named
    in messages, the timeline, the engine's options, and the split: `keys` ((predicate, arity) written
    -> key place) and `buckets` for key-local parts, or `slices` ([a, b) each) and `reach` for time slices."""

    language: str
    program_text: str
    program_name: str
    stream_name: str
    start: int
    end: int
    pruning: bool = True
    max_derivations: int | None = None
    keys: tuple = ()
    buckets: int = 0
    slices: tuple = ()
    reach: int = 0

    @property
    def parts(self) -> int:
        return self.buckets if self.buckets else len(self.slices)

    def parse(self):
        """(the engine's program, the DatalogMTL lowering or None), parsed from the job's text."""
        if self.language == DATALOGMTL:
            from ..mtl import load_program

            lowered = load_program(self.program_text, self.program_name)
            return lowered.program, lowered
        from ..lars.syntax import parse_program

        return parse_program(self.program_text, self.program_name), None

    def slice_starts(self) -> list[int]:
        return [a for a, _ in self.slices]


def plan_job(language: str, program_text: str, program_name: str, stream_name: str, program, split, span,
             parts: int, *, pruning: bool = True, max_derivations: int | None = None) -> Job:
    """The job for a split (`rule_split`) over the timeline `span` in `parts` parts."""
    start, end = span
    common = dict(pruning=pruning, max_derivations=max_derivations)
    if isinstance(split, KeyLocal):
        keys = tuple(sorted((program.terms.key(p), a, place) for (p, a), place in split.keys.items()))
        return Job(language, program_text, program_name, stream_name, start, end, keys=keys,
                   buckets=max(1, parts), **common)
    assert isinstance(split, TimeSliced)
    return Job(language, program_text, program_name, stream_name, start, end,
               slices=tuple(time_slices(start, end, parts, split.reach)), reach=split.reach, **common)


def time_slices(start: int, end: int, parts: int, reach: int) -> list[tuple[int, int]]:
    """[a, b) slices of [start, end + 1): as many as `parts`, but none shorter than twice the margin `reach`
    (a slice's engine runs its margin again: a short slice would mostly repeat work)."""
    length = end - start + 1
    count = max(1, min(parts, length // max(1, 2 * reach)))
    bounds = [start + length * k // count for k in range(count + 1)]
    return [(bounds[k], bounds[k + 1]) for k in range(count) if bounds[k + 1] > bounds[k]]


def assign(job: Job, table):
    """The rows (taken) with a `part` column: a row per part that needs it (its key's bucket; each slice
    whose margin or span holds its time points). Rows of predicates the program does not read are left out
    (key-local: they have no key place)."""
    import numpy as np
    import pyarrow as pa

    if table.num_rows == 0:
        return table.append_column("part", pa.array([], pa.int32()))
    if job.buckets:
        places = {(predicate, arity): place for predicate, arity, place in job.keys}
        predicates = table.column("predicate").to_pylist()
        args = table.column("args").to_pylist()
        parts = []
        keep = []
        buckets = job.buckets
        cache: dict = {}
        for row, (predicate, values) in enumerate(zip(predicates, args)):
            place = places.get((predicate, len(values)))
            if place is None:
                continue
            key = values[place]
            bucket = cache.get(key)
            if bucket is None:
                bucket = cache[key] = bucket_of(key, buckets)
            keep.append(row)
            parts.append(bucket)
        chosen = table.take(pa.array(keep, pa.int64())) if len(keep) < table.num_rows else table
        return chosen.append_column("part", pa.array(parts, pa.int32()))
    firsts = np.asarray(table.column("first").to_numpy(), dtype=np.int64)
    lasts = np.asarray(table.column("last").to_numpy(), dtype=np.int64)
    pieces = []
    for number, (a, b) in enumerate(job.slices):
        begin = max(job.start, a - job.reach)
        mask = (lasts >= begin) & (firsts < b)
        if mask.any():
            chosen = table.filter(pa.array(mask))
            pieces.append(chosen.append_column("part", pa.array(np.full(chosen.num_rows, number, np.int32))))
    if not pieces:
        return table.slice(0, 0).append_column("part", pa.array([], pa.int32()))
    return pa.concat_tables(pieces)


def run_part(job: Job, part: int, table, parsed=None):
    """One part's engine over its rows: an Arrow table of `PART_SCHEMA` (what changed per time point, as
    written atoms). `parsed`: the job's program parsed already (in-process callers)."""
    import pyarrow as pa

    program, lowered = parsed if parsed is not None else job.parse()
    table = in_line_order(table)
    if job.buckets:
        first, last, report_from = job.start, job.end, None
        owned = _Owner(job, part, program.terms)
    else:
        a, b = job.slices[part]
        first, last, report_from = max(job.start, a - job.reach), b - 1, a
        owned = None
    keeper = _Keeper(report_from, owned, program.terms, job.start)
    try:
        if job.language == LARS:
            replay = _PartReplay(keeper, program, first=first, last=last, pruning=job.pruning,
                                 max_derivations=job.max_derivations, max_gap=None, filename=job.stream_name)
            replay.take(block_of(table, program.terms, job.stream_name), None, _nowhere)
            replay.end(None)
        else:
            replay = _PartMetricReplay(keeper, lowered, first=first, last=last, max_gap=None,
                                       filename=job.stream_name)
            replay.take(items_of(table, program.terms, job.stream_name), None, _nowhere)
            replay.end(None)
    except LimitError as error:
        keeper.error(error)
    return pa.table({"t": pa.array(keeper.times, pa.int64()), "kind": pa.array(keeper.kinds, pa.int8()),
                     "text": pa.array(keeper.texts, pa.string())})


def _nowhere(record) -> None:
    """A part's rows were judged on the driver (`admit`): none is set aside again."""


class _Owner:
    """Which facts a key-local part reports: those whose key (the term in their predicate's key place) is
    in its bucket."""

    def __init__(self, job: Job, part: int, terms):
        self.part, self.buckets, self.terms = part, job.buckets, terms
        self.places = {}
        for predicate, arity, place in job.keys:
            found = terms.find(predicate)
            if found is not None:
                self.places[(found, arity)] = place
        self.known: dict[int, bool] = {}

    def __call__(self, fact) -> bool:
        predicate, args = fact
        place = self.places.get((predicate, len(args)))
        if place is None:  # (no rule derives it: never reported)
            return False
        term = args[place]
        mine = self.known.get(term)
        if mine is None:
            mine = self.known[term] = bucket_of(self.terms.key(term), self.buckets) == self.part
        return mine


class _Keeper:
    """The part's rows: written atoms that started / stopped per time point; with `report_from`, nothing
    before it and the whole line at it; with `owned`, only the facts it owns."""

    def __init__(self, report_from: int | None, owned, terms, start: int):
        self.report_from, self.owned, self.terms, self.start = report_from, owned, terms, start
        self.times: list[int] = []
        self.kinds: list[int] = []
        self.texts: list[str] = []
        self.holding: dict = {}  # fact -> written atom (a slice's whole line at its first time point)

    def changed(self, point: int, started, started_texts, stopped) -> None:
        """`started` facts (written `started_texts`), `stopped` facts, at `point`."""
        owned = self.owned
        if owned is not None:
            pairs = [(fact, text) for fact, text in zip(started, started_texts) if owned(fact)]
            stopped = [fact for fact in stopped if owned(fact)]
        else:
            pairs = list(zip(started, started_texts))
        holding = self.holding
        gone = [holding.pop(fact) for fact in stopped]
        holding.update(pairs)
        if self.report_from is not None and point < self.report_from:
            return
        if self.report_from is not None and point == self.report_from:
            self._rows(point, HELD, list(holding.values()))
            return
        self._rows(point, STARTED, [text for _, text in pairs])
        self._rows(point, STOPPED, gone)

    def held(self, point: int, texts: set[str]) -> None:
        """A DatalogMTL part's line at `point` (the holding set, written): kept as its changes."""
        before = self.holding
        self.holding = {text: text for text in texts}
        if self.report_from is not None and point < self.report_from:
            return
        if self.report_from is not None and point == self.report_from:
            self._rows(point, HELD, list(texts))
            return
        self._rows(point, STARTED, [text for text in texts if text not in before])
        self._rows(point, STOPPED, [text for text in before if text not in texts])

    def _rows(self, point: int, kind: int, texts: list[str]) -> None:
        self.times.extend([point] * len(texts))
        self.kinds.extend([kind] * len(texts))
        self.texts.extend(texts)

    def error(self, error) -> None:
        found = getattr(error, "point", None)
        self.times.append(found if found is not None else self.start)
        self.kinds.append(ERROR)
        self.texts.append(json.dumps([error.msg, error.filename, error.lineno, error.offset]))


class _Kept:
    """A part's replay: what it writes goes to a `_Keeper`; a bound it passes names its time point."""

    def __init__(self, keeper, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.keeper = keeper

    def _evaluate(self, point, facts, out):
        try:
            super()._evaluate(point, facts, out)
        except LimitError as error:
            error.point = point
            raise


class _PartReplay(_Kept, Replay):
    """A LARS part: its changes kept (`_Keeper`), not written."""

    def write(self, point, started, stopped, out):
        self.keeper.changed(point, started, written(started, self.terms), stopped)


class _PartMetricReplay(_Kept, MetricReplay):
    """A DatalogMTL part: its lines kept as changes (`_Keeper`), not written."""

    def write(self, point, holding, out):
        owned = self.keeper.owned
        if owned is not None:
            holding = {fact for fact in holding if owned(fact)}
        self.keeper.held(point, self.texts(holding))


# the driver: the parts' rows into lines -----------------------------------------------------------------------


class Merge:
    """The parts' rows (`PART_SCHEMA`, any order) into `reason`'s lines for every time point of the job's
    timeline, written to `out`: a snapshot (`SnapshotLines`, as `--engine local` writes it) or, with
    `changes`, what started and stopped."""

    def __init__(self, job: Job, out, changes: bool):
        self.job, self.out, self.changes = job, out, changes
        self.snapshot = SnapshotLines()
        self.holding: set[str] = set()

    def write(self, table) -> None:
        """Every line of the timeline; a part's error (the engine's limit) after the lines before it."""
        import numpy as np

        job = self.job
        times = np.asarray(table.column("t").to_numpy(), dtype=np.int64)
        order = np.argsort(times, kind="stable")
        times = times[order]
        kinds = np.asarray(table.column("kind").to_numpy(), dtype=np.int8)[order]
        texts = table.column("text").take(order).to_pylist() if len(order) else []
        errors = [(int(times[k]), texts[k]) for k in np.flatnonzero(kinds == ERROR).tolist()]
        stop = min(errors)[0] if errors else None
        starts = set(job.slice_starts()) if job.slices else set()
        bounds = np.searchsorted(times, np.arange(job.start, job.end + 2), side="left").tolist()
        for number, point in enumerate(range(job.start, job.end + 1)):
            if stop is not None and point >= stop:
                break
            low, high = bounds[number], bounds[number + 1]
            kind = kinds[low:high]
            text = texts[low:high]
            if point in starts:
                now = {t for t, k in zip(text, kind.tolist()) if k == HELD}
                started, stopped = list(now - self.holding), list(self.holding - now)
            else:
                started = [t for t, k in zip(text, kind.tolist()) if k == STARTED]
                stopped = [t for t, k in zip(text, kind.tolist()) if k == STOPPED]
            self.line(point, started, stopped)
        if stop is not None:
            message, filename, line, column = json.loads(min(errors)[1])
            raise LimitError(message, filename, line, column)

    def line(self, point: int, started: list[str], stopped: list[str]) -> None:
        holding = self.holding
        holding.difference_update(stopped)
        holding.update(started)
        if self.changes:
            self.out.write(json.dumps({"t": point, "started": sorted(started), "stopped": sorted(stopped)},
                                      ensure_ascii=False) + "\n")
            return
        self.snapshot.change_written(started, stopped)
        self.snapshot.write_line(point, self.out)


__all__ = ["Admission", "admit", "Job", "plan_job", "time_slices", "assign", "run_part", "Merge", "PART_SCHEMA"]
