"""`rsp-plugin query ... --publish mqtt://HOST:PORT/TOPIC`: each report one message, in the chosen `--format`.

A message is a whole document of that format holding one evaluation (a CSV
message has its header, a SPARQL XML message is one `<sparql>` document, a
`json` message is one line without its newline), so a subscriber reads each
on its own.
"""

from __future__ import annotations

import io
import sys

from ..core.errors import UserError
from ..query.writers import writer_for


class ReportPublisher:
    """A writer's stand-in (`write(result)`, `close()`) that publishes each report to a topic."""

    def __init__(self, publisher, fmt: str, *, form: str, variables: tuple[str, ...]):
        writer_for(fmt, io.StringIO(), form=form, variables=variables)  # a format that cannot hold them: now
        self.publisher = publisher
        self.fmt, self.form, self.variables = fmt, form, variables

    def write(self, result) -> None:
        text = io.StringIO()
        writer = writer_for(self.fmt, text, form=self.form, variables=self.variables)
        writer.write(result)
        writer.close()
        payload = text.getvalue()
        self.publisher.publish(payload[:-1] if payload.endswith("\n") and payload.count("\n") == 1 else payload)

    def close(self) -> None:
        left = self.publisher.close()
        if left:
            print(f"rsp-plugin: {self.publisher.name}: {left} report{'s' if left != 1 else ''} not acknowledged "
                  "by the broker before the end", file=sys.stderr)


class PublishSink:
    """`--engine spark --publish`: the micro-batch driver's sink (`rsp_plugin.spark.sinks.Sink`'s methods),
    each result of a batch one message; at least once for the batch in flight at a restart."""

    def __init__(self, publisher, fmt: str):
        self.publisher = publisher
        self.fmt = fmt

    def write(self, batch_id: int, results: list) -> None:
        from ..spark.sinks import result_line

        for result in results:
            self.publisher.publish(result_line(result, self.fmt))

    def position(self):
        return None

    def rewind(self, position) -> None:
        pass

    def close(self) -> None:
        self.publisher.close()


def publisher_for(url: str, mqtt):
    """The `Publisher` of --publish URL, connected, or one line saying why not."""
    from ..io.mqtt import BrokerAddress, BrokerError, Publisher, is_broker

    if not is_broker(url):
        raise UserError(f"--publish {url}: expected mqtt://HOST:PORT/TOPIC (or mqtts:// for TLS)")
    try:
        address = BrokerAddress.parse(url, publish=True)
    except ValueError as error:
        raise UserError(f"--publish {error}") from None

    def say(text: str) -> None:
        print(f"rsp-plugin: {text}", file=sys.stderr, flush=True)

    try:
        return Publisher(address, mqtt.resolved(), on_note=say).start()
    except BrokerError as error:
        raise UserError(str(error)) from None
