"""`rsp-plugin bench soak`: a long stream of ever-new terms, memory sampled against time.

Three workloads, each in its own process (POLARS_MAX_THREADS=1), each fed a
generated stream a block at a time (nothing of it is kept by the benchmark):

    aggregate   5M triples of SOSA-style observations (`sosa.py`: every observation a new IRI,
                a unique xsd:dateTime literal each, 100 triples per second of event time)
                through the [RANGE 10s STEP 5s] aggregate of `sosa.AGGREGATE`
    rdfs        the same with RDFS entailment and a small ontology
    lars        `rsp-plugin reason`'s replay of a LARS program over 2M atoms, every reading a
                new constant: hot(S) :- [RANGE 10] DIAMOND reading(O, S, V), V >= 990 .
                alarm(S) :- [RANGE 3] BOX hot(S) .  (100 atoms per time point)

The resident set size (RSS, /proc/self/statm) is sampled after every block
and printed against the share of the run done; the target is RSS at the end
within 10% of RSS at 30% of the run (the windows were full long before: what
grows after that is a leak). `--triples N` sets the stream's size (the LARS
workload takes 2/5 of it), `--quick` 300k. A PNG plot of RSS against time goes
to `--plot` (default `soak.png`).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from . import sosa

WORKLOADS = ("aggregate", "rdfs", "lars")
LARS_PROGRAM = """hot(S) :- [RANGE 10] DIAMOND reading(O, S, V), V >= 990 .
alarm(S) :- [RANGE 3] BOX hot(S) .
"""
LARS_RATE = 100
SAMPLES = 200


def run(options, out=print) -> int:
    names = options.workloads or list(WORKLOADS)
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    triples = options.triples or (300_000 if options.quick else 5_000_000)
    out(f"Soak: {triples:,} triples at {sosa_rate()} triples/s of event time (LARS: {triples * 2 // 5:,} atoms, "
        f"{LARS_RATE} per time point); one process per workload; RSS sampled after every block.")
    runs = {}
    for name in names:
        size = triples * 2 // 5 if name == "lars" else triples
        runs[name] = _child(name, size)
    out("")
    header = (f"{'workload':<10} {'items':>10} {'seconds':>8} {'items/s':>9} {'RSS 30% MB':>11} {'RSS end MB':>11} "
              f"{'change':>7} {'max MB':>7} {'terms end':>10} {'forgotten':>11}  target")
    out(header)
    out("-" * len(header))
    for name, samples in runs.items():
        end = samples[-1]
        at30 = min(samples, key=lambda sample: abs(sample["done"] - 0.3))
        change = (end["rss"] - at30["rss"]) / at30["rss"]
        out(f"{name:<10} {end['items']:>10,} {end['seconds']:>8.1f} {end['items'] / end['seconds']:>9,.0f} "
            f"{at30['rss']:>11.1f} {end['rss']:>11.1f} {change:>+6.1%} {max(s['rss'] for s in samples):>7.1f} "
            f"{end['terms']:>10,} {end['forgotten']:>11,}  {'ok' if abs(change) <= 0.10 else 'MISSED'}")
    out("")
    out("RSS (MB) against the share of the run done:")
    marks = [0.1 * k for k in range(1, 11)]
    out(f"{'workload':<10} " + " ".join(f"{int(mark * 100):>6}%" for mark in marks))
    for name, samples in runs.items():
        values = [min(samples, key=lambda sample: abs(sample["done"] - mark))["rss"] for mark in marks]
        out(f"{name:<10} " + " ".join(f"{value:>7.1f}" for value in values))
    plot = options.plot or "soak.png"
    if plot != "-":
        _plot(runs, plot)
        out(f"plot: {plot}")
    return 0


def sosa_rate() -> int:
    return 100


def _child(name: str, size: int) -> list[dict]:
    environment = dict(os.environ, POLARS_MAX_THREADS="1")
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.bench.soak", name, str(size)], capture_output=True,
                          text=True, env=environment, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"bench soak {name} failed:\n{done.stderr}")
    return [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]


def _rss_mb() -> float:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 1e6


class _Sampler:
    def __init__(self, total: int, terms):
        self.total = total
        self.terms = terms
        self.started = time.perf_counter()
        self.every = max(1, total // SAMPLES)
        self.next = 0

    def __call__(self, items: int, force: bool = False) -> None:
        if items < self.next and not force:
            return
        self.next = items + self.every
        print(json.dumps({"done": items / self.total, "items": items, "seconds": time.perf_counter() - self.started,
                          "rss": _rss_mb(), "terms": len(self.terms), "forgotten": self.terms.forgotten}),
              flush=True)


def _query_soak(profile: str, size: int) -> None:
    import tempfile

    from ..columnar.blocks import tnt_block
    from ..query.syntax import parse_query
    from ..runtime.engine import RSPEngine

    with tempfile.TemporaryDirectory() as scratch:
        ontology = Path(scratch) / "ontology.ttl"
        ontology.write_text(sosa.ONTOLOGY)
        engine = RSPEngine()
        engine.register_stream(sosa.STREAM)
        results = [0]
        query = engine.register_query(parse_query(sosa.query_text(profile, str(ontology))))
        query.subscribe(lambda result: results.__setitem__(0, results[0] + 1))
        sample = _Sampler(size, engine.terms)
        items = 0
        line = 1
        for lines in sosa.blocks(size, rate=sosa_rate(), block=20_000):
            data = "".join(lines).encode()
            block = tnt_block(data, line, engine.terms, tick_ms=1)
            line += len(lines)
            engine.push_columns(sosa.STREAM, block.times, block.s, block.p, block.o)
            engine.advance_to(int(block.times.max()))
            items += len(lines)
            sample(items)
        engine.finish()
        sample(items, force=True)


def _lars_soak(size: int) -> None:
    import random

    from ..columnar.atoms import atom_block
    from ..columnar.reason import replay
    from ..lars.syntax import parse_program

    program = parse_program(LARS_PROGRAM, "<soak>")
    sample = _Sampler(size, program.terms)
    draw = random.Random(3)

    class Null:
        def write(self, text: str) -> None:
            pass

    def blocks():
        items = 0
        line = 1
        point = 0
        while items < size:
            lines = []
            for _ in range(min(20_000, size - items) // LARS_RATE or 1):
                for _ in range(LARS_RATE):
                    lines.append(f"{point} reading(o{items + len(lines)},s{draw.randrange(50)},{draw.randrange(1000)})\n")
                point += 1
            yield atom_block("".join(lines), line, program.terms, prefixes={})
            line += len(lines)
            items += len(lines)
            sample(items)

    replay(program, "<soak>", Null(), blocks=blocks())
    sample(size, force=True)


def _plot(runs: dict, target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    figure, axes = plt.subplots(figsize=(7, 4))
    for name, samples in runs.items():
        axes.plot([100 * sample["done"] for sample in samples], [sample["rss"] for sample in samples], label=name)
    axes.axvline(30, color="grey", linestyle=":", linewidth=1)
    axes.set_xlabel("share of the run (%)")
    axes.set_ylabel("RSS (MB)")
    axes.set_ylim(bottom=0)
    axes.set_title("rsp-plugin bench soak: memory of a long stream of new terms")
    axes.legend()
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    plt.close(figure)


if __name__ == "__main__":
    workload, count = sys.argv[1], int(sys.argv[2])
    if workload == "lars":
        _lars_soak(count)
    else:
        _query_soak("rdfs" if workload == "rdfs" else "off", count)
