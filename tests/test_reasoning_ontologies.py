"""The ontologies in ontologies/ as background knowledge: what a short stream over each entails, and until when.

Each is also checked against owlrl's closure at every time point (known
differences as in test_reasoning_differential.py).
"""

from pathlib import Path

import pytest
from rdflib import Graph

from rsp_plugin.reasoning import Materializer, intern_triples
from rsp_plugin.reasoning.background import key_term
from rsp_plugin.core.terms import Dictionary
from rsp_plugin.core.time import NEVER_EXPIRES
from test_reasoning_differential import comparable, owlrl_closure

ONTOLOGIES = Path(__file__).parent.parent / "ontologies"
NAMESPACES = {
    "bld:": "http://example.org/building#",
    "sosa:": "http://www.w3.org/ns/sosa/",
    "tr:": "http://example.org/transport#",
    "ub:": "http://example.org/univ-bench#",
    "xsd:": "http://www.w3.org/2001/XMLSchema#",
    "owl:": "http://www.w3.org/2002/07/owl#",
}
TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"


def key(word: str) -> str:
    if word == "a":
        return TYPE
    if word.startswith('"'):
        text, _, datatype = word.partition("^^")
        return f"{text}^^{key(datatype)}" if datatype else text
    prefix, _, local = word.partition(":")
    return f"<{NAMESPACES[prefix + ':']}{local}>"


def ids(terms: Dictionary, text: str) -> tuple:
    return tuple(terms.intern(key(word)) for word in text.split())


STREAMS = {
    "building": {
        0: ["bld:obs1 sosa:madeBySensor bld:s201", "bld:obs1 sosa:hasFeatureOfInterest bld:room201",
            'bld:obs1 sosa:hasSimpleResult "0.9"^^xsd:decimal'],
        1: ["bld:m1 bld:isLocatedIn bld:corridor1", "bld:m1 sosa:observes bld:Occupancy"],
        3: ["bld:t101 bld:isLocatedIn bld:room102"],
    },
    "transport": {
        0: ["tr:alice tr:rides tr:r23", "tr:r23 tr:isIn tr:centrale", "tr:alice tr:holds tr:ticket9"],
        1: ["tr:ticket9 a tr:SeasonTicket", "tr:bob tr:drives tr:car4", "tr:car4 tr:parkedAt tr:lot7"],
        2: ["tr:r23 tr:operatesOn tr:s12"],
    },
    "university": {
        0: ["ub:stud1 ub:memberOf ub:dept0", "ub:stud1 ub:takesCourse ub:gcourse0"],
        1: ["ub:stud2 ub:teachingAssistantOf ub:course0", "ub:stud2 ub:advisor ub:prof1"],
        2: ["ub:prof2 ub:emailAddress \"prof0@univ0.example\""],
    },
}


@pytest.mark.parametrize("name", sorted(STREAMS))
def test_ontology_with_a_stream_equals_owlrl_at_every_time_point(name):
    background = Graph().parse(ONTOLOGIES / f"{name}.ttl")  # parsed once: its blank nodes are one set
    terms = Dictionary()
    m = Materializer("owl-rl", window=2, background=background, terms=terms)
    stream = {t: [tuple(key_term(key(word)) for word in text.split()) for text in texts]
              for t, texts in STREAMS[name].items()}
    mismatches = {}
    for t in range(0, 6):
        m.advance_to(t, intern_triples(stream.get(t, []), terms))
        in_window = [x for u in range(max(0, t - 2), t + 1) for x in stream.get(u, [])]
        expected, inconsistent = owlrl_closure(list(background) + in_window, "owl-rl")
        expected = comparable(expected, "owl-rl")
        got = comparable({tuple(terms.key(i) for i in x) for x in m.holding()}, "owl-rl")
        if expected != got or inconsistent != bool(m.inconsistent()):
            mismatches[t] = (sorted(expected - got), sorted(got - expected))
    assert mismatches == {}


def materialize(name: str, until: int, window: int = 2) -> tuple[Materializer, dict]:
    terms = Dictionary()
    m = Materializer("owl-rl", window=window, background=ONTOLOGIES / f"{name}.ttl", terms=terms)
    events = {}
    for t in range(0, until + 1):
        report = m.advance_to(t, [ids(terms, text) for text in STREAMS[name].get(t, [])])
        events[t] = [event.rule for event in report.inconsistencies]
    return m, events


def expiry(m: Materializer, text: str):
    return m.expires(ids(m.terms, text))


def test_building_observations_sensors_and_spaces():
    m, events = materialize("building", 3)
    # the smoke detector is one by hasValue (background, never expires); the observation is a
    # smoke observation while it is in the window (0 + 2)
    assert expiry(m, "bld:s201 a bld:SmokeDetector") == NEVER_EXPIRES
    assert expiry(m, "bld:room201 a bld:MonitoredSpace") == NEVER_EXPIRES
    m0, _ = materialize("building", 0)
    assert expiry(m0, "bld:obs1 a bld:SmokeObservation") == 2
    assert expiry(m0, "bld:obs1 a sosa:Observation") == 2
    assert expiry(m0, "bld:s201 sosa:madeObservation bld:obs1") == 2
    assert expiry(m0, 'bld:obs1 sosa:hasSimpleResult "0.9"^^xsd:decimal') == 2
    # a sensor placed in the corridor at 1: transitive isLocatedIn, contains (inverse), monitored space
    assert expiry(m, "bld:m1 bld:isLocatedIn bld:hq") == 3
    assert expiry(m, "bld:hq bld:contains bld:m1") == 3
    assert expiry(m, "bld:corridor1 a bld:MonitoredSpace") == 3
    assert expiry(m, "bld:m1 a sosa:Sensor") == 3  # the domain of sosa:observes
    # t101 also placed in room102 at 3: now in both rooms
    assert expiry(m, "bld:room102 bld:contains bld:t101") == 5
    assert events == {0: [], 1: [], 2: [], 3: []}


def test_building_inconsistency_a_space_used_as_a_sensor():
    terms = Dictionary()
    m = Materializer("owl-rl", window=2, background=ONTOLOGIES / "building.ttl", terms=terms)
    m.advance_to(0)
    report = m.advance_to(1, [ids(terms, "bld:obs9 sosa:madeBySensor bld:room101")])
    assert {event.rule for event in report.inconsistencies} == {"cax-dw"}
    assert m.advance_to(4).removed and m.inconsistent() == []


def test_transport_barbieri_scenario():
    m, events = materialize("transport", 2)
    # alice rides r23 (0), r23 at centrale (0), centrale in milan in lombardy (background)
    assert expiry(m, "tr:alice tr:isIn tr:lombardy") == 2
    assert expiry(m, "tr:alice a tr:TrainTraveller") == 2
    # a commuter: a person (domain of rides) holding (0) a season ticket (1); holds while both do
    assert expiry(m, "tr:alice a tr:Commuter") == 2
    # bob drives car4 (1), parked at lot7 in milan (1): rides -> isIn, transitive
    assert expiry(m, "tr:bob tr:isIn tr:milan") == 3
    assert expiry(m, "tr:bob a tr:Driver") == 3
    # operatesOn is functional: r23 on s11 (background) and on s12 (2) make the two lines the same
    assert expiry(m, "tr:s12 owl:sameAs tr:s11") == 4
    assert events == {0: [], 1: [], 2: []}


def test_university_lubm_style_entailments():
    m, events = materialize("university", 2)
    assert expiry(m, "ub:prof0 a ub:Chair") == NEVER_EXPIRES          # background: head of a department
    assert expiry(m, "ub:group0 ub:subOrganizationOf ub:univ0") == NEVER_EXPIRES
    assert expiry(m, "ub:dept0 ub:member ub:prof1") == NEVER_EXPIRES   # worksFor -> memberOf -> inverse
    assert expiry(m, "ub:stud1 a ub:Student") == 2                     # Person (memberOf) with a course
    assert expiry(m, "ub:stud2 a ub:TeachingAssistant") == 3
    assert expiry(m, "ub:prof1 a ub:Professor") == NEVER_EXPIRES
    # emailAddress is inverse functional: prof2 is prof0 while the triple is in the window
    assert expiry(m, "ub:prof2 owl:sameAs ub:prof0") == 4
    assert expiry(m, "ub:prof2 a ub:Chair") == 4
    assert events == {0: [], 1: [], 2: []}
