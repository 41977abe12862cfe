"""A correction of what was just done ("set an alarm for 7" … "actually, make it 8 instead", "нет, давай на восемь",
"नहीं, आठ बजे का कर दो"): that very alarm is moved, the thermostat or a level set again. Before, the model was left
with "make it 8 instead" and refused it as a time with no alarm said (and "change it to 7:30" became the heating at
7 °C). Only in the conversation that made the request, and only for a while after it."""

from __future__ import annotations

import asyncio
import copy
from datetime import datetime
from pathlib import Path

import pytest

from hearthd.agent.fastpath import Done, corrected
from hearthd.agent.parsing import ToolCall
from hearthd.config import Config
from hearthd.daemon.components import Components

from .spoken_home import Asked
from .test_alarms import BERLIN
from .test_declines import StandIn


@pytest.fixture
def hearthd(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Components:
    """No model: a stand-in that abstains and records what it was asked (a correction never reaches it)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.mqtt.enabled = cfg.dbus.enabled = False
    c = Components(cfg)
    evening = datetime(2026, 12, 1, 21, 0, tzinfo=BERLIN)
    c.alarms._now = lambda: evening
    stand_in = StandIn(c.tools)
    monkeypatch.setattr(c, "agent", lambda: stand_in)
    c.stand_in = stand_in  # type: ignore[attr-defined]
    return c


def say(c: Components, text: str, lang: str, conversation: str = "local") -> str:
    from hearthd.daemon.pipeline import Pipeline
    from hearthd.events import Trace

    return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang, conversation=conversation)).reply


def alarms(c: Components) -> list[str]:
    return sorted(a.hhmm for a in c.alarms.pending())


@pytest.mark.parametrize("lang,setting,correction", [
    ("en", "set an alarm for 7", "actually, make it 8 instead"),
    ("en", "wake me up at 7", "sorry, 8 o'clock"),
    ("ru", "поставь будильник на семь утра", "нет, давай на восемь"),
    ("hi", "सात बजे का अलार्म लगाओ", "नहीं, आठ बजे का कर दो"),
    ("hi", "7 baje ka alarm laga do", "nahi 8 baje ka kar do"),
])
def test_the_alarm_just_set_is_moved_not_a_second_one_set(hearthd: Components, lang: str, setting: str,
                                                          correction: str) -> None:
    from hearthd.locale import phrase

    hearthd.alarms.add("07:00", label="gym", repeat="saturday")  # another at 7: never the one moved
    say(hearthd, setting, lang)
    assert say(hearthd, correction, lang) == phrase(lang, "alarm.moved", time="7:00", new_time="8:00")
    assert alarms(hearthd) == ["07:00", "08:00"] and hearthd.stand_in.asked == []  # type: ignore[attr-defined]
    assert [a.label for a in hearthd.alarms.pending() if a.hhmm == "07:00"] == ["gym"]


def test_a_second_correction_moves_it_again_and_another_conversation_corrects_nothing(hearthd: Components) -> None:
    say(hearthd, "set an alarm for 7", "en")
    say(hearthd, "make it 8", "en")
    say(hearthd, "no, 8:30", "en")
    assert alarms(hearthd) == ["08:30"]
    say(hearthd, "make it 9", "en", conversation="mqtt:kitchen")  # not the conversation that set it
    assert alarms(hearthd) == ["08:30"]


def test_a_correction_long_after_or_after_something_else_is_no_correction(hearthd: Components) -> None:
    router = hearthd.router()
    now = [100.0]
    router.clock = lambda: now[0]
    say(hearthd, "set an alarm for 7", "en")
    now[0] += router.clarify_timeout + 1  # past the while a correction is read in
    say(hearthd, "make it 8", "en")
    assert alarms(hearthd) == ["07:00"]
    now[0] = 100.0
    say(hearthd, "set an alarm for 6", "en")
    say(hearthd, "what time is it", "en")  # something else done since: nothing to correct
    say(hearthd, "make it 8", "en")
    assert alarms(hearthd) == ["06:00", "07:00"]


@pytest.mark.parametrize("call,value,lang,fixed", [
    (ToolCall("set_temperature", {"temperature": 21.0, "device": "Thermostat"}), "22", "en",
     ToolCall("set_temperature", {"device": "Thermostat", "temperature": 22.0})),
    (ToolCall("set_temperature", {"step": "up", "by": 2.0}), "двадцать три", "ru",
     ToolCall("set_temperature", {"temperature": 23.0})),
    (ToolCall("set_volume", {"percent": 50}), "thirty percent", "en", ToolCall("set_volume", {"percent": 30})),
    (ToolCall("set_brightness", {"area": "Kitchen", "step": "down"}), "20 percent", "en",
     ToolCall("set_brightness", {"area": "Kitchen", "percent": 20})),
    (ToolCall("set_temperature", {"temperature": 21.0}), "8:30", "en", None),  # a time is no temperature
    (ToolCall("set_alarm", {"time": "07:00"}), "the kitchen light", "en", None),  # no time: a request of its own
    (ToolCall("turn_off", {"device": "Kitchen Light"}), "8", "en", None),  # nothing there to change
])
def test_what_a_correction_changes(call: ToolCall, value: str, lang: str, fixed: ToolCall | None) -> None:
    assert corrected(call, value, lang) == fixed


def test_the_router_reads_the_correction_of_the_thermostat_just_set(living_room: Components) -> None:
    router = living_room.router()
    asked = Asked()
    done = Done(ToolCall("set_temperature", {"temperature": 21.0}), "en", router.clock() + 30)
    asked.done = done  # type: ignore[attr-defined]
    decision = router.decide("actually make it 22", "en", asked)
    assert (decision.kind, decision.calls) == ("call", [ToolCall("set_temperature", {"temperature": 22.0})])
    assert decision.reason == "a correction of set_temperature"
    assert router._correction(done, "turn on the kitchen light", "en") is None  # a request of its own
    assert router._correction(done, "no", "en") is None
