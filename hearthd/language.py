"""The languages' own code behind one registry, and choosing the language of text input from its script (speech
gets Whisper's restricted detection).

A language is data first (locales/<lang>/, read through hearthd.locale): `rules(lang)` gives every language the
defaults its files drive (language.toml: the script it is typed in, whether month names are capitalised, its
default voice, whether Home Assistant's sentence library has it, whether whisper reads it from a short window;
one/many plurals; numbers spoken as digits). Only what data cannot say is code: each language's module in
hearthd.languages (Russian plural classes and number words; Hindi number words, romanised Hindi, Urdu-script
transcripts), or code given with `register`. A language with no code of its own gets the defaults, never another
language's rules.
"""

from __future__ import annotations

import functools
import importlib
import importlib.util
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from .locale import DEFAULT_LANGUAGE, ENV, folder, languages, table

# Unicode blocks of the scripts text input is told apart by; any other ASCII letter is "latin".
SCRIPTS = {"devanagari": (0x0900, 0x097F), "cyrillic": (0x0400, 0x04FF)}


def _one_many(n: int) -> int:
    return 0 if n == 1 else 1


def _same(text: str) -> str:
    return text


@dataclass(frozen=True)
class LanguageRules:
    """What hearthd needs to know about a language beyond its word tables."""

    code: str
    script: str = "latin"  # language.toml `script`: latin, cyrillic or devanagari ("" for an unknown language)
    capitalize_months: bool = False  # language.toml: "December 5" (English), "5 декабря"
    voice: str = ""  # language.toml `voice`: the default of tts.voices for it ("" : none, espeak-ng speaks it)
    sentence_library: bool = False  # language.toml: Home Assistant's sentence library has it (hearthd.agent.library)
    short_window: bool = False  # language.toml: whisper reads it from a short window (stt.window_languages default)
    plural: Callable[[int], int] = _one_many  # n → the index of the noun form in spoken.toml `forms`
    number_words: Callable[[int, str], str] | None = None  # (0-9999, gender) → words; None: digits
    reads_latin: Callable[[str], bool] | None = None  # Latin-letter text that is this language (romanised Hindi)
    transcript: Callable[[str], str] = field(default=_same)  # a transcript put in the language's own script


_CODE: dict[str, dict[str, Any]] = {}
DECLARED = ("code", "script", "capitalize_months", "voice", "sentence_library", "short_window")  # language.toml's


def register(lang: str, **code: Any) -> None:
    """Give `lang` code of its own (any LanguageRules field: plural, number_words, reads_latin, transcript)."""
    unknown = set(code) - {f for f in LanguageRules.__dataclass_fields__ if f not in DECLARED}
    if unknown:
        raise TypeError(f"not a language rule: {', '.join(sorted(unknown))}")
    _CODE.setdefault(lang, {}).update(code)
    _rules.cache_clear()


def rules(lang: str) -> LanguageRules:
    """`lang`'s rules: the data-driven defaults (locales/<lang>/language.toml) with its registered code."""
    return _rules(lang, lang in languages(), os.environ.get(ENV, ""))


@functools.cache
def _rules(lang: str, supported: bool, extra: str) -> LanguageRules:
    """`extra`: the HEARTHD_LOCALES the folders were found under (another set of folders, other declarations)."""
    data = table(lang, "language.toml")
    script = str(data.get("script", "latin" if supported else ""))
    return LanguageRules(lang, script, bool(data.get("capitalize_months", False)), str(data.get("voice", "")),
                         bool(data.get("sentence_library", False)), bool(data.get("short_window", False)),
                         **{**_own_code(lang), **_CODE.get(lang, {})})


def _own_code(lang: str) -> dict[str, Any]:
    """The code of `lang`'s module in hearthd.languages (its RULES), {} when it has none."""
    if not re.fullmatch(r"[a-z]{2,3}", lang) or importlib.util.find_spec(f"{__package__}.languages.{lang}") is None:
        return {}
    module = importlib.import_module(f"{__package__}.languages.{lang}")
    code = dict(getattr(module, "RULES", {}))
    unknown = set(code) - {f for f in LanguageRules.__dataclass_fields__ if f not in DECLARED}
    if unknown:
        raise TypeError(f"hearthd.languages.{lang}: not a language rule: {', '.join(sorted(unknown))}")
    return code


def default_voices() -> dict[str, str]:
    """Each installed language's default voice (language.toml `voice`): tts.voices when the config says nothing."""
    return {lang: rules(lang).voice for lang in languages() if rules(lang).voice}


def short_window_languages() -> list[str]:
    """The languages whisper reads from a short window (language.toml `short_window`): stt.window_languages'
    default."""
    return [lang for lang in languages() if rules(lang).short_window]


def language_of_text(text: str, allowed: list[str] | tuple[str, ...], default: str = DEFAULT_LANGUAGE) -> str:
    """The allowed language written in the text's script (Devanagari → hi, Cyrillic → ru), Latin letters → a language
    that reads them as its own (romanised Hindi, "Hinglish" → hi), else the Latin-script one (en; among several, the
    one whose words the text uses, `_by_words`); else the default."""
    counts = dict.fromkeys((*SCRIPTS, "latin"), 0)
    for ch in text:
        code = ord(ch)
        for name, (low, high) in SCRIPTS.items():
            if low <= code <= high:
                counts[name] += 1
                break
        else:
            if ch.isascii() and ch.isalpha():
                counts["latin"] += 1
    script, n = max(counts.items(), key=lambda kv: kv[1])
    if n and script == "latin":
        for lang in allowed:
            reads = rules(lang).reads_latin
            if reads is not None and reads(text):
                return lang
    own = [lang for lang in allowed if rules(lang).script == script]
    if n and len(own) > 1:
        return _by_words(text, own, default)
    if n and own:
        return own[0]
    return default if default in allowed else allowed[0]


def client_language(code: object, allowed: list[str] | tuple[str, ...]) -> str | None:
    """A client's language tag ("en", "en-US", "ru_RU") as one of `allowed`, else None."""
    if not isinstance(code, str) or not code:
        return None
    base = re.split(r"[-_]", code.strip().lower(), maxsplit=1)[0]
    return base if base in allowed else None


def agreeing_language(text: str, code: object, allowed: list[str] | tuple[str, ...]) -> str | None:
    """The client's language when the text is written in it; else None, and the text's own is read. An automation
    or Home Assistant sends its own language whatever the words are in ("set a timer for 10 minutes" tagged Russian
    was read as Russian: "На сколько?"). Text with no letters ("7:30" answering a question) gets None too: the
    conversation's language."""
    lang = client_language(code, allowed)
    if lang is None or not any(ch.isalpha() for ch in text):
        return None
    read = language_of_text(text, allowed, lang)
    if read == lang:
        return lang
    own = SCRIPTS.get(rules(lang).script)
    if own is not None and any(own[0] <= ord(ch) <= own[1] for ch in text):
        return lang  # a word in its own letters among others' ("front door खोलो", "включи TV"): code-mixed, its own
    if rules(lang).reads_latin is not None and read in allowed and rules(read).script == "latin":
        # Latin letters under a language also written in them (romanised Hindi): the text need not read as that
        # language on its own ("front door kholo", "haan ji"); it keeps the tag with a word of the tagged language's
        # own, one the other language lacks, and only wholly the other's words ("close the bedroom blinds") do not
        words = {w.casefold() for w in _WORD.findall(text)}
        extra = os.environ.get(ENV, "")
        if words & (_vocabulary(extra, lang) - _vocabulary(extra, read)):
            return lang
    return None


def _by_words(text: str, candidates: list[str], default: str) -> str:
    """Among languages written in the same script, the one whose own words (its locale files) the text uses most;
    on a tie the default (the conversation's or general.language), then the first allowed: never a language only
    because its code sorts first (a copy of English added as "de" once took every English sentence)."""
    words = {w.casefold() for w in _WORD.findall(text)}
    scores = {lang: len(words & _vocabulary(os.environ.get(ENV, ""), lang)) for lang in candidates}
    best = max(scores.values())
    tied = [lang for lang in candidates if scores[lang] == best]
    return default if default in tied else tied[0]


_WORD = re.compile(r"[^\W\d_]+")


@functools.cache
def _vocabulary(extra: str, lang: str) -> frozenset[str]:
    """Every word of a language's locale files (templates, phrases, word tables), casefolded; `extra` is the
    HEARTHD_LOCALES the folders were found under (another set of folders, another vocabulary)."""
    found: set[str] = set()
    pending = [folder(lang)]
    while pending:
        entry = pending.pop()
        for child in entry.iterdir():
            if child.is_dir():
                pending.append(child)
            elif child.name.endswith((".toml", ".yaml", ".txt")):
                found.update(w.casefold() for w in _WORD.findall(child.read_text(encoding="utf-8")))
    return frozenset(found)
