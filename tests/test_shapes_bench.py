"""`rsp-plugin bench shapes` end to end in its smallest setting: whole processes, ours and the
pyoxigraph / reasonable baselines, the same AVG per sensor in every report."""

from argparse import Namespace


from rsp_plugin.bench import shapes
from rsp_plugin.bench.shapes_baseline import report_times



def test_every_cell_of_a_tiny_matrix_gives_the_baselines_answers(tmp_path):
    lines = []
    options = Namespace(workloads=["plain", "rdfs"], quick=True, rates=[1000], range_steps=[(10, 5), (60, 1)],
                        sizes=[900], repeat=1, baseline_repeat=None, plot=str(tmp_path / "shapes.png"))
    assert shapes.run(options, out=lines.append) == 0, "\n".join(lines)
    rows = [line.split() for line in lines if line.split() and line.split()[0] == "900"]
    assert [(row[1], row[2], row[3]) for row in rows] == [
        ("1,000", "10/5", "plain"), ("1,000", "60/1", "plain"), ("1,000", "10/5", "rdfs"), ("1,000", "60/1", "rdfs")]
    # 900 triples at 1,000/s: the last at 897 ms; reports at every STEP up to the last window reaching it
    assert [int(row[4]) for row in rows] == [len(report_times(0, 897, 10_000, 5_000)),
                                             len(report_times(0, 897, 60_000, 1_000))] * 2 == [2, 60] * 2
    assert all("same" in row and "DIFFER" not in row for row in rows)
    assert "answers: 4 of 4 cells give the baseline's answers in every report" in lines
    assert (tmp_path / "shapes.png").stat().st_size > 0


def test_the_alert_workload_reports_each_observation_once_as_its_baseline_does(tmp_path):
    """`alert`: ISTREAM of the observations over a threshold, against pyoxigraph per window less the
    previous window's rows; no target applies to it."""
    lines = []
    options = Namespace(workloads=["alert"], quick=True, rates=[100], range_steps=[(10, 5), (60, 1)],
                        sizes=[3000], repeat=1, baseline_repeat=None, plot="-")
    assert shapes.run(options, out=lines.append) == 0, "\n".join(lines)
    rows = [line for line in lines if line.split() and line.split()[0] == "3,000"]
    assert [line.split()[2:4] for line in rows] == [["10/5", "alert"], ["60/1", "alert"]]
    assert all(line.split("|")[-1].split()[:2] == ["-", "-"] for line in rows)  # (tr/s and x: no target)
    assert all("same" in line.split() for line in rows)
    assert "ISTREAM" in shapes.continuous_query("alert", 10, 5)


def test_the_reports_are_read_alike_and_a_difference_is_said():
    ours = shapes.our_reports(
        b'{"t": 5000, "bindings": [{"s": "<http://ex.org/shapes/sensor1>", '
        b'"avg": "\\"2.333333333333333333333333333\\"^^<http://www.w3.org/2001/XMLSchema#decimal>"}]}\n')
    theirs = shapes.baseline_reports(b'{"t": 5000, "rows": {"http://ex.org/shapes/sensor1": "2.333333333333333333"}}\n')
    assert shapes.difference(ours, theirs) is None
    other = shapes.baseline_reports(b'{"t": 5000, "rows": {"http://ex.org/shapes/sensor1": "2.3334"}}\n')
    assert shapes.difference(ours, other) == "t = 5000: http://ex.org/shapes/sensor1 2.333333333333333333333333333 vs 2.3334"


def test_without_the_bench_extra_it_says_which_extra_to_install(monkeypatch):
    real = shapes.importlib.util.find_spec
    monkeypatch.setattr(shapes.importlib.util, "find_spec", lambda name: None if name == "reasonable" else real(name))
    lines = []
    assert shapes.run(Namespace(workloads=[], quick=True), out=lines.append) == 2
    assert lines == ["bench shapes needs reasonable for its baselines: pip install 'rsp_plugin[bench]' "
                     "(or pip install pyoxigraph reasonable)"]


def test_live_cells_report_per_report_figures():
    """`--live`: the stream pushed element by element, a report per window closed, each timed."""
    lines = []
    options = Namespace(workloads=["plain", "rdfs"], quick=True, rates=[100], range_steps=[(10, 5), (60, 1)],
                        sizes=[900], live=True)
    assert shapes.run(options, out=lines.append) == 0
    rows = [line.split() for line in lines if line.split() and line.split()[0] == "100"]
    # 900 triples at 100/s: the last at 8.97 s; a report at every STEP whose window holds an element
    assert [(row[1], row[2], int(row[3])) for row in rows] == [("10/5", "plain", 1), ("60/1", "plain", 8),
                                                              ("10/5", "rdfs", 1), ("60/1", "rdfs", 8)]
    assert all(float(row[4]) > 0 and float(row[7]) >= 0 for row in rows)
