"""SERVICE: an endpoint the user allowed, asked for the solutions of a pattern (SPARQL 1.1 Federated Query).

Registration refuses every SERVICE whose endpoint is not allowed (`safety.py`);
the evaluator asks an allowed one here, once per evaluation that reaches it:

    GET endpoint?query=PREFIX ... SELECT * WHERE { pattern }     (POST when long)
    Accept: application/sparql-results+json

with a time-out, no redirects and a bound on the answer's size. Solutions come
back as rows of written keys (N-Triples forms), as the algebra evaluator keeps
them; blank nodes are renamed so they cannot meet the window's. A failure is an
error of that window's evaluation, or no solution but the empty one under
SERVICE SILENT.
"""

from __future__ import annotations

import json
import re

from ..core import limits
from ..core.regexes import LazyPattern
from .safety import allowed
from .sparql_values import literal

_SERVICE_TEXT = LazyPattern(r"^\s*SERVICE\s+(?:SILENT\s+)?(?:<[^<>]*>|\S+)\s*\{(.*)\}\s*$", re.S | re.I)
_SILENT = LazyPattern(r"^\s*SERVICE\s+SILENT\b", re.I)


class ServiceError(Exception):
    """An endpoint that could not be asked, or whose answer could not be read."""


def is_silent(service_text: str) -> bool:
    return bool(_SILENT.match(service_text))


def pattern_of(service_text: str) -> str:
    """The group pattern of `SERVICE <e> { ... }` as the user wrote it."""
    match = _SERVICE_TEXT.match(service_text)
    if match is None:
        raise ServiceError("cannot read the SERVICE pattern")
    return match.group(1)


def ask(endpoint: str, service_text: str, prefixes: dict[str, str], allowed_endpoints, *, base: str | None = None,
        timeout: float = limits.FETCH_TIMEOUT_S, max_bytes: int = limits.MAX_REMOTE_GRAPH_BYTES) -> list[dict]:
    """The solutions of the SERVICE pattern at an allowed `endpoint`: rows of variable -> written key."""
    import requests

    if not allowed(endpoint, allowed_endpoints) or not endpoint.startswith(("http://", "https://")):
        raise ServiceError(f"SERVICE <{endpoint}> is not an allowed endpoint")
    header = "".join(f"PREFIX {name}: <{namespace}>\n" for name, namespace in sorted(prefixes.items()))
    if base:
        header = f"BASE <{base}>\n" + header
    text = f"{header}SELECT * WHERE {{{pattern_of(service_text)}}}"
    accept = {"Accept": "application/sparql-results+json"}
    try:
        if len(text) < 1500:
            response = requests.get(endpoint, params={"query": text}, headers=accept, timeout=timeout,
                                    allow_redirects=False, stream=True)
        else:
            response = requests.post(endpoint, data={"query": text}, headers=accept, timeout=timeout,
                                     allow_redirects=False, stream=True)
        with response:
            if response.status_code != 200:
                raise ServiceError(f"SERVICE <{endpoint}> answered {response.status_code}")
            data = bytearray()
            for chunk in response.iter_content(1 << 16):
                data.extend(chunk)
                if len(data) > max_bytes:
                    raise ServiceError(f"SERVICE <{endpoint}> answered more than {max_bytes} bytes")
    except requests.RequestException as error:
        raise ServiceError(f"SERVICE <{endpoint}>: {type(error).__name__}") from None
    return _rows(bytes(data), endpoint)


def _rows(data: bytes, endpoint: str) -> list[dict]:
    try:
        document = json.loads(data)
        bindings = document["results"]["bindings"]
    except (ValueError, KeyError, TypeError):
        raise ServiceError(f"SERVICE <{endpoint}> did not answer SPARQL JSON results") from None
    rows = []
    for binding in bindings:
        row = {}
        for variable, value in binding.items():
            row[variable] = _key(value, endpoint)
        rows.append(row)
    return rows


def _key(value: dict, endpoint: str) -> str:
    kind, lexical = value.get("type"), value.get("value")
    if not isinstance(lexical, str):
        raise ServiceError(f"SERVICE <{endpoint}>: a binding without a value")
    if kind == "uri":
        if re.search(r'[<>"{}|^`\\\x00-\x20]', lexical):
            raise ServiceError(f"SERVICE <{endpoint}>: not an IRI: {lexical[:40]!r}")
        return f"<{lexical}>"
    if kind == "bnode":
        return "_:service" + re.sub(r"[^A-Za-z0-9]", "_", lexical)
    if kind in ("literal", "typed-literal"):
        return literal(lexical, value.get("datatype"), value.get("xml:lang")).key
    raise ServiceError(f"SERVICE <{endpoint}>: a binding of unknown type {kind!r}")
