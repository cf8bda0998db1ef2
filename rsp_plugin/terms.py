"""Terms <-> integer ids: the one place where written terms meet the engine's ints.

Every constant the engine sees (names, IRIs, literals, numbers, predicate names)
is interned once in a `Dictionary` and travels as an int. A term's key is its
written form, which is also how it is printed:

    x1                      a name (lower-case constant of the rule language)
    <http://ex.org/a>       an IRI
    "79"^^<http://www.w3.org/2001/XMLSchema#double>, "hi"@en, "hi"
                            a literal, in N-Triples form
    _:b0                    a blank node
    42, -3, 1.5, 2.0E3      a number of the rule language

Numbers and numeric literals also carry a value, so that comparisons and
arithmetic work on both (`?v > 30` holds for "31"^^xsd:double).

>>> terms = Dictionary()
>>> five = terms.intern("5")
>>> terms.number(five), terms.key(five)
(5, '5')
>>> terms.number(terms.intern('"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'))
Decimal('2.5')
>>> terms.intern_number(5) == five
True
"""

from __future__ import annotations

import re
from decimal import Decimal, InvalidOperation

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = f"<{RDF}type>"
XSD_STRING = f"<{XSD}string>"

#: The relation that holds RDF triples: `triple(s, p, o)`.
TRIPLE = "triple"

_INTEGER_TYPES = {
    f"{XSD}{name}"
    for name in (
        "integer", "int", "long", "short", "byte", "nonNegativeInteger",
        "positiveInteger", "nonPositiveInteger", "negativeInteger",
        "unsignedLong", "unsignedInt", "unsignedShort", "unsignedByte",
    )
}
_NUMBER = re.compile(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_TYPED_LITERAL = re.compile(r'"(.*)"\^\^<([^>]*)>\Z', re.S)


def number_of_key(key: str):
    """The numeric value of a written term, or None if it is not a number."""
    first = key[0]
    if first == '"':
        typed = _TYPED_LITERAL.match(key)
        if typed is None:
            return None
        lexical, datatype = typed.groups()
        try:
            if datatype in _INTEGER_TYPES:
                return int(lexical)
            if datatype == f"{XSD}decimal":
                return Decimal(lexical)
            if datatype in (f"{XSD}double", f"{XSD}float"):
                return float(lexical)
        except (ValueError, InvalidOperation):
            return None
        return None
    if first.isdigit() or first in "+-.":
        if not _NUMBER.match(key):
            return None
        if "." not in key and "e" not in key and "E" not in key:
            return int(key)
        if "e" in key or "E" in key:
            return float(key)
        return Decimal(key)
    return None


def key_of_number(value) -> str:
    """The written form of a computed number."""
    if isinstance(value, float):
        return repr(value)
    return str(int(value) if isinstance(value, bool) else value)


_ESCAPE = re.compile(r"\\(u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)", re.S)
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if code[0] in "uU" and len(code) > 1:
        return chr(int(code[1:], 16))
    return _SIMPLE_ESCAPES.get(code, code)


def canonical_literal(key: str) -> str:
    """One written form per literal: "a"^^xsd:string is "a" (RDF 1.1), and only
    `\\`, `"`, newline and carriage return are escaped (\\u00E9 is é), as rdflib writes it."""
    suffix = "^^" + XSD_STRING
    if key.endswith('"' + suffix):
        key = key[: -len(suffix)]
    if "\\" not in key:
        return key
    end = key.rindex('"')
    lexical = _ESCAPE.sub(_unescape, key[1:end])
    lexical = lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{lexical}"{key[end + 1:]}'


class Dictionary:
    """A two-way map between written terms and dense integer ids."""

    __slots__ = ("_ids", "_keys", "_numbers", "_int_ids")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._keys: list[str] = []
        self._numbers: list = []
        self._int_ids: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self._keys)

    def __repr__(self) -> str:
        return f"<Dictionary terms={len(self._keys)}>"

    def intern(self, key: str) -> int:
        """The id of a written term, creating it on first sight."""
        found = self._ids.get(key)
        if found is not None:
            return found
        new = len(self._keys)
        self._ids[key] = new
        self._keys.append(key)
        self._numbers.append(number_of_key(key))
        return new

    def find(self, key: str) -> int | None:
        """The id of a written term if it was ever interned."""
        return self._ids.get(key)

    def intern_int(self, value: int) -> int:
        """Fast path for time points and other ints."""
        found = self._int_ids.get(value)
        if found is None:
            found = self._int_ids[value] = self.intern(str(value))
        return found

    def intern_number(self, value) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return self.intern_int(value)
        return self.intern(key_of_number(value))

    def key(self, term: int) -> str:
        return self._keys[term]

    def number(self, term: int):
        """The numeric value of a term, or None."""
        return self._numbers[term]

    @property
    def numbers(self) -> list:
        """id -> numeric value (or None); the engine's hot path indexes it directly."""
        return self._numbers

    @property
    def keys(self) -> list[str]:
        return self._keys
