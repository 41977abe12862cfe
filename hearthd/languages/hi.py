"""Hindi's own code: every number to 100 is its own word (the table the parser reads), typed in Latin letters as
often as not ("Hinglish"), and whisper writes it in Urdu script at times (locales/hi/numbers.toml, script.toml)."""

from __future__ import annotations

import functools
from typing import Any

from ..locale import table


@functools.cache
def _hindi_numbers() -> dict[int, str]:
    out: dict[int, str] = {}
    for word, value in table("hi", "numbers.toml")["cardinal"]["words"].items():
        if word.isascii():
            continue  # Hinglish spellings are read, not spoken
        out.setdefault(int(value), word)  # the first spelling listed is the one spoken
    return out


def _hindi_words(n: int, gender: str = "m") -> str:
    words = _hindi_numbers()
    if n in words:
        return words[n]
    thousands, rest = divmod(n, 1000)
    hundreds, rest = divmod(rest, 100)
    parts = []
    if thousands:
        parts += [words[thousands], table("hi", "spoken.toml")["numbers"]["thousand"]]
    if hundreds:
        parts += [words[hundreds], table("hi", "spoken.toml")["numbers"]["hundred"]]
    if rest:
        parts.append(words[rest])
    return " ".join(parts)


@functools.cache
def _hinglish_markers() -> frozenset[str]:
    return frozenset(w.lower() for w in table("hi", "script.toml")["hinglish"]["markers"])


@functools.cache
def _hinglish_verbs() -> frozenset[str]:
    return frozenset(w.lower() for w in table("hi", "script.toml")["hinglish"]["verbs"])


SHORT = 4  # words: a command this short may be an English noun and a Hindi verb ("timer roko")


def is_hinglish(text: str) -> bool:
    """Romanised Hindi ("kitchen ki light on karo", "subah 6 baje ka alarm laga do"): at least two distinct
    Hindi function words or verbs, and they make up a fifth of the words or more; or a short command that ends on a
    Hindi verb no English word is spelt like ("timer roko", "kuch gaane chalao", "light jalao": Hindi puts the verb
    last). Such commands were read as English: "timer roko" was asked "For how long?"."""
    words = [w.strip(".,!?;:'\"").lower() for w in text.split()]
    words = [w for w in words if w]
    hits = {w for w in words if w in _hinglish_markers()}
    if len(hits) >= 2 and sum(w in hits for w in words) * 5 >= len(words):
        return True
    return 2 <= len(words) <= SHORT and words[-1] in _hinglish_verbs()


def devanagari(text: str) -> str:
    """Urdu-script (Perso-Arabic) letters in a Hindi transcript transliterated to Devanagari, letter by letter
    (locales/hi/script.toml). Urdu leaves short vowels unwritten, so this is approximate, but it keeps one script
    for the templates and the model; Devanagari and Latin text pass through unchanged."""
    if not any("\u0600" <= ch <= "\u06ff" for ch in text):
        return text
    single, pairs, initial = _urdu_tables()
    out: list[str] = []
    i = 0
    while i < len(text):
        pair = text[i : i + 2]
        start = i == 0 or not text[i - 1].isalpha()
        if pair in pairs:
            out.append(pairs[pair])
            i += 2
            continue
        ch = text[i]
        out.append(initial[ch] if start and ch in initial else single.get(ch, ch))
        i += 1
    return "".join(out)


@functools.cache
def _urdu_tables() -> tuple[dict[str, str], dict[str, str], dict[str, str]]:
    data = table("hi", "script.toml")
    return tuple({k: str(v) for k, v in data[key].items()} for key in ("urdu", "urdu_pairs", "urdu_initial"))  # type: ignore[return-value]


RULES: dict[str, Any] = {"number_words": _hindi_words, "reads_latin": is_hinglish, "transcript": devanagari}
