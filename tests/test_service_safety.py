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
    app = create_app(ServiceSettings())
    with TestClient(app, base_url="http://localhost", raise_server_exceptions=False) as client:
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


def test_a_body_cannot_climb_past_the_gap_step_by_step():
    """Each element within the gap of the one before, the body as a whole far ahead: the bound is measured
    from the watermark at the request's start, so one request walks at most --max-gap windows."""
    with TestClient(create_app(ServiceSettings(max_gap=100)), base_url="http://localhost") as small:
        small.put(f"/streams/{path(S)}")
        small.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
        assert push(small, line(1000)).json()["watermark"] == 1000
        climb = push(small, "".join(line(1000 + k * 90_000) for k in range(1, 2000)))
        assert climb.json()["accepted"] == 1 and climb.json()["watermark"] == 91_000
        assert "ahead of the watermark 1000 (max gap 100 windows = 100000 ms; --max-gap)" in \
            climb.json()["late"][0]["reason"]
        assert len(small.get("/queries/q/results?after=0").json()["results"]) <= 101
        # the next request reaches as far again from where the watermark now is, and no further
        again = push(small, "".join(line(91_000 + k * 50_000) for k in range(1, 5)))
        assert again.json()["accepted"] == 2 and again.json()["watermark"] == 191_000
    # before the first report the bound counts from the first element taken
    with TestClient(create_app(ServiceSettings(max_gap=100)), base_url="http://localhost") as two:
        for stream in (S, S + "2"):
            two.put(f"/streams/{path(stream)}")
        two.put("/queries/q", content=EVERY_SECOND.replace("WHERE", f"FROM STREAM <{S}2> [RANGE 1s STEP 1s] WHERE"),
                headers=SPARQL)
        assert push(two, line(1000)).json()["watermark"] is None  # the other stream holds time back
        climb = push(two, "".join(line(1000 + k * 90_000) for k in range(1, 5)))
        assert climb.json()["accepted"] == 1 and "ahead of the first element 1000" in climb.json()["late"][0]["reason"]


def test_a_finer_step_registered_later_does_not_make_one_request_walk_the_backlog():
    """Elements taken under a 1 h STEP while another stream held time back; then the only query left
    steps by 1 s: time moves on by at most --max-gap of its windows per request."""
    hour = "[RANGE 1h STEP 1h]"
    with TestClient(create_app(ServiceSettings(max_gap=100)), base_url="http://localhost") as client:
        for stream in (S, S + "2"):
            client.put(f"/streams/{path(stream)}")
        client.put("/queries/hourly", headers=SPARQL, content=EVERY_SECOND.replace("QUERY q", "QUERY hourly").replace(
            "[RANGE 1s STEP 1s]", f"{hour} FROM STREAM <{S}2> {hour}"))
        push(client, line(0))
        client.post(f"/streams/{path(S + '2')}", content=line(0), headers=TNT)
        assert push(client, line(300_000_000)).json()["accepted"] == 1  # 83 h: within 100 windows of 1 h
        client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
        assert client.delete("/queries/hourly").status_code == 204
        started = time.monotonic()
        moved = push(client, "")
        assert moved.json()["watermark"] == 100_000 and time.monotonic() - started < 5
        assert push(client, "").json()["watermark"] == 200_000


def test_the_watermark_and_t_obey_the_gap_bound(client):
    client.put(f"/streams/{path(S)}")
    client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
    push(client, line(1000))
    for t in ("1e14", "100000000000000"):
        refused = client.post("/watermark", content=f'{{"t": {t}}}', headers={"content-type": "application/json"})
        assert refused.status_code == 400 and refused.json()["error"] == (
            "watermark: 100000000000000 is 99999999999000 ms ahead of the watermark 1000 (max gap 100000 windows "
            "= 100000000 ms; --max-gap); refused")
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
    # the option sets the bound, or lifts it
    for max_gap, accepted in ((1000, 0), (None, 1)):
        with TestClient(create_app(ServiceSettings(max_gap=max_gap)), base_url="http://localhost") as other:
            other.put(f"/streams/{path(S)}")
            other.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
            push(other, line(1000))
            assert push(other, line(3_000_000)).json()["accepted"] == accepted


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
        server.wait(20)
        assert time.monotonic() - started < 10
        assert "Traceback" not in server.stderr.read()
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()


# other sites: Host, Origin, cross-site content types --------------------------------------------------------


def test_a_name_the_service_does_not_answer_to_is_refused(client):
    for host in ("evil.example", "evil.example:8000", "127.0.0.1.evil.example", "localhost.evil.example",
                 "a@127.0.0.1", "localhost:x", "[::1"):
        answer = client.get("/streams", headers={"host": host})
        assert answer.status_code == 403 and "--allow-host" in answer.json()["error"], host
        assert client.get("/", headers={"host": host}).status_code == 403  # the page too
    for host in ("localhost", "localhost:8000", "127.0.0.1:8000", "[::1]:8000", "127.0.0.2"):
        assert client.get("/streams", headers={"host": host}).status_code == 200, host
    settings = ServiceSettings(host="0.0.0.0", token="s3cret", allow_hosts=("rsp.example.org",))
    with TestClient(create_app(settings), base_url="http://rsp.example.org") as named:
        bearer = {"authorization": "Bearer s3cret"}
        assert named.get("/streams", headers=bearer).status_code == 200
        assert named.get("/streams", headers={**bearer, "host": "192.0.2.7:8000"}).status_code == 200  # any address
        assert named.get("/streams", headers={**bearer, "host": "other.example.org"}).status_code == 403


def test_a_page_of_another_origin_is_refused_and_the_own_page_is_not(client):
    own = {"origin": "http://localhost"}
    assert client.put(f"/streams/{path(S)}", headers=own).status_code == 201
    for origin in ("http://localhost:9000", "https://evil.example", "null", "http://localhost.evil.example",
                   "file://", "http://127.0.0.1"):
        for method, url, kwargs in (("GET", "/streams", {}), ("POST", "/queries", {"content": EVERY_SECOND}),
                                    ("POST", f"/streams/{path(S)}", {"content": line(1000)}),
                                    ("POST", "/finish", {}), ("OPTIONS", "/queries", {})):
            answer = client.request(method, url, headers={"origin": origin, "content-type": "application/json"},
                                    **kwargs)
            assert answer.status_code == 403 and "--allow-origin" in answer.json()["error"], (origin, method, url)
    from starlette.websockets import WebSocketDisconnect

    with pytest.raises(WebSocketDisconnect):  # a WebSocket push from another site's page
        with client.websocket_connect(f"/streams/{path(S)}/ws", headers={"origin": "https://evil.example"}) as socket:
            socket.send_text(line(1000))
            socket.receive_json()
    assert client.get("/queries").json() == [] and client.get(f"/streams/{path(S)}").json()["triples"] == 0
    assert client.get("/system").json()["finished"] is False
    # an allowed origin gets in, and is answered CORS headers (its page may read the answers)
    allowed = ServiceSettings(allow_origins=("https://dash.example.org",))
    with TestClient(create_app(allowed), base_url="http://localhost") as dash:
        origin = {"origin": "https://dash.example.org"}
        answer = dash.get("/streams", headers=origin)
        assert answer.status_code == 200 and answer.headers["access-control-allow-origin"] == origin["origin"]
        preflight = dash.options("/queries", headers={**origin, "access-control-request-method": "POST",
                                                      "access-control-request-headers": "content-type"})
        assert preflight.status_code == 200 and "POST" in preflight.headers["access-control-allow-methods"]
        assert dash.get("/streams", headers={"origin": "https://other.example.org"}).status_code == 403


def test_state_changing_requests_need_a_type_no_page_of_another_site_can_send(client):
    cross_site = ("text/plain", "text/plain;charset=UTF-8", "application/x-www-form-urlencoded",
                  "multipart/form-data; boundary=x", "TEXT/PLAIN")
    for media in cross_site:
        for method, url, body, hint in (
                ("POST", "/queries", EVERY_SECOND, "application/sparql-query"),
                ("PUT", "/queries/q", EVERY_SECOND, "application/sparql-query"),
                ("PUT", f"/streams/{path(S)}", "", "application/x-tnt"),
                ("POST", f"/streams/{path(S)}", line(1000), "application/x-tnt"),
                ("POST", "/finish", "", "application/json"), ("POST", "/watermark", '{"t": 5}', "application/json"),
                ("PUT", "/rules/urn:r", "p :- q .", "text/x-lars"), ("PUT", "/graphs/urn:g", "", "text/turtle")):
            answer = client.request(method, url, content=body, headers={"content-type": media})
            assert answer.status_code == 415, (media, method, url)
            assert f"-H 'Content-Type: {hint}'" in answer.json()["error"], answer.json()
    for url in ("/finish", f"/streams/{path(S)}"):  # a POST with no type at all: a page may send that too
        assert client.post(url).status_code == 415
    assert client.get("/queries").json() == [] and client.get("/streams").json() == []
    assert client.get("/system").json()["finished"] is False
    # the types the docs show are taken; PUT and DELETE without a body need none
    assert client.put(f"/streams/{path(S)}").status_code == 201
    assert client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL).status_code == 201
    assert push(client, line(1000)).status_code == 200
    assert client.delete("/queries/q").status_code == 204
    assert client.post("/finish", headers={"content-type": "application/json"}).json()["finished"]
    # with the token (in the header), any type: a page of another site cannot send the header without asking
    settings = ServiceSettings(token="s3cret")
    with TestClient(create_app(settings), base_url="http://localhost") as tokened:
        bearer = {"authorization": "Bearer s3cret"}
        assert tokened.put(f"/streams/{path(S)}", headers=bearer).status_code == 201
        text = tokened.post(f"/streams/{path(S)}", content=line(1000), headers={**bearer, "content-type": "text/plain"})
        assert text.status_code == 200 and text.json()["accepted"] == 1
        in_the_url = tokened.post(f"/streams/{path(S)}?access_token=s3cret", content=line(2000),
                                  headers={"content-type": "text/plain"})
        assert in_the_url.status_code == 415


# the token, the address, the webhook prefixes, the rate ------------------------------------------------------


def rsp(*args):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *args], capture_output=True, text=True, timeout=60)


def test_a_blank_token_is_refused_at_start_and_the_token_is_compared_exactly():
    for token in ("", " ", "\xa0", "\t"):
        done = rsp("serve", "--host", "0.0.0.0", "--token", token)
        assert done.returncode == 2 and done.stderr.count("\n") == 1 and "the token is empty or blank" in done.stderr
    for token in ("s3cret ", "s3\ncret"):
        with pytest.raises(ValueError, match="cannot carry it intact"):
            ServiceSettings(token=token).check()
    with TestClient(create_app(ServiceSettings(token="s3cret")), base_url="http://localhost") as client:
        for given in (b"Bearer \xa0", b"Bearer s3cret\xa0", b"Bearer  s3cret", b"Bearer S3CRET", b"Bearer s3cre",
                      b"Bearer s3cretx", b"Bearer", b"Basic s3cret", b"s3cret"):
            assert client.get("/streams", headers={"authorization": given}).status_code == 401, given
        assert client.get("/streams?access_token=%C2%A0").status_code == 401
        assert client.get("/streams?access_token=s3cret%20").status_code == 401
        for given in (b"Bearer s3cret", b"bearer s3cret"):
            assert client.get("/streams", headers={"authorization": given}).status_code == 200


def test_host_as_an_ipv6_address_in_brackets():
    import os
    import subprocess
    import sys

    import httpx

    from service_helpers import ROOT, free_port

    assert rsp("serve", "--host", "[localhost]").stderr == \
        "rsp-plugin: --host '[localhost]': not an IP address or a host name\n"
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "rsp_plugin.cli", "serve", "--host", "[::1]", "--port", str(port)],
                              env={**os.environ, "PYTHONPATH": str(ROOT)}, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                answer = httpx.get(f"http://[::1]:{port}/system", timeout=5)
                break
            except httpx.TransportError:
                assert time.monotonic() < deadline and server.poll() is None, server.stderr.read()
                time.sleep(0.05)
        assert answer.status_code == 200 and answer.json()["streams"] == 0
    finally:
        server.terminate()
        server.wait(15)
    assert f"serving on http://[::1]:{port}/" in server.stderr.read()


def test_webhook_prefixes_are_not_escaped_by_backslashes_or_encodings():
    settings = ServiceSettings(webhook_allow=("http://127.0.0.1:9000/hooks/",))
    assert settings.webhook_allowed("http://127.0.0.1:9000/hooks/a")
    assert settings.webhook_allowed("http://127.0.0.1:9000/hooks/a%20b")
    for url in ("http://127.0.0.1:9000/hooks/..\\other", "http://127.0.0.1:9000/hooks\\..\\other",
                "http://127.0.0.1:9000/hooks/..%5Cother", "http://127.0.0.1:9000/hooks/..%5cother",
                "http://127.0.0.1:9000/hooks/%255C../other", "http://127.0.0.1:9000/hooks/%252e%252e/other",
                "http://127.0.0.1:9000/hooks/..%2fother", "http://127.0.0.1:9000\\@evil.example/hooks/",
                "http://127.0.0.1:9000/hooks/a b", "http://127.0.0.1:9000/hooks/\x00"):
        assert not settings.webhook_allowed(url), url


def test_x_forwarded_for_does_not_escape_the_rate_unless_the_proxy_is_trusted():
    import httpx

    from service_helpers import running_service

    def statuses(settings):
        with running_service(settings) as (base, _):
            with httpx.Client(base_url=base, timeout=10) as http:
                return [http.get("/streams", headers={"x-forwarded-for": f"203.0.113.{k}"}).status_code
                        for k in range(12)]

    assert 429 in statuses(ServiceSettings(rate=1, burst=4))
    assert set(statuses(ServiceSettings(rate=1, burst=4, trusted_proxies=("127.0.0.1",)))) == {200}


# memory in bytes; the queries a service takes ----------------------------------------------------------------


def many_rows(client, count: int = 40, per: int = 30) -> None:
    """`count` reports of `per` rows each (about 2.5 kB of JSON apiece)."""
    client.put(f"/streams/{path(S)}")
    client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
    body = "".join(line(1000 * k + j, f"a{j}") for k in range(count + 1) for j in range(per))
    assert push(client, body).json()["accepted"] == (count + 1) * per


def test_history_and_result_pages_are_bounded_in_bytes():
    settings = ServiceSettings(history_bytes=20_000, page_bytes=6_000)
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        many_rows(client)
        state = client.app.state.live.queries["q"]
        sizes = [len(data) for _, data in state.history]
        assert 1500 < sizes[0] < 3000 and sum(sizes) <= 20_000 and state.history_bytes == sum(sizes)
        assert [seq for seq, _ in state.history][-1] == state.seq == 40
        pages, after = [], 0
        while True:
            answer = client.get(f"/queries/q/results?after={after}")
            assert len(answer.content) <= 6_000 + 100
            page = answer.json()
            pages.append(page)
            if not page["more"]:
                break
            after = page["results"][-1]["seq"]
        seqs = [r["seq"] for page in pages for r in page["results"]]
        assert len(pages) >= 3 and seqs == list(range(40 - len(sizes) + 1, 41))
        assert pages[0]["missed"] == 40 - len(sizes) and pages[1]["missed"] == 0 and pages[0]["last"] == 40
        # a report larger than a page still comes, one per page
        with TestClient(create_app(ServiceSettings(page_bytes=100)), base_url="http://localhost") as small:
            many_rows(small, count=3)
            first = small.get("/queries/q/results?after=0").json()
            assert [r["seq"] for r in first["results"]] == [1] and first["more"]


def test_reader_and_webhook_queues_are_bounded_in_bytes():
    import asyncio

    from rsp_plugin.service.observers import Observers

    async def scenario():
        observers = Observers(ServiceSettings(queue_bytes=1000))
        reader = observers.reader(None)
        observers.offer("q", 1, b"x" * 5000)  # one report is always taken, however large
        assert not reader.cut and await reader.next() == (1, b"x" * 5000)
        for seq in range(2, 5):
            observers.offer("q", seq, b"y" * 300)
        assert not reader.cut and reader.waiting_bytes == 900
        observers.offer("q", 5, b"z" * 300)  # 1200 bytes waiting: too far behind
        assert reader.cut and await reader.next() is None
        hook = observers.add_webhook("q", "http://127.0.0.1:9/")
        hook.task.cancel()  # nothing is delivered: reports pile up
        for seq in range(10):
            observers.offer("q", seq, b"w" * 300)
        assert len(hook.queue) == 3 and hook.waiting_bytes == 900 and hook.dropped == 7
        await observers.close()

    asyncio.run(scenario())


def test_a_cap_on_the_queries_registered(client):
    with TestClient(create_app(ServiceSettings(max_queries=3)), base_url="http://localhost") as client:
        client.put(f"/streams/{path(S)}")
        for k in range(3):
            assert client.put(f"/queries/q{k}", content=EVERY_SECOND.replace("QUERY q ", f"QUERY q{k} "),
                              headers=SPARQL).status_code == 201
        refused = client.put("/queries/q3", content=EVERY_SECOND.replace("QUERY q ", "QUERY q3 "), headers=SPARQL)
        assert refused.status_code == 409 and "--max-queries 3" in refused.json()["error"]
        assert client.delete("/queries/q0").status_code == 204
        assert client.put("/queries/q3", content=EVERY_SECOND.replace("QUERY q ", "QUERY q3 "),
                          headers=SPARQL).status_code == 201
        missing = client.get("/queries/none").json()["error"]
        assert "'q1', 'q2', 'q3'" in missing


def test_registering_many_queries_does_not_slow_each_registration():
    """Each registration used to work out the gap bound's unit from every query registered: n^2."""
    import gc

    from rsp_plugin import RSPEngine
    from rsp_plugin.query.syntax import parse_query

    engine = RSPEngine()
    engine.register_stream(S)
    query = parse_query(f"SELECT * FROM STREAM <{S}> [RANGE 1s STEP 1s] WHERE {{ ?s <http://ex/p> ?o }}", "<q>")
    took = []
    gc.collect()
    gc.disable()  # (a collection's pause is not the registrations' work)
    try:
        for block in range(8):
            started = time.process_time()  # (this process's work: the machine's other jobs do not count)
            for k in range(400):
                engine.register_query(query, name=f"q{block}-{k}")
            took.append(time.process_time() - started)
    finally:
        gc.enable()
    assert took[-1] < 2 * took[1] + 0.05, took  # n^2: each block cost more than the one before
    assert engine._gap_unit == 1000
    engine.unregister_query("q0-0")
    assert engine._gap_unit == 1000


# every bad request a 4xx naming what is wrong; text that cannot be encoded never fails an answer -----------------


def test_malformed_json_registrations_are_400s_naming_the_member(client):
    client.put(f"/streams/{path(S)}")
    cases = {
        '{"query": %s, "graphs": [1]}': '"graphs" must be an object',
        '{"query": %s, "rules": 5}': '"rules" must be a string',
        '{"query": %s, "report": 5}': '"report" must be a string',
        '{"query": %s, "dialect": "x"}': "unknown dialect 'x'",
        '{"query": %s, "graphs": {"urn:g": {"data": "x", "format": 5}}}': '"graphs": <urn:g> must be',
        '{"query": %s, "graphs": {"urn:g": 7}}': '"graphs": <urn:g> must be',
        '{"query": %s, "extra": 1}': "unknown member 'extra'",
        '{"query": 5}': '"query" must be a string',
        '{"rules": "p :- q ."}': '"query" must be a string',
        '[%s]': "expected {",
        '"a string"': "expected {",
        '{"query": %s': "not JSON: ",
        '[' * 100_000: "nested too deeply",
        '{"query": "SELECT * WHERE ' + "{" * 5000 + '"}': "<query a>:1:",
    }
    for template, said in cases.items():
        body = template.replace("%s", json.dumps(EVERY_SECOND), 1) if "%s" in template else template
        answer = client.put("/queries/a", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == 400 and said in answer.json()["error"], (template[:60], answer.text[:300])
        assert "\n" not in answer.json()["error"]
    not_utf8 = client.put("/queries/a", content=b'{"query": "\xff"}', headers={"content-type": "application/json"})
    assert not_utf8.status_code == 400 and "not UTF-8" in not_utf8.json()["error"]
    hooks = [client.post("/queries/none/observers", content=body, headers={"content-type": "application/json"})
             for body in ('{"url": 5}', "[1]", '{"url": "http://x/"')]
    assert [hook.status_code for hook in hooks] == [404, 404, 404]  # the query first
    client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
    for body, status in (('{"url": 5}', 400), ('{"url": "http://x/"', 400), ('"http://x/"', 403)):
        answer = client.post("/queries/q/observers", content=body, headers={"content-type": "application/json"})
        assert answer.status_code == status, (body, answer.text)
    for url in ("/queries/q/window?limit=-5", "/queries/q/window?at=x", "/queries/q/results?after=1e3",
                "/queries/q/explain?t=5&item=5", "/queries/q/explain?t=5&item=[[[", "/queries/q/window?window=zzz"):
        assert client.get(url).status_code in (400, 404), url
    graph = client.put("/graphs/urn:g", content="x", headers={"content-type": "image/png"})
    assert graph.status_code == 415 and "cannot read image/png" in graph.json()["error"]
    deep = client.put("/rules/urn:r", content="p :- " + "(" * 5000, headers={"content-type": "text/x-lars"})
    assert deep.status_code == 400 and deep.json()["error"].startswith("<rules urn:r>:1:")


def test_a_body_with_lines_a_reader_fails_on_keeps_its_good_lines(client):
    client.put(f"/streams/{path(S)}")
    client.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
    body = (line(1000, "good1") + '1000 <http://ex/a> <http://ex/p> "\\U00110000" .\n' + line(1000, "good2")
            + '1000 <http://ex/a> <http://ex/p> "\\U8001F600" .\n' + '1000 <http://ex/a> <http://ex/p> <ok' + "\n"
            + line(1000, "good3") + line(2000, "good4"))
    answer = push(client, body)
    assert answer.status_code == 400 and answer.json()["accepted"] == 4
    assert [r["line"] for r in answer.json()["rejected"]] == [2, 4, 5]
    report = client.get("/queries/q/results?after=0").json()["results"]
    assert sorted(b["s"] for b in report[0]["bindings"]) == ["<http://ex/good1>", "<http://ex/good2>",
                                                             "<http://ex/good3>"]
    for document in (json.dumps({"@id": "http://ex/a", "    ex:l": 1}), "[" * 100_000,
                     json.dumps({"@context": {"ex": "http://ex/"}, "@id": "ex:a", "ex:p": "\udc80"})):
        answer = push(client, document, "?t=2500", {"content-type": "application/ld+json"})
        assert answer.status_code in (200, 400) and answer.json()["watermark"] in (2000, 2500), answer.text
    for fmt in ("nt", "nq", "ttl", "trig"):
        mixed = push(client, '<http://ex/a> <http://ex/p> "\\U00110000" .\n<http://ex/a> <http://ex/p> <http://ex/b> .',
                     f"?t=2500&format={fmt}", {"content-type": "application/json"})
        assert mixed.status_code in (200, 400) and "error" not in mixed.json(), (fmt, mixed.text)


def test_a_lone_surrogate_never_fails_an_answer():
    """A literal "\\uD800" (a lone surrogate escape) in a pushed line is set aside with its line number
    (the readers' rule, `terms.bad_escapes`); the good lines of the same body are taken, and the results,
    the window, SSE and WebSocket readers all answer."""
    import threading

    import httpx
    import websockets.sync.client as ws

    from service_helpers import running_service

    with running_service() as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        http.put(f"/streams/{path(S)}")
        http.put("/queries/q", content=EVERY_SECOND, headers=SPARQL)
        events: list[bytes] = []
        ready = threading.Event()

        def read_sse():
            with httpx.stream("GET", f"{base}/queries/q/events", timeout=30) as response:
                ready.set()
                for text in response.iter_lines():
                    if text.startswith("data: "):
                        events.append(text[6:])
                        return

        reader = threading.Thread(target=read_sse)
        reader.start()
        ready.wait(10)
        with ws.connect(f"{base.replace('http', 'ws')}/queries/q/ws") as socket:
            body = ('0 <http://ex/a> <http://ex/p> "\\uD800" .\n0 <http://ex/a> <http://ex/p> "x\\uDFFFy"@en .\n'
                    '0 <http://ex/\\uD800> <http://ex/p> <http://ex/b> .\n0 <http://ex/a> <http://ex/p> "ok" .\n'
                    + line(1000))
            pushed = push(http, body)
            assert pushed.status_code in (200, 400) and pushed.json()["watermark"] == 1000
            assert [r["line"] for r in pushed.json()["rejected"]] == [1, 2, 3]
            assert all("is not a character" in r["reason"] for r in pushed.json()["rejected"][:2])
            from_socket = json.loads(socket.recv(timeout=30))
        reader.join(30)
        results = http.get("/queries/q/results?after=0")
        assert results.status_code == 200
        report = results.json()["results"][0]
        assert from_socket == json.loads(events[0]) == report
        assert sorted(b["o"] for b in report["bindings"]) == ['"ok"']
        assert http.get("/queries/q/window?at=1000").status_code == 200
        triples = http.get("/queries/q/window?at=1000", headers={"accept": "application/n-triples"})
        assert triples.status_code == 200
        triples.content.decode("utf-8")  # valid UTF-8
        assert http.get(f"/streams/{path(S)}").status_code == 200 and http.get("/stats").status_code == 200
        assert http.get("/queries").status_code == 200
