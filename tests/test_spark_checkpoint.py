"""Kill a real Spark job mid-stream, restart it on its checkpoint: the output is the uninterrupted run's.

The job is `rsp-plugin query --engine spark --checkpoint DIR`, a process of its
own (with its own JVM), writing to a file it appends to. It is killed (SIGKILL,
its whole process group) once a few micro-batches have committed, and started
again with the same arguments: Spark replays the batch that was in flight, the
driver restores the engine's state (windows, RDFS materialization, the ISTREAM
memory) from the last committed batch and cuts what the killed run had written
after it. No result is lost or written twice.
"""

from __future__ import annotations

import contextlib
import io
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from rsp_plugin.cli import main

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parent.parent
QUERY = ROOT / "queries" / "csrbench" / "observations-rdfs.rq"
STREAM = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
ARGS = ["query", str(QUERY), "--stream", f"http://ex.org/csrbench={STREAM}"]


def start_job(checkpoint: Path, out: Path, err: Path) -> subprocess.Popen:
    with out.open("ab") as stdout, err.open("ab") as stderr:
        return subprocess.Popen(
            [sys.executable, "-m", "rsp_plugin.cli", *ARGS, "--engine", "spark", "--checkpoint", str(checkpoint),
             "--batch-lines", "60"],
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
