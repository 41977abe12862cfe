"""Speech to text with faster-whisper, with the language chosen among the configured ones only."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..config import SttConfig
from ..errors import HearthdError
from ..language import rules
from .bias import Bias, HomeNames, RecognitionBias, looped, unbiased
from .pcm import SAMPLE_RATE

log = logging.getLogger(__name__)


class SttError(HearthdError):
    """Speech to text that cannot run (a remote service that is down, refuses or does not answer in time)."""

    code = "stt-unavailable"


class Stale(HearthdError):
    """A transcription made in the pause that the speaker made stale by going on, stopped between whisper's stages."""

    code = "stt-stale"


_stop = threading.local()


@contextmanager
def stoppable(stale: threading.Event) -> Iterator[None]:
    """Speech to text in this thread stops between its stages (the language in a window, whisper's 30 s, the
    decoding) once `stale` is set (Stale): a guess made in the pause goes on no longer than a stage after the speaker
    goes on, and the cores are free for the next. A stage under way (an encoder pass, a decode) runs to its end."""
    _stop.stale = stale
    try:
        yield
    finally:
        _stop.stale = None


def _go_on() -> None:
    stale = getattr(_stop, "stale", None)
    if stale is not None and stale.is_set():
        raise Stale("the speaker went on: this transcription is stale")


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
        frames = 0  # the encoder's window for the utterance being decoded, in feature frames (0: whisper's 3,000)

        def encode(self, features: np.ndarray) -> Any:
            if 0 < self.frames < features.shape[-1]:
                # the 30-second window cut to `frames`: what is cut off is the padding (silence) after the speech
                features = np.ascontiguousarray(features[..., : self.frames])
            last = self._last
            if last is not None and last[0].shape == features.shape and np.array_equal(last[0], features):
                return last[1]
            output = super().encode(features)
            self._last = (features.copy(), output)
            return output

    return ReusingWhisperModel


class WhisperSpeechToText:
    """faster-whisper on the CPU (CTranslate2, int8 by default). With `home` (stt.bias), each decode is given the
    home's words (`home()` returns the current names: the catalogue grows as discovery arrives), in `bias_style`."""

    def __init__(self, model_dir: Path, cfg: SttConfig, home: Callable[[], HomeNames] | None = None,
                 bias_style: str = "prompt") -> None:
        import os

        from faster_whisper import WhisperModel

        threads = cfg.threads or (os.cpu_count() or 2)
        self.cfg = cfg
        model_class = _reusing_encoder(WhisperModel)
        self.model = model_class(str(model_dir), device="cpu", compute_type=cfg.compute_type, cpu_threads=threads)
        self.bias = RecognitionBias(home, bias_style, count_tokens=self.count_tokens) if home is not None else None
        self.echoes = 0  # transcripts that were the prompt written back (decoded again unbiased)

    def count_tokens(self, text: str) -> int:
        """How many of whisper's tokens `text` takes (its prompt is limited to 223)."""
        return len(self.model.hf_tokenizer.encode(" " + text.strip(), add_special_tokens=False).ids)

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
        short = self._window(len(floats))
        if language is None and fallback is not None and fallback not in self.cfg.window_languages:
            # A conversation in a language heard in whisper's 30 s: its speaker most likely goes on in it, so the
            # short window is only asked which language it is, in the least window that holds the words (a 3 s
            # command: 4 s, ~30 ms, where the short window takes ~70 and the 30 s ~650 on 2 cores). One who turns to
            # English is then decoded in the short window, not in the 30 s their conversation's language needs.
            self.model.frames = self._glance(len(floats))
        else:
            self.model.frames = short if language is None or language in self.cfg.window_languages else 0
        source = "forced"
        if language:
            prob = 1.0
        else:
            _go_on()
            language, prob = self.detect_language(floats)
            if self.model.frames and (language not in self.cfg.window_languages
                                      or prob < self.cfg.rescore_languages_below):
                # not a language read as well in the short window, or one heard unsure there ("बस, रुक जाओ" as
                # English "Bus Rukcau"): whisper's own 30 s, the language chosen again in it (its pass is the
                # decoding's; how sure it is there decides whether the other languages' sentences are weighed too)
                self.model.frames, self.model._last = 0, None
                _go_on()
                language, prob = self.detect_language(floats)
            source = "detected"
            if prob < self.cfg.min_language_probability and fallback and fallback != language:
                language, source = fallback, "fallback"
        if language not in self.cfg.window_languages:
            self.model.frames = 0
        elif self.model.frames != short:
            self.model.frames, self.model._last = short, None  # chosen in a glance: decoded in the short window
        plain = unbiased(language)
        bias = self.bias.for_language(language) if self.bias is not None else plain
        _go_on()
        text = self._decode(floats, language, bias)
        if bias is not plain and (bias.echoed(text) or looped(text)):
            # whisper wrote its prompt back instead of what was said (silence, noise, a mumble), or went round in a
            # loop listing on as its prompt does: decoded again as without stt.bias, and an echo of the language's
            # own prompt then is no speech either
            log.info("the transcript was the prompt written back or a loop; decoded again without the home's words")
            self.echoes += 1
            _go_on()
            text = self._decode(floats, language, plain)
            if plain.echoed(text):
                text = ""
        text = rules(language).transcript(text)  # Whisper writes Hindi in Urdu script at times
        return Transcript(text, language, round(prob, 3), source)

    def _window(self, samples: int, language: str | None = None) -> int:
        """The encoder's window for `samples` of audio, in feature frames (100 a second): stt.window_s, or the
        utterance and a second of silence rounded up to 5 s when it is longer; 0 (whisper's 30 s) past that, and for
        a `language` not in stt.window_languages."""
        if language is not None and language not in self.cfg.window_languages:
            return 0
        seconds = max(float(self.cfg.window_s), math.ceil((samples / SAMPLE_RATE + 1.0) / 5.0) * 5.0)
        return 0 if seconds >= 30.0 else int(seconds * 100)

    def _glance(self, samples: int) -> int:
        """The least window, in feature frames, that holds `samples` of audio and a second of silence, rounded up to
        a whole second: enough for whisper to say which language it is, at a fraction of the short window's cost."""
        seconds = math.ceil(samples / SAMPLE_RATE + 1.0)
        return 0 if seconds >= 30 else min(self._window(samples) or 3000, max(3, seconds) * 100)

    def fit(self, audio: np.ndarray, language: str, texts: list[str]) -> list[tuple[float, float]]:
        """How well each of `texts` fits the audio: the mean log-probability whisper gives its tokens, read against the
        audio (CTranslate2's forced alignment, the decoder's cross-attention over the speech), and how far into the
        speech the text reaches (0–1: where its end is aligned; "поставь будильник" said of "поставь будильник на
        полседьмого" ends half-way, and its tokens alone, without an end of text, would fit well). Whisper base writes
        Hindi heard clearly as "बातचारो" for "लाइट बंद करो", yet, told the sentences a home's commands are made of,
        it ranks the one said first (hearthd.audio.rescoring). The whole 30-second window is attended, as whisper was
        trained: cut to the speech's frames, an utterance cut close by the endpointer scores as noise."""
        from faster_whisper.audio import pad_or_trim
        from faster_whisper.tokenizer import Tokenizer

        if not texts:
            return []
        floats = np.asarray(audio, dtype=np.float32) / 32768.0
        self.model.frames = self._window(len(floats), language)  # the transcription's: its encoder output is reused
        features = self.model.feature_extractor(floats)[..., :-1]
        frames = min(features.shape[-1], 3000)
        encoded = self.model.encode(pad_or_trim(features))  # the transcription's, when it is the same audio
        start = Tokenizer(self.model.hf_tokenizer, True, task="transcribe", language=language).sot_sequence
        tokens = [self._tokens(text) for text in texts]
        said = [ids for ids in tokens if ids]
        if self.model.frames and len(said) > 1:
            # the short window: the sentences in one batch, the encoder's output repeated for each (7 English
            # sentences: 93 ms against 169 one by one, the same scores); over whisper's 30 s the batch was slower
            # (10 sentences: 844 ms against 454), every row attending the whole window
            import ctranslate2

            rows = ctranslate2.StorageView.from_array(np.ascontiguousarray(np.repeat(np.asarray(encoded), len(said),
                                                                                     axis=0)))
            aligned = iter(self.model.model.align(rows, start, said, [frames] * len(said), median_filter_width=7))
        else:
            aligned = (self.model.model.align(encoded, start, [ids], [frames], median_filter_width=7)[0]
                       for ids in said)
        out = []
        for ids in tokens:
            if not ids:
                out.append((float("-inf"), 0.0))
                continue
            found = next(aligned)
            probs = np.maximum(np.asarray(found.text_token_probs, dtype=np.float64), 1e-9)
            # the first time step of the alignment's last index (the end of the text), against the speech's steps
            ends = [t for i, t in found.alignments if i == len(ids)]
            reach = min(1.0, min(ends) / max(1, frames // 2)) if ends else 1.0
            out.append((float(np.log(probs).mean()), round(reach, 3)))
        return out

    def _tokens(self, text: str) -> list[int]:
        """`text` in the tokens whisper itself writes it with. The model's tokenizer splits some words from their
        space (" to the timer" as "Ġ", "to", "Ġ", "the", ...) where whisper decodes "Ġto", "Ġthe": forced, such a split
        is a text whisper never writes, and " to the timer" fitted at 0.0 a token. A space joined to the word after it
        whenever the vocabulary has them as one."""
        tokenizer = self.model.hf_tokenizer
        ids = list(tokenizer.encode(" " + text.strip(), add_special_tokens=False).ids)
        space = tokenizer.token_to_id("Ġ")
        out: list[int] = []
        i = 0
        while i < len(ids):
            if ids[i] == space and i + 1 < len(ids):
                joined = tokenizer.token_to_id("Ġ" + (tokenizer.id_to_token(ids[i + 1]) or ""))
                if joined is not None:
                    out.append(joined)
                    i += 2
                    continue
            out.append(ids[i])
            i += 1
        return out

    def _decode(self, floats: np.ndarray, language: str, bias: Bias) -> str:
        segments, _info = self.model.transcribe(
            floats,
            language=language,
            beam_size=self.cfg.beam_size,
            temperature=self.cfg.temperature,
            max_new_tokens=self.cfg.max_new_tokens,
            initial_prompt=bias.prompt,
            hotwords=bias.hotwords,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,  # the endpointer already cut the speech out
        )
        # U+FFFD is never a word: it is a character whose bytes whisper's byte-level tokens cut in half (Hindi's
        # three-byte letters at max_new_tokens, or across two segments), and Home Assistant showed it as it came
        return " ".join(s.text.replace("\ufffd", "").strip() for s in segments).strip()
