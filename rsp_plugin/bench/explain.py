"""What explanations cost: `rsp-plugin bench lars --explain`, `rsp-plugin bench materialize --explain`.

The same workloads as `bench lars` (the Laser paper's micro-benchmarks) and
`bench materialize` (Barbieri et al.'s transitive trees under OWL 2 RL), run
with `explain=False` and `explain=True` on the same input, in the same process,
alternately (so that a busy machine slows both alike):

    time     CPU time of the whole run (lars) or the median slide (materialize),
             the lower of `repeat` runs each
    memory   Python memory still allocated by the engine at the end of the run
             (tracemalloc, measured in a separate run: tracing slows everything)

Explanations are asked for nothing here: this is the price of keeping what an
explanation needs (one record per new fact), which is paid whether or not one
is asked for. The target (issue 16): at most 1.5x the time and 2x the memory.
"""

from __future__ import annotations

import gc
import statistics
import time
import tracemalloc


def _lars_run(program, stream, explain) -> float:
    from ..lars.engine import IncrementalEngine

    engine = IncrementalEngine(program, start=0, explain=explain)
    gc.collect()
    begin = time.process_time()
    for t, atoms in enumerate(stream):
        engine.advance_to(t, atoms)
    return time.process_time() - begin


def _lars_memory(program, stream, explain) -> int:
    from ..lars.engine import IncrementalEngine

    gc.collect()
    tracemalloc.start()
    engine = IncrementalEngine(program, start=0, explain=explain)
    for t, atoms in enumerate(stream):
        engine.advance_to(t, atoms)
    gc.collect()
    size = tracemalloc.get_traced_memory()[0]
    tracemalloc.stop()
    del engine
    return size


def lars(options, out=print) -> int:
    from .lars import WORKLOADS, build

    names = options.workloads or list(WORKLOADS)
    unknown = [n for n in names if n not in WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    quick = options.quick
    windows = options.windows or ([1, 20] if quick else [1, 20, 80])
    rates = options.rates or ([200] if quick else [200, 800])
    points = 60 if quick else options.time_points
    repeat = 1 if quick else options.repeat
    out(f"Explanations' cost on the LARS micro-benchmarks: {points} time points, the lower of {repeat} runs")
    out("(CPU time of the run); memory: Python memory the engine holds at the end (tracemalloc).")
    header = (f"{'workload':<9} {'n':>3} {'N':>4} {'off µs/atom':>11} {'on µs/atom':>11} {'time':>6}"
              f" {'off MB':>8} {'on MB':>8} {'memory':>7}")
    out(header)
    out("-" * len(header))
    ratios = []
    for name in names:
        for window in windows:
            for rate in rates:
                program, stream = build(WORKLOADS[name], window, rate, points)
                atoms = sum(len(a) for a in stream)
                off, on = [], []
                for _ in range(repeat):
                    off.append(_lars_run(program, stream, False))
                    on.append(_lars_run(program, stream, True))
                memory_off = _lars_memory(program, stream, False)
                memory_on = _lars_memory(program, stream, True)
                time_ratio, memory_ratio = min(on) / min(off), memory_on / memory_off
                ratios.append((time_ratio, memory_ratio))
                out(f"{name:<9} {window:>3} {rate:>4} {min(off) / atoms * 1e6:>11.2f} {min(on) / atoms * 1e6:>11.2f}"
                    f" {time_ratio:>5.2f}x {memory_off / 1e6:>8.2f} {memory_on / 1e6:>8.2f} {memory_ratio:>6.2f}x")
    _summary(ratios, out)
    return 0


def materialize(options, out=print) -> int:
    from ..core.terms import Dictionary
    from ..reasoning import Materializer
    from .materialize import build_forest, leaf_stream, plan

    quick = options.quick
    sizes = options.sizes or ([2000] if quick else [10_000, 50_000])
    shares = options.changes or ([1.0] if quick else [0.1, 1.0, 5.0, 20.0])
    window = (options.windows or [4])[0]
    slides = options.slides or (4 if quick else 20)
    repeat = 1 if quick else max(1, options.repeat or 3)

    def run(forest, stream, explain, trace=False):
        if trace:
            gc.collect()
            tracemalloc.start()
        m = Materializer("owl-rl", window=window, background=forest.background, terms=forest.terms, start=0,
                         explain=explain)
        m.advance_to(0)
        seconds = []
        for slide, arriving in enumerate(stream, start=1):
            begin = time.process_time()
            m.advance_to(slide, arriving)
            seconds.append(time.process_time() - begin)
        size = 0
        if trace:
            gc.collect()
            size = tracemalloc.get_traced_memory()[0]
            tracemalloc.stop()
        return statistics.median(seconds[window + 1:] or seconds), size, len(m.holding())

    out("Explanations' cost on Barbieri et al.'s materialization (OWL 2 RL, transitive isIn trees as background,")
    out(f"leaves streamed through a window of {window}): median time per slide over {slides} slides after the")
    out(f"window is full, the lower of {repeat} runs; memory: what the materializer holds at the end (tracemalloc).")
    header = (f"{'size':>8} {'change':>7} {'off':>10} {'on':>10} {'time':>6} {'off MB':>8} {'on MB':>8} {'memory':>7}")
    out(header)
    out("-" * len(header))
    ratios = []
    for size in sizes:
        for share in shares:
            terms = Dictionary()
            setting = plan(size, share, window)
            forest = build_forest(setting.trees, terms)
            stream = leaf_stream(forest, setting, window, window + 1 + slides)
            off, on = [], []
            for _ in range(repeat):
                off.append(run(forest, stream, False)[0])
                on.append(run(forest, stream, True)[0])
            _, memory_off, holding = run(forest, stream, False, trace=True)
            _, memory_on, _ = run(forest, stream, True, trace=True)
            time_ratio, memory_ratio = min(on) / min(off), memory_on / memory_off
            ratios.append((time_ratio, memory_ratio))
            out(f"{holding:>8,} {share:>6g}% {min(off) * 1e3:>8.2f}ms {min(on) * 1e3:>8.2f}ms {time_ratio:>5.2f}x"
                f" {memory_off / 1e6:>8.2f} {memory_on / 1e6:>8.2f} {memory_ratio:>6.2f}x")
    _summary(ratios, out)
    return 0


def _summary(ratios, out) -> None:
    if not ratios:
        return
    times = [t for t, _ in ratios]
    memories = [m for _, m in ratios]
    out(f"time: median {statistics.median(times):.2f}x, worst {max(times):.2f}x; "
        f"memory: median {statistics.median(memories):.2f}x, worst {max(memories):.2f}x "
        "(target: 1.5x time, 2x memory)")


def run(options, out=print) -> int:
    """`rsp-plugin bench lars|materialize --explain`."""
    if options.suite == "lars":
        return lars(options, out)
    if options.suite == "materialize":
        return materialize(options, out)
    out(f"--explain measures the lars and materialize suites, not {options.suite}")
    return 2
