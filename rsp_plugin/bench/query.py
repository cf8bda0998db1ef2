"""`rsp-plugin bench query`: continuous queries, per-evaluation latency and many queries on one stream.

Workloads (names for the command line):

    latency   windows of 1k, 10k, 100k triples (sensor observations); two queries,
              a 3-pattern join with a FILTER and the same join grouped and aggregated:

                SELECT ?obs ?room ?v FROM STREAM <sensors> [RANGE 10s STEP 1s]
                WHERE { ?obs ex:sensor ?s . ?obs ex:value ?v . ?s ex:location ?room
                        FILTER(?v > 900) }
                SELECT ?room (COUNT(*) AS ?n) (AVG(?v) AS ?avg) ... FILTER(?v > 500) } GROUP BY ?room

              and one the fast path does not take (OPTIONAL), evaluated by the algebra
              evaluator:

                SELECT ?obs ?room ?v ... WHERE { ?obs ex:sensor ?s . ?s ex:location ?room
                        OPTIONAL { ?obs ex:value ?v FILTER(?v > 900) } }

              with entailment off, RDFS and OWL RL (the window's materialization with a
              small ontology). Timed: one evaluation over the window as the runtime holds
              it (median of --repeat), by the fast path where the query takes it; the same
              by the algebra evaluator alone (what a query off the fast path pays); baselines
              in the same run: rdflib's evaluator over the same indexes (what the runtime
              used off the fast path before the algebra evaluator), and rdflib over a fresh
              Graph of the window's triples (built and queried, what a naive engine pays).
    sharing   1, 10 and 100 distinct registered queries (join + FILTER, each its own
              filter, all as selective) on one stream, [RANGE 10s STEP 1s], 1k new triples a second:
              time per instant (ingest, slide the shared window, evaluate every query),
              and its ratio to one query. Target: 100 queries < 100 x one.

The data are built and interned before any timer starts.

Measured when the algebra evaluator replaced rdflib's (2026-11-23, a shared 2-core
machine, entailment off, ms per evaluation, before -> after in one session):

    query         path       1k            10k            100k
    join+FILTER   fast       0.30 -> 0.24  1.14 -> 0.92   10.0 -> 9.6 (alone; 46 -> 62 in the full run)
    aggregate     fast       0.94 -> 1.22  12.3 -> 13.9   121 -> 130
    OPTIONAL      off fast   43.9 -> 15.5  649 -> 246     11722 -> 2183
    join+FILTER   off fast   42.7 -> 12.4  417 -> 121     5631 -> 1347
    aggregate     off fast   45.2 -> 16.0  498 -> 172     11432 -> 1285

("off fast": the evaluation a query pays when the fast path does not take it:
rdflib's evaluator before, the algebra evaluator after.)
"""

from __future__ import annotations

import random
import statistics
import time

from rdflib import Graph

from ..query.evaluate import QueryEvaluator
from ..runtime.engine import RSPEngine

EX = "http://example.org/"
STREAM = f"{EX}sensors"
SENSORS = 100
RDF_TYPE = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
XSD_INTEGER = "<http://www.w3.org/2001/XMLSchema#integer>"
ONTOLOGY = f"""
@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
@prefix owl: <http://www.w3.org/2002/07/owl#> .
ex:TemperatureObservation rdfs:subClassOf ex:Observation .
ex:Observation rdfs:subClassOf ex:Event .
ex:sensor rdfs:range ex:Sensor .
ex:location rdfs:subPropertyOf ex:near .
ex:near a owl:SymmetricProperty .
"""
PROFILES = {
    "off": "",
    "RDFS": "ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>",
    "OWL RL": "ENTAILMENT <http://www.w3.org/ns/owl-profile/RL>",
}
JOIN = """PREFIX ex: <{ex}>
SELECT ?obs ?room ?v FROM STREAM <{stream}> [RANGE 10s STEP 1s] {extra}
WHERE {{ ?obs ex:sensor ?s . ?obs ex:value ?v . ?s ex:location ?room FILTER(?v > {threshold}) }}"""
AGGREGATE = """PREFIX ex: <{ex}>
SELECT ?room (COUNT(*) AS ?n) (AVG(?v) AS ?avg) (MAX(?v) AS ?max) FROM STREAM <{stream}> [RANGE 10s STEP 1s] {extra}
WHERE {{ ?obs ex:sensor ?s . ?obs ex:value ?v . ?s ex:location ?room FILTER(?v > {threshold}) }}
GROUP BY ?room"""
OPTIONAL_QUERY = """PREFIX ex: <{ex}>
SELECT ?obs ?room ?v FROM STREAM <{stream}> [RANGE 10s STEP 1s] {extra}
WHERE {{ ?obs ex:sensor ?s . ?s ex:location ?room OPTIONAL {{ ?obs ex:value ?v FILTER(?v > {threshold}) }} }}"""
QUERIES = {"join+FILTER": (JOIN, 900), "aggregate": (AGGREGATE, 500), "OPTIONAL": (OPTIONAL_QUERY, 900)}


def observations(count: int, first: int, seed: int) -> list[tuple[int, tuple[str, str, str]]]:
    """(ms, triple of N-Triples keys): `count` triples of sensor observations from observation `first` on,
    spread over the 10 seconds they are timestamped in, sensors' locations among them."""
    draw = random.Random(seed)
    out = []
    for sensor in range(SENSORS):
        out.append((0, (f"<{EX}sensor{sensor}>", f"<{EX}location>", f"<{EX}room{sensor % 10}>")))
    number = first
    while len(out) < count:
        obs = f"<{EX}obs{number}>"
        out.append((0, (obs, f"<{EX}sensor>", f"<{EX}sensor{draw.randrange(SENSORS)}>")))
        out.append((0, (obs, f"<{EX}value>", f'"{draw.randint(0, 1000)}"^^{XSD_INTEGER}')))
        out.append((0, (obs, RDF_TYPE, f"<{EX}TemperatureObservation>")))
        number += 1
    out = out[:count]
    return [(index * 10_000 // count, triple) for index, (_, triple) in enumerate(out)]


def _engine(query_text: str, with_ontology: bool, fast: bool = True):
    engine = RSPEngine(fast_path=fast)
    engine.register_stream(STREAM)
    if with_ontology:
        engine.add_background(Graph().parse(data=ONTOLOGY, format="turtle"))
    return engine, engine.register_query(query_text)


def _push(engine: RSPEngine, elements) -> None:
    intern = engine.terms.intern
    engine.push_ids(STREAM, [(t, (intern(s), intern(p), intern(o))) for t, (s, p, o) in elements])


def _median_ms(function, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        begin = time.perf_counter()
        function()
        times.append(time.perf_counter() - begin)
    return statistics.median(times) * 1000


def latency(options, out) -> None:
    sizes = options.sizes or ([1000, 10_000] if options.quick else [1000, 10_000, 100_000])
    repeat = 3 if options.quick else max(options.repeat, 5)
    profiles = ["off", "RDFS"] if options.quick else list(PROFILES)
    out(f"Per-evaluation latency, ms (median of {repeat}); window [RANGE 10s STEP 1s] read at tau = 10 s.")
    out("ours: the runtime's evaluation (path: fast path or algebra evaluator); algebra: the algebra")
    out("evaluator alone; rdflib/idx: rdflib's evaluator over the same indexes (the runtime's before);")
    out("rdflib/graph: a fresh rdflib Graph of the window's triples, built (closed by owlrl under")
    out("entailment) and queried, as a naive engine would per window; held: triples the query reads")
    out("(window + entailments); setup: filling the window and materializing it, once. Ratios: baseline / ours.")
    header = (f"{'query':<12} {'entail':<7} {'window':>7} {'held':>7} {'rows':>6} {'path':>7} {'ours':>9} "
              f"{'algebra':>9} {'rdflib/idx':>11} {'ratio':>7} {'rdflib/graph':>13} {'ratio':>7} {'setup s':>8}")
    out(header)
    out("-" * len(header))
    for size in sizes:
        elements = observations(size, 0, seed=size)
        for profile in profiles:
            if profile != "off" and size > 10_000 and options.quick:
                continue
            for name, (template, threshold) in QUERIES.items():
                text = template.format(ex=EX, stream=STREAM, threshold=threshold,
                                       extra=PROFILES[profile] and f"{PROFILES[profile]}")
                begin = time.perf_counter()
                engine, registered = _engine(text, profile != "off")
                _push(engine, elements)
                engine.advance_to(10_000)
                setup = time.perf_counter() - begin
                snapshot = registered.snapshot()
                held = len(snapshot.default)
                evaluator = registered.evaluator
                answer = evaluator.evaluate(snapshot, 10_000)
                fast_ms = _median_ms(lambda: evaluator.evaluate(snapshot, 10_000), repeat)
                path = "fast" if evaluator.uses_fast_path else "algebra"
                rounds = repeat if held <= 20_000 else 1
                algebra = QueryEvaluator(registered.query, engine.terms, cache=engine.cache, fast=False)
                algebra_ms = fast_ms if not evaluator.uses_fast_path else _median_ms(
                    lambda: algebra.evaluate(snapshot, 10_000), rounds)
                slow = QueryEvaluator(registered.query, engine.terms, cache=engine.cache, fast=False,
                                      reference="rdflib")
                idx_ms = _median_ms(lambda: slow.evaluate(snapshot, 10_000), rounds)
                if len(slow.evaluate(snapshot, 10_000)) != len(answer) or \
                        len(algebra.evaluate(snapshot, 10_000)) != len(answer):  # every way must agree
                    out(f"!! {name} {profile} {size}: the evaluators give different answers")
                if (profile == "off" and (held <= 20_000 or not options.quick)) or size <= (
                        1000 if options.quick else 10_000):
                    window = elements if profile == "off" else elements + [(0, t) for t in _ontology_keys()]
                    graph_ms = _median_ms(lambda: _fresh_graph(engine, window, registered.query.sparql, profile), 1)
                    graph_text = f"{graph_ms:>13.1f} {graph_ms / fast_ms:>6.0f}x"
                else:
                    graph_text = f"{'-':>13} {'':>7}"
                out(f"{name:<12} {profile:<7} {size:>7} {held:>7} {len(answer):>6} {path:>7} {fast_ms:>9.2f} "
                    f"{algebra_ms:>9.2f} {idx_ms:>11.1f} {idx_ms / fast_ms:>6.0f}x {graph_text} {setup:>8.2f}")


def _fresh_graph(engine: RSPEngine, elements, sparql: str, profile: str):
    """The naive evaluation: the window's triples copied into a new rdflib Graph (closed with owlrl
    under entailment: a recomputation per window), then queried."""
    graph = Graph()
    term = engine.cache.term
    intern = engine.terms.intern
    for _, (s, p, o) in elements:
        graph.add((term(intern(s)), term(intern(p)), term(intern(o))))
    if profile != "off":
        import owlrl

        semantics = owlrl.RDFS_Semantics if profile == "RDFS" else owlrl.OWLRL_Semantics
        owlrl.DeductiveClosure(semantics, axiomatic_triples=False, datatype_axioms=False).expand(graph)
    return list(graph.query(sparql))


def _ontology_keys() -> list[tuple[str, str, str]]:
    from ..core.rdfterms import term_key

    return [tuple(term_key(t) for t in triple) for triple in Graph().parse(data=ONTOLOGY, format="turtle")]


def sharing(options, out) -> None:
    counts = [1, 10] if options.quick else [1, 10, 100]
    seconds = 14 if options.quick else 20
    per_second = 1000
    out("")
    out(f"Queries on one stream: [RANGE 10s STEP 1s], {per_second} triples a second (a window of "
        f"~{10 * per_second} triples), distinct join+FILTER queries of one cost; ms per instant (ingest,")
    out("slide the shared window, evaluate every query), median over the instants once the window is full;")
    out("the ratio to one query is the cost of N queries in units of one (N queries alone: N x).")
    header = f"{'queries':>7} {'windows':>7} {'ms/instant':>11} {'vs 1 query':>11} {'ms/query':>9}"
    out(header)
    out("-" * len(header))
    # every second: the sensors' locations again and new observations, spread over the second
    batches = [[(second * 1000 + t // 10, triple) for t, triple in observations(per_second, second * per_second, seed=second)]
               for second in range(seconds)]
    one = None
    for count in counts:
        engine = RSPEngine()
        engine.register_stream(STREAM)
        for number in range(count):  # distinct queries of one cost: FILTER(?v > 900 && ?v != number)
            engine.register_query(JOIN.format(ex=EX, stream=STREAM, threshold=f"900 && ?v != {number}", extra=""))
        intern = engine.terms.intern
        prepared = [[(t, (intern(s), intern(p), intern(o))) for t, (s, p, o) in batch] for batch in batches]
        times = []
        for second, batch in enumerate(prepared):
            begin = time.perf_counter()
            engine.push_ids(STREAM, batch)
            engine.advance_to((second + 1) * 1000)
            if second >= 10:
                times.append(time.perf_counter() - begin)
        ms = statistics.median(times) * 1000
        one = one or ms
        out(f"{count:>7} {len(engine._windows):>7} {ms:>11.2f} {ms / one:>10.1f}x {ms / count:>9.2f}")


WORKLOADS = {"latency": latency, "sharing": sharing}


def run(options, out=print) -> int:
    names = options.workloads or list(WORKLOADS)
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    for name in names:
        WORKLOADS[name](options, out)
    return 0
