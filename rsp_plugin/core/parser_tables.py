"""lark LALR parsers started from tables shipped next to their grammar.

lark analyses an LALR grammar each time a parser is made: tens of milliseconds for
the LARS rules, a tenth of a second for queries, at every start of a command. The
result of that analysis, the parser's tables, is written once as JSON (lark's own
serialization, `memo_serialize`, with its tuples and int-keyed mappings tagged; no
pickle) and read back when the grammar's digest, lark's version and the parser's
options are the ones it was built from; otherwise the grammar is analysed as before.

After a grammar changes: `python -m rsp_plugin.core.parser_tables` writes every table file
again (tests/test_parser_tables.py fails until then).

A parser loaded from its tables lexes with `SharedScanLexer` (a built one, with lark's own): lark's contextual lexer compiles one regex
alternation per distinct set of terminals a parser state accepts, at that state's first token
(~3 ms each, 21 of them for a short query: most of a first parse). Reading with the scanner of
all terminals first gives the same token whenever the token it finds is one the state accepts;
a state's own scanner is compiled only when it is not.

The parse table, most of the tables, is stored compactly (`_compact_table`: a state's actions as
one list of numbers) and read back by `_TableParser` without lark's per-action deserialization,
and so are the rules and terminals lark memoizes (`_compact_memo`: a list each, made back into
lark's objects by `_memo_objects`): reading the query grammar's tables took ~17 ms of every
start, ~3 ms this way.
"""

from __future__ import annotations

import hashlib
import json
from copy import copy
from dataclasses import dataclass, field
from pathlib import Path

from lark import Lark
from lark.lexer import BasicLexer, ContextualLexer
from lark.parsers.lalr_analysis import IntParseTable, Reduce, Shift
from lark.parsers.lalr_parser import LALR_Parser, _Parser

#: the way `_tagged`, `_compact_table` and `_compact_memo` write the tables, and what their header holds
FORMAT = 5
#: what regenerates the tables (said by the tests when they are stale)
REGENERATE = "python -m rsp_plugin.query.grammar_tables"


@dataclass(frozen=True)
class ShippedGrammar:
    """A `.lark` grammar, the options its parser is made with, and where its tables are shipped."""

    grammar: Path
    tables: Path
    options: dict = field(default_factory=dict)

    @property
    def name(self) -> str:
        """The grammar as a reader finds it in the package: `query/grammar.lark`."""
        return f"{self.grammar.parent.name}/{self.grammar.name}"

    def text(self) -> str:
        return self.grammar.read_text(encoding="utf-8")

    def header(self, text: str | None = None) -> dict:
        """What the tables were built from: they are used only if all of it is still so."""
        from lark import __version__

        text = self.text() if text is None else text
        return {"format": FORMAT, "grammar": self.name,
                "sha256": hashlib.sha256(text.encode("utf-8")).hexdigest(),
                "lark": __version__, "options": self.options}

    def build(self) -> Lark:
        """The parser made from the grammar (lark's analysis: what the tables save)."""
        return Lark(self.text(), **self.options)

    def load(self) -> Lark:
        """The parser from the shipped tables if they were built from this grammar, lark and
        options; else built from the grammar."""
        text = self.text()
        try:
            tables = json.loads(self.tables.read_text(encoding="utf-8"), object_pairs_hook=_untag)
        except (OSError, ValueError):
            return self.build()
        if tables.get("header") != self.header(text):
            return self.build()
        stored = tables["parser"]
        # (lark's own memo deserialization hands objects that are no longer data through as they are)
        return Lark._load_from_dict(stored["data"], _memo_objects(stored["memo"]), _plugins=PLUGINS)

    def tables_of(self, parser: Lark) -> dict:
        """A parser built from this grammar as plain JSON data, with the header it is checked against."""
        from lark.grammar import Rule
        from lark.lexer import TerminalDef

        _number_states_canonically(parser)
        data, memo = parser.memo_serialize([TerminalDef, Rule])
        data["parser"]["parser"] = _compact_table(data["parser"]["parser"])
        return {"header": self.header(), "parser": _tagged({"data": data, "memo": _compact_memo(memo)})}

    def write(self) -> None:
        """Build the parser from the grammar and store its tables (after the grammar changes)."""
        text = json.dumps(self.tables_of(self.build()), separators=(",", ":"), ensure_ascii=False)
        self.tables.write_text(text + "\n", encoding="utf-8")


class _StateLexer(BasicLexer):
    """One parser state's lexer (or the root lexer, of every terminal): it asks `shared`, the
    scanner of every terminal, first, and compiles its own scanner only when that one's token is
    not among the terminals this state accepts.

    The same token as the state's own scanner: both try the terminals in one order (lark sorts
    them by a key that ends with the name, so a state's order is the whole order with the others
    left out) and a regex alternation takes its first alternative that matches. If that first
    one is accepted here, every accepted one before it did not match; if nothing matches, no
    accepted terminal does. (Only when no terminal needs a callback: see `SharedScanLexer`.)"""

    shared = None  # the root lexer's scanner, once `SharedScanLexer` has checked it may be shared

    def __init__(self, conf, comparator=None) -> None:
        super().__init__(conf, comparator)
        self.callback = {}  # (what `_build_scanner` sets, when `shared` stands for the state's scanner)
        self.accepted = frozenset(terminal.name for terminal in self.terminals)

    def match(self, text, pos):
        if self.shared is not None:
            found = self.shared.match(text, pos)
            if found is None or found[1] in self.accepted:
                return found
        return self.scanner.match(text, pos)


class SharedScanLexer(ContextualLexer):
    """lark's contextual lexer whose states read with one shared scanner first (`_StateLexer`),
    each state's lexer made at that state's first token (`_StateLexers`: a short query visits
    a few dozen of the hundreds of states).

    Shared only if the scanner of every terminal keeps every terminal and has no callbacks
    (no string terminal that a regex terminal of its priority also matches, no lexer callbacks):
    then a state's scanner would have none either. Otherwise each state compiles its own, as
    lark does."""

    BasicLexer = _StateLexer

    def __init__(self, conf, states, always_accept=()) -> None:
        # lark's ContextualLexer.__init__ (lark 1.3), the states' lexers left to `_StateLexers`; the
        # terminals were validated when the tables were written (a loaded conf skips validation)
        terminals = list(conf.terminals)
        whole = copy(conf)
        whole.terminals = terminals
        self.lexers = _StateLexers(whole, states, always_accept)
        whole.skip_validation = True
        self.root_lexer = self.BasicLexer(whole)

    def lex(self, lexer_state, parser_state):
        if not getattr(self, "_shared_checked", False):
            self._shared_checked = True
            root = self.root_lexer
            scanner = root.scanner  # (compiles it, and sets root.callback)
            if not root.callback and len(scanner.terminals) == len(root.terminals):
                self.lexers.shared = scanner
                for lexer in self.lexers.values():
                    lexer.shared = scanner
        return super().lex(lexer_state, parser_state)


class _StateLexers(dict):
    """A parser state -> its lexer, made when the state is first asked for (as lark's contextual
    lexer makes them all at start: one per distinct set of accepted terminals, shared by the
    states that accept that set)."""

    def __init__(self, conf, states, always_accept) -> None:
        super().__init__()
        self.conf, self.states = conf, states
        self.extra = set(conf.ignore) | set(always_accept)
        self.by_terminals: dict[frozenset, _StateLexer] = {}
        self.shared = None  # the shared scanner, once `SharedScanLexer.lex` has checked it

    def __missing__(self, state):
        key = frozenset(self.states[state])
        lexer = self.by_terminals.get(key)
        if lexer is None:
            by_name = self.conf.terminals_by_name
            state_conf = copy(self.conf)
            state_conf.terminals = [by_name[name] for name in key | self.extra if name in by_name]
            lexer = self.by_terminals[key] = _StateLexer(state_conf)
            lexer.shared = self.shared
        self[state] = lexer
        return lexer


class _TableParser(LALR_Parser):
    """lark's LALR parser whose parse table is read from its compact form (`_compact_table`)."""

    @classmethod
    def deserialize(cls, data, memo, callbacks, debug=False):
        parser = cls.__new__(cls)
        parser._parse_table = _parse_table(data, memo)
        parser.parser = _Parser(parser._parse_table, callbacks, debug)
        return parser


#: what a parser loaded from its tables is given: lark's plugin hooks for the contextual lexer's and
#: the LALR parser's classes (not a built one: lark would write the classes into the tables)
PLUGINS = {"ContextualLexer": SharedScanLexer, "LALR_Parser": _TableParser}


def _compact_table(table: dict) -> dict:
    """lark's serialized parse table (`IntParseTable.serialize`: per state a mapping token number ->
    (0, state) to shift or (1, {"@": rule}) to reduce) with its states as a list, each state's
    actions one flat list `[token, action, token, action, ...]` in lark's order: a shift as the
    state it goes to, a reduction by memo rule r as -1 - r. A fifth of the JSON, read without
    lark's per-action deserialization."""
    tokens, states = table["tokens"], table["states"]
    assert sorted(tokens) == list(range(len(tokens))) and sorted(states) == list(range(len(states)))
    rows = []
    for state in range(len(states)):
        row = []
        for token, (action, argument) in states[state].items():
            row += [token, argument if action == 0 else -1 - argument["@"]]
        rows.append(row)
    return {"tokens": [tokens[number] for number in range(len(tokens))], "states": rows,
            "start_states": table["start_states"], "end_states": table["end_states"]}


def _parse_table(table: dict, memo: dict) -> IntParseTable:
    """The parse table `_compact_table` wrote, as lark's `IntParseTable.deserialize` gives it."""
    names = table["tokens"]
    reductions: dict[int, tuple] = {}
    states = {}
    for state, row in enumerate(table["states"]):
        actions = {}
        for at in range(0, len(row), 2):
            argument = row[at + 1]
            if argument >= 0:
                actions[names[row[at]]] = (Shift, argument)
            else:
                reduction = reductions.get(argument)
                if reduction is None:
                    reduction = reductions[argument] = (Reduce, memo[-1 - argument])
                actions[names[row[at]]] = reduction
        states[state] = actions
    return IntParseTable(states, table["start_states"], table["end_states"])


def _compact_memo(memo: dict) -> list:
    """lark's memoized rules and terminals (`memo_serialize`: per number a mapping of fields with
    their types named) as one list, a rule or terminal each, in order of their numbers:

        ["rule", origin, [[name, is a terminal, filtered out], ...], order, alias,
         [keep_all_tokens, expand1, priority, template_source, [empty index, ...]]]
        ["terminal", name, "str" | "re", value, [flag, ...], raw, [min, max] width (re) | None, priority]

    A seventh of the JSON, made back into lark's objects without its per-field deserialization."""
    assert sorted(memo) == list(range(len(memo)))
    rows = []
    for number in range(len(memo)):
        item = memo[number]
        if item["__type__"] == "Rule":
            options = item["options"]
            rows.append(["rule", item["origin"]["name"],
                         [[symbol["name"], symbol["__type__"] == "Terminal", symbol.get("filter_out", False)]
                          for symbol in item["expansion"]],
                         item["order"], item["alias"],
                         [options["keep_all_tokens"], options["expand1"], options["priority"],
                          options["template_source"], list(options["empty_indices"])]])
        else:
            assert item["__type__"] == "TerminalDef"
            pattern = item["pattern"]
            rows.append(["terminal", item["name"], "re" if pattern["__type__"] == "PatternRE" else "str",
                         pattern["value"], pattern["flags"], pattern["raw"], pattern.get("_width"), item["priority"]])
    return rows


def _memo_objects(rows: list) -> dict:
    """The rules and terminals `_compact_memo` wrote, by number, as lark's deserialization makes them
    (the same attributes: a pattern's flags and width as the lists it reads back)."""
    from lark.grammar import NonTerminal, Rule, RuleOptions, Terminal
    from lark.lexer import PatternRE, PatternStr, TerminalDef

    objects = {}
    for number, row in enumerate(rows):
        if row[0] == "rule":
            _, origin, expansion, order, alias, options = row
            keep_all_tokens, expand1, priority, template_source, empty_indices = options
            objects[number] = Rule(NonTerminal(origin),
                                   [Terminal(name, filtered) if terminal else NonTerminal(name)
                                    for name, terminal, filtered in expansion],
                                   order, alias,
                                   RuleOptions(keep_all_tokens, expand1, priority, template_source,
                                               tuple(empty_indices)))
        else:
            _, name, kind, value, flags, raw, width, priority = row
            pattern = (PatternRE if kind == "re" else PatternStr)(value, flags, raw)
            pattern.flags = flags  # (as lark reads a loaded pattern's back: its list)
            if kind == "re":
                pattern._width = width
            objects[number] = TerminalDef(name, pattern, priority)
    return objects


def _lark_memo(rows: list) -> dict:
    """The memo `_compact_memo` wrote, as lark's `memo_serialize` gave it."""
    memo = {}
    for number, row in enumerate(rows):
        if row[0] == "rule":
            _, origin, expansion, order, alias, options = row
            keep_all_tokens, expand1, priority, template_source, empty_indices = options
            memo[number] = {
                "origin": {"name": origin, "__type__": "NonTerminal"},
                "expansion": [{"name": name, "filter_out": filtered, "__type__": "Terminal"} if terminal
                              else {"name": name, "__type__": "NonTerminal"}
                              for name, terminal, filtered in expansion],
                "order": order, "alias": alias,
                "options": {"keep_all_tokens": keep_all_tokens, "expand1": expand1, "priority": priority,
                            "template_source": template_source, "empty_indices": tuple(empty_indices),
                            "__type__": "RuleOptions"},
                "__type__": "Rule"}
        else:
            _, name, kind, value, flags, raw, width, priority = row
            pattern = {"value": value, "flags": flags, "raw": raw}
            if kind == "re":
                pattern["_width"] = width
            pattern["__type__"] = "PatternRE" if kind == "re" else "PatternStr"
            memo[number] = {"name": name, "pattern": pattern, "priority": priority, "__type__": "TerminalDef"}
    return memo


def lark_data(tables: dict) -> dict:
    """The read tables' parser as lark's own `memo_serialize` wrote it ({"data", "memo"}, the parse
    table as `IntParseTable.serialize` gives it): what lark loads without our plugins."""
    data, memo = tables["parser"]["data"], tables["parser"]["memo"]
    table = data["parser"]["parser"]
    states = {}
    for state, row in enumerate(table["states"]):
        states[state] = {row[at]: (0, row[at + 1]) if row[at + 1] >= 0 else (1, {"@": -1 - row[at + 1]})
                         for at in range(0, len(row), 2)}
    lark_table = {"tokens": dict(enumerate(table["tokens"])), "states": states,
                  "start_states": table["start_states"], "end_states": table["end_states"]}
    return {"data": {**data, "parser": {**data["parser"], "parser": lark_table}}, "memo": _lark_memo(memo)}


def _number_states_canonically(parser: Lark) -> None:
    """Number the LALR states of a built parser in one order whatever the run (lark's numbers
    follow set iteration, so string hashing): breadth first from the start states, each
    state's actions by terminal name. The same automaton, so the tables one grammar gives are
    the same file every time."""
    from lark.parsers.lalr_analysis import IntParseTable, Shift

    frontend = parser.parser.parser  # the LALR parser
    table = frontend._parse_table
    numbers: dict[int, int] = {}
    queue = [table.start_states[name] for name in sorted(table.start_states)]
    queue += [table.end_states[name] for name in sorted(table.end_states)]
    for state in queue:  # (grows as it goes)
        if state not in numbers:
            numbers[state] = len(numbers)
            queue += [arg for name, (action, arg) in sorted(table.states[state].items()) if action is Shift]
    for state in sorted(table.states):  # (any state no shift reaches, last)
        numbers.setdefault(state, len(numbers))
    states = {numbers[state]: {name: (action, numbers[arg] if action is Shift else arg)
                               for name, (action, arg) in sorted(table.states[state].items())}
              for state in sorted(numbers, key=numbers.__getitem__)}
    renumbered = IntParseTable(states, {name: numbers[state] for name, state in table.start_states.items()},
                               {name: numbers[state] for name, state in table.end_states.items()})
    frontend._parse_table = frontend.parser.parse_table = renumbered


def _tagged(value):
    """lark's data in JSON: a tuple as {"t": [...]}, a mapping as {"m": [[key, value], ...]}
    (its keys may be ints); lists and scalars as they are. Every JSON object of the parser's
    data is one of these two, so a reader tells them apart by their one key (`_untag`)."""
    if isinstance(value, tuple):
        return {"t": [_tagged(item) for item in value]}
    if isinstance(value, list):
        return [_tagged(item) for item in value]
    if isinstance(value, dict):
        return {"m": [[key, _tagged(item)] for key, item in value.items()]}
    if value is None or type(value) in (str, int, bool, float):
        return value
    raise TypeError(f"cannot store {type(value).__name__} in the parser tables")


def _untag(pairs: list):
    """`json.loads`'s object_pairs_hook for the tables: a tagged tuple or mapping back as it was
    (any other object, the header, as a dict)."""
    if len(pairs) == 1:
        tag, content = pairs[0]
        if tag == "t":
            return tuple(content)
        if tag == "m":
            return dict(content)
    return dict(pairs)
