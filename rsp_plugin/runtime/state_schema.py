"""What a stored state may hold: each class by name, the fields it may have, and the kinds of their values.

`rsp_plugin.runtime.state` writes and reads an object of rsp_plugin only if its class is
named here, and only the fields named for it, each holding one of the kinds named
(checked when a state is written, and again when it is read: an unknown class, an
unknown field or a value of another kind is refused). A class is not stored because
it can be found by name in the package; it is stored because it is listed here.

A kind is a Python type (`int` also takes a bool), None, or the name of a class
listed here (`"core.terms:Dictionary"`, short for `rsp_plugin.core.terms:Dictionary`); a
container's items are values a state may hold, each checked as it is read. `ANY`
(any value a state may hold) is kept for the few fields whose values are of many
kinds (a numpy array or a polars table, each checked by the codec as it is read). Two
entries are not fields: `ENUM` (an enumeration, stored by its value and
made by the class from it) and `CUSTOM` (stored its own way by `rsp_plugin.runtime.state`:
a query as its text, a rule as its program's text and number, parsed again).

A class that gains a field that is state gets it here too (else the first
checkpoint refuses it, naming the class and the field).
"""

from __future__ import annotations

from collections import Counter, deque

ANY = "any"
ENUM = "enum"
CUSTOM = "custom"

INT = (int,)
STR = (str,)
BOOL = (bool,)
NUMBER = (float, int)
LIST = (list,)
DICT = (dict,)
SET = (set,)
TUPLE = (tuple,)
DEQUE = (deque,)


def maybe(*kinds) -> tuple:
    """One of `kinds` (types, tuples of them, class names), or None."""
    out: list = [None]
    for kind in kinds:
        out.extend(kind if isinstance(kind, tuple) else (kind,))
    return tuple(out)


def ours(*names: str) -> tuple:
    """Classes listed here, by their names without the package's."""
    return tuple(f"rsp_plugin.{name}" for name in names)


DICTIONARY = ours("core.terms:Dictionary")
RANGE_WINDOW = ours("query.model:RangeWindow")
#: a sink's place (`Sink.position`): a file size, a tee's list of them, or None
SINK_POSITION = maybe(int, list)

_VIEW = dict(_expiring=DICT, constant_filter=TUPLE, delta=DICT, horizon=DICT, indexes=DICT, latest_end=INT,
             recent=DICT, relation=maybe(ours("lars.facts:Relation")), size=maybe(int), start=INT, stateful=BOOL,
             watched=BOOL)
_SCHEDULED = dict(_VIEW, scheduled=DICT, low=INT, high=maybe(int), reach=INT)
_TRIPLE_INDEX = dict(osp=DICT, pos=DICT, predicate_sizes=DICT, predicate_subjects=DICT, size=INT, spo=DICT)
_TIME_WINDOW = dict(_buckets=DICT, _staged=LIST, _staged_first=maybe(int), _times=LIST, boundary=maybe(int),
                    first_timestamp=maybe(int), last_timestamp=maybe(int), grid=ours("core.time:WindowGrid"),
                    spec=RANGE_WINDOW, version=INT)

SCHEMA: dict[str, dict | str] = {
    # terms --------------------------------------------------------------------------------------------------
    "rsp_plugin.core.terms:Dictionary": dict(keys=DICT, numbers=DICT, int_ids=DICT, next=INT, pinned=SET, generation=INT,
                                        forgotten=INT, made=INT),
    "rsp_plugin.core.terms:_Numbers": {},
    "rsp_plugin.core.terms:Forgetting": dict(keep_young=BOOL, live=INT, made=INT, mark=INT, minimum=INT, runs=INT,
                                        terms=DICTIONARY),
    "rsp_plugin.core.rdfterms:TermCache": CUSTOM,
    "rsp_plugin.core.time:WindowGrid": dict(range=INT, step=INT, t0=INT, end=INT),
    # the engine of continuous queries -----------------------------------------------------------------------
    "rsp_plugin.runtime.engine:RSPEngine": dict(
        _anonymous=INT, _callbacks=LIST, _collect=BOOL, _column_pending=DICT, _emitted=LIST, _pending=LIST,
        _queries=DICT, _results=DEQUE, _sequence=INT, _streams=DICT, _triple=INT, _windows=DICT, allow_service=TUPLE,
        batch=BOOL, cache=ours("core.rdfterms:TermCache"), datasets=ours("runtime.datasets:Datasets"), errors=LIST,
        explanations=maybe(ours("query.explain:ElementSources")), fast_path=BOOL, finished=BOOL,
        gate=ours("core.admission:Gate"), keeper=ours("runtime.forgetting:TermKeeper"), max_eval_ms=maybe(int),
        max_gap=maybe(int), max_solutions=maybe(int), rejected=LIST, schedule=ours("runtime.scheduling:Schedule"),
        t0=INT, terms=DICTIONARY),
    "rsp_plugin.core.admission:Gate": dict(t0=maybe(int), gap=maybe(ours("core.admission:Gap")), in_order=BOOL,
                                           start=maybe(int), latest=maybe(int), watermark=maybe(int)),
    "rsp_plugin.core.admission:Gap": dict(count=INT, unit_ms=maybe(int)),
    "rsp_plugin.runtime.datasets:Datasets": dict(
        allow_files=BOOL, allow_graphs=TUPLE, background=LIST, cache=ours("core.rdfterms:TermCache"), graphs=DICT,
        jsonld_contexts=DICT, rules_sources=DICT, sources=DICT, terms=DICTIONARY),
    "rsp_plugin.runtime.scheduling:Schedule": dict(gap_unit=maybe(int), queries=DICT),
    "rsp_plugin.runtime.forgetting:TermKeeper": dict(roots=LIST, schedule=maybe(ours("core.terms:Forgetting")),
                                                     terms=DICTIONARY),
    "rsp_plugin.runtime.queries:RegisteredQuery": dict(
        _callbacks=LIST, _results=DEQUE, cap=maybe(int), evaluations=INT,
        evaluator=ours("query.evaluate:QueryEvaluator"), floor=maybe(int), keep_results=BOOL,
        last_instant=maybe(int), name=STR, period=maybe(int), policy=ours("query.model:ReportPolicy"),
        query=ours("query.model:ContinuousQuery"), seen_versions=maybe(tuple), static_default=LIST,
        static_named=DICT, stream=ours("query.results:ResultStream"), t0=INT, tuple_driven=BOOL, windows=LIST),
    "rsp_plugin.runtime.queries:SharedWindow": dict(
        key=TUPLE, readers=SET, stream=STR,
        view=ours("query.views:PlainView", "query.views:MaterializedView", "query.views:RulesView",
                  "columnar.views:BatchMaterializedView")),
    "rsp_plugin.io.lines:Rejected": dict(filename=STR, line=INT, reason=STR),
    "rsp_plugin.runtime.queries:Stream": dict(first_timestamp=maybe(int), iri=STR, last_timestamp=maybe(int),
                                              produced_by=maybe(str), pushed=INT, windows=LIST),
    # queries ------------------------------------------------------------------------------------------------
    "rsp_plugin.query.model:ContinuousQuery": CUSTOM,
    "rsp_plugin.query.model:R2S": ENUM,
    "rsp_plugin.query.model:ReportPolicy": ENUM,
    "rsp_plugin.query.model:RangeWindow": dict(range=INT, step=INT, end=maybe(int)),
    "rsp_plugin.query.model:CountWindow": dict(size=INT, step=INT),
    "rsp_plugin.query.model:NowWindow": {},
    "rsp_plugin.query.model:Place": dict(line=INT, column=INT),
    "rsp_plugin.query.model:WindowClause": dict(
        name=maybe(str), place=maybe(ours("query.model:Place")), stream=STR,
        window=ours("query.model:RangeWindow", "query.model:CountWindow", "query.model:NowWindow")),
    "rsp_plugin.query.evaluate:QueryEvaluator": dict(
        _graphs=DICT, _ordered=BOOL, algebra=(None,), cache=ours("core.rdfterms:TermCache"),
        columnar=maybe(ours("columnar.query:ColumnarState")), fast=BOOL, plan=(None,),
        query=ours("query.model:ContinuousQuery"), reference=STR, services=TUPLE, terms=DICTIONARY),
    "rsp_plugin.query.results:ResultStream": dict(_previous=maybe(Counter), _previous_boolean=BOOL,
                                                  r2s=ours("query.model:R2S")),
    "rsp_plugin.query.results:Answer": dict(form=STR, variables=TUPLE, rows=LIST, triples=LIST, boolean=maybe(bool),
                                            ordered=BOOL, error=maybe(str), cut=maybe(str)),
    "rsp_plugin.query.results:QueryResult": dict(query=STR, t=INT, answer=ours("query.results:Answer"),
                                                 terms=ours("core.terms:ResolvedTerms", "core.terms:Dictionary")),
    "rsp_plugin.core.terms:ResolvedTerms": dict(dictionary=DICTIONARY, keys=DICT, numbers=DICT),
    "rsp_plugin.query.windows:TimeWindow": dict(_TIME_WINDOW, content=ours("query.content:WindowContent")),
    "rsp_plugin.query.windows:CountingWindow": dict(
        spec=ours("query.model:CountWindow"), content=ours("query.content:WindowContent"),
        first_timestamp=maybe(int), last_timestamp=maybe(int), committed=INT, _pending=LIST, _held=DEQUE, version=INT),
    "rsp_plugin.query.content:TripleIndex": _TRIPLE_INDEX,
    "rsp_plugin.query.content:WindowContent": dict(_TRIPLE_INDEX, stamps=DICT),
    "rsp_plugin.query.content:UnionContent": dict(parts=LIST),
    "rsp_plugin.query.views:PlainView": dict(window=ours("query.windows:TimeWindow", "query.windows:CountingWindow",
                                                         "columnar.columns:ColumnTimeWindow")),
    "rsp_plugin.query.views:_DerivedContent": dict(_TRIPLE_INDEX, window_content=ours("query.content:WindowContent")),
    "rsp_plugin.query.views:MaterializedView": dict(
        _as_rdf=maybe(ours("query.views:_RuleNumbers")), content=ours("query.views:_DerivedContent"),
        inconsistencies=LIST,
        materializer=ours("reasoning.materializer:Materializer", "reasoning.shapes:ShapeMaterializer"), now=maybe(int),
        tick=INT, window=ours("query.windows:TimeWindow")),
    "rsp_plugin.query.views:_RuleNumbers": dict(
        terms=DICTIONARY, materializer=ours("reasoning.materializer:Materializer"), held=DICT),
    "rsp_plugin.query.views:RulesView": dict(
        _elements=INT, content=ours("query.content:UnionContent"), derived=ours("query.content:TripleIndex"),
        engine=ours("lars.engine:IncrementalEngine", "asp.engine:AnswerStreamEngine"), now=maybe(int),
        program=ours("lars.program:Program"), tick=INT, triple=INT, window=ours("query.windows:TimeWindow")),
    # columnar (batch) windows and evaluation ----------------------------------------------------------------
    "rsp_plugin.columnar.columns:ColumnTimeWindow": dict(
        _TIME_WINDOW, _chunks=LIST, _fresh=LIST, _hash_index=ANY, _recent_hashes=ANY, _repeats_until=maybe(int), _taken=LIST, _waiting=LIST,
        content=ours("columnar.columns:ColumnContent"), entered=TUPLE, panes=maybe(ours("columnar.columns:PaneLedger"))),
    "rsp_plugin.columnar.columns:ColumnContent": dict(_chunks=LIST, _columns=maybe(tuple),
                                                   _index=maybe(ours("query.content:TripleIndex")), distinct=BOOL,
                                                   high=maybe(int), low=maybe(int),
                                                   panes=maybe(ours("columnar.columns:PaneLedger")), serial=INT),
    "rsp_plugin.columnar.columns:PaneLedger": dict(width=INT, origin=INT, span=INT, versions=DICT, serial=INT,
                                                lowest=maybe(int), _highest=maybe(int), _in_order=BOOL),
    "rsp_plugin.columnar.columns:_Chunk": dict(s=ANY, p=ANY, o=ANY, t=ANY, _hashes=ANY, _terms=ANY, _cut_from=ANY),
    "rsp_plugin.columnar.columns:_Rows": dict(s=ANY, p=ANY, o=ANY, t=ANY),
    "rsp_plugin.columnar.query:ColumnarState": dict(_value_arrays=(None,), aggregates=DICT, expressions=DICT, filters=DICT,
                                                 panes=DICT,
                                                 generation=INT, results=DICT, tables=DICT, terms=DICTIONARY,
                                                 values=DICT),
    "rsp_plugin.columnar.views:BatchMaterializedView": dict(
        content=ours("columnar.columns:ColumnContent"), inconsistencies=LIST,
        materializer=ours("columnar.materialize:BatchMaterializer", "reasoning.shapes:ShapeMaterializer"),
        now=maybe(int), panes=maybe(ours("columnar.columns:PaneLedger")), tick=INT,
        window=ours("columnar.columns:ColumnTimeWindow")),
    "rsp_plugin.columnar.materialize:BatchMaterializer": dict(
        _all_triples=ANY, _false=DICT, _literal_predicates=DICT, _parts=DICT, _seen_literals=SET,
        _started_false=LIST, _triple=INT, arity=DICT, background_size=INT, now=maybe(int), profile=maybe(str),
        program=ours("lars.program:Program"), rounds=INT, tables=DICT, terms=DICTIONARY, window=maybe(int)),
    # reasoning ----------------------------------------------------------------------------------------------
    "rsp_plugin.reasoning.materializer:Materializer": dict(
        _background_triple=INT, _before_start=maybe(dict), _false=DICT, _given_before_start=maybe(list),
        _literal_predicates=DICT, _seen_terms=SET, _triple=INT, _window_triple=INT, background_size=INT,
        engine=ours("lars.engine:IncrementalEngine"), profile=maybe(str), program=ours("lars.program:Program"),
        terms=DICTIONARY, window=maybe(int)),
    "rsp_plugin.reasoning.materializer:_FalseHead": dict(patterns=TUPLE, rule=STR),
    "rsp_plugin.reasoning.shapes:ShapeMaterializer": dict(
        ahead=LIST, given=LIST, now=maybe(int), panes=LIST, profile=STR, started=BOOL, terms=DICTIONARY, track=BOOL,
        window=maybe(int)),
    # LARS programs and their engine -------------------------------------------------------------------------
    "rsp_plugin.lars.program:Origin": CUSTOM,
    "rsp_plugin.lars.program:Rule": CUSTOM,
    "rsp_plugin.lars.program:Program": dict(filename=STR, hidden=SET, prefixes=DICT, rules=LIST, strata=LIST,
                                            stratified=BOOL, terms=DICTIONARY, tick_ms=maybe(int)),
    "rsp_plugin.lars.program:Window": dict(kind=STR, size=INT),
    "rsp_plugin.lars.metric:PastWindow": dict(low=INT, high=maybe(int), left=maybe(tuple)),
    "rsp_plugin.lars.engine:IncrementalEngine": dict(
        _arities=DICT, _at_relations=LIST, _background=LIST, _box_views=LIST, _count_log=maybe(deque),
        _count_views=LIST, _stored=LIST, _t0=INT, _time_views=LIST, max_derivations=INT, now=maybe(int),
        output=ours("lars.output:Output"), program=ours("lars.program:Program"),
        provenance=maybe(ours("lars.provenance:Provenance")), pruning=maybe(ours("lars.pruning:Pruning")),
        relations=DICT, semi_naive=BOOL, start=maybe(int), strata=LIST, terms=DICTIONARY, views=DICT),
    "rsp_plugin.lars.engine:_Stratum": dict(plans=LIST, views=LIST),
    "rsp_plugin.lars.plan:RulePlan": dict(rule=ours("lars.program:Rule"), disabled_until=INT, trigger_until=INT),
    "rsp_plugin.lars.pruning:Pruning": dict(plans=LIST, threshold=INT, sleepers=LIST, cascaded=LIST),
    "rsp_plugin.lars.output:Output": dict(_stopping=DICT, until=DICT),
    "rsp_plugin.lars.facts:Relation": dict(
        _ending=DICT, _keyed=LIST, _unfiltered=LIST, buffer=DEQUE, dormant=BOOL, history=INT, keeps_ongoing=BOOL,
        keeps_runs=BOOL, ongoing=DICT, pending=maybe(list), predicate=INT, readers=LIST, runs=DICT, views=LIST,
        watched=BOOL),
    "rsp_plugin.lars.views:PlainView": _VIEW,
    "rsp_plugin.lars.views:DiamondView": dict(_VIEW, beyond=DICT, capped=BOOL),
    "rsp_plugin.lars.views:BoxView": dict(_VIEW, scheduled=DICT),
    "rsp_plugin.lars.views:AtView": dict(_VIEW, terms=DICTIONARY),
    "rsp_plugin.lars.views:CountView": dict(_VIEW, arity=INT, modality=STR, predicate=INT, terms=DICTIONARY),
    "rsp_plugin.lars.metric:PastDiamondView": _SCHEDULED,
    "rsp_plugin.lars.metric:PastBoxView": _SCHEDULED,
    "rsp_plugin.lars.metric:SinceView": dict(_SCHEDULED, _forgetting=DICT, left_port=ours("lars.metric:_SinceLeft"),
                                             left_relation=ours("lars.facts:Relation"), projection=TUPLE, users=DICT),
    "rsp_plugin.lars.metric:_SinceLeft": dict(constant_filter=TUPLE, view=ours("lars.metric:SinceView")),
    # `reason`'s replays (a Spark driver-side run's state: rsp_plugin.spark.reason) -----------------------------
    "rsp_plugin.columnar.reason:Replay": dict(
        program=ours("lars.program:Program"), terms=DICTIONARY, forgetting=maybe(ours("core.terms:Forgetting")),
        engine=ours("lars.engine:IncrementalEngine"), counted=BOOL, hidden=SET,
        snapshot=ours("columnar.reason:SnapshotLines"), filename=STR, first=maybe(int), last=maybe(int),
        changes=BOOL, gate=ours("core.admission:Gate"), current=maybe(int), waiting=maybe(dict, list), cut=BOOL),
    "rsp_plugin.columnar.reason:SnapshotLines": dict(shown=DICT, chunks=LIST, lasts=LIST, pieces=LIST, special=SET,
                                                     size=INT),
    "rsp_plugin.mtl.run:MetricReplay": dict(
        program=ours("lars.program:Program"), terms=DICTIONARY, engine=ours("lars.engine:IncrementalEngine"),
        heads=SET, head_triples=SET, triple=INT, arities=DICT, filename=STR, timeline=ours("mtl.data:FactTimeline"),
        changes=BOOL, derived=SET, before=SET, shown=DICT),
    "rsp_plugin.mtl.data:FactTimeline": dict(first=maybe(int), last=maybe(int), filename=STR,
                                             gate=ours("core.admission:Gate"), current=maybe(int), active=LIST,
                                             end=maybe(int), cut=BOOL),
    "rsp_plugin.mtl.data:TimedFact": dict(first=INT, last=INT, fact=TUPLE, line=INT, terms=maybe(ours("core.terms:Dictionary"))),
    # answer streams -----------------------------------------------------------------------------------------
    "rsp_plugin.asp.engine:AnswerStreamEngine": dict(
        chosen=LIST, grounder=ours("asp.ground:Grounder"), history=ours("asp.ground:History"), models=maybe(str, list),
        now=maybe(int), program=ours("lars.program:Program"), terms=DICTIONARY, timeout=maybe(float, int)),
    "rsp_plugin.asp.ground:Grounder": dict(derived=SET, max_derivations=INT, program=ours("lars.program:Program"),
                                           terms=DICTIONARY),
    "rsp_plugin.asp.ground:History": dict(log=maybe(deque), now=maybe(int), points=DICT, reach=INT, start=maybe(int),
                                          t0=maybe(int)),
    # explanations -------------------------------------------------------------------------------------------
    "rsp_plugin.lars.provenance:Provenance": dict(
        _batch_time=maybe(int), _counted=INT, _index=maybe(dict), _source_order=DEQUE, background=DICT, batch=INT,
        bodies=LIST, count_reach=INT, data=DICT, data_reach=INT, ending=DICT,
        engine=ours("lars.engine:IncrementalEngine"), forever=LIST, keep=INT, keeps_data=BOOL, need=DICT,
        numbers=ours("core.terms:_Numbers"), sources=DICT),
    "rsp_plugin.query.explain:ElementSources": dict(_order=DICT, _since_pruned=INT, streams=DICT),
    # Spark ----------------------------------------------------------------------------------------------------
    "rsp_plugin.spark.driver:DriverState": dict(
        collector=ours("spark.driver:_Collector"), dead_position=SINK_POSITION, engine=ours("runtime.engine:RSPEngine"),
        errors_seen=INT, finished=BOOL, last_batch=INT, pending=DICT, rejected_seen=INT, results=INT, rows=INT,
        set_aside=INT, sink_position=SINK_POSITION, streams=LIST),
    "rsp_plugin.spark.driver:_Collector": dict(results=LIST),
    "rsp_plugin.spark.reason:ReasonState": dict(
        replay=ours("columnar.reason:Replay", "mtl.run:MetricReplay"), fingerprint=STR, last_batch=INT, set_aside=INT,
        out_position=SINK_POSITION, finished=BOOL),
    "rsp_plugin.spark.partitioned:_KeyCollector": dict(results=LIST),
    "rsp_plugin.spark.partitioned:KeyedState": dict(
        results=INT, set_aside=INT, finished=BOOL, last_batch=INT, sink_position=SINK_POSITION,
        dead_position=SINK_POSITION),
    "rsp_plugin.spark.distributed.driver:DistributedState": dict(
        fingerprint=STR, admission=ours("spark.distributed.admission:Admission"), stored=LIST, reported=maybe(int),
        last_batch=INT, previous=maybe(list), previous_boolean=BOOL, rows=INT, set_aside=INT, results=INT,
        finished=BOOL, sink_position=SINK_POSITION, dead_position=SINK_POSITION, sliced=BOOL, carry=maybe(str)),
    "rsp_plugin.spark.distributed.admission:Admission": dict(
        lanes=LIST, gate=ours("core.admission:Gate"), lane_last=LIST, lane_taken=LIST, first_seen=maybe(int),
        done=maybe(int), pushed=DICT, last_of_stream=DICT, cut=maybe(int)),
    "rsp_plugin.spark.distributed.store:StoredBatch": dict(batch=(int, str), low=INT, high=INT, rows=INT, present=LIST,
                                                           shapes=maybe(list)),
}
