"""The engine's whole-batch paths against the one-by-one paths they replace, on generated cases.

A time point's data taken by each view at once (`Relation.spread_data`, `View.on_data`,
`View.hold_all`), expiry in bulk (`View.begin`), a rule's derivations held at once
(`Output.hold_all`), stops found at once (`Output.stopped_at`), copy rules (`plan._copies`) and
delta plans that skip what an earlier plan of the rule derived (`plan.SKIP_DERIVED_TWICE`) must
start and stop the same facts at every time point as the paths below, which are the engine's
former code: one fact through `spread` -> `on_learn` -> `hold` at a time.
"""

from __future__ import annotations

import pytest

from lars_cases import ProgramGenerator, _facts
from rsp_plugin.lars import plan as plans
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.facts import Relation
from rsp_plugin.lars.output import Output
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.lars.views import View


def _spread_data(self, batch, now):
    for args in batch:
        change = self.learn(args, now, now, now)
        if change is not None:
            self.spread(args, change, now)


def _hold_all(self, batch, horizon):
    for args in batch:
        self.hold(args, horizon)


def _begin(self, now):
    if self.delta:
        self.delta = {}
    if self.recent:
        self.recent = {}
    due = self._expiring.pop(now - 1, None)
    if not due:
        return 0
    gone = 0
    for args in due:
        last = self.horizon.pop(args, None)
        if last == now - 1:
            gone += 1
            if self.indexes:
                self._unindex(args)
        elif last is not None:
            self.horizon[args] = last
    return gone


def _output_hold_all(self, predicate, table, out, started):
    for args, horizon in out:
        self.hold(predicate, table, args, horizon, started)


def _stopped_at(self, now):
    due = self._stopping.pop(now - 1, None)
    stopped = []
    for k in range(0, len(due or ()), 2):
        predicate, args = due[k], due[k + 1]
        table = self.until[predicate]
        last = table.pop(args, None)
        if last == now - 1:
            stopped.append((predicate, args))
        elif last is not None:
            table[args] = last
    return stopped


def _one_by_one(patch) -> None:
    patch.setattr(Relation, "spread_data", _spread_data)
    patch.setattr(View, "hold_all", _hold_all)
    patch.setattr(View, "begin", _begin)
    patch.setattr(Output, "hold_all", _output_hold_all)
    patch.setattr(Output, "stopped_at", _stopped_at)
    patch.setattr(plans, "_copies", lambda rule, positives: False)
    patch.setattr(plans, "SKIP_DERIVED_TWICE", False)


def _run(program_text: str, stream: dict[int, list[str]], one_by_one: bool, monkeypatch, repeat: bool) -> list:
    with monkeypatch.context() as patch:
        if one_by_one:
            _one_by_one(patch)
        program = parse_program(program_text)
        engine = IncrementalEngine(program, start=min(stream))
        steps = []
        for t in range(min(stream), max(stream) + 1):
            facts = _facts(program, stream.get(t, []), t)
            if repeat:  # data fed twice in a time point (the join benchmark's stream)
                facts = facts + facts[::-1]
            report = engine.advance_to(t, facts)
            steps.append((t, sorted(report.started), sorted(report.stopped), sorted(engine.holding())))
        return steps


@pytest.mark.parametrize("seed", range(300))
def test_batch_paths_start_and_stop_what_one_by_one_does(seed, monkeypatch):
    generator = ProgramGenerator(seed, box_bias=0.3 if seed % 2 else 0.0, chains=seed % 3 == 0,
                                 derived_in_data=seed % 5 == 0)
    program, stream = generator.program(), generator.stream()
    repeat = seed % 4 == 1
    assert _run(program, stream, False, monkeypatch, repeat) == _run(program, stream, True, monkeypatch, repeat), (
        f"program:\n{program}\nstream: {stream}")


@pytest.mark.parametrize("program", [
    "q(X,Y) :- [RANGE 3] DIAMOND p(X,Y) .",
    "q(X,Z) :- [RANGE 2] DIAMOND p(X,Y), [RANGE 2] DIAMOND p(Y,Z) .",
    "q(X,Y) :- p(X,Y) .\nr(Y) :- [RANGE 2] DIAMOND q(X,Y) .\ns(Y,X) :- [RANGE 1] DIAMOND p(X,Y) .",
])
def test_the_benchmark_shapes_agree_too(program, monkeypatch):
    stream = {t: [f"p(c{k},c{k + 1})" for k in range(t, t + 6)] + [f"p(c{t},c{t + 1})"] for t in range(12)}
    assert _run(program, stream, False, monkeypatch, True) == _run(program, stream, True, monkeypatch, True)


def test_a_copy_rule_fires_its_delta_as_it_stands():
    program = parse_program("q(X,Y) :- [RANGE 3] DIAMOND p(X,Y) .\nr(Y,X) :- [RANGE 3] DIAMOND p(X,Y) .")
    engine = IncrementalEngine(program)
    copy, swap = (stratum_plan for stratum in engine.strata for stratum_plan in stratum.plans)
    assert "out.extend(delta)" in copy.sources["delta 0"]
    assert "out.extend(delta)" not in swap.sources["delta 0"]
