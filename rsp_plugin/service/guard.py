"""The service's gate (an ASGI middleware, so WebSockets pass it too): token, rate, body size.

- Token: with `token` set, every API request carries `Authorization: Bearer T`
  (or `?access_token=T`, for EventSource and WebSocket clients, which cannot set
  headers); the page, its files and the API's description are open.
- Rate: a token bucket per client address, `rate` requests per second, `burst`
  at once; beyond it, 429 with Retry-After.
- Size: a body whose Content-Length is over `max_body_bytes` is refused before
  it is read (413); a body without one is cut when it grows over it.
"""

from __future__ import annotations

import hmac
import json
import time
from urllib.parse import parse_qs

from .settings import ServiceSettings

OPEN_PATHS = ("/", "/index.html", "/openapi.json", "/docs")


class Gate:
    def __init__(self, app, settings: ServiceSettings):
        self.app = app
        self.settings = settings
        self.buckets: dict[str, list[float]] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        path = scope.get("path", "")
        refusal = None
        if not self._allowed_now(scope):
            refusal = (429, "too many requests: slow down", {"retry-after": "1"})
        elif self.settings.token is not None and not _open(path) and not self._authorized(scope):
            refusal = (401, "a bearer token is needed: Authorization: Bearer TOKEN", {"www-authenticate": "Bearer"})
        elif scope["type"] == "http":
            length = _header(scope, b"content-length")
            if length is not None and (not length.isdigit() or int(length) > self.settings.max_body_bytes):
                refusal = (413, f"the body is larger than {self.settings.max_body_bytes} bytes", {})
        if refusal is None:
            return await self.app(scope, receive, send)
        status, message, headers = refusal
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1008 if status == 401 else 1013, "reason": message})
            return
        body = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            *((key.encode(), value.encode()) for key, value in headers.items())]})
        await send({"type": "http.response.body", "body": body})

    def _authorized(self, scope) -> bool:
        expected = self.settings.token.encode()
        given = _header(scope, b"authorization")
        if given is not None and given.startswith("Bearer "):
            return hmac.compare_digest(given[len("Bearer "):].strip().encode(), expected)
        query = parse_qs(scope.get("query_string", b"").decode("latin-1"))
        tokens = query.get("access_token")
        return bool(tokens) and hmac.compare_digest(tokens[0].encode(), expected)

    def _allowed_now(self, scope) -> bool:
        client = (scope.get("client") or ("?", 0))[0]
        now = time.monotonic()
        bucket = self.buckets.get(client)
        if bucket is None:
            bucket = self.buckets[client] = [float(self.settings.burst), now]
        tokens = min(float(self.settings.burst), bucket[0] + (now - bucket[1]) * self.settings.rate)
        bucket[1] = now
        if tokens < 1:
            bucket[0] = tokens
            return False
        bucket[0] = tokens - 1
        if len(self.buckets) > 10_000:  # forget the quiet ones
            for key in [k for k, (_, seen) in self.buckets.items() if now - seen > 60]:
                del self.buckets[key]
        return True


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith("/static/")


def _header(scope, name: bytes) -> str | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value.decode("latin-1")
    return None


async def read_limited(request, limit: int) -> bytes:
    """The request's body, or None when it grows over `limit` bytes."""
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


__all__ = ["Gate", "read_limited"]
