"""The `rdf-mqtt` data source: an MQTT broker's topic as a Structured Streaming source (PySpark's Python data sources).

    spark.readStream.format("rdf-mqtt").option("url", "mqtt://broker:1883/sensors/#")
         .option("stream", "http://ex/sensors").option("log", "chk/mqtt-log").load()

Columns and dead letters are the `rdf` source's (`stream, s, p, o, ts, rejected`);
payloads are read as the local engine reads them (`rsp_plugin.io.mqtt.PayloadReader`:
the same elements, times and `mqtt://HOST:PORT/TOPIC:N: reason` records).

Options:
    url              mqtt://HOST:PORT/TOPIC (mqtts:// for TLS; + and # allowed)
    stream           the stream IRI of every row (default: the url)
    format           tnt (default) | nt | ttl | trig | nq | jsonld
    payloadTime      nt / ttl / jsonld: the predicate whose object times a message (default: its arrival)
    qos              0 | 1 (default) | 2
    clientId         the broker session's client id (default: from `log`, so a restart resumes it; or random)
    protocol         3.1.1 (default) | 5
    username, password (or passwordFile), caFile, certFile, keyFile, insecure (true | false)
    log              a directory: the message log (see below); without it a restart loses what was read
    maxLineBytes     a longer message is a dead letter, unread (default 4 MiB)

Messages are received on the driver, by paho's thread in the reader, numbered
in arrival order; offsets are `{"messages": n}` (the first n messages). With a
`log`, each message is written there before the broker hears it was received
(`rsp_plugin.io.mqtt.MessageLog`), and the session is a persistent one under a
client id derived from the log's path: after a restart from Spark's
checkpoint, the batches Spark replays are read again from the log (the same
rows: arrival times are kept with the messages), what the broker held for the
session meanwhile comes after them, and a message the broker sends again
because our acknowledgement was lost in the crash is recognised (DUP flag,
packet id and bytes of a logged message) and dropped. So QoS 1 loses nothing
and doubles nothing across a restart. Spark's `commit` lets the log drop its
segments that every committed batch is past.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Iterator

from pyspark.sql.datasource import DataSource, SimpleDataSourceStreamReader

from ..core import limits
from .source import SCHEMA, SourceOptionError

FORMATS = ("tnt", "nt", "ttl", "trig", "nq", "jsonld")


class MQTTDataSource(DataSource):
    """Spark's handle on a broker's topic: `format("rdf-mqtt")`."""

    @classmethod
    def name(cls) -> str:
        return "rdf-mqtt"

    def schema(self) -> str:
        return SCHEMA

    def simpleStreamReader(self, schema) -> SimpleDataSourceStreamReader:
        return MQTTStreamReader(MQTTOptions.from_options(self.options))


class MQTTOptions:
    """The source's options, checked on the driver (a mistake is one line: `SourceOptionError`)."""

    def __init__(self, url: str, stream: str, fmt: str, payload_time: str | None, log: str | None,
                 max_line_bytes: int | None, mqtt: dict):
        self.url, self.stream, self.format, self.payload_time = url, stream, fmt, payload_time
        self.log, self.max_line_bytes, self.mqtt = log, max_line_bytes, mqtt

    @classmethod
    def from_options(cls, options) -> MQTTOptions:
        from ..io.mqtt import BrokerAddress, session_id

        options = {str(key).lower(): value for key, value in dict(options).items()}
        url = options.get("url") or options.get("path")
        if not url:
            raise SourceOptionError('the rdf-mqtt source needs a topic: .option("url", "mqtt://HOST:PORT/TOPIC")')
        try:
            BrokerAddress.parse(str(url))
        except ValueError as error:
            raise SourceOptionError(str(error)) from None
        fmt = options.get("format", "tnt")
        if fmt not in FORMATS:
            raise SourceOptionError(f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
        qos = str(options.get("qos", "1"))
        if qos not in ("0", "1", "2"):
            raise SourceOptionError(f"qos {qos!r}: expected 0, 1 or 2")
        protocol = str(options.get("protocol", "3.1.1"))
        if protocol not in ("3.1.1", "5"):
            raise SourceOptionError(f"protocol {protocol!r}: expected 3.1.1 or 5")
        password = options.get("password")
        if options.get("passwordfile"):
            try:
                text = Path(options["passwordfile"]).read_text(encoding="utf-8")
            except (OSError, UnicodeDecodeError) as error:
                raise SourceOptionError(f"passwordFile: cannot read {options['passwordfile']}: {error}") from None
            password = text.splitlines()[0] if text else ""
        log = options.get("log")
        client_id = options.get("clientid") or (session_id(str(Path(log).resolve()), str(url)) if log else None)
        bound = options.get("maxlinebytes")
        try:
            max_line = limits.MAX_LINE_BYTES if bound is None else None if str(bound).lower() == "none" \
                else limits.parse_size(str(bound))
        except ValueError as error:
            raise SourceOptionError(f"maxLineBytes: {error}") from None
        payload_time = options.get("payloadtime")
        if payload_time and fmt not in ("nt", "ttl", "jsonld"):
            raise SourceOptionError(f"payloadTime: {fmt} messages carry their own times (it times nt, ttl, jsonld)")
        mqtt = {"qos": int(qos), "client_id": client_id, "username": options.get("username"), "password": password,
                "ca_file": options.get("cafile"), "cert_file": options.get("certfile"),
                "key_file": options.get("keyfile"), "insecure": str(options.get("insecure", "")).lower() == "true",
                "protocol": protocol}
        return cls(str(url), options.get("stream") or str(url), fmt, payload_time, log, max_line, mqtt)

    def reader(self):
        from ..io.mqtt import BrokerAddress, PayloadReader

        address = BrokerAddress.parse(self.url)
        return PayloadReader(str(address), self.format, wildcard=address.wildcard, payload_time=self.payload_time,
                             max_line_bytes=self.max_line_bytes)


class MQTTStreamReader(SimpleDataSourceStreamReader):
    """Subscribes at its first `read`; each micro-batch takes the messages numbered past its start."""

    def __init__(self, options: MQTTOptions):
        self.options = options
        self._subscription = None
        self._log = None
        self._memory: list = []      # messages taken from the subscription, in order
        self._first: int | None = None  # the number of `_memory[0]` (or of the next message)
        self._lock = threading.Lock()

    def __getstate__(self) -> dict:
        """Spark pickles the reader (an executor may read a batch again): the options and the messages
        held travel; the connection, thread and lock do not."""
        with self._lock:
            return {"options": self.options, "memory": list(self._memory), "first": self._first}

    def __setstate__(self, state: dict) -> None:
        self.__init__(state["options"])
        self._memory, self._first = state["memory"], state["first"]

    def initialOffset(self) -> dict:
        return {"messages": 0}

    def _start(self) -> None:
        if self._subscription is not None:
            return
        from ..io.mqtt import BrokerAddress, MessageLog, MqttOptions, Subscription

        self._log = MessageLog(self.options.log) if self.options.log else None
        # without a log nothing can be read again after a restart: no session is kept for one either (Spark
        # may end this reader without a word, and a kept session would gather messages for nobody)
        subscription = Subscription(BrokerAddress.parse(self.options.url), MqttOptions(**self.options.mqtt),
                                    log=self._log, clean=self._log is None and self.options.mqtt["client_id"] is None)
        self._first = subscription.next_number
        self._subscription = subscription.start()

    def read(self, start: dict):
        self._start()
        taken = self._subscription.take(1 << 20, timeout=0)
        with self._lock:
            self._memory.extend(taken)
            last = self._first + len(self._memory) - 1
        begin = start["messages"]
        if last <= begin:
            return iter(()), {"messages": begin}
        return iter(self._rows(begin, last)), {"messages": last}

    def readBetweenOffsets(self, start: dict, end: dict) -> Iterator[tuple]:
        """A batch again (a restart, or an executor's copy of this reader): from memory or the log."""
        return iter(self._rows(start["messages"], end["messages"]))

    def _rows(self, begin: int, end: int) -> list[tuple]:
        """Rows of the messages numbered begin + 1 .. end."""
        messages = []
        with self._lock:
            first = self._first if self._first is not None else end + 1
            if begin + 1 < first:  # older than what is held: the log has them (a restart)
                if self._log is None and self.options.log:
                    from ..io.mqtt import MessageLog

                    self._log = MessageLog(self.options.log, readonly=True)  # (the live reader writes it)
                if self._log is not None:
                    messages = self._log.read(begin + 1, min(end, first - 1) + 1)
            low = max(begin + 1, first) - first
            messages += self._memory[low:max(low, end + 1 - first)]
        return self.options.reader().rows(messages, self.options.stream)

    def commit(self, end: dict) -> None:
        done = end["messages"]
        with self._lock:
            if self._first is not None and done >= self._first:
                del self._memory[:done + 1 - self._first]
                self._first = done + 1
        if self._log is not None:
            self._log.forget(done + 1)

    def stop(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
