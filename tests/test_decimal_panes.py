"""Aggregates of xsd:decimal values kept per pane report what the per-fact path reports.

Sensor readings are decimals (`"21.5"^^xsd:decimal`) more often than integers. A canonical decimal
of at most 6 fraction digits is read as an integer of millionths, so partial sums and extremes per
pane stay exact: SUM of decimals (with integers among them) is the decimal the per-fact path adds
up, AVG its division, MIN / MAX the term itself. What partials cannot reproduce is evaluated whole:
a decimal written otherwise (`"21.50"`), more fraction digits, a double, integers and decimals in one
group under MIN / MAX (equal values of two terms: the per-fact path picks among them).
"""

from __future__ import annotations

import random
from decimal import Decimal

import pytest
from rdflib import Literal, URIRef
from rdflib.namespace import RDF, XSD

from pane_feeds import feed, merged
from rsp_plugin.runtime.engine import RSPEngine

EX = "http://ex/"
STREAM = f"{EX}stream"
PREFIX = f"PREFIX ex: <{EX}>\n"
BODIES = [
    "SELECT ?s (AVG(?v) AS ?avg) (SUM(?v) AS ?sum) (COUNT(*) AS ?n) WHERE { ?o a ex:Obs ; ex:sensor ?s ; ex:value ?v } "
    "GROUP BY ?s",
    "SELECT ?s (MIN(?v) AS ?lo) (MAX(?v) AS ?hi) WHERE { ?o ex:sensor ?s ; ex:value ?v } GROUP BY ?s",
    "SELECT (AVG(?v) AS ?avg) (MAX(?v) AS ?hi) WHERE { ?o ex:value ?v }",
]


def _value(draw: random.Random, odd: str):
    value = Decimal(draw.randrange(-5_000_000, 50_000_000)) / Decimal(10 ** draw.choice([0, 1, 2, 6]))
    if odd == "integers" and draw.random() < 0.3:
        return Literal(draw.randrange(-50, 500))
    if odd == "written" and draw.random() < 0.03:
        return Literal("21.50", datatype=XSD.decimal)
    if odd == "double" and draw.random() < 0.03:
        return Literal(float(draw.randrange(100)) / 8)
    if odd == "digits" and draw.random() < 0.03:
        return Literal(Decimal("0.1234567"))
    text = format(value.normalize(), "f")
    return Literal(text if "." in text else text + ".0", datatype=XSD.decimal)


def _stream(seed: int, rate: int, count: int, odd: str = "") -> list[tuple[int, tuple]]:
    draw = random.Random(seed)
    elements = []
    for number in range(count // 3):
        stamp = number * 3000 // rate
        subject = URIRef(f"{EX}obs{number}")
        elements += [(stamp, (subject, RDF.type, URIRef(f"{EX}Obs"))),
                     (stamp, (subject, URIRef(f"{EX}sensor"), URIRef(f"{EX}s{draw.randrange(4)}"))),
                     (stamp, (subject, URIRef(f"{EX}value"), _value(draw, odd)))]
    return elements


def _run(elements, window: str, *, batch: bool, bodies=None):
    engine = RSPEngine(batch=batch, max_eval_ms=None)
    engine.register_stream(STREAM)
    seen: list = []
    for number, body in enumerate(bodies or BODIES):
        select, _, rest = body.partition(" WHERE ")
        engine.register_query(f"REGISTER RSTREAM <{EX}q{number}> AS\n{PREFIX}{select}\nFROM STREAM <{STREAM}> "
                              f"{window}\nWHERE {rest}").subscribe(lambda result: seen.append(result.to_json()))
    for stamp, triple in elements:
        if engine.watermark is None or stamp > engine.watermark:
            engine.advance_to(stamp)
        engine.push(STREAM, [triple], timestamp=stamp)
    engine.finish()
    assert not engine.errors, engine.errors
    return seen, merged(engine) if batch else []


@pytest.mark.parametrize("rate,step", [(10, 5000), (100, 1000), (1000, 1000)])
def test_decimal_aggregates_from_panes_are_the_per_fact_paths(rate, step):
    elements = _stream(rate, rate, 1200)
    window = f"[RANGE {20 * step}ms STEP {step}ms]"
    expected, _ = _run(elements, window, batch=False)
    found, merged = _run(elements, window, batch=True)
    assert found == expected
    reports = len(expected) // len(BODIES)
    assert all(count >= reports - 2 for count in merged), (merged, reports)
    assert any('XMLSchema#decimal' in str(report) for report in expected)


@pytest.mark.parametrize("odd", ["integers", "written", "double", "digits"])
def test_what_partials_cannot_reproduce_is_evaluated_whole_and_agrees(odd):
    """Integers among the decimals (SUM and AVG still merge; MIN / MAX of such a group does not), a
    decimal written otherwise, a double, seven fraction digits: the per-fact path's reports."""
    elements = _stream(7, 100, 1500, odd)
    window = "[RANGE 10000ms STEP 1000ms]"
    expected, _ = _run(elements, window, batch=False)
    found, merged = _run(elements, window, batch=True)
    assert found == expected
    reports = len(expected) // len(BODIES)
    if odd == "integers":
        assert merged[0] >= reports - 2 and merged[1] < reports // 2
    else:
        assert all(count < reports for count in merged)


FILTERED = [
    "SELECT ?s (AVG(?v) AS ?avg) (COUNT(*) AS ?n) WHERE { ?o a ex:Obs ; ex:sensor ?s ; ex:value ?v FILTER(?v > 100) } "
    "GROUP BY ?s",
    "SELECT ?s (MIN(?v) AS ?lo) WHERE { ?o ex:sensor ?s ; ex:value ?v FILTER(?s != ex:s1 && ?v < 2000) } GROUP BY ?s",
    "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?o ex:sensor ?s ; ex:value ?v FILTER(?v * 2 > ?v + 50) } GROUP BY ?s",
]


@pytest.mark.parametrize("seed,odd", [(1, ""), (2, "integers"), (3, "double")])
def test_filters_of_a_star_are_decided_on_its_joined_rows(seed, odd):
    """A threshold (and a filter of two variables, and one whose arithmetic fails on a non-number)
    on an observation's triples: decided per distinct value on the pane's joined rows, the per-fact
    path's reports."""
    elements = _stream(seed, 100, 900, odd)
    window = "[RANGE 20000ms STEP 1000ms]"
    expected, _ = _run(elements, window, batch=False, bodies=FILTERED)
    found, merged = _run(elements, window, batch=True, bodies=FILTERED)
    assert len(merged) == len(FILTERED)
    assert found == expected
    if not odd:
        assert all(count >= len(expected) // len(FILTERED) - 2 for count in merged), merged


@pytest.mark.parametrize("huge", [False, True])
def test_a_block_of_reports_merges_large_sums_with_decimals_exactly(huge):
    """A stream read in blocks: each block's reports merge against one store of partials (its sums
    per group over panes kept as running totals). A sensor reads integers near 10**13 in some panes
    and decimals in others, so a window's sum in millionths passes 64 bits (added up in Python's
    integers). With `huge`, another reads integers near 2**60, whose partials are too large to keep
    (those windows evaluated whole, the others merged pane by pane)."""
    draw = random.Random(11)
    elements = []
    for number in range(900):
        stamp = number * 100
        subject = URIRef(f"{EX}obs{number}")
        sensor = number % 3
        if sensor == 0:
            value = Literal(draw.randrange(10 ** 12, 10 ** 13)) if (stamp // 1000) % 2 else \
                Literal(f"{draw.randrange(1000)}.{draw.randrange(1, 10)}", datatype=XSD.decimal)
        elif sensor == 1 and huge:
            value = Literal(draw.randrange(2 ** 60, 2 ** 61))
        else:
            value = Literal(draw.randrange(-500, 500))
        elements += [(stamp, (subject, RDF.type, URIRef(f"{EX}Obs"))),
                     (stamp, (subject, URIRef(f"{EX}sensor"), URIRef(f"{EX}s{sensor}"))),
                     (stamp, (subject, URIRef(f"{EX}value"), value))]
    window = "[RANGE 10000ms STEP 1000ms]"
    expected, _ = _run(elements, window, batch=False, bodies=BODIES[:1])
    engine = RSPEngine(batch=True, max_eval_ms=None)
    engine.register_stream(STREAM)
    found: list = []
    select, _, rest = BODIES[0].partition(" WHERE ")
    engine.register_query(f"REGISTER RSTREAM <{EX}q0> AS\n{PREFIX}{select}\nFROM STREAM <{STREAM}> {window}\n"
                          f"WHERE {rest}").subscribe(lambda result: found.append(result.to_json()))
    feed(engine, STREAM, elements, 3, columns=True, sizes=(600, 1500))
    assert found == expected
    assert any(len(sum_) > 30 for report in expected for row in report["bindings"]
               for name, sum_ in row.items() if name == "sum")
    assert (merged(engine)[0] < len(expected) // 2) if huge else merged(engine)[0] >= len(expected) * 3 // 4
