"""RDF terms as SPARQL 1.1 values: typing, comparison, effective boolean value, casts.

One small module with the spec's rules (SPARQL 1.1 section 17, XPath casting), so
that every evaluation path (the algebra evaluator, the fast path, a columnar
batch path) decides alike. Terms are the engine's written keys (N-Triples form,
`<iri>`, `_:b`, `"lex"^^<dt>`, `"lex"@en`, `"lex"`); `term(key)` parses one
into a `Term` once and remembers it.

A type error is `SparqlError`: FILTER drops the row, BIND leaves the variable
unbound, and so on (the caller decides).

>>> compare(term('"2"^^<http://www.w3.org/2001/XMLSchema#integer>'), term('"1e3"^^<http://www.w3.org/2001/XMLSchema#double>'), "<")
True
>>> compare(term('"true"^^<http://www.w3.org/2001/XMLSchema#boolean>'), term('"1e3"^^<http://www.w3.org/2001/XMLSchema#double>'), "<")
Traceback (most recent call last):
...
rsp_plugin.query.sparql_values.SparqlError: cannot compare "true"^^<http://www.w3.org/2001/XMLSchema#boolean> < "1e3"^^<http://www.w3.org/2001/XMLSchema#double>
>>> cast(term('"+33.3300"'), XSD + "decimal").key
'"33.33"^^<http://www.w3.org/2001/XMLSchema#decimal>'
"""

from __future__ import annotations

import math
import re
from datetime import datetime, timedelta, timezone
from decimal import Decimal

from ..core.regexes import LazyPattern
from ..core.terms import unescape

#: integer types derived from xsd:integer -> their bounds; numeric type promotion order (integer < decimal <
#: float < double) and the datatype of each rank: XSD's table (`core.xsd`)
from ..core.xsd import INTEGER_TYPES, RANK, RANK_TYPE, double_lexical
from ..core.xsd import decimal_lexical as _decimal_lexical
from ..core.xsd import to_float32 as _to_float32

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF_LANG_STRING = "http://www.w3.org/1999/02/22-rdf-syntax-ns#langString"
XSD_STRING = XSD + "string"
XSD_BOOLEAN = XSD + "boolean"
XSD_INTEGER = XSD + "integer"
XSD_DECIMAL = XSD + "decimal"
XSD_FLOAT = XSD + "float"
XSD_DOUBLE = XSD + "double"
XSD_DATETIME = XSD + "dateTime"


_INTEGER = re.compile(r"[+-]?[0-9]+\Z")
_DECIMAL = LazyPattern(r"[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)\Z")
_DOUBLE = LazyPattern(r"([+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)([eE][+-]?[0-9]+)?|[+-]?INF|NaN)\Z")
_DATETIME = LazyPattern(r"(-?[0-9]{4,})-([0-9]{2})-([0-9]{2})T([0-9]{2}):([0-9]{2}):([0-9]{2}(?:\.[0-9]+)?)"
                       r"(Z|[+-][0-9]{2}:[0-9]{2})?\Z")
_LITERAL = re.compile(r'"((?:[^"\\]++|\\.)*+)"(?:@([A-Za-z]+(?:-[A-Za-z0-9]+)*)|\^\^<([^>]*)>)?\Z', re.S)


class SparqlError(Exception):
    """A SPARQL expression error (a type error, an unbound variable, ...)."""


class Term:
    """One RDF term: kind "iri" | "blank" | "literal"; a literal has a lexical form and a
    datatype (rdf:langString with a language, xsd:string for a simple literal)."""

    __slots__ = ("key", "kind", "value", "datatype", "language", "_number", "_datetime")

    def __init__(self, key: str, kind: str, value: str, datatype: str | None = None, language: str | None = None):
        self.key = key
        self.kind = kind
        self.value = value          # IRI, blank node label or lexical form
        self.datatype = datatype
        self.language = language
        self._number = _UNKNOWN
        self._datetime = _UNKNOWN

    def __repr__(self) -> str:
        return f"Term({self.key})"

    def __eq__(self, other) -> bool:
        return isinstance(other, Term) and other.key == self.key

    def __hash__(self) -> int:
        return hash(self.key)

    @property
    def is_simple(self) -> bool:
        """A simple literal or an xsd:string (RDF 1.1: the same)."""
        return self.kind == "literal" and self.datatype == XSD_STRING

    @property
    def is_string(self) -> bool:
        """A string literal in the sense of SPARQL's string functions: simple, xsd:string or language-tagged."""
        return self.kind == "literal" and (self.datatype == XSD_STRING or self.language is not None)

    @property
    def number(self):
        """(rank, value) for a valid numeric literal, else None (an ill-typed one too)."""
        if self._number is _UNKNOWN:
            self._number = _parse_number(self) if self.kind == "literal" else None
        return self._number

    @property
    def datetime(self):
        """(datetime in UTC, had a timezone) for a valid xsd:dateTime, else None."""
        if self._datetime is _UNKNOWN:
            self._datetime = _parse_datetime(self.value) if self.datatype == XSD_DATETIME else None
        return self._datetime


_UNKNOWN = object()
_CACHE: dict[str, Term] = {}


def term(key: str) -> Term:
    """The `Term` of a written key (remembered)."""
    found = _CACHE.get(key)
    if found is not None:
        return found
    first = key[0]
    if first == "<":
        found = Term(key, "iri", key[1:-1])
    elif first == "_":
        found = Term(key, "blank", key[2:])
    else:
        match = _LITERAL.match(key)
        if match is None:
            raise SparqlError(f"not an RDF term: {key}")
        lexical, language, datatype = match.groups()
        lexical = unescape(lexical)
        if language:
            found = Term(key, "literal", lexical, RDF_LANG_STRING, language)
        else:
            found = Term(key, "literal", lexical, datatype or XSD_STRING)
    if len(_CACHE) > 200_000:
        _CACHE.clear()
    _CACHE[key] = found
    return found


def _escape(lexical: str) -> str:
    return lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")


def iri(value: str) -> Term:
    return term(f"<{value}>")


def blank(label: str) -> Term:
    return term(f"_:{label}")


def literal(lexical: str, datatype: str | None = None, language: str | None = None) -> Term:
    """A literal term from its parts (a simple literal when neither is given)."""
    if language:
        return term(f'"{_escape(lexical)}"@{language}')
    if datatype is None or datatype == XSD_STRING:
        return term(f'"{_escape(lexical)}"')
    return term(f'"{_escape(lexical)}"^^<{datatype}>')


TRUE = literal("true", XSD_BOOLEAN)
FALSE = literal("false", XSD_BOOLEAN)


def boolean(value: bool) -> Term:
    return TRUE if value else FALSE


def string_like(lexical: str, like: Term) -> Term:
    """A string result that keeps the language tag (or xsd:string) of an argument."""
    return literal(lexical, language=like.language) if like.language else literal(lexical)


# numbers ---------------------------------------------------------------------------------


def _parse_number(t: Term):
    rank = RANK.get(t.datatype)
    if rank is None:
        return None
    lexical = t.value.strip()
    if rank == 0:
        if not _INTEGER.match(lexical):
            return None
        value = int(lexical)
        low, high = INTEGER_TYPES[t.datatype]
        if (low is not None and value < low) or (high is not None and value > high):
            return None
        return 0, value
    if rank == 1:
        if not _DECIMAL.match(lexical):
            return None
        return 1, Decimal(lexical)
    if not _DOUBLE.match(lexical):
        return None
    if lexical.endswith("INF"):
        return rank, -math.inf if lexical.startswith("-") else math.inf
    value = float(lexical)
    if rank == 2:
        value = _to_float32(value)
    return rank, value


def number(value, rank: int) -> Term:
    """A numeric literal in its XSD canonical form: 2, 2.5, 2.0E0 (double and float)."""
    datatype = RANK_TYPE[rank]
    if rank == 0:
        return literal(str(int(value)), datatype)
    if rank == 1:
        return literal(decimal_lexical(Decimal(value)), datatype)
    return literal(double_lexical(float(value)), datatype)


def decimal_lexical(value: Decimal) -> str:
    """XSD canonical decimal (`xsdnumbers.decimal_lexical`; a SparqlError for no finite value)."""
    try:
        return _decimal_lexical(value)
    except ValueError:
        raise SparqlError("not a decimal") from None


def numeric(t: Term):
    """(rank, value) or a type error."""
    found = t.number
    if found is None:
        raise SparqlError(f"not a number: {t.key}")
    return found


def promote(a, b):
    """Both operands at the rank of the wider one: (rank, x, y)."""
    rank = max(a[0], b[0])
    x, y = a[1], b[1]
    if rank >= 2:
        x, y = float(x), float(y)
    elif rank == 1:
        x, y = Decimal(x), Decimal(y)
    return rank, x, y


def arithmetic(op: str, a: Term, b: Term) -> Term:
    rank, x, y = promote(numeric(a), numeric(b))
    if op == "+":
        value = x + y
    elif op == "-":
        value = x - y
    elif op == "*":
        value = x * y
    else:
        if rank <= 1:
            if y == 0:
                raise SparqlError("division by zero")
            rank = 1
            value = Decimal(x) / Decimal(y)
        elif y == 0:
            value = math.nan if x == 0 or math.isnan(x) else math.copysign(math.inf, x) * math.copysign(1, y)
        else:
            value = x / y
    if rank == 2:
        value = _to_float32(value)
    return number(value, rank)


def total(values: list) -> Term:
    """SUM: the values added with type promotion (0 for none); a non-number is a type error."""
    if not values:
        return number(0, 0)
    rank = 0
    numbers = []
    for value in values:
        found = numeric(value)
        numbers.append(found)
        if found[0] > rank:
            rank = found[0]
    if rank == 0:
        return number(sum(value for _, value in numbers), 0)
    if rank == 1:
        return number(sum((Decimal(value) for _, value in numbers), Decimal(0)), 1)
    result = math.fsum(float(value) for _, value in numbers) if all(
        math.isfinite(float(value)) for _, value in numbers) else sum(float(value) for _, value in numbers)
    return number(_to_float32(result) if rank == 2 else result, rank)


def average(values: list) -> Term:
    """AVG: SUM / COUNT (0 for none; integers give an xsd:decimal)."""
    if not values:
        return number(0, 0)
    return arithmetic("/", total(values), number(len(values), 0))


# booleans, dates -----------------------------------------------------------------------------


def ebv(t: Term) -> bool:
    """The effective boolean value (17.2.2), or a type error."""
    if t.kind != "literal":
        raise SparqlError(f"no boolean value: {t.key}")
    if t.datatype == XSD_BOOLEAN:
        if t.value in ("true", "1"):
            return True
        if t.value in ("false", "0"):
            return False
        return False  # an ill-typed boolean is false
    if t.datatype == XSD_STRING or t.language is not None:
        return bool(t.value)
    if t.datatype in RANK:
        found = t.number
        if found is None:
            return False  # an ill-typed number is false
        value = found[1]
        return not (value == 0 or (isinstance(value, float) and math.isnan(value)))
    raise SparqlError(f"no boolean value: {t.key}")


def _parse_datetime(lexical: str):
    match = _DATETIME.match(lexical.strip())
    if match is None:
        return None
    year, month, day, hour, minute, second, zone = match.groups()
    try:
        whole = float(second)
        moment = datetime(int(year), int(month), int(day), tzinfo=timezone.utc) + timedelta(
            hours=int(hour), minutes=int(minute), seconds=whole)
    except (ValueError, OverflowError):
        return None
    if zone and zone != "Z":
        sign = -1 if zone[0] == "-" else 1
        moment -= sign * timedelta(hours=int(zone[1:3]), minutes=int(zone[4:6]))
    return moment, zone is not None


# comparison ------------------------------------------------------------------------------------

_OPERATORS = {"<": lambda c: c < 0, ">": lambda c: c > 0, "<=": lambda c: c <= 0, ">=": lambda c: c >= 0,
              "=": lambda c: c == 0, "!=": lambda c: c != 0}


def _kind(t: Term) -> str | None:
    """The family a literal compares within: number, string, boolean, dateTime (None: other)."""
    if t.kind != "literal":
        return None
    if t.datatype in RANK:
        return "number" if t.number is not None else None
    if t.datatype == XSD_STRING:
        return "string"
    if t.datatype == XSD_BOOLEAN:
        return "boolean" if t.value in ("true", "false", "1", "0") else None
    if t.datatype == XSD_DATETIME:
        return "dateTime" if t.datetime is not None else None
    if t.language is not None:
        return "lang"
    return None


def _order(t: Term, kind: str, other: Term):
    """-1 / 0 / 1 of t against other, both of `kind`."""
    if kind == "number":
        _, x, y = promote(t.number, other.number)
        if isinstance(x, float) and (math.isnan(x) or math.isnan(y)):
            return None
        return (x > y) - (x < y)
    if kind == "string":
        return (t.value > other.value) - (t.value < other.value)
    if kind == "boolean":
        x, y = t.value in ("true", "1"), other.value in ("true", "1")
        return (x > y) - (x < y)
    x, y = t.datetime[0], other.datetime[0]
    return (x > y) - (x < y)


def equal(a: Term, b: Term) -> bool:
    """`=`: value equality for the known literal types, RDF term equality else (17.4.1.7);
    a type error for two different literals whose values cannot be compared."""
    if a.key == b.key:
        if a.kind == "literal" and a.datatype in RANK and a.number is not None:
            value = a.number[1]
            return not (isinstance(value, float) and math.isnan(value))
        return True
    if a.kind != "literal" or b.kind != "literal":
        return False
    kind_a, kind_b = _kind(a), _kind(b)
    if kind_a is not None and kind_a == kind_b:
        if kind_a == "lang":
            return a.value == b.value and a.language.lower() == b.language.lower()
        found = _order(a, kind_a, b)
        return found == 0
    if kind_a is not None and kind_b is not None:
        return False  # known, different value spaces
    raise SparqlError(f"cannot compare {a.key} = {b.key}")


def compare(a: Term, b: Term, op: str) -> bool:
    """The relational operators (17.3): a type error where the spec has no operator."""
    if op == "=":
        return equal(a, b)
    if op == "!=":
        return not equal(a, b)
    kind = _kind(a)
    if kind is None or kind == "lang" or kind != _kind(b):
        raise SparqlError(f"cannot compare {a.key} {op} {b.key}")
    found = _order(a, kind, b)
    if found is None:
        return False  # NaN
    return _OPERATORS[op](found)


def same_term(a: Term, b: Term) -> bool:
    return a.key == b.key


def order_key(t: Term | None):
    """A sort key for ORDER BY (15.1): unbound, blank nodes, IRIs, literals; literals of one
    family by value, then by lexical form, then by datatype (so that MIN and MAX pick the same
    one of equal values, `"79"^^xsd:integer` or `"79"^^xsd:double`, in whatever order they come)."""
    if t is None:
        return (0,)
    if t.kind == "blank":
        return (1, t.value)
    if t.kind == "iri":
        return (2, t.value)
    kind = _kind(t)
    if kind == "number":
        value = t.number[1]
        if isinstance(value, float) and math.isnan(value):
            return (3, 0, -math.inf, t.value, t.datatype)
        return (3, 0, value if not isinstance(value, Decimal) else float(value), t.value, t.datatype)
    if kind == "dateTime":
        return (3, 1, t.datetime[0].timestamp(), t.value)
    if kind == "boolean":
        return (3, 2, t.value in ("true", "1"), t.value)
    if kind in ("string", "lang"):
        return (3, 3, t.value, t.language or "")
    return (3, 4, t.datatype or "", t.value)


# casts (17.5, XPath casting) ------------------------------------------------------------------------


def cast(t: Term, datatype: str) -> Term:
    """xsd:TYPE(t): a type error where XPath casting fails."""
    if t.kind == "blank" or (t.kind == "iri" and datatype != XSD_STRING):
        raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
    if datatype == XSD_STRING:
        return literal(t.value if t.kind == "iri" else string_value(t))
    lexical = t.value.strip()
    if t.is_simple and t.language is None:
        # from a string: the lexical form must be valid for the target type
        checked = literal(lexical, datatype)
        if datatype in RANK:
            if checked.number is None:
                raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
            rank, value = checked.number
            return number(value, rank) if rank != 2 else literal(double_lexical(value), XSD_FLOAT)
        if datatype == XSD_BOOLEAN:
            if lexical not in ("true", "false", "1", "0"):
                raise SparqlError(f"cannot cast {t.key} to xsd:boolean")
            return boolean(lexical in ("true", "1"))
        if datatype == XSD_DATETIME:
            if checked.datetime is None:
                raise SparqlError(f"cannot cast {t.key} to xsd:dateTime")
            return checked
        return checked
    if t.language is not None:
        raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
    if t.datatype == XSD_BOOLEAN:
        if _kind(t) is None:
            raise SparqlError(f"cannot cast {t.key}")
        flag = t.value in ("true", "1")
        if datatype == XSD_BOOLEAN:
            return boolean(flag)
        if datatype in RANK:
            rank = RANK[datatype]
            return _number_of_type(int(flag), datatype, rank)
        raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
    if t.datatype in RANK:
        found = t.number
        if found is None:
            raise SparqlError(f"cannot cast {t.key}")
        _, value = found
        if datatype == XSD_BOOLEAN:
            return boolean(not (value == 0 or (isinstance(value, float) and math.isnan(value))))
        if datatype in RANK:
            rank = RANK[datatype]
            if rank <= 1 and isinstance(value, float) and (math.isnan(value) or math.isinf(value)):
                raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
            if rank == 0:
                value = int(value)  # truncation towards zero
            elif rank == 1:
                value = Decimal(repr(value)) if isinstance(value, float) else Decimal(value)
            return _number_of_type(value, datatype, rank)
        raise SparqlError(f"cannot cast {t.key} to <{datatype}>")
    if t.datatype == XSD_DATETIME and datatype == XSD_DATETIME:
        if t.datetime is None:
            raise SparqlError(f"cannot cast {t.key}")
        return t
    raise SparqlError(f"cannot cast {t.key} to <{datatype}>")


def _number_of_type(value, datatype: str, rank: int) -> Term:
    if rank == 0:
        low, high = INTEGER_TYPES[datatype]
        if (low is not None and value < low) or (high is not None and value > high):
            raise SparqlError(f"{value} is out of the range of <{datatype}>")
        return literal(str(int(value)), datatype)
    if rank == 1:
        return literal(decimal_lexical(Decimal(value)), datatype)
    value = float(value)
    if rank == 2:
        value = _to_float32(value)
    return literal(double_lexical(value), datatype)


def string_value(t: Term) -> str:
    """STR() of a literal, numbers written as XPath casts them to xs:string."""
    if t.kind != "literal":
        return t.value
    if t.datatype in RANK and t.number is not None:
        rank, value = t.number
        if rank == 0:
            return str(value)
        if rank == 1:
            text = format(Decimal(value).normalize(), "f")
            return "0" if Decimal(value) == 0 else text
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "INF" if value > 0 else "-INF"
        if value == 0:
            return "0" if math.copysign(1, value) > 0 else "-0"
        if 1e-6 <= abs(value) < 1e6:
            text = format(Decimal(repr(value)).normalize(), "f")
            return text
        return double_lexical(value)
    if t.datatype == XSD_BOOLEAN and t.value in ("1", "0"):
        return "true" if t.value == "1" else "false"
    return t.value


__all__ = ["Term", "SparqlError", "term", "iri", "blank", "literal", "boolean", "number", "numeric", "promote",
           "arithmetic", "total", "average", "ebv", "equal", "compare", "same_term", "order_key", "cast", "string_value",
           "string_like", "XSD", "TRUE", "FALSE", "RANK"]
