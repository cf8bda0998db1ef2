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

from .text import render

#: exit status when the atom asked about does not hold
DOES_NOT_HOLD = 1


def parse_atom(text: str, program, user_error):
    """The fact written `text` (as `reason` prints atoms: `q(x1,y)`, `<p>(<s>,<o>)`)."""
    from ..formats import Rejected, read_atom_stream

    read = list(read_atom_stream([f"0 {text.strip()}"], program.terms, prefixes=program.prefixes,
                                 filename="--explain"))
    if not read or isinstance(read[0], Rejected):
        reason = read[0].reason if read else "expected an atom"
        raise user_error(f"--explain {text!r}: {reason}")
    return read[0].fact


def reason_explained(options, user_error) -> int:
    """`rsp-plugin reason PROGRAM --stream FILE --explain ATOM [--at T]`."""
    from ..formats import StreamElement, read_stream_file
    from ..lars.engine import IncrementalEngine
    from ..lars.syntax import parse_program_file
    from ..replay import timeline

    program = parse_program_file(options.program)
    fact = parse_atom(options.explain, program, user_error)
    stream = Path(options.stream)
    try:
        handle = stream.open(encoding="utf-8")
    except OSError as error:
        raise user_error(f"{stream}: cannot read the stream: {error.strerror}") from None
    at = getattr(options, "at", None)
    last = options.last
    if at is not None:
        if last is not None and at > last:
            raise user_error(f"--at {at} is after --to {last}")
        if options.first is not None and at < options.first:
            raise user_error(f"--at {at} is before --from {options.first}")
        last = at
    engine = IncrementalEngine(program, start=options.first, pruning=not options.no_pruning, explain=True)
    provenance = engine.provenance
    sources: dict[int, list] = {}
    rejected = 0

    def set_aside(record) -> None:
        nonlocal rejected
        rejected += 1
        print(record, file=sys.stderr)

    def noted(elements):  # where each element was read, handed over with its time point's data
        for element in elements:
            if isinstance(element, StreamElement):
                sources.setdefault(element.time_point, []).append(
                    (element.fact, {"file": str(stream), "line": element.line}))
            yield element

    point = None
    with handle:
        elements = read_stream_file(stream, program.terms, prefixes=program.prefixes, tick_ms=program.tick_ms,
                                    handle=handle)
        for point, facts in timeline(noted(elements), first=options.first, last=last, on_rejected=set_aside,
                                     filename=str(stream)):
            for older in [p for p in sources if p < point]:
                del sources[older]
            provenance.note_sources(point, sources.pop(point, ()))
            engine.advance_to(point, facts)
    if rejected:
        print(f"rsp-plugin: {rejected} stream line{'s' if rejected != 1 else ''} set aside (see above)", file=sys.stderr)
    if point is None:
        raise user_error(f"{stream}: no time point to explain at (the stream is empty)")
    tree = engine.explain(fact, point)
    written = options.explain.strip()
    if getattr(options, "explain_format", "text") == "json":
        shown = tree if tree is not None else {"fact": written, "t": point, "holds": False}
        sys.stdout.write(json.dumps(shown, ensure_ascii=False) + "\n")
    else:
        sys.stdout.write(render(tree, fact=written, t=point) + "\n")
    return 0 if tree is not None else DOES_NOT_HOLD


def print_explanations(engine, out, explain_format: str = "text"):
    """A subscriber for `query --explain`: after each report, why each of its rows (or triples)
    is there (`query.py`), as indented text or one JSON object per row."""

    def explain_report(result) -> None:
        answer = result.to_json()
        if "error" in answer:
            return
        items = answer.get("bindings", answer.get("triples"))
        if items is None:
            items = [None] if answer.get("boolean") else []
        for item in items:
            tree = engine.explain(result.query, result.t, item)
            if explain_format == "json":
                out.write(json.dumps({"t": result.t, "explain": item, "why": tree}, ensure_ascii=False) + "\n")
            else:
                out.write(render(tree) + "\n")

    return explain_report
