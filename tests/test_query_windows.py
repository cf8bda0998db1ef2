"""Window semantics of continuous queries, case by case (DESIGN.md, "Time").

Each test gives the query, the stream (timestamp in ms -> triples) and the expected
answer at every report, as the CSRBench oracle would: windows [RANGE r STEP s] are
half-open, aligned to t0 = 0, reported at every tau = k*s after the first element
(empty ones too), and a replay ends with the last tau whose window reaches the last element.
"""

from __future__ import annotations

import pytest

from rsp_plugin.core.errors import RuleSyntaxError
from rsp_plugin.io.formats import read_tnt
from rsp_plugin.query.model import ReportPolicy
from rsp_plugin.runtime.engine import RSPEngine

S = "http://ex/s"
S2 = "http://ex/s2"
P = "<http://ex/p>"
PREFIX = "PREFIX ex: <http://ex/>\n"


def element(t: int, subject: str, predicate: str = P, obj: str = "<http://ex/o>") -> str:
    return f"{t} <http://ex/{subject}> {predicate} {obj} ."


def run(query: str, streams: dict[str, list[str]], *, report=ReportPolicy.ON_WINDOW_CLOSE, engine=None):
    """{tau: sorted values of the first projected variable (or the boolean / triples)} for a replay."""
    engine = engine or RSPEngine()
    for iri in streams:
        engine.register_stream(iri)
    engine.register_query(PREFIX + query, report=report)
    for iri, lines in streams.items():
        engine.push(iri, read_tnt(lines, engine.terms, tick_ms=1))
    return _shown(engine.finish())


def _shown(results):
    out = {}
    for result in results:
        data = result.to_json()
        if "bindings" in data:
            value = sorted(tuple(row.get(v, "") for v in result.variables) if len(result.variables) > 1
                           else row.get(result.variables[0], "") for row in data["bindings"])
            value = [_short(v) for v in value]
        elif "triples" in data:
            value = data["triples"]
        else:
            value = data["boolean"]
        out[result.t] = value
    return out


def _short(value):
    if isinstance(value, tuple):
        return tuple(_short(v) for v in value)
    return value.replace("<http://ex/", "").replace(">", "") if value.startswith("<http://ex/") else value


def test_windows_are_half_open_and_aligned_to_zero():
    #  t:    0      1000     2000     3000     4000        [RANGE 2s STEP 1s]
    #        a@500  b@1000        c@2500
    #  1000: [0, 1000)    = {a}           (b at 1000 is not in it)
    #  2000: [0, 2000)    = {a, b}
    #  3000: [1000, 3000) = {b, c}
    #  4000: [2000, 4000) = {c}           the last window that reaches c
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?o }"
    stream = [element(500, "a"), element(1000, "b"), element(2500, "c")]
    assert run(query, {S: stream}) == {1000: ["a"], 2000: ["a", "b"], 3000: ["b", "c"], 4000: ["c"]}


def test_the_first_report_is_the_first_tau_after_the_first_element():
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ex:p ?o }"
    assert run(query, {S: [element(3500, "a")]}) == {4000: ["a"]}
    assert run(query, {S: [element(3000, "a")]}) == {4000: ["a"]}  # 3000 itself is not after it


def test_empty_windows_are_reported_empty():
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ex:p ?o }"
    stream = [element(100, "a"), element(3100, "b")]
    assert run(query, {S: stream}) == {1000: ["a"], 2000: [], 3000: [], 4000: ["b"]}


def test_a_replay_ends_with_the_last_window_that_reaches_the_last_element():
    #  last element at 3000, RANGE 5s STEP 2s: tau - 5000 <= 3000, so up to tau = 8000
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 5s STEP 2s] WHERE { ?x ex:p ?o }"
    stream = [element(1000, "a"), element(3000, "b")]
    assert run(query, {S: stream}) == {2000: ["a"], 4000: ["a", "b"], 6000: ["a", "b"], 8000: ["b"]}


def test_tumbling_windows_and_iso_durations():
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE PT2S TUMBLING] WHERE { ?x ex:p ?o }"
    stream = [element(500, "a"), element(1999, "b"), element(2000, "c"), element(4100, "d")]
    assert run(query, {S: stream}) == {2000: ["a", "b"], 4000: ["c"], 6000: ["d"]}


def test_a_range_that_is_not_a_multiple_of_the_step():
    #  [RANGE 1500ms STEP 1s] at tau holds [tau - 1500, tau)
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 1500ms STEP 1s] WHERE { ?x ex:p ?o }"
    stream = [element(400, "a"), element(600, "b"), element(1600, "c")]
    assert run(query, {S: stream}) == {1000: ["a", "b"], 2000: ["b", "c"], 3000: ["c"]}


def test_compute_every_sets_the_instants_and_the_window_shows_its_last_boundary():
    #  the window slides by 2 s; reports every 1 s show the content of the last boundary
    query = ("REGISTER QUERY q COMPUTE EVERY 1s AS SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 2s] "
             "WHERE { ?x ex:p ?o }")
    stream = [element(500, "a"), element(2500, "b")]
    assert run(query, {S: stream}) == {1000: [], 2000: ["a"], 3000: ["a"], 4000: ["b"], 5000: ["b"]}


def test_triples_windows_report_after_every_element():
    #  [TRIPLES 2]: the last two triples, reported when each arrives, at its timestamp
    query = "SELECT ?x FROM STREAM <http://ex/s> [TRIPLES 2] WHERE { ?x ex:p ?o }"
    stream = [element(100, "a"), element(200, "b"), element(300, "c")]
    assert run(query, {S: stream}) == {100: ["a"], 200: ["a", "b"], 300: ["b", "c"]}
    range_triples = query.replace("[TRIPLES 2]", "[RANGE TRIPLES 2]")
    assert run(range_triples, {S: stream}) == {100: ["a"], 200: ["a", "b"], 300: ["b", "c"]}


def test_rsp_ql_elements_windows_move_by_their_step():
    query = ("SELECT ?x FROM NAMED WINDOW <http://ex/w> ON <http://ex/s> [ELEMENTS 3 STEP 2] "
             "WHERE { WINDOW <http://ex/w> { ?x ex:p ?o } }")
    stream = [element(100 * n, name) for n, name in enumerate("abcde", 1)]
    assert run(query, {S: stream}) == {200: ["a", "b"], 400: ["b", "c", "d"]}


def test_count_windows_with_compute_every_are_read_at_its_instants():
    query = ("REGISTER QUERY q COMPUTE EVERY 1s AS SELECT ?x FROM STREAM <http://ex/s> [TRIPLES 2] "
             "WHERE { ?x ex:p ?o }")
    stream = [element(100, "a"), element(200, "b"), element(1300, "c"), element(1400, "d")]
    assert run(query, {S: stream}) == {1000: ["a", "b"], 2000: ["c", "d"]}


def test_now_is_what_arrived_since_the_previous_evaluation():
    query = "REGISTER QUERY q COMPUTE EVERY 1s AS SELECT ?x FROM STREAM <http://ex/s> [NOW] WHERE { ?x ex:p ?o }"
    stream = [element(100, "a"), element(900, "b"), element(1200, "c")]
    assert run(query, {S: stream}) == {1000: ["a", "b"], 2000: ["c"]}


def test_two_streams_with_two_windows_join_in_the_default_graph():
    query = ("SELECT ?x ?y FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM STREAM <http://ex/s2> [RANGE 3s STEP 1s] "
             "WHERE { ?x ex:p ?o . ?o ex:q ?y }")
    stream = [element(1500, "a", obj="<http://ex/m>"), element(2500, "b", obj="<http://ex/m>")]
    second = [element(200, "m", "<http://ex/q>", "<http://ex/z>")]
    #  the replay ends at 3000: both windows have passed their streams' last elements by then
    assert run(query, {S: stream, S2: second}) == {1000: [], 2000: [("a", "z")], 3000: [("b", "z")]}


def test_rsp_ql_named_windows_are_graphs_of_the_body():
    query = ("SELECT ?x ?w FROM NAMED WINDOW <http://ex/short> ON <http://ex/s> [RANGE 1s STEP 1s] "
             "FROM NAMED WINDOW <http://ex/long> ON <http://ex/s> [RANGE 2s STEP 1s] "
             "WHERE { WINDOW ?w { ?x ex:p ?o } }")
    stream = [element(500, "a")]
    assert run(query, {S: stream}) == {1000: [("a", "long"), ("a", "short")], 2000: [("a", "long")]}


def test_istream_reports_what_is_new_and_dstream_what_is_gone():
    body = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?o }"
    stream = [element(500, "a"), element(1500, "b")]
    assert run("REGISTER RSTREAM <http://ex/q> AS " + body, {S: stream}) == {
        1000: ["a"], 2000: ["a", "b"], 3000: ["b"]}
    assert run("REGISTER ISTREAM <http://ex/q> AS " + body, {S: stream}) == {1000: ["a"], 2000: ["b"], 3000: []}
    assert run("REGISTER DSTREAM <http://ex/q> AS " + body, {S: stream}) == {1000: [], 2000: [], 3000: ["a"]}


def test_istream_counts_repeated_rows_as_a_multiset():
    """A projection repeats a row once per solution: ISTREAM reports the copies the previous answer
    did not have (two ?x=a now, one before: one), with or without ORDER BY."""
    from rsp_plugin.query.model import R2S
    from rsp_plugin.query.results import Answer, ResultStream

    for ordered in (False, True):
        stream = ResultStream(R2S.ISTREAM)
        first = stream.report(Answer("SELECT", ("x",), [(1,), (2,)], ordered=ordered))
        second = stream.report(Answer("SELECT", ("x",), [(1,), (3,), (1,), (2,), (3,)], ordered=ordered))
        third = stream.report(Answer("SELECT", ("x",), [(1,)], ordered=ordered))
        assert sorted(first.rows) == [(1,), (2,)] and sorted(third.rows) == []
        assert sorted(second.rows) == [(1,), (3,), (3,)]
        assert not ordered or second.rows == [(1,), (3,), (3,)]  # (in their order: the first copies)


def test_ask_and_construct_report_a_boolean_and_triples():
    stream = [element(500, "a"), element(2500, "b")]
    ask = "ASK FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ex:a ex:p ?o }"
    assert run(ask, {S: stream}) == {1000: True, 2000: False, 3000: False}
    construct = "CONSTRUCT { ?o ex:back ?x } FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ex:p ?o }"
    assert run(construct, {S: stream}) == {
        1000: ["<http://ex/o> <http://ex/back> <http://ex/a> ."], 2000: [],
        3000: ["<http://ex/o> <http://ex/back> <http://ex/b> ."]}


def test_non_empty_content_reports_only_windows_with_elements():
    query = "SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ex:p ?o }"
    stream = [element(100, "a"), element(3100, "b")]
    assert run(query, {S: stream}, report=ReportPolicy.NON_EMPTY_CONTENT) == {1000: ["a"], 4000: ["b"]}


@pytest.mark.parametrize("function", [
    "<http://larkc.eu/csparql/sparql/jena/ext#timestamp>", "<https://w3id.org/rsp-plugin/functions#timestamp>",
])
def test_the_timestamp_function_gives_when_the_triple_was_seen_also_for_literals(function):
    query = (f"SELECT ?x ?t FROM STREAM <http://ex/s> [RANGE 3s STEP 1s] "
             f"WHERE {{ ?x ex:v ?v BIND({function}(?x, ex:v, ?v) AS ?t) }}")
    stream = [element(500, "a", "<http://ex/v>", '"7"^^<http://www.w3.org/2001/XMLSchema#integer>'),
              element(1700, "b", "<http://ex/v>", '"hi"@en'),
              element(2200, "a", "<http://ex/v>", '"7"^^<http://www.w3.org/2001/XMLSchema#integer>')]
    long = '"{}"^^<http://www.w3.org/2001/XMLSchema#long>'
    assert run(query, {S: stream}) == {
        1000: [("a", long.format(500))],
        2000: [("a", long.format(500)), ("b", long.format(1700))],
        3000: [("a", long.format(2200)), ("b", long.format(1700))],   # the latest time it was seen
        4000: [("a", long.format(2200)), ("b", long.format(1700))],
        5000: [("a", long.format(2200))],
    }


def test_the_timestamp_function_filters_on_the_fast_path():
    query = ("SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] "
             "WHERE { ?x ex:p ?o FILTER(<http://larkc.eu/csparql/sparql/jena/ext#timestamp>(?x, ex:p, ?o) >= 1000) }")
    stream = [element(500, "a"), element(1200, "b")]
    engine = RSPEngine()
    assert run(query, {S: stream}, engine=engine) == {1000: [], 2000: ["b"], 3000: ["b"]}
    assert next(iter(engine.queries.values())).evaluator.uses_fast_path


def test_register_stream_makes_a_stream_other_queries_read():
    engine = RSPEngine()
    engine.register_stream(S)
    engine.register_query(PREFIX + "REGISTER STREAM <http://ex/hot> AS CONSTRUCT { ?x a ex:Hot } "
                          "FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] WHERE { ?x ex:temp ?v FILTER(?v > 30) }")
    reader = engine.register_query(PREFIX + "REGISTER QUERY alarms AS SELECT ?x "
                                   "FROM STREAM <http://ex/hot> [RANGE 2s STEP 1s] WHERE { ?x a ex:Hot }")
    number = '"{}"^^<http://www.w3.org/2001/XMLSchema#integer>'
    lines = [element(500, "r1", "<http://ex/temp>", number.format(35)),
             element(1500, "r2", "<http://ex/temp>", number.format(20))]
    engine.push(S, read_tnt(lines, engine.terms, tick_ms=1))
    results = [r for r in engine.finish() if r.query == reader.name]
    #  r1 is hot in the window of 1000, so a triple of the derived stream at t = 1000;
    #  the reader's window [RANGE 2s] holds it at 2000 and 3000
    assert _shown(results) == {2000: ["r1"], 3000: ["r1"]}


def test_rules_add_what_a_lars_program_derives_over_the_stream(tmp_path):
    program = tmp_path / "alarm.lars"
    program.write_text("@prefix ex: <http://ex/> .\n"
                       "?x a ex:Alarm  :- [RANGE 1] BOX ?x ex:state ex:hot .\n"
                       "?x a ex:Recent :- [RANGE 2] DIAMOND ?x ex:state ex:hot .\n")
    query = (f"SELECT ?x ?c FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] RULES <{program.as_uri()}> "
             "WHERE { ?x a ?c }")
    hot, cold = "<http://ex/hot>", "<http://ex/cold>"
    #  the program ticks once per STEP (1 s), at time points 0, 1, 2, ...; the window of tau
    #  sees what holds at the last point before tau. Hot at points 1 and 2: an alarm at 2;
    #  'recent' holds for two more points after each hot one.
    stream = [element(100, "a", "<http://ex/state>", cold), element(1100, "a", "<http://ex/state>", hot),
              element(2100, "a", "<http://ex/state>", hot), element(4100, "a", "<http://ex/state>", cold)]
    alarm, recent = ("a", "Alarm"), ("a", "Recent")
    assert run(query, {S: stream}) == {1000: [], 2000: [recent], 3000: [alarm, recent], 4000: [recent],
                                       5000: [recent]}


def test_entailment_sees_the_windows_materialization_with_the_background(tmp_path):
    ontology = tmp_path / "onto.ttl"
    ontology.write_text("@prefix ex: <http://ex/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                        "ex:Cat rdfs:subClassOf ex:Animal . ex:hasCat rdfs:range ex:Cat .\n")
    query = (f"SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] FROM <{ontology.as_uri()}> "
             "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> WHERE { ?x a ex:Animal }")
    stream = [element(500, "ann", "<http://ex/hasCat>", "<http://ex/tom>"),
              element(1500, "felix", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", "<http://ex/Cat>")]
    #  tom is an animal while ann's triple is in the window: [500 + 0, 500 + 2000) reported at 1000, 2000
    assert run(query, {S: stream}) == {1000: ["tom"], 2000: ["felix", "tom"], 3000: ["felix"]}


def test_queries_on_the_same_window_share_it_and_its_materialization(tmp_path):
    ontology = tmp_path / "onto.ttl"
    ontology.write_text("@prefix ex: <http://ex/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                        "ex:Cat rdfs:subClassOf ex:Animal .\n")
    engine = RSPEngine()
    engine.register_stream(S)
    window = f"FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] FROM <{ontology.as_uri()}> "
    rdfs = "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> "
    one = engine.register_query(PREFIX + "SELECT ?x " + window + rdfs + "WHERE { ?x a ex:Animal }")
    two = engine.register_query(PREFIX + "SELECT (COUNT(*) AS ?n) " + window + rdfs + "WHERE { ?x a ?c }")
    plain = engine.register_query(PREFIX + "SELECT ?x " + window + "WHERE { ?x a ex:Animal }")
    assert one.windows[0][1] is two.windows[0][1]
    assert one.windows[0][1].view.materializer is two.windows[0][1].view.materializer
    assert plain.windows[0][1] is not one.windows[0][1]
    assert len(engine._windows) == 2


def test_an_out_of_order_element_inside_the_current_window_is_taken_an_older_one_is_late():
    engine = RSPEngine()
    engine.register_stream(S)
    engine.register_query(PREFIX + "SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x ex:p ?o }")
    push = lambda lines: engine.push(S, read_tnt(lines, engine.terms, tick_ms=1), source="s.tnt")
    push([element(500, "a")])
    first = _shown(engine.advance_to(3000))             # reports 1000, 2000, 3000
    push([element(2200, "late_but_in_window")])        # 2200 >= 3000 + 1000 - 2000: the window of 4000 holds it
    push([element(1500, "too_late")])                  # no window still to come holds 1500
    assert first == {1000: ["a"], 2000: ["a"], 3000: []}
    assert _shown(engine.advance_to(5000)) == {4000: ["late_but_in_window"], 5000: []}
    assert [str(r) for r in engine.rejected] == [
        "s.tnt:1: late: timestamp 1500 is older than every window still to be reported (watermark 3000); set aside"]


def test_from_named_graphs_are_read_with_graph(tmp_path):
    rooms = tmp_path / "rooms.ttl"
    rooms.write_text("@prefix ex: <http://ex/> . ex:o ex:in ex:kitchen .\n")
    query = (f"SELECT ?x ?room FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM NAMED <{rooms.as_uri()}> "
             f"WHERE {{ ?x ex:p ?o GRAPH <{rooms.as_uri()}> {{ ?o ex:in ?room }} }}")
    assert run(query, {S: [element(500, "a")]}) == {1000: [("a", "kitchen")]}
    #  a named graph is not in the default graph
    default_only = query.replace(f"GRAPH <{rooms.as_uri()}> {{ ?o ex:in ?room }}", ". ?o ex:in ?room")
    assert run(default_only, {S: [element(500, "a")]}) == {1000: []}


def test_entailment_and_rules_together_use_the_materializer_with_the_program_on_top(tmp_path):
    ontology = tmp_path / "onto.ttl"
    ontology.write_text("@prefix ex: <http://ex/> . @prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .\n"
                        "ex:Cat rdfs:subClassOf ex:Animal .\n")
    program = tmp_path / "pets.lars"
    program.write_text("@prefix ex: <http://ex/> .\n?x a ex:Pet :- ?x a ex:Animal, ?x ex:owner ?y .\n")
    query = (f"SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] FROM <{ontology.as_uri()}> "
             f"ENTAILMENT <http://www.w3.org/ns/entailment/RDFS> RULES <{program.as_uri()}> "
             "WHERE { ?x a ex:Pet }")
    cat = "<http://ex/Cat>"
    stream = [element(500, "tom", "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>", cat),
              element(1500, "tom", "<http://ex/owner>", "<http://ex/ann>")]
    #  tom is a Pet while both triples are in the window: [1500, 2500) for the owner, [500, 2500) for the type
    assert run(query, {S: stream}) == {1000: [], 2000: ["tom"], 3000: []}


def test_inconsistencies_found_by_the_materialization_are_reported(tmp_path):
    ontology = tmp_path / "onto.ttl"
    ontology.write_text("@prefix ex: <http://ex/> . @prefix owl: <http://www.w3.org/2002/07/owl#> .\n"
                        "ex:Cat owl:disjointWith ex:Dog .\n")
    engine = RSPEngine()
    query = (f"SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] FROM <{ontology.as_uri()}> "
             "ENTAILMENT <http://www.w3.org/ns/owl-profile/RL> WHERE { ?x a ex:Cat }")
    kind = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    stream = [element(500, "rex", kind, "<http://ex/Cat>"), element(600, "rex", kind, "<http://ex/Dog>")]
    assert run(query, {S: stream}, engine=engine) == {1000: ["rex"]}  # the stream goes on
    assert len(engine.inconsistencies) == 1 and "cax-dw" in engine.inconsistencies[0]


@pytest.mark.parametrize("fast_path", [True, False])
def test_blank_nodes_a_construct_makes_are_new_per_solution_and_named_deterministically(fast_path):
    query = ("CONSTRUCT { _:event ex:about ?x } FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
             "WHERE { ?x ex:p ?o }")
    stream = [element(500, "a"), element(600, "b"), element(1500, "a")]
    first = run(query, {S: stream}, engine=RSPEngine(fast_path=fast_path))
    assert first == run(query, {S: stream}, engine=RSPEngine(fast_path=fast_path))
    blanks = {line.split()[0] for triples in first.values() for line in triples}
    assert len(blanks) == 3 and all(blank.startswith("_:") for blank in blanks)  # one per solution


def test_window_variables_range_over_the_windows_not_the_named_graphs(tmp_path):
    rooms = tmp_path / "rooms.ttl"
    rooms.write_text("@prefix ex: <http://ex/> . ex:static ex:p ex:o .\n")
    query = (f"SELECT ?x ?w FROM NAMED WINDOW <http://ex/w> ON <http://ex/s> [RANGE 1s STEP 1s] "
             f"FROM NAMED <{rooms.as_uri()}> WHERE {{ WINDOW ?w {{ ?x ex:p ?o }} }}")
    assert run(query, {S: [element(500, "a")]}) == {1000: [("a", "w")]}
    graphs = query.replace("WINDOW ?w", "GRAPH ?w")
    assert run(graphs, {S: [element(500, "a")]}) == {1000: [("a", "w"), ("static", f"<{rooms.as_uri()}>")]}


def test_rules_under_answer_stream_semantics_give_the_query_the_first_answer(tmp_path):
    #  a choice through `not` per sensor seen in the window: left or right; the query sees the
    #  first answer in the deterministic order (atoms sorted, models compared as lists)
    program = tmp_path / "choice.lars"
    program.write_text("@prefix ex: <http://ex/> .\n"
                       "?x a ex:Left  :- [RANGE 1] DIAMOND ?x ex:state ex:on, not ?x a ex:Right .\n"
                       "?x a ex:Right :- [RANGE 1] DIAMOND ?x ex:state ex:on, not ?x a ex:Left .\n"
                       "?x a ex:Seen  :- [RANGE 1] DIAMOND ?x a ex:Left .\n")
    query = (f"SELECT ?x ?c FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] RULES <{program.as_uri()}> "
             "WHERE { ?x a ?c }")
    stream = [element(100, "a", "<http://ex/state>", "<http://ex/on>"), element(3100, "b", "<http://ex/p>")]
    engine = RSPEngine()
    engine.register_stream(S)
    engine.register_query(PREFIX + query, semantics="answer-stream")
    engine.push(S, read_tnt(stream, engine.terms, tick_ms=1))
    #  <a> a ex:Left sorts before <a> a ex:Right (as written <http://ex/Left>(<a>) ...)
    assert _shown(engine.finish()) == {1000: [("a", "Left"), ("a", "Seen")], 2000: [("a", "Left"), ("a", "Seen")],
                                       3000: [], 4000: []}
    #  under the default semantics the loop is refused, with the mode that accepts it
    default = RSPEngine()
    default.register_stream(S)
    with pytest.raises(RuleSyntaxError, match="answer-stream semantics accepts it"):
        default.register_query(PREFIX + query)
