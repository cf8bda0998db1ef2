"""`rsp-plugin reason PROGRAM.mtl --stream FACTS`, and DatalogMTL programs where LARS programs go (query RULES)."""

import json
import subprocess
import sys

from rsp_plugin.io.formats import read_tnt
from rsp_plugin.mtl.generate import SHORT_STOP, sumo_stream
from rsp_plugin.runtime.engine import RSPEngine


def rsp(*args):
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *map(str, args)], capture_output=True, text=True)


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def test_a_meteor_program_and_dataset_print_the_head_atoms_per_time_point(tmp_path):
    program = tmp_path / "short_stop.mtl"
    program.write_text(SHORT_STOP)
    data = tmp_path / "S.txt"
    data.write_text("NotPos(v)@[1,1]\nNotOnMap(w)@[1,1]\nPos(v)@[2,2]\nPos(w)@[2,3]\nNotPos(v)@[3,3]\nNotPos(w)@4\n")
    done = rsp("reason", program, "--stream", data)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [
        {"t": 1, "atoms": ["NotPos(v)", "NotPos(w)"]},
        {"t": 2, "atoms": []},
        {"t": 3, "atoms": ["NotPos(v)", "ShortStop(v)"]},
        {"t": 4, "atoms": ["NotPos(w)", "ShortStop(w)"]},
    ]


def test_the_language_is_found_by_content_or_given(tmp_path):
    program = tmp_path / "rules.txt"  # neither .mtl nor .lars
    program.write_text("Late(X):-Diamondminus[2,2]Sent(X)\n")
    data = tmp_path / "data.txt"
    data.write_text("Sent(m)@0\n")
    by_content = rsp("reason", program, "--stream", data, "--to", 3)
    assert [line["atoms"] for line in lines(by_content.stdout)] == [[], [], ["Late(m)"], []]
    plain = tmp_path / "plain.txt"  # no operator: MeTeoR's rules without a final '.' are still recognised
    plain.write_text("Seen(X):-Sent(X)\n")
    assert lines(rsp("reason", plain, "--stream", data).stdout) == [{"t": 0, "atoms": ["Seen(m)"]}]
    given = rsp("reason", plain, "--stream", data, "--language", "datalogmtl")
    assert lines(given.stdout) == [{"t": 0, "atoms": ["Seen(m)"]}]


def test_an_atom_stream_feeds_a_datalogmtl_program_too(tmp_path):
    program = tmp_path / "p.mtl"
    program.write_text("Late(X):-Diamondminus[2,2]Sent(X)\n")
    stream = tmp_path / "s.stream"
    stream.write_text("0 Sent(m)\n1 Other(x)\n")
    assert [line["atoms"] for line in lines(rsp("reason", program, "--stream", stream, "--to", 2).stdout)] == [
        [], [], ["Late(m)"]]


def test_bad_fact_lines_are_reported_counted_and_set_aside(tmp_path):
    program = tmp_path / "p.mtl"
    program.write_text("Seen(X):-Diamondminus[0,1]P(X)\n")
    data = tmp_path / "d.txt"
    data.write_text("P(a)@[1,1]\nP(b)@[2\nnonsense\nP(c)@(3,4)\nP(d)@4\nP(e)@3\nP(f)@5\nP(g,h)@5\n")
    done = rsp("reason", program, "--stream", data)
    assert done.returncode == 0
    assert lines(done.stdout) == [
        {"t": 1, "atoms": ["Seen(a)"]}, {"t": 2, "atoms": ["Seen(a)"]}, {"t": 3, "atoms": []},
        {"t": 4, "atoms": ["Seen(d)"]}, {"t": 5, "atoms": ["Seen(d)", "Seen(f)"]},
    ]
    assert done.stderr.splitlines() == [
        f"{data}:2: expected ',' or a closing ']' / ')' in the interval",
        f"{data}:3: expected '@' and the time, e.g. Pred(a,b)@[1,2]",
        f"{data}:4: the interval (3,4) covers no time point of the integer timeline",
        f"{data}:6: starts at time point 3, before time point 4 read earlier; set aside (a stream is read in time order)",
        f"{data}:8: P has 1 argument in the program, 2 here; set aside",
        "rsp-plugin: 5 stream lines set aside (see above)",
    ]


def test_a_rule_that_looks_into_the_future_is_one_located_line_and_exit_2(tmp_path):
    program = tmp_path / "p.mtl"
    program.write_text("A(X):-B(X)\nAlarm(X):-Hot(X), Diamondplus[0,3]Hot(X)\n")
    data = tmp_path / "d.txt"
    data.write_text("Hot(a)@1\n")
    done = rsp("reason", program, "--stream", data)
    assert done.returncode == 2
    assert done.stderr == (f"rsp-plugin: {program}:2:19: Diamondplus in a body looks into the future: the rule is not "
                           "forward-propagating (a body may look at the past only: Boxminus, Diamondminus, Since)\n")


def test_the_lars_form_through_reason_hides_the_normal_forms_auxiliary_atoms(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("[1,2] BOXPLUS off(X) :- alarm(X), [0,2] BOXMINUS [0,1] DIAMONDMINUS hot(X) .\n")
    stream = tmp_path / "s.stream"
    stream.write_text("1 hot(a)\n2 hot(a)\n3 alarm(a)\n")
    done = rsp("reason", program, "--stream", stream, "--to", 6)
    assert done.returncode == 0, done.stderr
    assert [line["atoms"] for line in lines(done.stdout)] == [[], [], [], ["off(a)"], ["off(a)"], []]
    changes = rsp("reason", program, "--stream", stream, "--to", 6, "--changes")
    assert [(line["started"], line["stopped"]) for line in lines(changes.stdout)][3:6] == [
        (["off(a)"], []), ([], []), ([], ["off(a)"])]


def test_the_short_stop_stream_runs_end_to_end(tmp_path):
    program = tmp_path / "short_stop.mtl"
    program.write_text(SHORT_STOP)
    data = tmp_path / "S1.txt"
    data.write_text("\n".join(sumo_stream(seed=5, time_points=30)) + "\n")
    done = rsp("reason", program, "--stream", data)
    assert done.returncode == 0, done.stderr
    out = lines(done.stdout)
    assert [line["t"] for line in out] == list(range(1, 31))
    assert any(atom.startswith("ShortStop(") for line in out for atom in line["atoms"])


def test_query_rules_accept_a_datalogmtl_program(tmp_path):
    program = tmp_path / "alarm.mtl"
    program.write_text("@prefix ex: <http://ex/> .\n"
                       "rdf:type(X,ex:Alarm):-Boxminus[0,1]ex:state(X,ex:hot)\n"
                       "rdf:type(X,ex:Cooled):-ex:state(X,ex:cold)Since[1,2]ex:state(X,ex:hot)\n")
    engine = RSPEngine()
    engine.register_stream("http://ex/s")
    query = engine.register_query(f"PREFIX ex: <http://ex/>\nSELECT ?x ?c FROM STREAM <http://ex/s> "
                                  f"[RANGE 1s STEP 1s] RULES <{program.as_uri()}> WHERE {{ ?x a ?c }}")
    state = "<http://ex/state>"
    stream = [f"{t} <http://ex/a> {state} <http://ex/{v}> ." for t, v in
              ((100, "cold"), (1100, "hot"), (2100, "hot"), (3100, "cold"), (4100, "cold"), (5100, "cold"))]
    engine.push("http://ex/s", read_tnt(stream, engine.terms, tick_ms=1))
    seen = {r.t: sorted(b["c"][len("<http://ex/"):-1] for b in r.to_json()["bindings"])
            for r in engine.finish() if r.query == query.name}
    #  the program ticks once per STEP; the window of tau sees what holds at the last point before it:
    #  hot at 1 and 2: an alarm at 2; cooled one or two points after a hot one with cold in between:
    #  at 2 (hot at 1), 3 (hot at 2), 4 (hot at 2, cold at 3), not 5 (hot too far back)
    assert seen == {1000: [], 2000: [], 3000: ["Alarm", "Cooled"], 4000: ["Cooled"], 5000: ["Cooled"], 6000: []}


def test_the_bundled_example_prints_what_the_reference_evaluator_gives():
    from pathlib import Path

    from mtl_cases import run

    examples = Path(__file__).parent.parent / "examples"
    done = rsp("reason", examples / "short-stop.mtl", "--stream", examples / "short-stop.txt")
    assert done.returncode == 0, done.stderr
    expected = lines((examples / "short-stop.expected.jsonl").read_text())
    assert lines(done.stdout) == expected
    program = (examples / "short-stop.mtl").read_text()
    data = (examples / "short-stop.txt").read_text().splitlines()
    reference = run(program, data, engine="reference", first=1, last=12)
    assert {line["t"]: sorted(line["atoms"]) for line in expected} == {t: sorted(a) for t, a in reference.items()}
