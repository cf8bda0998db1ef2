"""What a query becomes in distributed mode: its windows on one grid of report instants, its body, its reasoning.

Time (DESIGN.md, "Time"; every number is `core.time.WindowGrid`'s): a query reports at
instants tau_k = t0 + k * P, P its COMPUTE EVERY period or its windows' common STEP.
A window [RANGE r STEP s] (ending `end` before its boundary) shows at tau its content at the boundary
b(tau) = t0 + floor((tau - t0) / s) * s; an element seen at t is in the window
of boundary B when t + end < B <= t + r. So every fact carries the interval of
instants [k1, k2] it is seen at (`Grid.k_range`), and:

- a window's content at instant k: the facts with k1 <= k <= k2;
- a join of two facts holds on the intersection of their intervals
  (Barbieri's expiration = min, with the start = max);
- the background holds on every instant (k1 = -inf, k2 = +inf).

`plan_of` reads a query registered on an `RSPEngine` (so that its graphs,
background and safety checks are the local engine's own) and says, in one
line, what it cannot distribute yet (`NotDistributed`): the query then runs
in `--mode driver`.

A RULES program runs inside each window's materialization (the lifting rule
`[RANGE h] DIAMOND window_triple`, the profile's rules, the user's), in time
points of the view's tick g. Its reach L, in time points, is
`rule_split.time_reach` of that very program (the one the view runs): a report
at boundary b is the view's content at point P = (b - t0) / g, which depends on
the stream's triples at the points [P - L, P] only, that is on the elements
seen at or after b - (L + 1) * g (an element at t is at point floor((t - t0) / g)
+ 1). That span, the window's `depth`, is what the time slices cut by
(`slices.reach`); it is the RANGE for a plain window (L = h = r / g - 1 then).
A program whose reach is unbounded keeps the query on the driver, the rule and
why said in one line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ...core import limits
from ...core.time import WindowGrid

#: an instant index before / after every other (the background's interval)
NEVER = -(1 << 60)
ALWAYS = 1 << 60


class NotDistributed(Exception):
    """A query (or a part of it) distributed mode does not run yet: the reason, in the user's words."""


@dataclass(frozen=True)
class Window:
    """One window of the query: over which stream, which shape, as which graph (None: the default graph)."""

    index: int
    stream: str
    range: int
    step: int
    end: int = 0
    name: str | None = None


@dataclass(frozen=True)
class Grid:
    """The query's report instants tau_k = t0 + k * period, and each window's grid on the same timeline:
    every number here is `core.time.WindowGrid`'s (as the local engine's), and so is the SQL that
    `content.window_rows` writes from `k_range` over column expressions (`sqltext.Sql`)."""

    t0: int
    period: int
    #: the report instants, a tumbling grid of the period
    reports: WindowGrid = field(init=False, repr=False, compare=False)

    def __post_init__(self):
        object.__setattr__(self, "reports", WindowGrid.every(self.period, self.t0))

    def window_grid(self, window: Window) -> WindowGrid:
        return WindowGrid(window.range, window.step, self.t0, window.end)

    def instant(self, k: int) -> int:
        return self.reports.instant(k)

    def first_after(self, t: int) -> int:
        """The first k with tau_k > t."""
        return self.reports.index_after(t)

    def last_at_or_before(self, t: int) -> int:
        """The last k with tau_k <= t."""
        return self.reports.index_at(t)

    def boundary(self, window: Window, tau: int) -> int:
        """The window's last boundary at or before tau."""
        return self.window_grid(window).boundary_at(tau)

    def k_range(self, window: Window, low, high):
        """The instants k whose window boundary B is in (low, high]: [k1, k2] (empty when k1 > k2); low
        and high are ints, or SQL expressions (`sqltext.Sql`) for a plan to compute per row."""
        grid = self.window_grid(window)
        return grid.shown_at(self.period, *grid.span(low, high))

    def element_range(self, window: Window, timestamp: int, floor_time: int | None = None) -> tuple[int, int]:
        """The instants at which an element seen at `timestamp` is in `window`; `floor_time`: a boundary
        the element came after (a late element enters only windows not reported yet)."""
        low = timestamp + window.end
        if floor_time is not None and floor_time > low:
            low = floor_time
        return self.k_range(window, low, timestamp + window.range)

    def earliest_after(self, window: Window, k: int) -> int:
        """The smallest timestamp of an element `window` still holds at an instant after k (its
        `element_range`'s k2 > k; the floor of a late element moves only k1). A bound on a plain column:
        a cached batch skips its blocks wholly before it (their min / max statistics)."""
        return self.window_grid(window).earliest_reached(self.instant(k + 1))

    def replay_end(self, window: Window, last: int) -> int:
        """The last instant (time) whose window still reaches an element seen at `last` (as the local
        engine's `RegisteredQuery.replay_end`)."""
        return self.window_grid(window).last_report(last, self.period)


@dataclass
class DistributedPlan:
    """Everything the distributed driver and its executors need of one query (plain values)."""

    name: str
    text: str
    filename: str
    base: str | None
    dialect: str
    form: str
    r2s: str
    windows: list[Window]
    grid: Grid
    #: the materialization's profile ("rdfs", "owl-rl") or None; its background as N-Triples lines
    entailment: str | None = None
    background: list[str] = field(default_factory=list)
    #: graphs read as they are (FROM / FROM NAMED without entailment): graph IRI (None: default) -> lines
    static: dict = field(default_factory=dict)
    ordered: bool = False
    #: the gap bound (ms) an element may jump ahead of the stream, or None (`RSPEngine.max_gap`)
    gap: int | None = None
    max_gap: int | None = None
    gap_unit: int | None = None
    #: the streams the windows read, in the order of their windows
    streams: list[str] = field(default_factory=list)
    #: the registration's floor (the engine's watermark when the query was registered)
    floor: int | None = None
    #: the engine's bounds on one evaluation (`RSPEngine.max_eval_ms`, `max_solutions`)
    max_eval_ms: int | None = limits.MAX_EVAL_MS
    max_solutions: int | None = limits.MAX_SOLUTIONS
    #: the RULES program's text (None: none), registered from the text by each engine that runs the plan
    #: (no file is read on an executor), and per window how far (ms) before its boundary a report reads
    #: (the module's docstring; empty: the RANGEs)
    rules: str | None = None
    depths: list[int] = field(default_factory=list)
    #: the key split (`keys`): the variable each answer row keeps to one value of (partitioned mode's
    #: locality analysis, `rsp_plugin.spark.partitioned.key_plan`), how a triple is routed to its key
    #: (predicate -> "s" | "o"), and under ENTAILMENT the schema a batch must not bring (its triples would
    #: join keys: such a batch goes the general way). None: the query is not key-local
    key: str | None = None
    routes: dict = field(default_factory=dict)
    schema_predicates: list[str] = field(default_factory=list)
    schema_classes: list[str] = field(default_factory=list)

    def depth(self, window: Window) -> int:
        """How far (ms) before its boundary a report of `window` depends on the stream's elements."""
        return self.depths[window.index] if self.depths else window.range

    def windows_of(self, graph: str | None) -> list[int]:
        return [w.index for w in self.windows if w.name == graph]

    def query(self):
        """The query parsed again (per process: the executors' copy of the plan)."""
        return _parsed(self.text, self.filename, self.base, self.dialect)


_PARSED: dict[tuple, object] = {}


def _parsed(text: str, filename: str, base, dialect: str):
    key = (text, filename, base, dialect)
    found = _PARSED.get(key)
    if found is None:
        from ...query.syntax import parse_query

        found = _PARSED[key] = parse_query(text, filename, base=base, dialect=dialect)
        if len(_PARSED) > 64:
            _PARSED.clear()
            _PARSED[key] = found
    return found


_FAST: dict[tuple, object] = {}


def fast_plan(plan: DistributedPlan):
    """The query's compiled plan (rsp_plugin.query.plan), made once per process."""
    key = (plan.text, plan.filename, plan.base, plan.dialect)
    found = _FAST.get(key)
    if found is None:
        from ...query.evaluate import translated
        from ...query.plan import compile_plan

        found = _FAST[key] = compile_plan(translated(plan.query()))
    return found


def plan_of(engine, name: str | None = None, lanes: int | None = None) -> DistributedPlan:
    """The distributed plan of a query registered on `engine` (the only one, or `name`); raises
    `NotDistributed` with the reason when a part of it is not distributed yet. `lanes`: how many
    sources feed it (None: not known yet)."""
    from ...query.model import CountWindow, NowWindow, RangeWindow, ReportPolicy
    from ...query.windows import TimeWindow

    queries = engine.queries
    if name is None:
        if len(queries) != 1:
            raise NotDistributed(f"{len(queries)} queries registered on one engine (distributed mode runs one)")
        name = next(iter(queries))
    registered = queries[name]
    query = registered.query
    if registered.policy is not ReportPolicy.ON_WINDOW_CLOSE:
        raise NotDistributed(f"the {registered.policy.value} report policy")
    if query.output_stream is not None:
        raise NotDistributed("a query whose results feed a stream (REGISTER STREAM)")
    if not query.windows:
        raise NotDistributed("a query without a stream window")
    windows = []
    for index, (clause, shared) in enumerate(registered.windows):
        spec = clause.window
        if isinstance(spec, CountWindow):
            raise NotDistributed("a count window ([TRIPLES n], [ELEMENTS n]): it counts elements in arrival order")
        if isinstance(spec, NowWindow):
            spec = shared.window.spec
        if not isinstance(spec, RangeWindow) or not isinstance(shared.window, TimeWindow):
            raise NotDistributed(f"the window {clause.window!r}")
        windows.append(Window(index, clause.stream, spec.range, spec.step, getattr(spec, "end", 0), clause.name))
    period = registered.period
    if period is None:
        steps = {w.step for w in windows}
        if len(steps) != 1:
            raise NotDistributed("windows with different STEPs and no COMPUTE EVERY (the report instants are "
                                 "not one grid)")
        period = steps.pop()
    _check_body(registered)
    rules, depths = None, []
    split = _key_split(engine, registered)
    if query.rules is not None:
        if lanes is not None and lanes != 1 and split is None:
            raise NotDistributed("a RULES program over several sources (the time slices it runs on cut one "
                                 "timeline, and the program does not keep to one key)")
        depths = _rules_depths(registered, windows)
        rules = _rules_text(engine, registered)
    terms = engine.terms
    keys = terms.keys
    background, static = [], {}
    if query.entailment is not None:
        background = [f"{keys[s]} {keys[p]} {keys[o]} ." for s, p, o in engine._background_triples(query)]
        default_windows = [w for w in windows if w.name is None]
        if not default_windows:  # the default graph is the background's materialization alone
            static[None] = "materialized"
    else:
        lines = [f"{keys[s]} {keys[p]} {keys[o]} ." for part in registered.static_default
                 for s, p, o in part.match(None, None, None)]
        if lines:
            static[None] = sorted(set(lines))
    for iri, content in registered.static_named.items():
        static[iri] = sorted({f"{keys[s]} {keys[p]} {keys[o]} ." for s, p, o in content.match(None, None, None)})
    unit = engine._gap_unit
    gap = engine.max_gap * unit if engine.max_gap is not None and unit is not None else None
    return DistributedPlan(
        name=name, text=query.text, filename=query.filename, base=query.base, dialect=query.read_as,
        form=query.form, r2s=query.r2s.value, windows=windows, grid=Grid(registered.t0, period),
        entailment=query.entailment, background=background, static=static,
        ordered=registered.evaluator._ordered, gap=gap, max_gap=engine.max_gap, gap_unit=unit,
        streams=list(dict.fromkeys(w.stream for w in windows)), floor=registered.floor,
        max_eval_ms=engine.max_eval_ms, max_solutions=engine.max_solutions, rules=rules, depths=depths,
        **(split or {}))


def _key_split(engine, registered) -> dict | None:
    """The key split's fields of the plan when the query is key-local for one of its variables (the first
    one the locality analysis accepts, in the order the query writes them; with RULES, one every rule
    keeps: `partitioned._rules_key_local`), else None. A CONSTRUCT template with blank nodes is not split
    (each key's engine would name them)."""
    from rdflib import BNode, Variable

    from ..partitioned import NotKeyLocal, engine_background, key_plan, pattern_nodes

    query = registered.query
    algebra = query.algebra.algebra
    template = algebra.get("template") or []
    if any(isinstance(term, BNode) for triple in template for term in triple):
        return None
    if query.form == "SELECT":
        candidates = list(algebra.get("PV") or [])
    else:
        candidates = [term for node in pattern_nodes(algebra) if node.name == "BGP"
                      for s, _, o in node["triples"] for term in (s, o) if isinstance(term, Variable)]
    background = program = None
    for variable in dict.fromkeys(candidates):
        if background is None:
            background = engine_background(engine, query.text, query.filename)
            program = _rules_text(engine, registered) if query.rules is not None else None
        try:
            found = key_plan(query.text, str(variable), query.filename, background=background, program=program)
        except NotKeyLocal:
            continue
        locality = found.locality
        return {"key": found.key, "routes": dict(found.positions),
                "schema_predicates": sorted(locality.schema_predicates) if locality is not None else [],
                "schema_classes": sorted(locality.schema_classes) if locality is not None else []}
    return None


def _rules_depths(registered, windows: list[Window]) -> list[int]:
    """Per window, how far (ms) before its boundary a report reads under the query's RULES program: (L + 1)
    ticks, L the reach of the program its view runs (`rule_split.time_reach`); `NotDistributed` naming the
    rule when the reach is unbounded."""
    from ...query.views import RulesView
    from ..rule_split import OnDriver, time_reach

    depths = []
    for window, (_, shared) in zip(windows, registered.windows):
        view = shared.view
        if isinstance(view, RulesView):
            raise NotDistributed("RULES under answer-stream semantics (each time point is solved alone)")
        if window.end:
            raise NotDistributed("RULES over a window that ends before its report time ([FROM NOW-a TO NOW-b])")
        found = time_reach(view.materializer.program)
        if isinstance(found, OnDriver):
            raise NotDistributed(f"a RULES program whose {found.reason}")
        depths.append((found.reach + 1) * view.tick)
    return depths


def _rules_text(engine, registered) -> str:
    """The text of the RULES program the query registered with: given as text, or the one its windows' views
    were parsed from (the user's rules keep their origin); a program of ground triples alone (they became the
    materialization's background) is read again."""
    query = registered.query
    given = engine.datasets.rules_sources.get(query.rules)
    if given is not None:
        return given
    for _, shared in registered.windows:
        program = shared.view.materializer.program
        for rule in program.rules:
            origin = rule.origin[0] if rule.origin else None
            if origin is not None and origin.filename == program.filename and hasattr(origin, "text"):
                return origin.text
    return engine.datasets.rules_program(query).source


def _check_body(registered) -> None:
    """The body must be one a compiled plan takes (joins, filters, aggregates); say what is not."""
    from ...query.plan import unsupported_reason, walk

    plan = registered.evaluator.plan
    if plan is None:
        reason = unsupported_reason(registered.evaluator.algebra)
        raise NotDistributed(f"{_readable(reason) if reason else 'ORDER BY an expression'} in the query body")
    if plan.aggregation is not None:
        group_vars = set(plan.aggregation[0])
        for aggregate in plan.aggregation[1]:
            if aggregate.name == "Aggregate_Sample" and str(aggregate.vars) in group_vars:
                continue  # a grouped variable's value (rdflib's way of projecting it)
            if aggregate.name in ("Aggregate_Sample", "Aggregate_GroupConcat"):
                word = "SAMPLE" if aggregate.name == "Aggregate_Sample" else "GROUP_CONCAT"
                raise NotDistributed(f"{word} (its value depends on the order rows arrive in)")
    if plan.slice is not None and not any(kind == "order" for kind, _ in plan.post):
        raise NotDistributed("LIMIT / OFFSET without ORDER BY (which rows it keeps depends on join order)")
    if plan.reads_timestamps():
        raise NotDistributed("the timestamp() function (it reads the window's arrival times)")
    for _, conjunct in plan.conjunction.conjuncts:
        for node in walk(conjunct):
            if getattr(node, "name", None) == "Builtin_NOW":
                raise NotDistributed("NOW() in a FILTER of the body")


def _readable(name: str) -> str:
    return {"LeftJoin": "OPTIONAL", "Union": "UNION", "Minus": "MINUS", "ToMultiSet": "a subquery",
            "Values": "VALUES", "Extend": "BIND", "Graph": "GRAPH ?var", "Slice": "LIMIT / OFFSET",
            "OrderBy": "ORDER BY", "Group": "GROUP BY", "AggregateJoin": "this aggregate"}.get(name, name)


__all__ = ["DistributedPlan", "Grid", "NotDistributed", "Window", "plan_of", "fast_plan", "NEVER", "ALWAYS"]
