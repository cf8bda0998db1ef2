"""Distributed mode: windows, RDFS / OWL 2 RL and the query's joins as Spark plans on the executors.

    from rsp_plugin.spark import spark_session
    from rsp_plugin.spark.distributed import run_distributed

    spark = spark_session("local-cluster[2,1,1024]")
    run = run_distributed(spark, "queries/csrbench/max-temperature.rq",
                          {"http://ex.org/csrbench": "tests/data/csrbench/stream-6s.tnt"}, "out.jsonl")
    run.wait()

The driver only coordinates (which elements are taken, which instants are
reported) and collects a few rows per instant; the executors parse, keep
the windows' triples in files, derive the entailments a query's pattern can
read (each triple's shape joined with its template, the background's closure
broadcast to them), join, filter and aggregate. Same output as
`--engine local` (the differential tests say so); what is not distributed yet
is said in one line (`NotDistributed`), and `--mode driver` runs it.

Modules: `plan` (instants, what is distributed), `admission` (what is taken),
`expand` (one triple's entailments joined from its shape's template when read:
the templates are `rsp_plugin.reasoning.templates`'), `rules` (two window
premises: joins), `content` (facts with instant intervals; the instants a report
reads, joined in as data so that a plan's code is the same every batch), `store`
(the window state's files), `evaluate` (the Spark backend of the query's
compiled plan), `sqltext` (literals and small tables as SQL text), `driver`
(foreachBatch).
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from .plan import DistributedPlan, NotDistributed, plan_of

__all__ = ["run_distributed", "plan_of", "NotDistributed", "DistributedPlan", "DistributedRun"]


class DistributedRun:
    """A running distributed query: the streaming query and its driver."""

    def __init__(self, query, driver, replay: bool, scratch: str | None = None):
        self.query = query
        self.driver = driver
        self.replay = replay
        self._scratch = scratch

    def __repr__(self) -> str:
        return f"<DistributedRun {self.query.id} replay={self.replay} {self.driver!r}>"

    def wait(self, timeout: float | None = None):
        """Wait for the streaming query to end; a replay then reports its last windows."""
        if timeout is None:
            self.query.awaitTermination()
        elif not self.query.awaitTermination(timeout):
            return self.driver
        if self.replay:
            self.driver.finish()
        if self._scratch is not None:
            import shutil

            shutil.rmtree(self._scratch, ignore_errors=True)
            self._scratch = None
        return self.driver

    def stop(self) -> None:
        self.query.stop()


def run_distributed(spark, query, sources, sink="console", *, checkpoint: str | Path | None = None,
                    checkpoint_key: str | Path | None = None, background=(), graphs: dict | None = None, trigger: str | dict = "availableNow",
                    delay_ms: int = 0, dead_letters=None, progress=None, max_lines_per_trigger: int | None = None,
                    options: dict | None = None, name: str | None = None) -> DistributedRun:
    """Run a continuous query in distributed mode; arguments as `rsp_plugin.spark.run_query`'s.

    Raises `NotDistributed` (before anything runs) when the query has a part distributed mode does
    not run yet; `run_query` runs it on the driver."""
    from ...runtime.engine import RSPEngine
    from .. import _query_text, _start, _stream_frame, register
    from ..checkpoint import StateStore
    from ..driver import Progress
    from ..sinks import DeadLetters, sink_for
    from .driver import DistributedDriver
    from .store import FactStore

    register(spark)
    pairs = list(sources.items()) if isinstance(sources, dict) else list(sources)
    if not pairs:
        raise ValueError("run_distributed needs at least one source")
    streams = list(dict.fromkeys(str(iri) for iri, _ in pairs))
    if isinstance(query, RSPEngine):
        engine = query
    else:
        engine = RSPEngine()
        for iri in streams:
            engine.register_stream(iri)
        for source in background:
            engine.add_background(source)
        for iri, source in (graphs or {}).items():
            engine.add_graph(iri, source)
        text, filename = _query_text(query)
        engine.register_query(text, filename=filename)
    for iri in streams:
        engine.register_stream(iri)
    plan = plan_of(engine, name)
    frame = None
    for lane, (iri, source) in enumerate(pairs):
        part = _stream_frame(spark, str(iri), source, max_lines_per_trigger, options or {}, lane)
        frame = part if frame is None else frame.unionByName(part)
    if progress is True:
        progress = Progress()
    elif progress is False:
        progress = None
    scratch = None
    if checkpoint is not None:
        root = Path(checkpoint)
        states = _DistributedStates(root, checkpoint_key)
        store = FactStore(root / "rsp-distributed" / "facts")
    else:
        scratch = tempfile.mkdtemp(prefix="rsp-distributed-")
        states = None
        store = FactStore(Path(scratch) / "facts")
    lanes = [str(iri) for iri, _ in pairs]
    driver = DistributedDriver(spark, plan, sink_for(sink, spark), lanes=lanes, store=store, states=states,
                               dead_letters=dead_letters if isinstance(dead_letters, DeadLetters)
                               else DeadLetters(dead_letters), progress=progress, delay_ms=delay_ms)
    started, replay = _start(frame, driver, checkpoint, trigger)
    return DistributedRun(started, driver, replay, scratch)


class _DistributedStates:
    """The distributed driver's saved states: `<checkpoint>/rsp-distributed/state-N.json` (the two latest)."""

    def __new__(cls, checkpoint, key_file=None):
        from ..checkpoint import StateStore

        store = StateStore(checkpoint, key_file)
        store.directory = Path(checkpoint) / "rsp-distributed"
        return store
