"""Where a SPARQL 1.1 body goes wrong, when rdflib cannot read it.

rdflib's parser backtracks: a typo deep in a block is reported at the start of
the outermost pattern that failed, as `Expected SelectQuery`. `locate` reads the
same text with a grammar written from the W3C one (`sparql.lark`, LALR: it stops
at the first token no SPARQL query can have there) and says which token that is
and what could stand there.

>>> locate('SELECT ?s WHERE {\\n  ?s <http://ex/p>> ?o }')
(36, "unexpected '>'; expected a term (an IRI, a variable, a literal or a blank node) or a path operator (/ | ? * +)")
>>> locate('SELECT ?s WHERE { ?s ?p ?o FILTER(?o > ) }')
(39, "unexpected ')'; expected an expression")
>>> locate('SELECT ?s WHERE { ?s ?p ?o }') is None
True
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Callable

from lark import Lark
from lark.exceptions import UnexpectedCharacters, UnexpectedInput, UnexpectedToken

from ..core.parser_tables import ShippedGrammar
from .messages import anonymous_patterns, not_closed, phrase_list, word_at

#: the W3C grammar, its parser's options and its shipped LALR tables (`rsp_plugin.core.parser_tables`)
GRAMMAR = ShippedGrammar(Path(__file__).with_name("sparql.lark"), Path(__file__).with_name("sparql_tables.json"),
                         {"parser": "lalr", "maybe_placeholders": False})
_PARSER: Lark | None = None
_PATTERNS: dict[str, str] = {}


def _parser() -> Lark:
    global _PARSER, _PATTERNS
    if _PARSER is None:  # loaded on the first error only: reading queries never needs it
        _PARSER = GRAMMAR.load()
        _PATTERNS = anonymous_patterns(_PARSER)
    return _PARSER


def locate(sparql: str, to_user: Callable[[int], int] = lambda offset: offset,
           user_text: str | None = None) -> tuple[int, str] | None:
    """(offset in the user's text, message) of the first token SPARQL 1.1 does not allow, or None.

    `sparql` may be a rewrite of the user's text; `to_user` maps its offsets back,
    and the token named in the message is read from `user_text` there.
    """
    user_text = sparql if user_text is None else user_text
    parser = _parser()
    try:
        parser.parse(sparql)
    except UnexpectedInput as error:
        return _describe(error, sparql, to_user, user_text)
    return None


def _describe(error: UnexpectedInput, sparql: str, to_user, user_text: str) -> tuple[int, str]:
    at_end = False
    if isinstance(error, UnexpectedToken):
        expected = set(getattr(error, "accepts", None) or error.expected)
        if error.token.type == "$END":
            at_end = True
            offset = len(user_text.rstrip())
        else:
            offset = to_user(error.token.start_pos)
    elif isinstance(error, UnexpectedCharacters):
        expected = set(error.allowed or ())
        offset = to_user(error.pos_in_stream)
    else:  # UnexpectedEOF (LALR reports a $END token instead)
        expected = set(getattr(error, "expected", ()) or ())
        at_end = True
        offset = len(user_text.rstrip())
    if not at_end:
        expected.discard("$END")
    wanted = phrase_list(expected, _PATTERNS) if expected else ""
    if at_end:
        unclosed = not_closed(user_text, len(user_text))
        if unclosed:
            return offset, f"unexpected end of the query: {unclosed}"
        return offset, f"unexpected end of the query; expected {wanted}"
    found = word_at(user_text, offset)
    unclosed = not_closed(user_text, offset, found) if found in (")", "]", "}") else None
    if unclosed:
        return offset, f"unexpected '{found}': {unclosed}"
    after = user_text[offset + len(found):].lstrip()
    if re.fullmatch(r"[A-Za-z_][\w\-]*", found) and after.startswith("("):
        return offset, (f"unknown function or aggregate '{found}': SPARQL names its own by keywords "
                        f"(COUNT, SUM, AVG, STR, REGEX, ...) and any other by its IRI, e.g. <http://example.org/f>(...)")
    if re.fullmatch(r"[A-Za-z_][\w\-]*", found) and not isinstance(error, UnexpectedToken):
        return offset, f"unexpected word '{found}'; expected {wanted}"
    return offset, f"unexpected '{found}'; expected {wanted}"
