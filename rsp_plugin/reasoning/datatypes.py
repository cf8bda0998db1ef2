"""What the OWL 2 RL datatype rules need to know about a literal, as facts.

The rule language has no built-in that looks inside a literal, so the
materializer asks this module once per typed literal it sees and adds the
answer as background facts, which the rules dt-type2 and dt-not-type of
`owl2rl.lars` read:

    datatype_of(lt, dt)   lt's datatype is dt or derived from it (xsd:byte ... xsd:decimal)
    ill_formed(lt)        lt's lexical form is not one of its datatype's

Typing follows the XSD derivation hierarchy (as owlrl does), not full
value-space membership: "5"^^xsd:integer is an xsd:decimal, but not an
xsd:byte. A plain literal is an xsd:string (RDF 1.1). Lexical forms are checked
for the numeric, boolean and date-time datatypes; others are taken as written.

>>> facts = literal_facts('"5"^^<http://www.w3.org/2001/XMLSchema#int>')
>>> sorted(dt.rsplit("#", 1)[1][:-1] for kind, dt in facts)
['decimal', 'int', 'integer', 'long']
>>> literal_facts('"five"^^<http://www.w3.org/2001/XMLSchema#integer>')[-1]
('ill_formed', None)
>>> literal_facts("<http://example.org/a>")
[]
"""

from __future__ import annotations

import re

from ..core.xsd import INTEGERS, XSD

#: datatype -> the datatypes it is derived from (XSD 1.1 part 2, the types of the OWL 2 RL datatype map)
_DERIVED_FROM = {
    **{name: [integer.base] for name, integer in INTEGERS.items()},  # (XSD's table: `core.xsd`)
    "normalizedString": ["string"],
    "token": ["normalizedString"],
    "language": ["token"],
    "Name": ["token"],
    "NCName": ["Name"],
    "NMTOKEN": ["token"],
    "dateTimeStamp": ["dateTime"],
}
_TYPED = {
    "decimal", "double", "float", "string", "boolean", "hexBinary", "base64Binary", "anyURI", "dateTime",
    *_DERIVED_FROM,
}
_INTEGER = re.compile(r"[+-]?\d+\Z")
_DECIMAL = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)\Z")
_DOUBLE = re.compile(r"([+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?|[+-]?INF|NaN)\Z")
_BOOLEAN = re.compile(r"(true|false|1|0)\Z")
_DATE_TIME = re.compile(r"-?\d{4,}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)?\Z")
_LITERAL = re.compile(r'"(?P<lexical>.*)"(\^\^<(?P<datatype>[^>]*)>|@[A-Za-z0-9-]+)?\Z', re.S)


def supertypes(local_name: str) -> list[str]:
    """The datatype and every datatype it is derived from (local names in XSD)."""
    found = [local_name]
    for parent in _DERIVED_FROM.get(local_name, ()):
        found.extend(t for t in supertypes(parent) if t not in found)
    return found


def literal_facts(key: str) -> list[tuple[str, str | None]]:
    """`("datatype_of", "<dt>")` for lt's datatypes, and `("ill_formed", None)` if its lexical form is wrong.

    `key` is a term's written form (N-Triples); anything but a literal has no facts.
    """
    if not key.startswith('"'):
        return []
    match = _LITERAL.match(key)
    if match is None:
        return []
    datatype = match.group("datatype")
    if datatype is None:
        if match.group(2):  # a language-tagged string: not in the OWL 2 RL map's xsd types
            return []
        datatype = XSD + "string"
    if not datatype.startswith(XSD) or datatype[len(XSD):] not in _TYPED:
        return []
    local = datatype[len(XSD):]
    facts: list[tuple[str, str | None]] = [("datatype_of", f"<{XSD}{t}>") for t in supertypes(local)]
    if not well_formed(match.group("lexical"), local):
        facts.append(("ill_formed", None))
    return facts


def well_formed(lexical: str, local_name: str) -> bool:
    """Is `lexical` a lexical form of the XSD datatype `local_name`? (Unchecked types: yes.)"""
    kinds = supertypes(local_name)
    if "integer" in kinds:
        if not _INTEGER.match(lexical):
            return False
        value = int(lexical)
        return all(_within(value, INTEGERS[kind].low, INTEGERS[kind].high) for kind in kinds if kind in INTEGERS)
    if local_name == "decimal":
        return bool(_DECIMAL.match(lexical))
    if local_name in ("double", "float"):
        return bool(_DOUBLE.match(lexical))
    if local_name == "boolean":
        return bool(_BOOLEAN.match(lexical))
    if "dateTime" in kinds:
        if not _DATE_TIME.match(lexical):
            return False
        return local_name != "dateTimeStamp" or lexical.endswith("Z") or lexical[-6] in "+-"
    return True


def _within(value: int, low: int | None, high: int | None) -> bool:
    return (low is None or value >= low) and (high is None or value <= high)
