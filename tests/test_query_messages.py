"""Every message about a query (or a LARS program) is about the user's text: the token at
fault, its line and column, what could stand there in the user's words; never an internal
rewrite (GRAPH) or a parser's names (SelectQuery, __ANON_0). And numbers no machine holds are
located errors (issue 9)."""

from __future__ import annotations

import ast
import pickle
import subprocess
import sys
from pathlib import Path

import pytest

from rsp_plugin.core.errors import QuerySyntaxError, RuleSyntaxError
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.query import ReportPolicy, parse_query

#: words that belong to the parsers, never to a user's query
INTERNAL = ("'GRAPH'", "SelectQuery", "ConstructQuery", "AskQuery", "__ANON", "Expected", "LSQB", "RSQB", "LPAR",
            "RBRACE", "PNAME", "IRIREF", "$END", "urn:x-rsp-plugin", "_token", "keyword_token")


def error_of(text: str, **options) -> str:
    with pytest.raises(QuerySyntaxError) as caught:
        parse_query(text, "q.rq", **options)
    shown = str(caught.value)
    assert "\n" not in shown
    return shown


# the three defects of issue 14 ---------------------------------------------------------------------

def test_two_prefixes_for_one_namespace_keep_both():
    query = parse_query("PREFIX : <http://test/> PREFIX t: <http://test/> SELECT ?s FROM NAMED WINDOW "
                        "<http://test/w> ON <http://test/stream> [RANGE PT10S STEP PT5S] WHERE { ?s a :Test }")
    assert "'http://test/Test'" in str(query.algebra.algebra)
    query = parse_query("PREFIX t: <http://test/> PREFIX : <http://test/> SELECT ?s FROM STREAM <http://test/s> "
                        "[RANGE 1s] WHERE { ?s a t:Test, :Other }")
    assert "'http://test/Test'" in str(query.algebra.algebra) and "'http://test/Other'" in str(query.algebra.algebra)


def test_a_select_without_projection_says_so_where_it_is_missing():
    shown = error_of("REGISTER QUERY q AS SELECT FROM STREAM <s> [RANGE 2s STEP 1s] WHERE { ?s ?p ?o }")
    assert shown == ("q.rq:1:28: unexpected 'FROM': SELECT needs what to return: variables, (expression AS ?name) "
                     "or * (read as C-SPARQL)")
    shown = error_of("SELECT DISTINCT FROM NAMED WINDOW <w> ON <s> [RANGE PT1S STEP PT1S] WHERE { WINDOW <w> "
                     "{ ?s ?p ?o } }")
    assert shown.startswith("q.rq:1:17: unexpected 'FROM': SELECT needs what to return")


def test_a_typo_in_a_window_block_is_shown_at_the_typo():
    text = """PREFIX ssn: <http://purl.oclc.org/NET/ssnx/ssn#>
REGISTER RSTREAM <q> AS
SELECT ?o
FROM NAMED WINDOW <w> ON <s> [RANGE PT3S STEP PT1S]
WHERE {
  WINDOW <w> {
    ?o ssn:observedBy> ?sensor .
  }
}"""
    assert error_of(text) == ("q.rq:7:22: unexpected '>'; expected a term (an IRI, a variable, a literal or a blank "
                              "node) or a path operator (/ | ? * +) (read as RSP-QL)")


def test_a_bad_filter_is_shown_at_its_bad_token():
    text = "SELECT ?s\nFROM STREAM <s> [RANGE 2s STEP 1s]\nWHERE {\n  ?s ?p ?o .\n\n\n  FILTER (?o > )\n}"
    assert error_of(text) == "q.rq:7:16: unexpected ')'; expected an expression (read as C-SPARQL)"


def test_an_unknown_aggregate_in_a_subquery_is_named_where_it_is():
    text = ("SELECT ?s FROM STREAM <s> [RANGE 2s STEP 1s]\nWHERE {\n"
            "  { SELECT ?s (MEDIAN(?o) AS ?m) WHERE { ?s ?p ?o } GROUP BY ?s }\n}")
    assert error_of(text).startswith("q.rq:3:16: unknown function or aggregate 'MEDIAN'")


# no parser words, anywhere -----------------------------------------------------------------------------

BROKEN = [
    "SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE PT1S STEP PT1S] WHERE { WINDOW <w> { ?s <p> } }",
    "SELECT ?s FROM NAMED WINDOW <w> ON <s> [RANGE PT1S STEP PT1S] WHERE { WINDOW <w> { ?s <p> ?o . ?o } }",
    "SELECT ?s WHERE { STREAM <s> [RANGE 1s] { ?s ?p ?o FILTER(?o > ) } }",
    "SELECT ?s WHERE { STREAM <s> [RANGE 1s] { ?s ?p ?o } FILTER(?s == ?o) }",
    "SELECT ?s WHERE { STREAM <s> [RANGE 1s] { ?s ?p ?o . FILTER(?o > 3 } }",
    "SELECT ?s WHERE { STREAM <s> [RANGE 1s] { ?s ?p ?o }",
    "CONSTRUCT { ?s <p> } FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o }",
    "ASK FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o } GROUP ?s",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o } LIMIT x",
    "SELECT (COUNT(?s) ?n) FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o }",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o OPTIONAL ?s }",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o BIND(1 ?x) }",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p \"x\"@ }",
    "SELECT ?s FROM NAMED STREAM <s> [NOW-1 S SLIDE] WHERE { ?s ?p ?o } ORDER BY",
    "SELECT ?s FROM NAMED WINDOW <w> ON <s> [FROM NOW-PT1S STEP PT1S] WHERE { WINDOW <w> { ?s ?p ?o } }",
    "SELECT ?s FROM STREAM <s> [RANGE] WHERE { ?s ?p ?o }",
    "REGISTER QUERY AS SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o }",
    "SELECT ?s WHERE { WINDOW { ?s ?p ?o } }",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o } } ",
    "SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { { SELECT * WHERE { ?s ?p ?o } ",
]


@pytest.mark.parametrize("text", BROKEN)
@pytest.mark.parametrize("dialect", ["auto", "csparql", "rspql", "cqels", "sparqlstream"])
def test_no_message_shows_the_parsers_words(text, dialect):
    shown = error_of(text, dialect=dialect)
    assert not any(word in shown for word in INTERNAL), shown
    assert shown.startswith("q.rq:1:"), shown


def test_lars_messages_show_the_program_words():
    cases = {
        "a(X) b(X) .": "p.lars:1:6: unexpected 'b'; expected '.' or ':-'",
        "a(X) :- b(X)": "p.lars:1:13: unexpected end of file; expected ',', '.' or SINCE/UNTIL",
        "p(X) :- q(X), X > .": "p.lars:1:19: unexpected '.'; expected '(', '-', a name, a number, a string or a variable",
        "p(X) :- [RANGE x] q(X).": "p.lars:1:16: unexpected 'x'; expected a duration (10s, PT10S) or a number",
    }
    for text, message in cases.items():
        with pytest.raises(RuleSyntaxError) as caught:
            parse_program(text, "p.lars")
        assert str(caught.value) == message
        assert "__ANON" not in str(caught.value) and "MINUS" not in str(caught.value)


@pytest.mark.parametrize("text, place, message", [
    # a unit the windows do not know is named as written, never as the parser's token (Token('NAME', 'x'))
    ("SELECT ?s FROM NAMED STREAM <s> [NOW-10 x SLIDE 1 S] WHERE { ?s ?p ?o }", "1:41",
     "unknown time unit 'x'; expected MS, S, SECONDS, MINUTES, HOURS or DAYS (read as SPARQLstream)"),
    ("SELECT ?s FROM STREAM <s> [RANGE 5x STEP 1s] WHERE { ?s ?p ?o }", "1:35",
     "unknown time unit 'x'; expected MS, S, SECONDS, MINUTES, HOURS or DAYS (read as C-SPARQL)"),
])
def test_a_bad_time_unit_is_named_in_the_users_words(text, place, message):
    assert error_of(text) == f"q.rq:{place}: {message}"


def test_no_terminal_of_any_grammar_is_shown_by_its_internal_name():
    # whatever a parser stops at, the message names what could stand there in the writer's words:
    # every terminal of the query grammar, of the SPARQL grammar that locates body errors and of
    # the LARS grammar, one at a time
    import re

    from rsp_plugin.lars import syntax as lars
    from rsp_plugin.query import checker, syntax
    from rsp_plugin.query.messages import anonymous_patterns, phrase_list

    internal = re.compile(r"__ANON|[A-Z]+_[A-Z]|^[A-Z]+$")
    for parser in (syntax._PARSER, checker._parser()):
        patterns = anonymous_patterns(parser)
        for terminal in parser.terminals:
            if terminal.name in ("WS", "COMMENT"):
                continue
            shown = phrase_list({terminal.name}, patterns)
            keyword = terminal.pattern.type == "re" and re.match(re.escape(shown) + r"(?![A-Za-z_])",
                                                                  terminal.pattern.value.lstrip("(?:"), re.I)
            assert keyword or not internal.search(shown), (terminal.name, shown)
    for terminal in lars._PARSER.terminals:
        if terminal.name in ("WS", "COMMENT"):
            continue
        shown = lars.expected_phrase(terminal.name)
        assert "__ANON" not in shown and shown not in ("MINUS", "PLUS", "STAR", "SLASH"), (terminal.name, shown)
        assert not re.search(r"[A-Z]+_[A-Z]", shown), (terminal.name, shown)


# numbers no machine holds (issue 9) -------------------------------------------------------------------

@pytest.mark.parametrize("text, place, message", [
    ("SELECT ?s FROM STREAM <s> [RANGE 99999999999999999999999s STEP 1s] WHERE { ?s ?p ?o }", "1:34",
     "99999999999999999999999s is longer than any clock counts"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s STEP 99999999999999999999999s] WHERE { ?s ?p ?o }", "1:42",
     "99999999999999999999999s is longer than any clock counts"),
    ("SELECT ?s FROM STREAM <s> [RANGE PT99999999999999999999999H STEP 1s] WHERE { ?s ?p ?o }", "1:34",
     "PT99999999999999999999999H is longer than any clock counts"),
    ("SELECT ?s WHERE { STREAM <s> [RANGE 9223372036854775807ms 1ms] { ?s ?p ?o } }", "1:37",
     "9223372036854775807ms 1ms is longer than any clock counts"),
    ("SELECT ?s FROM NAMED STREAM <s> [NOW-99999999999999999999 HOURS SLIDE 1 S] WHERE { ?s ?p ?o }", "1:38",
     "99999999999999999999 HOURS is longer than any clock counts"),
    ("REGISTER QUERY q COMPUTE EVERY 99999999999999999999d AS SELECT ?s FROM STREAM <s> [RANGE 1s] "
     "WHERE { ?s ?p ?o }", "1:32", "99999999999999999999d is longer than any clock counts"),
    ("SELECT ?s FROM STREAM <s> [TRIPLES 99999999999999999999] WHERE { ?s ?p ?o }", "1:36",
     "a window of 99999999999999999999 elements is more than any machine holds (at most 2147483647)"),
    ("SELECT ?s FROM STREAM <s> [RANGE TRIPLES 2147483648] WHERE { ?s ?p ?o }", "1:42",
     "a window of 2147483648 elements is more than any machine holds"),
    ("SELECT ?s FROM NAMED WINDOW <w> ON <s> [ELEMENTS 99999999999999 STEP 1] WHERE { WINDOW <w> { ?s ?p ?o } }",
     "1:50", "a window of 99999999999999 elements is more than any machine holds"),
    ("SELECT ?s FROM NAMED WINDOW <w> ON <s> [ELEMENTS 5 STEP 99999999999] WHERE { WINDOW <w> { ?s ?p ?o } }",
     "1:57", "a window of 99999999999 elements is more than any machine holds"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o FILTER(?o > 1e999) }", "1:67",
     "the number 1e999 is out of range: numbers in a query fit a double"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1s] WHERE { ?s ?p ?o FILTER(?o < " + "9" * 400 + ") }", "1:67",
     "the number 999999999999999999999999999999 is out of range"),
    ("SELECT ?s FROM STREAM <s> [RANGE 1.5ms STEP 1s] WHERE { ?s ?p ?o }", "1:34",
     "1.5ms is not a whole number of milliseconds"),
])
def test_windows_and_numbers_no_machine_holds_are_located_errors(text, place, message):
    shown = error_of(text)
    assert shown.startswith(f"q.rq:{place}: ") and message in shown, shown


def test_the_query_command_reports_an_overflow_as_one_line(tmp_path):
    (tmp_path / "q.rq").write_text("SELECT ?s\nFROM STREAM <http://s> [RANGE 99999999999999999999999s STEP 1s]\n"
                                   "WHERE { ?s ?p ?o }\n")
    (tmp_path / "s.tnt").write_text("1 <http://a> <http://p> <http://b> .\n")
    done = subprocess.run([sys.executable, "-m", "rsp_plugin.cli", "query", str(tmp_path / "q.rq"),
                           "--stream", f"http://s={tmp_path / 's.tnt'}"], capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and done.stdout == "" and "Traceback" not in done.stderr
    assert done.stderr.startswith(f"rsp-plugin: {tmp_path / 'q.rq'}:2:31: 99999999999999999999999s is longer")
    assert len(done.stderr.splitlines()) == 1


# the plan knows nothing of the parser -------------------------------------------------------------------

def test_the_model_does_not_import_the_parser():
    model = Path(__file__).parent.parent / "rsp_plugin" / "query" / "model.py"
    imported = set()
    for node in ast.walk(ast.parse(model.read_text())):
        if isinstance(node, ast.ImportFrom):
            imported.add(node.module or "")
        elif isinstance(node, ast.Import):
            imported.update(alias.name for alias in node.names)
    assert not any("syntax" in name or "dialects" in name or "checker" in name for name in imported), imported


def test_a_query_pickles_as_its_text_and_dialect():
    query = parse_query("SELECT ?x WHERE { STREAM <http://s> [RANGE 1s] { ?x ?p ?o } }", "q.rq", dialect="cqels")
    again = pickle.loads(pickle.dumps(query))
    assert (again.text, again.filename, again.dialect, again.read_as) == (query.text, "q.rq", "cqels", "cqels")
    assert again.windows == query.windows and again.report is ReportPolicy.ON_CONTENT_CHANGE
    assert again.algebra is not None
