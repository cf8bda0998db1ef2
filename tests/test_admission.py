"""Admission (rsp_plugin/core/admission.py): the per-element and the vectorised forms give the same verdicts,
the same messages and move the stream's time alike, on seeded random streams (out of order, repeated
timestamps, far jumps ahead and back, before t0), cut into batches anywhere, in both kinds of stream
(the query engine's watermark, `reason`'s timeline read in time order)."""

from __future__ import annotations

import random

import numpy as np
import pytest

from rsp_plugin.core import admission
from rsp_plugin.core.admission import Gap, Gate


def random_stream(rng: random.Random, count: int) -> list[int]:
    """Mostly forward in small steps; sometimes repeated, back a little or a lot, far ahead, before 0."""
    t = rng.choice([0, 5, 1000])
    out = []
    for _ in range(count):
        roll = rng.random()
        if roll < 0.55:
            t += rng.choice([0, 1, 1, 2, 5, 40])
            out.append(t)
        elif roll < 0.65:
            out.append(t)  # a repeat
        elif roll < 0.78:
            out.append(t - rng.choice([1, 3, 30, 300]))  # back (late, or behind the gap)
        elif roll < 0.88:
            out.append(t + rng.choice([60, 500, 10 ** 6]))  # far ahead (not followed)
        elif roll < 0.93:
            t += rng.choice([60, 500])  # a jump the stream follows
            out.append(t)
        elif roll < 0.97:
            out.append(rng.choice([-7, -1, 0]))  # before t0, or at it
        else:
            out.append(rng.choice([10 ** 18, -(10 ** 18), 2 ** 62]))  # beyond what int64 differences hold
    return out


def random_gate(rng: random.Random, in_order: bool) -> Gate:
    if in_order:
        gap = rng.choice([None, Gap(10), Gap(100)])
        return Gate(in_order=True, gap=gap, start=rng.choice([None, 0, 3]))
    gap = rng.choice([None, Gap(3, 10), Gap(20, 5), Gap(1, 100)])
    return Gate(t0=rng.choice([0, 2, None]), gap=gap)


def cuts(rng: random.Random, count: int) -> list[tuple[int, int]]:
    edges = sorted({0, count, *(rng.randrange(count + 1) for _ in range(rng.randrange(4)))})
    return list(zip(edges, edges[1:]))


@pytest.mark.parametrize("in_order", [False, True], ids=["watermark", "in-order"])
@pytest.mark.parametrize("run", [4096, 3])
def test_the_per_element_and_the_vectorised_forms_agree(in_order, run, monkeypatch):
    monkeypatch.setattr(admission, "_RUN", run)  # (3: a run ends after a few rows, its next starts in between)
    rng = random.Random(f"{in_order}-{run}")
    compared = set_aside = 0
    for case in range(150):
        times = random_stream(rng, rng.choice([1, 7, 60, 300]))
        one = random_gate(rng, in_order)
        many = Gate(**vars(one))
        opening = rng.choice([lambda t: t % 3 != 0, lambda t: True, lambda t: False])
        for start, stop in cuts(rng, len(times)):
            if not in_order and rng.random() < 0.6:  # the watermark moves between batches (as `advance_to`)
                now = [value for value in (one.latest, one.watermark) if value is not None]
                if now:
                    watermark = max(now) + rng.choice([-20, 0, 7])
                    if one.watermark is None or watermark > one.watermark:
                        one.watermark = many.watermark = watermark
            batch = times[start:stop]
            still_open = np.array([opening(t) for t in batch], dtype=bool)
            expected_taken, expected_aside = [], []
            for row, t in enumerate(batch):
                problem = one.judge(t, bool(still_open[row]))
                expected_taken.append(problem is None)
                if problem is not None:
                    expected_aside.append((row, problem))
            taken, aside = many.judge_many(np.array(batch, dtype=np.int64), still_open)
            where = f"case {case}, rows {start}:{stop} of {times}"
            assert taken.tolist() == expected_taken, where
            assert aside == expected_aside, where
            assert (many.latest, many.watermark) == (one.latest, one.watermark), where
            compared += len(batch)
            set_aside += len(aside)
    assert compared > 10_000 and set_aside > 1000  # (the streams do reach every rule)


def test_each_rule_is_reached_with_its_message():
    gate = Gate(t0=0, gap=Gap(3, 10))
    assert gate.judge(-1) == "timestamp -1 is before the start of the timeline (0)"
    assert gate.judge(5) is None and gate.judge(50) is not None and gate.latest == 5
    gate.watermark = 20
    assert gate.judge(12, still_open=False) == ("late: timestamp 12 is older than every window still to be "
                                                "reported (watermark 20); set aside")
    assert gate.judge(12, still_open=True) is None and gate.latest == 12
    assert gate.judge(55) == ("timestamp 55 is 35 ms ahead of the stream (max gap 3 windows of 10 ms = 30 ms; "
                              "--max-gap); set aside")
    gate.watermark = 60
    assert gate.judge(11) == ("timestamp 11 is 49 ms behind the stream (max gap 3 windows of 10 ms = 30 ms; "
                              "--max-gap); set aside")
    assert gate.far_from_now(95) is not None and gate.far_from_now(90) is None
    timeline = Gate(in_order=True, gap=Gap(5), start=1)
    assert timeline.judge(7) == ("timestamp 7 is 6 time points ahead of the stream (max gap 5; --max-gap); "
                                 "set aside")
    assert timeline.judge_interval(2, 9) == ("the interval [2,9] ends 7 time points after it starts "
                                             "(max gap 5; --max-gap); set aside")
    assert timeline.judge_interval(2, 6) is None and timeline.judge(1) == ("time point 1 is older than time "
                                                                           "point 2 read before it; set aside")
    assert timeline.judge_interval(1, 1) == ("starts at time point 1, before time point 2 read earlier; "
                                             "set aside (a stream is read in time order)")
