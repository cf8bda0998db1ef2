"""`reason --engine spark --mode distributed`'s splits, checked without Spark (`rsp_plugin.spark.rule_split`).

Each claim of rule_split's proof is checked by running the shares here
(`reason_split_cases.split_run`: pieces read by the executors' reader, rows
judged on the driver, one engine per key bucket or time slice, merged;
`sliced_run`: byte ranges of the file, one task each) and comparing stdout and
stderr with `--engine local`'s, byte for byte: on the bundled examples, the
Laser / Ticker-style benchmark programs (diamond, box, join, cooling), and
generated LARS and DatalogMTL programs, with slices as short as one time point
(the margin's hardest case). Also: what the analysis says of programs that
split neither way, the refusals that come before Spark starts, and the driver
mode's checkpoint state as plain data.
"""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from lars_cases import ProgramGenerator as LarsGenerator
from mtl_cases import ProgramGenerator as MetricGenerator
from reason_split_cases import KeyedGenerator, SliceableGenerator, lars_stream, local, sliced_run, split_run

from rsp_plugin.bench.lars import WORKLOADS
from rsp_plugin.cli.command_line import main
from rsp_plugin.core.errors import RuleSyntaxError
from rsp_plugin.lars.syntax import parse_program, parse_program_file
from rsp_plugin.mtl import load_program
from rsp_plugin.spark.rule_split import KeyLocal, OnDriver, TimeSliced, split_of, time_reach

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"
BUNDLED = [("hightemp.lars", "hightemp.stream"), ("alarm.lars", "alarm.stream"),
           ("ticker-caching.lars", "ticker-caching.stream"), ("short-stop.mtl", "short-stop.txt")]


def benchmark(tmp_path: Path, name: str, window: int = 3, rate: int = 4, points: int = 30) -> tuple[Path, Path]:
    """A benchmark workload (`bench/lars.py`) as a program file and a `.stream` file."""
    workload = WORKLOADS[name]
    program = tmp_path / f"{name}.lars"
    program.write_text(workload.program(window))
    stream = tmp_path / f"{name}.stream"
    stream.write_text("".join(f"{t} {predicate}({','.join(args)})\n"
                              for t, atoms in enumerate(workload.stream(rate, points, 1)) for predicate, args in atoms))
    return program, stream


def parsed(program: Path):
    text = program.read_text()
    return load_program(text, str(program)).program if program.suffix == ".mtl" else parse_program(text, str(program))


def assert_shares_agree(program: Path, stream: Path, *extra: str, lengths=(None, 1, 3), tasks=(2, 3)) -> None:
    """Every split the program allows (its key, and time slices if its reach is bounded), run in shares,
    writes what `--engine local` writes."""
    status, want, want_err = local(program, stream, *extra)
    assert status == 0, want_err
    options = {"changes": "--changes" in extra}
    if "--from" in extra:
        options["first"] = int(extra[extra.index("--from") + 1])
    if "--to" in extra:
        options["last"] = int(extra[extra.index("--to") + 1])
    engine_program = parsed(program)
    split, reach = split_of(engine_program), time_reach(engine_program)
    assert not isinstance(split, OnDriver)
    if isinstance(split, KeyLocal):
        got, err, _ = split_run(program, stream, split=split, max_gap=None, **options)
        assert (got, err) == (want, want_err), f"{program} by key"
    if isinstance(reach, TimeSliced):
        for length in lengths:
            got, err, _ = split_run(program, stream, split=reach, length=length, max_gap=None, **options)
            assert (got, err) == (want, want_err), f"{program} in slices of {length}"
        if program.suffix == ".lars" and not want_err:
            for count in tasks:
                assert sliced_run(program, stream, tasks=count, max_gap=None, **options) == want, \
                    f"{program} in {count} byte ranges"


# which split, and why not ------------------------------------------------------------------------------------------

def test_the_bundled_and_benchmark_programs_split(tmp_path):
    kinds = {name: split_of(parsed(EXAMPLES / name)) for name, _ in BUNDLED}
    assert kinds["hightemp.lars"] == KeyLocal({key: 0 for key in kinds["hightemp.lars"].keys})
    assert isinstance(kinds["alarm.lars"], KeyLocal) and isinstance(kinds["short-stop.mtl"], KeyLocal)
    assert kinds["ticker-caching.lars"] == TimeSliced(4)  # (no arguments: no key; [RANGE 2] twice)
    reaches = {}
    for name in ("diamond", "box", "join", "cooling"):
        program = parse_program(WORKLOADS[name].program(20))
        reaches[name] = (type(split_of(program)).__name__, time_reach(program))
    assert reaches == {"diamond": ("KeyLocal", TimeSliced(20)), "box": ("KeyLocal", TimeSliced(20)),
                       "join": ("TimeSliced", TimeSliced(20)), "cooling": ("TimeSliced", TimeSliced(60))}


@pytest.mark.parametrize("text, reason", [
    ("r(X,Z) :- p(X,Y), @T q(Y,Z) .",
     "rule r(X,Z) :- p(X,Y), @T q(Y,Z) . at p.lars:1 joins p and q on different arguments, and reads the whole "
     "past (@T without a window)"),
    ("q(X) :- [COUNT 3] DIAMOND p(X) .",
     "rule q(X) :- [COUNT 3] DIAMOND p(X) . at p.lars:1 has a tuple window ([COUNT n] counts the last n atoms of "
     "every key, however far back)"),
    ("q(X,Z) :- p(X,Y), p(Y,Z) .\nq(X,Z) :- q(X,Y), [RANGE 2] DIAMOND q(Y,Z) .",
     "rule q(X,Z) :- p(X,Y), p(Y,Z) . at p.lars:1 joins p on different arguments, and rule q(X,Z) :- q(X,Y), "
     "[RANGE 2] DIAMOND q(Y,Z) . at p.lars:2 reaches back through a recursion over windows (its window feeds q "
     "back)"),
])
def test_a_program_that_splits_neither_way_says_why_in_one_line(text, reason):
    split = split_of(parse_program(text, "p.lars"))
    assert isinstance(split, OnDriver) and split.reason == reason and "\n" not in split.reason


@pytest.mark.parametrize("rules, verdict", [
    ("?s ex:p ?o :- [RANGE 2] DIAMOND ?s ex:q ?o .\n?s ex:q ?o :- [RANGE 3] DIAMOND ?s ex:r ?o .", "5"),
    ("?s ex:p ?o :- [RANGE 2] DIAMOND ?s ex:p ?o .", "triples of <http://example.org/p>"),
    ("?s ex:p ?o :- [RANGE 2] DIAMOND ?s ?y ?o .\n?s ex:q ?o :- ?s ex:p ?o .", "triples of <http://example.org/p>"),
    ("?s ?y ?o :- [RANGE 2] DIAMOND ?s ?y ?o .", "triples of any property"),
])
def test_triples_reach_back_by_their_property(rules, verdict):
    """Triples of different constant properties never unify: each property is a predicate of its own to the
    reach analysis; a triple whose property is a variable stands for all of them."""
    found = time_reach(parse_program(f"@prefix ex: <http://example.org/> .\n{rules}\n", "p.lars"))
    if verdict.isdigit():
        assert found == TimeSliced(int(verdict))
    else:
        assert isinstance(found, OnDriver) and found.what.endswith(f"(its window feeds {verdict} back)"), found


def test_a_datalogmtl_program_is_judged_after_its_lowering_and_named_as_written(tmp_path):
    program = tmp_path / "p.mtl"
    program.write_text("A(X):-B(X,Y), Diamondminus[0,2]C(Y,X)\nD(X):-Boxminus[1,1]A(X), E(X,Y), F(Y)\n")
    assert split_of(parsed(program)) == TimeSliced(3)  # (F(Y) has no X: no key; reach 2 then 1)
    program.write_text("A(X):-B(X,Y), Diamondminus[0,2]C(Y,X)\nD(X):-Diamondminus[0,+inf)A(Y), E(X,Y)\n")
    assert split_of(parsed(program)).reason == (
        f"rule D(X):-Diamondminus[0,+inf)A(Y), E(X,Y) at {program}:2 joins A and E on different arguments, and "
        f"reads the whole past (an interval without an end, [0,inf])")


# the shares equal the local run -------------------------------------------------------------------------------------

@pytest.mark.parametrize("program, stream", BUNDLED)
def test_the_bundled_examples(program, stream):
    assert_shares_agree(EXAMPLES / program, EXAMPLES / stream)


@pytest.mark.parametrize("name", ["diamond", "box", "join", "cooling"])
def test_the_benchmark_programs(tmp_path, name):
    program, stream = benchmark(tmp_path, name)
    assert_shares_agree(program, stream)
    assert_shares_agree(program, stream, "--changes", "--from", "4", "--to", "17", lengths=(2,), tasks=(3,))


@pytest.mark.parametrize("seed", range(12))
def test_generated_key_local_programs(tmp_path, seed):
    generator = KeyedGenerator(seed)
    program, stream = tmp_path / "p.lars", tmp_path / "s.stream"
    program.write_text(generator.program())
    stream.write_text(generator.stream())
    assert isinstance(split_of(parsed(program)), KeyLocal)
    assert_shares_agree(program, stream, *(("--changes",) if seed % 3 == 0 else ()), lengths=(None, 1), tasks=(3,))


@pytest.mark.parametrize("seed", range(16))
def test_generated_programs(tmp_path, seed):
    """The LARS differential generator (`lars_cases`), and its variant with bounded windows only: the programs
    that split (most of the variant's) agree; the others are left to the driver."""
    for number, generator in enumerate((LarsGenerator(seed + 1000), SliceableGenerator(seed))):
        program, stream = tmp_path / f"p{number}.lars", tmp_path / f"s{number}.stream"
        program.write_text(generator.program())
        stream.write_text(lars_stream(generator.stream()))
        try:
            split = split_of(parsed(program))
        except RuleSyntaxError:
            continue  # (a generated program the parser refuses: the local run says so too)
        if not isinstance(split, OnDriver):
            extra = ("--from", "2", "--to", "9") if seed % 4 == 1 else ()
            assert_shares_agree(program, stream, *extra, lengths=(None, 1), tasks=(3,))


@pytest.mark.parametrize("seed", range(0, 80, 4))
def test_generated_datalogmtl_programs(tmp_path, seed):
    generator = MetricGenerator(seed)
    program, stream = tmp_path / "p.mtl", tmp_path / "s.txt"
    program.write_text(generator.program())
    stream.write_text("\n".join(generator.stream()) + "\n")
    if not isinstance(split_of(parsed(program)), OnDriver):
        assert_shares_agree(program, stream, lengths=(None, 1))


def test_lines_set_aside_are_said_as_local_says_them(tmp_path):
    """Unreadable, late, too far ahead, not UTF-8, too long: the same lines on stderr, the same output; the
    byte ranges of the file do not read clean, so the run goes the general way (every line judged on the
    driver)."""
    program, stream = benchmark(tmp_path, "join")
    lines = stream.read_bytes().splitlines(keepends=True)
    bad = [b"3 p(\n", b"1 p(c1,c2)\n", b"900 p(x,y)\n", b"5 p(\xff,a)\n", b"6 p(" + b"a" * 300 + b",b)\n"]
    for at, line in zip((9, 30, 40, 50, 60), bad):
        lines.insert(at, line)
    stream.write_bytes(b"".join(lines))
    extra = ("--max-gap", "100", "--max-line-bytes", "200")
    status, want, want_err = local(program, stream, *extra)
    assert status == 0 and want_err.count("set aside") >= 5, want_err
    said = "".join(f"{line}\n" for line in want_err.splitlines()[:-1])  # (the count after them is the CLI's)
    for split in (TimeSliced(3), None):
        got, err, _ = split_run(program, stream, split=split, length=4, max_gap=100, max_line_bytes=200)
        assert (got, err) == (want, said)
    assert sliced_run(program, stream, tasks=3, max_gap=100) is None


# refusals come before Spark starts ------------------------------------------------------------------------------------

@pytest.fixture()
def no_spark(monkeypatch):
    """Starting a Spark session fails the test."""
    import rsp_plugin.spark.session as session

    def started(*args, **kwargs):
        raise AssertionError("Spark was started")

    monkeypatch.setattr(session, "spark_session", started)


@pytest.mark.parametrize("extra, message", [
    (["--stream", "-", "--engine", "spark"], "--engine spark reads a stream file; standard input (-) and brokers "
                                              "(mqtt://) are read by --engine local"),
    (["--stream", "hightemp.stream", "--mode", "distributed"], "--mode is read by --engine spark"),
    (["--stream", "hightemp.stream", "--master", "local[2]"], "--master is read by --engine spark"),
    (["--stream", "hightemp.stream", "--engine", "spark", "--checkpoint-key", "k"],
     "--checkpoint-key authenticates the states of --checkpoint DIR: give both"),
    (["--stream", "hightemp.stream", "--engine", "spark", "--semantics", "answer-stream"],
     "--semantics answer-stream is run by --engine local"),
    (["--stream", "hightemp.stream", "--engine", "spark", "--explain", "warning(b1)"],
     "--explain is given by --engine local (the explanations are kept by its engine)"),
    (["--stream", "nothing.stream", "--engine", "spark"], "nothing.stream: cannot read the stream: No such file or "
                                                          "directory"),
    (["--stream", "hightemp.stream", "--engine", "spark", "--from", "5", "--to", "2"], "--from 5 is after --to 2"),
    (["--stream", "hightemp.stream", "--engine", "spark", "--batch-lines", "0"],
     "--batch-lines 0: expected a positive number of lines"),
])
def test_refusals_come_before_spark_starts(no_spark, capsys, monkeypatch, extra, message):
    monkeypatch.chdir(EXAMPLES)
    assert main(["reason", "hightemp.lars", *extra]) == 2
    captured = capsys.readouterr()
    assert captured.out == "" and captured.err == f"rsp-plugin: {message}\n"


def test_a_mistake_in_the_program_is_located_before_spark_starts(no_spark, capsys, tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("q(X) :- p(X .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 p(a)\n")
    assert main(["reason", str(program), "--stream", str(stream), "--engine", "spark"]) == 2
    err = capsys.readouterr().err
    assert err == f"rsp-plugin: {program}:1:13: unexpected '.'; expected ')' or ','\n"
    assert local(program, stream)[::2] == (2, err)


def test_the_reason_a_program_runs_on_the_driver_is_said_before_spark_starts(no_spark, capsys, tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("q(X) :- [COUNT 3] DIAMOND p(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 p(a)\n")
    with pytest.raises(AssertionError, match="Spark was started"):
        main(["reason", str(program), "--stream", str(stream), "--engine", "spark", "--mode", "distributed"])
    assert capsys.readouterr().err == (f"rsp-plugin: --mode distributed runs this program on the driver: rule q(X) "
                                       f":- [COUNT 3] DIAMOND p(X) . at {program}:1 has a tuple window ([COUNT n] "
                                       f"counts the last n atoms of every key, however far back)\n")


# the driver mode's state is plain data ------------------------------------------------------------------------------

@pytest.mark.parametrize("program, stream", [BUNDLED[1], BUNDLED[3]])
def test_the_driver_state_goes_through_a_checkpoint_between_micro_batches(program, stream):
    """`ReasonDriver` fed the rows of the executors' reader in three micro-batches, its state written and read
    back (`runtime.state`: plain, authenticated; no pickle) before each: the lines of `--engine local`."""
    import pyarrow as pa

    from rsp_plugin.runtime.state import dumps, loads
    from rsp_plugin.spark.reason import ReasonDriver, Settings, plan
    from rsp_plugin.spark.reason_rows import read_piece

    program, stream = EXAMPLES / program, EXAMPLES / stream
    status, want, _ = local(program, stream)
    language = "datalogmtl" if program.suffix == ".mtl" else "lars"
    chosen = plan(Settings(program=str(program), stream=str(stream), language=language))
    table = pa.Table.from_batches(list(read_piece(chosen.reading, 0, stream.stat().st_size, 0,
                                                  dict(chosen.reading.prefixes), name=str(stream))))
    out = io.StringIO()
    key = b"a checkpoint key of 16+ bytes"
    driver = ReasonDriver(chosen, out, io.StringIO())
    cuts = [0, table.num_rows // 3, 2 * table.num_rows // 3, table.num_rows]
    for batch, (low, high) in enumerate(zip(cuts, cuts[1:])):
        driver.state = loads(dumps(driver.state, key=key), key=key)
        driver.terms = driver.state.replay.terms
        driver.process(table.slice(low, high - low), batch)
    driver.finish()
    assert out.getvalue() == want


def test_prefixes_declared_in_the_stream_reach_every_piece_and_range(tmp_path):
    """A piece or byte range learns the `@prefix` lines before it, one at its very start included."""
    program, stream = tmp_path / "p.lars", tmp_path / "s.stream"
    program.write_text("@prefix ex: <http://ex/> .\nq(X,Y) :- [RANGE 2] DIAMOND ex:p(X,Y) .\n")
    lines = []
    for t in range(30):
        if t % 2 == 0:
            lines.append(f"@prefix e{t}: <http://ex/{t}/> .")
        lines.append(f"{t} ex:p(e{t - t % 2}:a,ex:b)")
    stream.write_text("\n".join(lines) + "\n")
    status, want, err = local(program, stream)
    assert status == 0 and err == "" and "<http://ex/28/a>" in want
    for pieces in range(2, 12):
        assert split_run(program, stream, pieces=pieces, parts=3)[:2] == (want, "")
        assert sliced_run(program, stream, tasks=pieces) == want


@pytest.mark.parametrize("killed", [2, 0])
def test_a_killed_driver_goes_on_from_its_checkpoint_and_writes_each_line_once(tmp_path, killed):
    """Killed after writing a micro-batch's lines but before saving its state: the restarted driver loads the
    state of the batch before (the first batch: the state saved before it, where the file ended when the run
    began), cuts the file it appends to back to there, and takes the batch again (Spark delivers it again):
    the file holds what it held before and `--engine local`'s lines, each once."""
    import pyarrow as pa

    from rsp_plugin.spark.checkpoint import StateStore
    from rsp_plugin.spark.reason import ReasonDriver, Settings, plan
    from rsp_plugin.spark.reason_rows import read_piece

    program, stream = EXAMPLES / "short-stop.mtl", EXAMPLES / "short-stop.txt"
    status, want, _ = local(program, stream)
    chosen = plan(Settings(program=str(program), stream=str(stream), language="datalogmtl",
                           checkpoint=str(tmp_path / "chk")))
    table = pa.Table.from_batches(list(read_piece(chosen.reading, 0, stream.stat().st_size, 0, {},
                                                  name=str(stream))))
    cuts = [0, 40, 90, 140, table.num_rows]
    batches = [table.slice(low, high - low) for low, high in zip(cuts, cuts[1:])]
    output = tmp_path / "out.jsonl"
    output.write_text("an earlier run's line\n")  # (`>> out.jsonl`: what was there stays)
    with output.open("a") as out:
        driver = ReasonDriver(chosen, out, io.StringIO(), StateStore(tmp_path / "chk"))
        for number in range(killed):
            driver.process(batches[number], number)
        driver.store = None  # (killed: the batch's lines are written, its state is never saved)
        driver.process(batches[killed], killed)
    assert output.read_text() != "an earlier run's line\n" + want
    with output.open("a") as out:
        driver = ReasonDriver(chosen, out, io.StringIO(), StateStore(tmp_path / "chk"))
        assert driver.state.last_batch == killed - 1
        for number, batch in enumerate(batches):
            driver(_Frame(batch), number)  # (Spark's call: the batches done are skipped)
        driver.finish()
    assert output.read_text() == "an earlier run's line\n" + want


class _Frame:
    """A micro-batch as foreachBatch hands it (what `ReasonDriver.__call__` reads of it)."""

    def __init__(self, table):
        self.table = table

    def toArrow(self):
        return self.table


def test_timestamped_ntriples_with_a_tick(tmp_path):
    """A LARS program over a `.tnt` stream (ms timestamps, `@tick 1s`): triples are keyed by their subject, and
    reach back by their property (a derived triple of ex:Hot read back by no window is no recursion)."""
    import random

    program, stream = tmp_path / "p.lars", tmp_path / "s.tnt"
    program.write_text("@prefix ex: <http://example.org/> .\n@tick 1s .\n"
                       "hot(S) :- [RANGE 2s] DIAMOND ex:temp(S, V), V > 30 .\nwarm(S) :- [RANGE 1s] BOX hot(S) .\n"
                       "?s a ex:Hot :- [RANGE 1s] DIAMOND warm(?s), ?s ex:temp ?v .\n")
    draw = random.Random(3)
    lines = [f'{ms} <http://ex/s{draw.randrange(4)}> <http://example.org/temp> "{draw.randrange(20, 40)}"'
             f'^^<http://www.w3.org/2001/XMLSchema#integer> .\n' for ms in range(0, 30000, 250)]
    stream.write_text("".join(lines))
    assert isinstance(split_of(parsed(program)), KeyLocal) and time_reach(parsed(program)) == TimeSliced(4)
    assert_shares_agree(program, stream, lengths=(None, 2), tasks=(3,))
    lines.insert(20, "5100 <http://ex/b> <http://example.org/temp> broken .\n")
    stream.write_text("".join(lines))
    status, want, err = local(program, stream)
    assert err.startswith(f"{stream}:21: ")
    said = "".join(f"{line}\n" for line in err.splitlines()[:-1])
    assert split_run(program, stream, pieces=3, parts=3)[:2] == (want, said)
