"""The window shapes the dialects added, pinned where they live (`windows.py`, the runtime):
windows that end before NOW (`[FROM NOW-PT2S TO NOW-PT1S ...]`, `[NOW-2 S TO NOW-1 S ...]`),
the content version and next change the on-content-change policy reads, and the skipping
of instants at which nothing can change."""

from __future__ import annotations

from rdflib import URIRef

from rsp_plugin.query import RangeWindow, ReportPolicy
from rsp_plugin.query.model import CountWindow
from rsp_plugin.query.windows import CountingWindow, TimeWindow
from rsp_plugin.runtime.engine import RSPEngine


def test_a_window_that_ends_before_now_holds_tau_minus_range_to_tau_minus_end():
    window = TimeWindow(RangeWindow(2000, 1000, end=1000))
    window.offer(500, (1, 1, 1))
    window.offer(1500, (2, 2, 2))
    assert window.advance(1000) == [] and sorted(window.content) == []          # [-1000, 0)
    assert window.advance(2000) == [(500, (1, 1, 1))]                             # [0, 1000)
    assert sorted(window.content) == [(1, 1, 1)]
    assert window.advance(3000) == [(1500, (2, 2, 2))]                            # [1000, 2000)
    assert sorted(window.content) == [(2, 2, 2)]
    window.advance(4000)                                                          # [2000, 3000)
    assert sorted(window.content) == [] and window.is_empty()
    # the next window (5000) holds [3000, 4000): an element of 3000 is still taken, one of 2999 is late
    assert window.accepts(3000) and not window.accepts(2999)


def test_a_window_reaching_now_is_unchanged_by_end_zero():
    window = TimeWindow(RangeWindow(2000, 1000))
    assert RangeWindow(2000, 1000) == RangeWindow(2000, 1000, 0) and repr(window.spec) == \
        "RangeWindow(range=2000, step=1000)"
    window.offer(500, (1, 1, 1))
    window.offer(1500, (2, 2, 2))
    assert window.advance(2000) == [(500, (1, 1, 1)), (1500, (2, 2, 2))]
    assert sorted(window.content) == [(1, 1, 1), (2, 2, 2)]


def test_the_content_version_moves_only_when_something_enters_or_leaves():
    window = TimeWindow(RangeWindow(2000, 1000))
    window.offer(500, (1, 1, 1))
    assert window.version == 0 and window.next_change() == 1000                 # 500 enters at 1000
    window.advance(1000)
    assert window.version == 1 and window.next_change() == 3000                 # and leaves after 2500
    window.advance(2000)
    assert window.version == 1                                                    # nothing moved
    window.advance(3000)
    assert window.version == 2 and window.next_change() is None
    counting = CountingWindow(CountWindow(2))
    counting.offer(1, (1, 1, 1))
    counting.offer(2, (2, 2, 2))
    assert counting.version == 2


def test_on_content_change_skips_the_instants_at_which_nothing_can_change():
    engine = RSPEngine()
    engine.register_stream("http://s")
    query = engine.register_query(
        "SELECT ?x WHERE { STREAM <http://s> [RANGE 10s] { ?x ?p ?o } }")     # CQELS: moves every 1 ms
    assert query.policy is ReportPolicy.ON_CONTENT_CHANGE
    visited = []
    report = engine._report

    def counting(registered, tau):
        visited.append(tau)
        report(registered, tau)

    engine._report = counting
    triple = (URIRef("http://a"), URIRef("http://p"), URIRef("http://b"))
    engine.push("http://s", [triple], timestamp=0)
    engine.push("http://s", [(URIRef("http://c"), triple[1], triple[2])], timestamp=1_000_000)
    results = [(result.t, len(result.bindings)) for result in engine.finish()]
    # a enters at 1 and leaves at 10001; c enters at 1000001 (and would leave after the replay's end)
    assert results == [(1, 1), (10_001, 0), (1_000_001, 1)]
    assert visited == [1, 10_001, 1_000_001]
