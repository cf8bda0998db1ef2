"""`rsp-plugin bench query` runs and prints its tables (its figures are read, never asserted)."""

from rsp_plugin.bench import BenchOptions
from rsp_plugin.bench.query import observations, run


def test_the_latency_workload_prints_a_row_per_query_and_entailment():
    lines = []
    options = BenchOptions(workloads=("latency",), sizes=(300,), quick=True, repeat=1)
    assert run(options, out=lines.append) == 0
    rows = [line.split() for line in lines if line.startswith(("join+FILTER", "aggregate", "OPTIONAL"))]
    assert [(row[0], row[1], row[5]) for row in rows] == [
        ("join+FILTER", "off", "fast"), ("aggregate", "off", "fast"), ("OPTIONAL", "off", "algebra"),
        ("join+FILTER", "RDFS", "fast"), ("aggregate", "RDFS", "fast"), ("OPTIONAL", "RDFS", "algebra")]
    assert not any(line.startswith("!!") for line in lines)


def test_the_observations_fill_the_window_evenly():
    elements = observations(1000, 0, seed=1)
    assert len(elements) == 1000 and elements[0][0] == 0 and elements[-1][0] < 10_000
    assert len({triple for _, triple in elements}) == 1000


def test_an_unknown_workload_is_named():
    lines = []
    assert run(BenchOptions(workloads=("nope",), quick=True, repeat=1), out=lines.append) == 2
    assert "latency, sharing" in lines[0]
