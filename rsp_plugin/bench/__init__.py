"""`rsp-plugin bench SUITE`: benchmarks that print figures, each with its baseline measured in the same run."""

from __future__ import annotations


def run_suite(options) -> int:
    if getattr(options, "repeat", None) is None:  # (not given: each suite's own default; the Spark modes' one run each)
        options.repeat = (1 if options.suite == "spark" and not getattr(options, "overhead", False)
                          else 5 if options.suite == "startup" else 3)
    if getattr(options, "explain", False):  # what explanations cost (rsp_plugin/bench/explain.py)
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
        if getattr(options, "overhead", False):
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
