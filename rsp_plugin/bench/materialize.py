"""Barbieri et al. (2010)'s experiment: maintaining a materialization while a window slides.

Trees of a transitive property `isIn` (branching 3, depth 5): the trees are
background knowledge, never expiring; leaves attached to their deepest nodes
are streamed, a slide (one time point) bringing k new leaf triples while the k
of w + 1 slides ago expire (a window of w: a triple seen at t holds on
[t, t + w]). Each leaf triple entails one isIn triple per ancestor, so k sets
the share of the materialization that changes per slide, (added + removed) /
size; the number of trees is chosen so that the materialization has about the
requested size. Leaf names are recycled once they have left the window, so the
dictionary stops growing and memory can stay flat.

Per slide, in one run, on the same window contents:

    incremental    Materializer.advance_to(t, arriving leaf triples): expiry by inspection
                   of expiration times, and the new triples' consequences (OWL 2 RL rules)
    from scratch   the closure of background + window with our engine (a new Materializer,
                   everything as never-expiring input; its construction is not timed)
    owlrl          owlrl's OWLRL_Semantics closure of background + window (graph built
                   before the timer)

All three run the full OWL 2 RL rule set with `isIn a owl:TransitiveProperty`;
the incremental materialization is checked equal to the from-scratch one at
every slide where both run. Equivalent C-SPARQL query (Barbieri et al.'s Fig. 2
style): REGISTER QUERY q AS SELECT ?x ?y FROM <trees> FROM STREAM <leaves>
[RANGE w STEP 1] WHERE { ?x ex:isIn ?y } under OWL 2 RL entailment.
"""

from __future__ import annotations

import gc
import math
import random
import statistics
import time
import tracemalloc
from dataclasses import dataclass

from ..core.terms import RDF_TYPE, Dictionary
from ..reasoning import Materializer, to_graph

OWL_TRANSITIVE = "<http://www.w3.org/2002/07/owl#TransitiveProperty>"
IS_IN = "<http://example.org/isIn>"
BRANCHING = 3
DEPTH = 5
SHARES = [0.1, 1.0, 2.5, 5.0, 13.0, 20.0]


@dataclass
class Forest:
    """The trees (background, as id triples) and the nodes leaves attach to."""

    terms: Dictionary
    background: list[tuple[int, int, int]]
    attach_points: list[int]
    is_in: int


def build_forest(trees: int, terms: Dictionary) -> Forest:
    is_in = terms.intern(IS_IN)
    background = [(is_in, terms.intern(RDF_TYPE), terms.intern(OWL_TRANSITIVE))]
    attach = []
    for tree in range(trees):
        level = [terms.intern(f"<http://example.org/tree{tree}/n0>")]
        count = 1
        for depth in range(1, DEPTH + 1):
            below = []
            for parent in level:
                for _ in range(BRANCHING):
                    child = terms.intern(f"<http://example.org/tree{tree}/n{count}>")
                    count += 1
                    background.append((child, is_in, parent))
                    below.append(child)
            level = below
        attach.extend(level)
    return Forest(terms, background, attach, is_in)


@dataclass
class Setting:
    share: float          # requested % of the materialization changing per slide
    trees: int
    leaves_per_slide: int


def plan(size: int, share: float, window: int) -> Setting:
    """Trees for a materialization of about `size` triples, and leaves per slide for `share` % of it to change.

    Once the window is full, a slide adds and removes k leaf triples, each entailing c = DEPTH + 1
    isIn triples: the change is 2kc of a materialization M = B + (w + 1)kc (B: the trees' closure),
    so k = share * B / (c * (2 - share * (w + 1))).
    """
    per_leaf = DEPTH + 1
    fraction = share / 100
    per_tree = sum(d * BRANCHING**d for d in range(1, DEPTH + 1))
    background_share = 1 - fraction * (window + 1) / 2     # of M, once the window is full
    trees = max(1, round(size * background_share / per_tree))
    closure = trees * per_tree
    leaves = max(1, round(fraction * closure / (per_leaf * (2 - fraction * (window + 1)))))
    return Setting(share, trees, leaves)


def leaf_stream(forest: Forest, setting: Setting, window: int, slides: int, seed: int = 7):
    """Per slide the leaf triples arriving; leaf names are reused once they left the window."""
    draw = random.Random(seed)
    terms = forest.terms
    pool = (window + 2) * setting.leaves_per_slide
    leaves = [terms.intern(f"<http://example.org/leaf{i}>") for i in range(pool)]
    stream = []
    for slide in range(slides):
        first = slide * setting.leaves_per_slide
        stream.append([
            (leaves[(first + i) % pool], forest.is_in, draw.choice(forest.attach_points))
            for i in range(setting.leaves_per_slide)
        ])
    return stream


def time_incremental(forest, stream, window, measured_from):
    m = Materializer("owl-rl", window=window, background=forest.background, terms=forest.terms, start=0)
    begin = time.process_time()
    m.advance_to(0)
    background_closure = time.process_time() - begin
    seconds, shares, sizes = [], [], []
    for slide, arriving in enumerate(stream, start=1):
        begin = time.process_time()
        report = m.advance_to(slide, arriving)
        elapsed = time.process_time() - begin
        if slide >= measured_from:
            size = len(m.holding())
            seconds.append(elapsed)
            shares.append((len(report.added) + len(report.removed)) / size * 100)
            sizes.append(size)
    return m, background_closure, seconds, shares, sizes


def window_contents(stream, slide, window):
    return [t for s in range(max(1, slide - window), slide + 1) for t in stream[s - 1]]


def time_from_scratch(forest, stream, slide, window):
    """Our engine's closure of background + window, all as never-expiring input."""
    given = forest.background + window_contents(stream, slide, window)
    m = Materializer("owl-rl", window=None, background=given, terms=forest.terms, start=0)
    gc.collect()
    begin = time.process_time()
    m.advance_to(0)
    return time.process_time() - begin, set(m.holding())


def time_owlrl(forest, stream, slide, window):
    import owlrl

    graph = to_graph(forest.background + window_contents(stream, slide, window), forest.terms)
    gc.collect()
    begin = time.process_time()
    owlrl.DeductiveClosure(owlrl.OWLRL_Semantics, axiomatic_triples=False, datatype_axioms=False).expand(graph)
    return time.process_time() - begin


def memory_profile(size, window, slides_after_fill, out):
    """Traced Python memory (everything the materializer holds) from the window full on, at 1% change."""
    terms = Dictionary()
    setting = plan(size, 1.0, window)
    forest = build_forest(setting.trees, terms)
    fill = window + 1
    stream = leaf_stream(forest, setting, window, fill + slides_after_fill)
    gc.collect()
    tracemalloc.start()
    m = Materializer("owl-rl", window=window, background=forest.background, terms=terms, start=0)
    m.advance_to(0)
    readings = []
    marks = {fill + slides_after_fill * k // 8 for k in range(9)}
    for slide, arriving in enumerate(stream, start=1):
        m.advance_to(slide, arriving)
        if slide in marks:
            gc.collect()
            readings.append((slide, tracemalloc.get_traced_memory()[0], len(m.holding())))
    tracemalloc.stop()
    shown = ", ".join(f"{b / 1e6:.2f} MB at slide {s}" for s, b, _ in readings)
    middle = readings[len(readings) // 2]
    second_half = (readings[-1][1] - middle[1]) / middle[1] * 100
    holding = sorted({n for _, _, n in readings})
    out(f"  memory (traced, 1% change, {holding[0]:,}-{holding[-1]:,} triples holding), window full at slide {fill}:")
    out(f"    {shown}")
    out(f"    {second_half:+.1f}% from slide {middle[0]} to {readings[-1][0]} (before that, the hash tables of the indexes and")
    out("    of the output grow to their steady size: dicts keep room for the churn of triples coming and going)")


def _ms(seconds: float) -> str:
    return f"{seconds * 1000:,.2f} ms" if seconds < 1 else f"{seconds:,.2f} s"


def crossover(rows) -> str:
    """Where incremental maintenance costs as much as recomputing from scratch (share of change, %)."""
    points = [(r["share"], r["scratch"] / r["incremental"]) for r in rows]
    for (s1, r1), (s2, r2) in zip(points, points[1:]):
        if r1 >= 1 > r2:  # interpolated on log(ratio)
            fraction = math.log(r1) / (math.log(r1) - math.log(r2))
            return f"at about {s1 + fraction * (s2 - s1):.1f}% change"
    if points and points[-1][1] >= 1:
        return f"none up to {points[-1][0]:g}% (incremental still {points[-1][1]:.1f}x faster there)"
    return f"below {points[0][0]:g}%" if points else "not measured"


def run(options, out=print) -> int:
    quick = options.quick
    sizes = options.sizes or ([2000] if quick else [10_000, 100_000])
    shares = options.changes or SHARES
    windows = options.windows or [4]
    window = windows[0]
    slides = options.slides or (4 if quick else 20)
    owlrl_slides = options.owlrl_slides
    if owlrl_slides is None:
        owlrl_slides = 1 if quick else 3

    out("Barbieri et al. (2010): materialization of transitive isIn trees (branching 3, depth 5) under OWL 2 RL")
    out(f"rules; trees as background, leaves streamed through a window of {window} time points (a triple holds")
    out(f"on [t, t + {window}]); {slides} slides measured after the window is full; medians per slide.")
    out("incremental: expiration times; from scratch: our engine on background + window; owlrl: OWLRL_Semantics.")
    out("Times are CPU time of this process (the machine may be shared).")
    for size in sizes:
        out("")
        scratch_slides = slides if size <= 20_000 else min(slides, 3)
        size_owlrl = owlrl_slides if size <= 20_000 else min(owlrl_slides, 1)
        header = (f"{'change':>7} {'measured':>9} {'size':>8} {'incremental':>13} {'from scratch':>13} "
                  f"{'owlrl':>10} {'scratch/incr':>13} {'owlrl/incr':>11}")
        out(f"materialization ~{size:,} triples ({scratch_slides} from-scratch and {size_owlrl} owlrl slides "
            "per row)")
        out(header)
        out("-" * len(header))
        rows = []
        for share in shares:
            terms = Dictionary()
            setting = plan(size, share, window)
            forest = build_forest(setting.trees, terms)
            fill = window + 1
            stream = leaf_stream(forest, setting, window, fill + slides)
            measured_from = fill + 1
            m, background_closure, seconds, measured, holding = time_incremental(forest, stream, window, measured_from)
            incremental = statistics.median(seconds)
            scratch_times, owlrl_times = [], []
            last = len(stream)
            checked = []
            for slide in range(last - scratch_slides + 1, last + 1):
                elapsed, closure = time_from_scratch(forest, stream, slide, window)
                scratch_times.append(elapsed)
                if slide == last:
                    checked.append(closure == set(m.holding()))
            for slide in range(last - size_owlrl + 1, last + 1) if size_owlrl else ():
                owlrl_times.append(time_owlrl(forest, stream, slide, window))
            if not all(checked):
                out(f"  MISMATCH: incremental and from-scratch materializations differ at {share}%")
                return 1
            scratch = statistics.median(scratch_times)
            owl = statistics.median(owlrl_times) if owlrl_times else None
            rows.append({"share": share, "incremental": incremental, "scratch": scratch, "owlrl": owl,
                         "background": background_closure, "trees": setting.trees})
            out(f"{share:>6g}% {statistics.median(measured):>8.2f}% {int(statistics.median(holding)):>8,} "
                f"{_ms(incremental):>13} {_ms(scratch):>13} {(_ms(owl) if owl else '-'):>10} "
                f"{scratch / incremental:>12.1f}x {(f'{owl / incremental:.0f}x' if owl else '-'):>11}")
        out(f"  crossover (incremental as slow as from scratch): {crossover(rows)}")
        out("  the background's closure, computed once at the first time point: "
            + ", ".join(f"{_ms(r['background'])} ({r['trees']} trees)" for r in rows))
        memory_profile(size, window, 40 if quick else 600, out)
    return 0
