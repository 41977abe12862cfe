"""Locale data (spoken phrases, prompts) loaded from the locales/ package; no phrases live in code."""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any

from .config import SUPPORTED_LANGUAGES
from .errors import HearthdError


class LocaleError(HearthdError):
    """A phrase or locale file is missing."""

    code = "locale-missing"


def _read(lang: str, name: str) -> str:
    if lang not in SUPPORTED_LANGUAGES:
        raise LocaleError(f"unsupported language {lang!r}")
    try:
        return resources.files("hearthd.locales").joinpath(lang, name).read_text(encoding="utf-8")
    except FileNotFoundError as e:
        raise LocaleError(f"locales/{lang}/{name} is missing") from e


@cache
def phrases(lang: str) -> dict[str, str]:
    """All phrases of a language, flattened to dotted keys ("alarm.set")."""
    data = tomllib.loads(_read(lang, "phrases.toml"))
    flat: dict[str, str] = {}

    def walk(node: dict[str, Any], prefix: str) -> None:
        for k, v in node.items():
            key = f"{prefix}{k}"
            if isinstance(v, dict):
                walk(v, key + ".")
            else:
                flat[key] = str(v)

    walk(data, "")
    return flat


def phrase(lang: str, key: str, **values: Any) -> str:
    """A spoken phrase in `lang` with its placeholders filled."""
    table = phrases(lang)
    if key not in table:
        raise LocaleError(f"phrase {key!r} is missing in locales/{lang}/phrases.toml")
    return table[key].format(**values)


def ask_phrase(lang: str, argument: str) -> str:
    """The question for a missing argument: its own phrase ("For what time?") or the generic one."""
    table = phrases(lang)
    key = f"ask.{argument}"
    return table[key] if key in table else phrase(lang, "ask.generic", argument=argument)


@cache
def system_prompt(lang: str) -> str:
    """The agent's system prompt for a language."""
    return _read(lang, "system_prompt.txt").strip()


@cache
def optional_text(lang: str, name: str) -> str | None:
    """An optional per-language text file (e.g. the STT initial prompt), or None."""
    try:
        return _read(lang, name).strip() or None
    except LocaleError:
        return None


@cache
def table(lang: str, name: str) -> dict[str, Any]:
    """A language's TOML data file (locales/<lang>/<name>: clock words, decline words), parsed once; {} if none."""
    try:
        return tomllib.loads(_read(lang, name))
    except LocaleError:
        return {}
