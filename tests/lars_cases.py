"""Helpers for LARS tests: run a program on a stream written like the papers' tables,
and generate random stratified programs and streams for differential tests."""

from __future__ import annotations

import random

from rsp_plugin.asp.check import GuessAndCheck
from rsp_plugin.asp.engine import AnswerStreamEngine, answer_stream_engine
from rsp_plugin.io.formats import format_fact, read_atom_stream
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.reference import ReferenceEvaluator
from rsp_plugin.lars.syntax import parse_program


def _facts(program, atoms: list[str], t: int):
    lines = [f"{t} {atom}" for atom in atoms]
    elements = list(read_atom_stream(lines, program.terms, prefixes=program.prefixes))
    for element in elements:
        assert not hasattr(element, "reason"), str(element)
    return [element.fact for element in elements]


def run(program_text: str, stream: dict[int, list[str]], first: int | None = None, last: int | None = None,
        engine: str = "incremental", **options) -> dict[int, set[str]]:
    """{t: atoms} in, {t: output atoms} out, for every time point from first to last."""
    program = parse_program(program_text)
    first = min(stream) if first is None else first
    last = max(stream) if last is None else last
    if engine == "reference":
        limits = {k: v for k, v in options.items() if k == "max_derivations"}
        evaluator = ReferenceEvaluator(program, start=first, **limits)
        return {
            t: {format_fact(f, program.terms) for f in evaluator.advance_to(t, _facts(program, stream.get(t, []), t))}
            for t in range(first, last + 1)
        }
    evaluator = IncrementalEngine(program, start=first, **options)
    output = {}
    for t in range(first, last + 1):
        evaluator.advance_to(t, _facts(program, stream.get(t, []), t))
        output[t] = {format_fact(f, program.terms) for f in evaluator.holding()}
    return output


def answer_streams(program_text: str, stream: dict[int, list[str]], first: int | None = None,
                   last: int | None = None, engine: str = "solver") -> dict[int, list[list[str]]]:
    """{t: atoms} in; {t: the outputs of every answer stream at t, sorted} out (Def. 5).

    engine: "solver" (clingo), "check" (guess and check), "reference" (the naive reference,
    stratified programs), "dispatch" (what `reason --semantics answer-stream` runs),
    "stream" (the incremental engine under the default semantics, for comparison)."""
    program = parse_program(program_text, semantics="answer-stream")
    first = min(stream) if first is None else first
    last = max(stream) if last is None else last
    terms = program.terms
    if engine == "solver":
        evaluator = AnswerStreamEngine(program, start=first, models="all")
    elif engine == "first":
        evaluator = AnswerStreamEngine(program, start=first, models="first")
    elif engine == "check":
        evaluator = GuessAndCheck(program, start=first)
    elif engine == "reference":
        evaluator = ReferenceEvaluator(program, start=first, semantics="answer-stream")
    elif engine == "dispatch":
        evaluator = answer_stream_engine(program, start=first)
    else:
        evaluator = IncrementalEngine(program, start=first)
    output = {}
    for t in range(first, last + 1):
        step = evaluator.advance_to(t, _facts(program, stream.get(t, []), t))
        if engine in ("solver", "first"):
            models = step.models
        elif engine in ("check", "reference"):
            models = list(step) if engine == "check" else [step]
        else:
            models = [evaluator.holding()]
        output[t] = sorted(sorted(format_fact(f, terms) for f in model) for model in models)
    return output


# Random programs -----------------------------------------------------------------------------

CONSTANTS = ["a", "b", "c"]
NUMBERS = [1, 2, 3]


class ProgramGenerator:
    """Stratified programs over every operator: layers of intensional predicates,
    positive recursion inside a layer, `not` only on lower layers, tuple windows
    only on data predicates, @T heads, comparisons and arithmetic."""

    def __init__(self, seed: int, *, box_bias: float = 0.0, chains: bool = False, derived_in_data: bool = False,
                 data_windows_only: bool = False):
        self.random = random.Random(seed)
        #: windows, @, DIAMOND and BOX over data predicates only (both semantics agree then)
        self.data_windows_only = data_windows_only
        self.box_bias = box_bias
        self.chains = chains
        #: Let the stream also carry atoms of predicates that rules derive.
        self.derived_in_data = derived_in_data
        rnd = self.random
        self.data = {f"d{i}": rnd.choice([0, 1, 1, 2]) for i in range(3)}
        self.data["val"] = 2  # val(X, N): a constant and a number
        layers = rnd.randint(2, 4)
        self.layers = [
            {f"p{layer}{k}": rnd.choice([0, 1, 1, 2]) for k in range(rnd.randint(1, 2))} for layer in range(layers)
        ]

    def program(self) -> str:
        rules = []
        for layer, predicates in enumerate(self.layers):
            for predicate, arity in predicates.items():
                for _ in range(self.random.randint(1, 2)):
                    rules.append(self.rule(layer, predicate, arity))
        if self.chains:
            previous = next(iter(self.layers[0]))
            arity = self.layers[0][previous]
            for k in range(self.random.randint(2, 5)):
                name = f"chain{k}"
                variables = ",".join("XYZ"[:arity])
                head = f"{name}({variables})" if arity else name
                body = f"{previous}({variables})" if arity else previous
                rules.append(f"{head} :- {body} .")
                previous = name
        return "\n".join(rules) + "\n"

    def stream(self, length: int | None = None) -> dict[int, list[str]]:
        rnd = self.random
        length = length or rnd.randint(6, 16)
        gap_chance = rnd.choice([0.0, 0.2, 0.5])
        stream: dict[int, list[str]] = {}
        for t in range(length):
            if rnd.random() < gap_chance:
                continue
            atoms = []
            for _ in range(rnd.randint(0, 4)):
                predicate = rnd.choice(list(self.data))
                atoms.append(self._ground(predicate, self.data[predicate]))
            if self.derived_in_data and rnd.random() < 0.3:
                layer = rnd.choice(self.layers)
                predicate = rnd.choice(list(layer))
                atoms.append(self._ground(predicate, layer[predicate]))
            if rnd.random() < 0.5 + self.box_bias:  # long runs, so that BOX windows fill up
                predicate = "d0"
                atoms.append(self._ground(predicate, self.data[predicate], constant="a"))
            stream[t] = atoms
        stream.setdefault(0, [])
        stream.setdefault(length - 1, [])
        return stream

    def _ground(self, predicate: str, arity: int, constant: str | None = None) -> str:
        if predicate == "val":
            return f"val({self.random.choice(CONSTANTS)},{self.random.choice(NUMBERS)})"
        if arity == 0:
            return predicate
        args = [constant or self.random.choice(CONSTANTS) for _ in range(arity)]
        return f"{predicate}({','.join(args)})"

    # one rule --------------------------------------------------------------------------

    def rule(self, layer: int, head: str, arity: int) -> str:
        rnd = self.random
        variables = ["X", "Y", "Z"]
        body: list[str] = []
        bound: set[str] = set()
        time_vars: list[str] = []
        for k in range(rnd.randint(1, 3)):
            predicate, pred_arity, extensional = self._body_predicate(layer, allow_same=k > 0)
            args = [rnd.choice(variables) if rnd.random() < 0.85 else rnd.choice(CONSTANTS) for _ in range(pred_arity)]
            if predicate == "val":
                args = [rnd.choice(variables), "N"]
            text, time_var = self._extended(predicate, args, extensional, k)
            body.append(text)
            bound |= {a for a in args if a[0].isupper()}
            if time_var:
                time_vars.append(time_var)
                bound.add(time_var)
        numeric = [v for v in bound if v == "N" or v.startswith("T")]
        if numeric and rnd.random() < 0.5:
            v = rnd.choice(numeric)
            if rnd.random() < 0.5:
                body.append(f"{v} {rnd.choice(['<', '<=', '>', '>=', '=', '!='])} {rnd.randint(1, 6)}")
            else:
                body.append(f"M = {v} + {rnd.randint(0, 2)}")
                body.append(f"M {rnd.choice(['<', '>=', '!='])} {rnd.randint(2, 8)}")
                bound.add("M")
        if layer > 0 and rnd.random() < 0.4:
            predicate, pred_arity = rnd.choice(
                [(p, a) for lower in self.layers[:layer] for p, a in lower.items()] + list(self.data.items())
            )
            candidates = sorted(v for v in bound if v in variables) or CONSTANTS
            args = [rnd.choice(candidates) for _ in range(pred_arity)]
            if predicate == "val":
                args = [rnd.choice(candidates), str(rnd.choice(NUMBERS))]
            text, _ = self._extended(predicate, args, predicate in self.data, 9, allow_at_var=False)
            body.append("not " + text)
        head_candidates = sorted(v for v in bound if v in variables) or CONSTANTS
        head_args = [rnd.choice(head_candidates) for _ in range(arity)]
        head_text = f"{head}({','.join(head_args)})" if arity else head
        if time_vars and rnd.random() < 0.4:
            head_text = f"@{rnd.choice(time_vars)} {head_text}"
        return f"{head_text} :- {', '.join(body)} ."

    def _body_predicate(self, layer: int, allow_same: bool):
        rnd = self.random
        options = [(p, a, True) for p, a in self.data.items()]
        for lower in self.layers[:layer]:
            options += [(p, a, False) for p, a in lower.items()]
        if allow_same and rnd.random() < 0.25:
            options += [(p, a, False) for p, a in self.layers[layer].items()]
        return rnd.choice(options)

    def _extended(self, predicate, args, extensional, k, allow_at_var=True):
        rnd = self.random
        atom = f"{predicate}({','.join(args)})" if args else predicate
        if self.data_windows_only and not extensional:
            return atom, None
        kinds = ["plain", "diamond", "box", "at", "at_whole"]
        weights = [2, 3, 2 + 6 * self.box_bias, 2, 1]
        kind = rnd.choices(kinds, weights)[0]
        if kind == "plain":
            return atom, None
        count = extensional and rnd.random() < 0.3
        window = f"[COUNT {rnd.choice([1, 2, 3, 5])}]" if count else f"[RANGE {rnd.choice([0, 1, 2, 3, 5])}]"
        if kind == "diamond":
            return f"{window} DIAMOND {atom}", None
        if kind == "box":
            return f"{window} BOX {atom}", None
        time = f"T{k}" if allow_at_var else str(rnd.randint(0, 6))
        if kind == "at_whole" and not count:
            return f"@{time} {atom}", (time if allow_at_var else None)
        return f"{window} @{time} {atom}", (time if allow_at_var else None)


class CornerGenerator:
    """Programs over the corners the first generator leaves out: one predicate name with two
    arities (in the data and in heads), constant time points in `@`, head times computed
    (`@U h :- [RANGE n] @T p, U = T + k`) or written (`@3 h`), constants in heads, negative
    numbers in the data and in comparisons."""

    DATA = [("p", 1), ("p", 2), ("q", 1), ("val", 2)]
    LAYERS = [[("h", 1), ("h", 2)], [("g", 0), ("g", 1)], [("k", 1)]]

    def __init__(self, seed: int):
        self.random = random.Random(seed)

    def program(self) -> str:
        rules = []
        for layer, heads in enumerate(self.LAYERS):
            for head, arity in heads:
                for _ in range(self.random.randint(1, 2)):
                    rules.append(self.rule(layer, head, arity))
        return "\n".join(rules) + "\n"

    def stream(self, length: int = 10) -> dict[int, list[str]]:
        rnd = self.random
        stream: dict[int, list[str]] = {}
        for t in range(length):
            atoms = []
            for _ in range(rnd.randint(0, 3)):
                predicate, arity = rnd.choice(self.DATA)
                if predicate == "val":
                    atoms.append(f"val({rnd.choice(CONSTANTS)},{rnd.choice([-1, 0, 1, 2, 3])})")
                else:
                    atoms.append(f"{predicate}({','.join(rnd.choice(CONSTANTS) for _ in range(arity))})")
            stream[t] = atoms
        return stream

    def _atom(self, predicate: str, arity: int, variables: list[str]) -> str:
        if arity == 0:
            return predicate
        if predicate == "val":
            return f"val({self.random.choice(variables)},N)"
        return f"{predicate}({','.join(self.random.choice(variables + ['a']) for _ in range(arity))})"

    def rule(self, layer: int, head: str, arity: int) -> str:
        rnd = self.random
        variables = ["X", "Y"]
        lower = [a for heads in self.LAYERS[:layer] for a in heads]
        body, bound, times = [], set(), []
        for k in range(rnd.randint(1, 3)):
            predicate, pred_arity = rnd.choice(self.DATA + lower)
            atom = self._atom(predicate, pred_arity, variables)
            kind = rnd.choice(["plain", "at_const", "at_var", "diamond", "at_whole"])
            window = f"[RANGE {rnd.choice([0, 1, 2, 4])}] "
            if kind == "plain":
                text = atom
            elif kind == "at_const":
                text = f"{window if rnd.random() < 0.7 else ''}@{rnd.randint(0, 8)} {atom}"
            elif kind == "diamond":
                text = f"{window}DIAMOND {atom}"
            else:
                time = f"T{k}"
                text = f"{window if kind == 'at_var' else ''}@{time} {atom}"
                times.append(time)
                bound.add(time)
            body.append(text)
            bound |= {v for v in variables + ["N"] if v in atom}
        if "N" in bound and rnd.random() < 0.6:
            body.append(f"N {rnd.choice(['<', '>=', '!=', '='])} {rnd.choice([-1, 0, 2])}")
        if lower and rnd.random() < 0.4:
            predicate, pred_arity = rnd.choice(lower)
            names = sorted(bound & set(variables)) or ["a"]
            atom = f"{predicate}({','.join(rnd.choice(names) for _ in range(pred_arity))})" if pred_arity else predicate
            body.append(f"not {atom}")
        names = sorted(bound & set(variables)) or ["a", "b"]
        head_text = f"{head}({','.join(rnd.choice(names + ['c']) for _ in range(arity))})" if arity else head
        choice = rnd.random()
        if times and choice < 0.45:
            body.append(f"U = {rnd.choice(times)} {rnd.choice(['+', '-'])} {rnd.randint(0, 3)}")
            head_text = f"@U {head_text}"
        elif choice < 0.6:
            head_text = f"@{rnd.randint(0, 9)} {head_text}"
        elif times and choice < 0.75:
            head_text = f"@{rnd.choice(times)} {head_text}"
        return f"{head_text} :- {', '.join(body)} ."


class LoopGenerator:
    """Small programs with loops through `not` (and, with `loops=False`, without), small enough
    for the guess-and-check reference: few constants, windows over data and over derived
    atoms, `@T` heads placing atoms earlier in the window, comparisons on time points."""

    DATA = [("d0", 0), ("d1", 1), ("d2", 1)]
    DERIVED = [("x", 0), ("y", 1), ("z", 1), ("w", 0)]

    def __init__(self, seed: int, *, loops: bool = True):
        self.random = random.Random(seed)
        self.loops = loops

    def program(self) -> str:
        rnd = self.random
        rules = []
        for index, (head, arity) in enumerate(self.DERIVED):
            readable = self.DERIVED if self.loops else self.DERIVED[:index]
            for _ in range(rnd.randint(1, 2)):
                rules.append(self.rule(head, arity, readable))
        if self.loops and rnd.random() < 0.6:  # an even loop: a choice between two atoms
            (one, two) = rnd.sample([("y", "z"), ("x", "w")], 1)[0]
            guard = rnd.choice(["d1(X)", "[RANGE 1] DIAMOND d2(X)"]) if one == "y" else rnd.choice(["d0", "[RANGE 2] DIAMOND d0"])
            var = "(X)" if one == "y" else ""
            rules.append(f"{one}{var} :- {guard}, not {two}{var} .")
            rules.append(f"{two}{var} :- {guard}, not {one}{var} .")
        return "\n".join(rules) + "\n"

    def stream(self, length: int = 6) -> dict[int, list[str]]:
        rnd = self.random
        stream = {}
        for t in range(length):
            atoms = set()
            for _ in range(rnd.randint(0, 3)):
                predicate, arity = rnd.choice(self.DATA)
                atoms.add(f"{predicate}({rnd.choice('ab')})" if arity else predicate)
            stream[t] = sorted(atoms)
        return stream

    def _atom(self, predicate: str, arity: int, names: list[str]) -> str:
        return f"{predicate}({self.random.choice(names)})" if arity else predicate

    def rule(self, head: str, arity: int, readable: list) -> str:
        rnd = self.random
        body, bound, times = [], set(), []
        predicate, pred_arity = rnd.choice(self.DATA)
        first = self._atom(predicate, pred_arity, ["X", "a"])
        kind = rnd.choice(["plain", "diamond", "at"])
        size = rnd.choice([0, 1, 2])
        if kind == "plain":
            body.append(first)
        elif kind == "diamond":
            body.append(f"[RANGE {size}] DIAMOND {first}")
        else:
            body.append(f"[RANGE {size}] @T {first}")
            times.append("T")
        if "X" in first:
            bound.add("X")
        names = sorted(bound) or ["a"]
        for _ in range(rnd.randint(0, 2)):
            if not readable:
                break
            predicate, pred_arity = rnd.choice(readable)
            atom = self._atom(predicate, pred_arity, names + ["b"])
            modality = rnd.choice(["", "", f"[RANGE {rnd.choice([1, 2])}] DIAMOND ", f"[RANGE {rnd.choice([1, 2])}] BOX "])
            negated = rnd.random() < 0.6
            body.append(("not " if negated else "") + modality + atom)
        if times and rnd.random() < 0.3:
            body.append(f"T {rnd.choice(['<', '>=', '!='])} {rnd.randint(1, 4)}")
        head_names = sorted(bound) or ["a", "b"]
        head_text = f"{head}({rnd.choice(head_names)})" if arity else head
        if times and arity == 0 and rnd.random() < 0.5:
            head_text = f"@T {head_text}"
        return f"{head_text} :- {', '.join(body)} ."
