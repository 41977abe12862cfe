"""Spoken numbers and clock times written as digits, from locale data (locales/<lang>/numbers.toml)."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

_PUNCT = "\"'“”«»,;:!?()[]।॥"


def words_of(text: str) -> list[str]:
    """Words split on whitespace with punctuation stripped. Not `\\w+`: Devanagari vowel signs are combining
    marks, and `\\w` would cut "शाम" into pieces."""
    return [w.strip(_PUNCT) for w in text.split() if w.strip(_PUNCT)]


@cache
def _table(lang: str) -> dict[str, Any] | None:
    try:
        text = resources.files("hearthd.locales").joinpath(lang, "numbers.toml").read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    return tomllib.loads(text)


def _clock(hour: int, minutes: int) -> str:
    if minutes < 0:
        hour, minutes = hour - 1, 60 + minutes
    hour = hour if hour > 0 else 12
    return f"{hour}:{minutes:02d}"


def digits_for_times(text: str, lang: str, in_time_slot: bool = False) -> str:
    """Replace number words (and Hindi's साढ़े/सवा/पौने + hour) with digits; other words are kept as they are.

    Languages whose table says `only_in_time_slots` are converted only when the text is known to be a time.
    """
    table = _table(lang)
    if not table or (table.get("options", {}).get("only_in_time_slots") and not in_time_slot):
        return text
    for phrase, minutes in table.get("phrases", {}).items():
        marker = f"\u2063{minutes:+d}"  # one token that the before-hour rule below understands
        text = re.sub(rf"\b{re.escape(phrase)}\b", marker, text, flags=re.I)
        table.setdefault("before_hour", {})[marker] = minutes
    units: dict[str, int] = {k.lower(): v for k, v in table.get("units", {}).items()}
    before: dict[str, int] = {k.lower(): v for k, v in table.get("before_hour", {}).items()}
    whole: dict[str, str] = {k.lower(): v for k, v in table.get("whole", {}).items()}
    minutes_words: dict[str, int] = {k.lower(): v for k, v in table.get("minutes", {}).items()}
    half_words = {w.lower() for w in table.get("half", {}).get("words", [])}
    ordinals: dict[str, int] = {k.lower(): v for k, v in table.get("ordinals", {}).items()}
    ambiguous = table.get("ambiguous", {})
    unit_words = set(ambiguous.get("units", []))
    for word in ambiguous.get("words", []):
        units.pop(word, None)
    tokens = re.split(r"(\s+)", text)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        word = tokens[i].lower()
        nxt = tokens[i + 2].lower() if i + 2 < len(tokens) else ""
        if word in before and (nxt in table.get("units", {}) or nxt.isdigit()):
            hour = table["units"].get(nxt) or int(nxt)
            out.append(_clock(hour, before[word]))
            i += 3
            continue
        if word in half_words and nxt in ordinals:  # половина восьмого → 7:30
            out.append(_clock(ordinals[nxt], -30))
            i += 3
            continue
        hour = units.get(word) if word in units else (int(word) if word.isdigit() and int(word) <= 24 else None)
        if hour is not None and nxt in minutes_words:  # семь тридцать (пять) → 7:30 / 7:35
            minute = minutes_words[nxt]
            i += 3
            unit_after = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            if minute >= 20 and units.get(unit_after, 10) < 10:
                minute += units[unit_after]
                i += 2
            out.append(f"{hour}:{minute:02d}")
            continue
        if word in whole:
            out.append(whole[word])
        elif word in units:
            out.append(str(units[word]))
        elif word in ambiguous.get("words", []) and nxt in unit_words:
            out.append(str(table["units"][tokens[i]]))
        else:
            out.append(tokens[i])
        i += 1
    return "".join(out)


_CLOCK = re.compile(r"(?<![\d:])(\d{1,2})(?:[:.](\d{2}))?(?![\d:])|(?<!\d)(\d)(\d{2})(?!\d)")


def parse_clock(text: str, lang: str) -> str | None:
    """A spoken or written time of day as HH:MM ("quarter past six pm" → 18:15, "सुबह साढ़े छह" → 06:30,
    "половина восьмого вечера" → 19:30, "7.30 am" → 07:30), or None when the text holds no single clear time."""
    table = _table(lang) or {}
    low = digits_for_times(text.lower(), lang, in_time_slot=True)
    matches = _CLOCK.findall(low)
    if len(matches) != 1:
        return None
    h1, m1, h2, m2 = matches[0]
    hour, minute = (int(h1), int(m1 or 0)) if h1 else (int(h2), int(m2))
    words = set(words_of(low)) | {w.rstrip(".") for w in words_of(low)}
    periods = table.get("periods", {})
    if hour <= 12 and words & set(periods.get("pm", [])):
        hour = hour % 12 + 12
    elif hour == 12 and words & set(periods.get("am", [])):
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"
