"""MQTT (paho-mqtt): a broker's topic as a stream, a topic as where reports go.

    query QUERY --stream IRI=mqtt://HOST:PORT/TOPIC     a stream (wildcards `+` and `#` allowed)
    reason PROGRAM --stream mqtt://HOST:PORT/TOPIC      atom (`.stream`) or `.tnt` lines
    query QUERY ... --publish mqtt://HOST:PORT/TOPIC    one message per report
    mqtts://...                                         the same over TLS (port 8883 by default)

A message is read on its own terms: its payload holds lines of a line format
(timestamped N-Triples, N-Triples, `.stream` atoms: one line or several) or one
document (Turtle, TriG, N-Quads, JSON-LD). Times come from the payload where it
has them (a `.tnt` or `.stream` line's timestamp, a TriG / N-Quads graph's
prov:generatedAtTime); N-Triples, Turtle and JSON-LD documents without graph
times are stamped with the message's arrival (wall clock, ms), or, given a
predicate (`payload_time`), with the object of the document's triple of that
predicate (an integer in ms or an xsd:dateTime).

What cannot be read is set aside as `mqtt://HOST:PORT/TOPIC:N: reason`, N the
message's number in the subscription (from 1, over all its topics); a payload
of several lines names the line (`line 2: ...`), a wildcard subscription the
topic it came on. The stream goes on.

Delivery: QoS 0, 1 or 2 (default 1). The client keeps a session with the
broker, so that what arrives while the connection is down waits there: a fresh
one (a random client id) that outlives a dropped connection or a broker restart
and is dropped when the run ends; or, with a client id, one that outlives the
run too (the next run with that id goes on where this one stopped). It speaks
MQTT 3.1.1 by default, whose persistent sessions every broker keeps across its
own restarts (Mosquitto 2.0 does not restore MQTT 5 sessions from its
persistence file); MQTT 5 on request, its sessions kept `session_expiry`
seconds.
A lost connection is retried with doubling waits (0.2 s up to 30 s). A message
the broker sends again (its DUP flag set: the acknowledgement was lost in a
restart) whose topic, packet id and bytes equal one received lately is a
double and dropped. A message is acknowledged once it is queued for the engine
(and written to the message log, when there is one: `MessageLog`, what the
Spark reader replays after a restart).

paho-mqtt is imported only here and only when a broker is used: without it,
a command that needs it says in one line which extra to install.
"""

from __future__ import annotations

import hashlib
import io
import os
import re
import secrets
import struct
import threading
import time
from collections import deque
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Iterable, Iterator

from ..core import limits
from ..core.extras import MissingExtra
from .lines import Rejected

SCHEMES = ("mqtt://", "mqtts://")
NEEDS_PAHO = str(MissingExtra("mqtt", "reading or publishing MQTT"))
#: --input-format values a broker's messages may hold (`stream`: `reason`'s atom lines)
PAYLOAD_FORMATS = ("tnt", "nt", "ttl", "trig", "nq", "jsonld", "stream")
#: messages waiting for the engine before paho's thread waits (TCP then slows the broker down)
MAX_WAITING = 200_000
#: how many recent messages a redelivery is compared with
RECENT = 1 << 16
#: QoS 1 / 2 messages a publisher lets wait for the broker's acknowledgement before it waits too
MAX_PENDING = 20_000


class BrokerError(Exception):
    """A broker that cannot be used: unreachable, refusing us, or paho-mqtt missing (one line)."""


def is_broker(text: str) -> bool:
    return text.startswith(SCHEMES)


def paho():
    """paho's client module, or BrokerError naming the extra to install."""
    try:
        import paho.mqtt.client as client
    except ImportError:
        raise BrokerError(NEEDS_PAHO) from None
    return client


# Addresses and options ----------------------------------------------------------------------------------------

_ADDRESS = re.compile(r"(?P<scheme>mqtts?)://(?P<host>\[[0-9A-Fa-f:.]+\]|[^/:@\[\]]+)(?::(?P<port>\d+))?/(?P<topic>.*)\Z",
                      re.S)


@dataclass(frozen=True)
class BrokerAddress:
    """`mqtt://HOST:PORT/TOPIC` read: the topic is everything after the first `/` (it may hold `#`, `?`)."""

    host: str
    port: int
    topic: str
    tls: bool = False

    @classmethod
    def parse(cls, text: str, *, publish: bool = False) -> BrokerAddress:
        """The address, or ValueError saying what is wrong in the user's words.

        >>> BrokerAddress.parse("mqtt://localhost:1883/sensors/+/temp")
        BrokerAddress(host='localhost', port=1883, topic='sensors/+/temp', tls=False)
        >>> str(BrokerAddress.parse("mqtts://[::1]/a/#"))
        'mqtts://[::1]:8883/a/#'
        >>> BrokerAddress.parse("mqtt://h:1883/a/#/b")
        Traceback (most recent call last):
        ...
        ValueError: mqtt://h:1883/a/#/b: '#' stands alone as the topic's last level, e.g. sensors/#
        """
        found = _ADDRESS.match(text)
        if found is None:
            raise ValueError(f"{text}: expected mqtt://HOST:PORT/TOPIC (or mqtts:// for TLS), "
                             "e.g. mqtt://localhost:1883/sensors/#")
        tls = found.group("scheme") == "mqtts"
        port = int(found.group("port")) if found.group("port") else (8883 if tls else 1883)
        if not 0 < port < 65536:
            raise ValueError(f"{text}: port {port} is not a TCP port")
        topic = found.group("topic")
        problem = topic_problem(topic, publish=publish)
        if problem:
            raise ValueError(f"{text}: {problem}")
        return cls(found.group("host"), port, topic, tls)

    @property
    def wildcard(self) -> bool:
        return "+" in self.topic or "#" in self.topic

    @property
    def connect_host(self) -> str:
        return self.host.strip("[]")

    def __str__(self) -> str:
        return f"{'mqtts' if self.tls else 'mqtt'}://{self.host}:{self.port}/{self.topic}"


def topic_problem(topic: str, *, publish: bool = False) -> str | None:
    """Why `topic` is not a topic (a filter with wildcards when subscribing), or None."""
    if not topic:
        return "no topic after HOST:PORT/"
    if "\x00" in topic:
        return "a topic holds no NUL character"
    if len(topic.encode("utf-8")) > 65535:
        return "a topic is at most 65535 bytes"
    levels = topic.split("/")
    if publish and ("+" in topic or "#" in topic):
        return "a topic to publish to holds no wildcard (+ or #)"
    for number, level in enumerate(levels):
        if "#" in level and (level != "#" or number != len(levels) - 1):
            return "'#' stands alone as the topic's last level, e.g. sensors/#"
        if "+" in level and level != "+":
            return "'+' stands alone as a level, e.g. sensors/+/temp"
    return None


@dataclass(frozen=True)
class MqttOptions:
    """How to talk to the broker: delivery, session, credentials, TLS (as paho offers them), and how a run ends."""

    qos: int = 1
    #: a session kept by the broker under this id across runs (None: a fresh session, a random id)
    client_id: str | None = None
    username: str | None = None
    password: str | None = None
    #: TLS: the CA certificates to trust (None: the system's), a client certificate and its key
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    #: TLS without checking the broker's host name (tests, self-signed brokers)
    insecure: bool = False
    #: MQTT 5: seconds the broker keeps the session (and what arrives for it) while we are away
    session_expiry: int = 3600
    keepalive: int = 30
    #: end the stream after this many seconds without a message (None: never; Ctrl-C)
    idle: float | None = None
    #: documents without times of their own: this predicate's object is their time (None: arrival)
    payload_time: str | None = None
    connect_timeout: float = 10.0
    backoff: tuple[float, float] = (0.2, 30.0)
    #: "3.1.1" (default) or "5"
    protocol: str = "3.1.1"

    @property
    def tls(self) -> bool:
        return bool(self.ca_file or self.cert_file)


# Messages -------------------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Message:
    """One message as received: its number in the subscription (from 1), topic, payload, arrival (ms)."""

    number: int
    topic: str
    payload: bytes
    arrival: int
    mid: int = 0
    dup: bool = False


class _Recent:
    """The last RECENT messages' (topic, packet id, digest): is a redelivery one we have?"""

    def __init__(self, size: int = RECENT):
        self.order: deque = deque()
        self.keys: dict = {}
        self.size = size

    @staticmethod
    def key(topic: str, mid: int, payload: bytes) -> tuple:
        return topic, mid, hashlib.blake2b(payload, digest_size=16).digest()

    def add(self, key: tuple) -> None:
        self.order.append(key)
        self.keys[key] = self.keys.get(key, 0) + 1
        if len(self.order) > self.size:
            old = self.order.popleft()
            left = self.keys[old] - 1
            if left:
                self.keys[old] = left
            else:
                del self.keys[old]

    def __contains__(self, key: tuple) -> bool:
        return key in self.keys


def _client(address: BrokerAddress, options: MqttOptions, client_id: str, *, clean: bool = False,
            manual_ack: bool = False):
    """A paho client with the protocol, credentials, TLS and reconnect waits asked for; MQTT 3.1.1 with a
    persistent session unless `clean`."""
    mqtt = paho()
    if options.protocol not in ("3.1.1", "5"):
        raise BrokerError(f"MQTT protocol {options.protocol!r}: expected 3.1.1 or 5")
    if options.protocol == "5":
        client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv5, manual_ack=manual_ack)
    else:
        client = mqtt.Client(callback_api_version=mqtt.CallbackAPIVersion.VERSION2, client_id=client_id,
                             protocol=mqtt.MQTTv311, clean_session=clean, manual_ack=manual_ack)
    if options.username is not None:
        client.username_pw_set(options.username, options.password)
    if address.tls or options.tls:
        import ssl

        try:
            client.tls_set(ca_certs=options.ca_file, certfile=options.cert_file, keyfile=options.key_file,
                           cert_reqs=ssl.CERT_REQUIRED)
        except (OSError, ssl.SSLError, ValueError) as error:
            raise BrokerError(f"{address}: TLS: {error}") from None
        if options.insecure:
            client.tls_insecure_set(True)
    client.reconnect_delay_set(*options.backoff)
    return client


def _connect(client, address: BrokerAddress, options: MqttOptions, *, resume: bool = False) -> None:
    """The first connection, at once: an unreachable broker is one line, not a silent retry. MQTT 5: a
    session that expires `session_expiry` s after we leave, taken up again (`resume`) or fresh the first
    time and taken up again on reconnects."""
    try:
        if options.protocol == "5":
            from paho.mqtt.client import MQTT_CLEAN_START_FIRST_ONLY
            from paho.mqtt.packettypes import PacketTypes
            from paho.mqtt.properties import Properties

            properties = Properties(PacketTypes.CONNECT)
            properties.SessionExpiryInterval = max(0, int(options.session_expiry))
            client.connect(address.connect_host, address.port, keepalive=options.keepalive,
                           clean_start=False if resume else MQTT_CLEAN_START_FIRST_ONLY, properties=properties)
        else:
            client.connect(address.connect_host, address.port, keepalive=options.keepalive)
    except OSError as error:
        raise BrokerError(f"{address}: cannot connect: {error.strerror or error}") from None
    except ValueError as error:
        raise BrokerError(f"{address}: {error}") from None


class Subscription:
    """A topic subscribed to; paho's thread queues the messages, `batches()` hands them over in order.

    `on_note(text)` hears what a user should know (subscribed, connection lost, reconnected);
    `log` (a `MessageLog`) keeps every message before it is acknowledged; numbering goes on
    from `first_number` (a restart: the log's next)."""

    def __init__(self, address: BrokerAddress, options: MqttOptions, *, on_note: Callable[[str], None] = lambda text: None,
                 log: MessageLog | None = None, max_waiting: int = MAX_WAITING, clean: bool = False):
        if options.qos not in (0, 1, 2):
            raise BrokerError(f"QoS {options.qos}: expected 0, 1 or 2")
        self.address = address
        self.options = options
        self.name = str(address)
        self.on_note = on_note
        self.log = log
        self.max_waiting = max_waiting
        self.next_number = log.next_number if log is not None else 1
        self.recent = log.recent() if log is not None else _Recent()
        self.doubles = 0
        self.received = 0
        self.last_message = time.monotonic()
        self._waiting: deque[Message] = deque()
        self._ready = threading.Condition()
        self._subscribed = threading.Event()
        self._problem: str | None = None
        self._closed = False
        self._connections = 0
        self.client_id = options.client_id or f"rsp-plugin-{secrets.token_hex(6)}"
        self.clean = clean  # no session kept at all (MQTT 3.1.1): what comes while we are away is lost
        self._client = None

    def __repr__(self) -> str:
        return f"<Subscription {self.name} received={self.received} doubles={self.doubles}>"

    def start(self) -> Subscription:
        """Connect and subscribe, or BrokerError (unreachable, refused, not allowed to subscribe)."""
        client = self._client = _client(self.address, self.options, self.client_id, clean=self.clean)
        client.on_connect = self._on_connect
        client.on_subscribe = self._on_subscribe
        client.on_disconnect = self._on_disconnect
        client.on_message = self._on_message
        _connect(client, self.address, self.options, resume=self.options.client_id is not None)
        client.loop_start()
        if not self._subscribed.wait(self.options.connect_timeout) or self._problem:
            problem = self._problem or f"no answer from the broker in {self.options.connect_timeout:g} s"
            self.close()
            raise BrokerError(f"{self.name}: {problem}")
        return self

    # paho's thread ---------------------------------------------------------------------------------------------

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self._problem = f"the broker refused the connection: {reason_code}"
            self._subscribed.set()
            return
        self._connections += 1
        if self._connections > 1:
            kept = "the session was kept" if flags.session_present else "the broker lost the session"
            self.on_note(f"{self.name}: reconnected ({kept})")
            if flags.session_present:
                return  # subscribed still (subscribing again would bring the retained message again)
        if self.options.protocol == "5":
            from paho.mqtt.subscribeoptions import SubscribeOptions

            # retained messages only at a new subscription, not again at each reconnect
            client.subscribe(self.address.topic, options=SubscribeOptions(qos=self.options.qos, retainHandling=1))
        else:
            client.subscribe(self.address.topic, qos=self.options.qos)

    def _on_subscribe(self, client, userdata, mid, reason_codes, properties) -> None:
        code = reason_codes[0] if reason_codes else None
        if code is not None and code.is_failure:
            self._problem = f"the broker refused the subscription: {code}"
        elif not self._subscribed.is_set():
            self.on_note(f"{self.name}: subscribed (QoS {self.options.qos}, "
                         f"{'session ' + self.client_id if self.options.client_id else 'a fresh session'})")
        self._subscribed.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if not self._closed and self._subscribed.is_set() and self._problem is None:  # (start() says the rest)
            self.on_note(f"{self.name}: connection lost ({reason_code}); reconnecting")

    def _on_message(self, client, userdata, message) -> None:
        payload = bytes(message.payload)
        key = None
        if message.qos:
            key = _Recent.key(message.topic, message.mid, payload)
            if message.dup and key in self.recent:
                self.doubles += 1
                return
        with self._ready:
            while len(self._waiting) >= self.max_waiting and not self._closed:
                self._ready.wait(0.5)
            if self._closed:
                return
            item = Message(self.next_number, message.topic, payload, int(time.time() * 1000), message.mid,
                           bool(message.dup))
            if self.log is not None:
                self.log.append(item)  # written before paho acknowledges it (when this returns)
            self.next_number += 1
            self.received += 1
            if key is not None:
                self.recent.add(key)
            self._waiting.append(item)
            self._ready.notify_all()

    # the reader's side ----------------------------------------------------------------------------------------

    def take(self, limit: int = 10_000, timeout: float | None = None) -> list[Message]:
        """Up to `limit` messages in arrival order, waiting at most `timeout` s for the first ([] then)."""
        with self._ready:
            if not self._waiting and not self._closed:
                self._ready.wait(timeout)
            count = min(limit, len(self._waiting))
            taken = [self._waiting.popleft() for _ in range(count)]
            if taken:
                self.last_message = time.monotonic()
                self._ready.notify_all()
            return taken

    def batches(self, limit: int = 10_000) -> Iterator[list[Message]]:
        """Lists of messages as they come, until `idle` seconds pass without one, or `close()`."""
        idle = self.options.idle
        self.last_message = time.monotonic()
        while not self._closed:
            wait = 1.0 if idle is None else max(0.01, min(1.0, idle - (time.monotonic() - self.last_message)))
            taken = self.take(limit, wait)
            if taken:
                yield taken
            elif idle is not None and time.monotonic() - self.last_message >= idle:
                return

    def close(self) -> None:
        """Disconnect; a fresh session is dropped by the broker, a named one is kept."""
        with self._ready:
            self._closed = True
            self._ready.notify_all()
        client = self._client
        if client is None:
            return
        try:
            if self.options.protocol == "5" and self.options.client_id is None and self._subscribed.is_set():
                from paho.mqtt.packettypes import PacketTypes
                from paho.mqtt.properties import Properties

                properties = Properties(PacketTypes.DISCONNECT)
                properties.SessionExpiryInterval = 0
                client.disconnect(properties=properties)
            else:
                client.disconnect()
        finally:
            client.loop_stop()
        if self.options.client_id is None and self.options.protocol != "5" and self._connections and not self.clean:
            self._drop_session()
        if self.log is not None:
            self.log.close()

    def _drop_session(self) -> None:
        """MQTT 3.1.1: a clean connection under our id ends the session the broker keeps for it."""
        client = _client(self.address, self.options, self.client_id, clean=True)
        done = threading.Event()
        client.on_connect = lambda *args: done.set()
        try:
            _connect(client, self.address, self.options)
            client.loop_start()
            done.wait(self.options.connect_timeout)
            client.disconnect()
            client.loop_stop()
        except BrokerError:
            pass  # the broker is gone: it ends the session itself, or keeps it until it expires


def open_session(address: BrokerAddress, options: MqttOptions) -> str:
    """Make sure the broker keeps a session subscribed to `address` under `options.client_id`, so that it
    holds what comes before the session's reader is up (Spark's reader starts with the first batch).
    Messages the session held already are left there: received, never acknowledged, so the broker sends
    them again to the reader. Returns what to tell the user; BrokerError when the broker cannot be used."""
    if options.client_id is None:
        raise BrokerError(f"{address}: a kept session needs a client id")
    client = _client(address, options, options.client_id, manual_ack=True)
    done = threading.Event()
    problem: list[str] = []

    def connected(client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            problem.append(f"the broker refused the connection: {reason_code}")
            done.set()
        elif options.protocol == "5":
            from paho.mqtt.subscribeoptions import SubscribeOptions

            client.subscribe(address.topic, options=SubscribeOptions(qos=options.qos, retainHandling=1))
        else:
            client.subscribe(address.topic, qos=options.qos)

    def subscribed(client, userdata, mid, reason_codes, properties) -> None:
        if reason_codes and reason_codes[0].is_failure:
            problem.append(f"the broker refused the subscription: {reason_codes[0]}")
        done.set()

    client.on_connect = connected
    client.on_subscribe = subscribed
    client.on_message = lambda *args: None  # (not acknowledged: sent again to the reader)
    _connect(client, address, options, resume=True)
    client.loop_start()
    try:
        if not done.wait(options.connect_timeout) or problem:
            raise BrokerError(f"{address}: {problem[0] if problem else 'no answer from the broker'}")
    finally:
        client.disconnect()
        client.loop_stop()
    return f"{address}: subscribed (QoS {options.qos}, session {options.client_id})"


class Publisher:
    """A topic to publish to (QoS as asked; QoS 1 and 2 messages wait in paho while the broker is away)."""

    def __init__(self, address: BrokerAddress, options: MqttOptions, *, on_note: Callable[[str], None] = lambda t: None):
        self.address = address
        self.options = options
        self.name = str(address)
        self.on_note = on_note
        self.published = 0
        self._connected = threading.Event()
        self._problem: str | None = None
        self._closed = False
        self._connections = 0
        self._pending: deque = deque()
        self._client = None

    def start(self) -> Publisher:
        client = self._client = _client(self.address, self.options,
                                        f"{self.options.client_id}-publish" if self.options.client_id
                                        else f"rsp-plugin-publish-{secrets.token_hex(6)}", clean=True)
        client.on_connect = self._on_connect
        client.on_disconnect = self._on_disconnect
        client.max_queued_messages_set(0)
        client.max_inflight_messages_set(1000)  # (paho's 20 unacknowledged QoS 1 messages hold a fast stream back)
        _connect(client, self.address, self.options)
        client.loop_start()
        if not self._connected.wait(self.options.connect_timeout) or self._problem:
            problem = self._problem or f"no answer from the broker in {self.options.connect_timeout:g} s"
            self.close(wait=0)
            raise BrokerError(f"{self.name}: {problem}")
        return self

    def _on_connect(self, client, userdata, flags, reason_code, properties) -> None:
        if reason_code.is_failure:
            self._problem = f"the broker refused the connection: {reason_code}"
        else:
            self._connections += 1
            if self._connections > 1:
                self.on_note(f"{self.name}: reconnected")
        self._connected.set()

    def _on_disconnect(self, client, userdata, flags, reason_code, properties) -> None:
        if not self._closed and self._connected.is_set() and self._problem is None:  # (start() says the rest)
            self.on_note(f"{self.name}: connection lost ({reason_code}); reconnecting")

    def publish(self, payload: bytes | str, topic: str | None = None) -> None:
        """Send (or queue, while reconnecting) one message. QoS 1 and 2: at most MAX_PENDING wait for the
        broker's acknowledgement; the next waits for room (paho numbers them in 16 bits: more would collide)."""
        if self.options.qos:
            pending = self._pending
            while pending and pending[0].is_published():
                pending.popleft()
            while len(pending) >= MAX_PENDING:
                pending[0].wait_for_publish(1.0)
                while pending and pending[0].is_published():
                    pending.popleft()
        info = self._client.publish(topic or self.address.topic, payload, qos=self.options.qos)
        self.published += 1
        if self.options.qos:
            self._pending.append(info)

    def close(self, wait: float = 30.0) -> int:
        """Wait up to `wait` s for the broker to take what was published; disconnect. Returns how many it
        has not acknowledged."""
        deadline = time.monotonic() + wait
        while self._pending and time.monotonic() < deadline:
            if self._pending[0].is_published():
                self._pending.popleft()
            else:
                time.sleep(0.01)
        left = len(self._pending)
        self._closed = True
        if self._client is not None:
            self._client.disconnect()
            self._client.loop_stop()
        return left


# Payloads ------------------------------------------------------------------------------------------------------


def _lines_of_payload(payload: bytes) -> bytes:
    """A payload's lines without the newline that may end it."""
    if payload.endswith(b"\r\n"):
        return payload[:-2]
    if payload.endswith(b"\n"):
        return payload[:-1]
    return payload


def _run(messages: list[Message], *, universal: bool = False) -> tuple[bytes, list[tuple[int, int, int]]]:
    """Messages' lines as one text of lines, and per line (message index, line in message, lines of message)."""
    parts: list[bytes] = []
    owners: list[tuple[int, int, int]] = []
    for index, message in enumerate(messages):
        body = _lines_of_payload(message.payload)
        if universal and b"\r" in body:  # the atom reader's universal newlines, counted alike here
            body = body.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        count = body.count(b"\n") + 1
        parts.append(body)
        owners.extend((index, line, count) for line in range(1, count + 1))
    return b"\n".join(parts) + b"\n", owners


class PayloadReader:
    """Messages of one subscription read into stream elements (query, serve, Spark) or atom blocks (reason)."""

    def __init__(self, name: str, fmt: str, *, wildcard: bool = False, payload_time: str | None = None,
                 max_line_bytes: int | None = limits.MAX_LINE_BYTES, contexts: dict[str, str] | None = None):
        if fmt not in PAYLOAD_FORMATS:
            raise ValueError(f"unknown payload format {fmt!r}; expected one of {', '.join(PAYLOAD_FORMATS)}")
        if payload_time is not None and fmt in ("tnt", "stream", "trig", "nq"):
            raise ValueError(f"{fmt} payloads carry their own times: a time predicate is for nt, ttl or jsonld")
        self.name = name
        self.fmt = fmt
        self.wildcard = wildcard
        self.payload_time = None if payload_time is None else f"<{payload_time.strip('<>')}>"
        self.max_line_bytes = max_line_bytes
        self.contexts = contexts

    def rejected(self, message: Message, reason: str, line: int = 1, lines: int = 1) -> Rejected:
        """`NAME:N: [line L: ]reason[ (topic T)]`: a message set aside, or one line of it."""
        where = f"line {line}: " if lines > 1 else ""
        topic = f" (topic {message.topic})" if self.wildcard else ""
        return Rejected(self.name, message.number, f"{where}{reason}{topic}")

    def _too_long(self, messages: list[Message]) -> tuple[list[Message], list[tuple[int, Rejected]]]:
        bound = self.max_line_bytes
        if bound is None or all(len(message.payload) <= bound for message in messages):
            return messages, []
        kept, dropped = [], []
        for message in messages:
            if len(message.payload) > bound:
                dropped.append((message.number, self.rejected(message, f"message of {len(message.payload)} bytes, "
                                                                        f"longer than {bound} bytes (the bound; "
                                                                        "--max-line-bytes); set aside unread")))
            else:
                kept.append(message)
        return kept, dropped

    def elements(self, messages: list[Message], terms) -> Iterator:
        """StreamElements (line: the message's number) and Rejected records, in message order."""
        messages, dropped = self._too_long(messages)
        items = self._line_elements(messages, terms) if self.fmt in ("tnt", "nt") and self.payload_time is None \
            else self._document_elements(messages, terms)
        if not dropped:
            yield from items
            return
        waiting = deque(dropped)
        for item in items:
            number = item.line
            while waiting and waiting[0][0] < number:
                yield waiting.popleft()[1]
            yield item
        for _, record in waiting:
            yield record

    def _line_elements(self, messages: list[Message], terms) -> Iterator:
        from .formats import StreamElement, read_ntriples_at, read_tnt

        if not messages:
            return
        data, owners = _run(messages)
        if self.fmt == "tnt":
            items = read_tnt(data, terms, tick_ms=1, filename=self.name, max_line_bytes=None)
        else:
            items = read_ntriples_at(data, terms, timestamp=0, filename=self.name, max_line_bytes=None)
        for item in items:
            index, line, count = owners[item.line - 1]
            message = messages[index]
            if isinstance(item, Rejected):
                yield self.rejected(message, item.reason, line, count)
            else:
                yield StreamElement(item.time_point if self.fmt == "tnt" else message.arrival, item.fact,
                                    message.number, terms)

    def _document_elements(self, messages: list[Message], terms) -> Iterator:
        from .formats import StreamElement
        from .sources import read_source

        for message in messages:
            found = []
            lines = message.payload.count(b"\n") + 1
            for item in read_source(io.BytesIO(message.payload), self.fmt, terms, name=self.name,
                                    moment=message.arrival, max_line_bytes=self.max_line_bytes,
                                    contexts=self.contexts):
                if isinstance(item, Rejected):
                    yield self.rejected(message, item.reason, item.line, lines)
                else:
                    found.append(item)
            if self.payload_time is not None and found:
                moment = self._time_of(found, terms)
                if isinstance(moment, str):
                    yield self.rejected(message, moment)
                    continue
                found = [StreamElement(moment, element.fact, 0, terms) for element in found]
            for element in found:
                yield StreamElement(element.time_point, element.fact, message.number, terms)

    def _time_of(self, elements, terms) -> int | str:
        """The time (ms) the document's `payload_time` triple gives it, or why there is none."""
        from ..core.time import parse_timestamp_ms

        predicate = terms.find(self.payload_time)
        keys = terms.keys
        values = {keys[element.fact[1][2]] for element in elements if element.fact[1][1] == predicate}
        if not values:
            return f"no {self.payload_time} triple to take the document's time from; set aside"
        if len(values) > 1:
            return f"{len(values)} different {self.payload_time} times in one document; set aside"
        value = values.pop()
        lexical = value[1:value.rindex('"')] if value.startswith('"') else value
        try:
            return int(lexical) if re.fullmatch(r"-?\d+", lexical) else parse_timestamp_ms(lexical)
        except ValueError:
            return f"not a time: {value} ({self.payload_time} is an integer in ms or an xsd:dateTime); set aside"

    def line_batches(self, batches: Iterable[list[Message]]) -> Iterator[tuple]:
        """Per batch of messages, their lines as one text for a columnar reader (`columnar.atoms`):
        (messages, data, owners, set-aside records), `owners[i]` = (message index, line, count) of the
        text's line i + 1 (a message too long is set aside here)."""
        for messages in batches:
            messages, dropped = self._too_long(messages)
            records = [record for _, record in dropped]
            data, owners = _run(messages, universal=True) if messages else (b"", [])
            yield messages, data, owners, records

    def rows(self, messages: list[Message], stream: str) -> list[tuple]:
        """The `rdf` source's rows `(stream, s, p, o, ts, rejected)` of some messages (the Spark reader)."""
        from ..core.terms import Dictionary

        terms = Dictionary()
        keys = terms.keys
        rows = []
        for item in self.elements(messages, terms):
            if isinstance(item, Rejected):
                rows.append((stream, None, None, None, None, str(item)))
            else:
                s, p, o = item.fact[1]
                rows.append((stream, keys[s], keys[p], keys[o], item.time_point, None))
        return rows


# The message log (what the Spark reader replays after a restart) -------------------------------------------------

_RECORD = struct.Struct(">QqHBII")  # number, arrival ms, packet id, dup, topic bytes, payload bytes
SEGMENT_MESSAGES = 50_000
#: how long a new writer of a message log waits for the one before it (a killed run's reader, still stopping)
LOG_WRITER_WAIT = 60.0


class MessageLog:
    """Messages kept in order on disk before they are acknowledged: segments `log-NNNNNNNNNNNN.bin`,
    each a run of records (a fixed header, the topic, the payload; no pickle). A record cut short
    by a crash is cut off at the next open. `forget(n)` drops the segments wholly before message n.

    One writer at a time: it holds the log's `lock` file (flock, let go when it closes or its process
    ends), and the next waits for it. A killed run's reader outlives its command for a moment (its
    JVM stopping) and takes messages still; a restarted one that numbered messages beside it would
    give two messages one number."""

    def __init__(self, directory: str | os.PathLike, *, readonly: bool = False, wait: float = LOG_WRITER_WAIT):
        self.directory = Path(directory)
        self.readonly = readonly
        self._writer = None
        if not readonly:
            self.directory.mkdir(parents=True, exist_ok=True)
            self._writer = _hold_log(self.directory, wait)
        self._lock = threading.Lock()
        self._handle = None
        self._segment_first = None
        self._in_segment = 0
        self.next_number = 1
        segments = self._segments() if not readonly else []
        if segments:
            first, path = segments[-1]
            count, last, good = self._scan(path)
            if good < path.stat().st_size:
                with path.open("r+b") as handle:
                    handle.truncate(good)
            self.next_number = (last + 1) if last is not None else first
            self._segment_first, self._in_segment = first, count

    def _segments(self) -> list[tuple[int, Path]]:
        found = []
        if not self.directory.is_dir():
            return found
        for path in self.directory.glob("log-*.bin"):
            digits = path.stem[4:]
            if digits.isdigit():
                found.append((int(digits), path))
        return sorted(found)

    @staticmethod
    def _records(path: Path) -> Iterator[tuple[int, Message]]:
        """(end byte, message) per whole record of a segment."""
        with path.open("rb") as handle:
            data = handle.read()
        at = 0
        size = _RECORD.size
        while at + size <= len(data):
            number, arrival, mid, dup, topic_bytes, payload_bytes = _RECORD.unpack_from(data, at)
            end = at + size + topic_bytes + payload_bytes
            if end > len(data):
                return
            topic = data[at + size: at + size + topic_bytes].decode("utf-8", "replace")
            yield end, Message(number, topic, data[at + size + topic_bytes: end], arrival, mid, bool(dup))
            at = end

    def _scan(self, path: Path) -> tuple[int, int | None, int]:
        count, last, good = 0, None, 0
        for end, message in self._records(path):
            count, last, good = count + 1, message.number, end
        return count, last, good

    def recent(self) -> _Recent:
        """The keys of the last messages logged: a redelivery of one of them is a double."""
        recent = _Recent()
        for _, path in self._segments()[-2:]:
            for _, message in self._records(path):
                recent.add(_Recent.key(message.topic, message.mid, message.payload))
        return recent

    def append(self, message: Message) -> None:
        with self._lock:
            if self._handle is None or self._in_segment >= SEGMENT_MESSAGES:
                if self._handle is not None:
                    self._handle.close()
                if self._segment_first is None or self._in_segment >= SEGMENT_MESSAGES:
                    self._segment_first, self._in_segment = message.number, 0
                self._handle = (self.directory / f"log-{self._segment_first:012d}.bin").open("ab")
            topic = message.topic.encode("utf-8")
            self._handle.write(_RECORD.pack(message.number, message.arrival, message.mid, int(message.dup),
                                            len(topic), len(message.payload)) + topic + message.payload)
            self._handle.flush()  # in the OS before the broker hears it was taken: a crash of ours loses nothing
            self._in_segment += 1
            self.next_number = message.number + 1

    def read(self, start: int, end: int) -> list[Message]:
        """Messages numbered start <= n < end, from the segments that hold them."""
        with self._lock:
            if self._handle is not None:
                self._handle.flush()
            segments = self._segments()
        out: list[Message] = []
        for position, (first, path) in enumerate(segments):
            following = segments[position + 1][0] if position + 1 < len(segments) else None
            if first >= end or (following is not None and following <= start):
                continue
            out.extend(message for _, message in self._records(path) if start <= message.number < end)
        return out

    def forget(self, before: int) -> None:
        """Drop the segments whose messages are all numbered below `before` (Spark committed them)."""
        with self._lock:
            segments = self._segments()
            for position, (first, path) in enumerate(segments[:-1]):
                if segments[position + 1][0] <= before:
                    path.unlink(missing_ok=True)

    def close(self) -> None:
        with self._lock:
            if self._handle is not None:
                self._handle.close()
                self._handle = None
            if self._writer is not None:
                os.close(self._writer)  # (the lock goes with it)
                self._writer = None

    @staticmethod
    def wait_free(directory: str | os.PathLike, wait: float = LOG_WRITER_WAIT) -> None:
        """Wait until no reader writes the log (a killed run's, still stopping); BrokerError after `wait` s."""
        if Path(directory).is_dir():
            os.close(_hold_log(Path(directory), wait))


def _hold_log(directory: Path, wait: float) -> int:
    """A descriptor holding the log's writer lock, waited for up to `wait` s (BrokerError then)."""
    import fcntl

    descriptor = os.open(directory / "lock", os.O_RDWR | os.O_CREAT, 0o600)
    deadline = time.monotonic() + wait
    while True:
        try:
            fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return descriptor
        except BlockingIOError:
            if time.monotonic() >= deadline:
                os.close(descriptor)
                raise BrokerError(f"{directory}: the message log is still written by another reader after {wait:g} s "
                                  "(a run of this checkpoint that has not stopped)") from None
            time.sleep(0.05)


def session_id(*parts: str) -> str:
    """A client id that is the same for the same parts (a checkpoint and a source): a restart resumes it."""
    return "rsp-plugin-" + hashlib.sha256("\x00".join(parts).encode("utf-8")).hexdigest()[:20]


__all__ = ["BrokerAddress", "BrokerError", "Message", "MessageLog", "MqttOptions", "NEEDS_PAHO", "PAYLOAD_FORMATS",
           "PayloadReader", "Publisher", "Subscription", "is_broker", "open_session", "paho", "session_id",
           "topic_problem"]
