"""Choosing the language of text input from its script (speech gets Whisper's restricted detection)."""

from __future__ import annotations


def language_of_text(text: str, allowed: list[str] | tuple[str, ...], default: str = "en") -> str:
    """Devanagari → hi, Cyrillic → ru, otherwise the default (Latin script, incl. romanised Hindi for now)."""
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
    if n and script == "latin" and "en" in allowed:
        return "en"
    return default if default in allowed else allowed[0]
