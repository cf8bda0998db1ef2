"""What a registered query may reach beyond the files it was given: nothing, unless the user allows it.

A query is text anyone may hand the engine; evaluated at every window, it must
not make the process send requests or open files. rdflib would evaluate
`SERVICE <http://...>` by sending the endpoint a request at every evaluation
(and `SERVICE <file:///...>` by opening the file), so registration refuses:

- `SERVICE <endpoint>` unless the endpoint is allowed (`--allow-service URL`,
  `RSPEngine(allow_service=[...])`); `SERVICE ?var` always (an endpoint read
  from the data cannot be allowed in advance);
- `FROM <http://...>` / `FROM NAMED <http://...>` (any IRI that is not a local
  file or `urn:`) unless its content is given (`--background IRI=FILE`,
  `add_graph`) or the IRI is allowed (`--allow-graph URL`): an allowed graph is
  fetched once, at registration, by `fetch_graph` (a GET with a time-out and a
  size bound), its document parsed as any other (`rsp_plugin.io.documents`).

An allow-list entry is a full IRI, or a prefix ending in `*`. A query may
name local files (`FROM <building.ttl>`, `RULES <hot.lars>`, relative to the
query) when it comes from the user's own command line; an engine that takes
queries from others (a service) says `allow_files=False`, and then only the
graphs given to it (`add_graph`, `add_background`) are read, and the RULES
programs given to it as text (`add_rules`).

>>> from rsp_plugin.query.syntax import parse_query
>>> query = parse_query('SELECT ?x FROM STREAM <http://ex/s> [RANGE 1s STEP 1s]\\n'
...                     'WHERE { SERVICE <http://dbpedia.org/sparql> { ?x ?p ?o } }', "q.rq")
>>> try:
...     check_query(query)
... except QuerySyntaxError as refused:
...     print(refused)
q.rq:2:9: SERVICE <http://dbpedia.org/sparql> is refused: a query may not send requests (allow this endpoint with --allow-service http://dbpedia.org/sparql)
>>> check_query(query, allow_service=["http://dbpedia.org/*"])
"""

from __future__ import annotations

import re
from typing import Iterable

from ..core import limits
from ..core.errors import QuerySyntaxError
from ..core.regexes import LazyPattern


def allowed(iri: str, allow: Iterable[str] | None) -> bool:
    """Is `iri` on the allow-list (an equal entry, or an entry `prefix*`)?"""
    for entry in allow or ():
        if entry == iri or (entry.endswith("*") and iri.startswith(entry[:-1])):
            return True
    return False


def is_remote(iri: str) -> bool:
    """An IRI the process would have to fetch (not a local path, file: IRI or urn:)."""
    if iri.startswith(("file:", "urn:")):
        return False
    return re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", iri) is not None


def check_query(query, *, allow_service: Iterable[str] | None = (), allow_graphs: Iterable[str] | None = (),
                given_graphs: Iterable[str] = (), allow_files: bool = True, given_rules: Iterable[str] = ()) -> None:
    """Raise `QuerySyntaxError` (at the place in the query) if it would reach what it may not."""
    allow_service = list(allow_service or ())
    for endpoint in _service_endpoints(query.algebra):
        line, column = _service_place(query, endpoint)
        if not isinstance(endpoint, str) or type(endpoint).__name__ == "Variable":
            raise QuerySyntaxError(f"SERVICE ?{endpoint} is refused: a query may not send requests to an endpoint "
                                   "read from the data (name the endpoint and allow it with --allow-service URL)",
                                   query.filename, line, column)
        if not allowed(str(endpoint), allow_service):
            raise QuerySyntaxError(f"SERVICE <{endpoint}> is refused: a query may not send requests (allow this "
                                   f"endpoint with --allow-service {endpoint})", query.filename, line, column)
    given = set(given_graphs)
    for iri in (*query.graphs, *query.named_graphs):
        if iri in given or allowed(iri, allow_graphs):
            continue
        line, column = _from_place(query, iri)
        if not is_remote(iri):
            if allow_files:
                continue
            raise QuerySyntaxError(f"FROM <{iri}> is refused: this engine reads only the graphs it is given "
                                   "(add_graph)", query.filename, line, column)
        raise QuerySyntaxError(f"FROM <{iri}> is refused: remote graphs are not fetched (give its content with "
                               f"--background {iri}=FILE, or allow it with --allow-graph {iri})",
                               query.filename, line, column)
    if query.rules is not None and not allow_files and query.rules not in set(given_rules):
        place = query.places.get("rules")
        raise QuerySyntaxError(f"RULES <{query.rules}> is refused: this engine reads no file a query names",
                               query.filename, place.line if place else 1, place.column if place else 1)


def fetch_graph(iri: str, *, timeout: float = limits.FETCH_TIMEOUT_S, max_bytes: int = limits.MAX_REMOTE_GRAPH_BYTES,
                contexts: dict[str, str] | None = None):
    """An allowed remote graph: one GET (http or https only), at most `max_bytes`, parsed safely."""
    import requests

    from ..io.documents import parse_document

    if not iri.startswith(("http://", "https://")):
        raise ValueError(f"<{iri}>: only http(s) graphs are fetched")
    formats = {"text/turtle": "turtle", "application/n-triples": "nt", "application/rdf+xml": "xml",
               "application/ld+json": "json-ld", "application/trig": "trig", "application/n-quads": "nquads",
               "text/n3": "n3"}
    with requests.get(iri, timeout=timeout, stream=True, allow_redirects=False,
                      headers={"Accept": ", ".join(formats)}) as response:
        response.raise_for_status()
        data = bytearray()
        for chunk in response.iter_content(1 << 16):
            data.extend(chunk)
            if len(data) > max_bytes:
                raise ValueError(f"<{iri}> is larger than {max_bytes} bytes")
        kind = response.headers.get("Content-Type", "").split(";")[0].strip().lower()
    return parse_document(bytes(data), formats.get(kind, "turtle"), filename=iri, base=iri, contexts=contexts)


def _service_endpoints(node):
    """The endpoint terms of every SERVICE in the algebra, expressions (EXISTS) and subqueries included."""
    from rdflib.plugins.sparql.parserutils import CompValue

    stack = [node]
    seen: set[int] = set()
    while stack:
        value = stack.pop()
        if id(value) in seen:
            continue
        seen.add(id(value))
        if isinstance(value, CompValue):
            if value.name == "ServiceGraphPattern":
                yield dict.get(value, "term")
            stack.extend(dict.values(value))
        elif isinstance(value, dict):
            stack.extend(value.values())
        elif isinstance(value, (list, tuple, set)):
            stack.extend(value)
        elif hasattr(value, "algebra") and hasattr(value, "prologue"):  # rdflib's Query
            stack.append(value.algebra)


_SERVICE = LazyPattern(r"SERVICE\s+(?:SILENT\s+)?(<[^<>\s]*>|\?\w+|\$\w+|[A-Za-z][\w.\-]*:[\w.\-]*|:[\w.\-]*)", re.I)


def _service_place(query, endpoint) -> tuple[int, int]:
    """Line and column of the SERVICE keyword whose endpoint is `endpoint` (the first SERVICE otherwise)."""
    text = query.sparql or query.text
    first = None
    for match in _SERVICE.finditer(text):
        first = first or match
        written = match.group(1)
        if written[0] in "?$" and written[1:] == str(endpoint):
            return _place(text, match.start())
        if written[0] == "<" and written[1:-1] in (str(endpoint), _relative_to(query, str(endpoint))):
            return _place(text, match.start())
        prefix, _, local = written.partition(":")
        if query.prefixes.get(prefix, None) is not None and query.prefixes[prefix] + local == str(endpoint):
            return _place(text, match.start())
    return _place(text, first.start()) if first else (1, 1)


def _relative_to(query, iri: str) -> str:
    base = query.base or ""
    return iri[len(base):] if base and iri.startswith(base) else iri


def _from_place(query, iri: str) -> tuple[int, int]:
    for match in re.finditer(r"FROM\s+(?:NAMED\s+)?<([^<>\s]*)>", query.text, re.I):
        if match.group(1) in (iri, _relative_to(query, iri)):
            return _place(query.text, match.start())
    place = query.places.get("query")
    return (place.line, place.column) if place else (1, 1)


def _place(text: str, offset: int) -> tuple[int, int]:
    line = text.count("\n", 0, offset) + 1
    return line, offset - (text.rfind("\n", 0, offset) + 1) + 1


__all__ = ["allowed", "check_query", "fetch_graph", "is_remote"]
