"""A rule program in either of its languages: the one place that tells LARS from DatalogMTL.

    program = parse_program(text, "rules.mtl")      # -> the engine's `Program`, whichever it is

LARS (`lars/syntax.py`, metric operators included) and DatalogMTL in MeTeoR's
syntax (`syntax.py`, lowered by `lars/metric_lower.py`) become the same
`Program` for the one engine. Which one a text is in: `run.is_datalogmtl` (the
file's extension, else MeTeoR's operators in it). The LARS parser reads LARS
only; a caller that takes either (a query's RULES, the service's rules) reads
through here.
"""

from __future__ import annotations

from pathlib import Path

from ..core.errors import RuleSyntaxError
from ..core.terms import Dictionary
from ..io.lines import decode_text
from ..lars import syntax as lars
from ..lars.program import Program
from .run import is_datalogmtl


def parse_program(text: str, filename: str = "<program>", terms: Dictionary | None = None, *,
                  semantics: str = "stream") -> Program:
    """`text` as a program for the engine: DatalogMTL (MeTeoR's syntax) lowered, or LARS."""
    if is_datalogmtl(filename, text):
        from . import load_program

        return load_program(text, filename, terms).program
    return lars.parse_program(text, filename, terms, semantics=semantics)


def parse_program_file(path: str | Path, terms: Dictionary | None = None, *, semantics: str = "stream") -> Program:
    path = Path(path)
    try:
        text = decode_text(path.read_bytes(), str(path), RuleSyntaxError)  # bad bytes: a located error
    except OSError as error:
        raise RuleSyntaxError(f"cannot read the program: {error.strerror}", str(path), 1, 1) from None
    return parse_program(text, str(path), terms, semantics=semantics)


__all__ = ["parse_program", "parse_program_file"]
