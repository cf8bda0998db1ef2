"""RULES in distributed queries: the time slices run a query's LARS program (`spark.distributed.plan`, `slices`).

- a window's depth under RULES is (L + 1) ticks, L the reach of the program its view runs
  (`rule_split.time_reach`); a program whose reach is unbounded keeps the query on the driver, said in
  one line (the CLI runs it in driver mode, same output);
- in-process: for generated programs over triples, an engine fed the stream from C = `needed_from(k)` on,
  its RULES timeline started at C, answers instant k as the whole run does, after a gap in the stream too;
  started at its first triple instead, a BOX after a gap is clipped where the whole run's is not;
- end to end on `local[2]`: the `bench spark` lars workload, generated programs, a stream with a gap
  before a batch and a batch out of time order (the driver's engine takes it, the slices the rest) give
  `--engine local`'s output, the program file gone before the run starts; a restart with another program
  is refused in one line.

`tests/test_spark_cluster.py` runs the lars workload on `local-cluster` too.
"""

from __future__ import annotations

import contextlib
import io
import re
from pathlib import Path

import numpy as np
import pytest
from reason_split_cases import SliceableGenerator

from rsp_plugin.runtime.engine import RSPEngine

pytestmark = pytest.mark.spark

STREAM = "http://ex/s"
EX = "http://ex/"
INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"


def _engine(text: str, filename: str = "<query>") -> RSPEngine:
    engine = RSPEngine()
    engine.register_stream(STREAM)
    engine.register_query(text, filename=filename)
    return engine


def _local(text: str, stream: Path, delay: int = 0) -> list[dict]:
    """The local engine's output; with `delay`, its watermark that far behind the latest element, as the
    driver-side mode feeds it (`columnar.replay.feed`)."""
    from rsp_plugin.columnar.encode import encode
    from rsp_plugin.columnar.replay import feed, replay_file

    engine = _engine(text)
    results = []
    engine.subscribe(results.append)
    if delay:
        times, s, p, o = _lines(stream)
        feed(engine, [STREAM], np.zeros(len(times), np.int64), times,
             *(encode(column, engine.terms) for column in (s, p, o)), delay=delay)
    else:
        replay_file(engine, STREAM, stream)
    engine.finish()
    return [result.to_json() for result in results]


def _query(program: Path, window: str = "[RANGE 3s STEP 1s]", where: str = "?s ?p ?o") -> str:
    # (its variables named: `SELECT *` lists them in an order of Python's hash seed, another per process)
    variables = " ".join(dict.fromkeys(re.findall(r"\?\w+", where)))
    return f"SELECT {variables} FROM STREAM <{STREAM}> {window} RULES <{program.as_uri()}> WHERE {{ {where} }}"


def _lines(path: Path):
    rows = [line.split(" ", 1) for line in path.read_text().splitlines()]
    terms = [rest.rstrip(" .").split(" ", 2) for _, rest in rows]
    return (np.array([int(stamp) for stamp, _ in rows], dtype=np.int64),
            *([t[k] for t in terms] for k in range(3)))


# generated programs over triples ------------------------------------------------------------------------------


def triples_program(seed: int, **options) -> tuple[SliceableGenerator, str]:
    """A `SliceableGenerator` program read over triples: each data atom d(x, y) a triple `x ex:d y` of the
    window (`ex:none` in an empty place), each derived atom written back as a triple the query sees."""
    generator = SliceableGenerator(seed, **options)
    body = re.sub(r"(?<![\w?])(a|b|c)(?![\w(])", lambda m: f"ex:{m.group(1)}", generator.program())
    lines = ["@prefix ex: <http://ex/> ."]
    for name, arity in generator.data.items():
        lines.append("val(X, N) :- X ex:val N ." if name == "val" else
                     [f"{name} :- ex:none ex:{name} ex:none .", f"{name}(X) :- X ex:{name} ex:none .",
                      f"{name}(X, Y) :- X ex:{name} Y ."][arity])
    for layer in generator.layers:
        for name, arity in layer.items():
            lines.append([f"ex:none ex:{name} ex:none :- {name} .", f"X ex:{name} ex:none :- {name}(X) .",
                          f"X ex:{name} Y :- {name}(X, Y) ."][arity])
    return generator, "\n".join(lines) + "\n" + body


def triples_stream(generator: SliceableGenerator, length: int, gap_after: int, gap: int) -> str:
    """The generator's stream as timestamped triples, a time point a second (spread within it), and `gap` ms
    of nothing after point `gap_after`."""
    out = []
    for point, atoms in sorted(generator.stream(length).items()):
        ms = point * 1000 + (gap if point > gap_after else 0)
        for k, atom in enumerate(atoms):
            name, args = re.fullmatch(r"(\w+)(?:\((.*)\))?", atom).groups()
            args = args.split(",") if args else []
            subject = f"<{EX}{args[0]}>" if args else f"<{EX}none>"
            value = (f'"{args[1]}"^^{INTEGER}' if name == "val" else f"<{EX}{args[1]}>") if len(args) > 1 \
                else f"<{EX}none>"
            out.append((ms + 37 * k % 1000, f"{subject} <{EX}{name}> {value} ."))
    out.sort(key=lambda item: item[0])
    return "".join(f"{ms} {text}\n" for ms, text in out)


def _generated(tmp_path: Path, seed: int) -> tuple[str, Path] | None:
    """A generated case whose program distributes: (query text, stream); None when it stays on the driver."""
    from rsp_plugin.spark.distributed import NotDistributed, plan_of

    generator, program = triples_program(seed, box_bias=0.5)
    (tmp_path / f"g{seed}.lars").write_text(program)
    stream = tmp_path / f"g{seed}.tnt"
    stream.write_text(triples_stream(generator, 40, gap_after=15, gap=20_000))
    text = _query(tmp_path / f"g{seed}.lars")
    try:
        plan_of(_engine(text))
    except NotDistributed:
        return None
    return text, stream


# the analysis -----------------------------------------------------------------------------------------------

HOT = f"""@prefix ex: <{EX}> .
ex:hot(?s) :- ?s ex:lastValue ?v, ?v > 90 .
?s a ex:Hot :- [RANGE 2] DIAMOND ex:hot(?s) .
"""


@pytest.mark.parametrize("program,window,depth", [
    (HOT, "[RANGE 1s STEP 1s]", 3000),  # ticks of one STEP: L = 0 (the window) + 2
    (HOT, "[RANGE 4s STEP 2s]", 8000),  # L = 1 + 2, ticks of 2 s
    (f"@tick 500ms .\n{HOT}", "[RANGE 2s STEP 1s]", 3000),  # L = 3 + 2 ticks of 500 ms
    (f"@prefix ex: <{EX}> .\n?s a ex:Hot :- ?s ex:lastValue ?v, ?v > 90 .\n", "[RANGE 4s STEP 2s]", 4000),
])
def test_a_window_reads_back_its_range_and_the_programs_reach(tmp_path, program, window, depth):
    from rsp_plugin.spark.distributed import plan_of
    from rsp_plugin.spark.distributed.slices import reach

    (tmp_path / "p.lars").write_text(program)
    plan = plan_of(_engine(_query(tmp_path / "p.lars", window)))
    assert plan.depths == [depth] and reach(plan) == depth and plan.rules == program


@pytest.mark.parametrize("program,why", [
    ("q(X) :- @T p(X) .", ("a RULES program whose rule q(X) :- @T p(X) . at {file}:3 reads the whole past "
                           "(@T without a window)")),
    ("p(X) :- [RANGE 2] DIAMOND p(X) .", ("a RULES program whose rule p(X) :- [RANGE 2] DIAMOND p(X) . at "
                                          "{file}:3 reaches back through a recursion over windows (its window "
                                          "feeds p back)")),
])
def test_a_program_without_a_bounded_reach_stays_on_the_driver_and_says_why(tmp_path, program, why):
    from rsp_plugin.spark.distributed import NotDistributed, plan_of

    path = tmp_path / "p.lars"
    path.write_text(f"@prefix ex: <{EX}> .\np(X) :- X ex:v ex:on .\n{program}\n")
    with pytest.raises(NotDistributed) as refused:
        plan_of(_engine(_query(path)))
    assert str(refused.value) == why.format(file=path)


def test_several_sources_keep_a_rules_query_on_the_driver(tmp_path):
    from rsp_plugin.spark.distributed import NotDistributed, plan_of

    (tmp_path / "p.lars").write_text(HOT)
    with pytest.raises(NotDistributed, match="a RULES program over several sources"):
        plan_of(_engine(_query(tmp_path / "p.lars")), lanes=2)


# the claim, in-process ----------------------------------------------------------------------------------------


def _answer(text: str, tau: int, payload: str) -> dict:
    from rsp_plugin.query.results import QueryResult
    from rsp_plugin.spark.distributed.slices import payload_answer

    engine = _engine(text)
    shown = QueryResult("q", tau, payload_answer(payload, engine.terms), engine.terms).to_json()
    shown.pop("name", None)
    return shown


@pytest.mark.parametrize("seed", [1, 2, 5, 9])
def test_an_engine_fed_from_where_a_report_reads_answers_it_as_the_whole_run(tmp_path, seed):
    """Each report k of a generated program over a stream with a 20 s gap, from an engine fed the elements
    from C = needed_from(k) on, its timeline started at C: the whole run's answer (every 4th instant)."""
    import pyarrow as pa

    from rsp_plugin.spark.distributed import plan_of
    from rsp_plugin.spark.distributed.slices import answers_over, needed_from

    case = _generated(tmp_path, seed)
    assert case is not None
    text, stream = case
    plan = plan_of(_engine(text))
    want = {line["t"]: line for line in _local(text, stream)}
    times, s, p, o = _lines(stream)
    checked = 0
    for tau in sorted(want)[::4]:
        k = plan.grid.last_at_or_before(tau)
        start = needed_from(plan, k)
        rows = np.flatnonzero(times >= start)
        if len(rows) == len(times) or not len(rows):
            continue
        found = answers_over(plan, "", STREAM, times[rows], *(pa.array([column[i] for i in rows]) for column in (s, p, o)),
                             tau, lambda j, k=k: j == k, start=start, after=start)
        expected = dict(want[tau])
        expected.pop("name", None)
        assert _answer(text, tau, found[k]) == expected, tau
        checked += 1
    assert checked >= 8


def _box_case(tmp_path: Path) -> tuple[str, Path]:
    """?x is Steady when its state is on at three ticks in a row; on every 200 ms up to 5 s, once at 9.8 s
    (after 4.8 s of nothing), then again from 10 s to 20 s."""
    (tmp_path / "box.lars").write_text(f"@prefix ex: <{EX}> .\n?s a ex:Steady :- [RANGE 2] BOX ?s ex:state ex:on .\n")
    stamps = [*range(0, 5001, 200), 9800, *range(10_000, 20_001, 200)]
    stream = tmp_path / "box.tnt"
    stream.write_text("".join(f"{ms} <{EX}x> <{EX}state> <{EX}on> .\n" for ms in stamps))
    return _query(tmp_path / "box.lars", "[RANGE 1s STEP 1s]", "?s a ?c"), stream


def test_after_a_gap_the_timeline_starts_where_the_elements_are_complete_not_at_the_first_one(tmp_path):
    """The report at 10 s reads ticks 8..10: the whole run saw none at 8 and 9 (the gap), so x is not
    Steady. An engine fed from C = 7 s on, started at its first element (9.8 s, tick 10), clips the BOX
    there and finds x Steady; started at C, it does not."""
    import pyarrow as pa

    from rsp_plugin.spark.distributed import plan_of
    from rsp_plugin.spark.distributed.slices import answers_over, needed_from

    text, stream = _box_case(tmp_path)
    plan = plan_of(_engine(text))
    want = {line["t"]: line for line in _local(text, stream)}
    assert want[10_000]["bindings"] == [] and want[13_000]["bindings"]
    k = plan.grid.last_at_or_before(10_000)
    start = needed_from(plan, k)
    assert start == 7_000
    times, s, p, o = _lines(stream)
    rows = np.flatnonzero(times >= start)
    columns = [pa.array([column[i] for i in rows]) for column in (s, p, o)]

    def answer(**given) -> list:
        found = answers_over(plan, "", STREAM, times[rows], *columns, 10_000, lambda j: j == k, **given)
        return _answer(text, 10_000, found[k])["bindings"]

    assert answer(start=start, after=start) == []
    assert answer() == [{"s": f"<{EX}x>", "c": f"<{EX}Steady>"}]


# end to end on local[2] ------------------------------------------------------------------------------------------


def _run(spark, engine: RSPEngine, stream: Path, lines: int, partitions: int = 2, rows: bool = False, **options):
    """A distributed run over the file: its pieces parsed by the slices (each looks back at the lines before
    it), or with `rows` the source's rows (each partition's head is an edge the driver's engine answers)."""
    from rsp_plugin.spark import run

    source = str(stream)
    if rows:
        source = (spark.readStream.format("rdf").option("stream", STREAM).option("numPartitions", partitions)
                  .option("maxLinesPerTrigger", lines).load(source))
    results = []
    finished = run(spark, engine, {STREAM: source}, results.append, mode="distributed",
                   max_lines_per_trigger=lines, options={"numPartitions": partitions}, progress=False,
                   **options).wait()
    return [result.to_json() for result in results], finished.driver


def test_the_bench_lars_workload_runs_on_the_slices_without_the_program_file(spark, tmp_path):
    from rsp_plugin.bench.spark import EX as BENCH
    from rsp_plugin.bench.spark_modes import QUERIES, RULES, write_observations

    program, stream = tmp_path / "rules.lars", tmp_path / "obs.tnt"
    program.write_text(RULES)
    write_observations(stream, 45_000)  # 4.5 s of event time
    text = QUERIES["lars"].format(ex=BENCH, stream=STREAM, rules=program, ontology="")
    want = _local(text, stream)
    engine = _engine(text)
    program.unlink()  # (the executors and the driver's engines have the plan's text)
    got, driver = _run(spark, engine, stream, 22_500, 2)
    assert got == want and len(got) >= 5 and any(line["bindings"] for line in got)
    assert driver.state.sliced and "slices" in driver.timings and "driver" not in driver.timings


def test_generated_programs_over_batches_with_a_gap(spark, tmp_path):
    for seed in (2, 8):
        case = _generated(tmp_path, seed)
        assert case is not None
        text, stream = case
        got, driver = _run(spark, _engine(text), stream, 60, 2)
        assert got == _local(text, stream), seed
        assert driver.state.sliced and "driver" not in driver.timings


def test_a_gap_before_a_batch_and_a_batch_out_of_time_order(spark, tmp_path):
    """The BOX case in batches that end at the element after the gap (the next batch's first report reads
    the gap, answered by a piece that looks back, or from the rows by the driver's engine over the carry);
    then two windows of one stream (STEPs 1 s and 2 s, reported every second), the watermark 0.5 s behind
    the latest element, and a line 0.9 s late in the second batch: it comes at 13.4 s, the watermark at
    12.9 s, the last report at 12 s, so the 1 s window still takes it (its boundary 12 s), into the reports of
    13 s and 14 s. That batch goes through the driver's engine, the line given once its watermark is at 12 s,
    as the local engine got it (given when the engine's watermark is at the latest element, 13.4 s, the 1 s
    window would have left it out); the next batch is back on the slices."""
    text, stream = _box_case(tmp_path)
    for rows in (False, True):
        got, driver = _run(spark, _engine(text), stream, 27, 2, rows=rows)
        assert got == _local(text, stream) and "driver" not in driver.timings, rows
    two = (f"REGISTER RSTREAM <{EX}q> COMPUTE EVERY PT1S AS SELECT ?s ?p ?o "
           f"FROM NAMED WINDOW <{EX}w1> ON <{STREAM}> [RANGE PT2S STEP PT1S] "
           f"FROM NAMED WINDOW <{EX}w2> ON <{STREAM}> [RANGE PT4S STEP PT2S] "
           f"RULES <{(tmp_path / 'box.lars').as_uri()}> WHERE {{ WINDOW <{EX}w1> {{ ?s ?p ?o }} }}")
    lines = stream.read_text().splitlines()
    lines.insert(lines.index(f"13400 <{EX}x> <{EX}state> <{EX}on> .") + 1, f"12500 <{EX}y> <{EX}state> <{EX}on> .")
    stream.write_text("\n".join(lines) + "\n")
    want = _local(two, stream, delay=500)
    assert [line["t"] for line in want if "/y>" in str(line)] == [13_000, 14_000]
    got, driver = _run(spark, _engine(two), stream, 27, 2, delay_ms=500)
    assert got == want
    assert driver.state.sliced and "driver" in driver.timings and "slices" in driver.timings


def test_a_restart_with_another_program_is_refused_in_one_line(spark, tmp_path):
    from rsp_plugin.runtime.state import StateError

    text, stream = _box_case(tmp_path)
    checkpoint = tmp_path / "chk"
    got, _ = _run(spark, _engine(text), stream, 200, 1, checkpoint=str(checkpoint))
    assert got == _local(text, stream)
    (tmp_path / "box.lars").write_text(f"@prefix ex: <{EX}> .\n?s a ex:Steady :- [RANGE 1] BOX ?s ex:state ex:on .\n")
    with pytest.raises(StateError) as refused:
        _run(spark, _engine(text), stream, 200, 1, checkpoint=str(checkpoint))
    assert "the checkpoint is of another query or other sources" in str(refused.value)
    assert "\n" not in str(refused.value)


def test_the_command_line_says_why_a_program_stays_on_the_driver(spark, tmp_path):
    from rsp_plugin.cli.command_line import main

    (tmp_path / "p.lars").write_text(f"@prefix ex: <{EX}> .\n?s a ex:Seen :- @T ?s ex:state ex:on .\n")
    (tmp_path / "q.rq").write_text(_query(tmp_path / "p.lars", "[RANGE 1s STEP 1s]", "?s a ?c"))
    _, stream = _box_case(tmp_path)
    runs = {}
    for engine in (["--engine", "local"], ["--engine", "spark", "--mode", "distributed", "--master", "local[2]"]):
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            status = main(["query", str(tmp_path / "q.rq"), "--stream", f"{STREAM}={stream}", *engine, "--quiet"])
        assert status == 0, err.getvalue()
        runs[engine[1]] = out.getvalue(), err.getvalue()
    assert runs["spark"][0] == runs["local"][0] and runs["local"][0].strip()
    said = [line for line in runs["spark"][1].splitlines() if "not distributed yet" in line]
    assert said == [(f"rsp-plugin: --mode distributed: a RULES program whose rule ?s a ex:Seen :- @T ?s ex:state "
                     f"ex:on . at {tmp_path / 'p.lars'}:2 reads the whole past (@T without a window) is not "
                     "distributed yet; the query runs in --mode driver")]
