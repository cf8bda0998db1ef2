"""The micro-batch driver without Spark: Arrow micro-batches in, the same results as the local replay out.

The micro-batches here are what the `rdf` source's executors make of a file
(`read_piece` on byte ranges), cut at every possible kind of place: inside a
time point, between time points, one line per batch. The oracle is
`rsp-plugin query --engine local` on the same files.
"""

import contextlib
import io
import json
import random

import pyarrow as pa
import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.runtime.engine import RSPEngine
from rsp_plugin.spark.checkpoint import StateStore
from rsp_plugin.spark.driver import MicroBatchDriver
from rsp_plugin.spark.sinks import CallbackSink, DeadLetters, JSONLinesSink
from rsp_plugin.spark.source import FilePiece, read_piece

EX = "http://ex.org/"
SELECT_HOT = f"""
REGISTER RSTREAM <{EX}q/hot> AS
SELECT ?s ?v FROM STREAM <{EX}s> [RANGE 3s STEP 1s]
WHERE {{ ?s <{EX}temp> ?v FILTER(?v > 50) }}"""
COUNT_TRIPLES = f"""
REGISTER ISTREAM <{EX}q/count> AS
SELECT ?s (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE TRIPLES 5]
WHERE {{ ?s ?p ?o }} GROUP BY ?s"""
TWO_STREAMS = f"""
REGISTER RSTREAM <{EX}q/join> AS
SELECT ?s ?v ?w
FROM NAMED WINDOW <{EX}w1> ON <{EX}s> [RANGE PT2S STEP PT1S]
FROM NAMED WINDOW <{EX}w2> ON <{EX}r> [RANGE PT4S STEP PT1S]
WHERE {{ WINDOW <{EX}w1> {{ ?s <{EX}temp> ?v }} WINDOW <{EX}w2> {{ ?s <{EX}hum> ?w }} }}"""


def generated_stream(seed: int, predicate: str = "temp", lines: int = 60, late: bool = True) -> str:
    """Timestamped N-Triples: time goes up in steps of 0-700 ms; now and then a late or a broken line."""
    draw = random.Random(seed)
    out, stamp = [], 0
    for number in range(lines):
        stamp += draw.choice((0, 0, 100, 250, 700))
        shown = stamp - 2500 if late and draw.random() < 0.05 else stamp
        sensor = draw.randrange(4)
        value = draw.randrange(100)
        if draw.random() < 0.04:
            out.append(f"{shown} <{EX}sensor{sensor}> <{EX}{predicate}> broken .")
        else:
            out.append(f'{shown} <{EX}sensor{sensor}> <{EX}{predicate}> "{value}"^^<http://www.w3.org/2001/XMLSchema#integer> .')
    return "\n".join(out) + "\n"


def local_lines(query_path, streams) -> list[dict]:
    out = io.StringIO()
    args = ["query", str(query_path)]
    for iri, path in streams:
        args += ["--stream", f"{iri}={path}"]
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        assert main(args) == 0
    return [json.loads(line) for line in out.getvalue().splitlines()]


def batches_of(path, stream: str, cuts: list[int]) -> list[pa.Table]:
    """The file cut before the given line numbers (0-based), parsed as the executors parse it."""
    data = path.read_bytes()
    starts = [0]
    for index, byte in enumerate(data):
        if byte == 0x0A:
            starts.append(index + 1)
    lines = len(starts) - 1
    bounds = [0, *sorted(c for c in set(cuts) if 0 < c < lines), lines]
    tables = []
    for first, last in zip(bounds, bounds[1:]):
        piece = FilePiece(str(path), "tnt", starts[first], starts[last], first, "inline", None)
        batches = list(read_piece(piece, stream))
        tables.append(pa.Table.from_batches(batches) if batches else None)
    return [t for t in tables if t is not None]


def spark_side(query_text, sources, batches, *, store=None, first_batch=0):
    engine = RSPEngine()
    for iri in sources:
        engine.register_stream(iri)
    engine.register_query(query_text)
    got = []
    dead = io.StringIO()
    driver = MicroBatchDriver(engine, CallbackSink(lambda r: got.append(r.to_json())), streams=list(sources),
                              store=store, dead_letters=DeadLetters(err=dead))
    for number, table in enumerate(batches, first_batch):
        driver.process(table, number)
    driver.finish()
    return got, driver, dead.getvalue()


@pytest.mark.parametrize("seed", range(40))
def test_any_cut_into_micro_batches_gives_the_local_results(seed, tmp_path):
    query = tmp_path / "q.rq"
    query.write_text(SELECT_HOT if seed % 2 == 0 else COUNT_TRIPLES)
    stream = tmp_path / "s.tnt"
    stream.write_text(generated_stream(seed))
    draw = random.Random(1000 + seed)
    cuts = draw.sample(range(1, 60), draw.randrange(0, 12))
    got, driver, dead = spark_side(query.read_text(), [f"{EX}s"], batches_of(stream, f"{EX}s", cuts))
    assert got == local_lines(query, [(f"{EX}s", stream)])
    broken = sum(1 for line in stream.read_text().splitlines() if " broken ." in line)
    assert dead.count("not an N-Triples triple") + dead.count("a triple ends") >= broken
    assert driver.state.set_aside == len(dead.splitlines())


def test_one_line_per_micro_batch(tmp_path):
    query = tmp_path / "q.rq"
    query.write_text(SELECT_HOT)
    stream = tmp_path / "s.tnt"
    stream.write_text(generated_stream(7, lines=30))
    got, _, _ = spark_side(query.read_text(), [f"{EX}s"], batches_of(stream, f"{EX}s", list(range(30))))
    assert got == local_lines(query, [(f"{EX}s", stream)])


@pytest.mark.parametrize("seed", range(12))
def test_two_streams_are_merged_by_time_as_the_local_replay_merges_its_files(seed, tmp_path):
    query = tmp_path / "q.rq"
    query.write_text(TWO_STREAMS)
    first, second = tmp_path / "s.tnt", tmp_path / "r.tnt"
    first.write_text(generated_stream(seed, "temp", late=False))
    second.write_text(generated_stream(seed + 100, "hum", lines=25, late=False))
    draw = random.Random(seed)
    one = batches_of(first, f"{EX}s", draw.sample(range(1, 60), 5))
    two = batches_of(second, f"{EX}r", draw.sample(range(1, 25), 3))
    mixed = []  # micro-batches of a union: each source's rows in order, the sources' pieces interleaved
    while one or two:
        parts = [source.pop(0) for source in (one, two) if source and draw.random() < 0.7]
        if parts:
            mixed.append(pa.concat_tables(parts) if len(parts) > 1 else parts[0])
    got, driver, _ = spark_side(query.read_text(), [f"{EX}s", f"{EX}r"], mixed)
    assert got == local_lines(query, [(f"{EX}s", first), (f"{EX}r", second)])
    assert got, "the join has answers"


def test_a_repeated_batch_id_is_a_no_op(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text(generated_stream(3, late=False))
    batches = batches_of(stream, f"{EX}s", [20, 40])
    once, _, _ = spark_side(SELECT_HOT, [f"{EX}s"], batches)
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(SELECT_HOT)
    got = []
    driver = MicroBatchDriver(engine, CallbackSink(lambda r: got.append(r.to_json())), streams=[f"{EX}s"])
    for number, table in [(0, batches[0]), (0, batches[0]), (1, batches[1]), (1, batches[1]), (2, batches[2])]:
        driver.process(table, number)
    driver.finish()
    assert got == once
    assert [report.skipped for report in driver.reports] == [False, True, False, True, False]
    assert "seen before" in driver.reports[1].line()


def _hot_driver(folder, out):
    """A driver of SELECT_HOT over one stream, its state in `folder`/chk, its output `out`."""
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(SELECT_HOT)
    return MicroBatchDriver(engine, JSONLinesSink(out), streams=[f"{EX}s"], store=StateStore(folder / "chk"),
                            dead_letters=DeadLetters(folder / "dead.txt"))


def _hot_batches(folder):
    """A generated stream cut into four batches, and SELECT_HOT's reports over them, uninterrupted."""
    stream = folder / "s.tnt"
    stream.write_text(generated_stream(11, lines=80, late=False))
    batches = batches_of(stream, f"{EX}s", [15, 30, 55])
    return batches, spark_side(SELECT_HOT, [f"{EX}s"], batches)[0]


def test_a_driver_restarted_from_its_state_store_goes_on_where_it_stopped(tmp_path):
    """Batches 0-1 in one driver, a crash, then 1 (again: Spark re-runs it) to 3 in a new one."""
    batches, uninterrupted = _hot_batches(tmp_path)

    def new_driver(out):
        return _hot_driver(tmp_path, out)

    out = tmp_path / "out.jsonl"
    first = new_driver(out)
    first.process(batches[0], 0)
    first.process(batches[1], 1)
    with out.open("a") as handle:  # batch 2 was half written when the job died
        handle.write('{"t": 99999, "bind')
    second = new_driver(out)
    assert second.resumed and second.state.last_batch == 1
    second.process(batches[1], 1)  # not committed in Spark's log: re-run, a no-op here
    second.process(batches[2], 2)
    second.process(batches[3], 3)
    second.finish()
    assert [json.loads(line) for line in out.read_text().splitlines()] == uninterrupted
    third = new_driver(out)
    assert third.state.finished and third.finish() == []


def test_a_driver_killed_inside_its_first_batch_writes_each_report_once_after_the_restart(tmp_path):
    """Killed after writing batch 0's reports and before saving its state (`rsp-plugin query --engine spark`
    killed at its first report line, tests/test_mqtt_spark.py): no batch was saved, and the restarted driver
    cuts the output back to where the run began (the state saved before the first batch), so batch 0, run
    again, is written once; what the file held before stays."""
    batches, uninterrupted = _hot_batches(tmp_path)

    def new_driver(out):
        return _hot_driver(tmp_path, out)

    out = tmp_path / "out.jsonl"
    out.write_text('{"t": -1, "an earlier run": true}\n')
    first = new_driver(out)
    first.store = None  # (killed: batch 0's reports are written, its state is never saved)
    first.process(batches[0], 0)
    assert len(out.read_text().splitlines()) > 1
    second = new_driver(out)
    assert second.state.last_batch == -1
    for number, table in enumerate(batches):
        second.process(table, number)  # (Spark runs batch 0 again: it was never committed)
    second.finish()
    lines = [json.loads(line) for line in out.read_text().splitlines()]
    assert lines == [{"t": -1, "an earlier run": True}, *uninterrupted]


def test_the_engine_state_saved_with_a_batch_holds_windows_materialization_and_istream_memory(tmp_path):
    ontology = tmp_path / "o.ttl"
    ontology.write_text(f"<{EX}Hot> <http://www.w3.org/2000/01/rdf-schema#subClassOf> <{EX}Alarm> .\n")
    query = f"""
REGISTER ISTREAM <{EX}q/alarms> AS
SELECT ?s FROM STREAM <{EX}s> [RANGE 2s STEP 1s] FROM <{ontology}>
ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>
WHERE {{ ?s a <{EX}Alarm> }}"""
    stream = tmp_path / "s.tnt"
    stream.write_text("".join(f"{t * 300} <{EX}sensor{t % 3}> a <{EX}Hot> .\n".replace(" a ", " <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> ")
                              for t in range(20)))
    batches = batches_of(stream, f"{EX}s", [5, 11])
    uninterrupted, _, _ = spark_side(query, [f"{EX}s"], batches)
    store = StateStore(tmp_path / "chk")
    spark_side_first = spark_side  # the same helper, stopped after one batch:
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(query)
    got = []
    driver = MicroBatchDriver(engine, CallbackSink(lambda r: got.append(r.to_json())), streams=[f"{EX}s"],
                              store=store)
    driver.process(batches[0], 0)
    rest, _, _ = spark_side_first(query, [f"{EX}s"], batches[1:], store=store, first_batch=1)
    assert got + rest == uninterrupted
    assert any(line["bindings"] for line in uninterrupted)
