"""The Laser2 paper's experiments (Section 5; ../shared/benchmarks.md): pruning on and off in one run.

    single    q(X,Y) :- [RANGE n] DIAMOND p(X,Y)   and   [RANGE n] BOX p(X,Y);  m atoms p(a_i,a_i) each t
    best      m(X,Y) :- [RANGE n] DIAMOND p(X,Y), [RANGE n] BOX q(X,Y);  q missing when t mod 2(n+1) = 0
    worst     m(X,Y) :- [RANGE 10] DIAMOND p(X,Y), [RANGE n] BOX q(X,Y), n in {1, 2, 3};
              q missing when t mod (n+2) = 0
    toggle    as worst, but q present at even time points only: the rule wakes every other point
              (our own worst case: sleeping relations replay their buffer each time)
    chain     h1 :- [RANGE n] DIAMOND p, [RANGE n] BOX q; h2 :- h1; ... hw :- hw-1;  300 p atoms,
              q missing when t mod 2(n+1) = 0

A [RANGE n] window covers n + 1 time points (DESIGN.md, "Time"), so the paper's "q missing
when t mod n = 0" (or no q at all) leaves every BOX window with a gap: nothing is ever
derived, and "the same output with and without pruning" would prove nothing. Here the gaps
leave windows without one (best and chain: half the time points derive; worst: one in n + 2),
and the "derived" column counts the (time point, atom) pairs of the output.

Each setting: 300 time points, the data of each given by predicate (columnar, as a
micro-batch comes), the median time per input fact over repeated runs,
the number of formula evaluations (body literals of the rules evaluated, as the
paper's Figs. 2a-4a count them), with and without pruning, and the ratio (evaluation
only); then `rsp-plugin reason` on the same program and stream written to files, as a
whole process (read, evaluate, print), with and without --no-pruning: wall seconds and
their ratio, and whether both printed the same.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

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
            yield "best", f"n={n} m={m}", BEST.format(n=n), _stream(m, points, lambda t, n=n: t % (2 * (n + 1)) != 0)
    for n in (1, 2, 3):
        for m in rates:
            yield "worst", f"n={n} m={m}", WORST.format(n=n), _stream(m, points, lambda t, n=n: t % (n + 2) != 0)
            yield "toggle", f"n={n} m={m}", WORST.format(n=n), _stream(m, points, lambda t: t % 2 == 0)
    for w in ([10] if quick else [10, 20]):
        for n in windows:
            yield "chain", f"w={w} n={n}", _chain(n, w), _stream(300, points, lambda t, n=n: t % (2 * (n + 1)) != 0)


def measure(program_text: str, stream, pruning: bool, repeat: int) -> tuple[float, int, list]:
    """Median µs per input fact, formula evaluations of one run, and its output per time point."""
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
    output: list = []
    for _ in range(repeat):
        engine = IncrementalEngine(program, start=0, pruning=pruning)
        evaluations = 0
        output = []
        begin = time.perf_counter()
        for t, atoms in enumerate(facts):
            evaluations += engine.advance_to(t, atoms).formula_evaluations
            output.append(len(engine.output))
        timings.append((time.perf_counter() - begin) / fed * 1e6)
    return statistics.median(timings), evaluations, output


def whole_process(program_text: str, stream, folder: Path) -> tuple[float, float, bool]:
    """`rsp-plugin reason` on files, with and without pruning: wall seconds each, same output?"""
    program = folder / "program.lars"
    program.write_text(program_text + "\n")
    data = folder / "stream.stream"
    with data.open("w") as handle:
        for t, atoms in enumerate(stream):
            for predicate, args in atoms:
                handle.write(f"{t} {predicate}({','.join(args)})\n")
    command = [sys.executable, "-m", "rsp_plugin.cli", "reason", str(program), "--stream", str(data)]
    runs = []
    for extra in ([], ["--no-pruning"]):
        begin = time.perf_counter()
        done = subprocess.run(command + extra, capture_output=True, text=True)
        runs.append((time.perf_counter() - begin, done.stdout))
    return runs[0][0], runs[1][0], runs[0][1] == runs[1][1]


def run(options, out=print) -> int:
    repeat = 1 if options.quick else options.repeat
    chosen = set(options.workloads or ["single", "best", "worst", "toggle", "chain"])
    out(f"Laser2 experiments: median µs per input fact over {repeat} runs; formula evaluations per run;")
    out("derived: (time point, atom) pairs of the output; whole: rsp-plugin reason on files, wall seconds")
    header = (f"{'experiment':<8} {'setting':<18} {'derived':>8} {'evals on':>10} {'evals off':>10} {'µs on':>8}"
              f" {'µs off':>8} {'speed-up':>9} {'whole on':>9} {'whole off':>10} {'speed-up':>9} {'same':>5}")
    out(header)
    out("-" * len(header))
    with tempfile.TemporaryDirectory() as folder:
        for experiment, label, program, stream in experiments(options.quick):
            if experiment not in chosen:
                continue
            on_us, on_evals, on_output = measure(program, stream, True, repeat)
            off_us, off_evals, off_output = measure(program, stream, False, repeat)
            whole_on, whole_off, same_printed = whole_process(program, stream, Path(folder))
            same = "yes" if on_output == off_output and same_printed else "NO"
            out(f"{experiment:<8} {label:<18} {sum(on_output):>8} {on_evals:>10} {off_evals:>10} {on_us:>8.2f}"
                f" {off_us:>8.2f} {off_us / on_us:>8.1f}x {whole_on:>9.2f} {whole_off:>10.2f}"
                f" {whole_off / whole_on:>8.2f}x {same:>5}")
    return 0
