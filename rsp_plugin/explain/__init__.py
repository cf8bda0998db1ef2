"""Why does this hold? Explanations of derived facts, entailments and query results.

    engine = IncrementalEngine(program, explain=True)       # LARS (lars.py)
    engine.explain(fact, t)                                 # -> a small tree of plain data, or None
    m = Materializer("owl-rl", window=10, explain=True)     # RDFS / OWL 2 RL (reasoning.py)
    m.explain(triple)
    rt = RSPEngine(explain=True)                            # continuous queries (query.py)
    rt.explain("q", t, {"x": "<http://ex/a>"})              # a row (or a CONSTRUCT triple) of the latest report
    render(tree)                                            # indented text (text.py)

Explanations are kept only when asked (`explain=`), as light provenance: the
first derivation of each new fact, with its body (`provenance.py`); they are
made on demand, walking those records down to stream elements and background
(`lars.py`). `rsp-plugin reason ... --explain ATOM [--at T]` and
`rsp-plugin query ... --explain` print them (`cli.py`); `bench lars --explain`
and `bench materialize --explain` measure what keeping them costs (`bench.py`).
"""

from .lars import ExplanationUnavailable
from .text import render

__all__ = ["ExplanationUnavailable", "render"]
