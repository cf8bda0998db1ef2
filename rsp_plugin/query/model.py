"""A continuous query as plain values: its windows (S2R), its body (R2R), its output (R2S).

Both query languages parse into this model: the C-SPARQL form
(`REGISTER QUERY q COMPUTE EVERY 1s AS ... FROM STREAM <s> [RANGE 10s STEP 1s]`)
and the RSP-QL form (`REGISTER RSTREAM <q> AS ... FROM NAMED WINDOW <w> ON <s>
[RANGE PT10S STEP PT1S] ... WINDOW <w> { ... }`). Times are milliseconds.

>>> RangeWindow(10_000, 1_000)
RangeWindow(range=10000, step=1000)
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


@dataclass(frozen=True)
class RangeWindow:
    """`[RANGE r STEP s]`: reported at tau = k*s, holding the elements with tau - r <= t < tau."""

    range: int
    step: int


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
    """When a window's evaluation is reported (Botan et al.; RSP4J's names)."""

    ON_WINDOW_CLOSE = "on-window-close"
    NON_EMPTY_CONTENT = "non-empty-content"


@dataclass(frozen=True)
class Place:
    """Where something is written in the query text (1-based)."""

    line: int
    column: int


@dataclass(frozen=True)
class WindowClause:
    """One window of a query: over which stream, of which shape, as which graph.

    `name` is None for C-SPARQL's `FROM STREAM` (the window joins the default
    graph) and the window's IRI for RSP-QL's `FROM NAMED WINDOW` (read with
    `WINDOW <name> { ... }`).
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
    #: the body as plain SPARQL 1.1 (extensions blanked out, same lines and columns).
    sparql: str = ""
    #: rdflib's translated query (algebra), evaluated per window.
    algebra: Any = None
    base: str | None = None
    prefixes: dict[str, str] = field(default_factory=dict)
    places: dict[str, Place] = field(default_factory=dict)

    def __repr__(self) -> str:
        return f"<ContinuousQuery {self.name or self.filename} {self.r2s.value} {self.form} windows={len(self.windows)}>"

    def __reduce__(self):
        """Pickled as its text: rdflib's algebra is rebuilt by parsing it again."""
        from .syntax import reparse

        return reparse, (self.text, self.filename, self.base)
