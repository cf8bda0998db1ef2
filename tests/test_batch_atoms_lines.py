"""The fast check of a usual block (`_NAME_LINES`) takes only blocks the full check (`_SIMPLE_LINES`) takes."""

import random

import pytest

from rsp_plugin.columnar import atoms

PIECES = ["0", "7", "-3", "12", "1" * 18, "1" * 19, " ", "  ", "p", "q_1", "Ab", "a", "(", ")", ",", "\n", "1.5",
          "x", "é", "-", "\t", "_", "Z9"]


@pytest.mark.parametrize("seed", range(300))
def test_the_fast_check_takes_no_block_the_full_check_refuses(seed):
    draw = random.Random(seed)
    arity = draw.randrange(4)
    lines = []
    for _ in range(draw.randint(0, 6)):
        if draw.random() < 0.6:  # a well-formed line, names or numbers
            args = [draw.choice(["a", "s12", "oX_9", "5", "-2", "1.25", "b"]) for _ in range(arity)]
            line = f"{draw.choice(['0', '3', '-1', '42'])} {draw.choice(['p', 'q', 'hot'])}"
            lines.append(line + (f"({','.join(args)})" if arity else ""))
        else:
            lines.append("".join(draw.choice(PIECES) for _ in range(draw.randint(1, 8))))
    text = "\n".join(lines) + "\n"
    fast = atoms._NAME_LINES[arity].fullmatch(text) is not None
    full = atoms._SIMPLE_LINES[arity].fullmatch(text) is not None
    assert not fast or full
    if full and "-" not in text and "." not in text and all(
            not token.isdigit() for line in lines for token in line.replace("(", " ").replace(",", " ")
            .replace(")", " ").split()[2:]):
        assert fast  # names only, no negative time point: the fast check takes it
