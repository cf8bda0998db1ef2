"""No query, program, background or stream makes the process open a URL or a file it was not given.

A local HTTP server on 127.0.0.1 stands for the rest of the world: every hostile
query, program and document of this file names it (SERVICE, FROM, RULES,
JSON-LD @context, XML entities and DTDs, owl:imports, graph names), and after
each of them the server must not have seen a single request. Refusals are one
located line. Then the doors that the user opens on purpose (--allow-service,
--allow-graph, --jsonld-context) are shown to open, and only those.
"""

from __future__ import annotations

import contextlib
import io
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest
from rdflib import Graph, URIRef

from rsp_plugin import RSPEngine
from rsp_plugin.cli.command_line import main
from rsp_plugin.core.errors import QuerySyntaxError
from rsp_plugin.reasoning import BackgroundError, Materializer
from rsp_plugin.spark.http import parse_body

EX = "http://ex.org/"
SPARQL_JSON = {"head": {"vars": ["z"]}, "results": {"bindings": [{"z": {"type": "uri", "value": "http://ex.org/z"}}]}}
CONTEXT = {"@context": {"ex": "http://ex.org/", "name": "http://ex.org/name"}}


class World:
    """A server that answers anything (SPARQL results, Turtle, a JSON-LD context, a DTD) and counts."""

    def __init__(self):
        world = self
        self.requests: list[str] = []

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def answer(self):
                world.requests.append(f"{self.command} {self.path}")
                length = int(self.headers.get("Content-Length") or 0)
                if length:
                    self.rfile.read(length)
                if "sparql" in self.path:
                    body, kind = json.dumps(SPARQL_JSON).encode(), "application/sparql-results+json"
                elif self.path.endswith(".ttl"):
                    body, kind = f"<{EX}c> <{EX}p> <{EX}remote> .".encode(), "text/turtle"
                elif "ctx" in self.path:
                    body, kind = json.dumps(CONTEXT).encode(), "application/ld+json"
                else:
                    body, kind = b'<!ENTITY e "fetched">', "application/xml-dtd"
                self.send_response(200)
                self.send_header("Content-Type", kind)
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            do_GET = do_POST = answer

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def world():
    world = World()
    yield world
    world.close()


@pytest.fixture
def hostile(world):
    """The world, which must not hear from us."""
    yield world
    time.sleep(0.05)  # a request in flight would have arrived by now
    assert world.requests == [], "a hostile input made the process send requests"


def run(*args, cwd=None) -> tuple[int, list[dict], list[str]]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), contextlib.chdir(cwd or Path.cwd()):
        status = main([str(a) for a in args])
    return status, [json.loads(line) for line in out.getvalue().splitlines()], err.getvalue().splitlines()


@pytest.fixture
def stream(tmp_path) -> Path:
    path = tmp_path / "s.tnt"
    path.write_text(f"500 <{EX}a> <{EX}p> <{EX}b> .\n1500 <{EX}b> <{EX}p> <{EX}c> .\n")
    return path


def query(tmp_path, body: str, extra: str = "") -> Path:
    path = tmp_path / "q.rq"
    path.write_text(f"PREFIX ex: <{EX}>\nSELECT * FROM STREAM <{EX}s> [RANGE 2s STEP 1s]\n{extra}WHERE {{\n{body}\n}}\n")
    return path


# Queries ----------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("body, line, column, says", [
    ("?x ex:p ?y . SERVICE <{url}/sparql> {{ ?y ex:q ?z }}", 4, 14, "SERVICE <{url}/sparql> is refused"),
    ("SERVICE SILENT <{url}/sparql> {{ ?x ex:q ?z }}", 4, 1, "SERVICE <{url}/sparql> is refused"),
    ("?x ex:p ?y .\n  SERVICE <file:///etc/hostname> {{ ?y ex:q ?z }}", 5, 3,
     "SERVICE <file:///etc/hostname> is refused"),
    ("?x ex:p ?e . SERVICE ?e {{ ?x ex:q ?z }}", 4, 14, "SERVICE ?e is refused"),
    ("?x ex:p ?y FILTER EXISTS {{ SERVICE <{url}/sparql> {{ ?y ex:q ?z }} }}", 4, 28, "SERVICE <{url}/sparql>"),
    ("{{ SELECT ?x WHERE {{ SERVICE <{url}/sparql> {{ ?x ex:q ?z }} }} }}", 4, 21, "SERVICE <{url}/sparql>"),
])
def test_service_is_refused_with_its_place(hostile, tmp_path, stream, body, line, column, says):
    path = query(tmp_path, body.format(url=hostile.url))
    status, results, err = run("query", path, "--stream", f"{EX}s={stream}")
    assert status == 2 and results == []
    assert err[0].startswith(f"rsp-plugin: {path}:{line}:{column}: {says.format(url=hostile.url)}"), err


def test_service_is_refused_by_the_api_and_allowed_only_by_name(hostile):
    text = (f"SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] WHERE {{ ?x ?p ?y "
            f"SERVICE <{hostile.url}/sparql> {{ ?y ?q ?z }} }}")
    for allow in ((), (f"{hostile.url}/other",), ("http://127.0.0.2/*",)):
        engine = RSPEngine(allow_service=allow)
        engine.register_stream(f"{EX}s")
        with pytest.raises(QuerySyntaxError, match="is refused: a query may not send requests"):
            engine.register_query(text)


@pytest.mark.parametrize("clause", ["FROM <{url}/g.ttl>\n", "FROM NAMED <{url}/g.ttl>\n", "FROM <ftp://127.0.0.1/g>\n"])
def test_remote_from_graphs_are_refused(hostile, tmp_path, stream, clause):
    path = query(tmp_path, "?x ex:p ?y", clause.format(url=hostile.url))
    status, _, err = run("query", path, "--stream", f"{EX}s={stream}")
    assert status == 2 and err[0].startswith(f"rsp-plugin: {path}:3:1: FROM <"), err
    assert "remote graphs are not fetched" in err[0]


def test_a_remote_rules_program_is_refused(hostile, tmp_path, stream):
    path = query(tmp_path, "?x ex:p ?y", f"RULES <{hostile.url}/r.lars>\n")
    status, _, err = run("query", path, "--stream", f"{EX}s={stream}")
    assert status == 2 and "cannot read the RULES program" in err[0]


def test_a_program_naming_the_world_runs_without_reaching_it(hostile, tmp_path):
    program = tmp_path / "p.lars"
    program.write_text(f"@prefix w: <{hostile.url}/> .\nw:hot(?s) :- ?s w:temp ?v, ?v > 30 .\n")
    stream = tmp_path / "s.tnt"
    stream.write_text(f'1 <{hostile.url}/a> <{hostile.url}/temp> "31"^^<http://www.w3.org/2001/XMLSchema#integer> .\n')
    status, lines, _ = run("reason", program, "--stream", stream)
    assert status == 0 and lines == [{"t": 1, "atoms": [f"<{hostile.url}/hot>(<{hostile.url}/a>)"]}]


# Documents: backgrounds, FROM graphs, stream documents, the rdf-http source ----------------------------------


def jsonld(tmp_path, context, name="bg.jsonld") -> Path:
    path = tmp_path / name
    path.write_text(json.dumps({"@context": context, "@id": f"{EX}a", "name": "x"}))
    return path


@pytest.mark.parametrize("make_context", [
    lambda url: f"{url}/ctx",
    lambda url: [{"ex": EX}, f"{url}/ctx"],
    lambda url: {"ex": EX, "name": {"@id": f"{EX}name", "@context": f"{url}/ctx"}},
    lambda url: {"@import": f"{url}/ctx", "ex": EX},
    lambda url: "ctx.jsonld",  # a relative context: a file nobody gave
])
def test_a_remote_json_ld_context_is_never_fetched(hostile, tmp_path, stream, make_context):
    background = jsonld(tmp_path, make_context(hostile.url))
    (tmp_path / "ctx.jsonld").write_text(json.dumps(CONTEXT))
    with pytest.raises(BackgroundError, match="is not fetched"):
        Materializer("rdfs", background=background)
    status, _, err = run("query", query(tmp_path, "?x ?p ?y"), "--stream", f"{EX}s={stream}",
                         "--background", background)
    assert status == 2 and "is not fetched (map it to a local file: --jsonld-context" in err[0]
    document = jsonld(tmp_path, make_context(hostile.url), "doc.jsonld")
    status, results, err = run("query", query(tmp_path, "?x ?p ?y"), "--stream", f"{EX}s={document}@500")
    assert status == 0 and err[0].startswith(f"{document}:1: the JSON-LD context")
    rows = parse_body(document.read_text(), "jsonld", "s", "http://h/s", now=1)
    assert len(rows) == 1 and "is not fetched" in rows[0][5]


def test_a_json_ld_context_mapped_to_a_local_file_is_read_from_it(hostile, tmp_path, stream):
    context = tmp_path / "ctx.jsonld"
    context.write_text(json.dumps(CONTEXT))
    background = jsonld(tmp_path, f"{hostile.url}/ctx")
    status, results, err = run("query", query(tmp_path, "?x ex:name ?n"), "--stream", f"{EX}s={stream}",
                               "--background", background, "--jsonld-context", f"{hostile.url}/ctx={context}")
    assert status == 0, err
    assert results[0]["bindings"] == [{"x": f"<{EX}a>", "n": '"x"'}]


LAUGHS = """<?xml version="1.0"?>
<!DOCTYPE rdf:RDF [
 <!ENTITY a "lol">
 <!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">
 <!ENTITY c "&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;">
 <!ENTITY d "&c;&c;&c;&c;&c;&c;&c;&c;&c;&c;">
 <!ENTITY e "&d;&d;&d;&d;&d;&d;&d;&d;&d;&d;">
 <!ENTITY f "&e;&e;&e;&e;&e;&e;&e;&e;&e;&e;">
 <!ENTITY g "&f;&f;&f;&f;&f;&f;&f;&f;&f;&f;">
 <!ENTITY h "&g;&g;&g;&g;&g;&g;&g;&g;&g;&g;">
 <!ENTITY i "&h;&h;&h;&h;&h;&h;&h;&h;&h;&h;">
 <!ENTITY j "&i;&i;&i;&i;&i;&i;&i;&i;&i;&i;">
]>
<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">
 <rdf:Description rdf:about="http://ex.org/a"><ex:p>&j;</ex:p></rdf:Description>
</rdf:RDF>
"""


def test_the_900_byte_billion_laughs_background_fails_fast(tmp_path, stream):
    background = tmp_path / "lol.rdf"
    background.write_text(LAUGHS)
    assert len(LAUGHS.encode()) < 1000
    started = time.monotonic()
    with pytest.raises(BackgroundError) as refused:
        Materializer("rdfs", background=background)
    assert str(refused.value) == (f"{background}:12:1: the XML entity &j; would expand to more than 16777216 "
                                  "characters (the bound is 16 MiB or 10 times the document); refused")
    status, _, err = run("query", query(tmp_path, "?x ?p ?y"), "--stream", f"{EX}s={stream}", "--background",
                         background)
    assert status == 2 and "the XML entity &j; would expand" in err[0]
    document = tmp_path / "doc.rdf"
    document.write_text(LAUGHS)
    status, results, err = run("query", query(tmp_path, "?x ?p ?y"), "--stream", f"{EX}s={document}@500")
    assert status == 0 and err[0].startswith(f"{document}:12: the XML entity &j; would expand")
    assert time.monotonic() - started < 10


def test_many_references_to_a_middling_entity_are_refused_too(tmp_path):
    body = "".join(f'<rdf:Description rdf:about="http://ex.org/a{k}"><ex:p>&big;</ex:p></rdf:Description>'
                   for k in range(2000))
    document = (f'<?xml version="1.0"?><!DOCTYPE rdf:RDF [<!ENTITY big "{"x" * 20000}">]>'
                f'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">'
                f"{body}</rdf:RDF>")
    background = tmp_path / "quadratic.rdf"
    background.write_text(document)
    with pytest.raises(BackgroundError, match="XML entity references would expand to more than"):
        Materializer("rdfs", background=background)


@pytest.mark.parametrize("declaration", ['<!ENTITY e SYSTEM "{url}/e.dtd">', '<!ENTITY e PUBLIC "-//x" "{url}/e">',
                                         '<!ENTITY e SYSTEM "file:///etc/hostname">'])
def test_an_external_xml_entity_is_refused(hostile, tmp_path, declaration):
    background = tmp_path / "ext.rdf"
    background.write_text(f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [{declaration.format(url=hostile.url)}]>\n'
                          '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:ex="http://ex.org/">'
                          '<rdf:Description rdf:about="http://ex.org/a"><ex:p>&e;</ex:p></rdf:Description></rdf:RDF>')
    with pytest.raises(BackgroundError, match=r":2:\d+: the XML entity 'e' is external .*: it is not read; refused"):
        Materializer("rdfs", background=background)


def test_an_external_dtd_and_names_of_the_world_are_not_fetched(hostile, tmp_path, stream):
    background = tmp_path / "onto.rdf"
    background.write_text(
        f'<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF SYSTEM "{hostile.url}/rdf.dtd">\n'
        f'<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:owl="http://www.w3.org/2002/07/owl#"'
        f' xmlns:ex="http://ex.org/" xml:base="{hostile.url}/base">'
        f'<owl:Ontology rdf:about="{hostile.url}/onto"><owl:imports rdf:resource="{hostile.url}/other.ttl"/>'
        f'</owl:Ontology><rdf:Description rdf:about="http://ex.org/c"><ex:p rdf:resource="http://ex.org/d"/>'
        f"</rdf:Description></rdf:RDF>")
    trig = tmp_path / "s.trig"
    trig.write_text(f'<{hostile.url}/g> {{ <{EX}a> <{EX}p> <{hostile.url}/o.ttl> . }}\n'
                    f'<{hostile.url}/g> <http://www.w3.org/ns/prov#generatedAtTime> "500" .\n')
    status, results, err = run("query", query(tmp_path, "?x ex:p ?y"), "--stream", f"{EX}s={trig}",
                               "--background", background)
    assert status == 0, err
    assert {b["x"] for r in results for b in r["bindings"]} == {f"<{EX}a>", f"<{EX}c>"}


def test_dtd_entities_as_iri_abbreviations_still_work(tmp_path):
    background = tmp_path / "onto.owl"
    background.write_text(
        '<?xml version="1.0"?>\n<!DOCTYPE rdf:RDF [\n <!ENTITY ex "http://ex.org/">\n'
        ' <!ENTITY rdfs "http://www.w3.org/2000/01/rdf-schema#">\n]>\n'
        '<rdf:RDF xmlns:rdf="http://www.w3.org/1999/02/22-rdf-syntax-ns#" xmlns:rdfs="&rdfs;">'
        '<rdf:Description rdf:about="&ex;C"><rdfs:subClassOf rdf:resource="&ex;D"/></rdf:Description></rdf:RDF>')
    m = Materializer("rdfs", window=1, background=background)
    terms = m.terms
    ids = [terms.find(f"<{EX}{name}>") for name in "CD"]
    assert (ids[0], terms.find("<http://www.w3.org/2000/01/rdf-schema#subClassOf>"), ids[1]) in {
        tuple(t) for t in m.holding()}


# The doors the user opens ----------------------------------------------------------------------------------


def test_an_allowed_service_is_called(world, tmp_path, stream):
    path = query(tmp_path, f"?x ex:p ?y . SERVICE <{world.url}/sparql> {{ ?y ex:q ?z }}")
    status, results, err = run("query", path, "--stream", f"{EX}s={stream}", "--allow-service", f"{world.url}/*")
    assert status == 0, err
    assert world.requests and all("/sparql" in request for request in world.requests)
    assert results[0]["bindings"] == [{"x": f"<{EX}a>", "y": f"<{EX}b>", "z": f"<{EX}z>"}]


def test_an_allowed_remote_graph_is_fetched_once(world, tmp_path, stream):
    path = query(tmp_path, "?x ex:p ?y", f"FROM <{world.url}/g.ttl>\n")
    status, results, err = run("query", path, "--stream", f"{EX}s={stream}", "--allow-graph", f"{world.url}/g.ttl")
    assert status == 0, err
    assert world.requests == ["GET /g.ttl"]
    assert {b["y"] for r in results for b in r["bindings"]} >= {f"<{EX}remote>"}


def test_a_graph_given_for_its_iri_is_read_from_its_file(hostile, tmp_path, stream):
    graph = tmp_path / "g.ttl"
    graph.write_text(f"<{EX}c> <{EX}p> <{EX}local> .\n")
    path = query(tmp_path, "?x ex:p ?y", f"FROM <{hostile.url}/g.ttl>\n")
    status, results, err = run("query", path, "--stream", f"{EX}s={stream}", "--background",
                               f"{hostile.url}/g.ttl={graph}")
    assert status == 0, err
    assert f"<{EX}local>" in {b["y"] for r in results for b in r["bindings"]}


def test_the_engine_reads_allowed_graphs_only(world):
    engine = RSPEngine(allow_graphs=[f"{world.url}/*"])
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?y FROM STREAM <{EX}s> [RANGE 1s STEP 1s] FROM <{world.url}/g.ttl> "
                          "WHERE { ?x ?p ?y }")
    engine.push(f"{EX}s", [(URIRef(f"{EX}a"), URIRef(f"{EX}p"), URIRef(f"{EX}b"))], timestamp=0)
    (result,) = engine.finish()
    assert {str(row["y"]) for row in result.bindings} == {f"{EX}b", f"{EX}remote"}
    assert world.requests == ["GET /g.ttl"]


def test_an_rdflib_graph_given_by_the_api_is_not_a_remote_graph(hostile):
    graph = Graph()
    graph.add((URIRef(f"{EX}c"), URIRef(f"{EX}p"), URIRef(f"{EX}d")))
    engine = RSPEngine()
    engine.add_graph(f"{hostile.url}/g", graph)
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT ?y FROM STREAM <{EX}s> [RANGE 1s STEP 1s] FROM <{hostile.url}/g> "
                          "WHERE { ?x ?p ?y }")


def test_an_engine_for_others_queries_reads_no_file_a_query_names(tmp_path):
    (tmp_path / "g.ttl").write_text(f"<{EX}a> <{EX}p> <{EX}b> .\n")
    (tmp_path / "r.lars").write_text("q(X) :- p(X) .\n")
    base = tmp_path.as_uri() + "/"
    for clause in ("FROM <g.ttl>", "FROM <file:///etc/hostname>", "RULES <r.lars>"):
        engine = RSPEngine(allow_files=False)
        engine.register_stream(f"{EX}s")
        with pytest.raises(QuerySyntaxError, match="is refused: this engine reads"):
            engine.register_query(f"SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] {clause} WHERE {{ ?x ?p ?y }}",
                                  base=base)
    engine = RSPEngine(allow_files=False)
    engine.add_graph(base + "g.ttl", tmp_path / "g.ttl")  # given by the embedding program: read
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] FROM <g.ttl> WHERE {{ ?x ?p ?y }}",
                          base=base)
    engine = RSPEngine(allow_files=False)
    engine.add_rules(base + "r.lars", "q(X) :- p(X) .\n")  # a program given as text: no file read
    engine.register_stream(f"{EX}s")
    engine.register_query(f"SELECT * FROM STREAM <{EX}s> [RANGE 1s STEP 1s] RULES <r.lars> WHERE {{ ?x ?p ?y }}",
                          base=base)
