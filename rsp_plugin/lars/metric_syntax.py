"""DatalogMTL inside the LARS rule language: metric literals and heads, built into the same model.

    alarm(X)            :- [1,1] BOXMINUS hot(X), (0,3] DIAMONDMINUS smoke(X) .
    calm(X)             :- quiet(X) SINCE [0,5] reset(X) .
    [1,2] BOXPLUS off(X) :- alarm(X) .

The grammar (`lars/grammar.lark`, the `metric_*` rules) reads them; the LARS
builder (`lars/syntax.py`) calls these functions for the metric parts (which rules
have one is its `is_metric_rule`, decided on the parse tree), so a rule may mix
them with LARS windows, comparisons and RDF triples. A rule with
a metric part becomes a `MetricRule`, checked (`check.py`) and compiled
(`lower.py`) exactly as one written in MeTeoR's syntax; the auxiliary
predicates of the normal form go to `Program.hidden`.

>>> from rsp_plugin.lars.syntax import parse_program
>>> program = parse_program("alarm(X) :- [1,1] BOXMINUS hot(X), (0,3] DIAMONDMINUS smoke(X) .")
>>> [(literal.modality, str(literal.window)) for literal in program.rules[0].body]
[('diamond', '[1,1]'), ('diamond', '[1,3]')]
"""

from __future__ import annotations

import re
from fractions import Fraction

from lark import Token, Tree

from ..core.errors import RuleSyntaxError
from .metric_rules import (
    BINARY_NAMES,
    UNARY_NAMES,
    Binary,
    HeadOperator,
    Interval,
    MetricRule,
    Temporal,
    Written,
)
from .program import Location


def metric_rule(builder, tree: Tree, body: tuple) -> MetricRule:
    head_tree = tree.children[0]
    operators: list[HeadOperator] = []
    node = head_tree.children[0]
    head_location = builder.location(node)
    while isinstance(node, Tree) and node.data == "metric_head":
        interval_token, operator_token, node = node.children
        operators.append(HeadOperator(_operator(operator_token, builder), _interval(interval_token, builder),
                                      builder.location(interval_token)))
    head = builder.atom(node)
    text = " ".join(builder.text[tree.meta.start_pos : tree.meta.end_pos].split())
    return MetricRule(head, tuple(body), tuple(operators), text, builder.location(tree), head_location)


def metric_formula(builder, tree: Tree):
    """A `metric_literal`, `metric_unary` or atom tree -> a formula of `model.py`."""
    if tree.data == "metric_literal":
        if len(tree.children) == 1:
            return metric_formula(builder, tree.children[0])
        left, since, interval_token, right = tree.children
        return Binary(BINARY_NAMES[str(since).lower()], _interval(interval_token, builder),
                      metric_formula(builder, left), metric_formula(builder, right), builder.location(since))
    if tree.data == "metric_unary":
        interval_token, operator_token, operand = tree.children
        return Temporal(_operator(operator_token, builder), _interval(interval_token, builder),
                        metric_formula(builder, operand), builder.location(interval_token))
    return Written(builder.atom(tree), builder.location(tree))


def lower_metric_rules(program) -> None:
    """Check the program's `MetricRule`s and compile every rule onto the engine (in place)."""
    from .metric_check import check_rule
    from .metric_lower import lower_rules

    for rule in program.rules:
        if isinstance(rule, MetricRule):
            check_rule(rule)
    program.rules, hidden = lower_rules(program.rules, program.terms)
    program.hidden = hidden


def _operator(token: Token, builder) -> str:
    return UNARY_NAMES[str(token).lower()]


def _interval(token: Token, builder) -> Interval:
    scanner = Scanner(str(token), builder.filename, token.line)
    try:
        return read_interval(scanner)
    except RuleSyntaxError as error:
        raise RuleSyntaxError(error.msg, builder.filename, token.line, token.column + (error.offset or 1) - 1) from None


# Intervals as both syntaxes write them (MeTeoR's `mtl/syntax.py` reads them here too) -------------------

_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
#: the most digits a bound has before or after its point (a time point is a 64-bit integer)
_BOUND_DIGITS = 18


class Scanner:
    """One line of text, a position in it, and errors that say where."""

    def __init__(self, text: str, filename: str, line: int):
        self.text = text
        self.filename = filename
        self.line = line
        self.pos = 0

    def error(self, message: str, pos: int | None = None):
        column = (self.pos if pos is None else pos) + 1
        raise RuleSyntaxError(message, self.filename, self.line, column)

    def location(self, pos: int | None = None) -> Location:
        return Location(self.filename, self.line, (self.pos if pos is None else pos) + 1)

    def skip(self) -> None:
        text, pos = self.text, self.pos
        while pos < len(text) and text[pos] in " \t\r":
            pos += 1
        self.pos = pos

    def peek(self, literal: str) -> bool:
        self.skip()
        return self.text.startswith(literal, self.pos)

    def take(self, literal: str) -> bool:
        if self.peek(literal):
            self.pos += len(literal)
            return True
        return False

    def expect(self, literal: str, what: str) -> None:
        if not self.take(literal):
            self.error(f"expected {what}")

    def match(self, pattern: re.Pattern):
        self.skip()
        found = pattern.match(self.text, self.pos)
        if found:
            self.pos = found.end()
        return found

    def at_end(self) -> bool:
        self.skip()
        return self.pos >= len(self.text)

    def rest(self) -> str:
        return self.text[self.pos : self.pos + 20]


def read_bound(text: str, s: Scanner, at: int) -> Fraction:
    """An interval's bound as written at `at` (`3`, `2.5`); at most `_BOUND_DIGITS` digits before
    and after the point (Python reads no longer int than 4,300 digits, and a time point has 19)."""
    if any(len(part.lstrip("-")) > _BOUND_DIGITS for part in text.split(".")):
        s.error(f"the bound {text[:25]}{'...' if len(text) > 25 else ''} has more than {_BOUND_DIGITS} digits", at)
    return Fraction(text)

def read_interval(s: Scanner, signed: bool = False, distances: bool = True) -> Interval:
    """An interval as written at the scanner's place (`[1,3]`, `(0,inf)`), in both syntaxes."""
    start = s.pos
    opening = s.text[s.pos]
    s.pos += 1
    low_text = s.match(_NUMBER)
    if low_text is None:
        s.error("expected a number starting the interval, e.g. [1,3]")
    low = read_bound(low_text.group(0), s, low_text.start())
    if s.take(","):
        if s.match(re.compile(r"\+?inf|∞")):
            high = None
        else:
            high_text = s.match(_NUMBER)
            if high_text is None:
                s.error("expected a number or 'inf' ending the interval")
            high = read_bound(high_text.group(0), s, high_text.start())
    else:
        high = low
    s.skip()
    if s.pos >= len(s.text) or s.text[s.pos] not in "])":
        s.error("expected ',' or a closing ']' / ')' in the interval")
    closing = s.text[s.pos]
    s.pos += 1
    interval = Interval(low, high, opening == "(", closing == ")")
    if signed:  # ALWAYS[-b,-a] is Boxminus[a,b]
        if high is None or high > 0:
            s.error("ALWAYS / SOMETIME over the future are not forward-propagating; use negative bounds "
                    "for the past, e.g. ALWAYS[-3,0]", start)
        interval = Interval(-high, -low, closing == ")", opening == "(")
    if distances and interval.low < 0:
        s.error(f"the interval {s.text[start:s.pos]} has a negative bound: distances are >= 0 "
                "(Boxminus / Diamondminus look back by them)", start)
    if interval.high is not None and (
        interval.high < interval.low
        or (interval.high == interval.low and (interval.low_open or interval.high_open))
    ):
        s.error(f"the interval {s.text[start:s.pos]} is empty", start)
    return interval
