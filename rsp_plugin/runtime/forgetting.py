"""What an engine's dictionary may forget: every term id nothing the engine holds can reach.

On a stream of fresh IRIs (a sensor's observations, each a new node) the dictionary
would grow for ever. The engine names what it holds (input not taken yet, windows
and what they derive, static graphs, the queries' R2S memory, and the roots others
add: a micro-batch driver's queues), and `core.terms.Forgetting` says when a walk
over it pays for itself (its cost amortized over the ids handed out since).
"""

from __future__ import annotations

from itertools import chain

from ..core.terms import Dictionary, Forgetting


class TermKeeper:
    """The engine's holders of term ids beyond its own (`roots`) and when to forget the rest
    (`schedule`: None, never on its own; `forget` still can be called)."""

    def __init__(self, terms: Dictionary, forget: bool = True):
        self.terms = terms
        self.schedule = Forgetting(terms) if forget else None
        #: more holders of term ids (objects with `live_terms()`), e.g. a micro-batch driver's queues
        self.roots: list = []

    def due(self) -> bool:
        return self.schedule is not None and self.schedule.due()

    def forget(self, parts: list) -> int:
        """Make the dictionary forget every term none of `parts` (iterables of ids) names, unless
        pinned; how many it forgot."""
        live: set = set()
        for part in (*parts, *(root.live_terms() for root in self.roots)):
            live.update(part)
        if self.schedule is None:
            return self.terms.retain(live)
        return self.schedule.run(live)


def live_parts(engine) -> list:
    """Every term id `engine` (an `RSPEngine`) holds itself, as a list of iterables (a set is made
    faster from lists than from a chain): input not taken yet, windows and what they derive, static
    graphs, and the queries' R2S memory."""
    flat = chain.from_iterable
    parts: list = [flat(triple for *_, triple in engine._pending)]
    for chunks in engine._column_pending.values():
        parts.extend(column.tolist() for chunk in chunks for column in chunk[1:])
    parts.extend(shared.view.live_terms() for shared in engine._windows.values())
    parts.extend(graph.live_terms() for graph in engine.datasets.graphs.values())
    for query in engine._queries.values():
        previous = query.stream._previous
        if previous:
            parts.append(term for row in previous for term in row if term is not None)
    return parts


__all__ = ["TermKeeper", "live_parts"]
