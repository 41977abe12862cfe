"""Choosing the language of text input from its script (speech gets Whisper's restricted detection)."""

from __future__ import annotations

import functools
import tomllib
from importlib import resources


@functools.cache
def _hinglish_markers() -> frozenset[str]:
    text = resources.files("hearthd.locales").joinpath("hi", "script.toml").read_text(encoding="utf-8")
    return frozenset(w.lower() for w in tomllib.loads(text)["hinglish"]["markers"])


def is_hinglish(text: str) -> bool:
    """Romanised Hindi ("kitchen ki light on karo", "subah 6 baje ka alarm laga do"): at least two distinct
    Hindi function words or verbs, and they make up a fifth of the words or more."""
    words = [w.strip(".,!?;:'\"").lower() for w in text.split()]
    words = [w for w in words if w]
    hits = {w for w in words if w in _hinglish_markers()}
    return len(hits) >= 2 and sum(w in hits for w in words) * 5 >= len(words)


def language_of_text(text: str, allowed: list[str] | tuple[str, ...], default: str = "en") -> str:
    """Devanagari → hi, Cyrillic → ru, romanised Hindi (Hinglish) → hi, other Latin → en, else the default."""
    counts = {"hi": 0, "ru": 0, "latin": 0}
    for ch in text:
        code = ord(ch)
        if 0x0900 <= code <= 0x097F:
            counts["hi"] += 1
        elif 0x0400 <= code <= 0x04FF:
            counts["ru"] += 1
        elif ch.isascii() and ch.isalpha():
            counts["latin"] += 1
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n and script in allowed:
        return script
    if n and script == "latin" and "hi" in allowed and is_hinglish(text):
        return "hi"
    if n and script == "latin" and "en" in allowed:
        return "en"
    return default if default in allowed else allowed[0]
