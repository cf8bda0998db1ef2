"""`rsp-plugin query ... --engine spark [--master URL] [--checkpoint DIR [--checkpoint-key FILE]] [--mode driver|distributed] [--partition-by VAR]`.

The stream files are read by the `rdf` source (parsed in the executors), a broker's topic
(`--stream IRI=mqtt://...`) by the `rdf-mqtt` source (`rsp_plugin.spark.mqtt`; driver mode, a
micro-batch every half second, ended by `--mqtt-idle`); then

- `--mode driver` (default): the micro-batch driver feeds the same engine as
  `--engine local`, on the driver;
- `--mode distributed`: the embedded engine on the executors, over slices of time
  or buckets of keys (a key-local query), else windows, entailment, joins and
  aggregates as Spark plans (`rsp_plugin.spark.distributed`); a query with a part
  it does not cover yet is said so in one line on stderr and runs in driver mode;
- `--partition-by VAR`: one engine per key on the executors
  (`rsp_plugin.spark.partitioned`); a query that is not key-local is refused.

The same JSON lines come out on stdout (partitioned mode: one line per key and
instant, with its "key"). Lines set aside are reported on stderr as
`FILE:LINE: reason`; a progress line per micro-batch goes to stderr too. A
checkpoint whose state is refused (`rsp_plugin.runtime.state`: it does not authenticate
with the key, is of another version, or its key file is not private) is one
line on stderr naming the file and what is wrong, and exit status 2.
"""

from __future__ import annotations

import sys

from ..core.errors import UserError
from ..io.lines import count_lines
from ..spark.sinks import ConsoleSink
from .options import QueryOptions
from .query import engine_for, readable_for

#: Lines of a stream file per micro-batch (a replay reads its files in batches of this size).
BATCH_LINES = 50_000
#: distributed mode's, per task slot: each micro-batch is a Spark job, and its pieces' edges go to the driver
#: (`spark.distributed.slices`), so a batch should span many windows per task slot. On local[2], batches of 1M
#: lines cost 0.52 s per million plain triples against 0.32 s for one batch (a batch's fixed part, ~0.45 s,
#: over 1M lines): a million per task slot halves that, and a cluster's batch grows with its slots
BATCH_LINES_DISTRIBUTED = 1_000_000


def cli_run(options: QueryOptions) -> int:
    """Run `rsp-plugin query` with `--engine spark`."""
    from ..runtime.state import StateError

    try:
        return start(options).finish()
    except StateError as refused:  # a checkpoint refused: its one line, not a traceback
        raise UserError(str(refused)) from None


class Started:
    """A query the command line has started on Spark: `finish()` waits for its end (a replay reads
    its files, then reports the last windows) and says on stderr how many lines were set aside."""

    def __init__(self, wait, sink=None):
        self._wait = wait
        self._sink = sink

    def finish(self) -> int:
        count = self._wait()
        if self._sink is not None:
            self._sink.close()  # (--publish: what the broker has not taken yet)
        if count:
            print(f"rsp-plugin: {count} stream line{'s' if count != 1 else ''} set aside (see above)", file=sys.stderr)
        return 0


def start(options: QueryOptions, *, out=None) -> Started:
    """Start what `rsp-plugin query ... --engine spark` asks for, writing its JSON lines to `out`
    (stdout by default). Several may run at once in one Spark session (each its own streaming query).
    Everything that can be refused without Spark is, before Spark starts (the options, the query, the
    mode's plan, the checkpoint's key, the brokers)."""
    from ..spark import check_mode, run
    from ..spark.distributed import NotDistributed
    from ..spark.driver import Progress
    from ..spark.session import spark_session, task_slots

    engine, registered, sources = engine_for(options)
    if any(source.kind in ("stdin", "tcp") for source in sources):
        raise UserError("--engine spark reads stream files and brokers (mqtt://); standard input (IRI=-) and "
                        "sockets are read by --engine local")
    brokers = [source for source in sources if source.kind == "mqtt"]
    if brokers and (options.mode == "distributed" or options.partition_by):
        raise UserError("a broker's stream (mqtt://) runs in --mode driver on --engine spark")
    checkpoint = options.checkpoint
    checkpoint_key = options.checkpoint_key
    if checkpoint_key is not None and checkpoint is None:
        raise UserError("--checkpoint-key authenticates the states of --checkpoint DIR: give both")
    key = options.partition_by
    if key and options.mode == "distributed":
        raise UserError("--partition-by runs partitioned mode; --mode distributed is another: choose one")
    mode = "partitioned" if key else options.mode or "driver"
    try:  # the locality analysis (partitioned) and the distributed plan need no Spark
        plan = check_mode(engine, mode, key=key, lanes=len(sources))
    except NotDistributed as why:
        print(f"rsp-plugin: --mode distributed: {why} is not distributed yet; the query runs in --mode driver",
              file=sys.stderr)
        mode, plan = "driver", None
    if checkpoint is not None:
        _check_key(checkpoint, checkpoint_key)
    for lane, source in enumerate(sources):
        if source.kind == "mqtt":
            _check_broker(source, *_broker_log(source, lane, checkpoint))
    sink = ConsoleSink(out, fmt=options.format, readable=readable_for(options, registered.query))
    if options.publish:  # each report one message to a broker's topic
        from .publish import PublishSink, publisher_for

        sink = PublishSink(publisher_for(options.publish, options.mqtt), options.format)
    files = [source for source in sources if source.kind == "file"]
    progress = None if options.quiet else Progress(total_rows=None if brokers else count_lines(s.path for s in files))

    spark = spark_session(options.master, log_level=options.spark_log_level or "ERROR")
    frames = []
    for lane, source in enumerate(sources):
        if source.kind == "mqtt":
            frames.append((source.iri, _broker_frame(spark, source, lane, checkpoint, options)))
            continue
        default = BATCH_LINES_DISTRIBUTED * task_slots(spark) if mode == "distributed" else BATCH_LINES
        reader = (spark.readStream.format("rdf").option("stream", source.iri)
                  .option("maxLinesPerTrigger", options.batch_lines or default)
                  .option("maxLineBytes", str(options.max_line_bytes)))
        if mode == "distributed" and len(sources) == 1:  # (the executors parse the pieces: `run`)
            reader = reader.option("emit", "pieces")
        if source.path.suffix.lower() not in (".tnt", ".trig", ".nq", ".nquads"):
            reader = reader.option("timestamp", str(source.moment))
        frames.append((source.iri, reader.load(str(source.path.resolve()))))
    live = {"processingTime": "0.5 seconds"}  # a broker's stream: a micro-batch every half second
    running = run(spark, engine, frames, sink, mode=mode, key=key, plan=plan, checkpoint=checkpoint,
                  checkpoint_key=checkpoint_key, progress=progress,
                  trigger=live if brokers else "availableNow")
    if brokers:  # until the brokers go quiet (--mqtt-idle)
        return Started(lambda: _until_idle(running, brokers[0].mqtt.idle), sink)
    return Started(lambda: running.wait().set_aside, sink)


def _check_key(checkpoint, given) -> None:
    """A checkpoint key that would be refused (not private, too short, not there) is refused now: the key
    given (--checkpoint-key, $RSP_PLUGIN_CHECKPOINT_KEY) or the one the checkpoint holds already."""
    from ..runtime.state import checkpoint_key

    checkpoint_key(checkpoint, given, create=False)


def _check_broker(source, log: str | None, client_id: str | None) -> None:
    """A broker that cannot be used is one line now, not a Spark job failing later. A session kept under
    `client_id` is made now, so that the broker keeps for it what comes before Spark's reader is up; with a
    message `log`, once the reader of a run killed just before has stopped writing it (its session too)."""
    from dataclasses import replace

    from ..io.mqtt import BrokerError, MessageLog, Publisher, open_session

    try:
        if log is not None:
            MessageLog.wait_free(log)
        if client_id is None:
            Publisher(source.broker, source.mqtt).start().close(wait=0)
        else:
            print(f"rsp-plugin: {open_session(source.broker, replace(source.mqtt, client_id=client_id))}",
                  file=sys.stderr, flush=True)
    except BrokerError as error:
        raise UserError(str(error)) from None


def _broker_log(source, lane: int, checkpoint) -> tuple[str | None, str | None]:
    """(message log directory, session client id) of a broker's stream: under --checkpoint, a log of its
    own and a session named after it (a restart resumes both); else none, or --mqtt-client-id's session."""
    from pathlib import Path

    from ..io.mqtt import session_id

    if checkpoint is None:
        return None, source.mqtt.client_id
    log = str(Path(checkpoint).resolve() / "mqtt" / f"lane-{lane}")
    return log, source.mqtt.client_id or session_id(log, str(source.broker))


def _broker_frame(spark, source, lane: int, checkpoint, options):
    """The `rdf-mqtt` source of a --stream IRI=mqtt://...; with --checkpoint, its message log and a
    session kept under a client id of its own there (`rsp_plugin.spark.mqtt`: a restart loses nothing)."""
    mqtt = source.mqtt
    log, client_id = _broker_log(source, lane, checkpoint)
    reader = (spark.readStream.format("rdf-mqtt").option("url", str(source.broker)).option("stream", source.iri)
              .option("format", source.fmt).option("qos", str(mqtt.qos)).option("protocol", mqtt.protocol)
              .option("maxLineBytes", str(options.max_line_bytes)))
    settings = {"payloadTime": mqtt.payload_time, "clientId": client_id, "username": mqtt.username,
                "password": mqtt.password, "caFile": mqtt.ca_file, "certFile": mqtt.cert_file,
                "keyFile": mqtt.key_file, "insecure": "true" if mqtt.insecure else None, "log": log}
    for key, value in settings.items():
        if value is not None:
            reader = reader.option(key, value)
    return reader.load()


def _until_idle(run, idle: float | None) -> int:
    """Wait for a live run: with `idle`, stop it once no micro-batch came for that long (none running,
    none found data, the sources up: a loaded machine's slow start is not quiet), then report its last
    windows as a replay does; without, until it is stopped (Ctrl-C)."""
    import time

    state = run.driver.state
    seen, quiet_since = state.last_batch, time.monotonic()
    while not run.query.awaitTermination(0.25):
        status = run.query.status
        busy = (status.get("isTriggerActive") or status.get("isDataAvailable")
                or str(status.get("message", "")).startswith("Initializing"))
        if state.last_batch != seen or busy:
            seen, quiet_since = state.last_batch, time.monotonic()
        elif idle is not None and time.monotonic() - quiet_since >= idle:
            run.query.stop()
            break
    run.driver.finish()
    return run.driver.state.set_aside
