"""The bounds that keep a long-running engine safe from its input: their defaults, in one place.

A stream processor is started once and left running, so no single line,
timestamp or document may cost it memory or time without bound. Each bound
below is hit by input only (never by the engine's own work), is reported at
the input's place (`FILE:LINE: reason`, counted, set aside) or as one located
error, and can be changed where the input comes in (an option of the command
line, an argument of the API). `None` always means "no bound".

MAX_LINE_BYTES = 4 MiB
    The longest line the line readers (`.tnt`, `.stream`, `.nt`, `.nq`, and the
    lines of TriG / Turtle documents) take. A longer line is set aside without
    ever being held whole: the readers cut lines from binary blocks and skip to
    the next newline once a line passes the bound. Why 4 MiB: a line is held
    three to five times over while it is parsed (bytes, text, the match, the
    interned key), so 4 MiB keeps one line under ~20 MB; stream elements are
    triples, and a literal of megabytes (a base64 image, a large geometry)
    belongs in a background document, not in a window. Options:
    `--max-line-bytes` (`reason`, `query`), `max_line_bytes=` (readers).

MAX_GAP_TIME_POINTS = 100,000
    How far ahead of the stream's current time point (the latest one read, or
    `--from`) a `reason` input line may jump. `reason` prints every time point
    of the timeline, so a jump of N points costs N evaluations and N output
    lines: one line dated 10^11 would never end. Why 100,000: an empty time
    point costs about 13 us, so the worst jump costs about a second and a
    stream silent for a whole day at one-second ticks (86,400 points) still
    gets through. Option: `reason --max-gap N`.

MAX_GAP_WINDOWS = 100,000
    How far ahead of the current time (the watermark, or the latest timestamp
    taken) a query input element may jump, counted in the smallest STEP (or
    COMPUTE EVERY period) of the registered time-driven queries. Each window
    in between is reported (empty ones too, unless `--report non-empty-content`,
    which skips them at no cost), and every later element would be late: a
    `.tnt` in ms with one ISO date among its lines walked 218 million windows.
    Why 100,000: an empty window costs 65-120 us to report, so the worst jump
    costs about ten seconds, and a stream silent for a day at one-second steps
    still gets through. Options: `query --max-gap N`, `serve --max-gap N` (there
    counted from the watermark at each request's start, for `?t=` and
    `POST /watermark` too), `RSPEngine(max_gap=N)`.

MAX_XML_ENTITY_EXPANSION = 16 MiB, or 10 times the document
    How much text the entities of an RDF/XML document may expand to, all
    references counted (checked from the DTD before the parser runs, so the
    900-byte "billion laughs" fails at once). Why: real ontologies use entities
    as IRI abbreviations (`&owl;`), which expand a document a few times at
    most; an expansion by orders of magnitude is an attack. External entities
    (SYSTEM / PUBLIC) are refused whatever their size: they name files or URLs
    the user did not give.

MAX_REMOTE_GRAPH_BYTES = 64 MiB, FETCH_TIMEOUT_S = 30 s
    A remote `FROM` graph the user allowed (`--allow-graph`) is fetched once, at
    registration: at most this much, within this time, or the registration
    fails with the reason. Why: a graph of tens of MB is a large background
    already (it is materialized in memory), and a slow server must not hold a
    registration for ever.

MAX_NESTING = 64 levels; MAX_QUERY_NESTING = 16 levels
    How deeply a LARS or DatalogMTL program (brackets and operators: `X + Y +
    ...`, `[1,1] BOXMINUS ...`) or a Turtle, TriG or JSON-LD document may nest,
    and how deeply the brackets of a query (`{`, `(`, `[`) may. Deeper is one
    located error, `FILE:LINE:COLUMN: nesting deeper than N levels`
    (`rsp_plugin.core.nesting`), where Python would stop with a RecursionError.
    Why: the parsers and what walks their results recurse per level (Python
    stops near 1,000 frames); rdflib's SPARQL parser takes about 40 frames per
    level of brackets in an expression (26 per group), so a query may nest 16
    levels, with room for the caller's own frames; its Turtle reader takes
    about 8, its JSON-LD reader 3. A program or a document nests a few levels,
    rarely ten.

MAX_EVAL_MS = 10,000 ms
    How long one evaluation of a query (one report) may take. A query is text
    from whoever registered it: a cartesian product of five patterns over a
    10k-triple window would never end, and holds every other query and the
    stream meanwhile. Past the bound the evaluation stops, its report is marked
    as cut (`{"t": T, "cut": "max-eval-ms", "error": ...}`, no results: a part
    of a join is an arbitrary part, and an aggregate over it a wrong number),
    one line says so with the query and the time, and the next windows are
    evaluated as usual (`rsp_plugin.query.bounds`). Why 10 s: the joins the
    benchmarks run take milliseconds to a second over 100k-triple windows, and
    a report ten seconds late is already useless to most streams. Options:
    `query --max-eval-ms N`, `RSPEngine(max_eval_ms=N)`.

MAX_SOLUTIONS = 1,000,000
    How many rows one step of an evaluation may hold (the solutions of a
    partial join, of the pattern, of a group): the same cut, named
    `"max-solutions"`. It bounds memory where time alone would not (a product
    fills gigabytes within the ten seconds). Why a million: a row of the
    per-fact path is a tuple of ids (~100 bytes), so a step holds ~100 MB at
    most; windows of 100k triples joined on keys stay far below it. Options:
    `query --max-solutions N`, `RSPEngine(max_solutions=N)`.

Not bounds but refusals, for the same reason (no input makes the process open
a URL or a file it was not given): SPARQL `SERVICE`, remote `FROM` graphs and
remote JSON-LD `@context`s are refused unless the user allows them (see
`rsp_plugin.query.safety` and `rsp_plugin.io.documents`).
"""

from __future__ import annotations

MAX_LINE_BYTES: int | None = 4 * 1024 * 1024
MAX_GAP_TIME_POINTS: int | None = 100_000
MAX_GAP_WINDOWS: int | None = 100_000
MAX_XML_ENTITY_EXPANSION: int = 16 * 1024 * 1024
XML_ENTITY_AMPLIFICATION: int = 10
MAX_REMOTE_GRAPH_BYTES: int = 64 * 1024 * 1024
FETCH_TIMEOUT_S: float = 30.0
MAX_NESTING: int = 64
MAX_QUERY_NESTING: int = 16
MAX_EVAL_MS: int | None = 10_000
MAX_SOLUTIONS: int | None = 1_000_000


def xml_expansion_bound(document_bytes: int) -> int:
    """The most text an XML document of this size may expand entities into."""
    return max(MAX_XML_ENTITY_EXPANSION, XML_ENTITY_AMPLIFICATION * document_bytes)


def parse_size(text: str) -> int:
    """`4194304`, `4M`, `4MiB`, `512K`, `1G` -> bytes (binary units).

    >>> parse_size("4M"), parse_size("512k"), parse_size("100")
    (4194304, 524288, 100)
    """
    value = text.strip().upper().removesuffix("IB").removesuffix("B")
    scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(value[-1:], 1)
    number = value[:-1] if scale != 1 else value
    if not number.isdigit() or int(number) < 1:
        raise ValueError(f"not a size: {text!r} (bytes, or a number with K, M or G)")
    return int(number) * scale
