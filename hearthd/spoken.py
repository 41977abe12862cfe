"""Numbers the way hearthd says them: counts and durations with the right word forms in each language.

Voices read digits, but not grammar: "2 минуты" / "5 минут" and "одна минута" / "один час" need the number's
plural class and the noun's gender, and Hindi counts sound natural in words ("तीन अलार्म"). Word forms live in
locales/<lang>/spoken.toml; the code a language needs for its numbers (plural classes, number words) is in
hearthd.language.
"""

from __future__ import annotations

from functools import cache
from typing import Any

from .language import rules
from .locale import table, toml


@cache
def _table(lang: str) -> dict[str, Any]:
    return toml(lang, "spoken.toml")


def plural_class(n: int, lang: str) -> int:
    """Which form of a noun goes with n (locales/<lang>/spoken.toml `forms`): 0 = one, 1 = many by default;
    Russian 0 = one (1, 21, 101), 1 = few (2-4, 22-24), 2 = many (5-20, 25-30, 11-14) (hearthd.language)."""
    return rules(lang).plural(n)


def number_words(n: int, lang: str, gender: str = "m") -> str:
    """0-9999 in words where the language has code for them (hearthd.language: Russian with the gender of the
    counted noun, "одна минута", "два часа"; Hindi from its table); digits otherwise (every voice reads them)."""
    words = rules(lang).number_words
    if words is None or not 0 <= n <= 9999:
        return str(n)
    return words(n, gender)


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
    if rules(lang).capitalize_months:
        name = name.capitalize()
    return str(table(lang, "clock.toml").get("date", "{day} {month}")).format(day=day, month=name)
