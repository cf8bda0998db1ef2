"""The prefixes a query may use without a PREFIX line, and what each one stands for.

Queries written for other engines often leave the usual prefixes undeclared:
CQELS4J's examples write `sosa:hasSimpleResult` with the prefixes declared in
Java, the RSP-QL drafts write `rdf:type`, `xsd:duration` and `:win` bare. A
query may use the prefixes below undeclared; each one used is reported once, as
a note at its first use (`q.rq:3:18: note: prefix sosa: not declared; read as
<http://www.w3.org/ns/sosa/>`), and a PREFIX line in the query always wins.
The undeclared default prefix `:` stands for the query's base (docs/queries.md).

The IRIs are those prefix.cc resolves each name to; `geo:` is GeoSPARQL's, the
W3C Basic Geo vocabulary (`geo:lat` of old) is `wgs84:`.

>>> WELL_KNOWN["sosa"], WELL_KNOWN["geo"]
('http://www.w3.org/ns/sosa/', 'http://www.opengis.net/ont/geosparql#')
"""

from __future__ import annotations

#: prefix -> namespace IRI (documented in docs/queries.md, "Prefixes a query need not declare")
WELL_KNOWN = {
    "rdf": "http://www.w3.org/1999/02/22-rdf-syntax-ns#",
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": "http://www.w3.org/2001/XMLSchema#",
    "owl": "http://www.w3.org/2002/07/owl#",
    "sosa": "http://www.w3.org/ns/sosa/",
    "ssn": "http://www.w3.org/ns/ssn/",
    "time": "http://www.w3.org/2006/time#",
    "geo": "http://www.opengis.net/ont/geosparql#",
    "geof": "http://www.opengis.net/def/function/geosparql/",
    "wgs84": "http://www.w3.org/2003/01/geo/wgs84_pos#",
    "prov": "http://www.w3.org/ns/prov#",
    "dcterms": "http://purl.org/dc/terms/",
    "dc": "http://purl.org/dc/elements/1.1/",
    "foaf": "http://xmlns.com/foaf/0.1/",
    "skos": "http://www.w3.org/2004/02/skos/core#",
    "schema": "http://schema.org/",
    "dcat": "http://www.w3.org/ns/dcat#",
    "qudt": "http://qudt.org/schema/qudt/",
    "unit": "http://qudt.org/vocab/unit/",
}


def undeclared_note(prefix: str, base: str | None, example: str) -> tuple[str, str]:
    """(the namespace an undeclared prefix is read as, the note that says so); `example` is the
    prefixed name where it is first used. `prefix` is "" (the default prefix) or a key of WELL_KNOWN."""
    if prefix:
        namespace = WELL_KNOWN[prefix]
        return namespace, f"prefix {prefix}: not declared; read as <{namespace}>"
    if base:
        return base, f"prefix : not declared; read as the query's base <{base}>"
    local = example.partition(":")[2]
    return "", f"prefix : not declared and the query has no base; {example} is read as the relative IRI <{local}>"
