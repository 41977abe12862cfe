"""Several requests in one utterance ("turn off the light and set an alarm for seven"): where to cut."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources


@cache
def _table(lang: str) -> dict[str, list[str]]:
    text = resources.files("hearthd.locales").joinpath(lang, "split.toml").read_text(encoding="utf-8")
    return tomllib.loads(text)


@cache
def _joiners(lang: str) -> tuple[str, ...]:
    return tuple(sorted((w.lower() for w in _table(lang)["and"]), key=lambda w: -len(w.split())))


@cache
def _inside(lang: str) -> tuple[tuple[str, ...], ...]:
    """What follows a joining word inside one request ("an hour and a half"): no cut there."""
    return tuple(tuple(w.lower().split()) for w in _table(lang).get("not_before", []))


def split_requests(text: str, lang: str) -> list[str]:
    """The utterance cut at the joining words of its language ("and", "и", "और"), commas included."""
    words = [w.strip(",;") for w in re.split(r"[\s,;]+", text.strip()) if w.strip(",;")]
    parts: list[list[str]] = [[]]
    i = 0
    while i < len(words):
        for joiner in _joiners(lang):
            size = len(joiner.split())
            after = tuple(w.lower() for w in words[i + size :])
            if " ".join(words[i : i + size]).lower() == joiner and parts[-1] \
                    and not any(after[: len(tail)] == tail for tail in _inside(lang)):
                parts.append([])
                i += size
                break
        else:
            parts[-1].append(words[i])
            i += 1
    return [" ".join(p) for p in parts if p]
