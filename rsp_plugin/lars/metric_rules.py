"""The model of a DatalogMTL program: metric formulas over atoms, as written.

    H(X) :- B1(X), Boxminus[1,1]B2(X)                 a rule
    Boxplus[0,2]H(X) :- ...                           a head placed over [t, t + 2]
    A(X)Since(0,3]B(X)                                B at some t - d, d in (0, 3], A ever since

A formula is an `Atom` (`rsp_plugin.lars.program.Atom`: the same atoms, terms
and dictionary as LARS), a `Temporal` (one operator over one formula) or a
`Binary` (Since, Until). Intervals keep their rational endpoints and brackets
as written; `Interval.integers()` is what they mean on the integer timeline.
The program is checked (`check.py`) and then compiled onto the engine
(`lower.py`); the reference evaluator (`reference.py`) reads this model as is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from fractions import Fraction
from math import ceil, floor
from typing import Union

from .program import Atom, Comparison, ExtendedAtom, Location, Var

BOXMINUS = "Boxminus"
DIAMONDMINUS = "Diamondminus"
BOXPLUS = "Boxplus"
DIAMONDPLUS = "Diamondplus"
SINCE = "Since"
UNTIL = "Until"

PAST_OPERATORS = (BOXMINUS, DIAMONDMINUS, SINCE)
FUTURE_OPERATORS = (BOXPLUS, DIAMONDPLUS, UNTIL)
#: How the operators may be written (any case) -> their name.
UNARY_NAMES = {name.lower(): name for name in (BOXMINUS, DIAMONDMINUS, BOXPLUS, DIAMONDPLUS)}
BINARY_NAMES = {name.lower(): name for name in (SINCE, UNTIL)}


@dataclass(frozen=True)
class Interval:
    """A set of distances <low, high> (`high` None: unbounded), brackets included.

    >>> Interval(Fraction(0), Fraction(3), True, False).integers()   # (0,3]
    (1, 3)
    >>> Interval(Fraction(1, 2), Fraction(5, 2), False, False).integers()   # [0.5,2.5]
    (1, 2)
    >>> Interval(Fraction(0), Fraction(1), True, True).integers() is None   # (0,1): no integer
    True
    """

    low: Fraction
    high: Fraction | None
    low_open: bool = False
    high_open: bool = False

    def contains(self, distance) -> bool:
        if distance < self.low or (self.low_open and distance == self.low):
            return False
        if self.high is None:
            return True
        return distance < self.high or (not self.high_open and distance == self.high)

    def integers(self) -> tuple[int, int | None] | None:
        """The integers it contains, as [first, last] (last None: unbounded); None if there are none."""
        first = floor(self.low) + 1 if self.low_open and self.low == floor(self.low) else ceil(self.low)
        if self.high is None:
            return first, None
        last = ceil(self.high) - 1 if self.high_open and self.high == ceil(self.high) else floor(self.high)
        return (first, last) if first <= last else None

    def __str__(self) -> str:
        high = "inf" if self.high is None else _number(self.high)
        return f"{'(' if self.low_open else '['}{_number(self.low)},{high}{')' if self.high_open or self.high is None else ']'}"


def _number(value: Fraction) -> str:
    if value.denominator == 1:
        return str(value.numerator)
    return str(float(value)) if (value * 1000).denominator == 1 else str(value)


@dataclass(frozen=True)
class Temporal:
    """`Operator[interval] operand` with a unary operator (Boxminus, Diamondminus, Boxplus, Diamondplus)."""

    operator: str
    interval: Interval
    operand: "Formula"
    location: Location | None = field(default=None, compare=False)

    def variables(self) -> set[Var]:
        return self.operand.variables()



@dataclass(frozen=True)
class Binary:
    """`left Since[interval] right` (or Until)."""

    operator: str
    interval: Interval
    left: "Formula"
    right: "Formula"
    location: Location | None = field(default=None, compare=False)

    def variables(self) -> set[Var]:
        return self.left.variables() | self.right.variables()


@dataclass(frozen=True)
class Written:
    """An atom with the place it was written (formulas keep locations for messages)."""

    atom: Atom
    location: Location | None = field(default=None, compare=False)

    def variables(self) -> set[Var]:
        return self.atom.variables()


Formula = Union[Written, Temporal, Binary]
#: A body literal: a metric formula, or a comparison / LARS extended atom (the LARS form mixes them).
BodyLiteral = Union[Formula, Comparison, ExtendedAtom]


@dataclass(frozen=True)
class HeadOperator:
    operator: str
    interval: Interval
    location: Location | None = field(default=None, compare=False)


@dataclass(frozen=True)
class MetricRule:
    """`ops head :- body`: `head_operators` outermost first (`Boxplus[0,1]Boxplus[2,2]H` -> two)."""

    head: Atom
    body: tuple[BodyLiteral, ...]
    head_operators: tuple[HeadOperator, ...] = ()
    text: str = ""
    location: Location | None = field(default=None, compare=False)
    head_location: Location | None = field(default=None, compare=False)

    def __str__(self) -> str:
        return self.text or repr(self)


def formula_atoms(formula) -> list[Written]:
    """Every atom inside a formula, left to right."""
    if isinstance(formula, Written):
        return [formula]
    if isinstance(formula, Temporal):
        return formula_atoms(formula.operand)
    if isinstance(formula, Binary):
        return formula_atoms(formula.left) + formula_atoms(formula.right)
    return []
