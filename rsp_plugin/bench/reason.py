"""`rsp-plugin bench reason`: whole-process `rsp-plugin reason` against the per-line path it replaced.

The streams of ../shared/benchmarks.md's Laser micro-benchmarks (`diamond`: N new
atoms `p(s_k,o_k)` per time point; `join`: the chains `p(c_k,c_k+1), p(c_k+1,c_k+2)`,
2N atoms per time point, half of them repeats), window 20, N = 800, written to files
before any timer starts. Each is run as a whole process (interpreter start, imports,
reading, evaluating, printing), alternately:

    per-line  `per_line_reason` below: what `rsp-plugin reason` did before the batch path
              (formats.read_stream_file, replay.timeline, one json.dumps per time point)
    batch     `rsp-plugin reason` today (rsp_plugin.columnar.reason: blocks in, lines kept
              from the engine's changes)

Both must print the same lines (compared by digest). Figures: wall seconds and CPU
seconds (user + system of the child) per run, medians of `--repeat` runs, and the ratios
per-line / batch. The per-line path stays here, as the baseline, and nowhere else.

    python -m rsp_plugin.bench.reason PROGRAM STREAM     # the per-line path, as a process
"""

from __future__ import annotations

import hashlib
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .lars import WORKLOADS as LARS_WORKLOADS

WORKLOADS = ("diamond", "join")
#: the target of issue 10: whole-process `reason` at least this much faster than the per-line path
TARGET = 3.0


def per_line_reason(program_path: str, stream_path: str, out) -> int:
    """The per-line `rsp-plugin reason` (before the batch path), kept as the benchmark's baseline:
    every line read and parsed alone, a time point's facts gathered by `replay.timeline`, the
    snapshot rebuilt, sorted and JSON-encoded atom by atom at every time point."""
    from ..core import limits
    from ..io.formats import format_fact, read_stream_file
    from ..io.replay import timeline
    from ..lars.engine import IncrementalEngine
    from ..lars.syntax import parse_program_file

    program = parse_program_file(program_path)
    stream = Path(stream_path)
    terms = program.terms
    rejected = 0

    def set_aside(record) -> None:
        nonlocal rejected
        rejected += 1
        print(record, file=sys.stderr)

    engine = IncrementalEngine(program, start=None, pruning=True)
    shown: dict = {}
    with stream.open("rb") as handle:
        elements = read_stream_file(stream, terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                    handle=handle, max_line_bytes=limits.MAX_LINE_BYTES)
        for point, facts in timeline(elements, on_rejected=set_aside, filename=str(stream),
                                     max_gap=limits.MAX_GAP_TIME_POINTS):
            report = engine.advance_to(point, facts)
            for fact in report.stopped:
                shown.pop(fact, None)
            for fact in report.started:
                if fact[0] not in program.hidden:
                    shown[fact] = format_fact(fact, terms)
            out.write(json.dumps({"t": point, "atoms": sorted(shown.values())}, ensure_ascii=False) + "\n")
    return rejected


def write_files(name: str, window: int, rate: int, points: int, folder: Path) -> tuple[Path, Path, int]:
    """The workload's program and stream as files; and how many distinct atoms the stream holds."""
    workload = LARS_WORKLOADS[name]
    program = folder / f"{name}-{window}.lars"
    program.write_text(workload.program(window) + "\n")
    stream = folder / f"{name}-{window}-{rate}-{points}.stream"
    distinct = 0
    with stream.open("w", encoding="utf-8") as handle:
        for t, atoms in enumerate(workload.stream(rate, points, 1)):
            distinct += len(set(atoms))
            handle.writelines(f"{t} {predicate}({','.join(args)})\n" for predicate, args in atoms)
    return program, stream, distinct


def _process(command: list[str], folder: Path) -> dict:
    """Run one whole process; its wall and CPU seconds and the digest of what it printed."""
    target = folder / "out.jsonl"
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with target.open("wb") as sink:
        done = subprocess.run(command, stdout=sink, stderr=subprocess.PIPE, check=False,
                              env=dict(os.environ, POLARS_MAX_THREADS="1"))
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr.decode(errors='replace')}")
    digest = hashlib.sha256()
    lines = 0
    with target.open("rb") as printed:
        for line in printed:
            digest.update(line)
            lines += 1
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return {"wall": wall, "cpu": cpu, "digest": digest.hexdigest(), "lines": lines}


def measure(program: Path, stream: Path, repeat: int, folder: Path) -> dict:
    """Both paths on the same files, alternately, `repeat` times each: medians and whether they agree."""
    commands = {
        "per-line": [sys.executable, "-m", "rsp_plugin.bench.reason", str(program), str(stream)],
        "batch": [sys.executable, "-m", "rsp_plugin.cli", "reason", str(program), "--stream", str(stream)],
    }
    runs: dict[str, list[dict]] = {name: [] for name in commands}
    for _ in range(repeat):
        for name, command in commands.items():
            runs[name].append(_process(command, folder))
    figures = {}
    for name, done in runs.items():
        figures[name] = {"wall": statistics.median(run["wall"] for run in done),
                         "cpu": statistics.median(run["cpu"] for run in done),
                         "lines": done[0]["lines"], "digests": {run["digest"] for run in done}}
    figures["same"] = len(figures["per-line"]["digests"] | figures["batch"]["digests"]) == 1
    return figures


def run(options, out=print) -> int:
    names = options.workloads or list(WORKLOADS)
    unknown = [name for name in names if name not in LARS_WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(LARS_WORKLOADS)}")
        return 2
    windows = options.windows or [20]
    rates = options.rates or ([100] if options.quick else [800])
    points = 40 if options.quick else options.time_points
    repeat = 1 if options.quick else max(1, options.repeat)
    out(f"Whole-process `rsp-plugin reason` vs the per-line path it replaced, {points} time points, "
        f"median of {repeat} (runs alternate); ratio = per-line / batch; target >= {TARGET:g}x.")
    header = (f"{'workload':<8} {'n':>3} {'atoms/t':>7} {'lines':>6} {'per-line s':>10} {'cpu s':>7} "
              f"{'batch s':>8} {'cpu s':>7} {'wall ratio':>10} {'cpu ratio':>9} {'same':>5}")
    out(header)
    out("-" * len(header))
    failed = False
    with tempfile.TemporaryDirectory(prefix="rsp-bench-reason-") as scratch:
        folder = Path(scratch)
        for name in names:
            for window in windows:
                for rate in rates:
                    program, stream, distinct = write_files(name, window, rate, points, folder)
                    figures = measure(program, stream, repeat, folder)
                    old, new = figures["per-line"], figures["batch"]
                    failed |= not figures["same"]
                    out(f"{name:<8} {window:>3} {distinct / points:>7.0f} {new['lines']:>6} {old['wall']:>10.2f} "
                        f"{old['cpu']:>7.2f} {new['wall']:>8.2f} {new['cpu']:>7.2f} "
                        f"{old['wall'] / new['wall']:>9.1f}x {old['cpu'] / new['cpu']:>8.1f}x "
                        f"{'yes' if figures['same'] else 'NO':>5}")
                    sys.stdout.flush()
    return 1 if failed else 0


if __name__ == "__main__":
    count = per_line_reason(sys.argv[1], sys.argv[2], sys.stdout)
    if count:
        print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
