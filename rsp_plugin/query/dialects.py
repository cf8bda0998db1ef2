"""Which RSP dialect writes which form, and which dialect a query is read as.

One grammar (`grammar.lark`) reads the forms of every dialect; this table says
whose each form is. `--dialect auto` (the default) accepts any mixture and names
the query after its first form that only one dialect has; `--dialect cqels` (or
another) refuses the forms its dialect does not have, with a message naming both.

>>> resolve(["from-stream", "range-step"], "auto")
'csparql'
>>> resolve(["stream-block", "range-slide"], "auto")
'cqels'
>>> resolve(["range-step"], "auto")     # nothing distinctive: the first dialect that has it all
'csparql'
>>> guess("SELECT ?x FROM NAMED STREAM <s> [NOW-10 S SLIDE 10 S] WHERE { ?x ?p ?o }")
'sparqlstream'
>>> guess("REGISTER QUERY q AS SELECT ?x FROM STREAM Sensors [NOW] WHERE { STREAM Sensors { ?x ?p ?o } ")
'cqels'
"""

from __future__ import annotations

import re

from ..core.regexes import LazyPattern
from .model import DIALECTS, ReportPolicy

CSPARQL, RSPQL, CQELS, SPARQLSTREAM = "csparql", "rspql", "cqels", "sparqlstream"
ALL = frozenset(DIALECTS)

#: form -> (how a message shows it, the dialects that write it)
FORMS: dict[str, tuple[str, frozenset[str]]] = {
    "register-query": ("REGISTER QUERY name AS", frozenset({CSPARQL, CQELS})),
    "register-stream": ("REGISTER STREAM name AS", frozenset({CSPARQL, RSPQL})),
    "register-r2s": ("REGISTER RSTREAM|ISTREAM|DSTREAM <iri> AS", frozenset({RSPQL})),
    "compute-every": ("COMPUTE EVERY", frozenset({CSPARQL, RSPQL})),
    "entailment-regime": ("UNDER ENTAILMENT REGIME <...>", frozenset({RSPQL})),
    "select-r2s": ("SELECT ISTREAM|RSTREAM|DSTREAM", frozenset({RSPQL, SPARQLSTREAM})),
    "construct-r2s": ("CONSTRUCT ISTREAM|RSTREAM|DSTREAM", frozenset({RSPQL, SPARQLSTREAM})),
    "from-stream": ("FROM STREAM <s> [...]", frozenset({CSPARQL, CQELS})),
    "stream-clause": ("STREAM <s> [...] before WHERE (CityBench's C-SPARQL)", frozenset({CSPARQL})),
    "from-named-window": ("FROM NAMED WINDOW <w> ON <s> [...]", frozenset({RSPQL})),
    "window-before-on": ("FROM NAMED WINDOW <w> [...] ON STREAM <s> (RSP4J)", frozenset({RSPQL})),
    "from-named-stream": ("FROM NAMED STREAM <s> [...]", frozenset({SPARQLSTREAM})),
    "from-graph-keyword": ("FROM GRAPH / FROM NAMED GRAPH", frozenset({RSPQL})),
    "window-block": ("WINDOW <w> { ... }", frozenset({RSPQL})),
    "stream-block": ("STREAM <s> [...] { ... } inside WHERE", frozenset({CQELS})),
    "stream-reference": ("STREAM s { ... } reading FROM STREAM s [...] (CQELS4J)", frozenset({CQELS})),
    "stream-name": ("a stream named without <...> (FROM STREAM Telemetry, CQELS4J)", frozenset({CQELS})),
    "subquery-window": ("a window declared in a subquery", frozenset({RSPQL})),
    "range-step": ("[RANGE r STEP s]", frozenset({CSPARQL, RSPQL, CQELS})),
    "range-slide": ("[RANGE r SLIDE s]", frozenset({CSPARQL, RSPQL, CQELS})),
    "range-tumbling": ("[RANGE r TUMBLING]", frozenset({CSPARQL, RSPQL, CQELS})),
    "range": ("[RANGE r]", frozenset({CSPARQL, RSPQL, CQELS})),
    "range-durations": ("[RANGE 1m 30s ...] (several durations)", frozenset({CQELS})),
    "range-triples": ("[RANGE TRIPLES n]", frozenset({CSPARQL})),
    "triples": ("[TRIPLES n]", frozenset({CSPARQL, CQELS, SPARQLSTREAM})),
    "elements": ("[ELEMENTS n STEP m]", frozenset({RSPQL})),
    "now": ("[NOW]", frozenset({CSPARQL, RSPQL, CQELS})),
    "all": ("[ALL]", frozenset({CQELS})),
    "from-to": ("[FROM NOW-d TO NOW-d STEP s]", frozenset({RSPQL})),
    "now-minus": ("[NOW-n UNIT (TO NOW-m UNIT) SLIDE s UNIT]", frozenset({SPARQLSTREAM})),
    # our own extensions, in every dialect
    "entailment": ("ENTAILMENT <...>", ALL),
    "rules": ("RULES <...>", ALL),
}

#: the order in which a query that could be several dialects is named
_PREFERENCE = (CSPARQL, RSPQL, CQELS, SPARQLSTREAM)

#: how each dialect's engine reports, mapped onto our policies (docs/queries.md, "Where the dialects' engines report differently")
REPORT_POLICY = {
    CSPARQL: ReportPolicy.ON_WINDOW_CLOSE,
    RSPQL: ReportPolicy.ON_WINDOW_CLOSE,
    CQELS: ReportPolicy.ON_CONTENT_CHANGE,
    SPARQLSTREAM: ReportPolicy.ON_WINDOW_CLOSE,
}


def name(dialect: str) -> str:
    """The dialect's name as users write it: 'cqels' -> 'CQELS-QL'."""
    return DIALECTS.get(dialect, dialect)


def check_choice(dialect: str) -> str:
    if dialect != "auto" and dialect not in DIALECTS:
        known = ", ".join(["auto", *DIALECTS])
        raise ValueError(f"unknown dialect {dialect!r}; expected one of {known}")
    return dialect


def resolve(forms: list[str], asked: str) -> str:
    """The dialect a query with these forms (in text order) is read as; `asked` is --dialect."""
    if asked != "auto":
        return asked
    for form in forms:
        owners = FORMS[form][1]
        if len(owners) == 1:
            return next(iter(owners))
    common = set(ALL)
    for form in forms:
        common &= FORMS[form][1]
    for dialect in _PREFERENCE:
        if dialect in common:
            return dialect
    return CSPARQL


def refusal(form: str, dialect: str) -> str | None:
    """Why `dialect` does not write `form` (None when it does)."""
    shown, owners = FORMS[form]
    if dialect in owners:
        return None
    whose = " / ".join(name(owner) for owner in _PREFERENCE if owner in owners)
    return (f"{shown} is {whose}, not {name(dialect)} (the query is read as {name(dialect)}: "
            f"--dialect {dialect}; --dialect auto reads every dialect)")


# guessing from text alone (for messages about text the grammar could not read) ----------------

_NOISE = LazyPattern(r'"""[\s\S]*?"""|\'\'\'[\s\S]*?\'\'\'|"(?:[^"\\\n]++|\\.)*+"|\'(?:[^\'\\\n]++|\\.)*+\'|<[^<>\s]*>|#[^\n]*')
_MARKERS = [
    (SPARQLSTREAM, LazyPattern(r"\bFROM\s+NAMED\s+STREAM\b|\[\s*NOW\s*-\s*\d", re.I)),
    (RSPQL, LazyPattern(r"\bFROM\s+NAMED\s+WINDOW\b|\bREGISTER\s+[RID]STREAM\b|\bUNDER\s+ENTAILMENT\b"
                       r"|(?<![\w:])WINDOW\s+(?:[\w\-.]*:|\?|\$|I)|\bSELECT\s+[RID]STREAM\b"
                       r"|\bCONSTRUCT\s+[RID]STREAM\b|\[\s*FROM\s+NOW\b|\[\s*ELEMENTS\b", re.I)),
    (CQELS, LazyPattern(r"\{[^{}]*?(?<![\w:])(?<!FROM )(?<!NAMED )(?<!ON )STREAM\s+(?:I|[\w\-.]*:[\w\-.]*|[?$]\w+)\s*\["
                       r"|(?<![\w:])(?:FROM\s+)?STREAM\s+(?!I\b)[A-Za-z_][\w\-]*(?![\w\-:.])\s*[\[{]", re.I)),
    (CSPARQL, LazyPattern(r"\bFROM\s+STREAM\b|\bCOMPUTE\s+EVERY\b|\[\s*RANGE\s+TRIPLES\b", re.I)),
]
#: forms two dialects write (REGISTER QUERY: C-SPARQL and CQELS4J): they count when no other form does
_SHARED_MARKERS = [(CSPARQL, LazyPattern(r"\bREGISTER\s+QUERY\b", re.I))]


def guess(text: str) -> str | None:
    """The dialect a text looks written in, judging by its first distinctive form (None: no telling)."""
    plain = _NOISE.sub(lambda found: "I" if found.group(0).startswith("<") else " ", text)
    for markers in (_MARKERS, _SHARED_MARKERS):
        best: tuple[int, str] | None = None
        for dialect, marker in markers:
            found = marker.search(plain)
            if found and (best is None or found.start() < best[0]):
                best = (found.start(), dialect)
        if best:
            return best[1]
    return None
