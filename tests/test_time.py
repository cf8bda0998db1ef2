"""One time module (issue 28): `core.time` reads every language's durations and places every
backend's windows on one grid.

- A duration means one length in LARS and in every query dialect (`1m30s`, `1.5m`, `PT1M30S`,
  `90s` are 90,000 ms everywhere); a tick that rounds to no millisecond is a located error.
- `WindowGrid`'s answers agree with its definition (the window at tau_k = t0 + k*STEP holds
  max(t0, tau - RANGE) <= t < tau - end), per timestamp and vectorised (numpy);
- the per-fact windows, the column windows and the Spark plan's instants hold the same elements
  for random streams, RANGE / STEP pairs (RANGE < STEP, RANGE not a multiple of STEP) and t0.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

from rsp_plugin.columnar import columns as columns_module
from rsp_plugin.columnar.columns import ColumnTimeWindow
from rsp_plugin.core.errors import LocatedError
from rsp_plugin.core.time import DurationError, WindowGrid, parse_duration_ms
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.query.model import RangeWindow
from rsp_plugin.query.syntax import parse_query
from rsp_plugin.query.windows import TimeWindow
from rsp_plugin.spark.distributed.plan import Grid, Window

# durations -----------------------------------------------------------------------------------------------------

NINETY_SECONDS = ["1m30s", "1.5m", "PT1M30S", "90s", "90000ms", "90sec", "1min30s", "PT90S"]


@pytest.mark.parametrize("written", NINETY_SECONDS)
def test_a_duration_is_one_length_in_lars_and_in_queries(written):
    assert parse_duration_ms(written) == 90_000
    assert parse_program(f"@tick {written} .\nq :- [RANGE 3] DIAMOND p .").tick_ms == 90_000
    window = parse_program(f"@tick 1s .\nq :- [RANGE {written}] DIAMOND p .").rules[0].body[0].window
    assert window.size == 90
    csparql = parse_query(f"SELECT ?s FROM STREAM <s> [RANGE {written} STEP {written}] WHERE {{ ?s ?p ?o }}")
    rspql = parse_query(f"SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE {written} STEP {written}] "
                        "WHERE { WINDOW <w> { ?s ?p ?o } }")
    assert csparql.windows[0].window == rspql.windows[0].window == RangeWindow(90_000, 90_000)


def test_sparqlstream_amounts_are_read_by_the_same_parser():
    query = parse_query("SELECT ?s FROM NAMED STREAM <s> [NOW-1.5 MINUTES SLIDE 90 S] WHERE { ?s ?p ?o }")
    assert query.windows[0].window == RangeWindow(90_000, 90_000)


@pytest.mark.parametrize("written, message", [
    ("1.5ms", "1.5ms is not a whole number of milliseconds"),
    ("1m-30s", "not a duration"),
    ("P1M", "not a duration"),    # (a month has no fixed length)
    ("5x", "unknown time unit 'x'"),
    ("9" * 50 + "s", "is longer than any clock counts"),
    ("1e999999999s", "is longer than any clock counts"),
])
def test_what_is_not_a_duration_says_why(written, message):
    with pytest.raises(DurationError) as raised:
        parse_duration_ms(written)
    assert message in str(raised.value)


@pytest.mark.parametrize("tick", ["0.4ms", "PT0.0004S", "0s"])
def test_a_tick_of_no_whole_millisecond_is_a_located_error(tick):
    with pytest.raises(LocatedError) as raised:
        parse_program(f"% a tick\n@tick {tick} .\nq :- [RANGE 10s] DIAMOND p .", "p.lars")
    assert str(raised.value) == (f"p.lars:2:7: a tick lasts at least 1 ms; @tick {tick} is 0 ms "
                                 "(rounded to whole milliseconds)")


def test_a_window_duration_that_is_no_whole_number_of_ticks_is_located_where_written():
    with pytest.raises(LocatedError) as raised:
        parse_program("@tick 1s .\nq :- [RANGE 1.5s] DIAMOND p .", "p.lars")
    assert str(raised.value) == "p.lars:2:13: the duration 1.5s is not a whole number of ticks (1000 ms)"
    with pytest.raises(LocatedError) as raised:
        parse_query("SELECT ?s FROM STREAM <s> [RANGE 1.5ms STEP 1s] WHERE { ?s ?p ?o }", "q.rq")
    assert str(raised.value) == "q.rq:1:34: 1.5ms is not a whole number of milliseconds (read as C-SPARQL)"


# the grid --------------------------------------------------------------------------------------------------


def held(grid: WindowGrid, k: int, t: int) -> bool:
    """DESIGN.md's definition, written out: the window at tau = t0 + k*STEP holds max(t0, tau - RANGE) <= t < tau - end."""
    tau = grid.t0 + k * grid.step
    return max(grid.t0, tau - grid.range) <= t < tau - grid.end


def shapes(seed: int, count: int):
    """Random (range, step, t0, end): RANGE below, at, above and between multiples of STEP."""
    draw = random.Random(seed)
    for _ in range(count):
        step = draw.choice([1, 2, 3, 5, 7, 10])
        size = draw.choice([1, step, 2 * step, 3 * step + 1, max(1, step - 1), draw.randint(1, 40)])
        end = draw.choice([0, 0, 0, draw.randint(0, size - 1)])
        yield size, step, draw.choice([0, 0, -7, 13, draw.randint(-50, 50)]), end


@pytest.mark.parametrize("seed", range(3))
def test_the_grid_answers_as_its_definition_per_timestamp_and_vectorised(seed):
    draw = random.Random(seed)
    for size, step, t0, end in shapes(seed, 60):
        grid = WindowGrid(size, step, t0, end)
        stamps = [t0 + draw.randint(0, 120) for _ in range(40)]
        holding = {t: [k for k in range(-5, 300) if held(grid, k, t)] for t in stamps}
        for t, ks in holding.items():
            k1, k2 = grid.k_range(t)
            assert list(range(k1, k2 + 1)) == ks, (grid, t)
            assert all(grid.holds(grid.instant(k), t) == held(grid, k, t) for k in range(k1 - 3, k2 + 4))
            assert grid.boundary_at(t) <= t < grid.boundary_after(t) == grid.boundary_at(t) + step
            if ks:  # a replay from t alone: its first report on, up to its last that holds t
                assert grid.first_report(t) <= grid.instant(k1) and grid.last_report(t) == grid.instant(k2)
            for k in range(k1 - 3, k2 + 4):  # the windows up to its last still reach back to it
                assert grid.reaches(grid.instant(k), t) == (k <= k2)
        for k in range(0, 12):  # the earliest element a window at tau_k or later holds
            assert grid.earliest_reached(grid.instant(k)) == min(
                t for t in range(t0 - 3 * size - 20, t0 + 200) if grid.k_range(t)[1] >= k)
        # the same formulas over numpy columns: one answer per row
        column = np.array(stamps, dtype=np.int64)
        k1s, k2s = grid.k_range(column)
        assert [(int(a), int(b)) for a, b in zip(k1s, k2s)] == [grid.k_range(t) for t in stamps]
        assert grid.boundary_at(column).tolist() == [grid.boundary_at(t) for t in stamps]
        assert grid.index_after(column).tolist() == [grid.index_after(t) for t in stamps]
        # a window reported at a boundary still takes an element no earlier than `open_from` (later
        # windows hold none earlier than it)
        for boundary in (grid.instant(k) for k in range(1, 8)):
            assert grid.open_from(boundary) == grid.instant(grid.index_at(boundary) + 1) - size
            for t in range(t0, boundary + 2 * step):
                if any(held(grid, k, t) for k in range(grid.index_at(boundary) + 1, 80)):
                    assert t >= grid.open_from(boundary), (grid, boundary, t)


@pytest.mark.parametrize("seed", range(2))
def test_a_report_period_shows_the_window_of_its_last_boundary(seed):
    for size, step, t0, end in shapes(seed, 40):
        grid = WindowGrid(size, step, t0, end)
        for period in {step, 2 * step, 3, 5, 10}:
            reports = WindowGrid.every(period, t0)
            shown = {j: grid.index_at(reports.instant(j)) for j in range(-3, 80)}
            for k1 in range(0, 12):
                for k2 in range(k1, k1 + 4):
                    j1, j2 = grid.shown_at(period, k1, k2)
                    assert [j for j in range(-3, 80) if k1 <= shown[j] <= k2] == list(range(j1, j2 + 1))
            for last in range(t0, t0 + 40):  # a replay ends at the last report still showing `last`
                showing = [reports.instant(j) for j in range(-3, 80)
                           if held(grid, grid.index_at(reports.instant(j)), last)]
                assert not showing or grid.last_report(last, period) == max(showing)


# every backend's windows --------------------------------------------------------------------------------------


def stream(draw: random.Random, t0: int, count: int):
    """(t, triple) in arrival order: mostly increasing, some late, some at one timestamp."""
    t, out = t0, []
    for number in range(count):
        t += draw.choice([0, 0, 1, 2, 3, 5, 9])
        late = draw.random() < 0.15
        out.append((max(t0, t - draw.randint(0, 12)) if late else t, (number % 7, 1, number % 5)))
    return out


def offer_to_both(draw: random.Random, per_fact: TimeWindow, columns: ColumnTimeWindow, t: int, triple) -> None:
    """An element to the per-fact window, and to the columnar one alone or as a batch of one row."""
    per_fact.offer(t, triple)
    if draw.random() < 0.5:
        columns.offer(t, triple)
    else:
        columns.offer_columns(*(np.array([value]) for value in (t, *triple)))


@pytest.mark.parametrize("seed", range(6))
def test_every_backend_holds_the_same_elements(seed):
    draw = random.Random(seed)
    for size, step, t0, end in shapes(seed, 25):
        spec = RangeWindow(size, step, end)
        grid = WindowGrid(size, step, t0, end)
        per_fact, columns = TimeWindow(spec, t0), ColumnTimeWindow(spec, t0)
        spark, spark_window = Grid(t0, step), Window(0, "s", size, step, end)
        assert per_fact.grid == columns.grid == spark.window_grid(spark_window) == grid
        arrivals = stream(draw, t0, draw.randint(1, 60))
        taken: list[tuple[int, tuple]] = []
        instants: dict[int, int | None] = {}  # each element's floor (the last boundary before it arrived)
        k = grid.index_after(arrivals[0][0])
        pending = list(arrivals)
        last = max(t for t, _ in arrivals)
        while k <= grid.index_at(last + size) or pending:
            tau = grid.instant(k)
            while pending and (pending[0][0] < tau or draw.random() < 0.3):
                t, triple = pending.pop(0)
                assert per_fact.accepts(t) == columns.accepts(t)
                if per_fact.accepts(t):
                    offer_to_both(draw, per_fact, columns, t, triple)
                    taken.append((t, triple))
                    instants[len(taken) - 1] = per_fact.boundary
            per_fact.advance(tau)
            columns.advance(tau)
            want = {triple for t, triple in taken if held(grid, k, t)}
            assert set(per_fact.content) == set(columns.content.rows()) == want, (grid, tau)
            seen = set()
            for number, (t, triple) in enumerate(taken):  # Spark: each element's instants as facts
                k1, k2 = spark.element_range(spark_window, t, instants[number])
                if k1 <= k <= k2:
                    seen.add(triple)
            assert seen == want, (grid, tau)
            assert per_fact.next_change() == columns.next_change(), (grid, tau)
            k += 1


@pytest.mark.parametrize("seed, merge_rows", [(0, 4096), (1, 4096), (2, 4096), (3, 16), (4, 16)])
def test_a_long_window_fed_element_by_element_keeps_few_chunks_and_the_same_content(seed, merge_rows, monkeypatch):
    """A live stream brings a chunk per report: a 300-step window joins them (`_compact`) and still
    holds what the per-fact window holds, each triple once when it says its content is a set. Its
    hash index (small merges folded into a large one, made again when stale) holds every row held."""
    monkeypatch.setattr(columns_module, "MERGE_ROWS", merge_rows)
    draw = random.Random(seed)
    spec = RangeWindow(300, 1)
    per_fact, columns = TimeWindow(spec, 0), ColumnTimeWindow(spec, 0)
    arrivals = stream(draw, 0, 2000)
    pending = list(arrivals)
    taken: list[tuple[int, tuple]] = []
    tau, said_distinct = 1, 0
    while pending:
        while pending and pending[0][0] < tau:
            t, triple = pending.pop(0)
            triple = (triple[0] + draw.choice([0, 0, 0, 10 * t]), *triple[1:])  # (mostly new triples, some repeats)
            if per_fact.accepts(t):
                offer_to_both(draw, per_fact, columns, t, triple)
                taken.append((t, triple))
        per_fact.advance(tau)
        columns.advance(tau)
        rows = columns.content.rows()
        assert set(per_fact.content) == set(rows) == {triple for t, triple in taken if tau - 300 <= t < tau}, tau
        if columns.content.distinct:
            assert len(rows) == len(set(rows)), tau
            said_distinct += 1
        indexed = set(np.concatenate([part for part in (columns._hash_index, columns._recent_hashes)
                                      if part is not None] or [np.empty(0, np.uint64)]).tolist())
        assert all(set(chunk.hashes.tolist()) <= indexed for chunk in columns._chunks), tau
        assert len(columns._chunks) <= 40, (tau, len(columns._chunks))
        tau += 1
    assert said_distinct  # (the stream repeats some triples: a set only now and then)
