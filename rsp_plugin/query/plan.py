"""A query's compiled plan: made once at registration, read by every backend at every report.

Most continuous queries are a conjunction of triple patterns with filters,
perhaps grouped and aggregated, then a few steps over few rows (BIND, HAVING,
ORDER BY, projection, DISTINCT, LIMIT; a CONSTRUCT template). `compile_plan`
recognises that shape in rdflib's algebra and returns a `CompiledPlan`; any
other body (OPTIONAL, UNION, subqueries, property paths, ...) returns None and
the general algebra evaluator (`algebra.py`) takes it.

A plan is data, not code: the backends (`backend.py`: the per-fact one in
`fastpath.py`, the columnar one in `rsp_plugin.columnar.query`, Spark's in
`rsp_plugin.spark.distributed.evaluate`) each compute the conjunction's
solutions and groups their own way; what follows is written once
(`backend.finish`).

>>> from rdflib.plugins.sparql import prepareQuery
>>> plan = compile_plan(prepareQuery(
...     "SELECT ?s (COUNT(?o) AS ?n) WHERE { ?s <http://ex/p> ?o FILTER(?o > 2) } GROUP BY ?s"))
>>> plan
<CompiledPlan SELECT atoms=1 filters=1 grouped=True>
>>> plan.aggregation.group_variables, plan.projection
(['s'], ['s', 'n'])
>>> unsupported_reason(prepareQuery("SELECT * WHERE { ?s ?p ?o OPTIONAL { ?o ?q ?r } }"))
'LeftJoin'
"""

from __future__ import annotations

from typing import Any, Iterator, NamedTuple

from rdflib import BNode, URIRef, Variable
from rdflib.paths import Path
from rdflib.plugins.sparql.parserutils import CompValue

from ..core.rdfterms import term_key
from .expressions import TIMESTAMP_FUNCTIONS

#: expression nodes whose value is not a function of the row (or needs the pattern evaluator)
_IMPURE = {"Builtin_EXISTS", "Builtin_NOTEXISTS", "Builtin_RAND", "Builtin_BNODE", "Builtin_UUID",
           "Builtin_STRUUID"}
#: the aggregates a plan groups by (GROUP_CONCAT too)
PLAN_AGGREGATES = {"Aggregate_Count", "Aggregate_Sum", "Aggregate_Avg", "Aggregate_Min", "Aggregate_Max",
                   "Aggregate_Sample", "Aggregate_GroupConcat"}


class Unsupported(Exception):
    """The algebra has a shape a compiled plan does not take (the message names the node)."""


class Conjunction:
    """Triple patterns (each in a graph: None = the default graph) and filter conjuncts.

    A pattern's terms are ("v", variable name) or ("c", N-Triples key); a blank node of the
    body is a variable named `_:label`."""

    def __init__(self):
        self.atoms: list[tuple[str | None, tuple]] = []   # (graph, (term, term, term))
        self.conjuncts: list[tuple[str | None, Any]] = []  # (graph, rdflib expression)
        self.variables: set[str] = set()

    def merge(self, other: "Conjunction") -> None:
        self.atoms += other.atoms
        self.conjuncts += other.conjuncts
        self.variables |= other.variables


class Aggregation(NamedTuple):
    """GROUP BY variables and the rdflib aggregate nodes (each with `.res`, the variable it binds)."""

    group_variables: list[str]
    aggregates: list


class CompiledPlan:
    """A whole query as data: a conjunction, then grouping, the steps after it, the projection.

    `post` holds the steps in order: ("extend", (variable, expression)), ("having", expression),
    ("order", [rdflib OrderCondition, ...]) (by variables only). `template` (CONSTRUCT) holds
    triples of ("v", variable) | ("b", blank label) | ("c", key)."""

    def __init__(self, form: str, conjunction: Conjunction):
        self.form = form
        self.conjunction = conjunction
        self.aggregation: Aggregation | None = None
        self.post: list[tuple[str, Any]] = []
        self.projection: list[str] = []
        self.distinct = False
        self.slice: tuple[int, int | None] | None = None
        self.template: list[tuple] | None = None

    def __repr__(self) -> str:
        return (f"<CompiledPlan {self.form} atoms={len(self.conjunction.atoms)} "
                f"filters={len(self.conjunction.conjuncts)} grouped={self.aggregation is not None}>")

    def expressions(self) -> list:
        """Every expression of the plan: the filters, then the steps after the grouping."""
        return [conjunct for _, conjunct in self.conjunction.conjuncts] + [value for _, value in self.post]

    def reads_timestamps(self) -> bool:
        """Does an expression ask a triple's arrival time (C-SPARQL's timestamp())? Only the
        backends that keep arrival times per triple can answer it."""
        return any(isinstance(node, URIRef) and str(node) in TIMESTAMP_FUNCTIONS
                   for expression in self.expressions() for node in walk(expression))


def compile_plan(algebra) -> CompiledPlan | None:
    """The plan of rdflib's translated query, or None when the body is not one a plan takes."""
    try:
        return _checked(algebra)
    except Unsupported:
        return None


def unsupported_reason(algebra) -> str | None:
    """Why the body has no plan (the algebra node's name, or what about it), None when it has one."""
    try:
        _checked(algebra)
    except Unsupported as why:
        return str(why)
    return None


def _checked(algebra) -> CompiledPlan:
    plan = _compile(algebra.algebra)
    for kind, value in plan.post:  # (checked after the whole body: a part it does not take is named first)
        if kind == "order" and not all(isinstance(condition.expr, Variable) for condition in value):
            raise Unsupported("ORDER BY an expression")
    return plan


def _compile(query: CompValue) -> CompiledPlan:
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
                    if aggregate.name not in PLAN_AGGREGATES:
                        raise Unsupported(aggregate.name)
                    if aggregate.vars != "*" and not isinstance(aggregate.vars, Variable):
                        raise Unsupported("an aggregate of an expression")
                aggregation = Aggregation(group_vars, list(node.A))
                node = group.p
                break
            else:
                break
            node = node.p
        plan = CompiledPlan("SELECT", _pattern(node, None))
        plan.aggregation = aggregation
        plan.post = list(reversed(post))
        plan.projection = projection
        plan.distinct = distinct
        plan.slice = plan_slice
        return plan
    if name in ("AskQuery", "ConstructQuery"):
        if node.name == "Project":
            node = node.p
        plan = CompiledPlan("ASK" if name == "AskQuery" else "CONSTRUCT", _pattern(node, None))
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
        if not expression_variables(node.expr) <= conjunction.variables:
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
    for node in walk(expr):
        if isinstance(node, CompValue) and node.name in _IMPURE:
            raise Unsupported(node.name)


def walk(expr) -> Iterator:
    """Every node of an rdflib expression (and of lists and tuples of them), the expression first."""
    stack = [expr]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, CompValue):
            stack.extend(value for value in node.values())
        elif isinstance(node, (list, tuple)):
            stack.extend(node)


def expression_variables(expr) -> set[str]:
    """The names of the variables an rdflib expression reads."""
    return {str(node) for node in walk(expr) if isinstance(node, Variable)}


__all__ = ["Aggregation", "CompiledPlan", "Conjunction", "PLAN_AGGREGATES", "Unsupported", "compile_plan",
           "expression_variables", "unsupported_reason", "walk"]
