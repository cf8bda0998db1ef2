"""The block replay forgets terms between blocks (nothing young kept unreached): no line changes."""

import functools
import io
import random

import pytest

from rsp_plugin.columnar import atoms
from rsp_plugin.columnar import reason as batch_reason
from rsp_plugin.lars.syntax import parse_program
from rsp_plugin.core.terms import Forgetting

PROGRAMS = [
    "q(X,Y) :- [RANGE 5] DIAMOND p(X,Y) .",
    "q(X,Z) :- [RANGE 4] DIAMOND p(X,Y), [RANGE 4] DIAMOND p(Y,Z) .",
    "r(X) :- [RANGE 3] BOX p(X,Y), not s(X) .\ns(X) :- [COUNT 6] DIAMOND p(Y,X) .",
]


def _stream(seed: int) -> str:
    draw = random.Random(seed)
    lines = []
    for t in range(draw.randint(20, 60)):
        for k in range(draw.randint(0, 30)):
            x = f"a{draw.randrange(20)}" if draw.random() < 0.4 else f"s{t}_{k}"
            y = f"a{draw.randrange(20)}" if draw.random() < 0.4 else f"o{t}_{k}"
            lines.append(f"{t} p({x},{y})\n")
    return "".join(lines)


def _run(program_text: str, stream: str, forget: bool, changes: bool):
    program = parse_program(program_text, "p.lars")
    out = io.StringIO()
    blocks = atoms.read_atom_blocks("s.stream", program.terms, handle=io.BytesIO(stream.encode()), block_bytes=300)
    batch_reason.replay(program, "s.stream", out, blocks=blocks, forget=forget, changes=changes)
    return out.getvalue(), program.terms


@pytest.mark.parametrize("program", PROGRAMS)
@pytest.mark.parametrize("seed", range(8))
def test_forgetting_between_blocks_changes_no_line(program, seed, monkeypatch):
    stream = _stream(seed)
    changes = seed % 3 == 0
    expected, _ = _run(program, stream, False, changes)
    monkeypatch.setattr(batch_reason, "Forgetting", functools.partial(Forgetting, minimum=40))
    got, terms = _run(program, stream, True, changes)
    assert got == expected
    assert terms.forgotten > 0 or len(stream) < 2000
