"""The loop a Python user would write for a windowed query over a `.tnt` file: `bench shapes`' baseline.

For every report τ = k·STEP (from the first after the first line's time to the last whose window
still reaches the last line), a fresh pyoxigraph `Store` is loaded (`bulk_load`) with the lines of
[max(0, τ − RANGE), τ) and asked the query. With an ontology, `reasonable` (a Rust OWL 2 RL
reasoner) first materializes window + ontology, and its closure is what the store is loaded with.

`rsp-plugin bench shapes` copies this file into its scratch folder and runs it as its own process
(`python -P shapes_baseline.py ...`): it imports nothing of rsp_plugin, only pyoxigraph and
reasonable (the extra `rsp_plugin[bench]`), so its CPU seconds are what such a script costs:

    python -P shapes_baseline.py STREAM.tnt QUERY.rq RANGE_MS STEP_MS [--istream] [ONTOLOGY.ttl]

It prints one line per report, {"t": τ, "rows": {the first variable's value: the second's}} (a sensor
IRI: its AVG as pyoxigraph writes it); with `--istream`, a report leaves out the rows the previous
report had (ISTREAM over rows keyed by their first value).
"""

from __future__ import annotations

import bisect
import json
import os
import sys
import tempfile


def report_times(first: int, last: int, range_ms: int, step_ms: int) -> range:
    """τ = k·STEP, k ≥ 1, after `first`, up to the last τ whose window [τ − RANGE, τ) reaches `last`.

    >>> list(report_times(0, 12_000, 10_000, 5_000))
    [5000, 10000, 15000, 20000]
    """
    return range((first // step_ms + 1) * step_ms, (last + range_ms) // step_ms * step_ms + 1, step_ms)


def main(arguments: list[str]) -> int:
    istream = "--istream" in arguments
    arguments = [argument for argument in arguments if argument != "--istream"]
    stream, query_file, range_ms, step_ms = arguments[0], arguments[1], int(arguments[2]), int(arguments[3])
    ontology = arguments[4] if len(arguments) > 4 else None
    from pyoxigraph import RdfFormat, Store

    reasonable = None
    if ontology:
        import reasonable
    with open(query_file, encoding="utf-8") as handle:
        query = handle.read()
    times: list[int] = []
    triples: list[str] = []
    with open(stream, encoding="utf-8") as handle:
        for line in handle:
            stamp, _, triple = line.partition(" ")
            times.append(int(stamp))
            triples.append(triple)
    if not times:
        return 0
    out = sys.stdout
    before: dict = {}
    with tempfile.TemporaryDirectory(prefix="shapes-baseline-") as scratch:
        window_file = os.path.join(scratch, "window.ttl")  # (reasonable reads Turtle files; N-Triples is Turtle)
        for tau in report_times(times[0], times[-1], range_ms, step_ms):
            low = bisect.bisect_left(times, max(0, tau - range_ms))
            high = bisect.bisect_left(times, tau)
            text = "".join(triples[low:high])
            if reasonable is not None:
                with open(window_file, "w", encoding="utf-8") as handle:
                    handle.write(text)
                reasoner = reasonable.PyReasoner()  # (a window that loses triples is a full re-materialization anyway)
                reasoner.load_file(ontology)
                reasoner.load_file(window_file)
                text = "".join(f"{s.n3()} {p.n3()} {o.n3()} .\n" for s, p, o in reasoner.reason())
            store = Store()
            store.bulk_load(text.encode("utf-8"), RdfFormat.N_TRIPLES)
            rows = {solution[0].value: solution[1].value for solution in store.query(query)}
            if istream:
                rows, before = {key: value for key, value in rows.items() if key not in before}, rows
            out.write(json.dumps({"t": tau, "rows": rows}) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
