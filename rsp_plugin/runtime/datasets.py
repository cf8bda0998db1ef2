"""The graphs queries read besides their streams, and the RULES programs they name.

A query's FROM / FROM NAMED graphs are given (`add_graph`: an rdflib Graph or a
file), local files (unless `allow_files=False`), or remote graphs the user allowed
(`allow_graphs`, `rsp_plugin.query.safety`), fetched once; the background
(`add_background`) is in every query's default graph. Each is read once and kept
as a `TripleIndex` of term ids. A RULES <iri> program is given as text
(`add_rules`) or read from the file the IRI names.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Iterable, Iterator

from ..core.errors import QuerySyntaxError, RuleSyntaxError
from ..io.documents import DocumentRefused, format_of, parse_file
from ..io.lines import decode_text
from ..query.content import TripleIndex
from ..query.model import ContinuousQuery
from ..query.safety import allowed, fetch_graph, is_remote

Triple = tuple[int, int, int]


@dataclass
class RulesProgram:
    """A query's RULES program: its text, the program parsed from it, and its semantics."""

    source: str
    program: object
    semantics: str = "stream"


class Datasets:
    """The graphs (given, read, fetched) and RULES programs of an engine's queries, each read once."""

    def __init__(self, terms, cache, *, allow_graphs: Iterable[str] = (), allow_files: bool = True,
                 jsonld_contexts: dict[str, str] | None = None):
        self.terms = terms
        self.cache = cache
        #: remote FROM graphs a query may reach (IRIs, or prefixes ending in `*`)
        self.allow_graphs = tuple(allow_graphs)
        #: may a query name local files (FROM, RULES)?
        self.allow_files = allow_files
        #: JSON-LD context IRI -> local file, for the graphs read (`rsp_plugin.io.documents`)
        self.jsonld_contexts = dict(jsonld_contexts or {})
        #: graphs read so far, by IRI (and the static materializations, by their key)
        self.graphs: dict[str, TripleIndex] = {}
        #: graphs given (`add_graph`): an rdflib Graph, triples or a file, read when a query needs it
        self.sources: dict[str, object] = {}
        #: the IRIs of the background graphs, in every query's default graph
        self.background: list[str] = []
        #: RULES programs given as text, by IRI
        self.rules_sources: dict[str, str] = {}

    def add_graph(self, iri: str, source) -> None:
        self.sources[str(iri)] = source
        self.graphs.pop(str(iri), None)

    def add_background(self, source) -> str:
        iri = f"urn:x-rsp-plugin:background:{len(self.background)}"
        self.add_graph(iri, source)
        self.background.append(iri)
        return iri

    def add_rules(self, iri: str, source: str) -> None:
        self.rules_sources[str(iri)] = source

    # what a query reads ------------------------------------------------------------------------------

    def background_triples(self, query: ContinuousQuery) -> tuple:
        """Background for materialization: the FROM graphs and the engine's default background."""
        if query.entailment is None:
            return ()
        triples: list[Triple] = []
        for iri in (*self.background, *query.graphs):
            triples.extend(self.graph(iri, query))
        return tuple(sorted(set(triples)))

    def static_graphs(self, query: ContinuousQuery, background: tuple):
        """(the default graph's static parts, {name: graph}) of `query`."""
        named = {iri: self.graph(iri, query) for iri in query.named_graphs}
        if query.entailment is not None:
            default_windows = [c for c in query.windows if c.name is None]
            if default_windows:
                return [], named  # the materialized windows hold the background already
            return [self._static_materialization(query, background)], named
        return [self.graph(iri, query) for iri in (*self.background, *query.graphs)], named

    def _static_materialization(self, query: ContinuousQuery, background: tuple) -> TripleIndex:
        key = ("static", query.entailment, background)
        found = self.graphs.get(str(key))
        if found is None:
            from ..reasoning import Materializer

            materializer = Materializer(query.entailment, window=0, background=list(background), terms=self.terms)
            found = self.graphs[str(key)] = TripleIndex(tuple(t) for t in materializer.holding())
        return found

    def graph(self, iri: str, query: ContinuousQuery) -> TripleIndex:
        """Graph <iri> as `query` names it: given, fetched (allowed and remote) or a local file."""
        found = self.graphs.get(iri)
        if found is not None:
            return found
        source = self.sources.get(iri)
        if source is None and is_remote(iri) and allowed(iri, self.allow_graphs):
            source = self._fetched(iri, query)
        if source is None:
            path = local_path(iri)
            if path is None or not path.exists():
                raise QuerySyntaxError(
                    f"graph <{iri}> is neither a readable file nor given (--background IRI=FILE, add_graph)",
                    *_place(query, "query"))
            source = path
        index = TripleIndex(self._triples_of(source, iri, query))
        self.graphs[iri] = index
        return index

    def _fetched(self, iri: str, query: ContinuousQuery):
        """An allowed remote graph, fetched once (`query.safety.fetch_graph`)."""
        try:
            return fetch_graph(iri, contexts=self.jsonld_contexts)
        except DocumentRefused as refused:
            raise QuerySyntaxError(f"{refused.msg} (graph <{iri}>)", refused.filename, refused.lineno,
                                   refused.offset) from None
        except Exception as error:  # requests and rdflib raise many kinds
            raise QuerySyntaxError(f"cannot fetch graph <{iri}>: {_first_line(error)}",
                                   *_place(query, "query")) from None

    def _triples_of(self, source, iri: str, query: ContinuousQuery) -> Iterator[Triple]:
        if isinstance(source, (str, Path)):
            try:
                graph = parse_file(source, format_of(source), contexts=self.jsonld_contexts)
            except DocumentRefused as refused:
                raise QuerySyntaxError(f"{refused.msg} (graph <{iri}>)", refused.filename, refused.lineno,
                                       refused.offset) from None
            except Exception as error:  # rdflib raises many kinds
                raise QuerySyntaxError(f"cannot read graph <{iri}> from {source}: {_first_line(error)}",
                                       *_place(query, "query")) from None
            source = graph
        intern = self.cache.intern
        if hasattr(source, "triples") and not isinstance(source, (list, tuple, set)):
            source = source.triples((None, None, None))
        for s, p, o in source:
            yield intern(s), intern(p), intern(o)

    def rules_program(self, query: ContinuousQuery, semantics: str = "stream") -> RulesProgram | None:
        """The program `RULES <iri>` names (given as text, or the file the IRI names), parsed."""
        if query.rules is None:
            return None
        from ..mtl.programs import parse_program

        if semantics != "stream" and query.entailment is not None:
            raise QuerySyntaxError("RULES under answer-stream semantics cannot be combined with ENTAILMENT",
                                   *_place(query, "rules"))
        source = self.rules_sources.get(query.rules)
        filename = query.rules
        if source is None:
            path = local_path(query.rules)
            if path is None or not path.exists():
                raise QuerySyntaxError(f"cannot read the RULES program <{query.rules}>", *_place(query, "rules"))
            source, filename = decode_text(path.read_bytes(), str(path), RuleSyntaxError), str(path)
        program = parse_program(source, filename, terms=self.terms, semantics=semantics)
        return RulesProgram(source, program, semantics)


def rules_place(query: ContinuousQuery) -> tuple[str, int, int]:
    """Where the query names its RULES (for a message about them)."""
    return _place(query, "rules")


def _place(query: ContinuousQuery, part: str) -> tuple[str, int, int]:
    place = query.places.get(part)
    return query.filename, place.line if place else 1, place.column if place else 1


def _first_line(error: Exception) -> str:
    return str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__


def local_path(iri: str) -> Path | None:
    """The file an IRI names (`file://`, or a path), or None (another scheme)."""
    if iri.startswith("file://"):
        from urllib.parse import unquote, urlparse

        return Path(unquote(urlparse(iri).path))
    if "://" in iri or iri.startswith("urn:"):
        return None
    return Path(iri)


__all__ = ["Datasets", "RulesProgram", "local_path", "rules_place"]
