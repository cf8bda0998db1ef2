"""`rsp-plugin bench startup` runs its rows as whole processes (its figures are read, never asserted)."""

import json
import os
from pathlib import Path

from rsp_plugin.bench import BenchOptions, startup

EXAMPLES = Path(__file__).resolve().parent.parent / "examples"


def test_the_example_rows_are_the_readme_s_and_the_query_reports_its_window(tmp_path):
    rows = startup.commands(tmp_path)
    assert (tmp_path / "hightemp.lars").read_text() == (EXAMPLES / "hightemp.lars").read_text().split("\n", 1)[1]
    assert (tmp_path / "hightemp.stream").read_text() == (EXAMPLES / "hightemp.stream").read_text()
    assert len((tmp_path / "sosa.tnt").read_text().splitlines()) == 3
    env = dict(os.environ)  # (the bytecode as it is: no cache to fill for two runs)
    cpu, wall, printed = startup.process(rows["reason"], env)
    assert cpu > 0 and wall > 0
    assert printed.decode().splitlines() == (EXAMPLES / "hightemp.expected.jsonl").read_text().splitlines()
    _, _, printed = startup.process(rows["query"], env)
    reports = [json.loads(line) for line in printed.decode().splitlines()]
    assert [report["t"] for report in reports] == [5000, 10000]  # [RANGE 10s STEP 5s] over 0..20 ms
    sensor = (tmp_path / "sosa.tnt").read_text().splitlines()[1].split()[3]  # (the observation's sensor)
    assert [(row["sensor"], row["n"]) for row in reports[0]["bindings"]] == [
        (sensor, '"1"^^<http://www.w3.org/2001/XMLSchema#integer>')]


def test_children_that_would_write_no_bytecode_keep_theirs_in_the_scratch_folder(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    env = startup.child_environment(tmp_path)
    assert "PYTHONDONTWRITEBYTECODE" not in env and env["PYTHONPYCACHEPREFIX"] == str(tmp_path / "pycache")


def test_a_quick_run_prints_every_row_and_the_ratio():
    lines = []
    assert startup.run(BenchOptions(quick=True, repeat=1), out=lines.append) == 0
    rows = {line.split()[0]: line.split() for line in lines
            if line.split() and line.split()[0] in ("baseline", "query", "reason", "floor")}
    assert list(rows) == ["baseline", "query", "reason", "floor"] and rows["baseline"][3] == "1.00x"
    assert any(line.startswith("query / baseline: ") for line in lines)
