"""The batch path: streams read, windowed, queried and materialized a block at a time.

Python orchestrates, native columnar kernels (polars, pyarrow, numpy) do the
per-row work; per distinct term some Python is fine, per row it is not.

| module | idea |
| --- | --- |
| `encode.py` | a column of written terms -> a column of ids, one dictionary lookup per distinct term |
| `blocks.py` | `.tnt` / N-Triples / N-Quads / `.stream` files read a block of lines at a time |
| `columns.py` | windows whose content is id columns (time and count windows) |
| `query.py` | the columnar backend of a query's compiled plan (BGP, FILTER, aggregates, ...): id columns joined by polars |
| `panes.py` | aggregates kept per pane (gcd of RANGE and STEP) and merged per report, where merging is exact |
| `materialize.py` | RDFS / OWL 2 RL with expiration times, a delta table per micro-batch |
| `reason.py` | `rsp-plugin reason`'s replay: blocks in, the output written from the engine's changes |
| `replay.py` | `rsp-plugin query`'s replay of a `.tnt` file, a block at a time |

The per-fact path (`rsp_plugin.query`, `rsp_plugin.reasoning`, `rsp_plugin.lars`)
stays the reference and serves small pushes; both give the same results.
"""

from __future__ import annotations

import os
from typing import MutableMapping

#: polars' threads for the processes rsp_plugin starts and configures (the command line, Spark's Python
#: workers): one core, unless the user set POLARS_MAX_THREADS; the engine is one process among many
#: (Spark runs one worker per task slot). Embedded, the process is the caller's: nothing is set.
POLARS_THREADS = "1"
#: numpy's BLAS (OpenBLAS) threads for the same processes, unless the user set OPENBLAS_NUM_THREADS:
#: rsp_plugin calls no BLAS routine, and each thread OpenBLAS starts when numpy is imported spins
#: about 0.1 s of CPU before it sleeps (60 ms of a short `rsp-plugin query` on 2 cores)
BLAS_THREADS = "1"


def one_core(environment: MutableMapping[str, str] = os.environ) -> str:
    """Set POLARS_MAX_THREADS to `POLARS_THREADS` and OPENBLAS_NUM_THREADS to `BLAS_THREADS` unless
    the user did; polars' value in force.

    polars and OpenBLAS read them once, when first imported, so this runs where an engine is
    configured, before that: the command line's `main`, `rsp_plugin.spark.spark_session` (for the
    workers' polars)."""
    environment.setdefault("OPENBLAS_NUM_THREADS", BLAS_THREADS)
    return environment.setdefault("POLARS_MAX_THREADS", POLARS_THREADS)
