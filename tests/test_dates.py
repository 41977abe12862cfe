"""Alarms on a date: "December 5th", "the 5th", "5 декабря", "5 दिसंबर"; a past or impossible date is refused."""

from __future__ import annotations

import asyncio
from datetime import date, datetime
from zoneinfo import ZoneInfo

import pytest

from hearthd.daemon.components import Components
from hearthd.dates import parse_date
from hearthd.spoken import say_date
from hearthd.tools.alarms import AlarmBook

from .spoken_home import decide

TODAY = date(2026, 11, 30)


@pytest.mark.parametrize("text,lang,want", [
    ("December 5th", "en", date(2026, 12, 5)), ("the 5th of December", "en", date(2026, 12, 5)),
    ("on the 5th", "en", date(2026, 12, 5)), ("30 november", "en", date(2026, 11, 30)),
    ("29 november", "en", date(2027, 11, 29)), ("31 april", "en", None), ("7 am", "en", None), ("7", "en", None),
    ("5 декабря", "ru", date(2026, 12, 5)), ("1 января", "ru", date(2027, 1, 1)), ("31 июня", "ru", None),
    ("5 दिसंबर", "hi", date(2026, 12, 5)), ("26 जनवरी", "hi", date(2027, 1, 26)), ("कल", "hi", None),
])
def test_dates_are_read_as_the_next_such_day(text: str, lang: str, want: date | None) -> None:
    assert parse_date(text, lang, TODAY) == want


@pytest.mark.parametrize("text,lang,want", [
    ("christmas", "en", date(2026, 12, 25)), ("new year's eve", "en", date(2026, 12, 31)),
    ("new year's day", "en", date(2027, 1, 1)), ("halloween", "en", date(2027, 10, 31)),  # (passed this year)
    ("новый год", "ru", date(2027, 1, 1)), ("старый новый год", "ru", date(2027, 1, 14)),  # the longest name said
    ("рождество", "ru", date(2027, 1, 7)), ("क्रिसमस", "hi", date(2026, 12, 25)),
    ("गणतंत्र दिवस", "hi", date(2027, 1, 26)),
    ("christmas or halloween", "en", None),  # two days: neither
    ("5 декабря", "ru", date(2026, 12, 5)),  # (a date said outright is as before)
])
def test_a_day_called_by_name_is_its_next_date(text: str, lang: str, want: date | None) -> None:
    assert parse_date(text, lang, TODAY) == want


@pytest.mark.parametrize("lang,text,month_day", [
    ("en", "what day is christmas", "12-25"), ("en", "what day of the week is new year's day", "01-01"),
    ("ru", "какой день недели будет новый год", "01-01"), ("hi", "क्रिसमस किस दिन है", "12-25"),
    ("hi", "25 दिसंबर किस दिन है", "12-25"),
])
def test_the_weekday_of_a_day_called_by_name_is_asked_of_that_date(living_room: Components, lang: str, text: str,
                                                                    month_day: str) -> None:
    """Before, the model answered "what day is christmas" with today's date."""
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [c.name for c in decision.calls] == ["get_time"], decision
    assert str(decision.calls[0].arguments.get("date", ""))[5:] == month_day, decision


@pytest.mark.parametrize("text,lang,want", [
    ("the day after tomorrow", "en", date(2026, 12, 2)), ("послезавтра", "ru", date(2026, 12, 2)),
    ("परसों", "hi", date(2026, 12, 2)), ("parson", "hi", date(2026, 12, 2)),
    ("the day after tomorrow or friday", "en", date(2026, 12, 2)),  # (the relative day is the one meant)
])
def test_a_day_said_relative_to_today_is_that_many_days_ahead(text: str, lang: str, want: date) -> None:
    assert parse_date(text, lang, TODAY) == want


@pytest.mark.parametrize("text,lang,want", [
    ("परसों सुबह सात बजे", "hi", (date(2026, 12, 2), "सुबह सात बजे")),
    ("शुक्रवार को सात बजे", "hi", (date(2026, 12, 4), "सात बजे")),
    ("семь послезавтра", "ru", (date(2026, 12, 2), "семь")),
    ("семь в пятницу", "ru", (date(2026, 12, 4), "семь")),
    ("seven on friday", "en", (date(2026, 12, 4), "seven")),
    ("7 the day after tomorrow", "en", (date(2026, 12, 2), "7")),
    ("seven thirty", "en", None),  # no day in it
    ("friday", "en", None),  # nothing left for the time
    ("7 on the 5th", "en", None),  # a day by number: the number may be the time's, the templates with {date} read it
])
def test_a_day_inside_a_time_is_taken_out_of_it(text: str, lang: str, want: tuple[date, str] | None) -> None:
    from hearthd.dates import day_apart

    assert day_apart(text, lang, TODAY) == want


@pytest.mark.parametrize("lang,said", [("en", "December 5"), ("ru", "5 декабря"), ("hi", "5 दिसंबर")])
def test_dates_are_said_back(lang: str, said: str) -> None:
    assert say_date("2026-12-05", lang) == said


def test_an_alarm_on_a_date_rings_that_day_once_and_a_past_date_is_refused() -> None:
    berlin = ZoneInfo("Europe/Berlin")
    book = AlarmBook(now=lambda: datetime(2026, 11, 30, 12, 0, tzinfo=berlin))
    out = asyncio.run(book.set_alarm({"time": "07:00", "date": "2026-12-05"}))
    assert out.ok and out.phrase == "alarm.set_date" and out.spoken_values("ru")["date"] == "5 декабря"
    assert book.pending()[0].at == datetime(2026, 12, 5, 7, 0, tzinfo=berlin)
    past = asyncio.run(book.set_alarm({"time": "07:00", "date": "2026-11-30"}))
    assert not past.ok and past.phrase == "alarm.past" and len(book.pending()) == 1


@pytest.mark.parametrize("lang,said", [("en", "May 5"), ("ru", "5 мая"), ("hi", "5 मई")])
def test_a_month_with_a_short_name_is_said_by_name(lang: str, said: str) -> None:
    assert say_date("2026-05-05", lang) == said


@pytest.mark.parametrize("text,lang,want", [
    ("saturday", "en", date(2026, 12, 5)), ("on friday", "en", date(2026, 12, 4)),
    ("tuesday", "en", date(2026, 12, 8)),  # said on a Tuesday: the next one, not today
    ("в субботу", "ru", date(2026, 12, 5)), ("शनिवार को", "hi", date(2026, 12, 5)),
    ("shaniwar", "hi", date(2026, 12, 5)),
    ("7 on friday", "en", date(2026, 12, 4)),  # the 7 is the hour
    ("monday or friday", "en", None),
])
def test_a_weekday_is_the_next_such_day(text: str, lang: str, want: date | None) -> None:
    assert parse_date(text, lang, date(2026, 12, 1)) == want  # a Tuesday


@pytest.mark.parametrize("lang,text,time", [
    ("en", "set an alarm for 9 on saturday", "09:00"), ("en", "wake me up at 7 on friday", "07:00"),
    ("en", "wake me on saturday at 8:30", "08:30"),
])
def test_an_alarm_on_a_weekday_keeps_the_day(lang: str, text: str, time: str) -> None:
    from hearthd.agent.fastpath import FastPath
    from hearthd.tools.alarms import AlarmBook
    from hearthd.tools.registry import ToolRegistry

    decision = FastPath(ToolRegistry(AlarmBook().tools())).match(text, lang)
    assert decision is not None and decision.calls[0].arguments["time"] == time
    assert date.fromisoformat(decision.calls[0].arguments["date"]).weekday() in (4, 5)
