"""`rsp-plugin reason PROGRAM --stream FILE --semantics answer-stream [--models 1|all]`.

One JSON line per time point (DESIGN.md, "Second round: contracts"):

    --models 1 (default)   {"t": 5, "atoms": [...]}            the first answer, in the
                                                               deterministic order (engine.py)
                           {"t": 5, "atoms": null, "inconsistent": true}    no answer stream
    --models all           {"t": 5, "models": [[...], [...]]}  every answer, sorted; [] for none

A time point that takes longer than --solver-timeout seconds prints
{"t": 5, "atoms": null, "timeout": true} (or "models": null), says so on stderr, and the
run goes on with the next one.
"""

from __future__ import annotations

import json
import sys

from ..asp.engine import DEFAULT_TIMEOUT, AnswerStreamEngine, answer_stream_engine
from ..core.errors import UserError
from ..io.formats import format_fact, read_stream_file
from ..io.replay import timeline
from ..lars.syntax import parse_program_file
from .options import ReasonOptions
from .reason import SetAside, open_stream, stream_path


def reason_answer_streams(options: ReasonOptions) -> int:
    program = parse_program_file(options.program, semantics="answer-stream")
    if options.changes:
        raise UserError("--changes prints the change of one model: use it with --semantics stream")
    stream = stream_path(options)
    handle = open_stream(options)
    terms = program.terms
    set_aside = SetAside()
    limits = {} if options.max_derivations is None else {"max_derivations": options.max_derivations}
    timeout = options.solver_timeout if options.solver_timeout is not None else DEFAULT_TIMEOUT
    every = options.models == "all"
    engine = answer_stream_engine(program, start=options.first, timeout=timeout, pruning=options.pruning,
                                  models="all" if every else "first", **limits)
    out = sys.stdout

    def shown(model) -> list[str]:
        return sorted(format_fact(fact, terms) for fact in model)

    with handle:
        elements = read_stream_file(stream, terms, prefixes=program.prefixes, tick_ms=program.tick_ms, handle=handle,
                                    max_line_bytes=options.max_line_bytes)
        for point, facts in timeline(elements, first=options.first, last=options.last,
                                     on_rejected=set_aside, filename=str(stream),
                                     max_gap=options.max_gap):
            step = engine.advance_to(point, facts)
            if not isinstance(engine, AnswerStreamEngine):  # stratified, semantics agree: one model
                models = [shown(engine.holding())]
            elif step.models is None:
                print(f"rsp-plugin: time point {point}: {step.timed_out} (--solver-timeout); going on",
                      file=sys.stderr)
                line = {"t": point, "models" if every else "atoms": None, "timeout": True}
                out.write(json.dumps(line, ensure_ascii=False) + "\n")
                continue
            else:
                models = [shown(model) for model in step.models]
            if every:
                line = {"t": point, "models": models}
            elif models:
                line = {"t": point, "atoms": models[0]}
            else:
                line = {"t": point, "atoms": None, "inconsistent": True}
            out.write(json.dumps(line, ensure_ascii=False) + "\n")
    set_aside.say_how_many()
    return 0
