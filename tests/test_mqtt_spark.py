"""`--engine spark` reads a broker's topic (the `rdf-mqtt` source), is killed in the middle and restarted
from its checkpoint: the reports are the file's, none lost and none twice; a bad payload is set aside."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqtt_broker import broker, publish  # noqa: F401  (the fixture)

pytestmark = [pytest.mark.mqtt, pytest.mark.spark]

ROOT = Path(__file__).resolve().parent.parent
QUERY = ROOT / "tests" / "data" / "mqtt-all.rq"
STREAM_IRI = "http://ex/s"
LINES = [f'{300 * k} <http://ex/s{k}> <http://ex/p> "{k}" .'.encode() for k in range(40)]


def test_spark_reads_a_topic_and_a_restart_from_the_checkpoint_loses_and_doubles_nothing(broker, tmp_path):
    env = dict(os.environ, PYTHONPATH=str(ROOT))
    args = [sys.executable, "-m", "rsp_plugin.cli", "query", str(QUERY), "--engine", "spark", "--master", "local[1]",
            "--stream", f"{STREAM_IRI}={broker.url('positions')}", "--checkpoint", str(tmp_path / "chk"),
            "--mqtt-idle", "20"]  # (the end of the stream: quiet this long, however loaded the machine: the
    # restarted reader resumes its broker session while the whole suite loads the two cores)
    out_path = tmp_path / "out.jsonl"
    lines = LINES
    stream = tmp_path / "positions.tnt"
    stream.write_bytes(b"\n".join(lines) + b"\n")

    def started() -> subprocess.Popen:
        process = subprocess.Popen(args, stdout=out_path.open("ab"), stderr=subprocess.PIPE, text=True, env=env,
                                   cwd=ROOT)
        first = process.stderr.readline()  # its session is on the broker: what comes now waits for it
        assert "subscribed" in first, first + process.stderr.read()
        return process

    first = started()
    publish(broker.url("positions"), [*lines[:12], b"3600 <urn:a> not a triple"])
    deadline = time.monotonic() + 120
    while not out_path.read_text().count("\n") and time.monotonic() < deadline:
        time.sleep(0.2)  # until reports come out: then it dies in the middle of the stream
    first.send_signal(signal.SIGKILL)
    first.wait()
    stderr_first = first.stderr.read()
    publish(broker.url("positions"), lines[12:20])   # while nobody reads: kept in the session
    second = started()
    publish(broker.url("positions"), lines[20:])
    _, stderr_second = second.communicate(timeout=240)
    assert second.returncode == 0, stderr_second
    expected = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "query", str(QUERY), "--stream",
                               f"{STREAM_IRI}={stream}"], capture_output=True, text=True, env=env, cwd=ROOT)
    found = out_path.read_text()
    assert expected.stdout.count("\n") == 13 and found == expected.stdout, (  # (all of it, to tell why)
        f"reports:\n{found}\nexpected:\n{expected.stdout}\nfirst run:\n{stderr_first}\nrestarted run:\n{stderr_second}")
    assert f"{broker.url('positions')}:13: a triple ends with ' .'" in stderr_first + stderr_second
    # every message once: none lost, none counted twice (the triples seen would hide a double)
    assert f"replay finished: {len(lines) + 1} rows in, 1 set aside" in stderr_second
