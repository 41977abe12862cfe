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

Speech heard in the pause by several streams at once (the live loop and each satellite's room) is one speculative job
(SpeechBatch): the utterances waiting when the gate frees are transcribed together.
"""

from __future__ import annotations

import asyncio
import functools
import logging
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, TypeVar

import numpy as np

from ..audio.stt import Stale, Transcript, stoppable
from ..errors import HearthdError

T = TypeVar("T")
log = logging.getLogger(__name__)

DECIDE_FIRST_S = 0.01  # after a batch heard, the time its guesses get to ask for the gate before more is heard


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
        self._sooner = 0  # speculative jobs waiting that go before those asked `later`
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

    def speculative(self, fn: Callable[..., T], *args: Any, cancelled: threading.Event | None = None,
                    later: bool = False) -> T:
        """Run `fn(*args)` when no turn runs or waits and no other speculative job runs; `Skipped` when
        `cancelled` was set before it could start. A job asked `later` (hearing more streams' speech) also lets every
        other speculative job waiting go first (deciding what was heard already: a few ms each, and a room's turn can
        end)."""
        with self._cond:
            if not later:
                self._sooner += 1
            try:
                while self._speculating or self._turns or self._waiting or (later and self._sooner):
                    if cancelled is not None and cancelled.is_set():
                        raise Skipped
                    self._cond.wait(0.05)
                if cancelled is not None and cancelled.is_set():
                    raise Skipped
            finally:
                if not later:
                    self._sooner -= 1
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


@dataclass
class _Asked:
    """One utterance waiting to be heard in the pause."""

    audio: np.ndarray
    language: str | None
    fallback: str | None
    stale: threading.Event
    future: asyncio.Future[Transcript]


class SpeechBatch:
    """Speech to text in the pause for every stream at once. Each utterance heard in a pause (the live loop's, each
    satellite room's) waits for the gate's speculative slot; when it frees, every utterance then waiting is heard in
    one job, and those that come while it encodes join it (the engine's `prepare_many`, encoded in pairs as they
    come, then `finish_many`, decoded together): ten rooms that fall silent together wait for one batch, not for
    ten whisper passes one after another (bench/latency.py --satellite --rooms). One utterance alone is heard as
    before, its decoding left out once it is stale; an utterance made stale before its job began is never heard
    (Skipped). An engine without `prepare_many` (a remote Wyoming asr) hears each utterance alone."""

    def __init__(self, gate: InferenceGate, stt: Callable[[], Any]) -> None:
        self.gate = gate
        self._stt = stt
        self._lock = threading.Lock()  # `_waiting` is taken by the job's thread
        self._waiting: list[_Asked] = []
        self._taken: list[_Asked] = []  # those the job under way took
        self._draining: asyncio.Task[None] | None = None
        self.sizes: list[int] = []  # how many utterances each job heard (the last 100; the bench and tests read it)

    async def transcribe(self, audio: np.ndarray, language: str | None, fallback: str | None,
                         stale: threading.Event) -> Transcript:
        """What `audio` says, heard in the next speculative job (Skipped when it was stale before that began)."""
        loop = asyncio.get_running_loop()
        stt = self._stt()
        if not hasattr(stt, "prepare_many"):  # an engine that hears one utterance at a time (a remote asr)
            job = functools.partial(self.gate.speculative, stt.transcribe, audio, language, fallback, cancelled=stale)
            result: Transcript = await loop.run_in_executor(None, job)
            return result
        asked = _Asked(audio, language, fallback, stale, loop.create_future())
        with self._lock:
            self._waiting.append(asked)
        draining = self._draining
        if draining is None or draining.done() or draining.get_loop() is not loop:
            self._draining = loop.create_task(self._drain(stt))
        return await asked.future

    async def _drain(self, stt: Any) -> None:
        """Jobs until nobody waits (on the event loop: a new utterance sees this running or starts another)."""
        loop = asyncio.get_running_loop()
        while True:
            with self._lock:
                self._waiting = [a for a in self._waiting if not a.future.done() and a.future.get_loop() is loop]
                if not self._waiting:
                    return
            try:
                heard = await loop.run_in_executor(None, functools.partial(
                    self.gate.speculative, functools.partial(self._hear, stt), later=True))
            except Exception as e:  # the job itself failed: every utterance it took gets the error, none is lost
                log.warning("speech to text in the pause failed: %s", e)
                with self._lock:
                    heard = [(a, e) for a in self._taken]
            with self._lock:
                self._taken = []
            for asked, result in heard:
                if asked.future.done():
                    continue  # its speculation was cancelled: the speaker went on
                if isinstance(result, BaseException):
                    asked.future.set_exception(result)
                else:
                    asked.future.set_result(result)
            with self._lock:
                more = bool(self._waiting)
            if more:
                # what was just heard is decided before more is heard: its guesses ask for the gate in the next few
                # iterations of the loop (through a worker thread), and then go before the next job
                await asyncio.sleep(DECIDE_FIRST_S)

    def _hear(self, stt: Any) -> list[tuple[_Asked, Transcript | BaseException]]:
        """In the gate's speculative slot: every utterance waiting now, heard; and those that come while they are
        encoded, with them (ten rooms falling silent over a quarter of a second: each encoded as it comes, all decoded
        in one batch at the end, where a first one heard whole alone held the other nine back by its decoding)."""
        out: list[tuple[_Asked, Transcript | BaseException]] = []
        pool: list[tuple[_Asked, Any]] = []  # encoded, waiting for the decoding
        while True:
            with self._lock:
                taken, self._waiting = self._waiting, []
                self._taken += taken
            out += [(a, Skipped()) for a in taken if a.stale.is_set()]
            live = [a for a in taken if not a.stale.is_set()]
            if not live:
                break
            try:
                prepared = stt.prepare_many([(a.audio, a.language, a.fallback) for a in live])
            except Exception as e:  # the engine failed them all: each gets the error (its turn hears it again)
                log.warning("speech to text of %d utterances in the pause failed: %s", len(live), e)
                out += [(a, e) for a in live]
                continue
            for asked, one in zip(live, prepared, strict=True):
                if isinstance(one, (Transcript, BaseException)):  # heard alone already (or failed)
                    out.append((asked, one))
                else:
                    pool.append((asked, one))
        stale = [(a, Stale("the speaker went on: this transcription is stale")) for a, _ in pool if a.stale.is_set()]
        pool = [(a, one) for a, one in pool if not a.stale.is_set()]
        out += stale
        self.sizes = [*self.sizes[-99:], len(pool) + sum(1 for _, r in out if isinstance(r, Transcript))]
        if pool:
            try:
                out += zip([a for a, _ in pool], stt.finish_many([one for _, one in pool]), strict=True)
            except Exception as e:
                log.warning("speech to text of %d utterances in the pause failed: %s", len(pool), e)
                out += [(a, e) for a, _ in pool]
        return out
