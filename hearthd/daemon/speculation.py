"""Hearing and deciding in the pause: when the speaker has been quiet for `vad.speculate_ms`, the utterance so far is
transcribed and decided (Pipeline.guess: the templates, the tolerant tier, the model) while the endpointer waits to
be sure the speech is over. Nothing is acted on, asked or said then: the turn acts on the guess once the end of speech
is confirmed, when the words are the same. More speech makes it stale: a step not begun never runs, and the model
stops between tokens (Agent.cancel), so the gate is free for the next guess at once. When the guess is a whole
command (Router.complete), the utterance may end on `vad.complete_silence_ms` instead of `vad.end_silence_ms`.

The live loop and the satellites' hub listen the same way, each with one of these per utterance in the pause.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from typing import Any

import numpy as np

from ..audio.vad import Endpointer, EndpointState
from .components import Components
from .pipeline import Guess, Pipeline


class Speculation:
    """The utterance up to sample `to`, heard and decided in the pause; `task` gives its Guess."""

    def __init__(self, components: Components, pipeline: Pipeline, conversation: str, audio: np.ndarray, to: int,
                 language: str | None, fallback: str | None) -> None:
        self.c = components
        self.to = to  # the last voiced sample it heard (Endpointer.last_voiced): speech after that makes it stale
        self.stale = threading.Event()
        self.task: asyncio.Task[Guess] = asyncio.get_running_loop().create_task(
            self._run(pipeline, conversation, audio, language, fallback))
        self.task.add_done_callback(_seen)

    async def _run(self, pipeline: Pipeline, conversation: str, audio: np.ndarray, language: str | None,
                   fallback: str | None) -> Guess:
        transcript = await self.c.speech.transcribe(audio, language, fallback, self.stale)
        return await pipeline.guess(audio, transcript, conversation, self.stale)

    def cancel(self) -> None:
        """The speaker went on: nothing more of this runs (a whisper decode under way ends, unused)."""
        self.stale.set()
        agent = self.c.built("agent")
        if agent is not None:
            agent.cancel(self.stale)
        self.task.cancel()

    @property
    def complete(self) -> bool:
        """Heard and decided, and a whole command."""
        task = self.task
        return task.done() and not task.cancelled() and task.exception() is None and task.result().complete

    def ends(self, endpointer: Endpointer) -> bool:
        """Whether the utterance the endpointer follows ends now on the shorter silence: its words, this guess's,
        make a whole command, no speech came after them, and the speaker has been quiet `vad.complete_silence_ms`."""
        wait = self.c.cfg.vad.complete_silence_ms
        return 0 < wait <= endpointer.trailing_silence_ms and endpointer.last_voiced == self.to \
            and self.complete and endpointer.end_now() == EndpointState.DONE


def _seen(task: asyncio.Task[Any]) -> None:
    """A guess that failed is the turn's to retry; its exception is read so that it is not reported as lost."""
    if not task.cancelled():
        with contextlib.suppress(BaseException):
            task.exception()


def done(guess: Guess) -> asyncio.Future[Guess]:
    """A guess already made (a transcript heard elsewhere), as an awaitable."""
    future: asyncio.Future[Guess] = asyncio.get_running_loop().create_future()
    future.set_result(guess)
    return future
