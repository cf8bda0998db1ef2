"""`rsp-plugin query --engine spark` gives what `--engine local` gives, on every shared query case.

The shared cases are the queries under queries/ (each names its streams and
graphs in its header, as queries/README.md shows), the CSRBench stream (the full 34 s
one beside the repository when it is there), and the command-line cases of
tests/test_query_cli.py. Both engines run in this process; Spark's session is
shared by the whole test run (local[2]).
"""

from __future__ import annotations

import contextlib
import io
import json
import re
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parent.parent
QUERIES = ROOT / "queries"
CSRBENCH_6S = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
CSRBENCH_FULL = ROOT.parent / "shared" / "csrbench" / "stream.tnt"


def run(*args, cwd=None) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), _cwd(cwd):
        status = main([str(a) for a in args])
    return status, out.getvalue(), err.getvalue()


@contextlib.contextmanager
def _cwd(path):
    if path is None:
        yield
        return
    import os

    before = os.getcwd()
    os.chdir(path)
    try:
        yield
    finally:
        os.chdir(before)


def both(*args, batch_lines=200, cwd=None):
    """(local stdout, spark stdout, spark stderr), after checking both exit 0."""
    status, local, local_err = run("query", *args, "--engine", "local", cwd=cwd)
    assert status == 0, local_err
    status, spark_out, spark_err = run("query", *args, "--engine", "spark", "--batch-lines", batch_lines, cwd=cwd)
    assert status == 0, spark_err
    return local, spark_out, spark_err


def header_arguments(query: Path) -> list[str]:
    """The --stream / --background arguments of the run command in a query's header comment."""
    header = "\n".join(line.lstrip("#").strip() for line in query.read_text().splitlines() if line.startswith("#"))
    arguments = re.findall(r"--(stream|background)\s+(\S+)", header)
    return [item for name, value in arguments for item in (f"--{name}", value)]


SHARED = sorted(p for p in QUERIES.rglob("*.rq") if header_arguments(p))


def test_the_shared_cases_are_found():
    assert len(SHARED) >= 5


@pytest.mark.parametrize("query", SHARED, ids=lambda p: str(p.relative_to(QUERIES)))
def test_every_shared_query_gives_the_local_results(spark, query):
    local, spark_out, _ = both(query, *header_arguments(query), cwd=ROOT)
    assert spark_out == local
    assert local.strip(), "the case reports something"


@pytest.mark.parametrize("name", ["air-temperature-sensors", "max-temperature", "observations-rdfs"])
def test_the_csrbench_queries_over_the_whole_csrbench_stream(spark, name):
    stream = CSRBENCH_FULL if CSRBENCH_FULL.is_file() else CSRBENCH_6S
    query = QUERIES / "csrbench" / f"{name}.rq"
    batch_lines = 2500 if stream == CSRBENCH_FULL else 400  # several micro-batches either way
    local, spark_out, err = both(query, "--stream", f"http://ex.org/csrbench={stream}", batch_lines=batch_lines, cwd=ROOT)
    assert spark_out == local
    assert len(local.splitlines()) >= 5
    assert err.count("rsp-plugin: batch ") >= 2, "several micro-batches"


def test_construct_ask_and_sparql_json(spark, tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text("500 <http://ex/a> <http://ex/p> <http://ex/b> .\n"
                      '1700 <http://ex/b> <http://ex/p> "x"@en .\n')
    construct = tmp_path / "c.rq"
    construct.write_text("CONSTRUCT { ?o <http://ex/back> ?s } FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                         "WHERE { ?s <http://ex/p> ?o FILTER(isIRI(?o)) }")
    ask = tmp_path / "a.rq"
    ask.write_text("ASK FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?s <http://ex/p> ?o FILTER(isIRI(?o)) }")
    local, spark_out, _ = both(construct, "--stream", f"http://ex/s={stream}")
    assert spark_out == local
    assert spark_out.splitlines()[0] == '{"t": 1000, "triples": ["<http://ex/b> <http://ex/back> <http://ex/a> ."]}'
    local, spark_out, _ = both(ask, "--stream", f"http://ex/s={stream}", "--format", "sparql-jsonl")
    assert spark_out == local
    assert [json.loads(line)["boolean"] for line in spark_out.splitlines()] == [True, False]


def test_bad_and_late_lines_are_set_aside_and_counted_as_locally(spark, tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text(
        "0 <http://ex/a> <http://ex/p> <http://ex/o> .\n"
        "500 <http://ex/b> <http://ex/p> .\n"
        "1500 <http://ex/c> <http://ex/p> <http://ex/o> .\n"
        "1200 <http://ex/d> <http://ex/p> <http://ex/o> .\n"
        "noon <http://ex/e> <http://ex/p> <http://ex/o> .\n"
        "2500 <http://ex/f> <http://ex/p> <http://ex/o> .\n"
        "900 <http://ex/g> <http://ex/p> <http://ex/o> .\n")
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x <http://ex/p> ?o }")
    local, spark_out, err = both(query, "--stream", f"http://ex/s={stream}", batch_lines=2)
    assert spark_out == local
    lines = err.splitlines()
    assert f"{stream}:2: not an N-Triples triple after the timestamp: expected <s> <p> <o> ." in lines
    assert any(line.startswith(f"{stream}:5: not a timestamp: 'noon'") for line in lines)
    assert any("late: timestamp 900 is older than every window still to be reported" in line for line in lines)
    assert lines[-1] == "rsp-plugin: 3 stream lines set aside (see above)"


def test_timestamped_graphs_and_documents_of_one_moment(spark, tmp_path):
    trig = tmp_path / "s.trig"
    trig.write_text("""@prefix ex: <http://ex/> .
@prefix prov: <http://www.w3.org/ns/prov#> .
ex:g1 { ex:a ex:p ex:o . ex:b ex:p ex:o . }
ex:g1 prov:generatedAtTime "1970-01-01T00:00:00.500Z"^^<http://www.w3.org/2001/XMLSchema#dateTime> .
ex:g2 { ex:c ex:p }
ex:g3 { ex:d ex:p ex:o }
ex:g3 prov:generatedAtTime "1500" .
""")
    nquads = tmp_path / "s.nq"
    nquads.write_text("<http://ex/f> <http://ex/p> <http://ex/o> <http://ex/g5> .\n"
                      "<http://ex/g5> <http://www.w3.org/ns/prov#generatedAtTime> \"700\" .\n")
    plain = tmp_path / "a.nt"
    plain.write_text("<http://ex/h> <http://ex/p> <http://ex/o> .\n")
    turtle = tmp_path / "b.ttl"
    turtle.write_text("@prefix ex: <http://ex/> . ex:i ex:p ex:o .\n")
    query = tmp_path / "q.rq"
    query.write_text("SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM STREAM <http://ex/t> [RANGE 2s STEP 1s] "
                     "WHERE { ?x <http://ex/p> ?o }")
    local, spark_out, err = both(query, "--stream", f"http://ex/s={trig}", "--stream", f"http://ex/t={nquads}",
                                 "--stream", f"http://ex/t={plain}", "--stream", f"http://ex/s={turtle}@2500")
    assert spark_out == local
    assert "not TriG" in err


@pytest.mark.parametrize("mode", ["driver", "distributed"])
def test_numbers_print_as_locally_on_sparks_paths(spark, tmp_path, mode):
    """Computed numbers in their canonical form, read ones as written: the same lines as the local
    engine's (tests/test_numbers_across_paths.py holds the local paths to each other)."""
    from test_numbers_across_paths import LINES, QUERIES

    (tmp_path / "s.tnt").write_text("\n".join(LINES) + "\n")
    for name in ("aggregates",) if mode == "driver" else ("aggregates", "arithmetic"):  # (driver: the local code)
        (tmp_path / f"{name}.rq").write_text(QUERIES[name])
        args = ["query", tmp_path / f"{name}.rq", "--stream", f"http://ex/s={tmp_path / 's.tnt'}", "--prefixes",
                "--time", "iso"]
        status, local, err = run(*args, "-q")
        assert status == 0, err
        status, spark_out, err = run(*args, "--engine", "spark", "--mode", mode, "--batch-lines", 40)
        assert status == 0, err
        assert spark_out == local and local.strip(), (name, err)
        if mode == "distributed" and name == "aggregates":
            assert "not distributed yet" not in err, err  # (the executors' aggregates, not the driver's)


def test_sparks_own_log_is_errors_only_unless_asked(spark, tmp_path):
    """Spark's WARN lines do not fill stderr (its level is ERROR from the JVM's start: the subprocess runs
    of test_spark_checkpoint.py check their stderr has none); --spark-log-level raises it."""
    root = spark.sparkContext._jvm.org.apache.logging.log4j.LogManager.getRootLogger()
    args = ["query", ROOT / "queries" / "csrbench" / "max-temperature.rq", "--stream",
            f"http://ex.org/csrbench={CSRBENCH_6S}", "--engine", "spark", "-q"]
    try:
        status, out, err = run(*args, "--spark-log-level", "warn")
        assert status == 0 and out, err
        assert str(root.getLevel()) == "WARN"
    finally:
        assert run(*args)[0] == 0
    assert str(root.getLevel()) == "ERROR"
