"""Window content as facts with instant intervals, made on the executors as the triples arrive.

A fact is a row `w, rel, c0, c1, c2, c3, k1, k2`: the window it belongs to
(its index in the query; static graphs have negative ones), the relation
(`triple`, or a helper relation of the OWL 2 RL rules such as `list_member`),
its arguments in N-Triples form, and the interval of report instants
[k1, k2] it is seen at (`plan.Grid`). A window's triples become such rows by
Spark expressions (`window_rows`). Under ENTAILMENT their closures are joined
from templates when read (`expand.py`); where a shape needs a literal's value
(OWL 2 RL's datatypes) or a comparison reads a number, each triple's seed
closure is made here instead (`stored_closures`, by
`rsp_plugin.reasoning.templates.SeedReasoner`): instantiated from a template
per distinct shape, Python per shape, numpy per row.

The background's closure B* is not stored with the windows: it holds at every
instant, and the driver adds it to what the joins read (`background_rows`).
"""

from __future__ import annotations

import json

from ...core.terms import NUMERIC_START
from ...reasoning.templates import LASTING, SeedReasoner, split_ntriple
from .plan import ALWAYS, NEVER, DistributedPlan
from .sqltext import Sql, local_table

FACTS_SCHEMA = "w INT, rel STRING, c0 STRING, c1 STRING, c2 STRING, c3 STRING, k1 BIGINT, k2 BIGINT"
ARGS = ("c0", "c1", "c2", "c3")
TRIPLE = "triple"
#: the number of argument columns (the widest relation of the shipped rule sets has 4... or fewer)
WIDTH = 4

_REASONERS: dict[tuple, SeedReasoner] = {}


def reasoner_for(profile: str, background_text: str) -> SeedReasoner:
    """The process's seed reasoner for a profile and a background (B* closed once per Python worker)."""
    import hashlib

    key = (profile, hashlib.sha256(background_text.encode("utf-8")).hexdigest())
    found = _REASONERS.get(key)
    if found is None:
        lines = [line for line in background_text.split("\n") if line]
        found = _REASONERS[key] = SeedReasoner(profile, lines)
        if len(_REASONERS) > 8:
            _REASONERS.clear()
            _REASONERS[key] = found
    return found


def facts_arrow_schema():
    import pyarrow as pa

    return pa.schema([("w", pa.int32()), ("rel", pa.string()), ("c0", pa.string()), ("c1", pa.string()),
                      ("c2", pa.string()), ("c3", pa.string()), ("k1", pa.int64()), ("k2", pa.int64())])


class Content:
    """What a report reads: facts, and per triple pattern what the stored triples derive for it
    (`expand.Expansion`: each pattern reads only the facts it can match). `repeats`: whether the
    facts may hold one fact many times (closures: a sensor's type from each of its observations).
    `pointwise`: whether each pattern's facts are best spread over their instants before the joins
    (`pointwise_windows`: every window fact is seen at one instant, and the facts seen at every
    instant are few), so that the joins match on the instant instead of intersecting intervals.
    `bounds`: the instants reported (`report_bounds`)."""

    def __init__(self, facts, derive=None, repeats: bool = True, pointwise: bool = False, *, bounds):
        self.facts = facts
        self.derive = derive
        self.repeats = repeats
        self.pointwise = pointwise
        self.bounds = bounds

    def for_pattern(self, pattern):
        """(the facts a triple pattern ([(kind, value)] * 3) reads: a superset, matched by the caller;
        whether one fact may be among them many times)."""
        derived, repeats = self.derive(pattern) if self.derive is not None else (None, False)
        if derived is None:
            return self.facts, self.repeats
        return self.facts.unionByName(derived), self.repeats or repeats


def pointwise_windows(plan: DistributedPlan) -> bool:
    """Is every element of every window seen at one report instant at most? (A window whose span,
    RANGE past its end offset, is at most its STEP holds an element for one window boundary at most,
    and a STEP no longer than the report period puts a boundary at one instant at most: tumbling
    windows reported at their STEP.)"""
    return all(window.range - window.end <= window.step <= plan.grid.period for window in plan.windows)


def report_bounds(spark, k_lo: int, k_hi: int):
    """The instants a report reads, [k_lo, k_hi], as a one-row DataFrame (`_lo`, `_hi`) that plans
    join with (broadcast), not as numbers written into them. Spark compiles a plan's code once per
    text, and writes numbers into the code: numbers that change every batch made every batch's code
    new, compiled again (Janino, then the JVM's JIT: a third of a batch's CPU time) and run slowly
    until it was. With the numbers as data, from the third batch on no code is compiled."""
    return numbers_table(spark, _lo=k_lo, _hi=k_hi)


def numbers_table(spark, **numbers: int):
    """Numbers as a one-row table of BIGINT columns named as given (a VALUES list: a local relation,
    broadcast with no Spark job), for plans to join with rather than have them written in."""
    return local_table(spark, [tuple(numbers.values())], ", ".join(f"{name} BIGINT" for name in numbers))


def within(frame, bounds):
    """The facts of `frame` (k1, k2) seen at an instant of `bounds` (`report_bounds`)."""
    from pyspark.sql import functions as F

    return frame.crossJoin(F.broadcast(bounds)).where("k2 >= _lo AND k1 <= _hi").drop("_lo", "_hi")


#: a floor below every timestamp (Spark's smallest long)
LOWEST = -(1 << 63)


def window_rows(plan: DistributedPlan, taken, lanes: list[str], after: int | None = None):
    """Admitted rows (lane, s, p, o, ts, floor; `lanes`: each lane's stream) -> each window's triples
    with their instant intervals (fact rows), as Spark expressions: no Python worker.
    `Grid.element_range` in SQL: the grid's own `k_range` written over column expressions (`Sql`).
    `after`: only the facts seen at an instant after it (first by their timestamps), the bounds
    joined in as data, not written into the plan (`report_bounds`)."""
    if after is not None:
        from pyspark.sql import functions as F

        earliest = {f"_from{window.index}": plan.grid.earliest_after(window, after) for window in plan.windows}
        taken = taken.crossJoin(F.broadcast(numbers_table(taken.sparkSession, _after=after, **earliest)))
    parts = []
    for window in plan.windows:
        low = Sql(f"greatest(ts + ({window.end}), coalesce(floor, {LOWEST}))")
        k1, k2 = plan.grid.k_range(window, low, Sql("ts") + window.range)
        reading = [str(lane) for lane, stream in enumerate(lanes) if stream == window.stream]
        if not reading:
            continue
        condition = f"lane IN ({', '.join(reading)})"
        if after is not None:
            condition += f" AND ts >= _from{window.index}"
        seen = "k1 <= k2" if after is None else "k1 <= k2 AND k2 > _after"
        parts.append(taken.where(condition).selectExpr(*_fact_columns(str(window.index), k1, k2)).where(seen))
    if not parts:  # (no window reads these lanes)
        return taken.limit(0).selectExpr(*_fact_columns("NULL", "NULL", "NULL"))
    out = parts[0]
    for part in parts[1:]:
        out = out.unionByName(part)
    return out


def _fact_columns(window: str, k1: str, k2: str) -> list[str]:
    """A window triple (s, p, o) as a fact row (`FACTS_SCHEMA`), its window and interval as SQL."""
    return [f"CAST({window} AS INT) AS w", f"'{TRIPLE}' AS rel", "s AS c0", "p AS c1", "o AS c2",
            "CAST(NULL AS STRING) AS c3", f"CAST({k1} AS BIGINT) AS k1", f"CAST({k2} AS BIGINT) AS k2"]


def stored_closures(plan: DistributedPlan, background=None):
    """The executors' function (mapInArrow): a window's triples (fact rows) -> their seed closures,
    for the profiles whose templates read literals' values (`SeedReasoner.literal_predicates`:
    a shape Spark's expressions cannot tell) and the rare shapes whose template is not reusable.

    `background`: a Spark broadcast of the background's N-Triples text."""
    profile = plan.entailment

    def facts(batches):
        import numpy as np
        import pyarrow.compute as pc

        schema = facts_arrow_schema()
        reasoner = reasoner_for(profile, background.value)
        for batch in batches:
            if batch.num_rows == 0:
                continue
            windows = np.unique(batch.column("w").to_numpy(zero_copy_only=False)).tolist()
            for window in windows:
                chosen = batch if len(windows) == 1 else batch.filter(pc.equal(batch.column("w"), window))
                k1 = chosen.column("k1").to_numpy(zero_copy_only=False).astype(np.int64)
                k2 = chosen.column("k2").to_numpy(zero_copy_only=False).astype(np.int64)
                yield from _seed_closures(reasoner, int(window), chosen.column("c0"), chosen.column("c1"),
                                          chosen.column("c2"), k1, k2, schema)

    return facts


def _seed_closures(reasoner: SeedReasoner, window: int, s, p, o, k1, k2, schema):
    """Each triple's seed closure, a template per shape (the triple's terms the rules and B* never name
    are slots)."""
    import numpy as np
    import pandas as pd
    import pyarrow as pa
    import pyarrow.compute as pc

    schema_terms = reasoner.schema
    columns = (s, p, o)
    known = pa.array(sorted(schema_terms), pa.string()) if schema_terms else pa.array([], pa.string())
    kinds = [pc.is_in(column, value_set=known).to_numpy(zero_copy_only=False) for column in columns]
    values = [column.to_numpy(zero_copy_only=False) for column in columns]
    frame = pd.DataFrame({
        "s": np.where(kinds[0], values[0], ""), "p": np.where(kinds[1], values[1], ""),
        "o": np.where(kinds[2], values[2], ""),
        "sp": values[0] == values[1], "so": values[0] == values[2], "po": values[1] == values[2],
    })
    # the terms that may be numbers (a comparison may read them: see `SeedReasoner.template`)
    starts = pa.array(sorted(NUMERIC_START), pa.string())
    for name, kind, column in zip(("ns", "np", "no"), kinds, columns):
        first = pc.is_in(pc.utf8_slice_codeunits(column, 0, 1), value_set=starts).to_numpy(zero_copy_only=False)
        frame[name] = ~kind & first
    if reasoner.literal_predicates:
        from ...reasoning.datatypes import literal_facts

        objects = values[2]
        codes: dict[str, str] = {}
        frame["sig"] = [codes.setdefault(v, json.dumps(literal_facts(v))) if v[:1] == '"' else "" for v in objects]
    pieces: list = []
    distinct = _Distinct(values)
    for group, rows in enumerate(frame.groupby(list(frame.columns), sort=False).indices.values()):
        first = int(rows[0])
        triple = (str(values[0][first]), str(values[1][first]), str(values[2][first]))
        shape = reasoner.shape(triple)
        numeric = {position for position, name in enumerate(("ns", "np", "no")) if frame[name].iat[first]}
        template, reusable = reasoner.template(shape, triple, numeric_positions=numeric)
        if not reusable:
            for row in rows:
                one = (str(values[0][row]), str(values[1][row]), str(values[2][row]))
                for (relation, args), tag in reasoner.derive(one):
                    pieces.append(_rows(window, relation, [np.array([a], dtype=object) for a in args],
                                        k1[row:row + 1], k2[row:row + 1], tag))
            continue
        slot_position = {}
        for position, part in enumerate(shape):
            if part[0] == "s" and part[1] not in slot_position:
                slot_position[part[1]] = position
        group_k1, group_k2 = k1[rows], k2[rows]
        for (relation, args), tag in template:
            if all(kind == "c" for kind, _ in args):  # the same fact from every row: once per island
                low, high = _islands(group_k1, group_k2 if tag != LASTING else np.full(len(rows), ALWAYS))
                pieces.append(_rows(window, relation, [np.full(len(low), value, dtype=object) for _, value in args],
                                    low, high, 0))
                continue
            used = sorted({slot_position[value] for kind, value in args if kind == "s"})
            chosen, fact_k1, fact_k2 = rows, group_k1, group_k2
            keep = distinct.first_rows(group, rows, used, group_k1, None if tag == LASTING else group_k2)
            if keep is not None:  # a fact of few terms (a sensor's type) made by many rows: once
                chosen, fact_k1, fact_k2 = rows[keep], group_k1[keep], group_k2[keep]
            arrays = [values[slot_position[value]][chosen] if kind == "s"
                      else np.full(len(chosen), value, dtype=object) for kind, value in args]
            pieces.append(_rows(window, relation, arrays, fact_k1, fact_k2, tag))
    if not pieces:
        return
    merged = {name: np.concatenate([piece[name] for piece in pieces]) for name in pieces[0]}
    yield pa.RecordBatch.from_arrays(
        [pa.array(merged["w"], pa.int32()), pa.array(merged["rel"], pa.string()),
         *(pa.array(merged[name], pa.string()) for name in ARGS),
         pa.array(merged["k1"], pa.int64()), pa.array(merged["k2"], pa.int64())], schema=schema)


class _Distinct:
    """Which rows of a group make distinct facts, from the terms' codes (`pandas.factorize`, once
    per column of the batch): a window's content is a set, so a fact every observation of a sensor
    derives (the sensor's type) is written once per interval, not once per observation."""

    def __init__(self, values):
        self.values = values
        self.codes: dict[int, tuple] = {}
        #: (group, position) -> whether no two rows of the group share the term there
        self.apart: dict[tuple, bool] = {}

    def _codes(self, position: int):
        found = self.codes.get(position)
        if found is None:
            import pandas as pd

            codes, uniques = pd.factorize(self.values[position])
            found = self.codes[position] = (codes.astype("int64"), len(uniques))
        return found

    def first_rows(self, group: int, rows, positions: list[int], k1, k2):
        """Indices (into `rows`, the rows of group number `group`, in order) of the first row of each
        distinct (terms at `positions`, k1, k2), or None when every row's fact is distinct already."""
        import numpy as np

        count = len(rows)
        if count < 2 or not positions:
            return None
        key = np.zeros(count, dtype=np.int64)
        room = 1
        for position in positions:
            codes, size = self._codes(position)
            picked = codes[rows]
            apart = self.apart.get((group, position))
            if apart is None:  # (asked once per group and position, not once per fact)
                apart = self.apart[(group, position)] = bool(np.bincount(picked, minlength=size).max() == 1)
            if apart:
                return None  # a term no two rows share: every fact distinct
            room *= size
            key = key * size + picked
        for times in (k1, k2):
            if times is None:
                continue
            low = int(times.min())
            span = int(times.max()) - low + 1
            room *= span
            key = key * span + (times - low)
        if room >= 1 << 62:
            return None  # (keys that could overflow: written as they are)
        _, first = np.unique(key, return_index=True)
        if len(first) == count:
            return None
        first.sort()
        return first


def _rows(window, relation, args, k1, k2, tag) -> dict:
    import numpy as np

    count = len(k1)
    out = {"w": np.full(count, window, dtype=np.int32), "rel": np.full(count, relation, dtype=object)}
    for position, name in enumerate(ARGS):
        out[name] = args[position] if position < len(args) else np.full(count, None, dtype=object)
    out["k1"] = np.asarray(k1, dtype=np.int64)
    out["k2"] = np.full(count, ALWAYS, dtype=np.int64) if tag == LASTING else np.asarray(k2, dtype=np.int64)
    return out


def _islands(k1, k2):
    """Intervals merged where they overlap or touch: [low], [high] arrays."""
    import numpy as np

    order = np.argsort(k1, kind="stable")
    starts, ends = k1[order], k2[order]
    reach = np.maximum.accumulate(ends)
    new = np.ones(len(starts), dtype=bool)
    new[1:] = starts[1:] > reach[:-1] + 1
    group = np.cumsum(new) - 1
    low = starts[new]
    high = np.zeros(len(low), dtype=np.int64)
    np.maximum.at(high, group, ends)
    return low, high


def background_rows(plan: DistributedPlan, reasoner: SeedReasoner | None) -> list[tuple]:
    """B* (under ENTAILMENT) for each window, and the static graphs read as they are: fact rows."""
    rows = []
    if reasoner is not None:
        closure = reasoner.background_closure()
        for window in plan.windows:
            for relation, args in closure:
                padded = list(args) + [None] * (WIDTH - len(args))
                rows.append((window.index, relation, *padded, NEVER, ALWAYS))
        if plan.static.get(None) == "materialized":
            for relation, args in closure:
                if relation == TRIPLE:
                    rows.append((-1, TRIPLE, *args, None, NEVER, ALWAYS))
    for position, (graph, lines) in enumerate(static_graphs(plan)):
        for line in lines:
            rows.append((static_code(position), TRIPLE, *split_ntriple(line), None, NEVER, ALWAYS))
    return rows


def static_graphs(plan: DistributedPlan) -> list[tuple]:
    """(graph IRI or None, lines) of the graphs read as they are, with their codes -1, -2, ... by position."""
    out = []
    for graph, lines in plan.static.items():
        if lines == "materialized":
            continue
        out.append((graph, lines))
    return out


def static_code(position: int) -> int:
    return -2 - position


__all__ = ["FACTS_SCHEMA", "Content", "pointwise_windows", "window_rows", "stored_closures", "background_rows", "reasoner_for", "static_graphs"]
