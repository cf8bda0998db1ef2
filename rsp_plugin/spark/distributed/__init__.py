"""Distributed mode: windows, RDFS / OWL 2 RL and the query's joins as Spark plans on the executors.

    from rsp_plugin.spark import run, spark_session

    spark = spark_session("local-cluster[2,1,1024]")
    run(spark, "queries/csrbench/max-temperature.rq",
        {"http://ex.org/csrbench": "tests/data/csrbench/stream-6s.tnt"}, "out.jsonl", mode="distributed").wait()

The driver only coordinates (which elements are taken, which instants are
reported) and collects a few rows per instant; the executors parse, keep
the windows' triples in files, derive the entailments a query's pattern can
read (each triple's shape joined with its template, the background's closure
broadcast to them), join, filter and aggregate. Same output as
`--engine local` (the differential tests say so); what is not distributed yet
is said in one line (`NotDistributed`, raised by `rsp_plugin.spark.check_mode`
before anything runs), and `--mode driver` runs it.

Modules: `plan` (instants, what is distributed), `admission` (what is taken),
`slices` (time slices: the embedded engine per task over a slice of time),
`keys` (the key split of a key-local query: the embedded engine per bucket of keys),
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

__all__ = ["plan_of", "NotDistributed", "DistributedPlan", "start_distributed"]


def start_distributed(spark, plan: DistributedPlan, frame, lanes: list[str], sink, *, checkpoint=None,
                      checkpoint_key=None, dead_letters=None, progress=None, delay_ms: int = 0,
                      trigger: str | dict = "availableNow", pieces: bool = False):
    """Start `plan` over `frame` (the sources' rows, a `lane` per source) in distributed mode; a
    `rsp_plugin.spark.SparkRun` (`rsp_plugin.spark.run(..., mode="distributed")` is the way in).
    `pieces`: `frame` holds the `rdf` source's pieces of files (`emit` pieces), not their rows.
    Without a checkpoint the window's files go to a scratch directory, removed when the run ends."""
    from .. import SparkRun, _offsets, _start
    from ..checkpoint import StateStore
    from .driver import DistributedDriver
    from .store import FactStore

    scratch = None
    if checkpoint is not None:
        root = Path(checkpoint)
        states = StateStore(root, checkpoint_key, "rsp-distributed")  # (the two latest states: state-N.json)
        store = FactStore(root / "rsp-distributed" / "facts")
    else:
        scratch = tempfile.mkdtemp(prefix="rsp-distributed-")
        states = None
        store = FactStore(Path(scratch) / "facts")
    driver = DistributedDriver(spark, plan, sink, lanes=lanes, store=store, states=states, dead_letters=dead_letters,
                               progress=progress, delay_ms=delay_ms, pieces=pieces)
    started, replay = _start(frame.writeStream.foreachBatch(driver), _offsets(checkpoint), trigger)
    return SparkRun("distributed", started, driver, replay, scratch)
