"""hearthd as the hub of the rooms' Wyoming satellites (the stock `wyoming-satellite` program).

As in Home Assistant's design the satellite is the Wyoming *server* and the hub connects to it: for each configured
satellite (`[[satellites]]`: uri, area, name) hearthd connects, sends `describe` (the `info` answer names the
satellite and its own area), then `run-satellite`. From then on the satellite starts pipelines itself:

- `run-pipeline` with `start_stage` "wake": it streams its microphone and the hub listens for the wake word
  (hearthd's own detector, `wake.model`; with `wake.enabled = false` every utterance the VAD finds is a request).
  An always-streaming satellite sends this once and streams for ever; a VAD satellite once per burst of speech,
  ending it with `audio-stop`.
- `run-pipeline` with `start_stage` "asr": the satellite heard its own wake word; what it streams is the request.

The audio (any rate, width and channels) becomes 16 kHz mono int16 and goes through hearthd's endpointer; the
end of speech (or the satellite's `audio-stop`) ends the utterance. Whisper starts on it in the pause before the
end of speech is confirmed (`vad.speculate_ms`, speculatively, as the live loop does), and decided (hearthd.daemon.
speculation: acted on only once the end of speech is confirmed; a whole command ends on `vad.complete_silence_ms`);
under the daemon's turn lock
(one turn at a time, whoever asks) and the CPU gate, that transcript is used (or whisper transcribes it then); the
hub answers with `transcript`, runs the turn in the satellite's own conversation (`satellite:<name>`,
daemon/dialogue.py) *in the satellite's room* (`library.turn_area`: "turn on the light" said in the kitchen is the
kitchen light), then `synthesize` and the reply as `audio-start`/`audio-chunk`/`audio-stop`, to that satellite only.
While the reply plays (its length, or until the satellite says `played`) what its microphone hears is not a request:
that is hearthd's own voice.

The reply goes out at the pace it plays (`LEAD_S` ahead): wyoming-satellite 1.0.0 has no event that stops its
speaker, it plays what it was sent until `audio-stop`. So "stop" said to *that* satellite while it plays (the stop
words of the live loop, `policy.stop_phrase`, a short utterance transcribed on its own) ends the stream there: no more
chunks, `audio-stop` at once; what is already at the satellite (at most `LEAD_S`) plays out. Other satellites go on.

Alarms and timers remember who set them (`context.turn_origin`, set for the satellite's turns): one set from
a satellite rings there (`[[satellites]] rings = "here"`), or on every satellite and the local speaker ("all").
`SatelliteHub.route` decides where (a satellite that is offline at ring time: the local speaker, and the trace says
so); `ring_on` plays the chime and the words. "stop" said to a satellite while an alarm rings there stops that
alarm (those rung on it), as the live loop does for the local microphone; an alarm ringing elsewhere rings on.

Each satellite has its own connection task: one that drops (or never answers) is reconnected with a bounded
backoff (1 s doubling to 30 s) and never affects another satellite, a turn or the daemon. Its availability is a
`listening` trace event with `satellite`, `area` and `available` (and `on_availability(name, available)`, for the
MQTT side to show).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field, replace
from enum import StrEnum
from typing import Any

import numpy as np
from wyoming.asr import Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.pipeline import PipelineStage, RunPipeline
from wyoming.satellite import PauseSatellite, RunSatellite
from wyoming.snd import Played
from wyoming.tts import Synthesize
from wyoming.vad import VoiceStarted, VoiceStopped
from wyoming.wake import Detection

from ..audio.chime import chime
from ..audio.pcm import SAMPLE_RATE, Resampler, resample
from ..audio.stt import SttError
from ..audio.tts import speak
from ..audio.vad import Endpointer, EndpointState
from ..config import SatelliteConfig
from ..context import turn_origin
from ..errors import HearthdError
from ..events import (
    AudioOutEvent,
    BargeInEvent,
    ErrorEvent,
    SatelliteEvent,
    SpeechEndEvent,
    TimingEvent,
    Trace,
    WakeEvent,
)
from ..wyoming_reader import read_client_event
from .components import Components
from .head import Ended, ListeningHead
from .pipeline import Guess, Pipeline, stage_error

log = logging.getLogger(__name__)

BACKOFF_FIRST_S = 1.0
BACKOFF_MAX_S = 30.0
CONNECT_TIMEOUT_S = 5.0
DESCRIBE_TIMEOUT_S = 5.0
CONTINUOUS_TIMEOUT_S = 60.0  # listening with no wake word: the endpointer starts afresh after this much silence
ECHO_TAIL_S = 0.5  # after the reply's length, a little more of the satellite's microphone is not listened to
REPLY_CHUNK = 1024  # samples per audio-chunk of the reply
STABLE_S = 5.0  # a connection that lasted this long was a working one: the next try starts at BACKOFF_FIRST_S
STOP_GRACE_S = 30.0  # a turn in progress when the hub stops is finished (at most this long), not cut in half
LEAD_S = 0.3  # a reply is sent this far ahead of its playing: what "stop" cannot take back

Availability = Callable[[str, bool], None]


class Mode(StrEnum):
    IDLE = "idle"  # no pipeline, or it ended: audio is not listened to
    WAKE = "wake"  # listening for the wake word
    LISTEN = "listen"  # the request: the endpointer runs
    BUSY = "busy"  # a turn runs, or its reply plays


def satellite_name(cfg: SatelliteConfig) -> str:
    """How hearthd names a satellite: `name`, else its area, else its uri."""
    return cfg.name or cfg.area or cfg.uri


@dataclass
class Utterance:
    """One request a satellite heard, cut out at 16 kHz."""

    audio: np.ndarray
    pipeline: RunPipeline
    speculation: Awaitable[Guess] | None = None  # heard and decided in the pause before the end of speech


class SatelliteLink:
    """One satellite: connect, describe, run-satellite, serve its pipelines; reconnect when it drops."""

    def __init__(self, hub: SatelliteHub, cfg: SatelliteConfig) -> None:
        self.hub = hub
        self.c = hub.c
        self.cfg = cfg
        self.name = satellite_name(cfg)
        self.area = cfg.area  # the configured room; else the one the satellite reports (its --area)
        self.conversation = f"satellite:{self.name}"
        self.available: bool | None = None  # unknown until the first connection succeeds or fails
        self.connections = 0  # successful connections so far (a test can see a reconnect)
        self.turns_done = 0
        self.info: dict[str, Any] = {}
        self.pipeline: RunPipeline | None = None  # the pipeline the satellite runs now
        self.mode = Mode.IDLE
        self._client: AsyncClient | None = None
        self._write_lock = asyncio.Lock()
        self._task: asyncio.Task[None] | None = None
        self._turn: asyncio.Task[None] | None = None
        self._endpointer: Endpointer | None = None  # this satellite's own, made when it first connects
        self._wake: Any = None
        # the ears after the wake word (endpointing, the guess in the pause, "stop" while a reply plays): head.py
        self.head = ListeningHead(self.c, hub.pipeline, self.conversation, self._own_endpointer, self.area)
        self._voice_started = False
        self._continuous = False  # listening without a wake word (no trigger before the request)
        self._quiet_until = 0.0  # the reply plays until then: the microphone hears hearthd itself
        self._resampler: tuple[int, Resampler] | None = None
        self._stopping = False
        self._turn_started = False  # the turn in `_turn` holds the turn lock (one still waiting is just cancelled)
        self._play_lock = asyncio.Lock()  # one stream at a time to its speaker (a ring waits for the reply)
        self.playing = False  # a reply or a ring is being sent: the microphone is heard only for "stop"
        self.ringing = False  # what plays is an alarm's ring
        self._ring_tail = False  # what just played (and may still be heard) was a ring
        self._cut = asyncio.Event()  # "stop" was heard: the stream in progress ends
        self._plays = 0  # streams begun: a "stop" transcribed late cuts only the one it was said over
        self.rung: set[int] = set()  # the alarms that rang on this satellite ("stop" here stops those)
        self.stops_heard = 0

    def _own_endpointer(self) -> Endpointer:
        assert self._endpointer is not None, "a satellite's endpointer is made when it connects (_prepare)"
        return self._endpointer

    # -- the connection ------------------------------------------------------------------------------------

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name=f"satellite {self.name}")

    async def stop(self) -> None:
        """Stop listening and reconnecting; a turn in progress is finished first (bounded), then the connection
        is closed (the satellite is told to pause)."""
        self._stopping = True
        if self._turn is not None and not self._turn.done() and self._turn_started:
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(self._turn), STOP_GRACE_S)
        if self._client is not None:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self._write(PauseSatellite().event()), 1.0)
        if self._task is not None:
            self._task.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._task
        if self._turn is not None and not self._turn.done():
            self._turn.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await self._turn

    async def _run(self) -> None:
        delay = BACKOFF_FIRST_S
        while not self._stopping:
            served = False
            since: float | None = None
            try:
                client = AsyncClient.from_uri(self.cfg.uri, connect_timeout=CONNECT_TIMEOUT_S)
                await client.connect()
                self._client = client
                try:
                    await self._describe()
                    await self._prepare()  # on connect: a satellite that never answers costs no model
                    since = time.monotonic()
                    self.connections += 1
                    self._set_available(True)
                    await self._write(RunSatellite().event())
                    await self._serve()
                    reason = "the satellite closed the connection"
                finally:
                    # a connection it drops at once (it still serves an old one) does not reset the backoff
                    served = since is not None and time.monotonic() - since >= STABLE_S
                    self._client = None
                    with contextlib.suppress(Exception):
                        await client.disconnect()
            except asyncio.CancelledError:
                self._set_available(False, "hearthd stops")
                raise
            except Exception as e:  # noqa: BLE001 — whatever goes wrong here is this satellite's alone
                reason = f"{type(e).__name__}: {e}" if str(e) else type(e).__name__
            self._reset()
            if served:
                delay = BACKOFF_FIRST_S
            self._set_available(False, reason, retry_s=None if self._stopping else delay)
            if self._stopping:
                return
            await asyncio.sleep(delay)
            delay = min(BACKOFF_MAX_S, delay * 2)

    async def _prepare(self) -> None:
        """This satellite's own endpointers (a stream's state is its own; the VAD model is shared), made off the loop
        once, when it first connects: 1,000 configured satellites took 3.1 GB before any connected."""
        loop = asyncio.get_running_loop()
        if self._endpointer is None:
            self._endpointer = await loop.run_in_executor(None, lambda: Endpointer(self.c.cfg.vad,
                                                                                  self.c.speech_probability()))
        await loop.run_in_executor(None, self.head.make_stop_listener)  # as the live loop's

    async def _describe(self) -> None:
        assert self._client is not None
        await self._write(Describe().event())
        async with asyncio.timeout(DESCRIBE_TIMEOUT_S):
            while True:
                event = await read_client_event(self._client)
                if event is None:
                    raise ConnectionError("the satellite closed the connection before describing itself")
                if Info.is_type(event.type):
                    break
        satellite = dict((event.data or {}).get("satellite") or {})
        self.info = satellite
        if not self.area and satellite.get("area"):
            self.area = str(satellite["area"])

    async def _serve(self) -> None:
        assert self._client is not None
        while True:
            event = await read_client_event(self._client)
            if event is None:
                return
            self._on_event(event)

    async def _write(self, event: Event) -> None:
        client = self._client
        if client is None:
            return
        async with self._write_lock:
            await client.write_event(event)

    def _send(self, event: Event) -> None:
        """Write in the background (from the audio path, which must not wait); a failed write shows as the
        connection ending."""
        self.hub.background(self._send_quietly(event))

    async def _send_quietly(self, event: Event) -> None:
        with contextlib.suppress(Exception):
            await self._write(event)

    def _set_available(self, available: bool, reason: str = "", retry_s: float | None = None) -> None:
        """Report a change of availability (the first failure to connect counts as one)."""
        if available == self.available:
            return
        self.available = available
        self.hub.trace.emit(SatelliteEvent(satellite=self.name, area=self.area, uri=self.cfg.uri, available=available,
                                           reason=reason, retry_s=retry_s))
        log.info("satellite %s %s%s", self.name, "connected" if available else "unavailable",
                 f" ({reason})" if reason else "")
        if self.hub.on_availability is not None:
            try:
                self.hub.on_availability(self.name, available)
            except Exception:  # a listener's bug never ends the link
                log.exception("the satellite availability listener failed")

    def _reset(self) -> None:
        self.head.cancel()
        self.pipeline = None
        self.mode = Mode.IDLE if self._turn is None or self._turn.done() else Mode.BUSY
        self.head.utterance = []
        self._resampler = None

    # -- events from the satellite --------------------------------------------------------------------------

    def _on_event(self, event: Event) -> None:
        if AudioChunk.is_type(event.type):
            self._on_audio(AudioChunk.from_event(event))
        elif RunPipeline.is_type(event.type):
            try:
                pipeline = RunPipeline.from_event(event)
            except (KeyError, ValueError) as e:
                self._send(Error(text=f"bad run-pipeline: {e}", code="bad-pipeline").event())
                return
            self._begin_pipeline(pipeline)
        elif AudioStop.is_type(event.type):
            self._on_audio_stop()
        elif Played.is_type(event.type):
            self._quiet_until = 0.0  # the reply has played: the microphone is the room again
        # audio-start, streaming-started/-stopped, pong, ...: nothing to do

    def _begin_pipeline(self, pipeline: RunPipeline) -> None:
        self.pipeline = pipeline
        if self.mode == Mode.BUSY:
            return  # the turn in progress ends first; the pipeline is taken up after it (`_after_turn`)
        self._start_stage(pipeline)

    def _start_stage(self, pipeline: RunPipeline) -> None:
        stage = pipeline.start_stage
        if stage == PipelineStage.WAKE:
            if self.c.cfg.wake.enabled:
                if not self._load_wake():
                    self.mode = Mode.IDLE
                    return
                self._wake.reset()
                self.mode = Mode.WAKE
            else:
                self._listen(continuous=True)
        elif stage == PipelineStage.ASR:
            self._listen(continuous=False)
        elif stage == PipelineStage.TTS and pipeline.announce_text:
            self.mode = Mode.BUSY
            self._turn = asyncio.get_running_loop().create_task(self._announce(pipeline.announce_text))
        else:
            self.mode = Mode.IDLE
            self._send(Error(text=f"hearthd cannot start a pipeline at {stage.value}",
                             code="unsupported-pipeline").event())

    def _load_wake(self) -> bool:
        if self._wake is not None and getattr(self._wake, "name", None) == self.c.cfg.wake.model:
            return True
        from ..audio.wake import MicroWakeWordDetector

        try:
            self._wake = MicroWakeWordDetector(self.c.cfg.wake.model)  # one per stream: it keeps its state
        except Exception as e:  # noqa: BLE001 — an unknown model: said, and this satellite does not listen
            self.hub.trace.emit(ErrorEvent(code="wake-word-failed", message=str(e), satellite=self.name))
            self._send(Error(text=str(e), code="wake-word-failed").event())
            return False
        return True

    def _listen(self, continuous: bool) -> None:
        vad = self.c.cfg.vad
        if continuous:  # no trigger before it: silence is no failure, the endpointer just starts afresh
            vad = replace(vad, no_speech_timeout_s=CONTINUOUS_TIMEOUT_S)
        self.head.area = self.area  # the room may have come with the satellite's own description
        self.head.begin(vad)
        self._voice_started = False
        self._continuous = continuous
        self.mode = Mode.LISTEN

    def _pcm(self, chunk: AudioChunk) -> np.ndarray:
        """The chunk as 16 kHz mono int16 (hearthd's resampler, its filter state kept across chunks)."""
        width, channels = chunk.width or 2, max(1, chunk.channels or 1)
        raw = chunk.audio[: len(chunk.audio) - len(chunk.audio) % (width * channels)]
        if width == 2:
            data = np.frombuffer(raw, dtype="<i2").astype(np.int16)
        elif width == 4:
            data = (np.frombuffer(raw, dtype="<i4") >> 16).astype(np.int16)
        elif width == 1:
            data = ((np.frombuffer(raw, dtype=np.uint8).astype(np.int16) - 128) << 8).astype(np.int16)
        else:
            return np.zeros(0, dtype=np.int16)
        if channels > 1:
            data = data.reshape(-1, channels).mean(axis=1).astype(np.int16)
        rate = chunk.rate or SAMPLE_RATE
        if rate == SAMPLE_RATE:
            return data
        if self._resampler is None or self._resampler[0] != rate:
            self._resampler = (rate, Resampler(rate, SAMPLE_RATE))
        return np.asarray(self._resampler[1].process(data), dtype=np.int16)

    def _on_audio(self, chunk: AudioChunk) -> None:
        block = self._pcm(chunk)
        if len(block) and (self.playing or time.monotonic() < self._quiet_until):
            self._hear_stop(block)  # hearthd talks here (or just did): only "stop" is listened for
            return
        if self.mode in (Mode.IDLE, Mode.BUSY) or len(block) == 0:
            return
        if self.mode == Mode.WAKE:
            detection = self._wake.process(block)
            if detection is not None:
                self._wake.reset()
                self.hub.trace.emit(WakeEvent(name=detection.name, score=detection.score, satellite=self.name))
                self._send(Detection(name=detection.name).event())
                self._listen(continuous=False)
            return
        self._feed(block)

    def _feed(self, block: np.ndarray) -> None:
        state, ended = self.head.feed(block)
        if state == EndpointState.SPEAKING and not self._voice_started:
            self._voice_started = True
            self._send(VoiceStarted().event())
        if ended is not None:
            self._utterance_done(ended)
        elif state == EndpointState.TIMEOUT:
            if self._continuous:
                self._listen(continuous=True)
                return
            self.hub.trace.emit(ErrorEvent(code="stt-no-speech", message="no speech after the wake word",
                                           satellite=self.name))
            self._send(Error(text="no speech after the wake word", code="stt-no-speech").event())
            self._after_turn()

    def _on_audio_stop(self) -> None:
        """The satellite stopped streaming: an utterance in progress ends here; else the pipeline is over."""
        ended = self.head.flush() if self.mode == Mode.LISTEN and self._endpointer is not None else None
        if ended is not None:
            self._utterance_done(ended)
            return
        if self.mode != Mode.BUSY:
            self.mode = Mode.IDLE
            self.pipeline = None

    def _utterance_done(self, ended: Ended) -> None:
        assert self.pipeline is not None
        audio = ended.speech
        self._send(VoiceStopped().event())
        self.hub.trace.emit(SpeechEndEvent(at_s=round(ended.end / SAMPLE_RATE, 3), satellite=self.name,
                                           complete=ended.complete or None))
        self.mode = Mode.BUSY
        if self.hub.stopping is not None and self.hub.stopping.is_set():  # hearthd stops: no new turn begins
            self.mode = Mode.IDLE
            return
        heard = self.head.take_guess()
        self._turn = asyncio.get_running_loop().create_task(
            self._run_turn(Utterance(audio, self.pipeline, heard), time.monotonic()), name=f"turn {self.name}")

    # -- the turn -----------------------------------------------------------------------------------------

    async def _run_turn(self, utterance: Utterance, end_of_speech: float) -> None:
        trace = self.hub.trace
        reply: Any = None
        try:
            async with self.hub.turns:
                self._turn_started = True
                reply = await self._turn_body(utterance, end_of_speech)
            if reply is not None:  # the reply's voice after the turn lock: the next room's turn goes on meanwhile
                text, lang = reply
                await self._play(await self._synthesize(text, lang), text)
            self.turns_done += 1
        except asyncio.CancelledError:
            raise
        except Exception as e:  # noqa: BLE001 — whatever a stage let escape ends this turn only
            log.exception("satellite %s: the turn failed", self.name)
            code = e.code if isinstance(e, HearthdError) else "internal"
            trace.emit(ErrorEvent(code=code, message=str(e), satellite=self.name))
            with contextlib.suppress(Exception):
                await self._write(Error(text=str(e) or type(e).__name__, code=code).event())
        finally:
            self._turn_started = False
            self._after_turn()

    async def _turn_body(self, utterance: Utterance, end_of_speech: float) -> tuple[str, str] | None:
        """Speech to text, the turn in this satellite's room, the reply's audio (under the turn lock)."""
        c, trace = self.c, self.hub.trace
        loop = asyncio.get_running_loop()
        dialogue = c.dialogues.get(self.conversation)
        dialogue.area = self.area  # this conversation's "here" is the satellite's room (its turns run in it)
        transcript: Any = None
        guess: Guess | None = None
        if utterance.speculation is not None:  # (awaited outside the gate: it runs only while no turn holds it)
            with contextlib.suppress(Exception):
                guess = await utterance.speculation
            transcript = guess.transcript if guess is not None else None
            trace.emit(TimingEvent(stage="stt_speculative", ms=round((time.monotonic() - end_of_speech) * 1000, 1),
                                   used=transcript is not None))
        await self.head.enter_gate(end_of_speech)
        try:
            if transcript is None:
                started = time.monotonic()
                try:  # what speech to text did not expect ends the turn as its own error (stt-failed)
                    transcript = await loop.run_in_executor(None, lambda: c.stt().transcribe(utterance.audio, None,
                                                                                            dialogue.lang))
                except Exception as e:
                    raise stage_error("stt", e, SttError, "stt-failed") from e
                trace.timing("stt", time.monotonic() - started)
            await self._write(Transcript(text=transcript.text, language=transcript.lang).event())
            if not transcript.text.strip():
                trace.emit(ErrorEvent(code="stt-no-text-recognized", message="speech was heard but no words recognised",
                                      satellite=self.name))
                await self._write(Error(text="no words recognised", code="stt-no-text-recognized").event())
                return None
            if utterance.pipeline.end_stage == PipelineStage.ASR:
                return None
            origin = turn_origin.set(self.name)  # an alarm or a timer set now rings here
            try:
                # as the live loop's turn: the templates' sentence that fits the audio better (rescoring), and the
                # decision made in the pause when the words are the same
                result = await self.hub.pipeline.run_utterance(utterance.audio, transcript=transcript,
                                                               conversation=self.conversation, guess=guess)
            finally:
                turn_origin.reset(origin)
        finally:
            self.head.leave_gate(end_of_speech)
        trace.timing("end_of_speech_to_action", time.monotonic() - end_of_speech)
        if utterance.pipeline.end_stage != PipelineStage.TTS or not result.reply:
            return None
        return result.reply, result.lang

    async def _synthesize(self, text: str, lang: str) -> list[Any]:
        from .live import sentences

        speeches = []
        for part in sentences(text) or [text]:
            try:
                speeches.append(await speak(self.c.voices, part, lang))
            except Exception as e:  # no voice: the transcript and the action stand; the satellite hears why
                self.hub.trace.emit(ErrorEvent(code="tts-failed", message=str(e), satellite=self.name))
                await self._write(Error(text=str(e), code="tts-failed").event())
                break
        return speeches

    async def _announce(self, text: str) -> None:
        try:
            async with self.hub.turns:  # Piper runs one at a time with the turns
                self._turn_started = True
                speeches = await self._synthesize(text, self.c.cfg.general.language)
            await self._play(speeches, text)
        except Exception as e:  # noqa: BLE001
            self.hub.trace.emit(ErrorEvent(code="tts-failed", message=str(e), satellite=self.name))
        finally:
            self._turn_started = False
            self._after_turn()

    async def say(self, text: str, lang: str) -> None:
        """Speak `text` on this satellite (an announcement, an alarm ringing here)."""
        async with self.hub.turns:
            speeches = await self._synthesize(text, lang)
        await self._play(speeches, text)

    async def _play(self, speeches: list[Any], text: str) -> None:
        """The reply to this satellite's speaker: synthesize (its text), then one audio stream."""
        if not speeches:
            return
        rate = speeches[0].rate
        parts = [np.asarray(s.audio, dtype=np.int16) if s.rate == rate
                 else resample(np.asarray(s.audio, dtype=np.int16), s.rate, rate) for s in speeches]
        await self._stream(np.concatenate(parts), rate, text)

    async def _stream(self, audio: np.ndarray, rate: int, text: str, ring: bool = False) -> bool:
        """`audio` to the speaker at the pace it plays (LEAD_S ahead); False when "stop" cut it short."""
        async with self._play_lock:
            self._cut.clear()
            self._plays += 1
            self.playing, self.ringing = True, ring
            self.head.reset_stop()
            started = time.monotonic()
            sent = 0
            try:
                await self._write(Synthesize(text=text).event())
                await self._write(AudioStart(rate=rate, width=2, channels=1).event())
                for start in range(0, len(audio), REPLY_CHUNK):
                    if self._cut.is_set() or self._client is None:
                        break
                    piece = audio[start:start + REPLY_CHUNK]
                    await self._write(AudioChunk(rate=rate, width=2, channels=1, audio=piece.tobytes()).event())
                    sent += len(piece)
                    ahead = started + sent / rate - LEAD_S - time.monotonic()
                    if ahead > 0:
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(self._cut.wait(), ahead)
                await self._write(AudioStop().event())
            finally:
                self.playing = self.ringing = False
                self._ring_tail = ring
            cut = sent < len(audio)
            left = max(0.0, started + sent / rate - time.monotonic())  # already at the satellite: it plays out
            self._quiet_until = time.monotonic() + left + ECHO_TAIL_S
            self.hub.trace.emit(AudioOutEvent(seconds=round(sent / rate, 2), rate=rate, satellite=self.name,
                                              cut_at_s=round(sent / rate, 2) if cut else None,
                                              of_s=round(len(audio) / rate, 2) if cut else None, ring=ring))
            return not cut

    async def ring(self, audio: np.ndarray, rate: int, text: str, alarm_id: int) -> None:
        """An alarm (or a timer) rings on this satellite: the chime and its words, as one stream."""
        self.rung.add(alarm_id)
        try:
            await self._stream(audio, rate, text, ring=True)
        except Exception as e:  # noqa: BLE001 — the connection dropped meanwhile: the next ring tries again
            self.hub.trace.emit(ErrorEvent(code="ring-failed", message=str(e) or type(e).__name__,
                                           satellite=self.name))

    # -- "stop" while it plays ------------------------------------------------------------------------------

    def _hear_stop(self, block: np.ndarray) -> None:
        """A short utterance while a reply or a ring plays is transcribed; if it only asks for quiet, it stops."""
        audio = self.head.hear_stop(block)
        if audio is not None:
            ringing = self.ringing or (not self.playing and self._ring_tail)
            self.hub.background(self._check_stop(audio, ringing, self._plays))

    async def _check_stop(self, audio: np.ndarray, ringing: bool, play: int) -> None:
        transcript = await self.head.stop_said(audio)
        playing = self.playing and self._plays == play  # still the stream it was said over
        if transcript is None or not (playing or ringing):
            return
        if playing:
            self._cut.set()
        self.stops_heard += 1
        stopped = self.stop_alarms() if ringing else []
        self.hub.trace.emit(BargeInEvent(by="stop", text=transcript.text, lang=transcript.lang, satellite=self.name,
                                         stopped=[a.id for a in stopped]))

    def stop_alarms(self) -> list[Any]:
        """The alarms ringing on this satellite stop (as "stop" stops them at the local microphone): a repeating
        one moves to its next day. Alarms that ring elsewhere go on."""
        book = self.c.alarms
        here = [a for a in book.ringing() if a.id in self.rung]
        for alarm in here:
            book.finish(alarm)
        self.rung -= {a.id for a in here}
        return here

    def _after_turn(self) -> None:
        """Back to what the satellite's pipeline listens for: the wake word again (a streaming satellite), the
        answer without it when a question is open, or nothing until its next run-pipeline."""
        self._turn = None if self._turn is not None and self._turn.done() else self._turn
        pipeline = self.pipeline
        if self._client is None or pipeline is None or self._stopping:
            self.mode = Mode.IDLE
            return
        asked = self.c.dialogues.get(self.conversation).is_open()
        if pipeline.start_stage == PipelineStage.WAKE and asked and self.c.cfg.wake.enabled:
            self._listen(continuous=False)  # the answer to its question needs no wake word
        elif pipeline.start_stage == PipelineStage.WAKE or pipeline.restart_on_end:
            self._start_stage(pipeline)
        else:
            self.mode = Mode.IDLE
            self.pipeline = None


@dataclass
class Route:
    """Where one ring of an alarm goes."""

    local: bool = True  # the local speaker (the live loop's sink, or --ring-output)
    satellites: list[str] = field(default_factory=list)
    offline: str = ""  # the satellite it was set from, offline now
    note: str = ""

    def fields(self) -> dict[str, Any]:
        out: dict[str, Any] = {"local": self.local, "satellites": list(self.satellites)}
        if self.offline:
            out["offline"] = self.offline
        if self.note:
            out["note"] = self.note
        return out


class SatelliteHub:
    """Serves every configured satellite, each on its own connection; `start()` returns at once."""

    def __init__(self, components: Components, trace: Trace, pipeline: Pipeline | None = None,
                 turns: asyncio.Lock | None = None, on_availability: Availability | None = None,
                 satellites: list[SatelliteConfig] | None = None, stopping: asyncio.Event | None = None) -> None:
        self.c = components
        self.stopping = stopping  # set: hearthd is stopping, no new turn begins (the one in progress ends)
        self.trace = trace
        self.pipeline = pipeline or Pipeline(components, trace)
        self.turns = turns or asyncio.Lock()
        self.on_availability = on_availability
        configured = components.cfg.satellites if satellites is None else satellites
        self.links: dict[str, SatelliteLink] = {}
        for cfg in configured:
            link = SatelliteLink(self, cfg)
            if not cfg.uri or link.name in self.links:
                trace.emit(ErrorEvent(code="satellite-config",
                                      message=f"satellite {link.name!r}: " + ("no uri" if not cfg.uri else "a second "
                                                                                "one of that name is left out")))
                continue
            self.links[link.name] = link
        self._tasks: set[asyncio.Task[Any]] = set()

    @property
    def available(self) -> dict[str, bool]:
        return {name: bool(link.available) for name, link in self.links.items()}

    async def start(self) -> None:
        for link in self.links.values():
            link.start()

    async def stop(self) -> None:
        await asyncio.gather(*(link.stop() for link in self.links.values()), return_exceptions=True)
        for task in list(self._tasks):
            task.cancel()

    async def run(self, stopping: asyncio.Event) -> None:
        """Serve until `stopping` is set."""
        self.stopping = stopping
        await self.start()
        try:
            await stopping.wait()
        finally:
            await self.stop()

    async def say(self, text: str, lang: str, satellite: str | None = None) -> None:
        """Speak on one satellite (by name), or on every one that is connected."""
        links = [self.links[satellite]] if satellite is not None else list(self.links.values())
        await asyncio.gather(*(link.say(text, lang) for link in links if link.available), return_exceptions=True)

    def route(self, alarm: Any) -> Route:
        """Where an alarm rings: set from a satellite, there ("here") or everywhere ("all"); set elsewhere (the
        local microphone, D-Bus, MQTT), on the local speaker. A satellite offline now: the local speaker instead."""
        origin = str(getattr(alarm, "origin", "") or "")
        link = self.links.get(origin) if origin else None
        if link is None:
            return Route(local=True, note=f"satellite {origin!r} is not configured: ringing here" if origin else "")
        if link.cfg.rings == "all":
            return Route(local=True, satellites=[n for n, other in self.links.items() if other.available])
        if link.available:
            return Route(local=False, satellites=[origin])
        return Route(local=True, offline=origin, note=f"satellite {origin} is offline: ringing here")

    async def ring_on(self, names: list[str], alarm: Any, text: str) -> None:
        """The chime and the alarm's words on these satellites (in the background: the scheduler goes on)."""
        links = [self.links[n] for n in names if n in self.links]
        if not links:
            return
        try:
            speech = await speak(self.c.voices, text, alarm.lang)
            audio = np.asarray(speech.audio, dtype=np.int16)
            audio, rate = np.concatenate([chime(speech.rate), audio]), speech.rate
        except Exception as e:  # noqa: BLE001 — no voice: the chime alone still wakes you
            self.trace.emit(ErrorEvent(code="tts-failed", message=str(e)))
            audio, rate = chime(22050), 22050
        for link in links:
            if link.available:
                self.background(link.ring(audio, rate, text, alarm.id))

    def background(self, coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)
