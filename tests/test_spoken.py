"""Counts and durations as hearthd says them: plural classes, Russian numeral gender, Hindi number words."""

from __future__ import annotations

import pytest

from hearthd.spoken import number_words, plural_class, say_count, say_duration

EN = [
    ("count", 1, "alarm", "1 alarm"), ("count", 2, "alarm", "2 alarms"), ("count", 0, "alarm", "0 alarms"),
    ("count", 11, "timer", "11 timers"), ("count", 21, "alarm", "21 alarms"),
    ("duration", 60, None, "1 minute"), ("duration", 120, None, "2 minutes"), ("duration", 1, None, "1 second"),
    ("duration", 45, None, "45 seconds"), ("duration", 3600, None, "1 hour"), ("duration", 7200, None, "2 hours"),
    ("duration", 5400, None, "1 hour and 30 minutes"), ("duration", 90, None, "1 minute and 30 seconds"),
    ("duration", 7322, None, "2 hours, 2 minutes and 2 seconds"), ("duration", 0, None, "0 seconds"),
]
RU = [
    ("count", 1, "alarm", "один будильник"), ("count", 2, "alarm", "два будильника"),
    ("count", 4, "alarm", "четыре будильника"), ("count", 5, "alarm", "пять будильников"),
    ("count", 11, "alarm", "одиннадцать будильников"), ("count", 12, "alarm", "двенадцать будильников"),
    ("count", 21, "alarm", "двадцать один будильник"), ("count", 22, "timer", "двадцать два таймера"),
    ("count", 101, "alarm", "сто один будильник"), ("count", 111, "alarm", "сто одиннадцать будильников"),
    ("duration", 60, None, "одна минута"), ("duration", 120, None, "две минуты"),
    ("duration", 300, None, "пять минут"), ("duration", 1260, None, "двадцать одна минута"),
    ("duration", 1320, None, "двадцать две минуты"), ("duration", 660, None, "одиннадцать минут"),
    ("duration", 3600, None, "один час"), ("duration", 7200, None, "два часа"), ("duration", 18000, None, "пять часов"),
    ("duration", 5400, None, "один час тридцать минут"), ("duration", 1, None, "одна секунда"),
    ("duration", 2, None, "две секунды"), ("duration", 90, None, "одна минута тридцать секунд"),
    ("duration", 7322, None, "два часа две минуты две секунды"),
]
HI = [
    ("count", 1, "alarm", "एक अलार्म"), ("count", 2, "alarm", "दो अलार्म"), ("count", 3, "alarm", "तीन अलार्म"),
    ("count", 21, "alarm", "इक्कीस अलार्म"), ("count", 99, "timer", "निन्यानवे टाइमर"),
    ("count", 101, "alarm", "एक सौ एक अलार्म"),
    ("duration", 60, None, "एक मिनट"), ("duration", 120, None, "दो मिनट"), ("duration", 1500, None, "पच्चीस मिनट"),
    ("duration", 3600, None, "एक घंटा"), ("duration", 7200, None, "दो घंटे"),
    ("duration", 5400, None, "एक घंटा तीस मिनट"), ("duration", 1, None, "एक सेकंड"),
    ("duration", 90, None, "एक मिनट तीस सेकंड"), ("duration", 2700, None, "पैंतालीस मिनट"),
]


@pytest.mark.parametrize("lang,kind,n,noun,want", [("en", *c) for c in EN] + [("ru", *c) for c in RU]
                         + [("hi", *c) for c in HI])
def test_counts_and_durations_are_said_with_the_right_forms(lang: str, kind: str, n: int, noun: str | None,
                                                            want: str) -> None:
    got = say_count(n, noun, lang) if kind == "count" else say_duration(n, lang)  # type: ignore[arg-type]
    assert got == want


@pytest.mark.parametrize("n,cls", [(1, 0), (21, 0), (101, 0), (2, 1), (3, 1), (24, 1), (5, 2), (11, 2), (12, 2),
                                   (14, 2), (20, 2), (111, 2), (0, 2)])
def test_russian_plural_classes(n: int, cls: int) -> None:
    assert plural_class(n, "ru") == cls


def test_spoken_numbers_read_back_as_the_same_number() -> None:
    """Both directions agree: every number hearthd says in words, its own parser reads back."""
    from hearthd.numbers import parse_number

    for lang in ("ru", "hi"):
        for n in list(range(0, 101)) + [150, 999, 1000, 2024]:
            assert parse_number(number_words(n, lang), lang) == n, (lang, n, number_words(n, lang))
