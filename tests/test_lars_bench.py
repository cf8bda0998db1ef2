"""`rsp-plugin bench lars` and `bench pruning` tell the truth: distinct atoms are counted,
the pruning workloads derive something (the same with and without pruning), and the
answer-stream table checks that the solver path and the engine print the same."""

from pathlib import Path

from rsp_plugin.bench import BenchOptions, lars, pruning


def test_the_join_stream_counts_each_atom_once_per_time_point():
    stream = lars.WORKLOADS["join"].stream(10, 3, 1)
    assert [len(atoms) for atoms in stream] == [20, 20, 20]  # p(c_k, c_k+1) comes twice
    assert lars.distinct_atoms(stream) == 3 * 11


def test_repeated_draws_count_once():
    assert lars.distinct_atoms([[("p", ("a",)), ("p", ("a",)), ("p", ("b",))], [("p", ("a",))]]) == 3


def test_the_pruning_workloads_derive_something_and_the_same_either_way():
    for experiment, label, program, stream in pruning.experiments(quick=True):
        if experiment not in ("best", "worst", "chain"):
            continue
        _, _, on = pruning.measure(program, stream, True, 1)
        _, _, off = pruning.measure(program, stream, False, 1)
        assert sum(on) > 0, f"{experiment} {label} derives nothing"
        assert on == off, f"{experiment} {label}"


def test_the_whole_process_is_measured_both_ways(tmp_path: Path):
    program = pruning.BEST.format(n=2)
    stream = pruning._stream(5, 12, lambda t: t % 6 != 0)
    on, off, same = pruning.whole_process(program, stream, tmp_path)
    assert on > 0 and off > 0 and same


def test_the_answer_stream_table_runs_the_solver_and_the_engine():
    lines = []
    options = BenchOptions(workloads=("ticker-a", "ticker-b"), quick=True, time_points=40, repeat=1)
    assert lars.run(options, out=lines.append) == 0
    rows = {line.split()[0]: line.split() for line in lines if line.startswith("ticker-")}
    assert rows["ticker-a"][-1] == "yes"  # stratified: both paths print the same
    assert rows["ticker-b"][-1] == "-" and float(rows["ticker-b"][-2]) >= 1  # answers per time point
