"""Which elements of a micro-batch are taken, and what the watermark does: the local engine's rules, per batch.

The driver-side engine takes a stream one element at a time: the watermark
follows the timestamps (every instant up to it is reported), an element older
than every window still to be reported is late, one too far ahead of the
stream's time (the gap bound) is set aside and never moves the watermark, one
before t0 is refused. Distributed mode keeps those rules without reading the
elements on the driver:

- a first pass over the batch on the executors (`batch_stats`) gives, per
  partition and source (lane), the count, the first and last timestamp,
  whether they come in time order, and the jumps larger than the gap bound,
  with the dead letters of the source;
- when every lane comes in time order (a replayed file, a live sensor feed),
  the batch merged by time is in order: nothing is late, and the gap bound
  cuts at the first jump of the merged timestamps (`Admission.in_order`): a
  filter on the executors;
- otherwise the batch's (row, lane, timestamp) columns come to the driver and
  are walked as the engine walks them (`Admission.sequential`): an element is
  taken, late (set aside) or taken late (it enters only windows not yet
  reported: its `floor`).

Set-aside elements are named as the driver-side mode names them: the stream
and the element's number there; the rules and their messages are the engine's
(`rsp_plugin.core.admission`).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass, field

from ...core.admission import Gap, Gate
from .plan import DistributedPlan

STATS_SCHEMA = ("part INT, lane INT, n BIGINT, first BIGINT, last BIGINT, low BIGINT, high BIGINT, "
                "ordered BOOLEAN, jumps ARRAY<BIGINT>, dead STRING")


def batch_stats(gap: int | None, t0: int):
    """The executors' pass: per partition and lane, what `Admission` needs; a row per dead letter."""

    def stats(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        per_lane: dict[int, list] = {}
        dead: list[str] = []
        for batch in batches:
            rejected = batch.column("rejected")
            if rejected.null_count < batch.num_rows:
                mask = pc.is_valid(rejected)
                dead.extend(pc.filter(rejected, mask).to_pylist())
                batch = batch.filter(pc.invert(mask))
            if batch.num_rows == 0:
                continue
            lanes = batch.column("lane").to_numpy(zero_copy_only=False)
            stamps = batch.column("ts").to_numpy(zero_copy_only=False)
            for lane in np.unique(lanes):
                per_lane.setdefault(int(lane), []).append(stamps[lanes == lane])
        out = {"part": [], "lane": [], "n": [], "first": [], "last": [], "low": [], "high": [],
               "ordered": [], "jumps": [], "dead": []}
        for lane, pieces in per_lane.items():
            for name, value in lane_stats(part, lane, np.concatenate(pieces), gap, t0).items():
                out[name].append(value)
        for text in dead:
            for name in out:
                out[name].append(part if name == "part" else text if name == "dead" else
                                 [] if name == "jumps" else None)
        if out["part"]:
            yield pa.RecordBatch.from_pydict(out, schema=_stats_arrow_schema())

    return stats


def lane_stats(part: int, lane: int, stamps, gap: int | None, t0: int) -> dict:
    """One partition's and lane's stats row (`STATS_SCHEMA`) from its timestamps in arrival order."""
    import numpy as np

    differences = np.diff(stamps)
    ordered = bool((differences >= 0).all()) if len(differences) else True
    kept = stamps[stamps >= t0]
    jumps: list[int] = []
    if gap is not None and ordered and len(kept) > 1:
        at = np.nonzero(np.diff(kept) > gap)[0]
        for index in at[:1000]:
            jumps.extend((int(kept[index]), int(kept[index + 1])))
    return {"part": part, "lane": lane, "n": len(stamps), "first": int(stamps[0]), "last": int(stamps[-1]),
            "low": int(kept.min()) if len(kept) else None, "high": int(kept.max()) if len(kept) else None,
            "ordered": ordered, "jumps": jumps, "dead": None}


def _stats_arrow_schema():
    import pyarrow as pa

    return pa.schema([("part", pa.int32()), ("lane", pa.int32()), ("n", pa.int64()), ("first", pa.int64()),
                      ("last", pa.int64()), ("low", pa.int64()), ("high", pa.int64()), ("ordered", pa.bool_()),
                      ("jumps", pa.list_(pa.int64())), ("dead", pa.string())])


@dataclass
class Decision:
    """What the driver decided for one batch."""

    #: elements with a timestamp >= this are set aside (the gap bound cut the stream there); None: no cut
    cut: int | None = None
    #: elements with a timestamp < this are set aside (before t0)
    start: int | None = None
    #: sequential path: row -> None (set aside) or the boundary time it came after (taken late)
    exceptions: dict[int, int | None] = field(default_factory=dict)
    #: set-aside messages, `STREAM:NUMBER: reason`
    set_aside: list[str] = field(default_factory=list)
    #: rows to name (in-order path): filled by the driver from the executors
    sequential: bool = False


def plan_gate(plan: DistributedPlan) -> Gate:
    """The engine's admission under `plan`: its t0 and its gap bound (`RSPEngine.gate`)."""
    gap = Gap(plan.max_gap, plan.gap_unit) if plan.gap is not None else None
    return Gate(t0=plan.grid.t0, gap=gap)


@dataclass
class Admission:
    """The engine's clock, as the driver-side engine would have it, carried from batch to batch."""

    lanes: list[str]
    #: the engine's admission (`plan_gate`): the latest timestamp taken, the watermark, the rules
    gate: Gate = field(default_factory=Gate)
    #: per lane: the last timestamp seen (time order), and the last one taken (the watermark)
    lane_last: list = field(default_factory=list)
    lane_taken: list = field(default_factory=list)
    first_seen: int | None = None
    #: the last instant index reported (None: none yet)
    done: int | None = None
    pushed: dict = field(default_factory=dict)
    last_of_stream: dict = field(default_factory=dict)
    #: the gap bound's cut, once hit: every later element at or after it is set aside
    cut: int | None = None

    def __post_init__(self):
        if not self.lane_last:
            self.lane_last = [None] * len(self.lanes)
        if not self.lane_taken:
            self.lane_taken = [None] * len(self.lanes)

    # the fast path: every lane in time order ---------------------------------------------------------

    def in_order(self, stats: list[dict]) -> bool:
        """Does every lane come in time order, within the batch and after what came before?"""
        by_lane: dict[int, list[dict]] = {}
        for row in stats:
            if row["dead"] is None:
                by_lane.setdefault(row["lane"], []).append(row)
        for lane, rows in by_lane.items():
            last = self.lane_last[lane]
            for row in sorted(rows, key=lambda r: r["part"]):
                if not row["ordered"] or (last is not None and row["first"] < last):
                    return False
                last = row["last"]
        return True

    def decide_in_order(self, plan: DistributedPlan, stats: list[dict]) -> Decision:
        """The cut of the gap bound (if any) and the t0 bound; the clock moved to the batch's end."""
        rows = [row for row in stats if row["dead"] is None and row["n"]]
        decision = Decision(start=plan.grid.t0)
        if not rows:
            return decision
        gap = plan.gap
        cut = self.cut
        gate = self.gate
        segments = []
        for row in rows:
            if row["low"] is None:
                continue
            points = [row["low"], *row["jumps"], row["high"]]
            segments.extend((points[i], points[i + 1], row["lane"]) for i in range(0, len(points), 2))
        segments.sort()
        if segments and cut is None:
            if gate.latest is None:
                reach = segments[0][0]
            else:
                reach = gate.latest
                if gate.watermark is not None and gate.watermark > reach:
                    reach = gate.watermark
            for low, high, _ in segments:
                if gap is not None and low - reach > gap:
                    cut = low
                    break
                if high > reach:
                    reach = high
        decision.cut = cut
        self.cut = cut
        for row in rows:
            lane = row["lane"]
            self.lane_last[lane] = row["last"] if self.lane_last[lane] is None else max(self.lane_last[lane], row["last"])
        taken = [(low, high, lane) for low, high, lane in segments if cut is None or low < cut]
        for low, high, lane in taken:
            if cut is not None and high >= cut:
                continue  # (a segment never straddles the cut: the cut starts one)
            before = self.lane_taken[lane]
            self.lane_taken[lane] = high if before is None else max(before, high)
            if gate.latest is None or high > gate.latest:
                gate.latest = high
        if taken and self.first_seen is None:
            self.first_seen = min(low for low, _, _ in taken)
        return decision

    def catch_up(self, plan: DistributedPlan, delay: int = 0) -> None:
        """After an in-order batch: the watermark at the least of the lanes' last taken timestamps (a
        lane with nothing yet holds the others back, as the driver's merge does), and the instants up
        to it reported."""
        if any(last is None for last in self.lane_taken):
            return
        bound = min(self.lane_taken) - delay
        if self.gate.watermark is None or bound > self.gate.watermark:
            self.gate.watermark = bound
        self.done = self.reported_through(plan, self.gate.watermark, self.done)

    def reported_through(self, plan: DistributedPlan, time: int | None, done: int | None) -> int | None:
        """The last instant index reported once the engine is advanced to `time`."""
        if time is None or self.first_seen is None:
            return done
        grid = plan.grid
        first = grid.first_after(self.first_seen)
        if plan.floor is not None:
            first = max(first, grid.first_after(plan.floor))
        last = grid.last_at_or_before(time)
        if last < first:
            return done
        return last if done is None or last > done else done

    def first_instant(self, plan: DistributedPlan) -> int | None:
        if self.first_seen is None:
            return None
        first = plan.grid.first_after(self.first_seen)
        if plan.floor is not None:
            first = max(first, plan.grid.first_after(plan.floor))
        return first

    # the exact path: walked element by element ------------------------------------------------------

    def sequential(self, plan: DistributedPlan, rows, delay: int = 0, materialized: bool = False) -> Decision:
        """`rows`: (row, lane, ts) in arrival order (lanes merged by time as the driver merges them).
        The engine's `_accept` and `advance_to`, on timestamps only."""
        decision = Decision(start=plan.grid.t0, sequential=True)
        grid = plan.grid
        windows = plan.windows
        gate = self.gate
        pending: list[int] = []

        def next_k():
            if self.first_seen is None:
                return None
            k = grid.first_after(self.first_seen)
            if plan.floor is not None:
                k = max(k, grid.first_after(plan.floor))
            if self.done is not None and self.done + 1 > k:
                k = self.done + 1
            return k

        def advance(target: int) -> None:
            while True:
                k = next_k()
                instant = grid.instant(k) if k is not None else None
                if pending and pending[0] < target and (instant is None or pending[0] < instant):
                    taken = heapq.heappop(pending)
                    if self.first_seen is None:
                        self.first_seen = taken
                    continue
                if instant is not None and instant <= target:
                    self.done = k
                    continue
                break
            if gate.watermark is None or target > gate.watermark:
                gate.watermark = target

        def still_open(window, ts: int) -> bool:
            """Would `window` still take an element at `ts` (no report yet past what holds it)?"""
            if self.done is None:
                return True
            boundary = grid.boundary(window, grid.instant(self.done))
            return ts >= boundary if materialized else ts >= boundary + window.step - window.range

        for row, lane, ts in rows:
            stream = self.lanes[lane]
            if self.lane_last[lane] is None or ts > self.lane_last[lane]:
                self.lane_last[lane] = ts
            number = self.pushed.get(stream, 0) + 1
            self.pushed[stream] = number
            target = ts - delay
            if (gate.watermark is None or target > gate.watermark) and gate.far_from_now(ts) is None:
                advance(target)
            late = gate.watermark is not None and ts < gate.watermark
            held = True
            if late:
                readers = [window for window in windows if window.stream == stream]
                held = not readers or any(still_open(window, ts) for window in readers)
            problem = gate.judge(ts, held)
            if problem is not None:
                decision.exceptions[row] = None
                decision.set_aside.append(f"{stream}:{number}: {problem}")
                continue
            before = self.last_of_stream.get(stream)
            self.last_of_stream[stream] = ts if before is None else max(before, ts)
            if late:
                if self.first_seen is None:
                    self.first_seen = ts
                if self.done is not None:
                    decision.exceptions[row] = grid.instant(self.done)
            else:
                heapq.heappush(pending, ts)
            if self.lane_taken[lane] is None or ts > self.lane_taken[lane]:
                self.lane_taken[lane] = ts
        # what is still pending is taken by the next advance (as the engine's pending heap); its first
        # element may start the timeline
        if pending and self.first_seen is None:
            self.first_seen = pending[0]
        return decision


__all__ = ["Admission", "Decision", "batch_stats", "lane_stats", "plan_gate", "STATS_SCHEMA"]
