"""Audio in and out: real-time WAV and memory stand-ins, resampling, device choice, and PortAudio on JACK if present."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd.audio.io import (
    AudioDeviceError,
    MemorySink,
    Resampler,
    SoundDeviceSink,
    SoundDeviceSource,
    WavSource,
    find_device,
    resample,
)
from hearthd.audio.wavio import write_wav

sd: Any = None
try:
    import sounddevice

    sd = sounddevice
except (ImportError, OSError):  # no PortAudio: the device tests skip, the stand-ins and resampling still run
    pass
needs_portaudio = pytest.mark.skipif(sd is None, reason="PortAudio (libportaudio2) is not installed")

BLOCK = 480  # 30 ms at 16 kHz


def tone(seconds: float, rate: int = 16000, freq: float = 440.0) -> np.ndarray:
    t = np.arange(int(seconds * rate)) / rate
    return (np.sin(2 * np.pi * freq * t) * 12000).astype(np.int16)


def peak_hz(audio: np.ndarray, rate: int) -> float:
    spectrum = np.abs(np.fft.rfft(audio.astype(np.float64) * np.hanning(len(audio))))
    return float(np.argmax(spectrum) * rate / len(audio))


async def read_all(source: WavSource) -> list[np.ndarray]:
    blocks = []
    while True:
        try:
            blocks.append(await source.read())
        except EOFError:
            return blocks


# --- WavSource -------------------------------------------------------------------------------------------------


async def test_wav_source_paces_at_real_time(tmp_path: Path) -> None:
    audio = tone(1.0)
    write_wav(tmp_path / "one.wav", audio)
    source = WavSource(tmp_path / "one.wav")
    await source.start()
    started = time.monotonic()
    blocks = await read_all(source)
    elapsed = time.monotonic() - started
    assert 0.8 < elapsed < 2.0  # behaves like a microphone: a second of audio takes about a second
    assert all(b.shape == (BLOCK,) and b.dtype == np.int16 for b in blocks)
    assert len(blocks) == -(-len(audio) // BLOCK)  # the last partial block is padded with silence
    assert np.array_equal(np.concatenate(blocks)[: len(audio)], audio)
    assert source.dropped == 0 and source.rate == 16000


async def test_wav_source_without_realtime_is_instant() -> None:
    audio = tone(3.0)
    source = WavSource(audio, realtime=False)
    started = time.monotonic()
    blocks = await read_all(source)
    assert time.monotonic() - started < 0.5
    assert np.array_equal(np.concatenate(blocks)[: len(audio)], audio)


async def test_slow_consumer_loses_audio_instead_of_slowing_capture() -> None:
    source = WavSource(tone(5.0), buffer_s=0.1)  # room for 3 blocks
    await source.start()
    started = asyncio.get_running_loop().time()
    consumed = 0
    for _ in range(2):
        await asyncio.sleep(0.5)
        for _ in range(3):  # what the buffer kept comes at once, with no waiting
            t = time.monotonic()
            consumed += len(await source.read())
            assert time.monotonic() - t < 0.02
    assert source.dropped > 20 * BLOCK
    # Captured (kept or lost) tracks the clock, not the consumer.
    captured = (consumed + source.dropped) / 16000
    elapsed = asyncio.get_running_loop().time() - started
    assert abs(captured - elapsed) < 0.1


async def test_append_adds_a_second_utterance() -> None:
    first, second, third = tone(0.15, freq=300), tone(0.21, freq=600), tone(0.09, freq=900)
    source = WavSource(first, tail_s=0.09)
    got = [await source.read() for _ in range(len(first) // BLOCK)]
    assert np.array_equal(np.concatenate(got), first)
    source.append(second)  # spoken now: follows at once, then the tail again
    rest = await read_all(source)
    assert np.array_equal(np.concatenate(rest)[: len(second)], second)
    assert len(rest) == (len(second) + 1440) // BLOCK
    # After the end, a later utterance starts when appended, not back when the source ran dry.
    await asyncio.sleep(0.2)
    source.append(third)
    await asyncio.sleep(0.1)
    again = await read_all(source)
    assert np.array_equal(np.concatenate(again)[: len(third)], third)
    assert source.dropped == 0


async def test_eof_after_the_tail_and_silence_for_ever() -> None:
    audio = tone(0.3125)  # 5000 samples: the last block is partly audio, partly tail
    blocks = await read_all(WavSource(audio, realtime=False, tail_s=0.3))
    assert len(blocks) == -(-(5000 + 4800) // BLOCK)
    assert not np.concatenate(blocks)[5000:].any()
    endless = WavSource(audio, realtime=False, tail_s=None)
    for _ in range(200):
        await endless.read()


# --- MemorySink ------------------------------------------------------------------------------------------------


async def test_memory_sink_records_a_full_play() -> None:
    sink = MemorySink()
    audio = tone(0.2, rate=22050)
    started = time.monotonic()
    assert await sink.play(audio, 22050) is True
    assert 0.15 < time.monotonic() - started < 1.0
    played, rate, completed = sink.played[0]
    assert np.array_equal(played, audio) and rate == 22050 and completed
    assert [kind for kind, _ in sink.events] == ["start", "end"]
    assert not sink.playing


async def test_memory_sink_stop_cuts_at_once_and_drops_the_queue() -> None:
    sink = MemorySink()
    audio = tone(1.0, rate=22050)
    first = asyncio.create_task(sink.play(audio, 22050))
    queued = asyncio.create_task(sink.play(tone(0.5), 16000))
    await asyncio.sleep(0.2)
    assert sink.playing
    cut_at = time.monotonic()
    sink.stop()
    assert await first is False
    assert time.monotonic() - cut_at < 0.05
    assert await queued is False
    assert len(sink.played) == 1  # the queued one never started
    played, _, completed = sink.played[0]
    assert not completed and 0.15 * 22050 < len(played) < 0.35 * 22050
    assert np.array_equal(played, audio[: len(played)])
    assert [kind for kind, _ in sink.events] == ["start", "stopped"]
    assert await sink.play(tone(0.05), 16000) is True  # a stop does not affect later plays


async def test_memory_sink_stop_from_another_thread() -> None:
    sink = MemorySink()
    task = asyncio.create_task(sink.play(tone(1.0), 16000))
    await asyncio.sleep(0.1)
    threading.Thread(target=sink.stop).start()
    assert await asyncio.wait_for(task, 0.2) is False


# --- resampling ------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("src,dst", [(16000, 48000), (48000, 16000), (22050, 48000), (44100, 16000)])
def test_resample_round_trip_keeps_pitch_and_length(src: int, dst: int) -> None:
    audio = tone(1.0, rate=src)
    there = resample(audio, src, dst)
    back = resample(there, dst, src)
    assert len(there) == dst and len(back) == src and there.dtype == np.int16
    assert abs(peak_hz(there, dst) - 440) < 2 and abs(peak_hz(back, src) - 440) < 2
    assert np.abs(back[200:-200].astype(int) - audio[200:-200]).max() < 50


def test_streaming_resampler_matches_the_whole_at_block_edges() -> None:
    audio = tone(0.5, rate=44100)
    whole = resample(audio, 44100, 16000)
    r = Resampler(44100, 16000)
    pieces = np.concatenate([r.process(audio[i:i + 1323]) for i in range(0, len(audio), 1323)])
    assert np.array_equal(pieces, whole[: len(pieces)])
    assert len(whole) - len(pieces) <= r.half_width * 16000 // 44100 + 1  # only the filter's look-ahead is held


def test_resample_removes_what_the_lower_rate_cannot_hold() -> None:
    out = resample(tone(0.5, rate=48000, freq=10000), 48000, 16000)  # would alias to 6 kHz
    assert np.sqrt(np.mean(out.astype(float) ** 2)) < 100


# --- PortAudio devices -----------------------------------------------------------------------------------------

FAKE_DEVICES = [
    {"name": "HDA Intel PCH: ALC257 Analog (hw:0,0)", "index": 0, "max_input_channels": 2,
     "max_output_channels": 2, "default_samplerate": 48000.0},
    {"name": "HDMI 0", "index": 1, "max_input_channels": 0, "max_output_channels": 8, "default_samplerate": 48000.0},
    {"name": "Blue Yeti USB Microphone", "index": 2, "max_input_channels": 1, "max_output_channels": 0,
     "default_samplerate": 48000.0},
]


def fake_query(devices: list[dict[str, Any]]) -> Any:
    def query_devices(device: Any = None, kind: Any = None) -> Any:
        if kind is not None:
            raise sd.PortAudioError("no default device")
        return devices if device is None else devices[device]

    return query_devices


@needs_portaudio
def test_no_device_at_all(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sd, "query_devices", fake_query([]))
    for opener in (SoundDeviceSource, SoundDeviceSink):
        with pytest.raises(AudioDeviceError) as e:
            opener()
        assert e.value.code == "audio-no-device"
        assert "no audio" in str(e.value)


@needs_portaudio
def test_device_choice_by_index_name_or_part(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sd, "query_devices", fake_query(FAKE_DEVICES))
    assert find_device(None, "input") == 0
    assert find_device("", "output") == 0
    assert find_device(2, "input") == find_device("2", "input") == 2
    assert find_device("Blue Yeti USB Microphone", "input") == 2
    assert find_device("yeti", "input") == 2
    assert find_device("hdmi", "output") == 1
    with pytest.raises(AudioDeviceError) as e:
        find_device("hdmi", "input")
    assert e.value.code == "audio-no-device" and "Blue Yeti USB Microphone" in str(e.value)
    with pytest.raises(AudioDeviceError):
        find_device(1, "input")


class FakeStream:
    """Stands in for sounddevice's streams: keeps the callback so the test plays PortAudio's thread."""

    def __init__(self, **kwargs: Any) -> None:
        self.kwargs = kwargs
        self.started = self.closed = False

    def start(self) -> None:
        self.started = True

    def stop(self) -> None:
        self.started = False

    def close(self) -> None:
        self.closed = True


class Status:
    def __init__(self, input_overflow: bool = False) -> None:
        self.input_overflow = input_overflow


@needs_portaudio
async def test_microphone_ring_resamples_and_counts_losses(monkeypatch: pytest.MonkeyPatch) -> None:
    streams: list[FakeStream] = []

    def input_stream(**kwargs: Any) -> FakeStream:
        streams.append(FakeStream(**kwargs))
        return streams[-1]

    def check_input_settings(samplerate: int, **_: Any) -> None:
        if samplerate != 48000:
            raise sd.PortAudioError("Invalid sample rate")

    monkeypatch.setattr(sd, "query_devices", fake_query(FAKE_DEVICES))
    monkeypatch.setattr(sd, "check_input_settings", check_input_settings)
    monkeypatch.setattr(sd, "InputStream", input_stream)
    source = SoundDeviceSource("yeti", buffer_s=0.5)
    assert (source.index, source.device_rate) == (2, 48000)
    await source.start()
    callback = streams[0].kwargs["callback"]
    captured = tone(1.0, rate=48000)[:, None]

    def device() -> None:  # PortAudio's thread: 10 ms buffers, a little faster than real time
        for i in range(0, 24000, 480):
            callback(captured[i:i + 480], 480, None, Status())
            time.sleep(0.002)

    thread = threading.Thread(target=device)
    thread.start()
    blocks = [await asyncio.wait_for(source.read(), 2.0) for _ in range(16)]
    thread.join()
    assert all(b.shape == (BLOCK,) and b.dtype == np.int16 for b in blocks)
    assert abs(peak_hz(np.concatenate(blocks), 16000) - 440) < 5
    assert source.dropped == 0
    await source.stop()
    assert streams[0].closed
    with pytest.raises(EOFError):  # what was captured is still handed out, then the end
        while True:
            await source.read()
    # Nobody reads: the 0.5 s ring takes 24000 device samples, the newest are lost and counted (in 16 kHz samples).
    await source.start()
    callback = streams[1].kwargs["callback"]
    for i in range(0, 24480, 480):
        callback(captured[i % 48000:i % 48000 + 480], 480, None, Status())
    assert source.dropped == 480 // 3 and source.overflowed == 0  # the ring's loss: hearthd's
    callback(captured[:480], 480, None, Status(input_overflow=True))  # lost before it, and no room for it
    assert source.dropped == 3 * 480 // 3 and source.overflowed == 480 // 3  # the device's part of it
    first = await source.read()
    assert np.array_equal(first, resample(captured[:, 0], 48000, 16000)[:BLOCK])  # the oldest audio was kept
    await source.stop()


# --- a real PortAudio stream on a dummy JACK server ------------------------------------------------------------


@pytest.fixture(params=[16000, 48000], ids=["16k", "48k-resampled"])
def jack_device(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[int]:
    """A JACK server with the dummy driver (no sound card needed) and PortAudio's index for it."""
    if sd is None:
        pytest.skip("PortAudio (libportaudio2) is not installed")
    jackd = shutil.which("jackd")
    if jackd is None:
        pytest.skip("jackd is not installed (apt-get install jackd2)")
    if not hasattr(sd, "_terminate") or not hasattr(sd, "_initialize"):
        pytest.skip("this sounddevice cannot re-initialise PortAudio")
    server = f"hearthd-test-{os.getpid()}-{request.param}"
    monkeypatch.setenv("JACK_DEFAULT_SERVER", server)
    monkeypatch.setenv("JACK_NO_START_SERVER", "1")  # never let libjack start a server of its own
    log = tmp_path / "jackd.log"
    with log.open("wb") as out:
        proc = subprocess.Popen([jackd, "-n", server, "--no-realtime", "-d", "dummy", "-r", str(request.param),
                                 "-p", "512"], stdout=out, stderr=subprocess.STDOUT)
    try:
        index = None
        deadline = time.monotonic() + 5  # it takes well under a second; PortAudio without JACK never lists it
        while index is None and time.monotonic() < deadline and proc.poll() is None:
            time.sleep(0.2)
            sd._terminate()
            sd._initialize()
            jack = [h for h in sd.query_hostapis() if "JACK" in h["name"]]
            if jack and jack[0]["devices"]:
                index = jack[0]["devices"][0]
        if index is None:
            if proc.poll() is not None:
                pytest.skip(f"jackd did not start: {log.read_text(errors='replace')[-300:]}")
            if not any("JACK" in h["name"] for h in sd.query_hostapis()):
                pytest.skip("this PortAudio has no JACK support")
            pytest.fail("PortAudio did not list the JACK device in time")
        yield index
    finally:
        sd._terminate()  # PortAudio's JACK client goes before its server does
        proc.terminate()
        try:
            proc.wait(5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        monkeypatch.undo()
        sd._initialize()


@needs_portaudio
async def test_jack_microphone_and_speaker(jack_device: int) -> None:
    source = SoundDeviceSource(jack_device)
    await source.start()
    try:
        blocks = [await asyncio.wait_for(source.read(), 2.0) for _ in range(17)]  # about half a second
    finally:
        await source.stop()
    assert all(b.shape == (BLOCK,) and b.dtype == np.int16 for b in blocks)
    # hearthd's ring lost nothing; what JACK itself overran is counted, not hidden (its dummy driver runs without
    # realtime scheduling here, and misses its period when every core is busy: that loss is the server's)
    assert source.dropped == source.overflowed
    sink = SoundDeviceSink(jack_device)
    assert await asyncio.wait_for(sink.play(tone(0.2, rate=22050), 22050), 3.0) is True
    task = asyncio.create_task(sink.play(tone(3.0), 16000))
    await asyncio.sleep(0.2)
    assert sink.playing
    cut_at = time.monotonic()
    sink.stop()
    assert await asyncio.wait_for(task, 2.0) is False
    assert time.monotonic() - cut_at < 0.2 and not sink.playing
