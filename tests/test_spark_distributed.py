"""Distributed mode's Spark plans against the Python they replace.

- `content.window_rows` (a window's instant interval of each element, as Spark
  SQL) gives `Grid.element_range` for every element, window and late floor (and
  cut to the facts seen after an instant by a timestamp bound, `Grid.earliest_after`);
- `expand.Expansion` (each stored triple's seed closure, joined from its
  shape's template when a report reads it) gives the facts `_seed_closures`
  (the closure per triple, in Python) gives: all of them, and for each triple
  pattern the ones it can match, instant by instant, on generated RDFS cases;
  and what the shapes say the window holds covers what the facts hold.

The end-to-end equality with the local engine is tests/test_spark_cluster.py's.
"""

from __future__ import annotations

import random

import pytest

pytestmark = pytest.mark.spark

EX = "http://example.org/"
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD = "http://www.w3.org/2001/XMLSchema#"


# window_rows -----------------------------------------------------------------------------------------------


class _Plan:
    def __init__(self, grid, windows, entailment=None):
        self.grid, self.windows, self.entailment = grid, windows, entailment


@pytest.mark.parametrize("seed", range(4))
def test_window_rows_give_each_element_its_instants(spark, seed):
    from rsp_plugin.spark.distributed.content import window_rows
    from rsp_plugin.spark.distributed.plan import Grid, Window

    draw = random.Random(seed)
    step = draw.choice([1, 3, 5, 10])
    period = step * draw.choice([1, 2])
    windows = [Window(0, "s", draw.choice([1, 7, 10, 25]), step, 0),
               Window(1, "s", draw.choice([5, 12]), step, -draw.choice([0, 2, 4])),
               Window(2, "t", draw.choice([4, 9]), step, 0)]
    grid = Grid(draw.choice([0, -7, 13]), period)
    rows = []
    for number in range(400):
        ts = draw.randint(-20, 200)
        floor = draw.choice([None, None, None, ts + draw.randint(-5, 15)])
        rows.append((draw.choice(["s", "t"]), f"<x{number}>", "<p>", "<o>", ts, floor))
    lanes = ["s", "t"]  # (each lane's stream)
    taken = spark.createDataFrame([(lanes.index(stream), *rest) for stream, *rest in rows],
                                  "lane INT, s STRING, p STRING, o STRING, ts BIGINT, floor BIGINT")
    after = draw.randint(0, 5)
    for cut in (None, after):  # (all of them; those seen after instant `after`: what a batch writes)
        got = sorted((r.w, r.c0, r.k1, r.k2)
                     for r in window_rows(_Plan(grid, windows), taken, lanes, after=cut).collect())
        want = []
        for stream, s, _, _, ts, floor in rows:
            for window in windows:
                if window.stream == stream:
                    k1, k2 = grid.element_range(window, ts, floor)
                    if k1 <= k2 and (cut is None or k2 > cut):
                        want.append((window.index, s, k1, k2))
        assert got == sorted(want) and want


def test_earliest_after_is_the_first_timestamp_a_later_instant_sees():
    from rsp_plugin.spark.distributed.plan import Grid, Window

    for step in (1, 3, 5, 10):
        for period in (step, 2 * step):
            for t0 in (0, -7, 13):
                grid = Grid(t0, period)
                for window in (Window(0, "s", 1, step), Window(0, "s", 25, step, -4), Window(0, "s", 9, step)):
                    for k in range(-3, 12):
                        seen_later = [ts for ts in range(-200, 300) if grid.element_range(window, ts)[1] > k]
                        assert grid.earliest_after(window, k) == min(seen_later)


def test_pointwise_windows_are_those_whose_elements_are_seen_at_one_instant_at_most():
    from rsp_plugin.spark.distributed.content import pointwise_windows
    from rsp_plugin.spark.distributed.plan import Grid, Window

    said = {True: 0, False: 0}
    for step in (1, 2, 3, 5, 10):
        for period in (step, 2 * step, 5, 10):
            for t0 in (0, -7, 13):
                grid = Grid(t0, period)
                for size in (1, 2, 3, 5, 10, 12, 25):
                    for end in (0, -1, -4):
                        window = Window(0, "s", size, step, end)
                        spans = {k2 - k1 + 1 for k1, k2 in (grid.element_range(window, ts) for ts in range(-60, 200))}
                        pointwise = pointwise_windows(_Plan(grid, [window]))
                        # (said pointwise: never two instants; said not: only when the brute force finds two,
                        # or a STEP shorter than the period, whose boundaries may share an instant)
                        assert not pointwise or max(spans) <= 1
                        assert pointwise or max(spans) > 1 or step < period
                        said[pointwise] += 1
    assert said[True] and said[False]


# Expansion -------------------------------------------------------------------------------------------------


def rdfs_case(seed: int):
    """(background lines, window triples) of a generated RDFS case, its schema in the background."""
    from rdflib import RDF, RDFS

    from rsp_plugin.core.rdfterms import term_key
    from test_reasoning_differential import generated_case

    graph, stream, _ = generated_case(seed, "rdfs")
    schema = {RDFS.subClassOf, RDFS.subPropertyOf, RDFS.domain, RDFS.range}
    background = [tuple(term_key(t) for t in triple) for triple in graph]
    window = []
    for triples in stream.values():
        for triple in triples:
            keys = tuple(term_key(t) for t in triple)
            if triple[1] in schema or (triple[1] == RDF.type and str(triple[2]).startswith(str(RDFS))):
                background.append(keys)
            else:
                window.append(keys)
    # and what the generator does not make: a triple whose subject is its object, a blank node
    # and a number where a comparison of the rules reads it (its closure is made per triple, in Python)
    window += [(f"<{EX}i0>", f"<{EX}p0>", f"<{EX}i0>"), ("_:b1", f"<{EX}p1>", f"<{EX}i2>"),
               (f"<{EX}i1>", f"<{EX}age>", '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'),
               (f"<{EX}p2>", "<http://www.w3.org/2000/01/rdf-schema#subPropertyOf>",
                '"5"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    return [" ".join(t) + " ." for t in background], window


def patterns_of(seed: int) -> list:
    c = [("c", f"<{EX}C{i}>") for i in range(3)]
    p = [("c", f"<{EX}p{i}>") for i in range(3)]
    x, y, z = ("v", "x"), ("v", "y"), ("v", "z")
    return [[x, ("c", TYPE), c[0]], [x, ("c", TYPE), c[1]], [x, ("c", TYPE), y], [x, p[0], y], [x, p[1], y],
            [x, y, ("c", f"<{EX}i2>")], [x, y, x], [x, y, z], [("c", f"<{EX}i1>"), y, z]]


def matches(pattern, fact) -> bool:
    relation, args = fact
    if relation != "triple":
        return False
    bound = {}
    for (kind, value), term in zip(pattern, args):
        if kind == "c" and value != term:
            return False
        if kind == "v" and bound.setdefault(value, term) != term:
            return False
    return True


def by_instant(rows, last: int) -> set:
    """(relation, arguments, instant) of fact rows, their intervals spread over the instants 0..last."""
    out = set()
    for w, rel, c0, c1, c2, c3, k1, k2 in rows:
        args = tuple(a for a in (c0, c1, c2, c3) if a is not None)
        for k in range(max(k1, 0), min(k2, last) + 1):
            out.add((rel, args, k))
    return out


@pytest.mark.parametrize("seed", range(6))
def test_the_joined_templates_give_the_seed_closures(spark, seed):
    import numpy as np
    import pyarrow as pa

    from rsp_plugin.reasoning.templates import SeedReasoner
    from rsp_plugin.spark.distributed.content import FACTS_SCHEMA, _seed_closures, facts_arrow_schema
    from rsp_plugin.spark.distributed.expand import SHAPE, Expansion
    from rsp_plugin.reasoning.templates import present_of

    background, window = rdfs_case(seed)
    draw = random.Random(seed)
    k1 = np.array([draw.randint(0, 8) for _ in window], dtype=np.int64)
    k2 = k1 + np.array([draw.randint(0, 3) for _ in window], dtype=np.int64)
    reasoner = SeedReasoner("rdfs", background)
    columns = [pa.array([t[i] for t in window], pa.string()) for i in range(3)]
    python = [row for batch in _seed_closures(reasoner, 0, *columns, k1, k2, facts_arrow_schema())
              for row in zip(*(column.to_pylist() for column in batch.columns))]
    stored = spark.createDataFrame([(0, "triple", *t, None, int(a), int(b)) for t, a, b in zip(window, k1, k2)],
                                   FACTS_SCHEMA)
    expansion = Expansion(spark, _Plan(None, [], "rdfs"), SeedReasoner("rdfs", background),
                          spark.sparkContext.broadcast("\n".join(background)))
    shapes = [[row[name] for name in SHAPE] + [row["p"]]
              for row in stored.selectExpr(*expansion.columns(), "c1 AS p").distinct().collect()]
    every, _ = expansion.facts(stored, shapes)
    want = by_instant(python, 20)
    assert by_instant([tuple(row) for row in every.collect()], 20) == want
    matched = 0
    for pattern in patterns_of(seed):
        facts, _ = expansion.facts(stored, shapes, pattern)
        matched += any(matches(pattern, item[:2]) for item in want)
        got = set() if facts is None else by_instant([tuple(row) for row in facts.collect()], 20)
        assert {item for item in got if matches(pattern, item[:2])} == \
            {item for item in want if matches(pattern, item[:2])}, pattern
    assert matched >= 5
    # what the window holds, from its shapes: at least what its facts hold (a predicate may be "any")
    said = expansion.present(shapes)
    for fact in present_of((rel, args) for rel, args, _ in want):
        assert any(rel == fact.relation and pred in (fact.predicate, "*") and refl == fact.reflexive
                   for rel, pred, refl in said), fact


def test_a_local_table_keeps_every_term_as_written(spark):
    from rsp_plugin.spark.distributed.sqltext import local_table

    rows = [("a\\b", "it's", None, True, 3), ('"x\\n"^^<http://ex/t>', "<http://ex/é>", '"tab\there"', False, -1),
            ("", "'); DROP TABLE t; --", "_:b1", None, None)]
    table = local_table(spark, rows, "a STRING, b STRING, c STRING, d BOOLEAN, e INT")
    assert [tuple(row) for row in table.collect()] == rows
    assert "LocalTableScan" in table._jdf.queryExecution().executedPlan().toString()


def test_any_term_reads_back_from_sql_text_as_it_was(spark):
    """`sqltext.sql_string`: plain where nothing needs escaping, hex where something would."""
    from rsp_plugin.spark.distributed.sqltext import sql_string

    terms = ["<http://example.org/a>", '"x"@en', "\"it's\"", '"a\\\\b"', '"line\\nbreak"', '"é ü 漢"',
             '"${spark.app.name}"', '"-- not a comment"', '"/* nor this */"', '"?"', '":name"', "", "'", '"\t"']
    row = spark.sql("SELECT " + ", ".join(f"{sql_string(term)} AS t{n}" for n, term in enumerate(terms))).first()
    assert list(row) == terms


# the code Spark compiles ---------------------------------------------------------------------------------


def test_a_running_stream_compiles_no_new_code(spark, tmp_path, monkeypatch, capfd):
    """Spark compiles a plan's code once per text. The numbers that change every batch (the instants a
    report reads, the bounds of the facts kept for later reports) are joined in as data, so that once
    the stream runs (a stored batch behind each report) its batches run the code compiled before.
    And no stage is left reading a stored batch's files after they are deleted (Spark logged its task
    failing as an error)."""
    from rsp_plugin.bench.spark_modes import ONTOLOGY, QUERIES
    from rsp_plugin.spark import run
    from rsp_plugin.spark.distributed.driver import DistributedDriver

    # observations of 20 sensors, 3 triples each, 60 triples a second: batches of 600 lines, 10 s each
    draw = random.Random(7)
    lines = []
    for number in range(1600):
        stamp, sensor = number * 50, f"<{EX}sensor{draw.randrange(20)}>"
        lines += [f"{stamp} <{EX}o{number}> <{EX}observedBy> {sensor} .",
                  f'{stamp} <{EX}o{number}> <{EX}temperature> "{draw.randrange(100)}"^^<{XSD}integer> .',
                  f'{stamp} {sensor} <{EX}lastValue> "{draw.randrange(100)}"^^<{XSD}integer> .']
    stream, ontology = tmp_path / "s.tnt", tmp_path / "ontology.ttl"
    stream.write_text("\n".join(lines) + "\n")
    ontology.write_text(ONTOLOGY.replace("http://example.org/sensors#", EX))
    text = QUERIES["rdfs"].format(ex=EX, stream="http://ex.org/s", ontology=ontology, rules="")
    compiled = spark.sparkContext._jvm.org.apache.spark.metrics.source.CodegenMetrics.METRIC_COMPILATION_TIME()
    counts = []
    commit = DistributedDriver._commit

    def counted(self, *arguments, **options):
        counts.append(compiled.getCount())
        return commit(self, *arguments, **options)

    monkeypatch.setattr(DistributedDriver, "_commit", counted)
    results = []
    run(spark, text, {"http://ex.org/s": str(stream)}, results.append, mode="distributed",
        max_lines_per_trigger=600).wait()
    assert len(counts) == 9 and len(results) >= 70  # 8 batches and the end of the replay; 80 s of reports
    # nothing compiled in batches 4 to 8 (a class at most: adaptive execution may plan a stage anew from
    # what a batch holds); with the numbers written into the plans, each batch compiled about 15
    assert counts[7] - counts[3] <= 1, counts
    logged = capfd.readouterr().err
    assert "FILE_NOT_EXIST" not in logged and "aborting job" not in logged


def test_the_fact_store_lists_its_batches(tmp_path):
    from rsp_plugin.spark.distributed.store import FactStore

    store = FactStore(tmp_path / "facts")
    assert store.batches() == []
    for name in ("b3", "b12", "base", "bx"):
        (tmp_path / "facts" / name).mkdir(parents=True)
    assert store.batches() == [3, 12]
    store.drop(3)
    assert store.batches() == [12] and (tmp_path / "facts" / "base").is_dir()
