"""Aggregates (or solutions) kept per pane: a report of a sliding window costs its new panes and a merge,
not its window.

A window `[RANGE r STEP s]` is a run of panes of g = gcd(r, s) ms (Flink's and
Scotty's slicing; `columns.PaneLedger` says which panes changed). For a plan
that is a basic graph pattern with FILTERs, GROUP BY and COUNT / SUM / AVG /
MIN / MAX, `PaneAggregates` keeps one partial aggregate per (pane, group) --
rows, integer sum, largest magnitude, least and greatest value -- computed once
when a pane is complete or changed, and a report merges the partials of its panes
(numpy over panes x groups rows). The changed panes are computed together: when
the joined patterns share one variable and no other (a star: an observation's
triples; its filters decided once per distinct value), by numpy (`_star_summary`),
else by one polars plan (the
columnar backend's own joins, filters and value tables, `ColumnarBackend.over_panes`).

When merging is exact (the pane-locality rule). The window's solutions are the
union of its panes' solutions, each counted once, when

1. each triple of the window's content is counted once: the content is `distinct`
   (`ColumnContent.distinct`: no triple can be there twice), or the joined patterns are
   two or more, the rows of a pane are taken once each, and a triple in two panes holds
   a join value in both, which rule 2 catches;
2. every solution's triples lie in one pane. A solution maps each pattern to a
   triple; two patterns that share a variable map to triples holding the same
   value there. So if, for every variable shared by two patterns (a join
   variable), no value of it occurs in two panes of the window (among the rows
   that match a pattern holding it, at its position), the two triples are in one
   pane; when the patterns form one connected join graph, all are. A plan of one
   pattern needs nothing. A plan whose patterns are not connected (a cross
   product, a pattern without variables beside others) is never merged. The
   values are checked per pane as the pane is computed: cheaply when the values
   of a pane all come after those of the panes before it (fresh IRIs interned in
   arrival order: an observation's subject), exactly (sorted by value) otherwise;
   a report whose window holds two panes sharing a join value is evaluated whole;
3. each partial reproduces SPARQL's aggregate exactly: COUNT of rows (COUNT(*)
   or of a variable the pattern binds, not DISTINCT), and SUM / AVG / MIN / MAX
   (MIN / MAX DISTINCT too) only while every value in the pane is an xsd:integer
   in canonical form that fits 62 bits (the columnar backend's integer kind) or
   a canonical xsd:decimal of at most 6 fraction digits under 2**31 (read as an
   integer of millionths): sums are exact integers (a group with a decimal
   summed in millionths, its integers lifted, the result the xsd:decimal the
   per-fact path adds up), AVG = SUM / COUNT as the per-fact path divides
   (xsd:decimal), MIN / MAX the one term of that value (a group with both
   integers and decimals under MIN / MAX is evaluated whole: equal values of
   two terms). A pane holding a decimal,
   a double, a non-number or a sum that may pass 62 bits makes a window that
   holds it be evaluated whole (mixed types, promotions and errors are then the
   per-fact path's); so is a window not aligned to panes, read with named windows or
   another window, or whose content is not distinct under a plan of one joined pattern;
4. the filters read only the row: no NOW() (the pane is computed once, for every
   report), nor a triple's timestamp (the columnar backend is not used then);
5. a pattern whose variables are all grouped on, and bound by the other patterns
   (`?s a ex:Device` beside `GROUP BY ?s`), is not joined per pane: over a set, a
   solution of the others extends in exactly one way or none, so it decides per group,
   and a report keeps the groups whose pattern matches a triple anywhere in its window
   (`split_existence`). Joined, it would tie every pane to every other (the sensor is
   typed in each), and no window could be merged.

Rows in no pane: the static graphs beside the window (FROM <g>) and, under
ENTAILMENT, B*. A joined pattern that matches such a row is static (`_Layout`): it is
joined with those rows as a whole (they hold for every pane alike), and a pane where
it also matches a window row is evaluated whole; rule 2 is asked of the other
patterns, which must form one connected join among themselves (a stream joined with a
graph of where each sensor is: `?o :sensor ?s ; :value ?v . ?s :room ?r`). When the
rows in no pane change, the partials are made again.

Under ENTAILMENT with a static TBox the panes are the materialization's
(`columnar.views`: `ShapeMaterializer` keeps its triples by expiry, a pane per time
point; `ColumnContent.pane_source` reads them, and B* with what never expires is in
no pane). An entailment may be in a pane twice or in two panes (rule 1 takes it once
per pane).

A SELECT without aggregation keeps its solutions per pane instead (a continuous join: an
observation's triples, filtered): by rules 1, 2 and 4, each solution of the window is the
solution of exactly one of its panes, so a report is its panes' rows (`PaneAggregates.solutions`),
then BIND, DISTINCT and the R2S operator as for a whole evaluation. With ORDER BY or LIMIT /
OFFSET the plan is evaluated whole (which rows tie, or come first, follows the evaluation's
order).

COUNT(DISTINCT), SUM / AVG DISTINCT, SAMPLE (but of a group variable, which
rdflib adds to project it) and GROUP_CONCAT do not merge: such a
plan is evaluated whole every report (`pane_shape` says why). A query whose
windows keep sharing join values across panes stops keeping panes after
`GIVE_UP` reports in a row that could not use them; so does one whose pane batch
passed the report's bounds (`query.bounds`) or failed: its reports are evaluated
whole, within their bounds, from then on.
"""

from __future__ import annotations

import numpy as np

from ..core.lazy import LazyModule
from ..core.xsd import RANK_TYPE
from ..query.backend import all_slots, group_slots
from ..query.content import UnionContent
from ..query.plan import CompiledPlan, expression_variables, walk
from .columns import ColumnContent

pl = LazyModule("polars")  # (imported by the first plan that joins or groups by polars)

#: the column of a pane batch's rows that says each row's pane (joined like a variable)
PANE = "__pane"
#: after this many reports in a row evaluated whole because of shared join values, stop keeping panes
GIVE_UP = 16
_MERGING = {"Aggregate_Count", "Aggregate_Sum", "Aggregate_Avg", "Aggregate_Min", "Aggregate_Max"}
_PART = {"Aggregate_Sum": "sum", "Aggregate_Avg": "sum", "Aggregate_Min": "min", "Aggregate_Max": "max"}
_TAU_DEPENDENT = {"Builtin_NOW"}
_INT_KIND = 0  # (columnar.query's INT: a canonical xsd:integer that fits 62 bits)
_DEC_KIND = 1  # (columnar.query's DEC: a canonical xsd:decimal as an integer of millionths)
_SCALE = 10 ** 6  # (columnar.query.DECIMAL_SCALE)
_SCALE_LIMIT = (1 << 62) // _SCALE
_LIMIT = 1 << 62
_EXACT_FLOAT = float(1 << 52)
_XSD_INTEGER = RANK_TYPE[0]
_BIG = np.iinfo(np.int64).max
#: a merge makes its rows this many groups at a time, checking its time budget between
_CHUNK = 4096


class PaneShape:
    """What a plan's aggregation keeps per pane: the aggregated variables, the join variables."""

    def __init__(self, plan: CompiledPlan, join_variables: list[str], numeric: list[str], core: list | None = None,
                 existence: list | None = None, star: str | None = None):
        aggregation = plan.aggregation
        self.group_variables = list(aggregation.group_variables) if aggregation is not None else []
        #: the patterns joined per pane, and those only tested per group (their variables all grouped on)
        self.core = list(plan.conjunction.atoms) if core is None else core
        self.existence = existence or []
        #: each existence pattern's variables, in written order
        self.tested = [list(dict.fromkeys(value for kind, value in pattern if kind == "v"))
                       for _, pattern in self.existence]
        #: the one variable the joined patterns share ("" for one pattern) when they share no other (the
        #: filters read only what they bind): the partials are then made by numpy (`_star_summary`); else None
        self.star = star
        #: (name, variable or "*") of each aggregate, read once (an rdflib node's attributes are slow)
        self.aggregates = [(aggregate.name, str(aggregate.vars)) for aggregate in aggregation.aggregates] \
            if aggregation is not None else []
        #: a plan without aggregation keeps its solutions per pane: the variables they bind, in slot order
        self.variables = sorted({value for _, pattern in self.core for kind, value in pattern if kind == "v"}) \
            if aggregation is None else []
        #: variables of two patterns or more (their values decide pane-locality)
        self.join_variables = join_variables
        #: the variables SUM / AVG / MIN / MAX read, each once
        self.numeric = numeric
        #: per such variable, the partials its aggregates need: "sum", "min", "max"
        self.parts = {name: sorted({_PART[aggregate] for aggregate, variable in self.aggregates if variable == name
                                    and aggregate in _PART}) for name in numeric}


def pane_shape(plan: CompiledPlan) -> PaneShape | str:
    """The plan's `PaneShape`, or why its aggregation cannot be kept per pane (the rule: module doc).

    >>> from rdflib.plugins.sparql import prepareQuery
    >>> from rsp_plugin.query.plan import compile_plan
    >>> def shape(body):
    ...     found = pane_shape(compile_plan(prepareQuery("PREFIX : <http://ex/> " + body)))
    ...     return found if isinstance(found, str) else found.join_variables
    >>> shape("SELECT ?s (AVG(?v) AS ?a) WHERE { ?o a :Obs ; :sensor ?s ; :value ?v } GROUP BY ?s")
    ['o']
    >>> shape("SELECT ?s (AVG(?v) AS ?a) WHERE { ?o :sensor ?s ; :value ?v . ?s a :Device } GROUP BY ?s")
    ['o']
    >>> shape("SELECT (COUNT(DISTINCT ?v) AS ?n) WHERE { ?o :value ?v }")
    'COUNT(DISTINCT) does not merge'
    >>> shape("SELECT (COUNT(*) AS ?n) WHERE { ?a :p ?b . ?c :q ?d }")
    'the patterns are not one connected join'
    >>> shape("SELECT (SUM(?v) AS ?n) WHERE { ?a :p ?v FILTER(?v < NOW()) }")
    'a filter reads NOW()'
    """
    aggregation = plan.aggregation
    if plan.form != "SELECT":
        return f"a {plan.form}"
    if aggregation is None and (plan.slice is not None or any(kind == "order" for kind, _ in plan.post)):
        return "ORDER BY or LIMIT without aggregation (rows taken in the window's order)"
    conjunction = plan.conjunction
    if not conjunction.atoms:
        return "no triple pattern"
    if any(graph is not None for graph, _ in conjunction.atoms):
        return "a pattern in a named graph"
    for _, conjunct in conjunction.conjuncts:
        if any(getattr(node, "name", None) in _TAU_DEPENDENT for node in walk(conjunct)):
            return "a filter reads NOW()"
    variables = conjunction.variables
    if aggregation is None:
        if not variables:
            return "no variable"
        return _shape_of(plan, conjunction.atoms, [], [])
    if not set(aggregation.group_variables) <= variables:
        return "a group variable no pattern binds"
    numeric: list[str] = []
    for aggregate in aggregation.aggregates:
        name, distinct = aggregate.name, bool(aggregate.distinct)
        if name == "Aggregate_Sample" and str(aggregate.vars) in aggregation.group_variables:
            continue  # (rdflib's SAMPLE of a group variable, to project it: the group's value)
        if name not in _MERGING:
            return f"{name[len('Aggregate_'):].upper()} does not merge"
        if aggregate.vars != "*" and str(aggregate.vars) not in variables:
            return "an aggregate of a variable no pattern binds"
        if name == "Aggregate_Count":
            if distinct:
                return "COUNT(DISTINCT) does not merge"
            continue
        if aggregate.vars == "*":
            return f"{name} of *"
        if distinct and name in ("Aggregate_Sum", "Aggregate_Avg"):
            return f"{name[len('Aggregate_'):].upper()}(DISTINCT) does not merge"
        if str(aggregate.vars) not in numeric:
            numeric.append(str(aggregate.vars))
    core, existence = split_existence(conjunction.atoms, aggregation.group_variables)
    return _shape_of(plan, core, existence, numeric)


def _shape_of(plan: CompiledPlan, core: list, existence: list, numeric: list[str]) -> PaneShape | str:
    """The `PaneShape` of the joined patterns `core`, or why they cannot be kept per pane."""
    conjunction = plan.conjunction
    pattern_variables = [{value for kind, value in pattern if kind == "v"} for _, pattern in core]
    if not _connected(pattern_variables):  # (the join graph: patterns, linked when they share a variable)
        return "the patterns are not one connected join"
    counted: dict[str, int] = {}
    for names in pattern_variables:
        for name in names:
            counted[name] = counted.get(name, 0) + 1
    joins = sorted(name for name, count in counted.items() if count > 1)
    star = None
    bound = set().union(*pattern_variables)
    if all(graph is None and expression_variables(conjunct) <= bound for graph, conjunct in conjunction.conjuncts):
        if len(core) == 1:
            star = ""
        elif len(joins) == 1 and all(joins[0] in names for names in pattern_variables):
            star = joins[0]
    return PaneShape(plan, joins, numeric, core, existence, star)


def split_existence(atoms: list, group_variables) -> tuple[list, list]:
    """(core, existence): the patterns whose variables are all grouped on and bound by the other
    patterns are existence tests per group (rule 5 of the module doc); the others are joined."""
    grouped = set(group_variables)
    existence = [atom for atom in atoms if {value for kind, value in atom[1] if kind == "v"} <= grouped]
    core = [atom for atom in atoms if atom not in existence]
    bound = {value for _, pattern in core for kind, value in pattern if kind == "v"}
    if not core or not grouped <= bound:
        return list(atoms), []
    return core, existence


class _Layout:
    """Which joined patterns read the window and which the rows in no pane (B*, static graphs): a
    pattern that matches such a row is static -- joined with those rows as a whole, and a pane where
    it matches a window row is evaluated whole --, the others read the panes, their join values kept
    pane-local. They must form one connected join among themselves (else two panes could meet
    through a static row)."""

    def __init__(self, window: list, static: list, joins: list[str], star: str | None, fixed):
        self.window, self.static, self.joins, self.star, self.fixed = window, static, joins, star, fixed

    @classmethod
    def of(cls, shape: PaneShape, backend, fixed) -> "_Layout | None":
        if fixed is None or not len(fixed[0]):
            return cls(shape.core, [], shape.join_variables, shape.star, None)
        window, static = [], []
        for atom in shape.core:
            (static if _matches_any(atom[1], fixed, backend.terms.find) else window).append(atom)
        if not window:
            return None
        if not static:
            return cls(window, [], shape.join_variables, shape.star, fixed)
        names = [{value for kind, value in pattern if kind == "v"} for _, pattern in window]
        if not _connected(names):
            return None
        counted: dict[str, int] = {}
        for each in names:
            for name in each:
                counted[name] = counted.get(name, 0) + 1
        return cls(window, static, sorted(name for name, count in counted.items() if count > 1), None, fixed)

    def static_keys(self, backend) -> set:
        """The static patterns as the columnar backend resolves them (constants as ids)."""
        find = backend.terms.find
        return {tuple(("c", find(value)) if kind == "c" else (kind, value) for kind, value in pattern)
                for _, pattern in self.static}


def _value_parts(kinds: np.ndarray, integers: np.ndarray) -> dict[str, np.ndarray]:
    """Per row of a numeric variable: a value partials cannot merge (`odd`), a decimal (`dec`), an integer
    too large for millionths (`big`), and its value in millionths (`scaled`; 0 for a big one)."""
    dec = kinds == _DEC_KIND
    big = (kinds == _INT_KIND) & (np.abs(integers) >= _SCALE_LIMIT)
    scaled = np.where(dec, integers, np.where(big, 0, integers) * _SCALE)
    return {"odd": (kinds != _INT_KIND) & ~dec, "dec": dec, "big": big, "scaled": scaled}


def _distinct_rows(columns: list[np.ndarray]) -> list[np.ndarray]:
    """The rows of the columns, each once (sorted)."""
    if len(columns[0]) < 2:
        return columns
    order = np.lexsort(columns[::-1])
    columns = [column[order] for column in columns]
    once = np.zeros(len(columns[0]), dtype=bool)
    once[0] = True
    for column in columns:
        once[1:] |= column[1:] != column[:-1]
    return columns if once.all() else [column[once] for column in columns]


def _isin(values: np.ndarray, candidates: np.ndarray) -> np.ndarray:
    """Which of `values` are among `candidates`: np.isin's answer, by one sort and a binary search
    (np.isin's fixed cost is ~10 us, twice this, and a report asks a few times), the smaller side
    sorted (a window's matches looked up for its few groups).

    >>> _isin(np.array([3, 1, 3, 9]), np.array([5, 3, 7, 3, 8, 0, 2, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20])).tolist()
    [True, False, True, False]
    """
    if not len(candidates) or not len(values):
        return np.zeros(len(values), dtype=bool)
    if len(candidates) > 4 * len(values):
        order = np.argsort(values, kind="stable")
        ordered = values[order]
        at = np.searchsorted(ordered, candidates)
        at[at == len(ordered)] = 0
        hit = np.zeros(len(ordered), dtype=bool)
        hit[at[ordered[at] == candidates]] = True  # (the first of equal values marked: each reads its first's)
        found = np.empty(len(values), dtype=bool)
        found[order] = hit[np.searchsorted(ordered, ordered)]
        return found
    ordered = np.sort(candidates)
    at = np.searchsorted(ordered, values)
    at[at == len(ordered)] = 0
    return ordered[at] == values


def _without(panes: np.ndarray, changed: np.ndarray) -> np.ndarray | None:
    """Which rows (`panes`: each row's, in order) are in no changed pane (`changed`: in order); None
    when none is because every changed pane comes after them (the stream in time order)."""
    if not len(panes) or panes[-1] < changed[0]:
        return None
    return ~_isin(panes, changed)


def _matches_any(pattern, columns, find) -> bool:
    """Does a triple of the columns match the pattern (its constants, and a variable repeated)?"""
    mask = np.ones(len(columns[0]), dtype=bool)
    seen: dict[str, np.ndarray] = {}
    for column, (kind, value) in zip(columns, pattern):
        if kind == "c":
            found = find(value)
            if found is None:
                return False
            mask &= column == found
        elif value in seen:
            mask &= seen[value] == column
        else:
            seen[value] = column
    return bool(mask.any())


def _connected(names: list[set]) -> bool:
    """Do the patterns (their variables) form one join graph?"""
    if len(names) < 2:
        return True
    reached, frontier = {0}, [0]
    while frontier:
        here = frontier.pop()
        for other, each in enumerate(names):
            if other not in reached and each & names[here]:
                reached.add(other)
                frontier.append(other)
    return len(reached) == len(names)


class PaneAggregates:
    """One query's partial aggregates per (pane, group), kept across reports (module doc: the rule); a
    plan without aggregation keeps its solutions per pane instead (`store`: the pane, each variable).

    `store`: numpy columns sorted by pane, one row per (pane, group): the pane, the group's
    values (ids), the rows, and per aggregated variable its integer sum, largest magnitude, least
    and greatest value. Per pane: whether it holds a value partials cannot merge (`odd`), and the
    latest earlier pane it shares a join value with (`conflicts`)."""

    def __init__(self, plan: CompiledPlan, shape: PaneShape):
        self.plan = plan
        self.shape = shape
        self._reset(None)
        self.in_a_row = 0
        self.enabled = True
        #: (key, columns, parts) of the rows in no pane (B*, static graphs), for `_window_of`
        self._fixed: tuple | None = None
        #: (the rows' key, `_Layout`), for `_layout_for`
        self._layout: tuple | None = None
        #: (None, the existence patterns' matches in the rows in no pane), for `_fixed_matches`
        self._fixed_found: tuple | None = None
        #: how many reports were merged from panes (the others were evaluated whole)
        self.merged = 0
        #: the slots of a merged row (`group_slots`, read once: an rdflib node's attributes are slow), or of
        #: a solution kept per pane
        self._slots = group_slots(plan.aggregation) if plan.aggregation is not None else \
            {name: place for place, name in enumerate(shape.variables)}

    def _reset(self, ledger) -> None:
        self.ledger = ledger
        self.seen = 0
        self.store: dict[str, np.ndarray] | None = None
        #: the room `store` grows into (`_Growing`), and each join variable's in `keys`
        self._grown_store: _Growing | None = None
        self._grown_keys: dict[str, _Growing] = {}
        #: (store, groups, its `_Prefix` or None where its sums do not allow one), made at the store's
        #: second merge (a block's reports merge against one store), and the store merged last
        self._prefix: tuple | None = None
        #: the window's sums per group over a store that grows (`_Running`), moved report by report
        self._running: _Running | None = None
        self._merged_on: dict | None = None
        #: the groups' values (tuples of ids) by group number (`__gid` in `store`), and the way back
        self.group_keys: list[tuple] = []
        self.group_ids: dict[tuple, int] = {}
        self.odd: set[int] = set()
        self.conflicts: dict[int, int] = {}
        #: join variable -> (pane, value) pairs of the panes kept, sorted by pane
        self.keys: dict[str, tuple[np.ndarray, np.ndarray]] = {}
        #: join variable -> the greatest value of the panes kept (the cheap test's bound)
        self.key_top: dict[str, int] = {}
        #: per existence pattern: (pane, its variables' values) of the panes kept, by pane
        self.matches: list[tuple[np.ndarray, np.ndarray]] = [
            (np.empty(0, dtype=np.int64), np.empty((0, len(names)), dtype=np.int64)) for names in self.shape.tested]

    # a report ----------------------------------------------------------------------------------------

    def aggregate(self, backend):
        """The plan's groups over the backend's snapshot merged from panes, or None when this report
        must be evaluated whole (the window or its values do not allow merging)."""
        window = self._panes_of(backend)
        if window is None:
            return None
        found = self._merge(backend, *window)
        if found is not None:
            self.merged += 1
        return found

    def solutions(self, backend):
        """The solutions of a plan without aggregation over the backend's snapshot: the rows its panes
        keep (each solution's triples are in one pane), or None when this report must be evaluated whole."""
        window = self._panes_of(backend)
        if window is None:
            return None
        first, last = window
        variables = self.shape.variables
        slots = dict(self._slots)
        store = self.store
        if store is None:
            return slots, []
        start = int(np.searchsorted(store[PANE], first, side="left"))
        stop = int(np.searchsorted(store[PANE], last, side="right"))
        backend.budget.check(max(stop - start, 0))
        self.merged += 1
        return slots, list(zip(*(store[name][start:stop].tolist() for name in variables)))

    def _panes_of(self, backend) -> tuple[int, int] | None:
        """(first, last): the panes of this report's window, their partials brought up to date, or None
        when it must be evaluated whole."""
        if not self.enabled:
            return None
        snapshot = backend.snapshot
        if snapshot.named:
            return None
        content, fixed = self._window_of(backend, snapshot.default)
        if content is None:
            return None
        ledger = content.panes
        layout = self._layout_for(backend, fixed)
        if layout is None:
            return None
        repeats = not content.distinct
        if repeats and len(layout.window) < 2:
            return None  # (a triple in two panes would count twice: join values catch it, one pattern cannot)
        width, origin = ledger.width, ledger.origin
        low, high = content.low, content.high
        if (low - origin) % width or (high - origin) % width or high <= low:
            return None
        first, last = (low - origin) // width, (high - origin) // width - 1
        if ledger is not self.ledger:
            self._reset(ledger)
        if content.serial < self.seen or (ledger.serial != content.serial and any(
                pane <= last and version > content.serial for pane, version in ledger.versions.items())):
            return None  # (the content is older than what was kept, or a batch came into it since)
        self._forget_before(first)
        try:
            self._refresh(backend, content, ledger, first, repeats, layout)
        except Exception:  # noqa: BLE001 - past the report's bounds (EvaluationCut) or a failure: what was kept
            self.enabled = False  # may miss a batch, so panes are not kept any more; the whole evaluation
            return None  # says what is wrong, within its bounds
        if any(first <= pane <= last for pane in self.odd):
            return None
        if any(first <= pane <= last and since >= first for pane, since in self.conflicts.items()):
            self.in_a_row += 1
            if self.in_a_row >= GIVE_UP:
                self.enabled = False
            return None
        self.in_a_row = 0
        return first, last

    def _forget_before(self, first: int) -> None:
        store = self.store
        if store is not None and len(store[PANE]) and store[PANE][0] < first:
            cut = int(np.searchsorted(store[PANE], first, side="left"))
            if 2 * cut >= len(store[PANE]):  # (cut when half is past: a merge reads from `first` on, and
                self.store = _Growing.cut(self._grown_store, store, cut)  # one store serves a block)
        if self.odd and min(self.odd) < first:
            self.odd = {pane for pane in self.odd if pane >= first}
        if self.conflicts and min(self.conflicts) < first:
            self.conflicts = {pane: since for pane, since in self.conflicts.items() if pane >= first}
        for name, (panes, values) in list(self.keys.items()):
            if len(panes) and panes[0] < first:
                cut = int(np.searchsorted(panes, first, side="left"))
                kept = _Growing.cut(self._grown_keys.get(name), {PANE: panes, "value": values}, cut)
                self.keys[name] = (kept[PANE], kept["value"])
        for number, (panes, values) in enumerate(self.matches):
            if len(panes) and panes[0] < first:
                cut = int(np.searchsorted(panes, first, side="left"))
                self.matches[number] = (panes[cut:], values[cut:])

    # panes that changed --------------------------------------------------------------------------------

    def _window_of(self, backend, content) -> tuple:
        """(the window content whose panes are kept, the rows in no pane: (key, (s, p, o)) or None), or
        (None, None) when the default graph is not one such window beside static graphs. The rows in no
        pane are a materialization's B* (`ColumnContent.pane_source`) and the static graphs' triples."""
        parts = content.parts if isinstance(content, UnionContent) else [content]
        windows = [part for part in parts if getattr(part, "panes", None) is not None]
        if len(windows) != 1:
            return None, None
        window = windows[0]
        fixed = []
        if window.pane_source is not None:
            fixed.append(window.pane_source.fixed_columns())
        for part in parts:
            if part is window:
                continue
            if isinstance(part, ColumnContent):
                return None, None  # (another window: its rows change, and have no panes)
            fixed.append(backend._static_columns(part))
        if not fixed:
            return window, None
        key = tuple((id(columns[0]), len(columns[0])) for columns in fixed)
        if self._fixed is None or self._fixed[0] != key:
            rows = fixed[0] if len(fixed) == 1 else tuple(np.concatenate(c) for c in zip(*fixed))
            self._fixed = (key, rows, fixed)  # (the parts kept: their ids stay theirs while they are used)
        return window, (key, self._fixed[1])

    def _layout_for(self, backend, fixed) -> _Layout | None:
        """The plan's joined patterns split for this content's rows in no pane (`_Layout`); made again,
        and the kept partials dropped, when those rows change. None: no pattern reads the window only."""
        key = fixed[0] if fixed is not None else None
        if self._layout is not None and self._layout[0] == key:
            return self._layout[1]
        layout = _Layout.of(self.shape, backend, fixed[1] if fixed is not None else None)
        if self._layout is not None:
            self._reset(self.ledger)  # (partials joined with other static rows)
        self._layout = (key, layout)
        self._fixed_found = None
        return layout

    def _refresh(self, backend, content, ledger, first: int, repeats: bool, layout: _Layout) -> None:
        """Compute the panes (from `first` on) that batches touched since the last report, in one plan."""
        if ledger.serial == self.seen:
            return
        serial = content.serial
        changed = sorted(pane for pane, version in ledger.versions.items()
                         if self.seen < version <= serial and pane >= first)
        self.seen = serial
        if not changed:
            return
        width, origin = ledger.width, ledger.origin
        t, s, p, o = content.rows_between(origin + changed[0] * width, origin + (changed[-1] + 1) * width)
        pane = (t - origin) // width
        if len(changed) < changed[-1] - changed[0] + 1:
            keep = _isin(pane, np.array(changed, dtype=np.int64))
            pane, s, p, o = pane[keep], s[keep], p[keep], o[keep]
        tables = self._pattern_rows(backend, layout.window, pane, s, p, o)
        changed_array = np.array(changed, dtype=np.int64)
        if self.shape.existence:
            self._keep_matches(self._pattern_rows(backend, self.shape.existence, pane, s, p, o), changed_array)
        local = not layout.joins or self._keep_join_values(tables, changed_array, layout.joins)
        odd: set[int] = set()
        for table in self._pattern_rows(backend, layout.static, pane, s, p, o):
            if table is not None and len(table[PANE]):  # (a static pattern matches the window there)
                odd |= set(table[PANE].tolist())
        summary = self._star_summary(backend, tables, repeats) if layout.star is not None else None
        if summary is None:  # (polars: the columnar backend's joins and filters over the batch)
            if repeats:  # (each triple once per pane: a triple in two panes stays twice)
                pane, s, p, o = _distinct_rows([pane, s, p, o])
            batch = backend.over_panes(pane, s, p, o, atoms=self.shape.core)
            if layout.static:
                batch.fixed = (layout.static_keys(backend), layout.fixed)
            # (joined on the pane too where the batch's panes may share a join value, or static rows join)
            batch.pane_everywhere = not local or bool(layout.static)
            summary = self._frame_summary(batch)
        if self.shape.variables:
            self._keep_rows(summary, changed_array, odd)
        else:
            self._keep_partials(summary, changed_array, odd)

    def _keep_matches(self, tables: list, changed: np.ndarray) -> None:
        """The existence patterns' matches in the changed panes replace theirs."""
        for number, (table, names) in enumerate(zip(tables, self.shape.tested)):
            panes, values = self.matches[number]
            kept = _without(panes, changed)
            if kept is not None:
                panes, values = panes[kept], values[kept]
            if table is not None and len(table[PANE]):
                fresh = np.stack([table[name] for name in names], axis=1) if names \
                    else np.empty((len(table[PANE]), 0), dtype=np.int64)
                panes, values = np.concatenate([panes, table[PANE]]), np.concatenate([values, fresh])
                if len(panes) > 1 and not bool(np.all(panes[1:] >= panes[:-1])):
                    order = np.argsort(panes, kind="stable")
                    panes, values = panes[order], values[order]
            self.matches[number] = (panes, values)

    def _pattern_rows(self, backend, patterns: list, pane, s, p, o) -> list[dict | None]:
        """Per pattern, its rows among the batch's: {variable: values, PANE: panes} (None: a
        constant no term has, so no row), cut by numpy masks."""
        find = backend.terms.find
        columns = (s, p, o)
        tables: list[dict | None] = []
        for _, pattern in patterns:
            mask = None
            names: dict[str, np.ndarray] = {}
            for column, (kind, value) in zip(columns, pattern):
                if kind == "c":
                    found = find(value)
                    if found is None:
                        break
                    test = column == found
                elif value in names:
                    test = names[value] == column
                else:
                    names[value] = column
                    continue
                mask = test if mask is None else mask & test
            else:
                if mask is None:
                    tables.append({**names, PANE: pane})
                else:
                    rows = np.flatnonzero(mask)
                    tables.append({**{name: column[rows] for name, column in names.items()}, PANE: pane[rows]})
                continue
            tables.append(None)
        return tables

    def _star_summary(self, backend, tables: list, repeats: bool = False) -> dict | None:
        """The partials per (pane, group) by numpy, for joined patterns that share one variable and no
        other, with no filter, when each pattern has at most one row per pane and value of it (None:
        not so; polars then)."""
        if any(table is None or not len(table[PANE]) for table in tables):
            return {}
        join = self.shape.star
        if len(tables) == 1:
            joined = tables[0]
        else:
            every_pane = np.concatenate([table[PANE] for table in tables])
            every_value = np.concatenate([table[join] for table in tables])
            low, high = int(every_pane.min()), int(every_pane.max())
            top = int(every_value.max())
            if int(every_value.min()) < 0 or (high - low + 1) * (top + 1) >= _LIMIT:
                return None
            keys = [(table[PANE] - low) * (top + 1) + table[join] if high > low else table[join]
                    for table in tables]
            places = []
            current = None
            for number, key in enumerate(keys):
                order = np.argsort(key, kind="stable")
                ordered = key[order]
                if len(ordered) > 1 and not bool(np.all(ordered[1:] != ordered[:-1])):
                    if not repeats:
                        return None  # (two rows of one pattern for one value in a pane: a product, polars)
                    names = list(tables[number])  # (a triple repeated in a pane: its rows taken once)
                    table = tables[number] = dict(zip(names, _distinct_rows([tables[number][n] for n in names])))
                    key = keys[number] = (table[PANE] - low) * (top + 1) + table[join] if high > low else table[join]
                    order = np.argsort(key, kind="stable")
                    ordered = key[order]
                    if len(ordered) > 1 and not bool(np.all(ordered[1:] != ordered[:-1])):
                        return None
                if current is None:
                    current, places = ordered, [order]
                    continue
                at = np.minimum(np.searchsorted(ordered, current), len(ordered) - 1)
                hit = ordered[at] == current
                current = current[hit]
                places = [place[hit] for place in places] + [order[at[hit]]]
                if not len(current):
                    return {}
            joined = {PANE: tables[0][PANE][places[0]]}
            for table, place in zip(tables, places):
                for name, column in table.items():
                    if name not in joined:
                        joined[name] = column[place]
        for _, conjunct in self.plan.conjunction.conjuncts:  # (the filters, on the joined rows)
            if not len(joined[PANE]):
                return {}
            keep = self._passing(backend, conjunct, joined)
            if keep is not None:
                joined = {name: column[keep] for name, column in joined.items()}
        count = len(joined[PANE])
        if not count:
            return {}
        shape = self.shape
        if shape.variables:  # (no aggregation: the solutions themselves)
            return joined
        columns = [joined[PANE], *(joined[name] for name in shape.group_variables)]
        order = np.lexsort(columns[::-1])
        columns = [column[order] for column in columns]
        starts = np.zeros(count, dtype=bool)
        starts[0] = True
        for column in columns:
            starts[1:] |= column[1:] != column[:-1]
        starts = np.flatnonzero(starts)
        summary = {PANE: columns[0][starts], "__rows": np.diff(np.append(starts, count)).astype(np.int64)}
        for name, column in zip(shape.group_variables, columns[1:]):
            summary[name] = column[starts]
        for name, parts in shape.parts.items():
            kinds, integers = backend._value_columns(joined[name][order])
            columns = _value_parts(kinds, integers)
            summary[f"__odd_{name}"] = np.logical_or.reduceat(columns["odd"], starts)
            summary[f"__bigs_{name}"] = np.logical_or.reduceat(columns["big"], starts)
            summary[f"__decs_{name}"] = np.add.reduceat(columns["dec"].astype(np.int64), starts)
            for prefix, values in (("", integers), ("s", columns["scaled"])):
                if "sum" in parts:
                    summary[f"__{prefix}sum_{name}"] = np.add.reduceat(values, starts)
                    summary[f"__{prefix}top_{name}"] = np.maximum.reduceat(np.abs(values), starts)
                if "min" in parts:
                    summary[f"__{prefix}min_{name}"] = np.minimum.reduceat(values, starts)
                if "max" in parts:
                    summary[f"__{prefix}max_{name}"] = np.maximum.reduceat(values, starts)
        return summary

    @staticmethod
    def _passing(backend, conjunct, joined: dict) -> np.ndarray | None:
        """Which joined rows pass a filter conjunct (None: all), decided once per distinct tuple of the
        values it reads (`ColumnarBackend.passing`, the columnar backend's filters' own)."""
        names = sorted(expression_variables(conjunct))
        if not names:
            return None if backend.passing(None, conjunct, names, [()])[0] else np.zeros(len(joined[PANE]), bool)
        if len(names) == 1:
            values, inverse = np.unique(joined[names[0]], return_inverse=True)
            candidates = [(value,) for value in values.tolist()]
        else:
            values, inverse = np.unique(np.stack([joined[name] for name in names], axis=1), axis=0,
                                        return_inverse=True)
            candidates = [tuple(row) for row in values.tolist()]
        passing = np.array(backend.passing(None, conjunct, names, candidates), dtype=bool)
        return None if passing.all() else passing[inverse.reshape(-1)]

    def _frame_summary(self, batch) -> dict:
        """The partials per (pane, group) by polars over the batch's solutions (numpy columns by pane);
        without aggregation, the solutions."""
        shape = self.shape
        _, frame, _ = batch._solutions_plan()
        if pl.holds(frame, "LazyFrame"):
            frame = frame.collect()
        if frame is None or not len(frame):
            return {}
        if shape.variables:
            return {name: frame[name].to_numpy() for name in (PANE, *shape.variables)}
        work = frame
        for name in shape.numeric:
            kinds, integers = batch._value_columns(frame[name].to_numpy())
            columns = _value_parts(kinds, integers)
            work = work.with_columns(pl.Series(f"__odd_{name}", columns["odd"]), pl.Series(f"__big_{name}", columns["big"]),
                                     pl.Series(f"__dec_{name}", columns["dec"].astype(np.int64)),
                                     pl.Series(f"__int_{name}", integers), pl.Series(f"__sc_{name}", columns["scaled"]))
        expressions = [pl.len().alias("__rows")]
        for name, parts in shape.parts.items():
            expressions += [pl.col(f"__odd_{name}").any().alias(f"__odd_{name}"),
                            pl.col(f"__big_{name}").any().alias(f"__bigs_{name}"),
                            pl.col(f"__dec_{name}").sum().alias(f"__decs_{name}")]
            for prefix, column in (("", f"__int_{name}"), ("s", f"__sc_{name}")):
                values = pl.col(column)
                if "sum" in parts:
                    expressions += [values.sum().alias(f"__{prefix}sum_{name}"),
                                    values.abs().max().alias(f"__{prefix}top_{name}")]
                if "min" in parts:
                    expressions.append(values.min().alias(f"__{prefix}min_{name}"))
                if "max" in parts:
                    expressions.append(values.max().alias(f"__{prefix}max_{name}"))
        summary = work.group_by([PANE, *shape.group_variables]).agg(expressions).sort(PANE)
        return {name: summary[name].to_numpy() for name in summary.columns}

    def _keep_partials(self, summary: dict, changed: np.ndarray, more_odd: set | None = None) -> None:
        """The partials of the changed panes (`summary`: per (pane, group) row, by pane) replace theirs
        in `store`."""
        shape = self.shape
        made: dict[str, np.ndarray] = {}
        odd: set[int] = set()
        if summary:
            size = len(summary[PANE])
            made = {PANE: summary[PANE], "__rows": summary["__rows"].astype(np.int64),
                    "__gid": self._group_numbers([summary[name] for name in shape.group_variables], size)}
            wrong = np.zeros(size, dtype=bool)
            for name, parts in shape.parts.items():
                decs = summary[f"__decs_{name}"].astype(np.int64)
                scaled = decs > 0  # (a group with a decimal in the pane: its partials in millionths)
                wrong |= summary[f"__odd_{name}"].astype(bool) | (scaled & summary[f"__bigs_{name}"].astype(bool))
                made[f"__decs_{name}"], made[f"__scaled_{name}"] = decs, scaled

                def pick(part: str, name=name, scaled=scaled):
                    return np.where(scaled, summary[f"__s{part}_{name}"], summary[f"__{part}_{name}"]).astype(np.int64)

                if "sum" in parts:
                    bound = pick("top").astype(np.float64) * made["__rows"]
                    wrong |= bound >= float(_LIMIT) / 2
                    made[f"__bound_{name}"] = bound  # (|sum| <= bound)
                    made[f"__fsum_{name}"] = pick("sum").astype(np.float64)
                for part in parts:
                    made[f"__{part}_{name}"] = pick(part)
            if bool(wrong.any()):
                odd = set(made[PANE][wrong].tolist())
        self._replace_panes(made, changed, odd | (more_odd or set()))

    def _keep_rows(self, solutions: dict, changed: np.ndarray, odd: set) -> None:
        """The solutions of the changed panes (`solutions`: PANE and each variable's column) replace theirs
        in `store` (a plan without aggregation)."""
        made: dict[str, np.ndarray] = {}
        if solutions:
            panes = solutions[PANE]
            order = np.argsort(panes, kind="stable") if len(panes) > 1 and bool(np.any(panes[1:] < panes[:-1])) \
                else None
            made = {name: (solutions[name] if order is None else solutions[name][order]).astype(np.int64, copy=False)
                    for name in (PANE, *self.shape.variables)}
        self._replace_panes(made, changed, odd)

    def _replace_panes(self, made: dict, changed: np.ndarray, odd: set) -> None:
        """`made` (rows by pane) replaces the changed panes' rows in `store`; `odd`: those of its panes
        that cannot be merged."""
        if self.odd:
            redone = set(changed.tolist())
            self.odd = {pane for pane in self.odd if pane not in redone} | odd
        else:
            self.odd = odd
        store = self.store
        if store is None or not len(store[PANE]):
            self.store = made if made else None
            return
        kept = _without(store[PANE], changed)
        if kept is None:  # (in time order: the changed panes all after those kept)
            if made:
                self._grown_store = _Growing.of(self._grown_store, store)
                self.store = self._grown_store.extended(made)
            return
        if made:
            merged = {name: np.concatenate([store[name][kept], made[name]]) for name in store}
            order = np.argsort(merged[PANE], kind="stable")
            if len(order) > 1 and not bool(np.all(order[1:] > order[:-1])):
                merged = {name: column[order] for name, column in merged.items()}
        else:
            merged = {name: column[kept] for name, column in store.items()}
        self.store = merged

    def _group_numbers(self, columns: list[np.ndarray], count: int) -> np.ndarray:
        """The group number of each row of the group variables' columns (new groups numbered in turn)."""
        if not columns:
            if not self.group_keys:
                self.group_keys.append(())
                self.group_ids[()] = 0
            return np.zeros(count, dtype=np.int64)
        ids, known = self.group_ids, self.group_keys
        if len(columns) == 1 and count <= 256:  # (a pane's few groups: by the dictionary, no sort)
            values = columns[0].tolist()
            numbers = [ids.get((value,)) for value in values]
            if None in numbers:  # (new groups numbered in order of value, as np.unique's)
                for value in sorted({value for value, number in zip(values, numbers) if number is None}):
                    ids[(value,)] = len(known)
                    known.append((value,))
                numbers = [ids[(value,)] for value in values]
            return np.array(numbers, dtype=np.int64)
        if len(columns) == 1:
            found, inverse = np.unique(columns[0], return_inverse=True)
            keys = [(value,) for value in found.tolist()]
        else:
            found, inverse = np.unique(np.stack(columns, axis=1), axis=0, return_inverse=True)
            keys = [tuple(row) for row in found.tolist()]
        numbers = []
        for key in keys:
            number = ids.get(key)
            if number is None:
                number = ids[key] = len(known)
                known.append(key)
            numbers.append(number)
        return np.array(numbers, dtype=np.int64)[inverse.reshape(-1)]

    def _existing(self, backend, present: np.ndarray, first: int, last: int) -> np.ndarray:
        """The groups (numbers) whose existence patterns each match a triple of the window: in its
        panes (kept as they were computed), or in no pane (B*)."""
        keys = self.group_keys
        place = {name: k for k, name in enumerate(self.shape.group_variables)}
        layout = self._layout[1] if self._layout is not None else None
        fixed = self._fixed_matches(backend, layout.fixed) if layout is not None and layout.fixed is not None else None
        kept = present
        for number, names in enumerate(self.shape.tested):
            panes, values = self.matches[number]
            start = int(np.searchsorted(panes, first, side="left"))
            stop = int(np.searchsorted(panes, last, side="right"))
            values = values[start:stop]
            extra = fixed[number] if fixed is not None else set()
            if not names:  # (a pattern without variables: it matched, or no group is kept)
                if not len(values) and not extra:
                    return present[:0]
                continue
            at = [place[name] for name in names]
            if len(names) == 1:  # (the usual case, by numpy: the window's panes hold many matches)
                wanted = np.array([keys[group][at[0]] for group in kept.tolist()], dtype=np.int64)
                hit = _isin(wanted, values[:, 0])
                if extra:
                    hit |= np.array([(value,) in extra for value in wanted.tolist()], dtype=bool)
                kept = kept[hit]
                continue
            found = set(map(tuple, values.tolist())) | extra
            kept = np.array([group for group in kept.tolist() if tuple(keys[group][k] for k in at) in found],
                            dtype=np.int64)
        return kept

    def _fixed_matches(self, backend, fixed) -> list[set]:
        """Per existence pattern, its matches among the rows in no pane (made again when they change)."""
        if self._fixed_found is not None:
            return self._fixed_found[1]
        pane = np.zeros(len(fixed[0]), dtype=np.int64)
        tables = self._pattern_rows(backend, self.shape.existence, pane, *fixed)
        found = []
        for table, names in zip(tables, self.shape.tested):
            if table is None or not len(table[PANE]):
                found.append(set())
            elif not names:
                found.append({()})
            else:
                found.append(set(zip(*(table[name].tolist() for name in names))))
        self._fixed_found = (fixed[0], found)
        return found

    def _renumber_groups(self) -> None:
        """Forget the groups no kept pane has (numbers made again, in their order)."""
        store = self.store
        if store is None or not len(store[PANE]):
            self.group_keys, self.group_ids = [], {}
            self.store = None
            return
        alive, inverse = np.unique(store["__gid"], return_inverse=True)
        self.group_keys = [self.group_keys[number] for number in alive.tolist()]
        self.group_ids = {key: number for number, key in enumerate(self.group_keys)}
        self.store = dict(store, __gid=inverse.reshape(-1).astype(np.int64))  # (a new store: not grown into)
        self._prefix = None

    def _keep_join_values(self, tables: list, changed: np.ndarray, joins: list[str]) -> bool:
        """Per join variable, the values of the changed panes (from every pattern that holds it:
        `tables`), and which panes share one with an earlier pane less than a window away. True when
        no two changed panes share a join value (the cheap test held: a join of the batch need not
        match panes, a solution's rows are in one pane anyway)."""
        fresh: dict[str, list[tuple[np.ndarray, np.ndarray]]] = {name: [] for name in joins}
        for table in tables:
            if table is None or not len(table[PANE]):
                continue
            for name in fresh:
                if name in table:
                    fresh[name].append((table[PANE], table[name]))
        exact = False
        for name, parts in fresh.items():
            if parts:
                panes = np.concatenate([part[0] for part in parts])
                values = np.concatenate([part[1] for part in parts])
                order = np.lexsort((values, panes))
                panes, values = panes[order], values[order]
            else:
                panes = values = np.empty(0, dtype=np.int64)
            old_panes, old_values = self.keys.get(name, (np.empty(0, dtype=np.int64), np.empty(0, dtype=np.int64)))
            kept = _without(old_panes, changed)
            if kept is not None:
                old_panes, old_values = old_panes[kept], old_values[kept]
            after = not len(old_panes) or not len(panes) or panes[0] > old_panes[-1]
            if after and kept is None:  # (in time order: the rows written after those kept, not copied)
                grown = self._grown_keys[name] = _Growing.of(self._grown_keys.get(name),
                                                             {PANE: old_panes, "value": old_values})
                more = grown.extended({PANE: panes, "value": values})
                all_panes, all_values = more[PANE], more["value"]
            elif after:
                all_panes, all_values = np.concatenate([old_panes, panes]), np.concatenate([old_values, values])
            else:  # (a late batch changed a pane before others kept)
                all_panes, all_values = np.concatenate([old_panes, panes]), np.concatenate([old_values, values])
                order = np.argsort(all_panes, kind="stable")
                all_panes, all_values = all_panes[order], all_values[order]
            self.keys[name] = (all_panes, all_values)
            top = self.key_top.get(name, -1)
            if not len(panes):
                continue  # (fewer values cannot make a pane share one)
            if after:  # the cheap test: each pane's least value above every value kept before it
                starts = np.flatnonzero(np.concatenate(([True], panes[1:] != panes[:-1])))
                greatest = np.maximum.reduceat(values, starts)
                before = np.concatenate(([top], np.maximum.accumulate(greatest)[:-1]))
                before = np.maximum(before, top)
                if bool(np.all(values[starts] > before)):
                    self.key_top[name] = max(int(greatest.max()), top)
                    continue
            exact = True
            self.key_top[name] = max(int(values.max()), top)
        if exact:
            self.conflicts = self._exact_conflicts()
            return False
        for pane in changed.tolist():
            self.conflicts.pop(pane, None)
        return True

    def _exact_conflicts(self) -> dict[int, int]:
        """Per pane, the latest earlier pane less than `span` panes before it that shares a join
        value with it (sorted by value: consecutive occurrences of a value in two panes)."""
        conflicts: dict[int, int] = {}
        for panes, values in self.keys.values():
            if len(panes) < 2:
                continue
            order = np.lexsort((panes, values))
            panes_sorted, values_sorted = panes[order], values[order]
            pair = (values_sorted[1:] == values_sorted[:-1]) & (panes_sorted[1:] != panes_sorted[:-1])
            later, earlier = panes_sorted[1:][pair], panes_sorted[:-1][pair]
            near = later - earlier < self.ledger.span
            for pane, since in zip(later[near].tolist(), earlier[near].tolist()):
                if since > conflicts.get(pane, since - 1):
                    conflicts[pane] = since
        return conflicts

    # merging ---------------------------------------------------------------------------------------

    def _merge(self, backend, first: int, last: int):
        """The groups of the panes first..last from their partials."""
        plan = self.plan
        store = self.store
        if store is None:
            return backend.context.group(plan.aggregation, (all_slots(plan), []))
        panes = store[PANE]
        start = int(np.searchsorted(panes, first, side="left"))
        stop = int(np.searchsorted(panes, last, side="right"))
        if stop <= start:
            return backend.context.group(plan.aggregation, (all_slots(plan), []))
        shape = self.shape
        if len(self.group_keys) > max(64, 4 * len(panes)):
            self._renumber_groups()
            store = self.store
        numbers = store["__gid"][start:stop]
        size = len(self.group_keys)
        prefix = self._prefix_of(store, size, start, stop)
        if prefix is not None:
            rows = prefix.window("__rows", start, stop)
        else:
            rows = np.bincount(numbers, weights=store["__rows"][start:stop], minlength=size).astype(np.int64)
        present = np.flatnonzero(rows)
        if shape.existence:
            present = self._existing(backend, present, first, last)
            if not len(present):
                return backend.context.group(plan.aggregation, (all_slots(plan), []))
        merged: dict[str, dict] = {}
        for name, parts in shape.parts.items():
            found = prefix.sums(name, start, stop, present) if prefix is not None else \
                self._merged_partials(store, name, parts, start, stop, rows, present)
            if found is None:
                return None
            merged[name] = found
        groups = len(present)
        keys = [self.group_keys[number] for number in present.tolist()]
        counts = rows[present].tolist()
        within_budget = backend.budget.check
        within_budget(max(groups - 1, 0))  # (the most rows made before the last group's)
        out: list[tuple] = []
        for low in range(0, groups, _CHUNK):  # (the time checked now and then)
            high = low + _CHUNK
            columns = [self._results(backend, name, variable, merged, keys[low:high], counts[low:high], low, high)
                       for name, variable in shape.aggregates]
            out += map(tuple.__add__, keys[low:high], zip(*columns)) if columns else keys[low:high]
            within_budget(len(out))
        return dict(self._slots), out

    def _merged_partials(self, store: dict, name: str, parts: list[str], start: int, stop: int, rows: np.ndarray,
                         present: np.ndarray) -> dict | None:
        """Variable `name`'s partials of the store's rows start..stop-1 added up pane by pane per present
        group: whether each holds a decimal, and its sum, least and greatest value as `parts` asks; None
        when they cannot be merged exactly."""
        numbers = store["__gid"][start:stop]
        size = len(rows)
        found = {}
        decs = np.bincount(numbers, weights=store[f"__decs_{name}"][start:stop], minlength=size).astype(np.int64)
        found["decimal"] = (decs[present] > 0).tolist()
        if ("min" in parts or "max" in parts) and bool(np.any((decs > 0) & (decs < rows))):
            return None  # (integers and decimals in one group: MIN / MAX pick among equal values term by term)
        scaled = store[f"__scaled_{name}"][start:stop]
        lift = np.where((decs[numbers] > 0) & ~scaled, _SCALE, 1)  # (a group's integer partials in millionths)
        lifted = bool((lift > 1).any())
        if "sum" in parts:
            bound = store[f"__bound_{name}"][start:stop] * lift
            if lifted and float(bound.max()) >= float(_LIMIT) / 2:
                return None
            bound = np.bincount(numbers, weights=bound, minlength=size)
            totals = np.bincount(numbers, weights=store[f"__fsum_{name}"][start:stop] * lift,
                                 minlength=size)[present]
            if float(bound.max()) < _EXACT_FLOAT:  # (every partial sum of the groups' is exact as a double)
                found["sum"] = totals.astype(np.int64).tolist()
            else:
                sums = (store[f"__sum_{name}"][start:stop] * lift).tolist()
                found["sum"] = [sum(value for value, number in zip(sums, numbers.tolist()) if number == group)
                                for group in present.tolist()]
        if "min" in parts:
            least = np.full(size, _BIG, dtype=np.int64)
            np.minimum.at(least, numbers, store[f"__min_{name}"][start:stop])
            found["min"] = least[present].tolist()
        if "max" in parts:
            greatest = np.full(size, -_BIG, dtype=np.int64)
            np.maximum.at(greatest, numbers, store[f"__max_{name}"][start:stop])
            found["max"] = greatest[present].tolist()
        return found

    def _results(self, backend, name: str, variable: str, merged: dict, keys: list, counts: list, low: int,
                 high: int) -> list:
        """One aggregate's result (an id) for each of the groups low..high-1 (`keys`, `counts`)."""
        if name == "Aggregate_Count":
            return [backend.count_result(count) for count in counts]
        if name == "Aggregate_Sample":  # (of a group variable)
            at = self.shape.group_variables.index(variable)
            return [key[at] for key in keys]
        found = merged[variable]
        decimal = found["decimal"][low:high]
        if name in ("Aggregate_Min", "Aggregate_Max"):
            values = found["min" if name == "Aggregate_Min" else "max"][low:high]
            intern = backend.terms.intern
            return [backend.decimal_term(value) if scaled else intern(f'"{value}"^^<{_XSD_INTEGER}>')
                    for value, scaled in zip(values, decimal)]
        return backend.sum_results(name, found["sum"][low:high], counts, decimal)

    def _prefix_of(self, store: dict, size: int, start: int, stop: int) -> _GroupSums | None:
        """The store's `_Prefix` when this is its second merge or later and its sums allow it (decided
        once per store: a block's reports merge against one store). At a store's first merge: the
        `_Running` sums moved to rows start..stop-1 when the store grew from the one before (a live
        store changes every report), else None."""
        made = self._prefix
        if made is not None and made[0] is store and made[1] == size:
            return made[2]
        if self._merged_on is not store:
            self._merged_on = store
            grown = self._grown_store
            if grown is None or grown.columns is not store or not _Running.allows(self.shape):
                return None
            running = self._running
            if running is None or running.grown is not grown:
                running = self._running = _Running(self.shape, grown)
            return running if running.moved(start, stop, size) else None
        prefix = _Prefix(self.shape, store, size) if _Prefix.fits(self.shape, store, size) else None
        self._prefix = (store, size, prefix)
        return prefix


class _Growing:
    """Numpy columns of equal length (`columns`: views) that grow at their end and are cut at their
    start without copying what they hold. A live store gains a pane per report, and copying it
    whole each time cost its window: new rows are written into room kept after the end (twice what
    is held when it runs out), a cut moves the start. Views handed out before stay as they were
    (no row they show is written again)."""

    __slots__ = ("buffers", "start", "stop", "columns", "base", "moves")

    def __init__(self, columns: dict[str, np.ndarray]):
        count = len(next(iter(columns.values())))
        self.buffers = {name: np.empty((2 * count + 64, *column.shape[1:]), dtype=column.dtype)
                        for name, column in columns.items()}
        for name, column in columns.items():
            self.buffers[name][:count] = column
        self.start, self.stop = 0, count
        #: the number of the rows at buffers[0] among every row the columns held (rows cut count too),
        #: and how often the rows moved to new buffers
        self.base, self.moves = 0, 0
        self.columns = self._views()

    @staticmethod
    def _shows(grown: "_Growing | None", columns: dict) -> bool:
        """Are `columns` `grown`'s views (the arrays themselves, whatever dict holds them)?"""
        return grown is not None and all(column is grown.columns.get(name) for name, column in columns.items())

    @classmethod
    def of(cls, grown: "_Growing | None", columns: dict) -> "_Growing":
        """`grown` when `columns` are its views, else new room holding them."""
        return grown if cls._shows(grown, columns) else cls(columns)

    @classmethod
    def cut(cls, grown: "_Growing | None", columns: dict, count: int) -> dict:
        """`columns` less their first `count` rows (moving `grown`'s start when they are its views)."""
        if cls._shows(grown, columns):
            grown.start += count
            grown.columns = grown._views()
            return grown.columns
        return {name: column[count:] for name, column in columns.items()}

    def extended(self, more: dict[str, np.ndarray]) -> dict[str, np.ndarray]:
        """The columns with `more`'s rows after theirs (same names)."""
        added = len(next(iter(more.values())))
        capacity = len(next(iter(self.buffers.values())))
        if self.stop + added > capacity:
            held = self.stop - self.start
            room = 2 * (held + added) + 64
            for name, buffer in self.buffers.items():
                moved = np.empty((room, *buffer.shape[1:]), dtype=buffer.dtype)
                moved[:held] = buffer[self.start:self.stop]
                self.buffers[name] = moved
            self.base += self.start
            self.moves += 1
            self.start, self.stop = 0, held
        for name, buffer in self.buffers.items():
            buffer[self.stop:self.stop + added] = more[name]
        self.stop += added
        self.columns = self._views()
        return self.columns

    def _views(self) -> dict[str, np.ndarray]:
        return {name: buffer[self.start:self.stop] for name, buffer in self.buffers.items()}


class _GroupSums:
    """Sums per group over a window of a store's rows (`window`), read for `_merge`."""

    def window(self, name: str, start: int, stop: int) -> np.ndarray:
        raise NotImplementedError

    def sums(self, name: str, start: int, stop: int, present: np.ndarray) -> dict:
        """`_merge`'s partials of variable `name` for the present groups: whether each holds a decimal,
        and its sum (in millionths where it does, its integers lifted)."""
        decimal = self.window(f"__decs_{name}", start, stop)[present] > 0
        plain = self.window(f"__plain_{name}", start, stop)[present]
        if not bool(decimal.any()):
            return {"decimal": decimal.tolist(), "sum": plain.tolist()}
        scaled = self.window(f"__scaled_{name}", start, stop)[present]
        if bool((np.abs(plain) < _SCALE_LIMIT).all()):
            return {"decimal": decimal.tolist(), "sum": np.where(decimal, plain * _SCALE + scaled, plain).tolist()}
        return {"decimal": decimal.tolist(),  # (lifted past 64 bits: in Python's integers)
                "sum": [p * _SCALE + q if d else p
                        for d, p, q in zip(decimal.tolist(), plain.tolist(), scaled.tolist())]}


class _Running(_GroupSums):
    """A growing store's sums per group over the window merged last (`window`, as `_Prefix`'s): the
    next window's are those less the rows it left and plus the rows it gained. A live report at
    STEP 1 s gains and loses a pane, where adding up its panes cost its window. Sums only, as
    `_Prefix` (a plan with MIN / MAX merges pane by pane), in 64-bit integers while the window's
    bounds add up to less than 2**61; added up again from the window's rows when the store's rows
    moved to new buffers or a window starts before the last one."""

    def __init__(self, shape: PaneShape, grown: _Growing):
        self.grown = grown
        self.names = list(shape.parts)
        #: the rows the sums are over (numbers among every row the store held: `_Growing.base`)
        self.low = self.high = 0
        self.moves = -1
        self.size = 0
        self.tables: dict[str, np.ndarray] = {}
        self.bound = 0.0

    @staticmethod
    def allows(shape: PaneShape) -> bool:
        return all(parts == ["sum"] for parts in shape.parts.values())

    def moved(self, start: int, stop: int, size: int) -> bool:
        """Bring the sums to the store's rows start..stop-1; whether they are exact (False: merge by panes)."""
        grown = self.grown
        low, high = grown.base + grown.start + start, grown.base + grown.start + stop
        if self.moves != grown.moves or low < self.low or high < self.high or low > self.high:
            self.moves, self.size = grown.moves, size
            self.tables = {name: np.zeros(size, dtype=np.int64) for name in self._columns(0, 0)}
            self.bound = 0.0
            self.low = self.high = low
        elif size > self.size:  # (new groups: none has a row in the sums yet)
            self.tables = {name: np.concatenate([table, np.zeros(size - self.size, dtype=np.int64)])
                           for name, table in self.tables.items()}
            self.size = size
        self._add(self.low, low, -1)
        self._add(self.high, high, 1)
        self.low, self.high = low, high
        return self.bound < float(_LIMIT) / 2

    def _add(self, low: int, high: int, sign: int) -> None:
        if high <= low:
            return
        buffers, at = self.grown.buffers, self.grown.base
        numbers = buffers["__gid"][low - at:high - at]
        for name, values in self._columns(low - at, high - at).items():
            np.add.at(self.tables[name], numbers, values if sign > 0 else -values)
        for name in self.names:
            self.bound += sign * float(buffers[f"__bound_{name}"][low - at:high - at].sum())

    def _columns(self, low: int, high: int) -> dict[str, np.ndarray]:
        """`_Prefix`'s columns of the buffers' rows low..high-1."""
        buffers = self.grown.buffers
        found = {"__rows": buffers["__rows"][low:high]}
        for name in self.names:
            scaled, sums = buffers[f"__scaled_{name}"][low:high], buffers[f"__sum_{name}"][low:high]
            found[f"__decs_{name}"] = buffers[f"__decs_{name}"][low:high]
            found[f"__plain_{name}"] = np.where(scaled, 0, sums)
            found[f"__scaled_{name}"] = np.where(scaled, sums, 0)
        return found

    def window(self, name: str, start: int, stop: int) -> np.ndarray:
        """Per group, the sum of column `name` over the rows `moved` was brought to (start..stop-1)."""
        return self.tables[name]



class _Prefix(_GroupSums):
    """A store's sums per group over its first k rows, for every k: a window's sums (rows, decimals,
    sums) are the difference of two rows, where a merge would add up its panes' partials.

    A block of reports merges against one store (the block's panes computed at once), so this is
    made once per block. Integers throughout: a sum is exact while the store's bounds add up to
    less than 2**62 (`fits`). A plan with MIN / MAX merges by panes (no difference gives a minimum)."""

    #: the most cells (rows x groups) a table may have
    CELLS = 1 << 18

    def __init__(self, shape: PaneShape, store: dict, size: int):
        count = len(store[PANE])
        places = (np.arange(1, count + 1), store["__gid"])

        def running(column: np.ndarray) -> np.ndarray:
            table = np.zeros((count + 1, size), dtype=np.int64)
            table[places] = column
            return np.cumsum(table, axis=0, out=table)

        self.tables = {"__rows": running(store["__rows"])}
        for name in shape.parts:
            scaled = store[f"__scaled_{name}"]
            sums = store[f"__sum_{name}"]
            self.tables[f"__decs_{name}"] = running(store[f"__decs_{name}"])
            self.tables[f"__plain_{name}"] = running(np.where(scaled, 0, sums))
            self.tables[f"__scaled_{name}"] = running(np.where(scaled, sums, 0))

    @classmethod
    def fits(cls, shape: PaneShape, store: dict, size: int) -> bool:
        """Whether the store's partials allow prefix sums: sums only, exact in 64 bits, a table small."""
        if (len(store[PANE]) + 1) * max(size, 1) > cls.CELLS:
            return False
        for name, parts in shape.parts.items():
            if parts != ["sum"] or float(store[f"__bound_{name}"].sum()) >= float(_LIMIT):
                return False
        return True

    def window(self, name: str, start: int, stop: int) -> np.ndarray:
        """Per group, the sum of column `name` over the store's rows start..stop-1."""
        table = self.tables[name]
        return table[stop] - table[start]


__all__ = ["GIVE_UP", "PANE", "PaneAggregates", "PaneShape", "pane_shape"]
