"""Numbers the way hearthd says them: counts and durations with the right word forms in each language.

Voices read digits, but not grammar: "2 минуты" / "5 минут" and "одна минута" / "один час" need the number's
plural class and the noun's gender, and Hindi counts sound natural in words ("तीन अलार्म"). Word forms live in
locales/<lang>/spoken.toml; the Hindi number words come from the table the parser reads (numbers.toml).
"""

from __future__ import annotations

import tomllib
from functools import cache
from importlib import resources
from typing import Any


@cache
def _table(lang: str) -> dict[str, Any]:
    return tomllib.loads(resources.files("hearthd.locales").joinpath(lang, "spoken.toml").read_text("utf-8"))


def plural_class(n: int, lang: str) -> int:
    """Which form of a noun goes with n: English/Hindi 0 = one, 1 = many; Russian 0 = one (1, 21, 101),
    1 = few (2-4, 22-24), 2 = many (5-20, 25-30, 11-14)."""
    if lang == "ru":
        if n % 10 == 1 and n % 100 != 11:
            return 0
        if 2 <= n % 10 <= 4 and not 12 <= n % 100 <= 14:
            return 1
        return 2
    return 0 if n == 1 else 1


def number_words(n: int, lang: str, gender: str = "m") -> str:
    """0-9999 in words: Russian with the gender of the counted noun ("одна минута", "два часа"); Hindi from its
    table; English digits (every voice reads English digits well)."""
    if lang == "en" or not 0 <= n <= 9999:
        return str(n)
    if lang == "hi":
        return _hindi_words(n)
    return _russian_words(n, gender)


def _russian_words(n: int, gender: str) -> str:
    t = _table("ru")["numbers"]
    if n == 0:
        return str(t["zero"])
    parts: list[str] = []
    thousands, rest = divmod(n, 1000)
    if thousands:
        parts += [_russian_words(thousands, "f")] if thousands > 1 else []
        parts.append(t["thousand"][plural_class(thousands, "ru")])
    hundreds, rest = divmod(rest, 100)
    if hundreds:
        parts.append(t["hundreds"][hundreds - 1])
    if 10 <= rest <= 19:
        parts.append(t["teens"][rest - 10])
    else:
        tens, units = divmod(rest, 10)
        if tens:
            parts.append(t["tens"][tens - 2])
        if units:
            parts.append(t["units_f"][units - 1] if gender == "f" and units <= 2 else t["units"][units - 1])
    return " ".join(parts)


@cache
def _hindi_numbers() -> dict[int, str]:
    text = resources.files("hearthd.locales").joinpath("hi", "numbers.toml").read_text("utf-8")
    out: dict[int, str] = {}
    for word, value in tomllib.loads(text)["cardinal"]["words"].items():
        if word.isascii():
            continue  # Hinglish spellings are read, not spoken
        out.setdefault(int(value), word)  # the first spelling listed is the one spoken
    return out


def _hindi_words(n: int) -> str:
    words = _hindi_numbers()
    if n in words:
        return words[n]
    thousands, rest = divmod(n, 1000)
    hundreds, rest = divmod(rest, 100)
    parts = []
    if thousands:
        parts += [words[thousands], _table("hi")["numbers"]["thousand"]]
    if hundreds:
        parts += [words[hundreds], _table("hi")["numbers"]["hundred"]]
    if rest:
        parts.append(words[rest])
    return " ".join(parts)


def say_count(n: int, noun: str, lang: str) -> str:
    """"3 alarms", "три будильника", "तीन अलार्म": a count with the noun in the form the number takes."""
    entry = _table(lang)["nouns"][noun]
    return f"{number_words(n, lang, entry.get('gender', 'm'))} {entry['forms'][plural_class(n, lang)]}"


def plural_noun(noun: str, lang: str) -> str:
    """The noun as "no/any ___" takes it: "lights", "ламп", "लाइटें"."""
    return str(_table(lang)["nouns"][noun]["forms"][-1])


def say_duration(seconds: int, lang: str) -> str:
    """"1 hour 30 minutes", "один час тридцать минут", "एक घंटा तीस मिनट" (zero parts left out)."""
    hours, rest = divmod(int(seconds), 3600)
    minutes, secs = divmod(rest, 60)
    parts = [say_count(v, unit, lang) for v, unit in ((hours, "hour"), (minutes, "minute"), (secs, "second")) if v]
    if not parts:
        return say_count(0, "second", lang)
    table = _table(lang)
    sep, last = str(table.get("separator", " ")), str(table.get("and", " "))
    return sep.join(parts[:-1]) + last + parts[-1] if len(parts) > 1 else parts[0]


def say_date(iso: str, lang: str) -> str:
    """"December 5", "5 декабря", "5 दिसंबर": the month by the name the parser reads first."""
    from .dates import _months

    year, month, day = (int(x) for x in iso.split("-"))
    # the month's first full name (the parser also reads "sep", "sept"); a short one when that is all ("may", "मई")
    names = [k for k, v in _months(lang).items() if v == month and not any(ch.isdigit() for ch in k)]
    name = next((k for k in names if len(k) > 3), names[0] if names else str(month))
    return f"{name.capitalize()} {day}" if lang == "en" else f"{day} {name}"
