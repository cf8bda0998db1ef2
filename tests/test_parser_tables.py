"""The LARS, query and SPARQL parsers loaded from their shipped tables (`rsp_plugin/core/parser_tables.py`)
are the ones their grammars build."""

import json

import pytest

from rsp_plugin.core import parser_tables
from rsp_plugin.core.errors import QuerySyntaxError, RuleSyntaxError
from rsp_plugin.lars import syntax as lars_syntax
from rsp_plugin.query.grammar_tables import shipped_grammars
from rsp_plugin.core.parser_tables import REGENERATE, ShippedGrammar, _untag
from rsp_plugin.query import checker
from rsp_plugin.query import syntax as query_syntax

GRAMMARS = shipped_grammars()
NAMES = [shipped.name for shipped in GRAMMARS]


@pytest.fixture(scope="module", params=GRAMMARS, ids=NAMES)
def built(request):
    """(grammar, its tables as the grammar builds them now): one analysis per grammar."""
    shipped = request.param
    return shipped, json.loads(json.dumps(shipped.tables_of(shipped.build())))


def test_the_shipped_tables_were_built_from_the_grammar_as_it_is(built):
    shipped, _ = built
    stored = json.loads(shipped.tables.read_text(encoding="utf-8"))["header"]
    assert stored == json.loads(json.dumps(shipped.header())), (
        f"{shipped.name} (or lark) changed since its tables were written: run `{REGENERATE}`")


def test_the_shipped_tables_are_what_the_grammar_builds_now(built):
    shipped, fresh = built
    assert json.loads(shipped.tables.read_text(encoding="utf-8")) == fresh, (
        f"{shipped.tables.name} is not what {shipped.name} builds: run `{REGENERATE}`")


def test_the_tables_read_back_as_lark_wrote_them():
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    shipped = query_syntax.GRAMMAR
    parser = shipped.build()
    tables = json.loads(json.dumps(shipped.tables_of(parser)), object_pairs_hook=_untag)
    data, memo = parser.memo_serialize([TerminalDef, Rule])  # (its states numbered canonically by then)
    assert parser_tables.lark_data(tables) == {"data": data, "memo": memo}


@pytest.mark.parametrize("shipped", GRAMMARS, ids=NAMES)
def test_the_loaded_parser_is_not_rebuilt(shipped, monkeypatch):
    monkeypatch.setattr(ShippedGrammar, "build", lambda self: pytest.fail("the grammar was analysed again"))
    assert shipped.load().terminals


def _copy(shipped: ShippedGrammar, tmp_path, grammar_text: str | None = None) -> ShippedGrammar:
    """The grammar and its shipped tables, copied under tmp_path (the grammar's text changed if given)."""
    folder = tmp_path / shipped.grammar.parent.name  # (its name is in the header)
    folder.mkdir()
    grammar = folder / shipped.grammar.name
    grammar.write_text(grammar_text if grammar_text is not None else shipped.text(), encoding="utf-8")
    tables = folder / shipped.tables.name
    tables.write_text(shipped.tables.read_text(encoding="utf-8"), encoding="utf-8")
    return ShippedGrammar(grammar, tables, shipped.options)


def test_a_copy_of_the_grammar_and_its_tables_loads_them(tmp_path, monkeypatch):
    shipped = _copy(lars_syntax.GRAMMAR, tmp_path)
    monkeypatch.setattr(ShippedGrammar, "build", lambda self: pytest.fail("the grammar was analysed again"))
    assert shipped.load().parse("p(X) :- q(X) .")


@pytest.mark.parametrize("change", ["grammar", "lark", "options", "format", "unreadable"])
def test_stale_tables_are_not_used(change, tmp_path, monkeypatch):
    shipped = _copy(lars_syntax.GRAMMAR, tmp_path)
    if change == "grammar":
        shipped.grammar.write_text(shipped.text() + "\n// changed\n", encoding="utf-8")
    elif change == "lark":
        monkeypatch.setattr("lark.__version__", "0.0.1")
    elif change == "options":
        shipped = ShippedGrammar(shipped.grammar, shipped.tables, {**shipped.options, "propagate_positions": False})
    elif change == "format":
        monkeypatch.setattr(parser_tables, "FORMAT", parser_tables.FORMAT + 1)
    else:
        shipped.tables.write_text("{not json", encoding="utf-8")
    built = []
    monkeypatch.setattr(ShippedGrammar, "build", lambda self: built.append(1) or "built")
    assert shipped.load() == "built" and built


def test_a_changed_grammar_fails_the_check_until_its_tables_are_written_again(tmp_path):
    shipped = _copy(lars_syntax.GRAMMAR, tmp_path, lars_syntax.GRAMMAR.text() + "\n// changed\n")
    stored = json.loads(shipped.tables.read_text(encoding="utf-8"))["header"]
    assert stored != json.loads(json.dumps(shipped.header()))
    shipped.write()
    stored = json.loads(shipped.tables.read_text(encoding="utf-8"))["header"]
    assert stored == json.loads(json.dumps(shipped.header()))
    assert shipped.load().parse("p(X) :- q(X) .")


PROGRAMS = [
    "warning(B) :- [RANGE 10] DIAMOND highTemp(B) .",
    "@prefix ex: <http://ex.org/> .\nex:p(X, \"a\"@en) :- [COUNT 3] BOX q(X), not r(X), X > 2.5 .",
    "alarm(X) :- [1,1] BOXMINUS hot(X), (0,3] DIAMONDMINUS smoke(X) .",
    "p(X) :- [RANGE 3] q(X) .",
    "p(X) :- q(X)",
    "p(X) :- q(X) ) .",
    "p(X :- q(X) .",
    "p(X) :- q(X) . $",
]


@pytest.mark.parametrize("text", PROGRAMS)
def test_loaded_and_built_lars_parsers_read_alike(text, monkeypatch):
    def outcome():
        try:
            program = lars_syntax.parse_program(text, "prog.lars")
        except RuleSyntaxError as error:
            return str(error)
        return [rule.text for rule in program.rules], sorted(program.terms.keys.values())

    loaded = outcome()
    monkeypatch.setattr(lars_syntax, "_PARSER", lars_syntax.GRAMMAR.build())
    assert outcome() == loaded


QUERIES = [
    "REGISTER QUERY hot AS PREFIX ex: <http://ex.org/> SELECT ?s (AVG(?v) AS ?avg) "
    "FROM STREAM <http://ex.org/s> [RANGE 10s STEP 5s] WHERE { ?s ex:temp ?v } GROUP BY ?s",
    "PREFIX : <http://ex.org/> SELECT ?x FROM NAMED WINDOW :w ON :s [RANGE PT10S STEP PT1S] "
    "WHERE { WINDOW :w { ?x a :Sensor ; :é_名 _:b1 } }",
    "SELECT ?x WHERE { STREAM <http://ex.org/s> [RANGE 3s SLIDE 1s] { ?x ?p ?o } }",
    "SELECT ?x FROM STREAM Telemetry [NOW] WHERE { STREAM Telemetry { ?x <http://ex.org/p> ?o } }",
    "SELECT ?x FROM NAMED STREAM <http://ex.org/s> [NOW-10 S SLIDE 1 S] WHERE { ?x ?p \"a\"@en-GB }",
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x ex:a\\.b%20c ?o }",
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x <p> ?o ",
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10 STEP] WHERE { ?x <p> ?o }",
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x <p>> ?o FILTER(?o > ) }",
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x <p> ?o } $",
]


@pytest.fixture(scope="module")
def built_query_parsers():
    """The query and SPARQL parsers built from their grammars (once: a build takes a second)."""
    return query_syntax.GRAMMAR.build(), checker.GRAMMAR.build()


@pytest.mark.parametrize("text", QUERIES)
def test_loaded_and_built_query_parsers_read_alike(text, monkeypatch, built_query_parsers):
    def outcome():
        try:
            query = query_syntax.parse_query(text, "q.rq", base="http://ex.org/")
        except QuerySyntaxError as error:
            return str(error)
        return query.dialect, [str(clause) for clause in query.windows], str(query.algebra.algebra)

    loaded = outcome()
    monkeypatch.setattr(query_syntax, "_PARSER", built_query_parsers[0])
    monkeypatch.setattr(checker, "_PARSER", built_query_parsers[1])
    assert outcome() == loaded


def _shape(value):
    """A lark object as plain data: its type and every attribute it holds (slots and dict), recursively."""
    if isinstance(value, (list, tuple)):
        return type(value).__name__, [_shape(item) for item in value]
    if isinstance(value, (str, int, float, bool, type(None), frozenset)):
        return value
    slots = [name for cls in type(value).__mro__ for name in getattr(cls, "__slots__", ())]
    held = {name: getattr(value, name) for name in slots if hasattr(value, name)}
    held.update(vars(value) if hasattr(value, "__dict__") else {})
    return type(value).__name__, {name: _shape(item) for name, item in sorted(held.items())}


@pytest.mark.parametrize("shipped", GRAMMARS, ids=NAMES)
def test_the_rules_and_terminals_read_back_as_lark_reads_them(shipped):
    from lark.grammar import Rule
    from lark.lexer import TerminalDef
    from lark.utils import SerializeMemoizer

    tables = json.loads(shipped.tables.read_text(encoding="utf-8"), object_pairs_hook=_untag)
    ours = parser_tables._memo_objects(tables["parser"]["memo"])
    theirs = SerializeMemoizer.deserialize(parser_tables.lark_data(tables)["memo"],
                                           {"Rule": Rule, "TerminalDef": TerminalDef}, {})
    assert {number: _shape(item) for number, item in ours.items()} == \
        {number: _shape(item) for number, item in theirs.items()}
    assert {type(item).__name__ for item in ours.values()} == {"Rule", "TerminalDef"}
