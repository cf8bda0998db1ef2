"""The service explains when asked to (`serve --explain`, `create_app(explainer=...)`): GET
/queries/{name}/explain answers why a row of the latest report is there, as a tree and as text."""

import json
from pathlib import Path

from starlette.testclient import TestClient

from rsp_plugin.service.explain import explainer
from rsp_plugin.query.syntax import parse_query
from rsp_plugin.query.readable import Readable
from rsp_plugin.service import ServiceSettings, create_app
from service_helpers import CSRBENCH, STREAM, TNT, path

SENSORS = Path(__file__).parent.parent / "queries" / "csrbench" / "air-temperature-sensors.rq"


def test_the_service_explains_a_row_of_the_latest_report_down_to_the_pushed_lines():
    with TestClient(create_app(ServiceSettings(), explainer=explainer), base_url="http://localhost") as client:
        assert client.get("/system").json()["explanations"] is True
        client.put(f"/streams/{path(STREAM)}")
        response = client.put("/queries/s", content=SENSORS.read_text(),
                              headers={"content-type": "application/sparql-query"})
        assert response.status_code == 201, response.text
        client.post(f"/streams/{path(STREAM)}", content=CSRBENCH.read_bytes(), headers=TNT)
        results = client.get("/queries/s/results").json()["results"]
        latest = results[-1]
        row = latest["bindings"][0]
        answer = client.get("/queries/s/explain", params={"t": latest["t"], "item": json.dumps(row)}).json()
        tree = answer["explanation"]["tree"]
        assert tree["answer"] == row and tree["matches"] >= 1
        lines = CSRBENCH.read_text().splitlines()
        for match in tree["body"]:
            for leaf in match["because"]:
                assert leaf["by"] == "stream" and latest["t"] - 1000 <= leaf["timestamp"] < latest["t"]
                assert leaf["source"]["file"] == f"<{STREAM}> push 1"   # the request, and its line
                number = leaf["source"]["line"]
                assert lines[number - 1].split(" ", 1)[1].startswith(leaf["triple"].rsplit(" .", 1)[0])
        # the text for people: the query's prefixes, the first levels (full_text: the whole tree)
        shown = Readable(parse_query(SENSORS.read_text()).prefixes).term(row["sensor"])
        assert answer["explanation"]["text"].startswith(f"?sensor = {shown} at {latest['t']} in s:")
        assert answer["explanation"]["full_text"].startswith(f"?sensor = {shown} at {latest['t']} in s:")
        assert " om-owl:procedure " in answer["explanation"]["text"]
        assert "sensor-observation.owl#procedure" not in answer["explanation"]["full_text"]
        older = results[0]
        stale = client.get("/queries/s/explain", params={"t": older["t"], "item": json.dumps(older["bindings"][0])})
        assert "only the latest report" in stale.json()["explanation"]["error"]
