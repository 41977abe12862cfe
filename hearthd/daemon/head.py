"""The listening head: what hearthd does with one stream of audio once the wake word is heard (or a question is
open), the same for the local microphone (live.py) and for every room's satellite (satellites.py).

- The endpointer follows the speech; in the pause after it (`vad.speculate_ms`) the utterance so far is heard and
  decided (speculation.Speculation); more speech makes that stale; a whole command ends the utterance on the shorter
  silence (`vad.complete_silence_ms`).
- While hearthd speaks into the stream, a short utterance is listened for apart (its own endpointer, STOP_MAX_S at
  most) and transcribed: "stop" said over a reply or a ring stops it.
- The turn holds the inference gate (whisper and the model never overlap; the model's budget runs from the end of
  speech).

What differs per stream stays with its owner: the live loop's states and chimes, a satellite's Wyoming events and
its room. (The Wyoming asr service only transcribes; its pause-time speech to text is the same idea without a
decision, wyoming.py `_watch`.)
"""

from __future__ import annotations

import asyncio
import functools
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, replace
from typing import Any

import numpy as np

from ..audio.pcm import SAMPLE_RATE
from ..audio.rescoring import rescored, unsure_of_language
from ..audio.vad import Endpointer, EndpointState
from ..config import VadConfig
from ..locale import read_with
from .components import Components
from .pipeline import Guess, Pipeline
from .policy import off_phrase, stop_phrase, stop_phrases
from .speculation import Speculation

log = logging.getLogger(__name__)

STOP_MAX_S = 1.6  # "stop" is short: longer speech heard while hearthd talks is not one


@dataclass
class Ended:
    """An utterance the endpointer ended: its speech, where it was in the stream, and whether it ended early on a
    whole command."""

    speech: np.ndarray
    start: int
    end: int
    complete: bool
    ended_after_ms: float  # how long ago the last word was heard (the silence waited)


def stop_vad(vad: VadConfig) -> VadConfig:
    """The endpointer settings for "stop" while hearthd talks: a short utterance, ended by a short pause."""
    return replace(vad, end_silence_ms=350, min_speech_ms=120, max_speech_s=STOP_MAX_S + 0.5,
                   no_speech_timeout_s=3600.0)


class ListeningHead:
    """One stream's ears (see the module's docstring). `endpointer` gives the endpointer the command is followed
    with (the live loop's shared one, or a satellite's own); `area`, when set, is the room the conversation's turns
    and guesses run in."""

    def __init__(self, components: Components, pipeline: Pipeline, conversation: str,
                 endpointer: Callable[[], Endpointer], area: str | None = None) -> None:
        self.c = components
        self.pipeline = pipeline
        self.conversation = conversation
        self._endpointer = endpointer
        self.area = area
        self.utterance: list[np.ndarray] = []
        self.speculation: Speculation | None = None
        self._barge: Endpointer | None = None
        self._barge_audio: list[np.ndarray] = []

    @property
    def endpointer(self) -> Endpointer:
        return self._endpointer()

    # -- a command ------------------------------------------------------------------------------------------------

    def begin(self, vad: VadConfig | None = None) -> None:
        """Listen for a command from now on (with `vad` in place of the configured endpointing, if given)."""
        endpointer = self.endpointer
        if vad is not None:
            endpointer.cfg = vad
        endpointer.reset()
        self.cancel()
        self.utterance = []

    def feed(self, block: np.ndarray) -> tuple[EndpointState, Ended | None]:
        """One block of the command's audio: the endpointer's state, and the utterance when it has ended."""
        endpointer = self.endpointer
        self.utterance.append(block)
        state = endpointer.feed(block)
        complete = False
        if state == EndpointState.SPEAKING:
            quiet = endpointer.trailing_silence_ms
            if self.speculation is not None and endpointer.last_voiced != self.speculation.to:
                self.cancel()  # speech again (even within one block with a pause after): that guess is stale
            if self.speculation is None and quiet >= self.c.cfg.vad.speculate_ms > 0:
                self._speculate()
            elif self.speculation is not None and self.speculation.ends(endpointer):
                state, complete = EndpointState.DONE, True  # a whole command: no need to wait out end_silence_ms
        if state != EndpointState.DONE or endpointer.segment is None:
            return state, None
        return state, self._ended(complete)

    def flush(self) -> Ended | None:
        """The stream stopped: the utterance in progress, if the endpointer takes it as one."""
        endpointer = self.endpointer
        if endpointer.flush() == EndpointState.DONE and endpointer.segment is not None:
            return self._ended(False)
        return None

    def _ended(self, complete: bool) -> Ended:
        endpointer = self.endpointer
        seg = endpointer.segment
        assert seg is not None
        if self.speculation is not None and endpointer.last_voiced != self.speculation.to:
            self.cancel()  # speech came after it within the last block
        audio = np.concatenate(self.utterance)
        self.utterance = []
        return Ended(audio[seg.start:seg.end], seg.start, seg.end, complete, endpointer.ended_after_ms)

    def _speculate(self) -> None:
        audio = np.concatenate(self.utterance)
        seg = self.endpointer.speech_so_far()
        dialogue = self.c.dialogues.get(self.conversation)
        if self.area is not None:
            dialogue.area = self.area  # decided in the stream's room, as its turn is
        self.speculation = Speculation(self.c, self.pipeline, self.conversation, audio[seg.start:seg.end],
                                       self.endpointer.last_voiced, None, dialogue.lang)

    def take_guess(self) -> Awaitable[Guess] | None:
        """What was heard and decided in the pause, for the turn that now begins (None: nothing was)."""
        speculation, self.speculation = self.speculation, None
        return speculation.task if speculation is not None else None

    def cancel(self) -> None:
        """The guess in the pause is stale: nothing more of it runs (a whisper decode under way ends, unused)."""
        if self.speculation is not None:
            self.speculation.cancel()  # a step not begun never runs; the model stops between tokens
            self.speculation = None

    # -- "stop" while hearthd talks ---------------------------------------------------------------------------------

    def make_stop_listener(self) -> None:
        """Build the "stop" listener's endpointer (blocking: a VAD model; the satellites build it off the loop)."""
        if self._barge is None:
            self._barge = Endpointer(stop_vad(self.c.cfg.vad), self.c.speech_probability())

    def reset_stop(self) -> None:
        if self._barge is not None:
            self._barge.reset()
        self._barge_audio = []

    def hear_stop(self, block: np.ndarray) -> np.ndarray | None:
        """A block heard while hearthd talks: a short utterance when one has just ended (to be checked with
        `stop_said`), else None."""
        if self._barge is None:
            return None
        self._barge_audio.append(block)
        state = self._barge.feed(block)
        if state == EndpointState.DONE and self._barge.segment is not None:
            seg = self._barge.segment
            audio = np.concatenate(self._barge_audio)[seg.start:seg.end]
            self.reset_stop()
            return audio if len(audio) <= STOP_MAX_S * SAMPLE_RATE else None
        if state == EndpointState.TIMEOUT:
            self.reset_stop()
        return None

    async def stop_said(self, audio: np.ndarray) -> Any:
        """A short utterance that asks only for quiet ("stop", "बस", "хватит"): the transcript of the stop phrase it
        was heard as, in that phrase's language (what a ringing alarm's turn then reads); else None. Heard beside a
        turn, never instead of one (the inference gate's speculative slot)."""
        lang = self.c.dialogues.get(self.conversation).lang
        transcript = await asyncio.get_running_loop().run_in_executor(
            None, self.c.inference.speculative, self.c.stt().transcribe, audio, None, lang)
        # the stop words of the language heard and of the conversation's, each with those its speakers mix in: a
        # Hindi speaker's "बस" is written as English "bus", "बस करो" in Cyrillic letters
        langs = (*read_with(transcript.lang), *(read_with(lang) if lang else ()))
        found = stop_phrase(transcript.text, *langs)
        if found is None and self.c.alarms.ringing():  # "turn it off", "выключи": the alarm's off, said alone
            found = off_phrase(transcript.text, *langs)
        if found is None and transcript.text.strip():
            try:
                found = await asyncio.get_running_loop().run_in_executor(
                    None, self.c.inference.speculative, self._stop_heard, audio, transcript, langs)
            except Exception:  # the words as whisper wrote them stand: no stop heard
                log.exception("weighing the stop phrases against the audio failed")
        return None if found is None else replace(transcript, text=found[0], lang=found[1])

    def _stop_heard(self, audio: np.ndarray, transcript: Any, langs: tuple[str, ...]) -> tuple[str, str] | None:
        """The stop phrase whisper's ear hears where its decoder wrote something else: the phrases weighed against the
        audio as the templates' sentences are (hearthd.audio.rescoring, the same margin and floor). Whisper base on some
        CPUs writes a Kokoro "रुक जाओ" as a loop ("अप्रूव़ व़ व़ …"), yet fits "रुक जाओ" to it well; what was said
        as a request of its own fits its own words better than any stop phrase, and is left alone."""
        fit = getattr(self.c.stt(), "fit", None)
        cfg = self.c.cfg.stt
        if fit is None or not cfg.rescore:
            return None
        if not unsure_of_language(transcript, cfg.rescore_languages_below):
            langs = (transcript.lang,)  # the other languages' phrases only when whisper was unsure, as for commands
        best: tuple[float, str, str] | None = None
        for lang in dict.fromkeys(langs):
            found = rescored(transcript.text, list(stop_phrases(lang)), functools.partial(fit, audio, lang),
                             cfg.rescore_margin, cfg.rescore_floor, lang != transcript.lang, loops=True)
            if found is not None and (best is None or found.score > best[0]):
                best = (found.score, found.text, lang)
        return None if best is None else (best[1], best[2])

    # -- the turn ------------------------------------------------------------------------------------------------

    async def enter_gate(self, end_of_speech: float) -> None:
        """Hold the inference gate for this turn: a stale speculative decode still running ends first, and the
        agent's budget runs from `end_of_speech`. `leave_gate` gives it back."""
        gate = self.c.inference
        entered = asyncio.get_running_loop().run_in_executor(None, gate.enter, end_of_speech)
        try:
            await asyncio.shield(entered)
        except asyncio.CancelledError:  # the wait cannot be taken back: give the gate up once it is had
            entered.add_done_callback(lambda _: gate.leave(end_of_speech))
            raise

    def leave_gate(self, end_of_speech: float) -> None:
        self.c.inference.leave(end_of_speech)
