"""`rsp-plugin`: the command line (a contract: DESIGN.md, "Command line").

    rsp-plugin reason PROGRAM --stream FILE [--from T] [--to T] [--no-pruning] [--language lars|datalogmtl]
                      [--semantics stream|answer-stream] [--models 1|all] [--prefixes] [--time ms|iso]
                      [--explain ATOM [--at T] [--explain-format text|json] [--explain-depth N|all]]
    rsp-plugin query QUERY --stream IRI=FILE ... [--background FILE ...] [--engine local|spark]
                     [--dialect auto|csparql|rspql|cqels|sparqlstream] [--format F] [--prefixes] [--time ms|iso]
    rsp-plugin bench lars [...]

A user's mistake (a syntax error, a missing file) is one line on stderr and
exit status 2; a bad stream line is reported as `FILE:LINE: reason`, counted,
skipped, and the run goes on.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from ..columnar import one_core
from ..core import limits
from ..core.errors import LocatedError, UserError
from ..core.extras import MissingExtra, require
from .options import QueryOptions, ReasonOptions, ServeOptions, typed
from .startup import collector_paused, command_process, end_process

if TYPE_CHECKING:
    from ..bench import BenchOptions

EXIT_USER_ERROR = 2

#: --spark-log-level: Spark's levels (`rsp_plugin.spark.session.LOG_LEVELS`, not imported here: every command
#: would pay for the import)
SPARK_LOG_LEVELS = ("OFF", "FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE", "ALL")


def parse_arguments(argv: list[str] | None = None) -> argparse.Namespace:
    """The command line as `main` reads it (argparse exits with its usage message on a mistake).

    An option a command does not have is refused by that command, with its usage
    (`rsp-plugin reason: error: unrecognized arguments: --mode distributed`)."""
    options, unknown = _parser().parse_known_args(argv)
    if unknown:
        options.command_parser.error(f"unrecognized arguments: {' '.join(unknown)}")
    return options


def parse_options(argv: list[str] | None = None):
    """The command line as typed options (`rsp_plugin.cli.options`: `ReasonOptions`, `QueryOptions`,
    `ServeOptions`, `rsp_plugin.bench.BenchOptions`), built once from argparse's namespace."""
    return _typed(parse_arguments(argv))


def main(argv: list[str] | None = None) -> int:
    status = _command(argv)
    if argv is None:  # the process is the command: it ends here (rsp_plugin/cli/startup.py, no teardown)
        end_process(status)
    return status


def _command(argv: list[str] | None) -> int:
    one_core()  # polars and numpy's BLAS on one core unless the environment says otherwise (docs/performance.md, "Threads")
    namespace = parse_arguments(argv)
    try:
        with command_process(argv is None):  # (rsp_plugin/cli/startup.py: no collector at a start)
            return namespace.run(_typed(namespace))
    except MissingExtra as error:  # a part whose extra is not installed (rsp_plugin/core/extras.py)
        print(f"rsp-plugin: {error}", file=sys.stderr)
    except LocatedError as error:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    except UserError as error:
        print(f"rsp-plugin: {error}", file=sys.stderr)
    except BrokenPipeError:  # the reader went away (`| head`): the command ends quietly
        _drop_stdout()
        return 0
    except KeyboardInterrupt:
        print("rsp-plugin: interrupted", file=sys.stderr)
        return 130
    return EXIT_USER_ERROR


def _typed(namespace: argparse.Namespace):
    """The command's typed options. `bench`'s class is imported only for `bench` (every other command
    would pay for importing `rsp_plugin.bench`)."""
    cls = namespace.options
    if cls == BENCH_OPTIONS:
        from ..bench import BenchOptions as cls
    return typed(cls, namespace)


#: `bench`'s options class, by name until a bench runs (`_typed`)
BENCH_OPTIONS = "rsp_plugin.bench.BenchOptions"


def _drop_stdout() -> None:
    """Point standard output at /dev/null once its reader is gone, so that what is still buffered
    is dropped at exit instead of failing a second time on the way out (Python's own advice for
    SIGPIPE)."""
    import os

    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError):  # no real file behind stdout (embedded): nothing is flushed at exit
        pass


def _parser() -> argparse.ArgumentParser:
    # options are matched only as written (allow_abbrev=False, on every parser): a contract other tools
    # call must not read `--mode` as `--models` because one is a prefix of the other
    parser = argparse.ArgumentParser(prog="rsp-plugin", description="RDF stream processing with LARS rules.",
                                     allow_abbrev=False)
    parser.add_argument("--version", action=_Version, help="show the version and exit")
    commands = parser.add_subparsers(dest="command", required=True)

    reason = commands.add_parser("reason", allow_abbrev=False,
                                  help="run a LARS program over a stream; one JSON line per time point")
    reason.add_argument("program", help="the LARS program (.lars)")
    reason.add_argument("--stream", required=True,
                        help="the stream: .stream (atoms) or .tnt (timestamped N-Triples); - reads standard input; "
                             "mqtt://HOST:PORT/TOPIC a broker's topic whose messages hold such lines (--input-format)")
    reason.add_argument("--input-format", choices=["stream", "tnt"],
                        help="--stream - and mqtt:// streams: how the lines are written: stream (TIMESTAMP atom "
                             "lines, the default) or tnt (timestamped N-Triples); a file's extension says it")
    reason.add_argument("--from", dest="first", type=int, help="first time point (default: the stream's first)")
    reason.add_argument("--to", dest="last", type=int, help="last time point (default: the stream's last)")
    reason.add_argument("--no-pruning", action="store_true", help="do not switch off rules that cannot fire")
    reason.add_argument("--changes", action="store_true", help="print what started and stopped holding instead of snapshots")
    reason.add_argument("--max-derivations", type=int, default=None, metavar="N",
                        help="new atoms one time point may derive before the run stops with an error "
                             "(default 1000000)")
    reason.add_argument("--semantics", choices=["stream", "answer-stream"], default="stream",
                        help="stream (default): what is derived stays in the stream; answer-stream: the LARS "
                             "papers' Def. 5, each time point alone, loops through `not` allowed")
    reason.add_argument("--models", choices=["1", "all"], default="1",
                        help="--semantics answer-stream: the first answer set per time point (default) or all")
    reason.add_argument("--solver-timeout", type=float, metavar="SECONDS",
                        help="--semantics answer-stream: seconds one time point may take (default 60)")
    reason.add_argument("--language", choices=["lars", "datalogmtl"],
                        help="the program's language (default: by its extension, .mtl / .lars, or its content)")
    reason.add_argument("--max-gap", type=_bound, default=limits.MAX_GAP_TIME_POINTS, metavar="N",
                        help="set aside a line more than N time points ahead of the stream "
                             f"(default {limits.MAX_GAP_TIME_POINTS:,}; 'none': no bound)")
    _line_bound(reason)
    reason.add_argument("--explain", metavar="ATOM",
                        help="print why ATOM (written as the output writes atoms) holds at --at instead of the "
                             "usual lines: the rule, the ground body with each window's witnesses, down to "
                             "stream lines, and the horizon with the body atom that bounds it")
    reason.add_argument("--at", type=int, metavar="T", help="--explain: the time point (default: the last)")
    reason.add_argument("--explain-format", choices=["text", "json"], default="text",
                        help="--explain: indented text (default) or the tree as JSON")
    reason.add_argument("--engine", choices=["local", "spark"], default="local",
                        help="local (default): the engine in this process; spark: Spark reads the stream file "
                             "(rsp_plugin/cli/spark_reason.py)")
    reason.add_argument("--mode", choices=["driver", "distributed"], default=None,
                        help="--engine spark: driver (default): one engine on the driver over Spark's micro-batches; "
                             "distributed: the program's work split on the executors, by key or by time slices, "
                             "where the program allows it (else on the driver, said on stderr)")
    reason.add_argument("--master", help="--engine spark: the Spark master URL (default local[2])")
    reason.add_argument("--checkpoint", metavar="DIR",
                        help="--engine spark --mode driver: Spark's offsets and the engine's state; a restarted run "
                             "goes on from there")
    reason.add_argument("--checkpoint-key", metavar="FILE",
                        help="--checkpoint: the key file (mode 0600, at least 16 bytes) the states are authenticated "
                             "with; default $RSP_PLUGIN_CHECKPOINT_KEY, else DIR/rsp-plugin.key")
    reason.add_argument("--batch-lines", type=int, metavar="N",
                        help="--engine spark --mode driver: stream lines per micro-batch (default 50000)")
    reason.add_argument("--spark-log-level", type=str.upper, choices=SPARK_LOG_LEVELS, metavar="LEVEL",
                        help="--engine spark: the least level of Spark's own log lines shown on stderr (default "
                             "ERROR; WARN, INFO, DEBUG show more)")
    _mqtt_arguments(reason, payload_time=False)
    _explain_depth(reason)
    _readable_options(reason, "the program's")
    reason.set_defaults(run=_reason, options=ReasonOptions, command_parser=reason)

    query = commands.add_parser("query", allow_abbrev=False,
                                 help="run a continuous query (C-SPARQL, RSP-QL, CQELS-QL, SPARQLstream) over "
                                      "streams; one JSON line per evaluation")
    query.add_argument("query", help="the query file (.rq)")
    query.add_argument("--stream", action="append", required=True,
                       metavar="IRI=FILE|IRI=-|IRI=tcp://HOST:PORT|IRI=mqtt://HOST:PORT/TOPIC",
                       help="a stream the query reads: .tnt, .trig / .nq (timestamped graphs), .nt / .ttl "
                            "(one moment: FILE@T gives its time in ms, default 0); - reads standard input, "
                            "tcp://HOST:PORT a socket, as the lines come, mqtt://HOST:PORT/TOPIC a broker's "
                            "topic (+ and # allowed; mqtts:// for TLS), each message as it comes (--input-format); "
                            "repeatable")
    query.add_argument("--input-format", choices=["tnt", "nt", "ttl", "trig", "nq", "jsonld"], default="tnt",
                       help="the format of standard input, sockets and broker messages (default tnt: timestamped "
                            "N-Triples lines; nt, ttl, jsonld documents are seen at their arrival unless "
                            "--payload-time; trig, nq: each graph at its prov:generatedAtTime)")
    query.add_argument("--publish", metavar="mqtt://HOST:PORT/TOPIC",
                       help="publish each report as one message to this topic, in --format, instead of printing it")
    query.add_argument("--background", action="append", default=[], metavar="[IRI=]FILE",
                       help="a static graph: FILE joins every query's default graph; IRI=FILE is graph <IRI> "
                            "for FROM <IRI> / FROM NAMED <IRI>; repeatable")
    query.add_argument("--engine", choices=["local", "spark"], default="local")
    query.add_argument("--master", help="--engine spark: the Spark master URL (default local[2])")
    query.add_argument("--checkpoint", metavar="DIR",
                       help="--engine spark: offsets and engine state; a restarted run goes on from there")
    query.add_argument("--checkpoint-key", metavar="FILE",
                       help="--checkpoint: the key file (mode 0600, at least 16 bytes) the engine states are "
                            "authenticated with (HMAC-SHA256); default $RSP_PLUGIN_CHECKPOINT_KEY, else "
                            "DIR/rsp-plugin.key, made at the first run; a state that does not authenticate is refused")
    query.add_argument("--batch-lines", type=int, metavar="N",
                       help="--engine spark: stream lines per micro-batch (default 50000; --mode distributed: 1000000 "
                            "per task slot)")
    query.add_argument("--mode", choices=["driver", "distributed"], default=None,
                       help="--engine spark: driver (default): one engine on the driver, fed by Spark; "
                            "distributed: windows, entailment, joins and aggregates as Spark plans on the "
                            "executors (a query it does not cover yet runs in driver mode, said on stderr)")
    query.add_argument("--spark-log-level", type=str.upper, choices=SPARK_LOG_LEVELS, metavar="LEVEL",
                       help="--engine spark: the least level of Spark's own log lines shown on stderr (default ERROR; "
                            "WARN, INFO, DEBUG show more)")
    query.add_argument("--partition-by", metavar="VAR",
                       help="--engine spark: one engine per value of ?VAR on the executors (partitioned mode; "
                            "the query must be key-local for it, else it is refused with the reason)")
    query.add_argument("--format", choices=["json", "sparql-json", "sparql-jsonl", "sparql-xml", "csv", "tsv", "nt",
                                            "trig"],
                       default="json",
                       help="json: {\"t\", \"bindings\" | \"triples\" | \"boolean\"} per line; sparql-json, sparql-xml, "
                            "csv, tsv: one W3C SPARQL 1.1 results document with the evaluation time (t); "
                            "sparql-jsonl: one W3C JSON results object per evaluation and line; nt, trig: "
                            "CONSTRUCT triples (TriG: a named graph per evaluation)")
    _readable_options(query, "the query's")
    query.add_argument("--from", dest="first", type=int, metavar="T",
                       help="take the elements from time T on (ms)")
    query.add_argument("--to", dest="last", type=int, metavar="T",
                       help="take the elements up to time T (ms); a live source is closed after it")
    query.add_argument("-q", "--quiet", action="store_true", help="no progress line on stderr")
    query.add_argument("--report", choices=["on-window-close", "non-empty-content", "on-content-change"],
                       default=None,
                       help="report every window, only windows with content, or only when the windows' content "
                            "changed (default: the dialect's: on-content-change for CQELS-QL, on-window-close "
                            "for the others)")
    query.add_argument("--dialect", choices=["auto", "csparql", "rspql", "cqels", "sparqlstream"], default="auto",
                       help="the query's language: auto (default) reads every dialect; csparql (C-SPARQL), "
                            "rspql (RSP-QL), cqels (CQELS-QL), sparqlstream (SPARQLstream) read only that one's forms")
    query.add_argument("--max-gap", type=_bound, default=limits.MAX_GAP_WINDOWS, metavar="N",
                       help="set aside an element more than N windows (of the smallest STEP) ahead of the stream "
                            f"(default {limits.MAX_GAP_WINDOWS:,}; 'none': no bound)")
    query.add_argument("--max-eval-ms", type=_bound, default=limits.MAX_EVAL_MS, metavar="MS",
                       help="stop an evaluation that takes longer, its report marked \"cut\"; the stream goes on "
                            f"(default {limits.MAX_EVAL_MS:,}; 'none': no bound)")
    query.add_argument("--max-solutions", type=_bound, default=limits.MAX_SOLUTIONS, metavar="N",
                       help="stop an evaluation once a step of it holds more rows, its report marked \"cut\" "
                            f"(default {limits.MAX_SOLUTIONS:,}; 'none': no bound)")
    _line_bound(query)
    query.add_argument("--allow-service", action="extend", nargs="+", default=[], metavar="URL",
                       help="SERVICE endpoints the query may send requests to (an IRI, or a prefix ending in *); "
                            "by default SERVICE is refused")
    query.add_argument("--allow-graph", action="extend", nargs="+", default=[], metavar="URL",
                       help="remote FROM graphs that may be fetched (once, at registration); by default refused")
    query.add_argument("--jsonld-context", action="append", default=[], metavar="IRI=FILE",
                       help="read the JSON-LD context IRI from a local file (remote contexts are never fetched)")
    query.add_argument("--explain", action="store_true",
                       help="after each report, why each row (or triple) is in it: the matches of the pattern "
                            "down to stream lines, background graphs, entailments and rule derivations")
    query.add_argument("--explain-format", choices=["text", "json"], default="text",
                       help="--explain: indented text (default) or one JSON object per row")
    _mqtt_arguments(query)
    _explain_depth(query)
    query.set_defaults(run=_query, options=QueryOptions, command_parser=query)

    serve = commands.add_parser("serve", allow_abbrev=False,
                                help="run the HTTP service and its live page (register streams and queries, "
                                     "push data, watch results)")
    serve.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    serve.add_argument("--port", type=int, default=8000)
    serve.add_argument("--token", help="the bearer token every API request must carry (needed beyond 127.0.0.1)")
    serve.add_argument("--graph", action="append", default=[], metavar="IRI=FILE",
                       help="a static graph queries may read with FROM <IRI>; repeatable")
    serve.add_argument("--background", action="append", default=[], metavar="FILE",
                       help="a graph every query sees in its default graph; repeatable")
    serve.add_argument("--rules", action="append", default=[], metavar="IRI=FILE",
                       help="a LARS program queries may name with RULES <IRI>; repeatable")
    serve.add_argument("--webhook-allow", action="append", default=[], metavar="URL",
                       help="a URL prefix webhook observers may POST to (none by default); repeatable")
    serve.add_argument("--max-body", type=int, default=8 * 1024 * 1024, metavar="BYTES",
                       help="the largest request body or WebSocket message (default 8 MiB)")
    serve.add_argument("--rate", type=float, default=200.0, help="requests per second per client (default 200)")
    serve.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                       help="another name the service answers to (a Host header), besides the address it listens "
                            "on and localhost; '*': any (behind a proxy that checks it); repeatable")
    serve.add_argument("--allow-origin", action="append", default=[], metavar="ORIGIN",
                       help="an origin (https://dash.example.org) whose pages may call the API, besides the "
                            "service's own page; repeatable")
    serve.add_argument("--trusted-proxy", action="append", default=[], metavar="ADDRESS",
                       help="a proxy (address or network) whose X-Forwarded-For names the client (for the rate); "
                            "none by default; repeatable")
    serve.add_argument("--history-bytes", type=_bytes, default=1024 * 1024, metavar="SIZE",
                       help="the JSON of the reports kept per query for late readers (default 1M; at most 1,000 "
                            "reports; the latest is always kept)")
    serve.add_argument("--queue-bytes", type=_bytes, default=16 * 1024 * 1024, metavar="SIZE",
                       help="the JSON of the reports waiting per SSE / WebSocket reader or webhook before the reader "
                            "is cut off or the webhook drops the oldest (default 16M)")
    serve.add_argument("--page-bytes", type=_bytes, default=1024 * 1024, metavar="SIZE",
                       help="the JSON of the reports one GET /queries/{name}/results answers (default 1M; "
                            "\"more\": true says another page follows)")
    serve.add_argument("--idle-timeout", type=float, metavar="SECONDS",
                       help="a stream that has had no element for SECONDS stops holding the watermark back "
                            "(default: it holds it until POST /watermark or its next element)")
    serve.add_argument("--max-queries", type=int, default=1000, metavar="N",
                       help="queries registered at once (default 1,000)")
    serve.add_argument("--max-gap", type=_bound, default=limits.MAX_GAP_WINDOWS, metavar="N",
                       help="set aside an element, and refuse ?t= or POST /watermark, more than N windows (of the "
                            f"smallest STEP) ahead of the stream (default {limits.MAX_GAP_WINDOWS:,}; 'none': no bound)")
    serve.add_argument("--explain", action="store_true",
                       help="keep what explanations need and answer GET /queries/{name}/explain (the page's "
                            "\"why?\"): the matches of a row down to stream elements, entailments, rule derivations")
    serve.add_argument("--mqtt-allow", action="append", default=[], metavar="mqtt://HOST:PORT[/TOPIC]",
                       help="a broker (and topic prefix) a stream registered over HTTP may read from, or a query's "
                            "observer publish to (none by default); repeatable")
    _mqtt_arguments(serve, idle=False)
    serve.set_defaults(run=_serve, options=ServeOptions, command_parser=serve)

    bench = commands.add_parser("bench", allow_abbrev=False, help="benchmarks; print tables of medians and ratios")
    bench.add_argument("suite", choices=["lars", "pruning", "query", "materialize", "spark", "serve", "datalogmtl",
                                         "throughput", "soak", "reason", "mqtt", "startup", "shapes"],
                       help="which benchmark suite")
    bench.add_argument("workloads", nargs="*", help="workload names (default: all)")
    bench.add_argument("--windows", type=_ints, help="window sizes, e.g. 1,20,40,80")
    bench.add_argument("--rates", type=_ints, help="atoms per time point, e.g. 200,400,800; mqtt: messages "
                                                   "offered per second, e.g. 1000,10000,100000; shapes: "
                                                   "triples per second of event time, e.g. 100,1000")
    bench.add_argument("--range-steps", type=_range_steps, metavar="R/S,...",
                       help="shapes: windows as RANGE/STEP in seconds (default 2/1,10/5,60/1,300/1)")
    bench.add_argument("--time-points", type=int, default=300)
    bench.add_argument("--repeat", type=int, default=None,
                       help="runs per setting; the median is reported (default 3; spark: 1; startup: 5)")
    bench.add_argument("--quick", action="store_true", help="small settings, to see that it runs")
    bench.add_argument("--baseline-repeat", type=int, metavar="N",
                       help="shapes: runs of each baseline (default: --repeat; its slowest cells take minutes each)")
    bench.add_argument("--sizes", type=_ints, help="materialize: materialization sizes in triples, e.g. 10000,100000; "
                                                   "throughput, shapes: stream sizes in triples")
    bench.add_argument("--changes", type=_floats, help="materialize: %% of it changing per slide, e.g. 0.1,1,20")
    bench.add_argument("--slides", type=int, help="materialize: slides measured per setting")
    bench.add_argument("--owlrl-slides", type=int, help="materialize: slides owlrl's closure is timed on")
    bench.add_argument("--explain", action="store_true",
                       help="lars, materialize: what keeping explanations costs (time and memory, on and off)")
    bench.add_argument("--plot", metavar="PNG",
                       help="throughput / soak / spark / mqtt / shapes: where the plot goes ('-': none)")
    bench.add_argument("--old-limit", type=int, metavar="N",
                       help="throughput: the per-fact path runs on at most the first N triples (default 1M)")
    bench.add_argument("--triples", type=int, metavar="N",
                       help="soak: stream triples (default 5M; LARS 2M atoms); spark: triples of the stream (150k)")
    bench.add_argument("--masters", type=lambda text: [m for m in text.split(";") if m],
                       help="spark: Spark masters, ';'-separated (default local[1];local[2];local-cluster[2,1,1024])")
    bench.add_argument("--modes", type=lambda text: [m for m in text.split(",") if m],
                       help="spark: which modes, e.g. driver,distributed (default: driver,partitioned,distributed)")
    bench.add_argument("--project", type=int, metavar="N",
                       help="spark: project distributed RDFS to N one-core executors from Spark's stage metrics")
    bench.add_argument("--overhead", action="store_true",
                       help="spark: the Spark pipeline against the local engine (driver-side mode only) instead of "
                            "the modes on 1 and 2 cores")
    bench.add_argument("--marginal", action="store_true",
                       help="spark: seconds per extra million triples (runs at N and 2N), distributed mode next to "
                            "one pinned embedded core, workloads plain and rdfs; and the fixed cost of a small run")
    bench.add_argument("--live", action="store_true",
                       help="shapes: per-report CPU of a live stream, each element pushed and the watermark moved "
                            "to it (the service's way), instead of whole processes")
    bench.set_defaults(run=_bench, options=BENCH_OPTIONS, command_parser=bench)
    return parser


def _mqtt_arguments(command, *, payload_time: bool = True, idle: bool = True) -> None:
    """How a command talks to an MQTT broker (`rsp_plugin.io.mqtt`): delivery, session, credentials, TLS."""
    group = command.add_argument_group("MQTT (mqtt:// streams and --publish; needs the extra rsp_plugin[mqtt])")
    group.add_argument("--mqtt-qos", type=int, choices=[0, 1, 2], default=1,
                       help="delivery: 0 at most once, 1 at least once (default; a redelivered double is dropped), "
                            "2 exactly once")
    group.add_argument("--mqtt-client-id", metavar="ID",
                       help="keep the broker session under this id across runs: the next run with it gets what "
                            "came meanwhile (default: a fresh session, kept only through reconnects)")
    group.add_argument("--mqtt-protocol", choices=["3.1.1", "5"], default="3.1.1",
                       help="MQTT 3.1.1 (default: its persistent sessions survive a broker's restart everywhere) or 5")
    group.add_argument("--mqtt-session-expiry", type=int, default=3600, metavar="SECONDS",
                       help="MQTT 5: how long the broker keeps the session while we are away (default 3600)")
    group.add_argument("--mqtt-username", metavar="NAME")
    group.add_argument("--mqtt-password-file", metavar="FILE",
                       help="the password, on the file's first line (or in the environment variable "
                            "RSP_PLUGIN_MQTT_PASSWORD)")
    group.add_argument("--mqtt-ca-file", metavar="PEM", help="TLS: the CA certificates to trust (default: the system's)")
    group.add_argument("--mqtt-cert-file", metavar="PEM", help="TLS: a client certificate")
    group.add_argument("--mqtt-key-file", metavar="PEM", help="TLS: the client certificate's key")
    group.add_argument("--mqtt-insecure", action="store_true", help="TLS without checking the broker's host name")
    if idle:
        group.add_argument("--mqtt-idle", type=float, metavar="SECONDS",
                           help="end a broker's stream after SECONDS without a message, as a file ends (default: "
                                "never; Ctrl-C)")
    if payload_time:
        group.add_argument("--payload-time", metavar="IRI",
                           help="nt, ttl, jsonld messages: their time is the object of their triple with this "
                                "predicate (ms or xsd:dateTime), not their arrival")


def _readable_options(command, whose: str) -> None:
    command.add_argument("--prefixes", action="store_true",
                         help=f"write IRIs as prefixed names with {whose} prefixes (and the well-known ones), "
                              "numbers as Turtle writes them (54.5, not \"54.5\"^^xsd:decimal); default: full terms")
    command.add_argument("--time", choices=["ms", "iso"], default="ms",
                         help="report times as epoch ms (default) or as xsd:dateTime in UTC (iso; reason: "
                              "a program with @tick)")


def _explain_depth(command) -> None:
    command.add_argument("--explain-depth", type=_depth, default=None, metavar="N|all",
                         help="--explain: show the derivation tree's first N levels of facts ('all': the "
                              "whole tree; default: query text 3, otherwise all)")


def _depth(text: str) -> int:
    """--explain-depth: a number of levels, or 0 for 'all' (the option not given is None)."""
    if text.lower() in ("all", "none", "full"):
        return 0
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a number of levels or 'all', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a number of levels >= 1 or 'all', got {text!r}")
    return value


def _line_bound(command) -> None:
    command.add_argument("--max-line-bytes", type=_size, default=limits.MAX_LINE_BYTES, metavar="SIZE",
                         help="set aside a stream line longer than this, unread (e.g. 16M; default "
                              f"{limits.MAX_LINE_BYTES // (1 << 20)}M; 'none': no bound)")


def _bound(text: str) -> int | None:
    if text.lower() in ("none", "off", "unbounded"):
        return None
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'none', got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected a positive integer or 'none', got {text!r}")
    return value


def _bytes(text: str) -> int:
    """A size that has to be one (no 'none')."""
    try:
        return limits.parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _size(text: str) -> int | None:
    if text.lower() in ("none", "off", "unbounded"):
        return None
    try:
        return limits.parse_size(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def _range_steps(text: str) -> list[tuple[int, int]]:
    """`10/5,60/1`: windows as (RANGE, STEP) seconds."""
    try:
        pairs = [tuple(int(number) for number in part.split("/")) for part in text.split(",") if part]
    except ValueError:
        pairs = []
    if not pairs or any(len(pair) != 2 or min(pair) <= 0 for pair in pairs):
        raise argparse.ArgumentTypeError(f"expected RANGE/STEP pairs in seconds separated by commas (e.g. 10/5,60/1), "
                                         f"got {text!r}")
    return pairs


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


def _reason(options: ReasonOptions) -> int:
    # the one dispatcher: LARS, DatalogMTL, answer streams, explanations, brokers
    from .reason import reason

    return reason(options)


def _query(options: QueryOptions) -> int:
    spark_only = {"mode": options.mode, "partition-by": options.partition_by, "spark-log-level": options.spark_log_level}
    given = [name for name, value in spark_only.items() if value]
    if options.engine != "spark" and given:
        raise UserError(f"--{given[0]} is read by --engine spark")
    if options.engine == "spark":
        if options.format not in ("json", "sparql-jsonl"):
            raise UserError(f"--format {options.format} is written by --engine local; --engine spark writes JSON "
                            f"lines: json or sparql-jsonl")
        if options.prefixes and options.format != "json":
            raise UserError(f"--prefixes writes prefixed names, which --format {options.format} cannot hold: it goes "
                            f"with json")
        if options.first is not None or options.last is not None:
            raise UserError("--from / --to are read by --engine local")
        if options.explain:
            raise UserError("--explain is given by --engine local (the explanations are kept by its engine)")
        require("spark", "--engine spark")
        from .spark_query import cli_run

        return cli_run(options)
    with collector_paused():  # (the imports: rdflib, polars, the query's parser)
        from .query import run_query

    return run_query(options)


def _serve(options: ServeOptions) -> int:
    require("service", "rsp-plugin serve")
    from ..service import ServiceSettings, serve

    def pairs(values, what):
        found = {}
        for text in values:
            iri, equals, path = text.partition("=")
            if not equals or not iri or not path:
                raise UserError(f"--{what} {text}: expected IRI=FILE")
            if not Path(path).is_file():
                raise UserError(f"{path}: cannot read the {what}: no such file")
            found[iri.strip("<>")] = path
        return found

    for path in options.background:
        if not Path(path).is_file():
            raise UserError(f"{path}: cannot read the background graph: no such file")
    settings = ServiceSettings(host=options.host, port=options.port, token=options.token,
                               graphs=pairs(options.graph, "graph"), rules=pairs(options.rules, "rules"),
                               background=tuple(options.background), webhook_allow=tuple(options.webhook_allow),
                               max_body_bytes=options.max_body, rate=options.rate, burst=max(1, int(options.rate * 2)),
                               max_gap=options.max_gap, history_bytes=options.history_bytes,
                               queue_bytes=options.queue_bytes, page_bytes=options.page_bytes,
                               max_queries=options.max_queries, idle_timeout=options.idle_timeout,
                               allow_hosts=tuple(options.allow_host),
                               allow_origins=tuple(options.allow_origin), trusted_proxies=tuple(options.trusted_proxy),
                               mqtt_allow=tuple(options.mqtt_allow), mqtt=_broker_options(options))
    try:
        settings.check()
    except ValueError as error:
        raise UserError(str(error)) from None
    host = f"[{settings.listen_host}]" if ":" in settings.listen_host else settings.listen_host
    print(f"rsp-plugin: serving on http://{host}:{options.port}/ (the page; the API: /docs)", file=sys.stderr)
    serve(settings, explain=options.explain)
    return 0


def _broker_options(options):
    """serve --mqtt-*: how the service talks to the brokers it is allowed (None: no broker allowed)."""
    if not options.mqtt_allow:
        return None
    for url in options.mqtt_allow:
        if not url.startswith(("mqtt://", "mqtts://")):
            raise UserError(f"--mqtt-allow {url}: expected mqtt://HOST:PORT[/TOPIC-PREFIX]")
    return options.mqtt.resolved()


class _Version(argparse.Action):
    """`--version`, looked up only when asked (importlib.metadata costs every other command 16 ms)."""

    def __init__(self, option_strings, dest, **kwargs):
        super().__init__(option_strings, dest, nargs=0, **kwargs)

    def __call__(self, parser, namespace, values, option_string=None):
        print(f"rsp-plugin {_version()}")
        parser.exit()


def _version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("rsp_plugin")
    except PackageNotFoundError:  # run from a source tree that is not installed
        return "unknown"


def _bench(options: BenchOptions) -> int:
    from ..bench import needs, run_suite

    for extra, what in needs(options):
        require(extra, what)

    return run_suite(options)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
