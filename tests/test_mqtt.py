"""Streams from a real Mosquitto: what `query` and `reason` read from a topic equals what they read from the
same stream in a file; a broker restart in the middle loses nothing (QoS 1, a kept session); bad payloads
are set aside as `mqtt://HOST:PORT/TOPIC:N: reason`; reports published to a topic, one per message."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from mqtt_broker import Broker, broker, publish  # noqa: F401  (the fixture)

pytestmark = pytest.mark.mqtt

ROOT = Path(__file__).resolve().parent.parent
QUERY = ROOT / "queries" / "barbieri-fig2.rq"
POSITIONS = ROOT / "queries" / "data" / "positions.tnt"
STREAM_IRI = "http://mobileservice.org/positions.trdf"
BACKGROUND = ["--background", "http://mobileservice.org/meansOfTransportation.rdf="
              f"{ROOT / 'queries' / 'data' / 'meansOfTransportation.ttl'}"]
ENV = dict(os.environ, PYTHONPATH=str(ROOT))
#: a query whose reports show every element, and a stream for it: a lost message shows
ALL = ROOT / "tests" / "data" / "mqtt-all.rq"
LINES = [f'{300 * k} <http://ex/s{k}> <http://ex/p> "{k}" .'.encode() for k in range(40)]


def stream_file(directory: Path) -> Path:
    path = directory / "s.tnt"
    path.write_bytes(b"\n".join(LINES) + b"\n")
    return path


def cli(*args: str, **options) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "rsp_plugin.cli", *args], capture_output=True, text=True,
                          env=ENV, cwd=ROOT, timeout=120, **options)


class Running:
    """A command reading a topic, started and past its subscription (its first stderr line says so)."""

    def __init__(self, *args: str):
        self.process = subprocess.Popen([sys.executable, "-m", "rsp_plugin.cli", *args], stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True, env=ENV, cwd=ROOT)
        first = self.process.stderr.readline()
        assert "subscribed" in first, first + self.process.stderr.read()

    def finish(self) -> tuple[str, str, int]:
        out, err = self.process.communicate(timeout=120)
        return out, err, self.process.returncode


def test_query_reads_a_topic_as_it_reads_the_file(broker, tmp_path):
    lines = LINES
    # one line per message, then two lines in one message, and bad payloads between them
    payloads = [*lines[:4], b"not a triple", lines[4] + b"\n" + lines[5], b"7 <urn:a> <urn:p> \xff .",
                *lines[6:], b"not a triple either\n" + lines[-1]]
    running = Running("query", str(ALL), "--stream", f"http://ex/s={broker.url('city/positions')}", "--mqtt-idle", "1")
    publish(broker.url("city/positions"), payloads)
    out, err, status = running.finish()
    assert status == 0, err
    expected = cli("query", str(ALL), "--stream", f"http://ex/s={stream_file(tmp_path)}")
    assert expected.returncode == 0 and expected.stdout.count("\n") == 13
    assert out == expected.stdout
    topic = broker.url("city/positions")
    assert f"{topic}:5: not a timestamp: 'not' (an integer or an xsd:dateTime)" in err
    assert f"{topic}:7: not UTF-8 text (byte 0xff at column 19); set aside" in err
    assert f"{topic}:{len(payloads)}: line 1: not a timestamp: 'not'" in err
    assert "3 stream lines set aside" in err


def test_reason_reads_a_topic_as_it_reads_the_file(broker, tmp_path):
    program = tmp_path / "hot.lars"
    program.write_text("warm(X) :- [RANGE 3] DIAMOND temp(X, V), V > 20 .\n"
                       "hot(X)  :- [RANGE 2] BOX warm(X) .\n")
    stream = tmp_path / "temps.stream"
    stream.write_text("".join(f"{t} temp(r{t % 3},{15 + (t * 7) % 20})\n" for t in range(1, 40)))
    running = Running("reason", str(program), "--stream", broker.url("building/+/temp"), "--mqtt-idle", "1")
    lines = stream.read_bytes().splitlines()
    publish(broker.url("building/r1/temp"), [*lines[:10], b"11 temp(r1", *lines[10:]])
    out, err, status = running.finish()
    assert status == 0, err
    expected = cli("reason", str(program), "--stream", str(stream))
    assert out == expected.stdout and out.count('"hot(') > 0
    assert f"{broker.url('building/+/temp')}:11: expected ')' after the arguments (topic building/r1/temp)" in err


def test_a_broker_restart_loses_nothing(broker, tmp_path):
    """QoS 1 and a kept session: what is published while the engine is cut off reaches it after."""
    running = Running("query", str(ALL), "--stream", f"http://ex/s={broker.url('positions')}", "--mqtt-idle", "3",
                      "--mqtt-qos", "1")
    publish(broker.url("positions"), LINES[:15])
    broker.stop()      # SIGTERM: Mosquitto writes its sessions and what waits in them
    broker.start()     # the engine is still away (reconnecting): the rest waits in its session
    publish(broker.url("positions"), LINES[15:])
    out, err, status = running.finish()
    assert status == 0, err
    assert "connection lost" in err and "reconnected (the session was kept)" in err
    assert out == cli("query", str(ALL), "--stream", f"http://ex/s={stream_file(tmp_path)}").stdout


def test_reports_are_published_one_message_each(broker):
    from rsp_plugin.io.mqtt import BrokerAddress, MqttOptions, Subscription

    for fmt in ("json", "csv"):
        topic = f"reports/{fmt}"
        listening = Subscription(BrokerAddress.parse(broker.url(topic)), MqttOptions(idle=0.5)).start()
        try:
            done = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}", *BACKGROUND, "--format", fmt,
                       "--publish", broker.url(topic))
            assert done.returncode == 0 and done.stdout == "", done.stderr
            messages = [m.payload.decode() for batch in listening.batches() for m in batch]
        finally:
            listening.close()
        printed = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}", *BACKGROUND, "--format", fmt)
        if fmt == "json":
            assert messages == printed.stdout.splitlines()
            assert all(isinstance(json.loads(m)["t"], int) for m in messages)
        else:  # each message a whole CSV document: its header, then the report's rows
            header, *rows = printed.stdout.splitlines()
            assert all(m.splitlines()[0] == header for m in messages)
            assert [row for m in messages for row in m.splitlines()[1:]] == rows
            assert len(messages) > len(rows) / 4  # one message per report, empty reports too


def test_documents_are_stamped_by_arrival_or_by_their_time_triple(broker):
    """Turtle messages: one element each, seen at its arrival, or at its sosa:resultTime (--payload-time)."""
    query = ROOT / "tests" / "data" / "mqtt-observations.rq"
    documents = [f'@prefix s: <http://www.w3.org/ns/sosa/> . <urn:o{k}> s:resultTime {1000 * k} ; '
                 f's:hasSimpleResult {k} .'.encode() for k in range(1, 6)]
    documents.insert(2, b"@prefix s: <http://www.w3.org/ns/sosa/> . <urn:x> s:hasSimpleResult 1 .")
    running = Running("query", str(query), "--stream", f"http://ex/obs={broker.url('obs')}", "--input-format", "ttl",
                      "--payload-time", "http://www.w3.org/ns/sosa/resultTime", "--mqtt-idle", "1")
    publish(broker.url("obs"), documents)
    out, err, status = running.finish()
    assert status == 0, err
    reports = [json.loads(line) for line in out.splitlines()]
    assert [(r["t"], r["bindings"]) for r in reports] == [
        (1000 * (k + 1), [{"o": f"<urn:o{k}>"}]) for k in range(1, 6)]
    assert (f"{broker.url('obs')}:3: no <http://www.w3.org/ns/sosa/resultTime> triple to take the document's "
            "time from; set aside") in err
    before = int(time.time() * 1000)
    running = Running("query", str(query), "--stream", f"http://ex/obs={broker.url('obs')}", "--input-format", "ttl",
                      "--mqtt-idle", "1")
    publish(broker.url("obs"), documents[:2])
    out, err, status = running.finish()
    reported = [json.loads(line)["t"] for line in out.splitlines()]
    assert status == 0 and reported and all(t > before for t in reported)


def test_a_broker_that_cannot_be_used_is_one_line(broker, tmp_path):
    closed = Broker().port  # a free port nobody listens on
    done = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}=mqtt://127.0.0.1:{closed}/t", *BACKGROUND)
    assert done.returncode == 2
    assert done.stderr.strip() == f"rsp-plugin: mqtt://127.0.0.1:{closed}/t: cannot connect: Connection refused"
    done = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}=mqtt://127.0.0.1:{broker.port}/a/#/b", *BACKGROUND)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "'#' stands alone as the topic's last level" in done.stderr
    done = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}", *BACKGROUND,
               "--publish", broker.url("reports/+"))
    assert done.returncode == 2 and "a topic to publish to holds no wildcard" in done.stderr
    done = cli("reason", str(ROOT / "examples" / "alarm.lars"), "--stream", broker.url("a"), "--semantics",
               "answer-stream")
    assert done.returncode == 2 and "DatalogMTL programs and answer streams read stream files" in done.stderr


def test_credentials(tmp_path):
    secured = Broker(password=("sensor", "s3cret")).start()
    try:
        secret = tmp_path / "password"
        secret.write_text("wrong\n")
        args = ["query", str(QUERY), "--stream", f"{STREAM_IRI}={secured.url('p')}", *BACKGROUND,
                "--mqtt-username", "sensor", "--mqtt-password-file", str(secret), "--mqtt-idle", "0.5"]
        refused = cli(*args)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        assert "the broker refused the connection: Not authorized" in refused.stderr
        secret.write_text("s3cret\n")
        running = Running(*args)
        publish(secured.url("p"), POSITIONS.read_bytes().splitlines(), username="sensor", password="s3cret")
        out, err, status = running.finish()
        assert status == 0 and out == cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}",
                                          *BACKGROUND).stdout
    finally:
        secured.close()


def test_tls_with_the_brokers_ca_reads_the_topic_and_without_it_is_refused_in_one_line(tmp_path):
    secured = Broker(tls=True).start()
    try:
        url = secured.url("p", scheme="mqtts")
        plain = ["query", str(QUERY), "--stream", f"{STREAM_IRI}={url}", *BACKGROUND, "--mqtt-idle", "0.5"]
        refused = cli(*plain)
        assert refused.returncode == 2 and refused.stderr.count("\n") == 1
        assert "certificate verify failed" in refused.stderr
        running = Running(*plain, "--mqtt-ca-file", str(secured.ca))
        publish(url, POSITIONS.read_bytes().splitlines(), ca_file=str(secured.ca))
        out, err, status = running.finish()
        assert status == 0 and out == cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}",
                                          *BACKGROUND).stdout
    finally:
        secured.close()


def test_without_paho_the_extra_is_named(monkeypatch, capsys):
    from rsp_plugin.cli import command_line as command_line

    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)  # import fails as if it were not installed
    status = command_line.main(["query", str(QUERY), "--stream", f"{STREAM_IRI}=mqtt://127.0.0.1:1/t", *BACKGROUND])
    assert status == 2
    assert capsys.readouterr().err == ("rsp-plugin: reading or publishing MQTT needs the extra 'mqtt': "
                                       "pip install 'rsp_plugin[mqtt]'\n")


def test_the_service_feeds_a_stream_from_a_topic_and_publishes_reports_to_one(broker, tmp_path):
    """serve: a stream registered with {"mqtt": URL} reads the topic; an observer with an mqtt:// URL gets
    each report as a message; only brokers the operator allowed are used."""
    import httpx

    from rsp_plugin.io.mqtt import BrokerAddress, MqttOptions, Subscription
    from rsp_plugin.service import ServiceSettings
    from service_helpers import bare, cli_lines, path, running_service

    settings = ServiceSettings(mqtt_allow=(f"mqtt://127.0.0.1:{broker.port}/lab/",))
    reports = Subscription(BrokerAddress.parse(broker.url("lab/reports")), MqttOptions(idle=1)).start()
    try:
        with running_service(settings) as (base, app):
            http = httpx.Client(base_url=base, timeout=30)
            refused = http.put(f"/streams/{path('http://ex/s')}", json={"mqtt": broker.url("elsewhere/s")})
            assert refused.status_code == 403 and "--mqtt-allow" in refused.json()["error"]
            fed = http.put(f"/streams/{path('http://ex/s')}", json={"mqtt": broker.url("lab/s"), "format": "tnt"})
            assert fed.status_code in (200, 201) and fed.json()["mqtt"] == broker.url("lab/s")
            name = http.post("/queries", content=ALL.read_bytes(),
                             headers={"content-type": "application/sparql-query"}).json()["name"]
            added = http.post(f"/queries/{name}/observers", json={"url": broker.url("lab/reports")})
            assert added.status_code == 201
            assert http.post(f"/queries/{name}/observers", json={"url": broker.url("other/r")}).status_code == 403
            publish(broker.url("lab/s"), [*LINES[:20], b"bad payload", *LINES[20:]])
            deadline = time.time() + 30
            while http.get(f"/streams/{path('http://ex/s')}").json()["triples"] < len(LINES):
                assert time.time() < deadline
                time.sleep(0.05)
            stream = http.get(f"/streams/{path('http://ex/s')}").json()
            assert stream["rejected"] == 1
            assert stream["recent_rejected"] == [f"{broker.url('lab/s')}:21: not a timestamp: 'bad' (an integer "
                                                 "or an xsd:dateTime)"]
            assert http.post("/finish", json={}).status_code == 200
            expected = cli_lines(ALL, f"http://ex/s={stream_file(tmp_path)}")
            served = http.get(f"/queries/{name}/results").json()["results"]
            assert [bare(r) for r in served] == expected
            published = [json.loads(m.payload) for batch in reports.batches() for m in batch]
            assert published == served
    finally:
        reports.close()


def test_the_message_log_keeps_order_survives_a_torn_record_and_forgets_committed_segments(tmp_path, monkeypatch):
    from rsp_plugin.io import mqtt

    monkeypatch.setattr(mqtt, "SEGMENT_MESSAGES", 3)
    log = mqtt.MessageLog(tmp_path / "log")
    for number in range(1, 8):
        log.append(mqtt.Message(number, "t/a", f"payload {number}".encode(), 1000 + number, number % 4, False))
    log.close()
    last = sorted((tmp_path / "log").glob("log-*.bin"))[-1]
    with last.open("ab") as handle:
        handle.write(b"\x00\x00\x00")  # a record cut short by a crash
    again = mqtt.MessageLog(tmp_path / "log")
    assert again.next_number == 8
    assert [m.payload for m in again.read(3, 6)] == [b"payload 3", b"payload 4", b"payload 5"]
    assert again.read(2, 3)[0] == mqtt.Message(2, "t/a", b"payload 2", 1002, 2, False)
    again.forget(7)  # messages 1..6 committed: the segments of 1-3 and 4-6 go, the last stays
    assert [m.number for m in again.read(1, 100)] == [7]
    recent = mqtt.MessageLog(tmp_path / "log", readonly=True).recent()  # (what a redelivery after a restart is
    # compared with; read beside the writer `again`)
    assert mqtt._Recent.key("t/a", 3, b"payload 7") in recent
    assert mqtt._Recent.key("t/a", 3, b"payload 8") not in recent


def test_a_message_log_has_one_writer_the_next_waits_for_it(tmp_path):
    """A killed run's reader still writes its log for a moment (its JVM stopping): a restarted one waits for
    it to let go, else two messages would get one number (and a torn record be cut while it is written)."""
    import threading

    from rsp_plugin.io import mqtt

    first = mqtt.MessageLog(tmp_path / "log")
    first.append(mqtt.Message(1, "t", b"payload 1", 1001))
    with pytest.raises(mqtt.BrokerError, match="still written by another reader"):
        mqtt.MessageLog(tmp_path / "log", wait=0.2)
    assert [m.number for m in mqtt.MessageLog(tmp_path / "log", readonly=True).read(1, 9)] == [1]  # (readers: free)
    opened = []
    waiting = threading.Thread(target=lambda: opened.append(mqtt.MessageLog(tmp_path / "log", wait=30)))
    waiting.start()
    time.sleep(0.3)
    first.append(mqtt.Message(2, "t", b"payload 2", 1002))
    assert not opened
    first.close()
    waiting.join(30)
    assert opened and opened[0].next_number == 3
    with pytest.raises(mqtt.BrokerError):
        mqtt.MessageLog.wait_free(tmp_path / "log", wait=0.1)
    opened[0].close()
    mqtt.MessageLog.wait_free(tmp_path / "log", wait=0.1)


def test_a_redelivered_message_is_dropped_once_a_new_one_is_kept():
    """QoS 1: the broker sends again (DUP) what we may have had; a double of one received lately is dropped."""
    from paho.mqtt.client import MQTTMessage

    from rsp_plugin.io.mqtt import BrokerAddress, MqttOptions, Subscription

    subscription = Subscription(BrokerAddress.parse("mqtt://127.0.0.1:1/t"), MqttOptions())

    def delivered(mid: int, payload: bytes, dup: bool):
        message = MQTTMessage(mid=mid, topic=b"t")
        message.payload, message.qos, message.dup = payload, 1, dup
        subscription._on_message(None, None, message)

    delivered(1, b"0 <urn:a> <urn:p> <urn:b> .", False)
    delivered(1, b"0 <urn:a> <urn:p> <urn:b> .", True)    # our acknowledgement was lost: a double
    delivered(2, b"1 <urn:a> <urn:p> <urn:c> .", True)    # sent again, but never had: kept
    delivered(1, b"0 <urn:a> <urn:p> <urn:b> .", False)   # the same bytes published again: a new message
    taken = subscription.take(10, timeout=0)
    assert [(m.number, m.mid, m.payload[:1]) for m in taken] == [(1, 1, b"0"), (2, 2, b"1"), (3, 1, b"0")]
    assert subscription.doubles == 1
