"""The hot path: basic graph patterns, FILTER and aggregates joined over the windows' id indexes.

rdflib evaluates any SPARQL body (`evaluate.py`), but over a 100k-triple window
its nested loops over `Graph.triples` cost seconds. Most continuous queries are
a conjunction of triple patterns with filters, perhaps grouped and aggregated;
`compile_fast` recognises that shape in rdflib's algebra and returns a plan that
joins over the `TripleIndex`es with plain ints (datafrog's leapjoin idea: the
smallest pattern proposes, indexes extend). Anything else returns None and rdflib
evaluates it.

Semantics are SPARQL 1.1's, as the algebra evaluator has them: a filter or
expression that is not a plain comparison of numbers or IRIs is evaluated by
`expressions.py`, once per distinct tuple of the values it reads (memoised per
evaluation); a comparison the spec has no operator for (a boolean, a custom
datatype or a dateTime against a number) is a type error and drops the row;
aggregates are `algebra.aggregate_values` (datatype promotion, AVG of integers
as xsd:decimal, an error in a group leaves the aggregate unbound). The
differential tests check both paths against a spec-conformant oracle and the
W3C suite's expectations.
"""

from __future__ import annotations

import operator
from itertools import permutations
from typing import Any, Callable

from datetime import datetime, timezone

from rdflib import BNode, Literal, URIRef, Variable
from rdflib.namespace import XSD
from rdflib.plugins.sparql.parserutils import CompValue
from rdflib.paths import Path

from .content import TripleIndex
from .algebra import aggregate_values
from .bounds import UNBOUNDED, Budget
from .expressions import Scope, evaluate, holds
from .sparql_values import SparqlError, order_key, term
from ..core.rdfterms import term_key

_COMPARE = {"<": operator.lt, ">": operator.gt, "<=": operator.le, ">=": operator.ge,
            "=": operator.eq, "!=": operator.ne}
_NUMERIC_TYPES = {str(XSD.integer), str(XSD.decimal), str(XSD.double), str(XSD.float)}
#: expression nodes whose value is not a function of the row (or needs the pattern evaluator)
_IMPURE = {"Builtin_EXISTS", "Builtin_NOTEXISTS", "Builtin_RAND", "Builtin_BNODE", "Builtin_UUID",
           "Builtin_STRUUID"}
_FAST_AGGREGATES = {"Aggregate_Count", "Aggregate_Sum", "Aggregate_Avg", "Aggregate_Min", "Aggregate_Max",
                    "Aggregate_Sample"}


class Unsupported(Exception):
    """The algebra has a shape the fast path does not evaluate."""


# compiled plans -------------------------------------------------------------------------


class Conjunction:
    """Triple patterns (each in a graph: None = the default graph) and filter conjuncts."""

    def __init__(self):
        self.atoms: list[tuple[str | None, tuple]] = []   # (graph, (term, term, term))
        self.conjuncts: list[tuple[str | None, Any]] = []  # (graph, rdflib expression)
        self.variables: set[str] = set()

    def merge(self, other: "Conjunction") -> None:
        self.atoms += other.atoms
        self.conjuncts += other.conjuncts
        self.variables |= other.variables


class FastPlan:
    """A whole query over the indexes: a conjunction, then grouping, expressions, projection."""

    def __init__(self, form: str, conjunction: Conjunction):
        self.form = form
        self.conjunction = conjunction
        self.aggregation: tuple[list[str], list] | None = None   # (group variables, rdflib aggregates)
        self.post: list[tuple[str, Any]] = []                    # ("extend", (var, expr)) | ("having", expr) | ("order", conds)
        self.projection: list[str] = []
        self.distinct = False
        self.slice: tuple[int, int | None] | None = None
        self.template: list[tuple] | None = None

    def __repr__(self) -> str:
        return (f"<FastPlan {self.form} atoms={len(self.conjunction.atoms)} "
                f"filters={len(self.conjunction.conjuncts)} grouped={self.aggregation is not None}>")


def compile_fast(algebra) -> FastPlan | None:
    """A `FastPlan` for rdflib's translated query, or None when the shape is not one we evaluate."""
    try:
        return _compile(algebra.algebra)
    except Unsupported:
        return None


def _compile(query: CompValue) -> FastPlan:
    name = query.name
    node = query.p
    if name == "SelectQuery":
        plan_slice = None
        if node.name == "Slice":
            plan_slice = (node.start, node.length)
            node = node.p
        distinct = False
        if node.name in ("Distinct", "Reduced"):
            distinct = node.name == "Distinct"
            node = node.p
        if node.name != "Project":
            raise Unsupported(node.name)
        projection = [str(v) for v in node.PV]
        node = node.p
        post: list[tuple[str, Any]] = []
        aggregation = None
        while True:
            if node.name == "OrderBy":
                if post:
                    raise Unsupported("ORDER BY below an expression")
                post.append(("order", list(node.expr)))
            elif node.name == "Extend":
                _check_expression(node.expr)
                post.append(("extend", (str(node.var), node.expr)))
            elif node.name == "Filter" and _aggregates_below(node.p):
                _check_expression(node.expr)
                post.append(("having", node.expr))
            elif node.name == "AggregateJoin":
                group = node.p
                group_vars = []
                for expr in group.expr or ():
                    if not isinstance(expr, Variable):
                        raise Unsupported("GROUP BY an expression")
                    group_vars.append(str(expr))
                for aggregate in node.A:
                    if aggregate.name not in _FAST_AGGREGATES and aggregate.name != "Aggregate_GroupConcat":
                        raise Unsupported(aggregate.name)
                    if aggregate.vars != "*" and not isinstance(aggregate.vars, Variable):
                        raise Unsupported("an aggregate of an expression")
                aggregation = (group_vars, list(node.A))
                node = group.p
                break
            else:
                break
            node = node.p
        plan = FastPlan("SELECT", _pattern(node, None))
        plan.aggregation = aggregation
        plan.post = list(reversed(post))
        plan.projection = projection
        plan.distinct = distinct
        plan.slice = plan_slice
        return plan
    if name in ("AskQuery", "ConstructQuery"):
        if node.name == "Project":
            node = node.p
        plan = FastPlan("ASK" if name == "AskQuery" else "CONSTRUCT", _pattern(node, None))
        if name == "ConstructQuery":
            template = query.template
            if not template:
                if node.name != "BGP":
                    raise Unsupported("CONSTRUCT WHERE over more than a BGP")
                template = node.triples
            plan.template = [tuple(_template_term(term) for term in triple) for triple in template]
        return plan
    raise Unsupported(name)


def _aggregates_below(node) -> bool:
    while node is not None and isinstance(node, CompValue):
        if node.name == "AggregateJoin":
            return True
        if node.name not in ("Extend", "Filter"):
            return False
        node = node.p
    return False


def _pattern(node, graph: str | None) -> Conjunction:
    name = node.name
    if name == "BGP":
        conjunction = Conjunction()
        for triple in node.triples:
            atom = tuple(_pattern_term(term) for term in triple)
            conjunction.atoms.append((graph, atom))
            conjunction.variables |= {term[1] for term in atom if term[0] == "v"}
        return conjunction
    if name == "Filter":
        conjunction = _pattern(node.p, graph)
        _check_expression(node.expr)
        if not {str(v) for v in _expression_variables(node.expr)} <= conjunction.variables:
            raise Unsupported("a filter reads a variable its group does not bind")
        for conjunct in _conjuncts(node.expr):
            conjunction.conjuncts.append((graph, conjunct))
        return conjunction
    if name == "Join":
        conjunction = _pattern(node.p1, graph)
        conjunction.merge(_pattern(node.p2, graph))
        return conjunction
    if name == "Graph" and isinstance(node.term, URIRef):
        return _pattern(node.p, str(node.term))
    raise Unsupported(name)


def _pattern_term(term):
    if isinstance(term, Variable):
        return ("v", str(term))
    if isinstance(term, BNode):
        return ("v", f"_:{term}")
    if isinstance(term, Path):
        raise Unsupported("a property path")
    return ("c", term_key(term))


def _template_term(term):
    if isinstance(term, Variable):
        return ("v", str(term))
    if isinstance(term, BNode):
        return ("b", str(term))
    return ("c", term_key(term))


def _conjuncts(expr) -> list:
    if isinstance(expr, CompValue) and expr.name == "ConditionalAndExpression":
        parts = [expr.expr] + list(expr.other or [])
        return [c for part in parts for c in _conjuncts(part)]
    return [expr]


def _check_expression(expr) -> None:
    for node in _walk(expr):
        if isinstance(node, CompValue) and node.name in _IMPURE:
            raise Unsupported(node.name)


def _walk(expr):
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, CompValue):
            stack.extend(value for value in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def _expression_variables(expr) -> set[Variable]:
    return {node for node in _walk(expr) if isinstance(node, Variable)}


# evaluation -----------------------------------------------------------------------------


class FastEvaluation:
    """One evaluation of a `FastPlan` over a snapshot: rows of ids, then the query's form."""

    def __init__(self, plan: FastPlan, snapshot, cache, tau: int = 0, *, base: str | None = None,
                 budget: Budget = UNBOUNDED):
        self.plan = plan
        self.tau = tau
        #: the evaluation's bounds (`bounds.py`): checked every few dozen rows of each step
        self.budget = budget
        self.snapshot = snapshot
        self.cache = cache
        self.terms = cache.terms
        self.base = base
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

    # the conjunction ------------------------------------------------------------------------

    def solutions(self) -> tuple[dict[str, int], list[tuple]]:
        """Variable slots and the rows (tuples of ids) of the conjunction."""
        conjunction = self.plan.conjunction
        terms = self.terms
        atoms = []
        impossible = False
        for graph, pattern in conjunction.atoms:
            resolved = []
            for kind, value in pattern:
                if kind == "c":
                    found = terms.find(value)
                    if found is None:
                        impossible = True
                    resolved.append(("c", found))
                else:
                    resolved.append(("v", value))
            atoms.append((self.snapshot.graph(graph), resolved))
        slots: dict[str, int] = {}
        if impossible:
            return self._all_slots(slots), []
        rows: list[tuple] = [()]
        pending = [(graph, conjunct, self._variables_of(conjunct)) for graph, conjunct in conjunction.conjuncts]
        for choice in _join_order(atoms, [names for _, _, names in pending]):
            content, pattern = atoms[choice]
            rows = self._extend(rows, content, pattern, slots, pending)
            if not rows:
                return self._all_slots(slots), []
        if pending:
            checks = [self._conjunct_check(graph, conjunct, slots) for graph, conjunct, _ in pending]
            rows = self.budget.kept(rows, lambda row: all(check(row) for check in checks))
        return slots, rows

    def _all_slots(self, slots: dict[str, int]) -> dict[str, int]:
        for variable in sorted(self.plan.conjunction.variables):
            slots.setdefault(variable, len(slots))
        return slots

    @staticmethod
    def _variables_of(conjunct) -> set[str]:
        return {str(v) for v in _expression_variables(conjunct)}

    def _extend(self, rows, content, pattern, slots, pending) -> list[tuple]:
        """Join the rows with one triple pattern; apply the filters that become decidable."""
        positions = []  # per position: ("c", id) | ("b", slot) bound variable | ("n", var) new variable
        new_vars: list[str] = []
        for kind, value in pattern:
            if kind == "c":
                positions.append(("c", value))
            elif value in slots:
                positions.append(("b", slots[value]))
            elif value in new_vars:
                positions.append(("r", new_vars.index(value)))   # repeated new variable
            else:
                positions.append(("n", len(new_vars)))
                new_vars.append(value)
        for variable in new_vars:
            slots[variable] = len(slots)
        ready = [item for item in pending if item[2] <= slots.keys()]
        for item in ready:
            pending.remove(item)
        checks = [self._conjunct_check(graph, conjunct, slots) for graph, conjunct, _ in ready]

        s, p, o = positions
        out: list[tuple] = []
        append = out.append
        chunks = self.budget.chunks  # (each loop over rows takes them a few dozen at a time, the budget checked)
        if isinstance(content, TripleIndex) and p[0] == "c" and s[0] in "bn" and o[0] in "bn" and \
                not (s[0] == "n" and o[0] == "n" and s[1] == o[1]):
            predicate = p[1]
            if s[0] == "b" and o[0] == "n":
                spo = content.spo
                slot = s[1]
                for chunk in chunks(rows, out):
                    for row in chunk:
                        by_p = spo.get(row[slot])
                        if by_p:
                            objects = by_p.get(predicate)
                            if objects:
                                for obj in objects:
                                    append(row + (obj,))
            elif s[0] == "n" and o[0] == "b":
                by_o = content.pos.get(predicate)
                if by_o:
                    slot = o[1]
                    for chunk in chunks(rows, out):
                        for row in chunk:
                            subjects = by_o.get(row[slot])
                            if subjects:
                                for subj in subjects:
                                    append(row + (subj,))
            elif s[0] == "b" and o[0] == "b":
                spo = content.spo
                s_slot, o_slot = s[1], o[1]
                for chunk in chunks(rows, out):
                    for row in chunk:
                        by_p = spo.get(row[s_slot])
                        if by_p:
                            objects = by_p.get(predicate)
                            if objects and row[o_slot] in objects:
                                append(row)
            else:  # both new: scan the predicate, objects first so filters on them prune early
                by_o = content.pos.get(predicate)
                if by_o:
                    # new variables are numbered in position order: the subject, then the object
                    object_checks, row_checks = self._split_checks(ready, checks, {new_vars[o[1]]})
                    within_budget = self.budget.check
                    for row in rows:  # (each row scans the predicate: the budget checked per row)
                        within_budget(len(out))
                        for obj, subjects in by_o.items():
                            if object_checks:
                                probe = row + (None, obj)
                                if not all(check(probe) for check in object_checks):
                                    continue
                            for subj in subjects:
                                append(row + (subj, obj))
                    within_budget(len(out))
                    checks = row_checks
        else:
            within_budget = self.budget.check
            for row in rows:  # (a row may match the whole window: the budget checked per row)
                within_budget(len(out))
                bound = [value if kind == "c" else row[value] if kind == "b" else None for kind, value in positions]
                for triple in content.match(*bound):
                    new = [None] * len(new_vars)
                    consistent = True
                    for (kind, value), found in zip(positions, triple):
                        if kind == "n":
                            new[value] = found
                        elif kind == "r" and new[value] != found:
                            consistent = False
                    if consistent:
                        append(row + tuple(new))
            within_budget(len(out))
        if checks:
            out = self.budget.kept(out, lambda row: all(check(row) for check in checks))
        return out

    @staticmethod
    def _split_checks(ready, checks, variables):
        """Filters that read only `variables` (checked before expanding) and the others."""
        early, late = [], []
        for (graph, conjunct, names), check in zip(ready, checks):
            (early if names <= variables else late).append(check)
        return early, late

    # filters ---------------------------------------------------------------------------------

    def _conjunct_check(self, graph, conjunct, slots) -> Callable[[tuple], bool]:
        """row -> bool for one filter conjunct: native for numbers and IRIs, else rdflib, memoised."""
        fallback = self._memo_filter(graph, conjunct, slots)
        if isinstance(conjunct, CompValue) and conjunct.name == "RelationalExpression" and conjunct.op in _COMPARE:
            left, right = self._operand(conjunct.expr, slots), self._operand(conjunct.other, slots)
            if left is not None and right is not None:
                return self._native_comparison(_COMPARE[conjunct.op], conjunct.op, left, right, fallback)
        return fallback

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

    def _memo_filter(self, graph, conjunct, slots) -> Callable[[tuple], bool]:
        variables = sorted(v for v in self._variables_of(conjunct) if v in slots)
        positions = [slots[v] for v in variables]
        memo: dict[tuple, bool] = {}
        scope = self.scope(graph)
        keys = self.terms.keys

        def check(row):
            key = tuple(row[i] for i in positions)
            found = memo.get(key)
            if found is None:
                bindings = {name: keys[value] for name, value in zip(variables, key) if value is not None}
                found = memo[key] = holds(conjunct, bindings, scope)
            return found

        return check

    # the rest of the query ----------------------------------------------------------------

    def select(self) -> tuple[list[str], list[tuple]]:
        """Projected variables and rows (ids, None for unbound)."""
        plan = self.plan
        slots, rows = self.solutions()
        if plan.aggregation is not None:
            slots, rows = self._aggregate(slots, rows)
        for kind, value in plan.post:
            if kind == "extend":
                slots, rows = self._extend_expression(slots, rows, *value)
            elif kind == "having":
                rows = self.budget.kept(rows, self._memo_filter(None, value, slots))
            elif kind == "order":
                rows = self._order(slots, rows, value)
        positions = [slots.get(variable) for variable in plan.projection]
        projected = [tuple(row[i] if i is not None else None for i in positions) for row in rows]
        if plan.distinct:
            projected = list(dict.fromkeys(projected))
        if plan.slice is not None:
            start, length = plan.slice
            projected = projected[start: None if length is None else start + length]
        return plan.projection, projected

    def ask(self) -> bool:
        _, rows = self.solutions()
        return bool(rows)

    def construct(self) -> list[tuple[int, int, int]]:
        slots, rows = self.solutions()
        template = []
        for triple in self.plan.template:
            resolved = []
            for kind, value in triple:
                if kind == "c":
                    resolved.append(("c", self.terms.intern(value)))
                elif kind == "v":
                    resolved.append(("v", slots.get(value)))
                else:
                    resolved.append(("b", value))
            template.append(resolved)
        out: dict[tuple, None] = {}
        fresh = 0
        within_budget = self.budget.check
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
                            blanks[value] = self.terms.intern(f"_:t{self.tau}c{fresh}")  # one per solution
                        made.append(blanks[value])
                if None not in made:  # as rdflib's template filling: any terms, unbound ones skip the triple
                    out[tuple(made)] = None
        return list(out)

    def _aggregate(self, slots, rows):
        group_vars, aggregates = self.plan.aggregation
        positions = [slots.get(v) for v in group_vars]
        out_slots = {v: i for i, v in enumerate(group_vars)}
        for aggregate in aggregates:
            out_slots[str(aggregate.res)] = len(out_slots)
        groups: dict[tuple, list[tuple]] = {}
        for row in rows:
            key = tuple(row[i] if i is not None else None for i in positions)
            bucket = groups.get(key)
            if bucket is None:
                groups[key] = [row]
            else:
                bucket.append(row)
        if not groups and not group_vars:
            groups[()] = []  # no GROUP BY: one group, empty or not (18.2.4.1)
        out = []
        within_budget = self.budget.check
        for key, members in groups.items():
            within_budget(len(out))
            values = list(key)
            for aggregate in aggregates:
                values.append(self._aggregate_one(aggregate, members, slots))
            out.append(tuple(values))
        return out_slots, out

    def _aggregate_one(self, aggregate, members, slots):
        """One aggregate over a group's rows (an id, None: unbound after an error)."""
        if aggregate.vars == "*":
            count = len(set(members)) if aggregate.distinct else len(members)
            return self.terms.intern(f'"{count}"^^<{XSD.integer}>')
        slot = slots.get(str(aggregate.vars))
        values = [row[slot] for row in members] if slot is not None else []
        errors = len(members) - len(values)
        if aggregate.name == "Aggregate_Count":
            count = len(set(values)) if aggregate.distinct else len(values)
            return self.terms.intern(f'"{count}"^^<{XSD.integer}>')
        if aggregate.name == "Aggregate_Sample":
            return values[0] if values else None
        keys = self.terms.keys
        try:
            found = aggregate_values(aggregate, [term(keys[value]) for value in values], errors)
        except SparqlError:
            return None
        return self.terms.intern(found.key)

    def _extend_expression(self, slots, rows, variable, expr):
        if isinstance(expr, Variable):
            source = slots.get(str(expr))
            if variable in slots:
                return slots, rows
            slots = dict(slots)
            slots[variable] = len(slots)
            return slots, [row + (row[source] if source is not None else None,) for row in rows]
        names = sorted(str(v) for v in _expression_variables(expr) if str(v) in slots)
        positions = [slots[v] for v in names]
        scope = self.scope(None)
        keys = self.terms.keys
        intern = self.terms.intern
        memo: dict[tuple, Any] = {}
        out = []
        within_budget = self.budget.check
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
            return slots, [row[:-1] for row in out]  # rdflib keeps the bound value
        slots = dict(slots)
        slots[variable] = len(slots)
        return slots, out

    def _order(self, slots, rows, conditions):
        keys = self.terms.keys
        for condition in reversed(conditions):
            expr = condition.expr
            if not isinstance(expr, Variable):
                raise Unsupported("ORDER BY an expression")  # compile_fast refuses these first
            slot = slots.get(str(expr))
            reverse = bool(condition.order and condition.order == "DESC")
            if slot is None:
                continue
            rows = sorted(rows, key=lambda row: order_key(term(keys[row[slot]]) if row[slot] is not None else None),
                          reverse=reverse)
        return rows


#: how much of its input a filter is taken to keep, for join ordering
FILTER_SELECTIVITY = 1 / 3


def _join_order(atoms: list, filters: list[set[str]]) -> list[int]:
    """The order to join the triple patterns in: the least rows made on the way (estimated).

    Every order is tried for up to 5 patterns, a greedy choice beyond. A pattern's rows
    are its index's fanout given what is bound; a filter that becomes decidable keeps a
    third of them. Patterns that share no variable with those before come last.
    """
    count = len(atoms)
    if count <= 1:
        return list(range(count))
    if count <= 5:
        best, best_cost = None, None
        for order in permutations(range(count)):
            cost = _order_cost(atoms, filters, order, best_cost)
            if cost is not None and (best_cost is None or cost < best_cost):
                best, best_cost = order, cost
        return list(best)
    order: list[int] = []
    remaining = list(range(count))
    while remaining:
        choice = min(remaining, key=lambda index: _order_cost(atoms, filters, order + [index], None, last=True))
        order.append(choice)
        remaining.remove(choice)
    return order


def _order_cost(atoms, filters, order, bound_cost, last=False):
    bound: set[str] = set()
    rows, cost = 1.0, 0.0
    for index in order:
        content, pattern = atoms[index]
        names = [value for kind, value in pattern if kind == "v"]
        connected = not bound or any(name in bound for name in names)
        rows *= _fanout(content, pattern, bound)
        if not connected:
            rows *= 1000.0  # a cartesian product: only when nothing else is left
        now = bound | set(names)
        for needed in filters:
            if needed <= now and not needed <= bound:
                rows *= FILTER_SELECTIVITY
        bound = now
        cost += rows
        if bound_cost is not None and cost >= bound_cost:
            return None
    return rows if last else cost


def _fanout(content, pattern, bound: set[str]) -> float:
    (s_kind, s), (p_kind, p), (o_kind, o) = pattern
    if s_kind == "c" and o_kind == "c" or (s_kind == "c" and o_kind == "v" and o not in bound) or \
            (o_kind == "c" and s_kind == "v" and s not in bound):
        if p_kind == "c" or p not in bound:
            return float(content.estimate(s if s_kind == "c" else None, p if p_kind == "c" else None,
                                          o if o_kind == "c" else None))
    fanout = getattr(content, "fanout", None)
    predicate = p if p_kind == "c" else None
    s_bound = s_kind == "c" or s in bound
    o_bound = o_kind == "c" or o in bound
    if fanout is None:
        return float(content.estimate(None, predicate, None)) / (10.0 if s_bound or o_bound else 1.0)
    return fanout(predicate, s_bound, o_bound)


def order_supported(plan: FastPlan) -> bool:
    return all(
        isinstance(condition.expr, Variable)
        for kind, value in plan.post if kind == "order" for condition in value
    )


def check_plan(plan: FastPlan | None) -> FastPlan | None:
    """None when a part of the plan is only known to be unsupported after compiling."""
    if plan is None or not order_supported(plan):
        return None
    return plan


__all__ = ["FastPlan", "FastEvaluation", "compile_fast", "check_plan"]
