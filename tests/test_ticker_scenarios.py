"""Ticker's evaluation scenarios (Beck, Eiter, Folie 2017, Section 6) in our syntax, under
examples/: the caching strategy (Fig. 2, setup A1) and content retrieval (Fig. 3), each
with a stream and the output per time point worked out by hand from the rules."""

import json
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).parent.parent / "examples"


def reason(*args) -> list[dict]:
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "reason", *map(str, args)],
                          capture_output=True, text=True, cwd=EXAMPLES)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines()]


# Scenario A: alpha 20 25 19 | 15 14 13 | 5 | 20 | 3 2 1; a strategy once its level filled [t - 2, t]
CACHING = {
    0: ["done", "high", "lfu"],   # the window is clipped to [0, 0]
    1: ["done", "high", "lfu"],
    2: ["done", "high", "lfu"],
    3: ["mid", "random"],         # [1, 3]: high, high, mid
    4: ["mid", "random"],
    5: ["done", "lru", "mid"],    # [3, 5]: mid, mid, mid
    6: ["low", "random"],
    7: ["high", "random"],
    8: ["low", "random"],
    9: ["low", "random"],         # [7, 9]: high, low, low
    10: ["done", "fifo", "low"],  # [8, 10]: low, low, low
}


@pytest.mark.parametrize("semantics", ["stream", "answer-stream"])
def test_scenario_a_caching_strategy(semantics):
    # high / mid / low are placed by @T heads over the same window the BOXes read: both
    # semantics see the same atoms, and print the same
    lines = reason("ticker-caching.lars", "--stream", "ticker-caching.stream", "--semantics", semantics)
    assert {line["t"]: line["atoms"] for line in lines} == CACHING
    assert lines == [json.loads(line) for line in (EXAMPLES / "ticker-caching.expected.jsonl").read_text().splitlines()]


# Scenario B: routers n1 - n2 - n3, item i, window 2
BACKGROUND = {"node(n1)", "node(n2)", "node(n3)", "item(i)", "lev(0)", "lev(1)", "lev(2)",
              "edge(n1,n2)", "edge(n2,n1)", "edge(n2,n3)", "edge(n3,n2)"}
ALL_UP = {"conn(n1,n2)", "conn(n2,n1)", "conn(n2,n3)", "conn(n3,n2)",
          "reach(n1,n2)", "reach(n2,n1)", "reach(n2,n3)", "reach(n3,n2)", "reach(n1,n3)", "reach(n3,n1)"}
FROM_N3 = {"get(i,n1,n3)", "nGet(i,n1,n1)", "nGet(i,n1,n2)"}  # n1 gets i from n3 (nGet: not from others)
FROM_N2 = {"get(i,n1,n2)", "nGet(i,n1,n1)", "nGet(i,n1,n3)"}
CONTENT = {
    # n1 needs i, only n3 has it: one source
    0: [BACKGROUND | ALL_UP | {"need(i,n1)", "avail(i,n3)", "source(i,n1,n3)", "qual(n2,1)", "qual(n3,2)"} | FROM_N3],
    # n2 caches i too, but its level 1 < n3's 2 rules it out (nGet by quality), though it also reports 2
    1: [BACKGROUND | ALL_UP | {"need(i,n1)", "avail(i,n2)", "avail(i,n3)", "source(i,n1,n2)", "source(i,n1,n3)",
                               "qual(n2,1)", "qual(n2,2)", "qual(n3,2)"} | FROM_N3],
    2: [BACKGROUND | ALL_UP | {"need(i,n1)", "avail(i,n2)", "avail(i,n3)", "source(i,n1,n2)", "source(i,n1,n3)",
                               "qual(n2,1)", "qual(n2,2)", "qual(n3,2)"} | FROM_N3],
    # n3's level left the window [1, 3]: no quality tells the two sources apart, two answers
    3: [BACKGROUND | ALL_UP | {"need(i,n1)", "avail(i,n2)", "avail(i,n3)", "source(i,n1,n2)", "source(i,n1,n3)",
                               "qual(n2,2)"} | chosen for chosen in (FROM_N2, FROM_N3)],
    4: [BACKGROUND | ALL_UP | {"need(i,n1)", "avail(i,n2)", "avail(i,n3)", "source(i,n1,n2)", "source(i,n1,n3)"}
        | chosen for chosen in (FROM_N2, FROM_N3)],
    # the request at 2 left the window [3, 5]: nothing needed
    5: [BACKGROUND | ALL_UP | {"avail(i,n2)", "avail(i,n3)"}],
    # n2 down through [4, 6]: no edge into n2, n1 reaches nothing, n3's copy is out of reach
    6: [BACKGROUND | {"conn(n2,n1)", "conn(n2,n3)", "reach(n2,n1)", "reach(n2,n3)", "need(i,n1)", "avail(i,n3)"}],
}


def test_scenario_b_content_retrieval_every_answer():
    lines = reason("ticker-content.lars", "--stream", "ticker-content.stream", "--semantics", "answer-stream",
                   "--models", "all")
    assert {line["t"]: line["models"] for line in lines} == {
        t: [sorted(model) for model in models] for t, models in CONTENT.items()}
    assert lines == [json.loads(line) for line in (EXAMPLES / "ticker-content.expected.jsonl").read_text().splitlines()]


def test_scenario_b_content_retrieval_first_answer():
    lines = reason("ticker-content.lars", "--stream", "ticker-content.stream", "--semantics", "answer-stream")
    # at 3 and 4 the first answer in the deterministic order: get(i,n1,n2) sorts before get(i,n1,n3)
    assert {line["t"]: line["atoms"] for line in lines} == {t: sorted(models[0]) for t, models in CONTENT.items()}


def test_scenario_b_is_refused_under_the_default_semantics():
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "reason", "ticker-content.lars",
                           "--stream", "ticker-content.stream"], capture_output=True, text=True, cwd=EXAMPLES)
    assert done.returncode == 2
    assert done.stderr.startswith("rsp-plugin: ticker-content.lars:7:33: a loop through `not`")
    assert done.stderr.rstrip().endswith("(answer-stream semantics accepts it: --semantics answer-stream)")
