"""A real service for tests: uvicorn on a free loopback port, in a thread of the test process."""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import threading
import time
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import quote

ROOT = Path(__file__).parent.parent
CSRBENCH = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
STREAM = "http://ex.org/csrbench"
#: the Content-Type of a push of timestamped N-Triples (a POST must name one: rsp_plugin/service/guard.py)
TNT = {"content-type": "application/x-tnt"}


def free_port() -> int:
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    return port


@contextmanager
def running_service(settings=None, wrap=None, **options):
    """Yields the base URL of a service running `create_app(settings)` (inside `wrap(app)`, when given,
    e.g. a recorder of requests); stops it after."""
    import uvicorn

    from rsp_plugin.service import ServiceSettings, create_app, uvicorn_options

    port = free_port()
    settings = settings or ServiceSettings()
    app = create_app(settings, **options)
    config = uvicorn.Config(wrap(app) if wrap else app, log_level="critical",
                            **{**uvicorn_options(settings), "host": "127.0.0.1", "port": port,
                               "timeout_graceful_shutdown": 1})
    server = uvicorn.Server(config)
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.time() + 20
    while not server.started:
        if time.time() > deadline or not thread.is_alive():
            raise RuntimeError("the service did not start")
        time.sleep(0.02)
    try:
        yield f"http://127.0.0.1:{port}", app
    finally:
        server.should_exit = True
        thread.join(10)


def path(iri: str) -> str:
    return quote(iri, safe="")


def cli_lines(query: Path, *streams: str) -> list[dict]:
    """What `rsp-plugin query` prints (JSON lines) for the same query and streams."""
    args = [sys.executable, "-m", "rsp_plugin.cli", "query", str(query), "-q"]
    for stream in streams:
        args += ["--stream", stream]
    done = subprocess.run(args, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return [json.loads(line) for line in done.stdout.splitlines() if line.strip()]


def bare(result: dict) -> dict:
    """A service report without the service's own members: the command line's line."""
    return {key: value for key, value in result.items() if key not in ("query", "seq", "latency_ms")}
