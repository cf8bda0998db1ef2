"""How the pane tests feed an engine and read what it merged (tests/test_*panes.py)."""

from __future__ import annotations

import random

import numpy as np

from rsp_plugin.core.rdfterms import term_key


def feed(engine, stream: str, elements: list, seed: int, *, columns: bool, sizes=(1, 1, 7, 40, 300)) -> None:
    """The elements in micro-batches of `sizes` (each pushed as columns, or element by element), the
    watermark moved to each batch's latest time, as a replay moves it; then the end of the stream."""
    draw = random.Random(seed)
    intern = engine.terms.intern
    start = 0
    while start < len(elements):
        stop = start + draw.choice(sizes)
        rows = elements[start:stop]
        times = [stamp for stamp, _ in rows]
        if columns:
            ids = np.array([[intern(term_key(term)) for term in triple] for _, triple in rows], dtype=np.int64)
            engine.push_columns(stream, times, ids[:, 0], ids[:, 1], ids[:, 2])
        else:
            for stamp, triple in rows:
                engine.push(stream, [triple], timestamp=stamp)
        top = max(times)
        if engine.watermark is None or top > engine.watermark:
            engine.advance_to(top)
        start = stop
    engine.finish()
    assert not engine.errors, engine.errors


def merged(engine) -> list[int]:
    """Per query, how many of its reports were merged from panes (0 for a query off the batch path)."""
    out = []
    for query in engine.queries.values():
        columnar = query.evaluator.columnar
        kept = [panes for panes in columnar.panes.values() if panes is not None] if columnar is not None else []
        out.append(sum(panes.merged for panes in kept))
    return out


def restored_midway(make_engine, stream: str, elements: list, query: str, stop_at: int | None = None):
    """Elements pushed one by one (the watermark moved to each), the engine stored and read back
    (`runtime.state`) before element `stop_at` when given: (its reports, how many were merged)."""
    from rsp_plugin.runtime import state

    engine, seen = make_engine()
    for number, (stamp, triple) in enumerate(elements):
        if number == stop_at:
            engine = state.loads(state.dumps(engine, key=b"k" * 32), key=b"k" * 32)
            engine.queries[query].subscribe(lambda result: seen.append(result.to_json()))
        if engine.watermark is None or stamp > engine.watermark:
            engine.advance_to(stamp)
        engine.push(stream, [triple], timestamp=stamp)
    engine.finish()
    return seen, merged(engine)[0]
