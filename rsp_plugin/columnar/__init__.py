"""The batch path: streams read, windowed, queried and materialized a block at a time.

Python orchestrates, native columnar kernels (polars, pyarrow, numpy) do the
per-row work; per distinct term some Python is fine, per row it is not.

| module | idea |
| --- | --- |
| `encode.py` | a column of written terms -> a column of ids, one dictionary lookup per distinct term |
| `blocks.py` | `.tnt` / N-Triples / N-Quads / `.stream` files read a block of lines at a time |
| `columns.py` | windows whose content is id columns (time and count windows) |
| `query.py` | the columnar backend of a query's compiled plan (BGP, FILTER, aggregates, ...): id columns joined by polars |
| `materialize.py` | RDFS / OWL 2 RL with expiration times, a delta table per micro-batch |
| `reason.py` | `rsp-plugin reason`'s replay: blocks in, the output written from the engine's changes |
| `replay.py` | `rsp-plugin query`'s replay of a `.tnt` file, a block at a time |

The per-fact path (`rsp_plugin.query`, `rsp_plugin.reasoning`, `rsp_plugin.lars`)
stays the reference and serves small pushes; both give the same results.
"""

import os as _os

# One core unless the user says otherwise: the engine is one process among many.
_os.environ.setdefault("POLARS_MAX_THREADS", "1")
