"""The Laser2 paper's experiments (Section 5; ../shared/benchmarks.md): pruning on and off in one run.

    single    q(X,Y) :- [RANGE n] DIAMOND p(X,Y)   and   [RANGE n] BOX p(X,Y);  m atoms p(a_i,a_i) each t
    best      m(X,Y) :- [RANGE n] DIAMOND p(X,Y), [RANGE n] BOX q(X,Y);  q missing when t mod n = 0
    worst     m(X,Y) :- [RANGE 10] DIAMOND p(X,Y), [RANGE n] BOX q(X,Y), n in {1, 2, 3};  no q at all
    toggle    as worst, but q present at even time points only: the rule wakes every other point
              (our own worst case: sleeping relations replay their buffer each time)
    chain     h1 :- [RANGE n] DIAMOND p, [RANGE n] BOX q; h2 :- h1; ... hw :- hw-1;  300 p atoms, no q

Each setting: 300 time points, the data of each given by predicate (columnar, as a
micro-batch comes), the median time per input fact over repeated runs,
the number of formula evaluations (body literals of the rules evaluated, as the
paper's Figs. 2a-4a count them), with and without pruning, and the ratio.
"""

from __future__ import annotations

import statistics
import time

from ..lars.engine import IncrementalEngine
from ..lars.syntax import parse_program

BEST = "m(X,Y) :- [RANGE {n}] DIAMOND p(X,Y), [RANGE {n}] BOX q(X,Y) ."
WORST = "m(X,Y) :- [RANGE 10] DIAMOND p(X,Y), [RANGE {n}] BOX q(X,Y) ."


def _chain(n: int, w: int) -> str:
    rules = [f"h1(X,Y) :- [RANGE {n}] DIAMOND p(X,Y), [RANGE {n}] BOX q(X,Y) ."]
    rules += [f"h{k}(X,Y) :- h{k - 1}(X,Y) ." for k in range(2, w + 1)]
    return "\n".join(rules)


def _stream(m: int, points: int, q_at=lambda t: False) -> list[list[tuple[str, tuple]]]:
    atoms = [("p", (f"a{i}", f"a{i}")) for i in range(1, m + 1)]
    q_atoms = [("q", (f"a{i}", f"a{i}")) for i in range(1, m + 1)]
    return [atoms + (q_atoms if q_at(t) else []) for t in range(points)]


def experiments(quick: bool):
    """(experiment, setting label, program text, stream) for every setting."""
    points = 60 if quick else 300
    windows = [10, 50] if quick else [10, 50, 100]
    rates = [100] if quick else [100, 500, 1000]
    for n in windows:
        for m in rates:
            yield "single", f"DIAMOND n={n} m={m}", f"q(X,Y) :- [RANGE {n}] DIAMOND p(X,Y) .", _stream(m, points)
            yield "single", f"BOX n={n} m={m}", f"q(X,Y) :- [RANGE {n}] BOX p(X,Y) .", _stream(m, points)
    for n in windows:
        for m in rates:
            yield "best", f"n={n} m={m}", BEST.format(n=n), _stream(m, points, lambda t, n=n: t % n != 0)
    for n in (1, 2, 3):
        for m in rates:
            yield "worst", f"n={n} m={m}", WORST.format(n=n), _stream(m, points)
            yield "toggle", f"n={n} m={m}", WORST.format(n=n), _stream(m, points, lambda t: t % 2 == 0)
    for w in ([10] if quick else [10, 20]):
        for n in windows:
            yield "chain", f"w={w} n={n}", _chain(n, w), _stream(300, points)


def measure(program_text: str, stream, pruning: bool, repeat: int) -> tuple[float, int]:
    """Median µs per input fact, and formula evaluations of one run."""
    program = parse_program(program_text)
    terms = program.terms
    facts = []  # columnar input, as a micro-batch would come: predicate -> argument tuples
    for atoms in stream:
        grouped: dict[int, list[tuple]] = {}
        for predicate, args in atoms:
            grouped.setdefault(terms.intern(predicate), []).append(tuple(terms.intern(a) for a in args))
        facts.append(grouped)
    fed = sum(len(batch) for grouped in facts for batch in grouped.values())
    timings = []
    evaluations = 0
    for _ in range(repeat):
        engine = IncrementalEngine(program, start=0, pruning=pruning)
        evaluations = 0
        begin = time.perf_counter()
        for t, atoms in enumerate(facts):
            evaluations += engine.advance_to(t, atoms).formula_evaluations
        timings.append((time.perf_counter() - begin) / fed * 1e6)
    return statistics.median(timings), evaluations


def run(options, out=print) -> int:
    repeat = 1 if options.quick else options.repeat
    chosen = set(options.workloads or ["single", "best", "worst", "toggle", "chain"])
    out(f"Laser2 experiments: median µs per input fact over {repeat} runs; formula evaluations per run")
    header = f"{'experiment':<8} {'setting':<18} {'evals on':>10} {'evals off':>10} {'µs on':>8} {'µs off':>8} {'speed-up':>9}"
    out(header)
    out("-" * len(header))
    for experiment, label, program, stream in experiments(options.quick):
        if experiment not in chosen:
            continue
        on_us, on_evals = measure(program, stream, True, repeat)
        off_us, off_evals = measure(program, stream, False, repeat)
        out(f"{experiment:<8} {label:<18} {on_evals:>10} {off_evals:>10} {on_us:>8.2f} {off_us:>8.2f} {off_us / on_us:>8.1f}x")
    return 0
