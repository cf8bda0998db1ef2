"""Readers and writers of the stream formats (DESIGN.md, "Stream formats").

Readers yield, per line, either a `StreamElement` (a fact at a time point) or
a `Rejected` record (file, line, reason) for a line they cannot read: bad
input is a side output, never an exception, and the stream goes on. Given a
binary file (or bytes), a reader cuts its lines itself (`rsp_plugin.io.lines`):
a line that is not UTF-8, or longer than `max_line_bytes`, is set aside there
and never reaches the parser; text lines (a list, a text file) are read as they are.

    .tnt      TIMESTAMP <s> <p> <o> .      timestamped N-Triples
    .stream   TIMESTAMP atom               atom streams for rule programs, e.g. `36 a(x1,y)`

TIMESTAMP is an integer (a time point, or ms when a tick is given) or an
xsd:dateTime lexical form (see `timeline.py`).

>>> from rsp_plugin.core.terms import Dictionary
>>> terms = Dictionary()
>>> for element in read_atom_stream(["36 a(x1,y)", "38 b(y", "40 temp(105)"], terms, filename="s.stream"):
...     print(element)
36 a(x1,y)
s.stream:2: expected ')' after the arguments
40 temp(105)
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterable, Iterator, TextIO

from ..core import limits
from ..core.regexes import LazyPattern
from ..core.terms import TRIPLE, BadText, Dictionary, canonical_literal, quotable
from ..core.time import datetime_time_point, time_point
from .lines import Rejected, lines_of, set_aside_bad_escapes

Fact = tuple[int, tuple[int, ...]]


@dataclass(frozen=True)
class StreamElement:
    """One fact of a stream at a time point, and where it was read."""

    time_point: int
    fact: Fact
    line: int
    terms: Dictionary | None = None

    def __str__(self) -> str:
        shown = format_fact(self.fact, self.terms) if self.terms is not None else str(self.fact)
        return f"{self.time_point} {shown}"


class StreamFormatError(ValueError):
    pass


# Terms of N-Triples and of the rule language -------------------------------------------

_IRI = r'<[^<>"{}|^`\\\x00-\x20]*>'
_BLANK = r"_:[A-Za-z0-9_](?:[A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?"
# possessive (`++`, `*+`): no backtracking state per character, so a 10 MB literal costs its size, not 100 times it
_LITERAL = r'"(?:[^"\\\n\r]++|\\.)*+"(?:@[a-zA-Z]+(?:-[a-zA-Z0-9]+)*|\^\^' + _IRI + r")?"
_TIMESTAMP = r"(?P<ts>-?\d+|\d{4}-\d\d-\d\dT[0-9:.]+(?:Z|[+-]\d\d:\d\d)?)"
_TNT_LINE = LazyPattern(
    rf"\s*{_TIMESTAMP}\s+(?P<s>{_IRI}|{_BLANK})\s*(?P<p>{_IRI})\s*(?P<o>{_IRI}|{_BLANK}|{_LITERAL})\s*\.\s*+(?:#.*)?\s*\Z"
)
_PREFIXED = r"(?:[A-Za-z][A-Za-z0-9_\-]*)?:(?:[A-Za-z0-9_](?:[A-Za-z0-9_\-.]*[A-Za-z0-9_\-])?)?"
_ATOM_TERM = LazyPattern(
    rf"\s*({_IRI}|{_LITERAL}|{_BLANK}|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?|{_PREFIXED}|[a-z][A-Za-z0-9_]*)\s*"
)
_ATOM_HEAD = LazyPattern(rf"\s*{_TIMESTAMP}\s+({_IRI}|{_PREFIXED}|[a-z][A-Za-z0-9_]*)\s*")
_PREFIX_LINE = LazyPattern(r"\s*@prefix\s+([A-Za-z][A-Za-z0-9_\-]*)?:\s*<([^>]*)>\s*\.?\s*\Z")


def _time(text: str, tick_ms: int | None) -> int:
    if "T" in text:
        return datetime_time_point(text, tick_ms)
    return time_point(int(text), tick_ms)


def read_tnt(
    lines: Iterable[str] | BinaryIO, terms: Dictionary, *, tick_ms: int | None = None, filename: str = "<stream>",
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
) -> Iterator[StreamElement | Rejected]:
    """Timestamped N-Triples: `TIMESTAMP <s> <p> <o> .` per line."""
    triple = terms.intern(TRIPLE)
    intern = terms.intern
    for number, line in enumerate(lines_of(lines, filename=filename, max_line_bytes=max_line_bytes), 1):
        if type(line) is not str:
            yield line
            continue
        match = _TNT_LINE.match(line)
        if match is None:
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            yield Rejected(filename, number, _tnt_problem(line))
            continue
        try:
            point = _time(match.group("ts"), tick_ms)
        except ValueError:
            yield Rejected(filename, number, f"not a timestamp: {match.group('ts')!r}")
            continue
        obj = match.group("o")
        if obj[0] == '"':
            try:
                obj = canonical_literal(obj)
            except BadText as problem:
                yield Rejected(filename, number, f"{problem}; set aside")
                continue
        fact = (triple, (intern(match.group("s")), intern(match.group("p")), intern(obj)))
        yield StreamElement(point, fact, number, terms)


def _tnt_problem(line: str) -> str:
    text = line.strip()
    parts = text.split(None, 1)
    if len(parts) < 2:
        return "expected a timestamp and a triple: TIMESTAMP <s> <p> <o> ."
    if not re.fullmatch(_TIMESTAMP, parts[0]):
        return f"not a timestamp: {parts[0]!r} (an integer or an xsd:dateTime)"
    if not text.endswith("."):
        return "a triple ends with ' .'"
    return "not an N-Triples triple after the timestamp: expected <s> <p> <o> ."


def read_atom_stream(
    lines: Iterable[str] | BinaryIO,
    terms: Dictionary,
    *,
    prefixes: dict[str, str] | None = None,
    tick_ms: int | None = None,
    filename: str = "<stream>",
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
) -> Iterator[StreamElement | Rejected]:
    """Atom streams: `TIMESTAMP atom` per line (`@prefix` lines allowed, `%`/`#` comments)."""
    prefixes = dict(prefixes or {})
    triple = terms.intern(TRIPLE)
    for number, raw in enumerate(lines_of(lines, filename=filename, max_line_bytes=max_line_bytes), 1):
        if type(raw) is not str:
            yield raw
            continue
        line = raw.strip()
        if not line or line[0] in "%#":
            continue
        prefix = _PREFIX_LINE.match(line)
        if prefix:
            prefixes[prefix.group(1) or ""] = prefix.group(2)
            continue
        try:
            point, fact = _parse_atom_line(line, terms, prefixes, tick_ms, triple)
        except StreamFormatError as problem:
            yield Rejected(filename, number, str(problem))
            continue
        except BadText as problem:
            yield Rejected(filename, number, f"{problem}; set aside")
            continue
        yield StreamElement(point, fact, number, terms)


def _parse_atom_line(line, terms, prefixes, tick_ms, triple) -> tuple[int, Fact]:
    head = _ATOM_HEAD.match(line)
    if head is None:
        if not re.match(r"\s*" + _TIMESTAMP + r"\s", line + " "):
            raise StreamFormatError(f"expected 'TIMESTAMP atom', e.g. '36 a(x1,y)'; got {line[:40]!r}")
        raise StreamFormatError("expected an atom after the timestamp, e.g. 'a(x1,y)'")
    try:
        point = _time(head.group("ts"), tick_ms)
    except ValueError:
        raise StreamFormatError(f"not a timestamp: {head.group('ts')!r}") from None
    predicate_text = head.group(2)
    position = head.end()
    args: list[int] = []
    if position < len(line) and line[position] == "(":
        position += 1
        while True:
            term = _ATOM_TERM.match(line, position)
            if term is None:
                raise StreamFormatError(f"expected a term at column {position + 1}")
            args.append(_intern_term(term.group(1), terms, prefixes))
            position = term.end()
            if position < len(line) and line[position] == ",":
                position += 1
                continue
            if position < len(line) and line[position] == ")":
                position += 1
                break
            raise StreamFormatError("expected ')' after the arguments")
    rest = line[position:].strip()
    if rest not in ("", "."):
        raise StreamFormatError(f"unexpected text after the atom: {rest[:30]!r}")
    if predicate_text[0] == "<" or ":" in predicate_text:
        predicate = _intern_term(predicate_text, terms, prefixes)
        if len(args) == 2:
            return point, (triple, (args[0], predicate, args[1]))
        return point, (predicate, tuple(args))
    return point, (terms.intern(predicate_text), tuple(args))


def _intern_term(text: str, terms: Dictionary, prefixes: dict[str, str]) -> int:
    if text[0] in "<\"" or text.startswith("_:") or text[0].isdigit() or text[0] == "-" or ":" not in text:
        return terms.intern(canonical_literal(text) if text[0] == '"' else text)
    prefix, _, local = text.partition(":")
    if prefix not in prefixes:
        raise StreamFormatError(f"unknown prefix '{prefix}:'")
    return terms.intern(f"<{prefixes[prefix]}{local}>")


def read_stream_file(
    path: str | Path,
    terms: Dictionary,
    *,
    prefixes: dict[str, str] | None = None,
    tick_ms: int | None = None,
    handle: BinaryIO | TextIO | None = None,
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
) -> Iterator[StreamElement | Rejected]:
    """Pick the reader by the file's extension (`.tnt`, `.nt`; anything else: atom stream).

    The file is read in binary (or from `handle`, best opened with "rb"), its lines cut
    and checked by `rsp_plugin.io.lines`."""
    path = Path(path)
    lines = handle if handle is not None else path.open("rb")
    try:
        if path.suffix in (".tnt", ".nt"):
            yield from read_tnt(lines, terms, tick_ms=tick_ms, filename=str(path), max_line_bytes=max_line_bytes)
        else:
            yield from read_atom_stream(lines, terms, prefixes=prefixes, tick_ms=tick_ms, filename=str(path),
                                        max_line_bytes=max_line_bytes)
    finally:
        if handle is None:
            lines.close()


# Writers -------------------------------------------------------------------------------------


def format_fact(fact: Fact, terms: Dictionary) -> str:
    """The contract's form: `q(x1,y)`, `alarm`, `<p>(<s>,<o>)` for a triple."""
    predicate, args = fact
    keys = terms.keys
    name = keys[predicate]
    if name == TRIPLE and len(args) == 3:
        return f"{keys[args[1]]}({keys[args[0]]},{keys[args[2]]})"
    if not args:
        return name
    return f"{name}({','.join(keys[a] for a in args)})"


# Timestamped graphs and plain RDF documents (for continuous queries) ---------------------

PROV_GENERATED_AT_TIME = "<http://www.w3.org/ns/prov#generatedAtTime>"
_NQUADS_LINE = LazyPattern(
    rf"\s*(?P<s>{_IRI}|{_BLANK})\s*(?P<p>{_IRI})\s*(?P<o>{_IRI}|{_BLANK}|{_LITERAL})"
    rf"\s*(?P<g>{_IRI}|{_BLANK})?\s*\.\s*+(?:#.*)?\s*\Z"
)


def read_ntriples_at(
    lines: Iterable[str] | BinaryIO, terms: Dictionary, *, timestamp: int, filename: str = "<stream>",
    max_line_bytes: int | None = limits.MAX_LINE_BYTES,
) -> Iterator[StreamElement | Rejected]:
    """Plain N-Triples, every triple seen at `timestamp` (ms): one document is one moment.

    >>> terms = Dictionary()
    >>> [str(e) for e in read_ntriples_at(['<a:s> <a:p> "x" .', '<a:s> <a:p> .'], terms, timestamp=5, filename="d.nt")]
    ['5 <a:p>(<a:s>,"x")', 'd.nt:2: not an N-Triples triple: expected <s> <p> <o> .']
    """
    triple = terms.intern(TRIPLE)
    intern = terms.intern
    for number, line in enumerate(lines_of(lines, filename=filename, max_line_bytes=max_line_bytes), 1):
        if type(line) is not str:
            yield line
            continue
        match = _NQUADS_LINE.match(line)
        if match is None or match.group("g"):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            yield Rejected(filename, number, "not an N-Triples triple: expected <s> <p> <o> .")
            continue
        obj = match.group("o")
        if obj[0] == '"':
            try:
                obj = canonical_literal(obj)
            except BadText as problem:
                yield Rejected(filename, number, f"{problem}; set aside")
                continue
        fact = (triple, (intern(match.group("s")), intern(match.group("p")), intern(obj)))
        yield StreamElement(timestamp, fact, number, terms)


def read_rdf_document_at(
    text: str | bytes, terms: Dictionary, *, timestamp: int, rdf_format: str = "turtle", filename: str = "<stream>",
    contexts: dict[str, str] | None = None,
) -> Iterator[StreamElement | Rejected]:
    """A Turtle (or other rdflib-readable) document, every triple seen at `timestamp` (ms).

    The document is read as a whole, by `rsp_plugin.io.documents` (no remote JSON-LD
    context, no external or exploding XML entity: `contexts` maps context IRIs to
    local files): a syntax error or a refusal sets it aside as one `Rejected`
    record at the line named.
    """
    from rdflib import Graph

    from .documents import XML_FORMATS, DocumentRefused, parse_document

    if isinstance(text, str) and rdf_format.lower() not in XML_FORMATS | {"json-ld", "jsonld"}:
        text, bad = set_aside_bad_escapes(text, filename)  # (a line of JSON is no statement: refused whole)
        yield from bad
    graph = Graph()
    try:
        parse_document(text, rdf_format, filename=filename, contexts=contexts, graph=graph)
    except DocumentRefused as refused:
        yield Rejected(filename, refused.lineno or 1, refused.msg)
        return
    except Exception as error:  # rdflib's parsers raise many kinds
        yield Rejected(filename, _error_line(error), f"not {rdf_format}: {_first_line(error)}")
        return
    try:
        keys = [tuple(map(_rdf_key, spo)) for spo in sorted(graph, key=lambda t: tuple(map(str, t)))]
    except BadText as problem:  # (a surrogate held as such in text handed in: no line to blank)
        yield Rejected(filename, 1, f"{problem}; the document is set aside")
        return
    triple = terms.intern(TRIPLE)
    for spo in keys:
        yield StreamElement(timestamp, (triple, tuple(map(terms.intern, spo))), 0, terms)


def read_timestamped_graphs(
    text: str, terms: Dictionary, *, rdf_format: str = "trig", tick_ms: int | None = 1, filename: str = "<stream>"
) -> Iterator[StreamElement | Rejected]:
    """RSP-QL timestamped graphs in TriG or N-Quads: each named graph is one stream element.

    Its time is `<g> prov:generatedAtTime "..."` in the default graph (an
    xsd:dateTime, or an integer in ms). Elements come out in time order (file
    order within a graph); a graph without a time, or a block / line that cannot
    be read, is set aside as a `Rejected` record.

    >>> doc = '''@prefix prov: <http://www.w3.org/ns/prov#> .
    ... <urn:g1> { <urn:a> <urn:p> <urn:b> . }
    ... <urn:g1> prov:generatedAtTime "2000" .
    ... <urn:g2> { <urn:a> <urn:p> <urn:c> . }'''
    >>> [str(e) for e in read_timestamped_graphs(doc, Dictionary(), filename="s.trig")]
    ['s.trig:4: graph <urn:g2> has no prov:generatedAtTime; set aside', '2000 <urn:p>(<urn:a>,<urn:b>)']
    """
    if rdf_format in ("nquads", "nq"):
        blocks = _nquads_blocks(text, filename)
    else:
        text, bad = set_aside_bad_escapes(text, filename)  # (rdflib would read them as surrogates)
        yield from bad
        blocks = _trig_blocks(text, filename)
    graphs: dict[str, list[tuple[str, str, str, int]]] = {}
    times: dict[str, str] = {}
    first_line: dict[str, int] = {}
    for item in blocks:
        if isinstance(item, Rejected):
            yield item
            continue
        s, p, o, g, line = item
        if g is None:
            if p == PROV_GENERATED_AT_TIME:
                times[s] = o
            continue
        graphs.setdefault(g, []).append((s, p, o, line))
        first_line.setdefault(g, line)
    triple = terms.intern(TRIPLE)
    elements = []
    for order, (name, triples) in enumerate(graphs.items()):
        stamp = times.get(name)
        if stamp is None:
            yield Rejected(filename, first_line[name], f"graph {name} has no prov:generatedAtTime; set aside")
            continue
        try:
            point = _graph_time(stamp, tick_ms)
        except ValueError:
            yield Rejected(filename, first_line[name], f"graph {name}: not a time: {stamp}")
            continue
        for s, p, o, line in triples:
            elements.append((point, order, StreamElement(
                point, (triple, (terms.intern(s), terms.intern(p), terms.intern(o))), line, terms)))
    elements.sort(key=lambda item: (item[0], item[1]))
    for _, _, element in elements:
        yield element


def _graph_time(literal_key: str, tick_ms: int | None) -> int:
    lexical = literal_key[1:literal_key.rindex('"')] if literal_key.startswith('"') else literal_key
    if re.fullmatch(r"-?\d+", lexical):
        return time_point(int(lexical), tick_ms)
    from ..core.time import parse_timestamp_ms

    return time_point(parse_timestamp_ms(lexical), tick_ms)


def _nquads_blocks(text: str, filename: str):
    for number, line in enumerate(text.split("\n"), 1):
        match = _NQUADS_LINE.match(line)
        if match is None:
            if line.strip() and not line.lstrip().startswith("#"):
                yield Rejected(filename, number, "not an N-Quads line: expected <s> <p> <o> <g> .")
            continue
        obj = match.group("o")
        if obj[0] == '"':
            try:
                obj = canonical_literal(obj)
            except BadText as problem:
                yield Rejected(filename, number, f"{problem}; set aside")
                continue
        yield match.group("s"), match.group("p"), obj, match.group("g"), number


#: how many times one document may be read again after a bad block (see `_trig_blocks`)
_RECOVERIES = 200


def _trig_blocks(text: str, filename: str, *, _offset: int = 0, _directives: list | None = None,
                 _budget: list | None = None):
    """TriG read block by block (directives, graphs, default-graph statements): a bad block is skipped.

    A bad block that spans several lines may have swallowed good statements (a
    stray `{` or an unterminated string makes the next lines part of it): the
    lines after its first are read again as blocks of their own, so that one bad
    line costs its own statement only (at most `_RECOVERIES` times a document)."""
    from rdflib import Dataset

    from ..core.nesting import TURTLE_HIDDEN, TURTLE_KEPT, check_brackets
    from .documents import DocumentRefused, dataset_calls

    directives: list[str] = [] if _directives is None else _directives
    budget = [_RECOVERIES] if _budget is None else _budget
    for start_line, block in _top_level_blocks(text):
        start_line += _offset
        stripped = block.strip()
        if re.match(r"(@prefix|@base|prefix|base)\b", stripped, re.I):
            directives.append(stripped if stripped.endswith(".") or not stripped.startswith("@") else stripped)
            continue
        dataset = Dataset()
        header = "\n".join(directives)
        block = block.lstrip()
        try:
            # (rdflib's reader recurses per level of `[` and `(`: bounded first)
            check_brackets(block, filename, DocumentRefused, limit=limits.MAX_NESTING, hidden=TURTLE_HIDDEN,
                           kept=TURTLE_KEPT)
            with dataset_calls():
                dataset.parse(data=header + "\n" + block, format="trig")
                quads = sorted(dataset.quads((None, None, None, None)), key=lambda q: tuple(map(str, q)))
            _check_iris(quads)
            keys = [(_rdf_key(s), _rdf_key(p), _rdf_key(o),
                     None if g is None or str(g) == "urn:x-rdflib:default" else _rdf_key(g)) for s, p, o, g in quads]
        except Exception as error:  # rdflib's parsers raise many kinds (and a surrogate alone is BadText)
            deep = isinstance(error, DocumentRefused)
            why = error.msg if deep else f"not TriG: {_first_line(error)}"
            rest = block.find("\n")
            if rest >= 0 and budget[0] > 0:
                budget[0] -= 1
                yield Rejected(filename, start_line, f"{why}; the statement starting here is set aside")
                yield from _trig_blocks(block[rest + 1:], filename, _offset=start_line, _directives=directives,
                                        _budget=budget)
                continue
            if deep:
                line = start_line + error.lineno - 1
            else:
                line = start_line + max(_error_line(error) - (header.count("\n") + 2), 0)
            yield Rejected(filename, line, f"{why}; the block is set aside")
            continue
        for s, p, o, name in keys:
            yield s, p, o, name, start_line


_IRI_KEY = LazyPattern(_IRI + r"\Z")


def _check_iris(quads) -> None:
    """rdflib's TriG parser takes `<a b>` or an IRI across lines (with a warning): not here."""
    from rdflib import URIRef

    for quad in quads:
        for term in quad:
            if isinstance(term, URIRef) and not _IRI_KEY.match(f"<{term}>"):
                raise ValueError(f"not an IRI: <{quotable(str(term)[:60])}>")


def _top_level_blocks(text: str):
    """(first line, text) of each top-level TriG statement, split outside strings, IRIs and comments."""
    blocks = []
    start, depth, index, line, block_line = 0, 0, 0, 1, None
    length = len(text)
    while index < length:
        char = text[index]
        if char == "\n":
            line += 1
        elif char == "#":
            end = text.find("\n", index)
            index = length if end < 0 else end
            continue
        elif char == "<" and re.match(r"<[^<>\"{}|^`\\\x00-\x20]*>", text[index:index + 2000]):
            index += re.match(r"<[^<>\"{}|^`\\\x00-\x20]*>", text[index:index + 2000]).end()
            continue
        elif char in "\"'":
            quote = text[index:index + 3] if text[index:index + 3] in ('"""', "'''") else char
            end = index + len(quote)
            while end < length and not text.startswith(quote, end):
                if len(quote) == 1 and text[end] == "\n":
                    break  # an unterminated short string ends at the line's end
                end += 2 if text[end] == "\\" and text[end + 1:end + 2] != "\n" else 1
            line += text.count("\n", index, end)
            index = end + len(quote) if text.startswith(quote, end) else end
            continue
        if not char.isspace() and block_line is None:
            block_line = line
            if depth == 0 and re.match(r"(?i)(prefix|base)\s", text[index:index + 7]):
                end = text.find("\n", index)
                end = length if end < 0 else end
                blocks.append((block_line, text[index:end]))
                start, block_line, index = end, None, end
                continue
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
            if depth <= 0:  # the end of a graph, or a stray brace: the end of a (bad) block
                depth = 0
                blocks.append((block_line, text[start:index + 1]))
                start, block_line = index + 1, None
        elif char == "." and depth == 0 and not (index + 1 < length and text[index + 1].isalnum()):
            blocks.append((block_line, text[start:index + 1]))
            start, block_line = index + 1, None
        index += 1
    if text[start:].strip():
        blocks.append((block_line or line, text[start:]))
    return [(first or 1, block) for first, block in blocks if block.strip()]


def _rdf_key(term) -> str:
    from ..core.rdfterms import term_key

    return term_key(term)


def _error_line(error: Exception) -> int:
    found = re.search(r"line (\d+)", str(error))
    if found:
        return int(found.group(1))
    for name in ("lineno", "line", "lines"):
        value = getattr(error, name, None)
        if isinstance(value, int) and value > 0:
            return value
    return int(found.group(1)) if found else 1


def _first_line(error: Exception) -> str:
    why = getattr(error, "_why", None)  # rdflib's BadSyntax keeps the reason apart
    if isinstance(why, str) and why:
        return quotable(why[:200])
    lines = [line for line in str(error).strip().splitlines() if line.strip() and not line.startswith("at line")]
    return quotable(lines[0][:200]) if lines else type(error).__name__
