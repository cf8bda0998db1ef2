"""What a command does before its stream matters and after its output is out: Python's cyclic garbage
collector paused while the command starts, and the interpreter's teardown skipped at its end.

Importing rdflib, polars and pyarrow, loading the query's parser tables and reading the query
make ~90,000 objects, nearly all alive as long as the process, and the collector scans them
again and again (60 ms of the CPU of `rsp-plugin query` on a 3-line stream, 2 ms this way).
When the process is the command (`rsp-plugin ...`, `python -m rsp_plugin.cli ...`), the collector
is off while the command starts, and what the start made is then frozen (`gc.freeze`: never
scanned again; its cyclic garbage, a few thousand objects, is kept). A caller's `main([...])`
(the tests) keeps its collector as it is.

At the end of a process that is the command, Python would free, one by one, the ~500,000 objects
its imports made (modules, functions, classes, rdflib's grammar, polars' and numpy's wrappers):
~8 ms of the CPU of `rsp-plugin query` on a 3-line stream, for nothing, as the process is gone
next. `end_process` does what a normal exit does first (the atexit handlers, the standard
streams flushed) and ends the process with the command's status (`os._exit`); it leaves the exit
to Python when that could differ: another thread still runs (Python would wait for it), a tracer
or profiler watches (coverage, cProfile: they write their results after the command), or the
standard streams cannot be flushed (Python reports it, as it would have).
"""

from __future__ import annotations

import atexit
import gc
import os
import sys
import threading
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


def end_process(status: int) -> None:
    """End the process that is the command with `status`, without the interpreter's teardown (the
    module's docstring); returns (and Python's exit follows) when that could change what happens."""
    if not isinstance(status, int) or threading.active_count() > 1 or _watched() or not _flushed():
        return
    atexit._run_exitfuncs()  # (as a normal exit does first; they are then no longer registered)
    if _flushed():  # (what the handlers wrote)
        os._exit(status)


def _flushed() -> bool:
    """The standard streams flushed (False: a reader gone, a stream closed; Python's exit says so)."""
    try:
        for stream in (sys.stdout, sys.stderr):
            if stream is not None:
                stream.flush()
    except (OSError, ValueError):
        return False
    return True


def _watched() -> bool:
    """A tracer or profiler watches the process (it writes what it found after the command)."""
    if sys.gettrace() is not None or sys.getprofile() is not None:
        return True
    monitoring = getattr(sys, "monitoring", None)  # (Python 3.12: coverage may watch this way)
    return monitoring is not None and any(monitoring.get_tool(tool) for tool in range(6))
