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
from service_helpers import CSRBENCH, ROOT, STREAM, cli_lines, path, running_service

pytestmark = pytest.mark.browser
MAX_TEMPERATURE = ROOT / "queries" / "csrbench" / "max-temperature.rq"


@pytest.fixture
def browser():
    executable = chromium_path()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("CI must have chromium (.ci/run installs Debian's chromium)")
        pytest.skip("no chromium here (apt-get install chromium)")
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
            assert http.post(f"/streams/{path(STREAM)}", content=b"".join(lines[start:start + 200])).status_code == 200
        http.post("/finish")
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
            "this engine gives no explanations (yet)"
        browser.screenshot(shots / "5-explain.png")
    for shot in shots.glob("*.png"):
        assert shot.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and shot.stat().st_size > 5000


def test_the_pages_why_shows_a_short_prefixed_explanation_wrapped_in_the_dialog_and_the_whole_tree_on_demand(
        browser, shots):
    from rsp_plugin.explain.service import explainer

    with running_service(explainer=explainer) as (base, _):
        http = httpx.Client(base_url=base, timeout=30)
        assert http.put(f"/streams/{path(STREAM)}").status_code == 201
        response = http.put("/queries/max", content=MAX_TEMPERATURE.read_text(),
                            headers={"content-type": "application/sparql-query"})
        assert response.status_code == 201, response.text
        browser.open(base + "/")
        browser.wait_for("document.querySelector('.query') !== null")
        lines = CSRBENCH.read_bytes().splitlines(keepends=True)
        assert http.post(f"/streams/{path(STREAM)}", content=b"".join(lines[:400])).status_code == 200
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
