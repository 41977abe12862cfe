"""Several requests in one utterance ("turn off the light and set an alarm for seven"): where to cut."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources


@cache
def _joiners(lang: str) -> tuple[str, ...]:
    text = resources.files("hearthd.locales").joinpath(lang, "split.toml").read_text(encoding="utf-8")
    return tuple(sorted((w.lower() for w in tomllib.loads(text)["and"]), key=lambda w: -len(w.split())))


def split_requests(text: str, lang: str) -> list[str]:
    """The utterance cut at the joining words of its language ("and", "и", "और"), commas included."""
    words = [w.strip(",;") for w in re.split(r"[\s,;]+", text.strip()) if w.strip(",;")]
    parts: list[list[str]] = [[]]
    i = 0
    while i < len(words):
        for joiner in _joiners(lang):
            size = len(joiner.split())
            if " ".join(words[i : i + size]).lower() == joiner and parts[-1]:
                parts.append([])
                i += size
                break
        else:
            parts[-1].append(words[i])
            i += 1
    return [" ".join(p) for p in parts if p]
