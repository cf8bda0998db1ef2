"""What a LARS program may ask for, and what happens past it: one located line, never a hang.

    [RANGE n]       n <= MAX_RANGE time points (time arithmetic stays exact, below NEVER_EXPIRES)
    [COUNT n]       1 <= n <= MAX_COUNT data atoms (what a tuple window can index)
    numbers         |x| <= MAX_NUMBER, the range of xsd:double, in the program and in what
                    its arithmetic computes (so a rule cannot grow a number without end)
    derivations     at most `max_derivations` new atoms per time point (default
                    DEFAULT_MAX_DERIVATIONS): a rule that invents values,
                    `p(X) :- p(Y), X = Y + 1 .`, stops there with a message naming it

>>> check_number(10 ** 400)
Traceback (most recent call last):
...
rsp_plugin.lars.limits.NumericOverflow: 1000000000000000000000000... is beyond the range of numbers (±1.8e308)
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal

from ..errors import LocatedError

MAX_RANGE = 2**53
MAX_COUNT = 2**31 - 1
MAX_NUMBER = sys.float_info.max
#: New atoms one time point may derive before the engine stops: far above what the papers'
#: workloads derive per time point (tens of thousands), reached in about a second by a loop.
DEFAULT_MAX_DERIVATIONS = 1_000_000


class NumericOverflow(ArithmeticError):
    """A number past MAX_NUMBER; the engine turns it into a `LimitError` at the rule."""


class LimitError(LocatedError):
    """A program that asks for more than can be held or computed, at the place that asks."""


def check_number(value):
    """`value` if it is within the range of numbers, else `NumericOverflow`."""
    if isinstance(value, float):
        if math.isinf(value) or math.isnan(value):
            raise NumericOverflow(f"{value} is beyond the range of numbers (±1.8e308)")
        return value
    if isinstance(value, Decimal) and not value.is_finite():
        raise NumericOverflow(f"{value} is beyond the range of numbers (±1.8e308)")
    if abs(value) > MAX_NUMBER:
        shown = str(value)
        shown = shown if len(shown) <= 25 else shown[:25] + "..."
        raise NumericOverflow(f"{shown} is beyond the range of numbers (±1.8e308)")
    return value


def too_many_derivations(rule, bound: int, time_point: int) -> LimitError:
    location = rule.location
    message = (
        f"more than {bound} new atoms at time point {time_point}: the rule '{rule.text}' keeps "
        "deriving new ones (a rule that invents values, such as X = Y + 1 in a recursive rule, "
        "never stops); raise the bound with --max-derivations N (max_derivations=N)"
    )
    if location is None:
        return LimitError(message)
    return LimitError(message, location.filename, location.line, location.column)
