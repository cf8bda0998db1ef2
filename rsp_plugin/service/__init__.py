"""`rsp-plugin serve`: the engine as an HTTP service with a live page (Starlette, run by uvicorn).

    from rsp_plugin.service import ServiceSettings, create_app
    app = create_app(ServiceSettings(token="s3cret"))     # any ASGI server runs it

Modules, one idea each:

    settings.py    ServiceSettings: where it listens, its token, its bounds, what it may read
    guard.py       the gate every request passes: token, rate, body size
    bodies.py      pushed bodies read into stream elements (bad lines located, good ones kept)
    live.py        LiveEngine: the RSPEngine on its own thread, streams' and queries' state, reports numbered
    observers.py   SSE / WebSocket readers and webhook observers (bounded, retried)
    app.py         the routes (rsp-services' resource shapes) and the page
    openapi.py     the API's OpenAPI description
    page/          the live page: static HTML, CSS and a script reading the same JSON the API serves
"""

from __future__ import annotations

import asyncio
import logging

from ..core.extras import require
from .settings import ServiceSettings


def create_app(settings: ServiceSettings | None = None, **options):
    from .app import create_app as make

    return make(settings, **options)


def serve(settings: ServiceSettings, *, explain: bool = False) -> None:
    """Run the service with uvicorn until interrupted; `explain`: answer GET .../explain
    (`rsp_plugin/service/explain.py`)."""
    require("service", "rsp-plugin serve")
    import uvicorn

    settings.check()
    options = {}
    if explain:
        from .explain import explainer

        options["explainer"] = explainer
    logging.getLogger("uvicorn.error").addFilter(_not_a_stop)
    uvicorn.run(create_app(settings, **options), log_level="warning", **uvicorn_options(settings))


def uvicorn_options(settings: ServiceSettings) -> dict:
    """How uvicorn must run the app for its settings to hold: the address as a socket takes it, the
    WebSocket message bound, X-Forwarded-For believed only from the trusted proxies (uvicorn believes
    127.0.0.1 by default: a local client could pick its own address and escape the rate)."""
    return {"host": settings.listen_host, "port": settings.port, "ws_max_size": settings.max_body_bytes,
            "lifespan": "on", "timeout_graceful_shutdown": 2, "proxy_headers": bool(settings.trusted_proxies),
            "forwarded_allow_ips": list(settings.trusted_proxies) or None}


def _not_a_stop(record: logging.LogRecord) -> bool:
    """A request cut short because the service is stopping (SIGTERM while the engine works) is not
    an error to print with its traceback."""
    return not (record.exc_info and isinstance(record.exc_info[1], asyncio.CancelledError))


__all__ = ["ServiceSettings", "create_app", "serve", "uvicorn_options"]
