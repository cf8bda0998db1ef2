"""`rsp-plugin bench materialize` runs, and its three ways of materializing agree (timings are never asserted)."""

from rsp_plugin.bench import BenchOptions
from rsp_plugin.bench.materialize import DEPTH, build_forest, leaf_stream, plan, run
from rsp_plugin.reasoning import Materializer
from rsp_plugin.core.terms import Dictionary


def test_the_plan_hits_the_requested_share_of_change():
    window = 4
    for share in (1.0, 5.0, 20.0):
        setting = plan(20_000, share, window)
        background = setting.trees * sum(d * 3**d for d in range(1, DEPTH + 1))
        changing = 2 * setting.leaves_per_slide * (DEPTH + 1)
        size = background + (window + 1) * setting.leaves_per_slide * (DEPTH + 1)
        assert abs(changing / size * 100 - share) < share * 0.1


def test_a_slide_changes_what_the_plan_says_and_leaves_are_recycled():
    terms = Dictionary()
    window = 2
    setting = plan(3000, 5.0, window)
    forest = build_forest(setting.trees, terms)
    stream = leaf_stream(forest, setting, window, 8)
    m = Materializer("owl-rl", window=window, background=forest.background, terms=terms, start=0)
    m.advance_to(0)
    changes = [m.advance_to(slide, arriving) for slide, arriving in enumerate(stream, start=1)]
    per_leaf = DEPTH + 1
    assert [len(r.added) for r in changes[window + 1:]] == [setting.leaves_per_slide * per_leaf] * 5
    assert [len(r.removed) for r in changes[window + 1:]] == [setting.leaves_per_slide * per_leaf] * 5
    size = len(terms)
    more = leaf_stream(forest, setting, window, 16)
    assert len(terms) == size and len(more) == 16  # recycled leaf names: no new terms


def test_bench_materialize_runs_and_checks_incremental_against_from_scratch():
    lines = []
    options = BenchOptions(quick=True, sizes=(600,), changes=(1.0, 20.0), windows=(2,), slides=2, owlrl_slides=0)
    assert run(options, out=lines.append) == 0  # 1 would mean the materializations differed
    text = "\n".join(lines)
    assert "incremental" in text and "crossover" in text and "memory" in text
    assert sum(1 for line in lines if line.strip().startswith(("1%", "20%"))) == 2
