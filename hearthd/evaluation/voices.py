"""Test voices: natural-sounding speech in English, Russian and Hindi, for the spoken suites and their bench.

hearthd speaks with Piper (and espeak-ng where no Piper voice is installed); to test how it *hears*, the chain needs
speech that sounds like people, in all three languages, with no network. These are the best voices that can be had
offline (../shared/ASSETS.md measured them against whisper base):

- English: the Piper voice hearthd already ships (`piper-en-joe`). Piper draws each utterance's variation from
  onnxruntime's random generator, so the seed is set (`onnxruntime.set_seed`) before the voice's session is made, and
  each utterance gets a session of its own: the same text and seed give the same audio whatever was said before.
- Russian: Debian's festival with festvox-ru (voice `msu_ru_nsh_clunits`), fed UTF-8 (what Debian's Russian
  lexicon reads; KOI8-R text gives an empty file). Deterministic: the seed changes nothing.
- Hindi: hearthd's own Kokoro-82M voice `hf_alpha` (hearthd.audio.kokoro: int8 ONNX assembled from its PyPI packs,
  voices from the npm package `kokoro-js`), each utterance in one piece. Deterministic too.

Every utterance is cached on disk (16 kHz mono int16 WAV) under a hash of the text, language, voice and seed, so a
rerun synthesises nothing. The daemon never imports this module: it is the evaluation's.

    python -m hearthd.evaluation.voices fetch           # assemble Kokoro, fetch its Hindi voices (setup.sh runs it)
    python -m hearthd.evaluation.voices say hi "पंखा चला दो" -o fan.wav
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from pathlib import Path
from typing import Protocol

import numpy as np

from ..assets import CATALOGUE, AssetError, AssetMissing, AssetStore, default_cache_dir
from ..audio import kokoro
from ..audio.pcm import SAMPLE_RATE, resample
from ..audio.tts import TtsError
from ..audio.wavio import read_wav, write_wav
from ..errors import HearthdError

# Bumped whenever what a kind of voice makes of a text changes (padding, phonemes, levels): its cached audio is then
# made again, the other voices' is kept.
RECIPES = {"piper": 1, "festival": 1, "kokoro": 2}

KOKORO_MODEL = CATALOGUE["kokoro-82m"]
KOKORO_VOICES = {name: f for name, f in kokoro.VOICES.items() if name[0] == "h"}  # the Hindi ones

FESTIVAL_VOICE = "msu_ru_nsh_clunits"
PIPER_VOICE = "piper-en-joe"
# The voice each language is spoken in (hf_alpha: whisper base heard its Hindi as Hindi 8 times in 8).
VOICES: dict[str, str] = {"en": f"piper:{PIPER_VOICE}", "ru": f"festival:{FESTIVAL_VOICE}", "hi": "kokoro:hf_alpha"}

LEAD_S, TAIL_S = 0.4, 0.8  # quiet before and after the speech, as a microphone hears a command
NOISE_LEVEL = 8.0  # the floor of that quiet (int16 standard deviation): a room, not digital silence
PEAK = 0.9  # loud utterances are scaled down to this (Kokoro overshoots 1.0)


class VoiceUnavailable(HearthdError):
    """A test voice that cannot speak: its engine, model or voice file is not installed (and says how to get it)."""

    code = "test-voice-unavailable"


class Engine(Protocol):
    """One test voice: text to float audio in [-1, 1] at its own rate."""

    def synthesize(self, text: str, seed: int) -> tuple[np.ndarray, int]: ...


# --- Kokoro (Hindi) ---------------------------------------------------------------------------------------------


def kokoro_model(cache_dir: Path | None = None) -> Path:
    """The directory of the Kokoro model and vocabulary in hearthd's model cache, assembled from the PyPI packs on
    first use and verified by sha256 (as `hearthd models fetch` does for the embedded models)."""
    store = AssetStore(cache_dir, catalogue={KOKORO_MODEL.name: KOKORO_MODEL})
    try:
        return store.resolve(KOKORO_MODEL.name)
    except AssetMissing as err:
        raise VoiceUnavailable(f"the Hindi test voice needs Kokoro-82M, carried by {', '.join(KOKORO_MODEL.dists)}: "
                               "pip install 'hearthd[dev]' (or scripts/setup.sh)") from err
    except AssetError as err:
        raise VoiceUnavailable(f"the Hindi test voice needs Kokoro-82M: {err.message}") from err


def kokoro_voices_ready(cache_dir: Path | None = None) -> bool:
    """Whether every Kokoro Hindi voice is in the cache, verified (nothing is fetched)."""
    return kokoro.voices_ready(cache_dir or default_cache_dir(), list(KOKORO_VOICES))


def fetch_kokoro_voices(cache_dir: Path | None = None, npm: str | None = None) -> Path:
    """The Kokoro voices in the cache (hearthd.audio.kokoro.fetch_voices), as a test voice's error."""
    try:
        return kokoro.fetch_voices(cache_dir or default_cache_dir(), npm, list(KOKORO_VOICES))
    except TtsError as err:
        raise VoiceUnavailable(f"the Hindi test voice: {err.message}") from err


def hindi_phonemes(text: str) -> str:
    """Kokoro's input for Hindi text (hearthd.audio.kokoro.phonemes)."""
    try:
        return kokoro.phonemes(text, "hi")
    except TtsError as err:
        raise VoiceUnavailable(f"the Hindi test voice: {err.message}") from err


class Kokoro:
    """hearthd's Kokoro voice (hearthd.audio.kokoro), each utterance in one piece."""

    def __init__(self, voice: str, cache_dir: Path | None = None, threads: int = 0) -> None:
        if voice not in KOKORO_VOICES:
            raise VoiceUnavailable(f"no Kokoro voice {voice!r} (known: {', '.join(KOKORO_VOICES)})")
        model = kokoro_model(cache_dir)
        voices = fetch_kokoro_voices(cache_dir)
        try:
            self.voice = kokoro.KokoroTextToSpeech(model, voices, voice, threads)
        except TtsError as err:
            raise VoiceUnavailable(f"the Hindi test voice: {err.message}") from err

    def synthesize(self, text: str, seed: int) -> tuple[np.ndarray, int]:
        try:
            return self.voice.audio(text), kokoro.KOKORO_RATE
        except TtsError as err:
            raise VoiceUnavailable(f"the Hindi test voice could not say {text!r}: {err.message}") from err


# --- festival (Russian) -----------------------------------------------------------------------------------------


class Festival:
    """Debian's festival, one `text2wave` run per utterance."""

    def __init__(self, voice: str = FESTIVAL_VOICE) -> None:
        self.binary = shutil.which("text2wave")
        if not self.binary:
            raise VoiceUnavailable("the Russian test voice is Debian's festival with festvox-ru "
                                   "(apt-get install festival festvox-ru, or scripts/setup.sh)")
        self.voice = voice

    def synthesize(self, text: str, seed: int) -> tuple[np.ndarray, int]:
        assert self.binary
        with tempfile.TemporaryDirectory(prefix="hearthd-festival-") as tmp:
            source, wav = Path(tmp) / "text.txt", Path(tmp) / "speech.wav"
            source.write_text(text.strip() + "\n", encoding="utf-8")  # UTF-8: what Debian's Russian lexicon reads
            proc = subprocess.run([self.binary, "-eval", f"(voice_{self.voice})", "-o", str(wav), str(source)],
                                  capture_output=True, text=True, timeout=60, check=False)
            if proc.returncode != 0 or not wav.is_file() or wav.stat().st_size <= 44:
                raise VoiceUnavailable(f"festival ({self.voice}) could not say {text!r}: "
                                       f"{(proc.stderr or proc.stdout).strip()[-300:]}")
            import wave

            with wave.open(str(wav)) as w:
                rate = w.getframerate()
                raw = w.readframes(w.getnframes())
        return np.frombuffer(raw, dtype="<i2").astype(np.float32) / 32768.0, rate


# --- Piper (English) --------------------------------------------------------------------------------------------


class Piper:
    """hearthd's own Piper voice, seeded: a fresh session per utterance made right after onnxruntime.set_seed."""

    def __init__(self, asset: str = PIPER_VOICE, cache_dir: Path | None = None) -> None:
        try:
            self.model = AssetStore(cache_dir).resolve(asset)
        except AssetError as err:
            raise VoiceUnavailable(f"the English test voice is {asset}: {err.message}") from err

    def synthesize(self, text: str, seed: int) -> tuple[np.ndarray, int]:
        import onnxruntime

        from ..audio.tts import PiperTextToSpeech

        onnxruntime.set_seed(seed)  # before the session exists: a seed set later does not give the same draws
        speech = PiperTextToSpeech(self.model).synthesize(text)
        return np.asarray(speech.audio, dtype=np.float32) / 32768.0, speech.rate


# --- the voices together ----------------------------------------------------------------------------------------


def default_audio_dir() -> Path:
    return default_cache_dir() / "spoken-audio"


class SpokenVoices:
    """The test voice of each language, built on first use, with synthesised audio cached in `audio_dir`."""

    def __init__(self, cache_dir: Path | None = None, audio_dir: Path | None = None,
                 voices: dict[str, str] | None = None) -> None:
        self.cache_dir = cache_dir
        self.audio_dir = audio_dir or (cache_dir / "spoken-audio" if cache_dir else default_audio_dir())
        self.voices = dict(VOICES if voices is None else voices)
        self._engines: dict[str, Engine] = {}
        self._lock = threading.Lock()

    def engine(self, lang: str) -> Engine:
        with self._lock:
            if lang not in self._engines:
                kind, _, name = self.voice(lang).partition(":")
                if kind == "kokoro":
                    self._engines[lang] = Kokoro(name, self.cache_dir)
                elif kind == "festival":
                    self._engines[lang] = Festival(name)
                elif kind == "piper":
                    self._engines[lang] = Piper(name, self.cache_dir)
                else:
                    raise VoiceUnavailable(f"unknown test voice engine {kind!r} for {lang}")
            return self._engines[lang]

    def voice(self, lang: str) -> str:
        try:
            return self.voices[lang]
        except KeyError:
            raise VoiceUnavailable(f"no test voice for {lang!r} (known: {', '.join(self.voices)})") from None

    def key(self, text: str, lang: str, seed: int) -> str:
        """What names an utterance in the cache: the text (spacing aside), language, voice, seed and recipe."""
        voice = self.voice(lang)
        recipe = RECIPES.get(voice.partition(":")[0], 1)
        said = json.dumps([recipe, " ".join(text.split()), lang, voice, seed], ensure_ascii=False)
        return hashlib.sha256(said.encode("utf-8")).hexdigest()[:24]

    def cache_path(self, text: str, lang: str, seed: int) -> Path:
        return self.audio_dir / f"{lang}-{self.key(text, lang, seed)}.wav"

    def speak(self, text: str, lang: str, seed: int = 0) -> np.ndarray:
        """`text` said in `lang`: 16 kHz mono int16, with a short quiet lead and tail (a seeded noise floor)."""
        path = self.cache_path(text, lang, seed)
        if path.is_file():
            try:
                return read_wav(path)
            except Exception:  # noqa: BLE001 — a damaged cache entry is made again
                path.unlink(missing_ok=True)
        audio, rate = self.engine(lang).synthesize(text, seed)
        peak = float(np.max(np.abs(audio))) if len(audio) else 0.0
        if peak > PEAK:
            audio = audio * (PEAK / peak)
        speech = np.clip(np.rint(resample(audio, rate, SAMPLE_RATE) * 32767.0), -32768, 32767)
        rng = np.random.default_rng(int(self.key(text, lang, seed), 16))
        lead, tail = (rng.normal(0.0, NOISE_LEVEL, int(s * SAMPLE_RATE)) for s in (LEAD_S, TAIL_S))
        out = np.clip(np.rint(np.concatenate([lead, speech, tail])), -32768, 32767).astype(np.int16)
        path.parent.mkdir(parents=True, exist_ok=True)
        partial = path.with_name(f".{path.name}.{os.getpid()}.{threading.get_ident()}")
        write_wav(partial, out, SAMPLE_RATE)
        os.replace(partial, path)  # whole or not at all: a run stopped midway leaves no half file
        return out


_default: SpokenVoices | None = None


def speak(text: str, lang: str, seed: int = 0) -> np.ndarray:
    """`text` said in `lang` by its test voice: 16 kHz mono int16 (cached on disk; see SpokenVoices)."""
    global _default
    if _default is None:
        _default = SpokenVoices()
    return _default.speak(text, lang, seed)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m hearthd.evaluation.voices", description=__doc__.split("\n")[0])
    sub = parser.add_subparsers(dest="action", required=True)
    sub.add_parser("fetch", help="assemble Kokoro-82M into the model cache and fetch its Hindi voices with npm pack")
    say = sub.add_parser("say", help="write one utterance to a WAV file")
    say.add_argument("lang", choices=sorted(VOICES))
    say.add_argument("text")
    say.add_argument("-o", "--output", required=True)
    say.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        if args.action == "fetch":
            print(f"kokoro-82m: {kokoro_model()}")
            print(f"kokoro voices: {fetch_kokoro_voices()}")
        else:
            write_wav(args.output, speak(args.text, args.lang, args.seed), SAMPLE_RATE)
    except VoiceUnavailable as err:
        print(f"voices: {err.code}: {err.message}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
