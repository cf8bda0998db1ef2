"""`rsp-plugin bench spark --marginal`: its arithmetic and its refusals (the Spark runs are the benchmark's own)."""

from rsp_plugin.bench import BenchOptions, run_suite
from rsp_plugin.bench.spark_marginal import _marginal, _ratio, _shown, by_instant
from rsp_plugin.cli.command_line import parse_options


def test_the_marginal_cost_is_the_difference_per_million_and_noise_is_said():
    assert _marginal(2.0, 3.0, 500_000) == 2.0
    assert _marginal(3.0, 2.5, 500_000) is None and _shown(None) == "noise"
    assert _ratio(6.0, 4.0) == "1.50" and _ratio(None, 4.0) == "-"


def test_answers_are_compared_per_instant_with_their_rows_sorted():
    lines = [{"t": 5, "bindings": [{"s": "<b>"}, {"s": "<a>"}]}, {"t": 10, "bindings": []}]
    assert by_instant(lines) == {"5": ['{"s": "<a>"}', '{"s": "<b>"}'], "10": []}


def test_the_command_line_asks_for_it_and_an_unknown_workload_is_refused_before_spark(capsys):
    options = parse_options(["bench", "spark", "nope", "--marginal"])
    assert options.marginal and options.workloads == ("nope",)
    assert run_suite(BenchOptions(suite="spark", marginal=True, workloads=("nope",))) == 2
    assert "expected: plain, rdfs" in capsys.readouterr().err


def test_the_projection_of_the_marginal_cost_spreads_executor_time_and_keeps_the_rest():
    """(2N - N) per million triples, per stage kind: executor time spread over min(executors, tasks), the
    stage's fixed part (wall past its executor time over the measured 2 slots) and the driver between
    stages as they are; the whole run's fixed cost said beside it."""
    from rsp_plugin.bench.spark_modes import project_marginal

    def stage(executor, wall):
        return {"kind": "slices", "tasks": 10, "executor": executor, "wall": wall}

    measured = {1_000_000: [([stage(10.0, 5.5)], 7.0)], 2_000_000: [([stage(20.0, 10.5)], 12.5)]}
    text = project_marginal(measured, 1_000_000, 10, "a test")
    row = next(line for line in text.splitlines() if line.startswith("slices"))
    assert row.split()[1:] == ["10", "10.000", "0.000", "10.000", "1.000"]
    assert "10.500 s/M at 1 executor, 1.500 s/M at 10" in text and "7.00x from 1 to 10" in text
    assert "bound at 10 by: slices" in text
    assert "the driver between stages 1.50 s at N, 2.00 s at 2N" in text
    # medians of the runs: an outlier at 2N does not move it
    measured[2_000_000] += [([stage(20.0, 10.5)], 12.5), ([stage(40.0, 30.5)], 40.0)]
    measured[1_000_000] += [([stage(10.0, 5.5)], 7.0)] * 2
    assert "7.00x from 1 to 10" in project_marginal(measured, 1_000_000, 10, "a test")
    noisy = {1_000_000: [([stage(10.0, 5.5)], 7.0)], 2_000_000: [([stage(9.0, 5.0)], 6.0)]}
    assert "marginal: noise" in project_marginal(noisy, 1_000_000, 10, "a test")
