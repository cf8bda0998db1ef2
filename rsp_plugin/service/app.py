"""The HTTP API and its page: `create_app(settings)` gives the ASGI application.

Resources follow rsp-services (C-SPARQL's REST service) where they fit: streams
and queries are registered with PUT, fed / read with POST / GET, removed with
DELETE; observers hang under their query. Stream IRIs and query names that
hold `/` go into a path percent-encoded. The whole API is described by
`/openapi.json` (and `/docs`); `rsp_plugin/service/openapi.py` holds it.
"""

from __future__ import annotations

import asyncio
import json
from contextlib import asynccontextmanager
from pathlib import Path

from ..core.extras import require

require("service", "rsp_plugin.service")

from starlette.applications import Starlette  # noqa: E402 (after the check naming the extra)
from starlette.requests import Request
from starlette.responses import HTMLResponse, Response, StreamingResponse
from starlette.routing import Mount, Route, WebSocketRoute
from starlette.staticfiles import StaticFiles
from starlette.websockets import WebSocket, WebSocketDisconnect

from ..core.errors import UserError
from .guard import Gate, read_limited
from .live import LiveEngine, ServiceError, brief, json_bytes, text_bytes
from .observers import Observers
from .openapi import docs_page, openapi_document, package_version
from .settings import ServiceSettings

PAGE = Path(__file__).parent / "page"


class JSONResponse(Response):
    """JSON that always encodes (a lone surrogate in a client's text is written as its escape)."""

    media_type = "application/json"

    def render(self, content) -> bytes:
        return json_bytes(content)


def create_app(settings: ServiceSettings | None = None, *, explainer=None) -> Starlette:
    """The service over a fresh engine. `explainer(engine, query, t, item)` answers GET .../explain."""
    settings = settings or ServiceSettings()
    settings.check()
    live = LiveEngine(settings, explainer=explainer)
    observers = Observers(settings)
    live.listeners.append(observers.offer)
    from .brokers import BrokerFeeds

    feeds = BrokerFeeds(live, settings)  # streams fed from a broker's topic (brokers.py)

    @asynccontextmanager
    async def lifespan(app):
        live.loop = asyncio.get_running_loop()
        yield
        await observers.close()
        feeds.close()
        live.close()

    async def run(function, *args):
        return await live.call(function, *args)

    # the page and the description ----------------------------------------------------------

    async def page(request: Request):
        return HTMLResponse((PAGE / "index.html").read_text(encoding="utf-8"))

    async def openapi(request: Request):
        return JSONResponse(openapi_document())

    async def docs(request: Request):
        return HTMLResponse(docs_page(openapi_document()))

    async def system(request: Request):
        return JSONResponse({"version": package_version(), "watermark": live.engine.watermark, "finished": live.finished,
                             "streams": len(live.streams), "queries": len(live.queries),
                             "limits": {"max_body_bytes": settings.max_body_bytes, "rate": settings.rate,
                                        "burst": settings.burst, "history": settings.history,
                                        "history_bytes": settings.history_bytes, "queue": settings.queue,
                                        "queue_bytes": settings.queue_bytes, "page_bytes": settings.page_bytes,
                                        "max_queries": settings.max_queries, "max_gap": settings.max_gap},
                             "graphs": sorted(live.graphs), "rules": sorted(live.rules),
                             "explanations": live.explainer is not None,
                             "errors": live.engine.errors[-20:]})

    async def stats(request: Request):
        return JSONResponse(await run(live.stats))

    # streams -------------------------------------------------------------------------------

    async def list_streams(request: Request):
        return JSONResponse(await run(lambda: [state.info() for state in live.streams.values()]))

    async def stream(request: Request):
        iri = request.path_params["iri"]
        if request.method == "GET":
            return JSONResponse(await run(live.stream_info, iri))
        if request.method == "PUT":
            body = await read_limited(request, settings.max_body_bytes)
            if body is None:
                raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
            spec = _json_object(body) if body.strip() else None  # {"mqtt": URL, ...}: fed from a topic
            info, created = await run(live.register_stream, iri)
            if spec is not None:
                info = {**info, **(await asyncio.to_thread(feeds.attach, iri, spec))}
            return JSONResponse(info, status_code=201 if created else 200)
        if request.method == "DELETE":
            await run(live.unregister_stream, iri)
            feeds.detach(iri)
            return Response(status_code=204)
        body = await read_limited(request, settings.max_body_bytes)
        if body is None:
            raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
        t = _int_param(request, "t")
        answer = await run(live.push, iri, body, request.headers.get("content-type"),
                           request.query_params.get("format"), t)
        return JSONResponse(answer, status_code=400 if answer["rejected"] else 200)

    async def stream_socket(websocket: WebSocket):
        """Each text (or binary) message is a body in ?format= (default tnt); each gets an answer."""
        iri = websocket.path_params["iri"]
        await websocket.accept()
        fmt = websocket.query_params.get("format") or "tnt"
        t = websocket.query_params.get("t")
        try:
            while True:
                message = await websocket.receive()
                if message["type"] == "websocket.disconnect":
                    break
                data = message.get("bytes") or (message.get("text") or "").encode("utf-8")
                if len(data) > settings.max_body_bytes:
                    await _send(websocket, {"error": f"the message is larger than {settings.max_body_bytes} bytes"})
                    continue
                try:
                    answer = await run(live.push, iri, data, None, fmt, _int(t, "t") if t else None)
                except ServiceError as error:
                    answer = {"error": error.message}
                await _send(websocket, answer)
        except WebSocketDisconnect:
            pass

    # static graphs and rules ---------------------------------------------------------------

    async def graph(request: Request):
        body = await read_limited(request, settings.max_body_bytes)
        if body is None:
            raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
        return JSONResponse(await run(live.put_graph, request.path_params["iri"], body,
                                      request.headers.get("content-type"), request.query_params.get("format")),
                            status_code=201)

    async def rules(request: Request):
        body = await read_limited(request, settings.max_body_bytes)
        if body is None:
            raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
        return JSONResponse(await run(live.put_rules, request.path_params["iri"], _text(body)), status_code=201)

    # queries -------------------------------------------------------------------------------

    async def list_queries(request: Request):
        if request.method == "POST":
            return await _register(request, None)
        return JSONResponse(await run(lambda: [state.info() for state in live.queries.values()]))

    async def query(request: Request):
        name = request.path_params["name"]
        if request.method == "PUT":
            return await _register(request, name)
        if request.method == "DELETE":
            await run(live.unregister_query, name)
            observers.remove_query(name)
            return Response(status_code=204)
        return JSONResponse(await run(live.query_info, name))

    async def _register(request: Request, name: str | None):
        body = await read_limited(request, settings.max_body_bytes)
        if body is None:
            raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
        media = (request.headers.get("content-type") or "").split(";")[0].strip().lower()
        options: dict = {}
        if media == "application/json":
            text, options = _registration(_json(body))
        elif media in ("", "application/sparql-query", "text/plain"):
            text = _text(body)
        else:
            raise ServiceError(415, f"a query is sent as application/sparql-query, text/plain or application/json, "
                                    f"not {media}")
        info, registered = await run(lambda: live.register_query(name, text, **options))
        return JSONResponse(info, status_code=201, headers={"location": f"/queries/{_quote(registered)}"})

    async def results(request: Request):
        name = request.path_params["name"]
        return Response(await run(live.results_page, name, _int_param(request, "after") or 0),
                        media_type="application/json")

    async def events(request: Request):
        """Server-Sent Events: every report of the query (or of every query on /events), as it comes."""
        name = request.path_params.get("name")
        if name is not None:
            await run(live.query_info, name)  # 404 when unknown
        after = _int_param(request, "after")
        last_id = request.headers.get("last-event-id")
        if last_id and name is not None and last_id.isdigit():
            after = int(last_id)
        reader = observers.reader({name} if name is not None else None)
        backlog = await run(live.kept_after, name, after) if name is not None and after is not None else []

        async def stream():
            try:
                yield b"retry: 1000\n\n"
                last = after or 0
                for seq, data in backlog:
                    last = seq
                    yield _sse(seq, data)
                while True:
                    try:
                        item = await asyncio.wait_for(reader.next(), timeout=15)
                    except asyncio.TimeoutError:
                        yield b": keep-alive\n\n"
                        continue
                    if item is None:  # cut off: too far behind
                        yield b"event: overflow\ndata: {}\n\n"
                        return
                    if name is not None and item[0] <= last:
                        continue
                    yield _sse(*item)
            finally:
                observers.drop(reader)

        return StreamingResponse(stream(), media_type="text/event-stream",
                                 headers={"cache-control": "no-cache", "x-accel-buffering": "no"})

    async def results_socket(websocket: WebSocket):
        name = websocket.path_params["name"]
        try:
            await run(live.query_info, name)
        except ServiceError as error:
            await websocket.close(code=1008, reason=error.message[:120])
            return
        reader = observers.reader({name})  # (before the handshake ends: no report falls between)
        try:
            await websocket.accept()
            while True:
                item = await reader.next()
                if item is None:
                    await websocket.close(code=1013, reason="too far behind: reconnect with ?after=SEQ")
                    return
                await websocket.send_text(item[1].decode("utf-8"))
        except (WebSocketDisconnect, RuntimeError):
            pass
        finally:
            observers.drop(reader)

    async def window(request: Request):
        name = request.path_params["name"]
        limit = _int_param(request, "limit")
        if limit is not None and limit < 1:
            raise ServiceError(400, f"?limit= expects a positive integer, got {limit}")
        answer = await run(live.window, name, _int_param(request, "at"), request.query_params.get("window"), limit)
        if "application/n-triples" in request.headers.get("accept", ""):
            return Response(text_bytes("".join(line + "\n" for line in answer["triples"])),
                            media_type="application/n-triples")
        return JSONResponse(answer)

    async def explain(request: Request):
        name = request.path_params["name"]
        t = _int_param(request, "t")
        if t is None:
            raise ServiceError(400, "explain: give ?t=TIME and the row or triple (?item=JSON)")
        try:
            item = json.loads(request.query_params.get("item") or "{}")
        except (ValueError, RecursionError) as error:
            raise ServiceError(400, f"item: not JSON: {brief(error, 200)}") from None
        if not isinstance(item, (dict, list, str)):
            raise ServiceError(400, "item: a row {VAR: TERM} or a triple")
        explanation = await run(live.explain, name, t, item)
        if explanation is None:
            return JSONResponse({"query": name, "t": t, "item": item, "explanation": None,
                                 "reason": "explanations are off: start the service with --explain "
                                           "(rsp-plugin serve --explain) to keep them"}, status_code=501)
        return JSONResponse({"query": name, "t": t, "item": item, "explanation": explanation})

    async def observer_list(request: Request):
        name = request.path_params["name"]
        await run(live.query_info, name)
        if request.method == "GET":
            return JSONResponse([o.info() for o in observers.webhooks.values() if o.query == name])
        body = await read_limited(request, settings.max_body_bytes)
        if body is None:
            raise ServiceError(413, f"the body is larger than {settings.max_body_bytes} bytes")
        url = _json(body).get("url") if body.strip().startswith(b"{") else _text(body).strip()
        if not isinstance(url, str):
            raise ServiceError(400, 'expected {"url": "http://..."} or the URL as text')
        if not url.startswith(("mqtt://", "mqtts://")) and not settings.webhook_allowed(url):
            raise ServiceError(403, f"webhook <{brief(url, 200)}> is not under an allowed prefix (serve "
                                    f"--webhook-allow URL); allowed: {', '.join(settings.webhook_allow) or 'none'}")
        observer = observers.add_webhook(name, url)
        return JSONResponse(observer.info(), status_code=201,
                            headers={"location": f"/queries/{_quote(name)}/observers/{observer.id}"})

    async def observer(request: Request):
        name, observer_id = request.path_params["name"], request.path_params["id"]
        found = observers.webhooks.get(observer_id)
        if found is None or found.query != name:
            raise ServiceError(404, f"query {name!r} has no observer {observer_id}")
        if request.method == "DELETE":
            observers.remove_webhook(observer_id)
            return Response(status_code=204)
        return JSONResponse(found.info())

    # time ----------------------------------------------------------------------------------

    async def watermark(request: Request):
        body = await read_limited(request, 4096)
        return JSONResponse(await run(live.advance, _time_in(body)))

    async def finish(request: Request):
        return JSONResponse(await run(live.finish))

    async def service_error(request, error: ServiceError):
        return JSONResponse({"error": error.message, **error.detail}, status_code=error.status)

    async def refused(request, error: UserError):  # a library call refused what the client sent
        return JSONResponse({"error": str(error)}, status_code=400)

    routes = [
        Route("/", page),
        Route("/openapi.json", openapi),
        Route("/docs", docs),
        Route("/system", system),
        Route("/stats", stats),
        Route("/events", events),
        Route("/watermark", watermark, methods=["POST"]),
        Route("/finish", finish, methods=["POST"]),
        Route("/streams", list_streams),
        WebSocketRoute("/streams/{iri:path}/ws", stream_socket),
        Route("/streams/{iri:path}", stream, methods=["GET", "PUT", "POST", "DELETE"]),
        Route("/graphs/{iri:path}", graph, methods=["PUT"]),
        Route("/rules/{iri:path}", rules, methods=["PUT"]),
        Route("/queries", list_queries, methods=["GET", "POST"]),
        WebSocketRoute("/queries/{name:path}/ws", results_socket),
        Route("/queries/{name:path}/results", results),
        Route("/queries/{name:path}/events", events),
        Route("/queries/{name:path}/window", window),
        Route("/queries/{name:path}/explain", explain),
        Route("/queries/{name:path}/observers/{id}", observer, methods=["GET", "DELETE"]),
        Route("/queries/{name:path}/observers", observer_list, methods=["GET", "POST"]),
        Route("/queries/{name:path}", query, methods=["GET", "PUT", "DELETE"]),
        Mount("/static", StaticFiles(directory=PAGE), name="static"),
    ]
    app = Starlette(routes=routes, lifespan=lifespan, exception_handlers={ServiceError: service_error,
                                                                          UserError: refused})
    app.state.live = live
    app.state.observers = observers
    app.state.settings = settings
    if settings.allow_origins:  # pages of these origins may read the answers too (the Gate lets them in)
        from starlette.middleware.cors import CORSMiddleware

        app.add_middleware(CORSMiddleware, allow_origins=list(settings.allow_origins),
                           allow_methods=["GET", "POST", "PUT", "DELETE"],
                           allow_headers=["authorization", "content-type", "last-event-id"],
                           expose_headers=["location", "retry-after"], max_age=600)
    app.add_middleware(Gate, settings=settings)
    return app


async def _send(websocket: WebSocket, value) -> None:
    await websocket.send_text(json_bytes(value).decode("utf-8"))


def _sse(seq: int, data: bytes) -> bytes:
    return b"id: %d\nevent: result\ndata: %s\n\n" % (seq, data)


def _json_object(body: bytes) -> dict:
    value = _json(body)
    if not isinstance(value, dict):
        raise ServiceError(400, 'expected a JSON object, e.g. {"mqtt": "mqtt://HOST:PORT/TOPIC"}')
    return value


def _int_param(request, name: str) -> int | None:
    text = request.query_params.get(name)
    return None if text is None or text == "" else _int(text, name)


def _int(text: str, name: str) -> int:
    if len(text) <= 30 and text.lstrip("-").isascii() and text.lstrip("-").isdigit():
        return int(text)
    raise ServiceError(400, f"?{name}= expects an integer, got {brief(repr(text))}")


#: the formats a static graph is read in (`LiveEngine.put_graph`)
GRAPH_FORMATS = ("ttl", "nt", "jsonld")
REGISTRATION = ('expected {"query": "...", "rules"?: "...", "graphs"?: {IRI: {"data": "...", "format"?: "ttl"}}, '
                '"report"?: "...", "dialect"?: "..."}')


def _json(body: bytes):
    """A body read as JSON, or a 400 saying where it is not."""
    try:
        return json.loads(body)
    except json.JSONDecodeError as error:
        raise ServiceError(400, f"not JSON: {error}") from None
    except UnicodeDecodeError as error:
        raise ServiceError(400, f"not JSON: not UTF-8 text (byte {error.start})") from None
    except RecursionError:
        raise ServiceError(400, "not JSON this service reads: nested too deeply") from None


def _registration(spec) -> tuple[str, dict]:
    """A JSON registration checked member by member: (query text, register_query's options); a 400 naming
    the member that is not what it should be."""
    if not isinstance(spec, dict):
        raise ServiceError(400, f"{REGISTRATION}, not {type(spec).__name__}")
    unknown = sorted(set(spec) - {"query", "rules", "graphs", "report", "dialect"})
    if unknown:
        raise ServiceError(400, f"unknown member {brief(unknown[0])!r}: {REGISTRATION}")
    for member in ("query", "rules", "report", "dialect"):
        if not isinstance(spec.get(member, ""), str) or (member == "query" and member not in spec):
            raise ServiceError(400, f'"{member}" must be a string (got {brief(json.dumps(spec.get(member)))}): '
                                    f"{REGISTRATION}")
    given = spec.get("graphs") or {}
    if not isinstance(given, dict):
        raise ServiceError(400, f'"graphs" must be an object {{IRI: {{"data": "...", "format": "ttl"}}}} '
                                f"(got {brief(json.dumps(given))})")
    graphs = {}
    for iri, graph in given.items():
        if not (isinstance(graph, dict) and isinstance(graph.get("data"), str)
                and isinstance(graph.get("format", "ttl"), str) and set(graph) <= {"data", "format"}):
            raise ServiceError(400, f'"graphs": <{brief(iri, 200)}> must be {{"data": "...", "format": "ttl"}} '
                                    f"(got {brief(json.dumps(graph))})")
        if graph.get("format", "ttl") not in GRAPH_FORMATS:
            raise ServiceError(400, f'"graphs": <{brief(iri, 200)}>: "format" is one of {", ".join(GRAPH_FORMATS)} '
                                    f"(got {brief(json.dumps(graph['format']))})")
        # (a lone surrogate escape in the data becomes bytes that are not UTF-8: its line is set aside)
        graphs[iri] = (graph["data"].encode("utf-8", "surrogatepass"), graph.get("format") or "ttl")
    dialect = spec.get("dialect")
    if dialect is not None:
        from ..query.dialects import check_choice

        try:
            check_choice(dialect)
        except ValueError as error:
            raise ServiceError(400, f'"dialect": {error}') from None
    return spec["query"], {"rules": spec.get("rules"), "graphs": graphs, "report": spec.get("report"),
                           "dialect": dialect}


def _time_in(body: bytes | None) -> int:
    """`{"t": TIME}`: an integer number of ms (a JSON number without a fraction)."""
    try:
        t = json.loads(body)["t"] if body is not None else None
    except (ValueError, TypeError, KeyError, IndexError):
        t = None
    if isinstance(t, float) and t.is_integer():
        t = int(t)
    if not isinstance(t, int) or isinstance(t, bool):
        raise ServiceError(400, 'expected {"t": TIME}, TIME an integer number of ms')
    return t


def _text(body: bytes) -> str:
    try:
        return body.decode("utf-8")
    except UnicodeDecodeError as error:
        raise ServiceError(400, f"the body is not UTF-8 text (byte {error.start})") from None


def _quote(name: str) -> str:
    from urllib.parse import quote

    return quote(name.encode("utf-8", "backslashreplace"), safe="")


__all__ = ["create_app"]
