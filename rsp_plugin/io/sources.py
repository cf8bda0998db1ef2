"""Where `rsp-plugin query --stream IRI=...` reads a stream: a file, standard input, a socket or a broker.

    IRI=FILE          a file; its extension names the format (.tnt, .trig, .nq, .nt, .ttl, ...)
    IRI=FILE@T        a plain RDF document seen at T ms
    IRI=-             standard input, read as it comes (`--input-format`, default tnt)
    IRI=tcp://H:P     a TCP socket this command connects to, read line by line as it comes
    IRI=mqtt://H:P/T  an MQTT topic (wildcards + and #) subscribed to, each message read as it comes
                      (`--input-format`; `rsp_plugin.io.mqtt`); mqtts:// over TLS

A source gives `StreamElement`s and `Rejected` records, never an exception for a
bad line: a line that is not UTF-8 is set aside like a line that cannot be read.

>>> source = stream_source("http://ex/s=tcp://localhost:9000")
>>> source.iri, source.kind, source.address
('http://ex/s', 'tcp', ('localhost', 9000))
>>> stream_source("http://ex/s=-").name
'<stdin>'
"""

from __future__ import annotations

import io
import socket
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO, Iterator

from ..core import limits
from ..core.errors import UserError
from ..core.terms import Dictionary
from .formats import (
    Rejected,
    StreamElement,
    read_ntriples_at,
    read_rdf_document_at,
    read_timestamped_graphs,
    read_tnt,
)
from .lines import read_document

#: --input-format values for standard input and sockets (files go by their extension)
INPUT_FORMATS = ("tnt", "nt", "ttl", "trig", "nq", "jsonld")
_BY_SUFFIX = {".tnt": "tnt", ".nt": "nt", ".ttl": "ttl", ".n3": "n3", ".rdf": "xml", ".owl": "xml",
              ".jsonld": "jsonld", ".trig": "trig", ".nq": "nq", ".nquads": "nq"}
_RDFLIB = {"ttl": "turtle", "n3": "n3", "xml": "xml"}


@dataclass(frozen=True)
class StreamSource:
    """One --stream argument: the stream's IRI and where its elements come from."""

    iri: str
    kind: str                       # "file", "stdin", "tcp" or "mqtt"
    path: Path | None = None
    address: tuple[str, int] | None = None
    moment: int = 0                 # the time (ms) of a plain RDF document's triples
    fmt: str = "tnt"
    broker: object = None           # kind "mqtt": the `BrokerAddress`, and how to talk to it (`MqttOptions`)
    mqtt: object = None

    @property
    def name(self) -> str:
        """How a rejected line names its source: the file, `<stdin>`, `tcp://HOST:PORT` or `mqtt://HOST:PORT/TOPIC`."""
        if self.kind == "file":
            return str(self.path)
        if self.kind == "stdin":
            return "<stdin>"
        if self.kind == "mqtt":
            return str(self.broker)
        return f"tcp://{self.address[0]}:{self.address[1]}"

    @property
    def live(self) -> bool:
        return self.kind != "file"


def stream_source(text: str, input_format: str = "tnt", mqtt=None) -> StreamSource:
    """Read one --stream argument (IRI=FILE, IRI=FILE@T, IRI=-, IRI=tcp://HOST:PORT, IRI=mqtt://HOST:PORT/TOPIC);
    `mqtt`: the `MqttOptions` a broker's stream is read with."""
    iri, equals, where = text.partition("=")
    if not equals or not iri or not where:
        raise UserError(f"--stream {text}: expected IRI=FILE, IRI=-, IRI=tcp://HOST:PORT or "
                        "IRI=mqtt://HOST:PORT/TOPIC, e.g. --stream http://ex.org/s=data/s.tnt")
    iri = iri.strip("<>")
    if where.startswith(("mqtt://", "mqtts://")):
        from .mqtt import BrokerAddress, MqttOptions

        try:
            broker = BrokerAddress.parse(where)
        except ValueError as error:
            raise UserError(f"--stream {iri}={error}") from None
        mqtt = mqtt or MqttOptions()
        if mqtt.payload_time is not None and input_format not in ("nt", "ttl", "jsonld"):
            raise UserError(f"--payload-time: {input_format} messages carry their own times; it times nt, ttl "
                            "or jsonld documents (--input-format)")
        return StreamSource(iri, "mqtt", fmt=input_format, broker=broker, mqtt=mqtt or MqttOptions())
    moment = 0
    name, at, when = where.rpartition("@")
    if at and when.lstrip("-").isdigit() and not Path(where).exists():
        where, moment = name, int(when)
    if where == "-":
        return StreamSource(iri, "stdin", moment=moment, fmt=input_format)
    if where.startswith("tcp://"):
        host, colon, port = where[len("tcp://"):].rstrip("/").rpartition(":")
        if not colon or not host or not port.isdigit():
            raise UserError(f"--stream {text}: expected tcp://HOST:PORT")
        return StreamSource(iri, "tcp", address=(host.strip("[]"), int(port)), moment=moment, fmt=input_format)
    path = Path(where)
    if not path.is_file():
        raise UserError(f"{path}: cannot read the stream: no such file")
    return StreamSource(iri, "file", path=path, moment=moment, fmt=_BY_SUFFIX.get(path.suffix.lower(), "tnt"))


class OpenSource:
    """An opened source: its elements (read lazily) and the handle to close (`note`: who hears how a
    broker's connection goes; default: stderr)."""

    def __init__(self, source: StreamSource, terms: Dictionary, *,
                 max_line_bytes: int | None = limits.MAX_LINE_BYTES, contexts: dict[str, str] | None = None,
                 note=None):
        self.source = source
        self.handle: BinaryIO | None = None
        self._socket = None
        self._subscription = None
        if source.kind == "mqtt":
            self._subscription = subscribe(source, note)
            self.elements = broker_elements(self._subscription, source, terms, max_line_bytes=max_line_bytes,
                                            contexts=contexts)
            return
        if source.kind == "file":
            try:
                self.handle = source.path.open("rb")
            except OSError as error:
                raise UserError(f"{source.path}: cannot read the stream: {error.strerror}") from None
        elif source.kind == "stdin":
            self.handle = sys.stdin.buffer
        else:
            try:
                self._socket = socket.create_connection(source.address, timeout=10)
            except OSError as error:
                raise UserError(f"{source.name}: cannot connect: {error.strerror or error}") from None
            self._socket.settimeout(None)
            self.handle = self._socket.makefile("rb")
        self.elements = read_source(self.handle, source.fmt, terms, name=source.name, moment=source.moment,
                                    max_line_bytes=max_line_bytes, contexts=contexts)

    def close(self) -> None:
        if self._subscription is not None:
            self._subscription.close()
        if self.source.kind == "stdin":
            return
        if self.handle is not None:
            self.handle.close()
        if self._socket is not None:
            self._socket.close()


def subscribe(source: StreamSource, note=None):
    """A broker's topic subscribed to (`rsp_plugin.io.mqtt.Subscription`); what the user should know about
    the connection (subscribed, lost, back) goes to stderr. A broker that cannot be used is one line."""
    from .mqtt import BrokerError, Subscription

    def say(text: str) -> None:
        print(f"rsp-plugin: {text}", file=sys.stderr, flush=True)

    try:
        return Subscription(source.broker, source.mqtt, on_note=note or say).start()
    except BrokerError as error:
        raise UserError(str(error)) from None


def broker_elements(subscription, source: StreamSource, terms: Dictionary, *,
                    max_line_bytes: int | None = limits.MAX_LINE_BYTES, contexts: dict[str, str] | None = None):
    """The elements of a subscription's messages as they come, in `source.fmt` (`rsp_plugin.io.mqtt.PayloadReader`)."""
    from .mqtt import PayloadReader

    reader = PayloadReader(source.name, source.fmt, wildcard=source.broker.wildcard,
                           payload_time=source.mqtt.payload_time, max_line_bytes=max_line_bytes, contexts=contexts)
    for messages in subscription.batches():
        yield from reader.elements(messages, terms)


def mqtt_options(*, qos: int = 1, client_id: str | None = None, username: str | None = None,
                 password_file: str | None = None, ca_file: str | None = None, cert_file: str | None = None,
                 key_file: str | None = None, insecure: bool = False, session_expiry: int = 3600,
                 idle: float | None = None, protocol: str = "3.1.1", payload_time: str | None = None):
    """The `MqttOptions` of a command's --mqtt-* options, checked (and the password from --mqtt-password-file
    or the environment variable RSP_PLUGIN_MQTT_PASSWORD, never from the command line itself)."""
    import os

    from .mqtt import MqttOptions

    password = os.environ.get("RSP_PLUGIN_MQTT_PASSWORD")
    if password_file:
        try:
            text = Path(password_file).read_text(encoding="utf-8")
        except OSError as error:
            raise UserError(f"{password_file}: cannot read the MQTT password: {error.strerror}") from None
        except UnicodeDecodeError:
            raise UserError(f"{password_file}: the MQTT password is not UTF-8 text") from None
        password = text.splitlines()[0] if text else ""
    for option, path in (("--mqtt-ca-file", ca_file), ("--mqtt-cert-file", cert_file), ("--mqtt-key-file", key_file)):
        if path and not Path(path).is_file():
            raise UserError(f"{path}: cannot read the {option}: no such file")
    if idle is not None and idle <= 0:
        raise UserError(f"--mqtt-idle {idle:g}: expected a number of seconds above 0")
    return MqttOptions(qos=qos, client_id=client_id, username=username,
                       password=password if username is not None else None, ca_file=ca_file, cert_file=cert_file,
                       key_file=key_file, insecure=insecure, session_expiry=session_expiry, idle=idle,
                       protocol=protocol, payload_time=payload_time)


def read_source(binary: BinaryIO, fmt: str, terms: Dictionary, *, name: str, moment: int = 0,
                max_line_bytes: int | None = limits.MAX_LINE_BYTES,
                contexts: dict[str, str] | None = None) -> Iterator[StreamElement | Rejected]:
    """Elements of a byte stream in `fmt`: line formats as the lines come, documents once read whole.
    A line that is not UTF-8 or longer than `max_line_bytes` is set aside (`rsp_plugin.io.lines`)."""
    if fmt == "tnt":
        yield from read_tnt(binary, terms, tick_ms=1, filename=name, max_line_bytes=max_line_bytes)
        return
    if fmt == "nt":
        yield from read_ntriples_at(binary, terms, timestamp=moment, filename=name, max_line_bytes=max_line_bytes)
        return
    if fmt == "jsonld":
        yield from _read_jsonld(b"".join(iter(lambda: binary.read(1 << 20), b"")), terms, moment, name, contexts)
        return
    text, rejected = read_document(binary, filename=name, max_line_bytes=max_line_bytes)
    yield from rejected
    if fmt in ("trig", "nq"):
        yield from read_timestamped_graphs(text, terms, filename=name, rdf_format="nquads" if fmt == "nq" else "trig")
        return
    yield from read_rdf_document_at(text, terms, timestamp=moment, rdf_format=_RDFLIB.get(fmt, "turtle"),
                                    filename=name, contexts=contexts)


def _read_jsonld(data: bytes, terms: Dictionary, timestamp: int, name: str, contexts: dict[str, str] | None):
    """JSON-LD, nothing fetched (contexts come from local files the user mapped, `documents.py`):
    named graphs with prov:generatedAtTime are elements (TripleWave's shape), else every triple is
    seen at `timestamp`. A document that cannot be read (not UTF-8, not JSON, nested too deeply, an
    escape of no character, a key that makes no IRI) is set aside whole, at the place named."""
    from rdflib import Dataset

    from ..core.errors import clipped
    from ..core.terms import quotable
    from .documents import (
        DocumentRefused,
        dataset_calls,
        inline_contexts,
        load_json,
        parse_jsonld,
    )
    from .lines import decode_text

    dataset = Dataset()
    try:
        text = decode_text(data, name, DocumentRefused)
        document = inline_contexts(load_json(text, name), contexts or {}, filename=name)
        parse_jsonld(document, dataset, text, name)
    except DocumentRefused as refused:
        yield Rejected(name, refused.lineno or 1, _set_aside(refused.msg))
        return
    except Exception as error:  # rdflib's JSON-LD reader raises many kinds
        why = str(error).splitlines()[0] if str(error).strip() else type(error).__name__
        yield Rejected(name, 1, f"not JSON-LD: {quotable(clipped(why, 200))}")
        return
    named = [g for g in dataset.graphs() if str(g.identifier) != "urn:x-rdflib:default" and len(g)]
    with dataset_calls():
        nquads = dataset.serialize(format="nquads")
    if named:  # TripleWave's shape: named graphs with prov:generatedAtTime
        yield from read_timestamped_graphs(nquads, terms, rdf_format="nquads", filename=name)
        return
    ntriples = nquads
    yield from read_source(io.BytesIO(ntriples.encode()), "nt", terms, name=name, moment=timestamp)


def _set_aside(reason: str) -> str:
    """A refusal's reason as a stream says it: the document is set aside (not "refused")."""
    return reason.removesuffix("; refused") + "; the document is set aside"


__all__ = ["INPUT_FORMATS", "OpenSource", "StreamSource", "broker_elements", "mqtt_options", "read_source",
           "stream_source", "subscribe"]
