"""systemd service notifications (sd_notify) over $NOTIFY_SOCKET, without libsystemd: READY, STATUS, RELOADING,
STOPPING and the watchdog. Outside systemd (no $NOTIFY_SOCKET) every call is a no-op.

The protocol is one datagram of newline-separated VAR=value lines to a Unix socket, a path or an abstract name
written "@name" (see sd_notify(3)). The watchdog pings come from the event loop itself, so a loop that stalls
stops pinging and systemd restarts the service (WatchdogSec= in the unit).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import socket
import time
from collections.abc import Mapping

log = logging.getLogger(__name__)

# systemd reads the socket at once; a receiver that does not must not stall the event loop for long.
SEND_TIMEOUT_S = 0.25


def _address(value: str) -> str | bytes:
    """"@name" is an abstract socket (a leading NUL byte on the wire); anything else is a path."""
    return b"\0" + value[1:].encode() if value.startswith("@") else value


class SdNotify:
    """Sends sd_notify messages to `socket_path` (default: $NOTIFY_SOCKET). Failures are logged once, never raised."""

    def __init__(self, socket_path: str | None = None) -> None:
        path = os.environ.get("NOTIFY_SOCKET", "") if socket_path is None else socket_path
        self.address: str | bytes | None = _address(path) if path else None
        self._sock: socket.socket | None = None
        self._failed = False

    @property
    def enabled(self) -> bool:
        return self.address is not None

    def send(self, *lines: str) -> bool:
        """One datagram with these VAR=value lines; False when it could not be sent (or there is no socket)."""
        if self.address is None:
            return False
        try:
            if self._sock is None:
                self._sock = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM | socket.SOCK_CLOEXEC)
                self._sock.settimeout(SEND_TIMEOUT_S)
            self._sock.sendto("\n".join(lines).encode(), self.address)
            return True
        except OSError as e:
            if not self._failed:  # once: a missing socket would otherwise log every watchdog interval
                self._failed = True
                log.warning("cannot notify systemd at %r: %s", self.address, e)
            return False

    def ready(self, status: str = "") -> bool:
        """Start-up (or a reload) is complete."""
        return self.send("READY=1", *([f"STATUS={_one_line(status)}"] if status else []))

    def status(self, text: str) -> bool:
        """A free-form status line (`systemctl status` shows it)."""
        return self.send(f"STATUS={_one_line(text)}")

    def reloading(self) -> bool:
        """A reload begins; READY=1 ends it. MONOTONIC_USEC is what Type=notify-reload (systemd ≥ 253) wants."""
        usec = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
        return self.send("RELOADING=1", f"MONOTONIC_USEC={usec}")

    def stopping(self) -> bool:
        """Shutdown begins (the current turn still completes)."""
        return self.send("STOPPING=1")

    def watchdog(self) -> bool:
        """The service is alive."""
        return self.send("WATCHDOG=1")

    def close(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None


def _one_line(text: str) -> str:
    return " ".join(text.split())  # a newline would start a new VAR= line


def watchdog_interval(environ: Mapping[str, str] | None = None) -> float | None:
    """Seconds between watchdog pings (half of $WATCHDOG_USEC, as sd_watchdog_enabled(3) advises), or None when
    no watchdog is set or it is meant for another process ($WATCHDOG_PID)."""
    env = os.environ if environ is None else environ
    try:
        usec = int(env.get("WATCHDOG_USEC", ""))
    except ValueError:
        return None
    if usec <= 0:
        return None
    pid = env.get("WATCHDOG_PID", "")
    if pid and pid != str(os.getpid()):
        return None
    return usec / 2 / 1_000_000


async def watchdog_loop(notify: SdNotify, stopping: asyncio.Event, interval: float | None = None) -> None:
    """Ping WATCHDOG=1 every `interval` (default: from the environment) until `stopping` is set."""
    interval = watchdog_interval() if interval is None else interval
    if not interval or not notify.enabled:
        return
    while not stopping.is_set():
        notify.watchdog()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stopping.wait(), timeout=interval)
