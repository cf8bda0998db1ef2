"""Generated DatalogMTL programs and streams, and a runner for the engine and the reference evaluator.

A program uses every operator and bound kind the language has: Boxminus,
Diamondminus, Since (also with a left operand whose variables the right one
lacks), nested operators, Boxplus / Diamondplus heads, recursion; bounds
closed, open on either side, decimal, one point (`[2]`), unbounded. It is
built as a small tree and written in MeTeoR's syntax and, where it can be,
in the LARS rule language (`[1,1] BOXMINUS p(X)`). Streams are MeTeoR
dataset lines, punctual and over intervals (open and decimal ones too).
"""

from __future__ import annotations

import random
import re

from rsp_plugin.io.formats import format_fact
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.mtl.data import fact_timeline, read_dataset
from rsp_plugin.lars.metric_lower import Lowered, lower_program
from rsp_plugin.mtl.run import engine_outputs, reference_outputs
from rsp_plugin.mtl.syntax import parse_mtl
from rsp_plugin.core.terms import Dictionary

PREDICATES = {"P": 1, "Q": 1, "R": 2, "S": 1, "Go": 0}
CONSTANTS = ("a", "b", "c")


class ProgramGenerator:
    def __init__(self, seed: int, *, rules: int | None = None, time_points: int = 14, nesting: float = 0.25,
                 since: float = 0.25, heads: float = 0.3):
        self.rng = random.Random(seed)
        self.rules = rules if rules is not None else self.rng.randint(1, 4)
        self.time_points = time_points
        self.nesting = nesting
        self.since = since
        self.heads = heads
        self._tree = None

    # intervals ------------------------------------------------------------------------

    def interval(self, unbounded: bool = True, single: bool = False) -> str:
        rng = self.rng
        a = rng.randint(0, 3)
        b = a + rng.randint(0, 3)
        kind = rng.choice(["closed", "closed", "point", "open-left", "open-right", "open", "decimal", "inf",
                           "short"])
        if single:
            kind = rng.choice(["point", "short", "decimal-point"])
        if kind == "point":
            return f"[{a},{a}]"
        if kind == "short":
            return f"[{a}]"
        if kind == "decimal-point":
            return f"[{a}.5,{a + 1}]"  # one integer: a + 1
        if kind == "open-left":
            return f"({a},{a + 1 + rng.randint(0, 2)}]"
        if kind == "open-right":
            return f"[{a},{a + 1 + rng.randint(0, 2)})"
        if kind == "open":
            return f"({a},{a + 2 + rng.randint(0, 2)})"
        if kind == "decimal":
            return f"[{a}.5,{b + 1}.5]" if rng.random() < 0.5 else f"({a}.25,{b + 1}]"
        if kind == "inf" and unbounded:
            return f"[{a},inf)" if rng.random() < 0.5 else f"({a},+inf)"
        return f"[{a},{b}]"

    # formulas: ("atom", predicate, args) | ("op", name, interval, operand) | ("since", interval, left, right)

    def atom(self, variables: list[str], constants_only: bool = False):
        predicate = self.rng.choice(list(PREDICATES))
        args = []
        for _ in range(PREDICATES[predicate]):
            if constants_only or not variables or self.rng.random() < 0.15:
                args.append(self.rng.choice(CONSTANTS))
            else:
                args.append(self.rng.choice(variables))
        return ("atom", predicate, tuple(args))

    def formula(self, variables: list[str], depth: int = 0):
        rng = self.rng
        if depth >= 2 or rng.random() > self.nesting * (2 if depth == 0 else 1):
            return self.atom(variables)
        operator = rng.choice(["Diamondminus", "Boxminus", "Since"])
        if operator == "Since":
            right = self.formula(variables, depth + 1)
            right_vars = _variables(right)
            left = self.formula(right_vars, depth + 1) if right_vars else self.atom([], constants_only=True)
            return ("since", self.interval(), left, right)
        return ("op", operator, self.interval(unbounded=operator == "Diamondminus"), self.formula(variables, depth + 1))

    def body(self) -> list:
        rng = self.rng
        literals = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < self.since:
                right = self.atom(["X", "Y"])
                right_vars = _variables(right)
                if right_vars and rng.random() < 0.6:
                    left = self.atom(right_vars)
                else:
                    left = self.atom(["X", "Y", "Z"])  # may have variables the right operand lacks
                literals.append(("since", self.interval(), left, right))
            else:
                literals.append(self.formula(["X", "Y"]))
        return literals

    def rule(self):
        rng = self.rng
        body = self.body()
        bound = set()
        for literal in body:
            bound |= set(_variables(literal[3] if literal[0] == "since" else literal))
        predicate = rng.choice(list(PREDICATES))
        choices = sorted(bound)
        args = tuple(rng.choice(choices) if choices and rng.random() < 0.85 else rng.choice(CONSTANTS)
                     for _ in range(PREDICATES[predicate]))
        operators = []
        if rng.random() < self.heads:
            kind = rng.random()
            if kind < 0.6:
                operators = [("Boxplus", self.interval(unbounded=rng.random() < 0.2))]
            elif kind < 0.8:
                operators = [("Diamondplus", self.interval(single=True))]
            else:
                operators = [("Boxplus", f"[0,{rng.randint(0, 2)}]"), ("Boxplus", self.interval(unbounded=False))]
        return operators, ("atom", predicate, args), body

    def tree(self):
        if self._tree is None:
            self._tree = [self.rule() for _ in range(self.rules)]
        return self._tree

    def program(self) -> str:
        """The program in MeTeoR's syntax."""
        lines = []
        for operators, head, body in self.tree():
            ops = "".join(f"{name}{interval}" for name, interval in operators)
            lines.append(f"{ops}{_meteor(head)}:-{', '.join(_meteor(b, top=True) for b in body)}")
        return "\n".join(lines) + "\n"

    def lars_program(self) -> str | None:
        """The same program in the LARS rule language, or None if a formula has no LARS form there."""
        lines = []
        for operators, head, body in self.tree():
            literals = [_lars(b, top=True) for b in body]
            if any(literal is None for literal in literals):
                return None
            ops = " ".join(f"{interval} {name.upper()}" for name, interval in operators)
            lines.append(f"{ops + ' ' if ops else ''}{_lars(head)} :- {', '.join(literals)} .")
        return "\n".join(lines) + "\n"

    # streams ------------------------------------------------------------------------------

    def stream(self) -> list[str]:
        rng = self.rng
        starts = []
        for _ in range(rng.randint(4, 22)):
            predicate = rng.choice(list(PREDICATES))
            arity = PREDICATES[predicate]
            atom = predicate if arity == 0 else f"{predicate}({','.join(rng.choice(CONSTANTS) for _ in range(arity))})"
            first = rng.randint(0, self.time_points - 1)
            shape = rng.random()
            if shape < 0.6:
                starts.append((first, f"{atom}@[{first},{first}]"))
            elif shape < 0.75:
                starts.append((first, f"{atom}@{first}"))
            elif shape < 0.9:
                starts.append((first, f"{atom}@[{first},{first + rng.randint(1, 4)}]"))
            else:
                starts.append((first + 1, f"{atom}@({first},{first + rng.randint(2, 4)}.5]"))  # from first + 1
        starts.sort(key=lambda item: item[0])
        return [line for _, line in starts]


def _variables(node) -> list[str]:
    if node[0] == "atom":
        found = [a for a in node[2] if a[0].isupper()]
    elif node[0] == "op":
        found = _variables(node[3])
    else:
        found = _variables(node[2]) + _variables(node[3])
    return list(dict.fromkeys(found))


def _meteor(node, top: bool = False) -> str:
    kind = node[0]
    if kind == "atom":
        return f"{node[1]}({','.join(node[2])})" if node[2] else node[1]
    if kind == "op":
        return f"{node[1]}{node[2]}{_meteor(node[3])}"
    left, right = _meteor(node[2]), _meteor(node[3])
    text = f"({left})Since{node[1]}({right})"
    return text if not top else f"{left}Since{node[1]}({right})"


def _lars(node, top: bool = False) -> str | None:
    kind = node[0]
    if kind == "atom":
        name = node[1].lower()
        return f"{name}({','.join(node[2])})" if node[2] else name
    if kind == "op":
        operand = _lars(node[3])
        return None if operand is None or node[3][0] == "since" else f"{node[2]} {node[1].upper()} {operand}"
    if not top or node[2][0] == "since" or node[3][0] == "since":
        return None
    left, right = _lars(node[2]), _lars(node[3])
    return None if left is None or right is None else f"{left} SINCE {node[1]} {right}"


def run(program_text: str, lines: list[str], *, engine: str = "engine", first: int = 0, last: int = 14):
    """{t: set of atoms as text} for every time point first..last (MeTeoR syntax)."""
    program = parse_mtl(program_text, "<generated>")
    terms = program.terms
    timeline = list(fact_timeline(read_dataset(lines, terms), first=first, last=last))
    if engine == "reference":
        outputs = reference_outputs(program, timeline, start=first, horizon=last)
    else:
        outputs = engine_outputs(lower_program(program), timeline, start=first)
    return {t: {format_fact(f, terms) for f in facts} for t, facts in outputs}


def run_lars_form(program_text: str, lines: list[str], *, first: int = 0, last: int = 14):
    """The same for a program in the LARS rule language, atoms written with MeTeoR's upper-case names."""
    terms = Dictionary()
    program = parse_program(program_text, "<generated.lars>", terms)
    lowered = Lowered(program, set(program.hidden), {r.head.predicate for r in program.rules} - program.hidden)
    upper = {name.lower(): name for name in PREDICATES}
    renamed = [_rename(line, {v: k for k, v in upper.items()}) for line in lines]
    timeline = list(fact_timeline(read_dataset(renamed, terms), first=first, last=last))
    outputs = engine_outputs(lowered, timeline, start=first)
    return {t: {_rename(format_fact(f, terms), upper) for f in facts} for t, facts in outputs}


def _rename(text: str, names: dict[str, str]) -> str:
    name = re.match(r"[A-Za-z_][A-Za-z0-9_]*", text).group(0)
    return names.get(name, name) + text[len(name):]
