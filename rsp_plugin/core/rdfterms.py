"""rdflib terms <-> the engine's written keys and ids: the edge where rdflib meets the ints.

A key is a term's N-Triples form (`<http://ex/a>`, `"5"^^<...#integer>`,
`"hi"@en`, `_:b0`), as the stream readers intern it; lexical forms are kept
as written (rdflib would normalize "05"^^xsd:integer to "5": not here).

>>> from rdflib import Literal, URIRef
>>> term_key(Literal('say "hi"\\n'))
'"say \\\\"hi\\\\"\\\\n"'
>>> key_term('"5"^^<http://www.w3.org/2001/XMLSchema#integer>')
rdflib.term.Literal('5', datatype=rdflib.term.URIRef('http://www.w3.org/2001/XMLSchema#integer'))
>>> key_term(term_key(Literal("a\\tb", lang="en")))
rdflib.term.Literal('a\\tb', lang='en')
"""

from __future__ import annotations

import re

from rdflib import BNode, Literal, URIRef
from rdflib.namespace import XSD
from rdflib.term import Node

from .regexes import LazyPattern
from .terms import (
    Dictionary,
    canonical_literal,
    number_of_key,
    paired_surrogates,
    unescape,
)

_XSD_STRING = str(XSD.string)
_LITERAL = LazyPattern(r'"((?:[^"\\]++|\\.)*+)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<([^>]*)>)?\Z', re.S)  # possessive: no stack per character


def term_key(term: Node) -> str:
    """The N-Triples form of an rdflib term (xsd:string dropped, as RDF 1.1 says).

    rdflib reads the escapes `\\uD83D\\uDE00` of a character past U+FFFF as two surrogates: they
    become the one character here; a surrogate alone is no character (`terms.BadText`)."""
    if isinstance(term, URIRef):
        return f"<{paired_surrogates(term)}>"
    if isinstance(term, Literal):
        lexical = paired_surrogates(str(term))
        lexical = lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
        if term.language:
            return f'"{lexical}"@{term.language}'
        if term.datatype is not None and str(term.datatype) != _XSD_STRING:
            return f'"{lexical}"^^<{paired_surrogates(term.datatype)}>'
        return f'"{lexical}"'
    if isinstance(term, BNode):
        return f"_:{term}"
    raise TypeError(f"not an RDF term: {term!r}")


def key_term(key: str) -> Node:
    """The rdflib term of a key; numbers and names of the rule language become literals and IRIs."""
    first = key[0]
    if first == "<":
        return URIRef(key[1:-1])
    if first == '"':
        match = _LITERAL.match(key)
        if match is None:
            return Literal(key)
        lexical, language, datatype = match.groups()
        lexical = unescape(lexical)
        if language:
            return Literal(lexical, lang=language)
        if datatype and datatype != _XSD_STRING:
            return Literal(lexical, datatype=URIRef(datatype), normalize=False)
        return Literal(lexical)
    if key.startswith("_:"):
        return BNode(key[2:])
    value = number_of_key(key)
    if isinstance(value, bool) or value is None:
        return URIRef(key)
    datatype = XSD.integer if isinstance(value, int) else XSD.double if isinstance(value, float) else XSD.decimal
    return Literal(key, datatype=datatype, normalize=False)


class TermCache:
    """Both directions between ids of a `Dictionary` and rdflib terms, remembered.

    When the dictionary forgets terms (`Dictionary.retain`), the cache forgets them too
    (checked by the dictionary's generation on the next call).
    """

    __slots__ = ("terms", "_by_id", "_ids", "_generation")

    def __init__(self, terms: Dictionary):
        self.terms = terms
        self._by_id: dict[int, Node] = {}
        self._ids: dict[Node, int] = {}
        self._generation = terms.generation

    def _forget(self) -> None:
        known = self.terms.keys
        self._by_id = {term_id: node for term_id, node in self._by_id.items() if term_id in known}
        self._ids = {node: term_id for node, term_id in self._ids.items() if term_id in known}
        self._generation = self.terms.generation

    def term(self, term_id: int) -> Node:
        found = self._by_id.get(term_id)
        if found is not None:
            return found
        if self._generation != self.terms.generation:
            self._forget()
        found = self._by_id[term_id] = key_term(self.terms.keys[term_id])
        return found

    def find(self, term: Node) -> int | None:
        """The id of a term if the dictionary knows it (no new id)."""
        if self._generation != self.terms.generation:
            self._forget()
        found = self._ids.get(term)
        if found is None:
            found = self.terms.find(term_key(term))
            if found is not None:
                self._ids[term] = found
        return found

    def intern(self, term: Node) -> int:
        if self._generation != self.terms.generation:
            self._forget()
        found = self._ids.get(term)
        if found is None:
            key = term_key(term)
            found = self.terms.intern(canonical_literal(key) if key[0] == '"' else key)
            self._ids[term] = found
        return found
