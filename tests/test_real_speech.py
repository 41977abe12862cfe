"""Requests as people say them (issue 16's patterns, in our own words): each is read by code — hearthd's templates or
the sentence library — and answered from the home, the alarm book or the clock, with no model turn. The model's
part is a stand-in that declines, so a request that reached it shows as not done."""

from __future__ import annotations

import asyncio

import pytest

from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace

from .test_library import Declines, Sent, home  # noqa: F401 — the fixture


def turn(c: Components, text: str, lang: str) -> tuple[str, list[str]]:
    trace = Trace()
    reply = asyncio.run(Pipeline(c, trace).run_text(text, language=lang)).reply
    return reply, [str(e.name) for e in trace.of_type(EventType.TOOL_CALL)]


@pytest.mark.parametrize("lang,text,tool", [
    ("en", "hey turn off all the kitchen lights", "turn_off"),
    ("en", "are any of the doors unlocked?", "device_state"),
    ("en", "how many lights are on", "device_state"),
    ("en", "what time is it?", "get_time"),
    ("en", "time now", "get_time"),
    ("en", "whats the date today", "get_time"),
    ("en", "what day is the 22nd", "get_time"),
    ("ru", "выключи весь свет в доме", "turn_off"),
    ("ru", "который час", "get_time"),
    ("hi", "कितने बजे हैं", "get_time"),
    ("hi", "mere saare alarms dikhao", "list_alarms"),
    ("hi", "do baje wala alarm delete karo", "cancel_alarm"),
    ("hi", "alarm paanch minute snooze karo", "snooze"),
    ("hi", "timer par kitna time bacha hai", "timer_remaining"),
    ("hi", "five minutes me timer set karo", "set_timer"),
])
def test_read_by_code_and_answered_without_the_model(home: tuple[Components, Sent, Declines], lang: str,  # noqa: F811
                                                     text: str, tool: str) -> None:
    c, _, model = home
    c.alarms.add("14:00")
    _, calls = turn(c, text, lang)
    assert calls == [tool] and model.asked == []


def test_the_two_oclock_alarm_is_the_one_at_14_when_none_is_at_2(home: tuple[Components, Sent, Declines]) -> None:  # noqa: F811
    c, _, _ = home
    c.alarms.add("14:00")
    c.alarms.add("07:00")
    turn(c, "do baje wala alarm delete karo", "hi")
    assert [a.hhmm for a in c.alarms.pending()] == ["07:00"]
    c.alarms.add("02:00")
    c.alarms.add("14:00")
    turn(c, "cancel the 2 o'clock alarm", "en")  # one at 2:00 exists: that one, not the afternoon's
    assert sorted(a.hhmm for a in c.alarms.pending()) == ["07:00", "14:00"]


@pytest.mark.parametrize("lang,text", [
    ("en", "make the house lights amber at six pm"),  # a colour and a time: never an alarm
    ("en", "send mom 500 rupees"),
    ("hi", "mom ko 500 rupees bhejo"),
])
def test_what_hearthd_cannot_do_sets_no_alarm_and_sends_nothing(home: tuple[Components, Sent, Declines],  # noqa: F811
                                                                lang: str, text: str) -> None:
    c, sent, _ = home
    _, calls = turn(c, text, lang)
    assert calls == [] and sent.sent == [] and c.alarms.pending() == []
