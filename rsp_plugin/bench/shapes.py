"""`rsp-plugin bench shapes`: continuous queries on the shape of a real sensor stream, whole processes,
next to the loop a Python user would write (issue 29; /work/shared/benchmarks.md, "real stream shapes").

The stream: SOSA-style observations of 3 triples each, a new observation IRI each, 20 sensors, all
three triples of an observation at one time, R triples per second of event time:

    0 <http://ex.org/shapes/obs0> <http://www.w3.org/1999/02/22-rdf-syntax-ns#type> <http://ex.org/shapes/TempObs> .
    0 <http://ex.org/shapes/obs0> <http://ex.org/shapes/sensor> <http://ex.org/shapes/sensor10> .
    0 <http://ex.org/shapes/obs0> <http://ex.org/shapes/value> "970"^^<http://www.w3.org/2001/XMLSchema#integer> .

The query: AVG(?v) per sensor over [RANGE r STEP s]. Plain, it reads `?o a ex:TempObs ; ex:sensor ?s ;
ex:value ?v`; under RDFS or OWL 2 RL it reads `?o a ex:Event ; ex:sensor ?s ; ex:result ?v . ?s a
ex:Device`, with `ONTOLOGY` (6 classes) as background: only entailed triples answer it. The workload
`alert` (not in the default matrix) is a continuous join without aggregation: ISTREAM of the
observations whose value passes a threshold (`?o ?v`, each reported once, in the first window that
holds it); its baseline drops the rows the previous window had.

The matrix: rates (100, 1,000, 10,000 triples/s) x windows (2s/1s, 10s/5s, 60s/1s, 300s/1s) x profiles
(plain, rdfs, owl-rl) x sizes (300k, 600k triples). Every cell is measured as whole processes, CPU
seconds (user + sys of the child, start-up included), medians of `--repeat` runs that alternate:

    ours      `rsp-plugin query QUERY --stream ... [--background ...]`
    baseline  `shapes_baseline.py`: for every report a fresh pyoxigraph Store loaded with the window's
              lines (plain), or with reasonable's closure of window + ontology (rdfs, owl-rl)

Reports are compared (the same AVG per sensor per report, to 1e-12). `reasonable` has one rule
set, OWL 2 RL: the RDFS baseline is that closure (over this ontology, which uses only RDFS's
subClassOf, subPropertyOf, domain and range, it gives the query the answers RDFS gives), so the
rdfs and owl-rl cells share one baseline run.

CPU per report = (CPU of the run - CPU of the same command on a 3-line stream) / reports: what a
report costs once the process is up. The targets of issue 29, marked per cell: triples / CPU
second >= 600k (plain), 150k (rdfs), 100k (owl-rl); at most 1/3 of the baseline's CPU (plain), 1/10
(rdfs); CPU per report within 1.5x across RANGE/STEP = 2, 60 and 300 at the same rate: "a report
costs its panes, not its window". That is judged across the windows of one STEP (2s/1s, 60s/1s,
300s/1s), whose reports each bring one new pane of the same length; a 10s/5s report brings a 5 s
pane, five times the arrivals, and is judged by the other targets only.

pyoxigraph and reasonable are the extra `rsp_plugin[bench]`, imported only by the baseline's process.
"""

from __future__ import annotations

import importlib.util
import json
import random
import shutil
import statistics
import sys
import tempfile
from decimal import Decimal, InvalidOperation
from pathlib import Path

from .startup import child_environment, process_usage

EX = "http://ex.org/shapes/"
STREAM = f"{EX}stream"
ONTOLOGY_IRI = f"{EX}ontology"
SENSORS = 20
RATES = (100, 1_000, 10_000)
WINDOWS = ((2, 1), (10, 5), (60, 1), (300, 1))  # (RANGE, STEP) in seconds
PROFILES = ("plain", "rdfs", "owl-rl")
#: workloads `bench shapes` knows: the matrix's profiles, and `alert` (a continuous join, ISTREAM)
WORKLOADS = (*PROFILES, "alert")
SIZES = (300_000, 600_000)
QUICK_SIZE = 3_000

#: issue 29's targets: triples per CPU second of the whole process ...
TARGET_RATE = {"plain": 600_000, "rdfs": 150_000, "owl-rl": 100_000}
#: ... at least this many times less CPU than the baseline ...
TARGET_SPEEDUP = {"plain": 3.0, "rdfs": 10.0}
#: ... and CPU per report within this factor across the windows of one rate, profile and STEP
TARGET_FLAT = 1.5
#: two AVGs agree when they differ by less than this (relative): the engines round decimals differently
TOLERANCE = Decimal("1e-12")

#: the 6 classes (TempObs, Observation, Event, Thermometer, Sensor, Device); RDFS axioms only
ONTOLOGY = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:TempObs rdfs:subClassOf ex:Observation .
ex:Observation rdfs:subClassOf ex:Event .
ex:Thermometer rdfs:subClassOf ex:Sensor .
ex:Sensor rdfs:subClassOf ex:Device .
ex:sensor rdfs:domain ex:Observation ; rdfs:range ex:Sensor .
ex:value rdfs:subPropertyOf ex:result .
"""

PATTERN = {
    "plain": "?o a ex:TempObs ; ex:sensor ?s ; ex:value ?v",
    "alert": "?o a ex:TempObs ; ex:sensor ?s ; ex:value ?v FILTER(?v >= 990)",
    "rdfs": "?o a ex:Event ; ex:sensor ?s ; ex:result ?v . ?s a ex:Device",
    "owl-rl": "?o a ex:Event ; ex:sensor ?s ; ex:result ?v . ?s a ex:Device",
}
ENTAILMENT = {"plain": None, "alert": None, "rdfs": "http://www.w3.org/ns/entailment/RDFS",
              "owl-rl": "http://www.w3.org/ns/owl-profile/RL"}
#: what a report's rows say, per workload: (the key variable, the value variable)
ANSWER = {"plain": ("s", "avg"), "rdfs": ("s", "avg"), "owl-rl": ("s", "avg"), "alert": ("o", "v")}


def continuous_query(profile: str, range_s: int, step_s: int) -> str:
    """The continuous query of a cell (a C-SPARQL registration).

    >>> print(continuous_query("rdfs", 10, 5))  # doctest: +NORMALIZE_WHITESPACE
    REGISTER RSTREAM <http://ex.org/shapes/q> AS
    PREFIX ex: <http://ex.org/shapes/>
    SELECT ?s (AVG(?v) AS ?avg)
    FROM <http://ex.org/shapes/ontology>
    FROM STREAM <http://ex.org/shapes/stream> [RANGE 10s STEP 5s]
    ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>
    WHERE { ?o a ex:Event ; ex:sensor ?s ; ex:result ?v . ?s a ex:Device }
    GROUP BY ?s
    """
    operator = "ISTREAM" if profile == "alert" else "RSTREAM"
    lines = [f"REGISTER {operator} <{EX}q> AS", f"PREFIX ex: <{EX}>", _select(profile)]
    if ENTAILMENT[profile]:
        lines.append(f"FROM <{ONTOLOGY_IRI}>")
    lines.append(f"FROM STREAM <{STREAM}> [RANGE {range_s}s STEP {step_s}s]")
    if ENTAILMENT[profile]:
        lines.append(f"ENTAILMENT <{ENTAILMENT[profile]}>")
    lines.append(f"WHERE {{ {PATTERN[profile]} }}")
    if profile != "alert":
        lines.append("GROUP BY ?s")
    return "\n".join(lines) + "\n"


def sparql_query(profile: str) -> str:
    """The same query in plain SPARQL 1.1, for the baseline's store (the window is the store).

    >>> print(sparql_query("alert"), end="")
    PREFIX ex: <http://ex.org/shapes/>
    SELECT ?o ?v WHERE { ?o a ex:TempObs ; ex:sensor ?s ; ex:value ?v FILTER(?v >= 990) }
    """
    grouped = "" if profile == "alert" else " GROUP BY ?s"
    return f"PREFIX ex: <{EX}>\n{_select(profile)} WHERE {{ {PATTERN[profile]} }}{grouped}\n"


def _select(profile: str) -> str:
    return "SELECT ?o ?v" if profile == "alert" else "SELECT ?s (AVG(?v) AS ?avg)"


def write_stream(path: Path, count: int, rate: int, *, seed: int = 7) -> int:
    """`count // 3` observations as `.tnt` lines (ms), `rate` triples per second; returns the triples.

    >>> import io, tempfile, pathlib
    >>> folder = pathlib.Path(tempfile.mkdtemp())
    >>> write_stream(folder / "s.tnt", 7, rate=100)
    6
    >>> [line.split()[0] for line in (folder / "s.tnt").read_text().splitlines()]
    ['0', '0', '0', '30', '30', '30']
    """
    draw = random.Random(seed)
    kind, sensor, value = f"<{EX}TempObs>", f"<{EX}sensor>", f"<{EX}value>"
    rdf_type, integer = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<http://www.w3.org/2001/XMLSchema#integer>"
    observations = count // 3
    with open(path, "w", encoding="utf-8") as handle:
        for number in range(observations):
            stamp = number * 3000 // rate
            subject = f"<{EX}obs{number}>"
            handle.write(f"{stamp} {subject} {rdf_type} {kind} .\n"
                         f"{stamp} {subject} {sensor} <{EX}sensor{draw.randrange(SENSORS)}> .\n"
                         f'{stamp} {subject} {value} "{draw.randrange(1000)}"^^{integer} .\n')
    return 3 * observations


# the answers, ours and the baseline's ---------------------------------------------------------------


def our_reports(printed: bytes, profile: str = "plain") -> dict[int, dict[str, Decimal]]:
    """`rsp-plugin query`'s JSON lines as {τ: {key IRI: value}} (sensor: AVG; `alert`: observation: value)."""
    key, value = ANSWER[profile]
    reports = {}
    for line in printed.decode("utf-8").splitlines():
        report = json.loads(line)
        reports[report["t"]] = {row[key].strip("<>"): _number(row[value]) for row in report["bindings"]}
    return reports


def baseline_reports(printed: bytes) -> dict[int, dict[str, Decimal]]:
    """The baseline script's lines as {τ: {sensor IRI: AVG}}."""
    reports = {}
    for line in printed.decode("utf-8").splitlines():
        report = json.loads(line)
        reports[report["t"]] = {sensor: _number(value) for sensor, value in report["rows"].items()}
    return reports


def _number(text: str) -> Decimal:
    """A number from its lexical form, or from an N-Triples literal ("54.5"^^<...#decimal>)."""
    if text.startswith('"'):
        text = text[1:text.rindex('"')]
    try:
        return Decimal(text)
    except InvalidOperation:
        return Decimal("NaN")


def difference(ours: dict, theirs: dict) -> str | None:
    """None when both give every report with the same AVG per sensor; else the first difference, said.

    >>> difference({5: {"a": Decimal("1.5")}}, {5: {"a": Decimal("1.50000000000000001")}}) is None
    True
    >>> difference({5: {"a": Decimal(1)}, 10: {}}, {5: {"a": Decimal(2)}})
    'reports at t = [10] only in ours; t = 5: a 1 vs 2'
    """
    said = []
    only_ours, only_theirs = sorted(set(ours) - set(theirs)), sorted(set(theirs) - set(ours))
    if only_ours:
        said.append(f"reports at t = {only_ours[:5]} only in ours")
    if only_theirs:
        said.append(f"reports at t = {only_theirs[:5]} only in the baseline")
    for tau in sorted(set(ours) & set(theirs)):
        mine, other = ours[tau], theirs[tau]
        if set(mine) != set(other):
            said.append(f"t = {tau}: sensors {sorted(set(mine) ^ set(other))[:3]} in one only")
            break
        wrong = [key for key in sorted(mine) if not _close(mine[key], other[key])]
        if wrong:
            said.append(f"t = {tau}: {wrong[0]} {mine[wrong[0]]} vs {other[wrong[0]]}")
            break
    return "; ".join(said) or None


def _close(a: Decimal, b: Decimal) -> bool:
    return abs(a - b) <= TOLERANCE * max(Decimal(1), abs(a))


# the runs ----------------------------------------------------------------------------------------------


def missing_extra() -> str | None:
    """What to install when the baseline's packages are missing, else None."""
    absent = [name for name in ("pyoxigraph", "reasonable") if importlib.util.find_spec(name) is None]
    if not absent:
        return None
    return (f"bench shapes needs {' and '.join(absent)} for its baselines: "
            f"pip install 'rsp_plugin[bench]' (or pip install pyoxigraph reasonable)")


class Runner:
    """The scratch folder's files and the two commands of a cell, each run as a whole process."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.env = dict(child_environment(folder), POLARS_MAX_THREADS="1", RAYON_NUM_THREADS="1")
        self.ontology = folder / "ontology.ttl"
        self.ontology.write_text(ONTOLOGY, encoding="utf-8")
        self.script = folder / "shapes_baseline.py"
        shutil.copyfile(Path(__file__).with_name("shapes_baseline.py"), self.script)
        self.tiny = folder / "tiny.tnt"
        write_stream(self.tiny, 3, rate=100)

    def ours(self, profile: str, window: tuple[int, int], stream: Path) -> list[str]:
        query = self.folder / f"{profile}-{window[0]}-{window[1]}.rq"
        query.write_text(continuous_query(profile, *window), encoding="utf-8")
        command = [sys.executable, "-m", "rsp_plugin.cli", "query", str(query), "--stream", f"{STREAM}={stream}", "-q"]
        if ENTAILMENT[profile]:
            command += ["--background", f"{ONTOLOGY_IRI}={self.ontology}"]
        return command

    def baseline(self, profile: str, window: tuple[int, int], stream: Path) -> list[str]:
        query = self.folder / f"{profile}.sparql"
        query.write_text(sparql_query(profile), encoding="utf-8")
        command = [sys.executable, "-P", str(self.script), str(stream), str(query), str(window[0] * 1000),
                   str(window[1] * 1000)]
        if profile == "alert":
            command.append("--istream")
        return command + ([str(self.ontology)] if ENTAILMENT[profile] else [])

    def measure(self, commands: dict[str, list[str]], repeat: int, earlier: dict | None = None) -> dict[str, dict]:
        """Each command `repeat` times, alternating: median CPU and wall, peak RSS, what the first run printed
        (`earlier`: the figures of runs already made, which these add to)."""
        earlier = earlier or {}
        runs = {name: list(earlier[name]["runs"]) if name in earlier else [] for name in commands}
        printed = {name: earlier[name]["printed"] for name in commands if name in earlier}
        for _ in range(repeat):
            for name, command in commands.items():
                usage, wall, output = process_usage(command, self.env)
                runs[name].append((usage.ru_utime + usage.ru_stime, wall, usage.ru_maxrss / 1024))
                printed.setdefault(name, output)
        return {name: {"cpu": statistics.median(cpu for cpu, _, _ in done),
                       "wall": statistics.median(wall for _, wall, _ in done),
                       "rss_mb": max(rss for _, _, rss in done), "printed": printed[name], "runs": done}
                for name, done in runs.items()}


def run(options, out=print) -> int:
    if getattr(options, "live", False):  # (in-process, element by element: `bench/live.py`)
        from .live import run as run_live

        return run_live(options, out)
    missing = missing_extra()
    if missing:
        out(missing)
        return 2
    profiles = options.workloads or list(PROFILES)
    unknown = [name for name in profiles if name not in WORKLOADS]
    if unknown:
        out(f"unknown profile(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    quick = options.quick
    rates = list(options.rates or RATES)
    windows = list(options.range_steps or WINDOWS)
    sizes = list(options.sizes or ([QUICK_SIZE] if quick else SIZES))
    repeat = 1 if quick else max(1, options.repeat or 3)
    baseline_repeat = 1 if quick else max(1, options.baseline_repeat or repeat)
    out(f"Continuous AVG per sensor (alert: ISTREAM of the observations over a threshold) on a SOSA stream (3 triples per observation, {SENSORS} sensors): whole "
        f"processes, CPU s = user + sys of the child (start-up included), median of {repeat} (baselines: "
        f"{baseline_repeat}); one thread each "
        "(POLARS_MAX_THREADS=1, RAYON_NUM_THREADS=1).")
    out("ours: rsp-plugin query; base: a fresh pyoxigraph Store per window (plain, alert: less the previous "
        "window's rows), reasonable's OWL 2 RL closure of window + ontology then pyoxigraph (rdfs, owl-rl: one "
        "baseline run for both).")
    out("tr/s: triples / CPU s; ms/rep: (CPU s - CPU s on a 3-line stream) / reports; x: base CPU / our CPU; "
        f"targets: tr/s >= {', '.join(f'{TARGET_RATE[p] // 1000}k {p}' for p in PROFILES)}; x >= "
        f"{', '.join(f'{TARGET_SPEEDUP[p]:g} {p}' for p in TARGET_SPEEDUP)}; flat: ms/rep within "
        f"{TARGET_FLAT:g}x across the windows of one rate, profile and STEP (RANGE/STEP 2, 60, 300; "
        "a 10s/5s report reads 5 s of arrivals: '-').")
    header = (f"{'triples':>9} {'rate':>6} {'window':>7} {'profile':<7} {'reports':>7} {'cpu s':>7} {'tr/s':>9} "
              f"{'wall s':>7} {'ms/rep':>7} {'RSS MB':>6} | {'base s':>7} {'base tr/s':>9} {'b ms/rep':>8} | "
              f"{'x':>6} {'answers':<7} | {'tr/s>=':<6} {'x>=':<6} {'flat<=1.5x':<12}")
    rows: list[dict] = []
    with tempfile.TemporaryDirectory(prefix="rsp-bench-shapes-") as scratch:
        runner = Runner(Path(scratch))
        start_ups = _start_ups(runner, profiles, repeat, warm=not quick)
        out("start-up (3-line stream), CPU s: " + ", ".join(f"{name} {cpu:.2f}" for name, cpu in start_ups.items()))
        out(header)
        out("-" * len(header))
        for size in sizes:
            for rate in rates:
                stream = runner.folder / f"stream-{size}-{rate}.tnt"
                triples = write_stream(stream, size, rate)
                shared: dict[tuple, dict] = {}  # (the rdfs / owl-rl baseline, one run per window)
                for profile in profiles:
                    group = []
                    for window in windows:
                        group.append(_cell(runner, profile, window, stream, triples, rate, (repeat, baseline_repeat),
                                           start_ups, shared))
                    _mark_flat(group)
                    for row in group:
                        out(_line(row))
                    sys.stdout.flush()
                    rows += group
                stream.unlink()
    _summary(rows, out)
    plot = options.plot or "shapes.png"
    if plot != "-":
        _plot(rows, plot)
        out(f"plot: {plot}")
    return 1 if any(row["difference"] for row in rows) else 0


def _start_ups(runner: Runner, profiles: list[str], repeat: int, *, warm: bool = True) -> dict[str, float]:
    """CPU seconds of each command on a 3-line stream (a window of 10s): what a process costs before its
    stream matters; ours per profile, the baseline plain and reasoning. `warm`: each run once first, to
    fill the bytecode cache (an installed package has it)."""
    commands = {}
    for profile in profiles:
        commands[profile] = runner.ours(profile, (10, 5), runner.tiny)
        commands[_baseline_key(profile)] = runner.baseline(profile, (10, 5), runner.tiny)
    for command in commands.values() if warm else ():
        process_usage(command, runner.env)
    return {name: figures["cpu"] for name, figures in runner.measure(commands, repeat).items()}


def _baseline_key(profile: str) -> str:
    if profile == "alert":
        return "base alert"
    return "base plain" if ENTAILMENT[profile] is None else "base reasoning"


def _cell(runner: Runner, profile: str, window: tuple[int, int], stream: Path, triples: int, rate: int,
          repeats: tuple[int, int], start_ups: dict[str, float], shared: dict) -> dict:
    """One cell: ours `repeats[0]` times, the baseline `repeats[1]` times (once per window for rdfs and
    owl-rl), the first runs interleaved."""
    key = (_baseline_key(profile), window)
    print(f"  ... {triples:,} triples, {rate:,}/s, {window[0]}/{window[1]}, {profile}", file=sys.stderr, flush=True)
    commands = {"ours": runner.ours(profile, window, stream)}
    if key not in shared:
        commands["base"] = runner.baseline(profile, window, stream)
    figures = runner.measure(commands, min(repeats))
    for name, times in (("ours", repeats[0]), ("base", repeats[1])):
        if name in commands and times > min(repeats):
            figures[name] = runner.measure({name: commands[name]}, times - min(repeats), figures[name])[name]
    base = shared.setdefault(key, figures.get("base"))
    mine = figures["ours"]
    ours_said, theirs = our_reports(mine["printed"], profile), baseline_reports(base["printed"])
    reports = len(ours_said)
    row = {"triples": triples, "rate": rate, "window": window, "profile": profile, "reports": reports,
           "cpu": mine["cpu"], "wall": mine["wall"], "rss_mb": mine["rss_mb"], "base_cpu": base["cpu"],
           "base_wall": base["wall"], "base_rss_mb": base["rss_mb"], "base_reports": len(theirs),
           "per_report_ms": 1000 * max(0.0, mine["cpu"] - start_ups[profile]) / max(1, reports),
           "base_per_report_ms": 1000 * max(0.0, base["cpu"] - start_ups[key[0]]) / max(1, len(theirs)),
           "difference": difference(ours_said, theirs), "shared_baseline": key in shared and "base" not in figures}
    row["rate_cpu"] = triples / row["cpu"] if row["cpu"] else 0.0
    row["base_rate_cpu"] = triples / row["base_cpu"] if row["base_cpu"] else 0.0
    row["speedup"] = row["base_cpu"] / row["cpu"] if row["cpu"] else 0.0
    row["rate_met"] = row["rate_cpu"] >= TARGET_RATE[profile] if profile in TARGET_RATE else None
    row["speedup_met"] = row["speedup"] >= TARGET_SPEEDUP[profile] if profile in TARGET_SPEEDUP else None
    return row


def step_spreads(rows: list[dict], cost: str) -> list[tuple[list[dict], float | None]]:
    """The rows by rate, profile and STEP, each group with its largest `cost` over its smallest (None
    for a window alone with its STEP). At one STEP every report brings one pane of the same length,
    so a spread is what the window's RANGE adds to a report: the flatness rule of both the matrix
    (`_mark_flat`) and `--live` (`live.flat_lines`).

    >>> rows = [{"window": w, "ms": ms} for w, ms in (((2, 1), 0.3), ((10, 5), 1.5), ((60, 1), 0.36))]
    >>> [([row["window"] for row in group], spread) for group, spread in step_spreads(rows, "ms")]
    [([(2, 1), (60, 1)], 1.2), ([(10, 5)], None)]
    """
    groups: dict[tuple, list[dict]] = {}
    for row in rows:
        groups.setdefault((row.get("rate"), row.get("profile"), row["window"][1]), []).append(row)
    out = []
    for group in groups.values():
        costs = [row[cost] for row in group]
        spread = round(max(costs) / min(costs), 6) if len(costs) > 1 and min(costs) > 0 else None
        out.append((group, spread))
    return out


def _mark_flat(group: list[dict]) -> None:
    """CPU per report across the windows of one rate, profile and STEP (`step_spreads`)."""
    for rows, spread in step_spreads(group, "per_report_ms"):
        for row in rows:
            row["flat"] = spread
            row["flat_met"] = None if spread is None else spread <= TARGET_FLAT


def _verdict(met) -> str:
    return "-" if met is None else "met" if met else "MISSED"


def _line(row: dict) -> str:
    window = f"{row['window'][0]}/{row['window'][1]}"
    flat = "-" if row["flat"] is None else f"{_verdict(row['flat_met'])} {row['flat']:.1f}x"
    answers = "same" if not row["difference"] else "DIFFER"
    line = (f"{row['triples']:>9,} {row['rate']:>6,} {window:>7} {row['profile']:<7} {row['reports']:>7,} "
            f"{row['cpu']:>7.2f} {row['rate_cpu']:>9,.0f} {row['wall']:>7.2f} {row['per_report_ms']:>7.2f} "
            f"{row['rss_mb']:>6.0f} | {row['base_cpu']:>7.2f} {row['base_rate_cpu']:>9,.0f} "
            f"{row['base_per_report_ms']:>8.2f} | {row['speedup']:>5.2f}x {answers:<7} | "
            f"{_verdict(row['rate_met']):<6} {_verdict(row['speedup_met']):<6} {flat:<12}")
    if row["difference"]:
        line += f"\n    !! answers differ: {row['difference']}"
    return line


def _summary(rows: list[dict], out) -> None:
    differ = [row for row in rows if row["difference"]]
    out(f"answers: {len(rows) - len(differ)} of {len(rows)} cells give the baseline's answers in every report"
        + ("" if not differ else f"; {len(differ)} DIFFER (see the !! lines)"))
    for name, key in (("tr/s", "rate_met"), ("x", "speedup_met"), ("flat", "flat_met")):
        judged = [row for row in rows if row[key] is not None]
        met = sum(1 for row in judged if row[key])
        out(f"target {name}: met in {met} of {len(judged)} cells")


def _plot(rows: list[dict], target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    profiles = [p for p in WORKLOADS if any(row["profile"] == p for row in rows)]
    sizes = sorted({row["triples"] for row in rows})
    figure, axes = plt.subplots(2, len(profiles), figsize=(5.2 * len(profiles), 8), squeeze=False)
    for column, profile in enumerate(profiles):
        mine = [row for row in rows if row["profile"] == profile]
        labels = [f"{row['rate']:,}/s\n{row['window'][0]}/{row['window'][1]}"
                  + (f"\n{row['triples'] / 1000:g}k" if len(sizes) > 1 else "") for row in mine]
        places = range(len(mine))
        top = axes[0][column]
        top.bar([p - 0.2 for p in places], [row["rate_cpu"] for row in mine], 0.4, label="rsp-plugin query")
        top.bar([p + 0.2 for p in places], [row["base_rate_cpu"] for row in mine], 0.4,
                label="reasonable + pyoxigraph per window" if ENTAILMENT[profile] else "pyoxigraph per window")
        if profile in TARGET_RATE:
            top.axhline(TARGET_RATE[profile], color="black", linestyle="--", linewidth=1,
                        label=f"target {TARGET_RATE[profile] // 1000}k")
        top.set_xticks(list(places), labels, fontsize=7)
        top.set_yscale("log")
        top.set_ylabel("triples / CPU second (whole process)")
        top.set_title(f"{profile}: throughput")
        top.legend(fontsize=7)
        bottom = axes[1][column]
        for size in sizes:
            for rate in sorted({row["rate"] for row in mine}):
                line = [row for row in mine if row["rate"] == rate and row["triples"] == size]
                names = [f"{row['window'][0]}/{row['window'][1]}" for row in line]
                suffix = f", {size / 1000:g}k" if len(sizes) > 1 else ""
                drawn = bottom.plot(names, [row["per_report_ms"] for row in line], marker="o",
                                    label=f"ours {rate:,}/s{suffix}")
                bottom.plot(names, [row["base_per_report_ms"] for row in line], marker="x", linestyle=":",
                            color=drawn[0].get_color(), label=f"base {rate:,}/s{suffix}")
        bottom.set_yscale("log")
        bottom.set_xlabel("RANGE / STEP (s)")
        bottom.set_ylabel("CPU ms per report (start-up removed)")
        bottom.set_title(f"{profile}: cost per report")
        bottom.legend(fontsize=6, ncol=2)
    figure.suptitle("rsp-plugin bench shapes (whole processes, CPU)")
    figure.tight_layout()
    figure.savefig(target, dpi=110)
    plt.close(figure)
