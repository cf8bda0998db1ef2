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

from lark import Token, Tree

from ..core.errors import RuleSyntaxError
from .model import BINARY_NAMES, UNARY_NAMES, Binary, HeadOperator, Interval, MetricRule, Temporal, Written
from .syntax import Scanner, _Reader


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
    from .check import check_rule
    from .lower import lower_rules

    for rule in program.rules:
        if isinstance(rule, MetricRule):
            check_rule(rule)
    program.rules, hidden = lower_rules(program.rules, program.terms)
    program.hidden = hidden


def _operator(token: Token, builder) -> str:
    return UNARY_NAMES[str(token).lower()]


def _interval(token: Token, builder) -> Interval:
    scanner = Scanner(str(token), builder.filename, token.line)
    reader = _Reader(builder.filename, builder.terms)
    try:
        return reader.interval(scanner)
    except RuleSyntaxError as error:
        raise RuleSyntaxError(error.msg, builder.filename, token.line, token.column + (error.offset or 1) - 1) from None
