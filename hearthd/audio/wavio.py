"""Reading and writing WAV files as 16 kHz mono int16, the format every stage works in."""

from __future__ import annotations

import struct
import wave
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from ..errors import HearthdError
from .pcm import SAMPLE_RATE, mono16, resample

MIN_RATE, MAX_RATE = 8000, 192000  # sample rates a WAV input may have
MAX_INPUT_S = 300.0  # the default of audio.max_input_s
_MAX_CHUNKS = 64  # chunks looked at before the data chunk; more is not a WAV anyone recorded
_MAX_FMT_BYTES = 1024
_MAX_CHANNELS = 64
_PCM, _FLOAT, _EXTENSIBLE = 0x0001, 0x0003, 0xFFFE
# the tail every KSDATAFORMAT_SUBTYPE_* GUID shares; its first two bytes are the format tag (1 PCM, 3 float)
_GUID_TAIL = bytes.fromhex("000000001000800000aa00389b71")


class AudioFileError(HearthdError):
    """A file that is not a readable PCM WAV, or one refused before it is read (rate, length); `code` is stable."""

    code = "audio-file-invalid"

    def __init__(self, message: str, code: str = "audio-file-invalid") -> None:
        super().__init__(message, code)


@dataclass(frozen=True)
class WavHeader:
    """What the RIFF chunks before the samples say."""

    rate: int
    channels: int
    width: int  # bytes per sample
    float_samples: bool
    data_offset: int
    data_bytes: int  # declared (or, for a streamed file's placeholder size, what the file holds)
    available_bytes: int  # what the file holds after the data chunk's header (less when it is truncated)

    @property
    def frames(self) -> int:
        return self.data_bytes // (self.width * self.channels)


def _parse_fmt(path: str | Path, body: bytes) -> tuple[int, int, int, bool]:
    if len(body) < 16:
        raise AudioFileError(f"{path}: fmt chunk too short ({len(body)} bytes)")
    tag, channels, rate, _byte_rate, block_align, bits = struct.unpack("<HHIIHH", body[:16])
    if tag == _EXTENSIBLE:
        if len(body) < 40:
            raise AudioFileError(f"{path}: WAVE_FORMAT_EXTENSIBLE fmt chunk too short ({len(body)} bytes)")
        guid = body[24:40]
        if guid[2:] != _GUID_TAIL:
            raise AudioFileError(f"{path}: unsupported WAVE_FORMAT_EXTENSIBLE subformat {guid.hex()}")
        tag = struct.unpack("<H", guid[:2])[0]
    if tag not in (_PCM, _FLOAT):
        raise AudioFileError(f"{path}: not PCM audio (format tag 0x{tag:04x})")
    if not 1 <= channels <= _MAX_CHANNELS:
        raise AudioFileError(f"{path}: invalid header ({channels} channels)")
    width = (bits + 7) // 8
    if block_align and block_align != width * channels:  # the container size wins (e.g. 20-bit in 3 bytes)
        width = block_align // channels
    is_float = tag == _FLOAT
    if (is_float and width not in (4, 8)) or (not is_float and width not in (1, 2, 3, 4)):
        raise AudioFileError(f"{path}: unsupported sample width {bits} bits{' float' if is_float else ''}")
    return rate, channels, width, is_float


def read_header(path: str | Path, max_s: float = MAX_INPUT_S) -> WavHeader:
    """The RIFF header of a WAV file, checked (rate, length) before a sample is read or memory is allocated."""
    p = Path(path)
    try:
        if p.is_dir():
            raise AudioFileError(f"{path}: is a directory, not a WAV file")
        size = p.stat().st_size
        with p.open("rb") as f:
            riff = f.read(12)
            if len(riff) < 12 or riff[:4] != b"RIFF" or riff[8:12] != b"WAVE":
                raise AudioFileError(f"{path}: not a WAV file (no RIFF/WAVE header)")
            fmt: tuple[int, int, int, bool] | None = None
            for _ in range(_MAX_CHUNKS):
                head = f.read(8)
                if len(head) < 8:
                    raise AudioFileError(f"{path}: not a WAV file (no data chunk)")
                cid, csize = head[:4], struct.unpack("<I", head[4:])[0]
                if cid == b"fmt ":
                    body = f.read(min(csize, _MAX_FMT_BYTES))
                    fmt = _parse_fmt(path, body)
                    f.seek(csize - len(body) + (csize & 1), 1)
                elif cid == b"data":
                    if fmt is None:
                        raise AudioFileError(f"{path}: not a WAV file (data chunk before the fmt chunk)")
                    offset = f.tell()
                    available = max(0, size - offset)
                    # 0 and 0xFFFFFFFF are what a recorder that never went back to the header leaves there
                    data_bytes = available if csize in (0, 0xFFFFFFFF) else csize
                    break
                else:
                    f.seek(csize + (csize & 1), 1)
            else:
                raise AudioFileError(f"{path}: not a WAV file (no data chunk in the first {_MAX_CHUNKS} chunks)")
    except FileNotFoundError:
        raise AudioFileError(f"{path}: no such file") from None
    except PermissionError:
        raise AudioFileError(f"{path}: permission denied") from None
    except OSError as e:
        raise AudioFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    assert fmt is not None
    rate, channels, width, is_float = fmt
    if not MIN_RATE <= rate <= MAX_RATE:
        raise AudioFileError(f"{path}: sample rate {rate} Hz is outside {MIN_RATE}-{MAX_RATE} Hz")
    header = WavHeader(rate, channels, width, is_float, offset, data_bytes, min(data_bytes, available))
    if header.frames / rate > max_s:
        raise AudioFileError(f"{path}: {header.frames / rate:.1f} s of audio is more than audio.max_input_s "
                             f"({max_s:g} s)", "audio-file-too-long")
    return header


def _read_data(path: str | Path, header: WavHeader) -> bytes:
    """The data chunk's bytes as far as the file holds them (a truncated file gives fewer)."""
    with Path(path).open("rb") as f:
        f.seek(header.data_offset)
        return f.read(header.available_bytes)


def read_wav(path: str | Path, max_s: float = MAX_INPUT_S) -> np.ndarray:
    """Any PCM WAV (8/16/24/32-bit integer or 32/64-bit float, plain or WAVE_FORMAT_EXTENSIBLE, mono or
    multi-channel, 8-192 kHz, at most `max_s` seconds) as 16 kHz mono int16. A partial last frame is dropped."""
    header = read_header(path, max_s)
    try:
        raw = _read_data(path, header)
    except OSError as e:
        raise AudioFileError(f"{path}: cannot be read ({e.strerror or e})") from None
    width, channels = header.width, header.channels
    raw = raw[: len(raw) // (width * channels) * (width * channels)]  # whole frames only
    if header.float_samples:
        floats = np.frombuffer(raw, dtype="<f4" if width == 4 else "<f8")
        data = np.nan_to_num(floats.astype(np.float64), nan=0.0, posinf=1.0, neginf=-1.0) * 32768.0
        mono = np.clip(data.reshape(-1, channels).mean(axis=1), -32768, 32767).astype(np.int16)
    else:
        mono = mono16(raw, width, channels)
    return resample(mono, header.rate, SAMPLE_RATE)


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
