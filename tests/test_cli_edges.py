"""The everyday edges of `rsp-plugin query`: --version, stdin and sockets, results formats, --from/--to, progress."""

from __future__ import annotations

import io
import json
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from rdflib import Graph, Literal, URIRef
from rdflib.query import Result

from rsp_plugin.core.rdfterms import key_term

ROOT = Path(__file__).parent.parent
CSRBENCH = ROOT / "tests" / "data" / "csrbench" / "stream-6s.tnt"
STREAM = "http://ex.org/csrbench"
MAX_TEMPERATURE = ROOT / "queries" / "csrbench" / "max-temperature.rq"
SENSORS = ROOT / "queries" / "csrbench" / "air-temperature-sensors.rq"


def rsp(*args, input=None):
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *map(str, args)],
                          capture_output=True, text=True, input=input)


def lines(stdout: str) -> list[dict]:
    return [json.loads(line) for line in stdout.splitlines() if line.strip()]


def reference(query=MAX_TEMPERATURE, *extra) -> list[dict]:
    done = rsp("query", query, "--stream", f"{STREAM}={CSRBENCH}", *extra)
    assert done.returncode == 0, done.stderr
    return lines(done.stdout)


def test_version():
    done = rsp("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("rsp-plugin ") and done.stdout.split()[1][0].isdigit()


def test_stdin_reads_tnt_lines_like_the_file():
    done = rsp("query", MAX_TEMPERATURE, "--stream", f"{STREAM}=-", input=CSRBENCH.read_text())
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == reference()


def test_stdin_in_another_format_by_flag(tmp_path):
    turtle = "@prefix ex: <http://ex/> .\nex:a ex:p ex:b .\nex:c ex:p ex:d .\n"
    query = tmp_path / "q.rq"
    query.write_text("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                     "WHERE { ?s <http://ex/p> ?o }")
    done = rsp("query", query, "--stream", "http://ex/s=-@500", "--input-format", "ttl", input=turtle)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == [{"t": 1000, "bindings": [{"s": "<http://ex/a>"}, {"s": "<http://ex/c>"}]}]


def _serve_lines(payload: list[bytes], pause: float = 0.0) -> tuple[int, threading.Thread]:
    """A one-shot TCP server sending `payload` line by line, then closing."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    port = server.getsockname()[1]

    def run():
        connection, _ = server.accept()
        with connection:
            for line in payload:
                connection.sendall(line)
                if pause:
                    time.sleep(pause)
        server.close()

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    return port, thread


def test_a_socket_is_read_line_by_line_and_a_bad_line_is_set_aside():
    payload = CSRBENCH.read_bytes().splitlines(keepends=True)
    payload.insert(10, b"1000 <http://ex/broken .\n")
    payload.insert(20, b"2000 <http://ex/a> <http://ex/p> \"\xff\xfe\" .\n")  # not UTF-8
    port, thread = _serve_lines(payload)
    done = rsp("query", MAX_TEMPERATURE, "--stream", f"{STREAM}=tcp://127.0.0.1:{port}")
    thread.join(5)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == reference()
    name = f"tcp://127.0.0.1:{port}"
    assert f"{name}:11: " in done.stderr
    assert f"{name}:21: not UTF-8 text (byte 0xff at column 35); set aside" in done.stderr
    assert "2 stream lines set aside" in done.stderr


def test_a_closed_port_is_a_one_line_error():
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    done = rsp("query", MAX_TEMPERATURE, "--stream", f"{STREAM}=tcp://127.0.0.1:{port}")
    assert done.returncode == 2
    assert done.stderr.startswith(f"rsp-plugin: tcp://127.0.0.1:{port}: cannot connect") and done.stderr.count("\n") == 1


def _json_rows(expected: list[dict]) -> list[tuple]:
    return [(line["t"], tuple(sorted(row.items()))) for line in expected for row in line["bindings"]]


@pytest.mark.parametrize("fmt", ["csv", "tsv", "sparql-xml"])
def test_w3c_results_formats_read_back_with_rdflib(fmt):
    expected = reference()
    done = rsp("query", MAX_TEMPERATURE, "--stream", f"{STREAM}={CSRBENCH}", "--format", fmt)
    assert done.returncode == 0, done.stderr
    parsed = Result.parse(io.BytesIO(done.stdout.encode()), format={"sparql-xml": "xml"}.get(fmt, fmt))
    got = []
    for row in parsed.bindings:
        values = {str(name): value for name, value in row.items()}
        if fmt == "sparql-xml":
            time_point = None  # the time is an attribute: checked below
        else:
            time_point = int(values.pop("t"))
        got.append((time_point, values))
    assert len(got) == len(_json_rows(expected))
    want = [(line["t"], row) for line in expected for row in line["bindings"]]
    for (time_point, values), (t, row) in zip(got, want):
        if time_point is not None:
            assert time_point == t
        assert sorted(values) == sorted(row)
        for name, key in row.items():
            term = values[name]
            if fmt == "csv":  # plain strings: IRIs and lexical forms
                assert str(term) == key.strip("<>").split('"')[1 if key.startswith('"') else 0]
            else:
                expected_term = key_term(key)  # rdflib normalizes lexical forms: compare values
                assert term == expected_term or (isinstance(term, Literal) and term.datatype == expected_term.datatype and term.eq(expected_term))
    if fmt == "sparql-xml":
        import re

        assert [int(t) for t in re.findall(r'<result rsp:t="(\d+)">', done.stdout)] == [t for t, _ in want]


def test_construct_as_ntriples_and_trig(tmp_path):
    query = tmp_path / "c.rq"
    query.write_text("""REGISTER STREAM out AS
        PREFIX om-owl: <http://knoesis.wright.edu/ssw/ont/sensor-observation.owl#>
        CONSTRUCT { ?sensor <http://ex/observed> ?observation }
        FROM STREAM <http://ex.org/csrbench> [RANGE 1s STEP 1s]
        WHERE { ?observation om-owl:procedure ?sensor }""")
    expected = reference(query)
    nt = rsp("query", query, "--stream", f"{STREAM}={CSRBENCH}", "--format", "nt")
    assert nt.returncode == 0, nt.stderr
    assert nt.stdout.splitlines() == [triple for line in expected for triple in line["triples"]]
    trig = rsp("query", query, "--stream", f"{STREAM}={CSRBENCH}", "--format", "trig")
    from rdflib import XSD, Dataset

    from rsp_plugin.query.readable import iso_time

    from rsp_plugin.io.documents import dataset_calls

    dataset = Dataset()
    with dataset_calls():  # (rdflib's TriG reader uses its own deprecated ConjunctiveGraph)
        dataset.parse(data=trig.stdout, format="trig")
    prov = URIRef("http://www.w3.org/ns/prov#generatedAtTime")
    for line in expected:
        name = URIRef(f"urn:x-rsp-plugin:result:out:{line['t']}")
        assert dataset.default_graph.value(name, prov) == Literal(iso_time(line["t"]), datatype=XSD.dateTime)  # PROV-O
        graph = Graph()
        graph.parse(data="\n".join(line["triples"]), format="nt")
        assert set(dataset.graph(name)) == set(graph)
    select = rsp("query", SENSORS, "--stream", f"{STREAM}={CSRBENCH}", "--format", "nt")
    assert select.returncode == 2 and "CONSTRUCT" in select.stderr


def test_from_and_to_keep_the_elements_between(tmp_path):
    kept = [line for line in CSRBENCH.read_text().splitlines() if 2000 <= int(line.split()[0]) <= 3000]
    cut = tmp_path / "cut.tnt"
    cut.write_text("\n".join(kept) + "\n")
    done = rsp("query", SENSORS, "--stream", f"{STREAM}={CSRBENCH}", "--from", 2000, "--to", 3000)
    assert done.returncode == 0, done.stderr
    assert lines(done.stdout) == lines(rsp("query", SENSORS, "--stream", f"{STREAM}={cut}").stdout)
    assert lines(done.stdout)[0]["t"] == 3000
    backwards = rsp("query", SENSORS, "--stream", f"{STREAM}={CSRBENCH}", "--from", 3000, "--to", 2000)
    assert backwards.returncode == 2 and "--from 3000 is after --to 2000" in backwards.stderr


def test_a_slow_replay_shows_progress_unless_quiet():
    payload = CSRBENCH.read_bytes().splitlines(keepends=True)
    slow = [b"".join(payload[i:i + 200]) for i in range(0, len(payload), 200)]  # 10 chunks, 0.45 s apart
    runs = {}
    for quiet in (False, True):
        port, thread = _serve_lines(slow, pause=0.45)
        args = [sys.executable, "-m", "rsp_plugin.cli", "query", str(SENSORS), "--stream",
                f"{STREAM}=tcp://127.0.0.1:{port}", *(["-q"] if quiet else [])]
        runs[quiet] = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    out = {quiet: process.communicate(timeout=60) for quiet, process in runs.items()}
    assert out[False][0] == out[True][0] and out[False][0]
    progress = [line for line in out[False][1].splitlines() if "rows/s" in line]
    assert progress, out[False][1]
    assert progress[-1].startswith(f"rsp-plugin: {len(payload):,} rows, 0 set aside, ")
    assert "rows/s" not in out[True][1]


def test_serve_refuses_to_listen_beyond_this_machine_without_a_token():
    done = rsp("serve", "--host", "0.0.0.0")
    assert done.returncode == 2
    assert done.stderr == "rsp-plugin: the service listens on 0.0.0.0, beyond this machine: give it a token (--token T)\n"
    missing = rsp("serve", "--graph", "http://ex/g=/no/such/file.ttl")
    assert missing.returncode == 2 and "/no/such/file.ttl: cannot read the graph" in missing.stderr


def test_jsonld_on_stdin_fetches_no_remote_context(tmp_path):
    query = tmp_path / "q.rq"
    query.write_text("REGISTER QUERY q AS SELECT ?s FROM STREAM <http://ex/s> [RANGE 1s STEP 1s] "
                     "WHERE { ?s <http://ex/p> ?o }")
    remote = json.dumps({"@context": "http://127.0.0.1:9/context.jsonld", "@id": "http://ex/a"})
    done = rsp("query", query, "--stream", "http://ex/s=-", "--input-format", "jsonld", input=remote)
    assert done.returncode == 0
    assert "<stdin>:1: the JSON-LD context <http://127.0.0.1:9/context.jsonld> is not fetched" in done.stderr
    inline = json.dumps({"@context": {"ex": "http://ex/"}, "@id": "ex:a", "ex:p": {"@id": "ex:b"}})
    done = rsp("query", query, "--stream", "http://ex/s=-@200", "--input-format", "jsonld", input=inline)
    assert lines(done.stdout) == [{"t": 1000, "bindings": [{"s": "<http://ex/a>"}]}]
