"""The LARS parser loaded from its shipped tables (`lars/grammar_tables.json`) is the one the grammar builds."""

import json

import pytest

from rsp_plugin.errors import RuleSyntaxError
from rsp_plugin.lars import syntax


def test_the_shipped_tables_are_what_the_grammar_builds_now():
    """If this fails, the grammar (or lark) changed: `python -m rsp_plugin.lars.syntax` writes them again."""
    shipped = json.loads(syntax._TABLES.read_text(encoding="utf-8"))
    assert shipped == json.loads(json.dumps(syntax.parser_tables(syntax.build_parser())))


def test_the_tables_read_back_as_lark_wrote_them():
    built = syntax.build_parser()
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    tables = json.loads(json.dumps(syntax.parser_tables(built)), object_pairs_hook=syntax._untag)
    data, memo = built.memo_serialize([TerminalDef, Rule])  # (its states numbered canonically by then)
    stored = tables["parser"]
    assert stored == {"data": data, "memo": memo}


def test_the_loaded_parser_is_not_rebuilt(monkeypatch):
    monkeypatch.setattr(syntax, "build_parser", lambda: pytest.fail("the grammar was analysed again"))
    assert syntax._load_parser().terminals


def test_stale_tables_are_not_used(tmp_path, monkeypatch):
    stale = json.loads(syntax._TABLES.read_text(encoding="utf-8"))
    stale["grammar"] += "\n// changed\n"
    path = tmp_path / "tables.json"
    path.write_text(json.dumps(stale), encoding="utf-8")
    monkeypatch.setattr(syntax, "_TABLES", path)
    built = []
    monkeypatch.setattr(syntax, "build_parser", lambda: built.append(1) or "built")
    assert syntax._load_parser() == "built" and built


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
def test_loaded_and_built_parsers_read_alike(text, monkeypatch):
    def outcome():
        try:
            program = syntax.parse_program(text, "prog.lars")
        except RuleSyntaxError as error:
            return str(error)
        return [rule.text for rule in program.rules], sorted(program.terms.keys.values())

    loaded = outcome()
    monkeypatch.setattr(syntax, "_PARSER", syntax.build_parser())
    assert outcome() == loaded
