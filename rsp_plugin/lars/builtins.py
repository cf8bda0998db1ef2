"""Comparisons and arithmetic over term ids: what `?v >= 100` and `X = Y + 1` mean.

Numbers (of the rule language, and RDF literals of numeric datatypes) compare
by value; other terms are only equal to themselves and have no order, so
`<`-like comparisons involving them are false. `/` of two integers is exact
(an integer when it divides, else a decimal); division by zero has no value,
so the rule does not fire for that binding. Arithmetic with an RDF literal
gives an RDF literal, as SPARQL would: the operands' wider type, `/` of
integers an xsd:decimal, the canonical form (`79 * 1` of `"79"^^xsd:double` is
`"7.9E1"^^xsd:double`, never a bare `79.0`).

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> compare(">=", terms.intern('"100"^^<http://www.w3.org/2001/XMLSchema#double>'), terms.intern("100"), terms.numbers)
True
>>> terms.key(calculate("/", terms.intern("7"), terms.intern("2"), terms))
'3.5'
>>> terms.key(calculate("*", terms.intern('"79"^^<http://www.w3.org/2001/XMLSchema#double>'), terms.intern("1"), terms))
'"7.9E1"^^<http://www.w3.org/2001/XMLSchema#double>'
"""

from __future__ import annotations

import operator
from decimal import Decimal

from ..core.terms import Dictionary
from ..core.xsd import RANK, number_key, rank_of_value, to_float32
from .limits import NumericOverflow, check_number

_ORDER = {"<": operator.lt, "<=": operator.le, ">": operator.gt, ">=": operator.ge}


def compare(op: str, left: int, right: int, numbers: list) -> bool:
    a, b = numbers[left], numbers[right]
    if a is not None and b is not None:
        if op == "=":
            return a == b
        if op == "!=":
            return a != b
        return _ORDER[op](a, b)
    if op == "=":
        return left == right
    if op == "!=":
        return left != right
    return False


def calculate(op: str, left: int, right: int, terms: Dictionary) -> int | None:
    """The id of `left op right`, or None when it has no value; `NumericOverflow` past the
    range of numbers (`limits.py`). With an RDF literal among them, the result is an RDF
    literal as SPARQL makes it (`_rdf_value`); numbers of the rule language give one."""
    numbers = terms.numbers
    a, b = numbers[left], numbers[right]
    if a is None or b is None:
        return None
    keys = terms.keys
    if keys[left][0] == '"' or keys[right][0] == '"':
        return _rdf_calculate(op, left, right, a, b, terms)
    try:
        value = _value(op, a, b)
    except NumericOverflow:
        raise
    except ArithmeticError:  # float(10**400), a Decimal past its exponent range
        shown = [key if len(key) <= 25 else key[:25] + "..." for key in (terms.key(left), terms.key(right))]
        raise NumericOverflow(f"{shown[0]} {op} {shown[1]} is beyond the range of numbers (±1.8e308)") from None
    if value is None:
        return None
    return terms.intern_number(check_number(value))


def _rdf_calculate(op: str, left: int, right: int, a, b, terms: Dictionary) -> int | None:
    """SPARQL's arithmetic (op:numeric-add, ...): both operands promoted to the wider type (a
    number of the rule language typed as Turtle reads it), `/` of integers a decimal, the result
    in its canonical form (`xsdnumbers`): `"26.1"^^xsd:decimal * 3` is `"78.3"^^xsd:decimal`."""
    keys = terms.keys
    ranks = []
    for term, value in ((left, a), (right, b)):
        key = keys[term]
        ranks.append(RANK.get(key[key.rindex("<") + 1:-1], 3) if key[0] == '"' else rank_of_value(value))
    rank = max(ranks)
    try:
        if rank >= 2:
            x, y = float(a), float(b)
        elif rank == 1:
            x, y = Decimal(a), Decimal(b)
        else:
            x, y = int(a), int(b)
        if op == "+":
            value = x + y
        elif op == "-":
            value = x - y
        elif op == "*":
            value = x * y
        elif y == 0:
            return None
        elif rank <= 1:
            value, rank = Decimal(x) / Decimal(y), 1
        else:
            value = x / y
        if rank == 2:
            value = to_float32(value)
        check_number(value)
        return terms.intern(number_key(value, rank))
    except NumericOverflow:
        raise
    except (ArithmeticError, ValueError):  # float(10**400), an infinite or NaN value
        shown = [key if len(key) <= 25 else key[:25] + "..." for key in (keys[left], keys[right])]
        raise NumericOverflow(f"{shown[0]} {op} {shown[1]} is beyond the range of numbers (±1.8e308)") from None


def _value(op: str, a, b):
    if isinstance(a, float) != isinstance(b, float):
        a, b = float(a), float(b)
    if op == "+":
        value = a + b
    elif op == "-":
        value = a - b
    elif op == "*":
        value = a * b
    else:
        if b == 0:
            return None
        if isinstance(a, int) and isinstance(b, int):
            value = a // b if a % b == 0 else Decimal(a) / Decimal(b)
        else:
            value = a / b
    return value


# bindings (the reference evaluators': a comparison or arithmetic read under a variable binding) ----------


def bound_value(expression, binding: dict, terms: Dictionary):
    """An argument's id under `binding`: a variable's value, arithmetic calculated (None: undefined)."""
    from .program import Arithmetic, Var

    if isinstance(expression, Var):
        return binding[expression]
    if isinstance(expression, Arithmetic):
        left, right = bound_value(expression.left, binding, terms), bound_value(expression.right, binding, terms)
        if left is None or right is None:
            return None
        return calculate(expression.op, left, right, terms)
    return expression


def bind_comparison(literal, binding: dict, terms: Dictionary) -> dict | None:
    """`binding` if the comparison holds under it, extended if `X = e` binds its one free X; else None."""
    free = literal.variables() - binding.keys()
    if free:
        (variable,) = free
        other = literal.right if literal.left == variable else literal.left
        value = bound_value(other, binding, terms)
        return None if value is None else {**binding, variable: value}
    left, right = bound_value(literal.left, binding, terms), bound_value(literal.right, binding, terms)
    if left is None or right is None:
        return None
    return binding if compare(literal.op, left, right, terms.numbers) else None
