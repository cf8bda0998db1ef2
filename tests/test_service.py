"""`rsp-plugin serve`: the API over the engine, its safety, and its readers (SSE, WebSocket, webhooks)."""

from __future__ import annotations

import asyncio
import json
import threading
import time
import warnings
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import httpx
import pytest

from rsp_plugin.service import ServiceSettings, create_app
from service_helpers import CSRBENCH, ROOT, STREAM, TNT, bare, cli_lines, free_port, path, running_service

warnings.filterwarnings("ignore", message=".*httpx.*", category=DeprecationWarning)
from starlette.testclient import TestClient  # noqa: E402

QUERIES = ROOT / "queries" / "csrbench"
MAX_TEMPERATURE = QUERIES / "max-temperature.rq"
SENSORS = QUERIES / "air-temperature-sensors.rq"


@pytest.fixture
def client():
    with TestClient(create_app(ServiceSettings()), base_url="http://localhost") as client:
        yield client


def register(client, query: Path, name: str | None = None):
    url = f"/queries/{path(name)}" if name else "/queries"
    response = (client.put if name else client.post)(url, content=query.read_text(),
                                                     headers={"content-type": "application/sparql-query"})
    assert response.status_code == 201, response.text
    return response.json()["name"]


def all_results(client, name: str) -> list[dict]:
    return [bare(result) for result in client.get(f"/queries/{path(name)}/results?after=0").json()["results"]]


def test_the_csrbench_stream_pushed_in_pieces_gives_the_command_lines_results(client):
    assert client.put(f"/streams/{path(STREAM)}").status_code == 201
    assert client.put(f"/streams/{path(STREAM)}").status_code == 200  # idempotent
    names = [register(client, MAX_TEMPERATURE), register(client, SENSORS, "sensors")]
    lines = CSRBENCH.read_bytes().splitlines(keepends=True)
    for start in range(0, len(lines), 300):
        response = client.post(f"/streams/{path(STREAM)}", content=b"".join(lines[start:start + 300]),
                               headers={"content-type": "application/x-tnt"})
        assert response.status_code == 200 and response.json()["rejected"] == []
    assert client.post("/finish", json={}).json()["finished"]
    for name, query in zip(names, (MAX_TEMPERATURE, SENSORS)):
        assert all_results(client, name) == cli_lines(query, f"{STREAM}={CSRBENCH}")
    listed = client.get("/queries").json()
    assert [q["name"] for q in listed] == names and listed[0]["evaluations"] == len(all_results(client, names[0])) == 8
    assert client.get(f"/streams/{path(STREAM)}").json()["triples"] == 1836
    assert client.post(f"/streams/{path(STREAM)}", content=lines[0], headers=TNT).status_code == 409  # the end


def test_a_malformed_body_is_a_400_naming_its_lines_and_the_good_lines_are_kept(client):
    client.put(f"/streams/{path(STREAM)}")
    name = register(client, SENSORS)
    lines = CSRBENCH.read_text().splitlines()
    body = "\n".join(lines[:3] + ["1000 <http://ex/a> <http://ex/b>", "soon <http://ex/a> <http://ex/b> <c> ."]
                     + lines[3:]) + "\n"
    response = client.post(f"/streams/{path(STREAM)}", content=body, headers=TNT)
    assert response.status_code == 400
    answer = response.json()
    assert answer["accepted"] == len(lines)
    assert [(r["line"], r["reason"]) for r in answer["rejected"]] == [
        (4, "a triple ends with ' .'"), (5, "not a timestamp: 'soon' (an integer or an xsd:dateTime)")]
    client.post("/finish", json={})
    assert all_results(client, name) == cli_lines(SENSORS, f"{STREAM}={CSRBENCH}")
    stream = client.get(f"/streams/{path(STREAM)}").json()
    assert stream["rejected"] == 2 and stream["recent_rejected"][0].endswith(":4: a triple ends with ' .'")


def test_every_push_format(client):
    iri = "http://ex/s"
    client.put(f"/streams/{path(iri)}")
    client.put("/queries/q", content=f"REGISTER QUERY q AS SELECT ?s ?o FROM STREAM <{iri}> [RANGE 1s STEP 1s] "
                                     "WHERE { ?s <http://ex/p> ?o }")
    pushes = [
        ("application/n-triples", "<http://ex/nt> <http://ex/p> <http://ex/o> .\n", 100),
        ("text/turtle", "@prefix ex: <http://ex/> . ex:ttl ex:p ex:o .", 200),
        ("application/trig", '@prefix prov: <http://www.w3.org/ns/prov#> .\n<urn:g> { <http://ex/trig> '
                             '<http://ex/p> <http://ex/o> . }\n<urn:g> prov:generatedAtTime "300" .', None),
        ("application/n-quads", '<http://ex/nq> <http://ex/p> <http://ex/o> <urn:h> .\n'
                                '<urn:h> <http://www.w3.org/ns/prov#generatedAtTime> "400" .\n', None),
        ("application/ld+json", json.dumps({"@context": {"ex": "http://ex/"}, "@id": "ex:jsonld",
                                            "ex:p": {"@id": "ex:o"}}), 500),
        ("application/ld+json", json.dumps({"@context": {"ex": "http://ex/",
                                                         "prov": "http://www.w3.org/ns/prov#"},
                                            "@graph": [{"@id": "urn:k", "prov:generatedAtTime": "600",
                                                        "@graph": [{"@id": "ex:tw", "ex:p": {"@id": "ex:o"}}]}]}),
         None),
    ]
    for media, body, t in pushes:
        response = client.post(f"/streams/{path(iri)}" + (f"?t={t}" if t is not None else ""), content=body,
                               headers={"content-type": media})
        assert response.status_code == 200, (media, response.text)
        assert response.json()["accepted"] == 1, (media, response.json())
    assert client.post(f"/streams/{path(iri)}", content="x", headers={"content-type": "image/png"}).status_code == 415
    client.post("/finish", json={})
    results = all_results(client, "q")
    assert [sorted(b["s"] for b in r["bindings"]) for r in results] == [[
        "<http://ex/jsonld>", "<http://ex/nq>", "<http://ex/nt>", "<http://ex/trig>", "<http://ex/ttl>",
        "<http://ex/tw>"]]


def test_the_service_reads_no_file_or_url_a_client_names(client, tmp_path):
    secret = tmp_path / "secret.ttl"
    secret.write_text("<http://ex/a> <http://ex/b> <http://ex/c> .")
    client.put(f"/streams/{path(STREAM)}")
    from_file = (f"REGISTER QUERY f AS SELECT * FROM STREAM <{STREAM}> [RANGE 1s STEP 1s]\n"
                 f"FROM <{secret.as_uri()}>\nWHERE {{ ?s ?p ?o }}")
    response = client.put("/queries/f", content=from_file)
    assert response.status_code == 400 and "is not known to the service" in response.json()["error"]
    assert response.json()["error"].startswith("<query f>:")
    rules = client.put("/queries/r", content=f"REGISTER QUERY r AS SELECT * FROM STREAM <{STREAM}> [RANGE 1s STEP 1s]"
                                             f"\nRULES <{(tmp_path / 'x.lars').as_uri()}>\nWHERE {{ ?s ?p ?o }}")
    assert rules.status_code == 400 and "RULES" in rules.json()["error"]
    service = client.put("/queries/s", content=f"REGISTER QUERY s AS SELECT * FROM STREAM <{STREAM}> "
                                               "[RANGE 1s STEP 1s] WHERE { SERVICE <http://example.org/sparql> "
                                               "{ ?s ?p ?o } }")
    assert service.status_code == 400 and "SERVICE <http://example.org/sparql> is refused" in service.json()["error"]
    remote = client.post(f"/streams/{path(STREAM)}?t=0", headers={"content-type": "application/ld+json"},
                         content=json.dumps({"@context": "http://schema.org/", "name": "x"}))
    assert remote.status_code == 400
    assert "the JSON-LD context <http://schema.org/> is not fetched" in remote.json()["rejected"][0]["reason"]
    nested = client.post(f"/streams/{path(STREAM)}?t=0", headers={"content-type": "application/ld+json"},
                         content=json.dumps({"@context": [{"@import": "http://evil/ctx"}], "@id": "http://ex/a"}))
    assert nested.status_code == 400
    assert client.get("/queries").json() == []
    # the same queries run once the graph and program are given to the service
    graph = client.put(f"/graphs/{path(secret.as_uri())}", content=secret.read_text(),
                       headers={"content-type": "text/turtle"})
    assert graph.status_code == 201 and graph.json()["triples"] == 1
    assert client.put("/queries/f", content=from_file).status_code == 201
    program = "?s <http://ex/seen> ?o :- ?s <http://ex/b> ?o ."
    spec = {"query": f"REGISTER QUERY r AS SELECT * FROM STREAM <{STREAM}> [RANGE 1s STEP 1s]\nRULES <urn:r>\n"
                     "WHERE { ?s <http://ex/seen> ?o }", "rules": program}
    assert client.put("/queries/r", json=spec).status_code == 201
    bad_rules = client.put("/queries/r2", json={**spec, "query": spec["query"].replace("query r ", "query r2 "),
                                                "rules": "p(X) :- "})
    assert bad_rules.status_code == 400 and bad_rules.json()["error"].startswith("<rules urn:r>:1:")


def test_a_query_mistake_is_one_located_line(client):
    response = client.put("/queries/bad", content="REGISTER QUERY bad AS SELECT ?x WHERE { ?x ?p }")
    assert response.status_code == 400
    message = response.json()["error"]
    assert message.startswith("<query bad>:1:") and "\n" not in message
    unknown = client.put("/queries/u", content="REGISTER QUERY u AS SELECT ?x FROM STREAM <http://nowhere> "
                                               "[RANGE 1s STEP 1s] WHERE { ?x ?p ?o }")
    assert unknown.status_code == 400 and "is not registered" in unknown.json()["error"]
    assert client.get("/queries/none").status_code == 404
    client.put(f"/streams/{path(STREAM)}")
    register(client, SENSORS, "s")
    assert client.put("/queries/s", content=SENSORS.read_text()).status_code == 409
    assert client.delete(f"/streams/{path(STREAM)}").status_code == 409  # read by s
    assert client.delete("/queries/s").status_code == 204
    assert client.delete(f"/streams/{path(STREAM)}").status_code == 204


def test_a_cqels4j_query_registers_as_written_and_its_info_has_the_notes(client):
    # a bare stream name is the stream the client registered by that name; sosa: needs no PREFIX line
    assert client.put("/streams/Telemetry").status_code == 201
    text = ("REGISTER QUERY LowBattery AS SELECT ?obs ?soc FROM STREAM Telemetry [NOW] WHERE { STREAM Telemetry "
            "{ ?obs sosa:hasSimpleResult ?soc . } FILTER(?soc < 20) }")
    response = client.put("/queries/LowBattery", content=text, headers={"content-type": "application/sparql-query"})
    assert response.status_code == 201, response.text
    info = client.get("/queries/LowBattery").json()
    assert info["windows"][0]["stream"] == "Telemetry"
    assert info["notes"] == ["<query LowBattery>:1:107: note: prefix sosa: not declared; read as "
                             "<http://www.w3.org/ns/sosa/>"]


def test_a_token_when_bound_beyond_this_machine():
    with pytest.raises(ValueError, match="give it a token"):
        create_app(ServiceSettings(host="0.0.0.0"))
    settings = ServiceSettings(host="0.0.0.0", token="s3cret")
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        assert client.get("/streams").status_code == 401
        assert client.get("/streams", headers={"authorization": "Bearer wrong"}).status_code == 401
        assert client.get("/streams", headers={"authorization": "Bearer s3cret"}).status_code == 200
        assert client.get("/streams?access_token=s3cret").status_code == 200
        assert client.get("/").status_code == 200 and client.get("/openapi.json").status_code == 200


def test_body_size_and_rate_bounds():
    settings = ServiceSettings(max_body_bytes=1000, rate=5, burst=5)
    with TestClient(create_app(settings), base_url="http://localhost") as client:
        assert client.put(f"/streams/{path(STREAM)}").status_code == 201
        assert client.post(f"/streams/{path(STREAM)}", content=b"0 " * 600, headers=TNT).status_code == 413

        def chunks():
            for _ in range(30):  # 30 x 47 bytes
                yield b"0 <http://ex/a> <http://ex/b> <http://ex/c> .\n"

        no_length = client.post(f"/streams/{path(STREAM)}", content=chunks(), headers=TNT)
        assert no_length.status_code == 413
        statuses = [client.get("/streams").status_code for _ in range(10)]
        assert 429 in statuses and statuses[0] == 200


def test_the_window_now_and_the_explanation_hook(client):
    client.put(f"/streams/{path(STREAM)}")
    register(client, SENSORS, "s")
    client.post(f"/streams/{path(STREAM)}", content=CSRBENCH.read_bytes(), headers=TNT)
    window = client.get("/queries/s/window").json()
    assert window["boundary"] == 5000  # the last report before the watermark (5000)
    expected = sorted(line.split(" ", 1)[1] for line in CSRBENCH.read_text().splitlines()
                      if 4000 <= int(line.split()[0]) < 5000)
    assert window["size"] == len(expected) and not window["truncated"]
    assert sorted(window["triples"]) == sorted(set(expected))
    text = client.get("/queries/s/window", headers={"accept": "application/n-triples"}).text
    assert sorted(text.splitlines()) == sorted(set(expected))
    assert client.get("/queries/s/window?limit=3").json()["truncated"]
    off = client.get("/queries/s/explain?t=5000")
    assert off.status_code == 501 and "--explain" in off.json()["reason"]

    def explainer(engine, query, t, item):
        return {"query": query, "t": t, "because": sorted(item.values())}

    with TestClient(create_app(ServiceSettings(), explainer=explainer), base_url="http://localhost") as other:
        other.put(f"/streams/{path(STREAM)}")
        register(other, SENSORS, "s")
        answer = other.get("/queries/s/explain", params={"t": 1000, "item": json.dumps({"sensor": "<x>"})}).json()
        assert answer["explanation"] == {"query": "s", "t": 1000, "because": ["<x>"]}


def test_the_openapi_description_covers_every_route(client):
    document = client.get("/openapi.json").json()
    assert document["openapi"].startswith("3.")
    routed = set()
    for route in client.app.routes:
        if getattr(route, "path", "").startswith("/static"):
            continue
        routed.add(route.path.replace("{iri:path}", "{iri}").replace("{name:path}", "{name}"))
    assert routed == set(document["paths"])
    assert "POST" in client.get("/docs").text


# readers: SSE, WebSocket, webhooks (a real server) ----------------------------------------------


def test_results_by_server_sent_events_and_websocket_as_pushed_by_websocket():
    import websockets.sync.client as ws

    with running_service() as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        http.put(f"/streams/{path(STREAM)}")
        name = register(http, MAX_TEMPERATURE)
        expected = cli_lines(MAX_TEMPERATURE, f"{STREAM}={CSRBENCH}")
        got_sse, got_ws = [], []
        ready = threading.Event()

        def read_sse():
            with httpx.stream("GET", f"{base}/queries/{path(name)}/events", timeout=30) as response:
                ready.set()
                event = {}
                for line in response.iter_lines():
                    if line.startswith("data: "):
                        event = json.loads(line[6:])
                    elif line == "" and event:
                        got_sse.append(event)
                        event = {}
                        if len(got_sse) == len(expected):
                            return

        def read_ws():
            with ws.connect(f"{base.replace('http', 'ws')}/queries/{path(name)}/ws") as socket:
                while len(got_ws) < len(expected):
                    got_ws.append(json.loads(socket.recv(timeout=30)))

        readers = [threading.Thread(target=read_sse), threading.Thread(target=read_ws)]
        for reader in readers:
            reader.start()
        ready.wait(10)
        import time

        time.sleep(0.5)  # the WebSocket reader connects
        lines = CSRBENCH.read_text().splitlines(keepends=True)
        with ws.connect(f"{base.replace('http', 'ws')}/streams/{path(STREAM)}/ws") as socket:
            for start in range(0, len(lines), 250):
                socket.send("".join(lines[start:start + 250]))
                assert json.loads(socket.recv(timeout=30))["rejected"] == []
            socket.send("999999 <broken\n")
            assert json.loads(socket.recv(timeout=30))["rejected"][0]["line"] == 1
        http.post("/finish", json={})
        for reader in readers:
            reader.join(30)
        # the broken line's timestamp moved the watermark: the run's end is the same as the command line's
        assert [bare(r) for r in got_sse] == expected
        assert [bare(r) for r in got_ws] == expected
        assert [r["seq"] for r in got_sse] == list(range(1, len(expected) + 1))
        # Last-Event-ID: a reader that comes back gets what it missed
        with httpx.stream("GET", f"{base}/queries/{path(name)}/events",
                          headers={"last-event-id": str(len(expected) - 2)}, timeout=10) as response:
            ids = []
            for line in response.iter_lines():
                if line.startswith("id: "):
                    ids.append(int(line[4:]))
                    if len(ids) == 2:
                        break
        assert ids == [len(expected) - 1, len(expected)]


class _Hook(BaseHTTPRequestHandler):
    received: list = []
    failures_left = 0

    def do_POST(self):
        body = self.rfile.read(int(self.headers["content-length"]))
        if type(self).failures_left > 0:
            type(self).failures_left -= 1
            self.send_response(503)
            self.end_headers()
            return
        type(self).received.append(json.loads(body))
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


def test_webhook_observers_retry_and_only_post_to_allowed_urls():
    hook = ThreadingHTTPServer(("127.0.0.1", 0), _Hook)
    threading.Thread(target=hook.serve_forever, daemon=True).start()
    _Hook.received, _Hook.failures_left = [], 2
    port = hook.server_address[1]
    closed = free_port()
    settings = ServiceSettings(webhook_allow=(f"http://127.0.0.1:{port}/hooks/", f"http://127.0.0.1:{closed}/"),
                               webhook_backoff=0.05)
    try:
        with running_service(settings) as (base, app):
            http = httpx.Client(base_url=base, timeout=30)
            http.put(f"/streams/{path(STREAM)}")
            name = register(http, SENSORS, "s")
            refused = [f"http://127.0.0.1:{port}/other", f"http://127.0.0.1:{port + 1}/hooks/x",
                       f"http://127.0.0.1:{port}.evil/hooks/", "file:///etc/passwd",
                       f"http://127.0.0.1:{port}/hooks/../other", f"http://127.0.0.1:{port}/hooks/%2e%2e/other",
                       f"http://user@127.0.0.1:{port}/hooks/"]
            for url in refused:
                assert http.post(f"/queries/{name}/observers", json={"url": url}).status_code == 403, url
            added = http.post(f"/queries/{name}/observers", json={"url": f"http://127.0.0.1:{port}/hooks/a"})
            assert added.status_code == 201
            dead = http.post(f"/queries/{name}/observers", json={"url": f"http://127.0.0.1:{closed}/x"}).json()
            http.post(f"/streams/{path(STREAM)}", content=CSRBENCH.read_bytes(), headers=TNT)
            http.post("/finish", json={})
            expected = cli_lines(SENSORS, f"{STREAM}={CSRBENCH}")
            import time

            deadline = time.time() + 30
            while len(_Hook.received) < len(expected) and time.time() < deadline:
                time.sleep(0.1)
            assert [bare(r) for r in _Hook.received[:len(expected)]] == expected  # in order, retried
            observer = http.get(f"/queries/{name}/observers/{added.json()['id']}").json()
            assert observer["delivered"] == len(expected) and observer["failed"] == 0
            assert observer["attempts"] == len(expected) + 2
            deadline = time.time() + 30
            while http.get(f"/queries/{name}/observers/{dead['id']}").json()["failed"] < len(expected):
                assert time.time() < deadline
                time.sleep(0.1)
            gone = http.get(f"/queries/{name}/observers/{dead['id']}").json()
            assert gone["delivered"] == 0 and gone["attempts"] == 3 * len(expected) and gone["last_error"]
            assert http.delete(f"/queries/{name}/observers/{dead['id']}").status_code == 204
    finally:
        hook.shutdown()


def test_two_streams_from_two_clients_wait_for_each_other():
    """The watermark is the older of the streams' latest times: neither client's data is late."""
    lines = CSRBENCH.read_text().splitlines(keepends=True)
    odd, even = lines[1::2], lines[0::2]
    query = ROOT / "tests" / "two-streams.rq"
    text = MAX_TEMPERATURE.read_text().replace(
        f"FROM STREAM <{STREAM}> [RANGE 3s STEP 1s]",
        f"FROM STREAM <{STREAM}/a> [RANGE 3s STEP 1s]\nFROM STREAM <{STREAM}/b> [RANGE 3s STEP 1s]")
    with running_service() as (base, _):
        async def push(iri, part):
            async with httpx.AsyncClient(base_url=base, timeout=30) as http:
                for start in range(0, len(part), 100):
                    response = await http.post(f"/streams/{path(iri)}", content="".join(part[start:start + 100]),
                                               headers=TNT)
                    assert response.json()["late"] == []

        http = httpx.Client(base_url=base, timeout=30)
        for iri in (f"{STREAM}/a", f"{STREAM}/b"):
            http.put(f"/streams/{path(iri)}")
        http.put("/queries/two", content=text)

        async def both():
            await asyncio.gather(push(f"{STREAM}/a", odd), push(f"{STREAM}/b", even))

        asyncio.run(both())
        http.post("/finish", json={})
        got = [bare(r) for r in http.get("/queries/two/results?after=0").json()["results"]]
    query_file = Path(__import__("tempfile").mkdtemp()) / "two.rq"
    query_file.write_text(text)
    a, b = query_file.parent / "a.tnt", query_file.parent / "b.tnt"
    a.write_text("".join(odd))
    b.write_text("".join(even))
    assert got == cli_lines(query_file, f"{STREAM}/a={a}", f"{STREAM}/b={b}")
    assert got == cli_lines(MAX_TEMPERATURE, f"{STREAM}={CSRBENCH}")


def test_a_reader_that_falls_behind_is_cut_off_and_resumes_from_the_history():
    from rsp_plugin.service.observers import Observers

    async def scenario():
        observers = Observers(ServiceSettings(queue=3))
        reader = observers.reader({"q"})
        waiting = asyncio.ensure_future(reader.next())  # a writer waiting on the queue
        await asyncio.sleep(0)
        for seq in range(1, 3):
            observers.offer("q", seq, b"{}")
        assert await waiting == (1, b"{}")
        for seq in range(3, 8):
            observers.offer("q", seq, b"{}")
            observers.offer("other", seq, b"{}")  # not read by this reader
        assert reader.cut and await reader.next() is None and reader.queue.empty()

    asyncio.run(scenario())
    with TestClient(create_app(ServiceSettings(history=3)), base_url="http://localhost") as client:
        client.put(f"/streams/{path(STREAM)}")
        register(client, SENSORS, "s")
        client.post(f"/streams/{path(STREAM)}", content=CSRBENCH.read_bytes(), headers=TNT)
        client.post("/finish", json={})
        kept = client.get("/queries/s/results?after=0").json()
        last = len(cli_lines(SENSORS, f"{STREAM}={CSRBENCH}"))
        assert kept["last"] == last and kept["missed"] == last - 3
        assert [r["seq"] for r in kept["results"]] == [last - 2, last - 1, last]


def test_an_entailment_query_with_its_background_given_in_the_registration(client):
    query = QUERIES / "observations-rdfs.rq"
    client.put(f"/streams/{path(STREAM)}")
    ontology = (QUERIES / "weather-observations.ttl").read_text()
    response = client.put("/queries/rdfs", json={"query": query.read_text(), "graphs": {
        "weather-observations.ttl": {"data": ontology, "format": "ttl"}}})
    assert response.status_code == 201, response.text
    assert response.json()["entailment"] == "rdfs"
    client.post(f"/streams/{path(STREAM)}", content=CSRBENCH.read_bytes(), headers=TNT)
    client.post("/finish", json={})
    assert all_results(client, "rdfs") == cli_lines(query, f"{STREAM}={CSRBENCH}")


def _lines(subject: str, *times: int) -> bytes:
    return b"".join(f"{t} <http://ex/{subject}{t}> <http://ex/p> <http://ex/o> .\n".encode() for t in times)


def _counts(client, name: str) -> list[tuple[int, int]]:
    return [(r["t"], len(r["bindings"])) for r in client.get(f"/queries/{name}/results?after=0").json()["results"]]


def _window_query(stream: str) -> str:
    return f"SELECT ?s FROM STREAM <{stream}> [RANGE 2s STEP 1s] WHERE {{ ?s ?p ?o }}"


def test_a_query_registered_after_time_moved_gets_every_report_its_own_window_reaches(client):
    """Stream a moved the watermark to 5000 before the query on stream b was registered: b's elements
    at 4000 and 5000 are taken into b's own window, and its report at t=5000 is made (it was lost)."""
    a, b = "http://ex/a", "http://ex/b"
    for stream in (a, b):
        client.put(f"/streams/{path(stream)}")
    sparql = {"content-type": "application/sparql-query"}
    assert client.put("/queries/qa", content=_window_query(a), headers=sparql).status_code == 201
    assert client.post(f"/streams/{path(a)}", content=_lines("x", 1000, 3000, 5000), headers=TNT).json()["watermark"] == 5000
    assert client.put("/queries/qb", content=_window_query(b), headers=sparql).status_code == 201
    answer = client.post(f"/streams/{path(b)}", content=_lines("y", 4000, 5000, 6000), headers=TNT).json()
    assert answer["late"] == [] and answer["watermark"] == 5000
    client.post(f"/streams/{path(a)}", content=_lines("x", 7000), headers=TNT)
    assert _counts(client, "qb") == [(5000, 1), (6000, 2)]
    assert _counts(client, "qa") == [(2000, 1), (3000, 1), (4000, 1), (5000, 1), (6000, 1)]


def test_a_quiet_stream_holds_time_back_until_the_idle_timeout():
    """Two streams read by one query each: b says nothing. Without --idle-timeout a's reports wait for
    b (or POST /watermark); with it, b stops holding the watermark once it has been quiet that long."""
    a, b = "http://ex/a", "http://ex/b"
    sparql = {"content-type": "application/sparql-query"}
    for idle in (None, 0.2):
        with TestClient(create_app(ServiceSettings(idle_timeout=idle)), base_url="http://localhost") as client:
            for stream in (a, b):
                client.put(f"/streams/{path(stream)}")
            client.put("/queries/qa", content=_window_query(a), headers=sparql)
            client.put("/queries/qb", content=_window_query(b), headers=sparql)
            assert client.post(f"/streams/{path(a)}", content=_lines("x", 1000, 2000), headers=TNT).json()["watermark"] is None
            time.sleep(0.3)
            answer = client.post(f"/streams/{path(a)}", content=_lines("x", 3000), headers=TNT).json()
            if idle is None:
                assert answer["watermark"] is None and _counts(client, "qa") == []
            else:
                assert answer["watermark"] == 3000 and _counts(client, "qa") == [(2000, 1), (3000, 2)]
                # b speaks again: its window had reported nothing yet, so its elements are all taken
                assert client.post(f"/streams/{path(b)}", content=_lines("y", 500, 2500), headers=TNT).json()["late"] == []
                assert _counts(client, "qb") == [(1000, 1), (2000, 1), (3000, 1)]
                late = client.post(f"/streams/{path(b)}", content=_lines("y", 1500), headers=TNT).json()["late"]
                assert [entry["line"] for entry in late] == [1] and "late: timestamp 1500" in late[0]["reason"]


def test_the_idle_timeout_is_a_positive_number_of_seconds():
    with pytest.raises(ValueError, match="--idle-timeout"):
        ServiceSettings(idle_timeout=0).check()
