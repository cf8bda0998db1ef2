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


class MetricReplay:
    """`rsp-plugin reason PROGRAM.mtl`'s lines, an item at a time, for a caller that is handed the stream's
    items (a Spark micro-batch driver): `take(items, out, on_rejected)` evaluates the time points they
    complete and writes their lines, `end(out)` the rest; the lines are `reason`'s (`{"t", "atoms"}`, or
    with `changes` `{"t", "started", "stopped"}`). Everything it holds is state a checkpoint stores as it
    is (`runtime.state_schema`); where the lines and the lines set aside go is given with each call.

    `write(point, holding, out)` writes a time point's line; a subclass may keep it instead (a Spark
    executor's share of a distributed run, `rsp_plugin.spark.reason_parts`)."""

    def __init__(self, lowered, *, first: int | None = None, last: int | None = None, changes: bool = False,
                 max_gap: int | None = None, filename: str = "<stream>"):
        from .data import FactTimeline

        self.program = lowered.program
        self.terms = lowered.program.terms
        self.engine = new_engine(lowered, start=first)
        self.heads, self.head_triples, self.triple = set(lowered.heads), set(lowered.head_triples), lowered.triple
        self.arities = {predicate: set(counts) for predicate, counts in lowered.arities.items()}
        self.filename = filename
        self.timeline = FactTimeline(first=first, last=last, filename=filename, max_gap=max_gap)
        self.changes = changes
        self.derived: set = set()
        self.before: set = set()
        self.shown: dict = {}

    @property
    def cut(self) -> bool:
        """A fact after `--to` was read: the items after it are not read."""
        return self.timeline.cut

    def reports(self, fact) -> bool:
        """Is `fact` an atom of one of the program's head predicates? (`Lowered.reports`)"""
        predicate, args = fact
        if predicate == self.triple and len(args) == 3:
            return args[1] in self.head_triples
        return predicate in self.heads

    def take(self, items, out, on_rejected) -> bool:
        """Evaluate the time points `items` complete (their lines to `out`, the lines set aside to
        `on_rejected`); False once a fact after `--to` was read."""
        from .data import with_arities

        timeline = self.timeline
        for item in with_arities(items, self.arities, self.terms, self.filename):
            for point, facts in timeline.push(item, on_rejected):
                self._evaluate(point, facts, out)
            if timeline.cut:
                return False
        return True

    def end(self, out) -> None:
        for point, facts in self.timeline.finish():
            self._evaluate(point, facts, out)

    def _evaluate(self, point: int, facts, out) -> None:
        report = self.engine.advance_to(point, facts)
        reports = self.reports
        derived = self.derived
        derived.difference_update(report.stopped)
        derived.update(fact for fact in report.started if reports(fact))
        holding = set(derived)
        holding.update(fact for fact in facts if reports(fact))
        self.write(point, holding, out)

    def texts(self, holding) -> set[str]:
        """The atoms of `holding` as `reason` writes them."""
        from ..io.formats import format_fact

        shown, terms = self.shown, self.terms
        texts = set()
        for fact in holding:
            text = shown.get(fact)
            if text is None:
                text = shown[fact] = format_fact(fact, terms)
            texts.add(text)
        if len(shown) > 4 * len(texts) + 1024:
            self.shown = {}
        return texts

    def write(self, point: int, holding, out) -> None:
        import json

        texts = self.texts(holding)
        if self.changes:
            line = {"t": point, "started": sorted(texts - self.before), "stopped": sorted(self.before - texts)}
            self.before = texts
        else:
            line = {"t": point, "atoms": sorted(texts)}
        out.write(json.dumps(line, ensure_ascii=False) + "\n")
