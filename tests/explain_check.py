"""Checking explanations against the reference evaluator (tests/test_explain_lars.py).

Every node of an explanation makes claims: this rule, under this binding,
fires at this time point (each body atom true there through the witnesses
given, each `not` true by the absence given, each comparison true); the head
is the fact explained; the horizon is the least of the body's; each body
atom holds until its own horizon, and the fact until the node's. The checker
re-evaluates each claim with the reference evaluator's stream (what was on it
at each time point, as of each evaluation), written from the semantics and
sharing nothing with the engine but the program model and the builtins.
"""

from __future__ import annotations

from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.builtins import calculate, compare
from rsp_plugin.lars.program import AT, BOX, COUNT, DIAMOND, PLAIN, Arithmetic, Comparison, ExtendedAtom, Var
from rsp_plugin.lars.metric import PAST, SINCE
from rsp_plugin.lars.reference import ReferenceEvaluator
from rsp_plugin.core.time import NEVER_EXPIRES


class RecordingReference(ReferenceEvaluator):
    """The reference evaluator, remembering at which evaluation each atom entered the stream."""

    def __init__(self, program, **options):
        super().__init__(program, **options)
        #: (time point, fact) -> the evaluation time point it was put there at
        self.added_at: dict[tuple[int, tuple], int] = {}
        self.outputs: dict[int, set] = {}

    def _evaluate(self, t, arrivals):
        super()._evaluate(t, arrivals)
        for point, facts in self.stream.items():
            for fact in facts:
                self.added_at.setdefault((point, fact), t)
        self.outputs[t] = set(self.derived.get(t, set()))


class MetricReference(RecordingReference):
    """The same, reading DatalogMTL's windows (`lars/metric.py`: Walega et al.'s Table 1 on the
    integer timeline, nothing before the first time point) in programs compiled onto LARS."""

    def _groundings(self, literal, binding, t):
        window = literal.window
        if getattr(window, "kind", None) != PAST:
            yield from super()._groundings(literal, binding, t)
            return
        for fact, extended in past_groundings(literal, binding, t, self.t0, lambda u: self.stream.get(u, ())):
            yield extended


def past_groundings(literal, binding, t, t0, shown):
    """(fact, binding) for each grounding of a DatalogMTL window at t (`shown(u)`: the facts at u)."""
    from rsp_plugin.lars.reference import _unify

    window = literal.window
    low = t0 if window.high is None else t - window.high
    high = t - window.low
    atom = literal.atom
    if literal.modality == BOX:
        if low < t0:
            return
        for fact in list(shown(high)):
            extended = _unify(atom, fact, binding)
            if extended is not None and all(fact in shown(u) for u in range(low, high + 1)):
                yield fact, extended
        return
    seen = set()
    for u in range(high, max(t0, low) - 1, -1):
        for fact in list(shown(u)):
            extended = _unify(atom, fact, binding)
            if extended is None or fact in seen:
                continue
            if literal.modality == SINCE:
                predicate, projection = window.left
                left = (predicate, tuple(fact[1][v] if k == 0 else v for k, v in projection))
                if not all(left in shown(w) for w in range(u + 1, t)):
                    continue
            seen.add(fact)
            yield fact, extended


class Checker:
    def __init__(self, program, reference: RecordingReference):
        self.program = program
        self.terms = program.terms
        self.reference = reference
        self.by_location = {(str(rule.location) if rule.location else None, rule.text): rule for rule in program.rules}
        #: claims checked when the run is over: (literal, binding, from, until) and (fact, from, until)
        self.literal_claims: list = []
        self.fact_claims: list = []
        self.nodes = 0

    # helpers --------------------------------------------------------------------------------

    def fact_of(self, text: str):
        found = [f for (u, f) in self.reference.added_at if format_fact(f, self.terms) == text]
        assert found, f"{text} was never on the reference stream"
        return found[0]

    def present(self, fact, point: int, as_of: int) -> bool:
        added = self.reference.added_at.get((point, fact))
        return added is not None and added <= as_of

    def value(self, expression, binding):
        if isinstance(expression, Var):
            return binding[expression.name]
        if isinstance(expression, Arithmetic):
            left, right = self.value(expression.left, binding), self.value(expression.right, binding)
            if left is None or right is None:
                return None
            return calculate(expression.op, left, right, self.terms)
        return expression

    def ground(self, literal: ExtendedAtom, binding):
        fact = (literal.atom.predicate, tuple(self.value(a, binding) for a in literal.atom.args))
        time = self.terms.number(self.value(literal.time, binding)) if literal.modality == AT else None
        return fact, time

    def window(self, literal, t):
        """(points of the window at t, shown(point) -> facts there as of t)."""
        reference = self.reference
        if literal.window is not None and literal.window.kind == COUNT:
            points, shown = reference._window(literal, t)
            return points, lambda fact, u: fact in shown.get(u, ())
        if literal.window is None:
            points = list(range(reference.t0, t + 1)) if literal.modality == AT else [t]
        else:
            points = list(range(max(reference.t0, t - literal.window.size), t + 1))
        return points, lambda fact, u: self.present(fact, u, t)

    def holds(self, literal, binding, t) -> bool:
        """Does the (positive form of the) literal hold at t under binding, as of evaluation t?"""
        if getattr(literal.window, "kind", None) == PAST:
            shown = lambda u: {f for f in self.reference.stream.get(u, ()) if self.present(f, u, t)}  # noqa: E731
            values = {name: value for name, value in binding.items()}
            from rsp_plugin.lars.program import Var
            pinned = {Var(name): value for name, value in values.items()}
            return any(True for _ in past_groundings(literal, pinned, t, self.reference.t0, shown))
        fact, time = self.ground(literal, binding)
        points, shown = self.window(literal, t)
        if literal.modality in (PLAIN, DIAMOND):
            return any(shown(fact, u) for u in points)
        if literal.modality == BOX:
            return all(shown(fact, u) for u in points)
        return time in points and shown(fact, time)

    # nodes ----------------------------------------------------------------------------------

    def check_tree(self, root: dict, as_of: int) -> None:
        """Check every node; a node "same" must be explained in full elsewhere, not above itself."""
        self._full = set()
        stack = [root]
        while stack:
            node = stack.pop()
            if node["by"] != "same":
                self._full.add((node["fact"], node["t"]))
            stack.extend(child for item in node.get("body", ()) for child in item.get("because", ()))
        self._above = []
        self.check(root, as_of)

    def check(self, node: dict, as_of: int) -> None:
        """Check `node` (explaining a fact on the stream at node["t"], asked at evaluation as_of)."""
        self.nodes += 1
        fact = self.fact_of(node["fact"])
        point = node["t"]
        by = node["by"]
        assert by in ("rule", "data", "same"), node
        if by == "data":
            assert (point, fact) in {(u, f) for u, f in self.reference.arrivals}, node
            return
        if by == "same":
            key = (node["fact"], point)
            assert key in self._full and key not in self._above, node
            assert self.present(fact, point, as_of), node
            return
        rule = self.by_location[(node.get("at"), node["rule"])]
        binding = {name: self.terms.find(key) for name, key in node["binding"].items()}
        fired = node["fired_at"]
        assert fired <= as_of, node
        # the head is the fact, where the node says
        head = (rule.head.predicate, tuple(self.value(a, binding) for a in rule.head.args))
        assert head == fact, (node, head)
        if rule.head_time is not None:
            assert self.terms.number(self.value(rule.head_time, binding)) == point == node["placed"], node
        else:
            assert fired == point and node["derived_at"] <= point <= (NEVER_EXPIRES if node["horizon"] is None else node["horizon"]), node
        assert self.present(fact, point, max(as_of, fired)), node
        # the body holds at fired_at, item by item
        items = node["body"]
        assert len(items) == len(rule.body), node
        horizons = []
        for literal, item in zip(rule.body, items):
            if isinstance(literal, Comparison):
                left, right = self.value(literal.left, binding), self.value(literal.right, binding)
                assert left is not None and right is not None, node
                assert compare(literal.op, left, right, self.terms.numbers), (node, item)
                continue
            if literal.negated:
                assert not self.holds(literal, binding, fired), (node, item)
                points, _ = self.window(literal, fired)
                assert item["absent"] == [points[0], fired], (node, item)
                horizons.append(node["derived_at"])
                continue
            self.check_witness(literal, binding, fired, item, node)
            horizon = NEVER_EXPIRES if item["horizon"] is None else item["horizon"]
            horizons.append(horizon)
            self.literal_claims.append((literal, binding, fired, horizon))
        least = min(horizons, default=NEVER_EXPIRES)
        if rule.head_time is None:
            assert (NEVER_EXPIRES if node["horizon"] is None else node["horizon"]) == least, (node, horizons)
            if "bounded_by" in node:
                bounding = items[node["bounded_by"]]
                assert bounding.get("horizon", node["derived_at"]) == least, node
            self.fact_claims.append((fact, point, least))
        self._above.append((node["fact"], point))
        for item in items:
            for child in item.get("because", ()):
                assert child["t"] in item["witness"] + item.get("between", []), (node, item)
                self.check(child, fired)
        self._above.pop()

    def check_witness(self, literal, binding, t, item, node) -> None:
        if getattr(literal.window, "kind", None) == PAST:
            return self.check_past_witness(literal, binding, t, item, node)
        fact, time = self.ground(literal, binding)
        points, shown = self.window(literal, t)
        assert item["window"] == [points[0], t], (node, item)
        witness = item["witness"]
        assert witness, (node, item)
        if literal.modality == BOX:
            assert witness == points, (node, item)
        if literal.modality == AT:
            assert witness == [time], (node, item)
        if literal.modality == PLAIN and literal.window is None:
            assert witness == [t], (node, item)
        for u in witness:
            assert u in points and shown(fact, u), (node, item, u)
        assert [format_fact(fact, self.terms)] == list({c["fact"] for c in item["because"]}), (node, item)

    def check_past_witness(self, literal, binding, t, item, node) -> None:
        fact, _ = self.ground(literal, binding)
        window = literal.window
        t0 = self.reference.t0
        low = t0 if window.high is None else t - window.high
        high = t - window.low
        if literal.modality != BOX:
            low = max(t0, low)
        assert item["window"] == [low, high], (node, item)
        witness = item["witness"]
        assert witness, (node, item)
        if literal.modality == BOX:
            assert witness == list(range(low, high + 1)) and low >= t0, (node, item)
        for u in witness:
            assert low <= u <= high and self.present(fact, u, t), (node, item, u)
        facts = {format_fact(fact, self.terms)}
        if literal.modality == SINCE:
            predicate, projection = window.left
            left = (predicate, tuple(fact[1][v] if k == 0 else v for k, v in projection))
            assert item["between"] == list(range(witness[0] + 1, t)), (node, item)
            for u in item["between"]:
                assert self.present(left, u, t), (node, item, u)
            if item["between"]:
                facts.add(format_fact(left, self.terms))
        assert facts == {c["fact"] for c in item["because"]}, (node, item)

    # claims about the future ------------------------------------------------------------------------

    def check_horizons(self, last: int) -> None:
        """Each body atom held until its horizon, each explained fact until the node's (up to `last`)."""
        outputs = self.reference.outputs
        for literal, binding, start, horizon in self.literal_claims:
            for x in range(start, min(horizon, last) + 1):
                assert self.holds(literal, binding, x), (literal, binding, start, horizon, x)
        for fact, start, horizon in self.fact_claims:
            for x in range(start, min(horizon, last) + 1):
                assert fact in outputs[x], (format_fact(fact, self.terms), start, horizon, x)
