"""Calendar dates as people say them: "December 5th", "the 5th of December", "5 декабря", "5 दिसंबर".

Only day + month (the next such date from today) or day alone (this month, or next if it has passed); the
month names live in locales/<lang>/numbers.toml [months]. A date that does not exist (31 April) is None.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date
from functools import cache
from typing import TypeVar

from .locale import languages, read_with, table
from .text import fold


@cache
def _months(lang: str) -> dict[str, int]:
    return {fold(k): int(v) for k, v in table(lang, "numbers.toml").get("months", {}).items()}


K = TypeVar("K")

def _mixed(read: Callable[[str], dict[K, int]], lang: str) -> dict[K, int]:
    """One table of `lang` and the languages mixed into it (locale.read_with), `lang`'s own words winning."""
    out: dict[K, int] = {}
    for source in reversed(read_with(lang)):
        out.update(read(source))
    return out


def _next(day: int, month: int | None, today: date) -> date | None:
    for year_shift in range(0, 2):
        for month_shift in range(0, 13 if month is None else 1):
            m = month if month is not None else (today.month - 1 + month_shift) % 12 + 1
            y = today.year + year_shift + (0 if month is not None else (today.month - 1 + month_shift) // 12)
            try:
                candidate = date(y, m, day)
            except ValueError:
                continue
            if candidate >= today:
                return candidate
    return None


@cache
def _weekdays(lang: str) -> dict[str, int]:
    return {fold(k): int(v) for k, v in table(lang, "numbers.toml").get("weekdays", {}).items()}


@cache
def _days_ahead(lang: str) -> dict[tuple[str, ...], int]:
    return {tuple(fold(k).split()): int(v) for k, v in table(lang, "numbers.toml").get("days_ahead", {}).items()}


@cache
def _holidays(lang: str) -> dict[tuple[str, ...], tuple[int, int]]:
    """numbers.toml [holidays]: a day of the year called by name → (month, day)."""
    out: dict[tuple[str, ...], tuple[int, int]] = {}
    for source in reversed(read_with(lang)):
        for said, when in table(source, "numbers.toml").get("holidays", {}).items():
            month, day = (int(n) for n in str(when).split("-"))
            out[tuple(fold(said).split())] = (month, day)
    return out


def _holiday(words: list[str], lang: str) -> tuple[int, int] | None:
    """The one day of the year `words` call by name ("christmas", "новый год", "क्रिसमस"); the longest name said wins
    ("старый новый год" over "новый год"). None when none, or two different ones, are said."""
    spans = [(i, i + len(name), when) for name, when in _holidays(lang).items()
             for i in range(len(words)) if tuple(words[i:i + len(name)]) == name]
    kept = {when for i, j, when in spans if not any(a <= i and j <= b and (a, b) != (i, j) for a, b, _ in spans)}
    return kept.pop() if len(kept) == 1 else None


def parse_date(text: str, lang: str, today: date) -> date | None:
    """The next date the text names, or None when it names none (or more than one). A weekday alone ("on
    saturday", "в субботу", "शनिवार को") is the next such day after today; "the day after tomorrow", "послезавтра",
    "परसों" are two days ahead; a day called by name ("christmas", numbers.toml [holidays]) is its next date."""
    months = _mixed(_months, lang)
    words = [w.strip(".,!?") for w in fold(text).split()]
    named_day = _holiday(words, lang)
    if named_day is not None and not any(w in months or _day(2).fullmatch(w) for w in words):
        return _next(named_day[1], named_day[0], today)
    relative = {n for phrase, n in _mixed(_days_ahead, lang).items()
                if any(tuple(words[i:i + len(phrase)]) == phrase for i in range(len(words)))}
    if len(relative) == 1 and not any(w in months for w in words):
        return date.fromordinal(today.toordinal() + relative.pop())
    found = [m for w in words if (m := _day(2).fullmatch(w))]
    named = [months[w] for w in words if w in months]
    weekdays = _mixed(_weekdays, lang)
    days = {weekdays[w] for w in words if w in weekdays}
    if not named and len(days) == 1 and not any(m.group(2) for m in found):  # ("7 on friday": the 7 is the hour)
        ahead = (next(iter(days)) - today.weekday() - 1) % 7 + 1
        return date.fromordinal(today.toordinal() + ahead)
    if len(found) != 1 or len(named) > 1:
        return None
    day, ordinal = int(found[0].group(1)), bool(found[0].group(2))
    if not 1 <= day <= 31 or not (named or ordinal):  # a bare "7" is an hour or a count, not a date
        return None
    return _next(day, named[0] if named else None, today)


def day_apart(text: str, lang: str, today: date) -> tuple[date, str] | None:
    """A day said by a word inside a time ("परसों सात बजे", "семь послезавтра", "seven on friday"): the date and the
    words left, once the day's words and a preposition beside them are taken out; None when no such day is said, or
    when the day is a number (a number is the time's)."""
    words = text.split()
    plain = [w.lower().strip(".,!?") for w in words]
    ahead = _mixed(_days_ahead, lang)
    weekdays = _mixed(_weekdays, lang)
    spans: list[tuple[int, int]] = [(i, i + len(p)) for p in ahead for i in range(len(plain))
                                    if tuple(plain[i:i + len(p)]) == p]
    spans += [(i, i + 1) for i, w in enumerate(plain) if w in weekdays]
    if len(spans) != 1:
        return None
    found = parse_date(" ".join(plain[spans[0][0]:spans[0][1]]), lang, today)
    if found is None:
        return None
    start, end = spans[0]
    before, after = _dates_words((lang,), "before_day"), _dates_words((lang,), "after_day")
    while start > 0 and plain[start - 1] in before:  # "on friday", "в пятницу", "the day after tomorrow"
        start -= 1
    while end < len(plain) and plain[end] in after:  # "शुक्रवार को"
        end += 1
    rest = " ".join(words[:start] + words[end:]).strip()
    return (found, rest) if rest else None


def _every_language(key: str) -> frozenset[str]:
    """numbers.toml [dates] `key` of every supported language together ("5th" and "5-го" are read in any)."""
    return _dates_words(languages(), key)


@cache
def _dates_words(langs: tuple[str, ...], key: str) -> frozenset[str]:
    return frozenset(w for lang in langs for w in table(lang, "numbers.toml").get("dates", {}).get(key, []))


def _day(digits: int) -> re.Pattern[str]:
    """A day number ("5") with the ordinal ending a language gives it, if any ("5th", "5-го")."""
    return _day_pattern(digits, _every_language("ordinal_endings"))


@cache
def _day_pattern(digits: int, endings: frozenset[str]) -> re.Pattern[str]:
    alternatives = "|".join(re.escape(e) for e in sorted(endings, key=lambda e: (-len(e), e)))
    return re.compile(rf"(\d{{1,{digits}}})({alternatives})?")


_LONGEST = {1: 31, 2: 29, 3: 31, 4: 30, 5: 31, 6: 30, 7: 31, 8: 31, 9: 30, 10: 31, 11: 30, 12: 31}


def impossible_date(text: str, lang: str) -> bool:
    """True when the text names a day of a month that no year has ("February 30", "31 апреля", "32 मई"): such a
    date is never read as some other day (the next one that exists, or tomorrow)."""
    months = _mixed(_months, lang)
    words = [w.strip(".,!?;:()\"'«»।") for w in fold(text).translate(_DEVANAGARI).split()]
    words = [w for w in words if w]
    for i, word in enumerate(words):
        month = months.get(word)
        if month is None:
            continue
        for j in (i - 1, i - 2, i + 1, i + 2):
            if not 0 <= j < len(words) or (abs(j - i) == 2 and words[(i + j) // 2] not in _every_language("between")):
                continue
            found = _day(3).fullmatch(words[j])
            if found and ":" not in words[j] and not 1 <= int(found.group(1)) <= _LONGEST[month]:
                return True
    return False


_DEVANAGARI = str.maketrans("०१२३४५६७८९", "0123456789")
