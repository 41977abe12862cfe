"""The round trip of a voice: reply phrases with their placeholders filled, and how many of their keywords speech to
text reads back (bench/voices.py prints it for every phrase; tests/test_natural_voices.py checks a sample).

Keyword recall (`keywords`, `recall`): the phrase's content words (casefolded, punctuation stripped; at least 3
characters in en/ru, 2 in hi; numbers count whatever their length, number words are read as digits on both sides)
that appear in the transcript. Lenient: a keyword is heard when a transcript word equals it, shares a prefix of 5 or
more characters with it (ru), or is within a rapidfuzz ratio of 80 (where rapidfuzz is installed; numbers must be
equal: 7:30 is heard in "7:30", "7.30am" or "7 30").
"""

from __future__ import annotations

import os
import re
import unicodedata
from collections.abc import Callable
from functools import cache
from typing import Any

import numpy as np

from ..audio.pcm import SAMPLE_RATE, resample
from ..locale import LocaleError, toml
from ..sentences import MARKS
from ..text import fold

LANGS = ("en", "ru", "hi")
TARGETS = {"en": 90.0, "ru": 80.0, "hi": 60.0}  # keyword recall, %, of the default voice (and above espeak-ng's)
FIRST_AUDIO_TARGET_MS = 300.0
PAD_BEFORE_S, PAD_AFTER_S = 0.3, 0.5
MIN_CHARS = {"en": 3, "ru": 3, "hi": 2}  # a content word's least length (numbers count at any length)
RU_PREFIX = 5  # Russian: a shared prefix this long is the same word in another case ("будильник" / "будильника")
FUZZ_RATIO = 80.0  # rapidfuzz.fuzz.ratio at which two words count as the same (whisper's spelling slips)
FILES = ("phrases.toml", "answers.toml")
SKIP_SECTIONS = ("notify",)  # desktop notification titles: shown, never spoken

# A sample for each placeholder the locale files use, by name, per language: as the code fills them (a count with its
# noun, a duration in words for ru/hi, a time as the clock says it, a device as its owner names it).
SAMPLES: dict[str, dict[str, str]] = {
    "en": {
        "action": "turn off the kitchen light", "alarms": "2 alarms", "area": "kitchen", "argument": "the time",
        "artist": "the Beatles", "colour": "blue", "count": "3 lights", "date": "December 5",
        "device": "living room blinds", "door": "front door", "duration": "5 minutes", "failed": "hall lamp",
        "first": "kitchen light", "second": "bedroom lamp", "last": "hall lamp", "high": "30", "low": "10",
        "items": "pizza, 4 minutes left; tea, 30 seconds left", "kind": "lights", "label": "coffee",
        "left": "3 minutes", "mode": "heating", "name": "kitchen light", "names": "kitchen light, bedroom lamp",
        "part": "open the garage", "percent": "40 percent", "place": "living room", "quantity": "humidity",
        "state": "on", "temperature": "21", "timers": "2 timers", "times": "7:30 am and 8:15 am", "time": "7:30 am",
        "title": "Yesterday", "value": "21", "weekday": "Tuesday", "what": "turn on the kitchen light",
    },
    "ru": {
        "action": "выключить свет на кухне", "alarms": "два будильника", "area": "кухня", "argument": "время",
        "artist": "группа Кино", "colour": "синий", "count": "три лампы", "date": "5 декабря",
        "device": "шторы в гостиной", "door": "входная дверь", "duration": "пять минут",
        "failed": "лампа в коридоре", "first": "свет на кухне", "second": "лампа в спальне",
        "last": "лампа в коридоре", "high": "30", "low": "10",
        "items": "для пиццы — четыре минуты; для чая — тридцать секунд", "kind": "ламп", "label": "кофе",
        "left": "три минуты", "mode": "обогрев", "name": "свет на кухне", "names": "свет на кухне, лампа в спальне",
        "part": "открой гараж", "percent": "сорок процентов", "place": "гостиная", "quantity": "влажности",
        "state": "включены", "temperature": "21", "timers": "два таймера", "times": "7:30 и 8:15", "time": "7:30",
        "title": "Кукушка", "value": "21", "weekday": "вторник", "what": "включить свет на кухне",
    },
    "hi": {
        "action": "रसोई की बत्ती बंद", "alarms": "दो अलार्म", "area": "रसोई", "argument": "समय",
        "artist": "लता मंगेशकर", "colour": "नीला", "count": "तीन लाइटें", "date": "5 दिसंबर",
        "device": "बैठक के पर्दे", "door": "मुख्य दरवाज़े", "duration": "पाँच मिनट", "failed": "गलियारे की बत्ती",
        "first": "रसोई की बत्ती", "second": "बेडरूम की बत्ती", "last": "गलियारे की बत्ती", "high": "30", "low": "10",
        "items": "पिज़्ज़ा, चार मिनट बाकी; चाय, तीस सेकंड बाकी", "kind": "लाइटें", "label": "चाय",
        "left": "तीन मिनट", "mode": "हीटिंग", "name": "रसोई की बत्ती", "names": "रसोई की बत्ती, बेडरूम की बत्ती",
        "part": "गैराज खोलो", "percent": "चालीस प्रतिशत", "place": "बैठक", "quantity": "नमी", "state": "चालू",
        "temperature": "21", "timers": "दो टाइमर", "times": "सुबह के 7:30 और 8:15", "time": "सुबह के 7:30",
        "title": "तुम ही हो", "value": "21", "weekday": "मंगलवार", "what": "रसोई की बत्ती चालू करना",
    },
}
NEUTRAL = {"en": "something", "ru": "кое-что", "hi": "कुछ"}  # an unknown placeholder's filling
BARE_PERCENT = "40"  # {percent} right before "%" or the word percent: the number alone
PERCENT_WORDS = ("%", "percent", "процент", "प्रतिशत")

_PLACEHOLDER = re.compile(r"\{(\w+)\}")
_SENTENCE_END = tuple(MARKS)
_CLOSERS = "\"'»”’)]"
_DIGIT_JOIN = re.compile(r"(?<=\d)[:.,](?=\d)")  # 7:30 → 730, 1,000 → 1000 (whisper writes times both ways)
_APOSTROPHES = "'’ʼ`"


# --- what is measured (importable) -------------------------------------------------------------------------------


def fill(template: str, lang: str) -> str:
    """`template` with each {placeholder} filled by name with the language's sample (NEUTRAL when unknown)."""
    samples = SAMPLES.get(lang, SAMPLES["en"])

    def one(m: re.Match[str]) -> str:
        name = m.group(1)
        if name == "percent" and template[m.end():].lstrip().casefold().startswith(PERCENT_WORDS):
            return BARE_PERCENT
        return samples.get(name, NEUTRAL.get(lang, NEUTRAL["en"]))

    text = _PLACEHOLDER.sub(one, template)
    # a reply that begins with a placeholder begins with a capital, as a device's own name would give it
    return text[:1].upper() + text[1:] if template.startswith("{") else text


@cache
def _number_words(lang: str) -> dict[str, str]:
    """Number words of one token (0-100) → digits: whisper writes "5" where the phrase says "пять", or the reverse."""
    out: dict[str, str] = {}
    if lang == "en":
        units = ["zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten", "eleven",
                 "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen"]
        tens = ["twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety"]
        out.update({w: str(i) for i, w in enumerate(units)})
        out.update({w: str(20 + 10 * i) for i, w in enumerate(tens)})
        out["hundred"] = "100"
        return out
    try:
        from hearthd.spoken import number_words
    except ImportError:  # pragma: no cover - an older tree: numbers are then compared as written
        return out
    for n in range(101):
        for gender in ("m", "f", "n"):
            try:
                said = number_words(n, lang, gender)
            except Exception:  # noqa: BLE001 — a language without number words (or a gender it lacks): skip
                continue
            word = _fold(said, lang)
            if word and " " not in word and not word.isdigit():
                out.setdefault(word, str(n))
    return out


def _fold(text: str, lang: str) -> str:
    """Casefolded, the spellings whisper and the phrases write either way made one: ё → е; Devanagari without the
    nukta (ज़ → ज) and candrabindu as anusvara (ँ → ं); digits of any script as ASCII; apostrophes dropped."""
    text = fold(text)  # (the same folding as understanding's: hearthd.text)
    text = "".join(str(unicodedata.digit(ch)) if unicodedata.category(ch) == "Nd" else ch for ch in text)
    return "".join(ch for ch in text if ch not in _APOSTROPHES)


def _words(text: str, lang: str) -> list[str]:
    """Every word of `text`, folded: runs of letters, combining marks (Devanagari vowel signs) and digits; number
    words as digits; digits and letters written together are two words ("730am")."""
    text = _DIGIT_JOIN.sub("", _fold(text, lang))
    out: list[str] = []
    word: list[str] = []
    for ch in text + " ":
        kind = unicodedata.category(ch)[0]
        if word and kind in "LMN" and (kind == "N") != word[-1].isdigit():  # "730am" is 730 and am
            out.append("".join(word))
            word = []
        if kind in "LMN":
            word.append(ch)
        elif word:
            out.append("".join(word))
            word = []
    numbers = _number_words(lang)
    return [numbers.get(w, w) for w in out]


@cache
def _percent_signs(lang: str) -> tuple[str, ...]:
    """The words a percentage is said with in `lang` (numbers.toml [percent] signs: "percent", "процентов")."""
    try:
        signs = toml(lang, "numbers.toml").get("percent", {}).get("signs", [])
    except LocaleError:
        return ()
    return tuple(w for s in signs if isinstance(s, str) for w in s.split())


def keywords(text: str, lang: str) -> list[str]:
    """The content words of `text` (each once, in order): words of MIN_CHARS characters or more, and numbers."""
    least = MIN_CHARS.get(lang, 3)
    seen: dict[str, None] = {}
    for w in _words(text, lang):
        if w.isdigit() or len(w) >= least:
            seen.setdefault(w, None)
    return list(seen)


def _fuzz() -> Callable[[str, str], float] | None:
    try:
        from rapidfuzz import fuzz
    except ImportError:
        return None
    return fuzz.ratio


_RATIO = _fuzz()


def _same(keyword: str, word: str, lang: str) -> bool:
    if keyword == word:
        return True
    if keyword.isdigit() or word.isdigit():
        return False
    if lang == "ru" and len(os.path.commonprefix([keyword, word])) >= RU_PREFIX:
        return True
    return _RATIO is not None and _RATIO(keyword, word) >= FUZZ_RATIO


def recall(expected: list[str], heard: str, lang: str) -> tuple[int, int]:
    """(keywords heard, keywords expected): `expected` as `keywords` gives them, `heard` the transcript."""
    said = _words(heard, lang)
    words = set(said)
    if "%" in heard:  # "40%" is "40 percent" heard: whisper writes the word as the sign
        words.update(_fold(w, lang) for w in _percent_signs(lang))
    # "7 30" is 7:30 too: two numbers side by side also count as one
    words.update(a + b for a, b in zip(said, said[1:], strict=False) if a.isdigit() and b.isdigit())
    wanted = [_fold(k, lang) for k in expected]
    return sum(1 for k in wanted if any(_same(k, w, lang) for w in words)), len(wanted)


def _strings(node: Any, path: str) -> list[tuple[str, str]]:
    """(dotted key, value) of every string in a parsed TOML tree, nested tables walked; lists are answer words or
    patterns, not replies, and are left out."""
    if isinstance(node, dict):
        return [item for key, value in node.items() for item in _strings(value, f"{path}.{key}" if path else key)]
    return [(path, node)] if isinstance(node, str) else []


def _spoken(key: str, value: str) -> bool:
    """A reply (or a part of one) the voice says: letters, and a sentence end or a placeholder. Word tables
    ("red", "heating"), word lists ("the, my, a, an…") and notification titles ("hearthd: alarm") are not."""
    if key.split(".", 1)[0] in SKIP_SECTIONS or not any(ch.isalpha() for ch in value):
        return False
    return value.rstrip().rstrip(_CLOSERS).endswith(_SENTENCE_END) or bool(_PLACEHOLDER.search(value))


def reply_phrases(lang: str) -> list[str]:
    """The language's reply phrases, templates unfilled, in file order, each once."""
    out: dict[str, None] = {}
    for name in FILES:
        try:
            data = toml(lang, name)
        except LocaleError:
            continue
        for key, value in _strings(data, ""):
            if _spoken(key, value):
                out.setdefault(value.strip(), None)
    return list(out)


def evenly(items: list[str], limit: int) -> list[str]:
    """At most `limit` of `items` (0: all), spread evenly over the list, in its order."""
    if limit <= 0 or limit >= len(items):
        return list(items)
    return [items[i * len(items) // limit] for i in range(limit)]


def percentile(values: list[float], q: float) -> float:
    """The q-th percentile (0-100), linear between the nearest ranks; nan when there are no values."""
    if not values:
        return float("nan")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100.0
    lo = int(pos)
    hi = min(lo + 1, len(ordered) - 1)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def to_16k(pieces: list[Any]) -> np.ndarray:
    """Speech pieces (int16 at their rates) as one 16 kHz int16 utterance, padded with silence as a microphone
    would hear it."""
    parts = [np.zeros(int(PAD_BEFORE_S * SAMPLE_RATE), dtype=np.int16)]
    for speech in pieces:
        audio = np.asarray(speech.audio, dtype=np.int16).reshape(-1)
        parts.append(np.asarray(resample(audio, int(speech.rate), SAMPLE_RATE), dtype=np.int16))
    parts.append(np.zeros(int(PAD_AFTER_S * SAMPLE_RATE), dtype=np.int16))
    return np.concatenate(parts)
