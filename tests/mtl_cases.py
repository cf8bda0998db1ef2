"""Generated DatalogMTL programs and streams, and a runner for both evaluators (the engine and the reference).

A program uses every operator and bound kind the language has: Boxminus,
Diamondminus, Since (with a left operand whose variables the right one
lacks, too), nested operators, Boxplus / Diamondplus heads, recursion; bounds
closed, open on either side, decimal, one point, unbounded. Streams are
MeTeoR dataset lines, punctual and over intervals (open ones too).
"""

from __future__ import annotations

import random

from rsp_plugin.formats import format_fact
from rsp_plugin.mtl.data import fact_timeline, read_dataset
from rsp_plugin.mtl.lower import lower_program
from rsp_plugin.mtl.run import engine_outputs, reference_outputs
from rsp_plugin.mtl.syntax import parse_mtl

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

    # formulas ----------------------------------------------------------------------------

    def atom(self, variables: list[str], predicate: str | None = None) -> str:
        predicate = predicate or self.rng.choice(list(PREDICATES))
        arity = PREDICATES[predicate]
        if arity == 0:
            return predicate
        args = []
        for _ in range(arity):
            if self.rng.random() < 0.15:
                args.append(self.rng.choice(CONSTANTS))
            else:
                args.append(self.rng.choice(variables))
        return f"{predicate}({','.join(args)})"

    def formula(self, variables: list[str], depth: int = 0) -> str:
        rng = self.rng
        roll = rng.random()
        if depth >= 2 or roll > self.nesting * (2 if depth == 0 else 1):
            return self.atom(variables)
        operator = rng.choice(["Diamondminus", "Boxminus", "Since"])
        if operator == "Since":
            right = self.formula(variables, depth + 1)
            right_vars = _variables_of(right) or ["X"]
            left = self.formula(right_vars, depth + 1) if _variables_of(right) else self.atom_without_variables()
            return f"({left})Since{self.interval()}({right})" if depth > 0 else f"{left}Since{self.interval()}{right}"
        interval = self.interval(unbounded=operator == "Diamondminus")
        return f"{operator}{interval}{self.formula(variables, depth + 1)}"

    def atom_without_variables(self) -> str:
        predicate = self.rng.choice(list(PREDICATES))
        arity = PREDICATES[predicate]
        if arity == 0:
            return predicate
        return f"{predicate}({','.join(self.rng.choice(CONSTANTS) for _ in range(arity))})"

    def body(self) -> list[str]:
        rng = self.rng
        literals = []
        for _ in range(rng.randint(1, 3)):
            if rng.random() < self.since:
                right = self.atom(["X", "Y"])
                right_vars = _variables_of(right)
                if right_vars and rng.random() < 0.6:
                    left = self.atom(right_vars)
                else:
                    left = self.atom(["X", "Y", "Z"])  # may have variables the right operand lacks
                literals.append(f"{left}Since{self.interval()}{right}")
            else:
                literals.append(self.formula(["X", "Y"]))
        return literals

    def rule(self) -> str:
        rng = self.rng
        body = self.body()
        bound = set()
        for literal in body:
            if "Since" in literal and "(" in literal and not literal.startswith(("Diamond", "Box")):
                bound |= set(_variables_of(literal.split("Since", 1)[1]))
            else:
                bound |= set(_variables_of(literal))
        predicate = rng.choice(list(PREDICATES))
        arity = PREDICATES[predicate]
        choices = sorted(bound) or None
        if arity and choices is None:
            args = [rng.choice(CONSTANTS) for _ in range(arity)]
        else:
            args = [rng.choice(choices) if rng.random() < 0.85 else rng.choice(CONSTANTS) for _ in range(arity)]
        head = f"{predicate}({','.join(args)})" if arity else predicate
        if rng.random() < self.heads:
            kind = rng.random()
            if kind < 0.6:
                head = f"Boxplus{self.interval(unbounded=rng.random() < 0.2)}{head}"
            elif kind < 0.8:
                head = f"Diamondplus{self.interval(single=True)}{head}"
            else:
                head = f"Boxplus[0,{rng.randint(0, 2)}]Boxplus{self.interval(unbounded=False)}{head}"
        return f"{head}:-{', '.join(body)}"

    def program(self) -> str:
        return "\n".join(self.rule() for _ in range(self.rules)) + "\n"

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
                last = first + rng.randint(1, 4)
                starts.append((first, f"{atom}@[{first},{last}]"))
            else:
                last = first + rng.randint(2, 4)
                starts.append((first, f"{atom}@[{first}.5,{last}]"))  # covers first + 1 .. last
        starts.sort(key=lambda item: item[0] + (1 if ".5" in item[1] else 0))
        return [line for _, line in starts]


def _variables_of(text: str) -> list[str]:
    found = []
    word = ""
    depth = 0
    for ch in text + " ":
        if ch in "([":
            depth += 1
        if ch.isalnum() or ch == "_":
            word += ch
        else:
            if word and depth > 0 and word[0].isupper() and word not in found and not word.isdigit():
                found.append(word)
            word = ""
        if ch in ")]":
            depth -= 1
    return [w for w in found if w in ("X", "Y", "Z")]


def run(program_text: str, lines: list[str], *, engine: str = "engine", first: int = 0, last: int = 14):
    """{t: set of atoms as text} for every time point first..last."""
    program = parse_mtl(program_text, "<generated>")
    terms = program.terms
    timeline = list(fact_timeline(read_dataset(lines, terms), first=first, last=last))
    if engine == "reference":
        outputs = reference_outputs(program, timeline, start=first, horizon=last)
    else:
        outputs = engine_outputs(lower_program(program), timeline, start=first)
    return {t: {format_fact(f, terms) for f in facts} for t, facts in outputs}
