"""`rsp-plugin bench throughput`: triples per second from a file to results, per-fact path vs batch path.

Workloads over a generated SOSA-style `.tnt` stream (`sosa.py`: every
observation a new IRI, 4 triples, 10,000 triples per second of event time):

    parse     (a) the file read into id triples: the per-line reader vs the block reader
    window    (b) + a [RANGE 10s STEP 5s] window and the 3-pattern aggregate of `sosa.AGGREGATE`
    rdfs      (c) + RDFS entailment with a small ontology (the aggregate reads an entailed class)
    owl-rl    (d) + OWL 2 RL entailment, same ontology

Every run is its own process with POLARS_MAX_THREADS=1 (one core), on a file
written before any timer starts; each workload runs the per-fact path (the
query CLI's per-line replay into `RSPEngine(batch=False)`) and the batch path
(`rsp-plugin query`'s block replay) on the same file, and both must give the
same JSON lines (checked by hash). Figures: triples / wall time of the run
inside the process (`tr/s`), and of the whole process with interpreter
start and imports (`whole tr/s`); `ms/eval` is the median wall time of one
evaluation of the query (windows of 100k triples), `cpu ms/ev` its CPU time (what
the evaluation costs, whatever else the machine runs); ratio = batch / per-fact.
The per-fact path is slow: on sizes above `--old-limit` (default 1M) it runs on
the first `--old-limit` triples of the same file (its cost per triple is flat,
the windows being full after 10 s), and the table says so.

A PNG plot of triples per second per workload goes to `--plot` (default
`throughput.png`; matplotlib, imported only here).
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

from . import sosa

WORKLOADS = ("parse", "window", "rdfs", "owl-rl")
PROFILE_OF = {"window": "off", "rdfs": "rdfs", "owl-rl": "owl-rl"}
TARGETS = {"window": 600_000, "rdfs": 150_000, "owl-rl": 100_000}


def run(options, out=print) -> int:
    names = options.workloads or list(WORKLOADS)
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    sizes = options.sizes or ([100_000] if options.quick else [1_000_000, 10_000_000])
    old_limit = options.old_limit or (100_000 if options.quick else 1_000_000)
    repeat = 1 if options.quick else max(1, min(options.repeat, 3))
    rows = []
    with tempfile.TemporaryDirectory(prefix="rsp-bench-throughput-") as scratch:
        folder = Path(scratch)
        ontology = folder / "ontology.ttl"
        ontology.write_text(sosa.ONTOLOGY)
        out(f"Throughput, one core (POLARS_MAX_THREADS=1), SOSA-style stream at {sosa_rate():,} triples/s of "
            f"event time, [RANGE 10s STEP 5s]; median of {repeat}; ratio = batch / per-fact.")
        out("tr/s: triples / CPU time of the run in its process (one core's work, whatever else the machine "
            "runs); wall tr/s: / wall time; whole: the whole process, start and imports included (wall); "
            "ms/eval, cpu ms/ev: median wall / CPU time of one evaluation.")
        header = (f"{'workload':<8} {'triples':>11} {'path':<9} {'tr/s':>11} {'wall tr/s':>11} {'whole tr/s':>11} "
                  f"{'cpu s':>8} {'ms/eval':>8} {'cpu ms/ev':>9} {'ratio':>7}  note")
        out(header)
        out("-" * len(header))
        for size in sizes:
            stream = folder / f"stream-{size}.tnt"
            sosa.write(stream, size)
            old_stream = stream
            if size > old_limit:
                old_stream = folder / f"stream-{old_limit}.tnt"
                if not old_stream.exists():
                    sosa.write(old_stream, old_limit)
            for name in names:
                old = _median([_child(name, "per-fact", old_stream, ontology) for _ in range(repeat)])
                new = _median([_child(name, "batch", stream, ontology) for _ in range(repeat)])
                same = old_stream != stream or old["digest"] == new["digest"]
                note = "" if same else "RESULTS DIFFER"
                if old_stream != stream:
                    note = f"per-fact on the first {old['triples']:,}"
                ratio = new["cpu_rate"] / old["cpu_rate"] if old["cpu_rate"] else float("nan")
                for path, figures in (("per-fact", old), ("batch", new)):
                    out(f"{name:<8} {figures['triples']:>11,} {path:<9} {figures['cpu_rate']:>11,.0f} "
                        f"{figures['rate']:>11,.0f} {figures['whole_rate']:>11,.0f} {figures['cpu']:>8.2f} "
                        f"{_ms(figures):>8} {_ms(figures, 'eval_cpu_ms'):>9} {'' if path == 'per-fact' else f'{ratio:6.1f}x':>7}  "
                        f"{note if path == 'batch' else ''}")
                sys.stdout.flush()
                rows.append({"workload": name, "triples": size, "per-fact": old, "batch": new, "ratio": ratio})
    plot = options.plot or "throughput.png"
    if plot != "-":
        _plot(rows, plot)
        out(f"plot: {plot}")
    return 0


def sosa_rate() -> int:
    return 10_000


def _ms(figures, name: str = "eval_ms") -> str:
    return f"{figures[name]:.1f}" if figures.get(name) is not None else "-"


def _median(runs: list[dict]) -> dict:
    chosen = sorted(runs, key=lambda figures: figures["cpu"])[len(runs) // 2]
    return dict(chosen)


def _child(workload: str, path: str, stream: Path, ontology: Path) -> dict:
    environment = dict(os.environ, POLARS_MAX_THREADS="1")
    started = time.perf_counter()
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.bench.throughput", workload, path, str(stream),
                           str(ontology)], capture_output=True, text=True, env=environment, check=False)
    whole = time.perf_counter() - started
    if done.returncode != 0:
        raise RuntimeError(f"bench throughput {workload} {path} failed:\n{done.stderr}")
    figures = json.loads(done.stdout.strip().splitlines()[-1])
    figures["whole_seconds"] = whole
    figures["whole_rate"] = figures["triples"] / whole
    return figures


# one run, in its own process ------------------------------------------------------------------


def _measure(workload: str, path: str, stream: Path, ontology: Path) -> dict:
    """Imports and the query's registration come first; the timers cover reading, windows,
    reasoning, evaluation and the results' JSON (a digest of the lines)."""
    from ..io.formats import read_tnt  # noqa: F401  (imported before the timers: not what is measured)
    from ..runtime.engine import RSPEngine  # noqa: F401

    if path == "batch":
        import numpy.ma  # noqa: F401  (polars imports it on its first numpy column)
        import polars  # noqa: F401
        import pyarrow.compute  # noqa: F401

        from ..columnar import blocks, query, replay  # noqa: F401
    digest = hashlib.sha256()
    evaluations: list[float] = []
    if workload == "parse":
        started, cpu = time.perf_counter(), time.process_time()
        triples = _parse(path, stream, digest)
    else:
        engine = _engine(workload, path, ontology, digest, evaluations)
        started, cpu = time.perf_counter(), time.process_time()
        triples = _replay(engine, path, stream)
    seconds = time.perf_counter() - started
    cpu = time.process_time() - cpu
    return {"workload": workload, "path": path, "triples": triples, "seconds": seconds, "cpu": cpu,
            "rate": triples / seconds if seconds else 0.0, "cpu_rate": triples / cpu if cpu else 0.0,
            "eval_ms": 1000 * statistics.median(wall for wall, _ in evaluations) if evaluations else None,
            "eval_cpu_ms": 1000 * statistics.median(cpu for _, cpu in evaluations) if evaluations else None,
            "evaluations": len(evaluations), "digest": digest.hexdigest()}


def _parse(path: str, stream: Path, digest) -> int:
    from ..core.terms import Dictionary

    terms = Dictionary()
    count = 0
    if path == "per-fact":
        from ..io.formats import Rejected, read_tnt

        with stream.open(encoding="utf-8") as handle:
            for element in read_tnt(handle, terms, tick_ms=1, filename=str(stream)):
                if not isinstance(element, Rejected):
                    count += 1
    else:
        from ..columnar.blocks import read_tnt_blocks

        for block in read_tnt_blocks(stream, terms, tick_ms=1):
            count += len(block)
    digest.update(str(count).encode())
    return count


def _engine(workload: str, path: str, ontology: Path, digest, evaluations: list):
    from ..query.syntax import parse_query
    from ..runtime.engine import RSPEngine

    engine = RSPEngine(batch=path == "batch")
    engine.register_stream(sosa.STREAM)
    registered = engine.register_query(parse_query(sosa.query_text(PROFILE_OF[workload], str(ontology))))
    evaluate = registered.evaluator.evaluate

    def timed(*arguments):
        begin, cpu = time.perf_counter(), time.process_time()
        answer = evaluate(*arguments)
        evaluations.append((time.perf_counter() - begin, time.process_time() - cpu))
        return answer

    registered.evaluator.evaluate = timed
    registered.subscribe(lambda result: digest.update(json.dumps(result.to_json()).encode()))
    return engine


def _replay(engine, path: str, stream: Path) -> int:
    if path == "batch":
        from ..columnar.replay import replay_file

        count = replay_file(engine, sosa.STREAM, stream)
    else:
        count = _per_line_replay(engine, stream)
    engine.finish()
    return count


def _per_line_replay(engine, stream: Path) -> int:
    """The query CLI's per-line replay (formats.read_tnt, a batch per timestamp)."""
    from ..io.formats import Rejected, read_tnt

    count = 0
    batch: list = []
    current = None
    with stream.open(encoding="utf-8") as handle:
        for element in read_tnt(handle, engine.terms, tick_ms=1, filename=str(stream)):
            if isinstance(element, Rejected):
                continue
            count += 1
            if element.time_point != current:
                if batch:
                    engine.push(sosa.STREAM, batch)
                    batch = []
                current = element.time_point
                if engine.watermark is None or current > engine.watermark:
                    engine.advance_to(current)
            batch.append(element)
    if batch:
        engine.push(sosa.STREAM, batch)
    return count


def _plot(rows: list[dict], target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['workload']}\n{row['triples'] / 1e6:g}M" for row in rows]
    old = [row["per-fact"]["cpu_rate"] for row in rows]
    new = [row["batch"]["cpu_rate"] for row in rows]
    figure, axes = plt.subplots(figsize=(max(6, 1.2 * len(rows)), 4))
    places = range(len(rows))
    axes.bar([p - 0.2 for p in places], old, 0.4, label="per-fact path")
    axes.bar([p + 0.2 for p in places], new, 0.4, label="batch path")
    for place, row in zip(places, rows):
        axes.annotate(f"{row['ratio']:.1f}x", (place + 0.2, row["batch"]["cpu_rate"]), ha="center", va="bottom",
                      fontsize=8)
    axes.set_xticks(list(places), labels)
    axes.set_ylabel("triples / CPU second (one core)")
    axes.set_yscale("log")
    axes.set_title("rsp-plugin bench throughput")
    axes.legend()
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    workload, path, stream, ontology = sys.argv[1:5]
    print(json.dumps(_measure(workload, path, Path(stream), Path(ontology))))
