"""Explanations in the service (`rsp-plugin serve --explain`, `create_app(settings, explainer=explainer)`).

The service asks `explainer(engine, query, t, item)` for GET /queries/{name}/explain?t=T&item=JSON
(the row, the CONSTRUCT triple, or the ASK answer the page's "why?" button sends) and serves the
answer as JSON: the tree (`query.py`, terms as they are) and, for the page to show, the same as
indented text with the query's prefixes: `text` its first levels (as `query --explain` prints
them), `full_text` the whole tree; or `{"error": ...}` when it cannot say (a report older than
the query's latest, say).
"""

from __future__ import annotations

from ..core.explanations import render
from ..lars.explain import ExplanationUnavailable
from ..query.explain import QUERY_TEXT_LEVELS


def explainer(engine, query: str, t: int, item) -> dict:
    """Why `item` is in `query`'s report at `t`: {"tree", "text", "full_text"}, or {"error"}."""
    from ..query.readable import Readable

    if isinstance(item, dict) and not item:
        item = None
    try:
        tree = engine.explain(query, t, item)
    except (ExplanationUnavailable, KeyError, ValueError) as error:
        return {"error": str(error).strip("'\"")}
    registered = engine.queries.get(query) if hasattr(engine, "queries") else None
    prefixes = dict(registered.query.prefixes) if registered is not None else {}
    shown = Readable(prefixes)
    return {"tree": tree, "text": shown.text(render(tree, levels=QUERY_TEXT_LEVELS)),
            "full_text": shown.text(render(tree))}
