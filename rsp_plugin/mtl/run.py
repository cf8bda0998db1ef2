"""A DatalogMTL program over a stream, on the one engine (`rsp-plugin reason PROGRAM.mtl` is
`commands/reason.py`'s): which language a program is in, the engine's outputs and the reference's.

Prints, for every time point of the timeline, the atoms of the program's head
predicates that hold there (`{"t": T, "atoms": [...]}`, as `reason` does for
LARS): derived ones, and data of a head predicate, which hold by definition.
Auxiliary predicates of the normal form are never shown.

Which language a program is in: `--language`, else the program's extension
(`.mtl` DatalogMTL, `.lars` LARS), else its content (MeTeoR's operators such as
`Boxminus[`, or rules that do not end with '.'), else the stream's (lines
such as `P(a)@[1,2]`); LARS by default.
"""

from __future__ import annotations

import re
from pathlib import Path


DATALOGMTL = "datalogmtl"
LARS = "lars"

_METEOR_OPERATOR = re.compile(r"\b(Boxminus|Diamondminus|Boxplus|Diamondplus|Since|Until|ALWAYS|SOMETIME)\s*[\[(]")
_DATASET_LINE = re.compile(r"\s*[^\s@]+\)?\s*@\s*[\[(]?\s*-?\d")


def is_datalogmtl(filename: str, text: str) -> bool:
    """Is this program text DatalogMTL in MeTeoR's syntax? (`.mtl`, or MeTeoR's operators in it)

    >>> is_datalogmtl("<rules>", "A(X):-Boxminus[1,1]B(X)"), is_datalogmtl("p.lars", "a :- [1,1] BOXMINUS b .")
    (True, False)
    """
    suffix = Path(filename).suffix
    if suffix in (".mtl", ".lars"):
        return suffix == ".mtl"
    if _METEOR_OPERATOR.search(text) is None:
        return False
    return any(_METEOR_OPERATOR.search(line) for line in text.splitlines() if not line.lstrip().startswith(("%", "#")))


def detect_language(program: str | Path, stream: str | Path | None = None) -> str:
    """`datalogmtl` or `lars`, from the program's extension, its content, or the stream's first line."""
    program = Path(program)
    if program.suffix in (".mtl", ".lars"):
        return DATALOGMTL if program.suffix == ".mtl" else LARS
    try:
        text = program.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return LARS  # the parser will say it cannot read it (or where its bytes are not UTF-8)
    if is_datalogmtl(str(program), text):
        return DATALOGMTL
    rules = [line.strip() for line in text.splitlines() if ":-" in line and not line.lstrip().startswith(("%", "#"))]
    if rules and not any(rule.endswith(".") for rule in rules):
        return DATALOGMTL
    if stream is not None:
        try:
            with Path(stream).open(encoding="utf-8", errors="replace") as handle:  # a peek: bad bytes are the reader's
                for line in handle:
                    if line.strip() and line.strip()[0] not in "#%@":
                        return DATALOGMTL if _DATASET_LINE.match(line) else LARS
        except OSError:
            pass
    return LARS


def new_engine(lowered, *, start: int | None = None):
    """The one engine (`lars/engine.py`) for a compiled program; its metric windows are `lars/metric.py`'s."""
    from ..lars.engine import IncrementalEngine

    return IncrementalEngine(lowered.program, start=start, pruning=False)


def held_facts(engine) -> int:
    """What the engine keeps in memory, counted in facts: every run of every relation (an atom over an
    interval), every grounding a window holds or has scheduled, every derived fact that holds now."""
    runs = sum(len(r) // 2 for relation in engine.relations.values() for r in relation.runs.values())
    views = sum(len(view.horizon) + (view.pending() if hasattr(view, "pending") else 0)
                for view in engine.views.values())
    return runs + views + len(engine.output)


def engine_outputs(lowered, timeline, *, start: int | None = None, engine=None):
    """(t, the atoms of head predicates holding at t) for each (t, facts) of `timeline`, on the engine.

    `lowered`: a compiled program (`lower.py`); `engine`: one made by `new_engine`, if the caller wants
    to look at it meanwhile.
    """
    if engine is None:
        engine = new_engine(lowered, start=start)
    reports = lowered.reports
    derived: set = set()
    for point, facts in timeline:
        report = engine.advance_to(point, facts)
        derived.difference_update(report.stopped)
        derived.update(fact for fact in report.started if reports(fact))
        holding = set(derived)
        holding.update(fact for fact in facts if reports(fact))
        yield point, holding


def reference_outputs(program, timeline, *, start: int | None = None, horizon: int | None = None):
    """The same from the reference evaluator (`reference.py`), over the program as written.

    `horizon`: the last time point asked about (an unbounded Boxplus head fills the future up to it).
    """
    from .reference import ReferenceEvaluator

    evaluator = ReferenceEvaluator(program, start=start, horizon=horizon)
    heads = {rule.head.predicate for rule in program.rules}
    triple = program.terms.find("triple")
    head_triples = {rule.head.args[1] for rule in program.rules if rule.head.predicate == triple}
    for point, facts in timeline:
        holding = evaluator.advance_to(point, facts)
        yield point, {
            (p, a) for p, a in holding
            if (a[1] in head_triples if p == triple and len(a) == 3 else p in heads)
        }
