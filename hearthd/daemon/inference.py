"""One inference at a time on the CPU: speculative work (whisper while the speaker may go on) yields to a turn.

Whisper and the model each size their thread pools to the free cores; run at once, they take the same cores
twice and both crawl (measured on 2 cores: a model turn of 1.8 s became 12.8 s beside speculative STT). So a
speculative job waits while a turn runs or waits, never overlaps another speculative job, and one cancelled
before it started never runs; a turn waits only for the speculative job already running (whisper stops between its
stages once the job is stale, hearthd.audio.stt.stoppable, but not inside an encoder pass or a decode; a speculative
model decision is cut between tokens when it becomes stale: Agent.cancel). A
speculative job may ask the model as a turn does (a decision made in the pause): the gate it holds is its turn's.
Turns do not exclude each other here (`turns`, the asyncio lock, orders them), so a turn
held by the live loop may call the agent, which holds it again.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

from ..audio.stt import stoppable
from ..errors import HearthdError

T = TypeVar("T")


class Skipped(HearthdError):
    """A speculative job that was cancelled before it could start."""

    code = "stt-speculation-skipped"


class InferenceGate:
    """Orders CPU inference: turns first, speculative jobs one at a time in between."""

    def __init__(self) -> None:
        self._cond = threading.Condition()
        self._here = threading.local()  # `held`: this thread runs a speculative job (its own turns pass through)
        self._speculating = False
        self._turns = 0  # turns running
        self._waiting = 0  # turns waiting for the speculative job to end
        self._started: list[float] = []  # when each running turn started (its budget runs from there)

    def enter(self, started: float | None = None) -> float:
        """Begin a turn (blocking until a running speculative job ends); returns when its budget starts: the
        earliest start of the turns running, e.g. the end of speech when the live loop holds one."""
        began = time.monotonic() if started is None else started
        if getattr(self._here, "held", False):
            return began  # a speculative decision asking the model: it already holds the gate
        with self._cond:
            self._waiting += 1
            try:
                while self._speculating:
                    self._cond.wait()
            finally:
                self._waiting -= 1
            self._turns += 1
            self._started.append(began)
            return min(self._started)

    def leave(self, started: float | None = None) -> None:
        """End a turn begun with `enter`."""
        if getattr(self._here, "held", False):
            return
        with self._cond:
            self._turns -= 1
            if self._started:
                self._started.remove(started if started in self._started else self._started[-1])
            self._cond.notify_all()

    @contextmanager
    def turn(self) -> Iterator[float]:
        """A turn as a context; yields when its budget starts."""
        now = time.monotonic()
        since = self.enter(now)
        try:
            yield since
        finally:
            self.leave(now)

    def speculative(self, fn: Callable[..., T], *args: Any, cancelled: threading.Event | None = None) -> T:
        """Run `fn(*args)` when no turn runs or waits and no other speculative job runs; `Skipped` when
        `cancelled` was set before it could start."""
        with self._cond:
            while self._speculating or self._turns or self._waiting:
                if cancelled is not None and cancelled.is_set():
                    raise Skipped
                self._cond.wait(0.05)
            if cancelled is not None and cancelled.is_set():
                raise Skipped
            self._speculating = True
        self._here.held = True
        try:
            if cancelled is None:
                return fn(*args)
            with stoppable(cancelled):  # speech to text stops between its stages once the job is stale
                return fn(*args)
        finally:
            self._here.held = False
            with self._cond:
                self._speculating = False
                self._cond.notify_all()

    @property
    def busy(self) -> bool:
        """Whether anything holds the gate (for tests and the trace)."""
        with self._cond:
            return self._speculating or bool(self._turns)
