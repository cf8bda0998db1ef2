"""Numbers print the same on every evaluation path (issue 30: "79", "7.9E1" or "79.0").

The same query over the same stream, through the columnar batch path, the per-fact fast
path, the algebra evaluator and the command line's block replay, must print identical
lines; a computed number is in its XSD canonical form whichever path made it (SUM, AVG,
arithmetic in SPARQL, arithmetic in a RULES program); a value read from the data (MIN,
MAX, a binding) keeps its written form. Spark's paths: tests/test_spark_query.py.
"""

from __future__ import annotations

import json
from itertools import combinations_with_replacement

import pytest

from rsp_plugin.cli.command_line import main
from rsp_plugin.core.rdfterms import key_term
from rsp_plugin.runtime.engine import RSPEngine

XSD = "http://www.w3.org/2001/XMLSchema#"
VALUES = [f'"79"^^<{XSD}integer>', f'"079"^^<{XSD}integer>', f'"79.0"^^<{XSD}decimal>', f'"7.90"^^<{XSD}decimal>',
          f'"79"^^<{XSD}double>', f'"7.9E1"^^<{XSD}double>', f'"1.5e0"^^<{XSD}double>', f'"2.5"^^<{XSD}float>',
          f'"79"^^<{XSD}int>', f'"-0.5"^^<{XSD}decimal>']
#: a group per pair of values (their sum, average, least and greatest), each seen at its own time
LINES = [f"{100 * n} <http://ex/g{n // 2}> <http://ex/v> {value} ."
         for n, value in enumerate(v for pair in combinations_with_replacement(VALUES, 2) for v in pair)]

WINDOW = "FROM STREAM <http://ex/s> [RANGE 100s STEP 100s]"
QUERIES = {
    "aggregates": f"PREFIX ex: <http://ex/>\nSELECT ?g (SUM(?v) AS ?sum) (AVG(?v) AS ?avg) (MIN(?v) AS ?lo) "
                  f"(MAX(?v) AS ?hi) (COUNT(?v) AS ?n) {WINDOW} WHERE {{ ?g ex:v ?v }} GROUP BY ?g",
    "arithmetic": f"PREFIX ex: <http://ex/>\nSELECT ?g ?v (?v * 2 AS ?twice) (?v / 4 AS ?quarter) (?v + 0.5 AS ?more) "
                  f"(-?v AS ?negated) {WINDOW} WHERE {{ ?g ex:v ?v }}",
    "rules": f"PREFIX ex: <http://ex/>\nSELECT ?g ?p ?f {WINDOW} RULES <RULES_FILE> WHERE {{ ?g ?p ?f "
             f"FILTER(?p != ex:v) }}",
    "construct": f"PREFIX ex: <http://ex/>\nCONSTRUCT {{ ?g ex:f ?f }} {WINDOW} WHERE {{ ?g ex:v ?v BIND(?v * 9 / 5 + 32 AS ?f) }}",
}
RULES = ("@prefix ex: <http://ex/> .\n?g ex:fahrenheit ?f :- ?g ex:v ?c, ?f = ?c * 9 / 5 + 32 .\n"
         "?g ex:same ?w :- ?g ex:v ?c, ?w = ?c * 1 .\n?g ex:limit 30 :- ?g ex:v ?c .\n"
         "?g ex:ratio ?r :- ?g ex:v ?c, ?r = 1 / 4 .\n")
PATHS = {"columnar": {}, "per-fact": {"batch": False}, "algebra": {"fast_path": False}}


def engine_lines(query: str, **options) -> list[str]:
    engine = RSPEngine(**options)
    engine.register_stream("http://ex/s")
    engine.register_query(query)
    for line in LINES:
        t, rest = line.split(" ", 1)
        s, p, o = rest[:-2].split(" ", 2)
        engine.push("http://ex/s", [(key_term(s), key_term(p), key_term(o))], timestamp=int(t))
    return [json.dumps(result.to_json(), ensure_ascii=False) for result in engine.finish()]


@pytest.fixture
def query_text(request, tmp_path):
    (tmp_path / "rules.lars").write_text(RULES)
    return QUERIES[request.param].replace("RULES_FILE", (tmp_path / "rules.lars").as_uri())


@pytest.mark.parametrize("query_text", list(QUERIES), indirect=True)
def test_every_path_prints_the_same_lines(query_text, tmp_path, capsys):
    printed = {name: engine_lines(query_text, **options) for name, options in PATHS.items()}
    (tmp_path / "s.tnt").write_text("\n".join(LINES) + "\n")
    (tmp_path / "q.rq").write_text(query_text)
    assert main(["query", str(tmp_path / "q.rq"), "--stream", f"http://ex/s={tmp_path / 's.tnt'}", "-q"]) == 0
    printed["command line"] = capsys.readouterr().out.splitlines()
    first = printed["columnar"]
    assert first and all(lines == first for lines in printed.values()), {
        name: [line for line in lines if line not in first][:2] for name, lines in printed.items()}


def test_computed_numbers_are_canonical_and_read_ones_as_written():
    (line,) = engine_lines(QUERIES["aggregates"])
    rows = {row["g"]: row for row in json.loads(line)["bindings"]}
    integer, decimal, double = f"^^<{XSD}integer>", f"^^<{XSD}decimal>", f"^^<{XSD}double>"
    both_integers = rows[f"<http://ex/g{_group(0, 8)}>"]       # "79"^^xsd:integer and "79"^^xsd:int
    assert (both_integers["sum"], both_integers["avg"]) == ('"158"' + integer, '"79.0"' + decimal)
    doubles = rows[f"<http://ex/g{_group(4, 5)}>"]              # "79" and "7.9E1", both xsd:double
    assert (doubles["sum"], doubles["avg"]) == ('"1.58E2"' + double, '"7.9E1"' + double)
    assert {doubles["lo"], doubles["hi"]} <= {'"79"' + double, '"7.9E1"' + double}  # values of the data
    mixed = rows[f"<http://ex/g{_group(0, 3)}>"]                # "79" integer and "7.90" decimal
    assert (mixed["sum"], mixed["lo"]) == ('"86.9"' + decimal, '"7.90"' + decimal)


def test_a_rules_programs_numbers_are_rdf_literals_in_canonical_form(tmp_path):
    (tmp_path / "rules.lars").write_text(RULES)
    (line,) = engine_lines(QUERIES["rules"].replace("RULES_FILE", (tmp_path / "rules.lars").as_uri()))
    made = {(row["g"], row["p"].rsplit("/", 1)[1][:-1]): row["f"] for row in json.loads(line)["bindings"]}
    g0, g4 = "<http://ex/g0>", f"<http://ex/g{_group(4, 4)}>"     # "79"^^xsd:integer, "79"^^xsd:double
    assert made[(g0, "same")] == f'"79"^^<{XSD}integer>'
    assert made[(g4, "same")] == f'"7.9E1"^^<{XSD}double>'    # not a bare 79.0
    assert made[(g0, "fahrenheit")] == f'"174.2"^^<{XSD}decimal>'  # 79 * 9 / 5: integer division is decimal
    assert made[(g0, "limit")] == f'"30"^^<{XSD}integer>'     # a number written in a triple is Turtle's
    assert made[(g0, "ratio")] == f'"0.25"^^<{XSD}decimal>'   # computed from the rule's own numbers


def _group(first: int, second: int) -> int:
    """The group of the pair (VALUES[first], VALUES[second]), first <= second."""
    return list(combinations_with_replacement(range(len(VALUES)), 2)).index((first, second))
