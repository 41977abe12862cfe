"""16 kHz mono int16, the format every stage works in: the rate, integer PCM made mono int16, and the resampler
that brings any other rate to it (WAV files, microphones, Wyoming streams, speakers)."""

from __future__ import annotations

import math

import numpy as np

SAMPLE_RATE = 16000


def mono16(raw: bytes, width: int, channels: int) -> np.ndarray:
    """Whole frames of little-endian PCM (8-bit unsigned, 16/24/32-bit signed) as mono int16."""
    data: np.ndarray
    if width == 1:
        data = (np.frombuffer(raw, dtype=np.uint8).astype(np.int32) - 128) * 256
    elif width == 2:
        data = np.frombuffer(raw, dtype="<i2").astype(np.int32)
    elif width == 3:
        b = np.frombuffer(raw, dtype=np.uint8).reshape(-1, 3).astype(np.int32)
        data = ((b[:, 0] << 8) | (b[:, 1] << 16) | (b[:, 2] << 24)) >> 16
    else:
        data = np.frombuffer(raw, dtype="<i4") >> 16
    if channels > 1:
        data = data.reshape(-1, channels).mean(axis=1)
    return np.clip(data, -32768, 32767).astype(np.int16)


class Resampler:
    """Streaming polyphase windowed-sinc resampler for mono audio.

    The filter history is carried from chunk to chunk, so feeding 30 ms blocks gives the same samples as feeding the
    whole recording at once: no clicks at block edges. Output sample n sits exactly at input time n * src / dst; it
    is emitted once the filter's look-ahead (half_width input samples, about 1 ms) has arrived.
    """

    def __init__(self, src_rate: int, dst_rate: int, zero_crossings: int = 12, rolloff: float = 0.92) -> None:
        if src_rate <= 0 or dst_rate <= 0:
            raise ValueError(f"sample rates must be positive, not {src_rate} -> {dst_rate}")
        g = math.gcd(src_rate, dst_rate)
        self.src_rate, self.dst_rate = src_rate, dst_rate
        self.up, self.down = dst_rate // g, src_rate // g
        # Cut below the lower Nyquist so downsampling does not fold hiss back into the speech band.
        cutoff = min(1.0, dst_rate / src_rate) * rolloff
        self.half_width = math.ceil(zero_crossings / cutoff)
        k = self.half_width
        # One row per output phase (the output's fractional position between input samples), taps over 2K inputs.
        frac = np.arange(self.up, dtype=np.float64)[:, None] / self.up
        tau = frac + (k - 1) - np.arange(2 * k, dtype=np.float64)[None, :]
        window = np.i0(8.0 * np.sqrt(np.clip(1.0 - (tau / k) ** 2, 0.0, None))) / np.i0(8.0)
        table = cutoff * np.sinc(cutoff * tau) * window
        self._table = table / table.sum(axis=1, keepdims=True)  # unity gain at DC on every phase
        self._offsets = np.arange(2 * k)
        self._buf = np.zeros(k, dtype=np.float64)  # silence before the first sample
        self._start = -k  # absolute input index of _buf[0]
        self._n = 0  # next output index

    def process(self, chunk: np.ndarray) -> np.ndarray:
        """Feed input, get every output sample that is now complete (int16 in gives int16 out, else float32)."""
        x = np.concatenate([self._buf, np.asarray(chunk, dtype=np.float64).reshape(-1)])
        k = self.half_width
        available = self._start + len(x) - 1 - k  # outputs may use inputs up to this index + K
        n_end = max(self._n, ((available + 1) * self.up - 1) // self.down + 1)
        pieces = []
        # Chunks bound the (outputs x taps) gather to a few MB even for a whole TTS sentence.
        for lo in range(self._n, n_end, 8192):
            ns = np.arange(lo, min(lo + 8192, n_end), dtype=np.int64)
            pos = ns * self.down
            first = pos // self.up - k + 1 - self._start
            windows = x[first[:, None] + self._offsets]
            pieces.append(np.einsum("ij,ij->i", windows, self._table[pos % self.up]))
        self._n = n_end
        keep_from = max(0, (self._n * self.down) // self.up - k + 1 - self._start)
        self._buf = x[keep_from:]
        self._start += keep_from
        out = np.concatenate(pieces) if pieces else np.zeros(0, dtype=np.float64)
        if np.asarray(chunk).dtype == np.int16:
            return np.clip(np.rint(out), -32768, 32767).astype(np.int16)
        return out.astype(np.float32)


def resample(audio: np.ndarray, src_rate: int, dst_rate: int) -> np.ndarray:
    """Resample mono audio (int16 stays int16, float becomes float32) to exactly len * dst / src samples, aligned."""
    if src_rate == dst_rate or len(audio) == 0:
        return audio
    data = np.asarray(audio)
    r = Resampler(src_rate, dst_rate)
    n_out = (len(data) * dst_rate + src_rate // 2) // src_rate
    # Trailing silence flushes the filter's look-ahead so the last samples come out too.
    out = r.process(np.concatenate([data, np.zeros(r.half_width + 2, dtype=data.dtype)]))
    return out[:n_out]
