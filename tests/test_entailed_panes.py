"""Aggregates kept per pane over an entailed window, and patterns that only test a group, report what
the per-fact path reports.

Under a static TBox the materialization keeps its triples in panes by expiry
(`reasoning.shapes.ShapeMaterializer`); `columnar.views` counts which panes changed, and
`columnar.panes` merges a report from the partial aggregates of those panes. A pattern whose
variables are all grouped on (`?s a ex:Device` beside `GROUP BY ?s`) is a test per group, not a
join: the sensor is typed in every pane, so joined it would tie every pane to every other.

SOSA-style streams (an observation's triples at one time) at 10 to 10k triples per second, RANGE /
STEP of 2, 60 and 300, under RDFS and OWL 2 RL, with the bench's query (`rsp-plugin bench shapes`)
and others: a sensor typed only now and then (its groups come and go), a triple seen twice at
different times, elements out of order, a background that holds an observation (a pattern that
matches B*: evaluated whole), a query of one pattern (a repeated entailment would count twice:
evaluated whole). The engine on the batch path must make the same reports, term for term, as the
per-fact path, and merge most of them from panes where the rule allows it.
"""

from __future__ import annotations

import random

import numpy as np
import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.namespace import RDF, RDFS

from pane_feeds import feed, merged, restored_midway
from rsp_plugin.core.rdfterms import term_key
from rsp_plugin.runtime.engine import RSPEngine

EX = "http://ex/"
STREAM = f"{EX}stream"
ONTOLOGY = f"{EX}ontology"
PREFIX = f"PREFIX ex: <{EX}>\n"
ENTAILMENT = {"rdfs": "http://www.w3.org/ns/entailment/RDFS", "owl-rl": "http://www.w3.org/ns/owl-profile/RL",
              None: None}


def _e(name: str) -> URIRef:
    return URIRef(EX + name)


def ontology(*, observation_in_background: bool = False) -> Graph:
    """The bench's 6 classes: TempObs < Observation < Event, Thermometer < Sensor < Device; sensor's
    domain Observation, range Sensor; value a subproperty of result."""
    graph = Graph()
    for low, high in (("TempObs", "Observation"), ("Observation", "Event"), ("Thermometer", "Sensor"),
                      ("Sensor", "Device")):
        graph.add((_e(low), RDFS.subClassOf, _e(high)))
    graph.add((_e("sensor"), RDFS.domain, _e("Observation")))
    graph.add((_e("sensor"), RDFS.range, _e("Sensor")))
    graph.add((_e("value"), RDFS.subPropertyOf, _e("result")))
    if observation_in_background:  # (an observation that holds at every instant: in no pane)
        graph.add((_e("obsB"), RDF.type, _e("TempObs")))
        graph.add((_e("obsB"), _e("sensor"), _e("s1")))
        graph.add((_e("obsB"), _e("value"), Literal(500)))
    return graph


#: (body, merged from panes under entailment)
QUERIES = [
    ("SELECT ?s (AVG(?v) AS ?avg) WHERE { ?o a ex:Event ; ex:sensor ?s ; ex:result ?v . ?s a ex:Device } "
     "GROUP BY ?s", True),
    ("SELECT ?s (COUNT(*) AS ?n) (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) "
     "WHERE { ?o ex:by ?s ; ex:value ?v . ?s a ex:Thermometer } GROUP BY ?s", True),
    ("SELECT (COUNT(*) AS ?n) WHERE { ?o a ex:Event }", False),
]


class Stream:
    """Observations at `rate` triples per second of event time; each names its sensor twice (ex:sensor,
    whose range types it, and ex:by, which does not); a sensor typed Thermometer every `typing` ms
    (so a window of 3 `typing`s holds some sensors' types, not all)."""

    def __init__(self, seed: int, rate: int, count: int, *, typing: int, repeats=False, late=False):
        draw = random.Random(seed)
        self.elements: list[tuple[int, tuple]] = []
        typed = -1
        for number in range(count // 4):
            stamp = number * 4000 // rate
            subject, sensor = _e(f"obs{number}"), _e(f"s{draw.randrange(5)}")
            self.elements += [(stamp, (subject, RDF.type, _e("TempObs"))), (stamp, (subject, _e("sensor"), sensor)),
                              (stamp, (subject, _e("by"), sensor)),
                              (stamp, (subject, _e("value"), Literal(draw.randrange(-50, 1000))))]
            if stamp // typing > typed:
                typed = stamp // typing
                self.elements.append((stamp, (sensor, RDF.type, _e("Thermometer"))))
            if repeats and draw.random() < 0.03 and number:  # a triple seen again, later
                self.elements.append((stamp, self.elements[-4 * draw.randint(1, min(number, 5)) - 1][1]))
        if late:
            for index in range(len(self.elements) - 1, 0, -1):
                if draw.random() < 0.01:
                    stamp, triple = self.elements[index]
                    self.elements[index] = (max(0, stamp - draw.randrange(1, 4000)), triple)


def _engine(batch: bool, window: str, profile, queries, background: Graph) -> tuple[RSPEngine, list]:
    engine = RSPEngine(batch=batch, max_eval_ms=None)
    engine.register_stream(STREAM)
    engine.add_graph(ONTOLOGY, background)
    seen: list = []
    for number, body in enumerate(queries):
        select, _, rest = body.partition(" WHERE ")
        clauses = f"FROM STREAM <{STREAM}> {window}\n"
        if ENTAILMENT[profile]:  # (the background is the materialization's: in no pane)
            clauses = f"FROM <{ONTOLOGY}>\n{clauses}ENTAILMENT <{ENTAILMENT[profile]}>\n"
        engine.register_query(f"REGISTER RSTREAM <{EX}q{number}> AS\n{PREFIX}{select}\n{clauses}WHERE {rest}") \
            .subscribe(lambda result: seen.append(result.to_json()))
    return engine, seen


def _fed(stream: Stream, window: str, seed: int, profile, queries, background: Graph, *, batch: bool,
         columns: bool):
    """The stream fed as a replay feeds it (`pane_feeds.feed`): (reports, what was set aside, engine)."""
    engine, seen = _engine(batch, window, profile, queries, background)
    feed(engine, STREAM, stream.elements, seed, columns=columns)
    return seen, [str(record) for record in engine.rejected], engine


_merged = merged


CASES = [("rdfs", 10, 2, 5000), ("rdfs", 100, 60, 1000), ("rdfs", 1000, 300, 1000), ("rdfs", 10_000, 2, 200),
         ("owl-rl", 100, 2, 5000), ("owl-rl", 1000, 60, 2000), ("owl-rl", 100, 300, 1000)]


@pytest.mark.parametrize("profile,rate,ratio,step", CASES)
def test_entailed_panes_report_what_the_per_fact_path_reports(profile, rate, ratio, step):
    seed = rate + ratio + step
    count = max(120, min({2: 8000 if rate >= 10_000 else 4000, 60: 1200, 300: 600}[ratio], rate * step // 1000 * 12))
    stream = Stream(seed, rate, count, typing=max(1, min(ratio * step // 3, count * 1000 // rate // 6)))
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    bodies = [body for body, _ in QUERIES]
    expected, _, _ = _fed(stream, window, seed, profile, bodies, ontology(), batch=False, columns=False)
    found, _, engine = _fed(stream, window, seed, profile, bodies, ontology(), batch=True, columns=True)
    assert found == expected
    reports = len(expected) // len(bodies)
    assert reports > 2
    for (body, merging), count in zip(QUERIES, _merged(engine)):
        if merging:
            assert count >= reports - 2, (body, count, reports)
        else:
            assert count == 0, body
    if count * 1000 // rate > 2 * ratio * step:  # (the typed sensors' groups come and go)
        assert len({len(report.get("bindings", ())) for report in expected}) > 3


def test_plain_windows_test_a_grouped_pattern_per_group():
    """Without entailment the typing triple comes in the stream, in some panes: a sensor's group is
    reported while its type is in the window, merged from panes all the same."""
    stream = Stream(4, 100, 2400, typing=7000)
    window = "[RANGE 20000ms STEP 1000ms]"
    body = "SELECT ?s (COUNT(*) AS ?n) (SUM(?v) AS ?t) WHERE { ?o ex:by ?s ; ex:value ?v . ?s a ex:Thermometer } GROUP BY ?s"
    expected, _, _ = _fed(stream, window, 4, None, [body], Graph(), batch=False, columns=False)
    found, _, engine = _fed(stream, window, 4, None, [body], Graph(), batch=True, columns=True)
    assert found == expected
    assert len({len(report.get("bindings", ())) for report in expected}) > 2
    assert _merged(engine)[0] >= len(expected) - 2


@pytest.mark.parametrize("seed", range(6))
def test_entailed_panes_fall_back_where_they_cannot_merge_and_agree(seed):
    """Triples seen twice, elements out of order, an observation in the background: the same reports and
    the same elements set aside, pushed one by one and as columns."""
    draw = random.Random(seed)
    profile = ("rdfs", "owl-rl")[seed % 2]
    rate, step, ratio = draw.choice([10, 100, 1000]), draw.choice([1000, 2000, 5000]), draw.choice([2, 3, 60])
    stream = Stream(seed, rate, min(900, rate * step // 1000 * 10), typing=ratio * step // 3, repeats=seed % 3 != 2,
                    late=seed % 2 == 0)
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    background = ontology(observation_in_background=seed % 3 == 2)
    bodies = [body for body, _ in QUERIES]
    expected = _fed(stream, window, seed, profile, bodies, background, batch=False, columns=False)[:2]
    assert _fed(stream, window, seed, profile, bodies, background, batch=True, columns=False)[:2] == expected
    found, rejected, engine = _fed(stream, window, seed, profile, bodies, background, batch=True, columns=True)
    assert (found, rejected) == expected
    if seed % 3 == 2:  # (a pattern matches B*: no report of the first query is merged)
        assert _merged(engine)[0] == 0


@pytest.mark.parametrize("seed", range(6))
def test_a_stream_read_in_large_blocks_is_materialized_ahead_and_agrees(seed, monkeypatch):
    """A replay holds many time points at a time: the materializer expands the triples of the next
    ones at once (`ShapeMaterializer.run_ahead`), its entailments go into the panes when their time
    point comes, and a pane reader computes those panes in one pass. Mixed in: a class declared on
    the stream mid-way (rules meet two window facts: decided by what has arrived, not what was
    taken ahead), ill-typed and decimal literals (facts a template cannot take ahead: the rows from
    their time point on wait), triples seen twice, elements out of order. Same reports as the
    per-fact path."""
    from rsp_plugin.reasoning.shapes import ShapeMaterializer

    taken: list[int] = []
    run_ahead = ShapeMaterializer.run_ahead

    def counted(self, points, s, p, o):
        taken.append(run_ahead(self, points, s, p, o))
        return taken[-1]

    monkeypatch.setattr(ShapeMaterializer, "run_ahead", counted)
    draw = random.Random(seed)
    profile = ("rdfs", "owl-rl")[seed % 2]
    rate, step, ratio = draw.choice([10, 100, 300]), draw.choice([500, 1000]), draw.choice([2, 10, 60])
    stream = Stream(seed, rate, min(2400, rate * step // 1000 * 40), typing=ratio * step // 3, repeats=seed % 3 != 2,
                    late=seed % 2 == 0)
    elements = stream.elements
    middle = elements[len(elements) // 2][0]
    elements.insert(len(elements) // 2, (middle, (_e("Probe"), RDFS.subClassOf, _e("Event"))))
    for index in range(len(elements) // 2, len(elements), 37):
        stamp = elements[index][0]
        elements.insert(index, (stamp, (_e(f"probe{index}"), RDF.type, _e("Probe"))))
    XSD = "http://www.w3.org/2001/XMLSchema#"
    for index, literal in ((len(elements) // 3, Literal("x1", datatype=URIRef(XSD + "integer"))),
                           (2 * len(elements) // 3, Literal("12.5", datatype=URIRef(XSD + "decimal")))):
        stamp, (subject, _, _) = elements[index]
        elements.insert(index, (stamp, (subject, _e("value"), literal)))
    window = f"[RANGE {ratio * step}ms STEP {step}ms]" if seed % 3 else f"[RANGE {3 * step}ms STEP {2 * step}ms]"
    bodies = [body for body, _ in QUERIES]  # (the last window's time points are half its STEP: some fall between reports)
    runs = []
    for batch in (False, True):  # (the same blocks: which late elements are set aside depends on them)
        engine, seen = _engine(batch, window, profile, bodies, ontology())
        feed(engine, STREAM, elements, seed, columns=batch, sizes=(500, 2000, 5000))
        runs.append((seen, [str(record) for record in engine.rejected]))
    assert runs[1] == runs[0]
    assert sum(taken) > len(elements) // 2


def test_rows_taken_ahead_still_change_the_window_when_they_enter():
    """A window whose rows a materialization took ahead (`ColumnTimeWindow.take_ahead`) changes at
    the same boundaries as one that handed them over as they entered: the on-content-change policy
    (CQELS) reports at the same times, and the window says the same next change."""
    from rsp_plugin.columnar.columns import ColumnTimeWindow
    from rsp_plugin.query.model import RangeWindow

    times = np.array([500, 1500, 1600, 4200, 4300, 9100])
    plain, ahead = ColumnTimeWindow(RangeWindow(2000, 1000)), ColumnTimeWindow(RangeWindow(2000, 1000))
    for window in (plain, ahead):
        window.offer_columns(times, np.ones(6, dtype=np.int64), np.full(6, 2), np.arange(6))
    seen = {id(plain): [], id(ahead): []}
    for tau in range(1000, 13000, 1000):
        for window in (plain, ahead):
            window.advance(tau)
            if window is ahead:
                taken = window.take_ahead(tau + 5000)
                if len(taken[0]):
                    window.give_back(len(taken[0]) // 2)  # (half taken: the rest waits as before)
            seen[id(window)].append((window.version, window.next_change()))
    assert seen[id(ahead)] == seen[id(plain)]
    assert len({version for version, _ in seen[id(plain)]}) > 4


def test_a_checkpoint_while_triples_wait_materialized_ahead_keeps_the_reports():
    """What the materializer took ahead is state (`ShapeMaterializer.__getstate__`): stored and read
    back between two blocks, the engine makes the reports of one never stopped."""
    from rsp_plugin.runtime import state

    stream = Stream(3, 100, 2400, typing=4000)
    window = "[RANGE 10000ms STEP 1000ms]"
    bodies = [QUERIES[0][0]]
    halves = (stream.elements[:1000], stream.elements[1000:])

    def run(stop: bool):
        engine, seen = _engine(True, window, "rdfs", bodies, ontology())
        for number, half in enumerate(halves):
            if number and stop:
                views = [shared.view for shared in engine._streams[STREAM].windows]
                assert any(view.materializer.ahead_until() is not None for view in views)  # (some wait)
                engine = state.loads(state.dumps(engine, key=b"k" * 32), key=b"k" * 32)
                engine.queries[f"{EX}q0"].subscribe(lambda result: seen.append(result.to_json()))
            feed(engine, STREAM, half, 3, columns=True, sizes=(700,)) if number else _fed_only(engine, half)
        return seen, engine

    whole, _ = run(False)
    restored, engine = run(True)
    assert restored == whole and _merged(engine)[0] > 10


def _fed_only(engine, elements: list) -> None:
    """The elements pushed as one block, the watermark at the latest: the stream not finished."""
    times = [stamp for stamp, _ in elements]
    intern = engine.terms.intern
    ids = np.array([[intern(term_key(term)) for term in triple] for _, triple in elements], dtype=np.int64)
    engine.push_columns(STREAM, times, ids[:, 0], ids[:, 1], ids[:, 2])
    engine.advance_to(max(times))


def test_a_checkpoint_mid_stream_keeps_the_reports():
    """The view's pane ledger is state, the partials are work: an engine stored and read back
    mid-stream makes the reports of one never stopped, merged from panes again."""

    stream = Stream(9, 100, 2000, typing=3000)
    window = "[RANGE 10000ms STEP 1000ms]"
    bodies = [QUERIES[0][0]]

    def run(stop_at=None):
        return restored_midway(lambda: _engine(True, window, "rdfs", bodies, ontology()), STREAM, stream.elements, f"{EX}q0", stop_at)

    whole, _ = run()
    restored, count = run(stop_at=len(stream.elements) // 2)
    assert restored == whole and count > 10


def test_a_materializer_whose_panes_no_one_reads_forgets_them_as_they_expire():
    """`ShapeMaterializer.touched` (which panes changed, for a pane reader) holds only panes that still
    hold: running for months with no reader keeps it bounded."""
    from rsp_plugin.core.terms import Dictionary
    from rsp_plugin.reasoning.shapes import ShapeMaterializer

    terms = Dictionary()
    materializer = ShapeMaterializer("rdfs", window=5, terms=terms)
    subject, predicate = terms.intern(f"<{EX}a>"), terms.intern(f"<{EX}p>")
    for point in range(1, 500):
        value = terms.intern(f"<{EX}o{point}>")
        materializer.advance_to(point, columns=(np.array([subject]), np.array([predicate]), np.array([value])))
    assert sorted(materializer.touched) == list(range(499, 505))


# a window joined with a static graph ------------------------------------------------------------------

META = f"{EX}meta"
ROOMS = "SELECT ?r (COUNT(*) AS ?n) (AVG(?v) AS ?a) WHERE { ?o ex:by ?s ; ex:value ?v . ?s ex:room ?r } GROUP BY ?r"


def rooms(graph: Graph | None = None) -> Graph:
    """Where sensors s0-s3 are (s4 is nowhere: its observations join nothing)."""
    graph = graph if graph is not None else Graph()
    for number in range(4):
        graph.add((_e(f"s{number}"), _e("room"), _e(f"room{number % 2}")))
    return graph


def _static_engine(batch: bool, window: str, profile, background: Graph, body: str = ROOMS):
    engine = RSPEngine(batch=batch, max_eval_ms=None)
    engine.register_stream(STREAM)
    engine.add_graph(META, background)
    select, _, rest = body.partition(" WHERE ")
    clauses = f"FROM <{META}>\nFROM STREAM <{STREAM}> {window}\n"
    if ENTAILMENT[profile]:
        clauses += f"ENTAILMENT <{ENTAILMENT[profile]}>\n"
    seen: list = []
    engine.register_query(f"REGISTER RSTREAM <{EX}rooms> AS\n{PREFIX}{select}\n{clauses}WHERE {rest}") \
        .subscribe(lambda result: seen.append(result.to_json()))
    return engine, seen


def _static_fed(stream: Stream, window: str, profile, background: Graph, *, batch: bool, moves=(), body=ROOMS):
    engine, seen = _static_engine(batch, window, profile, background, body)
    for number, (stamp, triple) in enumerate(stream.elements):
        if engine.watermark is None or stamp > engine.watermark:
            engine.advance_to(stamp)
        engine.push(STREAM, [triple], timestamp=stamp)
        for at, moved in moves:  # (a sensor said to be in a room on the stream: the static pattern matches it)
            if number == at:
                engine.push(STREAM, [moved], timestamp=stamp)
    engine.finish()
    assert not engine.errors, engine.errors
    return seen, engine


@pytest.mark.parametrize("profile,rate,step", [(None, 100, 1000), (None, 1000, 2000), ("rdfs", 100, 1000)])
def test_a_window_joined_with_a_static_graph_is_merged_from_panes(profile, rate, step):
    """`?s ex:room ?r` matches only the static graph: it is joined with it as a whole, the window's
    patterns per pane (their join value, the observation, in one pane)."""
    stream = Stream(11, rate, 1500, typing=10 ** 9)
    window = f"[RANGE {30 * step}ms STEP {step}ms]"
    expected, _ = _static_fed(stream, window, profile, rooms(ontology() if profile else None), batch=False)
    found, engine = _static_fed(stream, window, profile, rooms(ontology() if profile else None), batch=True)
    assert found == expected
    assert {row["r"] for report in expected for row in report.get("bindings", ())} == {f"<{EX}room0>", f"<{EX}room1>"}
    assert _merged(engine)[0] >= len(expected) - 2


def test_a_static_pattern_that_matches_the_window_is_evaluated_whole_there():
    """A sensor's room said on the stream too: the panes holding it are evaluated whole (the static
    pattern would miss it), the others still merged; the same reports as the per-fact path."""
    stream = Stream(12, 100, 1500, typing=10 ** 9)
    moves = [(300, (_e("s4"), _e("room"), _e("room9"))), (900, (_e("s1"), _e("room"), _e("room1")))]
    window = "[RANGE 10000ms STEP 1000ms]"
    expected, _ = _static_fed(stream, window, None, rooms(), batch=False, moves=moves)
    found, engine = _static_fed(stream, window, None, rooms(), batch=True, moves=moves)
    assert found == expected
    assert any(row["r"] == f"<{EX}room9>" for report in expected for row in report.get("bindings", ()))
    reports = len(expected)
    assert reports - 25 <= _merged(engine)[0] < reports - 5


#: plans without aggregation under entailment: (body, kept per pane)
SOLUTIONS = [
    ("SELECT ?o ?s ?v WHERE { ?o a ex:Event ; ex:sensor ?s ; ex:result ?v }", True),
    ("SELECT DISTINCT ?s WHERE { ?o ex:by ?s ; ex:value ?v FILTER(?v > 500) }", True),
    ("SELECT ?o WHERE { ?o a ex:Event }", False),
    ("SELECT ?o ?s WHERE { ?o ex:by ?s . ?s a ex:Thermometer }", None),
]


@pytest.mark.parametrize("profile,rate,ratio,step,seed", [(*case, seed) for seed, case in enumerate(CASES[::2])]
                         + [("rdfs", 100, 3, 2000, 7), ("owl-rl", 1000, 2, 1000, 8)])
def test_entailed_solutions_kept_per_pane_are_the_per_fact_paths(profile, rate, ratio, step, seed):
    """A continuous join over the materialization's panes reports its panes' solutions (a pattern of one
    triple is evaluated whole: an entailment may be in two panes), the per-fact path's reports; with
    triples seen twice and late (the later seeds), too."""
    count = max(120, min({2: 4000, 3: 900, 60: 1200, 300: 600}[ratio], rate * step // 1000 * 12))
    stream = Stream(seed, rate, count, typing=max(1, min(ratio * step // 3, count * 1000 // rate // 6)),
                    repeats=seed >= 7, late=seed == 8)
    window = f"[RANGE {ratio * step}ms STEP {step}ms]"
    bodies = [body for body, _ in SOLUTIONS]
    expected, rejected, _ = _fed(stream, window, seed, profile, bodies, ontology(), batch=False, columns=False)
    found, set_aside, engine = _fed(stream, window, seed, profile, bodies, ontology(), batch=True, columns=True)
    assert (found, set_aside) == (expected, rejected)
    reports = len(expected) // len(bodies)
    for (body, merging), count in zip(SOLUTIONS, _merged(engine)):
        if merging and seed < 7:
            assert count >= reports - 2, (body, count, reports)
        elif merging is False:
            assert count == 0, body


@pytest.mark.parametrize("moved", [False, True])
def test_a_join_with_a_static_graph_keeps_its_solutions_per_pane(moved):
    """Without aggregation too: the observations' rooms (a static graph) joined as a whole, the window's
    patterns per pane; a room said on the stream makes its panes be evaluated whole."""
    body = "SELECT ?o ?r ?v WHERE { ?o ex:by ?s ; ex:value ?v . ?s ex:room ?r FILTER(?v > 800) }"
    stream = Stream(13, 100, 1500, typing=10 ** 9)
    moves = [(300, (_e("s4"), _e("room"), _e("room9")))] if moved else []
    window = "[RANGE 10000ms STEP 1000ms]"
    expected, _ = _static_fed(stream, window, None, rooms(), batch=False, moves=moves, body=body)
    found, engine = _static_fed(stream, window, None, rooms(), batch=True, moves=moves, body=body)
    assert found == expected
    assert any(row.get("r") == f"<{EX}room9>" for report in expected for row in report["bindings"]) == moved
    assert len(expected) - 25 <= _merged(engine)[0] < (len(expected) - 5 if moved else len(expected) + 1)
