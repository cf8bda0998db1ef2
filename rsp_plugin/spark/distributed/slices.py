"""Time slices: the embedded engine (the compiled plan's columnar backend) on the executors, one slice per task.

A report's answer depends only on the triples of its windows, [tau - R, tau)
for the longest RANGE R, and on the background. So when a micro-batch comes in
time order (a replayed file, a sensor feed), each partition of it is a slice of
time [f, l] (its first and last timestamps), and the instants tau with
f < tau - R and tau <= l are answered by the partition alone: nothing of
another partition can be in their windows. Each task runs the embedded engine
(`RSPEngine`: column windows, panes, the columnar backend of the plan,
`BatchMaterializedView` under ENTAILMENT, the background's closure made once per
Python worker) over its partition's Arrow batches, and sends back:

    answer  the raw answer (before RSTREAM / ISTREAM / DSTREAM) of each instant inside its slice
    edge    its triples within E = R + delay of either end (a sliding window's triple reaches the
            reports of several slices: only those near an edge are sent twice)
    stats   what `admission.Admission` needs (`lane_stats`), and a row per dead letter

one Spark job per micro-batch, Arrow in and out, the answers (few rows) back.
Over files, the rows a task gets are the pieces of files the `rdf` source cut
(`emit` pieces): it parses its piece straight into its engine's ids (the
triples never become Spark rows), and a piece of a `.tnt` file in time order
first reads the lines before it that its first windows reach
(`source.look_back`): it then answers every instant from the last of those on,
and only its tail is an edge. The driver checks the batch is
what it assumed (in time order, nothing set aside by the gap bound or t0), then
answers every other instant by one more engine, its own, over the edges and the
carry (the triples a later report reaches, kept from batch to batch as a Parquet
file under the checkpoint): a window that is inside no partition holds only
triples within E of a partition's edge (`edge_mask`). What goes through it is
the local engine's own code: its answers are `--engine local`'s.

When the check fails (time out of order, the gap bound, several sources) the
batch goes the general way (`driver.DistributedDriver`: admission on the driver,
the facts' instant intervals, Spark plans), and so does the rest of the run.

Under RULES, R is how far back the query's program reads (`plan.DistributedPlan.
depth`, proved in plan.py's docstring and docs/spark.md), and every engine here
runs the program from the plan's text. Its materialization's timeline must not
start at the engine's first triple when elements came before that: a BOX there
would be clipped where the whole run's reads a gap's empty points. So an engine
whose elements are complete from a time C, with elements before C in the stream,
starts its timeline at C (`start_timeline`) and reports every instant after C
(`RegisteredQuery.report_after`): a piece that looks back (C: the last line
before it less R), and the driver's engine (C: where the first instant it
answers reads, the carry's start at the earliest). A batch the check refuses
goes through the driver's engine instead (the general way has no LARS engine),
each late row given once the watermark is at its floor (`answers_over`), and a
later batch in order comes back here.
"""

from __future__ import annotations

import json
from math import gcd
from pathlib import Path

#: rows pushed into a slice's engine at a time (`answers_over`)
FEED_ROWS = 50_000
#: what each task sends back (`slice_function`)
SLICE_SCHEMA = "kind STRING, part INT, k BIGINT, ts BIGINT, s STRING, p STRING, o STRING, text STRING"


def reach(plan) -> int:
    """R: how far back (ms) before its instant a report can depend on the stream: per window, its depth (the
    RANGE; with RULES, the program's reach: `plan.DistributedPlan.depth`) plus how far its boundary can lie
    before the instant (0 when the instants are its boundaries; under COMPUTE EVERY P, up to its STEP s
    less gcd(P, s))."""
    period = plan.grid.period
    return max(plan.depth(window) + window.step - gcd(period, window.step) for window in plan.windows)


def needed_from(plan, k: int) -> int:
    """The earliest timestamp whose elements the reports of instants k and after can depend on (each
    window's boundary at tau_k less its depth: the boundaries only move forward)."""
    grid = plan.grid
    tau = grid.instant(k)
    return min(grid.boundary(window, tau) - plan.depth(window) for window in plan.windows)


def edge_width(plan, delay_ms: int = 0) -> int:
    """E: the span at each end of a slice whose triples another slice's reports (or a later batch's) may read."""
    return reach(plan) + max(0, delay_ms)


def slices_apply(plan, lanes: list[str]) -> str | None:
    """Why the time-slice path cannot run this plan (None: it can). Said for the docs and the tests."""
    if len(lanes) != 1:
        return "several sources (their partitions are not slices of one timeline)"
    if not plan.windows:
        return "no window"
    return None


# the engine that answers a slice ------------------------------------------------------------------------

_BACKGROUND: dict[str, object] = {}


def _background_graph(text: str):
    """The background's N-Triples lines as an rdflib Graph, parsed once per Python worker."""
    import hashlib

    key = hashlib.sha256(text.encode("utf-8")).hexdigest()
    found = _BACKGROUND.get(key)
    if found is None:
        from rdflib import Graph

        found = Graph().parse(data=text, format="nt") if text else Graph()
        if len(_BACKGROUND) > 8:
            _BACKGROUND.clear()
        _BACKGROUND[key] = found
    return found


def slice_engine(plan, background_text: str):
    """An `RSPEngine` with `plan`'s query registered as the local engine registers it (its t0, its
    background, graphs and RULES program as the driver read them: it reads no file, no gap bound: the
    driver decided what is taken), reporting raw answers (RSTREAM: R2S is the driver's); (engine, the list
    its reports go to)."""
    from ...query.model import R2S, ReportPolicy
    from ...query.results import ResultStream
    from ...runtime.engine import RSPEngine

    engine = RSPEngine(t0=plan.grid.t0, max_gap=None, max_eval_ms=plan.max_eval_ms,
                       max_solutions=plan.max_solutions, allow_files=False)
    for iri in plan.streams:
        engine.register_stream(iri)
    query = plan.query()
    if plan.rules is not None:
        engine.add_rules(query.rules, plan.rules)
    if plan.entailment is not None:
        if background_text:
            engine.add_background(_background_graph(background_text))
    elif isinstance(plan.static.get(None), list):
        engine.add_background(_background_graph("\n".join(plan.static[None])))
    for iri in (*query.graphs, *query.named_graphs):  # (their triples are the driver's: no file read here)
        lines = plan.static.get(iri) if iri in query.named_graphs else None
        engine.add_graph(iri, _background_graph("\n".join(lines)) if isinstance(lines, list) else [])
    registered = engine.register_query(plan.text, name=plan.name, filename=plan.filename, base=plan.base,
                                       report=ReportPolicy.ON_WINDOW_CLOSE, dialect=plan.dialect)
    registered.stream = ResultStream(R2S.RSTREAM)
    results: list = []
    registered.subscribe(results.append)
    return engine, results


def answer_payload(answer, keys) -> str:
    """A raw answer as JSON text of written terms (the driver interns them in its own dictionary)."""
    out: dict = {"f": answer.form}
    if answer.error is not None:
        out["e"] = answer.error
        if answer.cut is not None:
            out["c"] = answer.cut
    elif answer.form == "SELECT":
        out["v"] = list(answer.variables)
        out["r"] = [[None if value is None else keys[value] for value in row] for row in answer.rows]
        out["o"] = answer.ordered
    elif answer.form == "CONSTRUCT":
        out["t"] = [[keys[s], keys[p], keys[o]] for s, p, o in answer.triples]
    else:
        out["b"] = bool(answer.boolean)
    return json.dumps(out, separators=(",", ":"))


def payload_answer(text: str, terms):
    """`answer_payload` read back: an `Answer` with ids of `terms`."""
    from ...query.results import Answer

    data = json.loads(text)
    form = data["f"]
    if "e" in data:
        return Answer(form, error=data["e"], cut=data.get("c"))
    intern = terms.intern
    if form == "SELECT":
        rows = [tuple(None if value is None else intern(value) for value in row) for row in data["r"]]
        return Answer("SELECT", tuple(data["v"]), rows, ordered=bool(data["o"]))
    if form == "CONSTRUCT":
        return Answer("CONSTRUCT", triples=[tuple(intern(value) for value in triple) for triple in data["t"]])
    return Answer("ASK", boolean=bool(data["b"]))


def start_timeline(engine, time_ms: int) -> None:
    """The RULES materializations of `engine`'s queries start their timelines at `time_ms` (before it is fed:
    `query.views.MaterializedView.start_at`), where the elements it is fed are complete from."""
    for registered in engine.queries.values():
        for _, shared in registered.windows:
            start_at = getattr(shared.view, "start_at", None)
            if start_at is not None:
                start_at(time_ms)


#: a row taken in time order (no floor): `answers_over`'s floors
NO_FLOOR = -(1 << 63)


def answers_over(plan, background_text: str, iri: str | list[str], times, s, p, o, until: int, wanted=None,
                 made=None, start: int | None = None, floors=None, after: int | None = None, lanes=None) -> dict:
    """Run a fresh engine (or `made`: a `slice_engine` whose dictionary the ids are of) over one stream's
    triples in time order (or several streams': `iri` a list, `lanes` each row's index in it), its watermark
    moved to `until`: {instant index k: answer payload} for every report it made (`wanted(k)`: only those). Terms as written (arrow or lists), or ids (numpy).
    `start`: the elements are every one from that time on, and some came before it (its RULES
    materializations start there: `start_timeline`). `floors` (numpy, `NO_FLOOR` for none): per row, the
    instant reported last when it came late (`admission.Admission.sequential`): it is given to the engine
    once its watermark is there, as the local engine got it, so that each window takes it or not as there.
    `after`: report every instant after it, those before the first row too (`RegisteredQuery.report_after`)."""
    import numpy as np

    from ...columnar.encode import encode

    engine, results = made if made is not None else slice_engine(plan, background_text)
    if start is not None and plan.rules is not None:
        start_timeline(engine, start)
    if after is not None:
        for registered in engine.queries.values():
            registered.report_after(after)
    count = len(times)
    if count:
        terms = engine.terms
        ids = [column if isinstance(column, np.ndarray) else encode(column, terms) for column in (s, p, o)]
        times = np.asarray(times, dtype=np.int64)
        streams = [iri] if isinstance(iri, str) else list(iri)
        lanes = np.zeros(count, dtype=np.int64) if lanes is None else np.asarray(lanes, dtype=np.int64)
        late = None if floors is None else np.asarray(floors, dtype=np.int64) != NO_FLOOR
        if late is None or not late.any():
            _feed_in_order(engine, streams, times, ids, lanes)
        else:  # each late row after the rows in time order up to its floor, the watermark moved there
            keys = np.where(late, floors, times)
            order = np.lexsort((late, keys))
            runs = np.flatnonzero(late[order])
            begin = 0
            for at in [*runs.tolist(), count]:
                rows = order[begin:at]
                if len(rows):
                    _feed_in_order(engine, streams, times[rows], [column[rows] for column in ids], lanes[rows])
                if at < count:
                    row = order[at:at + 1]
                    floor = int(floors[row[0]])
                    if engine.watermark is None or floor > engine.watermark:
                        engine.advance_to(floor, collect=False)
                    _feed_in_order(engine, streams, times[row], [column[row] for column in ids], lanes[row])
                begin = at + 1
    if engine.watermark is None or until > engine.watermark:
        engine.advance_to(until, collect=False)
    keys = engine.terms.keys
    grid = plan.grid
    out = {}
    for result in results:
        k = grid.last_at_or_before(result.t)
        if grid.instant(k) != result.t or (wanted is not None and not wanted(k)):
            continue
        out[k] = answer_payload(result.answer, keys)
    return out


def timeline_answers(plan, background_text: str, streams: list[str], timeline, until: int, wanted,
                     start: int | None = None, skip_empty: bool = False) -> dict:
    """`answers_over` a table of the carry's columns (ts, s, p, o, floor, lane): its rows from `start` (None:
    every one) to `until`, the engine's RULES timeline started at `start`. `skip_empty`: no engine when
    no row is in that span ({}: every instant's answer is the empty window's)."""
    import pyarrow.compute as pc

    stamps = timeline.column("ts")
    keep = pc.less_equal(stamps, until)
    if start is not None:
        keep = pc.and_(pc.greater_equal(stamps, start), keep)
    rows = timeline.filter(keep)
    if skip_empty and not rows.num_rows:
        return {}
    floors = rows.column("floor")
    return answers_over(plan, background_text, streams, rows.column("ts").to_numpy(), rows.column("s"),
                        rows.column("p"), rows.column("o"), until, wanted, start=start, after=start,
                        floors=floors.fill_null(NO_FLOOR).to_numpy() if floors.null_count < len(floors) else None,
                        lanes=rows.column("lane").to_numpy())


def _feed_in_order(engine, streams: list[str], times, ids, lanes) -> None:
    """Rows (each of stream `streams[lane]`) into the engine a block at a time, as the local replay feeds
    them: the windows keep chunks of a block, and what leaves them is forgotten as it goes (one chunk of a
    whole slice would hold every term to its end)."""
    from ...columnar.replay import feed

    count = len(times)
    for start in range(0, count, FEED_ROWS):
        stop = min(count, start + FEED_ROWS)
        feed(engine, streams, lanes[start:stop], times[start:stop], *(column[start:stop] for column in ids))


def edge_mask(times, width: int):
    """The rows within `width` ms of either end of a slice in time order (its first and last timestamps)."""
    first, last = int(times[0]), int(times[-1])
    return (times < first + width) | (times >= last - width)


# the executors' function -----------------------------------------------------------------------------------


def slice_function(plan, iri: str, background, delay_ms: int = 0, pieces: bool = False):
    """mapInArrow over a micro-batch: per partition, its stats and dead letters; when its triples come in
    time order from one source, the answers of the instants inside it and its edges (`SLICE_SCHEMA`).
    Its rows are the `rdf` source's (`s, p, o, ts, rejected, lane`), or with `pieces` the pieces of files
    it names (`source.PIECES_SCHEMA`), parsed here straight into the engine's ids. `background`: a Spark
    broadcast of the background's N-Triples text (None: none)."""
    width = edge_width(plan, delay_ms)
    span = reach(plan)
    gap, t0 = plan.gap, plan.grid.t0

    def run(batches):
        import numpy as np
        import pyarrow as pa
        import pyarrow.compute as pc
        from pyspark import TaskContext

        from ...columnar.encode import decode_arrow, encode
        from ..source import LINE_FORMATS, look_back, piece_blocks, piece_of, read_piece
        from .admission import lane_stats

        context = TaskContext.get()
        part = context.partitionId() if context is not None else 0
        schema = pa.schema([("kind", pa.string()), ("part", pa.int32()), ("k", pa.int64()), ("ts", pa.int64()),
                            ("s", pa.string()), ("p", pa.string()), ("o", pa.string()), ("text", pa.string())])
        made = slice_engine(plan, background.value if background is not None else "")
        terms = made[0].terms
        dead: list[str] = []
        columns: list[tuple] = []  # (lanes, times, s, p, o): ids
        #: rows read before the partition's own (`look_back`: the lines its first windows reach), or None
        back: list = [None]

        def rows_of(batch) -> None:
            """The source's rows: dead letters aside, terms made ids."""
            rejected = batch.column("rejected")
            if rejected.null_count < batch.num_rows:
                mask = pc.is_valid(rejected)
                dead.extend(pc.filter(rejected, mask).to_pylist())
                batch = batch.filter(pc.invert(mask))
            if batch.num_rows:
                lanes = batch.column("lane").to_numpy(zero_copy_only=False).astype(np.int64)
                columns.append((lanes, batch.column("ts").to_numpy(zero_copy_only=False).astype(np.int64),
                                *(encode(batch.column(name), terms) for name in ("s", "p", "o"))))

        for batch in batches:
            if not pieces:
                rows_of(batch)
                continue
            rows = batch.to_pylist()
            for row in rows:
                piece = piece_of(row)
                if piece.fmt in LINE_FORMATS and not columns and len(rows) == 1 and back[0] is None:
                    before = look_back(piece, span, max(1 << 20, 4 * (piece.end - piece.start)))
                    if before is not None:  # (its dead letters are its own piece's: not reported here)
                        got = [(np.asarray(times, np.int64), block.s, block.p, block.o)
                               for block, times, _ in piece_blocks(before, terms) if len(block)]
                        back[0] = ([np.concatenate(column) for column in zip(*got)] if got else None)
                if piece.fmt in LINE_FORMATS:
                    for block, times, texts in piece_blocks(piece, terms):
                        dead.extend(texts)
                        if len(block):
                            columns.append((np.zeros(len(block), dtype=np.int64), np.asarray(times, np.int64),
                                            block.s, block.p, block.o))
                else:
                    for parsed in read_piece(piece, iri):
                        rows_of(parsed.append_column("lane", pa.array(np.zeros(parsed.num_rows, np.int64))))
        pieces_out = []
        if dead:
            pieces_out.append(_rows(schema, part, "dead", text=dead))
        if columns:
            lanes, times, s, p, o = (np.concatenate(column) for column in zip(*columns))
            distinct = np.unique(lanes).tolist()
            for lane in distinct:
                stats = lane_stats(part, int(lane), times[lanes == lane], gap, t0)
                pieces_out.append(_rows(schema, part, "stats", text=[json.dumps(stats)]))
            earlier = back[0]
            if earlier is not None and int(earlier[0][-1]) > int(times[0]):
                earlier = None  # (not in time order: as if there were none)
            if len(distinct) == 1 and bool((np.diff(times) >= 0).all()):
                first, last = int(times[0]), int(times[-1])
                grid = plan.grid
                start = None  # (its engine starts at its first triple: no answer it gives reads before it)
                if earlier is None:
                    chosen = np.flatnonzero(edge_mask(times, width))

                    def inside(k: int) -> bool:
                        tau = grid.instant(k)
                        return tau - span > first and tau <= last
                else:
                    # the lines before hold every triple a window ending after the last of them reads: the
                    # instants from there on are this partition's, and only its tail is an edge
                    chosen = np.flatnonzero(times >= last - width)
                    after = int(earlier[0][-1])
                    start = after - span  # (every line from there on, and one before: `look_back`)

                    def inside(k: int) -> bool:
                        tau = grid.instant(k)
                        return after < tau <= last

                edge_columns = [decode_arrow(column[chosen], terms) for column in (s, p, o)]
                if earlier is not None:
                    times_all = np.concatenate([earlier[0], times])
                    s_all, p_all, o_all = (np.concatenate([a, b]) for a, b in zip(earlier[1:], (s, p, o)))
                else:
                    times_all, s_all, p_all, o_all = times, s, p, o
                answers = answers_over(plan, "", iri, times_all, s_all, p_all, o_all, last, inside, made=made,
                                       start=start)
                if answers:
                    ks = sorted(answers)
                    pieces_out.append(_rows(schema, part, "answer", k=ks, text=[answers[k] for k in ks]))
                count = len(chosen)
                pieces_out.append(pa.RecordBatch.from_arrays(
                    [pa.array(["edge"] * count, pa.string()), pa.array(np.full(count, part, np.int32)),
                     pa.nulls(count, pa.int64()), pa.array(times[chosen], pa.int64()),
                     *(column.cast(pa.string()) for column in edge_columns), pa.nulls(count, pa.string())],
                    schema=schema))
            else:
                pieces_out.append(_rows(schema, part, "skipped", text=["not one source in time order"]))
        for piece in pieces_out:
            if piece.num_rows:
                yield piece

    return run


def pieces_as_rows(iri: str):
    """mapInArrow: `emit` pieces -> the `rdf` source's rows (what the general way reads)."""

    def rows(batches):
        from ..source import piece_of, read_piece

        for batch in batches:
            for row in batch.to_pylist():
                yield from read_piece(piece_of(row), iri)

    return rows


def _rows(schema, part: int, kind: str, *, k=None, text=None):
    import pyarrow as pa

    count = len(text)
    return pa.RecordBatch.from_arrays(
        [pa.array([kind] * count, pa.string()), pa.array([part] * count, pa.int32()),
         pa.array(k if k is not None else [None] * count, pa.int64()), pa.nulls(count, pa.int64()),
         pa.nulls(count, pa.string()), pa.nulls(count, pa.string()), pa.nulls(count, pa.string()),
         pa.array(text, pa.string())], schema=schema)


# the carry: the triples later reports reach ------------------------------------------------------------------

CARRY_COLUMNS = ("ts", "s", "p", "o", "floor", "lane")


def carry_path(root: str | Path, batch_id: int) -> Path:
    return Path(root) / f"carry-{batch_id}.parquet"


def write_carry(path: Path, table) -> None:
    """The carry as a plain Parquet file (no code), written whole under a temporary name, then renamed."""
    import pyarrow.parquet as pq

    path.parent.mkdir(parents=True, exist_ok=True)
    partial = path.with_name(path.name + ".partial")
    pq.write_table(table, partial)
    partial.replace(path)


def read_carry(path: Path):
    """The carry file; one written before carries had floors gets a column of none, before they had lanes
    (several sources: the key split) the first source's."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = pq.read_table(path)
    if "floor" not in table.column_names:
        table = table.append_column("floor", pa.nulls(table.num_rows, pa.int64()))
    if "lane" not in table.column_names:
        table = table.append_column("lane", pa.array([0] * table.num_rows, pa.int32()))
    return table.select(list(CARRY_COLUMNS)).cast(empty_carry().schema)


def empty_carry():
    """The carry's columns: each triple's time, its terms as written, when it came late (`answers_over`'s
    floors) the instant reported last before it came (null: it came in time order), its source's lane."""
    import pyarrow as pa

    return pa.table({"ts": pa.array([], pa.int64()), "s": pa.array([], pa.string()),
                     "p": pa.array([], pa.string()), "o": pa.array([], pa.string()),
                     "floor": pa.array([], pa.int64()), "lane": pa.array([], pa.int32())})


def carry_files(root: str | Path) -> list[Path]:
    folder = Path(root)
    if not folder.is_dir():
        return []
    return sorted(path for path in folder.iterdir() if path.name.startswith("carry-"))


__all__ = ["SLICE_SCHEMA", "answers_over", "edge_mask", "edge_width", "needed_from", "payload_answer", "reach",
           "timeline_answers",
           "slice_engine", "slice_function", "slices_apply", "start_timeline"]

