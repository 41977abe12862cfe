"""Relative times made absolute before any matching: "wake me up in twenty minutes" at 14:05 is "wake me up
at 14:25". The clock is read here, by code, rather than put in the prompt: a 0.5B model shown the current
time copies it into arguments, and the time would change the prompt prefix every minute (no KV reuse).
The rewritten words carry the hour, so the grounding check sees a time the user (in effect) said."""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from ..locale import read_with, table
from ..numbers import words_of

_MAX_WORDS = 7


def _relative(lang: str) -> dict[str, Any]:
    """The words that make a duration relative, before it (English "in", Russian "через") or after it (Hindi "में",
    "बाद", Hinglish "mein", "baad"), and how the rewritten text says "at" a clock time (locales/<lang>/clock.toml
    [relative])."""
    found: dict[str, Any] = table(lang, "clock.toml").get("relative", {})
    return found


def _duration(words: list[str], lang: str) -> int | None:
    from ..numbers import parse_duration

    return parse_duration(" ".join(words), lang) if words else None


def relative_span(text: str, lang: str) -> tuple[int, int, int] | None:
    """Where `text` says "in <duration>" / "через <duration>" / "<duration> में": (first word, end, seconds) over
    `words_of(text)`, or None."""
    low = [w.lower() for w in words_of(text)]
    for i, word in enumerate(low):
        if word in _relative(lang).get("before", ()):
            for j in range(min(len(low), i + 1 + _MAX_WORDS), i + 1, -1):  # the longest duration after it
                seconds = _duration(low[i + 1 : j], lang)
                if seconds:
                    return i, j + (2 if low[j : j + 2] == ["from", "now"] else 0), seconds
    for i in range(len(low)):
        for marker in _relative(lang).get("after", ()):
            size = len(marker.split())
            for start in range(max(0, i - _MAX_WORDS), i):
                if " ".join(low[i : i + size]) == marker:
                    seconds = _duration(low[start:i], lang)
                    if seconds:
                        return start, i + size, seconds
    return None


def relative_duration(text: str, lang: str) -> int | None:
    """The seconds of a relative time the text says ("in 5 minutes", "через час", "दस मिनट में"), in the text's
    language or in English (code-mixed speech: "in 5 minutes सामने का दरवाज़ा खोलो")."""
    for source in read_with(lang):
        span = relative_span(text, source)
        if span is not None:
            return span[2]
    return None


def absolute_times(text: str, lang: str, now: datetime) -> str:
    """`text` with "in <duration>" / "через <duration>" / "<duration> में" replaced by the clock time it
    means (24-hour H:MM); text without one comes back unchanged. The caller decides whether the sentence is
    about an alarm: "in 5 minutes open the door" must not become a time to ring at."""
    span = relative_span(text, lang)
    if span is None:
        return text
    start, end, seconds = span
    return _rewrite(words_of(text), start, end, seconds, lang, now)


def _rewrite(words: list[str], start: int, end: int, seconds: int, lang: str, now: datetime) -> str:
    at = now + timedelta(seconds=seconds)
    said = next((str(_relative(source)["at"]) for source in read_with(lang) if _relative(source).get("at")), "{t}")
    clock = said.format(t=f"{at.hour}:{at.minute:02d}")
    return " ".join(words[:start] + [clock] + words[end:])
