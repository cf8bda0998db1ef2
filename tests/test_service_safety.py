"""The service against a hostile client: time bounded by admission, requests from other origins and
hosts refused, the token exact, memory bounded in bytes, every bad request a 4xx naming what is wrong."""

from __future__ import annotations

import json
import time
import warnings

import pytest

from rsp_plugin.service import ServiceSettings, create_app
from service_helpers import path

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
from starlette.testclient import TestClient  # noqa: E402

S = "http://ex/s"
SPARQL = {"content-type": "application/sparql-query"}
TNT = {"content-type": "application/x-tnt"}
EVERY_SECOND = (f"REGISTER QUERY q AS SELECT * FROM STREAM <{S}> [RANGE 1s STEP 1s] "
                "WHERE { ?s ?p ?o }")


@pytest.fixture
def client():
    with TestClient(create_app(ServiceSettings()), raise_server_exceptions=False) as client:
        yield client


def line(t, s="a") -> str:
    return f"{t} <http://ex/{s}> <http://ex/p> <http://ex/b> .\n"


def push(client, body: str, query: str = "", headers=TNT):
    return client.post(f"/streams/{path(S)}{query}", content=body, headers=headers)


# time never moves past what admission took ---------------------------------------------------------------


def test_an_element_set_aside_moves_no_time(client):
    client.put(f"/streams/{path(S)}")
    assert client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL).status_code == 201
    assert push(client, line(1000)).json()["watermark"] == 1000
    started = time.monotonic()
    far = push(client, line(99999999999999))
    assert time.monotonic() - started < 5
    assert far.json()["accepted"] == 0 and far.json()["watermark"] == 1000
    assert "--max-gap" in far.json()["late"][0]["reason"]
    # a body whose good lines come with a far one: the good ones move time, the far one does not
    mixed = push(client, line(2000) + line(99999999999999, "c") + line(3000))
    assert mixed.json()["accepted"] == 2 and mixed.json()["watermark"] == 3000
    behind = push(client, line(-9223372036854775807))  # before the timeline: set aside, no time moved
    assert behind.json()["accepted"] == 0 and behind.json()["watermark"] == 3000
    assert client.get(f"/streams/{path(S)}").json()["latest"] == 3000
    assert [r["t"] for r in client.get("/queries/q/results?after=0").json()["results"]] == [2000, 3000]


def test_the_watermark_and_t_obey_the_gap_bound(client):
    client.put(f"/streams/{path(S)}")
    client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
    push(client, line(1000))
    for t in ("1e14", "100000000000000"):
        refused = client.post("/watermark", content=f'{{"t": {t}}}', headers={"content-type": "application/json"})
        assert refused.status_code == 400 and "max gap 100000 windows of 1000 ms" in refused.json()["error"]
    for bad in ('{"t": Infinity}', '{"t": 1e400}', '{"t": true}', '{"t": "5"}', '[1]', '{"t": 1.5}', "\xff"):
        answer = client.post("/watermark", content=bad, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and "TIME an integer" in answer.json()["error"], bad
    for t in ("1e23", "100000000000000000000000", "9" * 5000):
        refused = push(client, "<http://ex/a> <http://ex/p> <http://ex/b> .\n", f"?t={t}",
                       {"content-type": "application/n-triples"})
        assert refused.status_code == 400 and len(refused.json()["error"]) < 300, t
        assert "--max-gap" in refused.json()["error"] or "integer" in refused.json()["error"]
    assert client.post("/watermark", json={"t": 5000}).json()["watermark"] == 5000
    assert client.get("/system").json()["watermark"] == 5000
    # no bound asked: the option says so
    with TestClient(create_app(ServiceSettings(max_gap=None))) as free:
        free.put(f"/streams/{path(S)}")
        free.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
        push(free, line(1000))
        assert push(free, line(200_000_000)).json()["accepted"] == 1


# a busy engine stops with the process ------------------------------------------------------------------


def test_sigterm_ends_the_service_while_its_engine_is_busy():
    import os
    import signal
    import subprocess
    import sys

    import httpx

    from service_helpers import ROOT, free_port

    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "rsp_plugin.cli", "serve", "--port", str(port),
                               "--max-gap", "none"], env={**os.environ, "PYTHONPATH": str(ROOT)},
                              stderr=subprocess.PIPE, text=True)
    try:
        http = httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=30)
        deadline = time.monotonic() + 30
        while True:
            try:
                http.get("/system")
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, "the service did not start"
                time.sleep(0.05)
        http.put(f"/streams/{path(S)}")
        http.put("/queries/q", headers=SPARQL, content=EVERY_SECOND.replace("RANGE 1s STEP 1s", "RANGE 1ms STEP 1ms"))
        push(http, line(0))
        with pytest.raises(httpx.ReadTimeout):  # ten billion windows to walk: the engine is busy for good
            http.post(f"/streams/{path(S)}", content=line(10_000_000_000), headers=TNT, timeout=1)
        started = time.monotonic()
        server.send_signal(signal.SIGTERM)
        server.wait(15)
        assert time.monotonic() - started < 8
        assert "Traceback" not in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
