"""Voices, round trip: each language's default voice against espeak-ng, judged by what whisper hears back.

    .venv/bin/python bench/voices.py [--langs en,ru,hi] [--limit N] [--no-espeak] [--voice hi=kokoro:hm_omega]

Every reply phrase of a language (the string values of locales/<lang>/phrases.toml and answers.toml that are spoken:
they contain letters and end a sentence or hold a {placeholder}; lists of answer words, word tables such as [colours]
and unspoken lines such as timer.not_names or the [notify] titles are left out) has its {placeholders} filled with a
plausible sample of the language (`fill`: a time, a duration, a device name, a percentage…; an unknown placeholder
gets a neutral word). Each voice speaks it sentence by sentence, as the live loop does (hearthd.daemon.live.sentences);
the audio, resampled to 16 kHz with 0.3 s of silence before and 0.5 s after, is read back by the project's speech to
text (whisper base, hearthd.daemon.components.Components.stt, the language forced).

Keyword recall (`keywords`, `recall`): the phrase's content words (casefolded, punctuation stripped; at least 3
characters in en/ru, 2 in hi; numbers count whatever their length, number words are read as digits on both sides)
that appear in the transcript. Lenient: a keyword is heard when a transcript word equals it, shares a prefix of 5 or
more characters with it (ru), or is within a rapidfuzz ratio of 80 (any language, where rapidfuzz is installed;
numbers must be equal: 7:30 is heard in "7:30", "7.30am" or "7 30"). First audio: the time to synthesise the first
sentence of a reply (what the listener waits for before playback starts), each voice loaded and warmed by one
synthesis first.

The default voice is the one the daemon would speak with (hearthd.daemon.components.voice_bank over the default config,
mqtt and D-Bus off); the baseline is hearthd.audio.tts.EspeakTextToSpeech for the language. Prints a line per phrase,
then a table per voice, the recall difference per language, the phrases each voice lost most, and any that failed.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

# No broker and no D-Bus are needed to speak and to hear: set before the config is read and Components is built.
os.environ.setdefault("HEARTHD__MQTT__ENABLED", "false")
os.environ.setdefault("HEARTHD__DBUS__ENABLED", "false")

from hearthd.evaluation.roundtrip import (  # noqa: E402
    FIRST_AUDIO_TARGET_MS,
    LANGS,
    TARGETS,
    evenly,
    fill,
    keywords,
    percentile,
    recall,
    reply_phrases,
    to_16k,
)

# --- the round trip ----------------------------------------------------------------------------------------------


@dataclass
class Outcome:
    """One voice over one language's phrases."""

    lang: str
    voice: str
    phrases: int = 0
    heard: int = 0
    expected: int = 0
    first_ms: list[float] = field(default_factory=list)
    lost: list[tuple[float, str, str]] = field(default_factory=list)  # (recall, phrase, transcript)
    failures: list[tuple[str, str]] = field(default_factory=list)  # (text, exception)

    @property
    def recall_pct(self) -> float:
        return 100.0 * self.heard / self.expected if self.expected else float("nan")


def round_trip(voice: Any, stt: Any, lang: str, name: str, texts: list[str]) -> Outcome:
    """Each text spoken by `voice` sentence by sentence (the first timed) and heard by `stt` in `lang`."""
    from hearthd.daemon.live import sentences

    out = Outcome(lang, name)
    for i, text in enumerate(texts, 1):
        parts = sentences(text) or [text]
        pieces = []
        first: float | None = None
        try:
            for j, sentence in enumerate(parts):
                start = time.perf_counter()
                pieces.append(voice.synthesize(sentence))
                if j == 0:
                    first = (time.perf_counter() - start) * 1000.0
                    out.first_ms.append(first)
            heard = stt.transcribe(to_16k(pieces), lang).text
        except Exception as err:  # noqa: BLE001 — a phrase a voice cannot say is reported, and counts as unheard
            out.failures.append((text, f"{type(err).__name__}: {getattr(err, 'message', None) or err}"))
            heard = ""
        expected = keywords(text, lang)
        got, total = recall(expected, heard, lang)
        out.phrases += 1
        out.heard += got
        out.expected += total
        if total:
            out.lost.append((got / total, text, heard))
        ms = f"{first:.0f} ms" if first is not None else "-"
        print(f"  [{lang} {name} {i}/{len(texts)}] {got}/{total} kw, first audio {ms} | {text} → {heard.strip()}",
              flush=True)
    return out


def warm(voice: Any, text: str) -> float:
    """One synthesis before the timed ones (a loaded daemon's voice has spoken before); its seconds."""
    start = time.perf_counter()
    try:
        voice.synthesize(text)
    except Exception as err:  # noqa: BLE001 — reported; the phrases themselves say whether the voice works
        print(f"  warm-up failed: {type(err).__name__}: {err}", flush=True)
    return time.perf_counter() - start


def table(outcomes: list[Outcome]) -> None:
    print("\n| lang | voice | phrases | keywords | recall % | first audio p50 ms | first audio p95 ms |")
    print("|---|---|---:|---:|---:|---:|---:|")
    for o in outcomes:
        print(f"| {o.lang} | {o.voice} | {o.phrases} | {o.heard}/{o.expected} | {o.recall_pct:.1f} | "
              f"{percentile(o.first_ms, 50):.0f} | {percentile(o.first_ms, 95):.0f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--langs", default=",".join(LANGS), help="languages, comma-separated (default: en,ru,hi)")
    ap.add_argument("--limit", type=int, default=0, help="at most N phrases per language, spread evenly (0: all)")
    ap.add_argument("--no-espeak", action="store_true", help="only the default voices, no espeak-ng baseline")
    ap.add_argument("--voice", action="append", default=[], metavar="LANG=SPEC",
                    help="speak LANG with SPEC (a tts.voices value, e.g. hi=kokoro:hm_omega) instead of its default")
    args = ap.parse_args()
    langs = [lang.strip() for lang in args.langs.split(",") if lang.strip()]

    from hearthd.audio.tts import EspeakTextToSpeech
    from hearthd.config import load_config
    from hearthd.daemon.components import Components, make_store, voice_bank

    # the defaults, and any voice setting given in the environment (HEARTHD__TTS__LENGTH_SCALE=1.15: slower speech)
    environ = {k: v for k, v in os.environ.items()
               if k in ("HEARTHD__MQTT__ENABLED", "HEARTHD__DBUS__ENABLED") or k.startswith("HEARTHD__TTS__")}
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as empty:  # the defaults, whatever the user configured
        cfg = load_config(empty.name, environ=environ)
    for choice in args.voice:  # another voice than the default, to compare voices in one language
        lang, _, spec = choice.partition("=")
        cfg.tts.voices = {**cfg.tts.voices, lang.strip(): spec.strip()}
    store = make_store(cfg)
    bank = voice_bank(cfg, store)
    start = time.perf_counter()
    stt = Components(cfg, store).stt()
    print(f"speech to text: {cfg.stt.model} ({time.perf_counter() - start:.1f} s to load)", flush=True)

    outcomes: dict[tuple[str, str], Outcome] = {}
    for lang in langs:
        templates = reply_phrases(lang)
        texts = [fill(t, lang) for t in evenly(templates, args.limit)]
        print(f"\n{lang}: {len(texts)} of {len(templates)} reply phrases", flush=True)
        if not texts:
            continue
        warm_text = (sentences_of(texts[0]) or [texts[0]])[0]
        voices: list[tuple[str, str, Callable[[str], Any]]] = [("default", "", bank.voice)]
        if not args.no_espeak:
            voices.append(("espeak", f"espeak:{lang}", EspeakTextToSpeech))
        for role, label, make in voices:
            try:
                start = time.perf_counter()
                voice = make(lang)
                loaded = time.perf_counter() - start
            except Exception as err:  # noqa: BLE001 — a voice that cannot load is reported, the others still run
                print(f"  {role} voice for {lang} did not load: {type(err).__name__}: {err}", flush=True)
                continue
            if role == "default":
                choice = bank.choice(lang)
                label = choice.spec
                print(f"  default voice: {choice.spec} ({choice.why})", flush=True)
            print(f"  {label}: loaded in {loaded:.1f} s, warm-up synthesis {warm(voice, warm_text):.2f} s", flush=True)
            outcomes[(lang, role)] = round_trip(voice, stt, lang, label, texts)

    table(list(outcomes.values()))
    print()
    for lang in langs:
        mine, base = outcomes.get((lang, "default")), outcomes.get((lang, "espeak"))
        if mine and base:
            print(f"{lang}: default recall − espeak recall: {mine.recall_pct - base.recall_pct:+.1f} pts")
    print("\ntargets: keyword recall >= " + ", >= ".join(f"{v:.0f}% {k}" for k, v in TARGETS.items())
          + f", above espeak-ng's; first audio <= {FIRST_AUDIO_TARGET_MS:.0f} ms")
    for (lang, role), o in outcomes.items():
        if role != "default":
            continue
        verdict = "met" if o.recall_pct >= TARGETS.get(lang, 0.0) else "NOT met"
        p50 = percentile(o.first_ms, 50)
        timing = "met" if p50 <= FIRST_AUDIO_TARGET_MS else "NOT met"
        print(f"  {lang} {o.voice}: recall {o.recall_pct:.1f}% ({verdict}), first audio p50 {p50:.0f} ms ({timing})")

    for o in outcomes.values():
        worst = sorted((x for x in o.lost if x[0] < 0.6), key=lambda x: x[0])[:5]
        if worst:
            print(f"\nmost lost, {o.lang} {o.voice}:")
            for share, text, heard in worst:
                print(f"  {share:.0%}  {text}  →  {heard.strip() or '(nothing)'}")
    failures = [(o, text, why) for o in outcomes.values() for text, why in o.failures]
    if failures:
        print("\nfailed:")
        for o, text, why in failures:
            print(f"  {o.lang} {o.voice}: {text!r}: {why}")
    return 0


def sentences_of(text: str) -> list[str]:
    """The live loop's sentences of a reply."""
    from hearthd.daemon.live import sentences

    return list(sentences(text))


if __name__ == "__main__":
    sys.exit(main())
