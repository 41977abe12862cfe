"""Remote stages over Wyoming: speech to text, text to speech and the wake word of another machine (a bigger Whisper on
a server, Piper in another room, any Wyoming service), as implementations of the same Protocols the local engines
implement (`stt.engine`, `tts.engine`, `wake.engine` = "wyoming" with a `uri`).

The callers are synchronous (executor threads, and the live loop's reader for the wake word), so the Wyoming client
runs on one private event loop in its own thread; a call hands it a coroutine and waits, bounded, for the answer. The
daemon's own loop is never blocked: speech to text and text to speech run in executor threads, and the wake word,
fed from the daemon's loop block by block, only queues the block (see WyomingWakeWordDetector).

Every request opens its own connection (a streamed wake word: one per stream), so a remote that went down and came
back is simply used again by the next call. A remote that is down, refuses, answers with an error or does not answer
in time raises the stage's typed error (SttError, TtsError, WakeWordError): the turn ends with a spoken apology."""

from __future__ import annotations

import asyncio
import collections
import concurrent.futures
import contextlib
import logging
import re
import threading
import time
from collections.abc import Coroutine
from dataclasses import dataclass, field
from typing import Any, TypeVar

import numpy as np
from wyoming.asr import Transcribe
from wyoming.asr import Transcript as WyTranscript
from wyoming.audio import AudioChunk, AudioStart, AudioStop
from wyoming.client import AsyncClient
from wyoming.error import Error
from wyoming.event import Event
from wyoming.info import Describe, Info
from wyoming.tts import Synthesize, SynthesizeVoice
from wyoming.wake import Detect, Detection, NotDetected

from ..config import SttConfig
from ..language import rules
from ..locale import DEFAULT_LANGUAGE
from ..wyoming_reader import read_client_event
from .pcm import SAMPLE_RATE, mono16
from .stt import SttError, Transcript
from .tts import Speech, TtsError
from .wake import WakeDetection, WakeWordError

T = TypeVar("T")

log = logging.getLogger(__name__)

CONNECT_TIMEOUT_S = 5.0  # a remote that does not accept the connection within it is down
STT_TIMEOUT_S = 60.0  # one utterance (at most vad.max_speech_s) decoded by the remote
TTS_TIMEOUT_S = 60.0  # one sentence (or reply) synthesised by the remote
WAKE_TIMEOUT_S = 30.0  # one whole recording looked through for the wake word
RETRY_S = 2.0  # a streamed wake word whose remote is down: tried again this often (blocks meanwhile are not heard)
SAMPLES_PER_CHUNK = 1024  # audio sent in chunks of this many samples (64 ms at 16 kHz)
MAX_QUEUED_BLOCKS = 256  # a streamed wake word's blocks waiting for the connection (8 s of 30 ms blocks)
MAX_TTS_S = 600.0  # audio a remote voice may send for one text; more is refused


class RemoteWakeError(WakeWordError):
    """The remote wake word service is down, refused the request or did not answer in time."""

    code = "wake-unavailable"


class RemoteTtsError(TtsError):
    """The remote voice is down, refused the text or did not answer in time."""

    code = "tts-unavailable"


# -- the private client loop ---------------------------------------------------------------------------------------


class ClientLoop:
    """An event loop in a daemon thread of its own, where every remote stage's Wyoming client runs."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self._run, name="hearthd-wyoming-client", daemon=True)
        self.thread.start()

    def _run(self) -> None:
        asyncio.set_event_loop(self.loop)
        self.loop.run_forever()

    def call(self, coro: Coroutine[Any, Any, T], timeout: float) -> T:
        """Run `coro` there and wait for it at most `timeout` seconds (TimeoutError after; the coroutine is then
        cancelled, and its connection closed)."""
        if threading.current_thread() is self.thread:
            coro.close()
            raise RuntimeError("a remote stage was called from its own client loop")
        future = asyncio.run_coroutine_threadsafe(coro, self.loop)
        try:
            return future.result(timeout)
        except concurrent.futures.TimeoutError:
            future.cancel()
            raise TimeoutError(f"no answer within {timeout:g} s") from None

    def soon(self, callback: Any, *args: Any) -> None:
        """`callback(*args)` on the client loop, from any thread, without waiting."""
        self.loop.call_soon_threadsafe(callback, *args)


_shared: ClientLoop | None = None
_shared_lock = threading.Lock()


def client_loop() -> ClientLoop:
    """The process's one client loop (started on first use)."""
    global _shared
    with _shared_lock:
        if _shared is None:
            _shared = ClientLoop()
        return _shared


def _on_event_loop() -> bool:
    """Called from a thread that runs an event loop (the daemon's): nothing may block here."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# -- the connection ------------------------------------------------------------------------------------------------


async def _connect(uri: str) -> AsyncClient:
    client = AsyncClient.from_uri(uri, connect_timeout=CONNECT_TIMEOUT_S)
    await client.connect()
    return client


async def _disconnect(client: AsyncClient) -> None:
    with contextlib.suppress(Exception):  # a connection that cannot even be closed is gone all the same
        await asyncio.wait_for(client.disconnect(), 2.0)


async def _read(client: AsyncClient) -> Event:
    """The remote's next event, every length in it bounded before it is read (the server's own reader); a closed
    connection is a ConnectionError."""
    event = await read_client_event(client)
    if event is None:
        raise ConnectionError("the remote closed the connection")
    return event


DESCRIBE_TIMEOUT_S = 5.0  # `hearthd doctor`: a remote that does not say what it offers within it is not answering


def describe(uri: str, timeout_s: float = DESCRIBE_TIMEOUT_S) -> Info:
    """What the Wyoming service at `uri` offers (its `info`), asked the way Home Assistant asks; a remote that is down,
    answers with an error or nothing in time raises (OSError, TimeoutError; what the event reader raises at bytes
    that are no Wyoming) with the reason."""

    async def ask() -> Info:
        client = await _connect(uri)
        try:
            await client.write_event(Describe().event())
            while True:  # events sent before the answer (none is expected) are passed over
                event = await _read(client)
                if Info.is_type(event.type):
                    return Info.from_event(event)
                if Error.is_type(event.type):
                    raise ConnectionError(f"the remote answered with an error: {_remote_error(event)}")
        finally:
            await _disconnect(client)

    try:
        return client_loop().call(ask(), timeout_s)
    except TimeoutError:
        raise TimeoutError(f"no answer to describe within {timeout_s:g} s") from None


def _remote_error(event: Event) -> str:
    error = Error.from_event(event)
    return f"{error.text} ({error.code})" if error.code else str(error.text)


def _chunks(audio: np.ndarray) -> list[Event]:
    """16 kHz mono int16 as audio-chunk events, without timestamps (the remote counts the samples itself)."""
    data = np.ascontiguousarray(np.asarray(audio, dtype=np.int16), dtype="<i2")
    return [AudioChunk(rate=SAMPLE_RATE, width=2, channels=1, audio=data[i:i + SAMPLES_PER_CHUNK].tobytes()).event()
            for i in range(0, len(data), SAMPLES_PER_CHUNK)]


async def _send(client: AsyncClient, request: Event, audio: np.ndarray) -> None:
    """A request (transcribe, detect) and the utterance after it as one audio stream: start, chunks, stop."""
    await client.write_event(request)
    await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
    for chunk in _chunks(audio):
        await client.write_event(chunk)
    await client.write_event(AudioStop().event())


def _pcm16(raw: bytes, width: int, channels: int) -> np.ndarray:
    """Whole frames of little-endian PCM (8-bit unsigned, 16/24/32-bit signed) as mono int16 (the server's reader)."""
    if width not in (1, 2, 3, 4) or channels < 1:
        raise ValueError(f"audio of {width}-byte samples in {channels} channel(s)")
    return mono16(raw[:len(raw) // (width * channels) * (width * channels)], width, channels)


def _language(code: str | None, allowed: list[str]) -> str | None:
    """The remote's language ("en", "en-US", "ru_RU") as one of `allowed`, else None."""
    if not code:
        return None
    base = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    return base if base in allowed else None


# -- speech to text ------------------------------------------------------------------------------------------------


class WyomingSpeechToText:
    """A Wyoming `asr` service (e.g. faster-whisper large on a server) as hearthd's speech to text.

    The remote chooses the language when none is forced; one outside `stt.languages` (or none) is replaced by the
    conversation's language, then general.language, and reported as a fallback. A remote gives no probability for
    its language: a language it chose within `stt.languages` is reported as sure (1.0)."""

    def __init__(self, uri: str, cfg: SttConfig, default_language: str = DEFAULT_LANGUAGE,
                 timeout_s: float = STT_TIMEOUT_S) -> None:
        self.uri = uri
        self.cfg = cfg
        self.default_language = default_language
        self.timeout_s = timeout_s

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript:
        allowed = list(self.cfg.languages)
        forced = language or self.cfg.language or (allowed[0] if len(allowed) == 1 else None)
        try:
            text, said = client_loop().call(self._transcribe(audio, forced), self.timeout_s + CONNECT_TIMEOUT_S)
        except SttError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever went wrong there, this stage failed: its typed error
            raise SttError(f"the speech to text at {self.uri} failed: {type(e).__name__}: {e}") from e
        if forced:
            lang, prob, source = forced, 1.0, "forced"
        else:
            chosen = _language(said, allowed)
            if chosen is not None:
                lang, prob, source = chosen, 1.0, "detected"
            else:
                lang, prob, source = fallback or self.default_language, 0.0, "fallback"
        text = text.strip()
        text = rules(lang).transcript(text)
        return Transcript(text, lang, prob, source)

    async def _transcribe(self, audio: np.ndarray, language: str | None) -> tuple[str, str | None]:
        client = await _connect(self.uri)
        try:
            await _send(client, Transcribe(language=language).event(), audio)
            while True:
                event = await _read(client)
                if WyTranscript.is_type(event.type):
                    transcript = WyTranscript.from_event(event)
                    if not isinstance(transcript.text, str):
                        raise SttError(f"the speech to text at {self.uri} sent a transcript without text")
                    lang = transcript.language if isinstance(transcript.language, str) else None
                    return transcript.text, lang
                if Error.is_type(event.type):
                    raise SttError(f"the speech to text at {self.uri} refused: {_remote_error(event)}")
        finally:
            await _disconnect(client)


# -- text to speech ------------------------------------------------------------------------------------------------


class WyomingTextToSpeech:
    """One voice of a Wyoming `tts` service: the voice named `voice`, else the remote's voice for `language`."""

    def __init__(self, uri: str, voice: str = "", language: str | None = None,
                 timeout_s: float = TTS_TIMEOUT_S) -> None:
        self.uri = uri
        self.voice = voice
        self.language = language
        self.timeout_s = timeout_s

    def synthesize(self, text: str) -> Speech:
        try:
            return client_loop().call(self._synthesize(text), self.timeout_s + CONNECT_TIMEOUT_S)
        except TtsError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever went wrong there, this voice cannot speak: its typed error
            raise RemoteTtsError(f"the voice at {self.uri} failed: {type(e).__name__}: {e}") from e

    async def _synthesize(self, text: str) -> Speech:
        voice = SynthesizeVoice(name=self.voice) if self.voice else (
            SynthesizeVoice(language=self.language) if self.language else None)
        client = await _connect(self.uri)
        try:
            await client.write_event(Synthesize(text=text, voice=voice).event())
            rate = 0
            parts: list[np.ndarray] = []
            samples = 0
            while True:
                event = await _read(client)
                if AudioStart.is_type(event.type):
                    rate = int(AudioStart.from_event(event).rate)
                elif AudioChunk.is_type(event.type):
                    chunk = AudioChunk.from_event(event)
                    audio = _pcm16(chunk.audio, int(chunk.width), int(chunk.channels))
                    if not rate:
                        rate = int(chunk.rate)
                    elif int(chunk.rate) != rate:
                        from .pcm import resample

                        audio = resample(audio, int(chunk.rate), rate)
                    samples += len(audio)
                    if samples > MAX_TTS_S * max(rate, 1):
                        raise RemoteTtsError(f"the voice at {self.uri} sent more than {MAX_TTS_S:g} s of audio")
                    parts.append(audio)
                elif AudioStop.is_type(event.type):
                    if not rate:
                        raise RemoteTtsError(f"the voice at {self.uri} sent no audio format")
                    audio = np.concatenate(parts) if parts else np.zeros(0, dtype=np.int16)
                    return Speech(audio.astype(np.int16), rate)
                elif Error.is_type(event.type):
                    raise RemoteTtsError(f"the voice at {self.uri} refused: {_remote_error(event)}")
        finally:
            await _disconnect(client)


class WyomingVoices:
    """The remote voices by language, as the voice bank is (`tts.voice` names one remote voice for all languages;
    without it each language asks for the remote's voice of that language)."""

    def __init__(self, uri: str, voice: str = "", timeout_s: float = TTS_TIMEOUT_S) -> None:
        self.uri = uri
        self.name = voice
        self.timeout_s = timeout_s
        self._voices: dict[str, WyomingTextToSpeech] = {}

    def voice(self, lang: str) -> WyomingTextToSpeech:
        if lang not in self._voices:
            self._voices[lang] = WyomingTextToSpeech(self.uri, self.name, lang, self.timeout_s)
        return self._voices[lang]

    def synthesize(self, text: str, lang: str) -> Speech:
        return self.voice(lang).synthesize(text)


# -- the wake word -------------------------------------------------------------------------------------------------


@dataclass
class _Stream:
    """One streamed detection request: its connection (opened on the client loop) and the blocks still to send."""

    generation: int
    queue: asyncio.Queue[np.ndarray | None] = field(default_factory=lambda: asyncio.Queue(MAX_QUEUED_BLOCKS))
    task: asyncio.Task[None] | None = None


class WyomingWakeWordDetector:
    """A Wyoming `wake` service listening for `name` (wake.model).

    Called from the daemon's event loop (the live loop's reader, block by block), `process` never waits: the block
    is queued for one streamed request that stays open until `reset()`, and a detection the remote has sent since
    is returned by the next call (a block or two later). A remote that is down is logged once and tried again every
    RETRY_S; the blocks meanwhile are not heard, and nothing is raised into the reader.

    Called from any other thread (the pipeline's executor, with a whole recording), each call is one whole request:
    the audio, the end of the stream, and the remote's answer (waited for at most `timeout_s`); a remote that is down
    raises RemoteWakeError (a WakeWordError).

    The remote gives no score: a detection is reported with 1.0, and `max_score` is 1.0 after one, else 0."""

    def __init__(self, uri: str, name: str, timeout_s: float = WAKE_TIMEOUT_S, retry_s: float = RETRY_S) -> None:
        self.uri = uri
        self.name = name
        self.timeout_s = timeout_s
        self.retry_s = retry_s
        self.max_score = 0.0
        self.problem = ""  # why the streamed request is not running now ("" while it is, or has not started)
        self.dropped = 0  # streamed blocks not sent (the remote down, or too slow to take them)
        self._samples = 0  # 16 kHz samples of the stream since the last reset
        self._generation = 0  # one per stream: a detection of an earlier stream is not this one's
        self._found: collections.deque[tuple[int, WakeDetection]] = collections.deque()
        self._retry_at = 0.0  # monotonic time before which a streamed request is not tried again
        self._stream: _Stream | None = None  # the streamed request (touched on the client loop only)
        self._client = client_loop()

    # -- the Protocol ------------------------------------------------------------------------------------------

    def process(self, audio: np.ndarray) -> WakeDetection | None:
        data = np.asarray(audio, dtype=np.int16)
        if _on_event_loop():
            return self._streamed(data)
        return self._whole(data)

    def reset(self) -> None:
        """Forget the stream so far: a streamed request ends (the next block starts a new one)."""
        self._generation += 1
        self._samples = 0
        self._found.clear()
        self.max_score = 0.0
        self._client.soon(self._end_stream)

    def close(self) -> None:
        """End the streamed request, if one is open."""
        self._generation += 1
        self._client.soon(self._end_stream)

    # -- one whole recording -----------------------------------------------------------------------------------

    def _whole(self, audio: np.ndarray) -> WakeDetection | None:
        offset = self._samples
        self._samples += len(audio)
        if not len(audio):
            return None
        try:
            found = self._client.call(self._detect(audio), self.timeout_s + CONNECT_TIMEOUT_S)
        except WakeWordError:
            raise
        except Exception as e:  # noqa: BLE001 - whatever went wrong there, the wake word cannot be heard
            raise RemoteWakeError(f"the wake word service at {self.uri} failed: {type(e).__name__}: {e}") from e
        if found is None:
            return None
        name, ms = found
        at = offset + (min(len(audio), ms * SAMPLE_RATE // 1000) if ms is not None else len(audio))
        self.max_score = 1.0
        return WakeDetection(name or self.name, 1.0, at)

    async def _detect(self, audio: np.ndarray) -> tuple[str | None, int | None] | None:
        client = await _connect(self.uri)
        try:
            await _send(client, Detect(names=[self.name]).event(), audio)
            while True:
                event = await _read(client)
                if Detection.is_type(event.type):
                    detection = Detection.from_event(event)
                    stamp = detection.timestamp if isinstance(detection.timestamp, int) else None
                    return (detection.name if isinstance(detection.name, str) else None), stamp
                if NotDetected.is_type(event.type):
                    return None
                if Error.is_type(event.type):
                    raise RemoteWakeError(f"the wake word service at {self.uri} refused: {_remote_error(event)}")
        finally:
            await _disconnect(client)

    # -- a stream, block by block ------------------------------------------------------------------------------

    def _streamed(self, audio: np.ndarray) -> WakeDetection | None:
        self._samples += len(audio)
        if len(audio):
            if time.monotonic() >= self._retry_at:
                self._client.soon(self._feed, self._generation, audio.copy())
            else:
                self.dropped += len(audio)
        return self._take()

    def _take(self) -> WakeDetection | None:
        while self._found:
            generation, detection = self._found.popleft()
            if generation == self._generation:
                self.max_score = 1.0
                return detection
        return None

    # the rest runs on the client loop

    def _feed(self, generation: int, audio: np.ndarray) -> None:
        if generation != self._generation:
            return  # reset since: this block belonged to the stream that ended
        if time.monotonic() < self._retry_at:  # the remote was down a moment ago: not tried again yet
            self.dropped += len(audio)
            return
        stream = self._stream
        if stream is None or stream.generation != generation or stream.task is None or stream.task.done():
            if stream is not None:
                self._end_stream()
            stream = _Stream(generation)
            stream.task = asyncio.get_running_loop().create_task(self._run_stream(stream))
            self._stream = stream
        try:
            stream.queue.put_nowait(audio)
        except asyncio.QueueFull:
            self.dropped += len(audio)

    def _end_stream(self) -> None:
        stream, self._stream = self._stream, None
        if stream is None:
            return
        try:
            stream.queue.put_nowait(None)  # ends the stream after the blocks already queued
        except asyncio.QueueFull:
            if stream.task is not None:
                stream.task.cancel()

    async def _run_stream(self, stream: _Stream) -> None:
        client: AsyncClient | None = None
        reader: asyncio.Task[None] | None = None
        try:
            client = await _connect(self.uri)
            await client.write_event(Detect(names=[self.name]).event())
            await client.write_event(AudioStart(rate=SAMPLE_RATE, width=2, channels=1).event())
            if self.problem:
                log.warning("wake word: the service at %s answers again", self.uri)
                self.problem = ""
            reader = asyncio.get_running_loop().create_task(self._read_stream(stream, client))
            while True:
                block = await stream.queue.get()
                if block is None:
                    with contextlib.suppress(Exception):
                        await asyncio.wait_for(client.write_event(AudioStop().event()), 2.0)
                    return
                if reader.done():
                    reader.result()  # its failure is this stream's
                for chunk in _chunks(block):
                    await asyncio.wait_for(client.write_event(chunk), self.timeout_s)
        except Exception as e:  # noqa: BLE001 - logged, and tried again later: never raised into the reader
            self._down(stream, e)
        finally:
            if reader is not None:
                if reader.done() and not reader.cancelled():
                    reader.exception()  # seen: the stream ended anyway
                reader.cancel()
            if client is not None:
                await _disconnect(client)

    async def _read_stream(self, stream: _Stream, client: AsyncClient) -> None:
        while True:
            event = await _read(client)
            if Detection.is_type(event.type):
                detection = Detection.from_event(event)
                ms = detection.timestamp if isinstance(detection.timestamp, int) else None
                name = detection.name if isinstance(detection.name, str) and detection.name else self.name
                at = ms * SAMPLE_RATE // 1000 if ms is not None else self._samples
                self._found.append((stream.generation, WakeDetection(name, 1.0, at)))
            elif Error.is_type(event.type):
                raise RemoteWakeError(f"the wake word service at {self.uri} refused: {_remote_error(event)}")

    def _down(self, stream: _Stream, error: Exception) -> None:
        message = f"{type(error).__name__}: {error}"
        if not self.problem:
            log.warning("wake word: the service at %s cannot be used (%s); trying again every %g s", self.uri,
                        message, self.retry_s)
        self.problem = message
        self._retry_at = time.monotonic() + self.retry_s
        if self._stream is stream:
            self._stream = None

