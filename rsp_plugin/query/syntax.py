"""Parsing continuous queries: the stream extensions with lark, the SPARQL body with rdflib.

    query = parse_query(text, "hot.rq")      # -> ContinuousQuery, or QuerySyntaxError
    query.windows, query.sparql, query.algebra

The lark grammar (`grammar.lark`) reads the extensions exactly and the SPARQL
parts as balanced groups of tokens. The extensions are then blanked out of the
text (`WINDOW <w> {` becomes `GRAPH  <w> {`), so the body is plain SPARQL 1.1
with every character where it was: rdflib parses and translates it, and its
errors point at the user's line and column.

>>> try:
...     parse_query('''
... REGISTER QUERY hot COMPUTE EVERY 1s AS
... PREFIX ex: <http://example.org/>
... SELECT ?room WHERE { ?s ex:in ?room }   # no window: an error
... ''', "hot.rq")
... except SyntaxError as error:
...     print(error)
hot.rq:4:1: a continuous query reads a stream: add FROM STREAM <s> [RANGE 10s STEP 1s] or FROM NAMED WINDOW <w> ON <s> [...]
>>> q = parse_query('''
... REGISTER QUERY hot AS
... PREFIX ex: <http://example.org/>
... SELECT ?room FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?s ex:in ?room }''')
>>> q.name, q.windows[0].stream, q.windows[0].window
('hot', 'http://ex.org/s', RangeWindow(range=10000, step=1000))
"""

from __future__ import annotations

import re
from pathlib import Path
from urllib.parse import urljoin

from lark import Lark, Token, Tree
from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken

from ..errors import QuerySyntaxError
from ..lines import decode_text
from ..timeline import parse_duration_ms
from .model import (
    ENTAILMENT_PROFILES,
    R2S,
    ContinuousQuery,
    CountWindow,
    NowWindow,
    Place,
    RangeWindow,
    WindowClause,
)

_GRAMMAR = (Path(__file__).parent / "grammar.lark").read_text(encoding="utf-8")
_PARSER = Lark(_GRAMMAR, parser="lalr", propagate_positions=True, maybe_placeholders=False)

_TOKEN_NAMES = {
    "LSQB": "'['", "RSQB": "']'", "LBRACE": "'{'", "RBRACE": "'}'", "LPAR": "'('", "RPAR": "')'",
    "COMMA": "','", "IRIREF": "an IRI", "PNAME_LN": "a prefixed name", "PNAME_NS": "a prefix",
    "VAR": "a variable", "STRING": "a string", "NUMBER": "a number", "DURATION": "a duration (10s, PT10S)",
    "NAME": "a name", "PUNCT": "an operator", "LANGTAG": "a language tag", "BLANK": "a blank node",
    "$END": "end of the query",
}
_UNIT_ALIASES = {
    "msec": "ms", "sec": "s", "secs": "s", "min": "m", "mins": "m", "hr": "h", "hrs": "h", "day": "d", "days": "d",
}


def parse_query(text: str, filename: str = "<query>", *, base: str | None = None) -> ContinuousQuery:
    """Parse a C-SPARQL or RSP-QL query; raises `QuerySyntaxError` (one line, with line and column)."""
    try:
        tree = _PARSER.parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(error, text, filename) from None
    return _Builder(text, filename, base).build(tree)


def reparse(text: str, filename: str, base: str | None) -> ContinuousQuery:
    """`parse_query` with positional arguments (how a pickled query comes back)."""
    return parse_query(text, filename, base=base)


def parse_query_file(path: str | Path) -> ContinuousQuery:
    path = Path(path)
    try:
        text = decode_text(path.read_bytes(), str(path), QuerySyntaxError)  # bad bytes: a located error
    except OSError as error:
        raise QuerySyntaxError(f"cannot read the query: {error.strerror}", str(path), 1, 1) from None
    return parse_query(text, str(path), base=path.resolve().parent.as_uri() + "/")


def duration_ms(text: str) -> int:
    """`10s`, `10sec`, `500ms`, `2min`, `PT10S` -> milliseconds.

    >>> duration_ms("10sec"), duration_ms("PT1M"), duration_ms("1.5s")
    (10000, 60000, 1500)
    """
    match = re.fullmatch(r"([0-9]+(?:\.[0-9]+)?)([A-Za-z]+)", text)
    if match and not text.upper().startswith("P"):
        number, unit = match.groups()
        unit = _UNIT_ALIASES.get(unit.lower(), unit.lower())
        if "." in number:
            return parse_duration_ms(f"PT{float(number) * {'ms': 0.001, 's': 1, 'm': 60, 'h': 3600, 'd': 86400}[unit]}S")
        return parse_duration_ms(number + unit)
    return parse_duration_ms(text)


def _syntax_error(error: UnexpectedInput, text: str, filename: str) -> QuerySyntaxError:
    line, column = getattr(error, "line", 1), getattr(error, "column", 1)
    if isinstance(error, UnexpectedToken):
        token = error.token
        if token.type == "$END":
            line, column = _end_position(text)
            found = "the end of the query"
        else:
            found = repr(str(token))
        accepted = error.expected
        if getattr(error, "interactive_parser", None) is not None:
            try:
                accepted = error.interactive_parser.accepts() or accepted
            except Exception:  # pragma: no cover - lark could not simulate; keep its set
                pass
        expected = sorted({_TOKEN_NAMES.get(name, name) for name in accepted})
        hint = ", ".join(expected[:8]) + (", ..." if len(expected) > 8 else "")
        message = f"unexpected {found}; expected {hint}"
        if token.type == "$END" and "'}'" in expected:
            message = "unexpected end of the query: a '{' is not closed"
    elif isinstance(error, UnexpectedCharacters):
        message = f"unexpected character {text[error.pos_in_stream]!r}"
    elif isinstance(error, UnexpectedEOF):
        line, column = _end_position(text)
        message = "unexpected end of the query"
    else:  # pragma: no cover - lark has no other kinds
        message = str(error).splitlines()[0]
    return QuerySyntaxError(message, filename, max(line, 1), max(column, 1))


def _end_position(text: str) -> tuple[int, int]:
    lines = text.rstrip().split("\n")
    return len(lines), len(lines[-1]) + 1


class _Builder:
    """Walks the parse tree into a `ContinuousQuery` and the plain SPARQL text."""

    def __init__(self, text: str, filename: str, base: str | None):
        self.text = text
        self.filename = filename
        self.base = base
        self.prefixes: dict[str, str] = {}
        self.blank: list[tuple[int, int]] = []
        self.replace: list[tuple[int, int, str]] = []
        self.windows: list[WindowClause] = []
        self.graphs: list[str] = []
        self.named_graphs: list[str] = []
        self.entailment: str | None = None
        self.rules: str | None = None
        self.places: dict[str, Place] = {}

    def error(self, message: str, where) -> QuerySyntaxError:
        line, column = self.place_of(where)
        return QuerySyntaxError(message, self.filename, line, column)

    @staticmethod
    def place_of(where) -> tuple[int, int]:
        if isinstance(where, Token):
            return where.line, where.column
        if isinstance(where, Tree) and not where.meta.empty:
            return where.meta.line, where.meta.column
        if isinstance(where, Place):
            return where.line, where.column
        return 1, 1

    # the tree ---------------------------------------------------------------------------

    def build(self, tree: Tree) -> ContinuousQuery:
        register = None
        for child in tree.children[:-1]:
            if child.data == "prefix_decl":
                _, name, iri = child.children
                self.prefixes[str(name)[:-1]] = self.absolute(str(iri)[1:-1])
            elif child.data == "base_decl":
                self.base = self.absolute(str(child.children[1])[1:-1])
            else:
                if register is not None:
                    raise self.error("a query is registered once: a second REGISTER", child)
                register = child
                self.blank_tree(child)
        query = tree.children[-1]
        form = {"select_query": "SELECT", "construct_query": "CONSTRUCT",
                "construct_where_query": "CONSTRUCT", "ask_query": "ASK"}[query.data]
        self.places["query"] = Place(*self.place_of(query))
        for child in query.children:
            if isinstance(child, Tree):
                self.clause(child)
        name, r2s, compute_every, output_stream = self.registration(register, form)
        if not self.windows:
            raise self.error(
                "a continuous query reads a stream: add FROM STREAM <s> [RANGE 10s STEP 1s] "
                "or FROM NAMED WINDOW <w> ON <s> [...]", query)
        self.check_window_names(query)
        sparql = self.plain_sparql()
        algebra = self.translate(sparql)
        self.window_variables_range_over_windows(algebra, query)
        return ContinuousQuery(
            text=self.text, filename=self.filename, name=name, r2s=r2s, form=form,
            windows=tuple(self.windows), compute_every=compute_every, graphs=tuple(self.graphs),
            named_graphs=tuple(self.named_graphs), entailment=self.entailment, rules=self.rules,
            output_stream=output_stream, sparql=sparql, algebra=algebra, base=self.base,
            prefixes=dict(self.prefixes), places=self.places,
        )

    def registration(self, register: Tree | None, form: str):
        if register is None:
            return None, R2S.RSTREAM, None, None
        kind_tree, name_tree = register.children[1], register.children[2]
        kind = str(kind_tree.children[0]).upper()
        name_token = name_tree.children[0]
        name = self.iri(name_token) if name_token.type != "NAME" else str(name_token)
        compute_every = None
        for child in register.children[3:]:
            if isinstance(child, Tree) and child.data == "compute_every":
                compute_every = self.duration(child.children[2])
                self.places["compute_every"] = Place(*self.place_of(child))
        r2s = R2S[kind] if kind in ("RSTREAM", "ISTREAM", "DSTREAM") else R2S.RSTREAM
        output_stream = None
        if kind == "STREAM":
            if form != "CONSTRUCT":
                raise self.error("REGISTER STREAM makes a stream of triples: its query is a CONSTRUCT", kind_tree)
            # a bare name is read back as <name>, which resolves against the base like any IRI
            output_stream = self.absolute(name) if name_token.type == "NAME" else name
        elif kind in ("RSTREAM", "ISTREAM", "DSTREAM") and form == "CONSTRUCT":
            output_stream = name
        return name, r2s, compute_every, output_stream

    def clause(self, tree: Tree) -> None:
        kind = tree.data
        if kind == "where":
            for node in tree.iter_subtrees():
                if node.data == "window_block":
                    keyword = node.children[0]
                    self.replace.append((keyword.start_pos, keyword.end_pos, "GRAPH "))
            return
        if kind not in ("from_stream", "from_named_window", "from_named", "from_graph", "entailment", "rules"):
            return
        self.blank_tree(tree)
        iris = [child for child in tree.children if isinstance(child, Tree) and child.data == "iri"]
        if kind == "from_stream":
            window = self.window(tree.children[-1])
            self.windows.append(WindowClause(self.iri(iris[0]), window, None, Place(*self.place_of(tree))))
        elif kind == "from_named_window":
            name, stream = self.iri(iris[0]), self.iri(iris[1])
            if any(clause.name == name for clause in self.windows):
                raise self.error(f"the window <{name}> is declared twice", iris[0])
            window = self.window(tree.children[-1])
            self.windows.append(WindowClause(stream, window, name, Place(*self.place_of(tree))))
        elif kind == "from_named":
            self.named_graphs.append(self.iri(iris[0]))
        elif kind == "from_graph":
            self.graphs.append(self.iri(iris[0]))
        elif kind == "entailment":
            iri = self.iri(iris[0])
            profile = ENTAILMENT_PROFILES.get(iri)
            if profile is None:
                known = ", ".join(f"<{known}>" for known in ENTAILMENT_PROFILES)
                raise self.error(f"unsupported entailment <{iri}>; expected one of {known}", iris[0])
            if self.entailment is not None and self.entailment != profile:
                raise self.error("a query has one ENTAILMENT", tree)
            self.entailment = profile
            self.places["entailment"] = Place(*self.place_of(tree))
        elif kind == "rules":
            if self.rules is not None:
                raise self.error("a query has one RULES program", tree)
            self.rules = self.iri(iris[0])
            self.places["rules"] = Place(*self.place_of(tree))

    def window(self, tree: Tree):
        kind = tree.data
        if kind == "now":
            return NowWindow()
        if kind == "range_step":
            durations = [c for c in tree.children if isinstance(c, Tree)]
            size, step = self.duration(durations[0]), self.duration(durations[1])
            if step <= 0:
                raise self.error("a window's STEP is positive", durations[1])
            return RangeWindow(size, step)
        if kind == "range_tumbling":
            size = self.duration(next(c for c in tree.children if isinstance(c, Tree)))
            return RangeWindow(size, size)
        numbers = [c for c in tree.children if isinstance(c, Token) and c.type == "NUMBER"]
        size = self.count(numbers[0])
        step = self.count(numbers[1]) if len(numbers) > 1 else 1
        return CountWindow(size, step)

    def duration(self, tree: Tree) -> int:
        token = tree.children[0]
        if token.type == "NUMBER":
            raise self.error(
                f"a duration needs a unit: {token}ms, {token}s, {token}m, {token}h, {token}d or ISO 8601 (PT10S)",
                token)
        try:
            value = duration_ms(str(token))
        except ValueError as problem:
            raise self.error(str(problem), token) from None
        if value <= 0:
            raise self.error(f"a window's duration is positive, not {token}", token)
        return value

    def count(self, token: Token) -> int:
        if not re.fullmatch(r"[0-9]+", str(token)) or int(token) <= 0:
            raise self.error(f"expected a positive number of elements, got {token}", token)
        return int(token)

    def iri(self, node) -> str:
        token = node.children[0] if isinstance(node, Tree) else node
        text = str(token)
        if token.type == "IRIREF":
            return self.absolute(text[1:-1])
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self.error(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)", token)
        return self.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)

    def absolute(self, iri: str) -> str:
        if self.base and not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", iri):
            return urljoin(self.base, iri)
        return iri

    def check_window_names(self, query: Tree) -> None:
        named = {clause.name for clause in self.windows if clause.name}
        for node in query.iter_subtrees():
            if node.data != "window_block":
                continue
            target = node.children[1]
            if isinstance(target, Tree):
                name = self.iri(target)
                if name not in named:
                    raise self.error(
                        f"no window named <{name}>: declare it with FROM NAMED WINDOW <{name}> ON <stream> [...]",
                        target)
            elif not named:
                raise self.error("WINDOW ?w reads named windows, but the query declares none", target)

    def window_variables_range_over_windows(self, algebra, query: Tree) -> None:
        """`WINDOW ?w { ... }` became `GRAPH ?w { ... }`: with FROM NAMED graphs also in the
        dataset, ?w is kept to the named windows by a filter around those graph patterns."""
        variables = {str(node.children[1]) for node in query.iter_subtrees()
                     if node.data == "window_block" and isinstance(node.children[1], Token)}
        names = [clause.name for clause in self.windows if clause.name]
        if not variables or not self.named_graphs or not names:
            return
        from rdflib import Variable
        from rdflib.plugins.sparql.algebra import Filter, translateQuery, traverse
        from rdflib.plugins.sparql.parser import parseQuery

        def keep_to_windows(node):
            if getattr(node, "name", None) == "Graph" and isinstance(node.term, Variable) \
                    and f"?{node.term}" in variables | {f"?{v[1:]}" for v in variables}:
                listed = ", ".join(f"<{name}>" for name in names)
                probe = translateQuery(parseQuery(f"SELECT * WHERE {{ FILTER(?{node.term} IN ({listed})) }}"))
                return Filter(probe.algebra.p.p.expr, node)
            return None

        algebra.algebra = traverse(algebra.algebra, visitPost=keep_to_windows)

    # the plain SPARQL body ---------------------------------------------------------------

    def blank_tree(self, tree: Tree) -> None:
        self.blank.append((tree.meta.start_pos, tree.meta.end_pos))

    def plain_sparql(self) -> str:
        chars = list(self.text)
        for start, end in self.blank:
            for index in range(start, end):
                if chars[index] not in "\r\n":
                    chars[index] = " "
        for start, end, replacement in self.replace:
            chars[start:end] = list(replacement.ljust(end - start))
        return "".join(chars)

    def translate(self, sparql: str):
        from pyparsing import ParseBaseException
        from rdflib.plugins.sparql.algebra import translateQuery
        from rdflib.plugins.sparql.parser import parseQuery

        try:
            parsed = parseQuery(sparql)
        except ParseBaseException as error:
            rest = error.line[error.col - 1:].strip()
            found = repr(rest.split()[0][:30]) if rest else "the end of the query"
            expected = f" ({error.msg[0].lower() + error.msg[1:]})" if error.msg else ""
            message = f"SPARQL syntax error at {found}{expected}"
            raise QuerySyntaxError(message, self.filename, error.lineno, error.col) from None
        try:
            return translateQuery(parsed, base=self.base)
        except Exception as error:  # rdflib raises plain Exceptions for bad bodies
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            line, column = self._locate(message)
            unknown = re.match(r"Unknown namespace prefix\s*:\s*(\S*)", message)
            if unknown:
                message = f"unknown prefix '{unknown.group(1)}:' (declare it with PREFIX {unknown.group(1)}: <...>)"
            raise QuerySyntaxError(message, self.filename, line, column) from None

    def _locate(self, message: str) -> tuple[int, int]:
        """rdflib's translation errors have no place: find the name they mention."""
        prefix = re.search(r"prefix\s*:?\s*([A-Za-z][\w\-]*)", message, re.I)
        needle = (prefix.group(1) + ":") if prefix else None
        if needle is None:
            variable = re.search(r"\?\w+", message)
            needle = variable.group(0) if variable else None
        if needle:
            index = self.text.find(needle)
            if index >= 0:
                line = self.text.count("\n", 0, index) + 1
                return line, index - (self.text.rfind("\n", 0, index) + 1) + 1
        place = self.places.get("query", Place(1, 1))
        return place.line, place.column
