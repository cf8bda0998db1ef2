"""What each command was asked, as typed values: built once from argparse's namespace
(`command_line.parse_options`), read by the commands as plain attributes.

A field is named as the option's `dest` (`--no-pruning` is `no_pruning`, `--from`
is `first`); repeatable options are tuples. The defaults are the command line's,
so a caller (a test, another tool) can build one with only what it means:

>>> QueryOptions(query="q.rq", stream=("http://ex/s=s.tnt",)).engine
'local'
>>> ReasonOptions(program="p.lars", stream="s.stream").pruning
True
"""

from __future__ import annotations

import argparse
from dataclasses import asdict, dataclass, field, fields

from ..core import limits


@dataclass(frozen=True)
class MqttArguments:
    """The --mqtt-* options (and --payload-time) as written; `resolved()` checks them and reads the password
    (`rsp_plugin.io.sources.mqtt_options`), only when a broker is used."""

    qos: int = 1
    client_id: str | None = None
    protocol: str = "3.1.1"
    session_expiry: int = 3600
    username: str | None = None
    password_file: str | None = None
    ca_file: str | None = None
    cert_file: str | None = None
    key_file: str | None = None
    insecure: bool = False
    idle: float | None = None
    payload_time: str | None = None

    def resolved(self):
        """The `MqttOptions` these ask for, or a `UserError` saying what is wrong with them."""
        from ..io.sources import mqtt_options

        return mqtt_options(**asdict(self))

    @classmethod
    def of(cls, namespace: argparse.Namespace) -> MqttArguments:
        given = vars(namespace)
        found = {}
        for name in (f.name for f in fields(cls)):
            dest = name if name == "payload_time" else f"mqtt_{name}"
            if dest in given:
                found[name] = given[dest]
        return cls(**found)


@dataclass(frozen=True)
class ReasonOptions:
    """`rsp-plugin reason PROGRAM --stream FILE|-|mqtt://... ...`"""

    program: str
    stream: str
    input_format: str | None = None
    first: int | None = None
    last: int | None = None
    no_pruning: bool = False
    changes: bool = False
    max_derivations: int | None = None
    semantics: str = "stream"
    models: str = "1"
    solver_timeout: float | None = None
    language: str | None = None
    max_gap: int | None = limits.MAX_GAP_TIME_POINTS
    max_line_bytes: int | None = limits.MAX_LINE_BYTES
    explain: str | None = None
    at: int | None = None
    explain_format: str = "text"
    explain_depth: int | None = None
    prefixes: bool = False
    time: str = "ms"
    mqtt: MqttArguments = field(default_factory=MqttArguments)
    # --engine spark (`cli/spark_reason.py`)
    engine: str = "local"
    mode: str | None = None
    master: str | None = None
    checkpoint: str | None = None
    checkpoint_key: str | None = None
    batch_lines: int | None = None
    spark_log_level: str | None = None

    @property
    def spark_only(self) -> dict:
        """The options only `--engine spark` reads, by their names on the command line (None: not given)."""
        return {"mode": self.mode, "master": self.master, "checkpoint": self.checkpoint,
                "checkpoint-key": self.checkpoint_key, "batch-lines": self.batch_lines,
                "spark-log-level": self.spark_log_level}

    @property
    def pruning(self) -> bool:
        return not self.no_pruning


@dataclass(frozen=True)
class QueryOptions:
    """`rsp-plugin query QUERY --stream IRI=WHERE ... [--engine local|spark] ...`"""

    query: str
    stream: tuple[str, ...]
    input_format: str = "tnt"
    publish: str | None = None
    background: tuple[str, ...] = ()
    engine: str = "local"
    master: str | None = None
    checkpoint: str | None = None
    checkpoint_key: str | None = None
    batch_lines: int | None = None
    mode: str | None = None
    partition_by: str | None = None
    spark_log_level: str | None = None
    format: str = "json"
    prefixes: bool = False
    time: str = "ms"
    first: int | None = None
    last: int | None = None
    quiet: bool = False
    report: str | None = None
    dialect: str = "auto"
    max_gap: int | None = limits.MAX_GAP_WINDOWS
    max_eval_ms: int | None = limits.MAX_EVAL_MS
    max_solutions: int | None = limits.MAX_SOLUTIONS
    max_line_bytes: int | None = limits.MAX_LINE_BYTES
    allow_service: tuple[str, ...] = ()
    allow_graph: tuple[str, ...] = ()
    jsonld_context: tuple[str, ...] = ()
    explain: bool = False
    explain_format: str = "text"
    explain_depth: int | None = None
    mqtt: MqttArguments = field(default_factory=MqttArguments)


@dataclass(frozen=True)
class ServeOptions:
    """`rsp-plugin serve [--host H] [--port P] [--token T] ...`"""

    host: str = "127.0.0.1"
    port: int = 8000
    token: str | None = None
    graph: tuple[str, ...] = ()
    background: tuple[str, ...] = ()
    rules: tuple[str, ...] = ()
    webhook_allow: tuple[str, ...] = ()
    max_body: int = 8 * 1024 * 1024
    rate: float = 200.0
    allow_host: tuple[str, ...] = ()
    allow_origin: tuple[str, ...] = ()
    trusted_proxy: tuple[str, ...] = ()
    history_bytes: int = 1024 * 1024
    queue_bytes: int = 16 * 1024 * 1024
    page_bytes: int = 1024 * 1024
    max_queries: int = 1000
    idle_timeout: float | None = None
    max_gap: int | None = limits.MAX_GAP_WINDOWS
    explain: bool = False
    mqtt_allow: tuple[str, ...] = ()
    mqtt: MqttArguments = field(default_factory=MqttArguments)


def typed(cls, namespace: argparse.Namespace):
    """`cls` (one of the dataclasses here, or `rsp_plugin.bench.BenchOptions`) filled from the namespace
    argparse made: each field from the `dest` of its name (lists as tuples), `mqtt` from the --mqtt-* options."""
    given = vars(namespace)
    found = {}
    for each in fields(cls):
        if each.name == "mqtt":
            found["mqtt"] = MqttArguments.of(namespace)
        elif each.name in given:
            value = given[each.name]
            found[each.name] = tuple(value) if isinstance(value, list) else value
    return cls(**found)


__all__ = ["MqttArguments", "QueryOptions", "ReasonOptions", "ServeOptions", "typed"]
