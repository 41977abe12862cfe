"""hearthd as Wyoming services, so Home Assistant's Wyoming integration (and any Wyoming client) can use hearthd's
ears, voice and agent: `asr` (faster-whisper), `tts` (the Piper/espeak-ng voices, streamed sentence by sentence too),
`wake` (microWakeWord) and `handle` (hearthd's agent and tools). Off unless `wyoming.uri` is set, bound exactly there.

Each connection is one handler; each request on it is independent of the others and of other connections:
- asr: `transcribe` (language optional), then `audio-start`/`audio-chunk`s/`audio-stop` → `transcript`. Any rate,
  width and channel count comes in; hearthd's resampler makes it 16 kHz mono int16. The decode is a turn: it holds
  the daemon's turn lock and the CPU gate (inference.py), so it never runs beside another decode.
- tts: `synthesize` → `audio-start`/`audio-chunk`s/`audio-stop`; the streaming form (`synthesize-start`, chunks of
  text, `synthesize-stop`) speaks each sentence as soon as it is complete, then says `synthesize-stopped`.
- wake: `detect` (names optional) and audio → `detection` each time the wake word is heard, `not-detected` at the
  end of a stream without one. Each request has its own detectors (a detector keeps the stream's state).
- handle: `transcript` → `handled` / `not-handled`, a turn of hearthd's agent under the turn lock, in the
  conversation the client names (its context's `conversation_id`, Home Assistant sends one) or, without one, the
  connection's own: a question asked there is answered only there (dialogue.py).

Bad input never takes the server down: a malformed event is answered with an `error` event (code and text), an
unreadable stream closes that connection only, and the audio held per request is bounded (`audio.max_input_s`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import itertools
import logging
import re
import socket
import threading
import time
from collections import OrderedDict
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlparse

import numpy as np
from wyoming.asr import Transcribe, Transcript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.error import Error
from wyoming.event import Event
from wyoming.handle import Handled, NotHandled
from wyoming.info import (
    AsrModel,
    AsrProgram,
    Attribution,
    Describe,
    HandleModel,
    HandleProgram,
    Info,
    TtsProgram,
    TtsVoice,
    WakeModel,
    WakeProgram,
)
from wyoming.ping import Ping, Pong
from wyoming.server import AsyncEventHandler, AsyncServer
from wyoming.tts import Synthesize, SynthesizeChunk, SynthesizeStart, SynthesizeStop, SynthesizeStopped
from wyoming.wake import Detect, Detection, NotDetected

from .. import __version__
from ..audio.pcm import SAMPLE_RATE, Resampler, mono16
from ..audio.tts import VOICE_ENGINES, speak
from ..audio.vad import Endpointer, EndpointState
from ..audio.wake import MicroWakeWordDetector, builtin_models
from ..audio.wavio import MAX_RATE, MIN_RATE
from ..errors import HearthdError
from ..events import ErrorEvent, TimingEvent, Trace, WakeEvent
from ..language import agreeing_language, client_language, language_of_text
from ..locale import phrase
from ..sentences import ENDS_SENTENCE
from ..wyoming_reader import BadStream, read_event
from .components import Components
from .live import sentences
from .pipeline import Pipeline, PipelineError, clean_text

log = logging.getLogger(__name__)

ATTRIBUTION = Attribution(name="hearthd", url="https://github.com/hearthd/hearthd")
SAMPLES_PER_CHUNK = 1024  # audio sent back in chunks of this many samples
MAX_TTS_CHARS = 10_000  # text to speak per request; Piper sees at most tts.PIECE_CHARS of it at once
MAX_CONVERSATION_ID = 128
MAX_HANDOFFS = 256  # peers whose last connection left a question open (one each), the oldest forgotten first
STOP_GRACE_S = 10.0  # shutting down: requests in flight get this long to answer
BIG_CHUNK_S = 1.0  # audio chunks longer than this are converted in a worker thread, not on the event loop
REFUSED_LOG_S = 60.0  # connections refused as too many: logged at most once per this interval


class BadEvent(HearthdError):
    """An event that cannot be taken as it is; `code` goes into the Error event."""

    code = "bad-event"

    def __init__(self, message: str, code: str = "bad-event") -> None:
        super().__init__(message, code)


# -- audio in ------------------------------------------------------------------------------------------------------


def _format(rate: Any, width: Any, channels: Any) -> tuple[int, int, int]:
    """A checked (rate, width, channels)."""
    for name, value in (("rate", rate), ("width", width), ("channels", channels)):
        if not isinstance(value, int) or isinstance(value, bool):
            raise BadEvent(f"audio {name} {value!r} is not a number", "audio-format-invalid")
    if not MIN_RATE <= rate <= MAX_RATE:
        raise BadEvent(f"sample rate {rate} Hz is outside {MIN_RATE}-{MAX_RATE} Hz", "audio-format-invalid")
    if width not in (1, 2, 3, 4):
        raise BadEvent(f"sample width {width} bytes is not 1-4", "audio-format-invalid")
    if not 1 <= channels <= 64:
        raise BadEvent(f"{channels} channels", "audio-format-invalid")
    return rate, width, channels


class AudioIn:
    """One incoming stream made 16 kHz mono int16 as it arrives, whatever each chunk's format (a partial frame is
    kept for the next chunk; a change of format starts afresh), with hearthd's streaming resampler."""

    def __init__(self) -> None:
        self._format: tuple[int, int, int] | None = None
        self._partial = b""
        self._resampler: Resampler | None = None
        self._fed = 0  # input samples given to the resampler
        self._out = 0  # output samples it gave back

    def feed(self, audio: bytes, rate: Any, width: Any, channels: Any) -> np.ndarray:
        fmt = _format(rate, width, channels)
        out = []
        if fmt != self._format:
            out.append(self.flush())
            self._format, self._partial = fmt, b""
            self._resampler = Resampler(fmt[0], SAMPLE_RATE) if fmt[0] != SAMPLE_RATE else None
            self._fed = self._out = 0
        frame = fmt[1] * fmt[2]
        raw = self._partial + bytes(audio)
        whole = len(raw) // frame * frame
        self._partial = raw[whole:]
        mono = mono16(raw[:whole], fmt[1], fmt[2])
        if self._resampler is not None:
            self._fed += len(mono)
            mono = self._resampler.process(mono)
            self._out += len(mono)
        out.append(mono)
        return np.concatenate(out)

    def flush(self) -> np.ndarray:
        """The samples still inside the resampler (its look-ahead), so the stream's end comes out too."""
        r = self._resampler
        if r is None or self._format is None:
            return np.zeros(0, dtype=np.int16)
        expected = (self._fed * SAMPLE_RATE + r.src_rate // 2) // r.src_rate
        tail = r.process(np.zeros(r.half_width + 2, dtype=np.int16))[: max(0, expected - self._out)]
        self._format, self._resampler, self._partial = None, None, b""  # more audio starts a stream afresh
        self._fed = self._out = 0
        return tail


# -- the requests of one connection --------------------------------------------------------------------------------


@dataclass
class _Asr:
    language: str | None = None  # forced (wyoming.language = "pipeline")
    hint: str | None = None  # the client's language when whisper is unsure (wyoming.language = "detect")
    audio: AudioIn = field(default_factory=AudioIn)
    parts: list[np.ndarray] = field(default_factory=list)
    samples: int = 0
    failed: bool = False  # an Error was sent; the rest of this stream is ignored
    speculation: asyncio.Future[Any] | None = None  # a transcript begun in the pause before audio-stop
    stale: threading.Event | None = None  # set: that transcript is not wanted (speech went on)
    speculated_to: int = 0  # the last voiced sample that transcript heard: speech after it makes it stale
    speculated_samples: int = 0  # the samples it decodes (the speech so far, cut after its last voiced window)
    watched_from: int = 0  # the stream's sample where the endpointer's count begins (it starts again after an end)

    def cancel(self) -> None:
        if self.speculation is not None:
            if self.stale is not None:
                self.stale.set()  # not started: it never runs (one under way finishes, unused)
            self.speculation.cancel()
            self.speculation = None


@dataclass
class _Wake:
    detectors: list[MicroWakeWordDetector]
    audio: AudioIn = field(default_factory=AudioIn)
    samples: int = 0  # 16 kHz samples of this stream so far
    # after a detection, no other one before this sample (wake.refractory_s); the detectors, reset then, are fed
    # again from here, so their own sample counts start at it
    quiet_until: int = 0
    detected: bool = False
    failed: bool = False


@dataclass
class _Speech:
    """A streamed synthesis: the text not yet spoken and what has been sent."""

    lang: str | None  # the voice's language, for every sentence (None: each sentence's own)
    hint: str | None = None  # the voice asked for, when wyoming.language = "detect": a sentence that reads as no
    # language of its own is spoken in it; one written in another ("Будильник поставлен.") in that one's voice
    text: str = ""
    chars: int = 0
    rate: int = 0  # set once audio-start has been sent
    sent: int = 0  # samples sent so far
    failed: bool = False


_language = client_language


class WyomingHandler(AsyncEventHandler):
    """One client connection."""

    def __init__(self, server: WyomingServer, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        super().__init__(reader, writer)
        self.server = server
        self.c = server.components
        self.cfg = server.components.cfg
        peer = writer.get_extra_info("peername")
        where = f"{peer[0]}:{peer[1]}" if isinstance(peer, tuple) and len(peer) >= 2 else "local"
        self.peer = str(peer[0]) if isinstance(peer, tuple) and len(peer) >= 2 else "local"  # the host, not its port
        self.conversation = f"wyoming:{where}:{next(server.connections)}"  # this connection's own
        self._turns = 0  # transcripts handled on this connection
        self._asr: _Asr | None = None
        self._wake: _Wake | None = None
        self._mode = "asr"  # what audio is for: the last request that came (transcribe or detect)
        self._speech: _Speech | None = None
        self._wake_names: tuple[str, ...] = ()
        self._wake_cache: dict[str, MicroWakeWordDetector] = {}
        self._endpointer: Endpointer | None = None  # this connection's own (a VAD keeps the stream's state)
        self.refused = False  # over wyoming.max_connections: told so and closed
        self._last = time.monotonic()  # when the client last sent an event, or its request last answered
        self._handling = False  # a request of this connection is in progress (never closed as idle then)

    # -- the event loop of the connection ------------------------------------------------------------------------

    async def run(self) -> None:
        """Events until the client goes (or the server stops); bad bytes end this connection only."""
        if self.refused:
            with contextlib.suppress(Exception):
                await asyncio.wait_for(self.write_event(Error(text="too many connections; try again shortly",
                                                              code="busy").event()), 5)
            self.writer.close()
            return
        self._is_running = not self.server.closing.is_set()
        task = asyncio.current_task()
        if task is not None:
            self.server.tasks.add(task)
        watch = asyncio.get_running_loop().create_task(self._close_when_idle(self.cfg.wyoming.idle_timeout_s))
        try:
            while self._is_running:
                try:
                    event = await read_event(self.reader)
                    self._last = time.monotonic()
                except BadStream as e:
                    log.warning("wyoming %s: %s; closing the connection", self.conversation, e)
                    with contextlib.suppress(Exception):
                        await self.write_event(Error(text=str(e), code="bad-stream").event())
                    break
                self._handling = True
                try:
                    if event is None or not await self.handle_event(event):
                        break
                finally:
                    self._handling = False
                    self._last = time.monotonic()
        except (ConnectionError, asyncio.IncompleteReadError, OSError):
            pass  # the client went away
        finally:
            watch.cancel()
            self._hand_off()
            if self._asr is not None:
                self._asr.cancel()
            if task is not None:
                self.server.tasks.discard(task)
            self.server.handlers.discard(self)
            with contextlib.suppress(Exception):
                await self.disconnect()
            self.writer.close()

    def _hand_off(self) -> None:
        """A connection that leaves with its question open (Home Assistant before wyoming 1.7 sends no context and
        opens a connection per request: "Unlock the front door?" in one, "yes" in the next) leaves the question to the
        next connection from the same host, whose first transcript then answers it, until its deadline."""
        dialogue = self.c.dialogues.peek(self.conversation)
        if self._turns and self.conversation.startswith("wyoming:") and not self.conversation.startswith(
                "wyoming:id:") and dialogue is not None and dialogue.is_open():
            self.server.hand_off(self.peer, self.conversation)

    async def _close_when_idle(self, idle: float) -> None:
        """A connection that sends nothing for `idle` seconds, with no request of its own in progress, is ended: its
        reader sees the end of the stream (a watch beside the reads, so reading an event costs no task of its own)."""
        while True:
            await asyncio.sleep(max(0.05, self._last + idle - time.monotonic()))
            if not self._handling and time.monotonic() - self._last >= idle:
                log.info("wyoming %s: nothing for %.0f s; closing the connection", self.conversation, idle)
                self.reader.feed_eof()
                return

    async def handle_event(self, event: Event) -> bool:
        try:
            await self._dispatch(event)
        except (ConnectionError, OSError):
            return False
        except BadEvent as e:
            log.warning("wyoming %s: %s event refused: %s", self.conversation, event.type, e)
            await self._error(e.code, f"{event.type}: {e}")
        except PipelineError as e:
            log.warning("wyoming %s: %s: %s", self.conversation, event.type, e.message)
            await self._error(e.code, e.message)
        except (KeyError, TypeError, ValueError, AttributeError, IndexError) as e:
            log.warning("wyoming %s: malformed %s event: %r", self.conversation, event.type, e)
            await self._error("bad-event", f"malformed {event.type} event: {type(e).__name__}: {e}")
        except Exception as e:  # noqa: BLE001 - a failing stage ends this request, never the server
            log.exception("wyoming %s: %s failed", self.conversation, event.type)
            code = e.code if isinstance(e, HearthdError) else "internal"
            self.server.trace.emit(ErrorEvent(code=code, source="wyoming",
                                              message=f"{event.type}: {type(e).__name__}: {e}"))
            await self._error(code or "internal", f"{event.type} failed: {type(e).__name__}: {e}")
        return True

    async def _error(self, code: str, text: str) -> None:
        with contextlib.suppress(ConnectionError, OSError):
            await self.write_event(Error(text=text, code=code).event())

    async def _dispatch(self, event: Event) -> None:
        kind = event.type
        if Describe.is_type(kind):
            await self.write_event(self.server.info().event())
        elif Ping.is_type(kind):
            await self.write_event(Pong(text=Ping.from_event(event).text).event())
        elif Transcribe.is_type(kind):
            request = Transcribe.from_event(event)
            asked = _language(request.language, self.cfg.stt.languages)
            # Home Assistant names its pipeline's language on every request: a hint, unless told to force it
            forced = self.cfg.wyoming.language == "pipeline"
            self._mode, self._asr = "asr", _Asr(language=asked if forced else None, hint=None if forced else asked)
        elif AudioStart.is_type(kind):
            await self._audio_start(AudioStart.from_event(event))
        elif AudioChunk.is_type(kind):
            await self._audio_chunk(AudioChunk.from_event(event))
        elif AudioStop.is_type(kind):
            await self._audio_stop()
        elif Transcript.is_type(kind):
            await self._handle(Transcript.from_event(event))
        elif Synthesize.is_type(kind):
            if self._speech is None:  # while streaming, Home Assistant sends the whole text too: already spoken
                await self._synthesize(Synthesize.from_event(event))
        elif SynthesizeStart.is_type(kind):
            await self._synthesize_start(SynthesizeStart.from_event(event))
        elif SynthesizeChunk.is_type(kind):
            await self._synthesize_chunk(SynthesizeChunk.from_event(event))
        elif SynthesizeStop.is_type(kind):
            await self._synthesize_stop()
        elif Detect.is_type(kind):
            await self._detect(Detect.from_event(event))
        else:  # servers drop what they do not know (select-program, a newer client's events)
            log.debug("wyoming %s: %s event ignored", self.conversation, kind)

    # -- audio: asr and wake -------------------------------------------------------------------------------------

    async def _audio_start(self, start: AudioStart) -> None:
        if self._mode == "wake" and self._wake is not None:
            self._wake.audio, self._wake.samples, self._wake.quiet_until = AudioIn(), 0, 0
            self._wake.detected = False
            for detector in self._wake.detectors:  # a new stream: nothing of the last one is carried over
                detector.reset()
            try:
                _format(start.rate, start.width, start.channels)
            except BadEvent:
                self._wake.failed = True
                raise
            return
        # a new stream (transcribe's language, if one came, still holds)
        if self._asr is not None:
            self._asr.cancel()
        asr = _Asr(language=self._asr.language if self._asr is not None else None,
                   hint=self._asr.hint if self._asr is not None else None)
        self._mode, self._asr = "asr", asr
        if self._endpointer is not None:
            self._endpointer.reset()
        try:
            _format(start.rate, start.width, start.channels)
        except BadEvent:
            asr.failed = True
            raise

    async def _audio_chunk(self, chunk: AudioChunk) -> None:
        seconds = self._seconds(chunk)
        if self._mode == "wake":
            if self._wake is not None and not self._wake.failed:
                if seconds > self.cfg.audio.max_input_s:
                    self._wake.failed = True
                    raise BadEvent(f"a chunk of {seconds:.0f} s of audio (audio.max_input_s is "
                                   f"{self.cfg.audio.max_input_s:g} s)", "audio-too-long")
                await self._wake_chunk(self._wake, chunk)
            return
        if self._asr is None:
            self._asr = _Asr()  # audio without transcribe: speech to text, the language detected
        asr = self._asr
        if asr.failed:
            return
        if asr.samples / SAMPLE_RATE + seconds > self.cfg.audio.max_input_s:
            # refused by its length before any of it is converted: one 16 MiB chunk of 8-bit 8 kHz audio (35 min)
            # cost 15.5 s of the event loop being resampled, only to be refused as too long after
            asr.failed, asr.parts = True, []
            raise BadEvent(f"more than audio.max_input_s ({self.cfg.audio.max_input_s:g} s) of audio",
                           "audio-too-long")
        try:
            if seconds > BIG_CHUNK_S:  # a whole recording in one chunk: converted off the event loop
                audio = await asyncio.to_thread(asr.audio.feed, chunk.audio, chunk.rate, chunk.width, chunk.channels)
            else:
                audio = asr.audio.feed(chunk.audio, chunk.rate, chunk.width, chunk.channels)
        except BadEvent:
            asr.failed = True
            raise
        self._keep(asr, audio)
        if seconds <= BIG_CHUNK_S:  # (a recording sent whole is no stream with a pause to begin in)
            self._watch(asr, audio)

    @staticmethod
    def _seconds(chunk: AudioChunk) -> float:
        """How long the chunk's audio is, by its byte count and declared format (0 when the format is not one)."""
        frame = chunk.width * chunk.channels if isinstance(chunk.width, int) and isinstance(chunk.channels, int) \
            else 0
        if frame <= 0 or not isinstance(chunk.rate, int) or chunk.rate <= 0:
            return 0.0  # the format check that follows says what is wrong with it
        return len(chunk.audio or b"") / frame / chunk.rate

    def _watch(self, asr: _Asr, audio: np.ndarray) -> None:
        """Speech to text begins in the pause after speech (`vad.speculate_ms`), as the live loop does for the
        microphone: a client streams its silence before audio-stop, so the transcript is ready at it or soon after.
        Speech again makes that transcript stale."""
        if self.cfg.vad.speculate_ms <= 0 or not len(audio):
            return
        if self._endpointer is None:
            self._endpointer = Endpointer(self.cfg.vad, self.c.speech_probability())
        endpointer = self._endpointer
        state = endpointer.feed(audio)
        if state in (EndpointState.DONE, EndpointState.TIMEOUT):
            # the speech it followed has ended, but the stream goes on (a push-to-talk client, or one whose own
            # silence detection waits longer than vad.end_silence_ms): what comes after is followed too, so words
            # after a long pause make the transcript begun in it stale
            endpointer.reset()
            asr.watched_from = asr.samples
            return
        if state == EndpointState.SPEAKING:
            quiet = endpointer.trailing_silence_ms
            voiced = asr.watched_from + endpointer.last_voiced  # the same while the speaker stays quiet
            if asr.speculation is not None and voiced != asr.speculated_to:
                # speech again, even if a block also holds the pause after it: that transcript is stale (a check
                # of `quiet == 0` alone missed speech that resumed and paused within one client chunk)
                asr.cancel()
            if asr.speculation is None and quiet >= self.cfg.vad.speculate_ms:
                asr.speculated_samples = asr.watched_from + endpointer.speech_so_far().end
                so_far = np.concatenate(asr.parts)[:asr.speculated_samples]
                asr.stale, asr.speculated_to = threading.Event(), voiced
                job = functools.partial(self.c.inference.speculative, self.c.stt().transcribe, so_far, asr.language,
                                        asr.hint, cancelled=asr.stale)
                asr.speculation = asyncio.get_running_loop().run_in_executor(None, job)

    def _keep(self, asr: _Asr, audio: np.ndarray) -> None:
        limit = int(self.cfg.audio.max_input_s * SAMPLE_RATE)
        if asr.samples + len(audio) > limit:
            asr.failed, asr.parts = True, []
            raise BadEvent(f"more than audio.max_input_s ({self.cfg.audio.max_input_s:g} s) of audio",
                           "audio-too-long")
        if len(audio):
            asr.parts.append(audio)
            asr.samples += len(audio)

    async def _audio_stop(self) -> None:
        if self._mode == "wake":
            wake, self._wake = self._wake, None
            self._mode = "asr"
            if wake is not None and not wake.failed and not wake.detected:
                await self.write_event(NotDetected().event())
            return
        asr, self._asr = self._asr, None
        if asr is None:
            return
        if asr.failed:  # its error was said; the request still ends in a transcript (an empty one), as Home
            await self.write_event(Transcript(text="", language=asr.language or asr.hint).event())  # Assistant waits
            return
        self._keep(asr, asr.audio.flush())
        audio = np.concatenate(asr.parts) if asr.parts else np.zeros(0, dtype=np.int16)
        text, lang = "", asr.language or asr.hint or self.cfg.stt.language or self.cfg.general.language
        if len(audio) >= SAMPLE_RATE // 10:  # less than 0.1 s holds no words (whisper would invent some)
            transcript = None
            if asr.speculation is not None:  # begun in the pause, and no speech came after it
                started = time.monotonic()
                with contextlib.suppress(Exception):
                    transcript = await asyncio.shield(asr.speculation)
                self.server.trace.emit(TimingEvent(stage="wyoming_stt_speculative",
                                                   ms=round((time.monotonic() - started) * 1000, 1),
                                                   used=transcript is not None, samples=asr.speculated_samples))
                asr.speculation = None
            try:
                if transcript is None:
                    transcript = await self.server.transcribe(audio, asr.language, asr.hint)
                text, lang = transcript.text, transcript.lang
            except Exception as e:  # said, and answered with no words: a client waits for the transcript
                if not isinstance(e, BadEvent):
                    log.exception("wyoming %s: speech to text failed", self.conversation)
                await self._error(e.code if isinstance(e, HearthdError) else "stt-failed", f"transcribe: {e}")
        await self.write_event(Transcript(text=text, language=lang).event())

    async def _detect(self, request: Detect) -> None:
        available = builtin_models()
        names = request.names if request.names else [self.cfg.wake.model]
        if isinstance(names, str):
            names = [names]
        if not isinstance(names, list):
            raise BadEvent(f"names {names!r} is not a list")
        wanted = [n for n in (str(x).strip().lower().replace(" ", "_") for x in names) if n in available]
        self._mode = "wake"
        if not wanted:
            self._wake = _Wake(detectors=[], failed=True)
            raise BadEvent(f"no wake word {names!r} here; there are {', '.join(available)}", "wake-word-unknown")
        loop = asyncio.get_running_loop()
        detectors = []
        for name in dict.fromkeys(wanted):
            detector = self._wake_cache.get(name)  # one per connection: a detector keeps its stream's state
            if detector is None:
                detector = await loop.run_in_executor(None, MicroWakeWordDetector, name)
                self._wake_cache[name] = detector
            detector.reset()
            detectors.append(detector)
        self._wake = _Wake(detectors=detectors)

    async def _wake_chunk(self, wake: _Wake, chunk: AudioChunk) -> None:
        try:
            audio = wake.audio.feed(chunk.audio, chunk.rate, chunk.width, chunk.channels)
        except BadEvent:
            wake.failed = True
            raise
        start, wake.samples = wake.samples, wake.samples + len(audio)
        if wake.samples <= wake.quiet_until:
            return
        if start < wake.quiet_until:
            audio, start = audio[wake.quiet_until - start:], wake.quiet_until
        for detector in wake.detectors:
            detection = detector.process(audio)
            if detection is None:
                continue
            at = wake.quiet_until + detection.sample  # in this stream
            for d in wake.detectors:
                d.reset()
            wake.detected = True
            wake.quiet_until = at + int(self.cfg.wake.refractory_s * SAMPLE_RATE)
            stamp = chunk.timestamp if isinstance(chunk.timestamp, int) else at * 1000 // SAMPLE_RATE
            self.server.trace.emit(WakeEvent(name=detection.name, score=detection.score, source="wyoming"))
            await self.write_event(Detection(name=detection.name, timestamp=stamp).event())
            break

    # -- handle --------------------------------------------------------------------------------------------------

    async def _handle(self, request: Transcript) -> None:
        """One text turn; every request ends in `handled` or `not-handled`, a failure too (with an apology in its
        language): Home Assistant waits for one of them and ignores `error`."""
        conversation, request_id = self.conversation, None
        context: dict[str, Any] | None = None
        if isinstance(request.context, dict):
            said = request.context.get("conversation_id")
            if isinstance(said, str | int) and not isinstance(said, bool) and str(said).strip():
                said = str(said).strip()[:MAX_CONVERSATION_ID]
                conversation, context = f"wyoming:id:{said}", {"conversation_id": said}
            given = request.context.get("request_id")  # a client's idempotency key: resent, nothing runs twice
            if isinstance(given, str | int) and not isinstance(given, bool) and str(given).strip():
                request_id = f"wyoming:{str(given).strip()[:MAX_CONVERSATION_ID]}"
        if context is None and self._turns == 0:
            conversation = self.conversation = self.server.taken_over(self.peer) or self.conversation
        self._turns += 1
        text = request.text if isinstance(request.text, str) else ""
        lang = self._text_language(text, request.language)
        try:
            if not isinstance(request.text, str):
                raise BadEvent("transcript text is not a string")
            result = await self.server.handle(text, lang, conversation, request_id)
        except Exception as e:
            said = lang or _language(request.language, self.cfg.stt.languages) or self.cfg.general.language
            if isinstance(e, BadEvent):
                log.warning("wyoming %s: transcript refused: %s", self.conversation, e)
                key = "error.busy" if e.code in ("stopping", "busy") else "agent.not_understood"
            else:
                log.exception("wyoming %s: the turn failed", self.conversation)
                key = "error.internal"
            # not-handled is the protocol's failed answer (an `error` besides would be read as the next request's)
            await self.write_event(NotHandled(text=phrase(said, key), context=context).event())
            return
        open_now = self.c.dialogues.peek(conversation)
        if open_now is not None and open_now.is_open():  # a question waits: a satellite reopens its microphone
            context = {**(context or {}), "continue_conversation": True}
        decision = result.decision
        failed = bool(result.error) or (decision is not None and (
            decision.kind == "abstain" or (decision.kind == "call" and bool(result.results)
                                           and not any(r.ok for r in result.results))))
        reply = NotHandled(text=result.reply, context=context) if failed else Handled(text=result.reply,
                                                                                      context=context)
        await self.write_event(reply.event())

    def _text_language(self, text: str, language: Any) -> str | None:
        """The client's language when the text agrees with it; else None, and the pipeline reads the text's own
        (Home Assistant sends its pipeline's language, whatever the words are written in)."""
        allowed = self.cfg.stt.languages
        lang = _language(language, allowed)
        if lang is not None and self.cfg.wyoming.language == "pipeline":
            return lang  # told to: the client's language, whatever the words
        return agreeing_language(text, lang, allowed)

    # -- tts -----------------------------------------------------------------------------------------------------

    def _voice_language(self, voice: Any) -> str | None:
        """The language of the voice asked for; None: the text's own. A voice hearthd lacks is never an error that
        leaves the client without audio (Home Assistant ignores `error` and waits for `audio-stop` for ever, and a
        pipeline left on "en_US-lessac-medium" asked for one with every reply): its language's voice speaks, as the
        name's prefix says ("en_US-…" → English), else the text's."""
        if voice is None:
            return None
        voices = self.server.voice_names()
        if voice.name is not None:
            name = str(voice.name)
            for lang, voice_name in voices.items():
                if name in (voice_name, lang, self.cfg.tts.voices[lang]):
                    return lang
            instead = _language(name, list(voices))
            log.info("wyoming %s: no voice %r here; speaking with %s", self.conversation, name[:80],
                     voices[instead] if instead else "the voice of the text's language")
            return instead
        if voice.language is not None:
            asked = _language(voice.language, list(voices))
            if asked is None:
                log.info("wyoming %s: no voice for language %r; speaking with the text's", self.conversation,
                         str(voice.language)[:40])
            return asked
        return None

    def _text_voice(self, text: str, hint: str | None = None) -> str:
        langs = list(self.cfg.tts.voices)
        if not langs:
            raise BadEvent("no voices are configured (tts.voices)", "tts-unavailable")
        return language_of_text(text, langs, hint or self.cfg.general.language)

    def _voice(self, speech: _Speech, voice: Any) -> None:
        """The voice asked for: every sentence's with wyoming.language = "pipeline", else a hint (the text's own
        language speaks: a Russian reply in an English pipeline is said in Russian)."""
        lang = self._voice_language(voice)
        if self.cfg.wyoming.language == "pipeline":
            speech.lang = lang
        else:
            speech.hint = lang

    async def _synthesize(self, request: Synthesize) -> None:
        """The text spoken as one audio stream. Every request ends in `audio-stop`, an error or not (said first):
        Home Assistant ignores `error` and waits for `audio-stop`."""
        speech = _Speech(lang=None)
        try:
            if not isinstance(request.text, str):
                raise BadEvent("synthesize text is not a string")
            self._voice(speech, request.voice)
            text = clean_text(request.text, MAX_TTS_CHARS)
            for sentence in sentences(text):
                await self._speak(speech, sentence)
        except (BadEvent, PipelineError) as e:
            log.warning("wyoming %s: synthesize: %s", self.conversation, e)
            await self._error(e.code, e.message if isinstance(e, PipelineError) else str(e))
        await self._end_audio(speech)

    async def _synthesize_start(self, request: SynthesizeStart) -> None:
        self._speech = _Speech(lang=None)  # set first: the whole text that follows is ignored, whatever happens
        try:
            self._voice(self._speech, request.voice)
        except BadEvent:
            self._speech.failed = True
            raise

    async def _synthesize_chunk(self, request: SynthesizeChunk) -> None:
        speech = self._speech
        if speech is None:
            raise BadEvent("synthesize-chunk without synthesize-start")
        if speech.failed:
            return
        if not isinstance(request.text, str):
            raise BadEvent("synthesize-chunk text is not a string")
        speech.chars += len(request.text)
        if speech.chars > MAX_TTS_CHARS:
            speech.failed = True
            raise BadEvent(f"more than {MAX_TTS_CHARS} characters to speak", "text-too-long")
        speech.text += clean_text(request.text, MAX_TTS_CHARS)
        parts = sentences(speech.text)
        if not parts:
            return
        if ENDS_SENTENCE.search(speech.text):  # the text so far ends a sentence: all of it can be spoken
            done, speech.text = parts, ""
        else:  # the last part may go on in the next chunk: kept as it came (its spaces too)
            done, speech.text = parts[:-1], speech.text[speech.text.rfind(parts[-1]):]
        for sentence in done:
            await self._speak(speech, sentence)

    async def _synthesize_stop(self) -> None:
        speech, self._speech = self._speech, None
        if speech is None:
            raise BadEvent("synthesize-stop without synthesize-start")
        try:
            if not speech.failed:
                for sentence in sentences(speech.text):
                    await self._speak(speech, sentence)
        except BadEvent as e:
            await self._error(e.code, str(e))
        await self._end_audio(speech)  # whatever happened: a client waits for audio-stop, then synthesize-stopped
        await self.write_event(SynthesizeStopped().event())

    async def _speak(self, speech: _Speech, sentence: str) -> None:
        """One sentence synthesised and sent (audio-start before the first)."""
        lang = speech.lang or self._text_voice(sentence, speech.hint)
        try:
            out = await speak(self.c.voices, sentence, lang)
        except Exception as e:
            speech.failed = True
            self.server.trace.emit(ErrorEvent(code="tts-failed", message=str(e), source="wyoming"))
            raise BadEvent(f"the {lang} voice cannot speak: {e}",
                           e.code if isinstance(e, HearthdError) else "tts-failed") from e
        audio = np.asarray(out.audio, dtype=np.int16)
        if not speech.rate:
            speech.rate = out.rate
            await self.write_event(AudioStart(rate=out.rate, width=2, channels=1, timestamp=0).event())
        elif out.rate != speech.rate:
            from ..audio.pcm import resample

            audio = resample(audio, out.rate, speech.rate)
        for i in range(0, len(audio), SAMPLES_PER_CHUNK):
            piece = audio[i:i + SAMPLES_PER_CHUNK]
            await self.write_event(AudioChunk(rate=speech.rate, width=2, channels=1, audio=piece.tobytes(),
                                              timestamp=speech.sent * 1000 // speech.rate).event())
            speech.sent += len(piece)

    async def _end_audio(self, speech: _Speech) -> None:
        if not speech.rate:  # nothing to say ("", only spaces): an empty stream all the same
            speech.rate = 22050
            await self.write_event(AudioStart(rate=speech.rate, width=2, channels=1, timestamp=0).event())
        await self.write_event(AudioStop(timestamp=speech.sent * 1000 // speech.rate).event())

    async def stop(self) -> None:
        """Read no more (what is in progress still answers)."""
        self._is_running = False
        self.reader.feed_eof()


class WyomingServer:
    """The Wyoming server on `cfg.wyoming.uri`, for the daemon's run (start, then stop at shutdown)."""

    def __init__(self, components: Components, pipeline: Pipeline, turns: asyncio.Lock, trace: Trace,
                 stopping: asyncio.Event | None = None) -> None:
        self.components = components
        self.cfg = components.cfg
        self.pipeline = pipeline
        self.turns = turns
        self.trace = trace
        self.stopping = stopping  # the daemon's: once set, no new requests, and the server closes
        self.closing = asyncio.Event()
        self.connections = itertools.count(1)
        self.tasks: set[asyncio.Task[Any]] = set()
        self.handlers: set[WyomingHandler] = set()
        self._server: AsyncServer | None = None
        self._watch: asyncio.Task[None] | None = None
        self._zeroconf: Any = None
        self.uri = self.cfg.wyoming.uri
        self.refused = 0  # connections turned away at wyoming.max_connections
        self._handoffs: OrderedDict[str, str] = OrderedDict()  # peer host → the conversation its last one left open
        self._refused_said = 0.0

    async def start(self) -> None:
        """Listen on the uri (OSError when it cannot be bound, ValueError for a uri that is not tcp:// or unix://)."""
        if urlparse(self.uri).scheme not in ("tcp", "unix"):
            raise ValueError(f"wyoming.uri {self.uri!r}: tcp://HOST:PORT or unix:///PATH")
        server = AsyncServer.from_uri(self.uri)
        await server.start(self._handler)
        self._server = server
        self._watch = asyncio.get_running_loop().create_task(self._stop_when_stopping())
        log.info("wyoming: serving asr, tts, wake and handle on %s", self.uri)
        if self.cfg.wyoming.zeroconf:
            await self._announce()

    def _handler(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> WyomingHandler:
        handler = WyomingHandler(self, reader, writer)
        if len(self.handlers) >= self.cfg.wyoming.max_connections:
            handler.refused = True  # told "busy" and closed at once: a crowd of idle clients takes no more descriptors
            self.refused += 1
            if self.refused == 1 or time.monotonic() - self._refused_said >= REFUSED_LOG_S:
                log.warning("wyoming: %d connections open (wyoming.max_connections); refusing more (%d so far)",
                            len(self.handlers), self.refused)
                self._refused_said = time.monotonic()
            return handler
        self.handlers.add(handler)
        return handler

    async def _stop_when_stopping(self) -> None:
        if self.stopping is not None:
            await self.stopping.wait()
            await self._close()

    async def _close(self) -> None:
        """No new requests; the ones in progress answer (at most STOP_GRACE_S)."""
        self.closing.set()
        for handler in list(self.handlers):
            await handler.stop()
        pending = [t for t in self.tasks if not t.done()]
        if pending:
            await asyncio.wait(pending, timeout=STOP_GRACE_S)

    async def stop(self) -> None:
        """Stop listening and end every connection (idempotent); requests in progress get STOP_GRACE_S to answer."""
        if self._watch is not None:
            if self.stopping is not None and self.stopping.is_set():  # already closing: let it finish
                with contextlib.suppress(Exception):
                    await asyncio.wait_for(asyncio.shield(self._watch), STOP_GRACE_S + 1)
            self._watch.cancel()
            self._watch = None
        if not self.closing.is_set():
            await self._close()
        if self._zeroconf is not None:
            with contextlib.suppress(Exception):
                await self._zeroconf.async_close()  # unregisters what it announced (a goodbye on the network)
            self._zeroconf = None
        server, self._server = self._server, None
        if server is not None:
            with contextlib.suppress(Exception):
                await server.stop()
        for task in list(self.tasks):
            task.cancel()
        if self.tasks:
            await asyncio.wait(list(self.tasks), timeout=5)
        self.handlers.clear()

    async def _announce(self) -> None:
        """_wyoming._tcp on the network the uri is bound to (Home Assistant discovers it): mDNS only on that
        address's interface (tcp://127.0.0.1:… is announced on this machine alone), on every interface for
        tcp://0.0.0.0:…, with the address the machine is reached at."""
        parsed = urlparse(self.uri)
        if parsed.scheme != "tcp" or parsed.port is None:
            log.warning("wyoming.zeroconf: only a tcp:// uri can be announced (%s)", self.uri)
            return
        try:
            from zeroconf import InterfaceChoice, IPVersion
            from zeroconf.asyncio import AsyncServiceInfo, AsyncZeroconf
        except ImportError:
            log.warning("wyoming.zeroconf: the zeroconf package is not installed (pip install zeroconf)")
            return
        host = parsed.hostname or ""
        try:
            everywhere = host in ("0.0.0.0", "")
            address = _reached_at() if everywhere else socket.gethostbyname(host)
            zc = AsyncZeroconf(interfaces=InterfaceChoice.All if everywhere else [address],
                               ip_version=IPVersion.V4Only)
            name = re.sub(r"[^\w -]", "-", self.cfg.wyoming.name or "hearthd")[:60] or "hearthd"
            info = AsyncServiceInfo("_wyoming._tcp.local.", f"{name}._wyoming._tcp.local.",
                                    addresses=[socket.inet_aton(address)], port=parsed.port)
            self._zeroconf = zc  # closed at stop, registered or not
            await zc.async_register_service(info)
            log.info("wyoming.zeroconf: announced %s on %s:%d", name, address, parsed.port)
        except Exception as e:  # noqa: BLE001 - not announced; the server itself works
            log.warning("wyoming.zeroconf: not announced: %s", e)

    def hand_off(self, peer: str, conversation: str) -> None:
        """`conversation`, whose connection from `peer` has closed with a question open, for the next one to take."""
        self._handoffs.pop(peer, None)
        self._handoffs[peer] = conversation
        while len(self._handoffs) > MAX_HANDOFFS:
            self._handoffs.popitem(last=False)

    def taken_over(self, peer: str) -> str | None:
        """The conversation a closed connection from `peer` left with its question still open (taken once), or None.
        Only from the same host, and only while no connection of that conversation is open: a question is never
        answered from another host, nor from beside a connection still waiting on it."""
        conversation = self._handoffs.pop(peer, None)
        if conversation is None or any(h.conversation == conversation for h in self.handlers):
            return None
        dialogue = self.components.dialogues.peek(conversation)
        return conversation if dialogue is not None and dialogue.is_open() else None

    # -- what the handlers share ---------------------------------------------------------------------------------

    def voice_names(self) -> dict[str, str]:
        """Each configured voice's name as clients see it, by language ("piper-en-joe", "espeak-hi")."""
        names: dict[str, str] = {}
        for lang, spec in self.cfg.tts.voices.items():
            engine, _, name = spec.partition(":")
            name = (VOICE_ENGINES[engine].client_name(name) if engine in VOICE_ENGINES else name) or spec
            if name in names.values():
                name = f"{name}-{lang}"
            names[lang] = name
        return names

    def info(self) -> Info:
        cfg = self.cfg
        name = cfg.wyoming.name or "hearthd"
        voices = [TtsVoice(name=voice, description=f"{voice} ({lang})", attribution=ATTRIBUTION, installed=True,
                           version=None, languages=[lang]) for lang, voice in self.voice_names().items()]
        wake_models = [WakeModel(name=model, description=model.replace("_", " ").title(), phrase=model.replace(
            "_", " "), attribution=ATTRIBUTION, installed=True, version=None, languages=list(cfg.stt.languages))
            for model in builtin_models()]
        return Info(
            asr=[AsrProgram(name=name, description="hearthd speech to text (faster-whisper)", attribution=ATTRIBUTION,
                            installed=True, version=__version__, models=[
                                AsrModel(name=cfg.stt.model, description=f"faster-whisper {cfg.stt.model}",
                                         attribution=ATTRIBUTION, installed=True, version=None,
                                         languages=list(cfg.stt.languages))])],
            tts=[TtsProgram(name=name, description="hearthd text to speech (Piper, espeak-ng)", attribution=ATTRIBUTION,
                            installed=True, version=__version__, voices=voices, supports_synthesize_streaming=True)],
            wake=[WakeProgram(name=name, description="hearthd wake word (microWakeWord)", attribution=ATTRIBUTION,
                              installed=True, version=__version__, models=wake_models)],
            handle=[HandleProgram(name=name, description="hearthd's agent and tools", attribution=ATTRIBUTION,
                                  installed=True, version=__version__, supports_home_control=cfg.mqtt.enabled,
                                  models=[HandleModel(name="hearthd", description="hearthd's agent",
                                                      attribution=ATTRIBUTION, installed=True, version=__version__,
                                                      languages=list(cfg.stt.languages))])],
        )

    async def transcribe(self, audio: np.ndarray, language: str | None, hint: str | None = None) -> Any:
        """Speech to text as a turn: under the turn lock and the CPU gate, so no other decode runs beside it.
        `language` forces it; else it is detected, `hint` taken when detection is unsure."""
        if self.closing.is_set():
            raise BadEvent("hearthd is stopping", "stopping")
        c = self.components

        def job() -> Any:
            with c.inference.turn():
                return c.stt().transcribe(audio, language, hint)

        loop = asyncio.get_running_loop()
        started = time.monotonic()
        await self._turn_slot()
        try:
            if self.closing.is_set():
                raise BadEvent("hearthd is stopping", "stopping")
            future = loop.run_in_executor(None, job)
            try:
                return await asyncio.shield(future)
            except asyncio.CancelledError:  # the decode cannot be stopped: the lock is kept until it ends
                with contextlib.suppress(BaseException):
                    await asyncio.wait_for(asyncio.shield(future), 120)
                raise
            finally:
                self.trace.timing("wyoming_stt", time.monotonic() - started)
        finally:
            self.turns.release()

    async def _turn_slot(self) -> None:
        """The turn lock, waited for no longer than one turn's budget (agent.max_turn_s): past it, BadEvent "busy"
        (the client is answered then, not when the other turns end)."""
        wait = self.cfg.agent.max_turn_s
        try:
            await asyncio.wait_for(self.turns.acquire(), wait)
        except TimeoutError:
            raise BadEvent(f"other turns held hearthd for {wait:g} s", "busy") from None

    async def handle(self, text: str, language: str | None, conversation: str, request_id: str | None = None) -> Any:
        """One turn of hearthd's agent in `conversation`, under the turn lock (`request_id`: its idempotency key)."""
        if self.closing.is_set():
            raise BadEvent("hearthd is stopping", "stopping")
        asked = time.monotonic()  # (the model's budget runs from here: waiting for other turns is part of it)
        await self._turn_slot()
        try:
            if self.closing.is_set():  # it closed while this waited: the shutdown does not wait for new turns
                raise BadEvent("hearthd is stopping", "stopping")
            return await self.pipeline.run_text(text, language=language, conversation=conversation,
                                                request_id=request_id, asked_at=asked)
        finally:
            self.turns.release()


def _reached_at() -> str:
    """This machine's address on the local network (the one a packet to the mDNS group leaves from)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as probe:
        probe.connect(("224.0.0.251", 5353))  # no packet is sent: connect only picks the route
        return str(probe.getsockname()[0])


async def start_wyoming(components: Components, pipeline: Pipeline, turns: asyncio.Lock, trace: Trace,
                        stopping: asyncio.Event) -> WyomingServer | None:
    """The server started on `wyoming.uri` (None when none is set, or when it cannot listen there: said in the trace,
    the rest of the daemon runs on). It closes when `stopping` is set; `stop()` ends it."""
    if not components.cfg.wyoming.uri:
        return None
    server = WyomingServer(components, pipeline, turns, trace, stopping)
    try:
        await server.start()
    except (OSError, ValueError) as e:
        trace.emit(ErrorEvent(code="wyoming-failed", message=f"cannot serve Wyoming on {components.cfg.wyoming.uri}: "
                              f"{e}"))
        return None
    return server
