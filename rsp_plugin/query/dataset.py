"""A window snapshot as an rdflib dataset: rdflib's SPARQL evaluator reads our indexes directly.

No copy: `ContentStore` is a read-only rdflib `Store` whose `triples()` looks the
pattern up in a content (`content.py`), turning ids into rdflib terms at the
edge. The default graph is the union of the query's `FROM STREAM` windows and
`FROM` graphs; named graphs are the RSP-QL named windows and `FROM NAMED` graphs.

Also here: C-SPARQL's timestamp function, registered with rdflib under its
C-SPARQL IRI and ours, which asks the active graph when a triple was seen.
"""

from __future__ import annotations

from datetime import datetime, timezone

from rdflib import ConjunctiveGraph, Graph, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.plugins.sparql.evalutils import _eval
from rdflib.plugins.sparql.operators import register_custom_function
from rdflib.plugins.sparql.sparql import QueryContext, SPARQLError
from rdflib.store import Store

from ..core.rdfterms import TermCache

#: C-SPARQL's function (`f:timestamp(?s, ?p, ?o)`) and the same under the project's namespace.
TIMESTAMP_FUNCTIONS = (
    URIRef("http://larkc.eu/csparql/sparql/jena/ext#timestamp"),
    URIRef("https://w3id.org/rsp-plugin/functions#timestamp"),
)
DEFAULT_GRAPH = URIRef("urn:x-rsp-plugin:default-graph")


class ContentStore(Store):
    """rdflib's view of one content: `triples()` answered from the id indexes."""

    context_aware = False
    formula_aware = False
    transaction_aware = False
    graph_aware = False

    def __init__(self, content, cache: TermCache):
        super().__init__()
        self.content = content
        self.cache = cache

    def triples(self, triple_pattern, context=None):
        find = self.cache.find
        ids = []
        for term in triple_pattern:
            if term is None:
                ids.append(None)
                continue
            found = find(term)
            if found is None:
                return
            ids.append(found)
        term = self.cache.term
        for s, p, o in self.content.match(*ids):
            yield (term(s), term(p), term(o)), iter(())

    def __len__(self, context=None) -> int:
        return len(self.content)

    def contexts(self, triple=None):
        return iter(())

    def add(self, triple, context, quoted=False):
        raise TypeError("a window snapshot is read-only")

    def remove(self, triple, context=None):
        raise TypeError("a window snapshot is read-only")


def content_graph(content, cache: TermCache, identifier) -> Graph:
    return Graph(store=ContentStore(content, cache), identifier=identifier)


class SnapshotDataset(ConjunctiveGraph):
    """The dataset rdflib's GRAPH evaluation asks: named graphs by IRI, the default graph apart."""

    def __init__(self, default: Graph, named: dict[URIRef, Graph], cache: TermCache):
        super().__init__()
        self._default = default
        self._named = named
        self._cache = cache

    @property
    def default_context(self):
        return self._default

    @default_context.setter
    def default_context(self, value):  # ConjunctiveGraph.__init__ sets it
        pass

    def contexts(self, triple=None):
        return iter(self._named.values())

    def get_context(self, identifier, quoted=False, base=None):
        found = self._named.get(URIRef(identifier) if isinstance(identifier, str) else identifier)
        if found is None:
            from .content import EMPTY

            found = content_graph(EMPTY, self._cache, identifier)
        return found


def query_context(default: Graph, dataset: SnapshotDataset | None, prologue, tau: int) -> QueryContext:
    """An rdflib QueryContext over a snapshot, with NOW() = the evaluation time (never the wall clock)."""
    context = QueryContext(graph=default, initBindings={})
    context.initBindings = {}
    context._dataset = dataset
    context.graph = default
    context.prologue = prologue
    context._now = datetime.fromtimestamp(tau / 1000, tz=timezone.utc)
    return context


def _timestamp(expr, context) -> Literal:
    """timestamp(?s, ?p, ?o): when the triple was last seen in the active graph's window."""
    if len(expr.expr or ()) != 3:
        raise SPARQLError("timestamp(?s, ?p, ?o) takes three arguments")
    terms = [_eval(argument, context) for argument in expr.expr]
    for term in terms:
        if isinstance(term, SPARQLError):
            raise term
    graph = context.ctx.graph
    store = getattr(graph, "store", None)
    if not isinstance(store, ContentStore):
        raise SPARQLError("timestamp() reads a window")
    ids = [store.cache.find(term) for term in terms]
    if None in ids:
        raise SPARQLError("timestamp(): the triple is not in the window")
    seen = store.content.timestamp(tuple(ids))
    if seen is None:
        raise SPARQLError("timestamp(): the triple is not in the window")
    return Literal(seen, datatype=XSD.long)


for _iri in TIMESTAMP_FUNCTIONS:
    register_custom_function(_iri, _timestamp, override=True, raw=True)

__all__ = ["ContentStore", "SnapshotDataset", "content_graph", "query_context", "TIMESTAMP_FUNCTIONS",
           "DEFAULT_GRAPH"]
