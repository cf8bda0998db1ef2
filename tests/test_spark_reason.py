"""`rsp-plugin reason --engine spark` on a real multi-process cluster writes what `--engine local` writes.

One `local-cluster[2,1,1024]` session (two executor JVMs with Python workers of
their own: `spark_cluster.ClusterWorker`) runs every command line here, in
driver mode (micro-batches of a few lines) and in distributed mode (time slices
read straight from the file, or every line judged on the driver and the work
shared out by key or by time slice); the local engine runs the same command
line in this process. stdout and stderr are compared exactly. The splits
themselves are checked at length without Spark (tests/test_spark_reason_split.py).
"""

from __future__ import annotations

from pathlib import Path

import pytest
from reason_split_cases import KeyedGenerator, local
from test_spark_reason_split import BUNDLED, benchmark

pytestmark = pytest.mark.spark

ROOT = Path(__file__).parent.parent
EXAMPLES = ROOT / "examples"


def both(cluster, program, stream, *extra, mode="distributed", batch_lines=40, note=""):
    """`reason PROGRAM --stream STREAM EXTRA` locally and on the cluster in `mode`: the same exit status 0,
    stdout and stderr (the cluster's after `note`, the line saying why a run stays on the driver)."""
    status, want, want_err = local(program, stream, *extra)
    assert status == 0, want_err
    status, got, err = cluster.run(["reason", program, "--stream", stream, *extra, "--engine", "spark",
                                    "--mode", mode, "--batch-lines", batch_lines])
    assert status == 0, err
    assert got == want
    assert err == note + want_err
    return got, err


@pytest.mark.parametrize("program, stream", BUNDLED)
def test_the_bundled_examples(cluster, program, stream):
    for mode in ("driver", "distributed"):
        got, _ = both(cluster, EXAMPLES / program, EXAMPLES / stream, mode=mode, batch_lines=60)
        assert got


def test_the_benchmark_programs(cluster, tmp_path):
    for name in ("diamond", "box", "join", "cooling"):
        program, stream = benchmark(tmp_path, name, window=4, rate=6, points=40)
        both(cluster, program, stream, *(("--changes", "--from", "5", "--to", "30") if name == "join" else ()))
    both(cluster, program, stream, mode="driver", batch_lines=100)


def test_generated_key_local_programs(cluster, tmp_path):
    """Seed 1 reads @T over the whole past (no time slice: one engine per key bucket, the lines judged on the
    driver); seed 0 is time-sliceable too."""
    for seed in (0, 1):
        generator = KeyedGenerator(seed)
        program, stream = tmp_path / f"p{seed}.lars", tmp_path / f"s{seed}.stream"
        program.write_text(generator.program())
        stream.write_text(generator.stream(60))
        both(cluster, program, stream, "--changes")


def test_lines_set_aside_and_a_program_left_on_the_driver(cluster, tmp_path):
    program, stream = benchmark(tmp_path, "join", window=3, rate=4, points=30)
    lines = stream.read_bytes().splitlines(keepends=True)
    for at, line in zip((9, 30, 40, 50), [b"3 p(\n", b"1 p(c1,c2)\n", b"900 p(x,y)\n", b"5 p(\xff,a)\n"]):
        lines.insert(at, line)
    stream.write_bytes(b"".join(lines))
    for mode in ("driver", "distributed"):
        _, err = both(cluster, program, stream, "--max-gap", "100", mode=mode)
        assert err.endswith("rsp-plugin: 4 stream lines set aside (see above)\n"), err
    counted = tmp_path / "counted.lars"
    counted.write_text("q(X,Z) :- [COUNT 5] DIAMOND p(X,Y), p(Y,Z) .\n")
    both(cluster, counted, stream, "--max-gap", "100",
         note=f"rsp-plugin: --mode distributed runs this program on the driver: rule q(X,Z) :- [COUNT 5] DIAMOND "
              f"p(X,Y), p(Y,Z) . at {counted}:1 has a tuple window ([COUNT n] counts the last n atoms of every key, "
              f"however far back)\n")
