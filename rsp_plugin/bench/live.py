"""`rsp-plugin bench shapes --live`: what a report costs on a live stream, element by element.

The service's way (`RSPEngine.push`, then `advance_to` the element's time): each
element of the `bench shapes` stream is pushed as it comes, the watermark moved
to its time, and a report is made when its window closes -- no batch is waited
for. Per cell (profile x rate x window): the CPU time of the `advance_to` calls
that made a report, per report (p50, p99, the largest), and of each push (p99).
In-process, one thread (POLARS_MAX_THREADS=1 is the command line's default).

This is where "a report costs its panes, not its window" is measured report by
report: the p50s of the windows of one STEP (2s/1s, 60s/1s, 300s/1s: RANGE/STEP
2, 60, 300, each report one new pane of the same length) within 1.5x of each
other, per rate and profile. The whole-process matrix divides reading the
stream and the start-up among its reports, the reports after the stream's last
triple included (a 300s window drains for 300 reports), so its ms/rep leans on
the stream's length as much as on a report.
"""

from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from .shapes import (ENTAILMENT, ONTOLOGY, ONTOLOGY_IRI, PROFILES, STREAM, TARGET_FLAT, WINDOWS, continuous_query,
                     step_spreads, write_stream)

#: triples per cell (a 60s/1s window at 100 triples/s makes ~600 reports of it)
LIVE_SIZE = 60_000
QUICK_SIZE = 3_000


def _elements(path: Path) -> list[tuple[int, tuple]]:
    from rdflib.util import from_n3

    found = []
    for line in path.read_text(encoding="utf-8").splitlines():
        stamp, rest = line.split(" ", 1)
        subject, predicate, value = rest.rstrip(" .").split(" ", 2)
        found.append((int(stamp), (from_n3(subject), from_n3(predicate), from_n3(value))))
    return found


def measure(profile: str, window: tuple[int, int], elements: list) -> dict:
    """One cell: per-report and push CPU times (ms) of a live run."""
    from rdflib import Graph

    from ..runtime.engine import RSPEngine

    engine = RSPEngine()
    engine.register_stream(STREAM)
    if ENTAILMENT[profile]:
        ontology = Graph()
        ontology.parse(data=ONTOLOGY, format="turtle")
        engine.add_graph(ONTOLOGY_IRI, ontology)
    made: list[int] = []
    engine.register_query(continuous_query(profile, *window)).subscribe(lambda result: made.append(1))
    pushes, reports = [], []
    clock = time.process_time
    for stamp, triple in elements:
        start = clock()
        engine.push(STREAM, [triple], timestamp=stamp)
        pushes.append(clock() - start)
        if engine.watermark is None or stamp > engine.watermark:
            before = len(made)
            start = clock()
            engine.advance_to(stamp)
            took = clock() - start
            if len(made) > before:
                reports.extend([took / (len(made) - before)] * (len(made) - before))
    return {"reports": len(reports), "p50": _quantile(reports, 0.5), "p99": _quantile(reports, 0.99),
            "max": 1000 * max(reports, default=0.0), "push_p99": _quantile(pushes, 0.99)}


def _quantile(values: list[float], q: float) -> float:
    if not values:
        return 0.0
    ordered = sorted(values)
    return 1000 * ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def run(options, out=print) -> int:
    profiles = options.workloads or list(PROFILES)
    rates = list(options.rates or (100,))
    windows = list(options.range_steps or WINDOWS)
    size = (options.sizes or ((QUICK_SIZE,) if options.quick else (LIVE_SIZE,)))[0]
    out(f"Live: each element pushed as it comes and the watermark moved to its time (RSPEngine.push, advance_to), "
        f"{size:,} triples a cell; CPU ms of the advance that made a report, per report; of each push (p99).")
    header = f"{'rate':>6} {'window':>7} {'profile':<7} {'reports':>7} {'p50 ms':>7} {'p99 ms':>7} {'max ms':>7} " \
             f"{'push p99 ms':>11}"
    out(header)
    out("-" * len(header))
    rows = []
    with tempfile.TemporaryDirectory(prefix="rsp-bench-live-") as scratch:
        for rate in rates:
            path = Path(scratch) / f"live-{rate}.tnt"
            write_stream(path, size, rate)
            elements = _elements(path)
            for profile in profiles:
                for window in windows:
                    row = measure(profile, window, elements)
                    row.update(rate=rate, window=window, profile=profile)
                    rows.append(row)
                    out(f"{rate:>6,} {window[0]:>4}/{window[1]:<2} {profile:<7} {row['reports']:>7,} {row['p50']:>7.2f} "
                        f"{row['p99']:>7.2f} {row['max']:>7.2f} {row['push_p99']:>11.3f}")
    if rows:
        out(f"median p50 over the cells: {statistics.median(row['p50'] for row in rows):.2f} ms")
    for line in flat_lines(rows):
        out(line)
    return 0


def flat_lines(rows: list[dict]) -> list[str]:
    """Per rate, profile and STEP with two windows or more: the largest p50 over the smallest (`step_spreads`).

    >>> rows = [{"rate": 100, "profile": "plain", "window": w, "p50": ms}
    ...         for w, ms in (((2, 1), 0.5), ((10, 5), 2.0), ((60, 1), 0.6), ((300, 1), 0.55))]
    >>> flat_lines(rows)
    ['flat: 100/s plain STEP 1s: p50 0.50-0.60 ms over 2/1, 60/1, 300/1: 1.20x, met (<= 1.5x)']
    """
    lines = []
    for group, spread in step_spreads(rows, "p50"):
        if spread is None:
            continue
        costs = [row["p50"] for row in group]
        windows = ", ".join(f"{row['window'][0]}/{row['window'][1]}" for row in group)
        lines.append(f"flat: {group[0]['rate']:,}/s {group[0]['profile']} STEP {group[0]['window'][1]}s: p50 "
                     f"{min(costs):.2f}-{max(costs):.2f} ms over {windows}: "
                     f"{spread:.2f}x, {'met' if spread <= TARGET_FLAT else 'MISSED'} (<= {TARGET_FLAT:g}x)")
    return lines


__all__ = ["flat_lines", "measure", "run"]
