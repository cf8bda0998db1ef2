"""`rsp-plugin query` on a 3-line stream before its stream matters (issue 29, start-up): it imports
nothing it does not use (pyarrow: the block readers', ~20 ms of CPU at import; pyarrow.compute, ~30 ms, and
numpy.ma, ~10 ms, by no path; polars, ~0.1-0.2 s; pandas, ~0.3 s; the benchmarks), numpy's BLAS runs one thread (each other one spins ~0.1 s of CPU at start),
and the objects its start made are frozen out of the garbage collector's scans
(rsp_plugin/cli/startup.py) only when the process is the command."""

import gc
import json
import os
import subprocess
import sys

import pytest

from rsp_plugin.bench import startup
from rsp_plugin.cli import main

#: what a short query does not use, and so must not import
NOT_NEEDED = ("pandas", "polars",  # (a window this small is joined and grouped by dicts and numpy: `columnar.query`)
              "rsp_plugin.bench",  # (the bench command's options: imported for that command only)
              "re2",  # (REGEX and REPLACE's engine: imported by a query's first pattern)
              "xml.sax.saxutils",  # (the sparql-xml writer's escapes)
              "pyarrow.compute",  # (the block reader calls its kernels by name: `columnar.kernels`)
              "numpy.ma")  # (np.unique imports it: `core.arrays.unique_sorted`)
#: what the block way imports, which a file this short is not read by (`runtime.replay.BLOCK_REPLAY_BYTES`)
BLOCK_WAY = ("pyarrow", "rsp_plugin.columnar.replay")


@pytest.mark.parametrize("way", ["elements", "blocks"])
def test_a_short_query_imports_nothing_it_does_not_use_and_freezes_its_start(way, tmp_path):
    """(What the process holds is said by an atexit handler: the command's end runs them, then ends the
    process without the interpreter's teardown, which would have said `torn down`.)"""
    command = startup.commands(tmp_path)["query"]
    arguments = command[command.index("rsp_plugin.cli") + 1:]
    not_needed = NOT_NEEDED + (BLOCK_WAY if way == "elements" else ())
    script = ("import atexit, gc, os, runpy, sys\n"
              + ("import rsp_plugin.runtime.replay\nrsp_plugin.runtime.replay.BLOCK_REPLAY_BYTES = 0\n"
                 if way == "blocks" else "")
              + "class Marker:\n    def __del__(self):\n        print('torn down', flush=True)\n"
              "marker = Marker()\n"
              "def said():\n"
              f"    print('imported:', [name for name in {not_needed!r} if name in sys.modules])\n"
              f"    print('block way:', all(name in sys.modules for name in {BLOCK_WAY!r}))\n"
              "    print('collector:', gc.isenabled(), gc.get_freeze_count() > 10000)\n"
              "    print('blas threads:', os.environ.get('OPENBLAS_NUM_THREADS'))\n"
              "atexit.register(said)\n"
              f"sys.argv = ['rsp-plugin', *{arguments!r}]\n"
              "runpy.run_module('rsp_plugin.cli', run_name='__main__')\n")
    environment = {key: value for key, value in os.environ.items() if key != "OPENBLAS_NUM_THREADS"}
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120, check=False,
                          env=environment)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 6 and '"avg"' in lines[0]  # the window's two reports
    assert lines[2:] == ["imported: []", f"block way: {way == 'blocks'}", "collector: True True",
                         "blas threads: 1"]  # (numpy's OpenBLAS on one thread: `columnar.one_core`)


END = ("import atexit, sys, threading\n"
       "from rsp_plugin.cli.startup import end_process\n"
       "class Marker:\n    def __del__(self):\n        print('torn down', flush=True)\n"
       "marker = Marker()\n"
       "atexit.register(lambda: print('atexit'))\n"
       "print('out', end='')  # (still in stdout's buffer)\n"
       "{before}\n"
       "end_process(3)\n"
       "{after}\n"
       "print('returned', file=sys.stderr)\n"
       "sys.exit(4)\n")


@pytest.mark.parametrize("before, after, out, status", [
    ("", "", ["outatexit"], 3),  # stdout flushed, atexit handlers run, no teardown, the command's status
    ("go = threading.Event()\nthreading.Thread(target=go.wait).start()", "go.set()",
     ["outatexit", "torn down"], 4),  # a thread still runs: Python's exit (which waits for it)
    ("sys.setprofile(lambda *_: None)", "sys.setprofile(None)", ["outatexit", "torn down"], 4),  # a profiler
    ("sys.stdout.close()", "", ["out"], 4),  # stdout cannot be flushed: Python's exit (which says so)
], ids=["ends", "thread", "profiler", "closed-stdout"])
def test_the_command_s_end_skips_the_teardown_only_when_nothing_changes(before, after, out, status):
    done = subprocess.run([sys.executable, "-c", END.format(before=before, after=after)], capture_output=True,
                          text=True, timeout=60, check=False)
    assert (done.stdout.splitlines(), done.returncode) == (out, status), done.stderr
    assert done.stderr.startswith("returned\n") == (status == 4), done.stderr


def test_a_caller_s_main_keeps_its_collector_as_it_is(tmp_path, capsys):
    arguments = startup.commands(tmp_path)["query"]
    arguments = arguments[arguments.index("rsp_plugin.cli") + 1:]
    frozen = gc.get_freeze_count()
    assert main(arguments) == 0
    assert gc.isenabled() and gc.get_freeze_count() == frozen
    assert [json.loads(line)["t"] for line in capsys.readouterr().out.splitlines()] == [5000, 10000]
