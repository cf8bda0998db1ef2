"""`rsp-plugin bench spark reason-diamond reason-join`: temporal rules on Spark's executors against one embedded core.

The LARS benchmark programs of `bench/lars.py` (default window 20, 800 atoms per
time point):

    reason-diamond   q(X,Y) :- [RANGE n] DIAMOND p(X,Y) .                  (key-local, and time-sliceable)
    reason-join      q(X,Z) :- [RANGE n] DIAMOND p(X,Y), [RANGE n] DIAMOND p(Y,Z) .   (time slices only)

on a stream of N and of 2N time points (`--time-points`, default 300), with
`--changes` (a snapshot line repeats the whole window at every time point,
16,800 atoms for diamond: the figure would be the output's size, not the
reasoning): the embedded engine as a whole command (`rsp-plugin reason PROGRAM
--stream FILE --changes`)
pinned to one core, and `--engine spark --mode distributed` on each master
(`--masters`, default local[1] and local[2]) in a process of its own pinned to
as many cores as the master has task slots (`spark_modes.pin_to_cores`), its
session started and warmed up before any timer, each run timed from the
program's planning to its last line. The figure is the marginal cost, (seconds
at 2N - seconds at N) per million atoms: start-up and the first time points
cancel.
Every run's stdout is compared with the embedded engine's (`same`). Medians of
`--repeat` runs (default 1: the machine is shared).
"""

from __future__ import annotations

import hashlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .lars import WORKLOADS as LARS_WORKLOADS

#: workload -> the benchmark program of `bench/lars.py` it runs
WORKLOADS = {"reason-diamond": "diamond", "reason-join": "join"}
MASTERS = ["local[1]", "local[2]"]
EMBEDDED = "embedded"


def write_stream(path: Path, workload: str, rate: int, points: int) -> int:
    """The workload's stream as `.stream` lines; returns how many atoms it has."""
    atoms = 0
    with path.open("w") as handle:
        for t, facts in enumerate(LARS_WORKLOADS[workload].stream(rate, points, 1)):
            handle.write("".join(f"{t} {predicate}({','.join(args)})\n" for predicate, args in facts))
            atoms += len(facts)
    return atoms


def run(options) -> int:
    quick = options.quick
    window = options.windows[0] if options.windows else (5 if quick else 20)
    rate = options.rates[0] if options.rates else (100 if quick else 800)
    points = 40 if quick else options.time_points
    masters = list(options.masters or MASTERS)
    repeat = max(1, options.repeat or 1)
    print(f"temporal rules on Spark (--mode distributed) against one embedded core: window {window}, {rate} atoms "
          f"per time point, {points} and {2 * points} time points, --changes; marginal seconds per million atoms; "
          f"median of {repeat}")
    print()
    header = (f"{'workload':<15} {'runner':<24} {'s at N':>8} {'s at 2N':>8} {'s / M atoms':>12} "
              f"{'atoms/s':>10} {'same':>5}")
    print(header)
    print("-" * len(header))
    with tempfile.TemporaryDirectory(prefix="rsp-bench-spark-reason-") as scratch:
        folder = Path(scratch)
        for name in options.workloads:
            workload = WORKLOADS[name]
            program = folder / f"{workload}.lars"
            program.write_text(LARS_WORKLOADS[workload].program(window))
            streams = []
            for count in (points, 2 * points):
                stream = folder / f"{workload}-{count}.stream"
                streams.append((stream, write_stream(stream, workload, rate, count)))
            extra = streams[1][1] - streams[0][1]
            marginal = {}
            want = None
            spark_runs = _spark_runs(masters, program, [stream for stream, _ in streams], repeat)
            for runner in [EMBEDDED, *masters]:
                if runner == EMBEDDED:
                    timed = [[_embedded(program, stream) for _ in range(repeat)] for stream, _ in streams]
                else:
                    timed = spark_runs.get(runner)
                    if timed is None:
                        continue
                seconds = [statistics.median(wall for wall, _ in runs) for runs in timed]
                digests = [runs[0][1] for runs in timed]
                if runner == EMBEDDED:
                    want = digests
                per_million = (seconds[1] - seconds[0]) / extra * 1e6
                marginal[runner] = per_million
                label = "embedded, 1 core" if runner == EMBEDDED else f"spark {runner}"
                rate_text = f"{1e6 / per_million:>10,.0f}" if per_million > 0 else f"{'-':>10}"
                print(f"{name:<15} {label:<24} {seconds[0]:>8.2f} {seconds[1]:>8.2f} {per_million:>12.2f} "
                      f"{rate_text} {'yes' if digests == want else 'NO':>5}")
                sys.stdout.flush()
            _ratios(name, marginal)
    return 0


def _ratios(name: str, marginal: dict) -> None:
    """The speed-ups the issue asks about: local[1] -> local[2], and local[2] against one embedded core."""
    two, one, embedded = marginal.get("local[2]"), marginal.get("local[1]"), marginal.get(EMBEDDED)
    said = []
    if one and two and one > 0 and two > 0:
        said.append(f"local[1] -> local[2] {one / two:.2f}x")
    if embedded and two and embedded > 0 and two > 0:
        said.append(f"local[2] against one embedded core {embedded / two:.2f}x")
    if said:
        print(f"{name:<15} {'; '.join(said)}")


def _embedded(program: Path, stream: Path) -> tuple[float, str]:
    """(wall seconds of `rsp-plugin reason PROGRAM --stream STREAM` pinned to one core, a digest of its stdout)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []

    def pinned() -> None:
        if len(available) > 1:
            os.sched_setaffinity(0, available[:1])

    digest = hashlib.sha256()
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        command = [sys.executable, "-m", "rsp_plugin.cli", "reason", str(program), "--stream", str(stream), "--changes"]
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=err, env=env, preexec_fn=pinned)
        for block in iter(lambda: process.stdout.read(1 << 20), b""):
            digest.update(block)
        process.wait()
        wall = time.perf_counter() - started
        if process.returncode:
            err.seek(0)
            lines = err.read().decode("utf-8", "replace").strip().splitlines()
            raise SystemExit(f"rsp-plugin: the embedded run stopped (exit {process.returncode}): "
                             f"{lines[-1] if lines else 'no message'}")
    return wall, digest.hexdigest()


def _spark_runs(masters: list[str], program: Path, streams: list[Path], repeat: int) -> dict:
    """master -> [[(seconds, digest)] per run] per stream, each master in a child process of its own (Spark
    allows one session per process)."""
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    found = {}
    for master in masters:
        request = json.dumps({"program": str(program), "streams": [str(s) for s in streams], "repeat": repeat})
        with tempfile.TemporaryFile("w+") as err:
            done = subprocess.run([sys.executable, "-m", "rsp_plugin.bench.spark_reason", master, request],
                                  stdout=subprocess.PIPE, stderr=err, text=True, env=env, start_new_session=True)
            rows = [json.loads(line[len(_ROW):]) for line in done.stdout.splitlines() if line.startswith(_ROW)]
            if done.returncode or not rows:
                err.seek(0)
                lines = [line for line in err.read().splitlines() if line.strip()]
                print(f"rsp-plugin: the {master} run stopped (exit {done.returncode}): "
                      f"{lines[-1][:300] if lines else 'no message'}", file=sys.stderr)
                continue
        found[master] = rows[0]
    return found


_ROW = "@@runs "


def _child(master: str, request: str) -> None:
    """One master's runs: pinned, the session started and warmed up, then each stream `repeat` times."""
    import io

    from ..spark.reason import Settings, plan
    from ..spark.reason import run as run_plan
    from ..spark.session import spark_session
    from .spark_modes import pin_to_cores

    asked = json.loads(request)
    pin_to_cores(master)
    spark = spark_session(master)
    program, streams = asked["program"], asked["streams"]

    def once(stream: str) -> tuple[float, str]:
        out = io.StringIO()
        started = time.perf_counter()
        chosen = plan(Settings(program=program, stream=stream, language="lars", mode="distributed", changes=True))
        run_plan(chosen, spark, out, sys.stderr)
        wall = time.perf_counter() - started
        return wall, hashlib.sha256(out.getvalue().encode("utf-8")).hexdigest()

    once(streams[0])  # (warm-up: the executors' Python workers, the program's first plan)
    runs = [[once(stream) for _ in range(asked["repeat"])] for stream in streams]
    print(_ROW + json.dumps(runs), flush=True)
    spark.stop()


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
