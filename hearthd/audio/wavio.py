"""Reading and writing WAV files as 16 kHz mono int16, the format every stage works in."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np

SAMPLE_RATE = 16000


class AudioFileError(Exception):
    """A file that is not a readable PCM WAV."""

    code = "audio-file-invalid"


def resample(audio: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Linear-interpolation resampling of float or int16 mono audio (good enough for speech at 16 kHz)."""
    if src_rate == dst_rate or len(audio) == 0:
        return audio
    duration = len(audio) / src_rate
    n_out = max(1, round(duration * dst_rate))
    x_old = np.linspace(0.0, duration, num=len(audio), endpoint=False)
    x_new = np.linspace(0.0, duration, num=n_out, endpoint=False)
    out = np.interp(x_new, x_old, audio.astype(np.float64))
    return out.astype(audio.dtype) if audio.dtype == np.int16 else out.astype(np.float32)


def read_wav(path: str | Path) -> np.ndarray:
    """Any PCM WAV (8/16/24/32-bit, mono or multi-channel, any rate) as 16 kHz mono int16."""
    try:
        with wave.open(str(path), "rb") as w:
            rate, channels, width, n = w.getframerate(), w.getnchannels(), w.getsampwidth(), w.getnframes()
            raw = w.readframes(n)
    except FileNotFoundError:
        raise AudioFileError(f"{path}: no such file") from None
    except (wave.Error, EOFError) as e:
        raise AudioFileError(f"{path}: not a PCM WAV file ({e})") from None
    if rate <= 0 or channels <= 0:
        raise AudioFileError(f"{path}: invalid header (rate {rate}, channels {channels})")
    if width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.int32) - 128) * 256
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.int32)
    elif width == 3:
        b = np.frombuffer(raw[: len(raw) // 3 * 3], dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        data = ((b[:, 0] << 8) | (b[:, 1] << 16) | (b[:, 2] << 24)) >> 16
    elif width == 4:
        data = np.frombuffer(raw, dtype="<i4") >> 16
    else:
        raise AudioFileError(f"{path}: unsupported sample width {width * 8} bits")
    usable = len(data) // channels * channels
    mono = data[:usable].reshape(-1, channels).mean(axis=1)
    mono16 = np.clip(mono, -32768, 32767).astype(np.int16)
    return resample(mono16, rate, SAMPLE_RATE)


def write_wav(path: str | Path, audio: np.ndarray, rate: int = SAMPLE_RATE) -> None:
    """Write mono int16 audio."""
    data = np.asarray(audio)
    if data.dtype != np.int16:
        data = np.clip(data * 32767.0, -32768, 32767).astype(np.int16)
    with wave.open(str(path), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(data.tobytes())
