"""The daemon's life as a service: signals, systemd notifications, the watchdog and config reloads.

SIGTERM/SIGINT send STOPPING=1 and set `stopping`; the daemon then lets the current turn finish (`finish`) and
closes its parts. SIGHUP re-reads the config file between turns (RELOADING=1 … READY=1): what can change live
is applied (daemon/reload.py) and reported as a `reload` event; a config with errors is rejected with an
`error` event and the running one kept. The watchdog pings from this event loop, so a stalled loop is restarted.
"""

from __future__ import annotations

import asyncio
import logging
import os
import signal
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from ..config import ConfigError, load_config
from ..events import AlarmEvent, ErrorEvent, Event, ReloadEvent, ReplyEvent, Trace, TranscriptEvent
from .components import Components
from .logs import log_events
from .notify import SdNotify, watchdog_interval, watchdog_loop
from .reload import apply_config
from .scheduler import Scheduler

log = logging.getLogger(__name__)

STOP_GRACE_S = 20.0  # the current turn may finish within it; below the units' TimeoutStopSec=30


def _count(n: int, word: str) -> str:
    return f"{n} {word}{'' if n == 1 else 's'}"


class Lifecycle:
    """Signals, sd_notify, the watchdog and reloads for one run of the daemon (call `start` in the running loop)."""

    def __init__(self, components: Components, trace: Trace, turns: asyncio.Lock,
                 config_path: str | Path | None = None, notify: SdNotify | None = None) -> None:
        self.c = components
        self.trace = trace
        self.turns = turns  # held by each turn; a reload and the shutdown wait for it
        self.config_path = config_path  # what the CLI loaded (None: $HEARTHD_CONFIG or the XDG default)
        self.notify = notify or SdNotify()
        self.scheduler: Scheduler | None = None  # set once built: a reload retunes it
        self.stopping = asyncio.Event()
        self._ready = asyncio.Event()
        self._reload_lock = asyncio.Lock()
        self._tasks: set[asyncio.Task[None]] = set()
        self._signals: list[int] = []

    def start(self) -> None:
        """Install the signal handlers, start the watchdog and log the trace."""
        interval = watchdog_interval()
        # Children (wpctl, espeak-ng) must not think they are the service, as sd_notify(3)'s unset_environment.
        for name in ("NOTIFY_SOCKET", "WATCHDOG_USEC", "WATCHDOG_PID"):
            os.environ.pop(name, None)
        loop = asyncio.get_running_loop()
        for sig in (signal.SIGTERM, signal.SIGINT):
            loop.add_signal_handler(sig, self.stop, sig)
        loop.add_signal_handler(signal.SIGHUP, self._on_hup)
        self._signals = [signal.SIGTERM, signal.SIGINT, signal.SIGHUP]
        if interval and self.notify.enabled:
            log.debug("watchdog: a ping every %.2f s", interval)
            self._spawn(watchdog_loop(self.notify, self.stopping, interval))
        self.trace.listen(log_events(self.c.cfg.general))
        self.trace.listen(self._on_event)

    def ready(self) -> None:
        """Start-up is done: READY=1 with the status line."""
        self._ready.set()
        self.notify.ready(self.idle_status())

    def idle_status(self) -> str:
        alarms, timers = len(self.c.alarms.pending()), len(self.c.alarms.pending("timer"))
        return f"idle, {_count(alarms, 'alarm')} and {_count(timers, 'timer')} pending"

    def stop(self, signum: int = signal.SIGTERM) -> None:
        """Begin the shutdown (idempotent)."""
        if not self.stopping.is_set():
            log.info("%s: stopping once the current turn is done", signal.Signals(signum).name)
            self.notify.stopping()
            self.stopping.set()

    async def finish(self) -> None:
        """Wait (at most STOP_GRACE_S) for the turn in progress; the lock stays held so no new turn begins."""
        try:
            await asyncio.wait_for(self.turns.acquire(), STOP_GRACE_S)
        except TimeoutError:
            log.warning("the current turn did not finish within %.0f s; stopping anyway", STOP_GRACE_S)

    def close(self) -> None:
        """Remove the signal handlers and stop the background tasks."""
        loop = asyncio.get_running_loop()
        for sig in self._signals:
            loop.remove_signal_handler(sig)
        self._signals = []
        for task in list(self._tasks):
            task.cancel()
        self.notify.close()

    async def reload(self) -> None:
        """Re-read the config and apply what can change live; a config with errors changes nothing."""
        await self._ready.wait()
        async with self._reload_lock:
            if self.stopping.is_set():
                return
            self.notify.reloading()
            async with self.turns:  # a turn runs under one config from start to end
                try:
                    new = load_config(self.config_path)
                except ConfigError as e:
                    self.trace.emit(ErrorEvent(code=e.code,
                                               message=f"reload rejected, the running config is kept: {e}"))
                    self.notify.ready(f"{self.idle_status()}; last reload rejected: {e}")
                    return
                done = apply_config(self.c, new, self.scheduler)
                self.trace.emit(ReloadEvent(source=self.c.cfg.source, changed=done.changed, restart=done.restart,
                                            language=self.c.cfg.general.language))
                if done.restart:
                    log.warning("reload: changes to %s take effect after a restart", ", ".join(done.restart))
            self.notify.ready(self.idle_status())

    def _on_hup(self) -> None:
        self._spawn(self.reload())

    def _spawn(self, coro: Coroutine[Any, Any, None]) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._done)

    def _done(self, task: asyncio.Task[None]) -> None:
        self._tasks.discard(task)
        if not task.cancelled() and task.exception() is not None:
            log.error("daemon task failed", exc_info=task.exception())

    def _on_event(self, event: Event) -> None:
        """STATUS= follows the daemon (`systemctl status hearthd`); never the words said, whatever the privacy."""
        if not self._ready.is_set() or self.stopping.is_set():
            return
        if isinstance(event, AlarmEvent):
            self.notify.status(f"ringing: {event.kind} {event.id}")
        elif isinstance(event, TranscriptEvent):
            self.notify.status("thinking")
        elif isinstance(event, ReplyEvent):
            self.notify.status(self.idle_status())
