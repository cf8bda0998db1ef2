"""`rsp-plugin bench serve`: the service under load, and the command line's replay to check it against.

A generated workload: `clients` streams (one per client), each `per_second`
timestamped triples per second over a bounded vocabulary (sensors and values
repeat, so memory should settle once the windows are full), and ten continuous
queries over them (aggregates, groups, a join of two streams, ISTREAM, ASK,
a tumbling window). The service runs in its own process (`rsp-plugin serve`);
each client pushes its stream in batches from its own thread; one reader takes
every report by Server-Sent Events. Printed: triples per second end to end,
the push latency (median, p99, max), reports, their latency inside the engine,
the server's memory as the load went on.

The same workload replayed the command line's way (`rsp_plugin.cli.query.replay`,
every query in one engine) gives the reports the service must have sent: the load
test compares them.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from urllib.parse import quote

EX = "http://ex.org/load/"
QUERY_SHAPES = [
    # (name, streams it reads (by number), body)
    ("count-0", [0], "SELECT (COUNT(*) AS ?n) (AVG(?v) AS ?avg) {W} WHERE {{ ?s <{EX}temp> ?v }}", "RANGE 2s STEP 1s"),
    ("count-1", [1], "SELECT (COUNT(*) AS ?n) (AVG(?v) AS ?avg) {W} WHERE {{ ?s <{EX}temp> ?v }}", "RANGE 2s STEP 1s"),
    ("count-2", [2], "SELECT (COUNT(*) AS ?n) (MIN(?v) AS ?min) {W} WHERE {{ ?s <{EX}hum> ?v }}", "RANGE 2s STEP 1s"),
    ("count-3", [3], "SELECT (COUNT(*) AS ?n) (MIN(?v) AS ?min) {W} WHERE {{ ?s <{EX}hum> ?v }}", "RANGE 2s STEP 1s"),
    ("max-by-sensor", [0], "SELECT ?s (MAX(?v) AS ?max) {W} WHERE {{ ?s <{EX}temp> ?v }} GROUP BY ?s",
     "RANGE 1s STEP 1s"),
    ("hot-sensors", [1], "SELECT DISTINCT ?s {W} WHERE {{ ?s <{EX}temp> ?v FILTER (?v > 90) }}", "RANGE 1s STEP 1s"),
    ("join-2-3", [2, 3], "SELECT (COUNT(*) AS ?n) {W} WHERE {{ ?s <{EX}hum> ?h . ?s <{EX}temp> ?t "
                         "FILTER (?h > 95 && ?t > 95) }}", "RANGE 1s STEP 1s"),
    ("new-humid", [3], "SELECT DISTINCT ?s {W} WHERE {{ ?s <{EX}hum> 99 }}", "RANGE 1s STEP 1s"),
    ("any-zero", [2], "ASK {W} WHERE {{ ?s <{EX}temp> 0 }}", "RANGE 1s STEP 1s"),
    ("tumbling", [1], "SELECT (COUNT(DISTINCT ?s) AS ?n) {W} WHERE {{ ?s ?p ?v }}", "RANGE 5s TUMBLING"),
]


def stream_iri(number: int) -> str:
    return f"{EX}stream/{number}"


def queries(clients: int = 4) -> dict[str, str]:
    """The ten queries' texts, by name, over streams 0..clients-1."""
    texts = {}
    for name, streams, body, window in QUERY_SHAPES:
        r2s = "ISTREAM" if name == "new-humid" else "RSTREAM"
        windows = "\n".join(f"FROM STREAM <{stream_iri(n % clients)}> [{window}]" for n in streams)
        texts[name] = f"REGISTER {r2s} <{EX}q/{name}> AS\n" + body.format(W=windows, EX=EX)
    return texts


def workload(triples: int, clients: int = 4, per_second: int = 1000) -> list[list[bytes]]:
    """`clients` streams of `.tnt` lines, `triples` in all, `per_second` per stream and second."""
    per_stream = triples // clients
    streams = []
    for number in range(clients):
        lines = []
        for i in range(per_stream):
            t = i // per_second * 1000 + (i % per_second) * 1000 // per_second
            sensor = (i * 7 + number) % 50
            predicate = "temp" if (i + number) % 2 == 0 else "hum"
            value = (i * 31 + number * 17) % 100
            lines.append(f'{t} <{EX}sensor/{sensor}> <{EX}{predicate}> '
                         f'"{value}"^^<http://www.w3.org/2001/XMLSchema#integer> .\n'.encode())
        streams.append(lines)
    return streams


@dataclass
class LoadReport:
    triples: int
    seconds: float
    push_latencies: list[float]
    reports: dict[str, list[dict]] = field(default_factory=dict)
    rss_samples: list[tuple[int, int]] = field(default_factory=list)  # (triples pushed, RSS kB)
    stats: dict = field(default_factory=dict)
    server_cpu: float | None = None  # CPU seconds of the server from registration to the last report

    @property
    def cpu_per_report_ms(self) -> float | None:
        results = sum(len(values) for values in self.reports.values())
        return None if self.server_cpu is None or not results else 1000 * self.server_cpu / results

    @property
    def throughput(self) -> float:
        return self.triples / self.seconds

    def latency(self, quantile: float) -> float:
        ordered = sorted(self.push_latencies)
        return ordered[min(len(ordered) - 1, int(len(ordered) * quantile))] * 1000

    @property
    def peak_rss_mb(self) -> float:
        return max((rss for _, rss in self.rss_samples), default=0) / 1024


def start_server(port: int, *extra: str) -> subprocess.Popen:
    """`rsp-plugin serve` in its own process, on 127.0.0.1:port, once it answers."""
    import httpx

    process = subprocess.Popen([sys.executable, "-m", "rsp_plugin.cli", "serve", "--port", str(port),
                                "--rate", "100000", *extra], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    deadline = time.time() + 30
    while True:
        try:
            httpx.get(f"http://127.0.0.1:{port}/system", timeout=1)
            return process
        except httpx.HTTPError:
            if time.time() > deadline or process.poll() is not None:
                process.kill()
                raise RuntimeError(f"the service did not start: {process.stderr.read().decode()[-500:]}")
            time.sleep(0.1)


def rss_kb(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def cpu_seconds(pid: int) -> float | None:
    """User + system CPU seconds of a running process so far (Linux /proc), None where unknown."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError):
        return None


def run_load(base: str, streams: list[list[bytes]], texts: dict[str, str], *, batch: int = 5000,
             pid: int | None = None, say=lambda text: None) -> LoadReport:
    """Register streams and queries, push every stream from its own client thread, read every report by SSE."""
    import httpx

    http = httpx.Client(base_url=base, timeout=120)
    cpu_before = cpu_seconds(pid) if pid is not None else None
    for number in range(len(streams)):
        http.put(f"/streams/{quote(stream_iri(number), safe='')}").raise_for_status()
    names = []
    for name, text in texts.items():
        response = http.post("/queries", content=text, headers={"content-type": "application/sparql-query"})
        response.raise_for_status()
        names.append(response.json()["name"])
    reports: dict[str, list[dict]] = {name: [] for name in names}
    listening = threading.Event()
    done_reading = threading.Event()

    def read_events():
        try:
            take_events()
        except httpx.HTTPError:
            if not done_reading.is_set():
                raise

    def take_events():
        with httpx.stream("GET", f"{base}/events", timeout=None) as response:
            listening.set()
            data = None
            for line in response.iter_lines():
                if line.startswith("data: "):
                    data = json.loads(line[6:])
                elif line == "" and data is not None:
                    reports[data["query"]].append(data)
                    data = None
                elif line.startswith("event: overflow"):
                    raise RuntimeError("the SSE reader fell too far behind")
                if done_reading.is_set():
                    return

    reader = threading.Thread(target=read_events, daemon=True)
    reader.start()
    listening.wait(10)
    latencies: list[float] = []
    pushed = [0]
    lock = threading.Lock()
    samples: list[tuple[int, int]] = []
    errors: list[str] = []

    def client(number: int):
        with httpx.Client(base_url=base, timeout=120) as own:
            lines = streams[number]
            url = f"/streams/{quote(stream_iri(number), safe='')}"
            for start in range(0, len(lines), batch):
                body = b"".join(lines[start:start + batch])
                began = time.perf_counter()
                response = own.post(url, content=body, headers={"content-type": "application/x-tnt"})
                took = time.perf_counter() - began
                if response.status_code != 200 or response.json()["late"]:
                    errors.append(f"stream {number} batch {start}: {response.status_code} {response.text[:200]}")
                with lock:
                    latencies.append(took)
                    pushed[0] += len(lines[start:start + batch])

    def sample():
        while not finished.is_set():
            if pid is not None:
                samples.append((pushed[0], rss_kb(pid)))
            finished.wait(0.5)

    finished = threading.Event()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    began = time.perf_counter()
    clients = [threading.Thread(target=client, args=(n,)) for n in range(len(streams))]
    for thread in clients:
        thread.start()
    last_said = time.time()
    while any(thread.is_alive() for thread in clients):
        time.sleep(0.2)
        if time.time() - last_said > 5:
            say(f"{pushed[0]:,} triples pushed")
            last_said = time.time()
    for thread in clients:
        thread.join()
    http.post("/finish", json={}).raise_for_status()
    seconds = time.perf_counter() - began
    finished.set()
    sampler.join()
    if pid is not None:
        samples.append((pushed[0], rss_kb(pid)))
    expected = {name: http.get(f"/queries/{quote(name, safe='')}").json()["results"] for name in names}
    deadline = time.time() + 60
    while any(len(reports[name]) < expected[name] for name in names) and time.time() < deadline:
        time.sleep(0.1)
    done_reading.set()
    cpu_after = cpu_seconds(pid) if pid is not None else None
    stats = http.get("/stats").json()
    if errors:
        raise RuntimeError("; ".join(errors[:5]))
    server_cpu = cpu_after - cpu_before if cpu_before is not None and cpu_after is not None else None
    return LoadReport(pushed[0], seconds, latencies, reports, samples, stats, server_cpu)


def replay(streams: list[list[bytes]], texts: dict[str, str]) -> dict[str, list[dict]]:
    """The command line's replay of the same streams (files merged in time order), every query in one engine."""
    from ..io.sources import StreamSource
    from ..runtime.engine import RSPEngine
    from ..runtime.replay import replay as cli_replay

    folder = Path(tempfile.mkdtemp(prefix="rsp-load-"))
    sources = []
    for number, lines in enumerate(streams):
        path = folder / f"stream-{number}.tnt"
        path.write_bytes(b"".join(lines))
        sources.append(StreamSource(stream_iri(number), "file", path=path))
    engine = RSPEngine()
    for source in sources:
        engine.register_stream(source.iri)
    out: dict[str, list[dict]] = {}
    for text in texts.values():
        registered = engine.register_query(text)
        out[registered.name] = []
        registered.subscribe(lambda result, into=out[registered.name]: into.append(result.to_json()))
    cli_replay(engine, sources)
    for path in folder.iterdir():
        path.unlink()
    folder.rmdir()
    return out


def run(options) -> int:
    from socket import socket

    from ..service.settings import ServiceSettings  # noqa: F401  (the service must import)

    triples = 60_000 if options.quick else (options.sizes[0] if options.sizes else 1_000_000)
    clients = 4
    probe = socket()
    probe.bind(("127.0.0.1", 0))
    port = probe.getsockname()[1]
    probe.close()
    print(f"bench serve: {triples:,} triples from {clients} clients (one stream each), 10 queries, "
          "batches of 5,000 lines, the service in its own process", flush=True)
    streams = workload(triples, clients)
    server = start_server(port)
    try:
        report = run_load(f"http://127.0.0.1:{port}", streams, queries(clients), pid=server.pid,
                          say=lambda text: print(f"  {text}", file=sys.stderr, flush=True))
    finally:
        server.terminate()
        server.wait(10)
    print("  the same streams and queries, replayed the command line's way (one process, files)...",
          file=sys.stderr, flush=True)
    began = time.perf_counter()
    expected = replay(streams, queries(clients))
    replay_seconds = time.perf_counter() - began
    results = sum(len(values) for values in report.reports.values())
    same = all([{k: v for k, v in r.items() if k not in ("query", "seq", "latency_ms")} for r in report.reports[name]]
               == expected[name] for name in expected)
    engine_latency = [q["latency_ms"]["p99"] for q in report.stats["queries"] if q["latency_ms"]["p99"] is not None]
    print()
    print(f"{'triples':>12} {'seconds':>8} {'triples/s':>10} {'push p50 ms':>12} {'push p99 ms':>12} "
          f"{'push max ms':>12} {'reports':>8} {'report p99 ms':>14} {'CPU ms/rep':>11} {'peak RSS MB':>12}")
    print("-" * 122)
    per_report = report.cpu_per_report_ms
    print(f"{report.triples:>12,} {report.seconds:>8.1f} {report.throughput:>10,.0f} {report.latency(0.5):>12.1f} "
          f"{report.latency(0.99):>12.1f} {report.latency(1.0):>12.1f} {results:>8,} "
          f"{max(engine_latency, default=0):>14.1f} {'-' if per_report is None else f'{per_report:.2f}':>11} "
          f"{report.peak_rss_mb:>12.1f}")
    print(f"\ncommand-line replay of the same streams: {replay_seconds:.1f} s, {report.triples / replay_seconds:,.0f} "
          f"triples/s; the service takes {report.seconds / replay_seconds:.2f}x its time; same reports: "
          f"{'yes' if same else 'NO'}")
    quarter = [rss for pushed, rss in report.rss_samples if pushed >= report.triples // 4]
    if quarter:
        print(f"\nserver memory: {quarter[0] / 1024:.0f} MB after a quarter of the triples, "
              f"{report.rss_samples[-1][1] / 1024:.0f} MB at the end (windows full after a few seconds of "
              "stream time; the vocabulary repeats)")
    print("push latency: one POST of 5,000 lines, parsing and engine work included (the engine works one "
          "request at a time); report latency: from the start of the push that caused it to its emission; "
          "CPU ms/rep: the server's CPU (user + sys, all its threads: HTTP, parsing, windows, queries) from the "
          "registrations to the last report, per report")
    if os.environ.get("RSP_PLUGIN_BENCH_JSON"):
        Path(os.environ["RSP_PLUGIN_BENCH_JSON"]).write_text(json.dumps({
            "triples": report.triples, "seconds": report.seconds, "throughput": report.throughput,
            "push_p50_ms": report.latency(0.5), "push_p99_ms": report.latency(0.99), "reports": results,
            "cpu_per_report_ms": per_report, "peak_rss_mb": report.peak_rss_mb}))
    return 0
