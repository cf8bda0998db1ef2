"""The live page in a real browser: headless Chromium registers a query through the page, the CSRBench
stream is pushed through the API, and the page shows what `rsp-plugin query` prints. Screenshots are
saved under the test's tmp dir (RSP_PLUGIN_SCREENSHOTS=DIR keeps them elsewhere)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import httpx
import pytest

from cdp import Browser, chromium_path
from service_helpers import CSRBENCH, ROOT, STREAM, TNT, cli_lines, path, running_service

pytestmark = pytest.mark.browser
MAX_TEMPERATURE = ROOT / "queries" / "csrbench" / "max-temperature.rq"


@pytest.fixture
def browser():
    executable = chromium_path()
    if executable is None:
        pytest.fail("no chromium here: apt-get install chromium (CI does), or leave these out with -m \"not browser\"")
    browser = Browser(executable)
    yield browser
    browser.close()


@pytest.fixture
def shots(tmp_path):
    folder = Path(os.environ.get("RSP_PLUGIN_SCREENSHOTS") or tmp_path / "screenshots")
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def page_reports(browser, name: str, *, shown: bool = False) -> list[dict]:
    """The page's result table read back as the command line's lines: {t, bindings} per report, each
    term as its cell's title holds it (the exact N-Triples form); `shown`: as the cell shows it."""
    rows = browser.evaluate(f"""(() => {{
        const box = document.querySelector('.query[data-query="' + CSS.escape({json.dumps(name)}) + '"]');
        const names = [...box.querySelectorAll('thead th')].map(th => th.textContent);
        return [...box.querySelectorAll('tbody tr')].map(tr => ({{
            t: Number(tr.dataset.t), empty: tr.classList.contains('empty'),
            cells: [...tr.querySelectorAll('td')].map(td => {'td.textContent' if shown else
                                                              "td.getAttribute('title') ?? td.textContent"}),
            names}}));
    }})()""")
    reports: list[dict] = []
    for row in rows:
        if not reports or reports[-1]["t"] != row["t"]:
            reports.append({"t": row["t"], "bindings": []})
        if row["empty"]:
            continue
        names = row["names"][1:-1]
        cells = row["cells"][1:1 + len(names)]
        reports[-1]["bindings"].append({name: value for name, value in zip(names, cells) if value != ""})
    return reports


def test_the_page_registers_a_query_and_shows_the_command_lines_results(browser, shots):
    expected = cli_lines(MAX_TEMPERATURE, f"{STREAM}={CSRBENCH}")
    with running_service() as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        assert http.put(f"/streams/{path(STREAM)}").status_code == 201
        browser.open(base + "/")
        browser.wait_for("document.querySelector('#streams tbody tr') !== null")
        browser.screenshot(shots / "1-empty.png")

        browser.type_into("#query-text", MAX_TEMPERATURE.read_text())
        browser.click("#register-button")
        name = browser.wait_for("document.getElementById('register-status').textContent.replace('registered ', '')"
                                " || null")
        assert name == "http://ex.org/q/max-temperature"
        assert [q["name"] for q in http.get("/queries").json()] == [name]
        browser.screenshot(shots / "2-registered.png")

        lines = CSRBENCH.read_bytes().splitlines(keepends=True)
        for start in range(0, len(lines), 200):
            pushed = http.post(f"/streams/{path(STREAM)}", content=b"".join(lines[start:start + 200]), headers=TNT)
            assert pushed.status_code == 200
        http.post("/finish", json={})
        browser.wait_for(f"document.querySelector('.query').dataset.reports === '{len(expected)}'")
        assert page_reports(browser, name) == expected
        # each cell shows its term the short way: numbers as numbers ("79"^^xsd:double and its average
        # "7.9E1"^^xsd:double alike as 79), the exact term in its title
        first = page_reports(browser, name, shown=True)[0]["bindings"][0]
        exact = expected[0]["bindings"][0]
        assert exact["max"] == '"79"^^<http://www.w3.org/2001/XMLSchema#double>'
        assert exact["avg"] == '"7.9E1"^^<http://www.w3.org/2001/XMLSchema#double>'
        assert (first["max"], first["avg"], first["n"]) == ("79", "79", "1")
        assert first["sensor"] == exact["sensor"]  # (no PREFIX of the query names its namespace)

        # the rest of the page: the stream's count, the query's text and latency, the plot's rates
        browser.wait_for("document.querySelector('#streams tbody tr td:nth-child(2)').textContent === '1836'")
        assert "GROUP BY ?sensor" in browser.evaluate("document.querySelector('.query pre.text').textContent")
        assert "latency last" in browser.evaluate("document.querySelector('.query .info').textContent")
        assert "triples/s" in browser.evaluate("document.getElementById('rates').textContent")
        painted = browser.evaluate("""(() => { const c = document.getElementById('plot');
            const d = c.getContext('2d').getImageData(0, 0, c.width, c.height).data;
            const panel = (c.height - 20) / 2, count = [0, 0];   // blue dots in the upper panel, red in the lower
            for (let y = 0; y < c.height; y++) for (let x = 41; x < c.width - 6; x++) {
                const i = (y * c.width + x) * 4, upper = y < 5 + panel;
                if (upper && d[i + 2] > 150 && d[i] < 80) count[0]++;
                if (!upper && d[i] > 180 && d[i + 2] < 80) count[1]++; }
            return count; })()""")
        assert painted[0] > 0 and painted[1] > 0, painted  # triples/s and results/s are drawn
        browser.screenshot(shots / "3-results.png")

        # the window now, and the explanation hook (no explainer in this engine yet)
        browser.click(".query button")  # "window now"
        title = browser.wait_for("document.getElementById('detail').open && "
                                 "document.getElementById('detail-title').textContent")
        window = http.get(f"/queries/{path(name)}/window").json()
        assert title.startswith(f"window of {name} at {window['boundary']}: {window['size']} triples")
        shown = browser.evaluate("document.getElementById('detail-body').textContent").splitlines()
        assert len(shown) == len(window["triples"][:500])  # the window's triples, the short way
        floats = [line for line in window["triples"][:500] if "#floatValue>" in line]
        assert floats and sum(" om-owl:floatValue " in line for line in shown) == len(floats)
        assert not any("sensor-observation.owl#" in line for line in shown)
        browser.screenshot(shots / "4-window.png")
        browser.evaluate("document.getElementById('detail').close()")
        browser.click(".query tbody tr:not(.empty) button")  # "why?"
        browser.wait_for("document.getElementById('detail').open && "
                         "document.getElementById('detail-title').textContent.startsWith('why')")
        assert browser.evaluate("document.getElementById('detail-body').textContent") == \
            "explanations are off: start the service with --explain (rsp-plugin serve --explain) to keep them"
        browser.screenshot(shots / "5-explain.png")
    for shot in shots.glob("*.png"):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


# a page of another site, in the same browser ---------------------------------------------------------------

HOSTILE_PAGE = """<!doctype html><meta charset="utf-8"><title>another site</title><body><script>
const base = BASE, stream = STREAM, query = QUERY, line = LINE;
const s = base + "/streams/" + encodeURIComponent(stream);
const tried = [];
async function attempt(name, make) {
  try { const r = await make(); tried.push([name, r && r.type === "opaque" ? "sent" : String(r && r.status)]); }
  catch (e) { tried.push([name, "refused by the browser"]); }
}
function form(action, enctype, fields) {
  return new Promise(done => {
    const frame = document.createElement("iframe");
    frame.name = "f" + Math.random().toString(36).slice(2);
    frame.onload = () => done({type: "opaque"});
    document.body.append(frame);
    const f = document.createElement("form");
    Object.assign(f, {method: "POST", action, enctype, target: frame.name});
    for (const [name, value] of fields) {
      const input = document.createElement("input");
      Object.assign(input, {type: "hidden", name, value});
      f.append(input);
    }
    document.body.append(f);
    f.submit();
  });
}
(async () => {
  const simple = (url, type, body) => fetch(url, {method: "POST", mode: "no-cors", body,
                                                   headers: type ? {"Content-Type": type} : {}});
  await attempt("fetch text/plain: register", () => simple(base + "/queries", "text/plain", query));
  await attempt("fetch text/plain: push", () => simple(s, "text/plain", line));
  await attempt("fetch text/plain: finish", () => simple(base + "/finish", "text/plain", ""));
  await attempt("fetch no type: push", () => simple(s, null, new Blob([line])));
  await attempt("fetch no type: finish", () => simple(base + "/finish", null, null));
  await attempt("beacon: push", () => ({type: navigator.sendBeacon(s, line) ? "opaque" : "x"}));
  await attempt("form urlencoded: register", () => form(base + "/queries", "application/x-www-form-urlencoded",
                                                         [["query", query]]));
  // a text/plain form sends "name=value": the name is a line of the stream and a comment eats the "="
  await attempt("form text/plain: push", () => form(s, "text/plain", [[line + "#", ""]]));
  await attempt("form multipart: finish", () => form(base + "/finish", "multipart/form-data", [["x", "1"]]));
  await attempt("fetch json (preflight): register", () => fetch(base + "/queries", {method: "POST",
      headers: {"Content-Type": "application/sparql-query"}, body: query}));
  await attempt("fetch json (preflight): finish", () => fetch(base + "/finish", {method: "POST",
      headers: {"Content-Type": "application/json"}, body: "{}"}));
  await attempt("fetch PUT (preflight): register", () => fetch(base + "/queries/q", {method: "PUT", body: query,
      headers: {"Content-Type": "application/sparql-query"}}));
  await attempt("fetch DELETE (preflight): stream", () => fetch(s, {method: "DELETE"}));
  await attempt("websocket: push", () => new Promise(done => {
    const socket = new WebSocket(s.replace("http", "ws") + "/ws");
    socket.onopen = () => socket.send(line);
    socket.onmessage = () => done({status: "answered"});
    socket.onclose = () => done({status: "closed"});
  }));
  window.tried = tried;
})();
</script>"""


class _Recorder:
    """Every request the service sees, with its Origin and Host, and how it was answered."""

    def __init__(self, app):
        self.app, self.seen = app, []

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        headers = {key.decode(): value.decode("latin-1") for key, value in scope["headers"]}
        record = {"method": scope.get("method", "WS"), "path": scope["path"], "origin": headers.get("origin"),
                  "host": headers.get("host"), "type": headers.get("content-type"), "status": None}
        self.seen.append(record)

        async def sending(message):
            if message["type"] == "http.response.start":
                record["status"] = message["status"]
            elif message["type"] == "websocket.close" and record["status"] is None:
                record["status"] = f"closed {message.get('code')}"
            elif message["type"] == "websocket.accept":
                record["status"] = "accepted"
            await send(message)

        await self.app(scope, receive, sending)


def _serve_page(html: list[str]):
    """Another site: a local HTTP server (another port: another origin) serving the page `html[0]`."""
    import threading
    from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

    class Handler(BaseHTTPRequestHandler):
        def do_GET(self):
            body = html[0].encode()
            self.send_response(200)
            self.send_header("content-type", "text/html; charset=utf-8")
            self.send_header("content-length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, *args):
            pass

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return server


def _untouched(http, stream: str) -> None:
    assert http.get("/queries").json() == []
    assert http.get(f"/streams/{path(stream)}").json()["triples"] == 0
    assert http.get("/system").json()["finished"] is False


def test_a_page_of_another_site_changes_nothing():
    from rsp_plugin.service import ServiceSettings

    executable = chromium_path()
    if executable is None:
        pytest.fail("no chromium here: apt-get install chromium (CI does), or leave these out with -m \"not browser\"")
    stream, query = "http://ex/s", ("REGISTER QUERY q AS SELECT * FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                                    "WHERE { ?s ?p ?o }")
    line = "1000 <http://ex/a> <http://ex/p> <http://ex/b> .\n"
    browser = Browser(executable, extra=("--host-resolver-rules=MAP rebind.test 127.0.0.1",))
    recorders: list[_Recorder] = []

    def recorded(app):
        recorders.append(_Recorder(app))
        return recorders[-1]

    page = [""]
    hostile = _serve_page(page)
    other = f"http://127.0.0.1:{hostile.server_address[1]}"
    try:
        def attack(base: str) -> list:
            page[0] = HOSTILE_PAGE
            for name, value in (("BASE", base), ("STREAM", stream), ("QUERY", query), ("LINE", line)):
                page[0] = page[0].replace(name, json.dumps(value), 1)
            browser.open(other + "/")
            tried = browser.wait_for("window.tried", timeout=60)
            assert len(tried) == 14, tried
            return tried

        with running_service(wrap=recorded) as (base, _):
            http = httpx.Client(base_url=base, timeout=30)
            http.put(f"/streams/{path(stream)}")
            tried = attack(base)
            _untouched(http, stream)
            foreign = [r for r in recorders[-1].seen if r["origin"] == other]
            # every attempt reached the service and was refused; the preflighted ones went no further
            posts = [r for r in foreign if r["method"] == "POST"]
            assert len(posts) == 9 and all(r["status"] == 403 for r in posts), posts
            assert {r["status"] for r in foreign if r["method"] == "OPTIONS"} == {403}
            assert [r["status"] for r in foreign if r["method"] == "WS"] == ["closed 1008"]
            assert all(r["method"] in ("POST", "OPTIONS", "WS") for r in foreign)
            assert dict(tried)["fetch json (preflight): register"] == "refused by the browser"

            # DNS rebinding: the attacker's name now points here; its page's requests are same-origin to it
            browser.open(base.replace("127.0.0.1", "rebind.test") + "/")
            assert "does not answer to the name" in browser.evaluate("document.body.textContent")
            status = browser.evaluate(f"""fetch("/queries", {{method: "POST", body: {json.dumps(query)},
                headers: {{"Content-Type": "application/sparql-query"}}}}).then(r => r.status)""")
            assert status == 403
            _untouched(http, stream)

        # the second line holds alone: with the other site's origin allowed, its simple requests are still
        # refused (by their type), while the one it asks for first (CORS) goes through
        with running_service(ServiceSettings(allow_origins=(other,)), wrap=recorded) as (base, _):
            http = httpx.Client(base_url=base, timeout=30)
            http.put(f"/streams/{path(stream)}")
            tried = dict(attack(base))
            seen = recorders[-1].seen
            simple = [r for r in seen if r["method"] == "POST" and (r["type"] or "").split(";")[0].strip() in
                      ("", "text/plain", "application/x-www-form-urlencoded", "multipart/form-data")]
            assert len(simple) == 9 and all(r["status"] == 415 for r in simple), simple
            # what the allowed page asked for first went through: the registration and the end of the replay
            assert tried["fetch json (preflight): register"] == "201"
            assert tried["fetch json (preflight): finish"] == "200"
            assert http.get("/queries").json()[0]["name"] == "q" and http.get("/system").json()["finished"]
            assert tried["websocket: push"] == "answered"  # (refused by the engine: the replay had finished)
    finally:
        browser.close()
        hostile.shutdown()


def test_the_page_shows_a_report_with_a_lone_surrogate(browser):
    """A literal "\\uD800" pushed: its line is set aside, the page (SSE, /results) shows the report of the
    good lines and goes on with the next."""
    stream = "http://ex/s"
    with running_service() as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        http.put(f"/streams/{path(stream)}")
        http.put("/queries/q", headers={"content-type": "application/sparql-query"},
                 content=f"REGISTER QUERY q AS SELECT * FROM STREAM <{stream}> [RANGE 1s STEP 1s] WHERE {{ ?s ?p ?o }}")
        browser.open(base + "/")
        browser.wait_for("document.querySelector('.query') !== null")
        for body in ('0 <http://ex/a> <http://ex/p> "\\uD800" .\n1000 <http://ex/b> <http://ex/p> "fine" .\n',
                     "2000 <http://ex/c> <http://ex/p> <http://ex/o> .\n",
                     "3000 <http://ex/d> <http://ex/p> <http://ex/o> .\n"):
            pushed = http.post(f"/streams/{path(stream)}", content=body, headers=TNT)
            assert pushed.status_code in (200, 400) and pushed.json()["watermark"] is not None
            assert [r["line"] for r in pushed.json()["rejected"]] == ([1] if "uD800" in body else [])
        browser.wait_for("document.querySelector('.query').dataset.reports === '2'")
        cells = browser.evaluate("[...document.querySelectorAll('.query tbody td')].map(td => td.textContent)")
        assert "fine" in cells and not any("ud800" in cell.lower() for cell in cells)
        browser.evaluate("location.reload()")  # a new reader: the history read by /results
        browser.wait_for("document.readyState === 'complete' && document.querySelector('.query') !== null "
                         "&& document.querySelector('.query').dataset.reports === '2'")


def test_the_pages_why_shows_a_short_prefixed_explanation_wrapped_in_the_dialog_and_the_whole_tree_on_demand(
        browser, shots):
    from rsp_plugin.service.explain import explainer

    with running_service(explainer=explainer) as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        assert http.put(f"/streams/{path(STREAM)}").status_code == 201
        response = http.put("/queries/max", content=MAX_TEMPERATURE.read_text(),
                            headers={"content-type": "application/sparql-query"})
        assert response.status_code == 201, response.text
        browser.open(base + "/")
        browser.wait_for("document.querySelector('.query') !== null")
        lines = CSRBENCH.read_bytes().splitlines(keepends=True)
        assert http.post(f"/streams/{path(STREAM)}", content=b"".join(lines[:400]),
                         headers=TNT).status_code == 200
        latest = http.get("/queries/max/results").json()["results"][-1]["t"]  # only the latest can be explained
        browser.wait_for(f"document.querySelector(\".query tbody tr[data-t='{latest}']:not(.empty) button\") !== null")
        browser.evaluate(f"document.querySelector(\".query tbody tr[data-t='{latest}']:not(.empty) button\")"
                         ".scrollIntoView()")
        browser.click(f".query tbody tr[data-t='{latest}']:not(.empty) button")  # "why?" of the latest report
        browser.wait_for("document.getElementById('detail').open && "
                         "document.getElementById('detail-body').textContent.length > 0")
        short = browser.evaluate("document.getElementById('detail-body').textContent")
        assert " om-owl:floatValue " in short and "sensor-observation.owl#" not in short
        assert browser.evaluate("document.getElementById('detail-title').textContent").startswith("why ?sensor = <")
        fits = "(() => { const pre = document.getElementById('detail-body'); return pre.scrollWidth <= pre.clientWidth; })()"
        assert browser.evaluate(fits)  # long lines wrap inside the dialog
        browser.screenshot(shots / "6-why.png")
        if not browser.evaluate("document.getElementById('detail-more').hidden"):
            browser.click("#detail-more")
            whole = browser.evaluate("document.getElementById('detail-body').textContent")
            assert len(whole) > len(short) and browser.evaluate(fits)
