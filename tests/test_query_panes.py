"""Aggregates kept per pane (`rsp_plugin.columnar.panes`) report what the per-fact path reports.

SOSA-style streams (an observation's 3 triples at one time) at 10, 100, 1k and 10k triples
per second of event time, steps of 1 to 10 s, RANGE / STEP of 2, 60 and 300, with queries
that merge from panes (AVG, COUNT, SUM, MIN, MAX, HAVING, FILTER, no GROUP BY, two group
variables, ORDER BY) and some that may not (COUNT DISTINCT; a join through sensor triples
that come in other panes). Plans without aggregation keep their solutions per pane (a report
is its panes' rows): RSTREAM, ISTREAM and DSTREAM of joins, DISTINCT, BIND, SELECT *; with
ORDER BY or LIMIT they are evaluated whole. Some streams hold what makes a window be evaluated whole: a
decimal, a double or a string among the values, a triple seen twice, elements out of
order. The engine on the batch path (elements pushed one by one, and as columns in
micro-batches, the watermark moved as a replay moves it) must make the same reports, term
for term, as the per-fact path; and it must have merged most of them from panes.
"""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from pane_feeds import feed, merged, restored_midway
from rsp_plugin.runtime.engine import RSPEngine

EX = "http://ex/"
STREAM = f"{EX}stream"
PREFIX = f"PREFIX ex: <{EX}>\n"
OBS = URIRef(f"{EX}Obs")
HOT = URIRef(f"{EX}HotObs")
SENSOR, VALUE, AT = URIRef(f"{EX}sensor"), URIRef(f"{EX}value"), URIRef(f"{EX}at")

#: (body, merged from panes when the values allow it)
QUERIES = [
    ("SELECT ?s (AVG(?v) AS ?avg) WHERE { ?o a ex:Obs ; ex:sensor ?s ; ex:value ?v } GROUP BY ?s", True),
    ("SELECT ?s (COUNT(*) AS ?n) (SUM(?v) AS ?sum) (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) "
     "WHERE { ?o a ex:Obs ; ex:sensor ?s ; ex:value ?v } GROUP BY ?s HAVING (COUNT(*) > 1)", True),
    ("SELECT (AVG(?v) AS ?avg) (COUNT(?o) AS ?n) WHERE { ?o ex:value ?v FILTER(?v > 300) }", True),
    ("SELECT ?s ?k (MAX(DISTINCT ?v) AS ?m) (COUNT(?v) AS ?n) WHERE { ?o a ?k ; ex:sensor ?s ; ex:value ?v } "
     "GROUP BY ?s ?k ORDER BY ?s DESC(?k)", True),
    ("SELECT ?s (COUNT(DISTINCT ?v) AS ?n) WHERE { ?o ex:sensor ?s ; ex:value ?v } GROUP BY ?s", False),
    ("SELECT ?l (AVG(?v) AS ?a) WHERE { ?o ex:sensor ?s ; ex:value ?v . ?s ex:at ?l } GROUP BY ?l", True),
]

#: (body, kept per pane when the window allows it, R2S operator): plans without aggregation
SOLUTIONS = [
    ("SELECT ?o ?s ?v WHERE { ?o a ex:Obs ; ex:sensor ?s ; ex:value ?v FILTER(?v > 300) }", True, "ISTREAM"),
    ("SELECT DISTINCT ?s WHERE { ?o ex:sensor ?s ; ex:value ?v FILTER(?v < 100) }", True, "RSTREAM"),
    ("SELECT ?o ?w WHERE { ?o ex:value ?v BIND(?v * 2 AS ?w) }", True, "DSTREAM"),
    ("SELECT * WHERE { ?o a ?k ; ex:sensor ?s }", True, "ISTREAM"),
    ("SELECT ?o ?l WHERE { ?o ex:sensor ?s . ?s ex:at ?l }", True, "RSTREAM"),
    ("SELECT ?o ?v WHERE { ?o ex:value ?v } ORDER BY DESC(?v) ?o LIMIT 3", False, "RSTREAM"),
]


class Stream:
    """Observations at `rate` triples per second of event time, with what the seed adds."""

    def __init__(self, seed: int, rate: int, count: int, *, odd=False, repeats=False, late=False, places=False):
        draw = random.Random(seed)
        self.elements: list[tuple[int, tuple]] = []
        for number in range(count // 3):
            stamp = number * 3000 // rate
            subject = URIRef(f"{EX}obs{number}")
            sensor = URIRef(f"{EX}s{draw.randrange(5)}")
            value = Literal(draw.randrange(-50, 1000))
            if odd and draw.random() < 0.03:
                value = draw.choice([Literal(Decimal(draw.randrange(40)) / 4), Literal(float(draw.randrange(9))),
                                     Literal("7"), Literal("12", datatype=XSD.int)])
            kind = HOT if draw.random() < 0.2 else OBS
            self.elements += [(stamp, (subject, RDF.type, kind)), (stamp, (subject, SENSOR, sensor)),
                              (stamp, (subject, VALUE, value))]
            if repeats and draw.random() < 0.02 and number:  # a triple seen again, later
                self.elements.append((stamp, self.elements[-3 * draw.randint(1, min(number, 5)) - 1][1]))
            if places and draw.random() < 0.05:  # where a sensor is, said now and then
                self.elements.append((stamp, (sensor, AT, URIRef(f"{EX}room{draw.randrange(2)}"))))
        if late:  # some elements a little out of order (taken while a window still holds them)
            for index in range(len(self.elements) - 1, 0, -1):
                if draw.random() < 0.01:
                    stamp, triple = self.elements[index]
                    self.elements[index] = (max(0, stamp - draw.randrange(1, 4000)), triple)


def _engine(batch: bool, window: str, queries) -> tuple[RSPEngine, list]:
    engine = RSPEngine(batch=batch, max_eval_ms=None)
    engine.register_stream(STREAM)
    seen: list = []
    for number, (body, _, *form) in enumerate(queries):
        select, _, rest = body.partition(" WHERE ")
        engine.register_query(f"REGISTER {form[0] if form else 'RSTREAM'} <{EX}q{number}> AS\n{PREFIX}{select}\n"
                              f"FROM STREAM <{STREAM}> {window}\nWHERE {rest}"
                              ).subscribe(lambda result: seen.append(result.to_json()))
    return engine, seen


def _fed(stream: Stream, window: str, seed: int, *, batch: bool, columns: bool, queries=QUERIES):
    """The stream fed as a replay feeds it (`pane_feeds.feed`): (reports, what was set aside, engine)."""
    engine, seen = _engine(batch, window, queries)
    feed(engine, STREAM, stream.elements, seed, columns=columns)
    return seen, [str(record) for record in engine.rejected], engine


_merged = merged


RATES = (10, 100, 1_000, 10_000)
STEPS = (1000, 2000, 5000, 10000)
RATIOS = (2, 60, 300)
CASES = [(rate, ratio, STEPS[(index + ratio) % len(STEPS)] if rate < 10_000 else 1000)
         for index, rate in enumerate(RATES) for ratio in RATIOS]


def _count(rate: int, ratio: int, step: int) -> int:
    """Enough triples for a dozen panes where that stays small (a window of 300 steps is reported 300
    times after the last element: few triples; at 10k/s a pane of 1 s holds 10k)."""
    most = {2: 12_000 if rate >= 10_000 else 3_000, 60: 900, 300: 450}[ratio]
    return max(90, min(most, rate * step // 1000 * 12))


@pytest.mark.parametrize("rate,ratio,step", CASES)
def test_panes_report_what_the_per_fact_path_reports(rate, ratio, step):
    seed = rate + ratio + step
    stream = Stream(seed, rate, _count(rate, ratio, step))
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    queries = QUERIES if ratio < 300 else QUERIES[:2] + QUERIES[4:5]
    expected, _, _ = _fed(stream, window, seed, batch=False, columns=False, queries=queries)
    found, _, engine = _fed(stream, window, seed, batch=True, columns=True, queries=queries)
    assert found == expected
    reports = len(expected) // len(queries)
    assert reports > 1
    for (body, merging, *_), count in zip(queries, _merged(engine)):
        if merging and "ex:at" not in body:
            assert count >= reports - 1, (body, count, reports)  # (the first may be made before any pane is)
        elif not merging:
            assert count == 0


@pytest.mark.parametrize("queries,seed", [(QUERIES, seed) for seed in range(12)] + [(SOLUTIONS, seed) for seed in range(8)],
                         ids=[f"aggregates-{seed}" for seed in range(12)] + [f"solutions-{seed}" for seed in range(8)])
def test_panes_fall_back_where_they_cannot_merge_and_agree(queries, seed):
    """Decimals, doubles and strings among the values, triples seen twice, elements out of order,
    sensors' rooms in other panes than their observations (a join across panes: those windows
    evaluated whole): the same reports and the same elements set aside, pushed one by one and as
    columns; for aggregates and for solutions kept per pane."""
    draw = random.Random(seed)
    rate = draw.choice([10, 100, 1000])
    step = draw.choice([1000, 2000, 5000])
    ratio = draw.choice([2, 3, 60])
    stream = Stream(seed, rate, min(900, rate * step // 1000 * 10), odd=seed % 3 == 0, repeats=seed % 3 == 1,
                    late=seed % 2 == 0, places=seed % 4 == 0)
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    expected = _fed(stream, window, seed, batch=False, columns=False, queries=queries)[:2]
    assert _fed(stream, window, seed, batch=True, columns=False, queries=queries)[:2] == expected
    assert _fed(stream, window, seed, batch=True, columns=True, queries=queries)[:2] == expected


def test_a_join_through_triples_of_other_panes_is_evaluated_whole():
    """The sensors' rooms come in other panes than the observations: the windows that hold both are
    evaluated whole (a merge of per-pane solutions would miss the joins across panes)."""
    stream = Stream(5, 100, 1200, places=True)
    window = "[RANGE 10000ms STEP 1000ms]"
    expected = _fed(stream, window, 5, batch=False, columns=False)[0]
    found, _, engine = _fed(stream, window, 5, batch=True, columns=True)
    assert found == expected
    assert any("l" in row for report in expected for row in report.get("bindings", []))  # (the join has answers)
    assert _merged(engine)[-1] < len(expected) // len(QUERIES)


def test_average_terms_are_the_per_fact_paths():
    """AVG of integers written directly (`ColumnarBackend.integer_result`) is `sparql_values`' division."""
    from rsp_plugin.columnar.query import ColumnarState
    from rsp_plugin.core.rdfterms import TermCache
    from rsp_plugin.core.terms import Dictionary, number_of_key
    from rsp_plugin.query.backend import EvaluationContext
    from rsp_plugin.query.content import Snapshot
    from rsp_plugin.query.plan import compile_plan
    from rsp_plugin.query.sparql_values import arithmetic, number
    from rdflib.plugins.sparql import prepareQuery

    terms = Dictionary()
    plan = compile_plan(prepareQuery("SELECT (AVG(?v) AS ?a) WHERE { ?s <http://ex/p> ?v }"))
    backend = ColumnarState(terms).backend(plan, Snapshot(), EvaluationContext(TermCache(terms)))
    draw = random.Random(3)
    for _ in range(2000):
        total, count = draw.randrange(-10 ** draw.randint(1, 30), 10 ** draw.randint(1, 30)), draw.randint(1, 10 ** 6)
        made = backend.integer_result("Aggregate_Avg", total, count)
        assert terms.keys[made] == arithmetic("/", number(total, 0), number(count, 0)).key
        summed = backend.integer_result("Aggregate_Sum", total, count)
        assert terms.keys[summed] == number(total, 0).key
        for found in (made, summed):  # (the value given with the term is the one its key says)
            assert terms.numbers[found] == number_of_key(terms.keys[found])


@pytest.mark.parametrize("kept", ["partials", "solutions"])
def test_a_checkpoint_mid_stream_keeps_the_reports(kept):
    """Panes are work, not state: an engine stored and read back mid-stream (`runtime.state`) makes
    its panes again and the reports of one never stopped (an aggregate's partials, or the solutions
    of a continuous join under ISTREAM, whose previous answer is state)."""

    stream = Stream(9, 100, 3000)
    window = "[RANGE 10000ms STEP 1000ms]"
    queries = QUERIES[:1] if kept == "partials" else [SOLUTIONS[0]]

    def run(stop_at=None):
        return restored_midway(lambda: _engine(True, window, queries), STREAM, stream.elements, f"{EX}q0", stop_at)

    whole, _ = run()
    restored, count = run(stop_at=len(stream.elements) // 2)
    assert restored == whole and count > 10


@pytest.mark.parametrize("rate,ratio,step", CASES[::2])
def test_solutions_kept_per_pane_are_the_per_fact_paths(rate, ratio, step):
    """A continuous join (an observation's triples) reports, per window, the rows its panes keep:
    the per-fact path's reports, term for term, for every R2S operator."""
    seed = rate + ratio + step
    stream = Stream(seed, rate, min(_count(rate, ratio, step), 3_000))
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    expected, _, _ = _fed(stream, window, seed, batch=False, columns=False, queries=SOLUTIONS)
    found, _, engine = _fed(stream, window, seed, batch=True, columns=True, queries=SOLUTIONS)
    assert found == expected
    reports = len(expected) // len(SOLUTIONS)
    for (body, merging, _), count in zip(SOLUTIONS, _merged(engine)):
        if merging and "ex:at" not in body:
            assert count >= reports - 1, (body, count, reports)
        elif not merging:
            assert count == 0


@pytest.mark.parametrize("seed,rate,ratio", [(1, 10, 20), (2, 30, 60), (3, 10, 60), (4, 30, 20)])
def test_a_live_stream_element_by_element_reports_what_the_per_fact_path_reports(seed, rate, ratio):
    """A live stream: each element pushed as it comes and the watermark moved to it, so a window's
    store gains a pane a report and its sums move with it (`_Growing`, `_Running`) instead of
    adding up every pane. Decimals among the values (seed 3), a triple seen twice (2), elements a
    little late (4): the same reports as the per-fact path; in order, all but the first merged."""
    stream = Stream(seed, rate, 1500, odd=seed == 3, repeats=seed == 2, late=seed == 4)
    window = f"[RANGE {ratio}s STEP 1s]"
    queries = QUERIES[:3]
    reference, expected = _engine(False, window, queries)
    feed(reference, STREAM, stream.elements, seed, columns=False, sizes=(1,))
    engine, found = _engine(True, window, queries)
    feed(engine, STREAM, stream.elements, seed, columns=False, sizes=(1,))  # (a late element's reports follow
    assert found == expected  # when it came: both fed alike)
    reports = len(expected) // len(queries)
    kept = [panes for query in engine.queries.values()
            for panes in query.evaluator.columnar.panes.values() if panes is not None]
    assert kept[0]._running is not None  # (AVG per sensor: its sums moved, not added up)
    if seed == 1:  # (a stream in order, integers, no repeats: every report but the first merged)
        assert sum(panes.merged for panes in kept) >= len(queries) * (reports - 1)
