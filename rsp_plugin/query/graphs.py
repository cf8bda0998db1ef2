"""What a query reads, as an rdflib `Graph`: every rdflib tool (SPARQL, serialization) on the live window.

No copy: the graph's store is the read-only `ContentStore` over the engine's own
indexes (`dataset.py`), so it shows the window as it is when read, and changes
as the engine moves on. With ENTAILMENT or RULES the window's content is the
materialization (stream triples, background, entailments); the query's FROM
graphs join its default graph.

`at`, when given, asks for the window of a later boundary than the one the
query last read (at most the watermark: every element before it has arrived).
Only plain time windows can be looked at ahead without moving the engine: the
others need their reasoning run, which only a report does.

>>> from rsp_plugin import RSPEngine
>>> from rdflib import URIRef as I
>>> rt = RSPEngine()
>>> _ = rt.register_stream("http://ex/s")
>>> q = rt.register_query('''REGISTER RSTREAM <http://ex/q> AS
...     SELECT ?x FROM STREAM <http://ex/s> [RANGE 2s STEP 1s] WHERE { ?x <http://ex/p> ?y }''')
>>> rt.push("http://ex/s", [(I("http://ex/a"), I("http://ex/p"), I("http://ex/b"))], timestamp=500)
>>> _ = rt.advance_to(1000)
>>> graph = rt.window_graph(q)                        # the window [0, 1000) the query read at 1000
>>> len(graph), graph.serialize(format="nt").strip()
(1, '<http://ex/a> <http://ex/p> <http://ex/b> .')
>>> _ = rt.advance_to(3000)
>>> len(graph)                                         # live: the window [1000, 3000) now
0
>>> rt.window_graph(q, at=1500)
Traceback (most recent call last):
...
rsp_plugin.query.graphs.WindowNotKept: query http://ex/q: the window of 1500 is gone (the engine keeps the window of 3000 on)
"""

from __future__ import annotations

from rdflib import Graph, URIRef

from .content import TripleIndex, union
from .dataset import ContentStore
from .views import PlainView
from .windows import TimeWindow


class WindowNotKept(ValueError):
    """A window the engine cannot show at that time (past, not yet arrived, or needing reasoning)."""


def window_graph(query, cache, watermark: int | None, at: int | None = None, window: str | None = None) -> Graph:
    """The rdflib Graph of `query`'s default graph (or of its named window / graph `window`).

    `query` is a registered query (`RSPEngine.queries[name]`): its windows as
    (clause, shared window) pairs and its static graphs.
    """
    parts = []
    name = None if window is None else str(window)
    found = name is None
    for clause, shared in query.windows:
        if clause.name != name:
            continue
        found = True
        parts.append(_content_at(shared, query, watermark, at))
    if name is None:
        parts.extend(query.static_default)
    elif name in query.static_named:
        found = True
        parts.append(query.static_named[name])
    if not found:
        known = [c.name for c, _ in query.windows if c.name] + list(query.static_named)
        raise KeyError(f"query {query.name} has no window or graph <{name}> (it has: "
                       f"{', '.join(f'<{k}>' for k in known) or 'its default graph only'})")
    identifier = URIRef(name) if name else URIRef(f"urn:x-rsp-plugin:window:{query.name}")
    return Graph(store=ContentStore(union(parts), cache), identifier=identifier)


class _Live:
    """What a view holds now, whenever it is asked (a column window makes a new content per boundary)."""

    def __init__(self, view):
        self._view = view

    def __getattr__(self, name):
        return getattr(self._view.content, name)

    def __len__(self) -> int:
        return len(self._view.content)

    def __iter__(self):
        return iter(self._view.content)


def _content_at(shared, query, watermark: int | None, at: int | None):
    view = shared.view
    if at is None or (query.last_instant is not None and at == query.last_instant):
        return _Live(view) if getattr(view.window, "columnar", False) else view.content
    window = view.window
    if not isinstance(window, TimeWindow):
        raise WindowNotKept(f"query {query.name}: a count window is only shown as it is now (at=None)")
    boundary = window.boundary_at(at)
    if window.boundary is not None and boundary == window.boundary:
        return view.content
    if window.boundary is not None and boundary < window.boundary:
        raise WindowNotKept(f"query {query.name}: the window of {at} is gone (the engine keeps the window of "
                            f"{window.boundary} on)")
    if watermark is None or at > watermark:
        raise WindowNotKept(f"query {query.name}: {at} is after the watermark ({watermark}): its elements may "
                            "not all have arrived")
    if not isinstance(view, PlainView):
        raise WindowNotKept(f"query {query.name}: with ENTAILMENT or RULES, a window is shown as the query "
                            "last read it (at=None); a later one needs its reasoning run")
    low, high = window.grid.bounds(boundary)
    ahead = TripleIndex()
    if getattr(window, "columnar", False):  # (rsp_plugin.columnar.columns: every element held, by time)
        for t, triple in window.elements():
            if low <= t < high:
                ahead.add(triple)
        return ahead
    for triple in window.content:
        if window.content.timestamp(triple) >= low:
            ahead.add(triple)
    for timestamp, triple in getattr(window, "_staged", ()):  # arrived, waiting for their boundary
        if low <= timestamp < high:
            ahead.add(triple)
    return ahead


__all__ = ["WindowNotKept", "window_graph"]
