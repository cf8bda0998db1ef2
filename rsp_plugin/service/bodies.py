"""What a client pushes, read into stream elements: timestamped N-Triples, N-Triples, Turtle, TriG, N-Quads, JSON-LD.

The media type (or `?format=`) picks the reader; line formats keep every good
line and set the bad ones aside, each with its line number; a document format
(Turtle, JSON-LD) is read whole, so a syntax error sets the document aside at
the line the parser names. Documents without times of their own are seen at
`timestamp` (the request's `?t=`, else its arrival). The readers are the command
line's (`rsp_plugin.io.sources`): JSON-LD is read without fetching
anything, a remote `@context` (a URL, or `@import`) is refused.

>>> from rsp_plugin.core.terms import Dictionary
>>> read = read_body(b'0 <http://ex/a> <http://ex/p> <http://ex/b> .\\n0 <http://ex/a> .\\n', "tnt",
...                  Dictionary(), timestamp=0, name="push-1")
>>> len(read.elements), [str(r) for r in read.rejected]
(1, ['push-1:2: not an N-Triples triple after the timestamp: expected <s> <p> <o> .'])
>>> read_body(b'{"@context": "http://schema.org/", "name": "x"}', "jsonld", Dictionary(), 0, "push-2").rejected[0].reason
'the JSON-LD context <http://schema.org/> is not fetched (map it to a local file: --jsonld-context http://schema.org/=FILE); the document is set aside'
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field

from ..core.terms import Dictionary
from ..io.formats import Rejected, StreamElement
from ..io.sources import read_source

#: media type -> format name
MEDIA_TYPES = {
    "application/x-tnt": "tnt", "text/x-tnt": "tnt", "text/plain": "tnt",
    "application/n-triples": "nt", "text/turtle": "ttl", "application/x-turtle": "ttl",
    "application/trig": "trig", "application/n-quads": "nq",
    "application/ld+json": "jsonld", "application/json": "jsonld",
}
FORMATS = ("tnt", "nt", "ttl", "trig", "nq", "jsonld")


@dataclass
class ReadBody:
    elements: list[StreamElement] = field(default_factory=list)
    rejected: list[Rejected] = field(default_factory=list)


def body_format(content_type: str | None, override: str | None) -> str:
    """The format a request names: `?format=` first, then its Content-Type (default: tnt)."""
    if override:
        if override not in FORMATS:
            raise ValueError(f"unknown format {override!r}; expected one of {', '.join(FORMATS)}")
        return override
    media = (content_type or "").split(";")[0].strip().lower()
    if not media:
        return "tnt"
    if media not in MEDIA_TYPES:
        raise ValueError(f"cannot read {media}; send one of {', '.join(sorted(MEDIA_TYPES))} (or ?format=)")
    return MEDIA_TYPES[media]


def read_body(data: bytes, fmt: str, terms: Dictionary, timestamp: int, name: str) -> ReadBody:
    """Elements and set-aside lines. Should a reader fail on some line instead of setting it aside, the
    lines it fails on are found (by halves) and set aside with the reason, and the others read again: a
    body's good lines are never lost to its bad ones (a document format's document is set aside whole)."""
    try:
        return _read(data, fmt, terms, timestamp, name)
    except Exception as error:  # a reader's failure on some text, whatever it is: not the client's 500
        if fmt not in LINE_FORMATS:
            return ReadBody(rejected=[Rejected(name, 1, f"the document is not read: {_why(error)}")])
    lines = data.split(b"\n")
    failing = _failing(lines, 1, lambda part: _read(part, fmt, Dictionary(), timestamp, name))
    kept = [b"" if number in failing else line for number, line in enumerate(lines, 1)]
    try:
        read = _read(b"\n".join(kept), fmt, terms, timestamp, name)
    except Exception as error:
        return ReadBody(rejected=[Rejected(name, 1, f"the body is not read: {_why(error)}")])
    read.rejected.extend(Rejected(name, number, f"not read: {reason}") for number, reason in failing.items())
    read.rejected.sort(key=lambda record: record.line)
    return read


#: the formats read line by line (a line that fails is set aside on its own)
LINE_FORMATS = ("tnt", "nt", "nq")


def _read(data: bytes, fmt: str, terms: Dictionary, timestamp: int, name: str) -> ReadBody:
    out = ReadBody()
    for item in read_source(io.BytesIO(data), fmt, terms, name=name, moment=timestamp):
        (out.rejected if isinstance(item, Rejected) else out.elements).append(item)
    return out


def _failing(lines: list[bytes], first: int, read) -> dict[int, str]:
    """{line number: why} for the lines a reader fails on (halving the lines until one is left)."""
    try:
        read(b"\n".join(lines))
        return {}
    except Exception as error:
        if len(lines) == 1:
            return {first: _why(error)}
    half = len(lines) // 2
    return {**_failing(lines[:half], first, read), **_failing(lines[half:], first + half, read)}


def _why(error: Exception) -> str:
    if isinstance(error, RecursionError):
        return "nested too deeply"
    text = " ".join(str(error).split()) or type(error).__name__
    return text if len(text) <= 200 else text[:200] + "..."


__all__ = ["FORMATS", "MEDIA_TYPES", "ReadBody", "body_format", "read_body"]
