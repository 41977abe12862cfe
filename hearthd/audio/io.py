"""Audio in and out: microphones and speakers through PortAudio, and WAV/memory stand-ins that keep real time.

Every source hands out 16 kHz mono int16 blocks; every sink takes mono audio at any rate and resamples itself.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections import deque
from pathlib import Path
from typing import Any, Literal, Protocol

import numpy as np

from ..config import AudioConfig
from ..errors import HearthdError
from .pcm import SAMPLE_RATE, Resampler, resample
from .wavio import read_wav

Kind = Literal["input", "output"]


class AudioDeviceError(HearthdError):
    """A sound device that is missing, cannot be opened or stopped working; the message says what there is."""

    code = "audio-no-device"

    def __init__(self, message: str, code: str = "audio-no-device") -> None:
        super().__init__(message, code)


class AudioSource(Protocol):
    """Where the assistant listens: 16 kHz mono int16 blocks, captured at real time whether read or not."""

    rate: int
    dropped: int

    async def start(self) -> None: ...

    async def stop(self) -> None: ...

    async def read(self) -> np.ndarray: ...


class AudioSink(Protocol):
    """Where the assistant speaks; stop() is barge-in."""

    async def play(self, audio: np.ndarray, rate: int) -> bool: ...

    def stop(self) -> None: ...

    @property
    def playing(self) -> bool: ...


# --- conversion and resampling ---------------------------------------------------------------------------------


def as_int16(audio: np.ndarray) -> np.ndarray:
    """Mono int16 from int16, other integers (clipped) or float in [-1, 1]; multi-channel frames are averaged."""
    data = np.asarray(audio)
    if data.ndim > 1:
        data = data.reshape(len(data), -1)
        data = data[:, 0] if data.shape[1] == 1 else data.mean(axis=1)
    if data.dtype == np.int16:
        return data
    if np.issubdtype(data.dtype, np.floating):
        return np.clip(np.rint(data * 32767.0), -32768, 32767).astype(np.int16)
    return np.clip(data, -32768, 32767).astype(np.int16)


# --- PortAudio devices -----------------------------------------------------------------------------------------


def _sounddevice() -> Any:
    """The sounddevice module, imported late: a machine without PortAudio can still run file mode."""
    try:
        import sounddevice as sd
    except OSError as e:
        raise AudioDeviceError(f"PortAudio is not available ({e}); apt-get install libportaudio2") from None
    return sd


def list_devices(kind: Kind) -> list[tuple[int, str]]:
    """(index, name) of every device PortAudio offers for input or output."""
    sd = _sounddevice()
    try:
        devices = list(sd.query_devices())
    except sd.PortAudioError as e:
        raise AudioDeviceError(f"cannot list sound devices: {e}") from None
    key = f"max_{kind}_channels"
    return [(i, str(d["name"])) for i, d in enumerate(devices) if d.get(key, 0) > 0]


def _default_device(sd: Any, kind: Kind) -> int | None:
    """PortAudio's default device for `kind`, or None when it has none (or the device list is faked)."""
    try:
        info = sd.query_devices(kind=kind)
    except Exception:
        return None
    return int(info["index"]) if isinstance(info, dict) and "index" in info else None


def find_device(device: str | int | None, kind: Kind) -> int:
    """The device index for a config value: None/"" = the default, an index, an exact name or a name substring."""
    sd = _sounddevice()
    usable = list_devices(kind)
    what = "microphone" if kind == "input" else "speaker"
    if not usable:
        raise AudioDeviceError(f"no audio {kind} device found (PortAudio lists none with {kind} channels); "
                               f"connect a {what} or start PipeWire/PulseAudio; file mode (--input/--output) "
                               f"still works")
    names = ", ".join(f"{i}: {name!r}" for i, name in usable)
    if isinstance(device, str):
        device = device.strip()
        device = int(device) if device.isdigit() else (device or None)
    if device is None:
        default = _default_device(sd, kind)
        return next((i for i, _ in usable if i == default), usable[0][0])
    if isinstance(device, int):
        if any(i == device for i, _ in usable):
            return device
        raise AudioDeviceError(f"audio {kind} device {device} does not exist or has no {kind} channels; "
                               f"{kind} devices: {names}")
    for i, name in usable:
        if name == device:
            return i
    for i, name in usable:
        if device.lower() in name.lower():
            return i
    raise AudioDeviceError(f"no audio {kind} device matches {device!r}; {kind} devices: {names}")


def _settings(sd: Any, index: int, kind: Kind, preferred: int) -> tuple[int, int]:
    """(rate, channels) the device accepts: the preferred rate if it can, else its own; mono if it can, else 2."""
    info = sd.query_devices(index)
    native = int(info["default_samplerate"])
    check = sd.check_input_settings if kind == "input" else sd.check_output_settings
    channels_options = [1] + ([2] if info[f"max_{kind}_channels"] >= 2 else [])
    for channels in channels_options:
        for rate in dict.fromkeys((preferred, native)):
            try:
                check(device=index, channels=channels, dtype="int16", samplerate=rate)
            except Exception:  # PortAudioError or ValueError: not this combination
                continue
            return rate, channels
    return native, 1  # let opening the stream say what is wrong


def _open_error(sd: Any, kind: Kind, index: int, e: Exception) -> AudioDeviceError:
    names = ", ".join(f"{i}: {name!r}" for i, name in list_devices(kind))
    try:
        name = sd.query_devices(index)["name"]
    except Exception:
        name = "?"
    return AudioDeviceError(f"cannot open audio {kind} device {index} ({name!r}): {e}; {kind} devices: {names}")


class SoundDeviceSource:
    """A microphone through PortAudio.

    The PortAudio callback only copies into a preallocated ring and wakes the loop; read() takes from the ring and
    resamples to 16 kHz when the device cannot capture at 16 kHz itself. When the ring is full (the loop is far
    behind) the newest audio is lost, as in a hardware overrun; that and PortAudio's own input overflows are counted
    in `dropped`, in 16 kHz samples (the overflows alone also in `overflowed`: the device's loss, not the ring's).
    """

    STALL_S = 5.0  # a running microphone delivers every few ms; this much silence from PortAudio is a dead device

    def __init__(self, device: str | int | None = None, block_ms: int = 30, buffer_s: float = 30.0) -> None:
        self._sd = _sounddevice()
        self.index = find_device(device, "input")
        self.name = str(self._sd.query_devices(self.index)["name"])
        self.device_rate, self.channels = _settings(self._sd, self.index, "input", SAMPLE_RATE)
        self.rate = SAMPLE_RATE
        self.dropped = 0
        self.block = SAMPLE_RATE * block_ms // 1000
        self._ring = np.zeros(max(1, int(buffer_s * self.device_rate)), dtype=np.int16)
        self._lock = threading.Lock()
        self._head = 0  # ring index of the oldest unread sample
        self._count = 0  # unread samples in the ring
        self._lost = 0  # device samples lost, converted into `dropped`
        self.overflowed = 0  # of `dropped`, what the device itself reported lost (an overrun before the ring)
        self._overflows = 0  # device samples PortAudio reported lost, converted into `overflowed`
        self._pending = np.zeros(0, dtype=np.int16)  # 16 kHz samples not yet handed out as a whole block
        self._resampler: Resampler | None = None
        self._stream: Any = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._wake = asyncio.Event()
        self._running = False
        self._lost_device = False

    async def start(self) -> None:
        if self._stream is not None:
            return
        self._loop = asyncio.get_running_loop()
        self._wake = asyncio.Event()
        self._head = self._count = 0
        self._pending = np.zeros(0, dtype=np.int16)
        self._resampler = Resampler(self.device_rate, SAMPLE_RATE) if self.device_rate != SAMPLE_RATE else None
        self._lost_device = False
        sd = self._sd
        try:
            stream = sd.InputStream(device=self.index, samplerate=self.device_rate, channels=self.channels,
                                    dtype="int16", callback=self._callback, finished_callback=self._finished)
            stream.start()
        except (sd.PortAudioError, ValueError) as e:
            raise _open_error(sd, "input", self.index, e) from None
        self._stream = stream
        self._running = True

    async def stop(self) -> None:
        stream, self._stream = self._stream, None
        self._running = False
        if stream is not None:
            # Pa_StopStream waits for the callback to return; off the loop so reads elsewhere are not held up.
            await asyncio.to_thread(_close_stream, stream)
        self._wake.set()

    def _callback(self, indata: np.ndarray, frames: int, time: Any, status: Any) -> None:
        """PortAudio's thread: copy into the ring and wake the loop, nothing that can block or allocate much."""
        ring = self._ring
        size = len(ring)
        with self._lock:
            n = min(frames, size - self._count)
            w = (self._head + self._count) % size
            first = min(n, size - w)
            ring[w:w + first] = indata[:first, 0]
            ring[:n - first] = indata[first:n, 0]
            self._count += n
            # An overflow loses an unknown amount before this buffer; one buffer's worth is the honest minimum.
            overflow = frames if status.input_overflow else 0
            lost = overflow + frames - n
        if lost:
            self._lost += lost
            self._overflows += overflow
            self.dropped = self._lost * SAMPLE_RATE // self.device_rate
            self.overflowed = self._overflows * SAMPLE_RATE // self.device_rate
        self._notify()

    def _finished(self) -> None:
        """PortAudio's thread, when the stream stops: by stop(), or by itself when the device went away."""
        if self._running:
            self._lost_device = True
        self._notify()

    def _notify(self) -> None:
        loop = self._loop
        if loop is None:
            return
        with contextlib.suppress(RuntimeError):  # the loop closed before the stream did
            loop.call_soon_threadsafe(self._wake.set)

    def _take(self) -> np.ndarray:
        """Everything captured so far, oldest first, and the ring emptied."""
        with self._lock:
            n, h, size = self._count, self._head, len(self._ring)
            out = np.concatenate([self._ring[h:min(h + n, size)], self._ring[:max(0, h + n - size)]])
            self._head = (h + n) % size
            self._count = 0
        return out

    async def read(self) -> np.ndarray:
        while len(self._pending) < self.block:
            self._wake.clear()  # before taking, so a callback after the take still wakes us
            chunk = self._take()
            if len(chunk):
                if self._resampler is not None:
                    chunk = self._resampler.process(chunk)
                self._pending = np.concatenate([self._pending, chunk])
                continue
            if self._lost_device:
                raise AudioDeviceError(f"audio input device {self.name!r} stopped delivering audio",
                                       code="audio-device-lost")
            if not self._running:
                raise EOFError("the microphone is stopped")
            try:
                await asyncio.wait_for(self._wake.wait(), self.STALL_S)
            except TimeoutError:
                raise AudioDeviceError(f"no audio from input device {self.name!r} for {self.STALL_S:g} s",
                                       code="audio-device-lost") from None
        block, self._pending = self._pending[:self.block], self._pending[self.block:]
        return block


def _close_stream(stream: Any) -> None:
    try:
        stream.stop()
    finally:
        stream.close()


class _Playback:
    """One buffer being played; its callback runs on PortAudio's thread."""

    def __init__(self, sd: Any, data: np.ndarray, loop: asyncio.AbstractEventLoop) -> None:
        self.sd = sd
        self.data = data
        self.pos = 0
        self.cut = False
        self.ended = False
        self.done = asyncio.Event()
        self.loop = loop

    def callback(self, outdata: np.ndarray, frames: int, time: Any, status: Any) -> None:
        if self.cut:
            outdata.fill(0)
            raise self.sd.CallbackAbort  # drop what the device still buffers, too
        chunk = self.data[self.pos:self.pos + frames]
        n = len(chunk)
        outdata[:n] = chunk[:, None]  # the same samples on every channel
        self.pos += n
        if n < frames:
            outdata[n:] = 0
            raise self.sd.CallbackStop  # PortAudio plays out its buffers, then calls on_finished()

    def on_finished(self) -> None:
        self.ended = True
        self.wake()

    def wake(self) -> None:
        with contextlib.suppress(RuntimeError):  # the loop is gone; nobody is waiting
            self.loop.call_soon_threadsafe(self.done.set)


class SoundDeviceSink:
    """A speaker through PortAudio: one output stream per play(), pulled by a callback, cut at once by stop()."""

    SLACK_S = 5.0  # beyond the audio's own length; a device that takes longer has hung

    def __init__(self, device: str | int | None = None) -> None:
        self._sd = _sounddevice()
        self.index = find_device(device, "output")
        self.name = str(self._sd.query_devices(self.index)["name"])
        self._rates: dict[int, tuple[int, int]] = {}
        self._order = asyncio.Lock()  # plays queue behind each other
        self._generation = 0  # bumped by stop(): queued plays from before it are dropped
        self._current: _Playback | None = None

    @property
    def playing(self) -> bool:
        return self._current is not None

    def stop(self) -> None:
        """Cut the current playback and drop queued ones; a plain flag and a thread-safe wake, so any thread may."""
        self._generation += 1
        current = self._current
        if current is not None and not current.ended:
            current.cut = True
            current.wake()

    async def play(self, audio: np.ndarray, rate: int) -> bool:
        generation = self._generation
        async with self._order:
            if generation != self._generation:
                return False
            data = as_int16(audio)
            if len(data) == 0:
                return True
            sd = self._sd
            if rate not in self._rates:
                self._rates[rate] = _settings(sd, self.index, "output", rate)
            device_rate, channels = self._rates[rate]
            data = resample(data, rate, device_rate)
            playback = _Playback(sd, data, asyncio.get_running_loop())
            self._current = playback  # before the stream runs, so a stop() from another thread already counts
            try:
                stream = sd.OutputStream(device=self.index, samplerate=device_rate, channels=channels, dtype="int16",
                                         callback=playback.callback, finished_callback=playback.on_finished)
                stream.start()
            except (sd.PortAudioError, ValueError) as e:
                self._current = None
                raise _open_error(sd, "output", self.index, e) from None
            try:
                await asyncio.wait_for(playback.done.wait(), len(data) / device_rate + self.SLACK_S)
            except TimeoutError:
                playback.cut = True
                raise AudioDeviceError(f"audio output device {self.name!r} stopped playing",
                                       code="audio-device-lost") from None
            finally:
                self._current = None
                try:
                    if playback.cut or not playback.ended:
                        stream.abort()  # barge-in or cancellation: silence now, not after the device's buffer
                    stream.close()
                except sd.PortAudioError:
                    pass
            return not playback.cut


# --- stand-ins for tests and file mode -------------------------------------------------------------------------


class WavSource:
    """A WAV file (or int16 array at 16 kHz) behaving like a microphone.

    In real time, block k counts as captured at start + (k + 1) * block_ms whether or not anyone reads it: captured
    blocks wait in a bounded buffer, and blocks captured while it is full are lost and counted in `dropped` (16 kHz
    samples), like a hardware overrun. So a slow consumer loses audio instead of slowing the "microphone" down.
    After the audio come `tail_s` seconds of silence (None: silence for ever), then read() raises EOFError.
    """

    def __init__(self, path_or_array: str | Path | np.ndarray, realtime: bool = True, block_ms: int = 30,
                 tail_s: float | None = 0.0, buffer_s: float = 30.0) -> None:
        self.rate = SAMPLE_RATE
        self.dropped = 0
        self.realtime = realtime
        self.block = SAMPLE_RATE * block_ms // 1000
        self._block_s = self.block / SAMPLE_RATE
        audio = read_wav(path_or_array) if isinstance(path_or_array, str | Path) else as_int16(path_or_array)
        self._queued = audio.copy()  # audio not yet captured
        self._tail = None if tail_s is None else round(tail_s * SAMPLE_RATE)
        self._silence_left = self._tail
        self._buffer: deque[np.ndarray] = deque()
        self._max_blocks = max(1, int(buffer_s / self._block_s))
        self._t0: float | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._captured = 0  # blocks whose capture time has passed, kept or lost

    async def start(self) -> None:
        if self._t0 is None:
            self._loop = asyncio.get_running_loop()
            self._t0 = self._loop.time()
            self._captured = 0

    async def stop(self) -> None:
        self._t0 = None
        self._buffer.clear()

    def append(self, audio: np.ndarray) -> None:
        """Someone speaks again: this audio is heard from now on (after any still queued), then the tail again."""
        if self.realtime and self._t0 is not None and self._loop is not None:
            # Catch up to now first, so the new audio starts now and not back when the source ran dry.
            self._capture(self._loop.time())
        self._queued = np.concatenate([self._queued, as_int16(audio)])
        self._silence_left = self._tail

    def _exhausted(self) -> bool:
        return len(self._queued) == 0 and self._silence_left == 0

    def _next_block(self) -> np.ndarray:
        out = np.zeros(self.block, dtype=np.int16)
        take, self._queued = self._queued[:self.block], self._queued[self.block:]
        out[:len(take)] = take
        short = self.block - len(take)
        if short and self._silence_left is not None:
            self._silence_left = max(0, self._silence_left - short)
        return out

    def _capture(self, now: float) -> None:
        """Record every block whose capture time has passed."""
        assert self._t0 is not None
        due = int((now - self._t0) / self._block_s + 1e-9)
        while self._captured < due:
            if self._exhausted():
                self._captured = due  # time passes with nothing to hear; an append() starts from now
                return
            block = self._next_block()
            self._captured += 1
            if len(self._buffer) < self._max_blocks:
                self._buffer.append(block)
            else:
                self.dropped += self.block

    async def read(self) -> np.ndarray:
        await self.start()
        assert self._t0 is not None
        if not self.realtime:
            if self._exhausted():
                raise EOFError("end of the recording")
            await asyncio.sleep(0)  # a read is still a scheduling point, as with a microphone
            return self._next_block()
        loop = asyncio.get_running_loop()
        while True:
            self._capture(loop.time())
            if self._buffer:
                return self._buffer.popleft()
            if self._exhausted():
                raise EOFError("end of the recording")
            await asyncio.sleep(max(0.0, self._t0 + (self._captured + 1) * self._block_s - loop.time()))


class MemorySink:
    """A speaker for tests: keeps what was played and when, pacing at real time so barge-in can cut it.

    `played` holds (int16 audio actually played, rate, completed); `events` holds (kind, loop time) with kind
    "start", "end", "stopped" or "cancelled".
    """

    STEP_S = 0.01  # pacing step: stop() takes effect within this

    def __init__(self, realtime: bool = True) -> None:
        self.realtime = realtime
        self.played: list[tuple[np.ndarray, int, bool]] = []
        self.events: list[tuple[str, float]] = []
        self._order = asyncio.Lock()
        self._generation = 0
        self._cut = False
        self._playing = False

    @property
    def playing(self) -> bool:
        return self._playing

    def stop(self) -> None:
        self._generation += 1
        if self._playing:
            self._cut = True

    async def play(self, audio: np.ndarray, rate: int) -> bool:
        generation = self._generation
        async with self._order:
            if generation != self._generation:
                return False
            data = as_int16(audio).copy()
            loop = asyncio.get_running_loop()
            start = loop.time()
            self.events.append(("start", start))
            self._cut, self._playing = False, True
            deadline = start + len(data) / rate
            try:
                if self.realtime:
                    while not self._cut and (now := loop.time()) < deadline:
                        await asyncio.sleep(min(self.STEP_S, deadline - now))
                else:
                    await asyncio.sleep(0)
            except asyncio.CancelledError:
                self._record(data, rate, start, loop.time(), "cancelled")
                raise
            finally:
                self._playing = False
            if self._cut:
                self._record(data, rate, start, loop.time(), "stopped")
                return False
            self.played.append((data, rate, True))
            self.events.append(("end", loop.time()))
            return True

    def _record(self, data: np.ndarray, rate: int, start: float, now: float, kind: str) -> None:
        heard = min(len(data), int((now - start) * rate)) if self.realtime else 0
        self.played.append((data[:heard], rate, False))
        self.events.append((kind, now))


def _device_setting(value: str) -> str | int | None:
    value = value.strip()
    return int(value) if value.isdigit() else (value or None)


def open_source(cfg: AudioConfig) -> SoundDeviceSource:
    """The configured microphone (audio.input_device: empty = default, an index, or a name or part of one)."""
    return SoundDeviceSource(_device_setting(cfg.input_device))


def open_sink(cfg: AudioConfig) -> SoundDeviceSink:
    """The configured speaker (audio.output_device, chosen like the input)."""
    return SoundDeviceSink(_device_setting(cfg.output_device))


class VolumeSink:
    """Any sink at `volume` percent of the voice's level (Home Assistant's Volume control): the audio is scaled
    before it is handed on, so it works the same on every sink; 100 passes the samples through untouched."""

    def __init__(self, sink: AudioSink, volume: int = 100) -> None:
        self.sink = sink
        self.volume = volume

    @property
    def playing(self) -> bool:
        return self.sink.playing

    def stop(self) -> None:
        self.sink.stop()

    async def play(self, audio: np.ndarray, rate: int) -> bool:
        if self.volume < 100:
            scaled = as_int16(audio).astype(np.float32) * (max(0, self.volume) / 100.0)
            audio = np.rint(scaled).astype(np.int16)
        return await self.sink.play(audio, rate)

    def __getattr__(self, name: str) -> object:  # what a particular sink has besides the Protocol (tests read it)
        if name == "sink":
            raise AttributeError(name)
        return getattr(self.sink, name)
