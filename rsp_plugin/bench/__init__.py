"""`rsp-plugin bench SUITE`: benchmarks that print figures, each with its baseline measured in the same run."""

from __future__ import annotations

from dataclasses import dataclass, replace

#: the suites that need an extra (rsp_plugin/core/extras.py) beyond the engine
_SUITE_NEEDS = {"lars": "asp", "spark": "spark", "serve": "service", "mqtt": "mqtt"}
#: the suites that draw a plot unless `--plot -` (spark: only when --plot names a file)
_PLOTS_BY_DEFAULT = ("throughput", "soak", "mqtt")


def needs(options: BenchOptions) -> list[tuple[str, str]]:
    """(extra, what needs it) for a suite as asked: checked before it runs, not after minutes of it."""
    found = []
    if options.suite in _SUITE_NEEDS:
        found.append((_SUITE_NEEDS[options.suite], f"rsp-plugin bench {options.suite}"))
    plot = options.plot
    if plot != "-" and (plot or options.suite in _PLOTS_BY_DEFAULT):
        found.append(("bench", f"the plot of rsp-plugin bench {options.suite} (--plot - for none)"))
    return found


@dataclass(frozen=True)
class BenchOptions:
    """`rsp-plugin bench SUITE [WORKLOAD ...] ...` as typed values (the command line's defaults): each
    suite reads the fields it has a use for; None is the suite's own default."""

    suite: str = "lars"
    workloads: tuple[str, ...] = ()
    windows: tuple[int, ...] | None = None
    rates: tuple[int, ...] | None = None
    time_points: int = 300
    #: runs per setting (None: the suite's own default, `run_suite`)
    repeat: int | None = None
    quick: bool = False
    sizes: tuple[int, ...] | None = None
    changes: tuple[float, ...] | None = None
    slides: int | None = None
    owlrl_slides: int | None = None
    explain: bool = False
    plot: str | None = None
    old_limit: int | None = None
    triples: int | None = None
    masters: tuple[str, ...] | None = None
    modes: tuple[str, ...] | None = None
    project: int | None = None
    overhead: bool = False
    #: spark: the marginal cost per million triples, distributed against one embedded core (`spark_marginal`)
    marginal: bool = False
    #: shapes: windows as (RANGE, STEP) in seconds
    range_steps: tuple | None = None
    #: shapes: runs of each baseline (None: --repeat)
    baseline_repeat: int | None = None
    #: shapes: per-report CPU of a live stream (`bench/live.py`) instead of whole processes
    live: bool = False


def run_suite(options: BenchOptions) -> int:
    if options.repeat is None:  # (not given: each suite's own default; the Spark modes' one run each)
        options = replace(options, repeat=1 if options.suite == "spark" and not (options.overhead or options.marginal)
                          else 5 if options.suite == "startup" else 3)
    if options.explain:  # what explanations cost (rsp_plugin/bench/explain.py)
        from .explain import run

        return run(options)
    if options.suite == "lars":
        from .lars import run

        return run(options)
    if options.suite == "pruning":
        from .pruning import run

        return run(options)
    if options.suite == "materialize":
        from .materialize import run

        return run(options)
    if options.suite == "query":
        from .query import run

        return run(options)
    if options.suite == "datalogmtl":
        from .datalogmtl import run

        return run(options)
    if options.suite == "spark":
        from .spark_reason import WORKLOADS as RULE_WORKLOADS

        if options.marginal:  # seconds per extra million triples, distributed next to one embedded core
            from .spark_marginal import run

            return run(options)
        if options.workloads and all(name in RULE_WORKLOADS for name in options.workloads):
            # temporal rules on the executors against one embedded core
            from .spark_reason import run

            return run(options)
        if options.overhead:
            from .spark import run

            return run(options)
        from .spark_modes import run

        return run(options)
    if options.suite == "serve":
        from .serve import run

        return run(options)
    if options.suite == "throughput":
        from .throughput import run

        return run(options)
    if options.suite == "reason":
        from .reason import run

        return run(options)
    if options.suite == "mqtt":
        from .mqtt import run

        return run(options)
    if options.suite == "soak":
        from .soak import run

        return run(options)
    if options.suite == "shapes":
        from .shapes import run

        return run(options)
    if options.suite == "startup":
        from .startup import run

        return run(options)
    raise ValueError(f"unknown benchmark suite {options.suite!r}")
