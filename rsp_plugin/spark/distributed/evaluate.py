"""The Spark backend of a compiled plan: joins, filters, aggregates on the executors as a DataFrame plan.

The query's compiled plan (`rsp_plugin.query.plan.CompiledPlan`: triple
patterns, FILTER conjuncts, grouping and aggregates, what follows them) becomes:

- a triple pattern: the facts of its graph (windows and static graphs) that
  match its constants, one column per variable, and the instant interval;
- the patterns joined on their shared variables, each next one sharing a
  variable with those before (a cross product only when none does), the
  intervals intersected (a solution holds where all its triples do); or, when
  every window fact is seen at one instant (`Content.pointwise`: tumbling
  windows), each pattern's facts spread over their instants first and the
  joins matched on the instant too (an interval join compared each
  observation with every instant its sensor was seen at in the batch);
- a FILTER conjunct applied once its variables are bound, on the executors by
  the check every backend asks (`EvaluationContext.conjunct_check`: numbers and
  IRIs natively, anything else by the SPARQL expression evaluator), decided once
  per distinct tuple of values per worker;
- the solutions spread over the instants of their interval that this batch
  reports, one row per instant (a window's content is a set, so each solution
  once per instant);
- COUNTs by Spark's own aggregation; SUM / AVG / MIN / MAX per group on the
  executors by every backend's aggregate (`EvaluationContext.aggregate_one`:
  datatype promotion, exact decimal and float sums, errors leave it unbound);
- what is left per instant (few rows: groups, or the projected solutions with
  their multiplicities) is collected, and each instant's answer is finished as
  every backend's is (`query.backend.finish`: HAVING, ORDER BY, projection,
  DISTINCT, LIMIT, CONSTRUCT's template) from a `Collected` backend: `Finisher`.
"""

from __future__ import annotations

from collections import defaultdict

from ...query.backend import (
    Backend,
    EvaluationContext,
    Solutions,
    all_slots,
    finish,
    group_slots,
)
from ...query.plan import CompiledPlan, expression_variables
from .content import TRIPLE, Content, static_code, static_graphs
from .plan import DistributedPlan, fast_plan
from .sqltext import sql_string

_COUNTS = {"Aggregate_Count"}


def graph_codes(plan: DistributedPlan, graph: str | None) -> list[int]:
    """The `w` codes of the facts a pattern in `graph` (None: the default graph) reads."""
    codes = plan.windows_of(graph)
    if graph is None and plan.static.get(None) == "materialized":
        codes.append(-1)
    for position, (name, _) in enumerate(static_graphs(plan)):
        if name == graph:
            codes.append(static_code(position))
    return codes


class QueryStage:
    """Builds the Spark plan of one batch's reports and collects what the driver finishes."""

    def __init__(self, plan: DistributedPlan):
        self.plan = plan
        self.fast = fast_plan(plan)
        names = sorted(self.fast.conjunction.variables)
        self.columns = {name: f"v{number}" for number, name in enumerate(names)}

    # the solutions --------------------------------------------------------------------------------

    def solutions(self, content: Content):
        """A DataFrame (k, variable columns...) of the solutions at every instant the report reads
        (`Content.bounds`, joined in as data: the plan's code is the same every batch); or None when a
        pattern cannot match (a graph no fact is in)."""
        from pyspark.sql import functions as F

        conjunction = self.fast.conjunction
        columns = self.columns
        bounds = content.bounds
        tables = []
        for graph, pattern in conjunction.atoms:
            codes = graph_codes(self.plan, graph)
            if not codes:
                return None
            condition = [f"rel = '{TRIPLE}'", f"w IN ({', '.join(str(code) for code in codes)})"]
            chosen: dict[str, str] = {}
            for position, (kind, value) in enumerate(pattern):
                column = f"c{position}"
                if kind == "c":
                    condition.append(f"{column} = {sql_string(value)}")
                elif value in chosen:
                    condition.append(f"{column} = {chosen[value]}")
                else:
                    chosen[value] = column
            # a window's content is a set: the same fact arriving again (a sensor's type, derived
            # from each of its observations) matches once per interval, not once per arrival (the
            # solutions are made distinct per instant below; this keeps the joins small)
            facts, repeats = content.for_pattern(pattern)
            # (pointwise: a row per fact and instant it is seen at, so that the joins match on the instant)
            when = (["explode(sequence(greatest(k1, _lo), least(k2, _hi))) AS k"] if content.pointwise
                    else ["k1", "k2"])
            if content.pointwise:
                facts = facts.crossJoin(F.broadcast(bounds))
            table = (facts.where(" AND ".join(condition))
                     .selectExpr(*[f"{column} AS {columns[name]}" for name, column in chosen.items()], *when))
            if repeats:
                table = table.distinct()
            constants = sum(1 for kind, _ in pattern if kind == "c")
            tables.append((table, set(chosen), constants))
        pending = [(index, graph, conjunct, expression_variables(conjunct))
                   for index, (graph, conjunct) in enumerate(conjunction.conjuncts)]
        frame, bound = None, set()
        remaining = list(range(len(tables)))
        while remaining:
            connected = [i for i in remaining if frame is None or tables[i][1] & bound] or remaining
            choice = max(connected, key=lambda i: (tables[i][2], -i))
            remaining.remove(choice)
            table, names, _ = tables[choice]
            shared = [columns[name] for name in sorted(names & bound)]
            if frame is None:
                frame = table
            elif content.pointwise:
                frame = frame.join(table, on=[*shared, "k"], how="inner")
            else:
                right = table.selectExpr(*[columns[name] for name in sorted(names)], "k1 AS k1r", "k2 AS k2r")
                frame = frame.join(right, on=shared, how="inner") if shared else frame.crossJoin(right)
                frame = (frame.selectExpr(*[columns[name] for name in sorted(names | bound)],
                                          "greatest(k1, k1r) AS k1", "least(k2, k2r) AS k2")
                         .where("k1 <= k2"))
            bound |= names
            ready = [item for item in pending if item[3] <= bound]
            for item in ready:
                pending.remove(item)
                frame = self._filter(frame, item[0], sorted(item[3]))
        for item in pending:  # a filter without variables
            frame = self._filter(frame, item[0], sorted(item[3] & bound))
        variables = [columns[name] for name in sorted(bound)]
        if content.pointwise:
            return frame.select("k", *variables).distinct()
        return (frame.crossJoin(F.broadcast(bounds))
                .selectExpr("explode(sequence(greatest(k1, _lo), least(k2, _hi))) AS k", *variables).distinct())

    def _filter(self, frame, conjunct: int, names: list[str]):
        """Rows whose values pass the conjunct (decided on the executors, once per distinct value tuple)."""
        test = conjunct_filter(self.plan, conjunct, names, [self.columns[name] for name in names])
        return frame.mapInArrow(test, frame.schema)

    # what the driver collects ----------------------------------------------------------------------

    def collect(self, content: Content) -> dict:
        """Per instant k the report reads: what `Finisher` needs (rows of keys). One Spark action."""
        from pyspark.sql import functions as F

        fast = self.fast
        solutions = self.solutions(content)
        out: dict = defaultdict(list)
        if solutions is None:
            return out
        columns = self.columns
        bound = set(columns)
        if fast.form == "ASK":
            for row in solutions.select("k").distinct().collect():
                out[row.k] = True
            return out
        if fast.form == "CONSTRUCT":
            needed = sorted({value for triple in fast.template for kind, value in triple if kind == "v"} & bound)
            return self._counted(solutions, needed, out)
        if fast.aggregation is None:
            needed = set(fast.projection)
            for kind, value in fast.post:
                if kind == "order":
                    needed |= {str(condition.expr) for condition in value}
            return self._counted(solutions, sorted(needed & bound), out, distinct=fast.distinct)
        group_vars, aggregates = fast.aggregation
        present = [name for name in dict.fromkeys(group_vars) if name in bound]
        keys = ["k", *[columns[name] for name in present]]
        def native(aggregate) -> bool:
            return aggregate.name in _COUNTS or (aggregate.name == "Aggregate_Sample"
                                                 and str(aggregate.vars) in present)

        if all(native(aggregate) for aggregate in aggregates):
            measures = []
            for number, aggregate in enumerate(aggregates):
                if aggregate.name == "Aggregate_Sample":
                    measures.append(F.first(columns[str(aggregate.vars)]).alias(f"a{number}"))
                elif aggregate.vars == "*":
                    measures.append(F.count(F.lit(1)).alias(f"a{number}"))
                elif str(aggregate.vars) in bound:
                    column = columns[str(aggregate.vars)]
                    measures.append((F.countDistinct(column) if aggregate.distinct else F.count(column))
                                    .alias(f"a{number}"))
                else:
                    measures.append(F.lit(0).cast("long").alias(f"a{number}"))
            rows = solutions.groupBy(*keys).agg(*measures).collect()
            integer = "<http://www.w3.org/2001/XMLSchema#integer>"
            for row in rows:
                values = {name: row[columns[name]] for name in present}
                group = tuple(values.get(name) for name in group_vars)
                out[row.k].append(group + tuple(
                    row[f"a{n}"] if aggregate.name == "Aggregate_Sample" else f'"{row[f"a{n}"]}"^^{integer}'
                    for n, aggregate in enumerate(aggregates)))
            return out
        schema = "k BIGINT, " + ", ".join(f"{columns[name]} STRING" for name in present)
        schema = schema.rstrip(", ") + "".join(f", a{n} STRING" for n in range(len(aggregates)))
        finish = group_aggregates(self.plan, present, [columns[name] for name in present], sorted(bound),
                                  [columns[name] for name in sorted(bound)])
        rows = solutions.groupBy(*keys).applyInArrow(finish, schema).collect()
        for row in rows:
            values = {name: row[columns[name]] for name in present}
            group = tuple(values.get(name) for name in group_vars)
            out[row.k].append(group + tuple(row[f"a{n}"] for n in range(len(aggregates))))
        return out

    def _counted(self, solutions, needed: list[str], out: dict, distinct: bool = False) -> dict:
        columns = self.columns
        frame = solutions.select("k", *[columns[name] for name in needed])
        if distinct:
            rows = frame.distinct().collect()
            counts = None
        else:
            rows = frame.groupBy(*frame.columns).count().collect()
            counts = True
        for row in rows:
            values = tuple(row[columns[name]] for name in needed)
            out[row.k].append((values, row["count"] if counts else 1))
        for k in out:
            out[k] = (needed, out[k])
        return out


# the executors' functions -----------------------------------------------------------------------------


class _Executor:
    """What a worker decides a query's filters and aggregates with: the plan, an evaluation context
    over no snapshot (ids of its own dictionary), and the filters' outcomes per distinct value tuple."""

    def __init__(self, plan: CompiledPlan, base: str | None):
        from ...core.rdfterms import TermCache
        from ...core.terms import Dictionary

        self.plan = plan
        self.context = EvaluationContext(TermCache(Dictionary()), 0, base=base)
        self.terms = self.context.terms
        self.memo: dict = {}


_EXECUTORS: dict[tuple, _Executor] = {}


def _executor(plan: DistributedPlan) -> _Executor:
    """An `_Executor` per query and worker (made again when its dictionary grew past 2M terms)."""
    key = (plan.text, plan.filename, plan.base, plan.dialect)
    found = _EXECUTORS.get(key)
    if found is None or len(found.terms) > 2_000_000:
        found = _EXECUTORS[key] = _Executor(fast_plan(plan), plan.base)
    return found


def conjunct_filter(plan: DistributedPlan, conjunct: int, names: list[str], columns: list[str]):
    """mapInArrow: keep the rows whose `columns` (variables `names`) pass conjunct number `conjunct`."""

    def test(batches):
        import numpy as np
        import pyarrow as pa

        executor = _executor(plan)
        graph, expression = executor.plan.conjunction.conjuncts[conjunct]
        slots = {name: index for index, name in enumerate(names)}
        memo = executor.memo.setdefault(("filter", conjunct), {})
        check = None
        intern = executor.terms.intern
        for batch in batches:
            if batch.num_rows == 0:
                continue
            values = [batch.column(column).to_pylist() for column in columns]
            keep = np.zeros(batch.num_rows, dtype=bool)
            for row, key in enumerate(zip(*values) if values else [()] * batch.num_rows):
                found = memo.get(key)
                if found is None:
                    if check is None:
                        check = executor.context.conjunct_check(graph, expression, slots)
                    found = bool(check(tuple(None if value is None else intern(value) for value in key)))
                    if len(memo) < 1_000_000:
                        memo[key] = found
                keep[row] = found
            if keep.all():
                yield batch
            elif keep.any():
                yield batch.filter(pa.array(keep))

    return test


def group_aggregates(plan: DistributedPlan, group_names: list[str], group_columns: list[str],
                     names: list[str], columns: list[str]):
    """applyInArrow per (instant, group): every aggregate by every backend's code, as written terms."""

    def finish_group(table):
        import pyarrow as pa

        executor = _executor(plan)
        intern = executor.terms.intern
        keys = executor.terms.keys
        slots = {name: index for index, name in enumerate(names)}
        data = [table.column(column).to_pylist() for column in columns]
        members = [tuple(None if value is None else intern(value) for value in row) for row in zip(*data)]
        out = {"k": [table.column("k")[0].as_py()]}
        for name, column in zip(group_names, group_columns):
            out[column] = [table.column(column)[0].as_py()]
        for number, aggregate in enumerate(executor.plan.aggregation.aggregates):
            value = executor.context.aggregate_one(aggregate, members, slots)
            out[f"a{number}"] = [None if value is None else keys[value]]
        return pa.table(out)

    return finish_group


# the driver's part -----------------------------------------------------------------------------------


class Collected(Backend):
    """The backend of one reported instant whose solutions (or groups) Spark computed and the driver
    collected: given as they are (None: no solutions)."""

    def __init__(self, plan: CompiledPlan, context: EvaluationContext, solutions: Solutions | None = None,
                 groups: Solutions | None = None):
        self.plan = plan
        self.context = context
        self._solutions = solutions
        self._groups = groups

    def solutions(self) -> Solutions:
        if self._solutions is None:
            return all_slots(self.plan), []
        return self._solutions

    def aggregate(self) -> Solutions:
        if self._groups is None:
            return self.context.group(self.plan.aggregation, self.solutions())
        return self._groups


class Finisher:
    """Each reported instant's `Answer` from what `QueryStage.collect` brought back."""

    def __init__(self, plan: DistributedPlan):
        self.plan = plan
        self.fast = fast_plan(plan)

    def answer(self, tau: int, data, cache):
        from ...query.results import Answer

        fast = self.fast
        intern = cache.terms.intern
        context = EvaluationContext(cache, tau, base=self.plan.base)

        def ids(values):
            return tuple(None if value is None else intern(value) for value in values)

        if fast.form == "ASK":
            return Answer("ASK", boolean=bool(data))
        if fast.aggregation is not None:
            rows = [ids(row) for row in sorted(data or [], key=_order)]
            groups = (group_slots(fast.aggregation), rows) if rows or fast.aggregation.group_variables else None
            return finish(fast, Collected(fast, context, groups=groups), context, ordered=self.plan.ordered)
        needed, counted = data if data else ([], [])
        slots = {name: index for index, name in enumerate(needed)}
        rows = []
        for values, count in sorted(counted, key=lambda item: _order(item[0])):
            row = ids(values)
            rows.extend([row] * count)
        solutions = (slots, rows) if data else None
        return finish(fast, Collected(fast, context, solutions=solutions), context, ordered=self.plan.ordered)


def _order(values) -> tuple:
    return tuple("" if value is None else value for value in values)


__all__ = ["Collected", "QueryStage", "Finisher", "graph_codes"]
