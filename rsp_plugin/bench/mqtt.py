"""`rsp-plugin bench mqtt`: triples per second from an MQTT publisher to the reports, and latency, next to a file.

A Mosquitto broker is started on a free port of 127.0.0.1 (Debian's `mosquitto`;
the bench says so in one line when it is missing). A publisher thread offers a
stream of one-triple `.tnt` messages at a paced rate (default 1k, 10k and 100k
messages per second, `--rates`; each for `--time-points` / 100 seconds, default 3,
quick: 1), each message's timestamp its place in the schedule (ms), while
`rsp-plugin query`'s own replay (`commands.query.replay`, the `mqtt://` source)
feeds a continuous query ([RANGE 1s STEP 100ms], a count per sensor) and
records when each report comes out. Workloads: `qos1` (default) and `qos0`.

Figures per offered rate:

    offered/s    the rate asked for; published/s the rate the publisher reached (the
                 broker's and this machine's limit shows here)
    tr/s         triples / time from the first publish to the last report a message closed
    p50, p99 ms  latency: a report's time less the publish time of the message that closed
                 its window (the first one at or past the window's end)
    file tr/s    the same messages as a `.tnt` file, replayed by the same command's file path
    same         whether the reports equal the file's (QoS 0 may drop messages under load)

A PNG plot (triples per second, broker and file, and the latencies) goes to
`--plot` (default `mqtt.png`; matplotlib, imported only here).
"""

from __future__ import annotations

import json
import shutil
import socket
import statistics
import subprocess
import tempfile
import threading
import time
from pathlib import Path

STREAM = "http://ex/sensors"
QUERY = f"""REGISTER RSTREAM <http://ex/q/mqtt-bench> AS
SELECT ?sensor (COUNT(?v) AS ?n)
FROM STREAM <{STREAM}> [RANGE 1s STEP 100ms]
WHERE {{ ?sensor <http://ex/value> ?v }}
GROUP BY ?sensor
"""
WORKLOADS = ("qos1", "qos0")
SENSORS = 50


class BenchError(Exception):
    pass


def run(options, out=print) -> int:
    names = options.workloads or ["qos1"]
    unknown = [name for name in names if name not in WORKLOADS]
    if unknown:
        out(f"unknown workload(s): {', '.join(unknown)}; choose from {', '.join(WORKLOADS)}")
        return 2
    try:
        from ..io.mqtt import paho

        paho()
    except Exception as error:  # (BrokerError: paho-mqtt missing)
        out(str(error))
        return 2
    rates = options.rates or ([1000, 10000] if options.quick else [1000, 10_000, 100_000])
    seconds = 1.0 if options.quick else max(1.0, (options.time_points or 300) / 100)
    try:
        broker = Mosquitto().start()
    except BenchError as error:
        out(str(error))
        return 2
    rows = []
    try:
        out(f"MQTT: one-triple .tnt messages published at each offered rate for {seconds:g} s to a local Mosquitto "
            f"2.0, read by `rsp-plugin query`'s replay; query [RANGE 1s STEP 100ms], a count per sensor "
            f"({SENSORS} sensors).")
        out("tr/s: triples / (last report a message closed - first publish); p50 / p99: report time - publish "
            "time of the message that closed its window; file tr/s: the same stream from a .tnt file.")
        header = (f"{'workload':<8} {'offered/s':>10} {'published/s':>12} {'messages':>9} {'tr/s':>10} "
                  f"{'p50 ms':>8} {'p99 ms':>8} {'file tr/s':>10} {'same':>5}")
        out(header)
        out("-" * len(header))
        with tempfile.TemporaryDirectory(prefix="rsp-bench-mqtt-") as scratch:
            for name in names:
                qos = int(name[-1])
                for rate in rates:
                    lines = stream_lines(rate, seconds)
                    row = {"workload": name, "offered": rate, **over_broker(broker.port, lines, rate, qos)}
                    row.update(from_file(lines, Path(scratch) / f"s-{rate}.tnt"))
                    row["same"] = row.pop("reports") == row.pop("file_reports")
                    rows.append(row)
                    out(f"{name:<8} {rate:>10,} {row['published']:>12,.0f} {len(lines):>9,} {row['tr_s']:>10,.0f} "
                        f"{row['p50']:>8.1f} {row['p99']:>8.1f} {row['file_tr_s']:>10,.0f} "
                        f"{'yes' if row['same'] else 'NO':>5}")
    finally:
        broker.stop()
    plot = options.plot or "mqtt.png"
    if plot != "-":
        _plot(rows, plot)
        out(f"plot: {plot}")
    return 0


def stream_lines(rate: int, seconds: float) -> list[bytes]:
    """One reading per message, its timestamp (ms) its place in a schedule of `rate` messages a second."""
    count = int(rate * seconds)
    return [f'{k * 1000 // rate} <http://ex/sensor{k % SENSORS}> <http://ex/value> "{k % 97}"^^'
            f'<http://www.w3.org/2001/XMLSchema#integer> .'.encode() for k in range(count)]


def _engine():
    from ..runtime.engine import RSPEngine

    engine = RSPEngine()
    engine.register_stream(STREAM)
    registered = engine.register_query(QUERY)
    return engine, registered


def over_broker(port: int, lines: list[bytes], rate: int, qos: int) -> dict:
    """Publish `lines` paced at `rate` a second while the query reads the topic; the figures."""
    from ..io.mqtt import BrokerAddress, MqttOptions, Publisher
    from ..io.sources import stream_source
    from ..runtime.replay import replay

    topic = f"bench/{rate}/{qos}"
    options = MqttOptions(qos=qos, idle=5.0)  # (a publisher held back by acknowledgements may pause a while)
    engine, registered = _engine()
    reports: list[tuple[int, float, str]] = []
    registered.subscribe(lambda result: reports.append((result.t, time.perf_counter(),
                                                        json.dumps(result.to_json(), sort_keys=True))))
    subscribed = threading.Event()
    published = [0.0] * len(lines)

    def publish() -> None:
        if not subscribed.wait(30):
            return
        publisher = Publisher(BrokerAddress.parse(f"mqtt://127.0.0.1:{port}/{topic}", publish=True), options).start()
        start = time.perf_counter()
        for k, line in enumerate(lines):
            due = start + k / rate
            now = time.perf_counter()
            if due > now + 0.0005:
                time.sleep(due - now)
            publisher.publish(line)
            published[k] = time.perf_counter()
        publisher.close()

    thread = threading.Thread(target=publish, daemon=True)
    thread.start()
    source = stream_source(f"{STREAM}=mqtt://127.0.0.1:{port}/{topic}", "tnt", options)
    replay(engine, [source], on_note=lambda text: subscribed.set() if "subscribed" in text else None)
    thread.join()
    last_ts = int(lines[-1].split(b" ", 1)[0])
    closed = [(t, wall) for t, wall, _ in reports if t <= last_ts]  # windows a message closed (not the end's)
    latencies = []
    for t, wall in closed:
        closer = -(-t * rate // 1000)  # the first message at or past the window's end
        if closer < len(lines) and published[closer]:
            latencies.append((wall - published[closer]) * 1000)
    end = closed[-1][1] if closed else time.perf_counter()
    latencies.sort()
    return {"published": len(lines) / max(published[-1] - published[0], 1e-9),
            "tr_s": len(lines) / max(end - published[0], 1e-9),
            "p50": statistics.median(latencies) if latencies else float("nan"),
            "p99": latencies[min(len(latencies) - 1, int(0.99 * len(latencies)))] if latencies else float("nan"),
            "reports": [text for _, _, text in reports]}


def from_file(lines: list[bytes], path: Path) -> dict:
    """The same stream from a `.tnt` file, through the same command's replay (its block path)."""
    from ..io.sources import stream_source
    from ..runtime.replay import replay

    path.write_bytes(b"\n".join(lines) + b"\n")
    engine, registered = _engine()
    reports: list[str] = []
    registered.subscribe(lambda result: reports.append(json.dumps(result.to_json(), sort_keys=True)))
    started = time.perf_counter()
    replay(engine, [stream_source(f"{STREAM}={path}")])
    return {"file_tr_s": len(lines) / (time.perf_counter() - started), "file_reports": reports}


class Mosquitto:
    """A broker of our own on a free loopback port (no persistence, no bound on queued messages)."""

    def __init__(self):
        binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if Path("/usr/sbin/mosquitto").exists() else None)
        if binary is None:
            raise BenchError("bench mqtt needs Mosquitto, the MQTT broker: apt-get install mosquitto")
        self.binary = binary
        self.directory = Path(tempfile.mkdtemp(prefix="rsp-bench-mosquitto-"))
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        (self.directory / "mosquitto.conf").write_text(
            f"listener {self.port} 127.0.0.1\nallow_anonymous true\nmax_queued_messages 0\n"
            "max_inflight_messages 1000\nlog_dest none\n")
        self.process = None

    def start(self) -> Mosquitto:
        self.process = subprocess.Popen([self.binary, "-c", str(self.directory / "mosquitto.conf")],
                                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.02)
        self.stop()
        raise BenchError("mosquitto did not listen within 10 s")

    def stop(self) -> None:
        if self.process is not None:
            self.process.terminate()
            self.process.wait(10)
            self.process = None
        shutil.rmtree(self.directory, ignore_errors=True)


def _plot(rows: list[dict], target: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    labels = [f"{row['workload']}\n{row['offered']:,}/s" for row in rows]
    positions = range(len(rows))
    figure, (left, right) = plt.subplots(1, 2, figsize=(max(8, 2.4 * len(rows)), 4))
    width = 0.38
    left.bar([p - width / 2 for p in positions], [row["tr_s"] for row in rows], width, label="from the broker")
    left.bar([p + width / 2 for p in positions], [row["file_tr_s"] for row in rows], width, label="from a file")
    left.set_yscale("log")
    left.set_xticks(list(positions), labels)
    left.set_ylabel("triples / s (log)")
    left.set_title("publisher to report vs file")
    left.legend()
    right.bar([p - width / 2 for p in positions], [row["p50"] for row in rows], width, label="p50")
    right.bar([p + width / 2 for p in positions], [row["p99"] for row in rows], width, label="p99")
    right.set_xticks(list(positions), labels)
    right.set_ylabel("ms")
    right.set_title("latency, publish to report")
    right.legend()
    figure.tight_layout()
    figure.savefig(target, dpi=120)
    plt.close(figure)


__all__ = ["run", "stream_lines", "over_broker", "from_file"]
