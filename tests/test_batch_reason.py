"""`reason`'s block replay writes byte for byte what the per-line replay writes."""

from __future__ import annotations

import io
import json
import random

import pytest

from rsp_plugin.columnar.reason import replay
from rsp_plugin.io.formats import format_fact, read_stream_file
from rsp_plugin.lars.engine import IncrementalEngine
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.io.replay import timeline

PROGRAMS = [
    "q(X,Y) :- [RANGE 3] DIAMOND p(X,Y) .",
    "q(X,Z) :- [RANGE 2] DIAMOND p(X,Y), [RANGE 2] DIAMOND p(Y,Z) .",
    "z(X) :- [RANGE 2] BOX p(X,Y) .\nw(X) :- [COUNT 3] DIAMOND r(X), not z(X) .",
    "@T hot(V) :- [RANGE 4] @T temp(V), V >= 50 .\nalarm :- [RANGE 2] DIAMOND hot(V) .",
    '@prefix ex: <http://ex/> .\nex:q(?x, ?y) :- [RANGE 2] DIAMOND ex:p(?x, ?y) .\nsaid(?x) :- [RANGE 1] DIAMOND say(?x) .',
]


def _per_line(program_text, stream_text, name, first, last, changes, pruning=True):
    program = parse_program(program_text, "p.lars")
    terms = program.terms
    rejected = []
    engine = IncrementalEngine(program, start=first, pruning=pruning)
    shown, out = {}, io.StringIO()
    elements = read_stream_file(name, terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                handle=io.StringIO(stream_text))
    for point, facts in timeline(elements, first=first, last=last, on_rejected=rejected.append, filename=name):
        report = engine.advance_to(point, facts)
        for fact in report.stopped:
            del shown[fact]
        for fact in report.started:
            shown[fact] = format_fact(fact, terms)
        if changes:
            line = {"t": point, "started": sorted(shown[f] for f in report.started),
                    "stopped": sorted(format_fact(f, terms) for f in report.stopped)}
        else:
            line = {"t": point, "atoms": sorted(shown.values())}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
    return out.getvalue(), [str(r) for r in rejected]


def _blocks(program_text, stream_text, name, first, last, changes, pruning=True, block_bytes=97):
    from rsp_plugin.columnar import atoms

    program = parse_program(program_text, "p.lars")
    rejected, out = [], io.StringIO()
    blocks = atoms.read_atom_blocks(name, program.terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                    handle=io.BytesIO(stream_text.encode()), block_bytes=block_bytes)
    replay(program, name, out, first=first, last=last, changes=changes, pruning=pruning,
           on_rejected=rejected.append, blocks=blocks)
    return out.getvalue(), [str(r) for r in rejected]


def _stream(seed: int, program_number: int) -> str:
    draw = random.Random(seed)
    lines = []
    t = draw.randint(0, 3)
    for _ in range(draw.randint(0, 60)):
        t += draw.choice([0, 0, 1, 1, 2])
        kind = draw.random()
        if kind < 0.05:
            lines.append(f"{max(0, t - draw.randint(1, 3))} p(a{draw.randrange(4)},a{draw.randrange(4)})")  # late
        elif kind < 0.08:
            lines.append(draw.choice(["x p(a)", f"{t} p(a", "", "% c", f"{t} say(\"hi\")", f"{t} ex:p(a,b)"]))
        elif program_number == 3:
            lines.append(f"{t} temp({draw.randrange(100)})")
        elif program_number == 2 and kind < 0.4:
            lines.append(f"{t} r(a{draw.randrange(3)})")
        elif program_number == 4 and kind < 0.4:
            lines.append(f"{t} say(b{draw.randrange(3)})")
        else:
            lines.append(f"{t} p(a{draw.randrange(4)},a{draw.randrange(4)})")
    return "\n".join(lines) + ("\n" if draw.random() < 0.8 else "")


@pytest.mark.parametrize("program_number", range(len(PROGRAMS)))
@pytest.mark.parametrize("seed", range(12))
def test_block_replay_writes_what_the_per_line_replay_writes(program_number, seed):
    text = _stream(seed * 7 + program_number, program_number)
    draw = random.Random(seed)
    first = draw.choice([None, None, 2])
    last = draw.choice([None, None, 25, 60])
    changes = draw.random() < 0.3
    program = PROGRAMS[program_number]
    expected = _per_line(program, text, "s.stream", first, last, changes)
    assert _blocks(program, text, "s.stream", first, last, changes) == expected
    assert _blocks(program, text, "s.stream", first, last, changes, block_bytes=1 << 20) == expected


def test_a_long_stream_of_new_terms_is_forgotten_as_it_leaves():
    program = parse_program("q(X,Y) :- [RANGE 3] DIAMOND p(X,Y) .", "p.lars")
    lines = "".join(f"{t} p(s{t}_{k},o{t}_{k})\n" for t in range(400) for k in range(300))
    out = io.StringIO()
    blocks = __import__("rsp_plugin.columnar.atoms", fromlist=["x"]).read_atom_blocks(
        "s.stream", program.terms, handle=io.BytesIO(lines.encode()), block_bytes=1 << 16)
    replay(program, "s.stream", out, blocks=blocks)
    assert program.terms.forgotten > 150_000
    assert len(program.terms) < 150_000  # 4 points of 600 terms are live; the rest is forgotten
    last = json.loads(out.getvalue().splitlines()[-1])
    assert last["t"] == 399 and len(last["atoms"]) == 4 * 300


@pytest.mark.parametrize("seed", range(200))
def test_cutting_runs_out_of_the_sorted_atoms_leaves_what_a_filter_leaves(seed):
    from rsp_plugin.columnar.reason import without

    draw = random.Random(seed)
    ordered = sorted({f"q(s{draw.randrange(400)},o{draw.randrange(9)})" for _ in range(draw.randint(1, 300))})
    if draw.random() < 0.5:
        gone = sorted(draw.sample(ordered, draw.randint(1, len(ordered))))
    else:  # runs side by side, as atoms that started together stop together
        start = draw.randrange(len(ordered))
        gone = ordered[start:start + draw.randint(1, 60)] + draw.sample(ordered[:start], min(start, draw.randrange(4)))
        gone = sorted(set(gone))
    assert without(list(ordered), gone) == [text for text in ordered if text not in set(gone)]


@pytest.mark.parametrize("seed", range(40))
def test_streams_that_repeat_lines_write_what_the_per_line_replay_writes(seed):
    """Lines repeated word for word are read once; late or far-ahead ones are still set aside each."""
    draw = random.Random(seed)
    program = PROGRAMS[seed % len(PROGRAMS)]
    lines = _stream(seed * 11 + 5, seed % len(PROGRAMS)).splitlines()
    doubled = []
    for line in lines:
        doubled.append(line)
        while draw.random() < 0.45:
            doubled.append(line)
    if draw.random() < 0.5:
        doubled += [f"{draw.randrange(3)} p(a1,a2)"] * 2  # late, twice
    text = "\n".join(doubled) + "\n"
    first = draw.choice([None, 2])
    last = draw.choice([None, 20])
    changes = draw.random() < 0.3
    expected = _per_line(program, text, "s.stream", first, last, changes)
    for size in (61, 97, 1 << 20):
        assert _blocks(program, text, "s.stream", first, last, changes, block_bytes=size) == expected


def test_written_atoms_are_format_fact_whatever_the_mix_of_predicates_and_arities():
    from rsp_plugin.columnar.reason import written
    from rsp_plugin.core.terms import Dictionary

    terms = Dictionary()
    p, q, a, b = (terms.intern(key) for key in ("p", "q", "a", "b"))
    for facts in ([(p, (a, b)), (p, (b, a))], [(p, (a,)), (p, (b,))], [(p, (a, b)), (q, (a, b))],
                  [(p, (a, b)), (p, (a,))], [(p, (a,)), (p, (a, b))], [(p, ())], [(p, (a, b, a))]):
        assert written(facts, terms) == [format_fact(fact, terms) for fact in facts]
