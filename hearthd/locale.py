"""Locale data (spoken phrases, prompts, word tables, sentence templates) from the locales/ folders; no phrases
live in code, and this is the only module that reads them.

A language is a folder: locales/<lang>/ as installed (the `hearthd.locales` package), plus the subfolders of each
directory in HEARTHD_LOCALES (os.pathsep-separated), which is how a language is added without touching the
installation (a folder there of a code hearthd already has replaces that language). A folder is a language when it
carries the files every language needs (REQUIRED).
"""

from __future__ import annotations

import os
import tomllib
from functools import cache
from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Any

from .errors import HearthdError

# The files a folder needs to be a language (read without a fallback); the others are optional.
REQUIRED = ("phrases.toml", "system_prompt.txt", "answers.toml", "grounding.toml", "numbers.toml", "split.toml",
            "spoken.toml", "tools.toml")
DEFAULT_LANGUAGE = "en"  # general.language's default: a turn nothing has told the language of is in it
ENV = "HEARTHD_LOCALES"  # directories whose subfolders are languages too (added or replacing a built-in one)


class LocaleError(HearthdError):
    """A phrase or locale file is missing."""

    code = "locale-missing"


def _is_language(folder: Traversable) -> bool:
    return folder.is_dir() and all(folder.joinpath(name).is_file() for name in REQUIRED)


@cache
def _folders(extra: str) -> dict[str, Traversable]:
    found: dict[str, Traversable] = {}
    try:
        root: Traversable | None = resources.files("hearthd.locales")
    except ModuleNotFoundError:  # pragma: no cover - a broken install; the extra folders may still hold languages
        root = None
    roots = [root] if root is not None else []
    roots += [Path(d) for d in extra.split(os.pathsep) if d]
    for base in roots:  # later roots win: a user's folder replaces the installed language of its code
        for entry in sorted(base.iterdir(), key=lambda e: e.name) if base.is_dir() else []:
            if not entry.name.startswith((".", "_")) and _is_language(entry):
                found[entry.name] = entry
    return dict(sorted(found.items()))


def languages() -> tuple[str, ...]:
    """The supported languages: the locale folders that exist and carry the required files, sorted."""
    return tuple(_folders(os.environ.get(ENV, "")))


def folder(lang: str) -> Traversable:
    """locales/<lang>/ of a supported language."""
    folders = _folders(os.environ.get(ENV, ""))
    if lang not in folders:
        raise LocaleError(f"unsupported language {lang!r}")
    return folders[lang]


def _read(lang: str, name: str) -> str:
    return _read_in(os.environ.get(ENV, ""), lang, name)


@cache
def _read_in(extra: str, lang: str, name: str) -> str:
    folders = _folders(extra)
    if lang not in folders:
        raise LocaleError(f"unsupported language {lang!r}")
    try:
        return folders[lang].joinpath(*name.split("/")).read_text(encoding="utf-8")
    except (FileNotFoundError, NotADirectoryError, IsADirectoryError) as e:
        raise LocaleError(f"locales/{lang}/{name} is missing") from e


def has(lang: str, name: str) -> bool:
    """Whether a supported language has the file locales/<lang>/<name>."""
    try:
        return folder(lang).joinpath(*name.split("/")).is_file()
    except LocaleError:
        return False


def text(lang: str, name: str) -> str:
    """The text of locales/<lang>/<name> (LocaleError when the language or the file is missing)."""
    return _read(lang, name)


def toml(lang: str, name: str) -> dict[str, Any]:
    """locales/<lang>/<name> parsed, a fresh copy each call (callers cache what they derive from it)."""
    return tomllib.loads(_read(lang, name))


def yaml(lang: str, name: str) -> Any:
    """locales/<lang>/<name> (a YAML file) parsed, a fresh copy each call; None when it is empty."""
    import yaml as pyyaml

    # libyaml's loader where PyYAML was built with it (its wheels are): the sentence files parse ~5x faster
    loader = getattr(pyyaml, "CSafeLoader", pyyaml.SafeLoader)
    return pyyaml.load(_read(lang, name), Loader=loader)  # noqa: S506 — a safe loader, C or Python


def sentence_files(lang: str) -> tuple[str, ...]:
    """The sentence template files of a language ("sentences/alarms.yaml"…), sorted by name; () when none."""
    try:
        entries = folder(lang).joinpath("sentences")
    except LocaleError:
        return ()
    if not entries.is_dir():
        return ()
    return tuple(f"sentences/{e.name}" for e in sorted(entries.iterdir(), key=lambda e: e.name)
                 if e.name.endswith(".yaml") and e.is_file())


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


def table(lang: str, name: str) -> dict[str, Any]:
    """A language's TOML data file (locales/<lang>/<name>: clock words, decline words, home words), parsed once per
    set of locale folders; {} if none. Shared: read it, never change it."""
    return _table(os.environ.get(ENV, ""), lang, name)


def read_with(lang: str) -> tuple[str, ...]:
    """`lang`, then the languages its speakers mix into it (language.toml `mixes`: English words in Hindi and Russian
    speech, "front door खोलो", "включи wifi"), whose words are read beside its own: each once, installed ones only.
    The first has the last word where two say different things."""
    return _read_with(os.environ.get(ENV, ""), lang)


@cache
def _read_with(extra: str, lang: str) -> tuple[str, ...]:
    installed = languages()
    mixes = table(lang, "language.toml").get("mixes", [])
    return tuple(dict.fromkeys([lang, *(m for m in mixes if isinstance(m, str) and m in installed)]))


@cache
def _table(extra: str, lang: str, name: str) -> dict[str, Any]:
    try:
        return toml(lang, name)
    except LocaleError:
        return {}
