"""`SnapshotLines`: the chunked sorted atoms write the line json.dumps writes of the sorted set."""

import io
import json
import random

import pytest

from rsp_plugin.columnar.reason import SnapshotLines
from rsp_plugin.core.terms import Dictionary


@pytest.mark.parametrize("chunk", [1, 2, 4, 512])
@pytest.mark.parametrize("seed", range(40))
def test_lines_are_json_dumps_of_the_sorted_atoms(seed, chunk, monkeypatch):
    monkeypatch.setattr(SnapshotLines, "CHUNK", chunk)
    draw = random.Random(seed)
    terms = Dictionary()
    q = terms.intern("q")
    names = [terms.intern(name) for name in
             [f"s{k}" for k in range(60)] + [f"o{k}" for k in range(9)] + ['"a\\"b"', '"é"', "<http://x/y>"]]
    snapshot = SnapshotLines()
    holding: set = set()
    for point in range(draw.randint(1, 40)):
        stopped = draw.sample(sorted(holding), k=draw.randint(0, len(holding)))
        if draw.random() < 0.3:  # a run that started together stops together
            stopped = sorted(holding)[: draw.randint(0, len(holding))]
        holding.difference_update(stopped)
        wanted = draw.choice([0, 1, 3, 20, 120])
        started = list({(q, (draw.choice(names[:60]) if draw.random() < 0.9 else draw.choice(names),
                             draw.choice(names[60:69]))) for _ in range(wanted)} - holding)
        if draw.random() < 0.3:  # a run of consecutive atoms
            base = draw.randrange(50)
            started = list({(q, (names[base + k], names[60])) for k in range(10)} - holding)
        holding.update(started)
        snapshot.change(started, stopped, terms)
        out = io.StringIO()
        snapshot.write_line(point, out)
        atoms = sorted(f"q({terms.key(x)},{terms.key(y)})" for _, (x, y) in holding)
        expected = json.dumps({"t": point, "atoms": atoms}, ensure_ascii=False) + "\n"
        assert out.getvalue() == expected == snapshot.line(point)
        assert snapshot.ordered == atoms
        assert all(snapshot.chunks) and snapshot.lasts == [chunk[-1] for chunk in snapshot.chunks]


@pytest.mark.parametrize("seed", range(50))
def test_the_escape_test_is_the_regex_test(seed):
    from rsp_plugin.columnar.reason import _NEEDS_ESCAPE, _escapes

    draw = random.Random(seed)
    alphabet = ["a", "q(", ",", ")", '"', "\\", "\n", "\x00", "\x1f", " ", "\x7f", "é", "€", "😀", "\ud800", "\u2028"]
    for _ in range(50):
        text = "".join(draw.choice(alphabet) for _ in range(draw.randint(0, 12)))
        assert _escapes(text) == bool(_NEEDS_ESCAPE.search(text)), repr(text)
