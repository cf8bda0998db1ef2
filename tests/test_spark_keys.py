"""Distributed mode's key split: a key-local query's batches answered by buckets of keys on the executors.

When each answer row joins the triples of one key (partitioned mode's locality
analysis), the answer at tau is the union over keys of each key's answer. So the
batches the time slices cannot take -- several sources merged by time, elements
out of time order -- are routed to their keys after the driver's admission and
answered by one engine per bucket of keys, instead of the general way; the
driver joins each instant's answers and applies R2S to the whole. Checked here
against the local engine (the command line, in this process) on `local[2]`:
two streams merged by time (aggregates under ISTREAM, CONSTRUCT, ASK, RDFS with
the schema in the background), a stream with late elements (the key split, then
the time slices again), a schema triple on the stream (the general way), and
the queries that are not key-local (no key found).
"""

from __future__ import annotations

import contextlib
import io
import json
import random
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main

pytestmark = pytest.mark.spark

EX = "http://ex.org/keys/"
XSD_INT = "<http://www.w3.org/2001/XMLSchema#integer>"
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
ONTOLOGY = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:temp rdfs:domain ex:Sensor ; rdfs:subPropertyOf ex:reading .
ex:Sensor rdfs:subClassOf ex:Device .
"""


def readings(path: Path, *, offset: int, lines: int = 300, seed: int = 1, late: int = 0) -> Path:
    """A sensor's readings and types every 50 ms from `offset`; with `late`, that many lines 1.5 s late."""
    draw = random.Random(seed)
    out = []
    for number in range(lines):
        stamp, sensor = offset + number * 50, f"<{EX}sensor{draw.randrange(12)}>"
        if draw.random() < 0.2:
            out.append(f"{stamp} {sensor} {RDF_TYPE} <{EX}Sensor> .")
        else:
            out.append(f'{stamp} {sensor} <{EX}temp> "{draw.randrange(40)}"^^{XSD_INT} .')
    for number in range(late):
        at = draw.randrange(lines // 3, lines)
        stamp = int(out[at].split(" ", 1)[0]) - 1500
        out.insert(at, f'{stamp} <{EX}sensor{draw.randrange(12)}> <{EX}temp> "{90 + number}"^^{XSD_INT} .')
    path.write_text("\n".join(out) + "\n")
    return path


QUERIES = {
    # (ISTREAM: R2S applies to the buckets' answers together, as to the one engine's)
    "aggregate": (f"PREFIX ex: <{EX}>\nREGISTER ISTREAM <{EX}q> AS\n"
                  "SELECT ?s (COUNT(?v) AS ?n) (MAX(?v) AS ?top) (AVG(?v) AS ?mean)\n"
                  f"FROM STREAM <{EX}a> [RANGE 3s STEP 1s] FROM STREAM <{EX}b> [RANGE 3s STEP 1s]\n"
                  "WHERE { ?s ex:temp ?v . ?s a ex:Sensor } GROUP BY ?s\n"),
    "construct": (f"PREFIX ex: <{EX}>\nCONSTRUCT {{ ?s ex:hot ?v }}\n"
                  f"FROM STREAM <{EX}a> [RANGE 2s STEP 1s] FROM STREAM <{EX}b> [RANGE 2s STEP 1s]\n"
                  "WHERE { ?s ex:temp ?v FILTER(?v > 35) }\n"),
    "ask": (f"PREFIX ex: <{EX}>\nASK FROM STREAM <{EX}a> [RANGE 1s STEP 1s] FROM STREAM <{EX}b> [RANGE 1s STEP 1s]\n"
            f"WHERE {{ <{EX}sensor3> ex:temp ?v FILTER(?v > 30) }}\n"),
    "rdfs": (f"PREFIX ex: <{EX}>\nSELECT ?s (COUNT(?v) AS ?n)\n"
             f"FROM STREAM <{EX}a> [RANGE 3s STEP 1s] FROM STREAM <{EX}b> [RANGE 3s STEP 1s]\n"
             "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>\n"
             "WHERE { ?s a ex:Device . ?s ex:reading ?v } GROUP BY ?s\n"),
}


def local(args: list) -> list[dict]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["query", *map(str, args), "-q"])
    assert status == 0, err.getvalue()
    return [json.loads(line) for line in out.getvalue().splitlines()]


def on_spark(spark, query: Path, sources: dict, *, lines: int = 120, background=()):
    from rsp_plugin.spark import run

    results = []
    finished = run(spark, str(query), sources, results.append, mode="distributed", max_lines_per_trigger=lines,
                   background=background, progress=False).wait()
    return [result.to_json() for result in results], finished.driver


@pytest.mark.parametrize("shape", ["aggregate", "construct", "ask"])  # (rdfs: the cluster test's, and below)
def test_two_streams_merged_by_time_are_answered_by_buckets_of_keys(spark, tmp_path, shape):
    a = readings(tmp_path / "a.tnt", offset=0, seed=1)
    b = readings(tmp_path / "b.tnt", offset=25, seed=2)
    query = tmp_path / "q.rq"
    query.write_text(QUERIES[shape])
    background = []
    args = [query, "--stream", f"{EX}a={a}", "--stream", f"{EX}b={b}"]
    if shape == "rdfs":
        (tmp_path / "onto.ttl").write_text(ONTOLOGY)
        background = [str(tmp_path / "onto.ttl")]
        args += ["--background", tmp_path / "onto.ttl"]
    want = local(args)
    got, driver = on_spark(spark, query, {f"{EX}a": str(a), f"{EX}b": str(b)}, background=background)
    assert got == want and len(want) >= 15
    assert driver.plan.key == ("v" if shape == "ask" else "s")  # (ASK: the only variable)
    assert driver.state.sliced and "keys" in driver.timings, "every batch by the key split"
    if shape in ("construct", "ask"):
        assert any(line.get("triples") or line.get("boolean") for line in want)
    if shape == "ask":
        assert not all(line["boolean"] for line in want), "false at some instants too"


def test_late_elements_go_by_the_key_split_and_the_rest_by_the_time_slices(spark, tmp_path):
    stream = readings(tmp_path / "a.tnt", offset=0, lines=600, seed=4, late=5)
    lines = stream.read_text().splitlines()  # and a line too far ahead (the gap bound), one unreadable
    lines.insert(300, f'{int(lines[300].split(" ", 1)[0]) + 200_000_000} <{EX}sensor1> <{EX}temp> "1"^^{XSD_INT} .')
    lines.insert(420, f"{lines[420].split(' ', 1)[0]} <{EX}sensor1> <{EX}temp> .")
    stream.write_text("\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text(QUERIES["aggregate"].replace(f" FROM STREAM <{EX}b> [RANGE 3s STEP 1s]", ""))
    want = local([query, "--stream", f"{EX}a={stream}"])
    got, driver = on_spark(spark, query, {f"{EX}a": str(stream)}, lines=200)
    assert got == want and len(want) >= 25
    assert any(line["bindings"] and any(b["top"].startswith('"9') for b in line["bindings"]) for line in want), \
        "a late reading is in some window"
    assert driver.state.sliced, "never the general way"
    assert "keys" in driver.timings and "slices" in driver.timings
    assert driver.state.set_aside >= 2, "the line too far ahead and the unreadable one"


def test_a_schema_triple_on_the_stream_sends_the_batch_the_general_way(spark, tmp_path):
    a = readings(tmp_path / "a.tnt", offset=0, seed=5)
    b = readings(tmp_path / "b.tnt", offset=25, seed=6)
    lines = b.read_text().splitlines()
    lines.insert(250, f"{lines[250].split(' ', 1)[0]} <{EX}level> <http://www.w3.org/2000/01/rdf-schema#subPropertyOf> "
                      f"<{EX}reading> .")
    b.write_text("\n".join(lines) + "\n")
    query = tmp_path / "q.rq"
    query.write_text(QUERIES["rdfs"])
    (tmp_path / "onto.ttl").write_text(ONTOLOGY)
    want = local([query, "--stream", f"{EX}a={a}", "--stream", f"{EX}b={b}", "--background", tmp_path / "onto.ttl"])
    got, driver = on_spark(spark, query, {f"{EX}a": str(a), f"{EX}b": str(b)}, lines=150,
                           background=[str(tmp_path / "onto.ttl")])
    assert got == want
    assert not driver.state.sliced and "keys" in driver.timings, "the key split, then the general way"


def test_the_key_is_the_first_variable_the_locality_analysis_accepts(tmp_path):
    from rsp_plugin.runtime.engine import RSPEngine
    from rsp_plugin.spark.distributed.plan import plan_of

    def key_of(text: str, background: str | None = None):
        engine = RSPEngine()
        engine.register_stream(f"{EX}a")
        if background is not None:
            (tmp_path / "onto.ttl").write_text(background)
            engine.add_background(str(tmp_path / "onto.ttl"))
        engine.register_query(f"PREFIX ex: <{EX}>\n" + text)
        plan = plan_of(engine)
        return plan.key, plan.routes

    window = f"FROM STREAM <{EX}a> [RANGE 3s STEP 1s]"
    assert key_of(f"SELECT ?v ?s {window} WHERE {{ ?s ex:temp ?v . ?s a ex:Sensor }}") == \
        ("s", {f"<{EX}temp>": "s", RDF_TYPE: "s"})
    assert key_of(f"SELECT ?o {window} WHERE {{ ?s ex:by ?o . ?t ex:in ?o }}")[0] == "o"
    # an observation node joins the sensor's triples: not key-local by the sensor, and ?obs is not selected
    assert key_of(f"SELECT ?s (COUNT(?obs) AS ?n) {window} WHERE {{ ?obs ex:by ?s . ?obs ex:v ?v }} GROUP BY ?s")[0] \
        is None
    assert key_of(f"SELECT (COUNT(?v) AS ?n) {window} WHERE {{ ?s ex:temp ?v }}")[0] is None  # a global aggregate
    assert key_of(f"CONSTRUCT {{ _:b ex:of ?s }} {window} WHERE {{ ?s ex:temp ?v }}")[0] is None  # a blank node
    assert key_of(f"SELECT ?s {window} ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> WHERE {{ ?s a ex:Device }}",
                  ONTOLOGY) == ("s", {f"<{EX}temp>": "s", RDF_TYPE: "s"})


HOT = f"""@prefix ex: <{EX}> .
ex:hot(?s) :- ?s ex:temp ?v, ?v > 30 .
?s a ex:Hot :- [RANGE 2] DIAMOND ex:hot(?s) .
"""


def test_a_rules_program_that_keeps_to_a_key_runs_over_two_streams_by_the_key_split(spark, tmp_path):
    """Every rule keeps ?s (`partitioned._rules_key_local`): each bucket's engine runs the program over its
    sensors' triples from the plan's text (its file deleted before the run), as the one engine runs it."""
    a = readings(tmp_path / "a.tnt", offset=0, seed=7)
    b = readings(tmp_path / "b.tnt", offset=25, seed=8, late=4)
    program = tmp_path / "hot.lars"
    program.write_text(HOT)
    query = tmp_path / "q.rq"
    query.write_text(f"PREFIX ex: <{EX}>\nSELECT ?s FROM STREAM <{EX}a> [RANGE 1s STEP 1s] "
                     f"FROM STREAM <{EX}b> [RANGE 1s STEP 1s]\nRULES <{program.as_uri()}>\nWHERE {{ ?s a ex:Hot }}\n")
    want = local([query, "--stream", f"{EX}a={a}", "--stream", f"{EX}b={b}"])
    from rsp_plugin.spark import _engine_of, check_mode, run

    sources = {f"{EX}a": str(a), f"{EX}b": str(b)}
    engine, _ = _engine_of(str(query), list(sources.items()), (), None, None)
    plan = check_mode(engine, "distributed", lanes=2)
    assert plan.key == "s" and plan.rules is not None
    program.unlink()  # (the executors read the program's text from the plan)
    results = []
    finished = run(spark, engine, sources, results.append, mode="distributed", max_lines_per_trigger=120,
                   progress=False, plan=plan).wait()
    assert [result.to_json() for result in results] == want
    assert len({json.dumps(line["bindings"]) for line in want}) > 5, "the hot sensors change"
    assert "keys" in finished.driver.timings and finished.driver.state.sliced


def test_a_run_that_fails_mid_batch_restarts_from_its_checkpoint_losing_and_doubling_nothing(spark, tmp_path):
    """The key split's state is distributed mode's (the driver's state, the carry as a Parquet file with its
    lanes): a run whose third batch fails after writing its results, before its state is saved, is started
    again on the same checkpoint; Spark runs that batch again, the file is cut back to where the last saved
    batch ended, and the output is the uninterrupted run's. (`tests/test_spark_checkpoint.py` kills a whole
    process with SIGKILL, on the time slices, which keep the same state.)"""
    from rsp_plugin.spark import run
    from rsp_plugin.spark.sinks import JSONLinesSink

    a = readings(tmp_path / "a.tnt", offset=0, seed=1)
    b = readings(tmp_path / "b.tnt", offset=25, seed=2, late=4)
    query = tmp_path / "q.rq"
    query.write_text(QUERIES["aggregate"])
    want = local([query, "--stream", f"{EX}a={a}", "--stream", f"{EX}b={b}"])

    class Failing(JSONLinesSink):
        def write(self, batch_id: int, results: list) -> None:
            super().write(batch_id, results)
            if batch_id == 2 and results:
                raise RuntimeError("the driver fails after writing batch 2's results")

    sources = {f"{EX}a": str(a), f"{EX}b": str(b)}
    out, checkpoint = tmp_path / "out.jsonl", tmp_path / "chk"
    with pytest.raises(Exception, match="fails after writing"):
        run(spark, str(query), sources, Failing(out), mode="distributed", checkpoint=checkpoint,
            max_lines_per_trigger=60, progress=False).wait()
    written = out.read_text().splitlines()
    assert 0 < len(written) < len(want)
    finished = run(spark, str(query), sources, JSONLinesSink(out), mode="distributed", checkpoint=checkpoint,
                   max_lines_per_trigger=60, progress=False).wait()
    assert [json.loads(line) for line in out.read_text().splitlines()] == want
    assert finished.driver.resumed and "keys" in finished.driver.timings


def test_the_bench_merged_workload_deals_the_stream_to_two_sources_in_time_order(tmp_path):
    from rsp_plugin.bench.spark_modes import STREAM, STREAM_B, sources_of, write_observations

    stream = tmp_path / "s.tnt"
    write_observations(stream, 3_000)
    sources = sources_of("merged", str(stream), tmp_path)
    assert list(sources) == [STREAM, STREAM_B]
    halves = [Path(path).read_text().splitlines() for path in sources.values()]
    assert sorted(halves[0] + halves[1]) == sorted(stream.read_text().splitlines())
    for half in halves:
        stamps = [int(line.split(" ", 1)[0]) for line in half]
        assert stamps == sorted(stamps) and len(half) == 1_500
    assert sources_of("window", str(stream), tmp_path) == {STREAM: str(stream)}
