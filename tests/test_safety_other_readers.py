"""The readers of the other `reason` modes keep the same bounds as the LARS one: a line that is
not UTF-8 or too long, a timestamp far ahead of the stream, and (DatalogMTL) an interval that
would stretch the timeline are set aside with their place; every other line is read."""

import json
import subprocess
import sys


def rsp(*args):
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *map(str, args)],
                          capture_output=True, text=True, timeout=120)


def test_a_datalogmtl_dataset_sets_aside_bad_bytes_far_facts_and_endless_intervals(tmp_path):
    program = tmp_path / "p.mtl"
    program.write_text("h(X) :- Diamondminus[0,2]p(X)\n")
    stream = tmp_path / "facts.txt"
    stream.write_bytes(b"p(a)@[1,1]\np(b)@[2,3]\n\xff\xfe bad\np(c)@[4,100000000000]\np(d)@[5,5]\n"
                       b"p(e)@[900000000,900000000]\n" + b"p(f)@[6,6] %" + b"x" * 2000 + b"\n")
    done = rsp("reason", program, "--stream", stream, "--max-line-bytes", "1000")
    assert done.returncode == 0, done.stderr
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    assert [line["t"] for line in lines] == [1, 2, 3, 4, 5]
    assert lines[-1]["atoms"] == ["h(b)", "h(d)"]
    err = done.stderr
    assert f"{stream}:3: not UTF-8 text (byte 0xff at column 1); set aside" in err
    assert f"{stream}:4: the interval [4,100000000000] ends 99999999996 time points after it starts" in err
    assert f"{stream}:6: timestamp 900000000 is 899999995 time points ahead of the stream (max gap 100000" in err
    assert f"{stream}:7: line longer than 1000 bytes" in err
    assert "4 stream lines set aside" in err


def test_answer_streams_read_their_stream_with_the_same_bounds(tmp_path):
    program = tmp_path / "p.lars"
    program.write_text("a :- not b .\nb :- not a .\nc :- d .\n")
    stream = tmp_path / "s.stream"
    stream.write_bytes(b"1 d\n\xff bad\n2 d\n100000000 d\n")
    done = rsp("reason", program, "--stream", stream, "--semantics", "answer-stream", "--models", "all")
    assert done.returncode == 0, done.stderr
    assert [json.loads(line) for line in done.stdout.splitlines()] == [
        {"t": 1, "models": [["a", "c"], ["b", "c"]]}, {"t": 2, "models": [["a", "c"], ["b", "c"]]}]
    assert f"{stream}:2: not UTF-8 text (byte 0xff at column 1); set aside" in done.stderr
    assert f"{stream}:4: timestamp 100000000 is 99999998 time points ahead of the stream" in done.stderr
