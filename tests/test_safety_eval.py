"""Bounded evaluation: no query stalls the engine or fills its memory, and the stream goes on.

Issue 32, point 4: `FILTER(regex(?o, "^(a+)+$"))` on a 30-character value took 42 s; a
5-pattern cartesian product over a 10k-triple window ran with no end; `[RANGE 1ms STEP
1ms]` over a sparse stream kept every report of one `advance_to` in a list (651 MB for
995k reports). Each path (columnar, per-fact, algebra) is bounded in time
(`--max-eval-ms`) and in the rows a step holds (`--max-solutions`); a report past a
bound is marked `"cut"`, said in one located line, and the next windows go on.
"""

from __future__ import annotations

import contextlib
import io
import json
import time

import pytest
from rdflib import Literal, URIRef

from rsp_plugin import RSPEngine
from rsp_plugin.cli.command_line import main
from rsp_plugin.query.bounds import Budget, EvaluationCut
from rsp_plugin.query.patterns import compile_pattern
from rsp_plugin.query.sparql_values import SparqlError

EX = "http://ex.org/"
P = URIRef(f"{EX}p")


def run(*args) -> tuple[int, list[dict], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        status = main([str(a) for a in args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue().splitlines()


#: the three evaluation paths, as the runtime picks them
PATHS = {"columnar": ({}, ""), "per-fact": ({"batch": False}, ""),
         "algebra": ({"batch": False}, f"OPTIONAL {{ ?a <{EX}none> ?z }}")}

#: five patterns that share no variable: every combination of the window's triples
PRODUCT = (f"SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 10s STEP 10s] WHERE {{ ?a <{EX}p> ?o0 . "
           + " . ".join(f"?s{k} <{EX}p> ?o{k}" for k in range(1, 5)) + " %s }")


def _engine(path: str, **bounds) -> tuple[RSPEngine, object]:
    options, extra = PATHS[path]
    engine = RSPEngine(**options, **bounds)
    engine.register_stream(f"{EX}s")
    query = engine.register_query(PRODUCT % extra, name="q", filename="product.rq")
    return engine, query


def _window(engine: RSPEngine, size: int, at: int = 5) -> None:
    engine.push(f"{EX}s", [(URIRef(f"{EX}s{i}"), P, URIRef(f"{EX}o{i}")) for i in range(size)], timestamp=at)


# a product of patterns --------------------------------------------------------------------------

@pytest.mark.parametrize("path", list(PATHS))
def test_a_product_is_cut_at_max_solutions_and_the_next_window_goes_on(path):
    engine, query = _engine(path)
    assert query.evaluator.uses_fast_path == (path != "algebra")
    _window(engine, 10_000)
    started = time.monotonic()
    first = engine.advance_to(10_000)
    assert time.monotonic() - started < 20
    assert [result.to_json() for result in first] == [{
        "t": 10_000, "cut": "max-solutions",
        "error": "evaluation stopped at more than 1000000 solutions (--max-solutions 1000000)"}]
    assert first[0].cut == "max-solutions" and first[0].answer.rows == []
    assert engine.errors == ['product.rq: query q at t=10000: evaluation stopped at more than 1000000 solutions '
                             '(--max-solutions 1000000); its report is marked "cut" and the stream goes on']
    _window(engine, 3, at=15_000)  # 3^5 rows: the next window is evaluated as usual
    count = '"243"^^<http://www.w3.org/2001/XMLSchema#integer>'
    assert [result.to_json() for result in engine.advance_to(20_000)] == [{"t": 20_000, "bindings": [{"n": count}]}]


@pytest.mark.parametrize("path", ["per-fact", "algebra"])
def test_a_product_is_cut_at_max_eval_ms_when_solutions_are_not_bounded(path):
    engine, _ = _engine(path, max_eval_ms=300, max_solutions=None)
    _window(engine, 2_000)
    started = time.monotonic()
    (result,) = engine.advance_to(10_000)
    assert time.monotonic() - started < 5  # the bound, and a check every few dozen rows of a join
    assert result.to_json() == {"t": 10_000, "cut": "max-eval-ms",
                                "error": "evaluation stopped after 300 ms (--max-eval-ms 300)"}
    assert engine.errors[0].startswith("product.rq: query q at t=10000: evaluation stopped after 300 ms")


def test_the_columnar_path_never_makes_a_join_past_the_bound():
    # the join's size is known before it runs: 2,000^2 rows are never made
    engine, _ = _engine("columnar", max_solutions=1_000_000)
    _window(engine, 2_000)
    started = time.monotonic()
    (result,) = engine.advance_to(10_000)
    assert result.cut == "max-solutions" and time.monotonic() - started < 5


def test_a_join_within_the_bound_is_not_cut_and_keys_make_it_small():
    # a key-join of two 20k-row patterns: 20k solutions under a bound of 25k (their product: 4 x 10^8)
    engine = RSPEngine(max_solutions=25_000)
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT (COUNT(*) AS ?n) FROM STREAM <{EX}s> [RANGE 10s STEP 10s] "
                          f"WHERE {{ ?x <{EX}p> ?y . ?x <{EX}q> ?z }}", name="q")
    engine.push(f"{EX}s", [(URIRef(f"{EX}x{i}"), p, Literal(i)) for i in range(20_000)
                           for p in (P, URIRef(f"{EX}q"))], timestamp=5)
    (result,) = engine.advance_to(10_000)
    assert result.cut is None and result.to_json()["bindings"][0]["n"].startswith('"20000"')


def test_istream_after_a_cut_compares_with_the_last_answer_that_ran_to_its_end():
    engine = RSPEngine(max_solutions=50)
    engine.register_stream(f"{EX}s")
    engine.register_query(f"REGISTER ISTREAM <{EX}q> AS SELECT ?a ?b FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
                          f"WHERE {{ ?a <{EX}p> ?x . ?b <{EX}p> ?y }}", name="q")
    pairs = lambda names: [(URIRef(f"{EX}{n}"), P, Literal(1)) for n in names]  # noqa: E731
    engine.push(f"{EX}s", pairs("ab"), timestamp=100)         # 4 rows
    engine.push(f"{EX}s", pairs("abcdefgh"), timestamp=1100)  # 64 rows: cut
    engine.push(f"{EX}s", pairs("abc"), timestamp=2100)       # 9 rows: new since the 4 rows
    reports = [result.to_json() for result in engine.advance_to(3000)]
    assert [len(report.get("bindings", ())) for report in reports] == [4, 0, 5]
    assert reports[1]["cut"] == "max-solutions"


def test_the_command_line_marks_the_report_says_it_once_and_goes_on(tmp_path):
    query = tmp_path / "product.rq"
    query.write_text(PRODUCT % "" + "\n")
    stream = tmp_path / "s.tnt"
    stream.write_text("".join(f"{i} <{EX}s{i}> <{EX}p> <{EX}o{i}> .\n" for i in range(3000))
                      + f"12000 <{EX}x> <{EX}p> <{EX}y> .\n")
    status, lines, err = run("query", query, "--stream", f"{EX}s={stream}", "--max-solutions", "100000", "-q")
    assert status == 0
    assert lines == [{"t": 10_000, "cut": "max-solutions",
                      "error": "evaluation stopped at more than 100000 solutions (--max-solutions 100000)"},
                     {"t": 20_000, "bindings": [{"n": '"1"^^<http://www.w3.org/2001/XMLSchema#integer>'}]}]
    assert err == [f'rsp-plugin: {query}: query q1 at t=10000: evaluation stopped at more than 100000 solutions '
                   '(--max-solutions 100000); its report is marked "cut" and the stream goes on']


def test_the_bounds_are_options(tmp_path):
    query = tmp_path / "q.rq"
    query.write_text(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}\n")
    stream = tmp_path / "s.tnt"
    stream.write_text(f"1 <{EX}a> <{EX}p> <{EX}b> .\n")
    for option in ("--max-eval-ms", "--max-solutions"):
        status, lines, _ = run("query", query, "--stream", f"{EX}s={stream}", option, "none")
        assert status == 0 and lines == [{"t": 1000, "bindings": [{"s": f"<{EX}a>"}]}]
        with pytest.raises(SystemExit) as refused:
            run("query", query, "--stream", f"{EX}s={stream}", option, "0")
        assert refused.value.code == 2


# regular expressions ----------------------------------------------------------------------------

@pytest.mark.parametrize("path", ["columnar", "per-fact", "algebra"])
def test_a_backtracking_bomb_in_regex_is_answered_at_once(path):
    options, extra = PATHS[path]
    engine = RSPEngine(**options)
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?a FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?a <{EX}p> ?o "
                          f'FILTER(regex(?o, "^(a+)+$") || regex(?o, "^(a|a)+$")) {extra} }}', name="q")
    engine.push(f"{EX}s", [(URIRef(f"{EX}bomb"), P, Literal("a" * 30 + "!")),
                           (URIRef(f"{EX}match"), P, Literal("a" * 30))], timestamp=5)
    started = time.monotonic()
    (result,) = engine.advance_to(1000)
    assert time.monotonic() - started < 2  # Python's re: 42 s for the first, days for the second
    assert result.to_json() == {"t": 1000, "bindings": [{"a": f"<{EX}match>"}]}


def test_a_back_reference_runs_on_the_backtracking_engine_within_the_evaluation_bound():
    pattern = compile_pattern(r"^(a|a)+\1$", "")
    assert pattern.linear is None and pattern.search("aaa")
    started = time.monotonic()
    with pytest.raises(EvaluationCut) as cut:
        pattern.search("a" * 40 + "!", Budget(max_ms=200))
    assert cut.value.bound == "max-eval-ms" and time.monotonic() - started < 3


def test_a_back_reference_bomb_cuts_the_report_and_the_stream_goes_on():
    engine = RSPEngine(max_eval_ms=200)
    engine.register_stream(f"{EX}s")
    engine.register_query(f'SELECT ?a FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?a <{EX}p> ?o '
                          f'FILTER(regex(?o, "^(a|a)+\\\\1$")) }}', name="q")
    engine.push(f"{EX}s", [(URIRef(f"{EX}bomb"), P, Literal("a" * 40 + "!"))], timestamp=5)
    engine.push(f"{EX}s", [(URIRef(f"{EX}fine"), P, Literal("aa"))], timestamp=1005)
    reports = [result.to_json() for result in engine.advance_to(2000)]
    assert reports[0]["cut"] == "max-eval-ms"
    assert reports[1] == {"t": 2000, "bindings": [{"a": f"<{EX}fine>"}]}


@pytest.mark.parametrize("pattern, flags, text, found", [
    ("^abc$", "", "abc\n", False),         # XPath's $ is the end of the text (Python's also before a newline)
    ("^abc$", "m", "x\nabc\ny", True),
    ("a.c", "", "a\nc", False),
    ("a.c", "", "a\rc", False),            # nor a carriage return
    ("a.c", "s", "a\rc", True),
    ("ABC", "i", "xabcx", True),
    ("a b c", "x", "abc", True),           # x: whitespace removed outside classes
    ("a[ ]b", "x", "a b", True),           # ... and kept inside
    ("a.b", "q", "a.b", True),
    ("a.b", "q", "axb", False),
    ("^\\d+$", "", "١٢٣", True),          # \d: the digits of any script
    ("^\\w+$", "", "a+b", True),          # \w: all but punctuation, separators, others
    ("^\\w+$", "", "a_b", False),
    ("^[\\w]+$", "", "é+1", True),
    ("^\\s$", "", "\t", True),
    ("(a)\\1", "", "baab", True),          # a back-reference (the backtracking engine)
])
def test_patterns_read_as_xpath_has_them(pattern, flags, text, found):
    assert compile_pattern(pattern, flags).search(text) is found


@pytest.mark.parametrize("pattern, flags, message", [
    ("a(", "", "bad regular expression"),
    ("a", "k", "unknown regular expression flag 'k'"),
    ("a\\", "", "bad regular expression: it ends with a lone backslash"),
])
def test_a_bad_pattern_is_an_error_of_the_expression(pattern, flags, message):
    with pytest.raises(SparqlError) as raised:
        compile_pattern(pattern, flags)
    assert message in str(raised.value)


# reports handed out as they are made --------------------------------------------------------------

def _sparse_engine(**options) -> tuple[RSPEngine, object]:
    engine = RSPEngine(max_gap=None, **options)
    engine.register_stream(f"{EX}s")
    query = engine.register_query(f"SELECT ?s FROM STREAM <{EX}s> [RANGE 1ms STEP 1ms] WHERE {{ ?s ?p ?o }}",
                                  name="q")
    engine.push(f"{EX}s", [(URIRef(f"{EX}a"), P, URIRef(f"{EX}b"))], timestamp=0)
    engine.push(f"{EX}s", [(URIRef(f"{EX}a"), P, URIRef(f"{EX}b"))], timestamp=20_000)
    return engine, query


def test_advance_hands_each_report_out_as_it_is_made():
    engine, query = _sparse_engine()
    reports = engine.advance(20_000)
    first = next(reports)
    assert first.t == 1 and query.evaluations == 1  # the others are not made yet
    assert sum(1 for _ in reports) == 19_999 and engine.watermark == 20_000


def test_advance_to_without_collecting_keeps_nothing_and_subscribers_get_everything():
    engine, query = _sparse_engine()
    seen = []
    query.subscribe(lambda result: seen.append(result.t))
    assert engine.advance_to(20_000, collect=False) == [] and not engine._emitted
    assert len(seen) == 20_000 and seen[:2] == [1, 2]
    assert engine.finish(collect=False) == [] and seen[-1] == 20_001 and len(seen) == 20_001


def test_advance_to_still_returns_the_list():
    engine, _ = _sparse_engine()
    reports = engine.advance_to(20_000)
    assert [r.t for r in reports[:3]] == [1, 2, 3] and len(reports) == 20_000
    assert [r.to_json() for r in engine.finishing()] == [{"t": 20_001, "bindings": [{"s": f"<{EX}a>"}]}]


def test_a_lone_surrogate_is_an_error_of_the_expression_not_of_the_evaluation():
    # RE2 reads UTF-8: such a value fails the FILTER (a type error), the others are matched
    engine = RSPEngine()
    engine.register_stream(f"{EX}s")
    engine.register_query(f'SELECT ?a ?b FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?a <{EX}p> ?o '
                          f'FILTER(regex(?o, "a")) BIND(REPLACE(?o, "a", "b") AS ?b) }}', name="q")
    engine.push(f"{EX}s", [(URIRef(f"{EX}odd"), P, Literal("a\ud800")), (URIRef(f"{EX}fine"), P, Literal("xa"))],
                timestamp=5)
    (result,) = engine.advance_to(1000)
    assert result.to_json() == {"t": 1000, "bindings": [{"a": f"<{EX}fine>", "b": '"xb"'}]}
