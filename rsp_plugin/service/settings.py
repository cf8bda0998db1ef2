"""The service's settings: one frozen value, given to `create_app` (Starlette's app-factory idiom).

Safe by default: it listens on 127.0.0.1; anywhere else it needs a token; bodies,
WebSocket messages and request rates are bounded; it reads no file and opens no
URL a client names: static graphs and RULES programs are the ones given here
(or uploaded through the API), webhooks go only to the allowed prefixes.

>>> ServiceSettings().check()
>>> ServiceSettings(host="0.0.0.0").check()
Traceback (most recent call last):
...
ValueError: the service listens on 0.0.0.0, beyond this machine: give it a token (--token T)
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..limits import MAX_GAP_WINDOWS


@dataclass(frozen=True)
class ServiceSettings:
    host: str = "127.0.0.1"
    port: int = 8000
    #: the bearer token every API request must carry (None: none asked, allowed on loopback only)
    token: str | None = None
    #: the largest request body or WebSocket message, in bytes
    max_body_bytes: int = 8 * 1024 * 1024
    #: requests per second per client (a token bucket; `burst` requests at once)
    rate: float = 200.0
    burst: int = 400
    #: static graphs the server may read, IRI -> file (`serve --graph IRI=FILE`)
    graphs: dict[str, str] = field(default_factory=dict)
    #: graphs every query sees in its default graph (`serve --background FILE`)
    background: tuple[str, ...] = ()
    #: LARS programs `RULES <iri>` may name, IRI -> file (`serve --rules IRI=FILE`)
    rules: dict[str, str] = field(default_factory=dict)
    #: URL prefixes webhook observers may POST to (`serve --webhook-allow URL`); none by default
    webhook_allow: tuple[str, ...] = ()
    #: results kept per query for late readers (GET .../results?after=N, SSE Last-Event-ID)
    history: int = 1000
    #: results queued per SSE / WebSocket reader or webhook before it is cut off (SSE, WS) or drops (webhook)
    queue: int = 10_000
    #: webhook delivery: attempts per result, seconds before the first retry (doubling), timeout per POST
    webhook_attempts: int = 3
    webhook_backoff: float = 0.2
    webhook_timeout: float = 5.0
    #: triples shown by GET .../window before it is cut
    window_limit: int = 10_000
    #: how many windows (of the smallest STEP) an element, `?t=` or `POST /watermark` may jump ahead of
    #: the stream's time (None: no bound; `rsp_plugin.limits.MAX_GAP_WINDOWS`)
    max_gap: int | None = MAX_GAP_WINDOWS

    def check(self) -> None:
        """Refuse settings that would expose the service without a token."""
        if self.token is None and not is_loopback(self.host):
            raise ValueError(f"the service listens on {self.host}, beyond this machine: give it a token (--token T)")
        if self.max_body_bytes <= 0 or self.rate <= 0 or self.burst <= 0:
            raise ValueError("the body and rate bounds must be positive")

    def webhook_allowed(self, url: str) -> bool:
        """Is `url` under one of the allowed prefixes (same scheme, host and port, path below)?"""
        try:
            target = urlsplit(url)
            target_port = target.port or _default_port(target.scheme)
        except ValueError:
            return False
        if target.scheme not in ("http", "https") or not target.hostname or target.username or target.password:
            return False
        if any(segment in (".", "..") for segment in unquote(target.path).split("/")):
            return False  # a client resolves dot segments: /hooks/../elsewhere is not under /hooks/
        for prefix in self.webhook_allow:
            allowed = urlsplit(prefix)
            if (allowed.scheme == target.scheme and allowed.hostname == target.hostname
                    and (allowed.port or _default_port(allowed.scheme)) == target_port
                    and (target.path or "/").startswith(allowed.path or "/")):
                return True
        return False


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme)


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


__all__ = ["ServiceSettings", "is_loopback"]
