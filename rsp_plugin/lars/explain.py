"""Why a fact holds at time point t: the engine's records, walked down to data and background.

    engine = IncrementalEngine(program, explain=True)
    ...
    engine.explain((q, (x1, y, z)), 38)     # a tree of plain data, or None if it does not hold

A node says how the fact came to be in the stream at its time point:

    {"fact": "q(x1,y,z)", "t": 38, "by": "rule",
     "rule": "q(X,Y,Z) :- [RANGE 3] DIAMOND a(X,Y), b(Y,Z) .", "at": "prog.lars:4:1",
     "derived_at": 36,          # the time point the rule fired (first derivation kept)
     "fired_at": 38,            # the time point the body below is shown at
     "horizon": 39,             # the last time point it is guaranteed to hold
     "bounded_by": 0,           # the body item whose horizon that is
     "body": [
       {"literal": "[RANGE 3] DIAMOND a(x1,y)", "window": [35, 38], "witness": [36],
        "horizon": 39, "because": [{"fact": "a(x1,y)", "t": 36, "by": "data",
                                    "source": {"file": "s.stream", "line": 12}}]},
       {"literal": "b(y,z)", "window": [38, 38], "witness": [38], "horizon": 40, "because": [...]},
       {"literal": "not alarm", "absent": [38, 38]},
       {"literal": "V >= 100", "holds": "105 >= 100"}]}

`by` is "rule", "data" (a stream element; `source` when the caller said where
it was read), "background", "same" (explained above in the tree), or
"forgotten" (older than what the engine keeps, see `provenance.py`).

Why the body is shown at t and not only where it first fired: a fact derived
at time point d with horizon h (the least horizon of its body) holds on
[d, h], and every body atom holds at every point of it (a horizon is a
promise), so at any t in [d, h] the same rule fires on the same ground body.
Windows are shown at t: the DIAMOND's witness, the BOX's run, the @'s time
point, the absence that made `not` true. An `@T` head puts its atom at T
from the time point it fired, whose body is shown. The facts below a node
were all on the stream before the node's own record was made, so a tree
always ends, at data, background, or a fact explained above.
"""

from __future__ import annotations

from ..core.terms import TRIPLE
from ..core.time import NEVER_EXPIRES
from ..io.formats import format_fact
from .builtins import calculate, compare
from .metric import PAST, SINCE
from .program import (
    AT,
    BOX,
    COUNT,
    DIAMOND,
    PLAIN,
    Arithmetic,
    Comparison,
    ExtendedAtom,
    Var,
)
from .provenance import BODY

Fact = tuple[int, tuple[int, ...]]

#: Nodes an explanation may have; past it, facts are shown without their reasons.
MAX_NODES = 5000


class ExplanationUnavailable(RuntimeError):
    """The engine was not asked to keep explanations (`explain=True`)."""


def explain(engine, fact: Fact, t: int) -> dict | None:
    """Why `fact` is on the stream at time point `t`; None if it is not (as far as kept)."""
    if engine.provenance is None:
        raise ExplanationUnavailable("this engine keeps no explanations: make it with explain=True")
    fact = (fact[0], tuple(fact[1]))
    return Explainer(engine).root(fact, t)


class Explainer:
    """One explanation's walk over an engine's records (see the module's text)."""

    def __init__(self, engine):
        self.engine = engine
        self.provenance = engine.provenance
        self.terms = engine.terms
        self.numbers = engine.terms.numbers
        self.t0 = engine._t0
        self.now = engine.now
        self.nodes = 0
        self._seen: dict[tuple, dict] = {}
        self._triple = engine.terms.find(TRIPLE)
        self._derived_predicates = {rule.head.predicate for rule in engine.program.rules}

    # nodes ------------------------------------------------------------------------------------

    def root(self, fact: Fact, t: int) -> dict | None:
        if self.now is None or t > self.now:
            return None
        record = self._record(fact, t, None)
        if record is not None:
            node = self._derived(fact, t, record)
            if t == self.now and not record[4].head_at:
                until = self.engine.holds_until(fact)
                if until is not None and until > record[1]:  # a later derivation promised more
                    node["holds_until"] = _shown(until)
            return node
        since = self.provenance.since(fact)
        if (since is not None and since <= t) or self.provenance.is_data(t, fact):
            return self._node(fact, t, None)
        return None

    def _node(self, fact: Fact, point: int, bound: int | None) -> dict:
        """Why `fact` is on the stream at `point`, from what was there before record `bound`."""
        presence = self._present(fact, point, bound)
        if presence is not None and presence[0] == "record":
            key = (fact, point, id(presence[1]))
            if key in self._seen:  # never an ancestor: records below a node are older than its own
                return {**self._head(fact, point), "by": "same"}
        self.nodes += 1
        if presence is None:
            node = {**self._head(fact, point), "by": "forgotten"}
        elif presence[0] == "data":
            node = {**self._head(fact, point), "by": "data"}
            if presence[1] is not None:
                node["source"] = presence[1]
        elif presence[0] == "background":
            node = {**self._head(fact, point), "by": "background"}
        elif self.nodes > MAX_NODES:
            node = {**self._head(fact, point), "by": "rule", "truncated": True}
        else:
            node = self._derived(fact, point, presence[1])
        return node

    def _head(self, fact: Fact, point: int) -> dict:
        node = {"fact": format_fact(fact, self.terms), "t": point}
        if fact[0] == self._triple and len(fact[1]) == 3:
            keys = self.terms.keys
            node["triple"] = " ".join(keys[term] for term in fact[1]) + " ."
        return node

    def _derived(self, fact: Fact, point: int, record) -> dict:
        start, end, at, batch, plan = record[:5]
        before = (at, batch)  # what was on the stream before this record was made
        body = record[BODY:]
        rule = plan.rule
        self._seen[(fact, point, id(record))] = node = self._head(fact, point)
        node["by"] = "rule"
        node["rule"] = rule.text or str(rule)
        if rule.location is not None:
            node["at"] = str(rule.location)
        node["derived_at"] = at
        fired = at if plan.head_at else point
        node["fired_at"] = fired
        keys = self.terms.keys
        positives = rule.positive
        groundings = body[0::2]
        horizons = body[1::2]
        binding = _bind(positives, groundings, rule, self.terms)
        items = []
        bounded_by = None
        least = NEVER_EXPIRES + 1
        grounding_of = {id(literal): (g, h) for literal, g, h in zip(positives, groundings, horizons)}
        for literal in rule.body:
            if isinstance(literal, Comparison):
                items.append(self._comparison(literal, binding))
                continue
            if literal.negated:
                item = self._absence(literal, binding, fired)
                if rule.head_time is None and at < least:
                    least, bounded_by = at, len(items)
                items.append(item)
                continue
            grounding, horizon = grounding_of[id(literal)]
            item = self._witness(literal, grounding, horizon, fired, before)
            if horizon < least:
                least, bounded_by = horizon, len(items)
            items.append(item)
        node["binding"] = {str(variable): keys[value] for variable, value in binding.items()}
        node["body"] = items
        if plan.head_at:
            node["placed"] = start
            node["horizon"] = start
        else:
            node["horizon"] = _shown(end)
            if bounded_by is not None and end < NEVER_EXPIRES:
                node["bounded_by"] = bounded_by
        return node

    # body items ---------------------------------------------------------------------------------

    def _witness(self, literal: ExtendedAtom, grounding: tuple, horizon: int, t: int, before: tuple) -> dict:
        """What makes the positive body atom true at t: its window and the points that witness it."""
        atom = literal.atom
        arity = len(atom.args)
        fact = (atom.predicate, tuple(grounding[:arity]))
        time = self.numbers[grounding[arity]] if literal.modality == AT else None
        item = {"literal": literal_text(literal, self.terms, fact=fact, time=time)}
        window = literal.window
        kind = getattr(window, "kind", None)
        left = None
        if kind == COUNT:
            low, points = self._count_witness(literal, fact, time, t)
            high = t
        elif kind == PAST:
            low, high, points, left = self._past_witness(literal, fact, t, before, horizon)
            if left is not None:
                item["literal"] = literal_text(literal, self.terms, fact=fact, left=left[0])
        else:
            low, points = self._time_witness(literal, fact, time, t, before, horizon)
            high = t
        item["window"] = [low, high]
        item["witness"] = points
        item["horizon"] = _shown(horizon)
        because = self._because(fact, points, before)
        if left is not None:  # Since: the left operand at every point after the witness
            left_fact, between = left
            item["between"] = between
            because += self._because(left_fact, between, before)
        item["because"] = because
        return item

    def _because(self, fact: Fact, points: list[int], before: tuple) -> list[dict]:
        """Why `fact` is on the stream at each of `points`: one node per record (a BOX's run over a
        derived atom is mostly one), one per point of data."""
        because = []
        used = set()
        for point in sorted(points, reverse=True):
            presence = self._present(fact, point, before)
            if presence is not None and presence[0] == "record":
                if id(presence[1]) in used:
                    continue
                used.add(id(presence[1]))
            because.append(self._node(fact, point, before))
        because.reverse()
        return because

    def _past_witness(self, literal, fact: Fact, t: int, before: tuple, horizon: int):
        """DatalogMTL's windows (`lars/metric.py`) at t: (low, high, witness points, Since's left
        operand (its fact and the points it must hold at) or None).

        Diamondminus[a, b]: some point of [t - b, t - a]; the last known when the rule fired
        (its horizon less b: the end of a run) unless it is past t - a. Boxminus[a, b]: every
        point. q Since[a, b] p: the latest t' of the window with p, q at every point of (t', t).
        (The horizon of a Diamondminus with a > 0 may be another run's, not yet in the window:
        then the witness is searched for.)"""
        window = literal.window
        reach_low = self.t0 if window.high is None else t - window.high
        high = t - window.low
        if literal.modality == BOX:
            return reach_low, high, list(range(reach_low, high + 1)), None
        low = max(self.t0, reach_low)
        if literal.modality == DIAMOND:
            guess = high if horizon >= NEVER_EXPIRES or window.high is None else min(high, horizon - window.high)
            if self._strictly_present(fact, guess, before):  # the run whose end is the horizon, mostly
                return low, high, [guess], None
            for point in range(high, low - 1, -1):  # (merged intervals: another run's end)
                if self._strictly_present(fact, point, before):
                    return low, high, [point], None
            return low, high, [guess], None
        # Since: the left operand's fact, from p's arguments
        left_predicate, projection = window.left
        args = fact[1]
        left_fact = (left_predicate, tuple(args[value] if kind == 0 else value for kind, value in projection))
        for point in range(high, low - 1, -1):
            if not self._strictly_present(fact, point, before):
                continue
            between = list(range(point + 1, t))
            if all(self._strictly_present(left_fact, u, before) for u in between):
                return low, high, [point], (left_fact, between)
        return low, high, [], (left_fact, [])

    def _strictly_present(self, fact: Fact, point: int, before: tuple) -> bool:
        """Is `fact` on the stream at `point` (from what was there before record `before`)?
        Asked where a witness must be searched for: records, background, the data kept (or,
        for a predicate no rule derives, the engine's own runs)."""
        provenance = self.provenance
        since = provenance.since(fact)
        if since is not None and since <= point:
            return True
        if self._record(fact, point, before) is not None:
            return True
        if provenance.keeps_data:
            bucket = provenance.data.get(point)
            if bucket is not None and fact in bucket:
                return True
        if provenance.source(point, fact) is not None:
            return True
        if fact[0] in self._derived_predicates:
            return False
        relations = self.engine.relations
        relation = relations.get((fact[0], len(fact[1]))) or relations.get(fact[0])
        return relation is not None and relation.run_containing(fact[1], point) is not None

    def _time_witness(self, literal, fact: Fact, time, t: int, before: tuple, horizon: int) -> tuple[int, list[int]]:
        """The window at t and its witness points. A DIAMOND's: the last point of the atom's
        presence known when the rule fired (its horizon less the window), or t if that is later:
        the horizon promised the atom on the stream up to there."""
        window = literal.window
        low = t if window is None else max(self.t0, t - window.size)
        if literal.modality == AT:
            low = self.t0 if window is None else low
            return low, [time]
        if literal.modality == PLAIN and window is None:
            return t, [t]
        if literal.modality == BOX:
            return low, list(range(low, t + 1))
        if horizon < NEVER_EXPIRES:  # DIAMOND
            return low, [min(t, horizon - window.size)]
        for point in range(t, low - 1, -1):  # never expiring: background, or derived from it
            presence = self._present(fact, point, before)
            if presence is not None and presence[0] != "data":
                return low, [point]
        return low, [t]

    def _count_witness(self, literal, fact: Fact, time, t: int) -> tuple[int, list[int]]:
        """A tuple window: the last n data atoms up to t (and the points from the oldest's)."""
        size = literal.window.size
        kept: list[tuple[int, Fact]] = []
        for point in sorted((p for p in self.provenance.data if p <= t), reverse=True):
            bucket = list(self.provenance.data[point])
            for arrived in reversed(bucket):
                kept.append((point, arrived))
                if len(kept) == size:
                    break
            if len(kept) == size:
                break
        low = kept[-1][0] if len(kept) >= size else self.t0
        seen = [point for point, arrived in kept if arrived == fact]
        if literal.modality == AT:
            return low, [time]
        if literal.modality == BOX:
            return low, list(range(low, t + 1))
        return low, seen[:1]

    def _absence(self, literal: ExtendedAtom, binding: dict, t: int) -> dict:
        args = tuple(_value(arg, binding, self.terms) for arg in literal.atom.args)
        fact = (literal.atom.predicate, args)
        time = None
        if literal.modality == AT:
            time = self.numbers[_value(literal.time, binding, self.terms)]
        window = literal.window
        high = t
        kind = getattr(window, "kind", None)
        if window is None:
            low = self.t0 if literal.modality == AT else t
        elif kind == COUNT:
            low, _ = self._count_witness(literal, fact, time, t)
        elif kind == PAST:
            low = self.t0 if window.high is None else max(self.t0, t - window.high)
            high = t - window.low
        else:
            low = max(self.t0, t - window.size)
        return {"literal": literal_text(literal, self.terms, fact=fact, time=time), "absent": [low, high]}

    def _comparison(self, literal: Comparison, binding: dict) -> dict:
        terms = self.terms
        written = f"{_expression_text(literal.left, terms)} {literal.op} {_expression_text(literal.right, terms)}"
        shown = f"{_expression_text(literal.left, terms, binding)} {literal.op} " \
                f"{_expression_text(literal.right, terms, binding)}"
        return {"literal": written, "holds": shown}

    # presence ----------------------------------------------------------------------------------

    def _present(self, fact: Fact, point: int, bound: int | None):
        """How `fact`, known to be on the stream at `point`, came there: ("background", since),
        ("record", record) made before record number `bound` (any when None), ("data", source),
        or None when its records may have been forgotten."""
        provenance = self.provenance
        since = provenance.since(fact)
        if since is not None and since <= point:
            return ("background", since)
        record = self._record(fact, point, bound)
        if record is not None:
            return ("record", record)
        if fact[0] in self._derived_predicates and point < self.now - provenance.need.get(fact[0], provenance.keep):
            return None  # older than the records kept: data, or forgotten
        return ("data", provenance.source(point, fact))

    def _record(self, fact: Fact, point: int, bound: int | None):
        """The kept record that puts `fact` at `point` (made before `bound`): a plain head's
        first, with the latest horizon; else an @T head's."""
        best = None
        for record in self.provenance.records(fact):
            start, end, at, batch = record[:4]
            if start > point or end < point or (bound is not None and (at, batch) >= bound):
                continue
            if best is None:
                best = record
                continue
            plain, best_plain = not record[4].head_at, not best[4].head_at
            if (plain, end, -at, -batch) > (best_plain, best[1], -best[2], -best[3]):
                best = record
        return best


# text of literals --------------------------------------------------------------------------------


def _shown(horizon: int) -> int | None:
    """A horizon as explanations show it: None for one that never comes."""
    return None if horizon >= NEVER_EXPIRES else horizon


def literal_text(literal: ExtendedAtom, terms, *, fact: Fact | None = None, time=None, left: Fact | None = None) -> str:
    """`[RANGE 3] DIAMOND a(x1,y)`: the body atom, ground when `fact` is given (DatalogMTL's
    windows as MeTeoR writes them: `Diamondminus[1,3] p(a)`, `q(a) Since[0,2] p(a)`)."""
    parts = []
    if literal.negated:
        parts.append("not")
    window = literal.window
    kind = getattr(window, "kind", None)
    if kind == PAST:
        bounds = f"[{window.low},{'inf' if window.high is None else window.high}]"
        if literal.modality == SINCE:
            if left is None:
                predicate, projection = window.left
                shown = [terms.keys[v] if k == 1 else str(literal.atom.args[v]) if isinstance(literal.atom.args[v], Var)
                         else terms.keys[literal.atom.args[v]] for k, v in projection]
                written = f"{terms.keys[predicate]}({','.join(shown)})" if shown else terms.keys[predicate]
            else:
                written = format_fact(left, terms)
            parts.append(f"{written} Since{bounds}")
        else:
            parts.append(("Boxminus" if literal.modality == BOX else "Diamondminus") + bounds)
        window = None
    if window is not None:
        if kind == COUNT:
            parts.append(f"[COUNT {window.size}]")
        elif kind == "range":
            parts.append(f"[RANGE {window.size}]")
        else:
            parts.append(str(window))
    if kind == PAST:
        pass
    elif literal.modality == DIAMOND:
        parts.append("DIAMOND")
    elif literal.modality == BOX:
        parts.append("BOX")
    elif literal.modality == AT:
        parts.append(f"@{time if time is not None else _expression_text(literal.time, terms)}")
    elif literal.modality not in (PLAIN, None):
        parts.append(str(literal.modality).upper())
    if fact is None:
        atom = literal.atom
        keys = terms.keys
        shown = [str(a) if isinstance(a, Var) else keys[a] for a in atom.args]
        name = keys[atom.predicate]
        if name == TRIPLE and len(shown) == 3:
            parts.append(" ".join(shown))
        else:
            parts.append(f"{name}({','.join(shown)})" if shown else name)
    else:
        keys = terms.keys
        if keys[fact[0]] == TRIPLE and len(fact[1]) == 3:
            parts.append(" ".join(keys[term] for term in fact[1]))
        else:
            parts.append(format_fact(fact, terms))
    return " ".join(parts)


def _expression_text(expression, terms, binding: dict | None = None) -> str:
    """`V + 1` as written, or with the values of `binding` (`105 + 1`)."""
    if isinstance(expression, Var):
        if binding is None:
            return str(expression)
        value = binding.get(expression)
        return str(expression) if value is None else terms.keys[value]
    if isinstance(expression, Arithmetic):
        left = _expression_text(expression.left, terms, binding)
        right = _expression_text(expression.right, terms, binding)
        return f"{left} {expression.op} {right}"
    return terms.keys[expression]


# bindings ------------------------------------------------------------------------------------------


def _bind(positives: list[ExtendedAtom], groundings, rule, terms) -> dict:
    """The rule's variables as its positive body atoms' groundings (and `X = e`) bind them."""
    binding: dict = {}
    for literal, grounding in zip(positives, groundings):
        args = list(literal.atom.args) + ([literal.time] if literal.modality == AT else [])
        for pattern, value in zip(args, grounding):
            if isinstance(pattern, Var):
                binding.setdefault(pattern, value)
    pending = [c for c in rule.comparisons if c.op == "="]
    progress = True
    while pending and progress:
        progress = False
        for comparison in list(pending):
            free = comparison.variables() - binding.keys()
            if not free:
                pending.remove(comparison)
                continue
            if len(free) == 1:
                (variable,) = free
                other = comparison.right if comparison.left == variable else comparison.left
                if variable in (comparison.left, comparison.right):
                    value = _value(other, binding, terms)
                    if value is not None:
                        binding[variable] = value
                    pending.remove(comparison)
                    progress = True
    return binding


def _value(expression, binding: dict, terms):
    if isinstance(expression, Var):
        return binding.get(expression)
    if isinstance(expression, Arithmetic):
        left = _value(expression.left, binding, terms)
        right = _value(expression.right, binding, terms)
        if left is None or right is None:
            return None
        return calculate(expression.op, left, right, terms)
    return expression


def comparison_holds(literal: Comparison, binding: dict, terms) -> bool:
    left = _value(literal.left, binding, terms)
    right = _value(literal.right, binding, terms)
    return left is not None and right is not None and compare(literal.op, left, right, terms.numbers)


# why not ------------------------------------------------------------------------------------------

#: body groundings a "why not" tries, over all rules, before it says what it found so far
WHY_NOT_STEPS = 20_000
#: how many missing derived premises down a "why not" asks why not in turn
WHY_NOT_DEPTH = 3


def why_not(engine, fact: Fact, t: int, *, search=None) -> dict:
    """Why `fact` is not on the stream at `t`: for each rule whose head matches it, the premises
    found and the first one missing then (the deepest a search for a ground body went), from what
    the engine keeps for explanations (data and derivations within its reach, background).

    {"fact": "notify(s1)", "t": 3, "why_not": [{"rule": "...", "at": "p.lars:5:1",
      "binding": {"S": "s1"}, "met": ["alarm(s1)"],
      "missing": {"literal": "[RANGE 10] DIAMOND peak(s1)", "why": "none at 0..3"}}]}
    """
    terms = engine.terms
    node = {"fact": format_fact(fact, terms), "t": t, "why_not": []}
    provenance = getattr(engine, "provenance", None)
    if provenance is None or getattr(engine, "now", None) is None:
        node["note"] = "this engine keeps nothing to say why not"
        return node
    search = search or _WhyNot(engine, provenance, t)
    search.asked.add(fact)
    for rule in engine.program.rules:
        head = rule.head
        if head.predicate != fact[0] or len(head.args) != len(fact[1]):
            continue
        binding = _unify_head(head.args, fact[1])
        if binding is None:
            continue
        if rule.head_time is not None:  # `@T h`: placed at T, so T is t
            if isinstance(rule.head_time, Var):
                binding[rule.head_time] = terms.intern_number(t)
            elif terms.numbers[rule.head_time] != t:
                continue
        found = search.rule(rule, binding)
        if found is None:
            node["truncated"] = True
            break
        node["why_not"].append(found)
    if not node["why_not"] and not node.get("truncated"):
        node["note"] = "no rule derives it, and it is not in the stream then"
    return node


def _unify_head(pattern: tuple, args: tuple) -> dict | None:
    binding: dict = {}
    for written, value in zip(pattern, args):
        if isinstance(written, Var):
            if binding.setdefault(written, value) != value:
                return None
        elif written != value:
            return None
    return binding


class _WhyNot:
    """The search of one "why not": what is on the stream at a time point, by predicate."""

    def __init__(self, engine, provenance, t: int):
        self.engine = engine
        self.provenance = provenance
        self.terms = engine.terms
        self.t = t
        self.t0 = engine._t0
        self.steps = 0
        self.depth = 0
        self.asked: set = set()
        by_predicate: dict[int, set] = {}
        for found in (provenance.sources, provenance.background):
            for fact in found:
                by_predicate.setdefault(fact[0], set()).add(fact[1])
        for bucket in provenance.data.values():
            for fact in bucket:
                by_predicate.setdefault(fact[0], set()).add(fact[1])
        provenance.records((0, ()))  # (makes the index of the kept records)
        for fact in provenance._index or {}:
            by_predicate.setdefault(fact[0], set()).add(fact[1])
        self.by_predicate = {predicate: sorted(args) for predicate, args in by_predicate.items()}

    def present(self, fact: Fact, point: int) -> bool:
        provenance = self.provenance
        since = provenance.since(fact)
        if since is not None and since <= point:
            return True
        if provenance.source(point, fact) is not None:
            return True
        bucket = provenance.data.get(point)
        if bucket is not None and fact in bucket:
            return True
        return any(record[0] <= point <= record[1] for record in provenance.records(fact))

    def rule(self, rule, binding: dict) -> dict | None:
        """The rule's entry: its premises met and the first missing (None: out of steps)."""
        keys = self.terms.keys
        best = {"depth": -1}
        order = _ordered_body(rule)
        done = self._search(order, 0, dict(binding), [], best)
        if done is None:
            return None
        entry = {"rule": rule.text or str(rule)}
        if rule.location is not None:
            entry["at"] = str(rule.location)
        shown = best.get("binding", binding)
        entry["binding"] = {str(var): keys[value] for var, value in shown.items()}
        entry["met"] = best.get("met", [])
        if done:
            entry["note"] = "every premise is found (the engine no longer keeps what decided it)"
        else:
            entry["missing"] = missing = best.get("missing")
            fact = best.get("missing_fact")
            if fact is not None and self.depth < WHY_NOT_DEPTH and fact not in self.asked:
                self.asked.add(fact)
                self.depth += 1
                below = why_not(self.engine, fact, self.t, search=self)
                self.depth -= 1
                if below["why_not"]:
                    missing["why_not"] = below["why_not"]
        return entry

    def _search(self, body: list, index: int, binding: dict, met: list, best: dict):
        """True when the whole body is met; False with `best` the deepest failure; None past the steps."""
        self.steps += 1
        if self.steps > WHY_NOT_STEPS:
            return None
        if index == len(body):
            best.update(depth=index, met=list(met), binding=dict(binding), missing=None)
            return True
        literal = body[index]
        options, why = self._options(literal, binding)
        if not options:
            if index > best["depth"]:
                best.update(depth=index, met=list(met), binding=dict(binding),
                            missing={"literal": self._text(literal, binding), "why": why},
                            missing_fact=self._derived_fact(literal, binding))
            return False
        for extended, shown in options:
            met.append(shown)
            found = self._search(body, index + 1, extended, met, best)
            met.pop()
            if found is None or found:
                return found
        return False

    def _options(self, literal, binding: dict) -> tuple[list, str]:
        """The bindings that make `literal` true at t ([(binding, text)]), or why there is none."""
        terms = self.terms
        if isinstance(literal, Comparison):
            free = literal.variables() - binding.keys()
            if literal.op == "=" and len(free) == 1:
                (variable,) = free
                other = literal.right if literal.left == variable else literal.left if literal.right == variable \
                    else None
                value = None if other is None else _value(other, binding, terms)
                if value is not None:
                    extended = {**binding, variable: value}
                    return [(extended, self._text(literal, extended))], ""
            if free:
                return [], "cannot be evaluated (unbound " + ", ".join(sorted(map(str, free))) + ")"
            if comparison_holds(literal, binding, terms):
                return [(binding, self._text(literal, binding))], ""
            return [], "is false"
        window = literal.window
        kind = getattr(window, "kind", None)
        t = high = self.t
        if kind == PAST:  # DatalogMTL's Diamondminus / Boxminus [a, b]: the points t - b .. t - a
            if literal.modality == SINCE:
                return [], "(a Since: not searched)"
            low = self.t0 if window.high is None else max(self.t0, t - window.high)
            high = t - window.low
        elif kind not in (None, "range", COUNT):
            return [], "(a window of another kind: not searched)"
        elif kind == COUNT or (literal.modality == AT and window is None):
            low = self.t0
        elif window is None:
            low = t
        else:
            low = max(self.t0, t - window.size)
        points = range(low, high + 1)
        span = f"{low}..{high}" if low != high else f"{high}"
        atom = literal.atom
        candidates = []
        closest = None  # BOX: the atom present at the most points of the window, and where not
        for args in self.by_predicate.get(atom.predicate, ()):
            if len(args) != len(atom.args):
                continue
            extended = _match(atom.args, args, binding)
            if extended is None:
                continue
            fact = (atom.predicate, args)
            if literal.modality == AT:
                time = binding.get(literal.time) if isinstance(literal.time, Var) else literal.time
                if time is not None:
                    at = [self.terms.numbers[time]] if isinstance(self.terms.numbers[time], int) else []
                    found = [p for p in at if low <= p <= t and self.present(fact, p)]
                else:
                    found = [p for p in points if self.present(fact, p)]
                for point in found:
                    with_time = dict(extended)
                    if isinstance(literal.time, Var):
                        with_time[literal.time] = terms.intern_number(point)
                    candidates.append((with_time, fact))
                continue
            if literal.modality == BOX:
                gaps = [p for p in points if not self.present(fact, p)]
                holds = not gaps
                if gaps and len(gaps) < len(points) and (closest is None or len(gaps) < len(closest[1])):
                    closest = (fact, gaps)
            else:  # PLAIN (at t) and DIAMOND (somewhere in the window)
                holds = any(self.present(fact, p) for p in points)
            if holds:
                candidates.append((extended, fact))
        if literal.negated:
            if candidates:
                shown = format_fact(candidates[0][1], terms)
                return [], f"{shown} is there ({span})"
            return [(binding, self._text(literal, binding))], ""
        if not candidates:
            if literal.modality == BOX and closest is not None:
                fact, gaps = closest
                shown = ", ".join(map(str, gaps)) if len(gaps) <= 5 else f"{gaps[0]}, ..., {gaps[-1]}"
                return [], f"not at every point of {span}: {format_fact(fact, terms)} is not there at {shown}"
            return [], f"none at {span}"
        return [(extended, self._text(literal, extended)) for extended, _ in candidates], ""

    def _derived_fact(self, literal, binding: dict):
        """The ground atom of a missing plain premise that rules derive (its own "why not" is asked)."""
        if isinstance(literal, Comparison) or literal.negated or literal.modality != PLAIN or literal.window:
            return None
        args = tuple(binding.get(arg, arg) if isinstance(arg, Var) else arg for arg in literal.atom.args)
        if any(isinstance(arg, Var) for arg in args):
            return None
        if not any(rule.head.predicate == literal.atom.predicate for rule in self.engine.program.rules):
            return None
        return (literal.atom.predicate, args)

    def _text(self, literal, binding: dict) -> str:
        terms = self.terms
        if isinstance(literal, Comparison):
            return (f"{_expression_text(literal.left, terms, binding)} {literal.op} "
                    f"{_expression_text(literal.right, terms, binding)}")
        atom = literal.atom
        args = tuple(binding.get(arg, arg) if isinstance(arg, Var) else arg for arg in atom.args)
        if all(not isinstance(arg, Var) for arg in args):
            time = None
            if literal.modality == AT:
                value = binding.get(literal.time) if isinstance(literal.time, Var) else literal.time
                time = terms.numbers[value] if value is not None else None
            if literal.modality != AT or time is not None:
                return literal_text(literal, terms, fact=(atom.predicate, args), time=time)
        from .program import Atom

        partial = ExtendedAtom(Atom(atom.predicate, args), literal.modality, literal.window, literal.time,
                               literal.negated)
        return literal_text(partial, terms)


def _ordered_body(rule) -> list:
    """The body as it is searched: in written order, a comparison or `not` whose variables are not
    bound yet put off until they are (`X = e` until all but X are)."""
    bound = set(rule.head.variables()) | ({rule.head_time} if isinstance(rule.head_time, Var) else set())
    ordered: list = []
    waiting: list = []

    def ready(literal) -> bool:
        if isinstance(literal, ExtendedAtom) and not literal.negated:
            return True
        free = literal.variables() - bound
        return not free or (isinstance(literal, Comparison) and literal.op == "=" and len(free) == 1)

    for literal in rule.body:
        waiting.append(literal)
        progress = True
        while progress:
            progress = False
            for candidate in list(waiting):
                if ready(candidate):
                    ordered.append(candidate)
                    waiting.remove(candidate)
                    bound.update(candidate.variables())
                    progress = True
                    break
    return ordered + waiting


def _match(pattern: tuple, args: tuple, binding: dict) -> dict | None:
    extended = None
    for written, value in zip(pattern, args):
        if isinstance(written, Var):
            bound = binding.get(written) if extended is None else extended.get(written)
            if bound is None:
                if extended is None:
                    extended = dict(binding)
                extended[written] = value
            elif bound != value:
                return None
        elif written != value:
            return None
    return binding if extended is None else extended

