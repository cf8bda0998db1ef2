"""Reading continuous queries in every RSP dialect into one plan: `ContinuousQuery`.

    query = parse_query(text, "hot.rq")                    # any dialect (--dialect auto)
    query = parse_query(text, "hot.rq", dialect="cqels")   # CQELS-QL only
    query.windows, query.sparql, query.algebra, query.dialect, query.report

The lark grammar (`grammar.lark`) reads the stream extensions of C-SPARQL,
RSP-QL, CQELS-QL and SPARQLstream exactly and the SPARQL parts as balanced
groups of tokens (`dialects.py` says whose each form is). The extensions are
then taken out of the text: dataset clauses and headers are blanked, `WINDOW <w>
{` becomes `GRAPH  <w> {`, a CQELS `STREAM <s> [RANGE 3s] {` becomes `GRAPH
<urn:...:window:1> {` (a named window of its own). rdflib parses and translates
the plain SPARQL 1.1 that is left; when it cannot, `checker.py` finds the token
at fault, and every message points at the user's text, never at the rewrite.

>>> try:
...     parse_query('''
... REGISTER QUERY hot COMPUTE EVERY 1s AS
... PREFIX ex: <http://example.org/>
... SELECT ?room WHERE { ?s ex:in ?room }   # no window: an error
... ''', "hot.rq")
... except SyntaxError as error:
...     print(error)
hot.rq:4:1: a continuous query reads a stream: add FROM STREAM <s> [RANGE 10s STEP 1s] (C-SPARQL), FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT1S] (RSP-QL), STREAM <s> [RANGE 10s SLIDE 1s] { ... } in WHERE (CQELS-QL) or FROM NAMED STREAM <s> [NOW-10 S SLIDE 1 S] (SPARQLstream)
>>> q = parse_query('''
... REGISTER QUERY hot AS
... PREFIX ex: <http://example.org/>
... SELECT ?room FROM STREAM <http://ex.org/s> [RANGE 10s STEP 1s] WHERE { ?s ex:in ?room }''')
>>> q.name, q.windows[0].stream, q.windows[0].window, q.dialect
('hot', 'http://ex.org/s', RangeWindow(range=10000, step=1000), 'csparql')
>>> q = parse_query('SELECT ?x WHERE { STREAM <http://ex.org/s> [RANGE 3s SLIDE 1s] { ?x ?p ?o } }')
>>> q.dialect, q.report.value, q.windows[0].window
('cqels', 'on-content-change', RangeWindow(range=3000, step=1000))
"""

from __future__ import annotations

import copyreg
import math
import re
from dataclasses import replace
from pathlib import Path
from urllib.parse import urljoin

from lark import Token, Tree
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from ..core import limits
from ..core.errors import QuerySyntaxError, clipped
from ..core.iris import file_iri
from ..core.nesting import TURTLE_HIDDEN, TURTLE_KEPT, check_brackets, deepest
from ..core.parser_tables import ShippedGrammar
from ..core.terms import bad_escapes
from ..core.time import (
    MAX_DURATION_MS,
    UNIT_MS,
    DurationError,
    DurationTooLong,
    parse_duration_ms,
)
from ..io.lines import decode_text
from . import dialects
from .checker import locate
from .messages import (
    anonymous_patterns,
    end_position,
    not_closed,
    open_bracket,
    phrase_list,
    position,
    word_at,
)
from .model import (
    ENTAILMENT_PROFILES,
    MAX_WINDOW_ELEMENTS,
    R2S,
    ContinuousQuery,
    CountWindow,
    NowWindow,
    Place,
    RangeWindow,
    WindowClause,
)
from .prefixes import WELL_KNOWN, undeclared_note

#: the query grammar, its parser's options, and its LALR tables shipped as JSON so that a start
#: skips the grammar's analysis (`python -m rsp_plugin.query.grammar_tables` writes them again)
GRAMMAR = ShippedGrammar(Path(__file__).with_name("grammar.lark"), Path(__file__).with_name("grammar_tables.json"),
                         {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False})
_PARSER = GRAMMAR.load()
_PATTERNS = anonymous_patterns(_PARSER)

#: the name a CQELS `STREAM <s> [...] { }` block's window gets (it has none in the text)
WINDOW_NAME = "urn:x-rsp-plugin:window:{}"

_CLAUSES = ("from_stream", "from_named_window", "from_named_window_as", "from_named_window_first",
            "from_named_stream", "from_named", "from_graph")
_WINDOW_CLAUSES = ("from_stream", "from_named_window", "from_named_window_as", "from_named_window_first",
                   "from_named_stream")


def parse_query(text: str, filename: str = "<query>", *, base: str | None = None,
                dialect: str = "auto") -> ContinuousQuery:
    """Parse a continuous query; raises `QuerySyntaxError` (one line, with line and column).

    `dialect` is "auto" (every dialect, mixed as written) or one of "csparql",
    "rspql", "cqels", "sparqlstream" (that dialect's forms only).
    """
    dialects.check_choice(dialect)
    # what nests in a query is its brackets (`{`, `(`, `[`): rdflib's SPARQL parser recurses ~40 frames a level
    check_brackets(text, filename, QuerySyntaxError, limit=limits.MAX_QUERY_NESTING, hidden=TURTLE_HIDDEN,
                   kept=TURTLE_KEPT)
    for offset, reason in bad_escapes(text):  # (rdflib would read them as a surrogate, which no writer writes)
        raise QuerySyntaxError(reason, filename, *position(text, offset))
    try:
        tree = _PARSER.parse(text)
    except UnexpectedInput as error:
        raise _syntax_error(error, text, filename, dialect) from None
    return _Builder(text, filename, base, dialect).build(tree)


def _too_deep_after_all(text: str, filename: str) -> QuerySyntaxError:
    """rdflib recursed too deep on a query within the bound (it reads some text otherwise than the
    grammar does): one located line still, at the deepest bracket."""
    line, column = position(text, deepest(text, hidden=TURTLE_HIDDEN, kept=TURTLE_KEPT))
    return QuerySyntaxError("nested too deeply for the SPARQL parser", filename, line, column)


def reparse(text: str, filename: str, base: str | None, dialect: str = "auto") -> ContinuousQuery:
    """`parse_query` with positional arguments (how a pickled query comes back)."""
    return parse_query(text, filename, base=base, dialect=dialect)


def _reduce(query: ContinuousQuery):
    """A query pickles as its text: rdflib's algebra is made again by parsing it."""
    return reparse, (query.text, query.filename, query.base, query.read_as)


copyreg.pickle(ContinuousQuery, _reduce)


def parse_query_file(path: str | Path, *, dialect: str = "auto") -> ContinuousQuery:
    path = Path(path)
    try:
        text = decode_text(path.read_bytes(), str(path), QuerySyntaxError)  # bad bytes: a located error
    except OSError as error:
        raise QuerySyntaxError(f"cannot read the query: {error.strerror}", str(path), 1, 1) from None
    return parse_query(text, str(path), base=file_iri(path.resolve().parent) + "/", dialect=dialect)


# errors of the grammar -------------------------------------------------------------------------------

def _read_as(text: str, asked: str, upto: int | None = None) -> str:
    """' (read as CQELS-QL)': the dialect asked for, else the one the text looks written in."""
    if asked != "auto":
        return f" (read as {dialects.name(asked)})"
    guessed = (dialects.guess(text[:upto]) if upto is not None else None) or dialects.guess(text)
    return f" (read as {dialects.name(guessed)})" if guessed else ""


def _syntax_error(error: UnexpectedInput, text: str, filename: str, asked: str) -> QuerySyntaxError:
    offset = getattr(error, "pos_in_stream", None) or 0
    line, column = getattr(error, "line", 1), getattr(error, "column", 1)
    if isinstance(error, UnexpectedToken):
        token = error.token
        accepted = set(getattr(error, "accepts", None) or error.expected)
        if token.type != "$END":
            accepted.discard("$END")
        anything = {"VAR", "NAME", "PUNCT"} <= accepted  # inside SPARQL: any token would do
        expected = phrase_list(accepted, _PATTERNS)
        if token.type == "$END":
            line, column = end_position(text)
            offset = len(text)
            unclosed = not_closed(text, offset)
            message = (f"unexpected end of the query: {unclosed}" if unclosed
                       else f"unexpected end of the query; expected {expected}")
        else:
            offset = token.start_pos
            shown = clipped(str(token))
            before = re.sub(r"#[^\n]*", " ", text[:offset]).rstrip()
            unclosed = not_closed(text, offset, str(token)) if str(token) in ")]}" else None
            if re.search(r"\bSELECT(\s+(RSTREAM|ISTREAM|DSTREAM))?(\s+(DISTINCT|REDUCED))?\Z", before, re.I):
                message = f"unexpected {shown!r}: SELECT needs what to return: variables, (expression AS ?name) or *"
            elif re.search(r"\bREGISTER\s+\w+\s+AS\Z", before, re.I) and token.type in ("SELECT", "CONSTRUCT", "ASK"):
                message = f"unexpected {shown!r}: REGISTER names the query (or its stream) before AS"
            elif unclosed:
                message = f"unexpected {shown!r}: {unclosed}"
            elif str(token) in ")]}" and open_bracket(text, offset) is None:
                message = f"unexpected {shown!r}: no bracket is open for it to close"
            elif anything:
                message = f"unexpected {shown!r} here"
            else:
                message = f"unexpected {shown!r}; expected {expected}"
    elif isinstance(error, UnexpectedCharacters):
        found = text[error.pos_in_stream]
        message = f"unexpected character {found!r}"
        if found in "\"'":
            message += " (a string that is not closed on its line)"
    elif isinstance(error, UnexpectedEOF):  # pragma: no cover - LALR reports a $END token instead
        line, column = end_position(text)
        offset = len(text)
        message = "unexpected end of the query"
    else:  # pragma: no cover - lark has no other kinds
        message = "cannot read the query here"
    return QuerySyntaxError(message + _read_as(text, asked, offset), filename, max(line, 1), max(column, 1))


class _Rewrite:
    """The user's text with spans blanked or replaced, and the way back from its offsets."""

    def __init__(self, text: str):
        self.text = text
        self.blanks: list[tuple[int, int]] = []
        self.replacements: list[tuple[int, int, str]] = []
        self._segments: list[tuple[int, int, int, int]] = []

    def blank(self, start: int, end: int) -> None:
        self.blanks.append((start, end))

    def replace(self, start: int, end: int, replacement: str) -> None:
        self.replacements.append((start, end, replacement))

    def apply(self) -> str:
        chars = list(self.text)
        for start, end in self.blanks:
            for index in range(start, end):
                if chars[index] not in "\r\n":
                    chars[index] = " "
        out: list[str] = []
        cursor = written = 0
        self._segments = []
        for start, end, replacement in sorted(self.replacements):
            out.append("".join(chars[cursor:start]))
            written += start - cursor
            text = replacement if len(replacement) >= end - start else replacement.ljust(end - start)
            self._segments.append((written, written + len(text), start, end))
            out.append(text)
            written += len(text)
            cursor = end
        out.append("".join(chars[cursor:]))
        return "".join(out)

    def to_user(self, offset: int) -> int:
        """An offset in the rewritten text -> the offset in the user's text it came from."""
        shift = 0
        for new_start, new_end, old_start, old_end in self._segments:
            if offset < new_start:
                break
            if offset < new_end:
                return old_start
            shift = old_end - new_end
        return offset + shift


class _Builder:
    """Walks the parse tree into a `ContinuousQuery` and the plain SPARQL text."""

    def __init__(self, text: str, filename: str, base: str | None, asked: str):
        self.text = text
        self.filename = filename
        self.base = base
        self.asked = asked
        self.dialect = "csparql"
        self.prefixes: dict[str, str] = {}
        self.rewrite = _Rewrite(text)
        self.windows: list[WindowClause] = []
        self.graphs: list[str] = []
        self.named_graphs: list[str] = []
        self.entailment: str | None = None
        self.rules: str | None = None
        self.places: dict[str, Place] = {}
        self._stream_windows: dict[tuple, str] = {}
        self._named_windows = 0
        #: where the `FROM STREAM` windows are written (CQELS4J's `STREAM s { }` reads them)
        self._from_stream_places: set[Place] = set()
        #: what the reader should know but is no error (`FILE:LINE:COLUMN: note: ...`), in text order
        self.notes: list[str] = []

    def error(self, message: str, where) -> QuerySyntaxError:
        line, column = self.place_of(where)
        return QuerySyntaxError(message, self.filename, line, column)

    def syntax_error(self, message: str, where) -> QuerySyntaxError:
        """An error in the dialect's syntax: it says which dialect the query was read as."""
        return self.error(f"{message} (read as {dialects.name(self.dialect)})", where)

    @staticmethod
    def place_of(where) -> tuple[int, int]:
        if isinstance(where, Token):
            return where.line, where.column
        if isinstance(where, Tree) and not where.meta.empty:
            return where.meta.line, where.meta.column
        if isinstance(where, Place):
            return where.line, where.column
        return 1, 1

    # the dialect ------------------------------------------------------------------------------

    def forms(self, tree: Tree) -> list[tuple[str, Tree | Token]]:
        """The dialect-specific forms the query uses, in text order."""
        found: list[tuple[int, str, Tree | Token]] = []

        def add(form: str, node) -> None:
            start = node.start_pos if isinstance(node, Token) else node.meta.start_pos
            found.append((start, form, node))

        query = tree.children[-1]
        template = self.template(query)
        for node in tree.iter_subtrees_topdown():
            kind = node.data
            if kind == "register":
                register_kind = str(node.children[1].children[0]).upper()
                add({"QUERY": "register-query", "STREAM": "register-stream"}.get(register_kind, "register-r2s"),
                    node)
            elif kind == "compute_every":
                add("compute-every", node)
            elif kind == "regime":
                add("entailment-regime", node)
            elif kind == "r2s":
                add("construct-r2s" if query.data.startswith("construct") else "select-r2s", node)
            elif kind in _WINDOW_CLAUSES:
                add({"from_stream": "from-stream", "from_named_stream": "from-named-stream",
                     "from_named_window_first": "window-before-on"}.get(kind, "from-named-window"), node)
            elif kind in ("from_named", "from_graph") and any(
                    isinstance(child, Token) and child.type == "GRAPH" for child in node.children):
                add("from-graph-keyword", node)
            elif kind == "stream_clause":
                add("stream-clause", node)
            elif kind in ("entailment", "rules"):
                add(kind, node)
            elif kind == "window_block":
                add("window-block", node)
            elif kind == "stream_block":
                has_window = any(isinstance(child, Tree) and child.data not in ("stream", "group")
                                 for child in node.children)
                add("stream-block" if has_window else "stream-reference", node)
            elif kind == "stream" and isinstance(node.children[0], Token):
                add("stream-name", node)
            elif kind == "group" and node is not template:
                for child in node.children:
                    if isinstance(child, Tree) and child.data in _CLAUSES:
                        add("subquery-window", child)
            elif kind in ("range_step", "range_tumbling", "triples", "elements", "now", "all", "from_to",
                          "now_minus"):
                add(self.window_form(node), node)
                durations = [c for c in node.children if isinstance(c, Tree) and c.data == "duration"]
                separators = [c for c in node.children if isinstance(c, Token) and c.type in ("STEP", "SLIDE")]
                if kind in ("range_step", "range_tumbling") and len(durations) > 1 + len(separators):
                    add("range-durations", node)
        found.sort(key=lambda item: item[0])
        return [(form, node) for _, form, node in found]

    @staticmethod
    def window_form(node: Tree) -> str:
        kind = node.data
        tokens = {child.type for child in node.children if isinstance(child, Token)}
        if kind == "range_step":
            return "range-slide" if "SLIDE" in tokens else "range-step"
        if kind == "range_tumbling":
            return "range-tumbling" if "TUMBLING" in tokens else "range"
        if kind == "triples":
            return "range-triples" if "RANGE" in tokens else "triples"
        return {"from_to": "from-to", "now_minus": "now-minus"}.get(kind, kind)

    def settle_dialect(self, tree: Tree) -> None:
        forms = self.forms(tree)
        self.dialect = dialects.resolve([form for form, _ in forms], self.asked)
        if self.asked != "auto":
            for form, node in forms:
                refusal = dialects.refusal(form, self.asked)
                if refusal:
                    raise self.error(refusal, node)

    # the tree ---------------------------------------------------------------------------

    def build(self, tree: Tree) -> ContinuousQuery:
        self.settle_dialect(tree)
        register = None
        for child in tree.children[:-1]:
            if child.data == "prefix_decl":
                _, name, iri = child.children
                self.prefixes[str(name)[:-1]] = self.absolute(str(iri)[1:-1])
            elif child.data == "base_decl":
                self.base = self.absolute(str(child.children[1])[1:-1])
            elif child.data == "regime":
                self.regime(child)
                self.blank_tree(child)
            else:
                if register is not None:
                    raise self.error("a query is registered once: a second REGISTER", child)
                register = child
                self.blank_tree(child)
        self.bind_undeclared_prefixes(tree)
        query = tree.children[-1]
        form = {"select_query": "SELECT", "construct_query": "CONSTRUCT",
                "construct_where_query": "CONSTRUCT", "ask_query": "ASK"}[query.data]
        self.places["query"] = Place(*self.place_of(query))
        written_r2s = None
        template = self.template(query)
        for child in query.children:
            if not isinstance(child, Tree):
                continue
            if child.data == "r2s":
                written_r2s = child
                self.blank_tree(child)
            elif child is template:
                self.refuse_blocks_in_template(child)
            elif child.data in ("where", "group", "parens"):  # the pattern, and VALUES / HAVING in the modifiers
                self.where(child)
            else:
                self.clause(child)
        name, r2s, compute_every, output_stream = self.registration(register, form, written_r2s)
        self.check_window_names(query)
        self.check_past_windows()
        self.check_numbers(query)
        sparql = self.rewrite.apply()
        algebra = self.translate(sparql)  # first: a clause the grammar took for body tokens shows here
        if not self.windows:
            raise self.error(
                "a continuous query reads a stream: add FROM STREAM <s> [RANGE 10s STEP 1s] (C-SPARQL), "
                "FROM NAMED WINDOW <w> ON <s> [RANGE PT10S STEP PT1S] (RSP-QL), STREAM <s> [RANGE 10s SLIDE 1s] "
                "{ ... } in WHERE (CQELS-QL) or FROM NAMED STREAM <s> [NOW-10 S SLIDE 1 S] (SPARQLstream)", query)
        self.window_variables_range_over_windows(algebra, query)
        return ContinuousQuery(
            text=self.text, filename=self.filename, name=name, r2s=r2s, form=form,
            windows=tuple(self.windows), compute_every=compute_every, graphs=tuple(self.graphs),
            named_graphs=tuple(self.named_graphs), entailment=self.entailment, rules=self.rules,
            output_stream=output_stream, sparql=sparql, algebra=algebra, base=self.base,
            prefixes=dict(self.prefixes), places=self.places, dialect=self.dialect,
            report=dialects.REPORT_POLICY[self.dialect], read_as=self.asked, notes=tuple(self.notes),
        )

    def bind_undeclared_prefixes(self, tree: Tree) -> None:
        """Well-known prefixes (prefixes.py) and the default prefix `:` may be used undeclared: each
        is bound at its first use, with a note there; any other undeclared prefix stays an error."""
        written = [node for node in tree.children if node.data not in ("prefix_decl", "base_decl")]
        names = sorted((token for node in written for token in node.scan_values(
            lambda value: isinstance(value, Token) and value.type in ("PNAME_LN", "PNAME_NS"))),
            key=lambda token: token.start_pos)
        for token in names:
            prefix = str(token).partition(":")[0]
            if prefix in self.prefixes or (prefix and prefix not in WELL_KNOWN):
                continue
            self.prefixes[prefix], note = undeclared_note(prefix, self.base, str(token))
            self.notes.append(f"{self.filename}:{token.line}:{token.column}: note: {note}")

    @staticmethod
    def template(query: Tree) -> Tree | None:
        """A CONSTRUCT's template: `CONSTRUCT { ... }`, or the pattern of `CONSTRUCT WHERE { ... }`."""
        if query.data not in ("construct_query", "construct_where_query"):
            return None
        return next((child for child in query.children if isinstance(child, Tree) and child.data == "group"), None)

    def refuse_blocks_in_template(self, group: Tree) -> None:
        for node in group.iter_subtrees():
            if node.data in ("window_block", "stream_block") or node.data in _CLAUSES:
                raise self.syntax_error("a CONSTRUCT template lists the triples to make: windows, WINDOW and "
                                        "STREAM blocks belong in WHERE", node)

    def registration(self, register: Tree | None, form: str, written_r2s: Tree | None):
        r2s = R2S.RSTREAM
        if written_r2s is not None:
            r2s = R2S[str(written_r2s.children[0]).upper()]
        if register is None:
            return None, r2s, None, None
        kind_tree, name_tree = register.children[1], register.children[2]
        kind = str(kind_tree.children[0]).upper()
        name_token = name_tree.children[0]
        name = self.iri(name_token) if name_token.type != "NAME" else str(name_token)
        compute_every = None
        for child in register.children[3:]:
            if isinstance(child, Tree) and child.data == "compute_every":
                compute_every = self.duration(child.children[-1])
                self.places["compute_every"] = Place(*self.place_of(child))
            elif isinstance(child, Tree) and child.data == "regime":
                self.regime(child)
        if kind in ("RSTREAM", "ISTREAM", "DSTREAM"):
            if written_r2s is not None and R2S[kind] is not r2s:
                raise self.syntax_error(f"the query says REGISTER {kind} and {form} {r2s.value}: one R2S "
                                        f"operator, please", written_r2s)
            r2s = R2S[kind]
        output_stream = None
        if kind == "STREAM" and form == "CONSTRUCT":
            # a bare name is read back as <name>, which resolves against the base like any IRI
            output_stream = self.absolute(name) if name_token.type == "NAME" else name
        elif kind in ("RSTREAM", "ISTREAM", "DSTREAM") and form == "CONSTRUCT":
            output_stream = name
        # REGISTER STREAM name AS SELECT (C-SPARQL): a stream of bindings, named `name`
        return name, r2s, compute_every, output_stream

    def regime(self, tree: Tree) -> None:
        iri_node = next(child for child in tree.children if isinstance(child, Tree) and child.data == "iri")
        self.set_entailment(self.iri(iri_node), iri_node, tree, "UNDER ENTAILMENT REGIME")

    def set_entailment(self, iri: str, where, clause: Tree, keyword: str) -> None:
        profile = ENTAILMENT_PROFILES.get(iri)
        if profile is None:
            known = ", ".join(f"<{known}>" for known in ENTAILMENT_PROFILES)
            raise self.error(f"unsupported entailment <{iri}>; {keyword} takes one of {known}", where)
        if self.entailment is not None and self.entailment != profile:
            raise self.error("a query has one ENTAILMENT", clause)
        self.entailment = profile
        self.places["entailment"] = Place(*self.place_of(clause))

    def where(self, tree: Tree) -> None:
        """The WHERE part: WINDOW and STREAM blocks become GRAPH patterns; windows declared in
        subqueries join the query's windows."""
        for node in tree.iter_subtrees_topdown():
            if node.data == "window_block":
                keyword = node.children[0]
                self.rewrite.replace(keyword.start_pos, keyword.end_pos, "GRAPH ")
            elif node.data == "stream_block":
                self.stream_block(node)
            elif node.data == "group":
                for child in node.children:
                    if isinstance(child, Tree) and child.data in _CLAUSES:
                        if child.data not in _WINDOW_CLAUSES:
                            raise self.syntax_error("FROM <graph> belongs to the outer query: a subquery "
                                                    "declares windows only", child)
                        self.clause(child)

    def stream_block(self, node: Tree) -> None:
        """CQELS-QL: `STREAM <s> [window] { P }` -> a named window of its own, `GRAPH <w> { P }`.
        CQELS4J: `STREAM s { P }` (no window) reads the window `FROM STREAM s [...]` declared, which
        becomes a named window: P sees it alone, the patterns outside see the default graph."""
        keyword, target = node.children[0], node.children[1]
        window_tree = node.children[2] if node.children[2].data != "group" else None
        if isinstance(target, Token):  # STREAM ?s [...]
            raise self.syntax_error("a stream is named by its IRI: STREAM <http://...> [...] { ... }", target)
        stream = self.stream_iri(target)
        if window_tree is None:
            name = self.read_from_stream(stream, target)
            self.rewrite.replace(keyword.start_pos, target.meta.end_pos, f"GRAPH <{name}>")
            return
        window = self.window(window_tree, cqels=True)
        key = (stream, window)
        name = self._stream_windows.get(key)
        if name is None:
            name = self._stream_windows[key] = self.fresh_window_name()
            self.windows.append(WindowClause(stream, window, name, Place(*self.place_of(node))))
        self.rewrite.replace(keyword.start_pos, window_tree.meta.end_pos, f"GRAPH <{name}>")

    def read_from_stream(self, stream: str, where: Tree) -> str:
        """The name of the window `FROM STREAM <stream> [...]` declared, named now if it was not."""
        for index, clause in enumerate(self.windows):
            if clause.stream == stream and clause.place in self._from_stream_places:
                if clause.name is None:
                    clause = self.windows[index] = replace(clause, name=self.fresh_window_name())
                return clause.name
        written = self.text[where.meta.start_pos:where.meta.end_pos]
        raise self.syntax_error(f"STREAM {written} {{ ... }} reads the window of FROM STREAM {written} [...]: declare "
                                f"it before WHERE, or give the window here: STREAM {written} [RANGE 10s] {{ ... }}",
                                where)

    def fresh_window_name(self) -> str:
        """A name for a window the text does not name (a CQELS-QL stream pattern's)."""
        self._named_windows += 1
        return WINDOW_NAME.format(self._named_windows)

    def clause(self, tree: Tree) -> None:
        kind = tree.data
        if kind == "regime":  # UNDER ENTAILMENT REGIME among the dataset clauses
            self.regime(tree)
            self.blank_tree(tree)
            return
        if kind not in (*_CLAUSES, "stream_clause", "entailment", "rules"):
            return
        self.blank_tree(tree)
        iris = [child for child in tree.children if isinstance(child, Tree) and child.data == "iri"]
        streams = [child for child in tree.children if isinstance(child, Tree) and child.data == "stream"]
        window_tree = next((child for child in tree.children if isinstance(child, Tree)
                            and child.data not in ("iri", "stream")), None)
        place = Place(*self.place_of(tree))
        if kind in ("from_stream", "stream_clause", "from_named_stream"):
            # C-SPARQL's FROM STREAM and SPARQLstream's FROM NAMED STREAM join the default graph
            # (CQELS4J's FROM STREAM too, unless a STREAM s { } block reads it: `read_from_stream`)
            cqels = self.dialect == dialects.CQELS and kind == "from_stream"
            self.windows.append(WindowClause(self.stream_iri(streams[0]),
                                             self.window(window_tree, cqels_now=cqels), None, place))
            if kind == "from_stream":
                self._from_stream_places.add(place)
        elif kind in ("from_named_window", "from_named_window_as", "from_named_window_first"):
            name_node, stream_node = iris[0], streams[0]
            name = self.iri(name_node)
            if len(iris) > 1 and self.iri(iris[1]) != name:  # the drafts' `FROM NAMED WINDOW :w ON ... AS :w`
                raise self.error(f"the window is named twice, <{name}> and <{self.iri(iris[1])}>: one name, "
                                 "before ON or after AS", iris[1])
            if any(clause.name == name for clause in self.windows):
                raise self.error(f"the window <{name}> is declared twice", name_node)
            self.windows.append(WindowClause(self.stream_iri(stream_node), self.window(window_tree), name, place))
        elif kind == "from_named":
            self.named_graphs.append(self.iri(iris[0]))
        elif kind == "from_graph":
            self.graphs.append(self.iri(iris[0]))
        elif kind == "entailment":
            self.set_entailment(self.iri(iris[0]), iris[0], tree, "ENTAILMENT")
        elif kind == "rules":
            if self.rules is not None:
                raise self.error("a query has one RULES program", tree)
            self.rules = self.iri(iris[0])
            self.places["rules"] = Place(*self.place_of(tree))

    # windows ----------------------------------------------------------------------------------

    def window(self, tree: Tree, *, cqels: bool = False, cqels_now: bool = False):
        """The window a `[...]` writes; `cqels`: in a CQELS-QL stream pattern (its [NOW] and [RANGE r]);
        `cqels_now`: CQELS4J's FROM STREAM, whose [NOW] is CQELS-QL's and whose [RANGE r] tumbles."""
        kind = tree.data
        tokens = [child for child in tree.children if isinstance(child, Token)]
        durations = [child for child in tree.children if isinstance(child, Tree) and child.data == "duration"]
        if kind == "now":
            # CQELS-QL's [NOW]: the elements with the latest timestamp (a 1 ms window, moved every 1 ms);
            # C-SPARQL's and RSP-QL's: what arrived since the previous evaluation
            return RangeWindow(1, 1) if cqels or cqels_now else NowWindow()
        if kind == "all":
            raise self.syntax_error("[ALL] keeps every element for ever, which no machine can hold: "
                                    "write [RANGE ...] or [TRIPLES n]", tree)
        if kind == "range_step":
            separator = next(index for index, child in enumerate(tree.children)
                             if isinstance(child, Token) and child.type in ("STEP", "SLIDE"))
            size = self.total([d for d in tree.children[:separator] if isinstance(d, Tree)])
            step = self.total([d for d in tree.children[separator:] if isinstance(d, Tree)])
            return RangeWindow(size, step)
        if kind == "range_tumbling":
            size = self.total(durations)
            tumbling = any(token.type == "TUMBLING" for token in tokens)
            # CQELS-QL's [RANGE r] slides on every arrival: a report every 1 ms at most (docs/queries.md, "Dialects")
            return RangeWindow(size, 1 if cqels and not tumbling else size)
        if kind == "triples":
            return CountWindow(self.count(next(t for t in tokens if t.type == "NUMBER")))
        if kind == "elements":
            numbers = [token for token in tokens if token.type == "NUMBER"]
            return CountWindow(self.count(numbers[0]), self.count(numbers[1]) if len(numbers) > 1 else 1)
        if kind == "from_to":  # RSP-QL: [FROM NOW-PT2H TO NOW-PT1H STEP PT1H]
            pasts = [child for child in tree.children if isinstance(child, Tree) and child.data == "past"]
            start = self.amount(pasts[0].children[1])
            end = self.amount(pasts[1].children[1]) if len(pasts) > 1 else 0
            step = self.duration(durations[0]) if durations else None
            return self.past_window(start, end, step, tree)
        if kind == "now_minus":  # SPARQLstream: [NOW-10 S TO NOW-5 S SLIDE 10 S]
            pasts = [child for child in tree.children if isinstance(child, Tree) and child.data == "past"]
            first = pasts[0].children[1]
            start = self.amount(first)
            end = self.amount(pasts[1].children[1], unit_of=first) if len(pasts) > 1 else 0
            slide = [child for child in tree.children if isinstance(child, Tree) and child.data == "amount"]
            step = self.amount(slide[0], unit_of=first) if slide else None
            return self.past_window(start, end, step, tree)
        raise self.syntax_error(f"unknown window {kind}", tree)  # pragma: no cover - the grammar has no other

    def past_window(self, start: int, end: int, step: int | None, tree: Tree) -> RangeWindow:
        if end >= start:
            raise self.syntax_error(f"a window from NOW-{start}ms to NOW-{end}ms holds nothing: "
                                    "its start must be further back than its end", tree)
        return RangeWindow(start, step if step is not None else start - end, end)

    def total(self, durations: list[Tree]) -> int:
        value = sum(self.duration(duration, bounded=False) for duration in durations)
        if value > MAX_DURATION_MS:
            shown = " ".join(str(duration.children[0]) for duration in durations)
            raise self.syntax_error(f"{shown} is longer than any clock counts (at most {MAX_DURATION_MS} ms, "
                                    "292 million years)", durations[0])
        return value

    def duration(self, tree: Tree, *, bounded: bool = True) -> int:
        token = tree.children[0]
        if len(tree.children) > 1:  # `5 s` (RSP4J), a number and its unit apart
            return self.amount(tree)
        if token.type == "NUMBER":
            raise self.syntax_error(
                f"a duration needs a unit: {token}ms, {token}s, {token}m, {token}h, {token}d or ISO 8601 (PT10S)",
                token)
        try:
            value = parse_duration_ms(str(token))
        except DurationError as problem:
            raise self.syntax_error(str(problem), token) from None
        if value <= 0:
            raise self.syntax_error(f"a window's duration is positive, not {token}", token)
        if bounded and value > MAX_DURATION_MS:
            raise self.syntax_error(f"{token} is longer than any clock counts (at most {MAX_DURATION_MS} ms, "
                                    "292 million years)", token)
        return value

    def amount(self, tree: Tree, *, unit_of: Tree | None = None) -> int:
        """SPARQLstream's `10 S`, `500 MS`, `2 MINUTES` (or `10s`, `PT10S`); a bare number takes the unit
        of `unit_of` (SLIDE 10 after NOW-10 S)."""
        first = tree.children[0]
        if first.type == "DURATION":
            return self.duration(tree)
        unit = tree.children[1] if len(tree.children) > 1 else None
        if unit is None and unit_of is not None and len(unit_of.children) > 1:
            unit = unit_of.children[1]
        if unit is None:
            raise self.syntax_error(f"{first} needs a time unit: {first} MS, {first} S, {first} MINUTES, "
                                    f"{first} HOURS or {first} DAYS", first)
        name = str(unit).lower()
        if name in ("month", "months", "year", "years"):
            raise self.syntax_error(f"{unit}: months and years have no fixed length; write days", unit)
        if name not in UNIT_MS or name == "ns":
            raise self.syntax_error(f"unknown time unit {clipped(str(unit))!r}; expected MS, S, SECONDS, MINUTES, HOURS or DAYS",
                                    unit)
        try:
            value = parse_duration_ms(f"{first} {unit}")
        except DurationTooLong:
            value = MAX_DURATION_MS + 1
        except DurationError:
            value = 0
        if value <= 0:
            raise self.syntax_error(f"{first} {unit} is not a positive whole number of milliseconds", first)
        if value > MAX_DURATION_MS:
            raise self.syntax_error(f"{first} {unit} is longer than any clock counts (at most {MAX_DURATION_MS} "
                                    "ms, 292 million years)", first)
        return value

    def count(self, token: Token) -> int:
        if not re.fullmatch(r"[0-9]+", str(token)) or int(token) <= 0:
            raise self.syntax_error(f"expected a positive number of elements, got {token}", token)
        if int(token) > MAX_WINDOW_ELEMENTS:
            raise self.syntax_error(f"a window of {token} elements is more than any machine holds "
                                    f"(at most {MAX_WINDOW_ELEMENTS})", token)
        return int(token)

    def check_past_windows(self) -> None:
        if self.entailment is None and self.rules is None:
            return
        for clause in self.windows:
            if isinstance(clause.window, RangeWindow) and clause.window.end:
                raise self.error("a window that ends before NOW cannot be combined with ENTAILMENT or RULES yet",
                                 clause.place)

    # names and numbers ------------------------------------------------------------------------

    def iri(self, node) -> str:
        token = node.children[0] if isinstance(node, Tree) else node
        text = str(token)
        if token.type == "IRIREF":
            return self.absolute(text[1:-1])
        prefix, _, local = text.partition(":")
        if prefix not in self.prefixes:
            raise self.error(f"unknown prefix '{prefix}:' (declare it with PREFIX {prefix}: <...>)", token)
        return self.prefixes[prefix] + re.sub(r"\\(.)", r"\1", local)

    def stream_iri(self, node: Tree) -> str:
        """A stream's IRI: written as an IRI, or as a bare name (CQELS4J), read as the relative IRI
        <name>; relative ones resolve against the base like any IRI (the command line matches
        `--stream name=FILE` to them: commands/query.py)."""
        written = node.children[0]
        if isinstance(written, Token):
            return self.absolute(str(written))
        return self.iri(written)

    def absolute(self, iri: str) -> str:
        if self.base and not re.match(r"[A-Za-z][A-Za-z0-9+.\-]*:", iri):
            return urljoin(self.base, iri)
        return iri

    def check_numbers(self, query: Tree) -> None:
        """Numbers in the body must fit a double: anything larger overflows the engine's arithmetic."""
        for token in query.scan_values(lambda value: isinstance(value, Token) and value.type == "NUMBER"):
            try:
                finite = math.isfinite(float(str(token)))
            except OverflowError:  # pragma: no cover - float() of a decimal string gives inf instead
                finite = False
            if not finite:
                raise self.error(f"the number {str(token)[:30]} is out of range: numbers in a query fit a "
                                 "double (about ±1.8e308)", token)

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
        self.rewrite.blank(tree.meta.start_pos, tree.meta.end_pos)

    def translate(self, sparql: str):
        from rdflib import URIRef
        from rdflib.plugins.sparql.algebra import translateQuery, traverse
        from rdflib.plugins.sparql.parser import parseQuery
        from rdflib.plugins.sparql.parserutils import CompValue

        try:
            parsed = parseQuery(sparql)
        except RecursionError:
            raise _too_deep_after_all(self.text, self.filename) from None
        except Exception as error:  # pyparsing's ParseException, and rdflib's own on bad escapes
            raise self.body_error(sparql, error) from None
        prefixes = self.prefixes

        def resolve(node):
            # rdflib keeps one prefix per namespace: with two prefixes for one namespace the
            # first is lost. Prefixed names are expanded here, with the query's own table.
            if isinstance(node, CompValue) and node.name == "pname":
                prefix = dict.get(node, "prefix") or ""  # (CompValue.get answers a missing key with its name)
                if prefix in prefixes:
                    return URIRef(prefixes[prefix] + (dict.get(node, "localname") or ""))
            return None

        parsed[1] = traverse(parsed[1], visitPost=resolve)
        try:
            return star_in_written_order(translateQuery(parsed, base=self.base), sparql, parsed)
        except RecursionError:
            raise _too_deep_after_all(self.text, self.filename) from None
        except Exception as error:  # rdflib raises plain Exceptions for bad bodies
            message = str(error).strip().splitlines()[0] if str(error).strip() else type(error).__name__
            line, column = self._locate(message)
            unknown = re.match(r"Unknown namespace prefix\s*:\s*(\S*)", message)
            if unknown:
                message = f"unknown prefix '{unknown.group(1)}:' (declare it with PREFIX {unknown.group(1)}: <...>)"
            raise QuerySyntaxError(message, self.filename, line, column) from None

    def body_error(self, sparql: str, error: Exception) -> QuerySyntaxError:
        """rdflib could not read the body: say where, in the user's text and words."""
        found = locate(sparql, self.rewrite.to_user, self.text)
        if found is not None:
            offset, message = found
        else:  # the W3C grammar reads it: rdflib has a narrower view; its place is the best we have
            loc = getattr(error, "loc", None)
            offset = self.rewrite.to_user(loc) if isinstance(loc, int) else self.places_offset()
            message = f"the SPARQL body cannot be read from {word_at(self.text, offset)!r} on"
        line, column = position(self.text, offset)
        read_as = f" (read as {dialects.name(self.dialect)})"
        return QuerySyntaxError(message + read_as, self.filename, line, column)

    def places_offset(self) -> int:
        place = self.places.get("query", Place(1, 1))
        lines = self.text.split("\n")
        return sum(len(line) + 1 for line in lines[:place.line - 1]) + place.column - 1

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
                return position(self.text, index)
        place = self.places.get("query", Place(1, 1))
        return place.line, place.column


def star_in_written_order(query, sparql: str, parsed):
    """`SELECT *`'s variables in the order the query first writes them: rdflib gathers them in a set, so
    their order (the columns', the JSON keys') changed from one process to the next. In place, in each
    projection a `*` made (`parsed`: the parse tree, whose selects without a projection are the stars;
    rdflib makes one Project per select, in the same order). Returns `query`."""
    stars = ["projection" not in node for node in _walk(parsed[1], ("SelectQuery", "SubSelect"))]
    if not any(stars):
        return query
    projects = list(_walk(query.algebra, ("Project",)))
    if len(projects) != len(stars):
        return query
    first: dict[str, int] = {}
    for found in re.finditer(r"[?$]([^\s(){}\[\],;.!=<>|&^*+/'\"#?$]+)", sparql):
        first.setdefault(found.group(1), found.start())
    end = len(sparql)

    def written(variable) -> tuple:
        return first.get(str(variable), end), str(variable)

    for star, project in zip(stars, projects):
        if star and isinstance(project.get("PV", None), list):
            project["PV"].sort(key=written)
    top = query.algebra.get("PV", None)
    if stars[0] and isinstance(top, list):
        top.sort(key=written)
    return query


def _walk(node, names: tuple):
    """The parse tree's or the algebra's nodes named `names`, in pre-order."""
    if isinstance(node, dict):
        if getattr(node, "name", None) in names:
            yield node
        for value in node.values():
            yield from _walk(value, names)
    elif isinstance(node, (list, tuple)):
        for value in node:
            yield from _walk(value, names)

