"""Time jumps: a timestamp too far ahead is set aside (located, counted) and the stream goes on; empty
stretches cost nothing where the output contract lets them be skipped.

Issue 9: "a `.tnt` in ms with one ISO date line (2004-08-08T06:05:00Z) makes `query`
walk ~218 million empty windows; `reason` with `1 a(x)` then `100000000000 a(y)`
prints time points for ever".
"""

from __future__ import annotations

import contextlib
import io
import json
import random
import time

import pyarrow as pa
import pytest
from rdflib import URIRef

from rsp_plugin import ReportPolicy, RSPEngine
from rsp_plugin.cli.command_line import main

EX = "http://ex.org/"


def run(*args) -> tuple[int, list[dict], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue().splitlines()


@pytest.fixture
def iso_stream(tmp_path):
    stream = tmp_path / "s.tnt"
    stream.write_text(f'1000 <{EX}a> <{EX}p> "1" .\n'
                      f'2004-08-08T06:05:00Z <{EX}a> <{EX}p> "2" .\n'
                      f'3000 <{EX}b> <{EX}p> "3" .\n')
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s ?o FROM STREAM <{EX}s> [RANGE 10s STEP 5s] WHERE {{ ?s <{EX}p> ?o }}\n")
    return stream, query


def test_reason_sets_a_far_off_line_aside_and_finishes(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("b(X) :- a(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 a(x)\n100000000000 a(y)\n3 a(z)\n")
    started = time.monotonic()
    status, lines, err = run("reason", program, "--stream", stream)
    assert time.monotonic() - started < 10
    assert status == 0 and lines == [{"t": 1, "atoms": ["b(x)"]}, {"t": 2, "atoms": []}, {"t": 3, "atoms": ["b(z)"]}]
    assert err == [f"{stream}:2: timestamp 100000000000 is 99999999999 time points ahead of the stream "
                   "(max gap 100000; --max-gap); set aside", "rsp-plugin: 1 stream line set aside (see above)"]


def test_reasons_max_gap_is_an_option(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("b(X) :- a(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 a(x)\n20 a(y)\n")
    status, lines, err = run("reason", program, "--stream", stream, "--max-gap", "10")
    assert [line["t"] for line in lines] == [1] and "is 19 time points ahead of the stream (max gap 10" in err[0]
    status, lines, err = run("reason", program, "--stream", stream, "--max-gap", "none")
    assert [line["t"] for line in lines] == list(range(1, 21)) and not err
    status, lines, err = run("reason", program, "--stream", stream, "--from", "0", "--max-gap", "10")
    assert status == 0 and "20" in err[0] and "max gap 10" in err[0]  # measured from --from before any line


def test_query_sets_the_iso_date_line_aside_and_goes_on(iso_stream):
    stream, query = iso_stream
    started = time.monotonic()
    status, results, err = run("query", query, "--stream", f"{EX}s={stream}")
    assert time.monotonic() - started < 10
    assert status == 0
    assert err[0] == (f"{stream}:2: timestamp 1091945100000 is 1091945099000 ms ahead of the stream "
                      "(max gap 100000 windows of 5000 ms = 500000000 ms; --max-gap); set aside")
    assert [(r["t"], sorted(b["o"] for b in r["bindings"])) for r in results] == [
        (5000, ['"1"', '"3"']), (10000, ['"1"', '"3"'])]


def test_a_far_first_line_does_not_drag_the_timeline_back(tmp_path, iso_stream):
    _, query = iso_stream
    stream = tmp_path / "first.tnt"
    stream.write_text(f'2004-08-08T06:05:00Z <{EX}a> <{EX}p> "2" .\n'
                      f'1000 <{EX}a> <{EX}p> "1" .\n3000 <{EX}b> <{EX}p> "3" .\n')
    started = time.monotonic()
    status, results, err = run("query", query, "--stream", f"{EX}s={stream}")
    assert time.monotonic() - started < 10
    assert status == 0 and [r["t"] for r in results] == [1091945105000, 1091945110000]
    assert err[0] == (f"{stream}:2: timestamp 1000 is 1091945099000 ms behind the stream "
                      "(max gap 100000 windows of 5000 ms = 500000000 ms; --max-gap); set aside")


def test_empty_windows_cost_nothing_when_only_non_empty_ones_are_reported(iso_stream):
    stream, query = iso_stream
    started = time.monotonic()
    status, results, err = run("query", query, "--stream", f"{EX}s={stream}", "--max-gap", "none",
                               "--report", "non-empty-content")
    assert time.monotonic() - started < 10, "218 million empty windows were walked"
    assert [r["t"] for r in results] == [5000, 10000, 1091945105000, 1091945110000]
    assert "late: timestamp 3000" in err[0]  # what the jump costs: the stream's time moved on


def test_the_engines_max_gap_is_an_option():
    engine = RSPEngine(max_gap=3)
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 2s STEP 1s] WHERE {{ ?s ?p ?o }}")
    triple = (URIRef(f"{EX}a"), URIRef(f"{EX}p"), URIRef(f"{EX}o"))
    engine.push(f"{EX}s", [triple], timestamp=1000)
    engine.push(f"{EX}s", [triple], timestamp=4000)
    engine.push(f"{EX}s", [triple], timestamp=9000)
    assert [str(r) for r in engine.rejected] == [
        f"{EX}s:3: timestamp 9000 is 5000 ms ahead of the stream (max gap 3 windows of 1000 ms = 3000 ms; --max-gap); "
        "set aside"]
    assert engine.gap_problem(7001) is not None and engine.gap_problem(7000) is None
    assert RSPEngine(max_gap=None).gap_problem(10**15) is None


@pytest.mark.parametrize("seed", range(60))
def test_skipping_empty_windows_changes_no_result(seed):
    """Non-empty-content reports are the on-window-close reports with content, skipped stretches or not."""
    draw = random.Random(seed)
    steps = draw.choice([(2000, 1000), (1000, 1000), (3000, 2000), (1000, 3000)])
    every = draw.choice(["", "COMPUTE EVERY 2s "])
    text = (f"REGISTER QUERY q {every}AS SELECT ?s ?p ?o FROM STREAM <{EX}s> [RANGE {steps[0]}ms STEP {steps[1]}ms] "
            "WHERE { ?s ?p ?o }")
    runs = []
    for policy in (ReportPolicy.ON_WINDOW_CLOSE, ReportPolicy.NON_EMPTY_CONTENT):
        engine = RSPEngine(max_gap=None)
        engine.register_stream(f"{EX}s")
        engine.register_query(text, report=policy)
        results = []
        order = random.Random(seed)
        stamp = 0
        for _ in range(order.randrange(5, 30)):
            stamp += order.choice([0, 300, 1000, 7000, 40_000])
            shown = max(0, stamp - order.choice([0, 0, 0, 1500, 9000]))  # now and then late
            engine.push(f"{EX}s", [(URIRef(f"{EX}e{shown}"), URIRef(f"{EX}p"), URIRef(f"{EX}o"))], timestamp=shown)
            if order.random() < 0.5:
                results.extend(engine.advance_to(stamp + order.choice([0, 500, 20_000])))
        results.extend(engine.finish())
        runs.append([(r.t, sorted(map(str, (row["s"] for row in r.bindings)))) for r in results])
        runs.append([str(r) for r in engine.rejected])
    on_close, close_rejected, non_empty, non_empty_rejected = runs
    assert non_empty == [(t, rows) for t, rows in on_close if rows]
    assert non_empty_rejected == close_rejected


def test_the_spark_driver_sets_a_far_timestamp_aside_without_walking():
    from rsp_plugin.spark.driver import MicroBatchDriver
    from rsp_plugin.spark.sinks import CallbackSink, DeadLetters

    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 2s STEP 1s] WHERE {{ ?s ?p ?o }}")
    results, dead = [], io.StringIO()
    driver = MicroBatchDriver(engine, CallbackSink(results.append), streams=[f"{EX}s"],
                              dead_letters=DeadLetters(err=dead))
    stamps = [500, 1091945100000, 1500]
    table = pa.table({"stream": [f"{EX}s"] * 3, "s": [f"<{EX}a{k}>" for k in range(3)], "p": [f"<{EX}p>"] * 3,
                      "o": [f"<{EX}o>"] * 3, "ts": stamps, "rejected": [None] * 3})
    started = time.monotonic()
    driver.process(table, 0)
    driver.finish()
    assert time.monotonic() - started < 10
    assert [(r.t, [str(b["s"]) for b in r.bindings]) for r in results] == [
        (1000, [f"{EX}a0"]), (2000, [f"{EX}a0", f"{EX}a2"]), (3000, [f"{EX}a2"])]
    assert driver.state.set_aside == 1 and "1091945100000 is" in dead.getvalue()
