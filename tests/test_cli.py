"""`rsp-plugin reason`: the command-line contract of DESIGN.md, run as a real process."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


def rsp(*args, cwd=None):
    return subprocess.run(
        [sys.executable, "-m", "rsp_plugin.cli", *map(str, args)], capture_output=True, text=True, cwd=cwd
    )


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_the_contract_example_prints_the_expected_lines():
    done = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--from", 1, "--to", 15, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    expected = [json.loads(line) for line in (EXAMPLES / "hightemp.expected.jsonl").read_text().splitlines()]
    assert lines(done.stdout) == expected
    assert done.stdout.splitlines()[1] == '{"t": 2, "atoms": ["warning(b1)"]}'


def test_the_timeline_defaults_to_the_streams_first_and_last_time_point():
    done = rsp("reason", EXAMPLES / "hightemp.lars", "--stream", EXAMPLES / "hightemp.stream")
    assert [line["t"] for line in lines(done.stdout)] == [2, 3]


def test_to_beyond_the_stream_evaluates_the_empty_time_points(tmp_path):
    done = rsp("reason", EXAMPLES / "hightemp.lars", "--stream", EXAMPLES / "hightemp.stream", "--to", 13)
    assert [(line["t"], line["atoms"]) for line in lines(done.stdout)][-2:] == [(12, ["warning(b1)"]), (13, [])]


def test_bad_lines_are_reported_counted_and_skipped(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("seen(X) :- [RANGE 1] DIAMOND p(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 p(a)\n2 p(b\nnonsense\n4 p(c)\n3 p(d)\n5 q:r(x)\n5 p(e)\n")
    done = rsp("reason", program, "--stream", stream)
    assert done.returncode == 0
    assert lines(done.stdout) == [
        {"t": 1, "atoms": ["seen(a)"]}, {"t": 2, "atoms": ["seen(a)"]}, {"t": 3, "atoms": []},
        {"t": 4, "atoms": ["seen(c)"]}, {"t": 5, "atoms": ["seen(c)", "seen(e)"]},
    ]
    errors = done.stderr.splitlines()
    assert errors[0] == f"{stream}:2: expected ')' after the arguments"
    assert errors[1].startswith(f"{stream}:3: expected 'TIMESTAMP atom'")
    assert errors[2] == f"{stream}:5: time point 3 is older than time point 4 read before it; set aside"
    assert errors[3] == f"{stream}:6: unknown prefix 'q:'"
    assert errors[4] == "rsp-plugin: 4 stream lines set aside (see above)"
    assert "Traceback" not in done.stderr


def test_timestamped_ntriples_with_a_tick(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text(
        "@prefix ex: <http://example.org/> .\n@tick 1s .\n"
        "hot(S) :- [RANGE 2s] DIAMOND ex:temp(S, V), V > 30 .\n"
    )
    stream = tmp_path / "s.tnt"
    t = "<http://example.org/temp>"
    stream.write_text(
        f'1000 <http://ex/a> {t} "31"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        f'2500 <http://ex/b> {t} "20"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'
        f"2600 <http://ex/b> {t} broken .\n"
        f'5000 <http://ex/b> {t} "40" .\n'
    )
    done = rsp("reason", program, "--stream", stream)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [
        {"t": 1, "atoms": ["hot(<http://ex/a>)"]}, {"t": 2, "atoms": ["hot(<http://ex/a>)"]},
        {"t": 3, "atoms": ["hot(<http://ex/a>)"]}, {"t": 4, "atoms": []}, {"t": 5, "atoms": []},
    ]
    assert f"{stream}:3: " in done.stderr


def test_derived_triples_are_written_as_predicate_of_subject_and_object(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("@prefix ex: <http://example.org/> .\n?s a ex:Hot :- ?s ex:temp ?v, ?v > 30 .\n")
    stream = tmp_path / "s.tnt"
    stream.write_text('0 <http://ex/a> <http://example.org/temp> "31"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')
    done = rsp("reason", program, "--stream", stream)
    assert lines(done.stdout) == [
        {"t": 0, "atoms": ["<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>(<http://ex/a>,<http://example.org/Hot>)"]}
    ]


@pytest.mark.parametrize(
    "program_text, message",
    [
        ("p(X) :- q(Y) .", "p.lars:1:1: unsafe variable X in the head"),
        ("p(X) :- q(X)", "p.lars:1:13: unexpected end of file"),
    ],
)
def test_a_program_error_is_one_line_and_a_nonzero_exit(tmp_path, program_text, message):
    (tmp_path / "p.lars").write_text(program_text)
    (tmp_path / "s.stream").write_text("1 q(a)\n")
    done = rsp("reason", "p.lars", "--stream", "s.stream", cwd=tmp_path)
    assert done.returncode == 2
    assert done.stdout == ""
    assert done.stderr.startswith(f"rsp-plugin: {message}")
    assert len(done.stderr.splitlines()) == 1


def test_missing_files_are_one_line(tmp_path):
    (tmp_path / "p.lars").write_text("p :- q .")
    missing_program = rsp("reason", "nope.lars", "--stream", "s.stream", cwd=tmp_path)
    missing_stream = rsp("reason", "p.lars", "--stream", "nope.stream", cwd=tmp_path)
    assert missing_program.returncode == missing_stream.returncode == 2
    assert missing_program.stderr == "rsp-plugin: nope.lars:1:1: cannot read the program: No such file or directory\n"
    assert missing_stream.stderr == "rsp-plugin: nope.stream: cannot read the stream: No such file or directory\n"


def test_changes_mode_prints_what_started_and_stopped(tmp_path):
    done = rsp("reason", EXAMPLES / "hightemp.lars", "--stream", EXAMPLES / "hightemp.stream",
               "--from", 1, "--to", 14, "--changes")
    changes = [line for line in lines(done.stdout) if line["started"] or line["stopped"]]
    assert changes == [{"t": 2, "started": ["warning(b1)"], "stopped": []},
                       {"t": 13, "started": [], "stopped": ["warning(b1)"]}]


def test_no_pruning_prints_the_same(tmp_path):
    with_pruning = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--from", 1, "--to", 15, cwd=EXAMPLES)
    without = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--from", 1, "--to", 15, "--no-pruning",
                  cwd=EXAMPLES)
    assert without.returncode == 0 and without.stdout == with_pruning.stdout


# --semantics answer-stream (DESIGN.md, "Second round: contracts") ----------------------------

def _choice(tmp_path):
    program = tmp_path / "choice.lars"
    program.write_text("% a choice while p holds; nothing can be chosen while q holds\n"
                       "left(X) :- p(X), not right(X) .\nright(X) :- p(X), not left(X) .\n"
                       "stop :- q, not stop .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("0 p(a)\n1 q\n2 other\n")
    return program, stream


def test_answer_streams_first_model_in_the_deterministic_order(tmp_path):
    program, stream = _choice(tmp_path)
    done = rsp("reason", program, "--stream", stream, "--semantics", "answer-stream")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '{"t": 0, "atoms": ["left(a)"]}',
        '{"t": 1, "atoms": null, "inconsistent": true}',
        '{"t": 2, "atoms": []}',
    ]


def test_answer_streams_every_model(tmp_path):
    program, stream = _choice(tmp_path)
    done = rsp("reason", program, "--stream", stream, "--semantics", "answer-stream", "--models", "all")
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        '{"t": 0, "models": [["left(a)"], ["right(a)"]]}',
        '{"t": 1, "models": []}',
        '{"t": 2, "models": [[]]}',
    ]


def test_a_loop_through_not_in_the_default_mode_is_one_located_line(tmp_path):
    program, stream = _choice(tmp_path)
    done = rsp("reason", program, "--stream", stream)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines() == [
        f"rsp-plugin: {program}:2:18: a loop through `not`: rule 'left(X) :- p(X), not right(X) .' depends on "
        "itself through this negated atom; the program is not stratified (answer-stream semantics accepts it: "
        "--semantics answer-stream)"]


def test_stratified_programs_print_the_same_under_both_semantics_when_windows_read_data():
    default = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--from", 1, "--to", 15, cwd=EXAMPLES)
    answer = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--from", 1, "--to", 15,
                 "--semantics", "answer-stream", cwd=EXAMPLES)
    assert answer.returncode == 0, answer.stderr
    assert answer.stdout == default.stdout


def test_models_all_needs_answer_stream_semantics(tmp_path):
    done = rsp("reason", EXAMPLES / "hightemp.lars", "--stream", EXAMPLES / "hightemp.stream", "--models", "all")
    assert done.returncode == 2
    assert done.stderr.strip() == "rsp-plugin: --models and --solver-timeout are for --semantics answer-stream"


def test_a_time_point_past_the_solver_timeout_is_reported_and_the_run_goes_on(tmp_path):
    # 11 pigeons in 10 holes while go holds (hard for any solver); free choices afterwards
    lines = [f"pigeon({p}) ." for p in range(11)] + [f"hole({h}) ." for h in range(10)] + [
        "in(P,H) :- pigeon(P), hole(H), not out(P,H) .", "out(P,H) :- pigeon(P), hole(H), not in(P,H) .",
        "placed(P) :- in(P,H) .", "bad :- go, pigeon(P), not placed(P), not bad .",
        "bad :- go, in(P,H), in(Q,H), P != Q, not bad ."]
    program = tmp_path / "pigeons.lars"
    program.write_text("\n".join(lines) + "\n")
    stream = tmp_path / "s.stream"
    stream.write_text("0 go\n1 other\n")
    done = rsp("reason", program, "--stream", stream, "--semantics", "answer-stream", "--solver-timeout", "3")
    assert done.returncode == 0, done.stderr
    first, second = [json.loads(line) for line in done.stdout.splitlines()]
    assert first == {"t": 0, "atoms": None, "timeout": True}
    assert second["t"] == 1 and "in(0,0)" in second["atoms"]  # 2^110 answers: the first, found alone
    assert done.stderr == "rsp-plugin: time point 0: no answer within 3 s (--solver-timeout); going on\n"


# everyday edges: options as written, standard input, a reader that goes away ----------------------

@pytest.mark.parametrize("argv, command, unknown", [
    (["reason", "hightemp.lars", "--stream", "hightemp.stream", "--mod", "all"], "reason", "--mod all"),
    (["reason", "hightemp.lars", "--stream", "hightemp.stream", "--model", "all"], "reason", "--model all"),
    (["query", "q.rq", "--stream", "s=s.tnt", "--dia", "cqels"], "query", "--dia cqels"),
])
def test_options_are_matched_only_as_written(argv, command, unknown):
    # argparse would read `--mod` as `--models` (or `--mode`) and `--dia` as `--dialect` (prefix matching): a contract
    # other tools call takes its options only as written, and says which one it does not have
    done = rsp(*argv, cwd=EXAMPLES)
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.splitlines()[0].startswith(f"usage: rsp-plugin {command} ")
    assert done.stderr.splitlines()[-1] == f"rsp-plugin {command}: error: unrecognized arguments: {unknown}"


def test_reason_reads_standard_input_like_the_file(tmp_path):
    from_file = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", cwd=EXAMPLES)
    text = (EXAMPLES / "hightemp.stream").read_text()
    for extra in ([], ["--semantics", "answer-stream"]):
        piped = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "reason", "hightemp.lars", "--stream", "-",
                                *extra], capture_output=True, text=True, cwd=EXAMPLES, input=text)
        assert piped.returncode == 0 and piped.stderr == "", piped.stderr
        assert lines(piped.stdout) == lines(from_file.stdout)
    # timestamped N-Triples on standard input say so; a bad line is named after standard input
    (tmp_path / "hot.lars").write_text("hot(S) :- [RANGE 2] DIAMOND <http://ex/temp>(S, V), V > 30 .\n")
    tnt = '1 <http://ex/a> <http://ex/temp> "35"^^<http://www.w3.org/2001/XMLSchema#integer> .\n2 oops\n'
    piped = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "reason", "hot.lars", "--stream", "-",
                            "--input-format", "tnt"], capture_output=True, text=True, cwd=tmp_path, input=tnt)
    assert piped.returncode == 0, piped.stderr
    assert lines(piped.stdout)[0] == {"t": 1, "atoms": ["hot(<http://ex/a>)"]}
    assert piped.stderr.startswith("<stdin>.tnt:2: ")
    # --input-format is standard input's: a file says how it is read by its extension
    done = rsp("reason", "hightemp.lars", "--stream", "hightemp.stream", "--input-format", "tnt", cwd=EXAMPLES)
    assert done.returncode == 2
    assert done.stderr.strip() == ("rsp-plugin: --input-format is the format of standard input (--stream -); a "
                                   "file's extension says how it is read")


def _read_one_line_then_close(argv, cwd) -> tuple[int, str, str]:
    """Run the command with its output piped, read one line and close the pipe, as `| head -1` does."""
    process = subprocess.Popen([sys.executable, "-m", "rsp_plugin.cli", *map(str, argv)], cwd=cwd,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    first = process.stdout.readline()
    process.stdout.close()
    stderr = process.stderr.read()
    return process.wait(timeout=120), first, stderr


def test_a_reader_that_goes_away_ends_the_command_quietly(tmp_path):
    # `rsp-plugin ... | head -1`: the rest of the output has nowhere to go; no "Broken pipe" message
    (tmp_path / "plant.stream").write_text("".join(f"{t} highTemp(b{t % 3})\n" for t in range(20_000)))
    status, first, stderr = _read_one_line_then_close(
        ["reason", EXAMPLES / "hightemp.lars", "--stream", "plant.stream"], tmp_path)
    assert (status, stderr) == (0, "") and first.startswith('{"t": 0')
    (tmp_path / "plant.tnt").write_text("".join(f'{t} <http://ex/s{t % 50}> <http://ex/p> "{t}" .\n'
                                                for t in range(20_000)))
    (tmp_path / "q.rq").write_text("SELECT * FROM STREAM <http://ex/plant> [RANGE 50ms STEP 10ms] "
                                   "WHERE { ?s ?p ?o }\n")
    for extra in ([], ["-q"]):
        status, first, stderr = _read_one_line_then_close(
            ["query", "q.rq", "--stream", "http://ex/plant=plant.tnt", *extra], tmp_path)
        assert (status, stderr) == (0, "") and first.startswith('{"t": 10')
