"""XPath regular expressions (SPARQL's REGEX and REPLACE), matched in time linear in the text.

A query's pattern is text from whoever registered the query, run against
every value of a window: with a backtracking engine (Python's `re`),
`REGEX(?o, "^(a+)+$")` takes 42 s on a 30-character value and doubles with
each more. So patterns run on RE2 (`google-re2`), whose automaton matches in
time linear in the text whatever the pattern: the same case takes 0.1 ms.
RE2 has no back-references (`(a)\\1`, which XPath allows); a pattern it does
not take runs on the `regex` module, a backtracking engine with a time-out:
the evaluation's remaining time (`bounds.Budget`), past which the evaluation
is cut like any other.

Measured (one 30-character value; 100k short values for the usual case):

    engine                 ^(a+)+$     ^(a|a)+$       usual search
    re (before)            42 s        (days)         0.5 us
    regex, timeout=        < 1 ms      the time-out   4 us (1.3 us without)
    RE2                    0.1 ms      0.1 ms         3 us

The pattern is read as XPath's (F&O 3.1, 5.6.1), written for both engines:

- flags: `i` (case-insensitive), `m` (`^` and `$` at line ends), `s` (`.`
  matches newlines too), `x` (whitespace removed outside character classes; no
  comments), `q` (the pattern is a literal string); any other is an error;
- `.` is any character but a newline or a carriage return (without `s`); `$` is
  the end of the text only (without `m`; Python's `$` also matched before a
  final newline);
- `\\d` is a decimal digit of any script (`\\p{Nd}`), `\\s` a space, tab,
  newline or carriage return, `\\w` any character but punctuation, separators
  and others (`[^\\p{P}\\p{Z}\\p{C}]`); `\\D \\S \\W` their complements.

>>> compile_pattern("^(a+)+$", "").search("a" * 30 + "!")
False
>>> compile_pattern("^A.C$", "is").search("a\\nc")
True
>>> compile_pattern("a b", "x").search("xaby"), compile_pattern("a.b", "q").search("axb")
(True, False)
>>> compile_pattern("(a)\\\\1", "").search("baab")      # a back-reference: the backtracking engine
True
"""

from __future__ import annotations

import regex as backtracking  # (lark imports it anyway; re2 is imported by the first pattern: `_compile`)

from .bounds import UNBOUNDED, Budget
from .sparql_values import SparqlError

_FLAGS = set("imsxq")
#: the escapes whose meaning XPath gives differently from the engines, outside and inside [...]
_ESCAPES = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": r"[^\p{P}\p{Z}\p{C}]", "W": r"[\p{P}\p{Z}\p{C}]",
            "s": r"[ \t\n\r]", "S": r"[^ \t\n\r]"}
_CLASS_ESCAPES = {"d": r"\p{Nd}", "D": r"\P{Nd}", "w": r"\p{L}\p{M}\p{N}\p{S}", "W": r"\p{P}\p{Z}\p{C}",
                  "s": r" \t\n\r"}
_SPACE = " \t\n\r"
_CACHE: dict = {}


class Pattern:
    """A compiled XPath pattern: `search`, `matches_empty`, `sub`."""

    __slots__ = ("linear", "fallback")

    def __init__(self, linear, fallback):
        #: RE2's compiled pattern, or None when RE2 does not take it
        self.linear = linear
        #: the backtracking engine's, used only then
        self.fallback = fallback

    def search(self, text: str, budget: Budget = UNBOUNDED) -> bool:
        if self.linear is not None:
            try:
                return self.linear.search(text) is not None
            except UnicodeEncodeError:  # RE2 reads UTF-8: a lone surrogate is no text it can read
                raise SparqlError("a string with a lone surrogate code point is not matched") from None
        return self._bounded(budget, self.fallback.search, text) is not None

    def matches_empty(self) -> bool:
        return self.search("")

    def sub(self, template: str, text: str, budget: Budget = UNBOUNDED) -> str:
        """Every match replaced by `template` (Python's template syntax: `\\g<1>`, `\\\\`);
        `SparqlError` for a group the pattern does not have."""
        try:
            if self.linear is not None:
                return self.linear.sub(template, text)
            return self._bounded(budget, self.fallback.sub, template, text)
        except UnicodeEncodeError:
            raise SparqlError("a string with a lone surrogate code point is not matched") from None
        except (IndexError, ValueError, backtracking.error) as error:
            raise SparqlError(f"REPLACE: {error}") from None

    @staticmethod
    def _bounded(budget: Budget, run, *args):
        try:
            return run(*args, timeout=budget.remaining())
        except TimeoutError:
            raise budget.out_of_time() from None


def compile_pattern(pattern: str, flags: str) -> Pattern:
    """The pattern with its XPath flags; `SparqlError` for a bad pattern or flag (remembered)."""
    key = (pattern, flags)
    found = _CACHE.get(key)
    if found is None:
        unknown = [flag for flag in flags if flag not in _FLAGS]
        if unknown:
            raise SparqlError(f"unknown regular expression flag {unknown[0]!r}")
        found = _compile(pattern, flags)
        if len(_CACHE) > 1000:
            _CACHE.clear()
        _CACHE[key] = found
    return found


def _compile(pattern: str, flags: str) -> Pattern:
    import re2  # (here: a query without REGEX or REPLACE does not pay for its import)

    options = re2.Options()
    options.log_errors = False  # (RE2 logs a pattern it refuses on stderr)
    try:
        return Pattern(re2.compile(_written(pattern, flags, r"\z"), options), None)
    except re2.error:
        pass
    try:
        return Pattern(None, backtracking.compile(_written(pattern, flags, r"\Z")))
    except (backtracking.error, ValueError, OverflowError, RecursionError) as error:
        raise SparqlError(f"bad regular expression: {error}") from None


def _written(pattern: str, flags: str, end_of_text: str) -> str:
    """The XPath pattern in the engines' syntax (module docstring); `end_of_text` is the
    engine's anchor for the very end (RE2 `\\z`, the regex module `\\Z`)."""
    prefix = ("(?i)" if "i" in flags else "") + ("(?m)" if "m" in flags else "")
    if "q" in flags:
        import re2

        return prefix + re2.escape(pattern)
    dot = "(?s:.)" if "s" in flags else r"[^\n\r]"
    end = "$" if "m" in flags else end_of_text
    extended = "x" in flags
    out: list[str] = []
    inside = False  # in a character class
    index, length = 0, len(pattern)
    while index < length:
        char = pattern[index]
        if char == "\\":
            if index + 1 == length:
                raise SparqlError("bad regular expression: it ends with a lone backslash")
            escaped = pattern[index + 1]
            found = (_CLASS_ESCAPES if inside else _ESCAPES).get(escaped)
            out.append(found if found is not None else "\\" + escaped)
            index += 2
            continue
        if inside:
            if char == "]":
                inside = False
            out.append(char)
        elif extended and char in _SPACE:
            pass
        elif char == "[":
            inside = True
            out.append(char)
            if pattern.startswith("^", index + 1):
                out.append("^")
                index += 1
            if pattern.startswith("]", index + 1):  # a first `]` is itself
                out.append(r"\]")
                index += 1
        elif char == ".":
            out.append(dot)
        elif char == "$":
            out.append(end)
        else:
            out.append(char)
        index += 1
    return prefix + "".join(out)


__all__ = ["Pattern", "compile_pattern"]
