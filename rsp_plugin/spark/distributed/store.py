"""Window state kept in Spark: each micro-batch's facts as Parquet files, read back by the instants they reach.

A window outlives the micro-batch that brought its elements, so the facts a
batch made (`content.window_rows`) are written by the executors, once, as
columnar files (`facts/bN/`), and every later report reads the batches
whose instant intervals reach it; a batch no instant still to be reported
reaches is deleted. The files are plain Parquet (no code, any version of
Spark reads them); re-running a batch after a restart overwrites its
directory, so nothing is doubled.

The alternative, facts cached in the executors' memory (`persist`), keeps no
state across a restart and pins every batch's lineage; measured side by side
(docs/performance.md, "Spark"), the files cost little more on one machine, since
the OS keeps them in its cache.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class StoredBatch:
    """One batch's facts on disk: the instants they reach, and the relations they hold."""

    #: the micro-batch's number (or `cN`: a carry of batch N kept as facts)
    batch: int | str
    low: int
    high: int
    rows: int = 0
    #: [(relation, predicate or None, reflexive)] under ENTAILMENT (what `rules.JoinAnalysis` reads)
    present: list = field(default_factory=list)
    #: the shape keys (`expand.SHAPE` + the predicate) of the triples, when the files hold the window's
    #: triples only (their closures joined when read); None: the files hold the facts as they are
    shapes: list | None = None


class FactStore:
    """The directory of stored batches."""

    def __init__(self, root: str | Path):
        self.root = Path(root)

    def __repr__(self) -> str:
        return f"<FactStore {self.root}>"

    def path(self, batch: int | str) -> str:
        """A batch's directory (`bN`), or a named one (the background's: `base`)."""
        return str(self.root / (f"b{batch}" if isinstance(batch, int) else batch))

    def write(self, frame, batch: int | str) -> str:
        target = self.path(batch)
        frame.write.mode("overwrite").parquet(target)
        return target

    def read(self, spark, batches: list[StoredBatch]):
        paths = [self.path(entry.batch) for entry in batches if Path(self.path(entry.batch)).exists()]
        if not paths:
            return None
        return self.read_paths(spark, *paths)

    @staticmethod
    def read_paths(spark, *paths: str):
        """The facts' files, with their schema given (else Spark runs a job to read it from the files)."""
        from .content import FACTS_SCHEMA

        return spark.read.schema(FACTS_SCHEMA).parquet(*paths)

    def batches(self) -> list[int | str]:
        """The batches with a directory here: numbers (`bN`), and names (`cN`: a time-slice run's carry
        kept as facts when its batches went the general way)."""
        if not self.root.is_dir():
            return []
        found = [path.name for path in self.root.iterdir() if path.is_dir() and path.name[1:].isdigit()]
        return ([int(name[1:]) for name in sorted(found, key=lambda name: int(name[1:])) if name[0] == "b"]
                + sorted(name for name in found if name[0] == "c"))

    def drop(self, batch: int | str) -> None:
        shutil.rmtree(self.path(batch), ignore_errors=True)

    def clear(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)


__all__ = ["FactStore", "StoredBatch"]
