"""`rsp-plugin bench reason`: the per-line baseline prints what `rsp-plugin reason` prints, and
the benchmark runs both as whole processes on the same files and compares their lines."""

import io
from pathlib import Path

from rsp_plugin.columnar.reason import replay
from rsp_plugin.bench import reason
from rsp_plugin.lars.syntax import parse_program_file


def test_the_per_line_baseline_prints_the_batch_path_s_lines(tmp_path: Path):
    for name in reason.WORKLOADS:
        program, stream, distinct = reason.write_files(name, 3, 20, 25, tmp_path)
        assert distinct == (25 * 20 if name == "diamond" else 25 * 21)  # join: p(c_k+1, c_k+2) twice
        baseline = io.StringIO()
        assert reason.per_line_reason(str(program), str(stream), baseline) == 0
        batch = io.StringIO()
        replay(parse_program_file(str(program)), stream, batch)
        assert baseline.getvalue() == batch.getvalue()
        assert baseline.getvalue().count("\n") == 25


def test_both_run_as_whole_processes_and_agree(tmp_path: Path):
    program, stream, _ = reason.write_files("join", 2, 10, 12, tmp_path)
    figures = reason.measure(program, stream, 1, tmp_path)
    assert figures["same"]
    for path in ("per-line", "batch"):
        assert figures[path]["lines"] == 12
        assert figures[path]["wall"] > 0 and figures[path]["cpu"] > 0
