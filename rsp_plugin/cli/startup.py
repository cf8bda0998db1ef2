"""What a command does before its stream matters: Python's cyclic garbage collector paused meanwhile.

Importing rdflib, polars and pyarrow, loading the query's parser tables and reading the query
make ~90,000 objects, nearly all alive as long as the process, and the collector scans them
again and again (60 ms of the CPU of `rsp-plugin query` on a 3-line stream, 2 ms this way).
When the process is the command (`rsp-plugin ...`, `python -m rsp_plugin.cli ...`), the collector
is off while the command starts, and what the start made is then frozen (`gc.freeze`: never
scanned again; its cyclic garbage, a few thousand objects, is kept). A caller's `main([...])`
(the tests) keeps its collector as it is.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

_process_is_the_command = False


@contextmanager
def command_process(whole: bool) -> Iterator[None]:
    """`main`'s: within the block, `whole` says whether the process is this command."""
    global _process_is_the_command
    before, _process_is_the_command = _process_is_the_command, whole
    try:
        yield
    finally:
        _process_is_the_command = before


@contextmanager
def collector_paused() -> Iterator[None]:
    """A command's start: the collector off within the block, then what the block made frozen
    (if the process is the command and the collector was on)."""
    if not (_process_is_the_command and gc.isenabled()):
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()
        gc.enable()
