"""A real multi-process Spark cluster on this machine, shared by the tests that need one.

Spark's `local-cluster[N,C,M]` master starts a standalone master and N workers
inside the driver's JVM, and each worker starts its executor as a JVM process
of its own, with Python workers of its own: what runs on the executors really
runs in other processes, and a plan that only worked because driver and
executors share memory fails here. Starting one costs tens of seconds, so one
child process holds a session for every test that asks (`ClusterWorker`):
a test sends it a command line (`rsp-plugin query ...`) and gets back its exit
status, stdout and stderr, and compares them with the local engine's, run in
the test's own process.

    python tests/spark_cluster.py serve 'local-cluster[2,1,1024]'    # the child: JSON lines in, JSON lines out
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

MASTER = "local-cluster[2,1,1024]"
_REPLY = "@@rsp-cluster-reply@@ "
ROOT = Path(__file__).parent.parent


class ClusterWorker:
    """A child process with a Spark session on a local cluster; `run(argv)` runs `rsp-plugin` there."""

    def __init__(self, master: str = MASTER, conf: dict | None = None):
        import tempfile

        env = dict(os.environ)
        env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
        self.log = tempfile.NamedTemporaryFile(prefix="rsp-cluster-", suffix=".log", delete=False)
        self.process = subprocess.Popen(
            [sys.executable, __file__, "serve", master, json.dumps(conf or {})],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=self.log, text=True, cwd=ROOT,
            env=env, start_new_session=True)
        self.started = self._reply()

    def _reply(self) -> dict:
        while True:
            line = self.process.stdout.readline()
            if not line:
                self.process.wait()
                tail = Path(self.log.name).read_text(errors="replace")[-3000:]
                raise RuntimeError(f"the cluster process ended (exit {self.process.returncode}):\n{tail}")
            if line.startswith(_REPLY):
                return json.loads(line[len(_REPLY):])

    def run(self, argv: list, cwd: str | Path | None = None) -> tuple[int, str, str]:
        self.process.stdin.write(json.dumps({"argv": [str(a) for a in argv], "cwd": str(cwd or ROOT)}) + "\n")
        self.process.stdin.flush()
        reply = self._reply()
        return reply["status"], reply["out"], reply["err"]

    def executors(self) -> int:
        """How many executors (processes other than the driver) the session has."""
        self.process.stdin.write(json.dumps({"executors": True}) + "\n")
        self.process.stdin.flush()
        return self._reply()["executors"]

    def close(self) -> None:
        if self.process.poll() is None:
            try:
                self.process.stdin.close()
                self.process.wait(timeout=60)
            except (OSError, subprocess.TimeoutExpired):
                os.killpg(self.process.pid, 9)
                self.process.wait()
        self.log.close()
        Path(self.log.name).unlink(missing_ok=True)


def _serve(master: str, conf: dict) -> None:
    import contextlib
    import io
    import time
    import traceback

    from rsp_plugin.cli.command_line import main
    from rsp_plugin.spark import spark_session

    real_out = sys.stdout
    started = time.perf_counter()
    spark = spark_session(master, conf=conf)

    def reply(value: dict) -> None:
        real_out.write(_REPLY + json.dumps(value) + "\n")
        real_out.flush()

    reply({"master": spark.sparkContext.master, "seconds": time.perf_counter() - started})
    for line in sys.stdin:
        request = json.loads(line)
        if request.get("executors"):
            status = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size() - 1
            reply({"executors": status})
            continue
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(request["cwd"]):
            try:
                status = main(request["argv"])
            except SystemExit as exit:
                status = exit.code if isinstance(exit.code, int) else 1
            except Exception:  # noqa: BLE001 - the test shows it
                traceback.print_exc()
                status = 99
        reply({"status": status, "out": out.getvalue(), "err": err.getvalue()})
    spark.stop()


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "serve":
        _serve(sys.argv[2], json.loads(sys.argv[3]) if len(sys.argv) > 3 else {})
