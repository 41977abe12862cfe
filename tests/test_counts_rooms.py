"""Counts said and bounded, rooms never swapped, unknown names said, every "which one?" candidate named, and
compound requests done as a whole or not at all (issue 15, items 2, 4 and 5). No model loads: every call here
comes from the templates, a yes, or an answer to "which one?"; the model's part is a stand-in."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import pytest

from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import Trace
from hearthd.locale import phrase
from hearthd.spoken import say_count


@pytest.fixture
def hearthd(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Components:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    return Components(cfg)


def say(c: Components, text: str, lang: str | None = None) -> str:
    return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply


# -- item 2: counts ---------------------------------------------------------------------------------------------

CANCEL_730 = [("en", "cancel the 7:30 alarm", "yes"), ("ru", "удали будильник на 7:30", "да"),
              ("hi", "7:30 का अलार्म हटा दो", "हाँ"), ("hi", "7:30 wala alarm hata do", "हाँ")]


@pytest.mark.parametrize("lang,text,yes", CANCEL_730)
def test_cancelling_one_time_that_finds_many_asks_first_with_the_count(hearthd: Components, lang: str, text: str,
                                                                       yes: str) -> None:
    for _ in range(5):
        hearthd.alarms.add("07:30")
    hearthd.alarms.add("08:15")
    question = say(hearthd, text, lang)
    count = say_count(5, "alarm", lang)
    assert question == phrase(lang, "confirm.cancel_alarm_many", count=count, time="7:30")
    assert len(hearthd.alarms.pending()) == 6  # nothing cancelled before the yes
    assert say(hearthd, yes) == phrase(lang, "alarm.cancelled_many", alarms=count, time="7:30")
    assert [a.hhmm for a in hearthd.alarms.pending()] == ["08:15"]


def test_a_no_to_the_count_question_cancels_nothing(hearthd: Components) -> None:
    for _ in range(3):
        hearthd.alarms.add("06:45")
    assert say(hearthd, "delete my alarm at 6:45").startswith("That's 3 alarms at 6:45.")
    assert say(hearthd, "no") == phrase("en", "confirm.cancelled")
    assert len(hearthd.alarms.pending()) == 3


@pytest.mark.parametrize("lang,text", [("en", "remove the alarm for 9:05"), ("ru", "отмени будильник на 9:05"),
                                       ("hi", "9:05 ka alarm cancel karo")])
def test_two_at_once_are_cancelled_without_a_question_but_counted(hearthd: Components, lang: str, text: str) -> None:
    hearthd.alarms.add("09:05")
    hearthd.alarms.add("09:05")
    hearthd.alarms.add("10:00")
    assert say(hearthd, text, lang) == phrase(lang, "alarm.cancelled_many", alarms=say_count(2, "alarm", lang),
                                              time="9:05")
    assert [a.hhmm for a in hearthd.alarms.pending()] == ["10:00"]
    assert say(hearthd, "cancel the 10 am alarm") == phrase("en", "alarm.cancelled", time="10:00")  # one: "the alarm"
    assert hearthd.alarms.pending() == []


def test_confirm_many_is_configurable(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.policy.confirm_many = 0  # even one cancelled alarm asks first
    c = Components(cfg)
    c.alarms.add("11:10")
    assert say(c, "cancel the alarm at 11:10") == phrase(
        "en", "confirm.cancel_alarm_many", count=say_count(1, "alarm", "en"), time="11:10")
    assert len(c.alarms.pending()) == 1


def test_cancelling_all_says_how_many_in_the_question(hearthd: Components) -> None:
    for hhmm in ("06:00", "06:30", "07:00", "07:30"):
        hearthd.alarms.add(hhmm)
    assert say(hearthd, "отмени все будильники", "ru") == phrase(
        "ru", "confirm.cancel_all_alarms_many", count=say_count(4, "alarm", "ru"))
    assert len(hearthd.alarms.pending()) == 4
