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
from typing import NamedTuple

XSD = "http://www.w3.org/2001/XMLSchema#"
#: numeric type promotion: integer < decimal < float < double, and the datatype of each rank
RANK_TYPE = {0: XSD + "integer", 1: XSD + "decimal", 2: XSD + "float", 3: XSD + "double"}


class IntegerType(NamedTuple):
    """An integer datatype: the type it is derived from, and its inclusive bounds (None: unbounded)."""

    base: str
    low: int | None
    high: int | None


#: The one table of XSD's integer types (XSD 1.1 part 2; those of the OWL 2 RL datatype map), by local name:
#: every module that knows them (number reading, casts, literal checks, encoders) reads it here.
INTEGERS: dict[str, IntegerType] = {
    "integer": IntegerType("decimal", None, None),
    "nonPositiveInteger": IntegerType("integer", None, 0),
    "negativeInteger": IntegerType("nonPositiveInteger", None, -1),
    "long": IntegerType("integer", -2 ** 63, 2 ** 63 - 1),
    "int": IntegerType("long", -2 ** 31, 2 ** 31 - 1),
    "short": IntegerType("int", -2 ** 15, 2 ** 15 - 1),
    "byte": IntegerType("short", -128, 127),
    "nonNegativeInteger": IntegerType("integer", 0, None),
    "unsignedLong": IntegerType("nonNegativeInteger", 0, 2 ** 64 - 1),
    "unsignedInt": IntegerType("unsignedLong", 0, 2 ** 32 - 1),
    "unsignedShort": IntegerType("unsignedInt", 0, 2 ** 16 - 1),
    "unsignedByte": IntegerType("unsignedShort", 0, 255),
    "positiveInteger": IntegerType("nonNegativeInteger", 1, None),
}
#: the numeric types that are not integers, by local name
NON_INTEGERS = ("decimal", "float", "double")
#: the integer types' IRIs -> their bounds
INTEGER_TYPES: dict[str, tuple[int | None, int | None]] = {XSD + name: (t.low, t.high) for name, t in INTEGERS.items()}
#: the IRIs of every numeric datatype
NUMERIC_TYPES = frozenset(INTEGER_TYPES) | {XSD + name for name in NON_INTEGERS}
#: datatype IRI -> rank (the integer types derived from xsd:integer are rank 0)
RANK = {XSD + "decimal": 1, XSD + "float": 2, XSD + "double": 3, **{name: 0 for name in INTEGER_TYPES}}


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


__all__ = ["INTEGERS", "INTEGER_TYPES", "IntegerType", "NON_INTEGERS", "NUMERIC_TYPES", "RANK", "RANK_TYPE", "decimal_lexical", "double_lexical", "lexical", "number_key", "rank_of_value",
           "to_float32"]
