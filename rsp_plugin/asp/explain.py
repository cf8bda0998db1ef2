"""Why an atom is in the answer stream chosen at t (the LARS papers' Def. 5, through clingo).

    engine = AnswerStreamEngine(program)
    engine.advance_to(t, arrivals)
    engine.explain(fact)          # at the last time point: a tree of plain data, or None

Under answer-stream semantics each time point stands alone: the interpretation
at t is the data plus the atoms the chosen answer derives at this evaluation
(at t, or at T for an `@T` head), nothing derived earlier carried over. So
nothing is kept between time points, and an explanation is made when asked,
from the engine's own state at t:

1. the ground program of t (`asp/ground.py`) is solved again with the shown
   atoms of the chosen answer fixed, giving the whole interpretation I;
2. I is grown again from the data by the rules of its reduct (those whose
   `not`s hold in I), round by round (as `asp/check.py` checks minimality):
   the first rule instance that adds an atom is its support, and it only
   reads atoms of earlier rounds, so an explanation never goes round a loop;
3. the tree: each atom's support, its body's windows read in the round it was
   added (DIAMOND's witness, BOX's run, @'s time point), the `not`s true in I,
   down to data.

A loop through `not` is explained by the choice the answer made: `a :- not b`
holds because b is not in this answer. Nothing is promised beyond t: the
horizon of every atom is t (its `placed` point for an `@T` head).
"""

from __future__ import annotations

from ..lars.explain import ExplanationUnavailable, _expression_text, literal_text
from ..lars.program import AT, BOX, COUNT, PLAIN, Comparison, ExtendedAtom

Fact = tuple[int, tuple[int, ...]]


def explain(engine, fact: Fact, t: int, sources=None) -> dict | None:
    """Why `fact` is in the first answer at `t` (the engine's last time point); None if it is not.
    `sources(point, fact)`: where a data atom was read, or None."""
    if engine.now is None or t != engine.now:
        raise ExplanationUnavailable(
            f"answer streams are explained at the last time point evaluated ({engine.now}), not at {t}: "
            "each time point stands alone and nothing of it is kept")
    fact = (fact[0], tuple(fact[1]))
    if fact not in set(engine.chosen):
        return None
    return _Answer(engine, t, sources).node(fact, t, None)


class _Answer:
    def __init__(self, engine, t: int, sources):
        from .check import _Bodies

        self.engine = engine
        self.program = engine.program
        self.terms = engine.terms
        self.t = t
        self.sources = sources or (lambda point, fact: None)
        history = engine.history
        self.t0 = history.t0
        self.data: dict[int, set[Fact]] = {
            u: {(key[0], args) for key, rows in points.items() for args in rows} for u, points in history.points.items()}
        self.derived = self._interpretation(engine, t)
        self.whole = {u: set(facts) for u, facts in self.data.items()}
        for point, derived in self.derived:
            self.whole.setdefault(point, set()).add(derived)
        self.bodies = _Bodies(self.program)
        self.bodies.t0 = self.t0
        self.bodies.arrivals = list(history.log) if history.log is not None else []
        #: (point, fact) -> (round, rule, binding): the first rule instance that added it
        self.support: dict[tuple[int, Fact], tuple] = {}
        self._grow()

    def _interpretation(self, engine, t: int) -> set[tuple[int, Fact]]:
        """The chosen answer's derived atoms, (point, fact): clingo again, the shown atoms fixed."""
        import clingo

        ground = engine.grounder.ground(engine.history, t)
        control = clingo.Control(["--models=1", "--warn=none"])
        with control.backend() as backend:
            atom = [0] + [backend.add_atom() for _ in range(ground.atoms)]
            for head, positive, negative in ground.rules:
                backend.add_rule([atom[head]], [atom[a] for a in positive] + [-atom[a] for a in negative])
        chosen = set(engine.chosen)
        assumptions = [atom[a] if fact in chosen else -atom[a] for a, fact in ground.shown.items()]
        found: list[set[int]] = []
        control.solve(assumptions=assumptions,
                      on_model=lambda model: found.append({a for a in range(1, ground.atoms + 1)
                                                           if model.is_true(atom[a])}))
        if not found:
            raise ExplanationUnavailable(f"the answer chosen at {t} could not be found again")
        derived = set()
        for a in found[0]:
            meaning = ground.meaning.get(a)
            if meaning and meaning[0] in ("at", "d"):
                _, predicate, args, point = meaning
                derived.add((point, (predicate, args)))
        return derived

    def _grow(self) -> None:
        """The least model of the reduct, from the data up, round by round (see the module's text)."""
        bodies = self.bodies
        grown = {u: set(facts) for u, facts in self.data.items()}
        rounds = 0
        while True:
            rounds += 1
            new: dict[tuple[int, Fact], tuple] = {}
            for rule in self.program.rules:
                bodies.stream = grown
                for binding in list(bodies._satisfy(list(rule.body), {}, self.t)):
                    if not self._negations_hold(rule, binding):
                        continue
                    placed = self._head(rule, binding)
                    if placed is None or placed in self.support or placed in new or placed not in self.derived:
                        continue
                    new[placed] = (rounds, rule, binding)
            if not new:
                return
            for (point, fact), support in new.items():
                grown.setdefault(point, set()).add(fact)
                self.support[(point, fact)] = support

    def _negations_hold(self, rule, binding: dict) -> bool:
        bodies = self.bodies
        before = bodies.stream
        bodies.stream = self.whole
        try:
            return not any(any(True for _ in bodies._groundings(literal, binding, self.t))
                           for literal in rule.negative)
        finally:
            bodies.stream = before

    def _head(self, rule, binding: dict):
        point = self.t
        if rule.head_time is not None:
            point = self.terms.number(self.bodies._value(rule.head_time, binding))
            if type(point) is not int or not (self.t0 <= point <= self.t):
                return None
        return point, (rule.head.predicate, tuple(self.bodies._value(a, binding) for a in rule.head.args))

    # the tree -----------------------------------------------------------------------------------

    def node(self, fact: Fact, point: int, before: int | None) -> dict:
        keys = self.terms.keys
        from ..io.formats import format_fact

        node = {"fact": format_fact(fact, self.terms), "t": point}
        if fact in self.data.get(point, ()):
            node["by"] = "data"
            source = self.sources(point, fact)
            if source is not None:
                node["source"] = source
            return node
        support = self.support.get((point, fact))
        if support is None or (before is not None and support[0] >= before):
            node["by"] = "unknown"
            return node
        rounds, rule, binding = support
        node.update({"by": "rule", "rule": rule.text or str(rule)})
        if rule.location is not None:
            node["at"] = str(rule.location)
        node.update({"derived_at": self.t, "fired_at": self.t,
                     "binding": {str(variable): keys[value] for variable, value in binding.items()}})
        items = []
        for literal in rule.body:
            if isinstance(literal, Comparison):
                written = f"{_expression_text(literal.left, self.terms)} {literal.op} " \
                          f"{_expression_text(literal.right, self.terms)}"
                shown = f"{_expression_text(literal.left, self.terms, binding)} {literal.op} " \
                        f"{_expression_text(literal.right, self.terms, binding)}"
                items.append({"literal": written, "holds": shown})
            elif literal.negated:
                items.append(self._absence(literal, binding))
            else:
                items.append(self._witness(literal, binding, rounds))
        node["body"] = items
        if rule.head_time is not None:
            node["placed"] = point
        node["horizon"] = point if rule.head_time is not None else self.t
        node["semantics"] = "answer-stream"
        return node

    def _ground(self, literal: ExtendedAtom, binding: dict):
        value = self.bodies._value
        fact = (literal.atom.predicate, tuple(value(a, binding) for a in literal.atom.args))
        time = self.terms.number(value(literal.time, binding)) if literal.modality == AT else None
        return fact, time

    def _witness(self, literal: ExtendedAtom, binding: dict, rounds: int) -> dict:
        """The positive body atom at t, read in the round its rule fired (atoms of earlier rounds)."""
        fact, time = self._ground(literal, binding)
        points, shown = self.bodies._window(literal, self.t)
        counted = literal.window is not None and literal.window.kind == COUNT

        def present(u: int) -> bool:
            if counted:
                return fact in shown.get(u, ())
            if fact in self.data.get(u, ()):
                return True
            support = self.support.get((u, fact))
            return support is not None and support[0] < rounds

        if literal.modality == BOX:
            witness = list(points)
        elif literal.modality == AT:
            witness = [time]
        elif literal.modality == PLAIN and literal.window is None:
            witness = [self.t]
        else:
            witness = [next((u for u in reversed(points) if present(u)), self.t)]
        item = {"literal": literal_text(literal, self.terms, fact=fact, time=time),
                "window": [points[0] if points else self.t, self.t], "witness": witness, "horizon": self.t,
                "because": [self.node(fact, u, rounds) for u in witness]}
        return item

    def _absence(self, literal: ExtendedAtom, binding: dict) -> dict:
        fact, time = self._ground(literal, binding)
        points, _ = self.bodies._window(literal, self.t)
        return {"literal": literal_text(literal, self.terms, fact=fact, time=time),
                "absent": [points[0] if points else self.t, self.t]}
