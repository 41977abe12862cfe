"""Real services for tests, on 127.0.0.1 / private sockets only, stopped by PID."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_port(port: int, timeout: float = 5.0) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return True
        except OSError:
            time.sleep(0.05)
    return False


@contextmanager
def mosquitto(tmp: Path) -> Iterator[int | None]:
    """A broker on 127.0.0.1: the one .ci/run started, else our own; None when mosquitto is not installed."""
    if os.environ.get("HEARTHD_TEST_MQTT_PORT"):
        yield int(os.environ["HEARTHD_TEST_MQTT_PORT"])
        return
    binary = shutil.which("mosquitto") or ("/usr/sbin/mosquitto" if os.path.exists("/usr/sbin/mosquitto") else None)
    if not binary:
        yield None
        return
    port = free_port()
    conf = tmp / "mosquitto.conf"
    conf.write_text(f"listener {port} 127.0.0.1\nallow_anonymous true\npersistence false\n")
    proc = subprocess.Popen([binary, "-c", str(conf)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield port if wait_port(port) else None
    finally:
        proc.terminate()
        proc.wait(timeout=5)


@contextmanager
def session_bus() -> Iterator[str | None]:
    """A private dbus-daemon; yields its address (None when dbus-daemon is not installed)."""
    binary = shutil.which("dbus-daemon")
    if not binary:
        yield None
        return
    out = subprocess.run([binary, "--session", "--fork", "--print-address=1", "--print-pid=1"],
                         capture_output=True, text=True, check=True).stdout.split()
    address, pid = out[0], int(out[1])
    try:
        yield address
    finally:
        os.kill(pid, 15)
