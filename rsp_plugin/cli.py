"""`rsp-plugin`: the command line (a contract: DESIGN.md, "Command line").

    rsp-plugin reason PROGRAM --stream FILE [--from T] [--to T] [--no-pruning]
    rsp-plugin query QUERY --stream IRI=FILE ... [--background FILE ...] [--engine local|spark]
    rsp-plugin bench lars [...]

A user's mistake (a syntax error, a missing file) is one line on stderr and
exit status 2; a bad stream line is reported as `FILE:LINE: reason`, counted,
skipped, and the run goes on.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from .errors import LocatedError

EXIT_USER_ERROR = 2


class UserError(Exception):
    """A mistake on the command line: printed as one line, exit status 2."""


def main(argv: list[str] | None = None) -> int:
    parser = _parser()
    options = parser.parse_args(argv)
    try:
        return options.run(options)
    except LocatedError as error:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    except UserError as error:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    except BrokenPipeError:
        sys.stderr.close()
        return 0
    except KeyboardInterrupt:
        print("rsp-plugin: interrupted", file=sys.stderr)
        return 130
    return EXIT_USER_ERROR


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="rsp-plugin", description="RDF stream processing with LARS rules.")
    commands = parser.add_subparsers(dest="command", required=True)

    reason = commands.add_parser("reason", help="run a LARS program over a stream; one JSON line per time point")
    reason.add_argument("program", help="the LARS program (.lars)")
    reason.add_argument("--stream", required=True, help="the stream: .stream (atoms) or .tnt (timestamped N-Triples)")
    reason.add_argument("--from", dest="first", type=int, help="first time point (default: the stream's first)")
    reason.add_argument("--to", dest="last", type=int, help="last time point (default: the stream's last)")
    reason.add_argument("--no-pruning", action="store_true", help="do not switch off rules that cannot fire")
    reason.add_argument("--changes", action="store_true", help="print what started and stopped holding instead of snapshots")
    reason.set_defaults(run=_reason)

    query = commands.add_parser("query", help="run a continuous query (C-SPARQL / RSP-QL) over streams; one JSON line per evaluation")
    query.add_argument("query", help="the query file (.rq)")
    query.add_argument("--stream", action="append", required=True, metavar="IRI=FILE",
                       help="a stream the query reads: .tnt, .trig / .nq (timestamped graphs), .nt / .ttl "
                            "(one moment: FILE@T gives its time in ms, default 0); repeatable")
    query.add_argument("--background", action="append", default=[], metavar="[IRI=]FILE",
                       help="a static graph: FILE joins every query's default graph; IRI=FILE is graph <IRI> "
                            "for FROM <IRI> / FROM NAMED <IRI>; repeatable")
    query.add_argument("--engine", choices=["local", "spark"], default="local")
    query.add_argument("--master", help="--engine spark: the Spark master URL (default local[2])")
    query.add_argument("--checkpoint", metavar="DIR",
                       help="--engine spark: offsets and engine state; a restarted run goes on from there")
    query.add_argument("--batch-lines", type=int, metavar="N",
                       help="--engine spark: stream lines per micro-batch (default 50000)")
    query.add_argument("--format", choices=["json", "sparql-json"], default="json",
                       help="json: {\"t\", \"bindings\" | \"triples\" | \"boolean\"}; sparql-json: W3C SPARQL 1.1 JSON results with \"t\"")
    query.add_argument("--report", choices=["on-window-close", "non-empty-content"], default="on-window-close",
                       help="report every window (default) or only windows with content")
    query.set_defaults(run=_query)

    bench = commands.add_parser("bench", help="benchmarks; print tables of medians and ratios")
    bench.add_argument("suite", choices=["lars", "pruning", "query", "materialize", "spark", "throughput", "soak"],
                       help="which benchmark suite")
    bench.add_argument("workloads", nargs="*", help="workload names (default: all)")
    bench.add_argument("--windows", type=_ints, help="window sizes, e.g. 1,20,40,80")
    bench.add_argument("--rates", type=_ints, help="atoms per time point, e.g. 200,400,800")
    bench.add_argument("--time-points", type=int, default=300)
    bench.add_argument("--repeat", type=int, default=3, help="runs per setting; the median is reported")
    bench.add_argument("--quick", action="store_true", help="small settings, to see that it runs")
    bench.add_argument("--sizes", type=_ints, help="materialize: materialization sizes in triples, e.g. 10000,100000")
    bench.add_argument("--changes", type=_floats, help="materialize: %% of it changing per slide, e.g. 0.1,1,20")
    bench.add_argument("--slides", type=int, help="materialize: slides measured per setting")
    bench.add_argument("--owlrl-slides", type=int, help="materialize: slides owlrl's closure is timed on")
    bench.add_argument("--plot", metavar="PNG", help="throughput / soak: where the plot goes ('-': none)")
    bench.add_argument("--old-limit", type=int, metavar="N",
                       help="throughput: the per-fact path runs on at most the first N triples (default 1M)")
    bench.add_argument("--triples", type=int, metavar="N", help="soak: stream triples (default 5M; LARS 2M atoms)")
    bench.set_defaults(run=_bench)
    return parser


def _ints(text: str) -> list[int]:
    try:
        return [int(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected integers separated by commas, got {text!r}") from None


def _floats(text: str) -> list[float]:
    try:
        return [float(part) for part in text.split(",") if part]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected numbers separated by commas, got {text!r}") from None


def _reason(options) -> int:
    from .batch.reason import replay
    from .lars.syntax import parse_program_file

    program = parse_program_file(options.program)
    stream = Path(options.stream)
    try:
        stream.open("rb").close()
    except OSError as error:
        raise UserError(f"{stream}: cannot read the stream: {error.strerror}") from None
    if options.first is not None and options.last is not None and options.first > options.last:
        raise UserError(f"--from {options.first} is after --to {options.last}")

    rejected = 0

    def set_aside(record) -> None:
        nonlocal rejected
        rejected += 1
        print(record, file=sys.stderr)

    # the stream read a block at a time, the output kept from the engine's changes (rsp_plugin.batch.reason)
    replay(program, stream, sys.stdout, first=options.first, last=options.last, pruning=not options.no_pruning,
           changes=options.changes, on_rejected=set_aside)
    if rejected:
        print(f"rsp-plugin: {rejected} stream line{'s' if rejected != 1 else ''} set aside (see above)", file=sys.stderr)
    return 0


def _query(options) -> int:
    if options.engine == "spark":
        from .spark.cli import cli_run

        return cli_run(options, UserError)
    from .query.cli import run_query

    return run_query(options, UserError)


def _bench(options) -> int:
    from .bench import run_suite

    return run_suite(options)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
