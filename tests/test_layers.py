"""The layers of rsp_plugin: each unit (a folder, or a module at the top) imports only from the layers
below it, at module level or inside a function (docs/design.md, "Layers"; DESIGN.md, "Third round").

    core -> io -> lars -> reasoning -> asp -> mtl -> query -> columnar -> runtime -> spark | service -> bench -> cli

reasoning, asp and mtl sit side by side over lars (none imports another today: their order here only
fixes one); spark and service are peers (neither imports the other).
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parent.parent / "rsp_plugin"

LAYERS = ["core", "io", "lars", "reasoning", "asp", "mtl", "query", "columnar", "runtime", ("spark", "service"),
          "bench", "cli"]


def level_of(unit: str) -> int:
    for level, layer in enumerate(LAYERS):
        if unit == layer or (isinstance(layer, tuple) and unit in layer):
            return level
    raise AssertionError(f"rsp_plugin/{unit} is in no layer: add it to LAYERS here and to docs/design.md")


def unit_of(path: Path) -> str:
    first = path.relative_to(PACKAGE).parts[0]
    return first[:-3] if first.endswith(".py") else first


def imported_units(path: Path) -> set[tuple[str, int]]:
    """(unit of rsp_plugin, line) of each import in `path`, relative or absolute, wherever it stands."""
    package = list(path.relative_to(PACKAGE.parent).with_suffix("").parts[:-1])
    found = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = package[:len(package) - node.level + 1] if node.level else []
            module = ".".join(base + ([node.module] if node.module else []))
            names = [f"{module}.{alias.name}" for alias in node.names] if module == "rsp_plugin" else [module]
        else:
            continue
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "rsp_plugin":
                found.add((parts[1], node.lineno))
    return found


def test_every_import_points_down_a_layer_or_stays_in_its_unit():
    wrong = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = unit_of(path)
        if unit == "__init__":
            continue
        for other, line in imported_units(path):
            if other in (unit, "__init__"):
                continue
            if level_of(other) > level_of(unit) or (level_of(other) == level_of(unit)):
                wrong.append(f"{path.relative_to(PACKAGE.parent)}:{line}: {unit} imports {other}")
    assert not wrong, "imports that point up (or across) the layers:\n" + "\n".join(wrong)


def test_every_unit_is_in_a_layer():
    units = {unit_of(path) for path in PACKAGE.rglob("*.py")} - {"__init__"}
    for unit in units:
        level_of(unit)
