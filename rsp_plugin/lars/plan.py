"""Join plans: each rule, compiled once per "new" body position into a Python function.

For a rule with positive body atoms b1..bk, plan j starts from the groundings of
bj that are new now (its view's delta) and joins the others through the indexes
of their views, on the argument positions already bound; comparisons and
negated atoms run as soon as their variables are bound. A "full" plan starts
from everything that holds (used for rules that must be re-evaluated at every
time point: those with `not` or a tuple window, whose body can start to hold
with nothing new, and when sSNE is switched off).

E.g. for `q(X,Z) :- [RANGE 3] DIAMOND p(X,Y), [RANGE 3] DIAMOND p(Y,Z)`, plan 0 is

    def fire(delta, out, now):
        if not (hz_1): return
        for _ in (0,):
            for a0, h0 in delta:
                v0 = a0[0]
                v1 = a0[1]
                m0 = h0
                for a1 in ix_1.get(v1, ()):
                    h1 = hz_1[a1]
                    v2 = a1[1]
                    m1 = h1 if h1 < m0 else m0
                    out.append(((v0, v2,), m1))

Each emitted pair is (head arguments, horizon), or (head arguments, T) for an
`@T` head. `fire` never changes a view: derivations are applied after it ran.

The source that is compiled holds nothing a program, a checkpoint or a client
wrote: its names are made here (variables are `v0, v1, ...` in the order they are
bound, not the rule's names), its constants are term ids checked to be ints, its
operators tokens of a fixed set (`_COMPARISONS`, `_ARITHMETIC`); anything else is
refused (`PlanError`) before any code is made. The rule's text and place are shown
over the code in `RulePlan.sources` (what one reads), which is never compiled.

With `max_emitted`, each loop that has another inside first checks
`if len(out) > _most: _stop()`: a product of atoms (`a(X), a(Y), a(Z)`) stops
once `out` passes the bound (`limits.TooManyDerivations`), not when memory ends.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Callable

from ..core.time import NEVER_EXPIRES
from . import builtins
from .limits import stop_joining
from .program import Arithmetic, Comparison, ExtendedAtom, Rule, Var


@dataclass
class RulePlan:
    """The compiled forms of one rule."""

    rule: Rule
    #: (body position, view, fire) for each positive body atom: fires on that view's delta.
    on_delta: list[tuple[int, object, Callable]] = field(default_factory=list)
    #: Fires on everything that holds.
    full: Callable | None = None
    #: Must run in full at every time point (negation, tuple windows, or no positive atom).
    every_time_point: bool = False
    head_at: bool = False
    sources: dict[str, str] = field(default_factory=dict)
    #: (literal, view) for each positive and each negated body atom
    positive_views: list = field(default_factory=list)
    negative_views: list = field(default_factory=list)
    #: Views this rule looks groundings up in: by a delta plan, or by the full plan.
    looked_up: list = field(default_factory=list)
    looked_up_in_full: list = field(default_factory=list)
    #: Switched off through this time point (impossible derivations, `pruning.py`).
    disabled_until: int = -(1 << 62)
    #: ... of which this much because of a BOX atom's own absence (a cascade can be undone).
    trigger_until: int = -(1 << 62)
    #: The rules that read what this one derives, plainly or under BOX (set by `pruning.py`).
    head_readers: list = field(default_factory=list)
    #: (literal, view, producers) of this rule's atoms read plainly or under BOX (`pruning.py`).
    quiet_sources: list = field(default_factory=list)

    def __repr__(self) -> str:
        return f"<RulePlan {self.rule.text!r}>"

    def __getstate__(self) -> dict:
        """The rule and when it is switched off: all else is made from the rule again, the code compiled
        and the views looked up by `IncrementalEngine.__setstate__` (a checkpoint holds no code, and no
        rule's structure: `rsp_plugin.runtime.state`)."""
        return {"rule": self.rule, "disabled_until": self.disabled_until, "trigger_until": self.trigger_until}

    def compiled_again(self, compiled: "RulePlan") -> None:
        """Take the plan `compile_rule` made again of this one's rule (keeping when it is switched off)."""
        disabled_until, trigger_until = self.disabled_until, self.trigger_until
        self.__dict__.update(compiled.__dict__)
        self.disabled_until, self.trigger_until = disabled_until, trigger_until


class PlanError(TypeError):
    """A rule that holds what a plan cannot be made of (a constant that is not a term id, an
    unknown operator): never turned into code."""


#: the operators a plan writes, each as the literal that goes into its source
_COMPARISONS = {op: repr(op) for op in ("=", "!=", "<", "<=", ">", ">=")}
_ARITHMETIC = {op: repr(op) for op in ("+", "-", "*", "/")}


class _Writer:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.depth = 1
        #: each variable of the rule -> its name in the code, `v0, v1, ...` in the order first seen
        self.variables: dict[Var, str] = {}

    def line(self, text: str) -> None:
        self.lines.append("    " * self.depth + text)

    def var(self, variable: Var) -> str:
        name = self.variables.get(variable)
        if name is None:
            if not isinstance(variable, Var):
                raise PlanError(f"a rule plan binds variables, not {type(variable).__name__}")
            name = self.variables[variable] = f"v{len(self.variables)}"
        return name


def _constant(value) -> str:
    """A term id as it is written in the code: only an int (a checkpoint or a bug cannot put text there)."""
    if type(value) is not int:
        raise PlanError(f"a rule plan takes term ids (ints) as constants, not {type(value).__name__}")
    return str(value)


def _operator(op, known: dict) -> str:
    found = known.get(op) if type(op) is str else None
    if found is None:
        raise PlanError(f"{op!r} is not an operator a rule plan knows")
    return found


def compile_rule(rule: Rule, views: dict, terms, counters: bool = False, provenance: list | None = None,
                 max_emitted: int | None = None) -> RulePlan:
    """Compile `rule`; `views` maps each body ExtendedAtom's view_key to its View.
    `max_emitted`: the most items one evaluation may emit (None: no bound); past it,
    `limits.TooManyDerivations` while it joins.

    `provenance` (explanations, `lars/explain.py`): a list that gets, for each item
    emitted, its body `(a, h, a, h, ...)`: the grounding and horizon of each positive
    body atom, in written order."""
    positives = [b for b in rule.body if isinstance(b, ExtendedAtom) and not b.negated]
    always = (
        not positives
        or any(b.negated for b in rule.body if isinstance(b, ExtendedAtom))
        or any(b.window is not None and b.window.kind == "count" for b in positives)
        or not _head_time_seen(rule, positives)
    )
    plan = RulePlan(rule, every_time_point=always, head_at=rule.head_time is not None)
    plan.positive_views = [(literal, views[literal.view_key]) for literal in positives]
    plan.negative_views = [(b, views[b.view_key]) for b in rule.negative]
    copies = provenance is None and _copies(rule, positives)
    for position, literal in enumerate(positives):
        source, fire = _compile(rule, positives, position, views, terms, plan.looked_up, provenance, max_emitted)
        if copies:  # each new grounding is a derivation as it stands
            source, fire = "def fire(delta, out, now):\n    out.extend(delta)\n", _copy
        plan.on_delta.append((position, views[literal.view_key], fire))
        plan.sources[f"delta {position}"] = _shown(rule, source)
    source, fire = _compile(rule, positives, None, views, terms, plan.looked_up_in_full, provenance, max_emitted)
    plan.full = fire
    plan.sources["full"] = _shown(rule, source)
    return plan


def _shown(rule: Rule, source: str) -> str:
    """A plan's code for a reader: the rule's place and text over it (made for display only: the
    code compiled is `source` alone)."""
    location = f"{' '.join(str(rule.location).split())}  " if rule.location else ""
    return f"# {location}{' '.join(rule.text.split())}\n{source}"  # one comment line, whatever the text holds


def _copies(rule: Rule, positives: list[ExtendedAtom]) -> bool:
    """Is the rule `h(X1,...,Xn) :- [W] M p(X1,...,Xn)`: one body atom, distinct variables, the head
    its arguments in the same order, nothing else? Then a grounding of the body with its horizon
    is the head's (arguments, horizon) as it stands."""
    if len(rule.body) != 1 or len(positives) != 1 or rule.head_time is not None:
        return False
    literal = positives[0]
    args = literal.atom.args
    return (literal.time is None and all(isinstance(arg, Var) for arg in args)
            and len(set(args)) == len(args) and tuple(rule.head.args) == tuple(args))


def _copy(delta, out, now):
    out.extend(delta)


def _head_time_seen(rule: Rule, positives: list[ExtendedAtom]) -> bool:
    """Is an `@U` head's time one the body saw (`@T h :- [W] @T p`), so never after now?

    A head time computed (`U = T + 2`) or written (`@5 h`) may lie ahead: the atom is placed
    when the time comes and the body still holds then, which a grounding new at an earlier
    time point does not tell; such a rule is evaluated in full at every time point."""
    time = rule.head_time
    if time is None:
        return True
    return isinstance(time, Var) and any(b.modality == "at" and b.time == time for b in positives)


def _compile(rule: Rule, positives: list[ExtendedAtom], start: int | None, views: dict, terms, looked_up: list,
             provenance: list | None = None, max_emitted: int | None = None):
    names: dict[str, object] = {
        "_compare": builtins.compare,
        "_calculate": builtins.calculate,
        "_arith": _arith_with(terms),
        "numbers": terms.numbers,
        "NEVER": NEVER_EXPIRES,
        "_most": max_emitted,
        "_stop": stop_joining,
    }
    bound: set[Var] = set()
    writer = _Writer()
    header = ["def fire(delta, out, now):"]
    writer.line("for _ in (0,):")  # so that every filter can `continue`
    writer.depth += 1

    order = _join_order(positives, start)
    pending = [b for b in rule.body if not (isinstance(b, ExtendedAtom) and not b.negated)]
    horizon = "NEVER"
    for step, index in enumerate(order):
        literal = positives[index]
        view = views[literal.view_key]
        tag = f"{step}"
        names[f"hz_{tag}"] = view.horizon
        args = list(literal.atom.args)
        if literal.time is not None:
            args.append(literal.time)
        if step > 0 and max_emitted is not None:  # once per turn of the loop around: what it emitted so far
            writer.line("if len(out) > _most: _stop()")
        if start is not None and step == 0:
            writer.line(f"for a{tag}, h{tag} in delta:")
            writer.depth += 1
            _bind(writer, tag, args, bound, check_constants=False)
        else:
            _match(writer, names, view, tag, args, bound)
            looked_up.append(view)
        if literal.time is not None and not isinstance(literal.time, Var):
            # `@3 p(X)`: the view holds p at every time point; the constant picks one
            writer.line(f"if a{tag}[{len(literal.atom.args)}] != {_constant(literal.time)}: continue")
        if (SKIP_DERIVED_TWICE and start is not None and step > 0 and index < start and provenance is None
                and view is views[positives[start].view_key]):
            # an earlier body atom over the same view, new too: the plan of that atom (fired on the
            # same delta just before, the views unchanged between) derived this grounding already
            writer.line(f"if (a{tag}, h{tag}) in delta: continue")
        if horizon == "NEVER":
            writer.line(f"m{tag} = h{tag}")
        else:
            writer.line(f"m{tag} = h{tag} if h{tag} < {horizon} else {horizon}")
        horizon = f"m{tag}"
        pending = _emit_ready(writer, names, pending, bound, views, terms)
    for literal in pending:  # only literals without variables are left
        _emit_literal(writer, names, literal, bound, views, terms)

    if rule.negative:  # `not` holds now, with no promise for later
        horizon = "now"
    head_args = ", ".join(_expr(a, writer) for a in rule.head.args)
    head_tuple = f"({head_args},)" if rule.head.args else "()"
    placed = _expr(rule.head_time, writer) if rule.head_time is not None else horizon
    writer.line(f"out.append(({head_tuple}, {placed}))")
    if provenance is not None:  # the body too: each positive atom's grounding and horizon, in written order
        names["_body"] = provenance.append
        writer.line(f"_body(({''.join(f'a{order.index(i)}, h{order.index(i)}, ' for i in range(len(positives)))}))")
    looked_up_here = [f"hz_{step}" for step in range(len(order)) if start is None or step > 0]
    if looked_up_here:  # a conjunction: one view with nothing in it, and nothing can match
        header.append(f"    if not ({' and '.join(looked_up_here)}): return")
    source = "\n".join(header + writer.lines) + "\n"
    namespace = dict(names)
    code = _COMPILED.get(source)
    if code is None:
        code = _COMPILED[source] = compile(source, "<rule plan>", "exec")
    exec(code, namespace)  # noqa: S102
    return source, namespace["fire"]


#: A delta plan skips the groundings the plan of an earlier body atom over the same view derived
#: already (both atoms new); off, each such grounding is derived twice (the tests compare).
SKIP_DERIVED_TWICE = True

#: source -> code: the same rule set is compiled once per process (a materializer per query)
_COMPILED: dict[str, object] = {}


def _join_order(positives: list[ExtendedAtom], start: int | None) -> list[int]:
    """Start from `start`; then always the atom with the most bound positions (written order on ties)."""
    order = [] if start is None else [start]
    bound: set[Var] = set() if start is None else positives[start].variables()
    remaining = [i for i in range(len(positives)) if i != start]
    while remaining:
        def score(i: int) -> tuple:
            literal = positives[i]
            args = list(literal.atom.args) + ([literal.time] if literal.time is not None else [])
            known = sum(1 for a in args if not isinstance(a, Var) or a in bound)
            return (-known, literal.window is None, i)

        best = min(remaining, key=score)
        order.append(best)
        remaining.remove(best)
        bound |= positives[best].variables()
    return order


def _bind(writer: _Writer, tag: str, args: list, bound: set[Var], check_constants: bool,
          keyed: tuple[int, ...] = ()) -> None:
    """Bind the variables of a grounding `a{tag}`; check repeated ones (not those at the `keyed`
    positions: the index looked the grounding up by them)."""
    for position, arg in enumerate(args):
        if position in keyed:
            continue
        if isinstance(arg, Var):
            if arg in bound:
                writer.line(f"if a{tag}[{position}] != {writer.var(arg)}: continue")
            else:
                writer.line(f"{writer.var(arg)} = a{tag}[{position}]")
                bound.add(arg)
        elif check_constants:
            writer.line(f"if a{tag}[{position}] != {_constant(arg)}: continue")


def _match(writer: _Writer, names: dict, view, tag: str, args: list, bound: set[Var]) -> None:
    """Look up the groundings of a view that agree with what is bound."""
    key_positions = tuple(
        i for i, a in enumerate(args) if isinstance(a, Var) and a in bound
    )
    free = [a for a in args if isinstance(a, Var) and a not in bound]
    if not free:
        full = ", ".join(_constant(a) if not isinstance(a, Var) else writer.var(a) for a in args)
        writer.line(f"a{tag} = ({full},)" if args else f"a{tag} = ()")
        writer.line(f"h{tag} = hz_{tag}.get(a{tag})")
        writer.line(f"if h{tag} is None: continue")
        return
    if key_positions:
        names[f"ix_{tag}"] = view.index_for(key_positions)
        key = ", ".join(writer.var(args[i]) for i in key_positions)
        if len(key_positions) > 1:  # (one position: the key is the term itself, `View.indexes`)
            key = f"({key},)"
        writer.line(f"for a{tag} in ix_{tag}.get({key}, ()):")
        writer.depth += 1
        writer.line(f"h{tag} = hz_{tag}[a{tag}]")
    else:
        writer.line(f"for a{tag}, h{tag} in hz_{tag}.items():")
        writer.depth += 1
    _bind(writer, tag, args, bound, check_constants=False, keyed=key_positions)


def _emit_ready(writer, names, pending, bound, views, terms):
    """Emit the comparisons and negations whose variables are all bound; keep the rest."""
    progress = True
    while progress:
        progress = False
        for literal in list(pending):
            if _ready(literal, bound):
                _emit_literal(writer, names, literal, bound, views, terms)
                pending.remove(literal)
                progress = True
    return pending


def _ready(literal, bound: set[Var]) -> bool:
    free = literal.variables() - bound
    if not free:
        return True
    if isinstance(literal, Comparison) and literal.op == "=" and len(free) == 1:
        (variable,) = free
        return literal.left == variable or literal.right == variable
    return False


def _emit_literal(writer, names, literal, bound, views, terms) -> None:
    if isinstance(literal, ExtendedAtom):  # negated
        view = views[literal.view_key]
        tag = f"n{len([k for k in names if k.startswith('neg_')])}"
        names[f"neg_{tag}"] = view.horizon
        args = list(literal.atom.args) + ([literal.time] if literal.time is not None else [])
        full = ", ".join(_expr(a, writer) for a in args)
        writer.line(f"if ({full},) in neg_{tag}: continue" if args else f"if () in neg_{tag}: continue")
        return
    free = literal.variables() - bound
    if free:  # X = expression binds X
        (variable,) = free
        other = literal.right if literal.left == variable else literal.left
        writer.line(f"{writer.var(variable)} = {_expr(other, writer)}")
        writer.line(f"if {writer.var(variable)} is None: continue")
        bound.add(variable)
        return
    left, right = _expr(literal.left, writer), _expr(literal.right, writer)
    if isinstance(literal.left, Arithmetic) or isinstance(literal.right, Arithmetic):
        writer.line(f"_l = {left}; _r = {right}")
        writer.line("if _l is None or _r is None: continue")
        left, right = "_l", "_r"
    writer.line(f"if not _compare({_operator(literal.op, _COMPARISONS)}, {left}, {right}, numbers): continue")


def _arith_with(terms):
    def _arith(op, left, right):
        if left is None or right is None:
            return None
        return builtins.calculate(op, left, right, terms)

    return _arith


def _expr(expression, writer: _Writer) -> str:
    if isinstance(expression, Var):
        return writer.var(expression)
    if isinstance(expression, Arithmetic):
        left = _expr(expression.left, writer)
        right = _expr(expression.right, writer)
        return f"_arith({_operator(expression.op, _ARITHMETIC)}, {left}, {right})"
    return _constant(expression)
