"""Text -> `Program`: the lark grammar (`grammar.lark`) and the checks of a valid program.

Every mistake is a `RuleSyntaxError` with file, line and column:
a token the grammar does not expect, an unknown prefix, a window without an
operator, an unsafe variable, a tuple window over an intensional predicate,
a loop through `not`.

>>> program = parse_program("warning(B) :- [RANGE 10] DIAMOND highTemp(B) .")
>>> rule = program.rules[0]
>>> rule.body[0].modality, rule.body[0].window
('diamond', Window(kind='range', size=10))
>>> try:
...     parse_program("p(X) :- [RANGE 3] q(X) .", "prog.lars")
... except RuleSyntaxError as error:
...     print(error)
prog.lars:1:9: a window needs an operator: write [RANGE 3] DIAMOND, [RANGE 3] BOX or [RANGE 3] @T before the atom
"""

from __future__ import annotations

import difflib
import itertools
import re
from pathlib import Path

from lark import Token, Tree
from lark.exceptions import (
    UnexpectedCharacters,
    UnexpectedEOF,
    UnexpectedInput,
    UnexpectedToken,
)

from ..core import limits
from ..core.errors import RuleSyntaxError, clipped, position
from ..core.nesting import check_tree
from ..core.parser_tables import ShippedGrammar
from ..core.terms import (
    RDF,
    RDF_TYPE,
    TRIPLE,
    XSD,
    BadText,
    Dictionary,
    canonical_literal,
    number_of_key,
    surrogates,
)
from ..core.time import DurationError, DurationTooLong, parse_duration_ms
from ..io.lines import decode_text
from .limits import MAX_COUNT, MAX_NUMBER, MAX_RANGE
from .program import (
    AT,
    BOX,
    COUNT,
    DIAMOND,
    LARS_TEXT,
    PLAIN,
    RANGE,
    Arithmetic,
    Atom,
    Comparison,
    ExtendedAtom,
    Location,
    Origin,
    Program,
    Rule,
    Var,
    Window,
    expression_variables,
    from_origin,
    may_unify,
    stratify,
)

#: Prefixes every program knows without declaring them.
STANDARD_PREFIXES = {
    "rdf": RDF,
    "rdfs": "http://www.w3.org/2000/01/rdf-schema#",
    "xsd": XSD,
    "owl": "http://www.w3.org/2002/07/owl#",
}

#: the rule grammar, its parser's options, and its LALR tables shipped as JSON so that a start
#: skips the grammar's analysis (`python -m rsp_plugin.query.grammar_tables` writes them again)
GRAMMAR = ShippedGrammar(Path(__file__).with_name("grammar.lark"), Path(__file__).with_name("grammar_tables.json"),
                         {"parser": "lalr", "propagate_positions": True, "maybe_placeholders": False})

_PARSER = GRAMMAR.load()

_TOKEN_NAMES = {
    "DOT": "'.'", "COMMA": "','", "LPAR": "'('", "RPAR": "')'", "RSQB": "']'", "LSQB": "'['",
    "IF": "':-'", "VAR": "a variable", "NAME": "a name", "IRIREF": "an IRI", "PNAME": "a prefixed name",
    "NUMBER": "a number", "STRING": "a string", "COMPARE": "a comparison", "NOT": "'not'",
    "DIAMOND": "DIAMOND", "BOX": "BOX", "RANGE": "RANGE", "COUNT": "COUNT", "TRIPLES": "TRIPLES", "AT": "'@'",
    "$END": "end of file", "METRIC_INTERVAL": "an interval such as [1,2]",
    "METRIC_OP": "a metric operator (BOXMINUS, DIAMONDMINUS, BOXPLUS, DIAMONDPLUS)", "SINCE": "SINCE/UNTIL",
    "DURATION": "a duration (10s, PT10S)", "LANGTAG": "a language tag", "PNAME_NS": "a prefix (ex:)", "BOXPLUS": "a window (⊞3)", "DIAMOND_SIGN": "◇", "BOX_SIGN": "□", "A": "'a'",
    "PREFIX_KW": "@prefix", "TICK_KW": "@tick", "BLANK": "a blank node",
}
_COMPARE_ALIASES = {"≤": "<=", "≥": ">=", "≠": "!="}


#: The two meanings of a program (DESIGN.md, "Time"): atoms derived earlier stay in the stream
#: ("stream", the default), or each time point stands alone (the LARS papers' Def. 5).
SEMANTICS = ("stream", "answer-stream")


def parse_program(
    text: str, filename: str = "<program>", terms: Dictionary | None = None, *, semantics: str = "stream"
) -> Program:
    """Parse and check a LARS program; raises `RuleSyntaxError` (`mtl/programs.py` reads either language).

    A loop through `not` is an error under the default semantics; under
    `semantics="answer-stream"` it is accepted and `program.stratified` is False.
    """
    if semantics not in SEMANTICS:
        raise ValueError(f"unknown semantics {semantics!r}; expected 'stream' or 'answer-stream'")
    return _parse_lars(text, filename, terms, semantics)


def _parse_lars(text: str, filename: str, terms: Dictionary | None, semantics: str) -> Program:
    for offset, reason in surrogates(text):
        raise RuleSyntaxError(reason, filename, *position(text, offset))
    try:
        tree = _PARSER.parse(text)  # (an LALR parse: no recursion, however deep the text nests)
    except UnexpectedInput as error:
        raise _syntax_error(error, text, filename) from None
    check_tree(tree, filename, RuleSyntaxError, limit=limits.MAX_NESTING)  # (before anything walks it)
    builder = _Builder(text, filename, terms if terms is not None else Dictionary())
    program = builder.build(tree)
    if any(not isinstance(rule, Rule) for rule in program.rules):  # DatalogMTL operators (lars/metric_syntax.py)
        from .metric_syntax import lower_metric_rules

        lower_metric_rules(program)
    from_origin(program.rules, Origin(LARS_TEXT, text, filename, program.terms, semantics))
    _check(program, builder.error)
    if semantics == "stream":
        program.strata = stratify(program.rules, builder.error)
        return program
    loops: list = []
    strata = stratify(program.rules, lambda message, where: loops.append(where))
    program.stratified = not loops
    program.strata = strata if not loops else []
    return program


def parse_program_file(path: str | Path, terms: Dictionary | None = None, *, semantics: str = "stream") -> Program:
    path = Path(path)
    try:
        text = decode_text(path.read_bytes(), str(path), RuleSyntaxError)  # bad bytes: a located error
    except OSError as error:
        raise RuleSyntaxError(f"cannot read the program: {error.strerror}", str(path), 1, 1) from None
    return parse_program(text, str(path), terms, semantics=semantics)


def _syntax_error(error: UnexpectedInput, text: str, filename: str) -> RuleSyntaxError:
    """lark's error in the program's words: the token at fault and what could stand there
    (never lark's own names such as `__ANON_0` or `MINUS`)."""
    line, column = getattr(error, "line", 1), getattr(error, "column", 1)
    if isinstance(error, UnexpectedToken):
        token = error.token
        found = "end of file" if token.type == "$END" else repr(clipped(str(token)))
        accepted = set(getattr(error, "accepts", None) or error.expected)
        if token.type != "$END":
            accepted.discard("$END")
        shown = sorted({expected_phrase(name) for name in accepted})
        if len(shown) > 8:
            shown = [*shown[:8], "..."]
        hint = shown[0] if len(shown) == 1 else ", ".join(shown[:-1]) + " or " + shown[-1]
        if token.type == "$END":
            line, column = _end_position(text)
        message = f"unexpected {found}; expected {hint}"
        typo = _window_operator_typo(text, token)
        if typo is not None:
            message, line, column = typo
    elif isinstance(error, UnexpectedCharacters):
        message = f"unexpected character {text[error.pos_in_stream]!r}"
    elif isinstance(error, UnexpectedEOF):
        line, column = _end_position(text)
        message = "unexpected end of the file (a rule ends with '.')"
    else:  # pragma: no cover - lark has no other kinds
        message = str(error).splitlines()[0]
    return RuleSyntaxError(message, filename, max(line, 1), max(column, 1))


#: a window and the word after it: `[RANGE 2] DIAMOD`
_WINDOW_WORD = re.compile(r"(?:\]|⊞\^?#?[0-9]+)\s*([A-Za-z_][A-Za-z0-9_]*)")
#: what can follow the word when the word was meant as a window operator: the atom
_ATOM_START = {"NAME", "VAR", "IRIREF", "PNAME", "BLANK"}
_OPERATORS = ["DIAMOND", "BOX"]
#: words that rightly follow a window or an interval's `]`
_AFTER_BRACKET = {*_OPERATORS, "not", "BOXMINUS", "DIAMONDMINUS", "BOXPLUS", "DIAMONDPLUS", "SINCE", "UNTIL"}


def expected_phrase(terminal: str) -> str:
    """How a message names what the grammar's terminal `terminal` stands for, in the program's
    words ('a variable', "':-'", 'DIAMOND'), never lark's own names (`__ANON_0`, `MINUS`)."""
    if terminal in _TOKEN_NAMES:
        return _TOKEN_NAMES[terminal]
    literal = {item.name: item.pattern.value for item in _PARSER.terminals if item.pattern.type == "str"}
    return repr(literal[terminal]) if terminal in literal else terminal.lower()


def _window_operator_typo(text: str, token: Token) -> tuple[str, int, int] | None:
    """A misspelt window operator (`[RANGE 2] DIAMOD hot(X)`) reads as an atom, so the parser stops
    at the real atom after it, or further on: say so at the word. The word is the last one after a
    window in the rule so far, when the parser stopped right after it at an atom's start, or when it
    looks like DIAMOND or BOX."""
    if token.type == "$END":
        return None
    before = text[:token.start_pos]
    found = None
    for found in _WINDOW_WORD.finditer(before):
        pass
    if found is None or ":-" in before[found.end():] or found.group(1) in _AFTER_BRACKET:
        return None
    word = found.group(1)
    close = difflib.get_close_matches(word.upper(), _OPERATORS, n=1, cutoff=0.6)
    right_before = not before[found.end():].strip() and token.type in _ATOM_START
    if not right_before and not close:
        return None
    guess = f" (did you mean {close[0]}?)" if close else ""
    start = found.start(1)
    line = text.count("\n", 0, start) + 1
    column = start - (text.rfind("\n", 0, start) + 1) + 1
    return f"unknown window operator {word!r}{guess}; expected DIAMOND, BOX or @T after the window", line, column


def _end_position(text: str) -> tuple[int, int]:
    lines = text.rstrip("\n").split("\n")
    return len(lines), len(lines[-1]) + 1


def is_metric_rule(tree: Tree) -> bool:
    """Does a parsed rule (a `rule` tree of `grammar.lark`) use DatalogMTL operators: a metric
    head, or a body literal that `literal()` hands to `lars/metric_syntax.py`'s `metric_formula`?

    Decided on the parse tree, here with the grammar, so that a plain `.lars` program never
    imports the DatalogMTL modules (`lars/metric_syntax.py` and the model it builds on) to learn
    that it has no metric rule."""
    body = tree.children[1].children if len(tree.children) > 1 else ()
    return tree.children[0].children[0].data == "metric_head" or any(child.data == "literal" for child in body)


class _Builder:
    """Walks the parse tree into the program model."""

    def __init__(self, text: str, filename: str, terms: Dictionary):
        self.text = text
        self.filename = filename
        self.terms = terms
        self.prefixes = dict(STANDARD_PREFIXES)
        self.tick_ms: int | None = None
        self.triple = terms.intern(TRIPLE)
        self.rdf_type = terms.intern(RDF_TYPE)
        self._anonymous = itertools.count(1)

    def error(self, message: str, where) -> None:
        if isinstance(where, Location):
            raise RuleSyntaxError(message, where.filename, where.line, where.column)
        line = getattr(where, "line", None) or getattr(getattr(where, "meta", None), "line", 1)
        column = getattr(where, "column", None) or getattr(getattr(where, "meta", None), "column", 1)
        raise RuleSyntaxError(message, self.filename, line or 1, column or 1)

    def location(self, node) -> Location:
        if isinstance(node, Token):
            return Location(self.filename, node.line, node.column)
        return Location(self.filename, node.meta.line, node.meta.column)

    def build(self, tree: Tree) -> Program:
        rules = []
        for statement in tree.children:
            if statement.data == "prefix_decl":
                _, namespace, iri = statement.children
                self.prefixes[str(namespace)[:-1]] = str(iri)[1:-1]
            elif statement.data == "tick_decl":
                written = statement.children[1]
                try:
                    self.tick_ms = parse_duration_ms(str(written), rounded=True)
                except DurationError as error:
                    self.error(str(error), written)
                if self.tick_ms < 1:  # (a time point is timestamp // tick)
                    self.error(f"a tick lasts at least 1 ms; @tick {written} is {self.tick_ms} ms "
                               "(rounded to whole milliseconds)", written)
            else:
                rules.append(self.rule(statement))
        return Program(rules, self.terms, self.prefixes, self.tick_ms, self.filename)

    # rules -----------------------------------------------------------------

    def rule(self, tree: Tree) -> Rule:
        head_tree = tree.children[0]
        body = tuple(self.literal(child) for child in tree.children[1].children) if len(tree.children) > 1 else ()
        if is_metric_rule(tree):
            from .metric_syntax import metric_rule

            return metric_rule(self, tree, body)
        head_time = None
        if head_tree.children[0].data == "head_time":
            head_time = self.time_term(head_tree.children[0].children[0])
        head = self.atom(head_tree.children[-1])
        text = " ".join(self.text[tree.meta.start_pos : tree.meta.end_pos].split())
        return Rule(head, body, head_time, text, self.location(tree))

    def literal(self, tree: Tree):
        if tree.data == "literal":  # a DatalogMTL metric literal (lars/metric_syntax.py)
            from .metric_syntax import metric_formula

            return metric_formula(self, tree.children[0])
        if tree.data == "comparison":
            left, op, right = tree.children
            return Comparison(
                _COMPARE_ALIASES.get(str(op), str(op)),
                self.expression(left),
                self.expression(right),
                self.location(tree),
            )
        negated = isinstance(tree.children[0], Token) and tree.children[0].type == "NOT"
        ext = tree.children[-1]
        window = modality_tree = None
        for part in ext.children[:-1]:
            if part.data in ("range_window", "count_window", "unicode_window"):
                window = self.window(part)
            else:
                modality_tree = part
        atom = self.atom(ext.children[-1])
        modality, time = PLAIN, None
        if modality_tree is not None:
            modality = {"diamond": DIAMOND, "box": BOX, "at": AT}[modality_tree.data]
            if modality == AT:
                time = self.time_term(modality_tree.children[0])
        where = self.location(tree)
        if window is not None and modality == PLAIN:
            written = self.text[ext.children[0].meta.start_pos : ext.children[0].meta.end_pos]
            self.error(
                f"a window needs an operator: write {written} DIAMOND, {written} BOX or "
                f"{written} @T before the atom",
                where,
            )
        if window is None and modality in (DIAMOND, BOX):
            name = "DIAMOND" if modality == DIAMOND else "BOX"
            self.error(f"{name} needs a window, e.g. [RANGE 10] {name} p(X)", where)
        return ExtendedAtom(atom, modality, window, time, negated, where)

    def window(self, tree: Tree) -> Window:
        if tree.data == "unicode_window":
            token = str(tree.children[0]).lstrip("⊞^")
            if token.startswith("#"):
                return self._count(self.whole(token[1:], tree), tree)
            return self._range(self.whole(token, tree), tree)
        if tree.data == "count_window":
            return self._count(self.integer(tree.children[1]), tree)
        size = tree.children[1].children[0]
        if size.type == "DURATION":
            return self._range(self.ticks(size), size)
        return self._range(self.integer(size), size)

    def _count(self, size: int, where) -> Window:
        if size < 1:
            self.error("a tuple window holds at least one atom: [COUNT n] needs n >= 1", where)
        if size > MAX_COUNT:
            self.error(f"[COUNT {size}] is more than a tuple window can hold (at most {MAX_COUNT} atoms)", where)
        return Window(COUNT, size)

    def _range(self, size: int, where) -> Window:
        if size > MAX_RANGE:
            written = str(where) if isinstance(where, Token) else str(size)
            self.error(
                f"[RANGE {written}] is more time points than a window can hold (at most {MAX_RANGE}); "
                "for the whole timeline, write @T p(X) without a window",
                where,
            )
        return Window(RANGE, size)

    def ticks(self, token: Token) -> int:
        try:
            duration = parse_duration_ms(str(token))
        except DurationTooLong:
            self.error(f"the duration {str(token)[:25]}... is more time than a window can hold", token)
        except DurationError as error:
            self.error(str(error), token)
        if self.tick_ms is None:
            self.error(
                f"the duration {token} needs a tick length: declare e.g. '@tick 1s .' first", token
            )
        if duration % self.tick_ms:
            self.error(f"the duration {token} is not a whole number of ticks ({self.tick_ms} ms)", token)
        return duration // self.tick_ms

    def integer(self, token: Token) -> int:
        text = str(token)
        if not text.isdigit():
            self.error(f"expected a whole number, found {text[:25]}", token)
        return self.whole(text, token)

    def whole(self, digits: str, where) -> int:
        """The value of written digits; more than any bound here allows (40 digits: the bounds
        have 19 or fewer) is an error, before Python reads thousands of them."""
        if len(digits) > 40:
            self.error(f"the number {digits[:25]}... is too large ({len(digits)} digits)", where)
        return int(digits)

    def number_in_range(self, text: str, token: Token) -> None:
        value = number_of_key(text)
        if value is None or not (abs(value) <= MAX_NUMBER):  # inf and nan fail too, and digits past reading
            self.error(f"the number {text if len(text) <= 25 else text[:25] + '...'} is beyond the range "
                       "of numbers (±1.8e308)", token)

    def time_term(self, node):
        token = node.children[0] if isinstance(node, Tree) else node
        if token.type == "VAR":
            return self.variable(token)
        point = self.integer(token)
        if point > MAX_RANGE:
            self.error(f"the time point {str(token)[:25]} is beyond the timeline (at most {MAX_RANGE})", token)
        return self.terms.intern_int(point)

    # atoms and terms -----------------------------------------------------------

    def atom(self, tree: Tree) -> Atom:
        if tree.data == "nullary_atom":
            return Atom(self.terms.intern(str(tree.children[0])), ())
        if tree.data == "triple_atom":
            subject, verb, obj = tree.children
            s = self.term(subject.children[0])
            p = self.rdf_type if verb.children[0].type == "A" else self.term(verb.children[0])
            return Atom(self.triple, (s, p, self.term(obj, in_triple=True)))
        predicate_token = tree.children[0].children[0]
        args = [child for child in tree.children[1:]]
        if predicate_token.type == "NAME":
            return Atom(self.terms.intern(str(predicate_token)), tuple(self.term(a) for a in args))
        predicate = self.term(predicate_token)
        if len(args) == 2:
            return Atom(self.triple, (self.term(args[0]), predicate, self.term(args[1], in_triple=True)))
        return Atom(predicate, tuple(self.term(a) for a in args))

    def term(self, node, in_triple: bool = False):
        if isinstance(node, Tree) and node.data == "term":
            node = node.children[0]
        if isinstance(node, Token):
            if node.type == "VAR":
                return self.variable(node)
            return self.constant_token(node)
        return self.constant(node, in_triple)

    def constant(self, tree: Tree, in_triple: bool) -> int:
        kind = tree.data
        if kind == "constant":  # a number
            number = tree.children[0]
            if isinstance(number, Token):
                text = str(number)
            else:
                text = "-" + str(number.children[0])
            self.number_in_range(text, number if isinstance(number, Token) else number.children[0])
            return self.terms.intern(_as_rdf_number(text) if in_triple else text)
        if kind == "literal":
            string = tree.children[0]
            if len(tree.children) == 1:
                return self.string(string)
            suffix = tree.children[1]
            if suffix.type == "LANGTAG":
                return self.string(string, str(suffix))
            return self.string(string, f"^^{self.iri(suffix)}")
        return self.constant_token(tree.children[0])

    def string(self, token: Token, suffix: str = "") -> int:
        """A literal's id, its escapes read as the stream readers read them (`"caf\\u00E9"` is
        `"café"`); an escape that names no character is an error at the string."""
        try:
            return self.terms.intern(canonical_literal(str(token) + suffix))
        except BadText as error:
            self.error(str(error), token)

    def constant_token(self, token: Token) -> int:
        if token.type in ("IRIREF", "PNAME"):
            return self.terms.intern(self.iri(token))
        return self.terms.intern(str(token))

    def iri(self, token: Token) -> str:
        if token.type == "IRIREF":
            return str(token)
        prefix, _, local = str(token).partition(":")
        if prefix not in self.prefixes:
            self.error(f"unknown prefix '{prefix}:' (declare it with @prefix {prefix}: <...> .)", token)
        return f"<{self.prefixes[prefix]}{local}>"

    def variable(self, token: Token) -> Var:
        name = str(token).lstrip("?")
        if name == "_":
            return Var(f"_{next(self._anonymous)}")
        return Var(name)

    def expression(self, tree):
        if isinstance(tree, Token):  # pragma: no cover - primaries are always wrapped
            return self.term(tree)
        kind = tree.data
        if kind == "expr_var":
            return self.variable(tree.children[0])
        if kind == "expr_number":
            self.number_in_range(str(tree.children[0]), tree.children[0])
            return self.terms.intern(str(tree.children[0]))
        if kind == "expr_string":
            return self.string(tree.children[0])
        if kind == "expr_name":
            return self.terms.intern(str(tree.children[0]))
        if kind == "neg":
            return Arithmetic("-", self.terms.intern_int(0), self.expression(tree.children[0]))
        op = {"add": "+", "sub": "-", "mul": "*", "div": "/"}[kind]
        return Arithmetic(op, self.expression(tree.children[0]), self.expression(tree.children[1]))


def _as_rdf_number(text: str) -> str:
    """Inside a triple, `30` means what Turtle says: "30"^^xsd:integer."""
    if "e" in text or "E" in text:
        datatype = "double"
    elif "." in text:
        datatype = "decimal"
    else:
        datatype = "integer"
    return f'"{text}"^^<{XSD}{datatype}>'


def _check(program: Program, error) -> None:
    heads = [rule.head for rule in program.rules]
    for rule in program.rules:
        for literal in rule.body:
            if (
                isinstance(literal, ExtendedAtom)
                and literal.window is not None
                and literal.window.kind == COUNT
                and any(may_unify(head, literal.atom) for head in heads)
            ):
                error(
                    "a tuple window ([COUNT n]) over an intensional predicate: tuple windows "
                    "count data atoms only, and this atom can be derived by a rule",
                    literal.location,
                )
        _check_safety(rule, error)


def _check_safety(rule: Rule, error) -> None:
    """Every variable must be bound by a positive atom (or by `X = expression`)."""
    bound: set[Var] = set()
    for literal in rule.positive:
        bound |= literal.variables()
    pending = list(rule.comparisons)
    progress = True
    while progress:
        progress = False
        for comparison in list(pending):
            free = comparison.variables() - bound
            if not free:
                pending.remove(comparison)
                progress = True
            elif comparison.op == "=" and len(free) == 1:
                (variable,) = free
                side = comparison.left if comparison.left == variable else comparison.right
                other = comparison.right if side is comparison.left else comparison.left
                if side == variable and not (expression_variables(other) - bound):
                    bound.add(variable)
                    pending.remove(comparison)
                    progress = True
    for comparison in pending:
        free = sorted(v.name for v in comparison.variables() - bound)
        error(f"unsafe variable {', '.join(free)}: not bound by a positive body atom", comparison.location)
    for literal in rule.negative:
        free = sorted(v.name for v in literal.variables() - bound)
        if free:
            error(
                f"unsafe variable {', '.join(free)} under `not`: bind it in a positive body atom",
                literal.location,
            )
    head_vars = rule.head.variables()
    if isinstance(rule.head_time, Var):
        head_vars.add(rule.head_time)
    free = sorted(v.name for v in head_vars - bound)
    if free:
        error(f"unsafe variable {', '.join(free)} in the head: bind it in a positive body atom", rule.location)


