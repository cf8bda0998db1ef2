"""PARTITION BY: one engine per key, its state in Spark's state store, evaluated on the executors.

    PARTITION BY ?sensor                 (a line of the query, or `key="sensor"`)
    REGISTER RSTREAM <http://ex/q/hot> AS
    SELECT ?sensor ?v FROM STREAM <http://ex/s> [RANGE 10s STEP 1s]
    WHERE { ?sensor ex:temperature ?v . ?sensor ex:in ex:hall }

When every triple pattern of a query mentions the key variable, with a
constant predicate, the key in the same place (subject or object) wherever the
predicate is used, and the key is projected (and grouped on, if the query
aggregates), then each answer row joins triples of one key only. Then the
stream can be split by key (each triple routed by its predicate to its subject
or object), and a key's triples evaluated by an engine of its own: the answer
at tau is the union over keys of their answers. Spark keeps each key's engine
in its state store (`applyInPandasWithState`) as plain, versioned data
(`rsp_plugin.runtime.state`, never a pickle: the state store holds no code),
authenticated with the checkpoint's key (`--checkpoint-key FILE`, else
`<checkpoint>/rsp-plugin.key`, made at the first run; a replay without a
checkpoint, a random key of its own) that travels to the executors with the
function Spark calls per key; on a restart every key's state is checked on the
executors before the stream starts, and one that does not authenticate stops the
run with one line naming it. Spark runs them
on the executors, and calls a key's engine when its data arrive or when the
event-time watermark passes the key's next report (a timeout), as the
driver-side engine would report it. A replay ends with each key's last
windows (read back from the state store).

ENTAILMENT with a background ontology (--background, FROM graphs) is split by
key when the locality analysis of the profile's rules against the TBox
(`rsp_plugin.spark.locality`) shows every entailment a pattern can read keeps
the key where its premise had it; it also routes the predicates whose
entailments the query reads (a triple of `ex:observedBy`, with a domain, gives
its subject a type: routed by subject). Each key's engine materializes its
own triples with the background. Schema triples arriving on the stream are set
aside (the ontology is the background's), with that reason.

A query that is not key-local is refused, with the reason: another shape of
pattern, a global aggregate, ORDER BY / LIMIT (which cut across keys), count
windows (which count across keys), an entailment that joins keys or that the
background alone makes readable, RULES that do not keep to one key (see
`_rules_key_local`).

Output: one line per key and report, `{"t": ..., "key": "<sensor1>", "bindings": [...]}`,
`"triples"` for CONSTRUCT (each key's part of the graph: their union is the
one engine's), `"boolean": true` for ASK (the keys whose window holds a match;
the one engine's answer is true when some key's is). A key with nothing to
report at tau (no rows, no triples, false) writes no line.
"""

from __future__ import annotations

import json
import re
import time
from dataclasses import dataclass
from pathlib import Path

from ..core import limits
from ..core.errors import QuerySyntaxError
from ..core.iris import file_iri

OUTPUT = "key STRING, t BIGINT, kind STRING, payload STRING"
STATE = "engine BINARY"
_PARTITION_LINE = re.compile(r"^[ \t]*PARTITION[ \t]+BY[ \t]+\?(\w+)[ \t]*$", re.M | re.I)
_ALLOWED = {"SelectQuery", "ConstructQuery", "AskQuery", "Project", "Filter", "BGP", "Join", "Extend", "AggregateJoin", "Group", "Distinct",
            "ToMultiSet", "Graph"}


class NotKeyLocal(QuerySyntaxError):
    """A query that PARTITION BY cannot split by key: said with the reason."""


@dataclass(frozen=True)
class KeyPlan:
    """How to route a triple to its key: by predicate, the subject ("s") or the object ("o")."""

    key: str
    positions: dict[str, str]
    text: str
    streams: tuple[str, ...]
    form: str = "SELECT"
    #: under ENTAILMENT: the background's N-Triples lines (every key's engine reads them) and the
    #: locality analysis (`rsp_plugin.spark.locality.Locality`: what is schema, set aside on the stream)
    background: tuple[str, ...] = ()
    locality: object = None
    #: FROM graphs under ENTAILMENT (their triples are in `background`; the keys' engines read no file)
    graphs: tuple[str, ...] = ()


def split_partition_clause(text: str) -> tuple[str, str | None]:
    """The query text without its `PARTITION BY ?k` line (blanked, so places stay), and k.

    >>> split_partition_clause("PARTITION BY ?sensor\\nSELECT ...")
    ('\\nSELECT ...', 'sensor')
    """
    found = _PARTITION_LINE.search(text)
    if found is None:
        return text, None
    return text[:found.start()] + text[found.end():], found.group(1)


def key_plan(text: str, key: str | None = None, filename: str = "<query>", background=None,
             program: str | None = None) -> KeyPlan:
    """Check that a query is key-local for `key` (or its PARTITION BY line); raise NotKeyLocal if not.

    `background`: under ENTAILMENT, the background's N-Triples lines (`engine_background`); the locality
    analysis of the rules against it decides whether the materialization stays within a key. `program`:
    the RULES program's text as the engine read it (None: read from its file)."""
    from rdflib import URIRef, Variable

    from ..query.model import CountWindow, RangeWindow
    from ..query.syntax import parse_query

    body, written = split_partition_clause(text)
    key = key or written
    if key is None:
        raise NotKeyLocal("partitioned mode needs a key: a line PARTITION BY ?var, or key=...", filename, 1, 1)
    key = key.lstrip("?")
    base = file_iri(Path(filename).resolve().parent) + "/" if not filename.startswith("<") else None
    query = parse_query(body, filename, base=base)

    def refuse(reason: str):
        raise NotKeyLocal(f"PARTITION BY ?{key}: the query is not key-local: {reason}", filename, 1, 1)

    if query.form not in ("SELECT", "CONSTRUCT", "ASK"):
        refuse(f"{query.form} queries are not split by key")
    if query.named_graphs or (query.graphs and query.entailment is None):
        refuse("static graphs (FROM without ENTAILMENT, FROM NAMED) are not split by key")
    for clause in query.windows:
        if isinstance(clause.window, CountWindow):
            refuse("a count window counts the triples of all keys")
        if not isinstance(clause.window, RangeWindow):
            refuse("only time windows ([RANGE r STEP s]) are split by key")
    variable = Variable(key)
    positions: dict[str, str] = {}
    nodes = list(pattern_nodes(query.algebra.algebra))
    for node in nodes:
        name = node.name
        if name not in _ALLOWED:
            readable = {"OrderBy": "ORDER BY", "Slice": "LIMIT / OFFSET", "LeftJoin": "OPTIONAL", "Minus": "MINUS",
                        "Union": "UNION", "Values": "VALUES", "ToMultiSet": "a subquery"}.get(name, name)
            refuse(f"{readable} works across keys")
        if name == "BGP":
            for s, p, o in node["triples"]:
                if not isinstance(p, URIRef):
                    refuse(f"the pattern {_show(s)} {_show(p)} {_show(o)} has no constant predicate")
                if s == variable:
                    place = "s"
                elif o == variable:
                    place = "o"
                else:
                    refuse(f"the pattern {_show(s)} {_show(p)} {_show(o)} does not mention ?{key}")
                before = positions.setdefault(f"<{p}>", place)
                if before != place:
                    refuse(f"?{key} is the subject of one <{p}> pattern and the object of another")
        if name == "Group":
            groups = node.get("expr") or []
            if variable not in groups:
                refuse(f"the aggregates are not grouped by ?{key}")
    projected = query.algebra.algebra.get("PV") or []
    if query.form == "SELECT" and variable not in projected:
        refuse(f"?{key} is not selected (rows of different keys would not be told apart)")
    if not positions:
        refuse("no triple pattern")
    if query.rules is not None:
        if query.entailment is not None:
            refuse("RULES and ENTAILMENT together")
        body = _rules_key_local(query, body, positions, refuse, program)
    locality, lines = None, ()
    if query.entailment is not None:
        locality, lines = _entailment_key_local(query, nodes, key, positions, background, refuse)
        positions = locality.positions
    streams = tuple(dict.fromkeys(clause.stream for clause in query.windows))
    return KeyPlan(key, positions, body, streams, query.form, tuple(lines), locality, tuple(query.graphs))


def _entailment_key_local(query, nodes, key: str, positions: dict[str, str], background, refuse):
    """ENTAILMENT within a key: the locality analysis of the profile's rules against the TBox
    (`rsp_plugin.spark.locality`), and no background fact a pattern can read (a key's answer would then
    come from the background alone, which no key's triples bring)."""
    from rdflib import Variable

    from ..core.rdfterms import term_key
    from ..reasoning.templates import SeedReasoner
    from .locality import NotLocal, analyse

    lines = list(background or ())
    patterns = []
    for node in nodes:
        if node.name == "BGP":
            for triple in node["triples"]:
                patterns.append(tuple(("v", str(t)) if isinstance(t, Variable) else ("c", term_key(t))
                                      for t in triple))
    try:
        locality = analyse(query.entailment, lines, patterns, key, positions)
    except NotLocal as why:
        refuse(str(why))
    reasoner = SeedReasoner(query.entailment, lines)
    for relation, args in reasoner.background_closure():
        if relation != "triple":
            continue
        for pattern in patterns:
            if all(want[0] == "v" or want[1] == have for want, have in zip(pattern, args)):
                shown = " ".join(args)
                refuse(f"the background's closure holds {shown}, which the pattern "
                       f"{' '.join('?' + v if k == 'v' else v for k, v in pattern)} reads: a key's answer "
                       "could come from the background alone")
    return locality, lines


def engine_background(engine, text: str, filename: str) -> list[str]:
    """The background a query's materialization reads (--background files, FROM graphs) as the engine read
    them, as N-Triples lines (none without ENTAILMENT)."""
    from ..query.syntax import parse_query

    body, _ = split_partition_clause(text)
    base = file_iri(Path(filename).resolve().parent) + "/" if not filename.startswith("<") else None
    query = parse_query(body, filename, base=base)
    if query.entailment is None:
        return []
    keys = engine.terms.keys
    return [f"{keys[s]} {keys[p]} {keys[o]} ." for s, p, o in engine.datasets.background_triples(query)]


def _rules_key_local(query, body: str, positions: dict[str, str], refuse, text: str | None = None) -> str:
    """RULES keep to one key when every rule has a variable K that every atom of the rule
    holds at its predicate's key place: for a triple, the subject or object where the
    query routes that predicate (triples only the rules read are routed there too);
    for an atom of the program, one argument position, the same in every rule. Then
    a key's engine derives exactly what the one engine derives from that key's
    triples. Returns the query text with the program's path made absolute (the
    executors' engines read it)."""
    from urllib.parse import unquote, urlparse

    from ..core.terms import TRIPLE
    from ..lars.program import COUNT, ExtendedAtom, Var
    from ..mtl.programs import parse_program, parse_program_file

    path = Path(unquote(urlparse(query.rules).path)) if query.rules.startswith("file://") else Path(query.rules)
    # (a mistake in it is its own located error)
    program = parse_program_file(path) if text is None else parse_program(text, str(path))
    terms = program.terms
    triple = terms.find(TRIPLE)
    places: dict[tuple, int] = {}  # atom kind -> the argument position that holds the key

    def fixed_place(atom) -> tuple[tuple, int | None]:
        if atom.predicate == triple:
            predicate = atom.args[1]
            if isinstance(predicate, Var):
                return ("triple", None), -1
            name = terms.key(predicate)
            routed = positions.get(name)
            kind = ("triple", name)
            return kind, {"s": 0, "o": 2}[routed] if routed else places.get(kind)
        kind = ("atom", atom.predicate, len(atom.args))
        return kind, places.get(kind)

    for rule in program.rules:
        atoms = [rule.head]
        for literal in rule.body:
            if isinstance(literal, ExtendedAtom):
                if literal.window is not None and literal.window.kind == COUNT:
                    refuse(f"the rule '{rule.text}' has a tuple window, which counts the atoms of all keys")
                atoms.append(literal.atom)
        candidates: set | None = None
        for atom in atoms:
            kind, place = fixed_place(atom)
            if place == -1:
                refuse(f"the rule '{rule.text}' has a triple pattern without a constant predicate")
            if place is None:
                found = {a for i, a in enumerate(atom.args) if isinstance(a, Var) and (kind[0] != "triple" or i != 1)}
            else:
                found = {atom.args[place]} if isinstance(atom.args[place], Var) else set()
            candidates = found if candidates is None else candidates & found
        if not candidates:
            refuse(f"the rule '{rule.text}' does not keep to one key (no variable every atom holds at its key place)")
        key_variable = min(candidates, key=lambda v: v.name)
        for atom in atoms:
            kind, place = fixed_place(atom)
            if place is None:
                place = atom.args.index(key_variable)
                if kind[0] == "triple" and place not in (0, 2):
                    refuse(f"the rule '{rule.text}' keys a triple by its predicate")
                places[kind] = place
                if kind[0] == "triple":
                    positions[kind[1]] = "s" if place == 0 else "o"
    return re.sub(r"(?i)(RULES\s*)<[^>]*>", lambda m: f"{m.group(1)}<{file_iri(path.resolve())}>", body, count=1)


def pattern_nodes(value):
    """The graph-pattern operators of rdflib's algebra, top down (expressions are not walked into)."""
    from rdflib.plugins.sparql.parserutils import CompValue

    if isinstance(value, CompValue):
        yield value
        for name in ("p", "p1", "p2"):
            child = dict.get(value, name)
            if child is not None:
                yield from pattern_nodes(child)


def _show(term) -> str:
    from rdflib import URIRef, Variable

    if isinstance(term, Variable):
        return f"?{term}"
    if isinstance(term, URIRef):
        return f"<{term}>"
    return str(term)


# Running -----------------------------------------------------------------------------------------

_ANY_PREDICATE = "<urn:x-rsp-plugin:any-predicate>"


class KeyedResult:
    """One key's report at t: the sinks' view of a partitioned result."""

    def __init__(self, query: str, key: str, t: int, payload: dict):
        self.query, self.key, self.t, self.payload = query, key, t, payload
        self.form = "ASK" if "boolean" in payload else "CONSTRUCT" if "triples" in payload else "SELECT"

    def __repr__(self) -> str:
        return f"<KeyedResult {self.key} t={self.t}>"

    def to_json(self) -> dict:
        return {"t": self.t, "key": self.key, **{k: v for k, v in self.payload.items() if k != "t"}}

    def to_sparql_json(self) -> dict:
        return self.to_json()


class KeyedDriver:
    """`foreachBatch` of the keys' reports: each batch's keyed results to the sink, its lines set aside to the
    dead letters, counted (`state`); a replay's `finish()` reads every key's engine back from the state store
    and reports its last windows (on the executors).

    With a checkpoint, `store` (a `StateStore`, `<checkpoint>/rsp-partitioned/`) keeps `state` as the other
    modes keep theirs: saved before the first batch and after every batch's reports are written, with where
    the sink and the dead letters ended; a new driver on the same checkpoint cuts them back to there. Spark
    runs again the batch it had not committed (the keys' engines from the state store's version before it):
    written and not saved, it was cut back and is written again; saved (the run killed before Spark wrote
    its commit), it is `last_batch` and not written again."""

    def __init__(self, spark, sink, dead_letters, progress, *, state_location: str, query_name: str,
                 state_key: bytes, store=None):
        self.spark = spark
        self.sink = sink
        self.dead_letters = dead_letters
        self.progress = progress
        self.state_location = state_location
        self.query_name = query_name
        self.state_key = state_key
        self.store = store
        saved = store.load() if store is not None else None
        if saved is not None:
            self.state: KeyedState = saved
            sink.rewind(saved.sink_position)
            dead_letters.rewind(saved.dead_position)
        else:
            self.state = KeyedState()
            if store is not None:  # where the outputs begin: a run killed inside its first batch is cut back here
                self.state.sink_position = sink.position()
                self.state.dead_position = dead_letters.position()
                store.save_start(self.state)
        self.resumed = saved is not None
        #: each micro-batch's latency (s): from the end of the one before (or the start) to its delivery
        self.batch_seconds: list[float] = []
        self._last = time.perf_counter()

    def __repr__(self) -> str:
        return (f"<KeyedDriver last_batch={self.state.last_batch} results={self.state.results} "
                f"set_aside={self.state.set_aside}>")

    def __call__(self, batch, batch_id: int) -> None:
        # (collected even when seen before: Spark's state store keeps the keys' engines as the batch makes them)
        rows = [row.asDict() for row in batch.collect()]
        if batch_id <= self.state.last_batch:
            if self.progress is not None:
                self.progress.note(f"batch {batch_id}: seen before (a restart re-runs it); nothing to do")
            return
        if self.state.finished:
            raise RuntimeError("the replay has finished; new data needs a new checkpoint location")
        self.deliver(batch_id, rows)

    def deliver(self, batch_id: int, rows: list[dict]) -> None:
        """A batch's rows out (`batch_id` -1: the replay's end), then the state saved with the outputs' ends."""
        rows = sorted(rows, key=lambda row: (row["t"] if row["t"] is not None else -1, row["key"] or ""))
        refused = [row["payload"] for row in rows if row["kind"] == "rejected"]
        self.dead_letters.write(batch_id, refused)
        out = [KeyedResult(self.query_name, row["key"], row["t"], json.loads(row["payload"]))
               for row in rows if row["kind"] == "result"]
        self.sink.write(batch_id, out)
        state = self.state
        state.results += len(out)
        state.set_aside += len(refused)
        state.last_batch = max(state.last_batch, batch_id)
        state.sink_position = self.sink.position()
        state.dead_position = self.dead_letters.position()
        if self.store is not None:
            self.store.save(state.last_batch, state)
        now = time.perf_counter()
        if batch_id >= 0:
            self.batch_seconds.append(now - self._last)
        self._last = now
        if self.progress is not None:
            self.progress.note(f"batch {batch_id}: {len(out)} keyed results, {len(refused)} set aside")

    def finish(self) -> None:
        """The end of a replay: each key's last windows (once: saved as finished)."""
        if self.state.finished:
            return
        rows = _finish_keys(self.spark, self.state_location, self.query_name, self.state_key)
        self.state.finished = True
        self.deliver(-1, rows)


@dataclass
class KeyedState:
    """What a partitioned run wrote so far: its results, the stream lines set aside, the last batch written and
    where the sink and the dead letters ended then (saved with a checkpoint: `KeyedDriver`)."""

    results: int = 0
    set_aside: int = 0
    finished: bool = False
    last_batch: int = -1
    sink_position: object = None
    dead_position: object = None


def engine_key_plan(engine, key: str | None) -> KeyPlan:
    """The `KeyPlan` of the one query registered on `engine` (its background and FROM graphs as the engine read
    them) for ?`key`, or `NotKeyLocal` saying why it cannot be split (no Spark needed)."""
    queries = list(engine.queries.values())
    if len(queries) != 1:
        raise NotKeyLocal(f"partitioned mode runs one query ({len(queries)} registered)", "<query>", 1, 1)
    query = queries[0].query
    return key_plan(query.text, key, query.filename, background=engine_background(engine, query.text, query.filename))


def start_partitioned(spark, plan: KeyPlan, engine, frame, lanes: list[str], sink, *, checkpoint=None,
                      checkpoint_key=None, dead_letters=None, progress=None, trigger: str | dict = "availableNow"):
    """Start the query registered on `engine`, split as `plan` says, with one engine per key on the executors; a
    `rsp_plugin.spark.SparkRun` (`rsp_plugin.spark.run(..., mode="partitioned")` is the way in). A replay
    (the default trigger) reads everything there is, then `wait()` reports each key's last windows.
    Without a checkpoint the state store is a scratch directory with a random key, removed at the end."""
    import secrets
    import tempfile

    from pyspark.sql import functions as F
    from pyspark.sql.streaming.state import GroupStateTimeout

    from . import SparkRun, _start
    from .checkpoint import StateStore
    from .sinks import DeadLetters

    (registered,) = engine.queries.values()
    filename = registered.query.filename
    for iri in lanes:
        if iri not in plan.streams:
            raise NotKeyLocal(f"stream <{iri}> is not read by the query", filename, 1, 1)
    route = route_column(plan.positions)
    rejected = F.col("rejected")
    locality = plan.locality
    if locality is not None and (locality.schema_predicates or locality.schema_classes):
        schema = schema_column(locality.schema_predicates, locality.schema_classes)
        why = locality.set_aside(next(iter(locality.schema_predicates), ""), "")
        rejected = F.when(rejected.isNull() & schema,
                          F.concat(F.col("stream"), F.lit(": "), F.col("s"), F.lit(" "), F.col("p"), F.lit(" "),
                                   F.col("o"), F.lit(f": {why}"))).otherwise(rejected)
    keyed = (frame.withColumn("rejected", rejected)
             .withColumn("key", F.when(F.col("rejected").isNull(), route))
             .where(F.col("key").isNotNull() | F.col("rejected").isNotNull())
             # the watermark: the latest event time seen (shifted by 1 ms and watermarked 1 ms late, a row
             # at the latest time is not behind it); a row set aside has none (it moves no watermark)
             .withColumn("event_time", F.when(F.col("rejected").isNull(),
                                              F.timestamp_millis(F.coalesce("ts", F.lit(0)) + 1)))
             .withWatermark("event_time", "1 millisecond")
             # past the watermark's node, no row has an event time: Spark would drop a late row silently
             # before the keys' function; that function judges it by Spark's own rule (`_late_floor`) and
             # sets it aside with its reason (the column keeps the watermark's mark: timeouts need it)
             .withColumn("event_time", F.lit(None).cast("timestamp").alias(
                 "event_time", metadata={"spark.watermarkDelayMs": 1})))
    location = Path(checkpoint) if checkpoint is not None else Path(tempfile.mkdtemp(prefix="rsp-partitioned-"))
    state_location = str(location / "spark")
    try:
        state_key = _state_key(location, checkpoint_key) if checkpoint is not None else secrets.token_hex(32).encode()
        if checkpoint is not None and (location / "spark").exists():
            _check_stored_engines(spark, state_location, state_key)
        evaluate = _key_function(plan.text, plan.streams, registered.name, "\n".join(plan.background), plan.graphs,
                                 filename, state_key, state_location, (engine.max_eval_ms, engine.max_solutions))
        results = keyed.groupBy("key").applyInPandasWithState(evaluate, OUTPUT, STATE, "append",
                                                              GroupStateTimeout.EventTimeTimeout)
        store = StateStore(location, checkpoint_key, "rsp-partitioned") if checkpoint is not None else None
        driver = KeyedDriver(spark, sink, dead_letters if dead_letters is not None else DeadLetters(), progress,
                             state_location=state_location, query_name=registered.name, state_key=state_key,
                             store=store)
        started, replay = _start(results.writeStream.outputMode("append").foreachBatch(driver), state_location,
                                 trigger)
    except BaseException:
        if checkpoint is None:
            import shutil

            shutil.rmtree(location, ignore_errors=True)
        raise
    return SparkRun("partitioned", started, driver, replay, scratch=None if checkpoint is not None else location)


def route_column(positions: dict[str, str]):
    """A row's key, as a Spark column: its subject or object as its predicate is routed (`KeyPlan.positions`),
    null for a predicate no pattern reads."""
    from pyspark.sql import functions as F

    route = None
    for predicate, place in positions.items():
        if predicate == _ANY_PREDICATE:
            continue
        route = (F.when(F.col("p") == predicate, F.col(place)) if route is None
                 else route.when(F.col("p") == predicate, F.col(place)))
    anywhere = positions.get(_ANY_PREDICATE)
    if anywhere is not None:
        route = F.col(anywhere) if route is None else route.otherwise(F.col(anywhere))
    return route


def schema_column(predicates, classes):
    """Is a row a schema triple (a predicate of `predicates`, or a type of one of `classes`)? A Spark column."""
    from pyspark.sql import functions as F

    from .locality import RDF_TYPE

    schema = F.col("p").isin(sorted(predicates)) if predicates else F.lit(False)
    if classes:
        schema = schema | ((F.col("p") == RDF_TYPE) & F.col("o").isin(sorted(classes)))
    return schema


def _state_key(location: Path, given) -> bytes:
    """The checkpoint's key, made at the first run; refused when a state store is there without it."""
    from ..runtime.state import KEY_FILE, StateError, checkpoint_key

    found = checkpoint_key(location, given, create=not (location / "spark").exists())
    if found is None:
        raise StateError(f"{location}: its state store is authenticated with a key, and {location / KEY_FILE} is "
                         "missing: give the key with --checkpoint-key FILE, or start from a new checkpoint directory")
    return found


def _key_function(text: str, streams: tuple[str, ...], query_name: str, background: str = "", graphs=(),
                  filename: str = "<query>", state_key: bytes = b"", state_location: str = "the state store",
                  bounds: tuple = (limits.MAX_EVAL_MS, limits.MAX_SOLUTIONS)):
    """The function Spark calls per key: feed the key's engine, report, keep the engine in the state."""

    def evaluate(key, frames, state):
        import pandas as pd
        from pyspark.sql.streaming.state import GroupState  # noqa: F401 - the state's type

        from ..core.admission import late as late_message

        (value,) = key
        if state.hasTimedOut:
            engine, collector = _load_key(state.get[0], state_key, state_location, value)
            if engine.gap_problem(state.getCurrentWatermarkMs()) is None:
                engine.advance_to(state.getCurrentWatermarkMs(), collect=False)
            rows = _rows(value, collector.take())
            _keep(engine, collector, state, state_key)
            yield pd.DataFrame(rows, columns=["key", "t", "kind", "payload"])
            return
        data = pd.concat(list(frames), ignore_index=True)
        if value is None:  # dead letters (no key): passed on
            yield pd.DataFrame({"key": None, "t": None, "kind": "rejected",
                                "payload": data["rejected"].astype(str)})
            return
        watermark = state.getCurrentWatermarkMs()
        if (data["ts"] < watermark).any():  # (older than the watermark: maybe late, by Spark's rule)
            floor = _late_floor(state_location, watermark)
            late = data["ts"] < floor
            if late.any():
                yield pd.DataFrame({"key": None, "t": None, "kind": "rejected", "payload": [
                    f"{stream}: {s} {p} {o}: {late_message(int(stamp), floor)}" for stream, s, p, o, stamp in
                    zip(*(data.loc[late, name] for name in ("stream", "s", "p", "o", "ts")))]})
                data = data[~late]
                if data.empty:  # as if Spark had dropped them: the state untouched (a timeout due still
                    return      # wakes the key in this batch: Spark looks for timeouts after the data)
        engine, collector = (_load_key(state.get[0], state_key, state_location, value) if state.exists
                             else _new_engine(text, streams, query_name, background, graphs, filename, bounds))
        data = data.sort_values(["ts", "lane"], kind="stable")
        intern = engine.terms.intern
        refused = []  # (what the key's engine sets aside, too far ahead: to the dead letters, not lost)
        engine.rejected.clear()
        for (stamp, lane), group in data.groupby(["ts", "lane"], sort=False):
            stamp = int(stamp)
            if (engine.watermark is None or stamp > engine.watermark) and engine.gap_problem(stamp) is None:
                engine.advance_to(stamp, collect=False)
            stream = group["stream"].iloc[0]
            for s, p, o in zip(group["s"], group["p"], group["o"]):
                engine.push_ids(stream, [(stamp, (intern(s), intern(p), intern(o)))])
                if engine.rejected:
                    refused.append(f"{stream}: {s} {p} {o}: {engine.rejected[-1].reason}")
                    engine.rejected.clear()  # (kept in no key's state: said once, here)
        if refused:
            yield pd.DataFrame({"key": None, "t": None, "kind": "rejected", "payload": refused})
        rows = _rows(value, collector.take())
        _keep(engine, collector, state, state_key)
        yield pd.DataFrame(rows, columns=["key", "t", "kind", "payload"])

    return evaluate


def _late_floor(checkpoint: str, watermark: int) -> int:
    """The time before which Spark's stateful operator drops a row as late in the running batch: the
    watermark of the batch before (`watermark` is the running batch's), read from Spark's offset log in
    the checkpoint (`offsets/N`: a version line, then the batch's metadata, with `batchWatermarkMs`).
    The running batch's own watermark when there is no batch before or the log cannot be read (then a
    row Spark would have taken is set aside: said, never lost)."""
    import os

    def batch_watermark(number: int) -> int:
        with open(os.path.join(checkpoint, "offsets", str(number)), encoding="utf-8") as log:
            log.readline()
            return int(json.loads(log.readline())["batchWatermarkMs"])

    try:
        numbers = [int(name) for name in os.listdir(os.path.join(checkpoint, "offsets")) if name.isdigit()]
        running = max(numbers)
        if running == 0 or batch_watermark(running) != watermark:
            return watermark
        return min(batch_watermark(running - 1), watermark)
    except (OSError, ValueError, KeyError, TypeError):
        return watermark


class _KeyCollector:
    def __init__(self):
        self.results = []

    def __call__(self, result):
        self.results.append(result)

    def take(self):
        taken, self.results = self.results, []
        return taken


def _new_engine(text: str, streams, query_name: str, background: str = "", graphs=(), filename: str = "<query>",
                bounds: tuple = (limits.MAX_EVAL_MS, limits.MAX_SOLUTIONS)):
    """A key's engine; under ENTAILMENT its background is the driver's lines (the FROM graphs' triples are
    among them: the graphs are registered empty, so no executor reads a file)."""
    from ..runtime.engine import RSPEngine

    max_eval_ms, max_solutions = bounds
    engine = RSPEngine(max_eval_ms=max_eval_ms, max_solutions=max_solutions)
    for iri in streams:
        engine.register_stream(iri)
    if background:
        from rdflib import Graph

        engine.add_background(Graph().parse(data=background, format="nt"))
    for iri in graphs:
        engine.add_graph(iri, [])
    base = file_iri(Path(filename).resolve().parent) + "/" if not filename.startswith("<") else None
    engine.register_query(text, name=query_name, filename=filename, base=base)
    collector = _KeyCollector()
    engine.subscribe(collector)
    return engine, collector


def _rows(key: str, results) -> list[tuple]:
    rows = []
    for result in results:
        line = result.to_json()
        if line.get("bindings") or line.get("triples") or line.get("boolean"):
            rows.append((key, result.t, "result", json.dumps(line, ensure_ascii=False)))
    return rows


def _load_key(blob, state_key: bytes, state_location: str, key_value):
    """A key's engine and collector from the state store (plain data), the collector subscribed again."""
    from ..runtime.state import loads

    engine, collector = loads(bytes(blob), key=state_key, source=f"{state_location} (the state of key {key_value})")
    engine.subscribe(collector)
    return engine, collector


def _keep(engine, collector, state, state_key: bytes) -> None:
    """The key's engine and collector back into the state store; wake it at its next report."""
    from ..runtime.state import dumps

    state.update((dumps((engine, collector), key=state_key),))
    upcoming = [q.next_instant() for q in engine.queries.values()]
    upcoming = [tau for tau in upcoming if tau is not None]
    if upcoming:
        state.setTimeoutTimestamp(max(min(upcoming), state.getCurrentWatermarkMs() + 1))


def _stored_engines(spark, state_location: str):
    """The state store's (key, engine) rows, or None when it holds none."""
    states = spark.read.format("statestore").load(state_location)
    if not states.columns:
        return None
    return states.select(states["key"]["key"].alias("key"), states["value"]["groupState"]["engine"].alias("engine"))


def _check_stored_engines(spark, state_location: str, state_key: bytes) -> None:
    """A restart: every key's state in the store authenticates with the checkpoint's key, checked on the
    executors before the stream starts (a state that does not is the first one's one line, raised here,
    not an executor's failure in the middle of a batch, logged with its trace by Spark)."""
    import pandas as pd

    from ..runtime.state import StateError, authenticated

    try:
        flat = _stored_engines(spark, state_location)
    except Exception:  # nothing committed yet that Spark can read: nothing to check
        return
    if flat is None:
        return

    def check(frames):
        for frame in frames:
            problems = []
            for key, blob in zip(frame["key"], frame["engine"]):
                if blob is None:
                    continue
                try:
                    authenticated(bytes(blob), key=state_key, source=f"{state_location} (the state of key {key})")
                except StateError as refused:
                    problems.append(str(refused))
                    break
            yield pd.DataFrame({"problem": problems}, dtype=object)

    refused = flat.mapInPandas(check, "problem STRING").limit(1).collect()
    if refused:
        raise StateError(refused[0]["problem"])


def _finish_keys(spark, state_location: str, query_name: str, state_key: bytes) -> list[dict]:
    """The end of a replay: every key's engine read back from the state store, finished on the executors."""
    import pandas as pd

    flat = _stored_engines(spark, state_location)
    if flat is None:
        return []

    def finish(frames):
        for frame in frames:
            rows = []
            for key, blob in zip(frame["key"], frame["engine"]):
                if blob is None:
                    continue
                engine, collector = _load_key(blob, state_key, state_location, key)
                engine.finish(collect=False)
                rows.extend(_rows(key, collector.take()))
            yield pd.DataFrame(rows, columns=["key", "t", "kind", "payload"])

    return [row.asDict() for row in flat.mapInPandas(finish, OUTPUT).collect()]
