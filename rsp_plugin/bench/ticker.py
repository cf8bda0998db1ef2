"""Ticker's evaluation scenarios (Beck, Eiter, Folie 2017, Section 6) as benchmark workloads.

    ticker-a   caching strategy, Fig. 2, setup A1 (time windows): stratified; one alpha(V)
               per time point, a random mode (high / mid / low) kept for 2n time points
    ticker-b   content retrieval, Fig. 3, on the Abilene network (11 nodes, 14 links both
               ways), 2 items, quality levels 0-2, setup B1: at each time point with p = 0.1
               each item is requested at a random node, one item is cached at a random node,
               one random node is down; each node's level changes with p = 3/n. A loop
               through `not` (get / nGet): answer streams only

The programs are the ones of examples/ticker-*.lars with the window n as a parameter
and the background (nodes, links, items, levels) as facts.
"""

from __future__ import annotations

import random

CACHING = """
@T high :- [RANGE {n}] @T alpha(V), 18 <= V .
@T mid  :- [RANGE {n}] @T alpha(V), 12 <= V, V < 18 .
@T low  :- [RANGE {n}] @T alpha(V), V < 12 .
lfu    :- [RANGE {n}] BOX high .
lru    :- [RANGE {n}] BOX mid .
fifo   :- [RANGE {n}] BOX low .
done   :- lfu .
done   :- lru .
done   :- fifo .
random :- not done .
"""

CONTENT = """
need(I,N)     :- item(I), node(N), [RANGE {n}] DIAMOND req(I,N) .
avail(I,N)    :- item(I), node(N), [RANGE {n}] DIAMOND cache(I,N) .
get(I,N,M)    :- source(I,N,M), not nGet(I,N,M) .
nGet(I,N,M)   :- node(M), get(I,N,M2), M != M2 .
nGet(I,N,M)   :- source(I,N,M), source(I,N,M2), M != M2, qual(M,L), qual(M2,L2), L < L2 .
source(I,N,M) :- need(I,N), not avail(I,N), avail(I,M), reach(N,M) .
reach(N,M)    :- conn(N,M) .
reach(N,M)    :- reach(N,M2), conn(M2,M), M2 != M, N != M .
conn(N,M)     :- edge(N,M), not [RANGE {n}] BOX down(M) .
qual(N,L)     :- node(N), lev(L), lev(L2), L2 < L, [RANGE {n}] DIAMOND qLev(N,L), not [RANGE {n}] DIAMOND qLev(N,L2) .
"""

#: The Abilene backbone as Ticker uses it: a ring 0..10 with four chords.
ABILENE = [(k, k + 1) for k in range(10)] + [(0, 10), (1, 10), (2, 8), (3, 7)]
ITEMS = ["i1", "i2"]
LEVELS = [0, 1, 2]


def caching_program(n: int) -> str:
    return CACHING.format(n=n)


def content_program(n: int) -> str:
    facts = [f"node(n{k}) ." for k in range(11)]
    facts += [f"edge(n{a},n{b}) .  edge(n{b},n{a}) ." for a, b in ABILENE]
    facts += [f"item({i}) ." for i in ITEMS] + [f"lev({level}) ." for level in LEVELS]
    return CONTENT.format(n=n) + "\n".join(facts) + "\n"


def caching_stream(n: int, points: int, seed: int = 1) -> list[list[tuple[str, tuple]]]:
    draw = random.Random(seed)
    ranges = {"high": (18, 30), "mid": (12, 17), "low": (0, 11)}
    stream, mode = [], "high"
    for t in range(points):
        if t % (2 * n) == 0:
            mode = draw.choice(list(ranges))
        stream.append([("alpha", (str(draw.randint(*ranges[mode])),))])
    return stream


def content_stream(n: int, points: int, seed: int = 1) -> list[list[tuple[str, tuple]]]:
    draw = random.Random(seed)
    level = {k: draw.choice(LEVELS) for k in range(11)}
    stream = []
    for t in range(points):
        atoms = []
        for item in ITEMS:
            if draw.random() < 0.1:
                atoms.append(("req", (item, f"n{draw.randrange(11)}")))
        if draw.random() < 0.1:
            atoms.append(("cache", (draw.choice(ITEMS), f"n{draw.randrange(11)}")))
        if draw.random() < 0.1:
            atoms.append(("down", (f"n{draw.randrange(11)}",)))
        for k in range(11):
            if t == 0 or draw.random() < 3 / n:
                level[k] = draw.choice(LEVELS)
                atoms.append(("qLev", (f"n{k}", str(level[k]))))
        stream.append(atoms)
    return stream
