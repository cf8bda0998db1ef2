"""Whole RDF documents (backgrounds, FROM graphs, stream documents) parsed by rdflib, safely.

rdflib reads almost any RDF format, and some formats can make a parser open
things or work without end. Here every document is given to rdflib as bytes
or text we read (never as a path or URL it would open itself), after checks
that need no parsing:

- text formats (Turtle, N-Triples, N-Quads, TriG, N3, JSON-LD) must be UTF-8:
  the first bad byte is a located error; so is an escape that names no
  character (`\\uD800` alone, `\\U00110000`: no writer could write it out);
- RDF/XML and TriX: the DTD is read first (expat, stopping at the first
  element) and an entity declared there that is external (SYSTEM / PUBLIC:
  a file or URL nobody gave us) is refused, as is a document whose entity
  references would expand to more than `limits.xml_expansion_bound` (the
  900-byte "billion laughs" is refused in microseconds);
- Turtle, TriG, N3 and JSON-LD: nested at most `limits.MAX_NESTING` levels
  (rdflib's readers recurse per level);
- JSON-LD: every IRI it makes must be one (a key `"    ex:l"` makes none);
  a `@context` (or `@import`) given as an IRI is never fetched. It
  is replaced by a local file the user maps it to (`contexts={IRI: path}`,
  `--jsonld-context IRI=FILE`), else the document is refused. While rdflib
  parses a JSON-LD document for us, its context loader refuses any fetch at
  all (a second lock on the same door).

    parse_document(data, "turtle", filename="bg.ttl")      -> rdflib Graph (or Dataset)
    parse_file(path)                                       -> the same, the format from the extension

>>> g = parse_document(b'<http://ex/a> <http://ex/p> "x" .', "nt", filename="d.nt")
>>> len(g)
1
>>> try:
...     parse_document(b'{"@context": "http://ex.org/ctx", "@id": "http://ex/a"}', "json-ld", filename="d.jsonld")
... except DocumentRefused as refused:
...     print(refused)
d.jsonld:1:1: the JSON-LD context <http://ex.org/ctx> is not fetched (map it to a local file: --jsonld-context http://ex.org/ctx=FILE); refused
"""

from __future__ import annotations

import json
import re
import threading
import warnings
from contextlib import contextmanager
from pathlib import Path
from urllib.parse import urljoin

from ..core import limits
from ..core.errors import LocatedError, position
from ..core.iris import file_iri
from ..core.nesting import TURTLE_HIDDEN, TURTLE_KEPT, check_brackets
from ..core.regexes import LazyPattern
from ..core.terms import bad_escapes, quotable
from .lines import decode_text

TEXT_FORMATS = {"turtle", "ttl", "nt", "ntriples", "nt11", "nquads", "nq", "trig", "n3", "json-ld", "jsonld"}
XML_FORMATS = {"xml", "pretty-xml", "trix", "application/rdf+xml"}
QUAD_FORMATS = {"trig", "nquads", "nq", "trix"}
#: the text formats whose statements nest (blank nodes `[ ]`, collections `( )`, graphs `{ }`)
NESTING_FORMATS = {"turtle", "ttl", "trig", "n3"}
_EXTENSIONS = {".ttl": "turtle", ".nt": "nt", ".n3": "n3", ".rdf": "xml", ".owl": "xml", ".xml": "xml",
               ".jsonld": "json-ld", ".json": "json-ld", ".trig": "trig", ".nq": "nquads", ".nquads": "nquads",
               ".trix": "trix"}


class DocumentRefused(LocatedError):
    """A document that is not read: bad bytes, an external or exploding XML entity, a remote JSON-LD context."""


def format_of(path: str | Path, default: str = "turtle") -> str:
    """rdflib's format name for a file's extension."""
    return _EXTENSIONS.get(Path(path).suffix.lower(), default)


def parse_file(path: str | Path, rdf_format: str | None = None, *, contexts: dict[str, str] | None = None,
               graph=None):
    """A local RDF file parsed safely (see `parse_document`); its base IRI is its file: URI."""
    path = Path(path)
    data = path.read_bytes()
    return parse_document(data, rdf_format or format_of(path), filename=str(path),
                          base=file_iri(path.resolve()), contexts=contexts, graph=graph)


#: what rdflib 7 says when its own Dataset, and its TriG, N-Quads and JSON-LD readers and writers, use the
#: ConjunctiveGraph API it deprecated (`Dataset.default_context`, `Dataset.contexts`, `ConjunctiveGraph()`):
#: rdflib calls them inside `Dataset.parse`, `.quads`, `.serialize` and its parsers, so no public call
#: avoids them (`dataset_calls` hides exactly these around ours)
RDFLIB_DATASET_DEPRECATIONS = (r"(ConjunctiveGraph is deprecated, use Dataset instead"
                               r"|Dataset\.(default_context|contexts) is deprecated)")


@contextmanager
def dataset_calls():
    """Around a call into rdflib's Dataset or its quad-format readers and writers: their own use of the API
    rdflib deprecated says nothing (those warnings are rdflib's to fix, not the caller's). Any other
    warning passes. (`warnings.catch_warnings` is process-wide: a thread interleaved with another may keep
    this filter a little longer, which hides nothing else.)

    >>> from rdflib import Dataset
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("error")
    ...     with dataset_calls():
    ...         size = len(Dataset().parse(data="<http://ex/g> { <http://ex/a> <http://ex/p> 1 . }", format="trig"))
    """
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message=RDFLIB_DATASET_DEPRECATIONS, category=DeprecationWarning)
        yield


def parse_document(data: bytes | str, rdf_format: str, *, filename: str = "<document>", base: str | None = None,
                   contexts: dict[str, str] | None = None, graph=None):
    """Parse `data` into `graph` (default: a new Graph, or a Dataset for quad formats) after the checks
    above; raises `DocumentRefused` (located) when a check fails. rdflib's own syntax errors pass."""
    from rdflib import Dataset, Graph

    rdf_format = rdf_format.lower()
    if graph is None:
        graph = Dataset(default_union=True) if rdf_format in QUAD_FORMATS else Graph()
    if rdf_format in XML_FORMATS:
        raw = data.encode("utf-8") if isinstance(data, str) else bytes(data)
        check_xml(raw, filename)
        with dataset_calls():
            graph.parse(data=raw, format=rdf_format, publicID=base)
        return graph
    text = data if isinstance(data, str) else decode_text(bytes(data), filename, DocumentRefused)
    if rdf_format in ("json-ld", "jsonld"):
        document = inline_contexts(load_json(text, filename), contexts or {}, base=base, filename=filename)
        parse_jsonld(document, graph, text, filename, base=base)
        return graph
    if rdf_format in NESTING_FORMATS:  # (rdflib's reader recurses some 8 frames a level of `[` or `(`)
        check_brackets(text, filename, DocumentRefused, limit=limits.MAX_NESTING, hidden=TURTLE_HIDDEN,
                       kept=TURTLE_KEPT)
    for offset, reason in bad_escapes(text):
        raise DocumentRefused(f"{reason}; refused", filename, *position(text, offset))
    with dataset_calls():
        graph.parse(data=text, format=rdf_format, publicID=base)
    return graph


def parse_jsonld(document, graph, text: str, filename: str, *, base: str | None = None):
    """Loaded JSON-LD (`load_json`, its contexts inlined) into `graph` by rdflib, nothing fetched;
    an IRI it makes that is none (a key `"    ex:l"`) is refused at its place in `text`."""
    from rdflib import URIRef

    try:
        with _no_fetching(), dataset_calls():
            graph.parse(data=json.dumps(document), format="json-ld", publicID=base)
    except RecursionError:  # (`load_json` bounded the document's nesting: a context's, then)
        raise DocumentRefused("nested too deeply for the JSON-LD reader; refused", filename, 1, 1) from None
    with dataset_calls():
        statements = list(graph.quads((None, None, None, None)) if hasattr(graph, "quads") else graph)
    for statement in statements:
        for term in statement:
            if isinstance(term, URIRef) and not _IRI.match(term):
                raise DocumentRefused(f"not an IRI: <{quotable(str(term)[:60])}>; refused", filename,
                                      *_place_of(text, str(term)))
    return graph


#: an IRI as N-Triples writes one (what rdflib's writers and ours take)
_IRI = LazyPattern(r'[^<>"{}|^`\\\x00-\x20]*\Z')


def _place_of(text: str, iri: str) -> tuple[int, int]:
    """Where a JSON-LD document wrote an IRI (or the last part of it, as a key relative to a base or
    a vocabulary); 1:1 if it is nowhere to be found."""
    for needle in (iri, iri.rsplit("/", 1)[-1], iri.rsplit("#", 1)[-1]):
        found = text.find(json.dumps(needle)[1:-1]) if needle else -1
        if found >= 0:
            return position(text, found)
    return 1, 1


# XML: the DTD read before the document -------------------------------------------------------------

class _EndOfProlog(Exception):
    pass


_REFERENCE = LazyPattern(rb"&([A-Za-z_:][A-Za-z0-9_.:\-]*);")
_PREDEFINED = {"lt", "gt", "amp", "apos", "quot"}


def check_xml(data: bytes, filename: str = "<document>") -> None:
    """Refuse external entities, and entities that would expand past the bound; else do nothing.

    >>> lol = b'<!DOCTYPE r [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;">]><r>' + b'&b;' * 300000 + b'</r>'
    >>> try:
    ...     check_xml(lol, "lol.rdf")
    ... except DocumentRefused as refused:
    ...     print(refused)
    lol.rdf:1:1: XML entity references would expand to more than 16777216 characters (300000 references; the bound is 16 MiB or 10 times the document); refused
    """
    from xml.parsers import expat

    parser = expat.ParserCreate()
    declared: dict[str, tuple[str, int]] = {}
    refused: list[tuple[str, int, int]] = []
    prolog_end = [len(data)]

    def on_entity(name, is_parameter, value, base, system_id, public_id, notation):
        where = (parser.CurrentLineNumber, parser.CurrentColumnNumber + 1)
        if value is None:
            target = system_id or public_id or notation or "?"
            refused.append((f"the XML entity '{name}' is external ({target}): it is not read", *where))
            raise _EndOfProlog
        if not is_parameter:
            declared[name] = (value, where[0])

    def on_end(*_):
        prolog_end[0] = parser.CurrentByteIndex
        raise _EndOfProlog

    parser.EntityDeclHandler = on_entity
    parser.EndDoctypeDeclHandler = on_end
    parser.StartElementHandler = on_end
    parser.SetParamEntityParsing(expat.XML_PARAM_ENTITY_PARSING_NEVER)
    try:
        parser.Parse(data, True)
    except _EndOfProlog:
        pass
    except expat.ExpatError:
        pass  # not well-formed: rdflib says where
    if refused:
        message, line, column = refused[0]
        raise DocumentRefused(f"{message}; refused", filename, line, column)
    if not declared:
        return
    bound = limits.xml_expansion_bound(len(data))
    sizes: dict[str, int] = {}

    def size(name: str, path: tuple[str, ...]) -> int:
        if name in _PREDEFINED or name not in declared:
            return 1
        if name in sizes:
            return sizes[name]
        if name in path:
            raise DocumentRefused(f"the XML entity '{name}' refers to itself; refused", filename, declared[name][1], 1)
        value = declared[name][0].encode("utf-8")
        total = len(value)
        for found in _REFERENCE.finditer(value):
            total += size(found.group(1).decode(), path + (name,)) - len(found.group(0))
            if total > bound:
                break
        sizes[name] = min(total, bound + 1)
        return sizes[name]

    body = _as_bytes_for_references(data)[prolog_end[0]:]
    names = [name.decode("ascii", "replace") for name in _REFERENCE.findall(body)]
    total = 0
    for name in names:
        if name in declared:
            one = size(name, ())
            if one > bound:
                raise DocumentRefused(f"the XML entity &{name}; would expand to more than {bound} characters (the "
                                      f"bound is {limits.MAX_XML_ENTITY_EXPANSION // (1 << 20)} MiB or "
                                      f"{limits.XML_ENTITY_AMPLIFICATION} times the document); refused",
                                      filename, declared[name][1], 1)
            total += one
            if total > bound:
                raise DocumentRefused(
                    f"XML entity references would expand to more than {bound} characters ({len(names)} references; "
                    f"the bound is {limits.MAX_XML_ENTITY_EXPANSION // (1 << 20)} MiB or "
                    f"{limits.XML_ENTITY_AMPLIFICATION} times the document); refused",
                    filename, declared[name][1], 1)


def _as_bytes_for_references(data: bytes) -> bytes:
    """ASCII-compatible bytes in which `&name;` can be searched (UTF-16 documents decoded first)."""
    if data[:2] in (b"\xff\xfe", b"\xfe\xff") or data[:4] in (b"<\x00?\x00", b"\x00<\x00?"):
        try:
            return data.decode("utf-16").encode("utf-8")
        except UnicodeDecodeError:
            return data
    return data


# JSON-LD: contexts from local files only ---------------------------------------------------------------

#: a JSON string, as the nesting check skips it (possessive: no backtracking state per character)
_JSON_STRING = LazyPattern(r'"(?:[^"\\]++|\\.)*+"', re.S)


def load_json(text: str, filename: str):
    """JSON text as Python data, or `DocumentRefused` at the place: nested deeper than
    `limits.MAX_NESTING`, not JSON, or a string with an escape of no character (`\\uD800` alone)."""
    check_brackets(text, filename, DocumentRefused, limit=limits.MAX_NESTING, hidden=_JSON_STRING)
    try:
        document = json.loads(text)
    except json.JSONDecodeError as error:
        raise DocumentRefused(f"not JSON: {error.msg}", filename, error.lineno, error.colno) from None
    for offset, reason in bad_escapes(text):
        raise DocumentRefused(f"{reason}; refused", filename, *position(text, offset))
    return document


def inline_contexts(document, contexts: dict[str, str], *, base: str | None = None, filename: str = "<document>",
                    _seen: tuple[str, ...] = ()):
    """`document` with every `@context` / `@import` IRI replaced by its mapped local context; refused if unmapped.

    >>> inline_contexts({"@context": {"ex": "http://ex/"}, "@id": "ex:a"}, {})
    {'@context': {'ex': 'http://ex/'}, '@id': 'ex:a'}
    """
    if isinstance(document, list):
        return [inline_contexts(item, contexts, base=base, filename=filename, _seen=_seen) for item in document]
    if not isinstance(document, dict):
        return document
    out = {}
    for key, value in document.items():
        if key == "@context":
            value = _context_value(value, contexts, base, filename, _seen)
        elif key == "@import":
            if isinstance(value, str):
                loaded = _load_context(value, contexts, base, filename, _seen)
                out.update({k: v for k, v in loaded.items() if k not in document and k != "@import"}
                           if isinstance(loaded, dict) else {})
                continue
        else:
            value = inline_contexts(value, contexts, base=base, filename=filename, _seen=_seen)
        out[key] = value
    return out


def _context_value(value, contexts, base, filename, seen):
    if isinstance(value, str):
        return _load_context(value, contexts, base, filename, seen)
    if isinstance(value, list):
        return [_context_value(item, contexts, base, filename, seen) for item in value]
    return inline_contexts(value, contexts, base=base, filename=filename, _seen=seen)


def _load_context(iri: str, contexts: dict[str, str], base: str | None, filename: str, seen: tuple[str, ...]):
    resolved = urljoin(base, iri) if base else iri
    local = contexts.get(iri) or contexts.get(resolved)
    if local is None:
        raise DocumentRefused(f"the JSON-LD context <{iri}> is not fetched (map it to a local file: "
                              f"--jsonld-context {iri}=FILE); refused", filename, 1, 1)
    if resolved in seen:
        raise DocumentRefused(f"the JSON-LD context <{iri}> includes itself; refused", filename, 1, 1)
    path = Path(local)
    try:
        text = decode_text(path.read_bytes(), str(path), DocumentRefused)
    except OSError as error:
        raise DocumentRefused(f"cannot read the JSON-LD context {path} (for <{iri}>): {error.strerror}",
                              filename, 1, 1) from None
    loaded = load_json(text, str(path))
    if not isinstance(loaded, dict) or "@context" not in loaded:
        raise DocumentRefused(f"{path} (for <{iri}>) is not a JSON-LD context document (no @context)", filename, 1, 1)
    return _context_value(loaded["@context"], contexts, file_iri(path.resolve()), str(path), seen + (resolved,))


_guard = threading.local()


class _no_fetching:
    """While rdflib parses JSON-LD for us, its context loader refuses every IRI (in this thread)."""

    def __enter__(self):
        _install_guard()
        _guard.active = getattr(_guard, "active", 0) + 1

    def __exit__(self, *_):
        _guard.active -= 1


_installed = False


def _install_guard() -> None:
    global _installed
    if _installed:
        return
    from rdflib.plugins.shared.jsonld import context as jsonld_context

    original = jsonld_context.source_to_json

    def source_to_json(source, *args, **kwargs):
        if getattr(_guard, "active", 0):
            raise DocumentRefused(f"the JSON-LD context <{source}> is not fetched; refused", "<json-ld>", 1, 1)
        return original(source, *args, **kwargs)

    jsonld_context.source_to_json = source_to_json
    _installed = True


__all__ = ["DocumentRefused", "check_xml", "format_of", "inline_contexts", "load_json", "parse_document",
           "parse_file", "parse_jsonld"]
