"""The reader's whole-block split (`atoms._simple_block`) reads what the row-per-line regex reads."""

from __future__ import annotations

import random

import pytest

from rsp_plugin.columnar import atoms
from rsp_plugin.core.terms import Dictionary


def _line(draw: random.Random, t: int, arity: int, name: str) -> str:
    values = [draw.choice([f"a{draw.randrange(5)}", str(draw.randrange(-9, 300)), f"{draw.randrange(9)}.5",
                           "x_Y9", "bB"]) for _ in range(arity)]
    return f"{t} {name}({','.join(values)})" if arity or draw.random() < 0.5 else f"{t} {name}"


def _text(seed: int) -> str:
    draw = random.Random(seed)
    arity = draw.randrange(4)
    names = draw.choice([["p"], ["p", "q"], ["temp", "r_1"]])
    t = draw.randint(-3, 3)
    lines = []
    for _ in range(draw.randint(1, 40)):
        t += draw.choice([0, 0, 1, 5])
        kind = draw.random()
        if kind < 0.04:  # a line the whole-block split does not take: the general reader's
            lines.append(draw.choice(["", "x p(a)", f"{t} p(a", f"{t} p()", f"{t} p(a,b,c,d)",
                                      "@prefix e: <http://e/> .", f"{t} e:p(a)", f"{t}  p(a)", f"{t} P(a)",
                                      f"{t} p(a) % c"]))
        elif kind < 0.07:
            lines.append(_line(draw, t, (arity + 1) % 4, draw.choice(names)))  # another arity
        else:
            lines.append(_line(draw, t, arity, draw.choice(names)))
    return "\n".join(lines) + ("\n" if draw.random() < 0.7 else "")


def _read(text: str, whole_block: bool, monkeypatch) -> tuple:
    terms = Dictionary()
    with monkeypatch.context() as patch:
        if not whole_block:
            patch.setattr(atoms, "_simple_block", lambda *args: None)
        block = atoms.atom_block(text.encode(), 7, terms, prefixes={}, filename="s.stream")
    rows = [(line, t, terms.key(p), tuple(terms.key(a) for a in args)) for line, t, p, args in block.rows()]
    return rows, [str(record) for record in block.rejected]


@pytest.mark.parametrize("seed", range(300))
def test_the_whole_block_split_reads_what_the_line_regex_reads(seed, monkeypatch):
    text = _text(seed)
    assert _read(text, True, monkeypatch) == _read(text, False, monkeypatch)


def test_a_usual_block_takes_the_whole_block_split():
    terms = Dictionary()
    text = "".join(f"{t} p(s{t},o{t})\n" for t in range(50))
    assert atoms._simple_block(text[:-1], terms, 1, None) is not None
    assert atoms._simple_block(text + "x", terms, 1, None) is None


@pytest.mark.parametrize("seed", range(60))
def test_interning_a_column_gives_the_ids_one_by_one_interning_gives(seed):
    draw = random.Random(seed)
    ours, theirs = Dictionary(), Dictionary()
    for terms in (ours, theirs):
        for key in [f"a{k}" for k in range(0, 30, 3)] + ["7", "-2"]:
            terms.intern(key)
    for _ in range(4):
        keys = [draw.choice([f"a{draw.randrange(30)}", str(draw.randrange(-5, 40)), f"{draw.randrange(9)}.25",
                             f"n{draw.randrange(10**6)}"]) for _ in range(draw.randint(1, 50))]
        if draw.random() < 0.3:
            keys = [f"z{seed}_{k}_{draw.random()}" for k in range(draw.randint(1, 20))]  # all new, distinct
        known = set(ours.ids())
        assert ours.intern_keys(keys) == [theirs.intern(key) for key in keys]
        assert ours.keys == theirs.keys and dict(ours.numbers) == dict(theirs.numbers)
        # looked up: kept by the next forgetting (new ones are kept anyway: they are young)
        assert ours._touched == theirs._touched & known
        theirs._touched = set(ours._touched)
        if draw.random() < 0.5:
            live = draw.sample(sorted(ours.ids()), k=len(ours) // 2)
            assert ours.retain(live) == theirs.retain(live)


@pytest.mark.parametrize("seed", range(200))
def test_repeated_lines_read_once_stand_for_their_rows(seed, monkeypatch):
    draw = random.Random(seed)
    lines = _text(seed + 1000).split("\n")
    doubled = []
    for line in lines:
        doubled.append(line)
        while draw.random() < 0.4:  # the line again, maybe more than once
            doubled.append(line)
    text = "\n".join(doubled)
    assert _read(text, True, monkeypatch) == _read(text, False, monkeypatch)


def test_a_block_of_doubled_lines_keeps_each_once():
    terms = Dictionary()
    text = "".join(f"{t} p(s{t},o{t})\n{t} p(s{t},o{t})\n" for t in range(5)) + "9 p(a,b)\n9 p(a,b)\n9 p(a,b)"
    block = atoms.atom_block(text, 1, terms, prefixes={})
    assert block.lines == [1, 3, 5, 7, 9, 11] and block.repeats == [2, 4, 6, 8, 10, 12, 13]
    assert len(block) == 13 and [line for line, *_ in block.rows()] == list(range(1, 14))
