"""The clock (issue 16, item 4): the time, today's date and weekday, and the weekday of a date, in the configured zone,
in en/ru/hi, from the templates (no model loads: the model's part is a stand-in that must not be asked)."""

from __future__ import annotations

import asyncio
import copy
from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.checks import review
from hearthd.agent.fastpath import FastPath, Router
from hearthd.agent.parsing import ToolCall
from hearthd.config import Config
from hearthd.context import turn_language
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.dates import parse_date
from hearthd.events import Trace
from hearthd.locale import phrase
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.clock import Clock, say_day, weekday_name
from hearthd.tools.registry import Tool, ToolRegistry, ToolResult

ZONE = ZoneInfo("Asia/Kolkata")
EVENING = datetime(2026, 12, 1, 19, 5, tzinfo=ZONE)  # a Tuesday


class NoModel:
    """The model's part: every turn here must be read by the templates."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry
        self.asked: list[str] = []

    def decide(self, text: str, lang: str, now: object = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append(text)
        return Decision("abstain", reason="no tool fits", source="model")


async def _nothing(args: dict[str, Any]) -> ToolResult:
    raise AssertionError("now_playing must not run for a clock question")


def clock_router(now: datetime = EVENING) -> tuple[Router, ToolRegistry, NoModel]:
    media = Tool("now_playing", "Say what is playing.", {"type": "object", "properties": {}}, _nothing, family="media")
    registry = ToolRegistry([*AlarmBook().tools(), *Clock(now=lambda: now).tools(), media])
    model = NoModel(registry)
    return Router(FastPath(registry), lambda: model), registry, model  # type: ignore[arg-type, return-value]


async def _run(tool: Tool, arguments: dict[str, Any]) -> ToolResult:
    return await tool.handler(arguments)


def answer(registry: ToolRegistry, call: ToolCall, lang: str) -> str:
    token = turn_language.set(lang)  # as the pipeline does: the handler says the time as the reply's language does
    try:
        result = asyncio.run(_run(registry.get(call.name), call.arguments))
    finally:
        turn_language.reset(token)
    return phrase(lang, result.phrase, **result.spoken_values(lang))


TIME = {"en": "It's 7:05 pm.", "ru": "Сейчас 19:05.", "hi": "अभी शाम के 7:05 बजे हैं।"}
DATE = {"en": "Today is Tuesday, December 1.", "ru": "Сегодня вторник, 1 декабря.", "hi": "आज मंगलवार, 1 दिसंबर है।"}
WEEKDAY = {"en": "Today is Tuesday.", "ru": "Сегодня вторник.", "hi": "आज मंगलवार है।"}

ASKED = [
    # the time: plain, polite, elliptical, a leftover wake word, words missing, code-mixed
    ("en", "what time is it", TIME), ("en", "time now", TIME), ("en", "what's the time please", TIME),
    ("en", "hey, what time is it?", TIME), ("en", "what time is it now", TIME), ("en", "whats the time", TIME),
    ("en", "do you know what time it is", TIME), ("en", "could you tell me the time please", TIME),
    ("en", "current time", TIME), ("en", "hey what time", TIME), ("en", "got the time?", TIME),
    ("ru", "сколько времени", TIME), ("ru", "который час", TIME), ("ru", "подскажите пожалуйста который час", TIME),
    ("ru", "слушай, сколько щас время?", TIME), ("ru", "а который час не подскажешь", TIME),
    ("ru", "сколько сейчас на часах", TIME), ("ru", "скажи время", TIME), ("ru", "время сколько", TIME),
    ("hi", "कितने बजे हैं", TIME), ("hi", "टाइम क्या हुआ है", TIME), ("hi", "अरे अभी कितने बजे हैं?", TIME),
    ("hi", "ज़रा टाइम बताओ", TIME), ("hi", "abhi kitne baje hain", TIME), ("hi", "time kya hua hai", TIME),
    ("hi", "zara time batao", TIME), ("hi", "kya time ho raha hai", TIME), ("hi", "अभी क्या समय हुआ है", TIME),
    # today's date
    ("en", "what's the date today", DATE), ("en", "what is today's date", DATE), ("en", "hey what date is it", DATE),
    ("en", "tell me the date please", DATE), ("en", "today's date", DATE), ("en", "what's the date", DATE),
    ("ru", "какое сегодня число", DATE), ("ru", "какое число сегодня?", DATE), ("ru", "какая сегодня дата", DATE),
    ("ru", "слушай, сегодня какое число", DATE), ("ru", "подскажи какое у нас сегодня число", DATE),
    ("hi", "aaj kya date hai", DATE), ("hi", "आज क्या तारीख है", DATE), ("hi", "आज की तारीख़ क्या है", DATE),
    ("hi", "aaj kitni tarikh hai", DATE), ("hi", "aaj ki date batao", DATE), ("hi", "आज कौन सी डेट है", DATE),
    # today's weekday
    ("en", "what day is it", WEEKDAY), ("en", "what day is it today?", WEEKDAY), ("en", "which day is today", WEEKDAY),
    ("en", "what day of the week is it", WEEKDAY), ("en", "hey what's the day today", WEEKDAY),
    ("ru", "какой сегодня день недели", WEEKDAY), ("ru", "какой сегодня день", WEEKDAY),
    ("ru", "что сегодня за день", WEEKDAY), ("ru", "сегодня какой день недели?", WEEKDAY),
    ("hi", "aaj kaun sa din hai", WEEKDAY), ("hi", "आज कौन सा दिन है", WEEKDAY), ("hi", "आज क्या दिन है?", WEEKDAY),
    ("hi", "aaj konsa din hai", WEEKDAY), ("hi", "आज कौनसा वार है", WEEKDAY), ("hi", "aaj ka din kaunsa hai", WEEKDAY),
    ("hi", "आज का दिन कौन सा है", WEEKDAY), ("en", "what's today?", DATE),
]


@pytest.mark.parametrize("lang,text,replies", ASKED)
def test_the_clock_is_answered_by_the_templates(lang: str, text: str, replies: dict[str, str]) -> None:
    router, registry, model = clock_router()
    decision = router.decide(text, lang)
    assert decision.kind == "call" and decision.source == "fastpath", decision.reason
    assert [c.name for c in decision.calls] == ["get_time"]
    assert answer(registry, decision.calls[0], lang) == replies[lang]
    assert model.asked == []  # no model turn


@pytest.mark.parametrize("lang,text", [("en", "time now"), ("en", "what time is it"), ("en", "time please"),
                                       ("en", "what time is it right now")])
def test_time_now_is_never_now_playing(lang: str, text: str) -> None:
    router, _, _ = clock_router()
    assert [c.name for c in router.decide(text, lang).calls] == ["get_time"]


DAYS = [("en", "what day is the 22nd", "22nd"), ("en", "what day of the week is the 22nd?", "22nd"),
        ("en", "what day is 25 december", "25 december"), ("en", "which day is december 25th", "december 25th"),
        ("en", "hey what day of the week will the 5th be", "5th"),
        ("ru", "какой день будет 22-го", "22-го"), ("ru", "какой день недели будет 25 декабря", "25 декабря"),
        ("ru", "25 декабря какой день недели", "25 декабря"), ("ru", "на какой день выпадает 8 марта", "8 марта"),
        ("hi", "25 दिसंबर को कौन सा दिन है", "25 दिसंबर"), ("hi", "25 december ko kaun sa din hoga", "25 december"),
        ("hi", "22 दिसंबर को कौन सा दिन पड़ेगा", "22 दिसंबर")]


@pytest.mark.parametrize("lang,text,said", DAYS)
def test_the_weekday_of_a_date_said(lang: str, text: str, said: str) -> None:
    router, registry, model = clock_router()
    decision = router.decide(text, lang)
    assert decision.kind == "call", decision.reason  # a date in a question passes the checks: get_time only reads
    wanted = parse_date(said, lang, date.today())  # the templates read the next such date from today
    assert wanted is not None
    assert decision.calls == [ToolCall("get_time", {"date": wanted.isoformat()})]
    expected = phrase(lang, "clock.weekday_of", date=say_day(wanted, lang), weekday=weekday_name(wanted, lang))
    assert answer(registry, decision.calls[0], lang) == expected
    assert model.asked == []


@pytest.mark.parametrize("lang,expected", [("en", "December 22 is a Tuesday."), ("ru", "22 декабря — вторник."),
                                           ("hi", "22 दिसंबर को मंगलवार है।")])
def test_weekday_of_a_date_is_said_exactly(lang: str, expected: str) -> None:
    _, registry, _ = clock_router()
    assert answer(registry, ToolCall("get_time", {"date": "2026-12-22"}), lang) == expected
    # the date asked about is today: today's date is said
    assert answer(registry, ToolCall("get_time", {"date": "2026-12-01"}), lang) == DATE[lang]


@pytest.mark.parametrize("hour,minute,en,ru,hi", [
    (0, 5, "It's 12:05 am.", "Сейчас 0:05.", "अभी रात के 12:05 बजे हैं।"),
    (7, 30, "It's 7:30 am.", "Сейчас 7:30.", "अभी सुबह के 7:30 बजे हैं।"),
    (12, 0, "It's 12:00 pm.", "Сейчас 12:00.", "अभी दोपहर के 12:00 बजे हैं।"),
    (13, 45, "It's 1:45 pm.", "Сейчас 13:45.", "अभी दोपहर के 1:45 बजे हैं।"),
    (17, 10, "It's 5:10 pm.", "Сейчас 17:10.", "अभी शाम के 5:10 बजे हैं।"),
    (23, 59, "It's 11:59 pm.", "Сейчас 23:59.", "अभी रात के 11:59 बजे हैं।"),
])
def test_time_forms_per_language(hour: int, minute: int, en: str, ru: str, hi: str) -> None:
    _, registry, _ = clock_router(datetime(2026, 12, 1, hour, minute, tzinfo=ZONE))
    said = {lang: answer(registry, ToolCall("get_time", {}), lang) for lang in ("en", "ru", "hi")}
    assert said == {"en": en, "ru": ru, "hi": hi}


def test_month_names_are_whole_words_and_russian_takes_the_genitive() -> None:
    may = datetime(2026, 5, 1, 9, 0, tzinfo=ZONE)  # a Friday
    _, registry, _ = clock_router(may)
    call = ToolCall("get_time", {"what": "date"})
    assert [answer(registry, call, lang) for lang in ("en", "ru", "hi")] == \
        ["Today is Friday, May 1.", "Сегодня пятница, 1 мая.", "आज शुक्रवार, 1 मई है।"]
    assert say_day(date(2026, 9, 3), "en") == "September 3" and say_day(date(2026, 3, 8), "ru") == "8 марта"


def test_the_configured_zone_is_the_clock_s() -> None:
    clock = Clock(zone="Asia/Kolkata")
    assert clock.now().tzinfo == ZONE
    result = asyncio.run(clock.get_time({}))
    assert result.ok and result.phrase == "clock.time" and result.data["zone"] == "Asia/Kolkata"


def test_a_model_call_with_a_date_passes_the_checks_and_an_impossible_date_does_not() -> None:
    registry = ToolRegistry(Clock(now=lambda: EVENING).tools())
    call = Decision("call", calls=[ToolCall("get_time", {"date": "2026-12-22"})], source="model")
    assert review(call, "what day is the 22nd?", "en", registry).kind == "call"
    refused = review(Decision("call", calls=[ToolCall("get_time", {"date": "2027-03-03"})], source="model"),
                     "what day is the 30th of february", "en", registry)
    assert refused.kind == "abstain" and refused.say == "check.no_such_date"


def test_the_tool_is_declared_not_consequential_and_described(base_config: Config, tmp_path: Path,
                                                              monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    tool = Components(cfg).tools.get("get_time")
    assert not tool.consequential
    assert tool.parameters["properties"]["date"]["x-ground"] == "date"
    for lang in ("en", "ru", "hi"):
        assert tool.describe(lang) != tool.description or lang == "en"


@pytest.mark.parametrize("lang,text,reply", [("en", "what time is it", TIME["en"]), ("ru", "который час", TIME["ru"]),
                                             ("hi", "abhi kitne baje hain", TIME["hi"]),
                                             ("hi", "aaj kya date hai", DATE["hi"]),
                                             ("ru", "какое сегодня число", DATE["ru"])])
def test_through_the_pipeline_in_the_configured_zone(base_config: Config, tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch, lang: str, text: str,
                                                      reply: str) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.general.timezone = "Asia/Kolkata"
    c = Components(cfg)
    c.clock.now = lambda: EVENING
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))
    assert asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply == reply


# -- a place other than here: only the local time is known, and said so ------------------------------------------

ELSEWHERE = [
    ("en", "what time is it in London", "London"), ("en", "what's the time in Tokyo right now?", "Tokyo"),
    ("en", "hey, what time is it in Eastern time", "Eastern time"),
    ("en", "do you know what time it is in Dallas", "Dallas"),
    ("en", "could you tell me the time in New York please", "New York"), ("en", "local time in Sydney", "Sydney"),
    ("en", "how late is it over in Berlin", "Berlin"),
    ("ru", "который час в Лондоне", "Лондоне"), ("ru", "сколько сейчас времени в Токио?", "Токио"),
    ("ru", "а в Нью-Йорке который час", "Нью-Йорке"), ("ru", "подскажи, какое время в Москве", "Москве"),
    ("hi", "लंदन में कितने बजे हैं", "लंदन"), ("hi", "अभी टोक्यो में क्या टाइम हुआ है?", "टोक्यो"),
    ("hi", "dubai mein kya time hai", "dubai"), ("hi", "zara new york ka time batao", "new york"),
]


@pytest.mark.parametrize("lang,text,place", ELSEWHERE)
def test_a_place_elsewhere_is_said_back_with_the_local_time(lang: str, text: str, place: str) -> None:
    """"what time is it in London" is never answered with the local time as if it were London's: the reply says that
    only the time here is known, names the place as said, and gives the local time."""
    router, registry, model = clock_router()
    decision = router.decide(text, lang)
    assert decision.kind == "call" and model.asked == [], (text, decision)
    (call,) = decision.calls
    assert (call.name, call.arguments.get("place")) == ("get_time", place)
    local = {"en": "7:05 pm", "ru": "19:05", "hi": "शाम के 7:05"}[lang]
    assert answer(registry, call, lang) == phrase(lang, "clock.only_local", place=place, time=local)


@pytest.mark.parametrize("lang,text", [("en", "what time is it in ten minutes"), ("en", "what time is it in 2 hours"),
                                       ("ru", "который час будет через час"), ("en", "what time is it"),
                                       ("en", "what's the time in the alarm")])
def test_a_time_or_an_alarm_is_no_place(lang: str, text: str) -> None:
    """A duration, a number or an alarm after "in" is no place (never "I only know the time here, not in ten
    minutes")."""
    router, registry, _ = clock_router()
    decision = router.decide(text, lang)
    assert not any(c.arguments.get("place") for c in decision.calls), decision


def test_a_place_through_the_pipeline_changes_nothing_else(base_config: Config, tmp_path: Path,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.general.timezone = "Asia/Kolkata"
    c = Components(cfg)
    c.clock.now = lambda: EVENING
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))
    said = asyncio.run(Pipeline(c, Trace()).run_text("what time is it in Tokyo", language="en")).reply
    assert said == "I only know the time here, not in Tokyo. Here it's 7:05 pm."
    assert asyncio.run(Pipeline(c, Trace()).run_text("what time is it", language="en")).reply == TIME["en"]
