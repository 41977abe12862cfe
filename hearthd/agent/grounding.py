"""Grounding checks: an argument value the user never said (e.g. a time in "what is the capital of France")
is the model guessing, and a guess is never acted on."""

from __future__ import annotations

import re
import tomllib
from functools import cache
from importlib import resources
from typing import Any

from ..tools.registry import Tool

GROUND_KEY = "x-ground"  # schema annotation: how a value must show up in the utterance


@cache
def _time_words(lang: str) -> tuple[str, ...]:
    text = resources.files("hearthd.locales").joinpath(lang, "grounding.toml").read_text(encoding="utf-8")
    return tuple(w.lower() for w in tomllib.loads(text)["time_words"])


def time_is_grounded(utterance: str, lang: str) -> bool:
    """True when the utterance names a time at all: a digit or a time word of its language."""
    low = utterance.lower()
    if re.search(r"\d", low):
        return True
    langs = {lang, "en"}  # English time words turn up in Hindi and Russian speech too
    words = re.findall(r"[\w'.]+", low)
    return any(w.startswith(tw) for w in words for la in langs for tw in _time_words(la))


def ungrounded_arguments(tool: Tool, arguments: dict[str, Any], utterance: str, lang: str) -> list[str]:
    """Names of the arguments whose values the utterance does not support."""
    props: dict[str, Any] = tool.parameters.get("properties", {})
    bad = []
    for key in arguments:
        kind = props.get(key, {}).get(GROUND_KEY)
        if kind == "time" and not time_is_grounded(utterance, lang):
            bad.append(key)
    return bad
