"""The parsers of `rsp_plugin/core/parser_tables.py` lex with `SharedScanLexer` (one scanner of every
terminal first, a state's own only when needed): on every query and program the repository has, whole
or cut short or with a stray character, it gives the tokens, trees and errors lark's own contextual
lexer gives."""

from pathlib import Path

import pytest
from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from rsp_plugin.bench import sosa
from rsp_plugin.core.parser_tables import SharedScanLexer, ShippedGrammar
from rsp_plugin.lars import syntax as lars_syntax
from rsp_plugin.query import checker
from rsp_plugin.query import syntax as query_syntax

ROOT = Path(__file__).resolve().parent.parent
QUERY_FILES = sorted(path for folder in ("queries", "tests/data") for path in (ROOT / folder).rglob("*.rq"))
PROGRAM_FILES = sorted(path for folder in ("examples", "tests", "rsp_plugin") for path in (ROOT / folder).rglob("*.lars"))
#: the stream extensions where a state's own scanner is needed (a duration in a SPARQL body, a
#: keyword where only a name may stand) and errors of each kind
EXTRA_QUERIES = [
    "SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x <p> 10s FILTER(?x > PT1S) }",
    "REGISTER STREAM FROM AS SELECT ?x FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?x ?p ?o }",
    "SELECT ?x FROM NAMED WINDOW <w> ON STREAM <s> [RANGE 10s SLIDE 1s] WHERE { WINDOW <w> { ?x ?p ?o } }",
    "SELECT ?x FROM STREAM <http://ex.org/s> [FROM NOW-PT2H TO NOW-PT1H STEP PT1H] WHERE { ?x ?p ?o }",
    "SELECT ?x FROM STREAM <s> [RANGE 10s STEP 1s] WHERE { ?x <p> ?o } ORDER BY STREAM",
    "SELECT ?x FROM STREAM <s> [RANGE 10s STEP 1s] WHERE { ?x <p> ?o } LIMIT 3 €",
]
EXTRA_PROGRAMS = [
    "@prefix ex: <http://ex.org/> .\nex:p(X, \"a\"@en) :- [COUNT 3] BOX q(X), not r(X), X > 2.5 .",
    "alarm(X) :- [1,1] BOXMINUS hot(X), (0,3] DIAMONDMINUS smoke(X) .",
    "p(X) :- [RANGE 3] q(X), [TRIPLES 4] DIAMOND r(X), X != \"b\" .  s(X) @ T :- q(X) @ T .",
]


def _plain(shipped: ShippedGrammar) -> Lark:
    """The parser from the same shipped tables, lexing with lark's own contextual lexer."""
    import json

    from rsp_plugin.core.parser_tables import _untag, lark_data

    stored = lark_data(json.loads(shipped.tables.read_text(encoding="utf-8"), object_pairs_hook=_untag))
    return Lark._load_from_dict(stored["data"], stored["memo"])


def _tokens(tree):
    if isinstance(tree, Token):
        yield (tree.type, str(tree), tree.start_pos, tree.line, tree.column, tree.end_pos, tree.end_line,
               tree.end_column)
    else:
        yield ("tree", tree.data, getattr(tree.meta, "start_pos", None), getattr(tree.meta, "end_pos", None))
        for child in tree.children:
            yield from _tokens(child)


def _outcome(parser: Lark, text: str):
    """What a parse gives: every token and node with its positions, or the error as a caller reads it."""
    try:
        tree = parser.parse(text)
    except UnexpectedInput as error:
        said = [type(error).__name__, error.pos_in_stream, error.line, error.column]
        if isinstance(error, UnexpectedToken):
            said += [error.token.type, str(error.token), sorted(error.expected), sorted(error.accepts or ())]
        if isinstance(error, UnexpectedCharacters):
            said += [sorted(error.allowed or ())]
        return said
    assert isinstance(tree, Tree)
    return list(_tokens(tree))


def _variants(text: str):
    """The text, cut short at a few places, and with a stray character put in at a few places."""
    yield text
    cuts = sorted({len(text) * share // 7 for share in range(1, 7)})
    for cut in cuts:
        yield text[:cut]
        yield text[:cut] + " § " + text[cut:]


CASES = [
    ("query", query_syntax.GRAMMAR, [path.read_text(encoding="utf-8") for path in QUERY_FILES] + EXTRA_QUERIES),
    ("sparql", checker.GRAMMAR, [path.read_text(encoding="utf-8") for path in QUERY_FILES]),
    ("lars", lars_syntax.GRAMMAR, [path.read_text(encoding="utf-8") for path in PROGRAM_FILES] + EXTRA_PROGRAMS),
]


@pytest.mark.parametrize("name, shipped, texts", CASES, ids=[case[0] for case in CASES])
def test_the_shared_scanner_lexes_as_lark_s_contextual_lexer(name, shipped, texts):
    ours, plain = shipped.load(), _plain(shipped)
    assert isinstance(ours.parser.lexer, SharedScanLexer) and not isinstance(plain.parser.lexer, SharedScanLexer)
    assert len(texts) > 5
    compared = 0
    for text in texts:
        for variant in _variants(text):
            assert _outcome(ours, variant) == _outcome(plain, variant), variant
            compared += 1
    assert compared > 6 * len(texts)


def test_a_short_query_compiles_only_the_shared_scanner():
    parser = query_syntax.GRAMMAR.load()
    parser.parse(sosa.query_text("off"))  # (`bench startup`'s query)
    lexer = parser.parser.lexer
    assert lexer.root_lexer._scanner is not None
    assert [state for state in set(lexer.lexers.values()) if state._scanner is not None] == []


def test_a_token_a_state_does_not_accept_falls_back_to_the_state_s_own_scanner():
    parser = query_syntax.GRAMMAR.load()
    # `10s` in a SPARQL body: the shared scanner reads a DURATION, the body's states a NUMBER then a NAME
    tree = parser.parse("SELECT ?x FROM STREAM <s> [RANGE 10s STEP 1s] WHERE { ?x <p> 10s }")
    assert [(t.type, str(t)) for t in tree.scan_values(lambda v: isinstance(v, Token))][-3:] == [
        ("IRIREF", "<p>"), ("NUMBER", "10"), ("NAME", "s")]
    assert [state for state in set(parser.parser.lexer.lexers.values()) if state._scanner is not None]
