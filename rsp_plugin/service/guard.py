"""The service's gate (an ASGI middleware, so WebSockets pass it too): rate, host, origin, token, body.

- Rate: a token bucket per client address, `rate` requests per second, `burst`
  at once; beyond it, 429 with Retry-After. The address is the connection's:
  `X-Forwarded-For` is believed only from a proxy named by `trusted_proxies`
  (uvicorn's option, set by `uvicorn_options`).
- Host: a request must name the service by an address it answers to (its own,
  the loopback names, `allow_hosts`): a page of another site whose name was made
  to point at this machine (DNS rebinding) is refused (403).
- Origin: a request that carries an Origin (a browser's) must come from the
  service's own page or an `allow_origins` origin (403 otherwise).
- Cross-site forms and simple requests: a state-changing request (POST, PUT,
  DELETE) may not carry a Content-Type that a page of another site can send
  without asking first (text/plain, a form, multipart), and a POST must carry
  one; the bearer token (in the Authorization header) lifts this (415 otherwise,
  naming the header to send). PUT and DELETE without a body need none: a
  browser asks before it sends them across sites, and the service grants no one.
- Token: with `token` set, every API request carries `Authorization: Bearer T`
  (or `?access_token=T`, for EventSource and WebSocket clients, which cannot set
  headers), compared byte for byte in constant time; the page, its files and the
  API's description are open.
- Size: a body whose Content-Length is over `max_body_bytes` is refused before
  it is read (413); a body without one is cut when it grows over it.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import time
from urllib.parse import parse_qs

from .settings import ServiceSettings

OPEN_PATHS = ("/", "/index.html", "/openapi.json", "/docs")
#: the media types a page of any site may send without a CORS preflight (the Fetch standard's "simple" ones)
SIMPLE_TYPES = frozenset({"text/plain", "application/x-www-form-urlencoded", "multipart/form-data"})
STATE_CHANGING = frozenset({"POST", "PUT", "DELETE", "PATCH"})


class Gate:
    def __init__(self, app, settings: ServiceSettings):
        self.app = app
        self.settings = settings
        self.buckets: dict[str, list[float]] = {}

    async def __call__(self, scope, receive, send):
        if scope["type"] not in ("http", "websocket"):
            return await self.app(scope, receive, send)
        origin = _header(scope, b"origin")
        refusal = self._refusal(scope, origin)
        if refusal is None:
            return await self.app(scope, receive, send)
        status, message, headers = refusal
        if scope["type"] == "websocket":
            await receive()  # websocket.connect
            await send({"type": "websocket.close", "code": 1013 if status == 429 else 1008, "reason": message[:120]})
            return
        if origin is not None and self.settings.origin_allowed(origin, _header(scope, b"host")):
            headers = {**headers, "access-control-allow-origin": origin, "vary": "Origin"}
        body = json.dumps({"error": message}).encode()
        await send({"type": "http.response.start", "status": status, "headers": [
            (b"content-type", b"application/json"), (b"content-length", str(len(body)).encode()),
            *((key.encode(), value.encode("latin-1")) for key, value in headers.items())]})
        await send({"type": "http.response.body", "body": body})

    def _refusal(self, scope, origin: str | None) -> tuple[int, str, dict] | None:
        """Why the request is refused (status, message, headers), or None."""
        if not self._allowed_now(scope):
            return 429, "too many requests: slow down", {"retry-after": "1"}
        host = _header(scope, b"host")
        if host is not None and not self.settings.host_allowed(host):
            return 403, (f"this service does not answer to the name {host[:100]!r} (a page of another site that "
                         f"points its name at this machine?): use {self.settings.host} or localhost, or start it "
                         f"with --allow-host NAME"), {}
        if origin is not None and not self.settings.origin_allowed(origin, host):
            return 403, (f"requests from pages of {origin[:100]!r} are refused: not this service's own page "
                         f"(start it with --allow-origin ORIGIN to let one in)"), {}
        method = scope.get("method", "GET")
        preflight = method == "OPTIONS" and origin is not None and _header(scope, b"access-control-request-method")
        bearer = self._bearer(scope)
        if self.settings.token is not None and not _open(scope.get("path", "")) and not preflight:
            if not (bearer or self._access_token(scope)):
                return 401, "a bearer token is needed: Authorization: Bearer TOKEN", {"www-authenticate": "Bearer"}
        if scope["type"] == "http" and method in STATE_CHANGING and not bearer:
            problem = _cross_site_type(method, _header(scope, b"content-type"))
            if problem is not None:
                media, others = content_type_for(scope.get("path", ""))
                return 415, (f"{method} {scope.get('path', '')[:200]}: {problem}; send -H 'Content-Type: {media}'"
                             f"{f' ({others})' if others else ''} or the bearer token"), {}
        if scope["type"] == "http":
            length = _header(scope, b"content-length")
            if length is not None and (not length.isdigit() or int(length) > self.settings.max_body_bytes):
                return 413, f"the body is larger than {self.settings.max_body_bytes} bytes", {}
        return None

    def _bearer(self, scope) -> bool:
        """Does the Authorization header carry the token (exactly: no trimming, no case folding)?"""
        if self.settings.token is None:
            return False
        given = _raw_header(scope, b"authorization")
        if given is None or given[:7].lower() != b"bearer ":
            return False
        return _same(given[7:], self.settings.token.encode("utf-8"))

    def _access_token(self, scope) -> bool:
        query = scope.get("query_string", b"").decode("latin-1")
        tokens = parse_qs(query, encoding="utf-8", errors="surrogateescape").get("access_token")
        return bool(tokens) and _same(tokens[0].encode("utf-8", "surrogateescape"), self.settings.token.encode("utf-8"))

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


def _same(given: bytes, expected: bytes) -> bool:
    """Equal, in time that tells nothing of either (digests first: not even the length)."""
    return hmac.compare_digest(hashlib.sha256(given).digest(), hashlib.sha256(expected).digest())


def _cross_site_type(method: str, content_type: str | None) -> str | None:
    """Why a state-changing request's Content-Type is one a page of another site could send, or None."""
    media = (content_type or "").split(";")[0].strip().lower()
    if media in SIMPLE_TYPES:
        return f"{media} is refused here (a page of any site can send it: a cross-site request forgery)"
    if not media and method == "POST":
        return "a POST needs a Content-Type (a page of any site can send one without)"
    return None


def content_type_for(path: str) -> tuple[str, str]:
    """The Content-Type to send to a state-changing path, and the others it takes (what a 415 tells)."""
    if path.startswith("/streams/"):
        return "application/x-tnt", ("or the body's own: application/n-triples, text/turtle, application/trig, "
                                     "application/n-quads, application/ld+json")
    if path.startswith("/graphs/"):
        return "text/turtle", "or application/n-triples, application/ld+json"
    if path.startswith("/rules/"):
        return "text/x-lars", ""
    if path.startswith("/queries") and not path.endswith("/observers"):
        return "application/sparql-query", "or application/json"
    return "application/json", ""


def _open(path: str) -> bool:
    return path in OPEN_PATHS or path.startswith("/static/")


def _raw_header(scope, name: bytes) -> bytes | None:
    for key, value in scope.get("headers", ()):
        if key.lower() == name:
            return value
    return None


def _header(scope, name: bytes) -> str | None:
    value = _raw_header(scope, name)
    return value.decode("latin-1") if value is not None else None


async def read_limited(request, limit: int) -> bytes:
    """The request's body, or None when it grows over `limit` bytes."""
    chunks, total = [], 0
    async for chunk in request.stream():
        total += len(chunk)
        if total > limit:
            return None
        chunks.append(chunk)
    return b"".join(chunks)


__all__ = ["Gate", "SIMPLE_TYPES", "content_type_for", "read_limited"]
