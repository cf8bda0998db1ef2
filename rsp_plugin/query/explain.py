"""Why a query reported a row (or a triple): its pattern's matches, down to stream elements.

    rt = RSPEngine(explain=True)
    ...
    rt.explain("hot", 10_000, {"room": "<http://ex/r1>"})      # a row of the report at 10000
    rt.explain("q", 10_000, "<http://ex/a> <http://ex/p> <http://ex/b> .")   # a CONSTRUCT triple

The explanation of the latest report of a query (what its windows hold now):

    {"query": "hot", "t": 10000, "answer": {"room": "<http://ex/r1>"}, "by": "query",
     "matches": 2,                         # solutions of the WHERE pattern that give this row
     "body": [                             # the first MAX_MATCHES of them
       {"literal": "?s = <http://ex/s1>, ?room = <http://ex/r1>, ?v = \"31\"^^...", "matched": true,
        "because": [                       # the triples the pattern matched, each with where it came from
          {"triple": "<http://ex/s1> <http://ex/temp> \"31\"^^... .", "t": 10000, "by": "stream",
           "stream": "http://ex/sensors", "timestamp": 9500,
           "source": {"file": "sensors.tnt", "line": 12}},
          {"triple": "<http://ex/r1> a <http://ex/Room> .", "by": "graph", "graph": "building.ttl"},
          {"triple": "<http://ex/s1> a <http://ex/Sensor> .", "by": "rule", ...}]}]}   # entailed

A triple of a window is a stream element (`by` "stream", with its timestamp,
and its file and line, or the stream and the element's arrival number); with
ENTAILMENT, an entailment of the window's materialization (`reasoning.py`'s
tree, its time points turned into the report times they stand for, its
window triples into the elements); with RULES, a derived triple (`lars.py`'s
tree, likewise); a triple of a static graph names the graph.

Which solutions: the query's WHERE pattern (below projection, ordering and
aggregation) is evaluated again over the same snapshot, and the solutions that
agree with the row are kept (for an aggregate, the solutions of the row's
group: those that agree with the GROUP BY variables). Their triples are the
query's triple patterns filled with the solution and found in the graph
they are matched in; a pattern left unbound (an OPTIONAL that did not match)
or absent (under MINUS or NOT EXISTS) is not one of them.

Only the latest report of a query can be explained: its windows have moved
past the older ones.
"""

from __future__ import annotations

from collections import deque

from rdflib import BNode, Literal, URIRef, Variable
from rdflib.plugins.sparql.parserutils import CompValue

from ..core.rdfterms import term_key
from ..lars.explain import ExplanationUnavailable

#: Solutions shown per row (the rest are counted).
MAX_MATCHES = 10
#: Occurrences of one triple in a window shown.
MAX_OCCURRENCES = 5
#: patterns a "why not" matches before it says what it found
MAX_WHY_NOT_STEPS = 10_000
#: Sources kept per stream beyond what its windows need (elements).
_PRUNE_EVERY = 1024

#: query explanations as text show this many levels of facts unless asked for more (`--explain-depth`)
QUERY_TEXT_LEVELS = 3


class ElementSources:
    """Where the elements a runtime accepted came from: per stream and triple, its arrivals
    (timestamp, where), where is (file, line) for a replayed file, (stream, arrival number)
    otherwise. Kept while a window of the stream, or the rules a window runs, may still show
    the element."""

    def __init__(self):
        self.streams: dict[str, dict[tuple, list[tuple[int, tuple]]]] = {}
        self._order: dict[str, deque] = {}
        self._since_pruned = 0

    def accepted(self, engine, iri: str, timestamp: int, triple: tuple, where: tuple) -> None:
        seen = self.streams.get(iri)
        if seen is None:
            seen = self.streams[iri] = {}
            self._order[iri] = deque()
        arrivals = seen.get(triple)
        if arrivals is None:
            seen[triple] = [(timestamp, where)]
        else:
            arrivals.append((timestamp, where))
        self._order[iri].append((timestamp, triple))
        self._since_pruned += 1
        if self._since_pruned >= _PRUNE_EVERY:
            self._since_pruned = 0
            self.prune(engine)

    def arrivals(self, iri: str, triple: tuple) -> list[tuple[int, tuple]]:
        return self.streams.get(iri, {}).get(tuple(triple), [])

    def where(self, iri: str, timestamp: int, triple: tuple):
        for stamp, (origin, line) in self.arrivals(iri, triple):
            if stamp == timestamp:
                return {"stream": iri, "arrival": line} if origin == iri else {"file": origin, "line": line}
        return None

    def prune(self, engine) -> None:
        """Forget the elements no window of their stream (or its rules) can show any more."""
        for iri, order in self._order.items():
            stream = engine._streams.get(iri)
            if stream is None or not stream.windows:
                continue
            by_time, by_count = _retention(stream.windows)
            oldest = None if by_time is None or engine.watermark is None else engine.watermark - by_time
            seen = self.streams[iri]
            while order:
                timestamp, triple = order[0]
                if oldest is not None and timestamp >= oldest:
                    break
                if by_count is not None and len(order) <= by_count:
                    break
                order.popleft()
                arrivals = seen.get(triple)
                if arrivals:
                    for index, (stamp, _) in enumerate(arrivals):
                        if stamp == timestamp:
                            del arrivals[index]
                            break
                    if not arrivals:
                        del seen[triple]


def _retention(windows) -> tuple[int | None, int | None]:
    """How far back (ms) and how many elements back the windows (and the rules they run) reach."""
    from .views import RulesView
    from .windows import TimeWindow

    by_time = by_count = None
    for shared in windows:
        window = shared.window
        reach = 0
        view = shared.view
        engine = view.engine if isinstance(view, RulesView) else \
            getattr(getattr(view, "materializer", None), "engine", None)  # (a RULES program's windows reach back)
        if engine is not None:
            provenance, history = getattr(engine, "provenance", None), getattr(engine, "history", None)
            if provenance is not None:
                reach = provenance.data_reach + 1
            elif history is not None:  # the answer-stream solver: what its windows can still see
                reach = history.reach + 1
        if isinstance(window, TimeWindow):
            span = window.spec.range + window.spec.step + reach * shared.view.tick if reach else \
                window.spec.range + window.spec.step
            by_time = span if by_time is None else max(by_time, span)
        else:
            span = window.spec.size + reach
            by_count = span if by_count is None else max(by_count, span)
    if by_time is not None and by_time >= 1 << 60:
        by_time = 1 << 62
    return by_time, by_count


def explain_answer(engine, name: str, t: int, item) -> dict:
    """Why `item` (a row: {variable: term}, or a triple) is in query `name`'s report at `t`."""
    query = engine._queries.get(name)
    if query is None:
        raise KeyError(f"no query named {name!r} is registered")
    if getattr(engine, "explanations", None) is None:
        raise ExplanationUnavailable("this engine keeps no explanations: make it with RSPEngine(explain=True)")
    if query.last_instant != t:
        raise ExplanationUnavailable(
            f"only the latest report of query {name} can be explained (t={query.last_instant}); "
            f"its windows have moved past t={t}")
    return _Answer(engine, query, t).explain(item)


class _Answer:
    def __init__(self, engine, query, t: int):
        self.engine = engine
        self.query = query
        self.t = t
        self.terms = engine.terms
        self.snapshot = query.snapshot()
        self.algebra = query.evaluator.algebra.algebra

    def explain(self, item) -> dict:
        from .algebra import AlgebraEvaluation

        pattern, group = _where_pattern(self.algebra)
        wanted = self._wanted(item)
        run = AlgebraEvaluation(self.snapshot, self.terms, tau=self.t, base=self.query.evaluator._base())
        try:
            rows = run.rows(pattern)
        except Exception as error:  # noqa: BLE001 - what failed the report's evaluation fails here too
            return {"query": self.query.name, "t": self.t, "answer": _shown_item(item), "by": "query",
                    "matches": 0, "body": [], "note": f"the pattern cannot be evaluated again: {error}"}
        names = None if group is None else set(group)
        agreeing = [row for row in rows if all(row.get(var) == value for var, value in wanted.items()
                                                if var in row and (names is None or var in names))]
        if group is None:
            agreeing = [row for row in agreeing if all(var in row for var in wanted if _in_pattern(var, pattern))]
        patterns = list(_triple_patterns(pattern))
        body = []
        for row in agreeing[:MAX_MATCHES]:
            shown = ", ".join(f"?{var} = {value}" for var, value in row.items() if not var.startswith("_:"))
            because = [self._triple(graph, triple) for graph, triple in self._matched(patterns, row)]
            body.append({"literal": shown, "matched": True, "because": because})
        node = {"query": self.query.name, "t": self.t, "answer": _shown_item(item), "by": "query",
                "matches": len(agreeing), "body": body}
        if not agreeing:
            node["note"] = "no solution of the WHERE pattern gives this answer now"
            missing = self._missing(patterns, wanted)
            if missing is not None:
                node["missing"] = [missing]
            elif patterns:
                node["note"] += " (each triple pattern matches: a FILTER, OPTIONAL, MINUS or HAVING decides)"
        return node

    # why not ------------------------------------------------------------------------------------

    def _missing(self, patterns, wanted: dict[str, str]) -> dict | None:
        """The triple pattern no triple matches at t, with the values the answer (and the patterns
        matched before it) give its variables: the deepest a search for a solution went; None
        when the patterns match together."""
        patterns = [(graph, pattern) for graph, pattern in patterns
                    if all(isinstance(node, (Variable, BNode, URIRef, Literal)) for node in pattern)]
        best = {"depth": -1, "found": None}
        budget = [MAX_WHY_NOT_STEPS]

        def search(index: int, binding: dict) -> bool:
            budget[0] -= 1
            if index == len(patterns) or budget[0] < 0:
                return True
            graph, pattern = patterns[index]
            matches = list(self._pattern_matches(graph, pattern, binding))
            if not matches:
                if index > best["depth"]:
                    names = [str(node) for node in pattern if isinstance(node, Variable)]
                    best.update(depth=index, found={
                        "pattern": " ".join(_pattern_text(node) for node in pattern),
                        "with": {name: binding[name] for name in dict.fromkeys(names) if name in binding},
                        "matches": 0})
                    if graph is not None:
                        best["found"]["graph"] = str(graph)
                return False
            return any(search(index + 1, extended) for extended in matches[:MAX_MATCHES])

        return None if search(0, dict(wanted)) else best["found"]

    def _pattern_matches(self, graph, pattern, binding: dict):
        """The bindings of the pattern's variables by the triples of `graph` at t that match it."""
        find = self.terms.find
        keys = self.terms.keys
        ids = []
        for node in pattern:
            if isinstance(node, Variable):
                key = binding.get(str(node))
            elif isinstance(node, BNode):
                key = None
            else:
                key = term_key(node)
            if key is None:
                ids.append(None)
                continue
            found = find(key)
            if found is None:
                return
            ids.append(found)
        name = graph
        if isinstance(graph, Variable):
            value = binding.get(str(graph))
            name = None if value is None else value[1:-1]
            if name is None:
                return  # (a variable graph: not searched)
        elif graph is not None:
            name = str(graph)
        content = self.snapshot.graph(name)
        for triple in content.match(*ids):
            extended = dict(binding)
            for node, value in zip(pattern, triple):
                if isinstance(node, Variable):
                    seen = extended.setdefault(str(node), keys[value])
                    if seen != keys[value]:
                        break
            else:
                yield extended

    # the answer asked about ------------------------------------------------------------------

    def _wanted(self, item) -> dict[str, str]:
        """The variables the answer fixes, as written keys."""
        form = self.query.query.form
        if form == "CONSTRUCT":
            triple = _triple_keys(item)
            template = self.algebra.template or _where_pattern(self.algebra)[0].triples
            for pattern in template:
                binding = {}
                if all(_unify(node, key, binding) for node, key in zip(pattern, triple)):
                    return binding
            raise ValueError(f"{' '.join(triple)} . is made by no triple of the query's template")
        if form == "ASK" or item is None:
            return {}
        if not isinstance(item, dict):
            raise ValueError("a SELECT answer is a row: {variable: term}")
        return {str(var).lstrip("?"): value if isinstance(value, str) else term_key(value)
                for var, value in item.items() if value is not None}

    # the matched triples ----------------------------------------------------------------------

    def _matched(self, patterns, row):
        seen = set()
        find = self.terms.find
        for graph, pattern in patterns:
            keys = []
            for node in pattern:
                if isinstance(node, (Variable, BNode)):
                    keys.append(row.get(str(node) if isinstance(node, Variable) else f"_:{node}"))
                elif isinstance(node, (URIRef, Literal)):
                    keys.append(term_key(node))
                else:
                    keys.append(None)  # a property path: its steps are not single triples
            if None in keys:
                continue
            ids = tuple(find(key) for key in keys)
            if None in ids:
                continue
            name = graph
            if isinstance(graph, Variable):
                value = row.get(str(graph))
                if value is None:
                    continue
                name = value[1:-1]
            elif graph is not None:
                name = str(graph)
            content = self.snapshot.graph(name)
            if not content.contains(ids) or (name, ids) in seen:
                continue
            seen.add((name, ids))
            yield name, ids

    def _triple(self, graph: str | None, triple: tuple) -> dict:
        keys = self.terms.keys
        head = {"triple": " ".join(keys[term] for term in triple) + " .", "t": self.t}
        if graph is not None:
            head["graph"] = graph
        for clause, shared in self.query.windows:
            if clause.name != graph:
                continue
            if shared.view.content.contains(triple):
                return self._in_window(head, shared, triple)
        parts = list(self.query.static_default) if graph is None else [self.query.static_named.get(graph)]
        for part in parts:
            if part is not None and part.contains(triple):
                return {**head, "by": "graph", **self._graph_name(part, graph)}
        return {**head, "by": "unknown"}

    def _graph_name(self, part, graph) -> dict:
        for iri, index in self.engine.datasets.graphs.items():
            if index is part:
                if iri.startswith("('static'"):
                    return {"graph": "the background's entailments"}
                source = self.engine.datasets.sources.get(iri)
                found = {"graph": iri}
                if isinstance(source, (str, bytes)) or hasattr(source, "__fspath__"):
                    found["source"] = {"file": str(source)}
                return found
        return {"graph": graph} if graph else {}

    # windows ------------------------------------------------------------------------------------

    def _in_window(self, head: dict, shared, triple: tuple) -> dict:
        from .views import MaterializedView, RulesView

        view = shared.view
        head["window"] = shared.stream
        stamps = shared.window.content.stamps.get(triple)
        if stamps:  # a stream element (the window holds it as it arrived)
            return self._elements(head, shared, triple, stamps)
        if isinstance(view, MaterializedView):
            tree = view.materializer.explain(triple)
            if tree is None:
                return {**head, "by": "unknown"}
            return {**self._timed(tree, shared, shift=1), "window": shared.stream}
        if isinstance(view, RulesView):
            tree = view.engine.explain((view.triple, triple))
            if tree is None:
                return {**head, "by": "unknown"}
            return {**self._timed(tree, shared, shift=0), "window": shared.stream}
        return {**head, "by": "unknown"}

    def _elements(self, head: dict, shared, triple: tuple, stamps) -> dict:
        sources = self.engine.explanations
        shown = list(stamps)[-MAX_OCCURRENCES:]
        latest = shown[-1]
        node = {**head, "by": "stream", "stream": shared.stream, "timestamp": latest}
        where = sources.where(shared.stream, latest, triple)
        if where is not None:
            node["source"] = where
        if len(stamps) > 1:
            node["seen"] = [{"timestamp": stamp, **({"source": w} if (w := sources.where(shared.stream, stamp, triple))
                                                    else {})} for stamp in shown]
        return node

    def _timed(self, tree: dict, shared, shift: int) -> dict:
        """An engine's tree with its time points as the report times they stand for, and its
        window (or data) triples as the stream elements they are."""
        from .windows import TimeWindow

        view = shared.view
        window = shared.window
        if isinstance(window, TimeWindow):
            t0, tick = window.t0, view.tick
            to_ms = lambda point: None if point is None else t0 + point * tick  # noqa: E731
            from_ms = lambda stamp: (stamp - t0) // tick + shift  # noqa: E731
        else:
            to_ms = lambda point: point  # noqa: E731 - count windows count elements
            from_ms = None
        return self._convert(tree, shared, to_ms, from_ms)

    def _counted(self, shared, triple: tuple, number: int) -> list:
        """The arrival of element number `number` of a count window, if it is `triple` and known."""
        window = shared.window
        held = list(window._held)
        first = window.committed - len(held) + 1
        if not first <= number <= window.committed:
            return []
        stamp, element = held[number - first]
        if element != triple:
            return []
        return [(stamp, where) for stamp_, where in self.engine.explanations.arrivals(shared.stream, triple)
                if stamp_ == stamp][-1:]

    def _convert(self, node: dict, shared, to_ms, from_ms) -> dict:
        out = dict(node)
        for key in ("t", "derived_at", "fired_at", "horizon", "placed", "holds_until"):
            if key in out and out[key] is not None:
                out[key] = to_ms(out[key])
        if out.get("by") in ("window", "data") and "triple" in out:
            point = node.get("arrived", node.get("t"))
            if "arrived" in out:
                out["arrived"] = to_ms(out["arrived"])
            triple = tuple(self.terms.find(key) for key in out["triple"].rstrip(" .").split(" ", 2))
            arrivals = self.engine.explanations.arrivals(shared.stream, triple)
            if from_ms is None:  # a count window: point i is the i-th element
                matching = self._counted(shared, triple, point)
            else:
                matching = [(stamp, where) for stamp, where in arrivals if from_ms(stamp) == point]
            if matching:
                stamp, (origin, line) = matching[-1]
                out["by"] = "stream"
                out["stream"] = shared.stream
                out["timestamp"] = stamp
                out["source"] = {"stream": origin, "arrival": line} if origin == shared.stream else \
                    {"file": origin, "line": line}
        if "body" in out:
            body = []
            for item in out["body"]:
                item = dict(item)
                for key in ("window", "witness", "absent"):
                    if key in item:
                        item[key] = [to_ms(point) for point in item[key]]
                if "horizon" in item and item["horizon"] is not None:
                    item["horizon"] = to_ms(item["horizon"])
                if "because" in item:
                    item["because"] = [self._convert(child, shared, to_ms, from_ms) for child in item["because"]]
                body.append(item)
            out["body"] = body
        return out


# the query's pattern ---------------------------------------------------------------------------


def _where_pattern(algebra):
    """(the WHERE pattern, the GROUP BY variables or None): below projection, ordering and
    aggregation (HAVING and the aggregates' own extensions are above the grouping)."""
    node = algebra.p
    while node.name in ("Slice", "Project", "Distinct", "Reduced", "OrderBy", "ToMultiSet"):
        node = node.p
    probe = node
    while probe.name in ("Extend", "Filter"):
        probe = probe.p
    if probe.name == "AggregateJoin":
        group = probe.p
        return group.p, [str(expr) for expr in (group.expr or ()) if isinstance(expr, Variable)]
    return node, None


def _triple_patterns(node, graph=None):
    """(graph, triple pattern) of every BGP in the pattern (graph: None, an IRI or a variable)."""
    if not isinstance(node, CompValue):
        return
    if node.name == "BGP":
        for triple in node.triples:
            yield graph, triple
        return
    if node.name == "Graph":
        yield from _triple_patterns(node.p, node.term)
        return
    for key in ("p", "p1", "p2"):
        child = node.get(key)
        if isinstance(child, CompValue):
            yield from _triple_patterns(child, graph)


def _pattern_text(node) -> str:
    if isinstance(node, Variable):
        return f"?{node}"
    if isinstance(node, BNode):
        return f"_:{node}"
    return term_key(node)


def _in_pattern(variable: str, pattern) -> bool:
    return any(isinstance(n, Variable) and str(n) == variable
               for _, triple in _triple_patterns(pattern) for n in triple)


def _unify(node, key: str, binding: dict) -> bool:
    if isinstance(node, Variable):
        bound = binding.setdefault(str(node), key)
        return bound == key
    if isinstance(node, BNode):
        return key.startswith("_:")
    return term_key(node) == key


def _triple_keys(item) -> tuple[str, str, str]:
    if isinstance(item, str):
        from ..io.formats import _NQUADS_LINE

        found = _NQUADS_LINE.match(item.strip() if item.strip().endswith(".") else item.strip() + " .")
        if found is None:
            raise ValueError(f"not a triple: {item!r} (expected <s> <p> <o> .)")
        return found.group("s"), found.group("p"), found.group("o")
    s, p, o = item
    return tuple(value if isinstance(value, str) else term_key(value) for value in (s, p, o))


def _shown_item(item):
    if isinstance(item, dict):
        return {str(k).lstrip("?"): v if isinstance(v, str) else term_key(v) for k, v in item.items()}
    if isinstance(item, (tuple, list)):
        return " ".join(_triple_keys(item)) + " ."
    return item
