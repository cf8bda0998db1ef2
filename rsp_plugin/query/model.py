"""A continuous query as plain values: its windows (S2R), its body (R2R), its output (R2S).

Every dialect the front end reads (`syntax.py`: C-SPARQL, RSP-QL, CQELS-QL,
SPARQLstream) parses into this one model, so the runtime knows no dialect.
Times are milliseconds. Nothing here imports the parser: data flows one way,
text -> `syntax.parse_query` -> `ContinuousQuery` -> runtime.

>>> RangeWindow(10_000, 1_000)
RangeWindow(range=10000, step=1000)
>>> RangeWindow(10_000, 10_000, end=5_000)     # [NOW-10 S TO NOW-5 S SLIDE 10 S]
RangeWindow(range=10000, step=10000, end=5000)
>>> CountWindow(5)
CountWindow(size=5, step=1)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum
from typing import Any

#: The IRIs `ENTAILMENT <...>` accepts, and the Materializer profile each names.
ENTAILMENT_PROFILES = {
    "http://www.w3.org/ns/entailment/RDFS": "rdfs",
    "http://www.w3.org/ns/owl-profile/RL": "owl-rl",
    "http://www.w3.org/ns/entailment/OWL-RL": "owl-rl",
}

#: The dialects a query can be written in, and how messages name them.
DIALECTS = {
    "csparql": "C-SPARQL",
    "rspql": "RSP-QL",
    "cqels": "CQELS-QL",
    "sparqlstream": "SPARQLstream",
}

#: The largest element count a window may have (its largest duration is `core.time.MAX_DURATION_MS`):
#: a count window keeps every element it counts, and 2^31 - 1 elements is already past what the
#: engine's per-element structures fit in any machine's memory.
MAX_WINDOW_ELEMENTS = (1 << 31) - 1


@dataclass(frozen=True, repr=False)
class RangeWindow:
    """`[RANGE r STEP s]`: reported at tau = k*s, holding the elements with tau - r <= t < tau - end.

    `end` is 0 for every window that reaches up to the report time; a window in
    the past (`[FROM NOW-PT2H TO NOW-PT1H STEP PT1H]`, `[NOW-10 S TO NOW-5 S ...]`)
    stops `end` ms before it: 0 <= end < range.
    """

    range: int
    step: int
    end: int = 0

    def __repr__(self) -> str:
        extra = f", end={self.end}" if self.end else ""
        return f"RangeWindow(range={self.range}, step={self.step}{extra})"


@dataclass(frozen=True)
class CountWindow:
    """`[TRIPLES n]`, `[ELEMENTS n STEP m]`: the last n elements, moved on every m elements."""

    size: int
    step: int = 1


@dataclass(frozen=True)
class NowWindow:
    """`[NOW]`: the elements since the query's previous evaluation (a tumbling window of its period)."""


Window = RangeWindow | CountWindow | NowWindow


class R2S(Enum):
    """Relation-to-stream operators: every answer, what is new, what is gone."""

    RSTREAM = "RSTREAM"
    ISTREAM = "ISTREAM"
    DSTREAM = "DSTREAM"


class ReportPolicy(Enum):
    """When a window's evaluation is reported (Botan et al.'s SECRET; RSP4J's names).

    on-window-close    at every report time (C-SPARQL, RSP-QL, SPARQLstream)
    non-empty-content  at every report time whose windows hold something
    on-content-change  at a report time whose windows' content differs from the last
                       report's (CQELS-QL, whose engine answers on every arrival)
    """

    ON_WINDOW_CLOSE = "on-window-close"
    NON_EMPTY_CONTENT = "non-empty-content"
    ON_CONTENT_CHANGE = "on-content-change"


@dataclass(frozen=True)
class Place:
    """Where something is written in the query text (1-based)."""

    line: int
    column: int


@dataclass(frozen=True)
class WindowClause:
    """One window of a query: over which stream, of which shape, as which graph.

    `name` is None for a window that joins the default graph (C-SPARQL's `FROM
    STREAM`, SPARQLstream's `FROM NAMED STREAM`) and the window's IRI for a named
    one (RSP-QL's `FROM NAMED WINDOW`, read with `WINDOW <name> { ... }`; CQELS-QL's
    `STREAM <s> [...] { ... }`, named by the parser).
    """

    stream: str
    window: Window
    name: str | None = None
    place: Place = Place(1, 1)


@dataclass
class ContinuousQuery:
    """A parsed continuous query: what the runtime registers."""

    text: str
    filename: str
    #: `REGISTER QUERY name` / `REGISTER RSTREAM <iri>`; None when not registered by name.
    name: str | None
    r2s: R2S
    #: "SELECT", "CONSTRUCT" or "ASK".
    form: str
    windows: tuple[WindowClause, ...]
    compute_every: int | None = None
    #: FROM <g> (default graph) and FROM NAMED <g>, as full IRIs.
    graphs: tuple[str, ...] = ()
    named_graphs: tuple[str, ...] = ()
    #: "rdfs", "owl-rl" or None.
    entailment: str | None = None
    #: the IRI written in RULES <...>, resolved against the query's base.
    rules: str | None = None
    #: a CONSTRUCT registered as a stream others can read (REGISTER STREAM, or RSP-QL's output IRI).
    output_stream: str | None = None
    #: the body as plain SPARQL 1.1 (the stream extensions blanked or rewritten).
    sparql: str = ""
    #: rdflib's translated query (algebra), evaluated per window.
    algebra: Any = None
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)
    #: the dialect it was read as (a key of DIALECTS).
    dialect: str = "csparql"
    #: the dialect's report policy, used unless the caller asks for another.
    report: ReportPolicy = ReportPolicy.ON_WINDOW_CLOSE
    #: what `--dialect` asked for ("auto" or a key of DIALECTS), to read the text again the same way.
    read_as: str = "auto"
    #: what the writer should know but is no error, `FILE:LINE:COLUMN: note: ...` (an undeclared
    #: well-known prefix and what it was read as); the command line prints them on stderr.
    notes: tuple[str, ...] = ()

    def __repr__(self) -> str:
        return f"<ContinuousQuery {self.name or self.filename} {self.r2s.value} {self.form} windows={len(self.windows)}>"
