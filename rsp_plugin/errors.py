"""Errors a user can cause, each pointing at a place in their file.

They subclass `SyntaxError` (as pyoxigraph's parse errors do) so that
`filename`, `lineno` and `offset` are filled, and the command line prints them
as one line: `file:line:column: message`.
"""

from __future__ import annotations


class LocatedError(SyntaxError):
    """An error in a user's text, with its place."""

    def __init__(self, message: str, filename: str = "<input>", line: int = 1, column: int = 1):
        super().__init__(message, (filename, line, column, None))
        self.msg = message

    def __str__(self) -> str:
        return f"{self.filename}:{self.lineno}:{self.offset}: {self.msg}"


class RuleSyntaxError(LocatedError):
    """A LARS program that cannot be parsed or is not a valid program."""


class QuerySyntaxError(LocatedError):
    """A continuous query that cannot be parsed or registered."""


def position(text: str, offset: int) -> tuple[int, int]:
    """1-based line and column of an offset of a text."""
    offset = max(0, min(offset, len(text)))
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1
