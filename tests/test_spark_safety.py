"""On Spark, the same safety as the local engine: a bad line is its own dead letter (the right line, the
rest of the file read), a far timestamp is set aside without being walked to, a long line never held."""

from __future__ import annotations

import contextlib
import io
import json
import time
from pathlib import Path

import pytest

from rsp_plugin.cli.command_line import main

pytestmark = pytest.mark.spark

EX = "http://ex.org/"


def run(*args) -> tuple[int, list[dict], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue().splitlines()


def test_bad_bytes_a_long_line_and_a_far_timestamp_on_spark_as_on_the_local_engine(tmp_path):
    stream = tmp_path / "s.tnt"
    lines = [f'{1000 * k} <{EX}a{k}> <{EX}p> "{k}" .'.encode() for k in range(1, 9)]
    lines[2] = f'3000 <{EX}a3> <{EX}p> "'.encode() + b"\xff\xfe" + b'" .'
    lines[4] = f'5000 <{EX}a5> <{EX}p> "{"x" * 3000}" .'.encode()
    lines[6] = f'2004-08-08T06:05:00Z <{EX}a7> <{EX}p> "7" .'.encode()
    stream.write_bytes(b"\n".join(lines) + b"\n")
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 2s STEP 1s] WHERE {{ ?s ?p ?o }}\n")
    args = ["query", query, "--stream", f"{EX}s={stream}", "--max-line-bytes", "2K"]
    local_status, local, local_err = run(*args)
    started = time.monotonic()
    status, spark, err = run(*args, "--engine", "spark", "--batch-lines", "3")
    assert time.monotonic() - started < 240
    assert status == local_status == 0 and spark == local and len(local) > 5
    for line, says in ((3, "not UTF-8 text (byte 0xff"), (5, "line longer than 2048 bytes")):
        assert any(record.startswith(f"{stream}:{line}: {says}") for record in err), (line, err)
        assert any(record.startswith(f"{stream}:{line}: {says}") for record in local_err)
    # the driver sees rows, not lines: an element it sets aside is named by its stream and its number there
    assert any(record.startswith(f"{stream}:7: timestamp 1091945100000 is") for record in local_err)
    assert any(record.startswith(f"{EX}s:") and "timestamp 1091945100000 is" in record for record in err), err
    assert {b["s"] for r in spark for b in r["bindings"]} == {f"<{EX}a{k}>" for k in (1, 2, 4, 6, 8)}
