"""Hostile WAV inputs (issue 14, item 5): odd but valid files decode, bad ones are refused with a typed error
before any sample is read or memory for them is allocated."""

from __future__ import annotations

import json
import struct
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from hearthd.audio import wavio
from hearthd.audio.wavio import AudioFileError, read_header, read_wav

PCM_GUID = struct.pack("<H", 1) + bytes.fromhex("000000001000800000aa00389b71")
FLOAT_GUID = struct.pack("<H", 3) + bytes.fromhex("000000001000800000aa00389b71")


def _fmt(tag: int, channels: int, rate: int, bits: int, guid: bytes | None = None) -> bytes:
    align = channels * bits // 8
    body = struct.pack("<HHIIHH", tag, channels, rate, rate * align, align, bits)
    if guid is not None:
        body += struct.pack("<HHI", 22, bits, 0x4 if channels == 1 else 0x3) + guid
    return b"fmt " + struct.pack("<I", len(body)) + body


def wav_bytes(samples: bytes, rate: int = 16000, channels: int = 1, bits: int = 16, tag: int = 1,
              guid: bytes | None = None, declared: int | None = None, extra: bytes = b"") -> bytes:
    """A RIFF/WAVE file; `declared` is the data chunk's size as the header claims it (default: the real one)."""
    size = len(samples) if declared is None else declared
    body = b"WAVE" + _fmt(tag, channels, rate, bits, guid) + extra + b"data" + struct.pack("<I", size) + samples
    return b"RIFF" + struct.pack("<I", min(len(body), 0xFFFFFFFF)) + body


def _samples(n: int = 1600) -> np.ndarray:
    return (np.random.default_rng(7).standard_normal(n) * 3000).astype("<i2")


def test_extensible_pcm_decodes_like_the_plain_file(tmp_path: Path) -> None:
    data = _samples()
    plain, ext = tmp_path / "plain.wav", tmp_path / "ext.wav"
    plain.write_bytes(wav_bytes(data.tobytes()))
    ext.write_bytes(wav_bytes(data.tobytes(), tag=0xFFFE, guid=PCM_GUID))
    assert np.array_equal(read_wav(ext), read_wav(plain))
    assert np.array_equal(read_wav(ext), data)


def test_extensible_and_plain_float32_decode(tmp_path: Path) -> None:
    data = _samples()
    floats = (data.astype(np.float32) / 32768.0).astype("<f4").tobytes()
    for name, kwargs in (("f.wav", {"tag": 3}), ("fx.wav", {"tag": 0xFFFE, "guid": FLOAT_GUID})):
        path = tmp_path / name
        path.write_bytes(wav_bytes(floats, bits=32, **kwargs))  # type: ignore[arg-type]
        assert np.abs(read_wav(path).astype(np.int32) - data).max() <= 1


def test_unknown_chunks_before_data_are_skipped(tmp_path: Path) -> None:
    data = _samples()
    path = tmp_path / "list.wav"
    path.write_bytes(wav_bytes(data.tobytes(), extra=b"LIST" + struct.pack("<I", 5) + b"abcde\x00"))  # odd: padded
    assert np.array_equal(read_wav(path), data)


def test_extensible_with_a_non_pcm_subformat_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "odd.wav"
    path.write_bytes(wav_bytes(_samples().tobytes(), tag=0xFFFE, guid=bytes(16)))
    with pytest.raises(AudioFileError, match="subformat") as e:
        read_wav(path)
    assert e.value.code == "audio-file-invalid"


def test_truncated_mid_sample_drops_the_partial_frame(tmp_path: Path) -> None:
    data = _samples()
    mono, stereo = tmp_path / "mono.wav", tmp_path / "stereo.wav"
    mono.write_bytes(wav_bytes(data.tobytes())[:-1])  # the header still declares the full size
    assert np.array_equal(read_wav(mono), data[:-1])
    pairs = np.repeat(data, 2)
    stereo.write_bytes(wav_bytes(pairs.tobytes(), channels=2)[:-3])  # the last frame keeps 1 of its 4 bytes
    assert np.array_equal(read_wav(stereo), data[:-1])


@pytest.mark.parametrize("rate", [1, 7999, 192001, 10_000_000])
def test_rate_outside_8_to_192_khz_is_refused_before_the_data_is_read(tmp_path: Path, rate: int,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    def no_reading(*_: object) -> bytes:
        raise AssertionError("the data chunk was read")

    monkeypatch.setattr(wavio, "_read_data", no_reading)
    path = tmp_path / "rate.wav"
    # 20 kB declared, far less present: a decoder that read first would see a short file, not this error
    path.write_bytes(wav_bytes(b"\x00\x00" * 100, rate=rate, declared=20_000))
    with pytest.raises(AudioFileError, match="sample rate") as e:
        read_wav(path)
    assert e.value.code == "audio-file-invalid"


def test_length_over_max_input_is_refused_before_the_data_is_read(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "long.wav"
    path.write_bytes(wav_bytes(b"\x00\x00" * 1600, declared=16000 * 2 * 301))  # claims 301 s, holds 0.1 s
    with pytest.raises(AudioFileError) as e:
        read_header(path)
    assert e.value.code == "audio-file-too-long" and "max_input_s" in str(e.value)
    monkeypatch.setattr(wavio, "_read_data", lambda *_: (_ for _ in ()).throw(AssertionError("data read")))
    with pytest.raises(AudioFileError, match="max_input_s"):
        read_wav(path)
    short = tmp_path / "short.wav"
    short.write_bytes(wav_bytes(b"\x00\x00" * 32000))  # 2 s
    with pytest.raises(AudioFileError) as e:
        read_header(short, max_s=1.5)
    assert e.value.code == "audio-file-too-long"
    assert read_header(short, max_s=2.0).frames == 32000


def test_streamed_placeholder_size_means_what_the_file_holds(tmp_path: Path) -> None:
    data = _samples()
    path = tmp_path / "stream.wav"
    path.write_bytes(wav_bytes(data.tobytes(), declared=0xFFFFFFFF))
    assert np.array_equal(read_wav(path), data)


def test_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="directory") as e:
        read_wav(tmp_path)
    assert e.value.code == "audio-file-invalid"


@pytest.mark.parametrize("content", [b"hello, this is text\n" * 50, b"RIFF\x10\x00\x00\x00WAVE",
                                     b"RIFF\x10\x00\x00\x00WAVEdata\x04\x00\x00\x00\x00\x00\x00\x00"])
def test_text_or_broken_file_is_refused(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "notes.txt"
    path.write_bytes(content)
    with pytest.raises(AudioFileError, match="notes.txt") as e:
        read_wav(path)
    assert e.value.code == "audio-file-invalid"


def test_max_input_s_is_a_config_key() -> None:
    from hearthd.config import Config, ConfigError, _validate

    cfg = Config()
    assert cfg.audio.max_input_s == 300.0
    cfg.audio.max_input_s = 0
    with pytest.raises(ConfigError, match="max_input_s"):
        _validate(cfg)


def _hearthd(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "hearthd", *args], capture_output=True, text=True, timeout=300)


def test_cli_run_on_a_directory_is_one_typed_line(tmp_path: Path) -> None:
    proc = _hearthd("run", "--input", str(tmp_path), "--no-wake")
    assert proc.returncode != 0
    assert "Traceback" not in proc.stderr and "internal" not in proc.stderr
    assert proc.stderr.strip().startswith("hearthd: audio-file-invalid: ") and "directory" in proc.stderr


def test_cli_transcribe_refuses_a_too_long_header(tmp_path: Path) -> None:
    path = tmp_path / "long.wav"
    path.write_bytes(wav_bytes(b"\x00\x00" * 100, declared=16000 * 2 * 400))
    proc = _hearthd("transcribe", str(path))
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    assert proc.stderr.strip().startswith("hearthd: audio-file-too-long: ")


def test_cli_silence_without_wake_word_says_no_speech(tmp_path: Path) -> None:
    path = tmp_path / "silence.wav"
    path.write_bytes(wav_bytes(bytes(16000 * 2 * 2)))
    proc = _hearthd("run", "--input", str(path), "--no-wake", "--json")
    assert proc.returncode != 0 and "Traceback" not in proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    errors = [e for e in events if e["type"] == "error"]
    assert [e["code"] for e in errors] == ["stt-no-speech"]
    assert "wake word" not in errors[0]["message"]
    assert [e["text"] for e in events if e["type"] == "reply"] == ["I didn't hear anything."]
