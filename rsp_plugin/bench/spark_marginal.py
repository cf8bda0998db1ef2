"""`rsp-plugin bench spark --marginal`: seconds per extra million triples, distributed mode next to one embedded core.

The workload of /work/shared/benchmarks.md ("Spark"): the SOSA stream of
`bench shapes` (observations of 3 triples, 20 sensors) at 1,000 triples per
second of event time, AVG(?v) per sensor over [RANGE 10s STEP 5s], plain and
under RDFS with the 6-class ontology as background; default options (the
`rsp_plugin.spark.run` defaults: a replay read as one micro-batch, partitions
one per task slot).

Each side runs at N and 2N triples (`--triples N`, default 500,000) and the
figure is the marginal cost, (t(2N) - t(N)) / N per million triples: start-up
(the JVM, the session, imports, the query's compilation) cancels out.

    embedded     `rsp-plugin query ... -q` as a whole process pinned to one CPU (wall seconds)
    distributed  `rsp_plugin.spark.run(..., mode="distributed")` on local[2], in a child process that
                 started the session and warmed it up first (wall seconds of `run(...).wait()`)

throughput ratio = embedded s/M / distributed s/M (the target: >= 1.5). On a
shared machine wall time follows the other processes' load, so CPU seconds are
measured too (the embedded process's; Spark's whole process tree: JVM, Python
workers, driver): CPU s/M, and the ratio a free machine would give at best,
embedded CPU s/M / (Spark CPU s/M / 2 cores). Both answers are compared,
instant by instant. Then the fixed cost: a 100-triple
stream through `rsp-plugin query ... --engine spark --mode distributed` as a
whole process (JVM start included; target <= 15 s), and with `--project N`
what N one-core executors would make of it, from Spark's own stage metrics of
runs whose stream is cut into N pieces (as a session on them cuts it): the
marginal cost per stage kind and of the driver between stages, at 1 and at N
executors, and which part bounds it (`spark_modes.project_marginal`; the
target: >= 6x from 1 to 10 executors), then the whole 2N run with its fixed
cost (`spark_modes.project_stages`).

Medians of `--repeat` runs (default 3): the Spark runs first (one session),
then the embedded ones.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .shapes import EX, ONTOLOGY, ONTOLOGY_IRI, STREAM, continuous_query, write_stream

RATE = 1_000
PROFILES = ("plain", "rdfs")
DEFAULT_TRIPLES = 500_000
QUICK_TRIPLES = 30_000


def run(options) -> int:
    profiles = list(options.workloads) or list(PROFILES)
    unknown = [name for name in profiles if name not in PROFILES]
    if unknown:
        print(f"rsp-plugin: unknown workload(s) for bench spark --marginal: {', '.join(unknown)} "
              f"(expected: {', '.join(PROFILES)})", file=sys.stderr)
        return 2
    size = options.triples or (QUICK_TRIPLES if options.quick else DEFAULT_TRIPLES)
    repeat = max(1, options.repeat or 3)
    range_s, step_s = (options.range_steps or [(10, 5)])[0]
    master = (options.masters or ["local[2]"])[0]
    with tempfile.TemporaryDirectory(prefix="rsp-bench-marginal-") as scratch:
        folder = Path(scratch)
        streams = {count: folder / f"stream-{count}.tnt" for count in (size, 2 * size, 100)}
        for count, path in streams.items():
            write_stream(path, count, RATE)
        ontology = folder / "ontology.ttl"
        ontology.write_text(ONTOLOGY)
        queries = {}
        for profile in profiles:
            queries[profile] = folder / f"{profile}.rq"
            queries[profile].write_text(continuous_query(profile, range_s, step_s))
        print(f"Distributed mode ({master}) against the embedded engine pinned to one CPU: the SOSA stream at "
              f"{RATE:,} triples/s of event time, AVG per sensor over [RANGE {range_s}s STEP {step_s}s], "
              f"N = {size:,} and 2N triples; median of {repeat}")
        config = {"master": master, "queries": {p: str(q) for p, q in queries.items()}, "ontology": str(ontology),
                  "streams": {str(k): str(v) for k, v in streams.items()}, "sizes": [size, 2 * size],
                  "repeat": repeat, "project": options.project, "folder": str(folder)}
        spark = _spark_child(config)
        embedded: dict = {}
        for profile in profiles:
            for count in (size, 2 * size):
                embedded[(profile, count)] = [_embedded(queries[profile], streams[count], ontology, folder)
                                              for _ in range(repeat)]
        rows = spark.get("rows", [])
        print()
        header = (f"{'workload':<9} {'side':<12} {'N s':>7} {'2N s':>7} {'s / M':>7} {'triples/s':>11} "
                  f"{'ratio':>6} {'CPU s/M':>8} {'CPU ratio':>9}  same answers")
        print(header)
        print("-" * len(header))
        for profile in profiles:
            local_wall = [statistics.median(run[0][0] for run in embedded[(profile, count)]) for count in (size, 2 * size)]
            local_cpu = [statistics.median(run[0][1] for run in embedded[(profile, count)]) for count in (size, 2 * size)]
            local_m, local_cpu_m = _marginal(*local_wall, size), _marginal(*local_cpu, size)
            print(f"{profile:<9} {'embedded':<12} {local_wall[0]:>7.2f} {local_wall[1]:>7.2f} {_shown(local_m):>7} "
                  f"{_rate(local_m):>11} {'':>6} {_shown(local_cpu_m):>8}")
            found = {row["size"]: row for row in rows if row["profile"] == profile}
            if size not in found or 2 * size not in found:
                print(f"{profile:<9} {'distributed':<12} not run (see stderr)")
                continue
            spark_m = _marginal(found[size]["seconds"], found[2 * size]["seconds"], size)
            spark_cpu_m = _marginal(found[size]["cpu"], found[2 * size]["cpu"], size)
            same = all(found[count]["answers"] == embedded[(profile, count)][0][1] for count in (size, 2 * size))
            ratio = _ratio(local_m, spark_m)
            cpu_ratio = _ratio(local_cpu_m, None if spark_cpu_m is None else spark_cpu_m / 2)
            print(f"{profile:<9} {'distributed':<12} {found[size]['seconds']:>7.2f} {found[2 * size]['seconds']:>7.2f} "
                  f"{_shown(spark_m):>7} {_rate(spark_m):>11} {ratio:>6} {_shown(spark_cpu_m):>8} {cpu_ratio:>9}  "
                  f"{'yes' if same else 'NO'}   (runs: {_runs(found[size])} / {_runs(found[2 * size])})")
        fixed = [_fixed_cost(queries[profiles[0]], streams[100], ontology, folder, master) for _ in range(repeat)]
        print(f"\nfixed cost: {profiles[0]} over a 100-triple stream through --engine spark --mode distributed "
              f"--master {master}, the whole process: {statistics.median(fixed):.1f} s (median of {repeat}: "
              f"{', '.join(f'{s:.1f}' for s in fixed)})")
        projection = spark.get("projection")
        if projection:
            print()
            print(projection, end="")
    return 0


def _marginal(at_n: float, at_2n: float, size: int) -> float | None:
    """Seconds per extra million triples; None when the second run was not the slower (noise)."""
    extra = at_2n - at_n
    return extra / size * 1e6 if extra > 0 else None


def _shown(value: float | None) -> str:
    return "noise" if value is None else f"{value:.2f}"


def _rate(per_million: float | None) -> str:
    return "-" if per_million is None else f"{1e6 / per_million:,.0f}"


def _ratio(local: float | None, spark: float | None) -> str:
    return "-" if local is None or spark is None else f"{local / spark:.2f}"


def _runs(row: dict) -> str:
    return ", ".join(f"{seconds:.2f}" for seconds in row["runs"])


def _pinned_one_cpu():
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(available) > 1:
        os.sched_setaffinity(0, available[-1:])


def _embedded(query: Path, stream: Path, ontology: Path, folder: Path) -> tuple[float, dict]:
    """`rsp-plugin query` on one CPU: (wall seconds of the whole process, its answers by instant)."""
    out = folder / "embedded.jsonl"
    command = [sys.executable, "-m", "rsp_plugin.cli", "query", str(query), "--stream", f"{STREAM}={stream}",
               "--background", f"{ONTOLOGY_IRI}={ontology}", "-q"]
    import resource

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    with open(out, "w") as handle:
        subprocess.run(command, stdout=handle, stderr=subprocess.DEVNULL, check=True, env=_environment(),
                       preexec_fn=_pinned_one_cpu)
    seconds = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return (seconds, cpu), by_instant(json.loads(line) for line in out.read_text().splitlines() if line.strip())


def _fixed_cost(query: Path, stream: Path, ontology: Path, folder: Path, master: str) -> float:
    command = [sys.executable, "-m", "rsp_plugin.cli", "query", str(query), "--stream", f"{STREAM}={stream}",
               "--background", f"{ONTOLOGY_IRI}={ontology}", "--engine", "spark", "--mode", "distributed",
               "--master", master, "-q"]
    started = time.perf_counter()
    subprocess.run(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=True, env=_environment(),
                   cwd=folder)
    return time.perf_counter() - started


def _environment() -> dict:
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    return env


def by_instant(lines) -> dict:
    """Per instant its bindings, sorted: what is compared."""
    out: dict = {}
    for line in lines:
        out[str(line["t"])] = sorted(json.dumps(b, sort_keys=True) for b in line.get("bindings", []))
    return out


# the Spark side: one child process, one session -----------------------------------------------------------


def _spark_child(config: dict) -> dict:
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(config, handle)
    errors = tempfile.TemporaryFile("w+")
    try:
        process = subprocess.run([sys.executable, "-m", "rsp_plugin.bench.spark_marginal", handle.name],
                                 stdout=subprocess.PIPE, stderr=errors, text=True, env=_environment(),
                                 start_new_session=True)  # (its process tree is one session: its CPU is counted)
    finally:
        Path(handle.name).unlink(missing_ok=True)
    found = {}
    for line in process.stdout.splitlines():
        if line.startswith("@@result "):
            found = json.loads(line[9:])
    if process.returncode:
        errors.seek(0)
        lines = [line.strip() for line in errors.read().splitlines() if line.strip()]
        cause = next((line for line in reversed(lines) if "Error" in line or "Exception" in line),
                     lines[-1] if lines else "no message")
        print(f"rsp-plugin: the Spark run stopped (exit {process.returncode}): {cause[:300]}", file=sys.stderr)
    errors.close()
    return found


def _child(config_path: str) -> None:
    from ..runtime.engine import RSPEngine
    from ..spark import run as spark_run
    from ..spark import spark_session
    from .spark_modes import _session_cpu, _stage_metrics, cores_of, project_marginal, project_stages

    config = json.loads(Path(config_path).read_text())
    project = config.get("project")
    spark = spark_session(config["master"],
                          conf={"spark.ui.enabled": "true", "spark.ui.port": "0"} if project else None)

    def engine_for(profile: str):
        engine = RSPEngine()
        engine.register_stream(STREAM)
        engine.add_graph(ONTOLOGY_IRI, config["ontology"])
        engine.register_query(Path(config["queries"][profile]).read_text(), filename=config["queries"][profile])
        return engine

    def once(profile: str, stream: str, pieces: int | None = None) -> tuple[float, float, list]:
        results: list = []
        cpu = _session_cpu()
        started = time.perf_counter()
        spark_run(spark, engine_for(profile), {STREAM: stream}, results.append, mode="distributed",
                  progress=False, options={"numPartitions": pieces} if pieces else None).wait()
        return time.perf_counter() - started, _session_cpu() - cpu, results

    for profile in config["queries"]:  # the session, the workers and their imports warm
        once(profile, config["streams"]["100"])
        once(profile, config["streams"][str(config["sizes"][0])])
    rows = []
    projection = None
    for profile in config["queries"]:
        for size in config["sizes"]:
            runs, cpus = [], []
            answers = None
            for _ in range(config["repeat"]):
                seconds, cpu, results = once(profile, config["streams"][str(size)])
                runs.append(seconds)
                cpus.append(cpu)
                answers = by_instant(result.to_json() for result in results)
            rows.append({"profile": profile, "size": size, "seconds": statistics.median(runs), "runs": runs,
                         "cpu": statistics.median(cpus), "answers": answers})
    if project:
        # the N and 2N streams cut into as many pieces as the projected executors have task slots (as a
        # session on them would cut them: `numPartitions` = task slots), each stage's tasks then spread
        # over them: the marginal cost per stage kind (N and 2N runs in turn), and the whole 2N run
        projection = ""
        repeat = config["repeat"]
        slots = cores_of(config["master"]) or 2
        for profile in config["queries"]:
            measured: dict = {size: [] for size in config["sizes"]}
            for _ in range(repeat):
                for size in config["sizes"]:
                    before = {stage["id"] for stage in _stage_metrics(spark)}
                    seconds = once(profile, config["streams"][str(size)], pieces=project)[0]
                    measured[size].append(([stage for stage in _stage_metrics(spark) if stage["id"] not in before],
                                           seconds))
            size, large = config["sizes"]
            where = f"distributed {profile} on {config['master']}, each run in {project} pieces"
            projection += project_marginal(measured, size, project, where, slots) + "\n"
            projection += ("the whole run, fixed cost included (the streaming query's start and end, the driver "
                           "between stages):\n")
            projection += project_stages([stage for stages, _ in measured[large] for stage in stages],
                                         sum(seconds for _, seconds in measured[large]), large * repeat, project,
                                         f"{where} ({repeat} runs of {large:,} triples)") + "\n"
    sys.stdout.write("@@result " + json.dumps({"rows": rows, "projection": projection}) + "\n")
    sys.stdout.flush()
    spark.stop()


__all__ = ["run", "by_instant", "EX"]


if __name__ == "__main__":
    _child(sys.argv[1])
