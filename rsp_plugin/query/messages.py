"""What a parser could not read, in the words of the query's writer.

lark says which terminals it would have accepted (`SelectQuery`, `LSQB`,
`__ANON_0`, ...); a user wants the token at fault and what could stand there:

    unexpected '>'; expected an IRI, a variable, a literal, a blank node, '(' or '['

>>> phrase_list({"IRIREF", "PNAME_LN", "VAR", "RSQB"})
"an IRI, a variable or ']'"
>>> phrase_list({"STEP", "SLIDE", "TUMBLING", "RSQB"})
"SLIDE, STEP, TUMBLING or ']'"
"""

from __future__ import annotations

import re

from ..core.errors import position
from ..core.regexes import LazyPattern

#: terminals shown as one kind of thing (first match wins, in this order)
_KINDS = [
    ("an IRI", {"IRIREF", "PNAME_LN"}),
    ("a prefix (ex:)", {"PNAME_NS"}),
    ("a variable", {"VAR"}),
    ("a literal", {"STRING", "INTEGER", "DECIMAL", "DOUBLE", "SIGNED_NUMBER", "TRUE", "FALSE"}),
    ("a number", {"NUMBER"}),
    ("a duration (10s, PT10S)", {"DURATION"}),
    ("NOW-<duration>", {"NOW_MINUS"}),
    ("a blank node", {"BLANK_NODE_LABEL", "ANON", "BLANK"}),
    ("a function", {"FUNCTION", "NULLARY", "BNODE", "AGGREGATE", "COUNT", "GROUP_CONCAT", "EXISTS"}),
    ("a comparison (=, !=, <, >, <=, >=)", {"COMPARISON"}),
    ("a name", {"NAME"}),
    ("an operator", {"PUNCT"}),
    ("a language tag", {"LANGTAG"}),
]
_PUNCTUATION = {
    "LSQB": "[", "RSQB": "]", "LBRACE": "{", "RBRACE": "}", "LPAR": "(", "RPAR": ")", "COMMA": ",",
    "DOT": ".", "SEMICOLON": ";", "VBAR": "|", "SLASH": "/", "CIRCUMFLEX": "^", "BANG": "!", "PLUS": "+",
    "QMARK": "?", "STAR": "*", "EQUAL": "=", "NIL": "()", "ANON": "[]",
}
_SPECIAL = {"A": "a (rdf:type)", "$END": "the end of the query"}
#: what starts a triple's subject or object, and a path's operators
_TERM = {"VAR", "IRIREF", "STRING", "INTEGER", "BLANK_NODE_LABEL"}
_PATH = [("SLASH", "/"), ("VBAR", "|"), ("CIRCUMFLEX", "^"), ("QMARK", "?"), ("STAR", "*"), ("PLUS", "+")]
#: what starts an expression: when all of it is expected, say "an expression"
_EXPRESSION = {"VAR", "IRIREF", "STRING", "INTEGER", "FUNCTION", "LPAR"}


def phrase_list(names, patterns: dict[str, str] | None = None, *, limit: int = 10) -> str:
    """Terminal names -> 'a, b or c' in the writer's words; `patterns` gives anonymous terminals' text."""
    names = set(names)
    patterns = patterns or {}
    kinds: list[str] = []
    if _EXPRESSION <= names:
        kinds.append("an expression")
        names -= {"VAR", "IRIREF", "PNAME_LN", "PNAME_NS", "STRING", "INTEGER", "DECIMAL", "DOUBLE",
                  "SIGNED_NUMBER", "TRUE", "FALSE", "FUNCTION", "NULLARY", "BNODE", "AGGREGATE", "COUNT",
                  "GROUP_CONCAT", "EXISTS", "NOT", "LPAR", "BANG", "PLUS", "NIL"}
        names = {name for name in names if patterns.get(name) != "-"}
    if _TERM <= names:
        kinds.append("a term (an IRI, a variable, a literal or a blank node)")
        names -= _TERM | {"PNAME_LN", "PNAME_NS", "DECIMAL", "DOUBLE", "SIGNED_NUMBER", "TRUE", "FALSE",
                          "ANON", "NIL", "LPAR", "LSQB"}
    if {"SLASH", "VBAR"} <= names:
        operators = [mark for name, mark in _PATH if name in names]
        kinds.append(f"a path operator ({' '.join(operators)})")
        names -= {name for name, _ in _PATH}
    if "INTEGER" in names and "STRING" not in names:
        kinds.append("a whole number")
        names.discard("INTEGER")
    if {"IRIREF", "PNAME_LN"} & names:
        names.discard("PNAME_NS")
    for phrase, members in _KINDS:
        if members & names:
            kinds.append(phrase)
            names -= members
    words, marks = [], []
    for name in sorted(names):
        if name in _SPECIAL:
            words.append(_SPECIAL[name])
        elif name in _PUNCTUATION or name in patterns:
            marks.append(f"'{_PUNCTUATION.get(name) or patterns[name]}'")
        else:
            words.append(name)
    shown = [*kinds, *words, *sorted(marks)]
    shown = list(dict.fromkeys(shown))
    if len(shown) > limit:
        shown = [*shown[:limit], "..."]
    if len(shown) == 1:
        return shown[0]
    return ", ".join(shown[:-1]) + " or " + shown[-1]


def anonymous_patterns(parser) -> dict[str, str]:
    """name -> text of the literal terminals lark named itself (`__ANON_0` -> ':-', `MINUS` -> '-')."""
    return {terminal.name: terminal.pattern.value for terminal in parser.terminals
            if terminal.pattern.type == "str" and terminal.name not in _PUNCTUATION}


_BRACKETS = LazyPattern(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]++|\\.)*+"|\'(?:[^\'\\\n]++|\\.)*+\''
                       r'|<[^<>"{}|^`\\\x00-\x20]*>|#[^\n]*|[(){}\[\]]')
_CLOSING = {"(": ")", "[": "]", "{": "}"}


def open_bracket(text: str, offset: int) -> tuple[str, int] | None:
    """The innermost bracket still open just before `offset` (its character and offset), skipping
    strings, IRIs and comments.

    >>> open_bracket('SELECT * { ?s ?p ?o FILTER(?o > 3 }', 34)
    ('(', 26)
    """
    stack: list[tuple[str, int]] = []
    for found in _BRACKETS.finditer(text, 0, offset):
        mark = found.group(0)
        if mark in _CLOSING:
            stack.append((mark, found.start()))
        elif mark in ")]}" and stack and _CLOSING[stack[-1][0]] == mark:
            stack.pop()
    return stack[-1] if stack else None


def not_closed(text: str, offset: int, closer: str | None = None) -> str | None:
    """'the '(' at 1:27 is not closed', when a bracket opened before `offset` is (and `closer`,
    the bracket found at `offset`, does not close it)."""
    found = open_bracket(text, offset)
    if found is None or closer is not None and _CLOSING[found[0]] == closer:
        return None
    line, column = position(text, found[1])
    return f"the '{found[0]}' at {line}:{column} is not closed"


def word_at(text: str, offset: int) -> str:
    """The token that starts at `offset`, as written (a word, a number, an IRI, or one character)."""
    rest = text[offset:offset + 200]
    found = re.match(r"<[^<>\s]*>|[?$]?[A-Za-z0-9_\u00C0-\uFFFF][\w\-.:\u00C0-\uFFFF]*(?<![.])|\S", rest)
    return found.group(0)[:40] if found else ""


def end_position(text: str) -> tuple[int, int]:
    """Where the text ends (after its last non-blank character)."""
    return position(text, len(text.rstrip()))
