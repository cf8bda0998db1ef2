"""How deeply a user's text may nest: bounded before anything walks it, and said in one message.

Parsers, and the code that walks what they build (rdflib's SPARQL parser, the
builders and checkers of programs, JSON-LD expansion), recurse once or more
per level of nesting; Python stops at about 1,000 frames with a
RecursionError, a traceback in the user's face. So every grammar bounds its
nesting first, and says where, in one message:

    FILE:LINE:COLUMN: nesting deeper than N levels

Brackets are what nests in SPARQL, Turtle, TriG and JSON: `check_brackets`
counts them, with what the language hides from its parser (strings, comments)
skipped. In
the rule languages operators nest without brackets too (`X + Y + ...`,
`[1,1] BOXMINUS [1,1] BOXMINUS ...`): the LARS grammar's parse tree (lark's
LALR parser builds it without recursion) is measured instead, `check_tree`,
and the DatalogMTL parser, which recurses as it reads, counts its own levels
and raises `too_deep`. The bounds are in `rsp_plugin.core.limits`.

>>> try:
...     check_brackets("[" * 5 + "]" * 5, "d.json", limit=4)
... except LocatedError as error:
...     print(error)
d.json:1:5: nesting deeper than 4 levels
"""

from __future__ import annotations

import re
from itertools import accumulate

from .errors import LocatedError, position
from .regexes import LazyPattern

#: Turtle, TriG and SPARQL (one lexical family; the patterns of the query grammar's terminals): strings
#: (long and short, either quote), comments and escapes (`ex:a\#`) hide their brackets; an IRI keeps
#: them (a parser reading its `<` as "less than" sees them), but a `#` in it starts no comment
TURTLE_HIDDEN = LazyPattern(r'"""(?:"?"?(?:[^"\\]|\\.))*"""'
                           r"|'''(?:'?'?(?:[^'\\]|\\.))*'''"
                           r'|"(?:[^"\\\n\r]|\\.)*"'
                           r"|'(?:[^'\\\n\r]|\\.)*'"
                           r"|#[^\n]*"
                           r"|\\.")
TURTLE_KEPT = LazyPattern(r'<[^<>"{}|^`\\\x00-\x20]*>')

_NOT_BRACKETS = LazyPattern(r"[^\[\](){}]+")
_STEP = {"(": 1, "[": 1, "{": 1, ")": -1, "]": -1, "}": -1}
_OPENERS = "([{"


def too_deep(limit: int, filename: str, line: int, column: int, error=LocatedError) -> LocatedError:
    """The error for nesting past `limit` at a place (`error`: the LocatedError subclass to make)."""
    return error(f"nesting deeper than {limit} levels", filename, max(line, 1), max(column, 1))


def check_brackets(text: str, filename: str, error=LocatedError, *, limit: int, hidden: re.Pattern | None = None,
                   kept: re.Pattern | None = None) -> None:
    """Raise `error` at the first bracket that opens level `limit + 1` of `text`.

    `hidden`: what the language's lexer reads as one token whose brackets do not nest
    (strings, comments, escapes); `kept`: tokens that hide nothing but whose brackets still
    count (an IRI: a `#` in it starts no comment, but a parser that reads its `<` as "less
    than" sees its brackets). A text with fewer openers than the bound is not scanned; else the
    scan runs in C (`re.sub`, `accumulate`), and only a text found too deep is walked again, in
    Python, to say where."""
    if text.count("(") + text.count("[") + text.count("{") <= limit:
        return
    bare = _bare(text, hidden, kept)
    brackets = _NOT_BRACKETS.sub("", bare)
    if not brackets or max(accumulate(map(_STEP.__getitem__, brackets))) <= limit:
        return
    raise too_deep(limit, filename, *position(text, _first_too_deep(text, hidden, kept, limit)), error)


def _bare(text: str, hidden: re.Pattern | None, kept: re.Pattern | None) -> str:
    """`text` with what `hidden` matches removed, and of what `kept` matches only its brackets."""
    if hidden is None and kept is None:
        return text
    if kept is None:
        return hidden.sub("", text)
    pattern = _joined(hidden, kept)
    return pattern.sub(lambda found: "" if found.lastgroup == "hidden" else _NOT_BRACKETS.sub("", found.group()), text)


_JOINED: dict = {}


def _joined(hidden: re.Pattern | None, kept: re.Pattern | None) -> re.Pattern:
    key = (hidden, kept)
    found = _JOINED.get(key)
    if found is None:
        parts = []
        if hidden is not None:
            parts.append(f"(?P<hidden>{hidden.pattern})")
        if kept is not None:
            parts.append(f"(?P<kept>{kept.pattern})")
        parts.append(r"(?P<bracket>[\[\](){}])")
        found = _JOINED[key] = re.compile("|".join(parts))
    return found


def _first_too_deep(text: str, hidden, kept, limit: int) -> int:
    """The offset of the first bracket that opens level `limit + 1` (the text is known to have one)."""
    depth = 0
    for found in _joined(hidden, kept).finditer(text):
        kind = found.lastgroup
        if kind == "hidden":
            continue
        for offset, char in enumerate(found.group(), found.start()):
            if char in _OPENERS:
                depth += 1
                if depth > limit:
                    return offset
            elif char in _STEP:
                depth -= 1
    return 0  # pragma: no cover - only called for a text found too deep


def deepest(text: str, *, hidden: re.Pattern | None = None, kept: re.Pattern | None = None) -> int:
    """The offset of the first bracket at the deepest level of `text` (counted as `check_brackets`
    counts): where to point when a parser found it too deep after all."""
    brackets = _NOT_BRACKETS.sub("", _bare(text, hidden, kept))
    if not brackets:
        return 0
    return _first_too_deep(text, hidden, kept, max(accumulate(map(_STEP.__getitem__, brackets))) - 1)


def check_tree(tree, filename: str, error=LocatedError, *, limit: int) -> None:
    """Raise `error` at the first node of a lark parse tree deeper than `limit` levels below its
    root (walked without recursion, so that a tree too deep for Python's stack is measured too)."""
    from lark import Tree

    stack = [(tree, 0)]
    while stack:
        node, depth = stack.pop()
        if depth > limit:
            line, column = _place(node)
            raise too_deep(limit, filename, line, column, error)
        children = [child for child in node.children if isinstance(child, Tree)]
        if children:
            stack.extend((child, depth + 1) for child in reversed(children))


def _place(node) -> tuple[int, int]:
    """Where a lark subtree starts: its meta if positions were kept, else its first token."""
    from lark import Token, Tree

    meta = getattr(node, "_meta", None)
    if meta is not None and not getattr(meta, "empty", True):
        return meta.line, meta.column
    stack = [node]
    while stack:
        current = stack.pop()
        if isinstance(current, Token):
            return current.line or 1, current.column or 1
        if isinstance(current, Tree):
            stack.extend(reversed(current.children))
    return 1, 1


__all__ = ["TURTLE_HIDDEN", "TURTLE_KEPT", "check_brackets", "check_tree", "deepest", "too_deep"]
