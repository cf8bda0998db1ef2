"""A real Mosquitto for the tests marked `mqtt`: on a free port of 127.0.0.1, its own directory, persistence on.

Debian's `mosquitto` package (CI installs it in .ci/run); when it is missing a test fails
saying so (it is never skipped).
"""

from __future__ import annotations

import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import pytest


def mosquitto_path() -> str:
    for candidate in (os.environ.get("RSP_PLUGIN_MOSQUITTO"), shutil.which("mosquitto"), "/usr/sbin/mosquitto"):
        if candidate and Path(candidate).is_file():
            return candidate
    pytest.fail("the tests marked mqtt need Mosquitto, the MQTT broker: apt-get install mosquitto "
                "(or set RSP_PLUGIN_MOSQUITTO to its path)", pytrace=False)


def make_certificates(directory: Path) -> None:
    """ca.pem / ca.key (a CA) and server.pem / server.key (127.0.0.1 and localhost, signed by it), by openssl."""
    def run(*args: str) -> None:
        subprocess.run(["openssl", *args], cwd=directory, check=True, capture_output=True)

    run("req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj", "/CN=rsp-plugin test CA",
        "-keyout", "ca.key", "-out", "ca.pem")
    run("req", "-newkey", "rsa:2048", "-nodes", "-subj", "/CN=127.0.0.1", "-keyout", "server.key",
        "-out", "server.csr")
    (directory / "names.ext").write_text("subjectAltName=IP:127.0.0.1,DNS:localhost\n")
    run("x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial", "-days", "2",
        "-extfile", "names.ext", "-out", "server.pem")


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class Broker:
    """`start()`, `stop()` (SIGTERM: Mosquitto saves its sessions and queued messages), `start()` again."""

    def __init__(self, *, password: tuple[str, str] | None = None, tls: bool = False):
        self.binary = mosquitto_path()
        self.directory = Path(tempfile.mkdtemp(prefix="rsp-mosquitto-"))
        self.port = free_port()
        self.process: subprocess.Popen | None = None
        lines = [f"listener {self.port} 127.0.0.1"]
        if tls:  # a CA of the test's own and a certificate for 127.0.0.1 / localhost signed by it
            self.ca = self.directory / "ca.pem"
            make_certificates(self.directory)
            lines += [f"cafile {self.ca}", f"certfile {self.directory / 'server.pem'}",
                      f"keyfile {self.directory / 'server.key'}"]
        lines += ["persistence true",
                 f"persistence_location {self.directory}/", "max_queued_messages 0", "log_dest stderr",
                 "log_type error", "log_type warning"]
        if os.geteuid() == 0:  # as root Mosquitto would become the user `mosquitto`, who cannot write here
            lines.append("user root")
        if password is None:
            lines.append("allow_anonymous true")
        else:
            passwords = self.directory / "passwords"
            passwords.write_text(f"{password[0]}:{password[1]}\n")
            passwords.chmod(0o600)
            tool = shutil.which("mosquitto_passwd") or "/usr/bin/mosquitto_passwd"
            subprocess.run([tool, "-U", str(passwords)], check=True)
            lines += ["allow_anonymous false", f"password_file {passwords}"]
        self.config = self.directory / "mosquitto.conf"
        self.config.write_text("\n".join(lines) + "\n")

    def url(self, topic: str, scheme: str = "mqtt") -> str:
        return f"{scheme}://127.0.0.1:{self.port}/{topic}"

    def start(self) -> Broker:
        self.process = subprocess.Popen([self.binary, "-c", str(self.config)], stdout=subprocess.DEVNULL,
                                        stderr=open(self.directory / "broker.log", "ab"))
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"mosquitto stopped at once: {(self.directory / 'broker.log').read_text()[-500:]}")
            try:
                with socket.create_connection(("127.0.0.1", self.port), timeout=0.2):
                    return self
            except OSError:
                time.sleep(0.02)
        raise RuntimeError("mosquitto did not listen within 10 s")

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
            try:
                self.process.wait(10)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self.process = None

    def close(self) -> None:
        self.stop()
        shutil.rmtree(self.directory, ignore_errors=True)


@pytest.fixture
def broker():
    running = Broker().start()
    yield running
    running.close()


def publish(url: str, payloads, *, qos: int = 1, **options) -> None:
    """Publish each payload in order (QoS 1: each acknowledged by the broker before this returns)."""
    from rsp_plugin.io.mqtt import BrokerAddress, MqttOptions, Publisher

    publisher = Publisher(BrokerAddress.parse(url, publish=True), MqttOptions(qos=qos, **options)).start()
    for payload in payloads:
        publisher.publish(payload)
    assert publisher.close() == 0
