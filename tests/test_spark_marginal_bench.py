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
