"""Numbers as XSD writes them: canonical lexical forms, and the ranks of numeric type promotion.

One home for the forms every computed number takes, whichever path computed it
(the SPARQL evaluators' `sparql_values`, the rule engines' arithmetic over RDF
literals in `lars.builtins`, a rule's number in a derived triple): xsd:integer
`79`, xsd:decimal `79.0` and `7.25` (no exponent, a digit on each side of the
point), xsd:double and xsd:float `7.9E1` (one digit before the point, an
exponent always). Values read from data keep the form they were written in.

>>> number_key(79, 0), number_key(Decimal("79.00"), 1), number_key(79.0, 3)
('"79"^^<http://www.w3.org/2001/XMLSchema#integer>', '"79.0"^^<http://www.w3.org/2001/XMLSchema#decimal>', '"7.9E1"^^<http://www.w3.org/2001/XMLSchema#double>')
"""

from __future__ import annotations

import math
import struct
from decimal import Decimal

XSD = "http://www.w3.org/2001/XMLSchema#"
#: numeric type promotion: integer < decimal < float < double, and the datatype of each rank
RANK_TYPE = {0: XSD + "integer", 1: XSD + "decimal", 2: XSD + "float", 3: XSD + "double"}
_INTEGER_NAMES = ("integer", "int", "long", "short", "byte", "nonNegativeInteger", "positiveInteger",
                  "nonPositiveInteger", "negativeInteger", "unsignedLong", "unsignedInt", "unsignedShort",
                  "unsignedByte")
#: datatype IRI -> rank (the integer types derived from xsd:integer are rank 0)
RANK = {XSD + "decimal": 1, XSD + "float": 2, XSD + "double": 3, **{XSD + name: 0 for name in _INTEGER_NAMES}}


def decimal_lexical(value: Decimal) -> str:
    """XSD canonical decimal: no exponent, at least one digit on each side of the point."""
    if not value.is_finite():
        raise ValueError("not a decimal")
    text = format(value.normalize(), "f")
    if "." not in text:
        text += ".0"
    if text.startswith("-0.0") and value == 0:
        text = "0.0"
    return text


def double_lexical(value: float) -> str:
    """XSD canonical double: mantissa with one digit before the point, E, exponent (1.0E0)."""
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "INF" if value > 0 else "-INF"
    if value == 0:
        return "-0.0E0" if math.copysign(1, value) < 0 else "0.0E0"
    sign, digits, exponent = Decimal(repr(value)).as_tuple()
    exponent_value = len(digits) + exponent - 1
    written = "".join(map(str, digits)).rstrip("0") or "0"
    head, tail = written[0], written[1:] or "0"
    return f"{'-' if sign else ''}{head}.{tail}E{exponent_value}"


def to_float32(value: float) -> float:
    """A double rounded to the nearest xsd:float (infinite past its range)."""
    try:
        return struct.unpack("f", struct.pack("f", value))[0]
    except OverflowError:
        return math.copysign(math.inf, value)


def lexical(value, rank: int) -> str:
    """The canonical lexical form of `value` at `rank` (0 integer, 1 decimal, 2 float, 3 double)."""
    if rank == 0:
        return str(int(value))
    if rank == 1:
        return decimal_lexical(Decimal(value))
    return double_lexical(float(value))


def number_key(value, rank: int) -> str:
    """The N-Triples key of a number in its canonical form: `"79"^^<...#integer>`."""
    return f'"{lexical(value, rank)}"^^<{RANK_TYPE[rank]}>'


def rank_of_value(value) -> int:
    """The rank a rule-language number has among RDF literals (`30` is xsd:integer, `2.5` xsd:decimal,
    `2.5e0` xsd:double, as Turtle reads them)."""
    if isinstance(value, float):
        return 3
    if isinstance(value, Decimal):
        return 1
    return 0


__all__ = ["RANK", "RANK_TYPE", "decimal_lexical", "double_lexical", "lexical", "number_key", "rank_of_value",
           "to_float32"]
