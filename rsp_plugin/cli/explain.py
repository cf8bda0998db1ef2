"""`--explain` on the command line: `reason ... --explain ATOM [--at T]` and `query ... --explain`.

    rsp-plugin reason prog.lars --stream s.stream --explain 'shutdown(b1)' --at 40
    rsp-plugin query q.rq --stream http://ex/s=s.tnt --explain [--explain-format json]

`reason --explain` runs the timeline up to T (default: its last time point),
keeping what explanations need, and prints why the atom holds at T instead of
the usual lines: indented text (`text.py`), or with `--explain-format json`
the tree as one JSON object. Stream elements are named by file and line. An
atom that does not hold at T is said so, with exit status 1.

`query --explain` prints each report as usual and, after it, why each of its
rows (or triples) is there: the pattern's matches down to stream elements
(file and line), background graphs, entailments and rule derivations.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

from ..core.errors import UserError
from ..core.explanations import cut, render
from ..lars.explain import ExplanationUnavailable, why_not
from ..query.explain import QUERY_TEXT_LEVELS
from .options import ReasonOptions
from .reason import SetAside, open_stream, stream_path

#: `--explain-depth all`: the whole tree
ALL = 0

#: exit status when the atom asked about does not hold
DOES_NOT_HOLD = 1


def parse_atom(text: str, program):
    """The fact written `text` (as `reason` prints atoms: `q(x1,y)`, `<p>(<s>,<o>)`)."""
    from ..io.formats import Rejected, read_atom_stream

    read = list(read_atom_stream([f"0 {text.strip()}"], program.terms, prefixes=program.prefixes,
                                 filename="--explain"))
    if not read or isinstance(read[0], Rejected):
        reason = read[0].reason if read else "expected an atom"
        raise UserError(f"--explain {text!r}: {reason}")
    return read[0].fact


def reason_explained(options: ReasonOptions, language: str) -> int:
    """`rsp-plugin reason PROGRAM --stream FILE --explain ATOM [--at T]` (LARS, either semantics,
    or DatalogMTL: `language`, as `reason.reason` decided it)."""
    from ..mtl.run import DATALOGMTL

    at = options.at
    last = options.last
    if at is not None:
        if last is not None and at > last:
            raise UserError(f"--at {at} is after --to {last}")
        if options.first is not None and at < options.first:
            raise UserError(f"--at {at} is before --from {options.first}")
        last = at
    stream = stream_path(options)
    if language == DATALOGMTL:
        return _datalogmtl(options, stream, last)
    return _lars(options, stream, last)


def _lars(options: ReasonOptions, stream: Path, last: int | None) -> int:
    from ..io.formats import StreamElement, read_stream_file
    from ..io.replay import timeline
    from ..lars.engine import IncrementalEngine
    from ..lars.syntax import parse_program_file

    semantics = options.semantics
    program = parse_program_file(options.program, semantics=semantics)
    fact = parse_atom(options.explain, program)
    handle = open_stream(options)
    bounds = {} if options.max_derivations is None else {"max_derivations": options.max_derivations}
    if semantics == "answer-stream":
        from ..asp.engine import answer_stream_engine

        engine = answer_stream_engine(program, start=options.first, pruning=options.pruning, explain=True,
                                      **bounds)
    else:
        engine = IncrementalEngine(program, start=options.first, pruning=options.pruning, explain=True,
                                   **bounds)
    sources = _Sources(engine)
    rejected = SetAside()

    def noted(elements):  # where each element was read, handed over with its time point's data
        for element in elements:
            if isinstance(element, StreamElement):
                sources.note(element.time_point, element.time_point, element.fact, str(stream), element.line)
            yield element

    point = None
    with handle:
        elements = read_stream_file(stream, program.terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                    handle=handle, max_line_bytes=options.max_line_bytes)
        for point, facts in timeline(noted(elements), first=options.first, last=last, on_rejected=rejected,
                                     filename=str(stream), max_gap=options.max_gap):
            sources.hand_over(point)
            engine.advance_to(point, facts)
    return _show(engine, fact, point, options, stream, rejected, sources)


def _datalogmtl(options: ReasonOptions, stream: Path, last: int | None) -> int:
    from ..lars.engine import IncrementalEngine
    from ..lars.metric_lower import lower_program
    from ..mtl.data import (
        TimedFact,
        fact_timeline,
        read_dataset,
        read_facts,
        with_arities,
    )
    from ..mtl.syntax import parse_mtl_file

    program = parse_mtl_file(options.program)
    lowered = lower_program(program)
    terms = program.terms
    read = list(read_dataset([f"{options.explain.strip()}@0"], terms, prefixes=program.prefixes, filename="--explain"))
    if not read or not isinstance(read[0], TimedFact):
        reason = getattr(read[0], "reason", "expected an atom") if read else "expected an atom"
        raise UserError(f"--explain {options.explain!r}: {reason}")
    fact = read[0].fact
    handle = open_stream(options)
    engine = IncrementalEngine(lowered.program, start=options.first, pruning=False, explain=True)
    sources = _Sources(engine)
    rejected = SetAside()

    def noted(items):
        for item in items:
            if isinstance(item, TimedFact):
                sources.note(item.first, item.last, item.fact, str(stream), item.line)
            yield item

    point = None
    with handle:
        items = with_arities(read_facts(stream, handle, terms, prefixes=program.prefixes,
                                        max_line_bytes=options.max_line_bytes),
                             lowered.arities, terms, str(stream))
        for point, facts in fact_timeline(noted(items), first=options.first, last=last, on_rejected=rejected,
                                          filename=str(stream), max_gap=options.max_gap):
            sources.hand_over(point)
            engine.advance_to(point, facts)
    return _show(engine, fact, point, options, stream, rejected, sources)


class _Sources:
    """Where data atoms were read: handed to the engine's records as their time points come, or
    (an engine that keeps none, the answer-stream solver) kept here for its reach."""

    def __init__(self, engine):
        self.provenance = getattr(engine, "provenance", None)
        history = getattr(engine, "history", None)
        self.reach = None if history is None else history.reach
        self.pending: list[tuple] = []
        self.kept: dict = {}

    def note(self, first: int, last: int, fact, filename: str, line: int) -> None:
        self.pending.append((first, last, fact, {"file": filename, "line": line}))

    def hand_over(self, point: int) -> None:
        keep = []
        for entry in self.pending:
            if entry[0] > point:
                keep.append(entry)
            elif self.provenance is not None:
                self.provenance.note_source(*entry)
            elif self.reach is not None and entry[1] >= point - self.reach:
                self.kept.setdefault(entry[2], []).append(entry)
        self.pending = keep

    def lookup(self, point: int, fact):
        for first, last, _, source in self.kept.get(fact, ()):
            if first <= point <= last:
                return source
        return None


def _show(engine, fact, point, options: ReasonOptions, stream, rejected: SetAside, sources) -> int:
    rejected.say_how_many()
    if point is None:
        raise UserError(f"{stream}: no time point to explain at (the stream is empty)")
    tree = engine.explain(fact, point) if sources.provenance is not None else \
        engine.explain(fact, point, sources=sources.lookup)
    written = options.explain.strip()
    depth = options.explain_depth
    levels = None if not depth else depth
    readable = _readable(options, engine)
    holds = tree is not None
    if tree is None:
        tree = why_not(engine, fact, point)
    if options.explain_format == "json":
        shown = cut(tree, levels) if holds else {"fact": written, "t": point, "holds": False, **tree}
        sys.stdout.write(json.dumps(readable.tree(shown), ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(readable.text(render(tree, fact=written, t=point, levels=levels)) + "\n")
    return 0 if holds else DOES_NOT_HOLD


def _readable(options, engine):
    """`--prefixes`: atoms with the program's prefixes (`--time` is for the usual lines)."""
    from ..query.readable import Readable

    program = getattr(engine, "program", None)
    prefixes = dict(getattr(program, "prefixes", None) or {})
    return Readable(prefixes if options.prefixes else None)


def print_explanations(engine, out, explain_format: str = "text", *, readable=None, depth: int | None = None):
    """A subscriber for `query --explain`: after each report, why each of its rows (or triples)
    is there (`query.py`), as indented text or one JSON object per row. `readable`: terms with
    the query's prefixes (`rsp_plugin.query.readable`); `depth`: the levels of facts shown (text:
    QUERY_TEXT_LEVELS by default; `--explain-depth all` asks for the whole tree: `ALL`)."""
    from ..query.readable import Readable

    readable = readable or Readable()
    levels = (QUERY_TEXT_LEVELS if explain_format == "text" else None) if depth is None else \
        (None if depth == ALL else depth)

    def explain_report(result) -> None:
        answer = result.to_json()
        if "error" in answer:
            return
        items = answer.get("bindings", answer.get("triples"))
        if items is None:
            items = [None] if answer.get("boolean") else []
        for item in items:
            try:
                tree = engine.explain(result.query, result.t, item)
            except (ExplanationUnavailable, KeyError, ValueError) as error:
                tree = {"query": result.query, "t": result.t, "answer": item, "by": "query", "matches": 0,
                        "body": [], "note": str(error)}
            if explain_format == "json":
                line = {"t": readable.time(result.t), "explain": readable.tree(item),
                        "why": readable.tree(cut(tree, levels))}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
            else:
                out.write(readable.text(render(tree, levels=levels)) + "\n")

    return explain_report
