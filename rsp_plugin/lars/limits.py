"""What a LARS program may ask for, and what happens past it: one located line, never a hang.

    [RANGE n]       n <= MAX_RANGE time points (time arithmetic stays exact, below NEVER_EXPIRES)
    [COUNT n]       1 <= n <= MAX_COUNT data atoms (what a tuple window can index)
    numbers         |x| <= MAX_NUMBER, the range of xsd:double, in the program and in what
                    its arithmetic computes (so a rule cannot grow a number without end)
    derivations     at most `max_derivations` new atoms per time point (default
                    DEFAULT_MAX_DERIVATIONS): a rule that invents values,
                    `p(X) :- p(Y), X = Y + 1 .`, stops there with a message naming it
    joins           at most DERIVATIONS_PER_ATOM * `max_derivations` derivations (head
                    groundings, repeats counted) of one rule's evaluation, counted while it
                    joins: a product, `q(X,Y,Z,W) :- a(X), a(Y), a(Z), a(W) .`, stops there
                    (over 100 facts it made 10^8 of them and ended in MemoryError at 6 GB)

>>> check_number(10 ** 400)
Traceback (most recent call last):
...
rsp_plugin.lars.limits.NumericOverflow: 1000000000000000000000000... is beyond the range of numbers (±1.8e308)
"""

from __future__ import annotations

import math
import sys
from decimal import Decimal

from ..core.errors import LocatedError

MAX_RANGE = 2**53
MAX_COUNT = 2**31 - 1
MAX_NUMBER = sys.float_info.max
#: New atoms one time point may derive before the engine stops: far above what the papers'
#: workloads derive per time point (tens of thousands), reached in about a second by a loop.
DEFAULT_MAX_DERIVATIONS = 1_000_000
#: Derivations (repeats counted) one rule's evaluation may make per new atom allowed, while it joins:
#: repeats are normal (a head with many witnesses, a full evaluation deriving again what holds),
#: a product of atoms is not. 4 x 1,000,000 derivations hold about 600 MB at most.
DERIVATIONS_PER_ATOM = 4


class TooManyDerivations(Exception):
    """A rule's evaluation passed its bound while it joined (`plan.py`); the engine names the rule."""


def stop_joining():
    """What a compiled join calls once it emitted more than its bound (`plan.py`)."""
    raise TooManyDerivations


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


def derivation_bound(max_derivations: int) -> int:
    """The most derivations one rule's evaluation may make while it joins."""
    return DERIVATIONS_PER_ATOM * max_derivations


def too_large_a_join(rule, max_derivations: int, time_point: int) -> LimitError:
    """A rule whose evaluation passed `derivation_bound` while it joined, at its place."""
    message = (
        f"more than {derivation_bound(max_derivations)} derivations of one rule at time point {time_point}: "
        f"the rule '{rule.text}' joins more than can be held (atoms that share no variable make every "
        f"combination); raise the bound with --max-derivations N (max_derivations=N; a rule's joins may "
        f"make {DERIVATIONS_PER_ATOM} x N derivations)"
    )
    return _at_rule(rule, message)


def too_many_derivations(rule, bound: int, time_point: int) -> LimitError:
    message = (
        f"more than {bound} new atoms at time point {time_point}: the rule '{rule.text}' keeps "
        "deriving new ones (a rule that invents values, such as X = Y + 1 in a recursive rule, "
        "never stops); raise the bound with --max-derivations N (max_derivations=N)"
    )
    return _at_rule(rule, message)


def _at_rule(rule, message: str) -> LimitError:
    location = rule.location
    if location is None:
        return LimitError(message)
    return LimitError(message, location.filename, location.line, location.column)
