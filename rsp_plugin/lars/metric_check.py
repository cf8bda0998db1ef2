"""Is a DatalogMTL program one a stream can be reasoned over? Forward-propagating and safe.

Forward-propagating (Walega et al., Def. 4): a body looks only at the past
(Boxminus, Diamondminus, Since) and a head places its atom only now or later
(Boxplus; a Diamondplus over a single point is the same thing). Anything
else would need data not yet received, or would revise what was already
emitted. On the integer timeline an interval must also contain an integer.

Safe (Section 2): every variable of the head, and of a comparison, occurs in
a body atom, and not only in the left operand of a Since (which may hold
vacuously, binding nothing). A variable only in a Since's left operand is
allowed where the Since is a body literal of its own; inside another
operator it could take any value.

Each problem is a `RuleSyntaxError` at the operator or atom, saying why.
"""

from __future__ import annotations

from ..core.errors import RuleSyntaxError
from .metric_rules import (
    BOXMINUS,
    BOXPLUS,
    DIAMONDPLUS,
    FUTURE_OPERATORS,
    SINCE,
    Binary,
    HeadOperator,
    MetricRule,
    Temporal,
    Written,
)
from .program import Comparison, ExtendedAtom, Location, Var, expression_variables


def _fail(message: str, location: Location | None, rule: MetricRule) -> None:
    where = location or rule.location
    if where is None:
        raise RuleSyntaxError(message)
    raise RuleSyntaxError(message, where.filename, where.line, where.column)


def check_program(program) -> None:
    for rule in program.rules:
        check_rule(rule)


def check_rule(rule: MetricRule) -> None:
    for operator in rule.head_operators:
        _check_head_operator(operator, rule)
    for literal in rule.body:
        if isinstance(literal, (Written, Temporal, Binary)):
            _check_formula(literal, rule, top=True)
    _check_safety(rule)


def head_offsets(operators: tuple[HeadOperator, ...]) -> tuple[int, int | None]:
    """Where a head places its atom, as distances after now: the sum of its operators' intervals."""
    low, high = 0, 0
    for operator in operators:
        first, last = operator.interval.integers()
        low += first
        high = None if high is None or last is None else high + last
    return low, high


def _check_head_operator(operator: HeadOperator, rule: MetricRule) -> None:
    name, interval = operator.operator, operator.interval
    points = interval.integers()
    if points is None:
        _fail(f"{name}{interval} contains no time point of the integer timeline (time points are integers)",
              operator.location, rule)
    if name == BOXPLUS:
        return
    if name == DIAMONDPLUS:
        if points[0] != points[1]:
            _fail(f"Diamondplus{interval} in a head would say the atom holds at one unknown point of the "
                  f"interval: a rule head cannot be disjunctive; write Boxplus{interval} (every point) or a "
                  "single point such as Diamondplus[1,1]", operator.location, rule)
        return
    if points == (0, 0):
        return
    _fail(f"{name}{interval} in a head puts the atom in the past: the rule is not forward-propagating "
          "(a stream reasoner cannot change what it already reported); heads may use Boxplus",
          operator.location, rule)


def _check_formula(formula, rule: MetricRule, top: bool) -> None:
    if isinstance(formula, Written):
        return
    name = formula.operator
    if name in FUTURE_OPERATORS:
        _fail(f"{name} in a body looks into the future: the rule is not forward-propagating "
              "(a body may look at the past only: Boxminus, Diamondminus, Since)", formula.location, rule)
    points = formula.interval.integers()
    if points is None:
        _fail(f"{name}{formula.interval} contains no time point of the integer timeline (time points are integers)",
              formula.location, rule)
    if name == BOXMINUS and points[1] is None:
        _fail(f"Boxminus{formula.interval} asks for the atom at every past time point, which no stream "
              "gives: the rule could never fire (give the interval an upper bound)", formula.location, rule)
    if isinstance(formula, Temporal):
        _check_formula(formula.operand, rule, top=False)
        return
    _check_formula(formula.left, rule, top=False)
    _check_formula(formula.right, rule, top=False)
    left_only = formula.left.variables() - formula.right.variables()
    if left_only and not top:
        names = ", ".join(sorted(v.name for v in left_only))
        _fail(f"variable {names} occurs only in the left operand of Since inside another operator, where the "
              "Since may hold with nothing to bind it; use it in the right operand too", formula.location, rule)


def bound_variables(rule: MetricRule) -> set[Var]:
    """The variables a body binds: all but those only in Since's left operands, and `X = expr`."""
    bound: set[Var] = set()
    for literal in rule.body:
        if isinstance(literal, Binary):
            bound |= literal.right.variables()
        elif isinstance(literal, (Written, Temporal)):
            bound |= literal.variables()
        elif isinstance(literal, ExtendedAtom) and not literal.negated:
            bound |= literal.variables()
    comparisons = [c for c in rule.body if isinstance(c, Comparison)]
    progress = True
    while progress:
        progress = False
        for comparison in comparisons:
            free = comparison.variables() - bound
            if comparison.op == "=" and len(free) == 1:
                (variable,) = free
                other = comparison.right if comparison.left == variable else comparison.left
                if variable in (comparison.left, comparison.right) and not (expression_variables(other) - bound):
                    bound.add(variable)
                    progress = True
    return bound


def _check_safety(rule: MetricRule) -> None:
    bound = bound_variables(rule)
    in_left = set()
    for literal in rule.body:
        if isinstance(literal, Binary) and literal.operator == SINCE:
            in_left |= literal.left.variables()
    for literal in rule.body:
        if isinstance(literal, Comparison):
            free = sorted(v.name for v in literal.variables() - bound)
            if free:
                _fail(f"unsafe variable {', '.join(free)}: not bound by a body atom", literal.location, rule)
        elif isinstance(literal, ExtendedAtom) and literal.negated:
            free = sorted(v.name for v in literal.variables() - bound)
            if free:
                _fail(f"unsafe variable {', '.join(free)} under `not`: bind it in a positive body atom",
                      literal.location, rule)
    free = rule.head.variables() - bound
    if free:
        names = ", ".join(sorted(v.name for v in free))
        if free & in_left:
            _fail(f"unsafe variable {names} in the head: it occurs only in the left operand of a Since, which "
                  "may hold with nothing to bind it; bind it in another body atom", rule.head_location, rule)
        _fail(f"unsafe variable {names} in the head: bind it in a body atom", rule.head_location, rule)

