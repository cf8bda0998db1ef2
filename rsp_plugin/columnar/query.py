"""The columnar backend of a compiled plan: polars joins over id columns, filters by distinct value, grouped aggregates.

A query's `CompiledPlan` (rsp_plugin.query.plan: basic graph patterns with
FILTERs, GROUP BY and aggregates, then BIND, HAVING, ORDER BY, DISTINCT, LIMIT)
is evaluated by `ColumnarBackend` over column windows (`columns.py`), a backend
of the protocol in rsp_plugin.query.backend, with the per-fact backend's
semantics:

- a triple pattern is a filter of the content's (s, p, o) columns by its
  constants, renamed to its variables (deduplicated when the content may hold a
  triple twice: a window's content is a set);
- patterns are joined smallest first (hash joins in polars), each next pattern
  sharing a variable with what is joined, a cross product only when none does;
- a FILTER is decided once per distinct tuple of the values it reads, by the
  check every backend asks (`EvaluationContext.conjunct_check`), and kept
  across evaluations per value (not for NOW(), RAND() and the like); rows are
  kept by a semi-join on the tuples that pass;
- GROUP BY / aggregates: counts, distinct counts, integer sums, minima and
  maxima in polars; the result term (AVG of integers as xsd:decimal) made once
  per value by the per-fact path's own arithmetic (`query.sparql_values`); a
  group with another value (decimal, double, non-number) or GROUP_CONCAT is
  handed to every backend's aggregate (`EvaluationContext.aggregate_one`),
  term by term;
- what follows the aggregation (HAVING, BIND, ORDER BY, projection, DISTINCT,
  LIMIT) works on few rows and is every backend's (`query.backend.finish`);
- the evaluation's bounds (`query.bounds`): a join's size is known before it
  runs (at most the rows so far times the most rows of the next table per key;
  counted exactly when that is past the bound), so a join that would pass
  `max_solutions` is never run; the time is checked between steps and every
  few dozen values of a filter.

Per row, no Python: per distinct value or per group, some.
"""

from __future__ import annotations

from decimal import Decimal

import numpy as np

from ..core.lazy import LazyModule
from ..core.xsd import RANK_TYPE, decimal_lexical
from ..query.algebra import aggregate_values
from ..query.backend import (
    Backend,
    EvaluationContext,
    Solutions,
    all_slots,
    group_slots,
)
from ..query.content import Snapshot, UnionContent
from ..query.fastpath import FactBackend
from ..query.plan import CompiledPlan, expression_variables, walk
from ..query.sparql_values import SparqlError, term
from ..query.sparql_values import number as number_term
from .columns import ColumnContent, row_columns
from .panes import PANE, PaneAggregates, pane_shape

pl = LazyModule("polars")  # (imported by the first plan that joins or groups by polars)

#: value kinds of a term, for aggregates: a canonical xsd:integer that fits in 62 bits, anything else
INT, DEC, OTHER = 0, 1, 3
#: a canonical xsd:decimal of at most 6 fraction digits under 2**31 is read as an integer of
#: millionths (DEC): the partial aggregates of panes sum and compare such values exactly
DECIMAL_SCALE = 10 ** 6
_XSD_INTEGER = RANK_TYPE[0]
_XSD_DECIMAL = RANK_TYPE[1]
#: aggregate results kept by value (`integer_result`): the oldest half dropped past this many
_RESULTS_KEPT = 1 << 16
#: functions whose value depends on the evaluation, not only on the row: never kept across evaluations
_TIME_DEPENDENT = {"Builtin_NOW", "Builtin_RAND", "Builtin_UUID", "Builtin_STRUUID", "Builtin_BNODE"}
_EMPTY = np.empty(0, dtype=np.int64)


def columnar_supported(plan: CompiledPlan | None) -> bool:
    """Can `ColumnarBackend` run this plan? (Not when an expression asks a triple's timestamp: columns
    keep no arrival time per triple.)"""
    return plan is not None and not plan.reads_timestamps()


class _Aggregate:
    """What an rdflib aggregate node says, read once (its attributes are slow to read)."""

    __slots__ = ("node", "name", "distinct", "vars", "res")

    def __init__(self, node):
        self.node = node
        self.name = node.name
        self.distinct = bool(node.distinct)
        self.vars = node.vars if node.vars == "*" else str(node.vars)
        self.res = str(node.res)


class ColumnarState:
    """What a query's columnar evaluations keep between them: filter outcomes per distinct value,
    the numeric reading of terms, static graphs as columns. Forgotten when the dictionary forgets."""

    def __init__(self, terms):
        self.terms = terms
        self.generation = terms.generation
        self.filters: dict[int, dict[tuple, bool]] = {}
        self.values: dict[int, tuple] = {}
        self.tables: dict[int, tuple] = {}
        #: (kind, value, datatype) -> the id of the aggregate's result term
        self.results: dict[tuple, int] = {}
        #: id(plan) -> its aggregates read once
        self.aggregates: dict[int, list] = {}
        #: (id(plan), variables, which aggregated variables have values that are not integers) ->
        #: the polars expressions of its grouping (made once: polars expressions cost to build)
        self.expressions: dict[tuple, list] = {}
        #: `values` as sorted numpy columns (ids, kinds, integers), made again after it changed
        self._value_arrays: tuple | None = None
        #: id(plan) -> its aggregates kept per pane (`panes.PaneAggregates`), or None when its plan
        #: has none (work kept across reports: not state, made again after a restore)
        self.panes: dict[int, object] = {}

    def backend(self, plan: CompiledPlan, snapshot, context: EvaluationContext) -> "ColumnarBackend":
        """One evaluation of `plan` over `snapshot`'s columns, keeping what it learns here."""
        return ColumnarBackend(plan, snapshot, context, self)

    def pane_aggregates(self, plan: CompiledPlan):
        """The plan's aggregates kept per pane across reports (`panes.PaneAggregates`), or None when
        its shape does not allow it (`panes.pane_shape` says why)."""
        key = id(plan)
        if key not in self.panes:
            shape = pane_shape(plan)
            self.panes[key] = PaneAggregates(plan, shape) if not isinstance(shape, str) else None
        found = self.panes[key]
        return found if found is not None and found.plan is plan else None

    def value_arrays(self) -> tuple:
        """(ids, kinds, integer values) of the terms in `values`, sorted by id (0: no integer), and
        (lowest id, place of each id from it) when the ids span a short range (else None)."""
        if self._value_arrays is None:
            ids = np.array(sorted(self.values), dtype=np.int64)
            found = [self.values[value] for value in ids.tolist()]
            kinds = np.array([row[1] for row in found], dtype=np.int8)
            integers = np.array([row[2] or 0 for row in found], dtype=np.int64)
            dense = None
            if len(ids) and int(ids[-1]) - int(ids[0]) < max(1 << 16, 16 * len(ids)):
                places = np.full(int(ids[-1]) - int(ids[0]) + 1, -1, dtype=np.int64)
                places[ids - ids[0]] = np.arange(len(ids))
                dense = (int(ids[0]), places)
            self._value_arrays = (ids, kinds, integers, dense)
        return self._value_arrays

    def value_places(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Where each id of the column is in `value_arrays` (0 if it is not) and whether it is
        there: by subscript when the ids span a short range, else by binary search (which costs
        more than a subscript by 40x on unsorted columns)."""
        ids, _, _, dense = self.value_arrays()
        if not len(ids):
            return np.zeros(len(column), dtype=np.int64), np.zeros(len(column), dtype=bool)
        if dense is not None:
            low, places = dense
            offsets = column - low
            inside = (offsets >= 0) & (offsets < len(places))
            if bool(inside.all()):
                at = places[offsets]
            else:
                at = np.full(len(column), -1, dtype=np.int64)
                at[inside] = places[offsets[inside]]
            hit = at >= 0
            at[~hit] = 0
            return at, hit
        at = np.searchsorted(ids, column)
        at[at == len(ids)] = 0
        return at, ids[at] == column

    def check(self) -> None:
        """After the dictionary forgot terms, drop what names them (ids are never reused: what
        names only known ids stays true, and is not worked out again)."""
        if self.generation != self.terms.generation:
            known = self.terms.keys
            for memo in self.filters.values():
                dead = [values for values in memo if not all(v is None or v in known for v in values)]
                for values in dead:
                    del memo[values]
            self.values = {term: found for term, found in self.values.items() if term in known}
            self._value_arrays = None
            self.tables.clear()
            self.results = {key: term for key, term in self.results.items() if term in known}
            self.generation = self.terms.generation

    def __getstate__(self):
        state = dict(self.__dict__)
        state.update(generation=-1, filters={}, values={}, tables={}, results={}, aggregates={}, expressions={},
                     _value_arrays=None, panes={})
        return state


#: below this many rows in the windows, an evaluation indexes them and takes the per-fact fast path
#: (a polars plan costs a few ms whatever its size; a small window is joined faster by dicts)
SMALL = 300


class ColumnarBackend(Backend):
    """One evaluation of a plan's conjunction over column windows (and static graphs); a small
    snapshot is indexed and joined by the per-fact backend instead."""

    def __init__(self, plan: CompiledPlan, snapshot, context: EvaluationContext, state: ColumnarState | None = None):
        self.plan = plan
        self.snapshot = snapshot
        self.context = context
        self.terms = context.terms
        self.budget = context.budget
        self.state = state or ColumnarState(context.terms)
        self.state.check()
        self._small: FactBackend | None | bool = False  # (not asked yet)
        #: graph -> its (s, p, o) columns and whether they are a set (`_content_columns`)
        self._contents: dict = {}
        #: the pane of each row of the default graph's columns, when the backend runs over a batch of
        #: panes (`over_panes`): the first pattern's table keeps it, every one when `pane_everywhere`
        #: (then joins match panes too)
        self._pane_column: np.ndarray | None = None
        self.pane_everywhere = True
        #: the patterns joined, when not all the plan's (`over_panes`: the part kept per pane)
        self.atoms: list | None = None

    @property
    def _per_fact(self) -> FactBackend | None:
        """The per-fact backend over the snapshot indexed, when it is small (else None); asked once."""
        if self._small is False:
            indexed = self._small_snapshot()
            self._small = FactBackend(self.plan, indexed, self.context) if indexed is not None else None
        return self._small

    def over_panes(self, pane: np.ndarray, s: np.ndarray, p: np.ndarray, o: np.ndarray, *, atoms=None,
                   distinct: bool = True) -> "ColumnarBackend":
        """The same plan (its patterns `atoms`, when given) over rows of several panes (`pane`: each
        row's), by polars whatever their size: its solutions carry a `__pane` column. Each solution's
        rows are from one pane when the caller sets `pane_everywhere` (the join matches panes) or
        knows that no join value is in two of the panes. `distinct`: no row repeats another (else
        each pattern's rows are taken once)."""
        batch = ColumnarBackend(self.plan, Snapshot([row_columns(pane, s, p, o, distinct=distinct)]), self.context,
                                self.state)
        batch._small = None
        batch._pane_column = pane
        batch._pane_tables = {}
        batch.fixed = None  # (set by the caller: (static patterns, their rows), joined without panes)
        batch.pane_everywhere = False
        batch.atoms = atoms
        return batch

    def _small_snapshot(self):
        """The snapshot with its column windows as indexes, when they are small (else None)."""
        snapshot = self.snapshot
        default = snapshot.default
        parts = default.parts if isinstance(default, UnionContent) else [default]
        columns = [part for part in [*parts, *snapshot.named.values()] if isinstance(part, ColumnContent)]
        if sum(part.row_count() for part in columns) >= SMALL:
            return None

        def indexed(part):
            return part.index() if isinstance(part, ColumnContent) else part

        return Snapshot([indexed(part) for part in parts],
                        {name: indexed(part) for name, part in snapshot.named.items()})

    # the conjunction ---------------------------------------------------------------------------

    def frame_solutions(self) -> tuple[dict[str, int], pl.DataFrame | None]:
        """Variable slots and the solutions as a frame (one column per variable, named by it)."""
        slots, frame, _ = self._solutions_plan()
        if frame is None:
            return slots, None
        if pl.holds(frame, "LazyFrame"):
            frame = frame.collect()
            if not len(frame):
                return all_slots(self.plan), None
        return slots, frame

    def _solutions_plan(self):
        """(slots, frame, tables): the solutions as a frame, or as a lazy frame (its joins not run
        yet) when no FILTER needs the rows on the way; None when a pattern matches nothing. A lazy
        frame may turn out empty. `tables`: the pattern tables (variables -> their values)."""
        conjunction = self.plan.conjunction
        terms = self.terms
        tables = []
        for graph, pattern in (conjunction.atoms if self.atoms is None else self.atoms):
            resolved = []
            for kind, value in pattern:
                if kind == "c":
                    found = terms.find(value)
                    if found is None:
                        return all_slots(self.plan), None, []
                    resolved.append(("c", found))
                else:
                    resolved.append(("v", value))
            table = self._pattern_table(graph, resolved, carry=self.pane_everywhere or not tables)
            if not len(table):
                return all_slots(self.plan), None, []
            tables.append(table)
        pending = [(graph, conjunct, expression_variables(conjunct)) for graph, conjunct in conjunction.conjuncts]
        frame = None
        bound: set[str] = set()
        remaining = list(range(len(tables)))
        lazy = False
        most = 0  # the most rows the frame can have (its length, when it is not lazy)
        within_budget = self.budget.check
        while remaining:
            connected = [k for k in remaining if frame is None or set(tables[k].columns) & bound]
            choice = min(connected or remaining, key=lambda k: len(tables[k]))
            remaining.remove(choice)
            table = tables[choice]
            if frame is None:
                frame = table
                most = len(table)
            else:
                shared = [name for name in table.columns if name in bound]
                most = self._join_bound(frame, most, table, shared)
                if most is None:  # the bound is past: counted exactly on the frame's rows
                    if lazy:
                        frame, lazy = frame.collect(), False
                    most = _join_size(frame, table, shared)
                    within_budget(most)
                joined = None if lazy or len(shared) != 1 else _sorted_join(frame, table, shared[0])
                if joined is not None:  # (a merge by binary search: no plan to make)
                    frame = joined
                else:
                    if not pending:  # nothing to decide on the way: the joins run in one plan, at the end
                        if not lazy:
                            frame, lazy = frame.lazy(), True
                        table = table.lazy()
                    frame = frame.join(table, on=shared, how="inner") if shared else frame.join(table, how="cross")
            bound |= set(table.collect_schema().names() if lazy else table.columns)
            ready = [item for item in pending if item[2] <= bound]
            for item in ready:
                pending.remove(item)
                frame = self._filter(frame, item[0], item[1], sorted(item[2]))
            if not lazy:
                most = len(frame)
                if not most:
                    return all_slots(self.plan), None, []
            within_budget(most if not lazy else 0)
        for graph, conjunct, names in pending:  # a filter on a variable no pattern binds
            frame = self._filter(frame, graph, conjunct, sorted(names & bound))
        if not lazy and not len(frame):
            return all_slots(self.plan), None, []
        names = frame.collect_schema().names() if lazy else frame.columns
        slots = {name: index for index, name in enumerate(names)}
        return slots, frame, tables

    def _join_bound(self, frame, most: int, table: pl.DataFrame, shared: list[str]) -> int | None:
        """The most rows joining a frame of at most `most` rows with `table` on `shared` can make, or
        None when that is past the budget's `max_solutions` (then count them: `_join_size`)."""
        limit = self.budget.max_solutions
        product = most * len(table)
        if product <= limit:
            return product
        if not shared:
            return None
        bound = most * _most_per_key(table, shared)
        return bound if bound <= limit else None

    def solutions(self) -> Solutions:
        if self.plan.aggregation is None and self._pane_column is None and self.plan.form == "SELECT":
            panes = self.state.pane_aggregates(self.plan)  # (a plan without aggregation keeps its solutions
            if panes is not None:  # per pane: `panes.py`)
                found = panes.solutions(self)
                if found is not None:
                    return found
        if self._per_fact is not None:
            return self._per_fact.solutions()
        slots, frame = self.frame_solutions()
        if frame is None:
            return slots, []
        return slots, frame.rows()

    def _content_columns(self, graph) -> tuple[tuple, bool]:
        """The (s, p, o) numpy columns of a graph of the snapshot, and whether they are a set already
        (made once per evaluation and graph)."""
        made = self._contents.get(graph)
        if made is not None:
            return made
        content = self.snapshot.graph(graph)
        parts = content.parts if isinstance(content, UnionContent) else [content]
        columns = []
        distinct = True
        for part in parts:
            if isinstance(part, ColumnContent):
                _, s, p, o = part.columns()
                distinct &= part.distinct
            else:
                s, p, o = self._static_columns(part)
            if len(s):
                columns.append((s, p, o))
        if not columns:
            made = (_EMPTY, _EMPTY, _EMPTY), True
        elif len(columns) == 1:
            made = columns[0], distinct
        else:
            made = tuple(np.concatenate(column) for column in zip(*columns)), False
        self._contents[graph] = made
        return made

    def _static_columns(self, part) -> tuple:
        """A static graph (a TripleIndex) as columns, made once per graph (while it keeps its size)."""
        tables = self.state.tables
        found = tables.get(id(part))
        if found is None or found[0] is not part or found[1] != len(part):
            triples = list(part.match(None, None, None))
            columns = np.array(triples, dtype=np.int64).reshape(len(triples), 3)
            found = tables[id(part)] = (part, len(part), (columns[:, 0].copy(), columns[:, 1].copy(),
                                                            columns[:, 2].copy()))
        return found[2]

    def _pattern_table(self, graph, pattern, carry: bool = True) -> pl.DataFrame:
        """The rows of the graph matching a triple pattern, one column per variable: cut by numpy
        masks, made a frame once (a polars call costs more than the mask over 100k rows). `carry`:
        with the pane of each row (`over_panes`)."""
        if self._pane_column is not None and graph is None:  # (a pane batch reads a pattern's rows twice)
            key = tuple(pattern)
            table = self._pane_tables.get(key)
            if table is None:
                static = self.fixed is not None and key in self.fixed[0]
                table = self._pane_tables[key] = self._match_table(graph, pattern, not static,
                                                                   self.fixed[1] if static else None)
            return table if carry or PANE not in table.columns else table.drop(PANE)
        return self._match_table(graph, pattern, carry)

    def _match_table(self, graph, pattern, carry: bool, rows=None) -> pl.DataFrame:
        """`_pattern_table`'s work; `rows`: (s, p, o) read instead of the graph's (a pane batch's
        static rows: no pane, each taken once)."""
        if rows is None:
            (s, p, o), distinct = self._content_columns(graph)
        else:
            (s, p, o), distinct = rows, False
        columns = {"s": s, "p": p, "o": o}
        mask = None
        names: dict[str, str] = {}
        same: list[tuple[str, str]] = []
        for position, (kind, value) in zip(("s", "p", "o"), pattern):
            if kind == "c":
                test = columns[position] == value
                mask = test if mask is None else mask & test
            elif value in names:
                same.append((names[value], position))
            else:
                names[value] = position
        for first, second in same:
            test = columns[first] == columns[second]
            mask = test if mask is None else mask & test
        carried = {}
        if self._pane_column is not None and graph is None and carry and rows is None:
            carried[PANE] = self._pane_column
        if mask is not None:
            picked = np.flatnonzero(mask)
            table = pl.DataFrame({**{name: columns[position][picked] for name, position in names.items()},
                                  **{name: column[picked] for name, column in carried.items()}},
                                 schema={name: pl.Int64 for name in [*names, *carried]})
        else:
            table = pl.DataFrame({**{name: columns[position] for name, position in names.items()}, **carried},
                                 schema={name: pl.Int64 for name in [*names, *carried]})
        if not distinct and len(table):
            table = table.unique()
        return table

    # filters --------------------------------------------------------------------------------

    def _filter(self, frame: pl.DataFrame, graph, conjunct, variables: list[str]) -> pl.DataFrame:
        """Keep the rows whose values pass the conjunct, decided once per distinct tuple of values."""
        if not variables:
            return frame if self.passing(graph, conjunct, variables, [()])[0] else frame.clear()
        candidates = frame.select(variables).unique().rows()
        passing = [values for values, found in zip(candidates, self.passing(graph, conjunct, variables, candidates))
                   if found]
        if len(passing) == len(candidates):
            return frame
        if len(variables) == 1:
            name = variables[0]
            return frame.filter(pl.col(name).is_in(pl.Series(name, [v[0] for v in passing], dtype=pl.Int64).implode()))
        keep = pl.DataFrame(passing, schema={name: pl.Int64 for name in variables}, orient="row")
        return frame.join(keep, on=variables, how="semi")

    def passing(self, graph, conjunct, variables: list[str], candidates: list[tuple]) -> list[bool]:
        """Whether each tuple of values of `variables` (distinct) passes the filter conjunct: decided once
        per tuple across evaluations (the query's memo, unless the conjunct reads the time)."""
        check = self.context.conjunct_check(graph, conjunct, {name: k for k, name in enumerate(variables)})
        memo = self._memo_of(conjunct)
        within_budget = self.budget.check
        out = []
        for number, values in enumerate(candidates):
            if not number % 64:
                within_budget()
            found = memo.get(values) if memo is not None else None
            if found is None:
                found = bool(check(values))
                if memo is not None:
                    memo[values] = found
            out.append(found)
        return out

    def _memo_of(self, conjunct) -> dict | None:
        if any(getattr(node, "name", None) in _TIME_DEPENDENT for node in walk(conjunct)):
            return None
        return self.state.filters.setdefault(id(conjunct), {})

    # aggregates -------------------------------------------------------------------------------

    def aggregate(self) -> Solutions:
        """The groups: merged from partial aggregates kept per pane when the plan and the window allow
        it (`panes.py`), else by polars over the solutions' frame (a lazy one: its joins and the
        grouping in one plan)."""
        panes = self.state.pane_aggregates(self.plan)
        if panes is not None:
            found = panes.aggregate(self)
            if found is not None:
                return found
        if self._per_fact is not None:
            return self._per_fact.aggregate()
        slots, frame, tables = self._solutions_plan()
        found = self._frame_aggregate(slots, frame, tables) if frame is not None else None
        if found is None:  # no solutions (a lazy frame's joins may find none)
            return self.context.group(self.plan.aggregation, (all_slots(self.plan) if frame is not None else slots, []))
        return found

    def _frame_aggregate(self, slots, frame, tables: list):
        """Rows (group values, then the aggregates' ids) of the groups of a frame of solutions (a
        lazy one: its joins, the value tables' and the grouping run in one plan); None if it has
        no rows."""
        group_vars, nodes = self.plan.aggregation
        lazy = pl.holds(frame, "LazyFrame")
        self._collected = None
        aggregates = self.state.aggregates.get(id(self.plan))
        if aggregates is None or aggregates[0].node is not nodes[0]:
            aggregates = self.state.aggregates[id(self.plan)] = [_Aggregate(node) for node in nodes]
        grouped_frame = frame
        for name in group_vars:
            if name not in slots:
                grouped_frame = grouped_frame.with_columns(pl.lit(None, dtype=pl.Int64).alias(name))
        by = list(dict.fromkeys(group_vars))
        work = grouped_frame
        others: dict[str, bool] = {}  # aggregated variable -> has it a value that is not an integer?
        for aggregate in aggregates:
            variable = aggregate.vars
            if (variable != "*" and variable in slots and variable not in others
                    and aggregate.name in _NUMERIC_AGGREGATES):
                if lazy or frame[variable].null_count():
                    table = self._value_table(self._values_of(variable, frame, tables))
                    others[variable] = bool((table[f"__kind_{variable}"] != INT).any())
                    work = work.join(table.lazy() if lazy else table, left_on=variable,
                                     right_on=f"__id_{variable}", how="left", coalesce=False)
                else:  # the values' columns gathered by numpy from those kept across evaluations
                    kinds, integers = self._value_columns(frame[variable].to_numpy())
                    others[variable] = bool((kinds != INT).any())
                    work = work.with_columns(pl.Series(f"__kind_{variable}", kinds),
                                             pl.Series(f"__int_{variable}", integers))
        key = (id(self.plan), tuple(slots), tuple(others.items()))
        expressions = self.state.expressions.get(key)
        if expressions is None or expressions[0] is not aggregates:
            made = [pl.len().alias("__rows")]
            for number, aggregate in enumerate(aggregates):
                made.extend(self._aggregate_expressions(number, aggregate, slots, others))
            expressions = self.state.expressions[key] = (aggregates, made)
        expressions = expressions[1]
        if by:
            summary = work.group_by(by, maintain_order=True).agg(expressions)
        else:  # one group: grouped by a constant, so that lists stay lists
            summary = work.with_columns(pl.lit(0).alias("__all")).group_by("__all").agg(expressions)
        if lazy:
            summary = summary.collect()
        if not len(summary):
            return None
        out_slots = group_slots(self.plan.aggregation)
        rows = []
        within_budget = self.budget.check
        for record in summary.iter_rows(named=True):
            within_budget(len(rows))
            values = [record[name] for name in group_vars]
            for number, aggregate in enumerate(aggregates):
                values.append(self._finish(number, aggregate, record, by, frame, slots))
            rows.append(tuple(values))
        return out_slots, rows

    def _aggregate_expressions(self, number: int, aggregate, slots, others: dict) -> list:
        """The polars expressions of one aggregate; `others`: per aggregated variable, whether one
        of its values is not an integer (its groups are then aggregated term by term)."""
        name = aggregate.name
        tag = f"__a{number}"
        if aggregate.vars == "*":
            if aggregate.distinct:
                columns = list(slots)
                return [pl.struct(columns).n_unique().alias(tag)]
            return []
        variable = aggregate.vars
        if variable not in slots:
            return []
        column = pl.col(variable)
        if name == "Aggregate_Count":
            return [(column.n_unique() if aggregate.distinct else column.count()).alias(tag)]
        if name == "Aggregate_Sample":
            return [column.first().alias(tag)]
        if name not in _NUMERIC_AGGREGATES:
            return []
        kind, integer = pl.col(f"__kind_{variable}"), pl.col(f"__int_{variable}")
        ids = column
        if aggregate.distinct and name in ("Aggregate_Sum", "Aggregate_Avg"):  # per distinct value (id): its
            # first occurrence (MIN / MAX DISTINCT are MIN / MAX: not filtered, as polars 2.1 may pick a value
            # outside the column from a filtered list sorted by another filtered list)
            first = column.is_first_distinct()
            kind, integer, ids = (c.filter(first) for c in (kind, integer, column))
        out = [kind.max().alias(f"{tag}_kind"), ids.count().alias(f"{tag}_n")]
        if others[variable]:
            out.append(ids.alias(f"{tag}_ids"))  # a group of other values is summed by the per-fact code
        if name in ("Aggregate_Sum", "Aggregate_Avg"):
            out.append(integer.sum().alias(f"{tag}_isum"))
            out.append(integer.abs().max().alias(f"{tag}_imax"))
        else:  # MIN / MAX of integers: the least / greatest value, the first of its row order on a tie
            order = ids.sort_by(integer, descending=name == "Aggregate_Max", maintain_order=True)
            out.append(order.first().alias(f"{tag}_pick"))
        return out

    def _finish(self, number: int, aggregate, record: dict, by: list[str], frame: pl.DataFrame, slots):
        """One aggregate's value in one group, as the per-fact path makes it (`query.algebra.aggregate_values`)."""
        name = aggregate.name
        tag = f"__a{number}"
        if aggregate.vars == "*":
            return self._count(record[tag] if aggregate.distinct else record["__rows"])
        variable = aggregate.vars
        if variable not in slots or name not in _NUMERIC_AGGREGATES and name not in (
                "Aggregate_Count", "Aggregate_Sample"):
            return self.context.aggregate_one(aggregate.node, self._members(record, by, frame), slots)
        if name == "Aggregate_Count":
            return self._count(record[tag])
        if name == "Aggregate_Sample":
            return record[tag]
        count = record[f"{tag}_n"]
        if not count:
            return self.context.aggregate_one(aggregate.node, [], slots)
        if record[f"{tag}_kind"] != INT:  # decimals, floats, doubles, non-numbers: term by term
            return self._by_terms(aggregate, record[f"{tag}_ids"])
        if name in ("Aggregate_Min", "Aggregate_Max"):
            return record[f"{tag}_pick"]
        if record[f"{tag}_imax"] * count < (1 << 62):
            total = record[f"{tag}_isum"]
        else:  # (possibly past 64 bits: summed exactly in Python)
            return self._by_terms(aggregate, self._group_values(aggregate, record, by, frame))
        return self.integer_result(name, total, count)

    def integer_result(self, name: str, total: int, count: int) -> int:
        """The id of SUM (`total`) or AVG (`total` / `count`) of `count` xsd:integers, made as the
        per-fact path makes it (AVG an xsd:decimal), once per value."""
        key = ("sum" if name == "Aggregate_Sum" else "avg", total, count)
        found = self.state.results.get(key)
        if found is None:
            if name == "Aggregate_Avg":  # (sparql_values.arithmetic's integer division, its term written directly)
                quotient, remainder = divmod(int(total), count)  # (|total| < 2**62: exact in 28 digits)
                if not remainder:
                    lexical = f"{quotient}.0"
                    value = Decimal(lexical)
                else:  # (not a whole number: the normalized quotient is the value its lexical form reads as)
                    value = (Decimal(total) / Decimal(count)).normalize()
                    lexical = format(value, "f")
                found = self.terms.intern_valued(f'"{lexical}"^^<{_XSD_DECIMAL}>', value)
            else:
                found = self.terms.intern_valued(f'"{int(total)}"^^<{_XSD_INTEGER}>', int(total))
            self.state.results[key] = found
            if len(self.state.results) > _RESULTS_KEPT:  # (sums and averages rarely repeat: keep the latest)
                self.state.results = dict(list(self.state.results.items())[_RESULTS_KEPT // 2:])
        return found

    def sum_results(self, name: str, totals: list, counts: list, decimals: list) -> list[int]:
        """`integer_result` (or `decimal_result` where `decimals` says so) of many groups at once."""
        kind = "sum" if name == "Aggregate_Sum" else "avg"
        kinds = (kind, "d" + kind)
        results = self.state.results
        out = []
        for total, count, decimal in zip(totals, counts, decimals):
            found = results.get((kinds[decimal], total, count))
            if found is None:
                found = (self.decimal_result if decimal else self.integer_result)(name, total, count)
                results = self.state.results  # (it may have been trimmed)
            out.append(found)
        return out

    def decimal_result(self, name: str, scaled: int, count: int) -> int:
        """The id of SUM (`scaled` millionths) or AVG (that / `count`) of xsd:decimals (and integers),
        made as the per-fact path makes it (`sparql_values.total`, `arithmetic`): an xsd:decimal."""
        key = ("dsum" if name == "Aggregate_Sum" else "davg", scaled, count)
        found = self.state.results.get(key)
        if found is None:
            value = Decimal(scaled).scaleb(-6)
            if name == "Aggregate_Avg":
                value = value / Decimal(count)
            lexical = decimal_lexical(value)
            found = self.terms.intern_valued(f'"{lexical}"^^<{_XSD_DECIMAL}>', Decimal(lexical))
            self.state.results[key] = found
            if len(self.state.results) > _RESULTS_KEPT:
                self.state.results = dict(list(self.state.results.items())[_RESULTS_KEPT // 2:])
        return found

    def decimal_term(self, scaled: int) -> int:
        """The id of the canonical xsd:decimal of `scaled` millionths (MIN / MAX of decimals: the term itself)."""
        return self.terms.intern(f'"{decimal_lexical(Decimal(scaled).scaleb(-6))}"^^<{_XSD_DECIMAL}>')

    def count_result(self, count: int) -> int:
        """The id of the xsd:integer `count` (COUNT's value), once per value."""
        key = ("count", count)
        found = self.state.results.get(key)
        if found is None:
            found = self.state.results[key] = self.terms.intern(number_term(count, 0).key)
        return found

    _count = count_result

    def _by_terms(self, aggregate, ids: list) -> int | None:
        """The per-fact path's aggregate over the group's values (ids: distinct already if DISTINCT)."""
        keys = self.terms.keys
        try:
            found = aggregate_values(aggregate.node, [term(keys[value]) for value in ids], 0)
        except SparqlError:
            return None
        return self.terms.intern(found.key)

    def _eager(self, frame) -> pl.DataFrame:
        """The solutions' frame, its joins run (once per evaluation) if it is lazy."""
        if not pl.holds(frame, "LazyFrame"):
            return frame
        if self._collected is None:
            self._collected = frame.collect()
        return self._collected

    @staticmethod
    def _values_of(variable: str, frame, tables: list) -> pl.Series:
        """The values a variable may take in the solutions: its column (a lazy frame's: the column
        of the smallest pattern table that binds it, which holds them all)."""
        if not pl.holds(frame, "LazyFrame"):
            return frame[variable]
        table = min((table for table in tables if variable in table.columns), key=len)
        return table[variable]

    def _group_values(self, aggregate, record, by, frame) -> list[int]:
        members = self._eager(frame)
        for name in by:
            value = record[name]
            members = members.filter(pl.col(name).is_null() if value is None else pl.col(name) == value)
        values = members[aggregate.vars].to_list()
        if aggregate.distinct:
            values = list(dict.fromkeys(values))
        return values

    def _members(self, record, by, frame) -> list[tuple]:
        members = self._eager(frame)
        for name in by:
            value = record[name]
            if name in members.columns:
                members = members.filter(pl.col(name).is_null() if value is None else pl.col(name) == value)
        return members.rows()

    def _value_columns(self, column: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per row of a column of ids: the kind of its term and (an integer that fits) its value
        (0 for any other: a group with such a value is aggregated term by term), read by binary
        search in the values kept across evaluations; the terms not seen before are read once."""
        state = self.state
        at, hit = state.value_places(column)
        if not bool(hit.all()):
            keys = self.terms.keys
            for value in sorted(set(column[~hit].tolist())):
                state.values[value] = _value_of(value, keys[value])
            state._value_arrays = None
            at, _ = state.value_places(column)
        _, kinds, integers, _ = state.value_arrays()
        return kinds[at], integers[at]

    def _value_table(self, column: pl.Series) -> pl.DataFrame:
        """Per distinct term of the column: its kind and (an integer that fits) its value (0 for
        any other, as `_value_columns`)."""
        name = column.name
        ids = column.drop_nulls().unique().to_numpy()
        kinds, integers = self._value_columns(ids)
        return pl.DataFrame({f"__id_{name}": ids, f"__kind_{name}": kinds, f"__int_{name}": integers},
                            schema={f"__id_{name}": pl.Int64, f"__kind_{name}": pl.Int8, f"__int_{name}": pl.Int64})


def _most_per_key(table: pl.DataFrame, shared: list[str]) -> int:
    """The most rows of `table` that agree on the `shared` columns (one id column: by numpy, a
    pattern's subjects often come sorted and distinct; several: grouped by polars)."""
    if len(shared) > 1:
        return int(table.group_by(shared).len()["len"].max() or 0)
    keys = table[shared[0]].to_numpy()
    if len(keys) < 2 or _strictly_increasing(keys):
        return min(len(keys), 1)
    keys = np.sort(keys)
    ends = np.flatnonzero(keys[1:] != keys[:-1])
    return int(np.diff(np.concatenate(([-1], ends, [len(keys) - 1]))).max())


def _join_size(frame: pl.DataFrame, table: pl.DataFrame, shared: list[str]) -> int:
    """How many rows the inner join of `frame` and `table` on `shared` (a cross join: none) makes,
    counted without making them: per key, the rows on one side times those on the other."""
    if not shared:
        return len(frame) * len(table)
    left = frame.group_by(shared).len()
    right = table.group_by(shared).len().rename({"len": "right"})
    counted = left.join(right, on=shared, how="inner").select((pl.col("len") * pl.col("right")).sum())
    return int(counted.item() or 0)


def _sorted_join(frame: pl.DataFrame, table: pl.DataFrame, key: str) -> pl.DataFrame | None:
    """The inner join of two frames on one id column, by binary search, when one side's keys are
    sorted and distinct (a window's rows come in time order, so a pattern's subjects often are):
    rows in the frame's order, each with its matches in the table's order, as polars' join gives
    them. None when neither side's keys are sorted and distinct."""
    if any(column.null_count() for column in (*frame.iter_columns(), *table.iter_columns())):
        return None
    left = frame[key].to_numpy()
    right = table[key].to_numpy()
    if _strictly_increasing(right):
        at = np.searchsorted(right, left)
        at[at == len(right)] = 0
        rows = np.flatnonzero(right[at] == left)
        picks = at[rows]
    elif _strictly_increasing(left):
        at = np.searchsorted(left, right)
        at[at == len(left)] = 0
        picks = np.flatnonzero(left[at] == right)
        rows = at[picks]
        if len(rows) > 1 and not bool(np.all(rows[1:] >= rows[:-1])):
            order = np.argsort(rows, kind="stable")
            rows, picks = rows[order], picks[order]
    else:
        return None
    columns = {name: frame[name].to_numpy()[rows] for name in frame.columns}
    columns.update((name, table[name].to_numpy()[picks]) for name in table.columns if name != key)
    return pl.DataFrame(columns, schema={name: pl.Int64 for name in columns})


def _strictly_increasing(values: np.ndarray) -> bool:
    return len(values) > 0 and (len(values) == 1 or bool(np.all(values[1:] > values[:-1])))


#: the aggregates computed over values' kinds (the others: COUNT, SAMPLE natively, GROUP_CONCAT per row)
_NUMERIC_AGGREGATES = ("Aggregate_Sum", "Aggregate_Avg", "Aggregate_Min", "Aggregate_Max")


def _value_of(value: int, key: str) -> tuple:
    """(id, kind, integer value) of one term as the per-fact path reads it (`sparql_values`): INT for
    an xsd:integer in its canonical form that fits in 62 bits, OTHER for anything else. (An integer
    written otherwise, `"079"` or `"79"^^xsd:int`, is one value of several terms: MIN / MAX pick among
    them as the per-fact path does, term by term.)"""
    if key[:1] != '"':
        return (value, OTHER, None)
    found = term(key).number
    if (found is not None and found[0] == 0 and -(1 << 62) < found[1] < (1 << 62)
            and key == f'"{found[1]}"^^<{_XSD_INTEGER}>'):
        return (value, INT, found[1])
    if (found is not None and found[0] == 1 and abs(found[1]) < (1 << 31)
            and found[1].as_tuple().exponent >= -6 and key == f'"{decimal_lexical(found[1])}"^^<{_XSD_DECIMAL}>'):
        return (value, DEC, int(found[1] * DECIMAL_SCALE))  # (exact: at most 16 digits)
    return (value, OTHER, None)


__all__ = ["ColumnarBackend", "ColumnarState", "columnar_supported"]
