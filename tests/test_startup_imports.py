"""What `rsp-plugin query` on a 3-line stream does not import (issue 29, start-up): pyarrow.compute
(~50 ms of CPU at import) and pandas, which a short stream's blocks never need."""

import subprocess
import sys

from rsp_plugin.bench import startup

NOT_NEEDED = ("pyarrow.compute", "pandas")


def test_a_short_query_imports_neither_pyarrow_compute_nor_pandas(tmp_path):
    command = startup.commands(tmp_path)["query"]
    arguments = command[command.index("rsp_plugin.cli") + 1:]
    script = ("import runpy, sys\n"
              f"sys.argv = ['rsp-plugin', *{arguments!r}]\n"
              "try:\n    runpy.run_module('rsp_plugin.cli', run_name='__main__')\n"
              "except SystemExit as end:\n    assert not end.code, end.code\n"
              f"print('imported:', [name for name in {NOT_NEEDED!r} if name in sys.modules])\n")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert len(lines) == 3 and '"avg"' in lines[0]  # the window's two reports
    assert lines[-1] == "imported: []"
