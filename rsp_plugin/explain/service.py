"""Explanations in the service (`rsp-plugin serve --explain`, `create_app(settings, explainer=explainer)`).

The service asks `explainer(engine, query, t, item)` for GET /queries/{name}/explain?t=T&item=JSON
(the row, the CONSTRUCT triple, or the ASK answer the page's "why?" button sends) and serves the
answer as JSON: the tree (`query.py`) and the same as indented text, for the page to show; or
`{"error": ...}` when it cannot say (a report older than the query's latest, say).
"""

from __future__ import annotations

from .lars import ExplanationUnavailable
from .text import render


def explainer(engine, query: str, t: int, item) -> dict:
    """Why `item` is in `query`'s report at `t`: {"tree", "text"}, or {"error"}."""
    if isinstance(item, dict) and not item:
        item = None
    try:
        tree = engine.explain(query, t, item)
    except (ExplanationUnavailable, KeyError, ValueError) as error:
        return {"error": str(error).strip("'\"")}
    return {"tree": tree, "text": render(tree)}
