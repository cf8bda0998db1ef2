"""Windows whose content is id columns: appended a batch at a time, cut by time per report.

`ColumnTimeWindow` is `[RANGE r STEP s]` with the semantics of
`rsp_plugin.query.windows.TimeWindow` (it is one: same grid, boundaries and `accepts`; an
element waits until the first boundary after it), but its elements are chunks of numpy
columns (t, s, p, o) instead of Python tuples in dicts: a batch enters as one
chunk, a report cuts the chunks by time (whole chunks dropped, the oldest one
trimmed), and the content of a boundary is the rows with low <= t < boundary.

A window's content is a set of triples. A triple seen twice in the window would
be two rows; each chunk keeps the sorted 64-bit hashes of its rows, and the window
one sorted array of the hashes of every row it took since it last made that array
(a superset of the rows it holds). A new chunk looks its k rows up there in
O(k log n), in one call whatever the window's size, and only on a hit asks each
chunk held, so the content is deduplicated only while a repetition can be in it (a
hash collision, or a row that repeats one already gone, only costs a needless look).

>>> import numpy as np
>>> from rsp_plugin.query.model import RangeWindow
>>> window = ColumnTimeWindow(RangeWindow(2000, 1000))
>>> window.offer_columns(np.array([500, 1500]), np.array([1, 1]), np.array([2, 2]), np.array([3, 4]))
>>> _ = window.advance(1000); window.content.rows()
[(1, 2, 3)]
>>> _ = window.advance(3000); window.content.rows(), window.accepts(1999), window.accepts(2000)
([(1, 2, 4)], False, True)
"""

from __future__ import annotations

from itertools import chain
from math import gcd

import numpy as np

from ..core.arrays import unique_sorted
from ..query.content import TripleIndex
from ..query.windows import TimeWindow

_MIX = (np.uint64(0x9E3779B97F4A7C15), np.uint64(0xC2B2AE3D27D4EB4F), np.uint64(0x165667B19E3779F9))


def triple_hashes(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> np.ndarray:
    """A 64-bit hash per row (equal triples, equal hashes)."""
    with np.errstate(over="ignore"):
        h = s.astype(np.uint64) * _MIX[0]
        h ^= p.astype(np.uint64) * _MIX[1]
        h ^= o.astype(np.uint64) * _MIX[2]
        h ^= h >> np.uint64(29)
    return h


class _Chunk:
    """Rows sorted by time, with the sorted hashes of their triples."""

    __slots__ = ("t", "s", "p", "o", "_hashes", "_terms", "_cut_from")

    def __init__(self, t, s, p, o, terms=None, ordered: bool = False):
        if not ordered and len(t) > 1 and not bool(np.all(t[:-1] <= t[1:])):
            order = np.argsort(t, kind="stable")
            t, s, p, o = t[order], s[order], p[order], o[order]
        self.t, self.s, self.p, self.o = t, s, p, o
        self._hashes = None
        self._terms = terms
        #: (the sorted hashes of the chunk this one was cut from, the rows cut off): `hashes` from them
        self._cut_from = None

    @property
    def hashes(self) -> np.ndarray:
        """The sorted hashes of its rows' triples (made when first asked: a chunk cut off a chunk
        may never be)."""
        if self._hashes is None:
            if self._cut_from is not None:  # (the rows cut off are few: their hashes taken off the whole's)
                whole, (s, p, o) = self._cut_from
                self._hashes = _without(whole, np.sort(triple_hashes(s, p, o)))
                self._cut_from = None
            else:
                self._hashes = np.sort(triple_hashes(self.s, self.p, self.o))
        return self._hashes

    def __len__(self) -> int:
        return len(self.t)

    def terms(self) -> np.ndarray:
        """The distinct ids of its rows (or of the rows it was cut from: a superset), found once:
        the dictionary's forgetting walks a window many times over while a chunk is in it."""
        if self._terms is None:
            from . import kernels
            from .encode import int64_array, numbers  # (Arrow's hashing, no pandas on the way)

            self._terms = np.concatenate([numbers(kernels.unique(int64_array(column)))
                                          for column in (self.s, self.p, self.o)])
        return self._terms

    def trim_before(self, low: int) -> "_Chunk | None":
        cut = int(np.searchsorted(self.t, low, side="left"))
        if cut == 0:
            return self
        if cut >= len(self.t):
            return None
        trimmed = _Chunk(self.t[cut:], self.s[cut:], self.p[cut:], self.o[cut:], self._terms, ordered=True)
        if self._hashes is not None and 2 * cut < len(self.t):
            trimmed._cut_from = (self._hashes, (self.s[:cut], self.p[:cut], self.o[:cut]))
        return trimmed

    def followed_by(self, newer: "_Chunk") -> "_Chunk":
        """This chunk's rows, then `newer`'s (all at or after this one's last time): one chunk."""
        merged = _Chunk(*(np.concatenate((mine, theirs)) for mine, theirs in
                          ((self.t, newer.t), (self.s, newer.s), (self.p, newer.p), (self.o, newer.o))), ordered=True)
        if self._hashes is not None and newer._hashes is not None:  # (two sorted runs: merged in one pass)
            merged._hashes = np.sort(np.concatenate((self._hashes, newer._hashes)), kind="stable")
        return merged

    def repeats(self, hashes: np.ndarray) -> bool:
        """Might one of these (sorted) hashes be a row of this chunk?"""
        return _among(self.hashes, hashes)


def _among(index: np.ndarray | None, hashes: np.ndarray) -> bool:
    """Is one of `hashes` in the sorted `index`?

    >>> _among(np.array([2, 5, 9], dtype=np.uint64), np.array([3, 9], dtype=np.uint64))
    True
    """
    if index is None or not len(index) or not len(hashes):
        return False
    places = np.searchsorted(index, hashes)
    np.minimum(places, len(index) - 1, out=places)
    return bool((index[places] == hashes).any())


def _merged(ordered: np.ndarray | None, more: np.ndarray) -> np.ndarray:
    """Two sorted arrays as one sorted array, in one pass over the result.

    >>> _merged(np.array([1, 4, 6], dtype=np.uint64), np.array([2, 4, 9], dtype=np.uint64)).tolist()
    [1, 2, 4, 4, 6, 9]
    """
    if ordered is None or not len(ordered):
        return more
    if not len(more):
        return ordered
    places = np.searchsorted(ordered, more) + np.arange(len(more))
    out = np.empty(len(ordered) + len(more), dtype=ordered.dtype)
    out[places] = more
    rest = np.ones(len(out), dtype=bool)
    rest[places] = False
    out[rest] = ordered
    return out


def _without(hashes: np.ndarray, removed: np.ndarray) -> np.ndarray:
    """Sorted `hashes` less one occurrence of each of `removed` (sorted, all among them).

    >>> _without(np.array([1, 2, 2, 3, 5], dtype=np.uint64), np.array([2, 5], dtype=np.uint64)).tolist()
    [1, 2, 3]
    """
    values, counts = np.unique(removed, return_counts=True)
    starts = np.searchsorted(hashes, values, side="left")
    offsets = np.arange(len(removed)) - np.repeat(np.cumsum(counts) - counts, counts)
    keep = np.ones(len(hashes), dtype=bool)
    keep[np.repeat(starts, counts) + offsets] = False
    return hashes[keep]


_EMPTY = np.empty(0, dtype=np.int64)
_EMPTY_COLUMNS = (_EMPTY, _EMPTY, _EMPTY, _EMPTY)
#: adjacent chunks of a window are made one while the two hold at most this many rows together
#: (`ColumnTimeWindow._compact`)
MERGE_ROWS = 4096
#: ... once the window holds more than this many (a few cost less kept apart than joined)
FEW_CHUNKS = 8


class PaneLedger:
    """Which panes of a column window changed, and when: what a reader that keeps work per pane asks.

    A pane is a slice of `width` = gcd(RANGE, STEP) ms of the window's timeline, pane k holding
    origin + k*width <= t < origin + (k+1)*width; every window of the grid is a whole number of
    panes. Each batch that enters the window (in time or late) stamps the panes it touches with a
    new serial: a reader that kept something about pane k at serial n knows it still holds while
    `versions[k] == n` (a pane no batch touched has no entry and holds nothing).

    >>> ledger = PaneLedger(1000, 0, 2)
    >>> ledger.touched(np.array([10, 20, 2500])); ledger.versions, ledger.serial
    ({0: 1, 2: 1}, 1)
    >>> ledger.touched(np.array([2999])); ledger.versions, ledger.changed_since(1)
    ({0: 1, 2: 2}, [2])
    """

    __slots__ = ("width", "origin", "span", "versions", "serial", "lowest", "_highest", "_in_order")

    def __init__(self, width: int, origin: int, span: int):
        self.width = width
        self.origin = origin
        #: how many panes a whole window (RANGE) holds
        self.span = span
        #: pane -> the serial of the last batch that touched it
        self.versions: dict[int, int] = {}
        self.serial = 0
        #: no pane before this one is in `versions` (None: none is)
        self.lowest: int | None = None
        self._highest: int | None = None
        #: were the panes entered in increasing order (then the oldest are the dict's first keys)?
        self._in_order = True

    def touched(self, t: np.ndarray) -> None:
        """A batch with these timestamps entered: its panes get a new serial."""
        if not len(t):
            return
        self.serial += 1
        serial = self.serial
        versions = self.versions
        first, last = int(t.min()), int(t.max())
        low, high = (first - self.origin) // self.width, (last - self.origin) // self.width
        if self.lowest is None or low < self.lowest:
            self.lowest = low
        if self._highest is not None and low < self._highest and any(
                pane not in versions for pane in range(low, min(high + 1, self._highest))):
            self._in_order = False  # (a pane older than one held is new: keys out of order)
        if self._highest is None or high > self._highest:
            self._highest = high
        if low == high:
            versions[low] = serial
            return
        for pane in unique_sorted((t - self.origin) // self.width).tolist():
            versions[pane] = serial

    def changed_since(self, serial: int) -> list[int]:
        """The panes touched after `serial`."""
        return [pane for pane, version in self.versions.items() if version > serial]

    def forget_before(self, pane: int) -> None:
        """Panes before `pane` left every window still to come."""
        if self.lowest is None or self.lowest >= pane:
            return
        versions = self.versions
        if self._in_order:
            while versions:
                key = next(iter(versions))
                if key >= pane:
                    break
                del versions[key]
        else:
            self.versions = versions = {key: value for key, value in sorted(versions.items()) if key >= pane}
            self._in_order = True
        self.lowest = next(iter(versions)) if versions else None
        if not versions:
            self._highest = None


class ColumnContent:
    """The triples of a column window at its boundary: columns, and an index when one is asked for.

    The columnar evaluator reads `columns()`; anything else (rdflib's evaluator, a
    union with other contents) reads it as a `TripleIndex`, built on first use.
    """

    #: where a materialization's panes are read (`ShapeMaterializer`: `pane_rows`, `fixed_columns`),
    #: or None: the panes are the chunks' rows by time. Not state: the view sets it again.
    pane_source = None

    def __init__(self, chunks: list, low: int, high: int, distinct: bool, panes: PaneLedger | None = None):
        self._chunks = chunks
        self.low = low
        self.high = high
        #: no triple can be in it twice
        self.distinct = distinct
        #: the window's panes (`PaneLedger`), when the content is a time window's (None: a set of triples)
        self.panes = panes
        #: the ledger's serial when the content was cut: its chunks hold every batch up to it
        self.serial = panes.serial if panes is not None else 0
        self._columns = None
        self._index: TripleIndex | None = None

    def row_count(self) -> int:
        """How many rows `columns()` has, counted without gathering them."""
        if self._columns is not None:
            return len(self._columns[0])
        count = 0
        for chunk in self._chunks:
            count += int(np.searchsorted(chunk.t, self.high, side="left")) - int(
                np.searchsorted(chunk.t, self.low, side="left"))
        return count

    def __getstate__(self) -> dict:
        state = {name: value for name, value in self.__dict__.items() if name != "pane_source"}
        if self.pane_source is not None:  # (read back without its source: a set of triples, no panes)
            state["panes"], state["serial"] = None, 0
        return state

    def rows_between(self, low: int, high: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t, s, p, o) of the rows its chunks hold with low <= t < high, also those past its own
        bounds (waiting for a later boundary): what a reader that works ahead per pane takes. Over a
        materialization's panes: their rows, t = the pane."""
        if self.pane_source is not None:
            return self.pane_source.pane_rows(low, high)
        parts = []
        for chunk in self._chunks:
            if not len(chunk.t) or chunk.t[0] >= high or chunk.t[-1] < low:
                continue  # (a live window's chunks are mostly before the panes asked for)
            start = int(np.searchsorted(chunk.t, low, side="left"))
            stop = int(np.searchsorted(chunk.t, high, side="left"))
            if stop > start:
                parts.append((chunk.t[start:stop], chunk.s[start:stop], chunk.p[start:stop], chunk.o[start:stop]))
        if not parts:
            return _EMPTY_COLUMNS
        if len(parts) == 1:
            return parts[0]
        return tuple(np.concatenate(column) for column in zip(*parts))

    def columns(self) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t, s, p, o) of the rows in the window (a triple seen twice: twice, unless `distinct`)."""
        if self._columns is None:
            parts = []
            for chunk in self._chunks:
                start = int(np.searchsorted(chunk.t, self.low, side="left"))
                stop = int(np.searchsorted(chunk.t, self.high, side="left"))
                if stop > start:
                    parts.append((chunk.t[start:stop], chunk.s[start:stop], chunk.p[start:stop],
                                  chunk.o[start:stop]))
            if not parts:
                empty = np.empty(0, dtype=np.int64)
                self._columns = (empty, empty, empty, empty)
            elif len(parts) == 1:
                self._columns = parts[0]
            else:
                self._columns = tuple(np.concatenate(column) for column in zip(*parts))
        return self._columns

    def rows(self) -> list[tuple[int, int, int]]:
        """The distinct triples, sorted (for tests and small consumers)."""
        _, s, p, o = self.columns()
        return sorted(set(zip(s.tolist(), p.tolist(), o.tolist())))

    def __len__(self) -> int:
        return len(self.columns()[0]) if self.distinct else len(self.index())

    def is_empty(self) -> bool:
        return not len(self.columns()[0])

    def index(self) -> TripleIndex:
        if self._index is None:
            _, s, p, o = self.columns()
            self._index = TripleIndex(zip(s.tolist(), p.tolist(), o.tolist()))
        return self._index

    def timestamp(self, triple) -> int | None:
        """The latest time the triple was seen in the window (C-SPARQL's timestamp function)."""
        t, s, p, o = self.columns()
        found = t[(s == triple[0]) & (p == triple[1]) & (o == triple[2])]
        return int(found.max()) if len(found) else None

    # the TripleIndex questions, for readers that are not columnar
    def match(self, s, p, o):
        return self.index().match(s, p, o)

    def contains(self, triple) -> bool:
        return self.index().contains(triple)

    __contains__ = contains

    def __iter__(self):
        return iter(self.index())

    def estimate(self, s, p, o) -> int:
        return self.index().estimate(s, p, o)

    def fanout(self, p, s_bound: bool, o_bound: bool) -> float:
        return self.index().fanout(p, s_bound, o_bound)

    def live_terms(self):
        _, s, p, o = self.columns()
        return chain(s.tolist(), p.tolist(), o.tolist())


class ColumnTimeWindow(TimeWindow):
    """`[RANGE r STEP s]` over one stream, its elements in numpy chunks (a `TimeWindow` to every reader:
    the same grid, boundaries and `accepts`)."""

    columnar = True

    #: sorted hashes of the rows taken since it was made, and of those taken since it was last merged
    #: into: together a superset of the rows held (`_index_hashes`)
    _hash_index: np.ndarray | None = None
    _recent_hashes: np.ndarray | None = None

    def _hold_nothing(self) -> None:
        self._chunks: list[_Chunk] = []
        self._hash_index = self._recent_hashes = None
        self._waiting: list[tuple[int, tuple]] = []   # single offers, made a chunk at the next advance
        #: a row may repeat another until a window's low passes this time
        self._repeats_until: int | None = None
        self.content = ColumnContent([], 0, 0, True)
        #: chunks not yet handed to a reader of what enters (`entered`), and what entered last time
        self._fresh: list[_Chunk] = []
        self.entered = _EMPTY_COLUMNS
        #: rows a reader took before their boundary (`take_ahead`): they enter with it, not in `entered`
        self._taken: list[_Chunk] = []
        spec = self.grid
        #: which panes (gcd(RANGE, STEP)) changed, for readers that keep work per pane
        width = gcd(spec.range, spec.step) or 1
        self.panes = PaneLedger(width, spec.t0, max(1, spec.range // width)) if not spec.end else None

    def __repr__(self) -> str:
        rows = sum(len(chunk) for chunk in self._chunks)
        return f"<ColumnTimeWindow {self.spec} boundary={self.boundary} rows={rows} chunks={len(self._chunks)}>"

    def offer(self, timestamp: int, triple) -> list:
        self._waiting.append((timestamp, tuple(triple)))
        self._seen(timestamp, timestamp)
        return []

    def offer_columns(self, t: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray) -> None:
        """A batch of elements (their timestamps need not be ordered)."""
        if not len(t):
            return
        self._seen(int(t.min()), int(t.max()))
        self._add(_Chunk(np.asarray(t, dtype=np.int64), np.asarray(s, dtype=np.int64),
                         np.asarray(p, dtype=np.int64), np.asarray(o, dtype=np.int64)))

    def _seen(self, first: int, last: int) -> None:
        if self.first_timestamp is None or first < self.first_timestamp:
            self.first_timestamp = first
        if self.last_timestamp is None or last > self.last_timestamp:
            self.last_timestamp = last

    def _add(self, chunk: _Chunk) -> None:
        hashes = chunk.hashes
        repeated = len(hashes) > 1 and bool(np.any(hashes[1:] == hashes[:-1]))
        if not repeated and (_among(self._hash_index, hashes) or _among(self._recent_hashes, hashes)):
            # (two looks whatever the window's size, then the chunks only on a hit)
            repeated = any(old.repeats(hashes) for old in self._chunks)
        self._index_hashes(hashes)
        if repeated:
            latest = int(chunk.t[-1])
            if self._repeats_until is None or latest > self._repeats_until:
                self._repeats_until = latest
        self._chunks.append(chunk)
        self._fresh.append(chunk)
        if self.panes is not None:
            self.panes.touched(chunk.t)
        self._compact()

    def _index_hashes(self, hashes: np.ndarray) -> None:
        """Put a new chunk's sorted hashes into `_recent_hashes`, folded into `_hash_index` past
        `MERGE_ROWS` rows (a merge costs the array it makes: a small one often, the large one
        seldom). The index is made again from the chunks held once the two hold twice as many rows
        as they do (rows gone since stay until then: a hit on one only costs a look at the chunks)."""
        recent = _merged(self._recent_hashes, hashes)
        index = self._hash_index
        if len(recent) <= MERGE_ROWS and index is not None:
            self._recent_hashes = recent
            return
        self._recent_hashes = None
        if index is not None and len(index) + len(recent) > 2 * sum(len(chunk) for chunk in self._chunks) + MERGE_ROWS:
            self._hash_index = np.sort(np.concatenate([chunk.hashes for chunk in self._chunks] + [hashes]))
        else:
            self._hash_index = _merged(index, recent)

    def _compact(self) -> None:
        """A live stream brings a chunk per report, and a window of 300 s at STEP 1 s held 300 of
        them, each looked at by every batch (`repeats`) and every report. Past `FEW_CHUNKS`, the
        last chunk is joined to the one before it while that one is at most twice its size, the
        two are in time order, and together they hold at most `MERGE_ROWS` rows: a window keeps a
        few dozen chunks, every row in the order it came (no chunk is changed: a content taken
        before still reads its own)."""
        chunks = self._chunks
        while len(chunks) > FEW_CHUNKS:
            older, newer = chunks[-2], chunks[-1]
            if len(older) > 2 * len(newer) or len(older) + len(newer) > MERGE_ROWS or not len(newer) \
                    or not len(older) or older.t[-1] > newer.t[0]:
                return
            chunks[-2:] = [older.followed_by(newer)]

    def _flush(self) -> None:
        if self._waiting:
            waiting, self._waiting = self._waiting, []
            count = len(waiting)
            stamps, triples = zip(*waiting)  # (ids read off in one pass: half the time of an array of tuples)
            rows = np.fromiter(chain.from_iterable(triples), dtype=np.int64, count=3 * count).reshape(count, 3)
            self._add(_Chunk(np.array(stamps, dtype=np.int64), rows[:, 0].copy(), rows[:, 1].copy(), rows[:, 2].copy()))

    def advance(self, tau: int) -> list:
        """Move to the last boundary at or before tau."""
        boundary = self.boundary_at(tau)
        if self.boundary is not None and boundary <= self.boundary:
            return []
        self._flush()
        low, high = self.grid.bounds(boundary)
        kept = []
        left = False
        for chunk in self._chunks:
            trimmed = chunk.trim_before(low)
            left |= trimmed is not chunk
            if trimmed is not None:
                kept.append(trimmed)
        self._chunks = kept
        distinct = self._repeats_until is None or self._repeats_until < low
        if distinct:
            self._repeats_until = None
        taken_entered = self._enter(low, high)
        if left or len(self.entered[0]) or taken_entered:
            self.version += 1
        self.boundary = boundary
        if self.panes is not None:
            self.panes.forget_before((low - self.panes.origin) // self.panes.width)
        self.content = ColumnContent(list(kept), low, high, distinct, self.panes)
        return []

    def _enter(self, low: int, high: int) -> bool:
        """`entered`: (t, s, p, o) of the elements that came into the window with this boundary
        (low <= t < high), oldest first (what a materialization takes); later ones wait for theirs.
        Whether rows taken ahead (`take_ahead`) came in too."""
        parts, waiting = [], []
        for chunk in self._fresh:
            start = int(np.searchsorted(chunk.t, low, side="left"))
            stop = int(np.searchsorted(chunk.t, high, side="left"))
            if stop > start:
                parts.append((chunk.t[start:stop], chunk.s[start:stop], chunk.p[start:stop], chunk.o[start:stop]))
            if stop < len(chunk.t):
                waiting.append(_Chunk(chunk.t[stop:], chunk.s[stop:], chunk.p[stop:], chunk.o[stop:], ordered=True))
        self._fresh = waiting
        taken_entered = False
        if self._taken:  # (what was taken ahead and enters now is the reader's already)
            taken_entered = any(len(chunk.t) and chunk.t[0] < high for chunk in self._taken)
            self._taken = [kept for kept in (chunk.trim_before(high) for chunk in self._taken) if kept is not None]
        if not parts:
            self.entered = _EMPTY_COLUMNS
            return taken_entered
        t, s, p, o = (np.concatenate(column) for column in zip(*parts)) if len(parts) > 1 else parts[0]
        order = np.argsort(t, kind="stable")
        self.entered = (t[order], s[order], p[order], o[order])
        return taken_entered

    def take_ahead(self, high: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """(t, s, p, o) of the rows waiting for a later boundary with t < high, oldest first, handed
        now to a reader that works ahead (a materialization, `columnar.views`): they enter the window
        at their boundary as any row (and count for `next_change`), but are not in `entered` then.
        `give_back` returns the ones the reader did not take."""
        parts, waiting = [], []
        for chunk in self._fresh:
            stop = int(np.searchsorted(chunk.t, high, side="left"))
            if stop:
                parts.append((chunk.t[:stop], chunk.s[:stop], chunk.p[:stop], chunk.o[:stop]))
            if stop < len(chunk.t):
                waiting.append(chunk if not stop else _Chunk(chunk.t[stop:], chunk.s[stop:], chunk.p[stop:],
                                                             chunk.o[stop:], ordered=True))
        if not parts:
            return _EMPTY_COLUMNS
        self._fresh = waiting
        t, s, p, o = (np.concatenate(column) for column in zip(*parts)) if len(parts) > 1 else parts[0]
        if len(parts) > 1:
            order = np.argsort(t, kind="stable")
            t, s, p, o = t[order], s[order], p[order], o[order]
        self._taken.append(_Chunk(t, s, p, o, ordered=True))
        return t, s, p, o

    def give_back(self, taken: int) -> None:
        """Of the rows `take_ahead` handed out last, the reader took the first `taken`: the others wait
        for their boundary again."""
        chunk = self._taken.pop()
        if taken:
            self._taken.append(_Chunk(chunk.t[:taken], chunk.s[:taken], chunk.p[:taken], chunk.o[:taken], ordered=True))
        if taken < len(chunk.t):
            self._fresh.insert(0, _Chunk(chunk.t[taken:], chunk.s[taken:], chunk.p[taken:], chunk.o[taken:],
                                         ordered=True))

    def is_empty(self) -> bool:
        return self.content.is_empty()

    def elements(self):
        """(t, (s, p, o)) of every element held, in the window or waiting for its boundary."""
        for chunk in self._chunks:
            yield from zip(chunk.t.tolist(), zip(chunk.s.tolist(), chunk.p.tolist(), chunk.o.tolist()))
        yield from self._waiting

    def next_change(self) -> int | None:
        """The first boundary after the current one at which an element enters or leaves
        (None: nothing held or staged), as `TimeWindow.next_change`: the on-content-change
        policy skips the others."""
        grid, candidates = self.grid, []
        staged = [int(chunk.t[0]) for chunk in (*self._fresh, *self._taken) if len(chunk.t)]
        staged += [stamp for stamp, _ in self._waiting]
        if staged:  # enters at the first window that holds it
            candidates.append(grid.instant(grid.k_range(min(staged))[0]))
        held = [int(chunk.t[0]) for chunk in self._chunks if len(chunk.t)]
        if held and self.boundary is not None and min(held) < grid.bounds(self.boundary)[1]:  # in the window: leaves
            # after the last window that holds it
            candidates.append(grid.instant(grid.k_range(min(held))[1] + 1))
        return min(candidates) if candidates else None

    def live_terms(self):
        columns = [chunk.terms() for chunk in self._chunks]
        found = np.concatenate(columns).tolist() if columns else []  # one list: a set takes it fastest
        return chain(found, chain.from_iterable(triple for _, triple in self._waiting))




def triple_columns(s: np.ndarray, p: np.ndarray, o: np.ndarray) -> ColumnContent:
    """A set of triples given as columns (a materialization's), read as a content."""
    return ColumnContent([_Rows(np.zeros(len(s), dtype=np.int64), s, p, o)], 0, 1, True)


def pane_columns(s: np.ndarray, p: np.ndarray, o: np.ndarray, *, distinct: bool, ledger: PaneLedger, low: int,
                 source) -> ColumnContent:
    """A materialization's triples (`columns()`: these) whose panes `ledger` counts: panes low .. low + span - 1
    are the window's, read from `source` (`ColumnContent.pane_source`)."""
    content = ColumnContent([], low, low + ledger.span, distinct, ledger)
    content._columns = (np.zeros(len(s), dtype=np.int64), s, p, o)
    content.pane_source = source
    return content


def row_columns(t: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, *, distinct: bool) -> ColumnContent:
    """Rows given as columns (t in any order), read as a content whose `columns()` are these."""
    content = ColumnContent([], 0, 0, distinct)
    content._columns = (t, s, p, o)
    return content


class _Rows:
    __slots__ = ("t", "s", "p", "o")

    def __init__(self, t, s, p, o):
        self.t, self.s, self.p, self.o = t, s, p, o

__all__ = ["ColumnTimeWindow", "ColumnContent", "PaneLedger", "pane_columns", "row_columns", "triple_columns", "triple_hashes"]
