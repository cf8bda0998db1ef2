"""Background knowledge in, id triples out: rdflib graphs and files at the edge, ints inside.

A background source is an `rdflib.Graph`, a path to an RDF file in any format
rdflib reads (guessed from the extension, Turtle otherwise; the graphs of a
dataset, TriG or N-Quads, are merged), or an iterable of
(s, p, o) id triples already interned. Files are read by
`rsp_plugin.io.documents` (never a remote JSON-LD context, never an external or
exploding XML entity; `contexts` maps a JSON-LD context IRI to a local file). Terms become the keys of
`rsp_plugin.core.terms` (their N-Triples form), so that a background IRI and the
same IRI read from a `.tnt` stream are one id.

>>> from rdflib import Graph
>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> graph = Graph().parse(data='<http://ex/a> <http://ex/p> "5"^^<http://www.w3.org/2001/XMLSchema#int> .', format="nt")
>>> [tuple(terms.key(i) for i in t) for t in load_background(graph, terms)]
[('<http://ex/a>', '<http://ex/p>', '"5"^^<http://www.w3.org/2001/XMLSchema#int>')]
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Iterable

from rdflib import Dataset, Graph
from rdflib.term import Node
from rdflib.util import guess_format

from ..core.errors import LocatedError
from ..core.rdfterms import key_term, term_key
from ..core.terms import Dictionary

Triple = tuple[int, int, int]

class BackgroundError(LocatedError):
    """A background file that cannot be read or parsed."""


def intern_triples(triples: Iterable[tuple[Node, Node, Node]], terms: Dictionary) -> list[Triple]:
    """rdflib triples -> id triples."""
    intern = terms.intern
    seen: dict[Node, int] = {}
    out = []
    for triple in triples:
        ids = []
        for term in triple:
            found = seen.get(term)
            if found is None:
                found = seen[term] = intern(term_key(term))
            ids.append(found)
        out.append((ids[0], ids[1], ids[2]))
    return out


def to_graph(triples: Iterable[Triple], terms: Dictionary) -> Graph:
    """id triples -> an rdflib graph (for output, and for comparing with owlrl)."""
    graph = Graph()
    keys = terms.keys
    for s, p, o in triples:
        graph.add((key_term(keys[s]), key_term(keys[p]), key_term(keys[o])))
    return graph


def load_background(source, terms: Dictionary, *, contexts: dict[str, str] | None = None) -> list[Triple]:
    """The id triples of a background source (a graph, an RDF file, or id triples)."""
    if source is None:
        return []
    if isinstance(source, Graph):
        return intern_triples(source, terms)
    if isinstance(source, (str, os.PathLike)):
        return intern_triples(_parse_file(Path(source), contexts), terms)
    triples = []
    for triple in source:
        if len(triple) != 3 or not all(isinstance(term, int) for term in triple):
            raise TypeError(f"background triples must be (s, p, o) id triples, got {triple!r}")
        triples.append(tuple(triple))
    return triples




def _parse_file(path: Path, contexts: dict[str, str] | None = None):
    """The file's triples; for datasets (TriG, N-Quads, TriX), those of all its graphs."""
    from ..io.documents import DocumentRefused, dataset_calls, parse_file

    if not path.is_file():
        raise BackgroundError("cannot read the background knowledge: no such file", str(path), 1, 1)
    rdf_format = guess_format(str(path)) or "turtle"
    try:
        graph = parse_file(path, rdf_format, contexts=contexts)
    except DocumentRefused as refused:
        raise BackgroundError(refused.msg, refused.filename, refused.lineno, refused.offset) from None
    except Exception as error:  # rdflib's parsers raise many kinds; all mean "not readable RDF"
        line = getattr(error, "lines", None) or getattr(error, "lineno", None) or 1
        message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
        raise BackgroundError(f"not readable RDF: {message}", str(path), int(line), 1) from None
    if isinstance(graph, Dataset):
        with dataset_calls():
            return {(s, p, o) for s, p, o, _ in graph.quads((None, None, None, None))}
    return graph
