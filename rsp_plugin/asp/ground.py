"""The rules at time point t, ground over the windows' content: a normal logic program.

Ticker's one-shot encoding (Alg. 1), instantiated here rather than by a grounder:
an atom a(x) at time point u is the time-pinned atom `at(a, x, u)`; a data atom is a
fact; an extended atom over derived predicates becomes an atom of its own, defined
by the time-pinned atoms of its window:

    [W] DIAMOND a(x)     w <- at(a, x, u)                 one rule per point u of W
    [W] BOX a(x)         w <- at(a, x, u1), ..., at(a, x, uk)   every point of W
    [W] @U a(x), a(x)    at(a, x, U), at(a, x, t)         (U in W)

and a rule `h(x) :- body` at t is `d(h, x, u) <- body` with `at(h, x, u) <- d(h, x, u)`,
u = t or the head's `@U`: `d` says "derived by a rule at this evaluation", which is what
the output shows. Extended atoms over data alone (tuple windows among them) are decided
here, true or false, and leave the program.

Instantiation is relevance-driven: first the atoms that may possibly be derived (every
rule applied over data and possible atoms, `not` assumed satisfiable) up to a fixpoint,
then every rule instance over them. It is bounded as the engine's joins are: the time
point's time-out (`--solver-timeout`, grounding and solving together: `SolverTimeout`),
checked every 1024 candidate bindings, and `limits.derivation_bound` bindings of a rule
(a product of atoms stops with a located `LimitError`, not when memory ends). Comparisons and arithmetic are those of the engine
(`lars/builtins.py`), so numbers, literals and IRIs mean the same on both paths.
"""

from __future__ import annotations

import time
from collections import deque
from dataclasses import dataclass, field
from typing import Iterable, Iterator

from ..core.time import NEVER_EXPIRES
from ..lars.builtins import calculate, compare
from ..lars.limits import (
    DEFAULT_MAX_DERIVATIONS,
    LimitError,
    NumericOverflow,
    derivation_bound,
    too_large_a_join,
    too_many_derivations,
)
from ..lars.program import (
    AT,
    BOX,
    COUNT,
    DIAMOND,
    PLAIN,
    Arithmetic,
    ExtendedAtom,
    Program,
    Rule,
    Var,
)

Fact = tuple[int, tuple[int, ...]]
Key = tuple[int, int]  # (predicate, arity): p/1 and p/2 are two predicates



class _Truth:
    """A literal decided at grounding time (not an atom: atoms are ints, and True == 1)."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        self.name = name

    def __repr__(self) -> str:
        return self.name


TRUE = _Truth("TRUE")
FALSE = _Truth("FALSE")


@dataclass
class GroundProgram:
    """A normal program over atoms 1..n: `rules` are (head, positive body, negative body)."""

    time_point: int
    atoms: int = 0
    rules: list[tuple[int, tuple[int, ...], tuple[int, ...]]] = field(default_factory=list)
    #: atom -> the fact it places at t when a rule derives it (the output)
    shown: dict[int, Fact] = field(default_factory=dict)
    #: atom -> what it stands for, for messages and tests: ("at" | "d" | "w", ...)
    meaning: dict[int, tuple] = field(default_factory=dict)


class History:
    """The data the windows can still see: atoms per time point, and their arrival order
    for tuple windows (each atom once per time point)."""

    def __init__(self, program: Program, start: int | None = None):
        self.start = start
        self.t0: int | None = None
        self.now: int | None = None
        self.points: dict[int, dict[Key, set[tuple]]] = {}
        body = [b for rule in program.rules for b in rule.body if isinstance(b, ExtendedAtom)]
        ranges = [0]
        for literal in body:
            if literal.window is not None and literal.window.kind != COUNT:
                ranges.append(literal.window.size)
            elif literal.modality == AT and literal.window is None:
                ranges.append(NEVER_EXPIRES)
        #: how many time points back a window can look
        self.reach = max(ranges)
        counts = [b.window.size for b in body if b.window is not None and b.window.kind == COUNT]
        self.log: deque[tuple[int, Fact]] | None = deque(maxlen=max(counts)) if counts else None

    def add(self, t: int, facts: Iterable[Fact]) -> None:
        """The data of time point t (called for every time point, in order)."""
        if self.t0 is None:
            self.t0 = self.start if self.start is not None else t
        self.now = t
        here = self.points.setdefault(t, {})
        for predicate, args in facts:
            rows = here.setdefault((predicate, len(args)), set())
            if args not in rows:
                rows.add(args)
                if self.log is not None:
                    self.log.append((t, (predicate, args)))
        if self.reach < NEVER_EXPIRES:
            for point in [u for u in self.points if u < t - self.reach]:
                del self.points[point]

    def count_window(self, size: int, t: int) -> tuple[int, dict[int, dict[Key, set[tuple]]]]:
        """`[COUNT size]` at t: its first time point and what it shows at each point."""
        kept = list(self.log)[-size:] if self.log is not None else []
        first = kept[0][0] if len(kept) >= size else self.t0
        shown: dict[int, dict[Key, set[tuple]]] = {}
        for u, (predicate, args) in kept:
            shown.setdefault(u, {}).setdefault((predicate, len(args)), set()).add(args)
        return first, shown


class Grounder:
    """Grounds a program at each time point over a `History` (one per program)."""

    def __init__(self, program: Program, *, max_derivations: int = DEFAULT_MAX_DERIVATIONS):
        self.program = program
        self.terms = program.terms
        self.max_derivations = max_derivations
        #: (predicate, arity) some rule derives: atoms of these may be guessed; the rest are data
        self.derived: set[Key] = {(r.head.predicate, len(r.head.args)) for r in program.rules}
        self.orders = {id(rule): _order(rule, self.terms) for rule in program.rules}

    def __getstate__(self) -> dict:
        """Compiled join orders hold functions: made again when loaded (an engine pickles whole)."""
        state = self.__dict__.copy()
        del state["orders"]
        return state

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state)
        self.orders = {id(rule): _order(rule, self.terms) for rule in self.program.rules}

    # the possible atoms -------------------------------------------------------------

    def ground(self, history: History, t: int, *, deadline: float | None = None,
               timeout: float | None = None) -> GroundProgram:
        """The program at t; `SolverTimeout` past `deadline` (a `time.monotonic()` value; `timeout`:
        the seconds it stands for, for the message)."""
        data = history.points
        possible: dict[int, dict[Key, set[tuple]]] = {}
        clock = _Clock(deadline, timeout)
        self._fixpoint(history, data, possible, t, clock)
        return self._instantiate(history, data, possible, t, clock)

    def _fixpoint(self, history, data, possible, t, clock: "_Clock") -> None:
        """Every atom a rule might derive at t, `not` assumed satisfiable: the relevant atoms."""
        rules = self.program.rules
        readers: dict[Key, list[Rule]] = {}
        for rule in rules:
            for literal in rule.positive:
                readers.setdefault((literal.atom.predicate, len(literal.atom.args)), []).append(rule)
        pending = list(rules)
        found = 0
        most = derivation_bound(self.max_derivations)
        while pending:
            changed: set[Key] = set()
            for rule in pending:
                view = _Union(data, possible)
                heads = []
                for binding in self._bindings(rule, view, history, t, clock):
                    point = self._head_point(rule, binding, history.t0, t)
                    if point is not None:
                        heads.append((point, tuple(_value(a, binding, self.terms) for a in rule.head.args)))
                        if len(heads) > most:
                            raise too_large_a_join(rule, self.max_derivations, t)
                for point, args in heads:
                    key = (rule.head.predicate, len(args))
                    rows = possible.setdefault(point, {}).setdefault(key, set())
                    if args not in rows and args not in data.get(point, {}).get(key, ()):
                        rows.add(args)
                        changed.add(key)
                        found += 1
                        if found > self.max_derivations:
                            raise too_many_derivations(rule, self.max_derivations, t)
            pending = list({id(r): r for key in changed for r in readers.get(key, ())}.values())

    # rule instances ---------------------------------------------------------------------

    def _instantiate(self, history, data, possible, t, clock: "_Clock") -> GroundProgram:
        ground = GroundProgram(t)
        ids: dict[tuple, int] = {}
        view = _Union(data, possible)

        def atom(key: tuple) -> int:
            found = ids.get(key)
            if found is None:
                ground.atoms += 1
                found = ids[key] = ground.atoms
                ground.meaning[found] = key
            return found

        def at(predicate: int, args: tuple, u: int):
            key = (predicate, len(args))
            if args in data.get(u, {}).get(key, ()):
                return TRUE
            if args in possible.get(u, {}).get(key, ()):
                return atom(("at", predicate, args, u))
            return FALSE

        defined: set[int] = set()

        def extended(literal: ExtendedAtom, binding: dict):
            """The literal at t under `binding`: TRUE, FALSE or an atom."""
            args = tuple(_value(a, binding, self.terms) for a in literal.atom.args)
            predicate = literal.atom.predicate
            points, shown = _window(literal, history, t)
            if (predicate, len(args)) not in self.derived or shown is not None:
                decided = _decide(literal, args, binding, points, shown if shown is not None else data, t, self.terms)
                return TRUE if decided else FALSE
            if literal.modality == PLAIN:
                return at(predicate, args, t)
            if literal.modality == AT:
                u = self.terms.number(_value(literal.time, binding, self.terms))
                return at(predicate, args, u) if type(u) is int and u in points else FALSE
            members = [at(predicate, args, u) for u in points]
            # DIAMOND is the disjunction of its members, BOX their conjunction: duals, one code
            diamond = literal.modality == DIAMOND
            absorbing, neutral = (TRUE, FALSE) if diamond else (FALSE, TRUE)
            if any(m is absorbing for m in members):
                return absorbing
            members = sorted({m for m in members if m is not neutral})
            if not members:
                return neutral
            if len(members) == 1:
                return members[0]
            w = atom(("w", literal.view_key, args))
            if w not in defined:
                defined.add(w)
                if diamond:  # w :- m, for each member
                    ground.rules.extend((w, (m,), ()) for m in members)
                else:        # w :- all members
                    ground.rules.append((w, tuple(members), ()))
            return w

        for rule in self.program.rules:
            most = len(ground.rules) + derivation_bound(self.max_derivations)
            for binding in self._bindings(rule, view, history, t, clock):
                point = self._head_point(rule, binding, history.t0, t)
                if point is None:
                    continue
                if len(ground.rules) > most:
                    raise too_large_a_join(rule, self.max_derivations, t)
                positive, negative = [], []
                for literal in rule.body:
                    if not isinstance(literal, ExtendedAtom):
                        continue
                    value = extended(literal, binding)
                    if literal.negated:
                        if value is TRUE:
                            break
                        if value is not FALSE:
                            negative.append(value)
                    else:
                        if value is FALSE:
                            break
                        if value is not TRUE:
                            positive.append(value)
                else:
                    args = tuple(_value(a, binding, self.terms) for a in rule.head.args)
                    predicate = rule.head.predicate
                    d = atom(("d", predicate, args, point))
                    ground.rules.append((d, tuple(positive), tuple(negative)))
                    if d not in defined:
                        defined.add(d)
                        pinned = at(predicate, args, point)
                        if pinned is not TRUE and pinned is not FALSE:
                            ground.rules.append((pinned, (d,), ()))
                        if point == t:
                            ground.shown[d] = (predicate, args)
        return ground

    # bodies -------------------------------------------------------------------------------

    def _head_point(self, rule: Rule, binding: dict, t0: int, t: int) -> int | None:
        if rule.head_time is None:
            return t
        point = self.terms.number(_value(rule.head_time, binding, self.terms))
        if type(point) is not int or not (t0 <= point <= t):
            return None  # an @U head only places atoms on the timeline so far (DESIGN.md, "Time")
        return point

    def _bindings(self, rule: Rule, view, history: History, t: int, clock: "_Clock") -> Iterator[dict]:
        """Bindings (variable name -> term id) under which the rule's positive atoms and
        comparisons hold over `view` (negated atoms are not checked: the solver decides them)."""
        steps = self.orders[id(rule)]
        terms = self.terms
        last = len(steps)
        tick = clock.tick

        def extend(index: int, binding: dict) -> Iterator[dict]:
            if index == last:
                yield binding
                return
            step = steps[index]
            if type(step) is _Test:
                left, right = step.left(binding), step.right(binding)
                if left is not None and right is not None and compare(step.op, left, right, terms.numbers):
                    yield from extend(index + 1, binding)
                return
            if type(step) is _Bind:
                value = step.value(binding)
                if value is not None:
                    yield from extend(index + 1, {**binding, step.name: value})
                return
            for extended in _matches(step, binding, view, history, t, terms):
                tick()
                yield from extend(index + 1, extended)

        try:
            yield from extend(0, {})
        except NumericOverflow as overflow:
            where = rule.location
            raise LimitError(f"at time point {t}, {overflow} (rule '{rule.text}')",
                             *((where.filename, where.line, where.column) if where else ())) from None


class _Clock:
    """The time-out of one grounding, looked at every 1024 candidate bindings (a clock read costs)."""

    __slots__ = ("deadline", "timeout", "count")

    def __init__(self, deadline: float | None, timeout: float | None):
        self.deadline = deadline
        self.timeout = timeout
        self.count = 0

    def tick(self) -> None:
        self.count += 1
        if not self.count & 1023 and self.deadline is not None and time.monotonic() > self.deadline:
            from .solve import SolverTimeout

            shown = f"{self.timeout:g} s" if self.timeout is not None else "its time-out"
            raise SolverTimeout(f"grounding took longer than {shown}")



class _Union:
    """Data and possible atoms at each time point, read as one stream; indexes made on demand
    (one `_Union` lives while the atoms it reads do not change)."""

    __slots__ = ("data", "possible", "indexes")

    def __init__(self, data, possible):
        self.data = data
        self.possible = possible
        self.indexes: dict[tuple, dict[tuple, list[tuple]]] = {}

    def rows(self, u: int, key: Key) -> Iterator[tuple]:
        yield from self.data.get(u, {}).get(key, ())
        extra = self.possible.get(u)
        if extra:
            yield from extra.get(key, ())

    def lookup(self, u: int, key: Key, positions: tuple[int, ...], values: tuple) -> Iterable[tuple]:
        """The rows at u whose arguments at `positions` are `values`."""
        if not positions:
            return self.rows(u, key)
        found = self.indexes.get((u, key, positions))
        if found is None:
            found = self.indexes[(u, key, positions)] = {}
            for args in self.rows(u, key):
                found.setdefault(tuple(args[p] for p in positions), []).append(args)
        return found.get(values, ())

    def has(self, u: int, key: Key, args: tuple) -> bool:
        return args in self.data.get(u, {}).get(key, ()) or args in self.possible.get(u, {}).get(key, ())


class _Atom:
    """A positive body atom, compiled for a join order: which argument positions are
    known when it is reached (constants, bound variables) and which it binds."""

    __slots__ = ("literal", "key", "known", "known_values", "binds", "checks", "time")

    def __init__(self, literal: ExtendedAtom, bound: set[str]):
        self.literal = literal
        args = literal.atom.args
        self.key = (literal.atom.predicate, len(args))
        self.known = tuple(i for i, a in enumerate(args) if not isinstance(a, Var) or a.name in bound)
        #: per known position: a constant id, or the name of a bound variable
        self.known_values = tuple(args[i].name if isinstance(args[i], Var) else args[i] for i in self.known)
        binds: list[tuple[int, str]] = []
        checks: list[tuple[int, int]] = []  # a variable repeated in the atom: position, first position
        first: dict[str, int] = {}
        for i, a in enumerate(args):
            if isinstance(a, Var) and a.name not in bound:
                if a.name in first:
                    checks.append((i, first[a.name]))
                else:
                    first[a.name] = i
                    binds.append((i, a.name))
        self.binds = tuple(binds)
        self.checks = tuple(checks)
        time = literal.time
        self.time = time.name if isinstance(time, Var) else time

    def values(self, binding: dict) -> tuple:
        return tuple(binding[v] if type(v) is str else v for v in self.known_values)

    def extend(self, binding: dict, args: tuple) -> dict | None:
        for i, j in self.checks:
            if args[i] != args[j]:
                return None
        if not self.binds:
            return binding
        extended = dict(binding)
        for i, name in self.binds:
            extended[name] = args[i]
        return extended


class _Test:
    __slots__ = ("op", "left", "right")

    def __init__(self, op, left, right):
        self.op, self.left, self.right = op, left, right


class _Bind:
    __slots__ = ("name", "value")

    def __init__(self, name, value):
        self.name, self.value = name, value


def _order(rule: Rule, terms) -> list:
    """Positive atoms as written, each comparison as soon as it can be decided or binds."""
    steps: list = []
    bound: set[str] = set()
    pending = list(rule.comparisons)
    for literal in rule.positive:
        steps.append(_Atom(literal, bound))
        bound |= {v.name for v in literal.variables()}
        progress = True
        while progress:
            progress = False
            for comparison in list(pending):
                free = {v.name for v in comparison.variables()} - bound
                if not free:
                    steps.append(_Test(comparison.op, _compile(comparison.left, terms), _compile(comparison.right, terms)))
                elif comparison.op == "=" and len(free) == 1 and any(
                        isinstance(side, Var) and side.name in free for side in (comparison.left, comparison.right)):
                    (name,) = free
                    other = comparison.right if isinstance(comparison.left, Var) and comparison.left.name == name \
                        else comparison.left
                    steps.append(_Bind(name, _compile(other, terms)))
                    bound.add(name)
                else:
                    continue
                pending.remove(comparison)
                progress = True
    for comparison in pending:  # only comparisons without variables are left
        steps.append(_Test(comparison.op, _compile(comparison.left, terms), _compile(comparison.right, terms)))
    return steps


def _compile(expression, terms):
    """An expression as a function of the binding (None: no value)."""
    if isinstance(expression, Var):
        name = expression.name
        return lambda binding: binding[name]
    if isinstance(expression, Arithmetic):
        left, right, op = _compile(expression.left, terms), _compile(expression.right, terms), expression.op

        def arithmetic(binding):
            a, b = left(binding), right(binding)
            return None if a is None or b is None else calculate(op, a, b, terms)

        return arithmetic
    return lambda binding: expression


def _window(literal: ExtendedAtom, history: History, t: int):
    """The time points of the literal's window at t; for a tuple window, also what it shows."""
    window = literal.window
    if window is None:
        if literal.modality == AT:
            return range(history.t0, t + 1), None
        return range(t, t + 1), None
    if window.kind == COUNT:
        first, shown = history.count_window(window.size, t)
        return range(first, t + 1), shown
    return range(max(history.t0, t - window.size), t + 1), None


def _matches(step: _Atom, binding: dict, view, history: History, t: int, terms) -> Iterator[dict]:
    """Extensions of `binding` under which the positive atom holds at t over `view`."""
    literal = step.literal
    points, shown = _window(literal, history, t)
    key = step.key
    if shown is not None:
        view = _Union(shown, {})
    modality = literal.modality
    known, values = step.known, step.values(binding)
    if modality == PLAIN or modality == DIAMOND:
        seen: set[tuple] = set()
        for u in points:
            for args in view.lookup(u, key, known, values):
                if args not in seen:
                    seen.add(args)
                    extended = step.extend(binding, args)
                    if extended is not None:
                        yield extended
    elif modality == BOX:
        for args in list(view.lookup(t, key, known, values)):
            if all(view.has(u, key, args) for u in points):
                extended = step.extend(binding, args)
                if extended is not None:
                    yield extended
    else:  # AT
        time = step.time
        fixed = binding.get(time) if type(time) is str else time
        if fixed is not None:
            u = terms.number(fixed)
            chosen = [u] if type(u) is int and u in points else []
        else:
            chosen = points
        for u in chosen:
            time_id = terms.intern_int(u)
            for args in view.lookup(u, key, known, values):
                extended = step.extend(binding, args)
                if extended is not None:
                    if type(time) is str and time not in extended:
                        extended = {**extended, time: time_id}
                    yield extended


def _decide(literal: ExtendedAtom, args: tuple, binding: dict, points, store, t: int, terms) -> bool:
    """An extended atom over data alone (or a tuple window), ground: does it hold at t?"""
    view = _Union(store, {})
    key = (literal.atom.predicate, len(args))
    if literal.modality == PLAIN:
        return view.has(t, key, args)
    if literal.modality == DIAMOND:
        return any(view.has(u, key, args) for u in points)
    if literal.modality == BOX:
        return all(view.has(u, key, args) for u in points)
    u = terms.number(_value(literal.time, binding, terms))
    return type(u) is int and u in points and view.has(u, key, args)


def _value(expression, binding: dict, terms):
    if isinstance(expression, Var):
        return binding[expression.name]
    if isinstance(expression, Arithmetic):
        left, right = _value(expression.left, binding, terms), _value(expression.right, binding, terms)
        if left is None or right is None:
            return None
        return calculate(expression.op, left, right, terms)
    return expression
