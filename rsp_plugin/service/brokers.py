"""The service and MQTT brokers: a stream fed from a broker's topic, a query's reports published to one.

    PUT /streams/{iri}                 {"mqtt": "mqtt://HOST:PORT/TOPIC", "format": "tnt", "payload_time": "IRI"}
    POST /queries/{name}/observers     {"url": "mqtt://HOST:PORT/TOPIC"}

The service opens no connection a client names unless the operator allowed
it: a broker URL must start with one of `serve --mqtt-allow` (scheme, host,
port, then a topic prefix); the credentials and TLS settings are the
operator's (`serve --mqtt-username ...`), never a client's.

A fed stream's messages are read as `query --stream IRI=mqtt://...` reads
them (`rsp_plugin.io.mqtt.PayloadReader`, on the engine's thread, in order,
pushed as a request's body is); what cannot be read is counted in the
stream's `rejected` as `mqtt://HOST:PORT/TOPIC:N: reason`. A publishing
observer sends each report (the JSON value the other readers get) as one
message; while the broker is away paho keeps them (QoS 1) and the observer
counts them as waiting.
"""

from __future__ import annotations

import asyncio
import threading

from ..io.mqtt import (
    BrokerAddress,
    BrokerError,
    MqttOptions,
    PayloadReader,
    Publisher,
    Subscription,
    is_broker,
)
from .bodies import FORMATS, ReadBody
from .live import ServiceError


def broker_allowed(allowed: tuple[str, ...], url: str) -> bool:
    """Is `url` (mqtt://HOST:PORT/TOPIC) under an allowed prefix (same scheme, host and port, topic below)?

    >>> broker_allowed(("mqtt://localhost:1883/building/",), "mqtt://localhost:1883/building/+/temp")
    True
    >>> broker_allowed(("mqtt://localhost:1883/building/",), "mqtt://localhost:1883/#")
    False
    """
    try:
        target = BrokerAddress.parse(url)
    except ValueError:
        return False
    for prefix in allowed:
        scheme, _, rest = prefix.partition("://")
        authority, _, topic = rest.partition("/")
        host, colon, port = authority.rpartition(":")
        if not colon:
            host, port = authority, "8883" if scheme == "mqtts" else "1883"
        if (scheme == ("mqtts" if target.tls else "mqtt") and host == target.host and port == str(target.port)
                and target.topic.startswith(topic)):
            return True
    return False


def _checked(settings, url: str, *, publish: bool) -> BrokerAddress:
    try:
        address = BrokerAddress.parse(url, publish=publish)
    except ValueError as error:
        raise ServiceError(400, str(error)) from None
    if not broker_allowed(tuple(getattr(settings, "mqtt_allow", ()) or ()), url):
        raise ServiceError(403, f"broker <{url}> is not under an allowed prefix (serve --mqtt-allow "
                                f"mqtt://HOST:PORT/TOPIC-PREFIX); allowed: "
                                f"{', '.join(getattr(settings, 'mqtt_allow', ()) or ()) or 'none'}")
    return address


class Feed:
    """One stream fed from a topic: a thread hands each batch of messages to the engine's thread."""

    def __init__(self, live, iri: str, subscription: Subscription, reader: PayloadReader):
        self.live, self.iri = live, iri
        self.subscription, self.reader = subscription, reader
        self.thread = threading.Thread(target=self._run, name=f"mqtt {subscription.name}", daemon=True)

    def info(self) -> dict:
        return {"mqtt": self.subscription.name, "format": self.reader.fmt, "messages": self.subscription.received,
                "doubles": self.subscription.doubles}

    def _run(self) -> None:
        for messages in self.subscription.batches():
            try:
                self.live.worker.submit(self._push, messages).result()
            except (ServiceError, RuntimeError):  # the stream is gone, or the service is closing
                break
        self.subscription.close()

    def _push(self, messages) -> None:
        read = ReadBody()
        for item in self.reader.elements(messages, self.live.engine.terms):
            (read.elements if hasattr(item, "fact") else read.rejected).append(item)
        self.live.take(self.iri, read, self.subscription.name)


class BrokerFeeds:
    """The service's fed streams, by stream IRI."""

    def __init__(self, live, settings):
        self.live, self.settings = live, settings
        self.feeds: dict[str, Feed] = {}

    def options(self) -> MqttOptions:
        return getattr(self.settings, "mqtt", None) or MqttOptions()

    def attach(self, iri: str, spec: dict) -> dict:
        """Feed stream `iri` from the topic `spec["mqtt"]` (blocking: run it off the event loop)."""
        url = spec.get("mqtt")
        if not isinstance(url, str) or not is_broker(url):
            raise ServiceError(400, 'expected {"mqtt": "mqtt://HOST:PORT/TOPIC", "format"?: "tnt", '
                                    '"payload_time"?: "IRI"}')
        address = _checked(self.settings, url, publish=False)
        fmt = spec.get("format") or "tnt"
        if fmt not in FORMATS:
            raise ServiceError(400, f"format {fmt!r}: expected one of {', '.join(FORMATS)}")
        if iri in self.feeds:
            raise ServiceError(409, f"stream <{iri}> is fed from {self.feeds[iri].subscription.name} already")
        try:
            reader = PayloadReader(str(address), fmt, wildcard=address.wildcard, payload_time=spec.get("payload_time"))
        except ValueError as error:
            raise ServiceError(400, str(error)) from None
        try:
            subscription = Subscription(address, self.options()).start()
        except BrokerError as error:
            raise ServiceError(502, str(error)) from None
        feed = self.feeds[iri] = Feed(self.live, iri, subscription, reader)
        feed.thread.start()
        return feed.info()

    def detach(self, iri: str) -> None:
        feed = self.feeds.pop(iri, None)
        if feed is not None:
            feed.subscription.close()

    def close(self) -> None:
        for iri in list(self.feeds):
            self.detach(iri)


def publishing_task(observer, settings):
    """The task of an observer whose URL is a broker's topic: each report one JSON message."""
    address = _checked(settings, observer.url, publish=True)
    options = getattr(settings, "mqtt", None) or MqttOptions()

    async def publish() -> None:
        try:
            publisher = await asyncio.to_thread(Publisher(address, options).start)
        except BrokerError as error:
            observer.last_error = str(error)
            return
        try:
            while True:
                data = await observer.next_report()
                observer.attempts += 1
                publisher.publish(data)
                observer.delivered += 1
        finally:
            await asyncio.to_thread(publisher.close, 5.0)

    return publish


__all__ = ["BrokerFeeds", "Feed", "broker_allowed", "publishing_task"]
