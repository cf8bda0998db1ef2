"""Errors a user can cause: in their file, each pointing at a place in it; or elsewhere, one line.

`LocatedError` and its kinds subclass `SyntaxError` (as pyoxigraph's parse errors do) so that
`filename`, `lineno` and `offset` are filled, and the command line prints them
as one line: `file:line:column: message`. `UserError` is a mistake in no file of
the user's (an option, a missing file, an unreachable broker): its message alone.
"""

from __future__ import annotations

from .regexes import LazyPattern

#: a word of a message longer than this is input quoted whole (a token of thousands of digits, an
#: IRI of a megabyte): it is cut to its start
_LONG_WORD = LazyPattern(r"\S{101,}")


def short_words(message: str) -> str:
    """A message with each word of more than 100 characters cut to its first 60 (and "...")."""
    if len(message) <= 100:
        return message
    return _LONG_WORD.sub(lambda word: word.group()[:60] + "...", message)


class LocatedError(SyntaxError):
    """An error in a user's text, with its place (its message's words cut: `short_words`)."""

    def __init__(self, message: str, filename: str = "<input>", line: int = 1, column: int = 1):
        message = short_words(message)
        super().__init__(message, (filename, line, column, None))
        self.msg = message

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.offset}: {self.msg}"


class UserError(Exception):
    """A user's mistake outside their text (an option, a file that is not there, a broker that cannot be
    reached): a one-line message. The command line prints `rsp-plugin: message` and exits 2; the
    service answers 400 with it."""


class RuleSyntaxError(LocatedError):
    """A LARS program that cannot be parsed or is not a valid program."""


class QuerySyntaxError(LocatedError):
    """A continuous query that cannot be parsed or registered."""


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of an offset of a text."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


def clipped(text: str, width: int = 40) -> str:
    """Written input as a message quotes it: at most `width` characters (a token of thousands of
    digits makes a message no one reads)."""
    return text if len(text) <= width else text[:width - 3] + "..."
