"""The batch path (column windows, columnar evaluation) answers what the per-fact path answers.

On the generated cases of `test_query_differential` (every shape, window kind and
background there) the engine runs three ways: per fact with the fast path (the
reference), on the batch path with elements pushed one by one, and on the batch
path with the stream pushed as columns in micro-batches. The results must be the
same JSON lines (term forms of aggregates included), instant by instant.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

import numpy as np
import pytest
from rdflib import Graph

sys.path.insert(0, str(Path(__file__).parent))
from test_query_differential import STREAM, STREAM2, Case  # noqa: E402

from rsp_plugin.core.rdfterms import term_key
from rsp_plugin.runtime.engine import RSPEngine


def _engine(case: Case, batch: bool) -> RSPEngine:
    engine = RSPEngine(batch=batch)
    engine.register_stream(STREAM)
    engine.register_stream(STREAM2)
    if case.background:
        graph = Graph()
        for triple in case.background:
            graph.add(triple)
        engine.add_graph("http://ex/ontology", graph)
    engine.register_query(case.text())
    return engine


def _per_element(case: Case, batch: bool):
    engine = _engine(case, batch)
    for t, stream, triple in case.elements:
        engine.push(stream, [triple], timestamp=t)
    results = engine.finish()
    assert not engine.errors, engine.errors
    return [result.to_json() for result in results]


def _columns(case: Case, seed: int):
    """The stream in micro-batches of columns, the watermark moved after each (as a driver does)."""
    engine = _engine(case, True)
    draw = random.Random(seed)
    intern = engine.terms.intern
    results = []
    elements = case.elements
    start = 0
    while start < len(elements):
        stop = start + draw.randint(1, 6)
        batch = elements[start:stop]
        for stream in (STREAM, STREAM2):
            rows = [(t, triple) for t, s, triple in batch if s == stream]
            if rows:
                ids = np.array([[intern(term_key(term)) for term in triple] for _, triple in rows], dtype=np.int64)
                engine.push_columns(stream, [t for t, _ in rows], ids[:, 0], ids[:, 1], ids[:, 2])
        results.extend(engine.advance_to(batch[-1][0]))
        start = stop
    results.extend(engine.finish())
    assert not engine.errors, engine.errors
    return [result.to_json() for result in results]


@pytest.fixture
def polars_always(monkeypatch):
    """Small windows take the per-fact join by default: here every evaluation is a polars plan."""
    from rsp_plugin.columnar import query

    monkeypatch.setattr(query, "SMALL", 0)


@pytest.mark.parametrize("seed", range(240))
def test_batch_path_answers_what_the_per_fact_path_answers(seed, polars_always):
    case = Case(seed)
    expected = _per_element(case, batch=False)
    assert _per_element(case, batch=True) == expected, str(case)
    assert _columns(case, seed) == expected, str(case)


@pytest.mark.parametrize("seed", range(0, 240, 7))
def test_small_windows_take_the_per_fact_join_with_the_same_answers(seed):
    case = Case(seed)
    assert _columns(case, seed) == _per_element(case, batch=False), str(case)


@pytest.mark.parametrize("seed", range(2000, 2048))
def test_batch_materialization_answers_what_the_per_fact_one_answers(seed, polars_always):
    from test_query_differential import SHAPES

    case = Case(seed, entailment=SHAPES[seed % len(SHAPES)][1])
    expected = _per_element(case, batch=False)
    assert _per_element(case, batch=True) == expected, str(case)
    assert _columns(case, seed) == expected, str(case)


def test_the_batch_path_is_taken_with_entailment_too():
    from test_query_differential import SHAPES

    taken = 0
    for seed in range(2000, 2048):
        case = Case(seed, entailment=SHAPES[seed % len(SHAPES)][1])
        query = next(iter(_engine(case, True).queries.values()))
        if case.entailment and query.evaluator.columnar is not None:
            taken += 1
    assert taken >= 20


def test_the_batch_path_is_taken_for_most_shapes():
    taken = set()
    for seed in range(240):
        case = Case(seed)
        query = next(iter(_engine(case, True).queries.values()))
        if query.evaluator.columnar is not None:
            taken.add(case.shape)
    assert len(taken) >= 15


def test_late_columns_are_taken_while_a_window_still_holds_them_and_set_aside_after():
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    query = engine.register_query("SELECT (COUNT(*) AS ?n) FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] "
                                  "WHERE { ?x <http://ex/p> ?y }")
    assert query.evaluator.columnar is not None
    ids = [engine.terms.intern(f"<http://ex/{name}>") for name in ("a", "p", "b", "c")]
    engine.push_columns("http://ex/s", [500, 2500], [ids[0]] * 2, [ids[1]] * 2, [ids[2], ids[3]])
    first = engine.advance_to(3000)
    engine.push_columns("http://ex/s", [2200, 400], [ids[0]] * 2, [ids[1]] * 2, [ids[2], ids[3]],
                        lines=[7, 8], source="f.tnt")
    later = engine.finish()
    assert [r.to_json()["bindings"][0]["n"] for r in first] == ['"1"^^<http://www.w3.org/2001/XMLSchema#integer>'] * 2 + \
        ['"1"^^<http://www.w3.org/2001/XMLSchema#integer>']
    assert [str(r) for r in engine.rejected] == [
        "f.tnt:8: late: timestamp 400 is older than every window still to be reported (watermark 3000); set aside"]
    assert [r.t for r in later] == [4000]
    assert later[0].to_json()["bindings"][0]["n"] == '"2"^^<http://www.w3.org/2001/XMLSchema#integer>'


@pytest.mark.parametrize("batch", [False, True])
@pytest.mark.parametrize("files", [1, 2])
def test_forgetting_terms_changes_no_result_even_when_a_reader_interns_ahead(batch, files, tmp_path, monkeypatch):
    """The query CLI's readers intern a line, a block, before the watermark moves and it is pushed
    (one file: blocks; two files: lines merged by time)."""
    import io
    from contextlib import redirect_stdout

    import rsp_plugin.cli.query as cli
    from rsp_plugin.cli.options import QueryOptions
    from rsp_plugin.columnar import blocks
    from rsp_plugin.bench import sosa

    monkeypatch.setattr(blocks, "BLOCK_BYTES", 20_000)
    lines = [line for block in sosa.blocks(6000, rate=100) for line in block]
    paths = []
    for number in range(files):
        path = tmp_path / f"s{number}.tnt"
        path.write_text("".join(lines[number::files]))
        paths.append(path)
    query = tmp_path / "q.rq"
    query.write_text(sosa.query_text("off"))
    outputs = []
    original = cli.RSPEngine
    for forget in (False, True):
        made = []

        def engine(**options):
            made.append(original(forget_terms=forget, batch=batch, **options))
            if forget:
                made[-1].forgetting.minimum = 200
            return made[-1]

        monkeypatch.setattr(cli, "RSPEngine", engine)
        out = io.StringIO()
        options = QueryOptions(query=str(query), stream=tuple(f"{sosa.STREAM}={path}" for path in paths),
                               report="on-window-close")
        with redirect_stdout(out):
            assert cli.run_query(options) == 0
        outputs.append(out.getvalue())
        if forget:
            assert made[0].terms.forgotten > 1000
    assert outputs[0] == outputs[1] and outputs[0].count("\n") > 10


@pytest.mark.parametrize("seed", range(3000, 3130))
def test_batch_path_on_literals_of_every_datatype_agrees_with_the_spec(seed, polars_always):
    """The typed cases (numbers of each XSD type, booleans, dates, language tags, custom types,
    IRIs, blank nodes, NaN, INF) over column windows, every evaluation a polars plan, against the
    spec-conformant algebra evaluation of each window."""
    from test_query_differential import TypedCase

    case = TypedCase(seed)
    assert case.run(fast_path=True) == case.expected(), str(case)


def test_the_typed_cases_run_on_column_windows():
    from test_query_differential import TYPED_SHAPES, TypedCase

    columnar = 0
    for seed in range(3000, 3000 + len(TYPED_SHAPES)):
        case = TypedCase(seed)
        engine = RSPEngine()
        engine.register_stream(STREAM)
        registered = engine.register_query(case.text())
        columnar += registered.evaluator.columnar is not None
    assert columnar >= 8, columnar


@pytest.mark.parametrize("seed", range(30))
def test_sorted_join_gives_polars_join_rows_in_the_left_frames_order(seed):
    import polars as pl

    from rsp_plugin.columnar.query import _sorted_join

    draw = np.random.default_rng(seed)
    size = int(draw.integers(1, 60))
    unique = np.unique(draw.integers(0, 80, size))
    repeated = np.sort(draw.integers(0, 80, int(draw.integers(1, 60))))
    shuffled = draw.integers(0, 80, int(draw.integers(1, 60)))
    sides = {0: (repeated, unique), 1: (unique, repeated), 2: (shuffled, unique), 3: (unique, shuffled)}
    for left_keys, right_keys in sides.values():
        frame = pl.DataFrame({"k": left_keys, "a": np.arange(len(left_keys))}, schema={"k": pl.Int64, "a": pl.Int64})
        table = pl.DataFrame({"k": right_keys, "b": np.arange(len(right_keys)) * 7}, schema={"k": pl.Int64, "b": pl.Int64})
        joined = _sorted_join(frame, table, "k")
        expected = frame.join(table, on="k", how="inner").sort(["a", "b"], maintain_order=True)
        assert joined is not None
        assert joined.columns == expected.columns
        assert joined.rows() == expected.rows()  # the frame's order, then the table's
    neither = pl.DataFrame({"k": [3, 1, 3]}, schema={"k": pl.Int64})
    assert _sorted_join(neither, neither, "k") is None


def test_the_sosa_aggregate_on_the_batch_path_answers_what_the_per_fact_path_answers(tmp_path, polars_always):
    """The throughput benchmark's star join (time-ordered new subjects: the binary-search join)
    and aggregates (integer values read by subscript), against the per-fact path."""
    from rsp_plugin.columnar.replay import replay_file
    from rsp_plugin.bench import sosa
    from rsp_plugin.io.formats import Rejected, read_tnt

    stream = tmp_path / "s.tnt"
    sosa.write(stream, 20000, rate=200)
    outputs = []
    for batch in (False, True):
        engine = RSPEngine(batch=batch)
        engine.register_stream(sosa.STREAM)
        seen = []
        engine.register_query(sosa.query_text()).subscribe(lambda result: seen.append(result.to_json()))
        engine.forgetting.minimum = 300
        if batch:
            replay_file(engine, sosa.STREAM, stream, block_bytes=64 << 10)
        else:
            with stream.open() as handle:
                for element in read_tnt(handle, engine.terms, tick_ms=1):
                    assert not isinstance(element, Rejected)
                    if engine.watermark is None or element.time_point > engine.watermark:
                        engine.advance_to(element.time_point)
                    engine.push(sosa.STREAM, [element])
        engine.finish()
        outputs.append(seen)
        assert engine.terms.forgotten > 0
    assert outputs[0] == outputs[1] and len(outputs[0]) > 5


def _admitted_both_ways(seed: int) -> set[str]:
    """The stream of `seed` pushed both ways; the kinds of what was set aside."""
    draw = random.Random(seed)
    text = ("SELECT ?x (COUNT(*) AS ?n) FROM STREAM <http://ex/s> [RANGE 3s STEP 1s] "
            "WHERE { ?x <http://ex/p> ?y } GROUP BY ?x")
    engines = []
    for batch in (False, True):
        engine = RSPEngine(batch=batch, max_gap=5, t0=100)
        engine.register_stream("http://ex/s")
        engine.register_query(text)
        engines.append(engine)
    one, many = engines
    from rdflib import URIRef

    p = URIRef("http://ex/p")
    t, made = 1000, ([], [])
    for _ in range(draw.randint(5, 15)):
        rows = []
        for _ in range(draw.randint(1, 12)):
            roll = draw.random()
            if roll < 0.6:
                t += draw.choice([0, 300, 900, 2000])
                stamp = t
            elif roll < 0.75:
                stamp = t - draw.choice([500, 2500, 9000])  # late (or not yet), or too far behind
            elif roll < 0.88:
                stamp = t + draw.choice([7000, 10 ** 7])  # too far ahead: not followed
            elif roll < 0.94:
                t += 4500
                stamp = t
            else:
                stamp = draw.choice([0, 99])  # before t0
            rows.append((stamp, URIRef(f"http://ex/x{draw.randrange(3)}"), URIRef(f"http://ex/y{draw.randrange(50)}")))
        for stamp, x, y in rows:
            one.push("http://ex/s", [(x, p, y)], timestamp=stamp)
        ids = [[many.terms.intern(term_key(term)) for term in (x, p, y)] for _, x, y in rows]
        many.push_columns("http://ex/s", [stamp for stamp, *_ in rows], *zip(*ids))
        assert [str(r) for r in many.rejected] == [str(r) for r in one.rejected]
        assert many.latest_timestamp == one.latest_timestamp
        if one.latest_timestamp is not None:
            for engine, out in zip(engines, made):
                out.extend(engine.advance_to(one.latest_timestamp))
    for engine, out in zip(engines, made):
        out.extend(engine.finish())

    def shown(results):
        return [(r.t, sorted(str(row) for row in r.to_json()["bindings"])) for r in results]

    assert shown(made[1]) == shown(made[0]) and made[0], seed
    kinds = ("before the start", "ms ahead", "ms behind", "late:")
    return {kind for r in one.rejected for kind in kinds if kind in r.reason}


def test_columns_are_admitted_as_elements_one_by_one_are():
    """Far jumps ahead and back, late elements and elements before t0, in micro-batches: pushed as columns
    (judged at once, `Gate.judge_many`) on the batch path, they are set aside with the same messages and
    make the same reports as pushed one by one (`Gate.judge`) on the per-fact path."""
    kinds = set().union(*(_admitted_both_ways(seed) for seed in range(12)))
    assert kinds == {"before the start", "ms ahead", "ms behind", "late:"}
