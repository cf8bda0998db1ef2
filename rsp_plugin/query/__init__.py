"""Continuous queries (C-SPARQL, RSP-QL, CQELS-QL, SPARQLstream): grammar and plan, windows, evaluation, result streams."""

from .model import (
    R2S,
    ContinuousQuery,
    CountWindow,
    NowWindow,
    RangeWindow,
    ReportPolicy,
    WindowClause,
)
from .syntax import parse_query, parse_query_file

__all__ = [
    "R2S", "ContinuousQuery", "CountWindow", "NowWindow", "RangeWindow", "ReportPolicy", "WindowClause",
    "parse_query", "parse_query_file",
]
