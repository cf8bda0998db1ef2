"""The backend protocol of a compiled plan: a backend finds the solutions, the rest is written once.

A `CompiledPlan` (`plan.py`) is a conjunction (triple patterns and FILTER
conjuncts), perhaps grouped and aggregated, then steps over few rows. A
backend computes, for one evaluation over one snapshot of the windows:

    solutions()   the conjunction's rows: (slots, rows), variable -> column, rows of ids
    aggregate()   the plan's groups: one row per group, group variables then aggregates
    ask()         whether the conjunction has a solution

by whatever means it has (dict indexes, polars joins, Spark; the default
`aggregate` groups `solutions()` row by row, the default `ask` asks them).
Everything after is `finish`: BIND, HAVING, ORDER BY, projection, DISTINCT,
LIMIT / OFFSET, and CONSTRUCT's template, the same code for every backend.

What the SPARQL semantics of a row needs besides its ids (a FILTER conjunct
decided natively for numbers and IRIs, else by `expressions.py`; one
aggregate over a group's rows, as `algebra.aggregate_values` computes it; NOW()
and the evaluation's bounds) is an `EvaluationContext`, which every backend
shares too: a backend that decides a filter per distinct value (columnar, the
Spark executors) asks the same `conjunct_check` the per-fact backend asks per row.

    context = EvaluationContext(cache, tau, base=base, budget=budget, snapshot=snapshot)
    answer = finish(plan, FactBackend(plan, snapshot, context), context, ordered=True)

Ids are those of `context.terms`; None is an unbound value.
"""

from __future__ import annotations

import operator
from datetime import datetime, timezone
from typing import Any, Callable, Protocol

from rdflib import Literal, URIRef, Variable
from rdflib.plugins.sparql.parserutils import CompValue

from ..core.rdfterms import TermCache
from ..core.xsd import RANK_TYPE
from .algebra import aggregate_values
from .bounds import UNBOUNDED, Budget
from .content import Snapshot
from .expressions import Scope, evaluate, holds
from .plan import Aggregation, CompiledPlan, expression_variables
from .results import Answer
from .sparql_values import SparqlError, order_key, term

#: (variable -> position in a row, rows of ids): what a backend gives
Solutions = tuple[dict[str, int], list[tuple]]

_COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
            "=": operator.eq, "!=": operator.ne}
_INTEGER = RANK_TYPE[0]


class EvaluationContext:
    """What one evaluation reads besides the solutions: the terms, NOW (`tau`), the base IRI, the
    bounds, and the snapshot (for timestamp()); and the semantics every backend decides with."""

    def __init__(self, cache: TermCache, tau: int = 0, *, base: str | None = None, budget: Budget = UNBOUNDED,
                 snapshot: Snapshot | None = None):
        self.cache = cache
        self.terms = cache.terms
        self.tau = tau
        self.base = base
        #: the evaluation's bounds (`bounds.py`): checked every few dozen rows of each step
        self.budget = budget
        self.snapshot = snapshot if snapshot is not None else Snapshot()
        self._scopes: dict = {}

    def scope(self, graph: str | None) -> Scope:
        """What expressions read besides the row, with `graph` the active graph (timestamp())."""
        found = self._scopes.get(graph)
        if found is None:
            content = self.snapshot.graph(graph)
            find = self.terms.find

            def timestamp(s, p, o):
                ids = (find(s), find(p), find(o))
                return None if None in ids else content.timestamp(ids)

            found = self._scopes[graph] = Scope(now=datetime.fromtimestamp(self.tau / 1000, tz=timezone.utc),
                                                base=self.base, timestamp=timestamp,
                                                blank_prefix=f"t{self.tau}f", budget=self.budget)
        return found

    # filters -----------------------------------------------------------------------------------

    def conjunct_check(self, graph: str | None, conjunct, slots: dict[str, int]) -> Callable[[tuple], bool]:
        """row -> bool for one filter conjunct: native for numbers and IRIs, else by the expression
        evaluator, once per distinct tuple of the values it reads (memoised per check)."""
        fallback = self.expression_check(graph, conjunct, slots)
        if isinstance(conjunct, CompValue) and conjunct.name == "RelationalExpression" and conjunct.op in _COMPARE:
            left, right = self._operand(conjunct.expr, slots), self._operand(conjunct.other, slots)
            if left is not None and right is not None:
                return self._native_comparison(_COMPARE[conjunct.op], conjunct.op, left, right, fallback)
        return fallback

    def expression_check(self, graph: str | None, expression, slots: dict[str, int]) -> Callable[[tuple], bool]:
        """row -> bool: the expression's effective boolean value (an error: False), memoised per
        distinct tuple of the values it reads."""
        variables = sorted(v for v in expression_variables(expression) if v in slots)
        positions = [slots[v] for v in variables]
        memo: dict[tuple, bool] = {}
        scope = self.scope(graph)
        keys = self.terms.keys

        def check(row):
            key = tuple(row[i] for i in positions)
            found = memo.get(key)
            if found is None:
                bindings = {name: keys[value] for name, value in zip(variables, key) if value is not None}
                found = memo[key] = holds(expression, bindings, scope)
            return found

        return check

    def _operand(self, expr, slots):
        if isinstance(expr, Variable):
            name = str(expr)
            return ("slot", slots[name]) if name in slots else None
        if isinstance(expr, (URIRef, Literal)):
            return ("const", self.cache.intern(expr))
        return None

    def _native_comparison(self, compare, op, left, right, fallback):
        numbers = self.terms.numbers
        keys = self.terms.keys
        equality = op in ("=", "!=")
        l_kind, l_value = left
        r_kind, r_value = right

        def check(row):
            a = row[l_value] if l_kind == "slot" else l_value
            b = row[r_value] if r_kind == "slot" else r_value
            x, y = numbers[a], numbers[b]
            if x is not None and y is not None and keys[a][0] == '"' and keys[b][0] == '"':
                return compare(x, y)
            if equality and keys[a][0] in "<_" and keys[b][0] in "<_":
                return (a == b) == (op == "=")
            return fallback(row)

        return check

    # aggregates -----------------------------------------------------------------------------------

    def aggregate_one(self, aggregate, members: list[tuple], slots: dict[str, int]) -> int | None:
        """One aggregate (an rdflib node) over a group's rows: the id of its value, None (unbound)
        after an error."""
        if aggregate.vars == "*":
            count = len(set(members)) if aggregate.distinct else len(members)
            return self.terms.intern(f'"{count}"^^<{_INTEGER}>')
        slot = slots.get(str(aggregate.vars))
        values = [row[slot] for row in members] if slot is not None else []
        errors = len(members) - len(values)
        if aggregate.name == "Aggregate_Count":
            count = len(set(values)) if aggregate.distinct else len(values)
            return self.terms.intern(f'"{count}"^^<{_INTEGER}>')
        if aggregate.name == "Aggregate_Sample":
            return values[0] if values else None
        keys = self.terms.keys
        try:
            found = aggregate_values(aggregate, [term(keys[value]) for value in values], errors)
        except SparqlError:
            return None
        return self.terms.intern(found.key)

    def group(self, aggregation: Aggregation, solutions: Solutions) -> Solutions:
        """The groups of the solutions, row by row: group variables' values, then each aggregate's.
        Without GROUP BY the solutions are one group, empty or not (SPARQL 1.1, 18.2.4.1)."""
        slots, rows = solutions
        group_vars, aggregates = aggregation
        positions = [slots.get(v) for v in group_vars]
        out_slots = group_slots(aggregation)
        groups: dict[tuple, list[tuple]] = {}
        for row in rows:
            key = tuple(row[i] if i is not None else None for i in positions)
            bucket = groups.get(key)
            if bucket is None:
                groups[key] = [row]
            else:
                bucket.append(row)
        if not groups and not group_vars:
            groups[()] = []
        out = []
        within_budget = self.budget.check
        for key, members in groups.items():
            within_budget(len(out))
            values = list(key)
            for aggregate in aggregates:
                values.append(self.aggregate_one(aggregate, members, slots))
            out.append(tuple(values))
        return out_slots, out


def group_slots(aggregation: Aggregation) -> dict[str, int]:
    """The slots of a group row: the group variables, then each aggregate's result variable."""
    slots = {v: i for i, v in enumerate(aggregation.group_variables)}
    for aggregate in aggregation.aggregates:
        slots[str(aggregate.res)] = len(slots)
    return slots


def all_slots(plan: CompiledPlan, slots: dict[str, int] | None = None) -> dict[str, int]:
    """`slots` with every variable of the conjunction given one (sorted), for an answer with no rows."""
    slots = {} if slots is None else slots
    for variable in sorted(plan.conjunction.variables):
        slots.setdefault(variable, len(slots))
    return slots


class Backend(Protocol):
    """One evaluation of a plan's conjunction over one snapshot, as a backend computes it.

    `plan` and `context` are what it was made with. A backend must give `solutions`; `aggregate`
    and `ask` have defaults from them (a backend that groups or decides existence its own way,
    without making every row, overrides them)."""

    plan: CompiledPlan
    context: EvaluationContext

    def solutions(self) -> Solutions:
        """The conjunction's rows (ids; the filters applied)."""
        ...

    def aggregate(self) -> Solutions:
        """The plan's groups (`EvaluationContext.group`'s form; `plan.aggregation` is not None)."""
        return self.context.group(self.plan.aggregation, self.solutions())

    def ask(self) -> bool:
        """Has the conjunction a solution?"""
        return bool(self.solutions()[1])


# what follows the solutions: once, for every backend ------------------------------------------------


def select(plan: CompiledPlan, backend: Backend, context: EvaluationContext) -> tuple[list[str], list[tuple]]:
    """A SELECT's projected variables and rows (ids, None for unbound)."""
    if plan.aggregation is not None:
        slots, rows = backend.aggregate()
    else:
        slots, rows = backend.solutions()
    for kind, value in plan.post:
        if kind == "extend":
            slots, rows = _extend(context, slots, rows, *value)
        elif kind == "having":
            rows = context.budget.kept(rows, context.expression_check(None, value, slots))
        elif kind == "order":
            rows = _order(context, slots, rows, value)
    positions = [slots.get(variable) for variable in plan.projection]
    if None in positions or len(positions) < 2:
        projected = [tuple(row[i] if i is not None else None for i in positions) for row in rows]
    else:  # (every variable bound to a column: one C call per row)
        projected = list(map(operator.itemgetter(*positions), rows))
    if plan.distinct:
        projected = list(dict.fromkeys(projected))
    if plan.slice is not None:
        start, length = plan.slice
        projected = projected[start: None if length is None else start + length]
    return plan.projection, projected


def construct(plan: CompiledPlan, backend: Backend, context: EvaluationContext) -> list[tuple[int, int, int]]:
    """A CONSTRUCT's triples: the template filled per solution, as rdflib fills it (fresh blank
    nodes per solution, named from the evaluation time; a triple with an unbound term skipped)."""
    slots, rows = backend.solutions()
    terms = context.terms
    template = []
    for triple in plan.template:
        resolved = []
        for kind, value in triple:
            if kind == "c":
                resolved.append(("c", terms.intern(value)))
            elif kind == "v":
                resolved.append(("v", slots.get(value)))
            else:
                resolved.append(("b", value))
        template.append(resolved)
    out: dict[tuple, None] = {}
    fresh = 0
    within_budget = context.budget.check
    for number, row in enumerate(rows):
        if not number % 1024:
            within_budget(len(out))
        blanks: dict[str, int] = {}
        for triple in template:
            made = []
            for kind, value in triple:
                if kind == "c":
                    made.append(value)
                elif kind == "v":
                    made.append(row[value] if value is not None else None)
                else:
                    if value not in blanks:
                        fresh += 1
                        blanks[value] = terms.intern(f"_:t{context.tau}c{fresh}")  # one per solution
                    made.append(blanks[value])
            if None not in made:
                out[tuple(made)] = None
    return list(out)


def finish(plan: CompiledPlan, backend: Backend, context: EvaluationContext, *, ordered: bool = False) -> Answer:
    """The query's `Answer` from a backend's evaluation (`ordered`: the query has ORDER BY)."""
    if plan.form == "SELECT":
        variables, rows = select(plan, backend, context)
        return Answer("SELECT", tuple(variables), rows, ordered=ordered)
    if plan.form == "ASK":
        return Answer("ASK", boolean=backend.ask())
    return Answer("CONSTRUCT", triples=construct(plan, backend, context))


def _extend(context: EvaluationContext, slots, rows, variable: str, expr):
    """BIND: a column more (a bound variable keeps its value, as rdflib has it)."""
    if isinstance(expr, Variable):
        source = slots.get(str(expr))
        if variable in slots:
            return slots, rows
        slots = dict(slots)
        if source is not None:  # (another name for a column: `(AVG(?v) AS ?avg)`; no row is copied)
            slots[variable] = source
            return slots, rows
        slots[variable] = _width(slots, rows)
        return slots, [row + (None,) for row in rows]
    names = sorted(v for v in expression_variables(expr) if v in slots)
    positions = [slots[v] for v in names]
    scope = context.scope(None)
    keys = context.terms.keys
    intern = context.terms.intern
    memo: dict[tuple, Any] = {}
    out = []
    within_budget = context.budget.check
    for row in rows:
        key = tuple(row[i] for i in positions)
        if key not in memo:
            if not len(memo) % 256:
                within_budget(len(out))
            bindings = {name: keys[value] for name, value in zip(names, key) if value is not None}
            try:
                memo[key] = intern(evaluate(expr, bindings, scope).key)
            except SparqlError:
                memo[key] = None
        out.append(row + (memo[key],))
    if variable in slots:
        return slots, [row[:-1] for row in out]
    slots = dict(slots)
    slots[variable] = _width(slots, rows)
    return slots, out


def _width(slots: dict, rows: list) -> int:
    """The columns of the rows (two names may share one: `_extend`'s aliases)."""
    return len(rows[0]) if rows else 1 + max(slots.values(), default=-1)


def _order(context: EvaluationContext, slots, rows, conditions):
    """ORDER BY variables (a plan orders by nothing else), the last key sorted first: stable sorts."""
    keys = context.terms.keys
    for condition in reversed(conditions):
        slot = slots.get(str(condition.expr))
        reverse = bool(condition.order and condition.order == "DESC")
        if slot is None:
            continue
        rows = sorted(rows, key=lambda row: order_key(term(keys[row[slot]]) if row[slot] is not None else None),
                      reverse=reverse)
    return rows


__all__ = ["Backend", "EvaluationContext", "Solutions", "all_slots", "construct", "finish", "group_slots",
           "select"]
