"""The SPARQL 1.1 algebra (section 18) evaluated over one snapshot of a query's windows.

rdflib parses and translates the query; this evaluates the translated algebra
over the windows' id indexes, to the letter of the spec where rdflib's own
evaluator is not (empty groups, errors in expressions, property paths with
nested closures, negated property sets with inverse steps, operator typing).

    run = AlgebraEvaluation(snapshot, terms, tau=1000, base=...)
    variables, rows = run.select(algebra)      # rows: dicts variable -> written key
    run.ask(algebra); run.construct(algebra)

Solutions are dicts from variable names to written keys (N-Triples form);
pattern matching looks ids up in the windows' indexes and names them by key.
Expressions are `expressions.py`'s, values `sparql_values.py`'s.
"""

from __future__ import annotations

import re
from datetime import datetime, timezone
from typing import Iterable, Iterator

from rdflib import BNode, Literal, URIRef, Variable
from rdflib.paths import (
    AlternativePath,
    InvPath,
    MulPath,
    NegatedPath,
    Path,
    SequencePath,
)
from rdflib.plugins.sparql.parserutils import CompValue

from ..core.rdfterms import term_key
from ..core.regexes import LazyPattern
from . import service
from .bounds import UNBOUNDED, Budget
from .expressions import Scope, evaluate, holds
from .sparql_values import SparqlError, average, literal, number, order_key, total

Row = dict


class Unsupported(Exception):
    """An algebra node this evaluator does not know (the caller reports it for the window)."""


class AlgebraEvaluation:
    """One evaluation over a snapshot (`evaluate.Snapshot`): default graph and named graphs."""

    def __init__(self, snapshot, terms, *, tau: int = 0, base: str | None = None, services=(),
                 prefixes: dict[str, str] | None = None, budget: Budget = UNBOUNDED):
        self.snapshot = snapshot
        #: the evaluation's bounds (`bounds.py`): checked at every operator and every few dozen rows
        self.budget = budget
        #: SERVICE endpoints the user allowed (`service.py`), and the query's prefixes to ask them with
        self.services = tuple(services)
        self.prefixes = dict(prefixes or {})
        self.terms = terms
        self.keys = terms.keys
        self.tau = tau
        self.scope = Scope(now=datetime.fromtimestamp(tau / 1000, tz=timezone.utc), base=base,
                           exists=self._exists, timestamp=self._timestamp, blank_prefix=f"t{tau}e",
                           budget=budget)
        self._seeds: list[Row] = []
        self._exists_memo: dict = {}
        self._graph: str | None = None
        #: the ends of the path pattern being matched that are terms of the query
        self._anchors: set = set()

    # query forms -----------------------------------------------------------------------------

    def select(self, query) -> tuple[list[str], list[Row]]:
        rows = self.rows(query.p)
        return [str(v) for v in query.PV], rows

    def ask(self, query) -> bool:
        return bool(self.rows(query.p))

    def construct(self, query) -> list[tuple[str, str, str]]:
        """The template filled per solution: fresh blank nodes per solution, a triple with an
        unbound or misplaced term (a literal subject, a non-IRI predicate) left out."""
        template = query.template
        pattern = query.p
        if template is None:
            inner = pattern.p if pattern.name == "Project" else pattern
            if inner.name != "BGP":
                raise Unsupported("CONSTRUCT WHERE over more than a basic graph pattern")
            template = inner.triples
        out: dict[tuple[str, str, str], None] = {}
        made = 0
        within_budget = self.budget.check
        for number, row in enumerate(self.rows(pattern)):
            if not number % 1024:
                within_budget(len(out))
            blanks: dict = {}
            for triple in template:
                keys = []
                for node in triple:
                    if isinstance(node, Variable):
                        keys.append(row.get(str(node)))
                    elif isinstance(node, BNode):
                        if node not in blanks:
                            made += 1
                            blanks[node] = f"_:t{self.tau}c{made}"
                        keys.append(blanks[node])
                    else:
                        keys.append(term_key(node))
                s, p, o = keys
                if s is None or p is None or o is None or s[0] == '"' or p[0] != "<":
                    continue
                out[(s, p, o)] = None
        return list(out)

    # graph patterns ------------------------------------------------------------------------------

    def rows(self, node) -> list[Row]:
        handler = getattr(self, "_" + node.name, None)
        if handler is None:
            raise Unsupported(f"{node.name} is not supported here")
        self.budget.check()
        found = handler(node)
        self.budget.check(len(found))
        return found

    def _content(self):
        return self.snapshot.graph(self._graph)

    def _seed(self) -> list[Row]:
        return [dict(self._seeds[-1])] if self._seeds else [{}]

    def _BGP(self, node) -> list[Row]:
        return self._bgp(node.triples, self._seed())

    def _bgp(self, triples, rows: list[Row]) -> list[Row]:
        remaining = list(triples)
        content = self._content()
        while remaining and rows:
            bound = rows[0].keys()
            triple = min(remaining, key=lambda t: self._estimate(content, t, bound))
            remaining.remove(triple)
            rows = self._match(content, triple, rows)
        return rows

    def _estimate(self, content, triple, bound) -> float:
        ids = []
        free = 0
        for node in triple:
            if isinstance(node, Path):
                return 1e12
            name = _variable(node)
            if name is None:
                found = self.terms.find(term_key(node))
                if found is None:
                    return 0.0
                ids.append(found)
            elif name in bound:
                ids.append(None)
                free -= 1
            else:
                ids.append(None)
                free += 1
        if isinstance(triple[1], (Variable, BNode)) and ids[1] is None and free >= 2:
            return float(len(content)) * 10
        try:
            estimate = float(content.estimate(*ids))
        except (TypeError, AttributeError):
            estimate = float(len(content))
        return estimate / (10.0 ** max(0, 3 - free - 1)) if free < 3 else estimate

    def _match(self, content, triple, rows: list[Row]) -> list[Row]:
        s, p, o = triple
        names = [_variable(s), _variable(p), _variable(o)]
        constants = [None if names[i] is not None or isinstance(triple[i], Path) else self._id(triple[i])
                     for i in range(3)]
        keys = self.keys
        out = []
        within_budget = self.budget.check
        if isinstance(p, Path):
            self._anchors = {constants[i] if constants[i] is not _MISSING else ("k", term_key(triple[i]))
                             for i in (0, 2) if names[i] is None}
            for row in rows:
                within_budget(len(out))
                start = self._resolve(s, names[0], constants[0], row)
                end = self._resolve(o, names[2], constants[2], row)
                for number, (a, b) in enumerate(self._path(content, p, start, end)):
                    if not number % 1024:
                        within_budget(len(out))
                    new = dict(row)
                    if names[0] is not None:
                        new[names[0]] = self._key(a)
                    if names[2] is not None:
                        if names[2] == names[0] and new[names[2]] != self._key(b):
                            continue
                        new[names[2]] = self._key(b)
                    out.append(new)
            return out
        if any(c is _MISSING for c in constants):
            return []
        find = self.terms.find
        for row in rows:  # (a row may match the whole window: the budget checked per row)
            within_budget(len(out))
            ids = []
            impossible = False
            for index in range(3):
                name = names[index]
                if name is None:
                    ids.append(constants[index])
                    continue
                value = row.get(name)
                if value is None:
                    ids.append(None)
                    continue
                found = find(value)
                if found is None:
                    impossible = True
                    break
                ids.append(found)
            if impossible:
                continue
            free = [index for index in range(3) if ids[index] is None]
            for found in content.match(*ids):
                new = dict(row)
                consistent = True
                for index in free:
                    key = keys[found[index]]
                    name = names[index]
                    seen = new.get(name)
                    if seen is not None and seen != key:
                        consistent = False
                        break
                    new[name] = key
                if consistent:
                    out.append(new)
        return out

    def _id(self, node):
        found = self.terms.find(term_key(node))
        return _MISSING if found is None else found

    def _resolve(self, node, name, constant_id, row):
        """A path end: an id, ("k", key) for a term the windows do not hold, or None (free)."""
        if name is None:
            return constant_id if constant_id is not _MISSING else ("k", term_key(node))
        value = row.get(name)
        if value is None:
            return None
        found = self.terms.find(value)
        return found if found is not None else ("k", value)

    def _key(self, node_id) -> str:
        return node_id[1] if isinstance(node_id, tuple) else self.keys[node_id]

    # property paths (18.4) ---------------------------------------------------------------------------

    def _path(self, content, path, start, end) -> Iterator[tuple]:
        """(start, end) pairs joined by the path; free ends are None. Sequences and alternatives
        keep duplicates; closures (* + ?) give each pair once."""
        if isinstance(path, URIRef):
            predicate = self.terms.find(term_key(path))
            if predicate is None:
                return
            for s, _, o in content.match(start, predicate, end):
                yield s, o
        elif isinstance(path, InvPath):
            for o, s in self._path(content, path.arg, end, start):
                yield s, o
        elif isinstance(path, SequencePath):
            yield from self._sequence(content, list(path.args), start, end)
        elif isinstance(path, AlternativePath):
            for arg in path.args:
                yield from self._path(content, arg, start, end)
        elif isinstance(path, MulPath):
            yield from self._closure(content, path, start, end)
        elif isinstance(path, NegatedPath):
            yield from self._negated(content, path, start, end)
        else:
            raise Unsupported(f"path {path!r}")

    def _sequence(self, content, parts, start, end):
        if len(parts) == 1:
            yield from self._path(content, parts[0], start, end)
            return
        if start is None and end is not None:
            for middle, e in self._path(content, parts[-1], None, end):
                for s, _ in self._sequence(content, parts[:-1], None, middle):
                    yield s, e
            return
        for s, middle in self._path(content, parts[0], start, None):
            for _, e in self._sequence(content, parts[1:], middle, end):
                yield s, e

    def _closure(self, content, path: MulPath, start, end):
        zero = path.mod in ("*", "?")
        more = path.mod in ("*", "+")
        if start is None and end is None:
            for node in self._nodes(content):
                for _, e in self._closure(content, path, node, None):
                    yield node, e
            return
        if start is None:
            inverse = MulPath(InvPath(path.path), path.mod)
            for e, s in self._closure(content, inverse, end, None):
                yield s, e
            return
        reached: dict = {}
        if zero and (start in self._anchors or self._is_node(content, start)):
            reached[start] = None  # a zero-length path: from a term of the query, or a node of the graph
        frontier = [start]
        within_budget = self.budget.check
        while frontier:
            following = []
            for node in frontier:
                within_budget(len(reached))
                for _, nxt in self._path(content, path.path, node, None):
                    if nxt not in reached:
                        reached[nxt] = None
                        following.append(nxt)
            if not more:
                break
            frontier = following
        for node in reached:
            if end is None or node == end or (isinstance(node, tuple) and isinstance(end, tuple) and node == end):
                yield start, node

    def _is_node(self, content, node) -> bool:
        if isinstance(node, tuple):
            return False
        for _ in content.match(node, None, None):
            return True
        for _ in content.match(None, None, node):
            return True
        return False

    def _nodes(self, content) -> Iterable:
        nodes: dict = {}
        for s, _, o in content.match(None, None, None):
            nodes[s] = None
            nodes[o] = None
        return list(nodes)

    def _negated(self, content, path: NegatedPath, start, end):
        forward, backward = set(), set()
        has_forward = has_backward = False
        for arg in path.args:
            if isinstance(arg, InvPath):
                has_backward = True
                found = self.terms.find(term_key(arg.arg))
                if found is not None:
                    backward.add(found)
            else:
                has_forward = True
                found = self.terms.find(term_key(arg))
                if found is not None:
                    forward.add(found)
        if has_forward:
            for s, p, o in content.match(start, None, end):
                if p not in forward:
                    yield s, o
        if has_backward:
            for o, p, s in content.match(end, None, start):
                if p not in backward:
                    yield s, o

    # the other operators --------------------------------------------------------------------------

    def _Join(self, node) -> list[Row]:
        left = self.rows(node.p1)
        if not left:
            return []
        if node.p2.name == "BGP":
            return self._bgp(node.p2.triples, left)
        return _join(left, self.rows(node.p2), self.budget)

    def _LeftJoin(self, node) -> list[Row]:
        left = self.rows(node.p1)
        expr = node.expr
        out = []
        within_budget = self.budget.check
        if node.p2.name == "BGP":
            for row in left:
                within_budget(len(out))
                matches = self._bgp(node.p2.triples, [row])
                if expr is not None and not _true_expression(expr):
                    matches = [m for m in matches if holds(expr, m, self.scope)]
                out.extend(matches if matches else [row])
            return out
        right = self.rows(node.p2)
        index = _Index(right)
        for row in left:
            within_budget(len(out))
            matches = [merged for other in index.candidates(row) if (merged := _merge(row, other)) is not None]
            if expr is not None and not _true_expression(expr):
                matches = [m for m in matches if holds(expr, m, self.scope)]
            out.extend(matches if matches else [row])
        return out

    def _Filter(self, node) -> list[Row]:
        rows = self.rows(node.p)
        scope = self.scope
        return self.budget.kept(rows, lambda row: holds(node.expr, row, scope))

    def _Union(self, node) -> list[Row]:
        return self.rows(node.p1) + self.rows(node.p2)

    def _Minus(self, node) -> list[Row]:
        left = self.rows(node.p1)
        right = self.rows(node.p2)
        if not right:
            return left
        out = []
        within_budget = self.budget.check
        for row in left:
            within_budget(len(out))
            removed = False
            for other in right:
                shared = [name for name in row if name in other]
                if shared and all(row[name] == other[name] for name in shared):
                    removed = True
                    break
            if not removed:
                out.append(row)
        return out

    def _Graph(self, node) -> list[Row]:
        before = self._graph
        try:
            if isinstance(node.term, URIRef):
                name = str(node.term)
                if name not in self.snapshot.named:
                    return []
                self._graph = name
                return self.rows(node.p)
            variable = str(node.term)
            seeded = self._seeds[-1].get(variable) if self._seeds else None
            out = []
            for name in self.snapshot.named:
                key = f"<{name}>"
                if seeded is not None and seeded != key:
                    continue
                self._graph = name
                for row in self.rows(node.p):
                    found = row.get(variable)
                    if found is None:
                        row = dict(row)
                        row[variable] = key
                    elif found != key:
                        continue
                    out.append(row)
            return out
        finally:
            self._graph = before

    def _Extend(self, node) -> list[Row]:
        rows = self.rows(node.p)
        variable = str(node.var)
        expr = node.expr
        scope = self.scope
        out = []
        within_budget = self.budget.check
        for number, row in enumerate(rows):
            if not number % 64:
                within_budget(len(out))
            if row.get(variable) is not None:
                out.append(row)
                continue
            try:
                value = evaluate(expr, row, scope)
            except SparqlError:
                out.append(row)
                continue
            new = dict(row)
            new[variable] = value.key
            out.append(new)
        return out

    def _ToMultiSet(self, node) -> list[Row]:
        inner = node.p
        if inner.name == "values":
            return self._values(inner)
        seeds, self._seeds = self._seeds, []
        try:
            rows = self.rows(inner)
        finally:
            self._seeds = seeds
        if self._seeds:
            return _join(self._seed(), rows, self.budget)
        return rows

    def _values(self, node) -> list[Row]:
        rows = []
        for solution in node.res:
            rows.append({str(name): term_key(value) for name, value in solution.items()
                         if value is not None and not (isinstance(value, str) and value == "UNDEF")
                         and isinstance(value, (URIRef, Literal, BNode))})
        if self._seeds:
            return _join(self._seed(), rows, self.budget)
        return rows

    def _Project(self, node) -> list[Row]:
        names = [str(v) for v in node.PV]
        return [{name: row[name] for name in names if row.get(name) is not None} for row in self.rows(node.p)]

    def _Distinct(self, node) -> list[Row]:
        seen: dict = {}
        for row in self.rows(node.p):
            seen.setdefault(tuple(sorted(row.items())), row)
        return list(seen.values())

    _Reduced = _Distinct

    def _Slice(self, node) -> list[Row]:
        rows = self.rows(node.p)
        start = node.start or 0
        return rows[start: None if node.length is None else start + node.length]

    def _OrderBy(self, node) -> list[Row]:
        rows = self.rows(node.p)
        scope = self.scope
        for condition in reversed(list(node.expr)):
            if isinstance(condition, CompValue) and condition.name == "OrderCondition":
                expr, descending = condition.expr, condition.order == "DESC"
            else:
                expr, descending = condition, False

            def key(row, expr=expr):
                try:
                    return order_key(evaluate(expr, row, scope))
                except SparqlError:
                    return order_key(None)

            rows = sorted(rows, key=key, reverse=descending)
        return rows

    def _SelectQuery(self, node) -> list[Row]:
        return self.rows(node.p)

    def _AggregateJoin(self, node) -> list[Row]:
        group = node.p
        rows = self.rows(group.p)
        expressions = list(group.expr or ())
        scope = self.scope
        groups: dict[tuple, list[Row]] = {}
        within_budget = self.budget.check
        for number, row in enumerate(rows):
            if not number % 64:
                within_budget()
            key = []
            for expr in expressions:
                try:
                    key.append(evaluate(expr, row, scope).key)
                except SparqlError:
                    key.append(None)
            groups.setdefault(tuple(key), []).append(row)
        if not expressions and not groups:
            groups[()] = []
        out = []
        for key, members in groups.items():
            within_budget(len(out))
            result: Row = {}
            for expr, value in zip(expressions, key):
                if isinstance(expr, Variable) and value is not None:
                    result[str(expr)] = value
            for aggregate in node.A:
                try:
                    result[str(aggregate.res)] = self._aggregate(aggregate, members).key
                except SparqlError:
                    pass
            out.append(result)
        return out

    def _aggregate(self, aggregate, members: list[Row]):
        distinct = aggregate.distinct == "DISTINCT"
        scope = self.scope
        if aggregate.vars == "*":
            if distinct:
                return number(len({tuple(sorted(row.items())) for row in members}), 0)
            return number(len(members), 0)
        values = []
        errors = 0
        for row in members:
            try:
                values.append(evaluate(aggregate.vars, row, scope))
            except SparqlError:
                errors += 1
        return aggregate_values(aggregate, values, errors)

    def _timestamp(self, s: str, p: str, o: str) -> int | None:
        find = self.terms.find
        ids = (find(s), find(p), find(o))
        if None in ids:
            return None
        return self._content().timestamp(ids)

    # EXISTS ---------------------------------------------------------------------------------------

    def _exists(self, pattern, row: Row) -> bool:
        if isinstance(pattern, CompValue) and pattern.name.startswith("GroupGraphPattern"):
            from rdflib.plugins.sparql.algebra import translateGroupGraphPattern

            pattern = translateGroupGraphPattern(pattern)
        memo_key = (id(pattern), self._graph, tuple(sorted(row.items())))
        found = self._exists_memo.get(memo_key)
        if found is None:
            self._seeds.append(row)
            try:
                found = bool(self.rows(pattern))
            finally:
                self._seeds.pop()
            self._exists_memo[memo_key] = found
        return found

    def _ServiceGraphPattern(self, node):
        """An allowed endpoint's solutions joined with what is bound (registration refused the others)."""
        text = node.get("service_string", "") or ""
        if not isinstance(node.term, URIRef):
            raise Unsupported("SERVICE with a variable endpoint is not evaluated")
        try:
            rows = service.ask(str(node.term), text, self.prefixes, self.services)
        except service.ServiceError:
            if service.is_silent(text):
                return self._seed()
            raise
        return _join(self._seed(), rows, self.budget)


_MISSING = object()


_IRI = r"(?:<[^<>\"{}|^`\\\s]*>|[A-Za-z][\w.-]*:[\w.:%-]*|:[\w.:%-]*|a\b)"
_MEMBER = rf"\^?\s*{_IRI}"
_NEGATED_SET = LazyPattern(rf"!\s*(?:(?P<one>\^\s*{_IRI})|\((?P<many>\s*{_MEMBER}(?:\s*\|\s*{_MEMBER})*)\s*\))")
_STRINGS = LazyPattern(r"""'{3}.*?'{3}|"{3}.*?"{3}|'(?:[^'\\\n]++|\\.)*+'|"(?:[^"\\\n]++|\\.)*+"|#[^\n]*""", re.S)


def spell_out_inverse_negations(sparql: str) -> str:
    """`!^p` and `!(p|^q)` written as the equal `^(!p)` and `(!(p)|^(!(q)))`: rdflib's parser
    drops the IRI of an inverse step inside a negated property set, but reads these forms."""

    def rewrite(match: re.Match) -> str:
        members = [match.group("one")] if match.group("one") else match.group("many").split("|")
        members = [member.strip() for member in members]
        forward = [member for member in members if not member.startswith("^")]
        backward = [member[1:].strip() for member in members if member.startswith("^")]
        if not backward:
            return match.group(0)
        parts = []
        if forward:
            parts.append(f"!({'|'.join(forward)})")
        parts.append(f"^(!({'|'.join(backward)}))")
        return "(" + "|".join(parts) + ")"

    out, last = [], 0
    for protected in _STRINGS.finditer(sparql):
        start = protected.start()
        out.append(_NEGATED_SET.sub(rewrite, sparql[last:start]))
        out.append(protected.group(0))
        last = protected.end()
    out.append(_NEGATED_SET.sub(rewrite, sparql[last:]))
    return "".join(out)


def has_lost_inverse(algebra) -> bool:
    """Does a negated property set in the algebra hold an inverse step whose IRI rdflib lost?"""
    found = False

    def visit(node):
        nonlocal found
        if isinstance(node, NegatedPath):
            found |= any(isinstance(arg, CompValue) and arg.name == "InversePath" for arg in node.args)
        elif isinstance(node, (list, tuple)):
            for item in node:
                visit(item)
        elif isinstance(node, CompValue):
            for value in node.values():
                visit(value)
        elif isinstance(node, Path):
            for value in getattr(node, "args", ()) or (getattr(node, "path", None), getattr(node, "arg", None)):
                if value is not None:
                    visit(value)

    visit(algebra)
    return found


def aggregate_values(aggregate, values: list, errors: int = 0):
    """One aggregate (18.5) over a group's values (Terms; `errors`: members whose expression
    failed). A SparqlError leaves the aggregate's variable unbound."""
    name = aggregate.name
    if aggregate.distinct == "DISTINCT":
        values = list({value.key: value for value in values}.values())
    if name == "Aggregate_Count":
        return number(len(values), 0)
    if name == "Aggregate_Sample":
        if not values:
            raise SparqlError("SAMPLE of nothing")
        return values[0]
    if name in ("Aggregate_Sum", "Aggregate_Avg"):
        if errors:
            raise SparqlError(f"{name}: an error in the group")
        return total(values) if name == "Aggregate_Sum" else average(values)
    if name in ("Aggregate_Min", "Aggregate_Max"):
        if not values:
            raise SparqlError(f"{name} of nothing")
        pick = min if name == "Aggregate_Min" else max
        return pick(values, key=order_key)
    if name == "Aggregate_GroupConcat":
        if errors:
            raise SparqlError("GROUP_CONCAT: an error in the group")
        separator = " " if aggregate.separator is None else str(aggregate.separator)
        for value in values:
            if value.kind == "blank":
                raise SparqlError("GROUP_CONCAT of a blank node")
        return literal(separator.join(value.value for value in values))
    raise Unsupported(name)


def _variable(node) -> str | None:
    if isinstance(node, Variable):
        return str(node)
    if isinstance(node, BNode):
        return f"_:{node}"
    return None


def _true_expression(expr) -> bool:
    """rdflib puts TrueFilter as LeftJoin's expression when OPTIONAL has no FILTER."""
    return (isinstance(expr, CompValue) and expr.name == "TrueFilter") or (
        isinstance(expr, Literal) and expr.toPython() is True)


def _merge(a: Row, b: Row) -> Row | None:
    for name, value in b.items():
        seen = a.get(name)
        if seen is not None and seen != value:
            return None
    merged = dict(a)
    merged.update(b)
    return merged


class _Index:
    """Rows of one side of a join, hashed on the variables every row binds."""

    def __init__(self, rows: list[Row]):
        self.rows = rows
        common = set(rows[0]) if rows else set()
        for row in rows[1:]:
            common &= row.keys()
            if not common:
                break
        self.names = sorted(common)
        self.table: dict[tuple, list[Row]] = {}
        if self.names:
            for row in rows:
                self.table.setdefault(tuple(row[name] for name in self.names), []).append(row)

    def candidates(self, row: Row) -> list[Row]:
        if not self.names or any(row.get(name) is None for name in self.names):
            return self.rows
        return self.table.get(tuple(row[name] for name in self.names), [])


def _join(left: list[Row], right: list[Row], budget: Budget = UNBOUNDED) -> list[Row]:
    if not left or not right:
        return []
    index = _Index(right)
    out = []
    within_budget = budget.check
    for row in left:
        within_budget(len(out))
        for other in index.candidates(row):
            merged = _merge(row, other)
            if merged is not None:
                out.append(merged)
    return out


__all__ = ["AlgebraEvaluation", "Unsupported", "aggregate_values", "spell_out_inverse_negations",
           "has_lost_inverse"]
