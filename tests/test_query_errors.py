"""Errors as SPARQL 1.1 has them, in every window, on both evaluation paths.

A type error in FILTER removes the row; in BIND or a SELECT expression it leaves
the variable unbound; an aggregate over an empty group still gives its row; an
evaluation that fails at one window is that window's report (`{"t", "error"}`)
and the next windows go on.
"""

from __future__ import annotations

import contextlib
import io
import json

import pytest
from rdflib import Literal, Namespace

from rsp_plugin.cli.command_line import main
from rsp_plugin.query import algebra
from rsp_plugin.runtime.engine import RSPEngine

EX = Namespace("http://ex/")
S = "http://ex/s"
HEAD = "PREFIX ex: <http://ex/>\nPREFIX xsd: <http://www.w3.org/2001/XMLSchema#>\n"
WINDOW = f"FROM STREAM <{S}> [RANGE 1s STEP 1s]"
INTEGER = "http://www.w3.org/2001/XMLSchema#integer"


def run(query: str, triples, *, fast_path: bool = True, times=(0,), allow_service=()):
    engine = RSPEngine(fast_path=fast_path, allow_service=allow_service)
    engine.register_stream(S)
    engine.register_query(HEAD + query)
    for t in times:
        engine.push(S, triples, timestamp=t)
    return [result.to_json() for result in engine.finish()]


DATA = [(EX.a, EX.v, Literal(2)), (EX.b, EX.v, Literal("x")), (EX.c, EX.v, Literal(0))]


@pytest.mark.parametrize("fast_path", [True, False])
def test_a_type_error_in_filter_removes_the_row(fast_path):
    (line,) = run(f"SELECT ?s {WINDOW} WHERE {{ ?s ex:v ?v FILTER(?v + 1 > 0) }}", DATA, fast_path=fast_path)
    assert line["bindings"] == [{"s": "<http://ex/a>"}, {"s": "<http://ex/c>"}]


@pytest.mark.parametrize("fast_path", [True, False])
def test_a_type_error_in_a_select_expression_leaves_the_variable_unbound(fast_path):
    (line,) = run(f"SELECT ?s (10 / ?v AS ?q) {WINDOW} WHERE {{ ?s ex:v ?v }}", DATA, fast_path=fast_path)
    assert line["bindings"] == [
        {"s": "<http://ex/a>", "q": '"5.0"^^<http://www.w3.org/2001/XMLSchema#decimal>'},
        {"s": "<http://ex/b>"},          # "x" is no number
        {"s": "<http://ex/c>"},          # division by zero
    ]


def test_a_type_error_in_bind_leaves_the_variable_unbound():
    (line,) = run(f"SELECT ?s ?w {WINDOW} WHERE {{ ?s ex:v ?v BIND(IF(?v, \"yes\", \"no\") AS ?w) }}",
                  DATA + [(EX.d, EX.v, EX.iri)])
    assert line["bindings"] == [{"s": "<http://ex/a>", "w": '"yes"'}, {"s": "<http://ex/b>", "w": '"yes"'},
                                {"s": "<http://ex/c>", "w": '"no"'}, {"s": "<http://ex/d>"}]


def test_an_error_in_if_leaves_the_variable_unbound_in_an_empty_pattern():
    (line,) = run(f"SELECT (IF(1/0, false, true) AS ?error) {WINDOW} WHERE {{ }}", DATA)
    assert line["bindings"] == [{}]


@pytest.mark.parametrize("fast_path", [True, False])
def test_an_aggregate_over_an_empty_group_gives_its_row(fast_path):
    lines = run(f"SELECT (MAX(?v) AS ?max) (COUNT(*) AS ?n) {WINDOW} WHERE {{ ?s ex:none ?v }}", DATA,
                fast_path=fast_path)
    assert lines == [{"t": 1000, "bindings": [{"n": f'"0"^^<{INTEGER}>'}]}]


@pytest.mark.parametrize("fast_path", [True, False])
def test_grouped_by_a_variable_an_empty_window_has_no_group(fast_path):
    lines = run(f"SELECT ?s (MAX(?v) AS ?max) {WINDOW} WHERE {{ ?s ex:none ?v }} GROUP BY ?s", DATA,
                fast_path=fast_path)
    assert lines == [{"t": 1000, "bindings": []}]


def test_an_evaluation_that_fails_is_that_windows_report_and_the_next_windows_go_on(monkeypatch):
    real = algebra.AlgebraEvaluation.select

    def failing_at_2000(self, query):
        if self.tau == 2000:
            raise RuntimeError("the window at 2000 cannot be read")
        return real(self, query)

    monkeypatch.setattr(algebra.AlgebraEvaluation, "select", failing_at_2000)
    engine = RSPEngine()
    engine.register_stream(S)
    registered = engine.register_query(HEAD + f"REGISTER ISTREAM <http://ex/q> AS SELECT ?s {WINDOW} "
                                              "WHERE { ?s ex:v ?v OPTIONAL { ?s ex:w ?w } }")
    for t in (0, 1000, 2000):
        engine.push(S, [(EX[f"n{t}"], EX.v, Literal(t))], timestamp=t)
    lines = [result.to_json() for result in engine.finish()]
    assert not registered.evaluator.uses_fast_path
    assert lines == [
        {"t": 1000, "bindings": [{"s": "<http://ex/n0>"}]},
        {"t": 2000, "error": "RuntimeError: the window at 2000 cannot be read"},
        {"t": 3000, "bindings": [{"s": "<http://ex/n2000>"}]},   # ISTREAM: new since the last good answer
    ]
    assert len(engine.errors) == 1
    assert engine.errors[0].endswith("at t=2000: evaluation failed: RuntimeError: the window at 2000 cannot be read")


def test_the_command_line_prints_the_failed_window_as_a_line_with_an_error(tmp_path, monkeypatch):
    def failing(self, query):
        raise RuntimeError("boom")

    monkeypatch.setattr(algebra.AlgebraEvaluation, "select", failing)
    query = tmp_path / "q.rq"
    query.write_text(HEAD + f"SELECT ?s {WINDOW} WHERE {{ ?s ex:v ?v OPTIONAL {{ ?s ex:w ?w }} }}")
    stream = tmp_path / "s.tnt"
    stream.write_text("0 <http://ex/a> <http://ex/v> <http://ex/b> .\n")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main(["query", str(query), "--stream", f"{S}={stream}"])
    assert status == 0
    assert [json.loads(line) for line in out.getvalue().splitlines()] == [{"t": 1000, "error": "RuntimeError: boom"}]
    assert "evaluation failed: RuntimeError: boom" in err.getvalue()


def test_an_allowed_service_that_does_not_answer_is_an_error_for_the_window_not_a_crash():
    # nothing listens on the discard port: the call fails at each window, and the run goes on
    endpoint = "http://127.0.0.1:9/sparql"
    body = f"SELECT ?s {WINDOW} WHERE {{{{ ?s ex:v ?v SERVICE {{silent}}<{endpoint}> {{{{ ?s ex:w ?w }}}} }}}}"
    lines = run(body.format(silent=""), DATA, times=(0, 1000), allow_service=[endpoint])
    assert len(lines) == 2 and all(f"SERVICE <{endpoint}>" in line["error"] for line in lines)
    # SERVICE SILENT: a failed call is the empty solution, joined with what the window gives
    lines = run(body.format(silent="SILENT "), DATA, times=(0,), allow_service=[endpoint])
    assert lines == [{"t": 1000, "bindings": [{"s": "<http://ex/a>"}, {"s": "<http://ex/b>"}, {"s": "<http://ex/c>"}]}]


