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


def test_query_reads_a_topic_as_it_reads_the_file(broker):
    lines = POSITIONS.read_bytes().splitlines()
    # one line per message, then two lines in one message, and bad payloads between them
    payloads = [*lines[:4], b"not a triple", lines[4] + b"\n" + lines[5], b"7 <urn:a> <urn:p> \xff .",
                *lines[6:], b"12000 <urn:a> <urn:p> <urn:b> .\nstill not a triple"]
    running = Running("query", str(QUERY), "--stream", f"{STREAM_IRI}={broker.url('city/positions')}", *BACKGROUND,
                      "--mqtt-idle", "1")
    publish(broker.url("city/positions"), payloads)
    out, err, status = running.finish()
    assert status == 0, err
    expected = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}", *BACKGROUND)
    assert expected.returncode == 0 and expected.stdout.count("\n") > 10
    # the extra triple at 12000 ms joins nothing (no ex:isIn): the reports are the file's
    assert out == expected.stdout
    topic = broker.url("city/positions")
    assert f"{topic}:5: not a timestamp: 'not' (an integer or an xsd:dateTime)" in err
    assert f"{topic}:7: not UTF-8 text (byte 0xff at column 19); set aside" in err
    assert f"{topic}:{len(payloads)}: line 2: not a timestamp: 'still'" in err
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


def test_a_broker_restart_loses_nothing(broker):
    """QoS 1 and a kept session: what is published while the engine is cut off reaches it after."""
    lines = POSITIONS.read_bytes().splitlines()
    running = Running("query", str(QUERY), "--stream", f"{STREAM_IRI}={broker.url('positions')}", *BACKGROUND,
                      "--mqtt-idle", "3", "--mqtt-qos", "1")
    publish(broker.url("positions"), lines[:7])
    broker.stop()      # SIGTERM: Mosquitto writes its sessions and what waits in them
    broker.start()     # the engine is still away (reconnecting): the rest waits in its session
    publish(broker.url("positions"), lines[7:])
    out, err, status = running.finish()
    assert status == 0, err
    assert "connection lost" in err and "reconnected (the session was kept)" in err
    expected = cli("query", str(QUERY), "--stream", f"{STREAM_IRI}={POSITIONS}", *BACKGROUND)
    assert out == expected.stdout


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


def test_without_paho_the_extra_is_named(monkeypatch, capsys):
    from rsp_plugin import cli as command_line

    monkeypatch.setitem(sys.modules, "paho.mqtt.client", None)  # import fails as if it were not installed
    status = command_line.main(["query", str(QUERY), "--stream", f"{STREAM_IRI}=mqtt://127.0.0.1:1/t", *BACKGROUND])
    assert status == 2
    assert capsys.readouterr().err == ("rsp-plugin: reading or publishing MQTT needs paho-mqtt: "
                                       "pip install 'rsp_plugin[mqtt]'\n")
