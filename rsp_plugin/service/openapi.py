"""The API's OpenAPI 3.1 description (served at /openapi.json; /docs renders it as a page).

Written out by hand, next to the routes it describes; a test checks that every
route of the application is described here and every described path is routed.
"""

from __future__ import annotations

from html import escape

_ERROR = {"description": "a client mistake: {\"error\": \"message\"} (a query's at FILE:LINE:COLUMN)",
          "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Error"}}}}
_JSON = {"content": {"application/json": {}}}
_STREAM = {"name": "iri", "in": "path", "required": True, "schema": {"type": "string"},
           "description": "the stream's IRI, percent-encoded"}
_QUERY = {"name": "name", "in": "path", "required": True, "schema": {"type": "string"},
          "description": "the query's name (REGISTER QUERY name / REGISTER RSTREAM <iri>), percent-encoded"}


def _op(summary: str, responses: dict, **more) -> dict:
    return {"summary": summary, "responses": responses, **more}


def package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rsp_plugin")
    except PackageNotFoundError:  # a source tree that is not installed
        return "unknown"


def openapi_document() -> dict:
    push_body = {"required": True, "content": {
        media: {"schema": {"type": "string"}} for media in (
            "application/x-tnt", "application/n-triples", "text/turtle", "application/trig",
            "application/n-quads", "application/ld+json")}}
    query_body = {"required": True, "content": {
        "application/sparql-query": {"schema": {"type": "string"}},
        "application/json": {"schema": {"$ref": "#/components/schemas/QueryRegistration"}}}}
    return {
        "openapi": "3.1.0",
        "info": {"title": "rsp-plugin service", "version": package_version(),
                 "description": "Continuous C-SPARQL / RSP-QL queries over RDF streams: register streams and "
                                "queries, push data, read results live (SSE, WebSocket, webhooks). Resources "
                                "follow rsp-services where they fit. With a token, send Authorization: Bearer "
                                "TOKEN (or ?access_token= for EventSource and WebSocket). Requests from pages "
                                "of other origins, and Host names the service does not answer to, are refused "
                                "(403); a POST, PUT or DELETE may not carry text/plain, a form or multipart, "
                                "and a POST must carry a Content-Type (415), unless it has the bearer token."},
        "components": {
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer"}},
            "schemas": {
                "Error": {"type": "object", "properties": {"error": {"type": "string"}}, "required": ["error"]},
                "QueryRegistration": {"type": "object", "required": ["query"], "properties": {
                    "query": {"type": "string", "description": "the query text (any dialect the front end reads)"},
                    "rules": {"type": "string", "description": "the LARS program its RULES <iri> names"},
                    "graphs": {"type": "object", "description": "IRI -> {data, format}: graphs its FROM reads",
                               "additionalProperties": {"type": "object", "properties": {
                                   "data": {"type": "string"}, "format": {"enum": ["ttl", "nt", "jsonld"]}}}},
                    "report": {"enum": ["on-window-close", "non-empty-content"]},
                    "dialect": {"type": "string"}}},
                "PushAnswer": {"type": "object", "properties": {
                    "accepted": {"type": "integer"}, "watermark": {"type": ["integer", "null"]},
                    "rejected": {"type": "array", "items": {"type": "object", "properties": {
                        "line": {"type": "integer"}, "reason": {"type": "string"}}}},
                    "late": {"type": "array"}, "took_ms": {"type": "number"}}},
                "Result": {"type": "object", "description": "one report: the command line's JSON line, with "
                                                            "the query, its number and its latency",
                           "properties": {"query": {"type": "string"}, "seq": {"type": "integer"},
                                          "t": {"type": "integer"}, "bindings": {"type": "array"},
                                          "triples": {"type": "array"}, "boolean": {"type": "boolean"},
                                          "latency_ms": {"type": "number"}}},
            },
        },
        "security": [{"bearer": []}],
        "paths": {
            "/": {"get": _op("the live page", {"200": {"description": "HTML"}}, security=[])},
            "/openapi.json": {"get": _op("this description", {"200": _JSON | {"description": "OpenAPI"}}, security=[])},
            "/docs": {"get": _op("this description as a page", {"200": {"description": "HTML"}}, security=[])},
            "/system": {"get": _op("version, watermark, limits, configured graphs and rules",
                                   {"200": _JSON | {"description": "the engine"}})},
            "/stats": {"get": _op("streams (rate, rejected lines), queries (latency), triples/s and results/s "
                                  "over the last two minutes", {"200": _JSON | {"description": "statistics"}})},
            "/events": {"get": _op("Server-Sent Events: every report of every query",
                                   {"200": {"description": "text/event-stream of Result"}})},
            "/watermark": {"post": _op("move the watermark to t (a quiet stream no longer holds time back); "
                                       "at most --max-gap windows ahead",
                                       {"200": _JSON | {"description": "the new watermark"}, "400": _ERROR,
                                        "409": _ERROR},
                                       requestBody={"content": {"application/json": {"schema": {
                                           "type": "object", "properties": {"t": {"type": "integer"}}}}}})},
            "/finish": {"post": _op("end a replay: the last windows that still reach the data are reported "
                                    "(Content-Type: application/json)",
                                    {"200": _JSON | {"description": "finished"}, "415": _ERROR})},
            "/streams": {"get": _op("the registered streams", {"200": _JSON | {"description": "streams"}})},
            "/streams/{iri}": {
                "parameters": [_STREAM],
                "get": _op("a stream: triples, rate, latest timestamp, rejected lines",
                           {"200": _JSON | {"description": "the stream"}, "404": _ERROR}),
                "put": _op("register a stream", {"201": _JSON | {"description": "registered"},
                                                 "200": _JSON | {"description": "registered already"}}),
                "post": _op("push elements: the media type (or ?format=tnt|nt|ttl|trig|nq|jsonld) names the "
                            "format; documents without times are seen at ?t= (ms) or on arrival",
                            {"200": {"description": "taken", "content": {"application/json": {"schema": {
                                "$ref": "#/components/schemas/PushAnswer"}}}},
                             "400": {"description": "some lines set aside (the good ones are taken): their "
                                                    "line numbers and reasons", "content": {"application/json": {
                                                        "schema": {"$ref": "#/components/schemas/PushAnswer"}}}},
                             "404": _ERROR, "409": _ERROR, "413": _ERROR, "415": _ERROR, "429": _ERROR},
                            parameters=[{"name": "t", "in": "query", "schema": {"type": "integer"}},
                                        {"name": "format", "in": "query", "schema": {"type": "string"}}],
                            requestBody=push_body),
                "delete": _op("unregister a stream (refused while queries read it)",
                              {"204": {"description": "gone"}, "409": _ERROR}),
            },
            "/streams/{iri}/ws": {"parameters": [_STREAM], "get": _op(
                "WebSocket: each message is a body in ?format= (default tnt); each is answered as a POST is",
                {"101": {"description": "switching protocols"}})},
            "/graphs/{iri}": {"parameters": [{**_STREAM, "description": "the graph's IRI, percent-encoded"}],
                              "put": _op("a static graph FROM <iri> may read (Turtle, N-Triples, JSON-LD)",
                                         {"201": _JSON | {"description": "kept"}, "400": _ERROR})},
            "/rules/{iri}": {"parameters": [{**_STREAM, "description": "the program's IRI, percent-encoded"}],
                             "put": _op("a LARS program RULES <iri> may name (text)",
                                        {"201": _JSON | {"description": "kept"}, "400": _ERROR})},
            "/queries": {
                "get": _op("the registered queries", {"200": _JSON | {"description": "queries"}}),
                "post": _op("register a query named by its own REGISTER clause (or a fresh name)",
                            {"201": _JSON | {"description": "registered; Location names it"}, "400": _ERROR,
                             "409": _ERROR}, requestBody=query_body),
            },
            "/queries/{name}": {
                "parameters": [_QUERY],
                "get": _op("a query: text, form, windows, evaluations, latency",
                           {"200": _JSON | {"description": "the query"}, "404": _ERROR}),
                "put": _op("register a query under this name (409: the name is taken, or --max-queries are "
                           "registered)", {"201": _JSON | {"description": "registered"}, "400": _ERROR,
                                           "409": _ERROR, "415": _ERROR},
                           requestBody=query_body),
                "delete": _op("unregister a query (and its observers)", {"204": {"description": "gone"}}),
            },
            "/queries/{name}/results": {"parameters": [_QUERY], "get": _op(
                "the reports kept after ?after=SEQ, a page of at most --page-bytes (\"more\": true: ask again "
                "after the page's last seq)", {"200": _JSON | {"description": "{results, last, missed, more}"}},
                parameters=[{"name": "after", "in": "query", "schema": {"type": "integer"}}])},
            "/queries/{name}/events": {"parameters": [_QUERY], "get": _op(
                "Server-Sent Events: the query's reports as they come (id = seq; Last-Event-ID resumes)",
                {"200": {"description": "text/event-stream of Result"}})},
            "/queries/{name}/ws": {"parameters": [_QUERY], "get": _op(
                "WebSocket: the query's reports as they come", {"101": {"description": "switching protocols"}})},
            "/queries/{name}/window": {"parameters": [_QUERY], "get": _op(
                "the content of the query's window now (its materialization under ENTAILMENT / RULES); "
                "Accept: application/n-triples for N-Triples",
                {"200": _JSON | {"description": "{size, truncated, triples}"}, "409": _ERROR},
                parameters=[{"name": "at", "in": "query", "schema": {"type": "integer"}},
                            {"name": "window", "in": "query", "schema": {"type": "string"}},
                            {"name": "limit", "in": "query", "schema": {"type": "integer"}}])},
            "/queries/{name}/explain": {"parameters": [_QUERY], "get": _op(
                "why a result or derived fact holds at t (when the engine can tell)",
                {"200": _JSON | {"description": "the explanation"},
                 "501": _JSON | {"description": "explanations are off (serve --explain keeps them)"}},
                parameters=[{"name": "t", "in": "query", "required": True, "schema": {"type": "integer"}},
                            {"name": "item", "in": "query", "schema": {"type": "string"},
                             "description": "the row (JSON object of N-Triples terms) or triple"}])},
            "/queries/{name}/observers": {
                "parameters": [_QUERY],
                "get": _op("the query's webhook observers", {"200": _JSON | {"description": "observers"}}),
                "post": _op("add a webhook: each report is POSTed to the URL (allowed prefixes only), retried",
                            {"201": _JSON | {"description": "added"}, "403": _ERROR},
                            requestBody={"content": {"application/json": {"schema": {
                                "type": "object", "properties": {"url": {"type": "string"}}}}}}),
            },
            "/queries/{name}/observers/{id}": {
                "parameters": [_QUERY, {"name": "id", "in": "path", "required": True, "schema": {"type": "string"}}],
                "get": _op("an observer: delivered, failed, dropped", {"200": _JSON | {"description": "observer"}}),
                "delete": _op("remove an observer", {"204": {"description": "gone"}}),
            },
        },
    }


def docs_page(document: dict) -> str:
    """The description as a plain page (no script, nothing fetched from elsewhere)."""
    rows = []
    for path, item in document["paths"].items():
        for method, operation in item.items():
            if method == "parameters":
                continue
            codes = ", ".join(operation["responses"])
            rows.append(f"<tr><td><code>{method.upper()}</code></td><td><code>{escape(path)}</code></td>"
                        f"<td>{escape(operation['summary'])}</td><td>{codes}</td></tr>")
    info = document["info"]
    return (f"<!doctype html><html><head><meta charset='utf-8'><title>{escape(info['title'])}</title>"
            "<link rel='stylesheet' href='/static/page.css'></head><body>"
            f"<h1>{escape(info['title'])} {escape(info['version'])}</h1><p>{escape(info['description'])}</p>"
            "<p><a href='/openapi.json'>openapi.json</a></p><table><tr><th>method</th><th>path</th>"
            f"<th>what</th><th>answers</th></tr>{''.join(rows)}</table></body></html>")


__all__ = ["docs_page", "openapi_document", "package_version"]
