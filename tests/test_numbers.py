"""parse_number, parse_duration and parse_percent: slot text as Whisper writes it, in every supported language.

Each case is (text, expected); None means the slot must be refused rather than guessed at.
"""

from __future__ import annotations

import pytest

from hearthd.numbers import (
    _own_spoken,
    _spoken,
    digits_for_times,
    parse_clock,
    parse_duration,
    parse_number,
    parse_percent,
)

EN_NUMBERS = [
    ("zero", 0),
    ("seven", 7),
    ("twenty five", 25),
    ("twenty-five", 25),
    ("ninety nine", 99),
    ("a hundred", 100),
    ("a hundred and ten", 110),
    ("one hundred one", 101),
    ("two hundred and thirty four", 234),
    ("twelve hundred", 1200),
    ("one thousand two hundred", 1200),
    ("two thousand and five", 2005),
    ("nine thousand nine hundred ninety nine", 9999),
    ("25", 25),
    (" 42. ", 42),
    ("1,200", 1200),
    ("ten thousand", None),
    ("10000", None),
    ("twenty twenty", None),
    ("five six", None),
    ("half", None),
    ("a", None),
    ("one hundred and", None),
    ("1.5", None),
    ("-5", None),
    ("twenty five minutes", None),
    ("", None),
]

EN_DURATIONS = [
    ("ten minutes", 600),
    ("1 minute", 60),
    ("an hour", 3600),
    ("an hour and a half", 5400),
    ("one and a half hours", 5400),
    ("1.5 hours", 5400),
    ("half an hour", 1800),
    ("a half hour", 1800),
    ("half a minute", 30),
    ("a minute and a half", 90),
    ("two and a half minutes", 150),
    ("quarter of an hour", 900),
    ("a quarter of an hour", 900),
    ("three quarters of an hour", 2700),
    ("90 seconds", 90),
    ("90 secs", 90),
    ("2 hours 15 minutes", 8100),
    ("2 hours and 15 minutes", 8100),
    ("2 hrs 15 mins", 8100),
    ("twenty-five minutes", 1500),
    ("for ten minutes", None),
    ("ten minutes please", None),
    ("ten", None),
    ("minutes", None),
    ("zero minutes", None),
    ("half a second", None),
    ("5 minutes 2 hours", None),
    ("ten minutes ten minutes", None),
    ("ten minutes and", None),
]

EN_PERCENTS = [
    ("fifty percent", 50),
    ("50%", 50),
    ("50 %", 50),
    ("50 per cent", 50),
    ("fifty", 50),
    ("twenty five percent", 25),
    ("a hundred percent", 100),
    ("zero percent", 0),
    ("max", 100),
    ("maximum", 100),
    ("full", 100),
    ("half", 50),
    ("150 percent", None),
    ("101", None),
    ("12.5%", None),
    ("percent", None),
    ("a percent", None),
    ("to fifty percent", None),
    ("loud", None),
]

RU_NUMBERS = [
    ("ноль", 0),
    ("один", 1),
    ("одна", 1),
    ("одну", 1),
    ("две", 2),
    ("два", 2),
    ("двух", 2),
    ("двадцать пять", 25),
    ("двадцать одна", 21),
    ("сто десять", 110),
    ("двести пять", 205),
    ("девятьсот девяносто девять", 999),
    ("тысяча", 1000),
    ("одна тысяча", 1000),
    ("две тысячи двадцать пять", 2025),
    ("пять тысяч триста", 5300),
    ("полторы тысячи", 1500),
    ("девять тысяч девятьсот девяносто девять", 9999),
    ("25", 25),
    ("полторы", None),
    ("полтора", None),
    ("двадцать двадцать", None),
    ("два три", None),
    ("десять тысяч", None),
    ("1,5", None),
    ("пять минут", None),
]

RU_DURATIONS = [
    ("десять минут", 600),
    ("минуту", 60),
    ("одну минуту", 60),
    ("минутку", 60),
    ("час", 3600),
    ("полчаса", 1800),
    ("пол часа", 1800),
    ("пол-часа", 1800),
    ("полминуты", 30),
    ("полтора часа", 5400),
    ("полторы минуты", 90),
    ("1,5 часа", 5400),
    ("два с половиной часа", 9000),
    ("час с половиной", 5400),
    ("четверть часа", 900),
    ("три четверти часа", 2700),
    ("два часа тридцать минут", 9000),
    ("два часа и тридцать минут", 9000),
    ("час тридцать минут", 5400),
    ("двадцать одну минуту", 1260),
    ("пять секунд", 5),
    ("секунду", 1),
    ("15 мин", 900),
    ("15мин.", 900),
    ("на десять минут", None),
    ("минут", None),
    ("ноль минут", None),
    ("десять", None),
    ("тридцать минут два часа", None),
]

RU_PERCENTS = [
    ("пятьдесят процентов", 50),
    ("50 %", 50),
    ("50%", 50),
    ("сто процентов", 100),
    ("три процента", 3),
    ("один процент", 1),
    ("ноль процентов", 0),
    ("двадцать пять", 25),
    ("максимум", 100),
    ("половина", 50),
    ("половину", 50),
    ("на максимум", None),
    ("двести процентов", None),
    ("процентов", None),
    ("громко", None),
]

HI_NUMBERS = [
    ("शून्य", 0),
    ("एक", 1),
    ("दो", 2),
    ("पाँच", 5),
    ("पांच", 5),
    ("पंद्रह", 15),
    ("पच्चीस", 25),
    ("अड़तीस", 38),
    ("अडतीस", 38),  # without the nukta, as Whisper often writes it
    ("साठ", 60),
    ("उनहत्तर", 69),
    ("निन्यानवे", 99),
    ("सौ", 100),
    ("एक सौ दस", 110),
    ("दो सौ पचास", 250),
    ("हज़ार", 1000),
    ("हजार", 1000),
    ("दो हज़ार पाँच सौ", 2500),
    ("डेढ़ सौ", 150),
    ("ढाई हज़ार", 2500),
    ("सवा सौ", 125),
    ("साढ़े तीन सौ", 350),
    ("२५", 25),
    ("25", 25),
    ("das", 10),
    ("bees", 20),
    ("pachees", 25),
    ("sau", 100),
    ("ek sau", 100),
    ("twenty five", 25),  # English numbers turn up in Hindi speech
    ("डेढ़", None),
    ("सवा", None),
    ("बीस पाँच", None),
    ("दस हज़ार", None),
    ("दस मिनट", None),
]

HI_DURATIONS = [
    ("दस मिनट", 600),
    ("१० मिनट", 600),
    ("आधा घंटा", 1800),
    ("आधे घंटे", 1800),
    ("डेढ़ घंटा", 5400),
    ("डेढ घंटा", 5400),
    ("ढाई घंटे", 9000),
    ("एक घंटा", 3600),
    ("सवा घंटा", 4500),
    ("सवा दो घंटे", 8100),
    ("पौने दो घंटे", 6300),
    ("साढ़े तीन घंटे", 12600),
    ("डेढ़ मिनट", 90),
    ("पाँच सेकंड", 5),
    ("दो घंटे तीस मिनट", 9000),
    ("दो घंटे और तीस मिनट", 9000),
    ("10 minute", 600),
    ("das minute", 600),
    ("fifteen minutes", 900),
    ("aadha ghanta", 1800),
    ("dedh ghanta", 5400),
    ("dhai ghante", 9000),
    ("saade teen ghante", 12600),
    # Hinglish timers: English number words and units, and the spellings Whisper writes for Hindi ones
    ("five minutes", 300),
    ("twenty five minutes", 1500),
    ("two and a half minutes", 150),
    ("an hour and a half", 5400),
    ("five minute aur thirty second", 330),
    ("पाँच minute", 300),
    ("five मिनट", 300),
    ("dus minute", 600),
    ("pandrah minit", 900),
    ("paintalis minute", 2700),
    ("adhe ghante", 1800),
    ("adhi minute", 30),
    ("five minutes me", None),
    ("दस मिनट के लिए", None),
    ("के लिए दस मिनट", None),
    ("मिनट", None),
    ("शून्य मिनट", None),
    ("दस", None),
]

HI_PERCENTS = [
    ("पचास प्रतिशत", 50),
    ("पचास परसेंट", 50),
    ("पचास फ़ीसदी", 50),
    ("50 percent", 50),
    ("50%", 50),
    ("१०० प्रतिशत", 100),
    ("सौ प्रतिशत", 100),
    ("पच्चीस", 25),
    ("पूरा", 100),
    ("फुल", 100),
    ("full", 100),
    ("आधा", 50),
    ("pachas percent", 50),
    ("दो सौ प्रतिशत", None),
    ("आधा प्रतिशत", None),
    ("तेज़", None),
]


def _cases(lang: str, *tables: list[tuple[str, int | None]]) -> list[tuple[str, str, int | None]]:
    return [(lang, text, expected) for table in tables for text, expected in table]


@pytest.mark.parametrize(
    "lang,text,expected", _cases("en", EN_NUMBERS) + _cases("ru", RU_NUMBERS) + _cases("hi", HI_NUMBERS)
)
def test_parse_number(lang: str, text: str, expected: int | None) -> None:
    assert parse_number(text, lang) == expected


@pytest.mark.parametrize(
    "lang,text,expected", _cases("en", EN_DURATIONS) + _cases("ru", RU_DURATIONS) + _cases("hi", HI_DURATIONS)
)
def test_parse_duration(lang: str, text: str, expected: int | None) -> None:
    assert parse_duration(text, lang) == expected


@pytest.mark.parametrize("lang,text,expected", [
    ("ru", "минут десять", 600), ("ru", "минут 15", 900), ("ru", "часа два", 7200), ("ru", "секунд тридцать", 30),
    ("ru", "минут", None), ("ru", "десять", None),
    ("en", "minutes ten", None),  # English does not say it so: its numbers.toml does not declare unit_first
])
def test_a_unit_before_its_number_is_an_approximate_length_where_the_language_says_so(lang: str, text: str,
                                                                                       expected: int | None) -> None:
    """"Минут десять" is how Russian says "about ten minutes"; a timer takes it as ten minutes."""
    assert parse_duration(text, lang) == expected


@pytest.mark.parametrize(
    "lang,text,expected", _cases("en", EN_PERCENTS) + _cases("ru", RU_PERCENTS) + _cases("hi", HI_PERCENTS)
)
def test_parse_percent(lang: str, text: str, expected: int | None) -> None:
    assert parse_percent(text, lang) == expected


@pytest.mark.parametrize("lang", ["en", "ru", "hi"])
def test_enough_cases_per_language(lang: str) -> None:
    tables = {
        "en": (EN_NUMBERS, EN_DURATIONS, EN_PERCENTS),
        "ru": (RU_NUMBERS, RU_DURATIONS, RU_PERCENTS),
        "hi": (HI_NUMBERS, HI_DURATIONS, HI_PERCENTS),
    }[lang]
    assert sum(len(t) for t in tables) >= 40


def test_hindi_table_has_every_number_to_a_hundred() -> None:
    devanagari = {
        value for word, value in _own_spoken("hi").words.items() if any("\u0900" <= c <= "\u097f" for c in word)
    }
    assert devanagari == set(range(101))


@pytest.mark.parametrize("lang", ["en", "ru", "hi"])
def test_tables_load_without_clashing_spellings(lang: str) -> None:
    spoken = _spoken(lang)  # raises if two spellings fold together with different values
    assert spoken.units and spoken.words and spoken.percent_signs


def test_unknown_language_still_reads_digits() -> None:
    assert parse_number("25", "xx") == 25
    assert parse_percent("50%", "xx") == 50
    assert parse_duration("10 minutes", "xx") is None


def test_time_helpers_ignore_the_new_sections() -> None:
    assert digits_for_times("सवा आठ बजे", "hi") == "8:15 बजे"
    assert digits_for_times("через пять минут", "ru") == "через 5 минут"
    assert parse_clock("quarter past six pm", "en") == "18:15"


@pytest.mark.parametrize("text,lang,want", [
    ("ten to seven", "en", "06:50"),
    ("twenty five to eight", "en", "07:35"),
    ("twenty past six pm", "en", "18:20"),
    ("half seven", "en", "07:30"),
    ("12 at night", "en", "00:00"),
    ("10 minutes", "en", None),  # a duration, not 10:00
    ("без четверти девять", "ru", "08:45"),
    ("без двадцати пяти восемь", "ru", "07:35"),
    ("одиннадцать ночи", "ru", "23:00"),
    ("два ночи", "ru", "02:00"),
    ("в 6 часов", "ru", "06:00"),
    ("десять минут", "ru", None),
    # minutes into the hour named by its ordinal ("five minutes of the ninth hour"), and the hour after к/до/около
    ("десять минут восьмого", "ru", "07:10"),
    ("в двадцать пять минут девятого вечера", "ru", "20:25"),
    ("пять минут первого ночи", "ru", "00:05"),
    ("к шести", "ru", "06:00"),
    ("около семи утра", "ru", "07:00"),
    ("до одиннадцати вечера", "ru", "23:00"),
    ("без пяти семь", "ru", "06:55"),
    ("सात बजकर बीस", "hi", "07:20"),
    ("saat bajkar bees", "hi", "07:20"),
    ("रात बारह बजे", "hi", "00:00"),
    ("रात 2 बजे", "hi", "02:00"),
    ("रात दस बजे", "hi", "22:00"),
    ("दस मिनट", "hi", None),
    ("for 7 minutes", "en", None),  # a length after its preposition ("set an alarm for 7 minutes" set 7:00)
    ("на 7 минут", "ru", None),
    # the hour and its minutes, as a clock is read ("सात तीस" is 7:30, never 7:00 with the thirty dropped)
    ("सात तीस बजे", "hi", "07:30"),
    ("शाम छह पैंतालीस", "hi", "18:45"),
    ("saat tees", "hi", "07:30"),
    ("दस पंद्रह", "hi", "10:15"),
    ("सात बजे", "hi", "07:00"),
    ("saat baj kar bees", "hi", "07:20"),  # the joiner written as two words
    # Russian hours and minutes said with their units: the minutes never dropped
    ("в семь часов двадцать минут", "ru", "07:20"),
    ("в семь часов двадцать пять минут", "ru", "07:25"),
    ("в 7 часов 20 минут", "ru", "07:20"),
    ("в семь часов сорок минут вечера", "ru", "19:40"),
    ("в семь часов утра", "ru", "07:00"),
    ("в семь часов сколько-то минут", "ru", None),  # minutes said that are no number: no time, not 7:00
])
def test_clock_phrases_before_the_hour_at_night_and_not_durations(text: str, lang: str, want: str | None) -> None:
    from hearthd.numbers import parse_clock

    assert parse_clock(text, lang) == want


@pytest.mark.parametrize("text,want", [("четверть восьмого", "07:15"), ("полвосьмого", "07:30"),
                                       ("на половину восьмого вечера", "19:30"), ("полдвенадцатого ночи", "23:30")])
def test_russian_quarter_and_half_of_the_next_hour(text: str, want: str) -> None:
    from hearthd.numbers import parse_clock

    assert parse_clock(text, "ru") == want
