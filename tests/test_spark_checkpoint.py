"""Kill a real Spark job mid-stream, restart it on its checkpoint: the output is the uninterrupted run's.

The job is `rsp-plugin query --engine spark --checkpoint DIR`, a process of its
own (with its own JVM), writing to a file it appends to. It is killed (SIGKILL,
its whole process group) once a few micro-batches have committed, and started
again with the same arguments: Spark replays the batch that was in flight, the
driver restores the engine's state (windows, RDFS materialization, the ISTREAM
memory) from the last committed batch and cuts what the killed run had written
after it. No result is lost or written twice.

A checkpoint is data someone else may write: the states are authenticated with
the checkpoint's key (`rsp_plugin.runtime.state`). A state changed the way issue 32 did
it (code in a rule's text, its plain SHA-256 written again) stops the restart in
one line naming the file, and none of its code runs; so does a key file that
others may read.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parent.parent
QUERY = ROOT / "queries" / "csrbench" / "observations-rdfs.rq"
STREAM = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
ARGS = ["query", str(QUERY), "--stream", f"http://ex.org/csrbench={STREAM}"]


def start_job(checkpoint: Path, out: Path, err: Path, args: list[str] = ARGS,
              batch_lines: int = 60) -> subprocess.Popen:
    with out.open("ab") as stdout, err.open("ab") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "rsp_plugin.cli", *args, "--engine", "spark", "--checkpoint", str(checkpoint),
             "--batch-lines", str(batch_lines)],
            stdout=stdout, stderr=stderr, cwd=ROOT, start_new_session=True)


def committed(checkpoint: Path) -> int:
    states = checkpoint / "rsp-state"
    if not states.is_dir():
        return -1
    numbers = [int(p.name[6:-5]) for p in states.glob("state-*.json")]
    return max(numbers, default=-1)


def test_killing_the_job_mid_stream_and_restarting_it_loses_and_repeats_nothing(tmp_path):
    local = io.StringIO()
    with contextlib.redirect_stdout(local), contextlib.redirect_stderr(io.StringIO()), contextlib.chdir(ROOT):
        assert main(ARGS) == 0
    expected = local.getvalue().splitlines()
    assert len(expected) >= 5

    checkpoint, out, err = tmp_path / "chk", tmp_path / "out.jsonl", tmp_path / "err.txt"
    job = start_job(checkpoint, out, err)
    deadline = time.monotonic() + 240
    while committed(checkpoint) < 4 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.poll() is None, f"the job ended before it could be killed:\n{err.read_text()}"
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    killed_at = committed(checkpoint)
    written = out.read_text().splitlines()
    assert 4 <= killed_at and len(written) < len(expected), "killed mid-stream"

    again = start_job(checkpoint, out, err)
    assert again.wait(timeout=300) == 0, err.read_text()
    assert out.read_text().splitlines() == expected
    log = err.read_text()
    assert "replay finished" in log and "Traceback" not in log
    assert " WARN " not in log, "Spark's own log shows errors only (its start-up's WARN lines gone)"


def test_a_distributed_job_killed_mid_stream_and_restarted_loses_and_repeats_nothing(tmp_path):
    """The same in distributed mode (the windows as files of facts written by the executors, the driver's
    state in DIR/rsp-distributed/)."""
    query = ROOT / "queries" / "csrbench" / "max-temperature.rq"
    args = ["query", str(query), "--stream", f"http://ex.org/csrbench={STREAM}"]
    local = io.StringIO()
    with contextlib.redirect_stdout(local), contextlib.redirect_stderr(io.StringIO()), contextlib.chdir(ROOT):
        assert main(args) == 0
    expected = local.getvalue().splitlines()
    assert len(expected) >= 5

    checkpoint, out, err = tmp_path / "chk", tmp_path / "out.jsonl", tmp_path / "err.txt"
    command = [sys.executable, "-m", "rsp_plugin.cli", *args, "--engine", "spark", "--mode", "distributed",
               "--checkpoint", str(checkpoint), "--batch-lines", "500"]

    def start() -> subprocess.Popen:
        with out.open("ab") as stdout, err.open("ab") as stderr:
            return subprocess.Popen(command, stdout=stdout, stderr=stderr, cwd=ROOT, start_new_session=True)

    def done() -> int:
        numbers = [int(p.name[6:-5]) for p in (checkpoint / "rsp-distributed").glob("state-*.json")]
        return max(numbers, default=-1)

    job = start()
    deadline = time.monotonic() + 240
    while done() < 1 and job.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert job.poll() is None, f"the job ended before it could be killed:\n{err.read_text()}"
    os.killpg(job.pid, signal.SIGKILL)
    job.wait()
    killed_at = done()
    written = out.read_text().splitlines()
    assert 1 <= killed_at and len(written) < len(expected), "killed mid-stream"

    again = start()
    assert again.wait(timeout=300) == 0, err.read_text()
    assert out.read_text().splitlines() == expected
    log = err.read_text()
    assert "replay finished" in log and "Traceback" not in log and "not distributed yet" not in log


def test_a_tampered_checkpoint_is_refused_in_one_line_and_its_code_never_runs(tmp_path):
    """Issue 32, on a real `--engine spark --checkpoint` restart: the latest state's rules given Python after a
    line break (in the program text they are parsed again from, and in the rule's own text, and a rule stored
    as a Program, the class whose check it skipped), the payload's plain SHA-256 written again."""
    checkpoint, out, err = tmp_path / "chk", tmp_path / "out.jsonl", tmp_path / "err.txt"
    # RDFS with a RULES program: the reference materializer, whose rules the state holds as text (RDFS alone
    # under a static TBox keeps templates, built again from the background, not rules)
    (tmp_path / "weather-observations.ttl").write_text((QUERY.parent / "weather-observations.ttl").read_text())
    (tmp_path / "seen.lars").write_text("@prefix om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#> .\n"
                                        "?o om-owl:seen ?s :- ?o om-owl:procedure ?s .\n")
    query = tmp_path / "observations-rules.rq"
    query.write_text(QUERY.read_text().replace(
        "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>",
        f"ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>\nRULES <{(tmp_path / 'seen.lars').as_uri()}>"))
    args = ["query", str(query), "--stream", f"http://ex.org/csrbench={STREAM}"]
    job = start_job(checkpoint, out, err, args, batch_lines=400)  # (a state to tamper with: a few batches do)
    assert job.wait(timeout=300) == 0, err.read_text()
    latest = checkpoint / "rsp-state" / f"state-{committed(checkpoint)}.json"
    mark = tmp_path / "code-ran"
    code = f"\n__import__('pathlib').Path({str(mark)!r}).touch()\n"

    header, payload = latest.read_bytes().split(b"\n", 1)
    document = json.loads(payload)
    changed = 0
    for entry in document["objects"]:
        if entry and entry[0] == "o" and entry[1] == "rsp_plugin.lars.program:Origin":
            entry[2][1]["text"] += code
            changed += 1
        elif entry and entry[0] == "o" and entry[1] == "rsp_plugin.lars.program:Rule":
            entry[2][1]["text"] += code
            entry[1] = "rsp_plugin.lars.program:Program"
            changed += 1
    assert changed > 10, "the RDFS materialization's rules are in the state"
    payload = json.dumps(document).encode()
    header = json.loads(header)
    digest = hashlib.sha256(payload).hexdigest()
    header.update(sha256=digest, hmac_sha256=digest, bytes=len(payload))
    latest.write_bytes(json.dumps(header).encode() + b"\n" + payload)

    def restart() -> tuple[int, list[str]]:
        err.write_text("")
        again = start_job(checkpoint, out, err, args, batch_lines=400)
        code = again.wait(timeout=300)
        return code, [line for line in err.read_text().splitlines() if line.startswith("rsp-plugin:")]

    status, said = restart()
    assert status == 2 and said == [
        f"rsp-plugin: {latest}: the state does not authenticate with this checkpoint's key (changed after it was "
        "written, written with another key, or cut short); refused"], err.read_text()
    assert "Traceback" not in err.read_text()
    assert not mark.exists(), "the tampered state's code ran"

    key = checkpoint / "rsp-plugin.key"
    key.chmod(0o644)
    status, said = restart()
    assert status == 2 and said == [
        f"rsp-plugin: {key}: the checkpoint key may be read or written by group or others (mode 644); make it "
        f"private: chmod 600 {key}"], err.read_text()
    assert "Traceback" not in err.read_text() and not mark.exists()
