"""The per-fact backend of a compiled plan: basic graph patterns and FILTERs joined over id indexes.

rdflib evaluates any SPARQL body, but over a 100k-triple window its nested
loops over `Graph.triples` cost seconds. A `CompiledPlan` (`plan.py`) is a
conjunction of triple patterns with filters; `FactBackend` joins it over the
windows' `TripleIndex`es with plain ints (datafrog's leapjoin idea: the
smallest pattern proposes, indexes extend), and `backend.finish` does the rest.

Semantics are SPARQL 1.1's, as the algebra evaluator has them: a filter that is
not a plain comparison of numbers or IRIs is evaluated by `expressions.py`,
once per distinct tuple of the values it reads (`EvaluationContext.conjunct_check`);
a comparison the spec has no operator for (a boolean, a custom datatype or a
dateTime against a number) is a type error and drops the row; aggregates are
`algebra.aggregate_values` (datatype promotion, AVG of integers as
xsd:decimal, an error in a group leaves the aggregate unbound). The
differential tests check every backend against a spec-conformant oracle and
the W3C suite's expectations.
"""

from __future__ import annotations

from itertools import permutations

from .backend import Backend, EvaluationContext, Solutions, all_slots
from .content import TripleIndex
from .plan import CompiledPlan, expression_variables


class FactBackend(Backend):
    """The conjunction of a plan joined over a snapshot's indexes, a row (tuple of ids) at a time."""

    def __init__(self, plan: CompiledPlan, snapshot, context: EvaluationContext):
        self.plan = plan
        self.snapshot = snapshot
        self.context = context
        self.terms = context.terms
        self.budget = context.budget

    def solutions(self) -> Solutions:
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
            return all_slots(self.plan, slots), []
        rows: list[tuple] = [()]
        pending = [(graph, conjunct, expression_variables(conjunct)) for graph, conjunct in conjunction.conjuncts]
        for choice in _join_order(atoms, [names for _, _, names in pending]):
            content, pattern = atoms[choice]
            rows = self._extend(rows, content, pattern, slots, pending)
            if not rows:
                return all_slots(self.plan, slots), []
        if pending:
            conjunct_check = self.context.conjunct_check
            checks = [conjunct_check(graph, conjunct, slots) for graph, conjunct, _ in pending]
            rows = self.budget.kept(rows, lambda row: all(check(row) for check in checks))
        return slots, rows

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
        checks = [self.context.conjunct_check(graph, conjunct, slots) for graph, conjunct, _ in ready]

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


__all__ = ["FactBackend"]
