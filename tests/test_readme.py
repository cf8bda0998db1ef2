"""The README's and docs/' Python blocks run as written, each in a fresh interpreter.

A block runs in a scratch folder that links the repository's data folders (examples/, queries/, ...),
so its relative paths read the repository and what it writes (out/, chk/) stays out of it."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).parent.parent
DOCUMENTS = [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
BLOCK = re.compile(r"^```python\n(.*?)^```", re.S | re.M)


def blocks():
    for document in DOCUMENTS:
        text = document.read_text(encoding="utf-8")
        for match in BLOCK.finditer(text):
            line = text.count("\n", 0, match.start()) + 2
            code = match.group(1)
            marks = [pytest.mark.spark] if "rsp_plugin.spark" in code else []
            yield pytest.param(code, id=f"{document.relative_to(ROOT)}:{line}", marks=marks)


def test_there_are_blocks_to_run():
    assert len(list(blocks())) >= 4


@pytest.mark.parametrize("code", blocks())
def test_a_python_block_runs_as_written(code, tmp_path):
    for folder in ("examples", "ontologies", "queries", "tests", "docs"):
        (tmp_path / folder).symlink_to(ROOT / folder)
    script = tmp_path / "block.py"
    script.write_text(code, encoding="utf-8")
    done = subprocess.run([sys.executable, str(script)], cwd=tmp_path, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
