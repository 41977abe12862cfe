"""Speech to text with faster-whisper, with the language chosen among the configured ones only."""

from __future__ import annotations

import logging
import math
import threading
from collections.abc import Callable, Iterator, Sequence
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

# faster-whisper's own defaults for a window heard as silence: no-speech probability above, mean log-probability not
# above (transcribe_many decides as its transcribe does)
NO_SPEECH = 0.6
LOW_LOGPROB = -1.0
MIN_TOGETHER = 3 * 160  # samples: three of whisper's feature frames, the least heard in a batch
# An utterance no louder than this at its loudest (int16; -54 dBFS) holds no speech: a microphone's own hiss, a muted
# line, digital silence. Whisper normalises what it hears to its loudest, so it is never given such a clip: it writes
# words into it ("music,", "Thank you."), and which words depends on the CPU's arithmetic
SILENT_PEAK = 64
# A decode writes at most NEW_TOKENS_BASE + NEW_TOKENS_PER_S tokens a second of audio (WhisperSpeechToText._new_tokens):
# the spoken suites' commands took at most 4.7 (English), 4.0 (Russian) and 7.7 (Hindi, whose letters take several
# byte tokens each) a second of their audio, the 12 beyond them a short one's slack.
NEW_TOKENS_BASE = 12
NEW_TOKENS_PER_S = 10


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


@dataclass
class Encoded:
    """An utterance whisper has encoded in the short window and chosen the language of (WhisperSpeechToText.
    prepare_many): what is left is its decoding (finish_many)."""

    request: tuple[np.ndarray, str | None, str | None]
    floats: np.ndarray
    features: np.ndarray
    encoded: np.ndarray
    lang: str
    prob: float
    source: str


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


def _silent(audio: np.ndarray) -> bool:
    """Whether an utterance long enough for whisper holds nothing louder than SILENT_PEAK (a shorter one is whisper's
    to refuse)."""
    return len(audio) >= MIN_TOGETHER and int(np.max(np.abs(np.asarray(audio, dtype=np.int32)))) < SILENT_PEAK


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
        return self._allowed(probs)

    def _allowed(self, probs: Sequence[tuple[str, float]]) -> tuple[str, float]:
        """Whisper's likeliest language among cfg.languages, its probability renormalised over them."""
        allowed = self.cfg.languages
        ranked = [(lang, p) for lang, p in probs if lang in allowed]
        if not ranked:
            return allowed[0], 0.0
        total = sum(p for _, p in ranked) or 1.0
        lang, p = max(ranked, key=lambda x: x[1])
        return lang, p / total

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript:
        """Text of one utterance. `language` forces it (else stt.language, else detection among stt.languages);
        when detection is less sure than stt.min_language_probability, `fallback` (the conversation's last
        language) is used if given, then general.language."""
        return self._transcribe(audio, language, fallback)

    def _transcribe(self, audio: np.ndarray, language: str | None, fallback: str | None,
                    encoded_now: bool = False) -> Transcript:
        """`transcribe`; `encoded_now`: the encoder's last output is this utterance's (prepare_many just encoded it in
        the short window) and is kept for it."""
        if _silent(audio):
            return Transcript("", language or self.cfg.language or fallback or self.cfg.languages[0], 0.0,
                              "forced" if language or self.cfg.language else "fallback" if fallback else "detected")
        floats = np.asarray(audio, dtype=np.float32) / 32768.0
        if not encoded_now:
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
        plain, bias = self._biases(language)
        _go_on()
        return self._finish(floats, Transcript(self._decode(floats, language, bias), language, round(prob, 3), source),
                            bias, plain)

    def _biases(self, language: str) -> tuple[Bias, Bias]:
        """The language's own prompt, and what a decode in it is given (the home's words with stt.bias)."""
        plain = unbiased(language)
        return plain, (self.bias.for_language(language) if self.bias is not None else plain)

    def _finish(self, floats: np.ndarray, heard: Transcript, bias: Bias, plain: Bias) -> Transcript:
        """The transcript of a decode with `bias`: decoded again without it when it was the prompt written back or a
        loop, and written as the language writes it."""
        text, language = heard.text, heard.lang
        if bias is not plain and (bias.echoed(text) or looped(text) or self._ran_on(text, len(floats))):
            # whisper wrote its prompt back instead of what was said (silence, noise, a mumble), or went round in a
            # loop listing on as its prompt does: decoded again as without stt.bias, and an echo of the language's
            # own prompt then is no speech either
            log.info("the transcript was the prompt written back or a loop; decoded again without the home's words")
            self.echoes += 1
            _go_on()
            self.model.frames = self._window(len(floats), language)
            text = self._decode(floats, language, plain)
            if plain.echoed(text):
                text = ""
        text = rules(language).transcript(text)  # Whisper writes Hindi in Urdu script at times
        return Transcript(text, language, heard.prob, heard.source)

    def transcribe_many(self, requests: Sequence[tuple[np.ndarray, str | None, str | None]]
                        ) -> list[Transcript | Exception]:
        """Several utterances, each (audio, language, fallback) as `transcribe` takes it and heard as it hears it, in as
        few of whisper's passes as they allow (`prepare_many`, then `finish_many`). An utterance whose pass fails gets
        its own error; the others are heard all the same."""
        prepared = self.prepare_many(requests)
        encoded = [(i, p) for i, p in enumerate(prepared) if isinstance(p, Encoded)]
        out = [p if not isinstance(p, Encoded) else SttError("not transcribed") for p in prepared]
        for (i, _), heard in zip(encoded, self.finish_many([p for _, p in encoded]), strict=True):
            out[i] = heard
        return out

    def prepare_many(self, requests: Sequence[tuple[np.ndarray, str | None, str | None]]
                     ) -> list[Encoded | Transcript | Exception]:
        """The first half of hearing several utterances: each that whisper reads in the short window encoded (two at a
        time: on 2 cores 65 ms each, where one alone took ~100 beside the decodes, and all at once ~110, the batch
        leaving the caches) and its language chosen there, to be decoded together by `finish_many`; any other (a
        language whisper needs its 30 s for, a long one, one it is unsure of the language of, one to be sampled) is
        transcribed alone, here."""
        from faster_whisper.audio import pad_or_trim

        out: list[Encoded | Transcript | Exception | None] = [None] * len(requests)
        groups: dict[int, list[int]] = {}  # the short window (feature frames) → the utterances encoded in it
        forced: dict[int, str] = {}
        for i, (audio, language, fallback) in enumerate(requests):
            language = language or self.cfg.language or None
            frames = self._window(len(audio))
            if frames and self._together(len(audio), language, fallback) and not _silent(audio):
                groups.setdefault(frames, []).append(i)
                if language:
                    forced[i] = language
            else:
                out[i] = self._alone(*requests[i])
        for frames, members in groups.items():
            floats = {i: np.asarray(requests[i][0], dtype=np.float32) / 32768.0 for i in members}
            try:
                self.model._last = None
                self.model.frames = frames
                features = [pad_or_trim(self.model.feature_extractor(floats[i])[..., :-1])[..., :frames]
                            for i in members]
                # (one alone is encoded as transcribe encodes it, so that when it is then heard alone, in whisper's
                # 30 s, its glance in the short window is not encoded twice: the encoder keeps its last output)
                encoded = np.concatenate([np.asarray(self.model.encode(
                    np.stack(features[k:k + 2]) if k + 1 < len(members) else features[k]))
                    for k in range(0, len(members), 2)])
                heard = self._languages(encoded, [forced.get(i) for i in members])
            except Exception as e:  # each utterance is then heard alone, and fails alone
                log.warning("speech to text of %d utterances together failed (%s): each is heard alone",
                            len(members), e)
                for i in members:
                    out[i] = self._alone(*requests[i])
                continue
            for k, (i, (language, prob, source)) in enumerate(zip(members, heard, strict=True)):
                fallback = requests[i][2]
                sure = source == "forced" or prob >= self.cfg.rescore_languages_below and not (
                    prob < self.cfg.min_language_probability and fallback and fallback != language)
                if language in self.cfg.window_languages and sure:
                    out[i] = Encoded(requests[i], floats[i], features[k], encoded[k], language, round(prob, 3), source)
                else:  # read in whisper's 30 s, its language chosen again there, as transcribe does
                    out[i] = self._alone(*requests[i], encoded_now=len(members) == 1)
        return [o if o is not None else SttError("not transcribed") for o in out]

    def finish_many(self, prepared: Sequence[Encoded]) -> list[Transcript | Exception]:
        """The second half: the encoded utterances decoded together, a batch per language and window. One alone
        leaves its encoder output for the rescoring to reuse, as `transcribe` does."""
        out: list[Transcript | Exception | None] = [None] * len(prepared)
        batches: dict[tuple[str, int], list[int]] = {}
        for i, one in enumerate(prepared):
            batches.setdefault((one.lang, one.encoded.shape[0]), []).append(i)
        for (language, _), members in batches.items():
            try:
                texts = self._decode_many(np.stack([prepared[i].encoded for i in members]), language,
                                          max(len(prepared[i].floats) for i in members))
            except Exception as e:
                log.warning("decoding %d utterances together failed (%s): each is heard alone", len(members), e)
                for i in members:
                    out[i] = self._alone(*prepared[i].request)
                continue
            plain, bias = self._biases(language)
            for i, text in zip(members, texts, strict=True):
                one = prepared[i]
                if len(prepared) == 1:
                    import ctranslate2

                    self.model.frames = one.features.shape[-1]
                    self.model._last = (one.features, ctranslate2.StorageView.from_array(
                        np.ascontiguousarray(one.encoded[np.newaxis])))
                try:
                    out[i] = self._finish(one.floats, Transcript(text, language, one.prob, one.source), bias, plain)
                except Exception as e:
                    out[i] = e
        return [o if o is not None else SttError("not transcribed") for o in out]

    def _together(self, samples: int, language: str | None, fallback: str | None) -> bool:
        """Whether `transcribe` would hear such an utterance in the short window alone, with no sampling: a language
        told that is read there, or one chosen there (no conversation in a language whisper needs its 30 s for). A clip
        shorter than a few feature frames is faster-whisper's to refuse, alone: it has no window."""
        window = self.cfg.window_languages
        if samples < MIN_TOGETHER or self.cfg.temperature != 0:
            return False
        if language:
            return language in window
        detected = len(self.cfg.languages) > 1 or self.cfg.languages[0] in window  # one language: never detected
        return (fallback is None or fallback in window) and detected

    def _alone(self, audio: np.ndarray, language: str | None, fallback: str | None,
               encoded_now: bool = False) -> Transcript | Exception:
        try:
            return self._transcribe(audio, language, fallback, encoded_now)
        except Exception as e:  # this utterance's own error
            return e

    def _languages(self, encoded: np.ndarray, forced: list[str | None]) -> list[tuple[str, float, str]]:
        """The language of each encoded utterance, as detect_language chooses it (among cfg.languages, renormalised),
        or the one it was told."""
        import ctranslate2

        allowed = self.cfg.languages
        probs: list[list[tuple[str, float]]] = [[] for _ in forced]
        if len(allowed) > 1 and any(lang is None for lang in forced):
            detected = self.model.model.detect_language(ctranslate2.StorageView.from_array(encoded))
            probs = [[(token[2:-2], p) for token, p in found] for found in detected]
        out = []
        for lang, found in zip(forced, probs, strict=True):
            if lang is not None:
                out.append((lang, 1.0, "forced"))
            elif len(allowed) == 1:
                out.append((allowed[0], 1.0, "detected"))
            else:
                out.append((*self._allowed(found), "detected"))
        return out

    def _ran_on(self, text: str, samples: int) -> bool:
        """Whether a decode wrote all the tokens the audio may hold: no end found, as in a loop not yet repeated
        often enough to show (decoded again without the home's words, as a loop is)."""
        cap = self._new_tokens(samples)
        return cap < self.cfg.max_new_tokens and bool(text) and self.count_tokens(text) >= cap - 1

    def _new_tokens(self, samples: int) -> int:
        """The most tokens a decode of `samples` of audio may write: what the audio's length can hold
        (NEW_TOKENS_BASE and NEW_TOKENS_PER_S, well above anything said), never over stt.max_new_tokens. Whisper going
        round in a loop on noise or a mumble ("आद पर प्र प्र प्र …") ran to the 96 tokens, ~1.5 s a decode on 2 cores,
        and twice (the loop is decoded again without the home's words)."""
        return max(1, min(self.cfg.max_new_tokens,
                          NEW_TOKENS_BASE + math.ceil(NEW_TOKENS_PER_S * samples / SAMPLE_RATE)))

    def _decode_many(self, encoded: np.ndarray, language: str, samples: int) -> list[str]:
        """Greedy decodes of several encoded utterances in one language, in one batch (the longest `samples` long):
        what `_decode` writes for each (faster-whisper's generate call for a window, its silence check, its text)."""
        import ctranslate2
        from faster_whisper.tokenizer import Tokenizer
        from faster_whisper.transcribe import get_suppressed_tokens

        _plain, bias = self._biases(language)
        tokenizer = Tokenizer(self.model.hf_tokenizer, self.model.model.is_multilingual, task="transcribe",
                              language=language)
        previous = tokenizer.encode(" " + bias.prompt.strip()) if bias.prompt else []
        prompt = self.model.get_prompt(tokenizer, previous, without_timestamps=True, hotwords=bias.hotwords)
        results = self.model.model.generate(
            ctranslate2.StorageView.from_array(np.ascontiguousarray(encoded)), [list(prompt) for _ in encoded],
            beam_size=self.cfg.beam_size, patience=1, length_penalty=1, repetition_penalty=1, no_repeat_ngram_size=0,
            max_length=len(prompt) + self._new_tokens(samples), return_scores=True, return_no_speech_prob=True,
            suppress_blank=True, suppress_tokens=get_suppressed_tokens(tokenizer, [-1]),
            max_initial_timestamp_index=int(round(1.0 / self.model.time_precision)))
        texts = []
        for result in results:
            tokens = result.sequences_ids[0]
            avg_logprob = result.scores[0] * len(tokens) / (len(tokens) + 1)
            if result.no_speech_prob > NO_SPEECH and not avg_logprob > LOW_LOGPROB:
                texts.append("")  # faster-whisper skips the window as silence
                continue
            texts.append(tokenizer.decode(tokens).replace("\ufffd", "").strip())
        return texts

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
            max_new_tokens=self._new_tokens(len(floats)),
            initial_prompt=bias.prompt,
            hotwords=bias.hotwords,
            condition_on_previous_text=False,
            without_timestamps=True,
            vad_filter=False,  # the endpointer already cut the speech out
        )
        # U+FFFD is never a word: it is a character whose bytes whisper's byte-level tokens cut in half (Hindi's
        # three-byte letters at max_new_tokens, or across two segments), and Home Assistant showed it as it came
        return " ".join(s.text.replace("\ufffd", "").strip() for s in segments).strip()
