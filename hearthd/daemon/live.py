"""The live loop: microphone → wake word → endpointing → speech to text → agent → reply spoken → listening again.

One consumer reads the capture source block by block and never stops reading, whatever else runs: the source's
ring buffer keeps capturing while a model runs, and its `dropped` counter (reported in the trace) proves no frame
was lost. Turns run as tasks beside the reader, so during a reply the reader still hears the wake word or "stop"
(barge-in). After a question (a missing detail, a confirmation) the next utterance needs no wake word.

The utterance is heard and decided in the pause (hearthd.daemon.speculation): once the speaker has been silent for
`vad.speculate_ms`, the utterance so far is transcribed and decided while the endpointer waits out the rest of
`vad.end_silence_ms`; the turn acts on that decision when the end of speech is confirmed and the words are the same,
and a whole command ends the utterance on `vad.complete_silence_ms`. Nothing is done, asked or said before the end of
speech. Replies are spoken sentence by sentence: playback starts once the first sentence is synthesised.

Whisper and the model never run at once (`components.inference`): speculative jobs run one at a time, one made
stale by more speech is skipped if it has not started (a model decision under way stops between tokens), and a
turn (its speech to text when the speculation was not usable, then the model) starts once the running one is done.
The turn's budget (`agent.max_turn_s`) runs from the end of speech.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import deque
from collections.abc import Awaitable
from enum import StrEnum
from typing import Any

import numpy as np

from ..audio.chime import chime
from ..audio.io import AudioDeviceError, AudioSink, AudioSource
from ..audio.pcm import SAMPLE_RATE
from ..audio.tts import speak
from ..audio.vad import EndpointState
from ..audio.wake import WakeWordDetector
from ..errors import HearthdError
from ..events import (
    AudioOutEvent,
    BargeInEvent,
    ErrorEvent,
    ListeningEvent,
    MetricsEvent,
    SpeechEndEvent,
    SpeechStartEvent,
    TimingEvent,
    Trace,
    WakeEvent,
)
from ..locale import phrase
from ..sentences import spoken_sentences
from .components import Components
from .dialogue import LOCAL
from .head import ListeningHead
from .pipeline import Guess, Pipeline, TurnResult, stage_error
from .speculation import Speculation, done


class LoopState(StrEnum):
    IDLE = "idle"  # waiting for the wake word
    LISTENING = "listening"
    THINKING = "thinking"
    SPEAKING = "speaking"


WAKE_NOTES = (880.0, 1318.5)
DONE_NOTES = (1318.5, 880.0)
ERROR_NOTES = (440.0, 330.0)
def sentences(text: str) -> list[str]:
    """A reply cut as it is spoken (hearthd.sentences.spoken_sentences)."""
    return spoken_sentences(text)


class LiveLoop:
    """The daemon's conversation loop over one audio source and one sink."""

    def __init__(self, components: Components, trace: Trace, source: AudioSource, sink: AudioSink,
                 pipeline: Pipeline | None = None, turns: asyncio.Lock | None = None) -> None:
        self.c = components
        self.cfg = components.cfg
        self.trace = trace
        self.source = source
        self.sink = sink
        self.pipeline = pipeline or Pipeline(components, trace)
        self.turns = turns or asyncio.Lock()
        self.state = LoopState.IDLE
        self.muted = False
        self.follow_up_until = 0.0  # loop time until which speech needs no wake word
        self._refractory_until = 0.0
        # the ears after the wake word (endpointing, the guess in the pause, "stop" while speaking): head.py
        self.head = ListeningHead(components, self.pipeline, LOCAL, components.endpointer)
        self._tasks: set[asyncio.Task[Any]] = set()
        self._turn: asyncio.Task[None] | None = None
        self._listen_started = 0.0
        self._blocks = 0
        self.turns_done = 0
        self.on_state: Any = None  # callback(state) for the D-Bus State property and MQTT assist state
        self._prepared = False
        self.wake: WakeWordDetector | None = None  # run() loads it; set_wake_word replaces it

    # -- states ---------------------------------------------------------------------------------------

    def _set(self, state: LoopState) -> None:
        if state != self.state:
            if state == LoopState.SPEAKING:  # "stop" is listened for from the first word hearthd says
                self.head.make_stop_listener()
                self.head.reset_stop()
            self.state = state
            if self.on_state is not None:
                self.on_state(state.value)

    async def set_wake_word(self, name: str) -> None:
        """Listen for another wake word from now on (Home Assistant's Wake word select); the model loads off the
        loop, and the old one listens until the new one is ready. An unknown name raises WakeWordError."""
        if not self.cfg.wake.enabled:
            return
        detector = await asyncio.get_running_loop().run_in_executor(None, self.c.wake_detector, name)
        self.wake = detector
        self.trace.emit(ListeningEvent(state=self.state.value, wake_word=name))

    def set_muted(self, muted: bool) -> None:
        """Muted: the wake word and Listen() are ignored (a ring or a reply still plays)."""
        self.muted = muted

    async def ring(self, text: str, lang: str) -> None:
        """An alarm ringing: the chime, then its words; the wake word cuts it (then "stop" silences the alarm)."""
        from ..audio.chime import chime as alarm_chime

        if self.state in (LoopState.IDLE, LoopState.SPEAKING):
            self._set(LoopState.SPEAKING)
            if await self._play(alarm_chime(22050), 22050):
                await self.say(text, lang)
            elif self.state == LoopState.SPEAKING:
                self._set(LoopState.IDLE)

    def listen(self) -> None:
        """Start listening now, as if the wake word was heard (D-Bus Listen(), the MQTT button)."""
        if self.state in (LoopState.IDLE, LoopState.SPEAKING) and not self.muted:
            self.sink.stop()
            self._start_listening(wake=False)

    @property
    def _speculation(self) -> Speculation | None:
        """The utterance so far, heard and decided in the pause (the head's)."""
        return self.head.speculation

    def _start_listening(self, wake: bool = True) -> None:
        self.head.begin()
        self._listen_started = time.monotonic()
        self._set(LoopState.LISTENING)
        if wake:
            self._background(self._play_chime(WAKE_NOTES))

    # -- the reader -----------------------------------------------------------------------------------

    async def prepare(self) -> None:
        """Load the wake word and VAD models and open the microphone (before READY is reported); idempotent."""
        if self._prepared:
            return
        loop = asyncio.get_running_loop()
        if self.cfg.wake.enabled:
            await loop.run_in_executor(None, self.c.wake)
        await loop.run_in_executor(None, self.c.endpointer)  # loaded before the first word, not after it
        # The sentence templates are compiled before the microphone opens: compiling is pure Python, and done beside
        # a running stream it cost the reader a block (512 frames dropped on a dummy JACK device).
        await loop.run_in_executor(None, self.c.warm_templates)
        await loop.run_in_executor(None, self.c.load_model)  # so is loading the model (its prefixes come later)
        await self.source.start()
        self._prepared = True
        self.trace.emit(ListeningEvent(state="idle", source=type(self.source).__name__))

    async def run(self, stopping: asyncio.Event) -> None:
        """Read and dispatch audio until `stopping` is set; the turn in progress is finished first."""
        await self.prepare()
        self.wake = self.c.wake() if self.cfg.wake.enabled else None
        reader = asyncio.create_task(self._read())
        stop = asyncio.create_task(stopping.wait())
        try:
            await asyncio.wait({reader, stop}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            reader.cancel()
            with contextlib.suppress(asyncio.CancelledError, EOFError):
                await reader
            stop.cancel()
            if self._turn is not None and not self._turn.done():
                await self._turn  # SIGTERM: the current turn is finished, not cut in half
            await self.source.stop()
            self.trace.emit(MetricsEvent(blocks=self._blocks, frames_dropped=int(self.source.dropped),
                                         turns=self.turns_done))

    async def _read(self) -> None:
        pre_roll: deque[np.ndarray] = deque(maxlen=max(1, int(self.cfg.vad.pre_roll_ms / 30) + 1))
        while True:
            block = await self.source.read()
            self._blocks += 1
            now = time.monotonic()
            if self.state == LoopState.LISTENING:
                self._listen(block)
            elif self.state in (LoopState.IDLE, LoopState.SPEAKING, LoopState.THINKING):
                pre_roll.append(block)
                if self.follow_up_until > now and self.state == LoopState.IDLE and not self.muted:
                    # a question is open: speech counts without the wake word
                    self._start_listening(wake=False)
                    self._listen(np.concatenate(list(pre_roll)))
                    continue
                if self.state == LoopState.SPEAKING and not self.muted:
                    self._hear_stop(block)
                wake = self.wake  # read each block: set_wake_word swaps it while the loop runs
                if wake is not None and not self.muted and now >= self._refractory_until:
                    detection = wake.process(block)
                    if detection is not None:
                        wake.reset()
                        self._refractory_until = now + self.cfg.wake.refractory_s
                        self.trace.emit(WakeEvent(name=detection.name, score=detection.score,
                                                  during=self.state.value))
                        if self.state == LoopState.SPEAKING:
                            self.sink.stop()  # barge-in: stop talking, listen
                            self.trace.emit(BargeInEvent(by="wake word"))
                        if self.state != LoopState.THINKING:
                            pre_roll.clear()
                            self._start_listening()

    def _listen(self, block: np.ndarray) -> None:
        state, ended = self.head.feed(block)
        if ended is not None:
            self.trace.emit(SpeechStartEvent(at_s=round(ended.start / SAMPLE_RATE, 3)))
            self.trace.emit(SpeechEndEvent(at_s=round(ended.end / SAMPLE_RATE, 3), complete=ended.complete or None))
            # the last word was heard this long ago (the blocks are read as they are captured): what the user feels
            self._begin_turn(ended.speech, time.monotonic() - ended.ended_after_ms / 1000)
        elif state == EndpointState.TIMEOUT:
            self.trace.emit(ErrorEvent(code="stt-no-speech", message="no speech after the wake word"))
            self.follow_up_until = 0.0
            self._set(LoopState.IDLE)
            self._background(self._play_chime(ERROR_NOTES))

    # -- "stop" without the wake word --------------------------------------------------------------------

    def _hear_stop(self, block: np.ndarray) -> None:
        """A short utterance while speaking is transcribed; if it only asks for quiet, hearthd stops."""
        audio = self.head.hear_stop(block)
        if audio is not None:
            self._background(self._check_stop(audio))

    async def _check_stop(self, audio: np.ndarray) -> None:
        transcript = await self.head.stop_said(audio)
        if self.state != LoopState.SPEAKING or transcript is None:
            return
        self.sink.stop()
        self.trace.emit(BargeInEvent(by="stop", text=transcript.text, lang=transcript.lang))
        if not self.c.alarms.ringing():
            self._set(LoopState.IDLE)  # just quiet: "stop" needs no answer
            return
        # an alarm rings: the "stop" the fast path knows stops the alarm itself, not just its sound
        self._set(LoopState.THINKING)
        self._turn = asyncio.create_task(self._run_turn(audio, done(Guess(transcript)), time.monotonic()))

    # -- turns ----------------------------------------------------------------------------------------

    def _begin_turn(self, speech: np.ndarray, last_voice: float | None = None) -> None:
        self._set(LoopState.THINKING)
        self.follow_up_until = 0.0
        self._turn = asyncio.create_task(self._run_turn(speech, self.head.take_guess(), time.monotonic(), last_voice))

    async def _run_turn(self, speech: np.ndarray, heard: Awaitable[Guess] | None, end_of_speech: float,
                        last_voice: float | None = None) -> None:
        async with self.turns:
            guess: Guess | None = None
            if heard is not None:  # heard (and decided) in the pause, on the same words
                with contextlib.suppress(Exception):
                    guess = await heard
                self.trace.emit(TimingEvent(stage="stt_speculative", ms=round(
                    (time.monotonic() - end_of_speech) * 1000, 1), used=guess is not None))
            try:
                await self.head.enter_gate(end_of_speech)
                try:
                    result = await self.pipeline.run_utterance(
                        speech, transcript=guess.transcript if guess else None, guess=guess)
                finally:
                    self.head.leave_gate(end_of_speech)
            except Exception as e:  # whatever a stage let escape ends this turn only: the loop goes back to waiting
                error = stage_error("turn", e, HearthdError, "internal")
                self.trace.emit(ErrorEvent(code=error.code, message=str(e)))
                await self._play_chime(ERROR_NOTES)
                lang = self.c.dialogues.get(LOCAL).lang or self.cfg.general.language
                await self.say(phrase(lang, error.phrase_key), lang)  # the apology, as any failed turn has
                if self.state != LoopState.LISTENING:  # the wake word may have cut the apology: that command is heard
                    self._set(LoopState.IDLE)
                return
            self.trace.timing("end_of_speech_to_action", time.monotonic() - end_of_speech)
            if last_voice is not None:
                self.trace.timing("last_voice_to_action", time.monotonic() - last_voice)
            await self._speak_reply(result, end_of_speech, last_voice)
            self.turns_done += 1
        asked = self.c.dialogues.get(LOCAL).is_open()
        if asked:  # the answer needs no wake word
            self.follow_up_until = time.monotonic() + self.cfg.vad.follow_up_s
        if self.state != LoopState.LISTENING:  # a barge-in may have started the next one already
            self._set(LoopState.IDLE)

    async def _speak_reply(self, result: TurnResult, end_of_speech: float | None = None,
                           last_voice: float | None = None) -> None:
        if result.error and not result.reply:
            await self._play_chime(ERROR_NOTES)
            return
        await self.say(result.reply, result.lang, end_of_speech, last_voice)

    async def say(self, text: str, lang: str, end_of_speech: float | None = None,
                  last_voice: float | None = None) -> bool:
        """Speak `text` sentence by sentence (the next one is synthesised while this one plays); False when cut
        by a barge-in."""
        parts = sentences(text)
        if not parts:
            return True
        self._set(LoopState.SPEAKING)
        upcoming = asyncio.ensure_future(speak(self.c.voices, parts[0], lang))
        completed = True
        for i in range(len(parts)):
            try:
                speech = await upcoming
            except Exception as e:  # no voice: the reply is still in the trace (and a notification)
                self.trace.emit(ErrorEvent(code="tts-failed", message=str(e)))
                await self._play_chime(ERROR_NOTES)
                completed = False
                break
            if i + 1 < len(parts):
                upcoming = asyncio.ensure_future(speak(self.c.voices, parts[i + 1], lang))
            if i == 0 and end_of_speech is not None:
                self.trace.timing("end_of_speech_to_reply_audio", time.monotonic() - end_of_speech)
            if i == 0 and last_voice is not None:
                self.trace.timing("last_voice_to_reply_audio", time.monotonic() - last_voice)
            self.trace.emit(AudioOutEvent(seconds=round(speech.seconds, 2), rate=speech.rate, sentence=i))
            if self.state != LoopState.SPEAKING or not await self._play(speech.audio, speech.rate):
                completed = False
                break
        if self.state == LoopState.SPEAKING:
            self._set(LoopState.IDLE)
        return completed

    async def _play(self, audio: np.ndarray, rate: int) -> bool:
        """The audio-out stage: False when cut by a barge-in, or when the speaker failed (its one `error` event said
        so: an AudioDeviceError keeps its code, anything else is `audio-out-failed`); the loop goes on listening."""
        try:
            return await self.sink.play(audio, rate)
        except Exception as e:
            error = stage_error("audio-out", e, AudioDeviceError, "audio-out-failed")
            self.trace.emit(ErrorEvent(code=error.code, message=error.message))
            return False

    async def _play_chime(self, notes: tuple[float, ...]) -> None:
        with contextlib.suppress(Exception):  # a chime is a cue: a speaker that fails says so when a reply plays
            await self.sink.play(chime(22050, notes, note_s=0.09), 22050)

    def _background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)


