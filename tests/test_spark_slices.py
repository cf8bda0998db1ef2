"""Distributed mode's time slices: the embedded engine on the executors, the edges and the carry on the driver.

- `answers_over` (the engine over one slice of time) answers each instant as the
  local engine does over the whole stream, for the instants whose windows lie in
  the slice; the edges of slices (`edge_mask`) hold every triple a window that
  lies in no slice reads; an answer read back from its payload is the answer;
- end to end on `local[2]`: the SOSA stream in several micro-batches (each cut into
  partitions), plain and under RDFS, tumbling and sliding windows, gives the local
  engine's output, every batch by the slice path; so does a directory of files
  read as one batch (the instants after each file's start are the driver's, a run
  of them per file); a batch out of time order sends it and the rest of the run
  the general way, with the same output.

The whole set of shared queries, CSRBench and the entailment cases is
tests/test_spark_cluster.py's (on `local-cluster`).
"""

from __future__ import annotations

import json
import random
from pathlib import Path

import numpy as np
import pytest

from rsp_plugin.bench.shapes import ONTOLOGY, ONTOLOGY_IRI, STREAM, continuous_query, write_stream
from rsp_plugin.runtime.engine import RSPEngine

pytestmark = pytest.mark.spark


def _engine(text: str, ontology: Path | None = None) -> RSPEngine:
    engine = RSPEngine()
    engine.register_stream(STREAM)
    if ontology is not None:
        engine.add_graph(ONTOLOGY_IRI, str(ontology))
    engine.register_query(text)
    return engine


def _local(text: str, ontology: Path | None, stream: Path) -> list[dict]:
    from rsp_plugin.columnar.replay import replay_file

    engine = _engine(text, ontology)
    results = []
    engine.subscribe(results.append)
    replay_file(engine, STREAM, stream)
    engine.finish()
    return [result.to_json() for result in results]


def _lines(path: Path):
    rows = [line.split(" ", 1) for line in path.read_text().splitlines()]
    times = np.array([int(stamp) for stamp, _ in rows], dtype=np.int64)
    terms = [rest.rstrip(" .").split(" ", 2) for _, rest in rows]
    return times, [t[0] for t in terms], [t[1] for t in terms], [t[2] for t in terms]


@pytest.mark.parametrize("profile,window", [("plain", (10, 5)), ("rdfs", (10, 5)), ("plain", (7, 2)),
                                            ("rdfs", (6, 3))])
def test_a_slice_answers_the_instants_inside_it_as_the_whole_stream_does(tmp_path, profile, window):
    import pyarrow as pa

    from rsp_plugin.spark.distributed.plan import plan_of
    from rsp_plugin.spark.distributed.slices import answers_over, edge_mask, edge_width, payload_answer, reach

    stream, ontology = tmp_path / "s.tnt", tmp_path / "o.ttl"
    write_stream(stream, 9000, 100)  # 90 s
    ontology.write_text(ONTOLOGY)
    text = continuous_query(profile, *window)
    want = {line["t"]: line for line in _local(text, ontology, stream)}
    plan = plan_of(_engine(text, ontology))
    times, s, p, o = _lines(stream)
    span = reach(plan)
    for start, stop in ((0, 3600), (3600, 6300), (6300, 9000)):  # three slices of the stream
        first, last = int(times[start]), int(times[stop - 1])
        found = answers_over(plan, "\n".join(plan.background), STREAM, times[start:stop],
                             pa.array(s[start:stop]), pa.array(p[start:stop]), pa.array(o[start:stop]), last,
                             lambda k: plan.grid.instant(k) - span > first and plan.grid.instant(k) <= last)
        assert found
        for k, payload in found.items():
            engine = _engine(text, ontology)
            from rsp_plugin.query.results import QueryResult

            answer = payload_answer(payload, engine.terms)
            assert QueryResult("q", plan.grid.instant(k), answer, engine.terms).to_json() == \
                want[plan.grid.instant(k)]
    # a window in no slice reads only triples within E of a slice's ends
    width = edge_width(plan)
    for start, stop in ((0, 3600), (3600, 6300)):
        mask = edge_mask(times[start:stop], width)
        first, last = int(times[start]), int(times[stop - 1])
        middle = times[start:stop][~mask]
        assert (middle >= first + width).all() and (middle < last - width).all()


def test_under_compute_every_a_slice_reaches_back_to_its_windows_last_boundary(tmp_path):
    """COMPUTE EVERY 1s over [RANGE 3s STEP 2s]: a report at an odd second shows the window of the second
    before, [tau - 4s, tau - 1s), so R is 3 s + 1 s (`reach`); with R = 3 s a slice would answer such a
    report without the elements of its first second."""
    import pyarrow as pa

    from rsp_plugin.query.results import QueryResult
    from rsp_plugin.spark.distributed.plan import plan_of
    from rsp_plugin.spark.distributed.slices import answers_over, payload_answer, reach

    stream = tmp_path / "s.tnt"
    stream.write_text("".join(f"{ms} <http://ex/a{ms}> <http://ex/p> <http://ex/o{ms % 3}> .\n"
                              for ms in range(0, 30_000, 150)))
    text = (f"REGISTER QUERY q COMPUTE EVERY 1s AS SELECT ?s ?o FROM STREAM <{STREAM}> [RANGE 3s STEP 2s] "
            "WHERE { ?s <http://ex/p> ?o }")
    want = {line["t"]: line for line in _local(text, None, stream)}
    plan = plan_of(_engine(text))
    assert reach(plan) == 4000
    times, s, p, o = _lines(stream)
    answered = 0
    for start, stop in ((0, 66), (66, 133), (133, 200)):
        first, last = int(times[start]), int(times[stop - 1])
        found = answers_over(plan, "", STREAM, times[start:stop], pa.array(s[start:stop]), pa.array(p[start:stop]),
                             pa.array(o[start:stop]), last,
                             lambda k, first=first, last=last: first < plan.grid.instant(k) - reach(plan)
                             and plan.grid.instant(k) <= last)
        for k, payload in found.items():
            engine = _engine(text)
            shown = QueryResult("q", plan.grid.instant(k), payload_answer(payload, engine.terms), engine.terms)
            assert shown.to_json() == want[plan.grid.instant(k)]
            answered += 1
    assert answered >= 15


def _run(spark, text: str, ontology: Path | None, stream: Path, lines: int, partitions: int = 2):
    from rsp_plugin.spark import run

    results = []
    finished = run(spark, _engine(text, ontology), {STREAM: str(stream)}, results.append, mode="distributed",
                   max_lines_per_trigger=lines, options={"numPartitions": partitions}, progress=False).wait()
    return [result.to_json() for result in results], finished.driver


@pytest.mark.parametrize("profile,window,partitions", [("plain", (10, 5), 2), ("rdfs", (10, 5), 3),
                                                       ("rdfs", (30, 1), 2), ("plain", (4, 4), 4)])
def test_micro_batches_cut_into_slices_give_the_local_results(spark, tmp_path, profile, window, partitions):
    stream, ontology = tmp_path / "s.tnt", tmp_path / "o.ttl"
    write_stream(stream, 12_000, 200)
    ontology.write_text(ONTOLOGY)
    text = continuous_query(profile, *window)
    got, driver = _run(spark, text, ontology, stream, 3000, partitions)
    assert got == _local(text, ontology, stream) and len(got) > 10
    assert driver.state.sliced and "slices" in driver.timings and "stats" not in driver.timings
    assert not list(driver.store.root.glob("carry-*")), "the carry is deleted when the replay ends"


def test_the_instants_no_slice_answers_are_answered_run_by_run(spark, tmp_path, monkeypatch):
    """A directory of files in time order read as one batch: a file's piece has no lines before it to look
    back at, so the instants just after each file's first line are the driver's, in runs 100 instants
    apart; each run is answered by an engine of its own over the rows its windows hold, as the local
    engine answers them over the whole stream."""
    from rsp_plugin.spark import run
    from rsp_plugin.spark.distributed import driver as distributed_driver

    stream, ontology = tmp_path / "s.tnt", tmp_path / "o.ttl"
    write_stream(stream, 12_000, 40)  # 300 s
    ontology.write_text(ONTOLOGY)
    lines = stream.read_text().splitlines(keepends=True)
    folder = tmp_path / "in"
    folder.mkdir()
    for number, start in enumerate(range(0, len(lines), 4000)):
        (folder / f"part-{number}.tnt").write_text("".join(lines[start:start + 4000]))
    made = []
    runs = distributed_driver._runs
    monkeypatch.setattr(distributed_driver, "_runs", lambda ks: made.append(runs(ks)) or made[-1])
    for profile in ("plain", "rdfs"):
        text = continuous_query(profile, 4, 1)
        results = []
        finished = run(spark, _engine(text, ontology), {STREAM: str(folder)}, results.append, mode="distributed",
                       progress=False).wait()
        assert [result.to_json() for result in results] == _local(text, ontology, stream)
        assert finished.driver.state.sliced
    assert max(len(found) for found in made) >= 3, "one run after each file's start"


def test_a_batch_out_of_time_order_goes_the_general_way_with_the_same_results(spark, tmp_path):
    stream, ontology = tmp_path / "s.tnt", tmp_path / "o.ttl"
    write_stream(stream, 6_000, 200)
    ontology.write_text(ONTOLOGY)
    lines = stream.read_text().splitlines()
    # the second batch (lines 2000..3999) has an observation 4 s late, taken into the windows still open
    stamp, rest = lines[3300].split(" ", 1)
    draw = random.Random(3)
    late = [f"{int(stamp) - 4000} <http://ex.org/shapes/late{draw.randrange(100)}> {part}"
            for part in ("<http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/shapes/TempObs> .",)]
    lines[3300:3300] = late
    stream.write_text("\n".join(lines) + "\n")
    for profile in ("plain", "rdfs"):
        text = continuous_query(profile, 10, 5)
        got, driver = _run(spark, text, ontology, stream, 2000)
        assert got == _local(text, ontology, stream)
        assert not driver.state.sliced and "slices" in driver.timings and "stats" in driver.timings


def test_an_answer_reads_back_from_its_payload():
    from rsp_plugin.core.terms import Dictionary
    from rsp_plugin.query.results import Answer
    from rsp_plugin.spark.distributed.slices import answer_payload, payload_answer

    terms = Dictionary()
    a, b = terms.intern("<http://ex/a>"), terms.intern('"1"^^<http://www.w3.org/2001/XMLSchema#integer>')
    for answer in (Answer("SELECT", ("x", "y"), [(a, None), (a, b)], ordered=True), Answer("ASK", boolean=True),
                   Answer("CONSTRUCT", triples=[(a, a, b)]), Answer("SELECT", error="boom", cut="max-eval-ms")):
        other = Dictionary()
        back = payload_answer(answer_payload(answer, terms.keys), other)
        assert json.dumps(_written(back, other.keys)) == json.dumps(_written(answer, terms.keys))


def _written(answer, keys) -> dict:
    return {"form": answer.form, "variables": list(answer.variables), "ordered": answer.ordered,
            "rows": [[None if v is None else keys[v] for v in row] for row in answer.rows],
            "triples": [[keys[v] for v in triple] for triple in answer.triples], "boolean": answer.boolean,
            "error": answer.error, "cut": answer.cut}


def test_pieces_read_as_rows_are_the_sources_rows(spark, tmp_path):
    """`emit` pieces: a row per piece; made rows again (the general way), they are the source's rows, dead
    letters included, in the same order."""
    from rsp_plugin.spark.distributed.slices import pieces_as_rows
    from rsp_plugin.spark.source import SCHEMA

    stream = tmp_path / "s.tnt"
    write_stream(stream, 30_000, 1000)
    lines = stream.read_text().splitlines()
    lines[100] = "not a triple"
    lines[20_000] = '7 <http://ex/a> <http://ex/b> "unterminated .'
    stream.write_text("\n".join(lines) + "\n")
    rows = spark.read.format("rdf").option("stream", STREAM).option("numPartitions", 3).load(str(stream))
    pieces = (spark.read.format("rdf").option("stream", STREAM).option("numPartitions", 3).option("emit", "pieces")
              .load(str(stream)))
    assert pieces.count() == 3 and pieces.columns[:4] == ["path", "fmt", "start", "end"]
    made = pieces.mapInArrow(pieces_as_rows(STREAM), SCHEMA)
    assert [tuple(r) for r in made.collect()] == [tuple(r) for r in rows.collect()]
    dead = [r.rejected for r in made.collect() if r.rejected]
    assert len(dead) == 2 and dead[0].startswith(f"{stream}:101: ")


def test_looking_back_from_a_piece_finds_every_line_a_window_reaching_it_reads(tmp_path):
    from rsp_plugin.spark.source import FilePiece, look_back

    stream = tmp_path / "s.tnt"
    write_stream(stream, 30_000, 1000)  # 30 s
    data = stream.read_bytes()
    middle = data.index(b"\n", len(data) // 2) + 1
    piece = FilePiece(str(stream), "tnt", middle, len(data), 0, "inline", None)
    before = look_back(piece, 10_000, 1 << 24)
    stamps = [int(line.split(b" ", 1)[0]) for line in data[:middle].splitlines()]
    last = stamps[-1]
    assert before is not None and before.end == middle
    taken = [int(line.split(b" ", 1)[0]) for line in data[before.start:middle].splitlines()]
    assert min(taken) >= last - 10_000 and len(taken) == sum(1 for s in stamps if s >= last - 10_000)
    # nothing to look back on at the file's start, or past the bytes allowed
    assert look_back(FilePiece(str(stream), "tnt", 0, middle, 0, "inline", None), 10_000, 1 << 24) is None
    assert look_back(piece, 10_000, 1 << 10) is None
    assert look_back(FilePiece(str(stream), "nt", middle, len(data), 0, "arrival", 5), 10_000, 1 << 24) is None
