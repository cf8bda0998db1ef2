"""`rsp-plugin bench spark`: the Spark pipeline's sustained throughput and latency, the local engine as baseline.

Four workloads over a generated `.tnt` stream of sensor observations (1M
triples; `--quick`: 60k), 10,000 triples per second of event time:

    parse     parse and window only, all in Spark: the `rdf` source, then Spark's own event-time
              windows (groupBy(window(ts, 1 s)).count(), watermark 0), no engine
    window    parse and window with the engine: the micro-batch driver feeds the RSPEngine a
              selective query, SELECT ?o ... [RANGE 1s STEP 1s] { ?o ex:observedBy ex:sensor0 }
    rdfs      RDFS entailment over the window with a small sensor ontology (subclasses, domains),
              SELECT (COUNT(?o) AS ?n) { ?o a ex:Observation }
    lars      a LARS program as the query's RULES: hot readings, and sensors hot at every
              time point of the last 3 s (BOX), SELECT ?s { ?s a ex:Overheating }

The local baseline of `parse` and `window` is the same: the engine's replay of
the selective query (parse, window, index, a lookup per window). Each runs on Spark (`local[2]`, the `rdf` source parsing the file in the
executors, micro-batches of `--rates` lines, default 20,000 and 100,000) and
on the local engine (`rsp-plugin query --engine local`'s replay: read, push,
advance, finish) in the same process, on the same file; the stream is written
before any timer starts, and Spark's session is started (and warmed up on a
small stream) before too. Both make the same results (checked: same number of
reports and the same last one).

Figures: throughput = triples / wall time of the whole replay; latency per
window = for Spark, the median micro-batch latency (read, parse, transfer,
engine: a window closed by a batch is reported when the batch ends); for the
local engine, the median time of one evaluation. The
Spark / local ratio of wall times is the overhead the issue bounds (<= 2x for
rdfs and lars at micro-batches of >= 10k triples; >= 100k triples/s for parse).
"""

from __future__ import annotations

import contextlib
import io
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

EX = "http://ex.org/bench/"
STREAM = f"{EX}stream"
RATE_PER_SECOND = 10_000

ONTOLOGY = f"""@prefix ex: <{EX}> .
@prefix rdfs: <http://www.w3.org/2000/01/rdf-schema#> .
ex:TemperatureObservation rdfs:subClassOf ex:Observation .
ex:HumidityObservation rdfs:subClassOf ex:Observation .
ex:Observation rdfs:subClassOf ex:Event .
ex:observedBy rdfs:domain ex:Observation ; rdfs:range ex:Sensor .
ex:Sensor rdfs:subClassOf ex:Device .
"""

RULES = f"""@prefix ex: <{EX}> .
ex:hot(?s) :- ?o ex:observedBy ?s, ?o ex:value ?v, ?v > 90 .
?s a ex:Overheating :- [RANGE 3] BOX ex:hot(?s) .
"""

WINDOW_QUERY = """REGISTER RSTREAM <{ex}q/window> AS
SELECT ?o FROM STREAM <{stream}> [RANGE 1s STEP 1s] WHERE {{ ?o <{ex}observedBy> <{ex}sensor0> }}"""

QUERIES = {
    "parse": WINDOW_QUERY,
    "window": WINDOW_QUERY,
    "rdfs": """REGISTER RSTREAM <{ex}q/rdfs> AS
PREFIX ex: <{ex}>
SELECT (COUNT(?o) AS ?n) FROM STREAM <{stream}> [RANGE 1s STEP 1s] FROM <{ontology}>
ENTAILMENT <http://www.w3.org/ns/entailment/RDFS>
WHERE {{ ?o a ex:Observation }}""",
    "lars": """REGISTER RSTREAM <{ex}q/lars> AS
PREFIX ex: <{ex}>
SELECT ?s FROM STREAM <{stream}> [RANGE 1s STEP 1s] RULES <{rules}>
WHERE {{ ?s a ex:Overheating }}""",
}


def write_stream(path: Path, triples: int, seed: int = 1) -> None:
    """Observations of 200 sensors: 3 triples each (type, sensor, value), 10,000 triples per second."""
    draw = random.Random(seed)
    integer = "<http://www.w3.org/2001/XMLSchema#integer>"
    kinds = (f"<{EX}TemperatureObservation>", f"<{EX}HumidityObservation>")
    rdf_type = "<http://www.w3.org/1999/02/22-rdf-syntax-ns#type>"
    lines = []
    for number in range(triples // 3):
        stamp = number * 3 * 1000 // RATE_PER_SECOND
        observation = f"<{EX}o{number}>"
        sensor = draw.randrange(200)
        hot = sensor < 20
        value = draw.randrange(85, 100) if hot else draw.randrange(0, 90)
        lines.append(f"{stamp} {observation} {rdf_type} {kinds[number % 2]} .\n")
        lines.append(f"{stamp} {observation} <{EX}observedBy> <{EX}sensor{sensor}> .\n")
        lines.append(f'{stamp} {observation} <{EX}value> "{value}"^^{integer} .\n')
    path.write_text("".join(lines))


def run(options) -> int:
    from ..spark import run as spark_run
    from ..spark import spark_session

    quick = options.quick
    triples = 60_000 if quick else 1_000_000
    sizes = options.rates or ([20_000] if quick else [20_000, 100_000])
    workloads = options.workloads or list(QUERIES)
    unknown = [name for name in workloads if name not in QUERIES]
    if unknown:
        print(f"rsp-plugin: unknown spark workload(s): {', '.join(unknown)} (expected: {', '.join(QUERIES)})",
              file=sys.stderr)
        return 2
    repeat = 1 if quick else max(1, min(options.repeat, 3))
    with tempfile.TemporaryDirectory(prefix="rsp-bench-spark-") as scratch:
        folder = Path(scratch)
        stream = folder / "stream.tnt"
        write_stream(stream, triples)
        (folder / "ontology.ttl").write_text(ONTOLOGY)
        (folder / "rules.lars").write_text(RULES)
        texts = {name: text.format(ex=EX, stream=STREAM, ontology=folder / "ontology.ttl", rules=folder / "rules.lars")
                 for name, text in QUERIES.items()}
        started = time.perf_counter()
        spark = spark_session("local[2]")
        warm = folder / "warm.tnt"
        write_stream(warm, 3000, seed=2)
        spark_run(spark, texts["parse"], {STREAM: str(warm)}, lambda result: None, progress=False,
                  max_lines_per_trigger=1000).wait()
        print(f"Spark pipeline (local[2]) on {triples:,} generated triples, {RATE_PER_SECOND:,} per second of event "
              f"time; session start and warm-up {time.perf_counter() - started:.1f} s; median of {repeat}")
        print()
        header = (f"{'workload':<9} {'batch':>8} {'spark s':>8} {'local s':>8} {'ratio':>6} {'spark tr/s':>11} "
                  f"{'local tr/s':>11} {'batches':>8} {'spark ms/win':>13} {'local ms/win':>13}")
        print(header)
        print("-" * len(header))
        for name in workloads:
            local = [_local(texts[name], stream) for _ in range(repeat)]
            local_seconds = statistics.median(run_.seconds for run_ in local)
            for size in sizes:
                if name == "parse":
                    runs = [_spark_windows(spark, stream, size) for _ in range(repeat)]
                else:
                    runs = [_spark(spark, texts[name], stream, size) for _ in range(repeat)]
                seconds = statistics.median(run_.seconds for run_ in runs)
                same = name == "parse" or (runs[0].reports == local[0].reports and runs[0].last == local[0].last)
                print(f"{name:<9} {size:>8,} {seconds:>8.2f} {local_seconds:>8.2f} {seconds / local_seconds:>6.2f} "
                      f"{triples / seconds:>11,.0f} {triples / local_seconds:>11,.0f} {runs[0].batches:>8} "
                      f"{runs[0].latency_ms:>13.1f} {local[0].latency_ms:>13.1f}"
                      + ("" if same else "   RESULTS DIFFER"))
                sys.stdout.flush()
    return 0


class _Run:
    def __init__(self, seconds: float, reports: int, last, latency_ms: float, batches: int = 0):
        self.seconds, self.reports, self.last = seconds, reports, last
        self.latency_ms, self.batches = latency_ms, batches


def _spark(spark, text: str, stream: Path, size: int) -> _Run:
    from ..spark import run as spark_run

    results = []
    started = time.perf_counter()
    finished = spark_run(spark, text, {STREAM: str(stream)}, results.append, progress=False,
                         max_lines_per_trigger=size).wait()
    seconds = time.perf_counter() - started
    latencies = finished.batch_seconds
    last = results[-1].to_json() if results else None
    return _Run(seconds, len(results), last, 1000 * statistics.median(latencies) if latencies else 0.0,
                len(latencies))


def _spark_windows(spark, stream: Path, size: int) -> _Run:
    """Parse and window only: the `rdf` source, then Spark's own event-time windows (a count per second)."""
    from pyspark.sql import functions as F

    counts = []
    latencies = []
    last = [time.perf_counter()]

    def collect(batch, batch_id):
        counts.extend(batch.collect())
        now = time.perf_counter()
        latencies.append(now - last[0])
        last[0] = now

    started = time.perf_counter()
    frame = (spark.readStream.format("rdf").option("stream", STREAM).option("maxLinesPerTrigger", size)
             .load(str(stream)).where("rejected IS NULL")
             .withColumn("event_time", F.timestamp_millis("ts")).withWatermark("event_time", "0 seconds")
             .groupBy(F.window("event_time", "1 second")).count())
    query = frame.writeStream.outputMode("append").foreachBatch(collect).trigger(availableNow=True).start()
    query.awaitTermination()
    seconds = time.perf_counter() - started
    return _Run(seconds, len(counts), None, 1000 * statistics.median(latencies) if latencies else 0.0,
                len(latencies))


def _local(text: str, stream: Path) -> _Run:
    """The local replay (as `rsp-plugin query --engine local` does it: a block at a time, pushed
    as columns), timing each evaluation of the query."""
    from ..columnar.replay import replay_file
    from ..runtime.engine import RSPEngine

    started = time.perf_counter()
    engine = RSPEngine()
    engine.register_stream(STREAM)
    results = []
    registered = engine.register_query(text, on_result=results.append)
    latencies = []
    evaluate = registered.evaluator.evaluate

    def timed(*arguments):
        moment = time.perf_counter()
        answer = evaluate(*arguments)
        latencies.append(time.perf_counter() - moment)
        return answer

    registered.evaluator.evaluate = timed
    with contextlib.redirect_stderr(io.StringIO()):
        replay_file(engine, STREAM, stream)
        engine.finish()
    seconds = time.perf_counter() - started
    last = results[-1].to_json() if results else None
    return _Run(seconds, len(results), last, 1000 * statistics.median(latencies) if latencies else 0.0)
