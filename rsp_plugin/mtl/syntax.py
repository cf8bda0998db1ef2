"""MeTeoR's syntax -> the program model: one rule per line, no final '.' needed.

    NotPos(V):-NotOnMap(V)
    ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)
    a1:Scientist(X):- Diamondminus[1,1]a1:FullProfessor(X)
    A(X):-B(X)Since(0,3]C(X)
    Boxplus[1,2]Alarm(X):-Diamondminus[0,inf)Fault(X)

As in MeTeoR, a term that starts with an upper-case letter is a variable (so
is `?x`); lower-case names, numbers, "strings" and `<iris>` are constants.
Predicate names may carry a colon (`a1:Scientist`): a name as written, unless
the program declares the prefix (`@prefix a1: <http://...#> .`, our
addition), in which case it is that IRI and a binary atom is an RDF triple, as
in the LARS language. Intervals: `[a,b]`, `(a,b]`, `[a,b)`, `(a,b)`, `[a]`
(one point), `inf` / `+inf` as an open upper end; bounds are integers or
decimals of at most 18 digits before and after the point. Formulas nest (in
brackets, operators and `Since` / `Until`) at most `limits.MAX_NESTING`
levels. MeTeoR's older `ALWAYS[-b,-a]` / `SOMETIME[-b,-a]` are read as
Boxminus / Diamondminus. Lines starting with `#` or `%` are comments.

Every mistake is a `RuleSyntaxError` (`FILE:LINE:COLUMN: message`); the
checks of a forward-propagating program are in `check.py`.

>>> program = parse_mtl("ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V)")
>>> rule = program.rules[0]
>>> rule.body[1].operator, str(rule.body[1].interval)
('Boxminus', '[1,1]')
>>> try:
...     parse_mtl("H(X):-Boxminus[1,1(X)", "p.mtl")
... except RuleSyntaxError as error:
...     print(error)
p.mtl:1:19: expected ',' or a closing ']' / ')' in the interval
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from fractions import Fraction
from pathlib import Path

from ..core import limits
from ..core.errors import RuleSyntaxError, position
from ..core.nesting import too_deep
from ..core.terms import (
    RDF,
    TRIPLE,
    XSD,
    BadText,
    Dictionary,
    canonical_literal,
    surrogates,
)
from ..io.lines import decode_text
from ..lars.metric_rules import (
    BINARY_NAMES,
    BOXMINUS,
    DIAMONDMINUS,
    UNARY_NAMES,
    Binary,
    HeadOperator,
    Interval,
    MetricRule,
    Temporal,
    Written,
)
from ..lars.metric_syntax import Scanner, read_bound, read_interval
from ..lars.program import Atom, Location, Var


@dataclass
class MetricProgram:
    """Rules as written, the dictionary their constants live in, and the declared prefixes."""

    rules: list[MetricRule]
    terms: Dictionary
    prefixes: dict[str, str] = field(default_factory=dict)
    filename: str = "<program>"

    def __repr__(self) -> str:
        return f"<MetricProgram {self.filename!r} rules={len(self.rules)}>"


#: Prefixes every program knows without declaring them (as in the LARS language).
STANDARD_PREFIXES = {
    "rdf": RDF,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
    "owl": "http://www.w3.org/2002/07/owl#",
}

#: A name: letters, digits, `_`, `-`, dots inside (`Department0.University0`), one colon (`a1:Lecturer`).
_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*(?::[A-Za-z0-9_][A-Za-z0-9_\-]*(?:\.[A-Za-z0-9_\-]+)*)?")
_IRI = re.compile(r'<[^<>"{}|^`\\\s]*>')
_NUMBER = re.compile(r"-?\d+(?:\.\d+)?")
_STRING = re.compile(r'"(?:[^"\\\n]++|\\.)*+"')
_VARIABLE = re.compile(r"\?[A-Za-z_][A-Za-z0-9_]*")
_PREFIX = re.compile(r"\s*@prefix\s+([A-Za-z][A-Za-z0-9_\-]*)?:\s*<([^>]*)>\s*\.?\s*\Z")
_OLD_NAMES = {"ALWAYS": BOXMINUS, "SOMETIME": DIAMONDMINUS}


def parse_mtl(text: str, filename: str = "<program>", terms: Dictionary | None = None) -> MetricProgram:
    """Parse a DatalogMTL program in MeTeoR's syntax; raises `RuleSyntaxError`.

    The program is checked to be forward-propagating (`check.py`).
    """
    from ..lars.metric_check import check_program

    for offset, reason in surrogates(text):
        raise RuleSyntaxError(reason, filename, *position(text, offset))
    reader = _Reader(filename, terms if terms is not None else Dictionary())
    rules = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\n")
        stripped = line.strip()
        if not stripped or stripped[0] in "#%":
            continue
        declared = _PREFIX.match(line)
        if declared:
            reader.prefixes[declared.group(1) or ""] = declared.group(2)
            continue
        if stripped.startswith("@"):
            Scanner(line, filename, number).error(
                "expected a rule 'Head(X) :- Body(X)' or a prefix declaration '@prefix p: <iri> .'",
                len(line) - len(line.lstrip()),
            )
        rules.append(reader.rule(Scanner(line, filename, number)))
    program = MetricProgram(rules, reader.terms, reader.prefixes, filename)
    check_program(program)
    return program


def parse_mtl_file(path: str | Path, terms: Dictionary | None = None) -> MetricProgram:
    path = Path(path)
    try:
        text = decode_text(path.read_bytes(), str(path), RuleSyntaxError)  # bad bytes: a located error
    except OSError as error:
        raise RuleSyntaxError(f"cannot read the program: {error.strerror}", str(path), 1, 1) from None
    return parse_mtl(text, str(path), terms)


class _Reader:
    """Rules, formulas, atoms and terms of one program (its dictionary and prefixes)."""

    def __init__(self, filename: str, terms: Dictionary):
        self.filename = filename
        self.terms = terms
        self.prefixes: dict[str, str] = dict(STANDARD_PREFIXES)
        self.triple = terms.intern(TRIPLE)

    def rule(self, s: Scanner) -> MetricRule:
        s.skip()
        start = s.pos
        operators = []
        while True:
            operator = self.operator(s, UNARY_NAMES)
            if operator is None:
                break
            operators.append(HeadOperator(*operator))
            self.nesting(len(operators), s, operator[2])
        s.skip()
        head_location = s.location()
        head = self.atom(s)
        if not s.take(":-"):
            if s.at_end():
                s.error("expected ':-' and a body (a rule is 'Head(X) :- Body(X)'; facts belong in the stream)")
            s.error(f"expected ':-' after the head, found {s.rest()!r}")
        body = [self.literal(s)]
        while s.take(","):
            body.append(self.literal(s))
        s.take(".")
        if not s.at_end():
            s.error(f"expected ',' or the end of the rule, found {s.rest()!r}")
        text = " ".join(s.text[start:].split())
        return MetricRule(head, tuple(body), tuple(operators), text, Location(self.filename, s.line, start + 1),
                          head_location)

    def nesting(self, depth: int, s: Scanner, where: Location | None = None) -> None:
        """A formula `depth` levels deep (brackets, operators, Since / Until) is too deep past the bound."""
        if depth > limits.MAX_NESTING:
            where = where or s.location()
            raise too_deep(limits.MAX_NESTING, where.filename, where.line, where.column, RuleSyntaxError)

    def literal(self, s: Scanner, depth: int = 1):
        s.skip()
        if s.at_end():
            s.error("expected a body atom")
        self.nesting(depth, s)
        left = self.unary(s, depth)
        operator = self.operator(s, BINARY_NAMES)
        if operator is None:
            return left
        name, interval, location = operator
        right = self.literal(s, depth + 1)  # `A Since B Since C` is A Since (B Since C), as MeTeoR reads it
        return Binary(name, interval, left, right, location)

    def unary(self, s: Scanner, depth: int = 1):
        operator = self.operator(s, UNARY_NAMES)
        if operator is not None:
            name, interval, location = operator
            self.nesting(depth + 1, s, location)
            return Temporal(name, interval, self.unary(s, depth + 1), location)
        if s.peek("("):
            s.take("(")
            inner = self.literal(s, depth + 1)
            s.expect(")", "')' closing the parenthesised formula")
            return inner
        s.skip()
        location = s.location()
        return Written(self.atom(s), location)

    def operator(self, s: Scanner, names: dict[str, str]):
        """`Boxminus[1,2]` and the like, if one starts here: (name, interval, location)."""
        s.skip()
        start = s.pos
        found = _NAME.match(s.text, start)
        if not found:
            return None
        word = found.group(0)
        end = found.end()
        if end >= len(s.text) or s.text[end] not in "[(":
            return None
        canonical = names.get(word.lower())
        old = _OLD_NAMES.get(word) if names is UNARY_NAMES else None
        if canonical is None and old is None:
            return None
        if s.text[end] == "(" and not _looks_like_interval(s.text, end):
            return None  # a predicate of that name, with its arguments
        s.pos = end
        interval = self.interval(s, signed=old is not None)
        location = Location(self.filename, s.line, start + 1)
        if old is not None:
            return old, interval, location
        return canonical, interval, location

    def point_interval(self, text: str, s: Scanner, at: int) -> Interval:
        point = self.bound(text, s, at)
        return Interval(point, point)

    def bound(self, text: str, s: Scanner, at: int) -> Fraction:
        return read_bound(text, s, at)

    def interval(self, s: Scanner, signed: bool = False, distances: bool = True) -> Interval:
        return read_interval(s, signed, distances)

    def atom(self, s: Scanner, constants: bool = False) -> Atom:
        s.skip()
        start = s.pos
        iri = _IRI.match(s.text, start)
        if iri:
            s.pos = iri.end()
            predicate_key, is_iri = iri.group(0), True
        else:
            name = _NAME.match(s.text, start)
            if not name:
                s.error(f"expected an atom such as P(X), found {s.rest()!r}" if s.rest() else "expected an atom such as P(X)")
            text = name.group(0)
            for keyword in ("Since", "Until"):  # `ASince[0,1]B`: a nullary atom then the operator
                if text.endswith(keyword) and len(text) > len(keyword) and name.end() < len(s.text) \
                        and s.text[name.end()] in "[(" and _looks_like_interval(s.text, name.end()):
                    text = text[: -len(keyword)]
            s.pos = start + len(text)
            predicate_key, is_iri = self.name_key(text)
        args = []
        if s.text.startswith("(", s.pos):
            s.pos += 1
            if not s.peek(")"):
                args.append(self.term(s, constants))
                while s.take(","):
                    args.append(self.term(s, constants))
            s.expect(")", "')' after the arguments")
        predicate = self.terms.intern(predicate_key)
        if is_iri and len(args) == 2:
            return Atom(self.triple, (args[0], predicate, args[1]))
        return Atom(predicate, tuple(args))

    def name_key(self, text: str) -> tuple[str, bool]:
        """A predicate or constant name: the IRI if its prefix is declared, else as written."""
        if ":" in text:
            prefix, _, local = text.partition(":")
            if prefix in self.prefixes:
                return f"<{self.prefixes[prefix]}{local}>", True
        return text, False

    def term(self, s: Scanner, constants: bool = False):
        s.skip()
        start = s.pos
        variable = _VARIABLE.match(s.text, start)
        if variable and constants:
            s.error("a fact has no variables")
        if variable:
            s.pos = variable.end()
            return Var(variable.group(0)[1:])
        for pattern in (_IRI, _STRING, _NUMBER):
            found = pattern.match(s.text, start)
            if found:
                s.pos = found.end()
                text = found.group(0)
                if text[0] != '"':
                    return self.terms.intern(text)
                try:
                    return self.terms.intern(canonical_literal(text))
                except BadText as problem:
                    s.error(str(problem), start)
        name = _NAME.match(s.text, start)
        if not name:
            s.error(f"expected a variable or a constant, found {s.rest()!r}" if s.rest() else
                    "expected a variable or a constant")
        s.pos = name.end()
        text = name.group(0)
        if (text[0].isupper() or text[0] == "_") and not constants:
            return Var(text)
        return self.terms.intern(self.name_key(text)[0])


def _looks_like_interval(text: str, at: int) -> bool:
    """`(0,3]` after an operator name, rather than the arguments of a predicate of that name."""
    return re.match(r"[\[(]\s*-?\d+(?:\.\d+)?\s*(?:,\s*(?:-?\d+(?:\.\d+)?|\+?inf|∞)\s*)?[\])]", text[at:]) is not None
