"""R2R: a query's SPARQL body evaluated over one snapshot of its windows and graphs.

    evaluator = QueryEvaluator(query, terms)
    answer = evaluator.evaluate(snapshot, tau)     # -> Answer (ids)

Two ways, one semantics (SPARQL 1.1's, `sparql_values.py` and `expressions.py`):
the query's compiled plan (`plan.py`) when the body is a conjunction with
filters and aggregates, evaluated by a backend (`backend.py`: the per-fact one,
`fastpath.py`, or the columnar one when the runtime keeps the windows as
columns), else the algebra evaluator (`algebra.py`) over the same indexes.
rdflib parses and translates the query; its own evaluator (over the snapshot seen
as an rdflib dataset, `dataset.py`) stays only as the benchmarks' baseline
(`reference="rdflib"`). NOW() is the evaluation time.

An evaluation that fails (a SERVICE, an operator not evaluated over windows, a
bug) gives an `Answer` with `error` set: the window's report says so and the
next windows go on. One that passes its bounds (`evaluate(..., budget=)`, time
and solutions: `bounds.py`) stops there and gives an `Answer` with `cut` set to
the bound's name, `error` saying what happened, and no results.
"""

from __future__ import annotations

from rdflib import BNode, URIRef, Variable
from rdflib.plugins.sparql.evaluate import evalPart

from ..core.rdfterms import TermCache
from ..core.terms import Dictionary
from .algebra import AlgebraEvaluation, has_lost_inverse, spell_out_inverse_negations
from .backend import EvaluationContext, finish
from .bounds import UNBOUNDED, Budget, EvaluationCut
from .content import Snapshot
from .dataset import DEFAULT_GRAPH, SnapshotDataset, content_graph, query_context
from .fastpath import FactBackend
from .model import ContinuousQuery
from .plan import compile_plan
from .results import Answer


class QueryEvaluator:
    """Evaluates one query's body; picks the fast path once, at registration."""

    def __init__(self, query: ContinuousQuery, terms: Dictionary, *, cache: TermCache | None = None,
                 fast: bool = True, reference: str = "algebra", services=()):
        self.query = query
        #: SERVICE endpoints the user allowed (`service.py`)
        self.services = tuple(services)
        self.terms = terms
        self.cache = cache or TermCache(terms)
        self.fast = fast
        #: what evaluates bodies the fast path does not: "algebra" (ours) or "rdflib" (a baseline)
        self.reference = reference
        self.algebra = translated(query)
        #: the compiled plan (`plan.py`), made once here; None: the algebra evaluator takes the body
        self.plan = compile_plan(self.algebra) if fast else None
        self._ordered = _has_order_by(self.algebra.algebra)
        self._graphs: dict[int, object] = {}
        #: the columnar backend's state (`columnar.query.ColumnarState`), when the runtime gives this
        #: query column windows: it makes each evaluation's backend (`backend(plan, snapshot, context)`)
        self.columnar = None

    def __getstate__(self):
        """The plan and the rdflib views are rebuilt from the query after unpickling."""
        state = dict(self.__dict__)
        state["plan"] = None
        state["algebra"] = None
        state["_graphs"] = {}
        return state

    def __setstate__(self, state):
        self.__dict__.update(state)
        self.algebra = translated(self.query)
        self.plan = compile_plan(self.algebra) if self.fast else None

    @property
    def uses_fast_path(self) -> bool:
        return self.plan is not None

    def evaluate(self, snapshot: Snapshot, tau: int, budget: Budget = UNBOUNDED) -> Answer:
        """The answer at tau; an evaluation error is an answer with `error` set, one past the
        `budget` an answer with `cut` set (the rdflib baseline is not bounded)."""
        try:
            if self.plan is not None:
                return self._evaluate_plan(snapshot, tau, budget)
            if self.reference == "rdflib":
                default, dataset = self._rdflib_view(snapshot)
                return self._evaluate_with_rdflib(default, dataset, self.algebra.prologue, tau)
            return self._evaluate_algebra(snapshot, tau, budget)
        except EvaluationCut as cut:
            return self._failed(f"evaluation {cut}", cut.bound)
        except RecursionError:
            return self._failed("the query nests too deeply to evaluate")
        except Exception as error:  # noqa: BLE001 - one window's failure is that window's report
            return self._failed(f"{type(error).__name__}: {error}")

    def _failed(self, message: str, cut: str | None = None) -> Answer:
        form = {"SelectQuery": "SELECT", "AskQuery": "ASK"}.get(self.algebra.algebra.name, "CONSTRUCT")
        return Answer(form, error=message, cut=cut)

    def _evaluate_plan(self, snapshot: Snapshot, tau: int, budget: Budget) -> Answer:
        context = EvaluationContext(self.cache, tau, base=self._base(), budget=budget, snapshot=snapshot)
        if self.columnar is not None:  # the windows are columns: the columnar backend's (rsp_plugin.columnar)
            backend = self.columnar.backend(self.plan, snapshot, context)
        else:
            backend = FactBackend(self.plan, snapshot, context)
        return finish(self.plan, backend, context, ordered=self._ordered)

    def _prefixes(self) -> dict[str, str]:
        manager = getattr(self.algebra.prologue, "namespace_manager", None)
        return {} if manager is None else {name: str(namespace) for name, namespace in manager.namespaces() if name}

    def _base(self) -> str | None:
        base = getattr(self.algebra.prologue, "base", None)
        return str(base) if base else None

    def _evaluate_algebra(self, snapshot: Snapshot, tau: int, budget: Budget = UNBOUNDED) -> Answer:
        algebra = self.algebra.algebra
        run = AlgebraEvaluation(snapshot, self.terms, tau=tau, base=self._base(), services=self.services,
                                prefixes=self._prefixes(), budget=budget)
        intern = self.terms.intern
        if algebra.name == "SelectQuery":
            variables, rows = run.select(algebra)
            budget.check(len(rows))
            out = [tuple(None if (key := row.get(v)) is None else intern(key) for v in variables) for row in rows]
            return Answer("SELECT", tuple(variables), out, ordered=self._ordered)
        if algebra.name == "AskQuery":
            return Answer("ASK", boolean=run.ask(algebra))
        if algebra.name == "ConstructQuery":
            return Answer("CONSTRUCT", triples=[(intern(s), intern(p), intern(o)) for s, p, o in run.construct(algebra)])
        raise ValueError(f"unexpected query form {algebra.name}")

    def _rdflib_view(self, snapshot: Snapshot):
        default = self._graph(snapshot.default, DEFAULT_GRAPH)
        named = {URIRef(name): self._graph(content, URIRef(name)) for name, content in snapshot.named.items()}
        return default, SnapshotDataset(default, named, self.cache)

    def _graph(self, content, identifier):
        """One rdflib Graph per content object, kept while the content lives."""
        key = id(content)
        found = self._graphs.get(key)
        if found is None or found[0] is not content or found[1].identifier != identifier:
            found = (content, content_graph(content, self.cache, identifier))
            self._graphs[key] = found
            if len(self._graphs) > 64:
                self._graphs = {key: found}
        return found[1]

    def _interner(self, tau: int):
        """Terms to ids; a blank node the query made (rdflib names them at random) gets a name
        from the evaluation time and its order of appearance, so that output is deterministic."""
        cache, fresh = self.cache, {}

        def intern(term):
            if _is_blank(term) and cache.find(term) is None:
                name = fresh.get(term)
                if name is None:
                    name = fresh[term] = self.terms.intern(f"_:t{tau}b{len(fresh) + 1}")
                return name
            return cache.intern(term)

        return intern

    def _evaluate_with_rdflib(self, default, dataset, prologue, tau) -> Answer:
        context = query_context(default, dataset, prologue, tau)
        algebra = self.algebra.algebra
        intern = self._interner(tau)
        if algebra.name == "ConstructQuery":
            return Answer("CONSTRUCT", triples=self._construct(context, algebra, intern))
        result = evalPart(context, algebra)
        kind = result["type_"]
        if kind == "SELECT":
            variables = list(result["vars_"])
            rows = [
                tuple(None if (value := row.get(v)) is None else intern(value) for v in variables)
                for row in result["bindings"]
            ]
            return Answer("SELECT", tuple(str(v) for v in variables), rows, ordered=self._ordered)
        if kind == "ASK":
            return Answer("ASK", boolean=bool(result["askAnswer"]))
        raise ValueError(f"unexpected query form {kind}")  # pragma: no cover - the grammar allows no other

    @staticmethod
    def _construct(context, algebra, intern) -> list[tuple[int, int, int]]:
        """CONSTRUCT as rdflib fills its template (fresh blank nodes per solution, unbound: no
        triple), but in solution order, so that blank nodes are named deterministically."""
        template = algebra.template or algebra.p.p.triples
        out: dict[tuple[int, int, int], None] = {}
        for solution in evalPart(context, algebra.p):
            blanks: dict = {}
            for triple in template:
                made = []
                for term in triple:
                    if isinstance(term, BNode):
                        made.append(blanks.setdefault(term, BNode()))
                    elif isinstance(term, Variable):
                        made.append(solution.get(term))
                    else:
                        made.append(term)
                if None not in made:
                    out[(intern(made[0]), intern(made[1]), intern(made[2]))] = None
        return list(out)


def translated(query: ContinuousQuery):
    """The query's rdflib algebra; translated again from the text with inverse steps of negated
    property sets spelled out where rdflib's parser lost their IRIs (`?s !^ex:p ?o`)."""
    if not has_lost_inverse(query.algebra.algebra) or not query.sparql:
        return query.algebra
    from rdflib.plugins.sparql.algebra import translateQuery
    from rdflib.plugins.sparql.parser import parseQuery

    from .syntax import star_in_written_order

    text = spell_out_inverse_negations(query.sparql)
    parsed = parseQuery(text)
    return star_in_written_order(translateQuery(parsed, base=query.base), text, parsed)


def _is_blank(term) -> bool:
    return isinstance(term, BNode)


def _has_order_by(node) -> bool:
    while node is not None and hasattr(node, "name"):
        if node.name == "OrderBy":
            return True
        if node.name not in ("SelectQuery", "Slice", "Distinct", "Reduced", "Project"):
            return False
        node = node.get("p")
    return False
