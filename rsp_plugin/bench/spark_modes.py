"""`rsp-plugin bench spark`: driver-side, partitioned and distributed modes on 1 core, 2 cores and a 2-process cluster.

Three workloads over one generated `.tnt` stream (`write_observations`:
observations of 200 sensors, 3 triples each, 10,000 triples per second of
event time), each query in a shape the modes can run, keyed by the sensor:

    window   SELECT ?s (COUNT(?o) AS ?n) [RANGE 1s STEP 1s] { ?o ex:observedBy ?s } GROUP BY ?s
    rdfs     ENTAILMENT RDFS over a small ontology (FROM: subclasses, domains, ranges, a subproperty),
             { ?o ex:observedBy ?s . ?s a ex:Device } GROUP BY ?s: every triple materialized (driver-side
             and distributed); partitioned mode routes only what the query can read (the locality
             analysis: observedBy by its object), so it materializes less
    lars     a LARS program as RULES: a sensor whose last value is above 90 is hot, and a sensor hot at
             some time point of the last 2 s is Hot; SELECT ?s { ?s a ex:Hot }
    merged   the window query over two streams merged by time (the stream's observations dealt to two
             files): the time slices cut one timeline, so distributed mode runs it by the key split
             (buckets of sensors, `rsp_plugin.spark.distributed.keys`); mode `general` (asked with
             --modes) is distributed mode without the key split, the general way's Spark plans

on three Spark masters, each in a process of its own (Spark allows one session
per process; the session is started and warmed up before any timer):

    local[1]                  one core: the executors' tasks run one at a time
    local[2]                  two cores, one JVM
    local-cluster[2,1,1024]   two executor JVMs of one core each, with their own Python workers

and three modes: `driver` (one engine on the driver, fed by Spark), `partitioned`
(PARTITION BY ?s: one engine per sensor in Spark's state store) and
`distributed` (windows, entailment and joins as Spark plans on the executors).
A shape a mode does not run is said so, with its reason (the lars workload runs
distributed on the time slices: its program reaches back 2 time points).

Figures per run: triples / wall time of the whole replay (parsing included),
the median latency of a micro-batch (a window closed by a batch is reported
when the batch ends), and whether the results equal the driver-side mode's on
the same master (the driver-side mode's are the local engine's: the Spark tests
say so), and the cores a run kept busy (CPU seconds of the benchmark's process
tree, JVMs and Python workers included, over wall seconds). The speed-up is
local[1] wall time / local[2] wall time, per workload and mode. Each master's
process tree (driver, JVMs, Python workers) is pinned to as many CPUs as the
master has task slots (`pin_to_cores`): unpinned, a local[1] run keeps 1.4-1.6
cores busy (the driver, the JVM's own threads and the Python workers run beside
the one task slot) and could gain at most N / C on N cores before any work. Medians of `--repeat` runs (default 1: the machine is shared).
"""

from __future__ import annotations

import contextlib
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from .spark import EX, RATE_PER_SECOND, STREAM

MASTERS = ["local[1]", "local[2]", "local-cluster[2,1,1024]"]
MODES = ["driver", "partitioned", "distributed"]
#: distributed mode without the key split (`--modes ...,general`): the general way, for comparison
GENERAL = "general"
STREAM_B = f"{STREAM}-b"

ONTOLOGY = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:TemperatureObservation rdfs:subClassOf ex:Observation .
ex:Observation rdfs:subClassOf ex:Event .
ex:observedBy rdfs:domain ex:Observation ; rdfs:range ex:Sensor .
ex:temperature rdfs:subPropertyOf ex:value ; rdfs:domain ex:TemperatureObservation .
ex:lastValue rdfs:domain ex:Sensor .
ex:Sensor rdfs:subClassOf ex:Device .
"""

RULES = f"""@prefix ex: <{EX}> .
ex:hot(?s) :- ?s ex:lastValue ?v, ?v > 90 .
?s a ex:Hot :- [RANGE 2] DIAMOND ex:hot(?s) .
"""

QUERIES = {
    "window": """SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s]
WHERE {{ ?o <{ex}observedBy> ?s }} GROUP BY ?s""",
    "rdfs": """PREFIX ex: <{ex}>
SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s] FROM <{ontology}>
ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>
WHERE {{ ?o ex:observedBy ?s . ?s a ex:Device }} GROUP BY ?s""",
    "lars": """PREFIX ex: <{ex}>
SELECT ?s FROM STREAM <{stream}> [RANGE 1s STEP 1s] RULES <{rules}>
WHERE {{ ?s a ex:Hot }}""",
    "merged": """SELECT ?s (COUNT(?o) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s]
FROM STREAM <{stream}-b> [RANGE 1s STEP 1s] WHERE {{ ?o <{ex}observedBy> ?s }} GROUP BY ?s""",
}


def deal(stream: Path, first: Path, second: Path) -> None:
    """The stream's observations (3 lines each) dealt to two files in turn: two sources in time order."""
    lines = stream.read_text().splitlines(keepends=True)
    parts = ([], [])
    for start in range(0, len(lines), 3):
        parts[(start // 3) % 2].extend(lines[start:start + 3])
    first.write_text("".join(parts[0]))
    second.write_text("".join(parts[1]))


def sources_of(workload: str, stream: str, folder: Path) -> dict:
    """The sources a workload reads: the stream, or (merged) its two halves."""
    if workload != "merged":
        return {STREAM: stream}
    first, second = folder / f"{Path(stream).stem}-a.tnt", folder / f"{Path(stream).stem}-b.tnt"
    if not first.exists():
        deal(Path(stream), first, second)
    return {STREAM: str(first), STREAM_B: str(second)}


def write_observations(path: Path, triples: int, seed: int = 1) -> None:
    """Observations of 200 sensors, 3 triples each (its sensor, its temperature, the sensor's last value),
    10,000 triples per second of event time."""
    import random

    draw = random.Random(seed)
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    lines = []
    for number in range(triples // 3):
        stamp = number * 3 * 1000 // RATE_PER_SECOND
        observation, sensor = f"<{EX}o{number}>", f"<{EX}sensor{draw.randrange(200)}>"
        value = draw.randrange(0, 100)
        lines.append(f"{stamp} {observation} <{EX}observedBy> {sensor} .\n")
        lines.append(f'{stamp} {observation} <{EX}temperature> "{value}"^^{integer} .\n')
        lines.append(f'{stamp} {sensor} <{EX}lastValue> "{value}"^^{integer} .\n')
    path.write_text("".join(lines))


def run(options) -> int:
    quick = options.quick
    triples = options.triples or (30_000 if quick else 150_000)
    batch = (options.rates or [triples // 3])[0]
    workloads = options.workloads or list(QUERIES)
    unknown = [name for name in workloads if name not in QUERIES]
    if unknown:
        print(f"rsp-plugin: unknown spark workload(s): {', '.join(unknown)} (expected: {', '.join(QUERIES)})",
              file=sys.stderr)
        return 2
    masters = options.masters or MASTERS
    repeat = max(1, min(options.repeat, 5))
    with tempfile.TemporaryDirectory(prefix="rsp-bench-modes-") as scratch:
        folder = Path(scratch)
        stream = folder / "stream.tnt"
        write_observations(stream, triples)
        (folder / "ontology.ttl").write_text(ONTOLOGY)
        (folder / "rules.lars").write_text(RULES)
        texts = {name: QUERIES[name].format(ex=EX, stream=STREAM, ontology=folder / "ontology.ttl",
                                            rules=folder / "rules.lars") for name in workloads}
        modes = options.modes or MODES
        config = {"stream": str(stream), "texts": texts, "batch": batch, "repeat": repeat, "modes": modes,
                  "folder": str(folder)}
        print(f"Spark modes on {triples:,} generated triples ({RATE_PER_SECOND:,} per second of event time), "
              f"micro-batches of {batch:,} lines; median of {repeat}; each master in its own process, "
              f"pinned to as many CPUs as it has task slots (local[1]: one CPU for everything)")
        print()
        header = (f"{'workload':<8} {'mode':<12} {'master':<24} {'seconds':>8} {'triples/s':>10} "
                  f"{'ms/window':>10} {'batches':>8} {'cores':>6}  same as driver")
        print(header)
        print("-" * len(header))
        rows = []
        for master in masters:
            for row in _child_rows(master, config):
                rows.append(row)
                print(_line(row, triples))
                sys.stdout.flush()
        print()
        _speedups(rows, triples)
        project = options.project
        if project:
            _projection(config, project, triples)
        plot = options.plot
        if plot and plot != "-":
            _plot(rows, triples, Path(plot))
            print(f"\nplot: {plot}")
    return 0


def _line(row: dict, triples: int) -> str:
    if row.get("refused"):
        return f"{row['workload']:<8} {row['mode']:<12} {row['master']:<24} not run: {row['refused']}"
    return (f"{row['workload']:<8} {row['mode']:<12} {row['master']:<24} {row['seconds']:>8.2f} "
            f"{triples / row['seconds']:>10,.0f} {row['latency_ms']:>10.0f} {row['batches']:>8} "
            f"{row.get('cores', 0.0):>6.2f}  "
            f"{'not compared (no driver-side run)' if row['same'] is None else 'yes' if row['same'] else 'NO'}")


def _speedups(rows: list[dict], triples: int) -> None:
    timed = {(r["workload"], r["mode"], r["master"]): r["seconds"] for r in rows if not r.get("refused")}
    busy = {(r["workload"], r["mode"], r["master"]): r.get("cores") for r in rows if not r.get("refused")}
    machine = os.cpu_count() or 1
    print("speed-up from 1 to 2 cores (local[1] s / local[2] s; local-cluster[2,1,..] likewise), and each mode "
          "against the driver-side mode at 2 cores:")
    for (workload, mode, master), seconds in sorted(timed.items()):
        if master != "local[2]":
            continue
        one = timed.get((workload, mode, "local[1]"))
        cluster = timed.get((workload, mode, "local-cluster[2,1,1024]"))
        driver = timed.get((workload, "driver", "local[2]"))
        parts = [f"{workload:<8} {mode:<12}"]
        if one:
            parts.append(f"1->2 cores {one / seconds:4.2f}x")
            cores = busy.get((workload, mode, "local[1]"))
            if cores:
                parts.append(f"(local[1] keeps {cores:.2f} cores busy: at most {min(2.0, machine / cores):.2f}x "
                             f"on this {machine}-core machine)")
        if one and cluster:
            parts.append(f"1 core -> 2 executors {one / cluster:4.2f}x")
        if driver and mode != "driver":
            parts.append(f"vs driver-side at 2 cores {driver / seconds:4.2f}x")
        print("  ".join(parts))


def _plot(rows: list[dict], triples: int, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    workloads = list(dict.fromkeys(r["workload"] for r in rows))
    masters = list(dict.fromkeys(r["master"] for r in rows))
    modes = [mode for mode in [*MODES, GENERAL] if any(r["mode"] == mode for r in rows)]
    figure, axes = plt.subplots(1, len(workloads), figsize=(max(5.0, 4.2 * len(workloads)), 3.8), sharey=True)
    if len(workloads) == 1:
        axes = [axes]
    width = 0.8 / len(modes)
    for axis, workload in zip(axes, workloads):
        for number, mode in enumerate(modes):
            values = []
            for master in masters:
                found = [r for r in rows if r["workload"] == workload and r["mode"] == mode and r["master"] == master
                         and not r.get("refused")]
                values.append(triples / found[0]["seconds"] if found else 0)
            axis.bar([i + number * width for i in range(len(masters))], values, width, label=mode,
                     color=f"C{[*MODES, GENERAL].index(mode)}")
        axis.set_title(workload)
        axis.set_xticks([i + width * (len(modes) - 1) / 2 for i in range(len(masters))])
        axis.set_xticklabels([m.replace("local-cluster", "cluster") for m in masters], fontsize=8)
    axes[0].set_ylabel("triples / s")
    axes[0].legend(fontsize=8)
    figure.suptitle(f"rsp-plugin bench spark: {triples:,} triples\n(0 = the mode does not run the shape)", fontsize=9)
    figure.tight_layout()
    path.parent.mkdir(parents=True, exist_ok=True)
    figure.savefig(path, dpi=110)


# the projection to N machines ----------------------------------------------------------------------------------


def _projection(config: dict, machines: int, triples: int) -> None:
    """Distributed RDFS on local-cluster[2,1,1024] with Spark's own per-stage metrics (its REST API), and
    what N one-core executors would make of each stage: a stage's executor time spreads over
    min(N, its tasks); what is not executor time (scheduling, the driver between jobs) stays."""
    master = "local-cluster[2,1,1024]"
    rows = list(_child_rows(master, {**config, "texts": {"rdfs": config["texts"]["rdfs"]}, "modes": ["distributed"],
                                     "metrics": True}))
    found = [row for row in rows if row.get("stages") is not None]
    if not found:
        print("\nprojection: no metrics came back")
        return
    row = found[0]
    print()
    print(project_stages(row["stages"], row["seconds"], triples, machines,
                         f"distributed RDFS on {master} ({triples:,} triples)"), end="")


def stage_projection(stage: dict, machines: int, slots: int = 2) -> tuple[float, float]:
    """(fixed, projected) seconds of one stage: what is not its executor time spread over the tasks that
    ran at once on the measured master (`slots`), and that plus its executor time spread over
    min(`machines`, its tasks) one-core executors."""
    spread = max(1, min(slots, stage["tasks"]))
    fixed = max(0.0, stage["wall"] - stage["executor"] / spread)
    return fixed, fixed + stage["executor"] / max(1, min(machines, stage["tasks"]))


def project_stages(stages: list[dict], wall: float, triples: int, machines: int, title: str) -> str:
    """The projection's table (text): per kind of stage, its wall and executor seconds, what is fixed
    (wall past its executor time spread over the tasks that ran at once, at most 2 here), and what
    `machines` one-core executors would make of it; the driver between stages stays as it is."""
    lines = []
    in_stages = sum(stage["wall"] for stage in stages)
    driver = max(0.0, wall - in_stages)
    lines.append(f"projection to {machines} executors of one core from {title}, {wall:.1f} s, {len(stages)} stages; "
                 f"Spark's stage metrics:")
    kinds: dict[str, dict] = {}
    for stage in stages:
        kind = kinds.setdefault(stage["kind"], {"wall": 0.0, "executor": 0.0, "fixed": 0.0, "tasks": 0,
                                               "stages": 0, "projected": 0.0})
        fixed, projected = stage_projection(stage, machines)
        kind["wall"] += stage["wall"]
        kind["executor"] += stage["executor"]
        kind["fixed"] += fixed
        kind["tasks"] = max(kind["tasks"], stage["tasks"])
        kind["stages"] += 1
        kind["projected"] += projected
    header = f"{'stage kind':<28} {'stages':>6} {'max tasks':>9} {'wall s':>8} {'executor s':>10} {'fixed s':>8} " \
             f"{'at ' + str(machines) + ' s':>8}"
    lines.append(header)
    lines.append("-" * len(header))
    for name, kind in sorted(kinds.items(), key=lambda item: -item[1]["wall"]):
        lines.append(f"{name[:28]:<28} {kind['stages']:>6} {kind['tasks']:>9} {kind['wall']:>8.2f} "
                     f"{kind['executor']:>10.2f} {kind['fixed']:>8.2f} {kind['projected']:>8.2f}")
    projected = driver + sum(kind["projected"] for kind in kinds.values())
    fixed = sum(kind["fixed"] for kind in kinds.values())
    executor = sum(kind["executor"] for kind in kinds.values())
    bound = max(kinds.items(), key=lambda item: item[1]["projected"])[0] if kinds else "none"
    lines.append(f"{'driver between stages':<28} {'':>6} {'':>9} {driver:>8.2f} {'':>10} {driver:>8.2f} {driver:>8.2f}")
    lines.append(f"total: measured {wall:.2f} s ({triples / wall:,.0f} triples/s); at {machines} executors "
                 f"{projected:.2f} s ({triples / projected:,.0f} triples/s, {wall / projected:.2f}x); bound by "
                 f"{'the driver and per-stage fixed costs' if driver + fixed > executor / machines else 'executor time'}"
                 f" (driver {driver:.1f} s + fixed {fixed:.1f} s against executor time {executor:.1f} s / {machines});"
                 f" the longest stage kind at {machines}: {bound}")
    return "\n".join(lines) + "\n"


def project_marginal(measured: dict, size: int, machines: int, title: str, slots: int = 2) -> str:
    """The marginal cost projected (text): `measured` = {triples: [(stages, wall seconds) per run]} at
    N = `size` triples and at 2N; per kind of stage and for the driver between stages, seconds per extra
    million triples at 1 and at `machines` one-core executors (a stage's executor time spread over
    min(executors, its tasks), its fixed part as it is): each figure the median over the runs at 2N less
    the median at N, per million triples; which part bounds it. The whole run's fixed part cancels: it
    is said beside, per run."""
    import statistics

    def run_parts(stages: list[dict], wall: float) -> dict:
        """{part: {figure: seconds}} of one run."""
        parts: dict[str, dict] = {}
        for stage in stages:
            part = parts.setdefault(stage["kind"], {"executor": 0.0, "fixed": 0.0, "at 1": 0.0, "at n": 0.0,
                                                   "tasks": 0})
            fixed, at_n = stage_projection(stage, machines, slots)
            part["executor"] += stage["executor"]
            part["fixed"] += fixed
            part["at 1"] += stage_projection(stage, 1, slots)[1]
            part["at n"] += at_n
            part["tasks"] = max(part["tasks"], stage["tasks"])
        driver = max(0.0, wall - sum(stage["wall"] for stage in stages))
        parts[DRIVER] = {"executor": 0.0, "fixed": driver, "at 1": driver, "at n": driver, "tasks": 0, "wall": wall}
        return parts

    sides = [[run_parts(*run) for run in measured[triples]] for triples in (size, 2 * size)]
    names = list(dict.fromkeys(name for side in sides for run in side for name in run if name != DRIVER))

    def median(side, name: str, figure: str) -> float:
        return statistics.median(run.get(name, {}).get(figure, 0.0) for run in side)

    def extra(name: str, figure: str) -> float:
        return (median(sides[1], name, figure) - median(sides[0], name, figure)) * 1e6 / size

    runs = min(len(side) for side in sides)
    lines = [(f"marginal cost projected to {machines} executors of one core from {title}: per million triples, "
              f"the median at 2N less the median at N (N = {size:,}, {runs} runs each; Spark's stage metrics; the "
              f"whole run's start-up cancels)")]
    header = (f"{'stage kind':<28} {'max tasks':>9} {'executor s/M':>12} {'fixed s/M':>9} {'at 1 s/M':>9} "
              f"{'at ' + str(machines) + ' s/M':>10}")
    lines += [header, "-" * len(header)]
    parts: dict[str, tuple[float, float]] = {}
    for name in sorted(names, key=lambda n: -extra(n, "at 1")):
        parts[name] = (extra(name, "at 1"), extra(name, "at n"))
        tasks = max(run.get(name, {}).get("tasks", 0) for side in sides for run in side)
        lines.append(f"{name[:28]:<28} {tasks:>9} {extra(name, 'executor'):>12.3f} {extra(name, 'fixed'):>9.3f} "
                     f"{parts[name][0]:>9.3f} {parts[name][1]:>10.3f}")
    stays = extra(DRIVER, "fixed")
    parts[DRIVER] = (stays, stays)
    lines.append(f"{DRIVER:<28} {'':>9} {'':>12} {stays:>9.3f} {stays:>9.3f} {stays:>10.3f}")
    at_1 = sum(one for one, _ in parts.values())
    at_n = sum(many for _, many in parts.values())
    bound = max(parts.items(), key=lambda item: item[1][1])[0]
    if at_1 > 0 and at_n > 0:
        lines.append(f"marginal: {at_1:.3f} s/M at 1 executor, {at_n:.3f} s/M at {machines} ({1e6 / at_n:,.0f} "
                     f"triples/s): {at_1 / at_n:.2f}x from 1 to {machines} executors; bound at {machines} by: {bound}")
    else:
        lines.append("marginal: noise (the 2N runs were not the slower)")
    lines.append(f"fixed cost beside it, per run (medians): the driver between stages "
                 f"{median(sides[0], DRIVER, 'fixed'):.2f} s at N, {median(sides[1], DRIVER, 'fixed'):.2f} s at 2N; "
                 f"whole runs {median(sides[0], DRIVER, 'wall'):.2f} s at N, {median(sides[1], DRIVER, 'wall'):.2f} s "
                 f"at 2N")
    return "\n".join(lines) + "\n"


#: what is not in a stage: the driver's own time (`project_stages`, `project_marginal`)
DRIVER = "driver between stages"


def _stage_metrics(spark) -> list[dict]:
    """Every completed stage of this application: its kind (what it ran), tasks, wall and executor seconds."""
    import requests

    url = spark.sparkContext.uiWebUrl
    app = spark.sparkContext.applicationId
    stages = requests.get(f"{url}/api/v1/applications/{app}/stages?status=complete", timeout=30).json()
    out = []
    for stage in stages:
        from datetime import datetime

        def moment(text):
            return datetime.strptime(text.replace("GMT", "+0000"), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp()

        if not stage.get("submissionTime") or not stage.get("completionTime"):
            continue
        name = stage.get("description") or stage.get("name", "")
        kind = name.split(" at ")[0]
        out.append({"kind": kind, "tasks": stage.get("numTasks", 0),
                    "wall": moment(stage["completionTime"]) - moment(stage["submissionTime"]),
                    "executor": stage.get("executorRunTime", 0) / 1000.0, "id": stage.get("stageId")})
    return out


# the child process: one master, every workload and mode ----------------------------------------------------


def _child_rows(master: str, config: dict):
    env = dict(os.environ)
    root = str(Path(__file__).resolve().parents[2])
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [root, env.get("PYTHONPATH")]))
    with tempfile.NamedTemporaryFile("w", suffix=".json", delete=False) as handle:
        json.dump(config, handle)
    errors = tempfile.TemporaryFile("w+")  # (Spark's log: read back only when the child fails)
    process = subprocess.Popen([sys.executable, "-m", "rsp_plugin.bench.spark_modes", master, handle.name],
                               stdout=subprocess.PIPE, stderr=errors, text=True, env=env,
                               start_new_session=True)
    try:
        for line in process.stdout:
            if line.startswith("@@row "):
                yield json.loads(line[6:])
    finally:
        process.wait()
        Path(handle.name).unlink(missing_ok=True)
        if process.returncode:
            errors.seek(0)
            lines = [line.strip() for line in errors.read().splitlines() if line.strip()]
            cause = next((line for line in reversed(lines) if "Error" in line or "Exception" in line),
                         lines[-1] if lines else "no message")
            print(f"rsp-plugin: the {master} run stopped (exit {process.returncode}): {cause[:300]}",
                  file=sys.stderr, flush=True)
        errors.close()


def _without_key(text: str, sources: dict):
    """Distributed mode's plan of `text` with the key split turned off (the general way's, for comparison)."""
    from dataclasses import replace

    from ..spark import _engine_of, check_mode

    engine, _ = _engine_of(text, list(sources.items()), (), None, None)
    return replace(check_mode(engine, "distributed", lanes=len(sources)), key=None)


def cores_of(master: str) -> int | None:
    """The cores a master's tasks may use: N of local[N], executors x cores of local-cluster[E,C,M]."""
    import re

    found = re.fullmatch(r"local\[(\d+)\]", master)
    if found:
        return int(found.group(1))
    found = re.fullmatch(r"local-cluster\[(\d+),\s*(\d+),\s*\d+\]", master)
    if found:
        return int(found.group(1)) * int(found.group(2))
    return None


def pin_to_cores(master: str) -> list[int] | None:
    """Run this process and all it starts (Spark's JVMs, the Python workers) on as many CPUs as the
    master has task slots, so that "1 core" is one core: unpinned, local[1] keeps 1.4-1.6 of this
    machine's cores busy (the driver, the JVM's own threads and the Python worker run beside the one
    task slot), and the speed-up from 1 to 2 cores would be bounded by 2 / 1.5 before any work."""
    wanted = cores_of(master)
    available = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if wanted is None or not available or wanted >= len(available):
        return None
    chosen = available[:wanted]
    os.sched_setaffinity(0, chosen)
    return chosen


def _child(master: str, config_path: str) -> None:
    from ..spark import run as spark_run
    from ..spark import spark_session
    from ..spark.distributed import NotDistributed
    from ..spark.partitioned import NotKeyLocal

    config = json.loads(Path(config_path).read_text())
    if config.get("pin", True):
        pin_to_cores(master)
    stream, batch, repeat = config["stream"], config["batch"], config["repeat"]
    metrics = config.get("metrics", False)
    spark = spark_session(master, conf={"spark.ui.enabled": "true", "spark.ui.port": "0"} if metrics else None)
    warm = Path(config["folder"]) / "warm.tnt"
    if not warm.exists():
        write_observations(warm, 3000, seed=2)
    for name, text in config["texts"].items():  # every mode's code imported and warm in the Python workers
        warm_sources = sources_of(name, str(warm), Path(config["folder"]))
        spark_run(spark, text, warm_sources, lambda result: None, progress=False,
                  max_lines_per_trigger=3000).wait()
        if "partitioned" in config["modes"]:
            with contextlib.suppress(NotKeyLocal):
                spark_run(spark, text, warm_sources, lambda result: None, mode="partitioned", key="s",
                          max_lines_per_trigger=3000).wait()
        if "distributed" in config["modes"]:
            with contextlib.suppress(NotDistributed):
                spark_run(spark, text, warm_sources, lambda result: None, mode="distributed",
                          max_lines_per_trigger=3000).wait()

    def emit(row: dict) -> None:
        sys.stdout.write("@@row " + json.dumps(row) + "\n")
        sys.stdout.flush()

    for workload, text in config["texts"].items():
        reference = None
        for mode in config["modes"]:
            row = {"workload": workload, "mode": mode, "master": master}
            runs = []
            before = _stage_metrics(spark) if metrics else []
            try:
                for _ in range(repeat):
                    results = []
                    cpu_before = _session_cpu()
                    started = time.perf_counter()
                    sources = sources_of(workload, stream, Path(config["folder"]))
                    latencies = spark_run(spark, text, sources, results.append,
                                          mode="distributed" if mode == GENERAL else mode,
                                          key="s" if mode == "partitioned" else None, progress=False,
                                          max_lines_per_trigger=batch,
                                          plan=_without_key(text, sources) if mode == GENERAL else None
                                          ).wait().batch_seconds
                    seconds = time.perf_counter() - started
                    cores = (_session_cpu() - cpu_before) / seconds
                    runs.append((seconds, latencies, _by_instant(r.to_json() for r in results), cores))
            except (NotDistributed, NotKeyLocal) as why:
                row["refused"] = str(why).split(": the query is not key-local: ")[-1]
                emit(row)
                continue
            seconds = statistics.median(r[0] for r in runs)
            latencies = runs[0][1]
            answers = runs[0][2]
            if mode == "driver":
                reference = answers
            row.update(seconds=seconds, cores=statistics.median(r[3] for r in runs), latency_ms=1000 * statistics.median(latencies) if latencies else 0.0,
                       batches=len(latencies), same=None if reference is None else answers == reference,
                       instants=len(answers))
            if metrics:
                seen = {stage["id"] for stage in before}
                row["stages"] = [stage for stage in _stage_metrics(spark) if stage["id"] not in seen]
            emit(row)
    spark.stop()


def _session_cpu() -> float:
    """CPU seconds used so far by this benchmark process's session: this Python, Spark's JVM, its
    executors and Python workers (all started in the session `_child_rows` opens), the ended ones
    included as their parents' children. CPU seconds / wall seconds = the cores a run kept busy: a
    run on local[1] that already keeps C of the machine's N cores busy can gain at most N / C."""
    session = os.getsid(0)
    ticks = os.sysconf("SC_CLK_TCK")
    total = 0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            fields = (entry / "stat").read_text().rpartition(")")[2].split()
        except OSError:
            continue  # ended meanwhile
        if int(fields[3]) == session:  # fields after the name: state ppid pgrp session ... utime(11) ...
            total += sum(int(value) for value in fields[11:15])
    return total / ticks


def _by_instant(lines) -> dict:
    """Per instant the rows of every key (or the one answer) together, sorted: what is compared."""
    out: dict = {}
    for line in lines:
        out.setdefault(str(line["t"]), []).extend(json.dumps(b, sort_keys=True) for b in line.get("bindings", []))
    return {t: sorted(rows) for t, rows in out.items() if rows}


if __name__ == "__main__":
    _child(sys.argv[1], sys.argv[2])
