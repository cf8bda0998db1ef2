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
import re
from dataclasses import dataclass, field
from urllib.parse import unquote, urlsplit

from ..core.limits import MAX_GAP_WINDOWS


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
    #: reports kept per query for late readers (GET .../results?after=N, SSE Last-Event-ID): at most this
    #: many, whose JSON adds up to at most `history_bytes` (the latest one is always kept)
    history: int = 1000
    history_bytes: int = 1024 * 1024
    #: reports waiting per SSE / WebSocket reader or webhook, at most this many and `queue_bytes` of JSON,
    #: before the reader is cut off (SSE, WS: it resumes from the history) or the oldest is dropped (webhook)
    queue: int = 10_000
    queue_bytes: int = 16 * 1024 * 1024
    #: the JSON of the reports one GET .../results answers at most (at least one report; "more" says the rest)
    page_bytes: int = 1024 * 1024
    #: queries registered at once
    max_queries: int = 1000
    #: seconds a stream may go without an element before it stops holding the watermark back (`serve
    #: --idle-timeout`; None: a quiet stream holds time back until POST /watermark, or it speaks again)
    idle_timeout: float | None = None
    #: webhook delivery: attempts per result, seconds before the first retry (doubling), timeout per POST
    webhook_attempts: int = 3
    webhook_backoff: float = 0.2
    webhook_timeout: float = 5.0
    #: triples shown by GET .../window before it is cut
    window_limit: int = 10_000
    #: brokers (and topic prefixes) fed streams may read and observers publish to (`serve --mqtt-allow`);
    #: none by default; and how to talk to them (`rsp_plugin.io.mqtt.MqttOptions`: credentials, TLS)
    mqtt_allow: tuple[str, ...] = ()
    mqtt: object = None
    #: how many windows (of the smallest STEP) an element, `?t=` or `POST /watermark` may jump ahead of
    #: the stream's time (None: no bound; `rsp_plugin.core.limits.MAX_GAP_WINDOWS`)
    max_gap: int | None = MAX_GAP_WINDOWS
    #: more names the service answers to, besides the address it listens on and the loopback names
    #: (`serve --allow-host NAME`; "*": any, behind a proxy that checks them itself)
    allow_hosts: tuple[str, ...] = ()
    #: origins (https://dash.example.org) whose pages may call the API, besides the service's own page
    #: (`serve --allow-origin ORIGIN`; they are answered CORS headers)
    allow_origins: tuple[str, ...] = ()
    #: proxies (addresses or networks) whose X-Forwarded-For names the client (`serve --trusted-proxy`);
    #: none by default: the rate is per connecting address, whatever a request says
    trusted_proxies: tuple[str, ...] = ()

    def check(self) -> None:
        """Refuse settings that would expose the service, or that it could not honour, in one line each."""
        if not _is_address_or_name(self.listen_host):
            raise ValueError(f"--host {self.host!r}: not an IP address or a host name")
        if self.token is not None:
            if not self.token.strip():
                raise ValueError("the token is empty or blank: give one that is hard to guess (--token T)")
            if self.token != self.token.strip() or any(ord(c) < 32 or ord(c) == 127 for c in self.token):
                raise ValueError("the token has spaces at its ends or control characters: an HTTP header "
                                 "cannot carry it intact")
        if self.token is None and not is_loopback(self.listen_host):
            raise ValueError(f"the service listens on {self.host}, beyond this machine: give it a token (--token T)")
        if self.max_body_bytes <= 0 or self.rate <= 0 or self.burst <= 0:
            raise ValueError("the body and rate bounds must be positive")
        for name in ("history", "history_bytes", "queue", "queue_bytes", "page_bytes", "max_queries"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) <= 0:
                raise ValueError(f"the bound {name} must be positive")
        if self.idle_timeout is not None and not self.idle_timeout > 0:
            raise ValueError(f"--idle-timeout {self.idle_timeout}: expected a positive number of seconds")
        for name in self.allow_hosts:
            if name != "*" and not _is_address_or_name(name.strip("[]")):
                raise ValueError(f"--allow-host {name!r}: not a host name or an address")
        for origin in self.allow_origins:
            if _origin(origin) is None:
                raise ValueError(f"--allow-origin {origin!r}: expected an origin such as https://dash.example.org "
                                 "(scheme, host, port; no path)")
        for proxy in self.trusted_proxies:
            try:
                ipaddress.ip_network(proxy, strict=False)
            except ValueError:
                raise ValueError(f"--trusted-proxy {proxy!r}: not an address or a network") from None

    @property
    def listen_host(self) -> str:
        """The address to listen on, as a socket takes it ("[::1]" is ::1)."""
        if self.host.startswith("[") and self.host.endswith("]") and ":" in self.host:
            return self.host[1:-1]
        return self.host

    def host_allowed(self, host: str) -> bool:
        """May a request name the service so (its Host header)? The address it listens on, the loopback
        names and addresses, `allow_hosts`, and any IP address when it listens on every interface: a name
        that is none of these may be a page of another site pointing its name here (DNS rebinding).

        >>> settings = ServiceSettings(allow_hosts=("rsp.example.org",))
        >>> [settings.host_allowed(h) for h in ("127.0.0.1:8000", "localhost", "[::1]:80", "rsp.example.org")]
        [True, True, True, True]
        >>> [settings.host_allowed(h) for h in ("evil.example:8000", "10.0.0.5", "a@127.0.0.1", "localhost:x")]
        [False, False, False, False]
        """
        name = _host_name(host)
        if name is None:
            return False
        if "*" in self.allow_hosts or name in {allowed.lower().strip("[]") for allowed in self.allow_hosts}:
            return True
        if name in LOCAL_NAMES or name == self.listen_host.lower():
            return True
        try:
            address = ipaddress.ip_address(name)
        except ValueError:
            return False
        return address.is_loopback or self.listen_host in ("0.0.0.0", "::", "")

    def origin_allowed(self, origin: str, host: str | None) -> bool:
        """May a page of `origin` call the service? Its own page (the origin names the Host the request
        names), or one of `allow_origins`; "null" (a sandboxed or local page) never.

        >>> ServiceSettings().origin_allowed("http://localhost:8000", "localhost:8000")
        True
        >>> ServiceSettings().origin_allowed("http://127.0.0.1:9000", "127.0.0.1:8000")
        False
        """
        given = _origin(origin)
        if given is None:
            return False
        if given in {_origin(allowed) for allowed in self.allow_origins}:
            return True
        return host is not None and given.split("://", 1)[1] == host.strip().lower()

    def webhook_allowed(self, url: str) -> bool:
        """Is `url` under one of the allowed prefixes (same scheme, host and port, path below)?"""
        try:
            target = urlsplit(url)
            target_port = target.port or _default_port(target.scheme)
        except ValueError:
            return False
        if target.scheme not in ("http", "https") or not target.hostname or target.username or target.password:
            return False
        if "\\" in url or any(ord(c) < 33 or ord(c) == 127 for c in url):
            return False  # (a browser reads a backslash in a URL as a slash; a space or a control is no URL's)
        path = target.path
        for _ in range(4):  # what a server may make of it, decoding once or more
            if "\\" in path:
                return False  # many servers and proxies read a backslash as a slash: /hooks/..\elsewhere
            if any(segment in (".", "..") for segment in path.split("/")):
                return False  # a client resolves dot segments: /hooks/../elsewhere is not under /hooks/
            path = unquote(path)
        for prefix in self.webhook_allow:
            allowed = urlsplit(prefix)
            if (allowed.scheme == target.scheme and allowed.hostname == target.hostname
                    and (allowed.port or _default_port(allowed.scheme)) == target_port
                    and (target.path or "/").startswith(allowed.path or "/")):
                return True
        return False


def _default_port(scheme: str) -> int | None:
    return {"http": 80, "https": 443}.get(scheme)


LOCAL_NAMES = frozenset({"localhost", "localhost.", "ip6-localhost"})
_NAME = re.compile(r"[a-z0-9_](?:[a-z0-9_.-]{0,251}[a-z0-9_.])?", re.IGNORECASE | re.ASCII)
_PORT = re.compile(r"[0-9]{1,5}", re.ASCII)


def _is_address_or_name(text: str) -> bool:
    try:
        ipaddress.ip_address(text)
        return True
    except ValueError:
        return bool(_NAME.fullmatch(text))


def _host_name(host: str) -> str | None:
    """The name in a Host header ("[::1]:8000" is ::1), lowercased; None when it is not one."""
    host = host.strip().lower()
    if host.startswith("["):
        end = host.find("]")
        if end < 0 or (host[end + 1:] and not (host[end + 1] == ":" and _PORT.fullmatch(host[end + 2:]))):
            return None
        name = host[1:end]
        return name if _is_address_or_name(name) and ":" in name else None
    name, colon, port = host.partition(":")
    if colon and not _PORT.fullmatch(port):
        return None
    return name if _is_address_or_name(name) else None


def _origin(text: str) -> str | None:
    """scheme://host[:port], lowercased, from an Origin header or an allowed origin; None otherwise."""
    scheme, separator, rest = text.strip().lower().rstrip("/").partition("://")
    if not separator or scheme not in ("http", "https") or _host_name(rest) is None:
        return None
    return f"{scheme}://{rest}"


def is_loopback(host: str) -> bool:
    if host in ("localhost", "ip6-localhost"):
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


__all__ = ["LOCAL_NAMES", "ServiceSettings", "is_loopback"]
