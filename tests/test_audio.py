"""Audio stages on real files: WAV decoding, the wake word model and the VAD endpointer."""

from __future__ import annotations

import wave
from pathlib import Path

import numpy as np
import pytest

from hearthd.audio.vad import Endpointer, EndpointState, SpeechProbability
from hearthd.audio.wake import MicroWakeWordDetector, WakeWordError
from hearthd.audio.wavio import AudioFileError, read_wav, write_wav
from hearthd.config import VadConfig

from .conftest import SAMPLES


def test_any_pcm_wav_becomes_16k_mono(tmp_path: Path) -> None:
    t = np.arange(44100) / 44100
    tone = (np.sin(2 * np.pi * 440 * t) * 0.5 * 2**23).astype(np.int32)
    stereo = np.stack([tone, tone], axis=1).reshape(-1)
    raw = b"".join(int(v).to_bytes(4, "little", signed=True)[:3] for v in stereo)  # 24-bit little endian
    path = tmp_path / "tone.wav"
    with wave.open(str(path), "wb") as w:
        w.setnchannels(2)
        w.setsampwidth(3)
        w.setframerate(44100)
        w.writeframes(raw)
    audio = read_wav(path)
    assert audio.dtype == np.int16 and abs(len(audio) - 16000) <= 1
    assert 15000 < np.abs(audio).max() < 17000  # half scale survived channel mixing and resampling


def test_round_trip(tmp_path: Path) -> None:
    data = (np.random.default_rng(1).standard_normal(1600) * 1000).astype(np.int16)
    write_wav(tmp_path / "x.wav", data)
    assert np.array_equal(read_wav(tmp_path / "x.wav"), data)


@pytest.mark.parametrize("content", [b"", b"RIFF\x00\x00", b"not a wav file at all" * 10])
def test_garbage_is_a_clear_error(tmp_path: Path, content: bytes) -> None:
    path = tmp_path / "bad.wav"
    path.write_bytes(content)
    with pytest.raises(AudioFileError, match="bad.wav"):
        read_wav(path)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(AudioFileError, match="no such file"):
        read_wav(tmp_path / "none.wav")


def test_wake_word_fires_on_each_sample_and_again_after_reset() -> None:
    detector = MicroWakeWordDetector("okay_nabu")
    for name in ("en_alarm_0730", "ru_alarm_0700", "hi_alarm_0600", "en_alarm_0730"):
        detector.reset()
        hit = detector.process(read_wav(SAMPLES / f"{name}.wav"))
        assert hit is not None and hit.score > detector.cutoff
        assert 1.0 < hit.sample / 16000 < 1.5  # where "okay nabu" ends in every sample


def test_wake_word_stays_quiet_on_noise_and_on_other_models() -> None:
    detector = MicroWakeWordDetector("okay_nabu")
    assert detector.process(read_wav(SAMPLES / "en_noise_only.wav")) is None
    jarvis = MicroWakeWordDetector("hey_jarvis")
    assert jarvis.process(read_wav(SAMPLES / "en_alarm_0730.wav")) is None


def test_unknown_wake_model() -> None:
    with pytest.raises(WakeWordError, match="wake.model"):
        MicroWakeWordDetector("hey_computer")


def test_endpointer_finds_the_command_after_the_wake_word() -> None:
    audio = read_wav(SAMPLES / "en_alarm_0730.wav")
    ep = Endpointer(VadConfig(), SpeechProbability())
    offset = int(1.25 * 16000)  # after the wake word
    state = ep.feed(audio[offset:])
    if state == EndpointState.SPEAKING:
        state = ep.flush()
    assert state == EndpointState.DONE and ep.segment is not None
    start, end = (offset + ep.segment.start) / 16000, (offset + ep.segment.end) / 16000
    assert 1.25 <= start < 1.7 and 3.3 < end < 4.2  # the command runs from about 1.61 s to about 3.6 s


class ScriptedVad:
    """Speech probabilities given in advance, one per 32 ms window: the endpointer's rules without a model."""

    def __init__(self, probabilities: list[float]) -> None:
        self.probabilities = probabilities
        self.at = 0

    def reset(self) -> None:
        self.at = 0

    def __call__(self, window: np.ndarray) -> float:
        self.at += 1
        return self.probabilities[self.at - 1] if self.at <= len(self.probabilities) else 0.0


def endpointed(probabilities: list[float]) -> tuple[float, float]:
    """Where the endpointer cuts an utterance with these per-window probabilities, in seconds (pre-roll off)."""
    ep = Endpointer(VadConfig(pre_roll_ms=0), ScriptedVad(probabilities))  # type: ignore[arg-type]
    if ep.feed(np.zeros(512 * (len(probabilities) + 40), dtype=np.int16)) != EndpointState.DONE:
        ep.flush()
    assert ep.segment is not None
    return ep.segment.start / 16000, ep.segment.end / 16000


@pytest.mark.parametrize("first_word", [
    [0.9] * 5 + [0.4],  # "lock" then a dip just under the threshold: "…up the front door"
    [0.9] * 4 + [0.1, 0.1],  # "book a" then a 64 ms gap before "taxi"
    [0.6, 0.9, 0.2, 0.9, 0.9, 0.1, 0.3],  # a stop consonant between two short voiced bursts
])
def test_the_speech_starts_with_its_first_word_when_a_dip_follows_it(first_word: list[float]) -> None:
    start, _ = endpointed([0.0] * 10 + first_word + [0.95] * 20 + [0.0] * 30)
    assert start == pytest.approx(10 * 0.032)  # not after the dip: whisper would never hear that word


def test_a_click_long_before_the_speech_does_not_move_its_start() -> None:
    start, end = endpointed([0.0] * 10 + [0.9, 0.9] + [0.0] * 8 + [0.95] * 20 + [0.0] * 30)
    assert start == pytest.approx(20 * 0.032) and end > start  # a 64 ms burst and 256 ms of quiet: not speech


def test_endpointer_times_out_on_silence_in_small_chunks() -> None:
    cfg = VadConfig(no_speech_timeout_s=1.0)
    ep = Endpointer(cfg, SpeechProbability())
    silence = read_wav(SAMPLES / "en_noise_only.wav")
    states = {ep.feed(silence[i:i + 160]) for i in range(0, len(silence), 160)}
    assert EndpointState.TIMEOUT in states and ep.segment is None


def test_a_voice_is_never_handed_more_than_a_piece_at_once() -> None:
    from hearthd.audio.tts import PIECE_CHARS, pieces

    unbroken = "да " * 700 + "x" * 450
    parts = pieces(unbroken)
    assert all(0 < len(p) <= PIECE_CHARS for p in parts)
    assert " ".join(parts).replace(" ", "") == unbroken.replace(" ", "")  # nothing lost, nothing added
    assert pieces("Set it. Then go!") == ["Set it.", "Then go!"]
    assert pieces("   ") == []


@pytest.mark.models
def test_a_long_unbroken_text_is_spoken_in_bounded_memory(tmp_path: Path) -> None:
    """One unbroken 1,530-character text: handed to Piper whole it peaked at ~1 GB (and grows with the length:
    6,000 characters took 12 GB, never given back) and came out 12 s short; in pieces all of it is spoken
    (~56 s) at under 400 MB."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from hearthd.config import load_config\n"
        "from hearthd.daemon.components import Components\n"
        "c = Components(load_config(sys.argv[1], environ={}))\n"
        "speech = c.voices.synthesize('and then ' * 170, 'en')\n"
        # VmHWM, this process's own peak: ru_maxrss keeps the forking parent's (the test session's models) across exec
        "hwm = [line for line in open('/proc/self/status') if line.startswith('VmHWM:')][0].split()[1]\n"
        "print(speech.seconds, int(hwm) // 1024)\n")
    empty = tmp_path / "config.toml"
    empty.write_text("")
    out = subprocess.run([sys.executable, "-c", script, str(empty)], capture_output=True, text=True, timeout=300,
                         check=True).stdout.split()
    seconds, peak_mb = float(out[0]), int(out[1])
    assert seconds > 50  # every word was spoken (about 56 s; whole, Piper dropped the end: 44 s)
    assert peak_mb < 700, f"peak RSS {peak_mb} MB"


@pytest.mark.models
def test_the_memory_a_long_piece_takes_is_given_back_after_it_is_spoken(tmp_path: Path) -> None:
    """200 characters of digits, which espeak reads out as words: onnxruntime's arena grew to 1.6 GB for it and kept
    that for the daemon's lifetime (the hostile run's RSS grew 21 % from one such announcement); each run now gives
    the arena's free memory back, so what the daemon holds after is about what it held before."""
    import subprocess
    import sys

    script = (
        "import sys\n"
        "from hearthd.config import load_config\n"
        "from hearthd.daemon.components import Components\n"
        "c = Components(load_config(sys.argv[1], environ={}))\n"
        "def rss():\n"
        "    return int([l for l in open('/proc/self/status') if l.startswith('VmRSS:')][0].split()[1]) // 1024\n"
        "c.voices.synthesize('Turned off the Kitchen Light.', 'en')\n"
        "before = rss()\n"
        "long = c.voices.synthesize(('123456789 ' * 20)[:200], 'en')\n"
        "c.voices.synthesize('Timer set for 10 minutes.', 'en')\n"
        "print(long.seconds, before, rss())\n")
    empty = tmp_path / "config.toml"
    empty.write_text("")
    out = subprocess.run([sys.executable, "-c", script, str(empty)], capture_output=True, text=True, timeout=300,
                         check=True).stdout.split()
    seconds, before_mb, after_mb = float(out[0]), int(out[1]), int(out[2])
    assert seconds > 30  # it was all spoken (the numbers read out as words)
    assert after_mb - before_mb < 400, f"{before_mb} MB before, {after_mb} MB after"


def test_every_stream_keeps_its_own_vad_state_over_one_shared_model() -> None:
    """Issue 26, item 5: each satellite loaded two VAD models of its own. Streams now share one; each keeps its own
    state, so one stream's speech never shows in another's probabilities."""
    import numpy as np

    from hearthd.audio.vad import SpeechProbability

    a, b, fresh = SpeechProbability(), SpeechProbability(), SpeechProbability()
    assert a._session is b._session is fresh._session
    rng = np.random.default_rng(0)
    loud = (np.sin(np.arange(512 * 20) / 7) * 0.5 + rng.normal(0, 0.1, 512 * 20)).astype(np.float32)
    quiet = np.zeros(512, dtype=np.float32)
    for i in range(20):
        a(loud[i * 512:(i + 1) * 512])  # stream a hears something for a while
    assert b(quiet) == fresh(quiet)  # stream b, after a's windows, scores exactly as a stream that heard nothing
