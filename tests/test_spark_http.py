"""The `rdf-http` source and the HTTP POST sink, against a server the test starts (as TripleWave serves a stream).

The server streams JSON-LD elements one per line over a chunked response (each a
named graph with its prov:generatedAtTime), and answers polls with N-Triples.
A continuous query reads the chunked stream on Spark and POSTs its results back.
"""

from __future__ import annotations

import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from rsp_plugin.spark.http import HTTPOptions, parse_body
from rsp_plugin.spark.source import SourceOptionError

EX = "http://ex/"
PROV = "http://www.w3.org/ns/prov#generatedAtTime"


def element(graph: str, subject: str, stamp: int) -> str:
    return json.dumps({"@id": f"{EX}{graph}", "@graph": [{"@id": f"{EX}{subject}", f"{EX}p": {"@id": f"{EX}o"}}],
                       PROV: str(stamp)})


ELEMENTS = [element("g1", "a", 500), element("g2", "b", 1500), "{not json", element("g3", "c", 2500)]


class Server:
    """/chunked: the elements, one per chunk, a little apart; /poll: N-Triples; /results: POSTs kept."""

    def __init__(self):
        self.posts: list[tuple[str, str]] = []
        self.polls = 0
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, *args):
                pass

            def do_GET(self):
                if self.path == "/chunked":
                    self.send_response(200)
                    self.send_header("Content-Type", "application/ld+json")
                    self.send_header("Transfer-Encoding", "chunked")
                    self.end_headers()
                    for item in ELEMENTS:
                        data = (item + "\n").encode()
                        self.wfile.write(f"{len(data):x}\r\n".encode() + data + b"\r\n")
                        self.wfile.flush()
                        time.sleep(0.2)
                    time.sleep(60)  # a live stream: the response stays open
                    self.wfile.write(b"0\r\n\r\n")
                    return
                server.polls += 1
                body = f"<{EX}poll{server.polls}> <{EX}p> <{EX}o> .\n".encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/n-triples")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def do_POST(self):
                length = int(self.headers["Content-Length"])
                server.posts.append((self.headers["X-Batch-Id"], self.rfile.read(length).decode()))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.httpd.server_address[1]}"
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def close(self):
        self.httpd.shutdown()


@pytest.fixture
def server():
    running = Server()
    yield running
    running.close()


def wait_for(condition, seconds=90.0):
    deadline = time.monotonic() + seconds
    while not condition() and time.monotonic() < deadline:
        time.sleep(0.1)
    return condition()


@pytest.mark.spark
def test_a_chunked_json_ld_stream_is_read_with_its_graph_times(server):
    from rsp_plugin.spark import spark_session

    spark = spark_session("local[2]")
    seen: list[tuple] = []
    query = (spark.readStream.format("rdf-http").option("url", f"{server.url}/chunked").option("stream", f"{EX}s")
             .load().writeStream.foreachBatch(lambda batch, _: seen.extend(map(tuple, batch.collect())))
             .trigger(processingTime="200 milliseconds").start())
    try:
        assert wait_for(lambda: len(seen) >= 4), seen
    finally:
        query.stop()
    assert [row[1:5] for row in seen if row[5] is None] == [
        (f"<{EX}a>", f"<{EX}p>", f"<{EX}o>", 500), (f"<{EX}b>", f"<{EX}p>", f"<{EX}o>", 1500),
        (f"<{EX}c>", f"<{EX}p>", f"<{EX}o>", 2500)]
    (dead,) = [row[5] for row in seen if row[5] is not None]
    assert dead.startswith(f"{server.url}/chunked:3: not JSON-LD:")


@pytest.mark.spark
def test_a_query_over_the_http_stream_posts_its_results(server):
    from rsp_plugin.spark import run as spark_run, spark_session

    spark = spark_session("local[2]")
    stream = (spark.readStream.format("rdf-http").option("url", f"{server.url}/chunked")
              .option("stream", f"{EX}s").load())
    query = (f"REGISTER RSTREAM <{EX}q> AS SELECT ?x FROM STREAM <{EX}s> [RANGE 1s STEP 1s] "
             f"WHERE {{ ?x <{EX}p> <{EX}o> }}")
    run = spark_run(spark, query, {f"{EX}s": stream}, f"{server.url}/results", progress=False,
                    trigger={"processingTime": "200 milliseconds"})
    try:
        assert wait_for(lambda: sum(body.count("\n") for _, body in server.posts) >= 2)
    finally:
        run.stop()
    lines = [json.loads(line) for _, body in server.posts for line in body.splitlines()]
    assert lines[:2] == [{"t": 1000, "bindings": [{"x": f"<{EX}a>"}]}, {"t": 2000, "bindings": [{"x": f"<{EX}b>"}]}]
    assert all(batch.isdigit() for batch, _ in server.posts)


@pytest.mark.spark
def test_polling_takes_each_answer_at_its_arrival_time(server):
    from rsp_plugin.spark import spark_session

    spark = spark_session("local[2]")
    seen: list[tuple] = []
    before = int(time.time() * 1000)
    query = (spark.readStream.format("rdf-http").option("url", f"{server.url}/poll").option("mode", "poll")
             .option("interval", "0.2").load()
             .writeStream.foreachBatch(lambda batch, _: seen.extend(map(tuple, batch.collect())))
             .trigger(processingTime="200 milliseconds").start())
    try:
        assert wait_for(lambda: len(seen) >= 3)
    finally:
        query.stop()
    assert [row[1] for row in seen[:3]] == [f"<{EX}poll1>", f"<{EX}poll2>", f"<{EX}poll3>"]
    assert all(row[0] == f"{server.url}/poll" and before <= row[4] <= int(time.time() * 1000) for row in seen)


def test_bodies_parse_like_the_file_source():
    assert parse_body(f"7 <{EX}a> <{EX}p> <{EX}o> .\nbad\n", "tnt", "s", "u", now=1) == [
        ("s", f"<{EX}a>", f"<{EX}p>", f"<{EX}o>", 7, None),
        ("s", None, None, None, None, "u:2: expected a timestamp and a triple: TIMESTAMP <s> <p> <o> .")]
    no_time = json.dumps({"@id": f"{EX}a", f"{EX}p": {"@id": f"{EX}o"}})
    assert parse_body(no_time, "jsonld", "s", "u", now=9) == [("s", f"<{EX}a>", f"<{EX}p>", f"<{EX}o>", 9, None)]
    with pytest.raises(SourceOptionError, match="needs an http"):
        HTTPOptions.from_options({"url": "ftp://x"})
