"""The Laser paper's micro-benchmarks (../shared/benchmarks.md), as workloads by name.

Each workload is a program and a stream generator over time points; the stream
is built (and its terms interned) before the timer starts. Time per input atom
= evaluation time / distinct atoms fed (an atom given twice at one time point is
one atom of the stream: the join stream gives each p atom twice, the box and
cooling streams repeat draws), every time point of the run evaluated, with the
change output (started / stopped) produced and serialization left out.

    name      program                                              stream at time point t
    diamond   q(X,Y) :- [RANGE n] DIAMOND p(X,Y) .                 N new atoms p(s_k, o_k), k = t*N + c
    box       z(X) :- [RANGE n] BOX p(X) .                         N draws p(r), r uniform in [0, N/3 + 1]
    join      q(X,Z) :- [RANGE n] DIAMOND p(X,Y), [RANGE n] DIAMOND p(Y,Z) .
                                                                   p(c_k, c_k+1), p(c_k+1, c_k+2), c = 0..N-1
    rules     R copies of the join, heads q1..qR (R = 10)          as join
    cooling   the program of the Laser paper's Fig. 4              N atoms temp(V), V uniform in [0, 200]
    ticker-a  Ticker's caching strategy (Fig. 2, A1)                 one alpha(V) per t, a mode kept for 2n
    ticker-b  Ticker's content retrieval (Fig. 3), loops through not   Abilene, setup B1 (bench/ticker.py)

The answer-stream table runs programs through the solver path (ground at t, clingo)
and the stratified ones also through the incremental engine, in the same run: µs per
distinct input atom and ms per time point, and whether both printed the same.

Equivalent C-SPARQL of `diamond`: REGISTER QUERY q AS SELECT ?x ?y FROM STREAM <s>
[RANGE n STEP 1] WHERE { ?x <p> ?y }; of `join`: ... WHERE { ?x <p> ?y . ?y <p> ?z }.
"""

from __future__ import annotations

import random
import statistics
import time
from dataclasses import dataclass
from typing import Callable

from ..asp.engine import AnswerStreamEngine
from ..lars.engine import IncrementalEngine
from ..lars.reference import ReferenceEvaluator
from ..lars.syntax import parse_program
from . import ticker

COOLING = """
@T steam(V)  :- [RANGE {n}] @T temp(V), V >= 100 .
@T liquid(V) :- [RANGE {n}] @T temp(V), V >= 1, V < 100 .
@T isSteam   :- [RANGE {n}] @T steam(V) .
@T isLiquid  :- [RANGE {n}] @T liquid(V) .
alarm        :- [RANGE {n}] BOX isSteam .
normal       :- [RANGE {n}] BOX isLiquid .
freeze       :- not alarm, not normal .
veryHot(T)   :- [RANGE {n}] @T steam(V), V >= 150 .
veryCold(T)  :- [RANGE {n}] @T liquid(V), V = 1 .
"""
JOIN = "{head}(X,Z) :- [RANGE {n}] DIAMOND p(X,Y), [RANGE {n}] DIAMOND p(Y,Z) ."


@dataclass(frozen=True)
class Workload:
    name: str
    program: Callable[[int], str]
    stream: Callable[[int, int, int], list[list[tuple[str, tuple]]]]
    #: The rate and time points the reference evaluator is compared at (it joins by scanning windows).
    reference_rate: int = 200
    reference_points: int = 30


def _diamond_stream(rate, points, seed):
    return [[("p", (f"s{t * rate + c}", f"o{t * rate + c}")) for c in range(rate)] for t in range(points)]


def _box_stream(rate, points, seed):
    draw = random.Random(seed)
    top = rate // 3 + 1
    return [[("p", (f"r{draw.randint(0, top)}",)) for _ in range(rate)] for _ in range(points)]


def _join_stream(rate, points, seed):
    stream = []
    for t in range(points):
        atoms = []
        for c in range(rate):
            k = t * rate + c
            atoms.append(("p", (f"c{k}", f"c{k + 1}")))
            atoms.append(("p", (f"c{k + 1}", f"c{k + 2}")))
        stream.append(atoms)
    return stream


def _cooling_stream(rate, points, seed):
    draw = random.Random(seed)
    return [[("temp", (str(draw.randint(0, 200)),)) for _ in range(rate)] for _ in range(points)]


def cross_engine_stream(points: int, rate: int, domain: int, seed: int) -> dict[int, list[str]]:
    """The cross-engine check of ../shared/benchmarks.md (`T N DOM SEED`): at each t, N distinct
    pairs of the DOM x DOM grid (random.Random(SEED).sample, row-major grid), as sorted atoms."""
    draw = random.Random(seed)
    grid = [(i, j) for i in range(domain) for j in range(domain)]
    return {t: [f"p({i},{j})" for i, j in sorted(draw.sample(grid, rate))] for t in range(points)}


WORKLOADS = {
    "diamond": Workload("diamond", lambda n: f"q(X,Y) :- [RANGE {n}] DIAMOND p(X,Y) .", _diamond_stream),
    "box": Workload("box", lambda n: f"z(X) :- [RANGE {n}] BOX p(X) .", _box_stream),
    "join": Workload("join", lambda n: JOIN.format(head="q", n=n), _join_stream, reference_rate=10),
    "rules": Workload(
        "rules", lambda n: "\n".join(JOIN.format(head=f"q{r}", n=n) for r in range(1, 11)), _join_stream,
        reference_rate=4, reference_points=15,
    ),
    "cooling": Workload("cooling", lambda n: COOLING.format(n=n), _cooling_stream),
}


def build(workload: Workload, window: int, rate: int, points: int, seed: int = 1):
    """The parsed program and the stream as facts of ids, ready before any timer."""
    program = parse_program(workload.program(window), f"<bench {workload.name}>")
    terms = program.terms
    stream = [
        [(terms.intern(predicate), tuple(terms.intern(a) for a in args)) for predicate, args in atoms]
        for atoms in workload.stream(rate, points, seed)
    ]
    return program, stream


def distinct_atoms(stream) -> int:
    """Atoms of the stream: the same atom given twice at one time point is one."""
    return sum(len(set(atoms)) for atoms in stream)


def time_engine(program, stream, **options) -> tuple[float, int, int]:
    """Seconds to evaluate every time point; distinct atoms fed; total changes produced."""
    engine = IncrementalEngine(program, start=0, **options)
    changes = 0
    begin = time.perf_counter()
    for t, atoms in enumerate(stream):
        report = engine.advance_to(t, atoms)
        changes += len(report.started) + len(report.stopped)
    elapsed = time.perf_counter() - begin
    return elapsed, distinct_atoms(stream), changes


def time_reference(program, stream) -> tuple[float, int]:
    evaluator = ReferenceEvaluator(program, start=0)
    begin = time.perf_counter()
    for t, atoms in enumerate(stream):
        evaluator.advance_to(t, atoms)
    return time.perf_counter() - begin, distinct_atoms(stream)


def median_us_per_atom(runs: list[tuple[float, int]]) -> float:
    return statistics.median(seconds / atoms * 1e6 for seconds, atoms in runs)


def run(options, out=print) -> int:
    chosen = options.workloads or list(WORKLOADS) + list(ANSWER_WORKLOADS)
    unknown = [n for n in chosen if n not in WORKLOADS and n not in ANSWER_WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join([*WORKLOADS, *ANSWER_WORKLOADS])}")
        return 2
    names = [n for n in chosen if n in WORKLOADS]
    if names:
        _stream_table(names, options, out)
    answer = [n for n in chosen if n in ANSWER_WORKLOADS] + ([] if options.workloads else ["diamond", "cooling"])
    if answer:
        _answer_table(answer, options, out)
    return 0


def _stream_table(names, options, out) -> None:
    quick = options.quick
    windows = options.windows or ([1, 20] if quick else [1, 20, 40, 80])
    rates = options.rates or ([200] if quick else [200, 400, 800])
    points = 60 if quick else options.time_points
    repeat = 1 if quick else options.repeat

    out(f"LARS micro-benchmarks: {points} time points, median of {repeat} runs, µs per distinct input atom")
    out("no-sSNE: every rule evaluated in full at every time point (same run, first 100 time points);")
    out("reference: the naive oracle at a small rate [N] and 15-30 time points, against the engine")
    out("on the same input.")
    header = (
        f"{'workload':<9} {'n':>3} {'N':>4} {'engine':>8} {'no-sSNE':>9} {'ratio':>7}"
        f" {'reference':>16} {'ratio':>7}"
    )
    out(header)
    out("-" * len(header))
    for name in names:
        workload = WORKLOADS[name]
        for window in windows:
            for rate in rates:
                program, stream = build(workload, window, rate, points)
                engine_runs = [time_engine(program, stream)[:2] for _ in range(repeat)]
                engine_us = median_us_per_atom(engine_runs)
                # the full re-evaluation costs minutes at wide windows: measured once, on the first
                # 100 time points (still wider than every window, so its per-atom cost is, if anything, low)
                naive_us = median_us_per_atom([time_engine(program, stream[:100], semi_naive=False)[:2]])
                reference = ""
                if rate == rates[0] and window <= 40:
                    small_rate = workload.reference_rate
                    small_program, small_stream = build(workload, window, small_rate, workload.reference_points)
                    ref_us = median_us_per_atom([time_reference(small_program, small_stream)])
                    small_us = median_us_per_atom([time_engine(small_program, small_stream)[:2] for _ in range(3)])
                    reference = f"{ref_us:>10.1f} [{small_rate:>3}] {ref_us / small_us:>6.0f}x"
                out(
                    f"{name:<9} {window:>3} {rate:>4} {engine_us:>8.2f} {naive_us:>9.2f} "
                    f"{naive_us / engine_us:>6.1f}x {reference}"
                )


# answer streams: the solver path against the engine ------------------------------------------

#: name -> (program of n, stream of (n, rate, points), its rate, stratified)
ANSWER_WORKLOADS = {
    "ticker-a": (ticker.caching_program, lambda n, rate, points: ticker.caching_stream(n, points), 1),
    "ticker-b": (ticker.content_program, lambda n, rate, points: ticker.content_stream(n, points), None),
}


def _answer_setting(name: str, window: int, points: int):
    """(program text, stream of names) of an answer-stream workload; Laser's at rate 20."""
    if name in ANSWER_WORKLOADS:
        program, stream, _ = ANSWER_WORKLOADS[name]
        return program(window), stream(window, 0, points)
    workload = WORKLOADS[name]
    return workload.program(window), workload.stream(20, points, 1)


def time_answer_streams(program, stream, solver: bool) -> tuple[float, list]:
    """Seconds over every time point through the solver path (or the engine); the first
    answer (the engine's output) at each time point, and the answers per time point."""
    if solver:
        engine = AnswerStreamEngine(program, start=0, timeout=None, models="all")
    else:
        engine = IncrementalEngine(program, start=0)
    outputs, answers = [], 0
    begin = time.perf_counter()
    for t, atoms in enumerate(stream):
        step = engine.advance_to(t, atoms)
        if solver:
            answers += len(step.models)
        outputs.append(frozenset(engine.holding()))
    return time.perf_counter() - begin, outputs, answers


def _answer_table(names, options, out) -> None:
    quick = options.quick
    points = 40 if quick else min(options.time_points, 200)
    windows = [20] if quick else (options.windows or [20, 60])
    repeat = 1 if quick else options.repeat
    out("")
    out(f"Answer streams (Def. 5), {points} time points, median of {repeat} runs: the solver path (the rules")
    out("ground at each time point over the windows, clingo on the ground program: Ticker's one-shot mode)")
    out("against the incremental engine on the stratified programs, which print the same there (checked).")
    header = (f"{'workload':<9} {'n':>3} {'atoms/t':>7} {'engine µs/atom':>15} {'solver µs/atom':>15} {'ratio':>7}"
              f" {'engine ms/t':>12} {'solver ms/t':>12} {'answers/t':>10} {'same':>5}")
    out(header)
    out("-" * len(header))
    for name in names:
        for window in windows:
            text, names_stream = _answer_setting(name, window, points)
            program = parse_program(text, f"<bench {name}>", semantics="answer-stream")
            terms = program.terms
            stream = [[(terms.intern(p), tuple(terms.intern(a) for a in args)) for p, args in atoms]
                      for atoms in names_stream]
            atoms = distinct_atoms(stream)
            solver_runs = [time_answer_streams(program, stream, solver=True) for _ in range(repeat)]
            solver_s = statistics.median(r[0] for r in solver_runs)
            answers = solver_runs[0][2] / points
            if program.stratified:
                engine_runs = [time_answer_streams(program, stream, solver=False) for _ in range(repeat)]
                engine_s = statistics.median(r[0] for r in engine_runs)
                same = "yes" if engine_runs[0][1] == solver_runs[0][1] else "NO"
                engine_cells = (f"{engine_s / atoms * 1e6:>15.2f}", f"{(solver_s / engine_s):>6.0f}x",
                                f"{engine_s / points * 1e3:>12.3f}")
            else:
                same, engine_cells = "-", (f"{'-':>15}", f"{'-':>7}", f"{'-':>12}")
            out(f"{name:<9} {window:>3} {atoms / points:>7.1f} {engine_cells[0]} {solver_s / atoms * 1e6:>15.1f} "
                f"{engine_cells[1]} {engine_cells[2]} {solver_s / points * 1e3:>12.2f} {answers:>10.2f} {same:>5}")
