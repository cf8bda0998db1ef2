"""DatalogMTL on streams (Walega et al., "Stream reasoning with DatalogMTL"), on the one temporal engine.

    syntax.py     MeTeoR's syntax -> the program model (`model.py`)
    check.py      forward-propagating and safe, or a located error saying why
    lower.py      the paper's normal form, as LARS rules over metric windows (`lars/metric.py`)
    data.py       facts over intervals (`P(a)@[1,2]`) as a stream, in time order
    reference.py  the oracle: the definitions over the integer timeline, slow on purpose
    run.py        `rsp-plugin reason PROGRAM.mtl --stream FACTS`
    generate.py   streams and programs for tests and benchmarks (SUMO short stop, LUBM-temporal)

>>> from rsp_plugin.mtl import load_program
>>> lowered = load_program("ShortStop(V):-NotPos(V), Boxminus[1,1]Pos(V), Boxminus[2,2]NotPos(V)")
>>> len(lowered.program.rules)
1
"""

from __future__ import annotations


def load_program(text: str, filename: str = "<program>", terms=None):
    """Parse, check and compile a DatalogMTL program (MeTeoR syntax): a `Lowered` for the engine."""
    from ..lars.metric_lower import lower_program
    from ..lars.program import DATALOGMTL_TEXT, Origin, from_origin
    from .syntax import parse_mtl

    lowered = lower_program(parse_mtl(text, filename, terms))
    program = lowered.program
    from_origin(program.rules, Origin(DATALOGMTL_TEXT, text, filename, program.terms))
    return lowered
