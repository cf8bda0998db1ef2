"""Terms <-> integer ids: the one place where written terms meet the engine's ints.

Every constant the engine sees (names, IRIs, literals, numbers, predicate names)
is interned once in a `Dictionary` and travels as an int. A term's key is its
written form, which is also how it is printed:

    x1                      a name (lower-case constant of the rule language)
    <http://ex.org/a>       an IRI
    "79"^^<http://www.w3.org/2001/XMLSchema#double>, "hi"@en, "hi"
                            a literal, in N-Triples form
    _:b0                    a blank node
    42, -3, 1.5, 2.0E3      a number of the rule language

Numbers and numeric literals also carry a value, so that comparisons and
arithmetic work on both (`?v > 30` holds for "31"^^xsd:double).

>>> terms = Dictionary()
>>> five = terms.intern("5")
>>> terms.number(five), terms.key(five)
(5, '5')
>>> terms.number(terms.intern('"2.5"^^<http://www.w3.org/2001/XMLSchema#decimal>'))
Decimal('2.5')
>>> terms.intern_number(5) == five
True
"""

from __future__ import annotations

import re
import sys
from collections import deque
from decimal import Decimal, InvalidOperation
from itertools import compress, filterfalse, takewhile
from operator import eq

from .regexes import LazyPattern
from .xsd import INTEGER_TYPES

XSD = "http://www.w3.org/2001/XMLSchema#"
RDF = "http://www.w3.org/1999/02/22-rdf-syntax-ns#"
RDF_TYPE = f"<{RDF}type>"
XSD_STRING = f"<{XSD}string>"

#: The relation that holds RDF triples: `triple(s, p, o)`.
TRIPLE = "triple"

#: the most digits Python reads as an int (its int-string limit, the default where it has none)
_INT_DIGITS = getattr(sys, "get_int_max_str_digits", lambda: 4300)() or 4300
_NUMBER = LazyPattern(r"[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?\Z")
_TYPED_LITERAL = re.compile(r'"(.*)"\^\^<([^>]*)>\Z', re.S)


#: the first characters of a key that may be a number (a typed literal, or a number of the rule language)
#: the first characters of a key that may be a number (the others are never parsed for a value)
NUMERIC_START = frozenset('"+-.0123456789')


def number_of_key(key: str):
    """The numeric value of a written term, or None if it is not a number."""
    first = key[0]
    if first == '"':
        typed = _TYPED_LITERAL.match(key)
        if typed is None:
            return None
        lexical, datatype = typed.groups()
        try:
            if datatype in INTEGER_TYPES:
                return int(lexical)
            if datatype == f"{XSD}decimal":
                return Decimal(lexical)
            if datatype in (f"{XSD}double", f"{XSD}float"):
                return float(lexical)
        except (ValueError, InvalidOperation):
            return None
        return None
    if first.isdigit() or first in "+-.":
        if not _NUMBER.match(key):
            return None
        if "." not in key and "e" not in key and "E" not in key:
            if len(key) > _INT_DIGITS and len(key.lstrip("+-")) > _INT_DIGITS:
                return None  # (longer than Python reads as an int: no value, as for such a typed literal)
            return int(key)
        if "e" in key or "E" in key:
            return float(key)
        return Decimal(key)
    return None


def key_of_number(value) -> str:
    """The written form of a computed number."""
    if isinstance(value, float):
        return repr(value)
    return str(int(value) if isinstance(value, bool) else value)


class BadText(ValueError):
    """An escape that names no character: a lone surrogate (U+D800..U+DFFF) or a code point past
    U+10FFFF. Accepted, it would crash every writer (no encoding holds it); a reader sets its line
    aside, a parser of programs and queries says where it is."""


#: `\uD83D\uDE00` (a high then a low surrogate, as Java and JSON write a character past U+FFFF)
#: is one character; either half alone is none
_ESCAPE = LazyPattern(r"\\(u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}|U[0-9A-Fa-f]{8}|.)",
                     re.S)
_SIMPLE_ESCAPES = {"t": "\t", "b": "\b", "n": "\n", "r": "\r", "f": "\f", '"': '"', "'": "'", "\\": "\\"}
_SURROGATE = LazyPattern(r"[\ud800-\udfff]")
_LONE = r"[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]"
_LONE_SURROGATE = LazyPattern(_LONE)
#: the escapes a text's scan looks at (`bad_escapes`): an escaped backslash (so that `\\uD800` is
#: a backslash and "uD800"), a `\u` escape or surrogate pair, a `\U` escape; and a lone surrogate held
#: as such (text that came from somewhere other than UTF-8 bytes: JSON, a Python caller)
_SCANNED = LazyPattern(r"\\(\\|u[dD][89abAB][0-9A-Fa-f]{2}\\u[dD][c-fC-F][0-9A-Fa-f]{2}|u[0-9A-Fa-f]{4}"
                      r"|U[0-9A-Fa-f]{8})|" + _LONE)


def _character(code: str) -> str:
    """The character of an escape's `u`/`U` and hex digits (a surrogate pair: both escapes);
    `BadText` if it names none."""
    if len(code) == 11:  # uD83D\uDE00
        high, low = int(code[1:5], 16), int(code[7:], 16)
        return chr(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
    value = int(code[1:], 16)
    if value > 0x10FFFF:
        raise BadText(f"\\{code} is not a character (past U+10FFFF)")
    if 0xD800 <= value <= 0xDFFF:
        raise BadText(f"\\{code} is not a character (half of a surrogate pair, alone)")
    return chr(value)


def _unescape(match: re.Match) -> str:
    code = match.group(1)
    if code[0] in "uU" and len(code) > 1:
        return _character(code)
    return _SIMPLE_ESCAPES.get(code, code)


def unescape(lexical: str) -> str:
    """A lexical form's escapes (`\\n`, `\\"`, `\\u00E9`, `\\U0001F600`) read; `BadText` for an
    escape that names no character.

    >>> unescape(r"caf\\u00E9 \\uD83D\\uDE00"), unescape(r"a\\\\uD800")
    ('café 😀', 'a\\\\uD800')
    """
    return _ESCAPE.sub(_unescape, lexical) if "\\" in lexical else lexical


def bad_escapes(text: str):
    """(offset, reason) of each place in `text` that names no character: a `\\u` / `\\U` escape
    (`unescape`'s rule) or a surrogate held as such. Cheap when there is none: a text with no
    backslash and only ASCII is not scanned.

    >>> list(bad_escapes(r'<a> <p> "\\uD800", "\\\\uD800", "\\uD83D\\uDE00", "\\U00110000" .'))
    [(9, '\\\\uD800 is not a character (half of a surrogate pair, alone)'), (46, '\\\\U00110000 is not a character (past U+10FFFF)')]
    """
    if "\\" not in text and text.isascii():
        return
    for found in _SCANNED.finditer(text):
        code = found.group(1)
        if code is None:
            yield found.start(), f"U+{ord(found.group()):04X} is not a character (half of a surrogate pair, alone)"
        elif code != "\\":
            try:
                _character(code)
            except BadText as problem:
                yield found.start(), str(problem)


def surrogates(text: str):
    """(offset, reason) of each surrogate code point `text` holds as such: a program's text has none
    (text read from UTF-8 cannot; a JSON string or a Python caller may hand one in)."""
    if text.isascii():
        return
    for found in _SURROGATE.finditer(text):
        yield found.start(), f"U+{ord(found.group()):04X} is not a character (a surrogate code point)"


def paired_surrogates(text: str) -> str:
    """`text` with each surrogate pair held as two code points (rdflib reads `\\uD83D\\uDE00` so)
    made the one character it is; `BadText` if a surrogate stands alone. ASCII costs nothing."""
    if text.isascii() or _SURROGATE.search(text) is None:
        return text
    try:
        return text.encode("utf-16-le", "surrogatepass").decode("utf-16-le")
    except UnicodeDecodeError:
        lone = _LONE_SURROGATE.search(text).group()
        raise BadText(f"U+{ord(lone):04X} is not a character (half of a surrogate pair, alone)") from None


def quotable(text: str) -> str:
    """`text` as a message may quote it: a lone surrogate (rdflib's errors quote what they read) is
    written as its escape, so that the message itself can be written out.

    >>> quotable("<http://ex/\\ud800>")
    '<http://ex/\\\\ud800>'
    """
    if text.isascii():
        return text
    return _LONE_SURROGATE.sub(lambda found: f"\\u{ord(found.group()):04x}", text)


def canonical_literal(key: str) -> str:
    """One written form per literal: "a"^^xsd:string is "a" (RDF 1.1), and only
    `\\`, `"`, newline and carriage return are escaped (\\u00E9 is é), as rdflib writes it.
    `BadText` for an escape that names no character (`unescape`)."""
    suffix = "^^" + XSD_STRING
    if key.endswith('"' + suffix):
        key = key[: -len(suffix)]
    if "\\" not in key:
        return key
    end = key.rindex('"')
    lexical = unescape(key[1:end])
    lexical = lexical.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n").replace("\r", "\\r")
    return f'"{lexical}"{key[end + 1:]}'


class _Numbers(dict):
    """id -> numeric value; a term that is not a number (or is forgotten) has None."""

    __slots__ = ()

    def __missing__(self, term: int):
        return None


class Dictionary:
    """A two-way map between written terms and integer ids, which forgets.

    Ids are handed out in increasing order and never reused: an id that left the
    engine (a result, a checkpoint) names the same term for as long as anybody
    can still ask, and a stale id held somewhere names no other term. `keys[id]`
    and `numbers[id]` are subscripts by id (mappings, not lists: after `retain`
    the ids are not dense); `next_id` is the id the next new term gets.

    Forgetting (`retain`): the owner of the engine collects the ids its state can
    still reach (windows, materializations, rule engines, pending input, R2S
    memory) and the dictionary drops every other id that is not pinned (the
    constants of programs, queries and background graphs). A term seen again
    after it was forgotten gets a new id.

    >>> terms = Dictionary()
    >>> a, b = terms.intern("<a>"), terms.intern("<b>")
    >>> terms.pin([a]); terms.retain([]), terms.find("<b>"), terms.key(a)
    (1, None, '<a>')
    >>> terms.intern("<b>") != b, len(terms), terms.next_id
    (True, 2, 3)
    """

    __slots__ = ("_ids", "_keys", "_numbers", "_int_ids", "_next", "_pinned", "_touched", "generation",
                 "forgotten", "made")

    def __init__(self) -> None:
        self._ids: dict[str, int] = {}
        self._keys: dict[int, str] = {}
        self._numbers: _Numbers = _Numbers()
        self._int_ids: dict[int, int] = {}
        self._next = 0
        self._pinned: set[int] = set()
        #: ids a reader looked up since the last `retain` (it may hold them until it pushes them)
        self._touched: set[int] = set()
        #: how many times `retain` forgot something (caches of ids compare it)
        self.generation = 0
        #: how many terms were forgotten so far
        self.forgotten = 0
        #: how many terms were ever made (ids handed out to a term: `next_id` may skip some)
        self.made = 0

    def __getstate__(self):
        """Plain data for a checkpoint (`rsp_plugin.runtime.state`): the ids and keys, the numbers, what is pinned."""
        return {"keys": dict(self._keys), "numbers": dict(self._numbers), "int_ids": dict(self._int_ids),
                "next": self._next, "pinned": set(self._pinned), "generation": self.generation,
                "forgotten": self.forgotten, "made": self.made}

    def __setstate__(self, state) -> None:
        self._keys = dict(sorted(state["keys"].items()))  # (in id order: `retain` reads them so)
        self._ids = {key: term for term, key in self._keys.items()}
        self._numbers = _Numbers(state["numbers"])
        self._int_ids = dict(state["int_ids"])
        self._next = state["next"]
        self._pinned = set(state["pinned"])
        self._touched = set()
        self.generation = state["generation"]
        self.forgotten = state["forgotten"]
        self.made = state.get("made", self._next)

    def __len__(self) -> int:
        """How many terms are known now (not the next id: see `next_id`)."""
        return len(self._keys)

    def __bool__(self) -> bool:
        return bool(self._keys)

    def __repr__(self) -> str:
        return f"<Dictionary terms={len(self._keys)} next_id={self._next} forgotten={self.forgotten}>"

    @property
    def next_id(self) -> int:
        """The id the next new term gets: every id below it was handed out once, or skipped (a
        bulk intern may leave gaps, `intern_distinct`); none is ever handed out twice."""
        return self._next

    def intern(self, key: str) -> int:
        """The id of a written term, creating it on first sight."""
        found = self._ids.get(key)
        if found is not None:
            self._touched.add(found)
            return found
        new = self._next
        self._next = new + 1
        self.made += 1
        self._ids[key] = new
        self._keys[new] = key
        number = number_of_key(key)
        if number is not None:
            self._numbers[new] = number
        return new

    def intern_valued(self, key: str, number) -> int:
        """`intern` of a numeric literal whose value the caller has (an aggregate's result): not parsed
        again. `number` must be what `number_of_key(key)` gives."""
        found = self._ids.get(key)
        if found is not None:
            self._touched.add(found)
            return found
        new = self._next
        self._next = new + 1
        self.made += 1
        self._ids[key] = new
        self._keys[new] = key
        self._numbers[new] = number
        return new

    def intern_keys(self, keys, *, names: bool = False) -> list[int]:
        """The ids of many written terms, the new ones created in bulk (in order of first appearance).

        Each distinct key is looked up once (a column of a stream block repeats its terms), the new
        ones added at once; a column of keys all new and distinct (a stream of new terms) gets its
        ids as a range, with no table of its own. `names`: the caller knows every key is a name of
        the rule language (`[a-z]...`), so none is a number."""
        keys = keys if isinstance(keys, list) else list(keys)
        if keys and self._ids.get(keys[0]) is None and self._ids.get(keys[-1]) is None:
            ids = self._fresh_column(keys, names)  # new at both ends: likely all new and distinct
            if ids is not None:
                return ids
        distinct = dict.fromkeys(keys)
        found = list(map(self._ids.get, distinct))
        if None not in found:
            self._touched.update(found)  # looked up: a forgetting keeps them this time
            if len(found) == len(keys):
                return found
            table = dict(zip(distinct, found))
            return list(map(table.__getitem__, keys))
        if found.count(None) == len(found):
            fresh = list(distinct)
        else:
            fresh = [key for key, term in zip(distinct, found) if term is None]
            self._touched.update([term for term in found if term is not None])
        start = self._next
        # a key that can be a number starts with a digit, a sign, '.' or '"', all before "a":
        # a column of names (the usual atoms' constants) skips the numbers' test
        self._add_fresh(fresh, [] if names or min(fresh) >= "a" else None)
        if len(fresh) == len(keys):
            return list(range(start, start + len(keys)))
        table = dict(zip(distinct, found))
        table.update(zip(fresh, range(start, start + len(fresh))))
        return list(map(table.__getitem__, keys))

    def _fresh_column(self, keys: list[str], names: bool = False) -> list[int] | None:
        """The ids of keys all new and distinct, made in one probe per key (`dict.setdefault`
        offers each the id it gets if new); None, and the dictionary as it was, if some key was
        known or came twice."""
        ids = self._ids
        before = len(ids)
        start = self._next
        offers = range(start, start + len(keys))
        found = list(map(ids.setdefault, keys, offers))
        if len(ids) - before != len(keys):  # undo: the keys that took their offer go again
            deque(map(ids.__delitem__, compress(keys, map(eq, found, offers))), 0)
            return None
        self._next = start + len(keys)
        self.made += len(keys)
        self._keys.update(zip(found, keys))  # (the ids `found` holds: one int object per id, not two)
        if not names and min(keys) < "a":  # (see intern_keys: a column of names has no numbers)
            self._note_numbers(zip(offers, keys))
        return found

    def intern_distinct(self, keys: list[str], numeric=None):
        """The ids (an int64 numpy array) of distinct written terms, the new ones created in bulk;
        and how many were new. `numeric`: a boolean numpy array, False where a key cannot be a
        number (only the others are parsed for a value).

        One probe per key (`dict.setdefault` offers each key the id it would get if new): a
        known key keeps its id, a new one takes its offer. The offers of known keys before the
        last new one are never handed out (ids are increasing, not dense: see `next_id`)."""
        import numpy as np

        count = len(keys)
        if not count:
            return np.empty(0, dtype=np.int64), 0
        start = self._next
        offers = range(start, start + count)
        found = np.fromiter(map(self._ids.setdefault, keys, offers), dtype=np.int64, count=count)
        fresh = found >= start
        new = count if bool(fresh.all()) else int(np.count_nonzero(fresh))
        if new < count:
            self._touched.update(found[~fresh].tolist())
        if not new:
            return found, 0
        if new == count:
            chosen, fresh_keys = offers, keys
        else:
            places = np.flatnonzero(fresh)
            chosen = (start + places).tolist()
            fresh_keys = [keys[k] for k in places.tolist()]
        self._keys.update(zip(chosen, fresh_keys))
        self._next = chosen[-1] + 1
        self.made += new
        if numeric is None:
            self._note_numbers(zip(chosen, fresh_keys))
        else:
            flags = numeric if new == count else numeric[places]
            self._note_numbers([(chosen[k], fresh_keys[k]) for k in np.flatnonzero(flags).tolist()], checked=True)
        return found, new

    def _add_fresh(self, fresh: list[str], numeric: list[tuple[int, str]] | None = None) -> None:
        """New terms, ids in order; `numeric`: the (id, key) pairs that may be numbers (else: all)."""
        start = self._next
        self._next = start + len(fresh)
        self.made += len(fresh)
        numbered = range(start, self._next)
        self._ids.update(zip(fresh, numbered))
        self._keys.update(zip(numbered, fresh))
        if numeric is None:
            self._note_numbers(zip(numbered, fresh))
        else:
            self._note_numbers(numeric, checked=True)

    def _note_numbers(self, pairs, *, checked: bool = False) -> None:
        """The numeric values of new terms, from (id, key) pairs; `checked`: the pairs are the
        candidates already (else a key not starting like a number is skipped unparsed)."""
        numbers = self._numbers
        for term, key in pairs:
            if checked or key[:1] in NUMERIC_START:
                number = number_of_key(key)
                if number is not None:
                    numbers[term] = number

    def find(self, key: str) -> int | None:
        """The id of a written term if it is known (interned and not forgotten)."""
        return self._ids.get(key)

    def intern_int(self, value: int) -> int:
        """Fast path for time points and other ints."""
        found = self._int_ids.get(value)
        if found is None:
            found = self._int_ids[value] = self.intern(str(value))
        else:
            self._touched.add(found)
        return found

    def intern_number(self, value) -> int:
        if isinstance(value, int) and not isinstance(value, bool):
            return self.intern_int(value)
        return self.intern(key_of_number(value))

    def key(self, term: int) -> str:
        return self._keys[term]

    def number(self, term: int):
        """The numeric value of a term, or None."""
        return self._numbers[term]

    @property
    def numbers(self) -> dict:
        """id -> numeric value (None for any other id); the engine's hot path subscripts it."""
        return self._numbers

    @property
    def keys(self) -> dict[int, str]:
        """id -> written term (subscript by id; a forgotten id raises KeyError)."""
        return self._keys

    def __contains__(self, term: int) -> bool:
        return term in self._keys

    def ids(self):
        """The ids known now (in the order they were handed out)."""
        return self._keys.keys()

    def resolved(self, terms) -> "ResolvedTerms":
        """The keys of these ids, kept aside: what a result that leaves the engine carries, so that
        it can still be written after the dictionary forgot its terms."""
        ids = set(terms)
        ids.discard(None)
        found = dict(zip(ids, map(self._keys.__getitem__, ids)))
        numbers = self._numbers
        valued = ids & numbers.keys()
        return ResolvedTerms(self, found, _Numbers(zip(valued, map(numbers.__getitem__, valued))))

    # forgetting -----------------------------------------------------------------------

    def pin(self, terms) -> None:
        """Never forget these ids (constants of programs, queries, background graphs)."""
        self._pinned.update(terms)

    def pin_since(self, mark: int) -> None:
        """Pin every id handed out since `next_id` was `mark`."""
        self._pinned.update(term for term in range(mark, self._next) if term in self._keys)

    @property
    def pinned(self) -> frozenset:
        return frozenset(self._pinned)

    def retain(self, live, *, keep_since: int | None = None) -> int:
        """Forget every id that is neither in `live` (any iterable of ids, a numpy array too)
        nor pinned (nor handed out at or after `keep_since`); returns how many were forgotten."""
        keys = self._keys
        if not keys:
            return 0
        if hasattr(live, "tolist"):
            live = live.tolist()
        if not isinstance(live, (set, frozenset)):
            live = set(live)
        touched, self._touched = self._touched, set()
        young = self._next if keep_since is None else keep_since
        if young >= self._next:  # no young generation: what stays is what is named
            staying = set(filter(keys.__contains__, live))
            for kept in (self._pinned, touched):
                staying.update(filter(keys.__contains__, kept))
            forgotten = len(keys) - len(staying)
            if not forgotten:
                return 0
            if len(staying) < forgotten:  # most of it goes: copy what stays, at a cost of what stays
                self._keep_only(sorted(staying))
            else:
                self._drop(list(filterfalse(staying.__contains__, keys)))
        else:
            # `keys` holds the ids in the order they were handed out (increasing): the old ones
            # are its first entries, and only they are looked at (the loops run in C)
            old = takewhile(young.__gt__, keys)
            for kept in (live, self._pinned, touched):
                if kept:
                    old = filterfalse(kept.__contains__, old)
            dead = list(old)
            forgotten = len(dead)
            if not forgotten:
                return 0
            if forgotten * 2 > len(keys):  # most of it goes: copy what stays
                self._keep_only(list(filterfalse(set(dead).__contains__, keys)))
            else:
                self._drop(dead)
        keys = self._keys
        numbers = self._numbers
        if numbers:
            doomed = list(filterfalse(keys.__contains__, numbers))
            if len(doomed) * 2 > len(numbers):  # (most goes: copy what stays)
                staying = list(filter(keys.__contains__, numbers))
                self._numbers = _Numbers(zip(staying, map(numbers.__getitem__, staying)))
            else:
                deque(map(numbers.__delitem__, doomed), 0)
        if self._int_ids:
            self._int_ids = {value: term for value, term in self._int_ids.items() if term in keys}
        self.generation += 1
        self.forgotten += forgotten
        return forgotten

    def _keep_only(self, staying: list[int]) -> None:
        """Keep these ids (in id order) and forget the others: new mappings of what stays."""
        written = list(map(self._keys.__getitem__, staying))
        self._keys = dict(zip(staying, written))
        self._ids = dict(zip(written, staying))

    def _drop(self, dead: list[int]) -> None:
        keys = self._keys
        deque(map(self._ids.__delitem__, map(keys.pop, dead)), 0)


class ResolvedTerms:
    """A few ids' keys (and numbers) captured from a `Dictionary`; anything else is the dictionary's.

    >>> terms = Dictionary()
    >>> a = terms.intern("<a>")
    >>> seen = terms.resolved([a]); _ = terms.retain([])
    >>> seen.keys[a], seen.key(a), terms.find("<a>")
    ('<a>', '<a>', None)
    """

    __slots__ = ("dictionary", "keys", "numbers")

    def __init__(self, dictionary: Dictionary, keys: dict, numbers: dict):
        self.dictionary = dictionary
        self.keys = keys
        self.numbers = numbers

    def key(self, term: int) -> str:
        return self.keys[term]

    def number(self, term: int):
        return self.numbers[term]

    def __getattr__(self, name):
        if name in ResolvedTerms.__slots__ or name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.dictionary, name)

    def __getstate__(self):
        return {"dictionary": self.dictionary, "keys": self.keys, "numbers": self.numbers}

    def __setstate__(self, state):
        for name, value in state.items():
            object.__setattr__(self, name, value)


class Forgetting:
    """When an engine's owner should make its dictionary forget: once it handed out as many
    new ids as were live after the last time (twice as many if it keeps nothing young; and at
    least `minimum`), so the walk over the live state costs O(1) per new term, amortized, and
    the dictionary holds at most about three times what the engine can still reach (plus
    `minimum`; about twice when what is reached is mostly recent).

    Generations: an id handed out, or looked up by `intern`, since the last time is kept this
    time whatever the live set says. A reader interns a batch before it pushes it (a line read
    ahead, a block, a micro-batch waiting for another stream): its ids, new or old, survive one
    forgetting unreached. An owner that holds nothing it did not name (`keep_young=False`: it
    interns a batch only once it is done with the one before, as the block replay of
    `rsp-plugin reason` does) lets the new ids go too; what stays is then only what is reached,
    and the dictionary copies what stays when most goes (a stream of new terms: each forgetting
    costs what the engine holds, not what it forgets).

    >>> terms = Dictionary()
    >>> policy = Forgetting(terms, minimum=2)
    >>> _ = [terms.intern(f"<{n}>") for n in range(3)]
    >>> policy.due(), policy.run([0]), len(terms)   # all three are young: kept this time
    (True, 0, 3)
    >>> _ = [terms.intern(f"<{n}>") for n in range(3, 6)]
    >>> policy.due(), policy.run([0]), len(terms), policy.due()
    (True, 2, 4, False)
    """

    __slots__ = ("terms", "minimum", "mark", "live", "runs", "made", "keep_young")

    def __init__(self, terms: Dictionary, minimum: int = 20_000, *, keep_young: bool = True):
        self.terms = terms
        self.minimum = minimum
        #: False: the owner's live set names everything it holds (it interns nothing ahead of
        #: what it pushed), so the ids made since the last time are not kept unreached
        self.keep_young = keep_young
        #: the first id of the young generation, and how many terms were made before it
        self.mark = terms.next_id
        self.made = terms.made
        self.live = len(terms)
        self.runs = 0

    def due(self) -> bool:
        made = getattr(self, "made", None)  # (a state saved before it was counted: ids instead)
        # keeping the young, the dictionary holds up to the live and the young after a run, and
        # as many again before the next: about three times the live at most. Keeping nothing
        # young, a run leaves the live only: it waits for twice as many new ids, within the same
        # bound, and each run (which costs what stays) comes half as often
        due = max(self.minimum, self.live if getattr(self, "keep_young", True) else 2 * self.live)
        if made is None:
            return self.terms.next_id - self.mark >= due
        return self.terms.made - made >= due

    def run(self, live) -> int:
        """Forget what `live` (ids, any iterable or numpy array) does not name, among the ids handed
        out before the last run; how many were forgotten."""
        if hasattr(live, "tolist"):
            live = live.tolist()
        live = live if isinstance(live, (set, frozenset)) else set(live)
        young = getattr(self, "keep_young", True)  # (a state saved before it was an option: kept)
        forgotten = self.terms.retain(live, keep_since=self.mark if young else None)
        self.mark = self.terms.next_id
        self.made = self.terms.made
        self.live = len(live)  # what is reached (the young generation kept unreached does not count)
        self.runs += 1
        return forgotten
