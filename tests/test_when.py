"""Relative times ("in twenty minutes", "через полчаса", "दस मिनट में") become clock times before matching."""

from __future__ import annotations

from datetime import datetime

import pytest

from hearthd.agent.fastpath import FastPath, Router
from hearthd.agent.when import absolute_times
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.registry import ToolRegistry

NOW = datetime(2026, 11, 30, 14, 5)


@pytest.mark.parametrize("text,lang,want", [
    ("wake me up in twenty minutes", "en", "wake me up at 14:25"),
    ("set an alarm in an hour and a half", "en", "set an alarm at 15:35"),
    ("alarm in 45 minutes please", "en", "alarm at 14:50 please"),
    ("set an alarm ten minutes from now", "en", "set an alarm at 14:15"),
    ("разбуди меня через полчаса", "ru", "разбуди меня в 14:35"),
    ("поставь будильник через два часа", "ru", "поставь будильник в 16:05"),
    ("दस मिनट में जगा देना", "hi", "14:15 बजे जगा देना"),
    ("आधे घंटे बाद जगा देना", "hi", "14:35 बजे जगा देना"),
    ("set an alarm for 7 am", "en", "set an alarm for 7 am"),  # nothing relative: unchanged
    ("turn on the light in the kitchen", "en", "turn on the light in the kitchen"),
])
def test_relative_times_are_rewritten(text: str, lang: str, want: str) -> None:
    assert absolute_times(text, lang, NOW) == want


def test_midnight_is_crossed() -> None:
    assert absolute_times("wake me up in 2 hours", "en", datetime(2026, 11, 30, 23, 30)) == "wake me up at 1:30"


@pytest.mark.parametrize("text,lang,time", [("wake me up in twenty minutes", "en", "14:25"),
                                           ("разбуди меня через полчаса", "ru", "14:35")])
def test_a_relative_alarm_is_set_for_the_clock_time(text: str, lang: str, time: str) -> None:
    def no_model() -> None:  # type: ignore[return]
        raise AssertionError("the fast path decides this")

    router = Router(FastPath(ToolRegistry(AlarmBook().tools())), no_model, wall=lambda: NOW)  # type: ignore[arg-type]
    decision = router.decide(text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [("set_alarm", {"time": time})]
