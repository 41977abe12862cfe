"""Speech to text with faster-whisper, with the language chosen among the configured ones only."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..config import SttConfig
from ..errors import HearthdError
from ..language import rules
from ..locale import optional_text


class SttError(HearthdError):
    """Speech to text that cannot run (a remote service that is down, refuses or does not answer in time)."""

    code = "stt-unavailable"


@dataclass
class Transcript:
    """What was said, in which language, and how sure the language guess is."""

    text: str
    lang: str
    prob: float
    source: str = "detected"  # detected | forced | fallback (detection unsure: the previous turn's language)


class SpeechToText(Protocol):
    """Turns 16 kHz int16 audio into a transcript."""

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript: ...


def _reusing_encoder(base: type) -> type:
    """A WhisperModel that keeps its last encoder output: choosing the language among the allowed ones and
    then transcribing would otherwise run the 30-second encoder twice on the same features."""

    class ReusingWhisperModel(base):
        _last: tuple[np.ndarray, Any] | None = None

        def encode(self, features: np.ndarray) -> Any:
            last = self._last
            if last is not None and last[0].shape == features.shape and np.array_equal(last[0], features):
                return last[1]
            output = super().encode(features)
            self._last = (features.copy(), output)
            return output

    return ReusingWhisperModel


class WhisperSpeechToText:
    """faster-whisper on the CPU (CTranslate2, int8 by default)."""

    def __init__(self, model_dir: Path, cfg: SttConfig) -> None:
        import os

        from faster_whisper import WhisperModel

        threads = cfg.threads or (os.cpu_count() or 2)
        self.cfg = cfg
        model_class = _reusing_encoder(WhisperModel)
        self.model = model_class(str(model_dir), device="cpu", compute_type=cfg.compute_type, cpu_threads=threads)

    def detect_language(self, audio: np.ndarray) -> tuple[str, float]:
        """The most likely configured language: Whisper's guess restricted to cfg.languages."""
        allowed = self.cfg.languages
        if len(allowed) == 1:
            return allowed[0], 1.0
        # The features exactly as transcribe() will encode its first window (it drops the last frame), so
        # the encoder output is computed once and reused.
        features = self.model.feature_extractor(audio)[..., :-1]
        _, _, probs = self.model.detect_language(features=features)
        ranked = [(lang, p) for lang, p in probs if lang in allowed]
        if not ranked:
            return allowed[0], 0.0
        total = sum(p for _, p in ranked) or 1.0
        lang, p = max(ranked, key=lambda x: x[1])
        return lang, p / total  # renormalised over the allowed languages

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript:
        """Text of one utterance. `language` forces it (else stt.language, else detection among stt.languages);
        when detection is less sure than stt.min_language_probability, `fallback` (the conversation's last
        language) is used if given, then general.language."""
        floats = np.asarray(audio, dtype=np.float32) / 32768.0
        self.model._last = None  # reuse within one utterance only, never a stale output across utterances
        language = language or self.cfg.language or None
        source = "forced"
        if language:
            prob = 1.0
        else:
            language, prob = self.detect_language(floats)
            source = "detected"
            if prob < self.cfg.min_language_probability and fallback and fallback != language:
                language, source = fallback, "fallback"
        segments, _info = self.model.transcribe(
            floats,
            language=language,
            beam_size=self.cfg.beam_size,
            temperature=self.cfg.temperature,
            max_new_tokens=self.cfg.max_new_tokens,
            initial_prompt=optional_text(language, "stt_prompt.txt"),
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,  # the endpointer already cut the speech out
        )
        text = " ".join(s.text.strip() for s in segments).strip()
        text = rules(language).transcript(text)  # Whisper writes Hindi in Urdu script at times
        return Transcript(text, language, round(prob, 3), source)
