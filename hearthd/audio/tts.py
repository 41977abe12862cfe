"""Text to speech: Piper voices, with espeak-ng for languages that have no Piper voice installed."""

from __future__ import annotations

import io
import logging
import re
import shutil
import subprocess
import wave
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import HearthdError


class TtsError(HearthdError):
    """A voice that cannot speak (missing engine, missing voice)."""

    code = "tts-unavailable"


@dataclass
class Speech:
    """Synthesised mono int16 audio at its own sample rate (the sink resamples)."""

    audio: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.rate


class TextToSpeech(Protocol):
    """One voice."""

    def synthesize(self, text: str) -> Speech: ...


class Voices(Protocol):
    """The voice of each language (the local VoiceBank, or a remote Wyoming service's voices)."""

    def voice(self, lang: str) -> TextToSpeech: ...

    def synthesize(self, text: str, lang: str) -> Speech: ...


class PiperTextToSpeech:
    """A Piper ONNX voice (the .onnx.json config beside it)."""

    def __init__(self, model: Path, length_scale: float = 1.0) -> None:
        from piper import PiperVoice, SynthesisConfig

        from ..private import no_telemetry

        no_telemetry()
        self.voice = PiperVoice.load(str(model))
        self.voice.session = _ShrinkingSession(self.voice.session)
        self._syn = SynthesisConfig(length_scale=length_scale)

    def synthesize(self, text: str) -> Speech:
        chunks = [c.audio_int16_array for piece in pieces(text)
                  for c in self.voice.synthesize(piece, syn_config=self._syn)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return Speech(audio.astype(np.int16), self.voice.config.sample_rate)


class _ShrinkingSession:
    """Piper's onnxruntime session, each run told to give its arena's free memory back when it ends. Without it the
    arena keeps the peak of the largest piece ever spoken for the daemon's lifetime (200 characters of digits, which
    espeak reads out as words: 1.6 GB kept after, against 0.2 GB with it), for 10-20 % more time on an everyday
    reply (bench/tts.py), a good trade for a daemon that runs all day on a small machine."""

    def __init__(self, session: Any) -> None:
        import onnxruntime

        self._session = session
        self._options = onnxruntime.RunOptions()
        self._options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def run(self, outputs: Any, feed: Any) -> Any:
        return self._session.run(outputs, feed, self._options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


# Piper's memory grows with the length of one sentence and onnxruntime keeps the peak (1,000
# characters without a break: 1.4 GB; 6,000: 12 GB), so no voice is handed more than this at once.
PIECE_CHARS = 200
_SENTENCE_END = re.compile(r"(?<=[.!?;:।…])\s+")


def pieces(text: str, limit: int = PIECE_CHARS) -> list[str]:
    """`text` in pieces of at most `limit` characters: cut at sentence ends, else between words, else anywhere."""
    out: list[str] = []
    for sentence in _SENTENCE_END.split(text.strip()):
        piece = ""
        for word in sentence.split():
            while len(word) > limit:  # one "word" longer than a piece (a URL, a run of symbols)
                if piece:
                    out.append(piece)
                    piece = ""
                out.append(word[:limit])
                word = word[limit:]
            if piece and len(piece) + 1 + len(word) > limit:
                out.append(piece)
                piece = word
            else:
                piece = f"{piece} {word}" if piece else word
        if piece:
            out.append(piece)
    return out


class EspeakTextToSpeech:
    """Debian's espeak-ng, robotic but available for hi and ru without a Piper voice."""

    def __init__(self, voice: str) -> None:
        self.binary = shutil.which("espeak-ng")
        if not self.binary:
            raise TtsError("espeak-ng is not installed (apt-get install espeak-ng), or set a piper voice")
        self.voice = voice

    def synthesize(self, text: str) -> Speech:
        assert self.binary
        proc = subprocess.run(
            [self.binary, "-v", self.voice, "--stdout", text], capture_output=True, timeout=30, check=False
        )
        if proc.returncode != 0 or not proc.stdout:
            raise TtsError(f"espeak-ng failed for voice {self.voice!r}: {proc.stderr.decode(errors='replace')}")
        # espeak-ng streams to stdout with unknown length; read frames directly after the header
        with wave.open(io.BytesIO(proc.stdout)) as w:
            rate = w.getframerate()
        audio = np.frombuffer(proc.stdout[44:], dtype="<i2")
        return Speech(audio.copy(), rate)


class VoiceBank:
    """One voice per language, built on first use from `piper:<asset or path>` / `espeak:<voice>` specs.

    `installed_piper(lang)`, when given, names a Piper voice already installed for a language whose spec is
    espeak-ng (the fallback): that voice speaks instead, and espeak-ng only if it cannot be loaded.
    """

    def __init__(self, specs: dict[str, str], piper_path: Callable[[str], Path], length_scale: float = 1.0,
                 installed_piper: Callable[[str], Path | None] | None = None):
        self.specs = specs
        self._piper_path = piper_path
        self._length_scale = length_scale
        self._installed_piper = installed_piper
        self._voices: dict[str, TextToSpeech] = {}

    def voice(self, lang: str) -> TextToSpeech:
        if lang not in self._voices:
            spec = self.specs.get(lang)
            if spec is None:
                raise TtsError(f"no voice configured for {lang!r} (tts.voices.{lang})")
            engine, _, name = spec.partition(":")
            if engine == "piper":
                self._voices[lang] = PiperTextToSpeech(self._piper_path(name), self._length_scale)
            elif engine == "espeak":
                self._voices[lang] = self._natural(lang) or EspeakTextToSpeech(name)
            else:
                raise TtsError(f"unknown TTS engine {engine!r} (tts.voices.{lang})")
        return self._voices[lang]

    def _natural(self, lang: str) -> TextToSpeech | None:
        path = self._installed_piper(lang) if self._installed_piper else None
        if path is None:
            return None
        try:
            return PiperTextToSpeech(path, self._length_scale)
        except Exception as err:  # noqa: BLE001 - any failure to load it leaves the espeak-ng voice
            logging.getLogger(__name__).warning("Piper voice %s for %s did not load (%s); using espeak-ng",
                                                path, lang, err)
            return None

    def synthesize(self, text: str, lang: str) -> Speech:
        return self.voice(lang).synthesize(text)
