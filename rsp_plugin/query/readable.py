"""Terms and times as a person reads them: prefixed names, Turtle's short numbers, xsd:dateTime times.

The output's default is the contract's (DESIGN.md, "Command line"): terms in
N-Triples form, times in epoch milliseconds (or time points). Asked for with
`--prefixes` and `--time iso`, the same output is written for people:

- an IRI as a prefixed name, with the query's (or program's) own prefixes and
  then the well-known ones (`query.prefixes.WELL_KNOWN`) for namespaces it does
  not name; an IRI whose local part a prefixed name cannot hold stays `<...>`;
- a number or boolean whose lexical form is Turtle's short form, short
  (`"54.5"^^xsd:decimal` is `54.5`, `"7.9E1"^^xsd:double` is `7.9E1`); any other
  typed literal keeps its quotes, its datatype prefixed (`"79"^^xsd:double`
  stays a double: `79` would read as an integer), so nothing is lost;
- a time as xsd:dateTime in UTC, its fraction only when it has one.

>>> shown = Readable({"ex": "http://ex/"}, iso_time=True)
>>> shown.term("<http://ex/a>"), shown.term('"54.5"^^<http://www.w3.org/2001/XMLSchema#decimal>')
('ex:a', '54.5')
>>> shown.term('"79"^^<http://www.w3.org/2001/XMLSchema#double>'), shown.term("<http://ex/a/b#c>")
('"79"^^xsd:double', '<http://ex/a/b#c>')
>>> shown.text('ex(<http://ex/s>,"2"^^<http://www.w3.org/2001/XMLSchema#integer>) at 5'), shown.time(5250)
('ex(ex:s,2) at 5', '1970-01-01T00:00:05.25Z')
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

from ..core.regexes import LazyPattern

XSD = "http://www.w3.org/2001/XMLSchema#"
XSD_DATETIME = XSD + "dateTime"
XSD_INTEGER = XSD + "integer"

#: the lexical forms Turtle writes without quotes, by datatype
_SHORT = {
    XSD + "integer": LazyPattern(r"[+-]?[0-9]+\Z"),
    XSD + "decimal": LazyPattern(r"[+-]?[0-9]*\.[0-9]+\Z"),
    XSD + "double": LazyPattern(r"[+-]?([0-9]+\.[0-9]*|\.[0-9]+|[0-9]+)[eE][+-]?[0-9]+\Z"),
    XSD + "boolean": LazyPattern(r"(true|false)\Z"),
}
#: a local part every prefixed-name reader takes (a subset of Turtle's PN_LOCAL)
_LOCAL = LazyPattern(r"([A-Za-z0-9_]([A-Za-z0-9_.\-]*[A-Za-z0-9_\-])?)?\Z")
#: an IRI or a literal (with its language or datatype) inside a text
_TERM = LazyPattern(r'"(?:[^"\\\n]|\\.)*"(?:\^\^<[^<>"{}|^`\\\s]*>|@[A-Za-z]+(?:-[A-Za-z0-9]+)*)?'
                   r'|<[^<>"{}|^`\\\s]*>')
_TYPED = LazyPattern(r'"((?:[^"\\]|\\.)*)"\^\^<([^>]*)>\Z', re.S)
_EPOCH = datetime(1970, 1, 1, tzinfo=timezone.utc)


def iso_time(ms: int) -> str:
    """Epoch milliseconds as the canonical xsd:dateTime in UTC (`1970-01-01T00:00:05Z`)."""
    moment = _EPOCH + timedelta(milliseconds=ms)
    text = moment.strftime("%Y-%m-%dT%H:%M:%S")
    if len(text) < 19 or text[0] == "-":  # (strftime writes years below 1000 short on some platforms)
        text = f"{moment.year:04d}" + moment.strftime("-%m-%dT%H:%M:%S")
    fraction = ms % 1000
    if fraction:
        text += f".{fraction:03d}".rstrip("0")
    return text + "Z"


def time_literal(ms: int) -> str:
    """The N-Triples form of `iso_time(ms)`: `"1970-01-01T00:00:05Z"^^<...#dateTime>`."""
    return f'"{iso_time(ms)}"^^<{XSD_DATETIME}>'


class Readable:
    """How terms and times are shown: `prefixes` (None: IRIs and literals as they are) and whether
    times are written as xsd:dateTime (`iso_time`; `tick_ms`: how long a time point is, for
    outputs that count time points)."""

    def __init__(self, prefixes: dict[str, str] | None = None, *, iso_time: bool = False,
                 tick_ms: int | None = None, well_known: bool = True):
        self.iso_time = iso_time
        self.tick_ms = tick_ms
        self.prefixes: dict[str, str] | None = None
        if prefixes is not None:
            self.prefixes = _with_well_known(prefixes) if well_known else dict(prefixes)
            # longest namespace first: <http://ex/a/b> is a:b with a: <http://ex/a/>, not ex:a/b
            self._namespaces = sorted(((ns, name) for name, ns in self.prefixes.items() if ns),
                                      key=lambda item: -len(item[0]))
        self._shown: dict[str, str] = {}
        self._used: set[str] = set()
        self._declared: set[str] = set()

    @property
    def compacts(self) -> bool:
        return self.prefixes is not None

    # terms --------------------------------------------------------------------------------------

    def term(self, key: str) -> str:
        """One term (its N-Triples key) as shown."""
        if self.prefixes is None or not key:
            return key
        found = self._shown.get(key)
        if found is None:
            found = self._term(key)
            if len(self._shown) > 100_000:
                self._shown.clear()
            self._shown[key] = found
        return found

    def _term(self, key: str) -> str:
        if key[0] == "<" and key[-1] == ">":
            return self.iri(key[1:-1])
        if key[0] == '"':
            typed = _TYPED.match(key)
            if typed is None:
                return key
            lexical, datatype = typed.groups()
            short = _SHORT.get(datatype)
            if short is not None and short.match(lexical):
                return lexical
            return f'"{lexical}"^^{self.iri(datatype)}'
        return key

    def iri(self, iri: str) -> str:
        for namespace, name in self._namespaces:
            if iri.startswith(namespace) and _LOCAL.match(iri, len(namespace)):
                self._used.add(name)
                return f"{name}:{iri[len(namespace):]}"
        return f"<{iri}>"

    def text(self, text: str) -> str:
        """Every IRI and typed literal inside a text (an atom, an explanation line, a triple) as shown."""
        if self.prefixes is None:
            return text
        return _TERM.sub(lambda match: self.term(match.group(0)), text)

    # times --------------------------------------------------------------------------------------

    def time(self, t: int):
        """A report's time (ms) as shown: the integer, or its xsd:dateTime."""
        return iso_time(t) if self.iso_time else t

    def point(self, point: int):
        """A time point as shown: the integer, or (with a tick) the xsd:dateTime of its start."""
        if not self.iso_time or self.tick_ms is None:
            return point
        return iso_time(point * self.tick_ms)

    # whole outputs ------------------------------------------------------------------------------

    def report(self, value: dict) -> dict:
        """A query's JSON line (`QueryResult.to_json()`, or W3C SPARQL JSON with "t") as shown."""
        out = dict(value)
        if "t" in out and isinstance(out["t"], int):
            out["t"] = self.time(out["t"])
        if self.prefixes is not None:
            if "bindings" in out and isinstance(out["bindings"], list):
                out["bindings"] = [{name: self.term(key) for name, key in row.items()} for row in out["bindings"]]
            if "triples" in out:
                out["triples"] = [self.text(line) for line in out["triples"]]
        return out

    def atoms_line(self, value: dict) -> dict:
        """A `reason` line (`{"t", "atoms"}`, `{"t", "started", "stopped"}`, `{"t", "models"}`) as shown."""
        out = dict(value)
        if "t" in out and isinstance(out["t"], int):
            out["t"] = self.point(out["t"])
        if self.prefixes is not None:
            for name in ("atoms", "started", "stopped"):
                if isinstance(out.get(name), list):
                    out[name] = [self.text(atom) for atom in out[name]]
            if isinstance(out.get("models"), list):
                out["models"] = [[self.text(atom) for atom in model] for model in out["models"]]
        return out

    def tree(self, node):
        """An explanation tree (plain data) with every string's terms as shown."""
        if self.prefixes is None:
            return node
        if isinstance(node, str):
            return self.text(node)
        if isinstance(node, list):
            return [self.tree(item) for item in node]
        if isinstance(node, dict):
            return {key: self.tree(value) for key, value in node.items()}
        return node

    def declarations(self) -> list[str]:
        """`@prefix` lines for the prefixes used since the last call (a Turtle / TriG writer puts
        them before the statements that use them)."""
        if self.prefixes is None:
            return []
        fresh = sorted(self._used - self._declared)
        self._declared.update(fresh)
        return [f"@prefix {name}: <{self.prefixes[name]}> ." for name in fresh]


def _with_well_known(prefixes: dict[str, str]) -> dict[str, str]:
    from .prefixes import WELL_KNOWN

    out = dict(prefixes)
    named = set(out.values())
    for name, namespace in WELL_KNOWN.items():
        if name not in out and namespace not in named:
            out[name] = namespace
    return out




class ReadableLines:
    """A text output that rewrites each JSON line written to it (`reason`'s lines) as `readable`
    shows them, and writes it on to `out`: the engines write the contract's lines unchanged."""

    def __init__(self, out, readable: Readable):
        self.out = out
        self.readable = readable
        self._pending = ""

    def write(self, text: str) -> int:
        import json

        pending = self._pending + text
        *complete, self._pending = pending.split("\n")
        for line in complete:
            if line:
                line = json.dumps(self.readable.atoms_line(json.loads(line)), ensure_ascii=False)
            self.out.write(line + "\n")
        return len(text)

    def flush(self) -> None:
        self.out.flush()

    def __getattr__(self, name):  # fileno, isatty, ... of the output itself
        return getattr(self.out, name)


__all__ = ["Readable", "ReadableLines", "iso_time", "time_literal"]
