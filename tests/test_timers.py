"""Timers as people use them (issue 16, item 5): several at once, named, time added and taken off, paused and
resumed, one or all cancelled, the status of one or all; kept across a restart. No model loads: every call comes
from the templates (the fast path), the replies are checked as said, and the clock is the test's."""

from __future__ import annotations

import asyncio
import copy
import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from zoneinfo import ZoneInfo

import pytest

from hearthd.agent.fastpath import FastPath
from hearthd.agent.grounding import ungrounded_arguments
from hearthd.config import Config
from hearthd.context import turn_language
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.daemon.scheduler import Scheduler
from hearthd.events import EventType, Trace
from hearthd.locale import phrase
from hearthd.spoken import say_count, say_duration
from hearthd.tools.alarms import Alarm, AlarmBook, same_name, timer_label
from hearthd.tools.registry import ToolRegistry

BERLIN = ZoneInfo("Europe/Berlin")


class Clock:
    def __init__(self) -> None:
        self.now = datetime(2026, 12, 1, 12, 0, tzinfo=BERLIN)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def cfg(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    out = copy.deepcopy(base_config)
    out.dbus.enabled = False
    return out


def start(cfg: Config, clock: Clock) -> Components:
    """A daemon's components on the test's state dir, with the test's clock (a second call is a restart)."""
    c = Components(cfg)
    c.alarms._now = clock
    return c


@pytest.fixture
def hearthd(cfg: Config, clock: Clock) -> Components:
    return start(cfg, clock)


def say(c: Components, text: str, lang: str | None = "en") -> str:
    return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply


def calls(c: Components, text: str, lang: str) -> list[tuple[str, dict]]:
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text(text, language=lang))
    return [(e.name, e.arguments) for e in trace.of_type(EventType.TOOL_CALL)]


def names(c: Components) -> list[tuple[str, str]]:
    return [(t.label, t.state) for t in c.alarms.timers()]


def dur(seconds: int, lang: str) -> str:
    return say_duration(seconds, lang)


# -- the templates read these (no model) ----------------------------------------------------------------------

FAST = [
    # English: plain, polite, leftover "hey", elliptical, number words
    ("en", "set a pizza timer for 10 minutes", "set_timer", {"label": "pizza", "seconds": 600}),
    ("en", "hey could you start a tea timer for three minutes please", "set_timer", {"label": "tea", "seconds": 180}),
    ("en", "set a timer for the pasta for twelve minutes", "set_timer", {"label": "pasta", "seconds": 720}),
    ("en", "set a timer for 12 minutes for the pasta", "set_timer", {"label": "pasta", "seconds": 720}),
    ("en", "set me a timer for ten minutes", "set_timer", {"seconds": 600}),
    ("en", "how long is left on my timers", "timer_remaining", {}),
    ("en", "how much time is left on the pizza timer", "timer_remaining", {"label": "pizza"}),
    ("en", "what timers do I have", "timer_remaining", {}),
    ("en", "stop all the timers", "cancel_timer", {"all": True}),
    ("en", "please cancel every timer", "cancel_timer", {"all": True}),
    ("en", "cancel the pizza timer", "cancel_timer", {"label": "pizza"}),
    ("en", "hey, pizza timer, cancel", "cancel_timer", {"label": "pizza"}),
    ("en", "cancel the timer", "cancel_timer", {}),
    ("en", "add five minutes to the timer", "change_timer", {"seconds": 300, "direction": "add"}),
    ("en", "could you add another 2 minutes to the tea timer", "change_timer",
     {"seconds": 120, "direction": "add", "label": "tea"}),
    ("en", "take five minutes off my timer", "change_timer", {"seconds": 300, "direction": "subtract"}),
    ("en", "pause the timer", "pause_timer", {"action": "pause"}),
    ("en", "put the pizza timer on hold", "pause_timer", {"action": "pause", "label": "pizza"}),
    ("en", "resume the timer please", "pause_timer", {"action": "resume"}),
    ("en", "start a timer called pizza for 10 minutes", "set_timer", {"label": "pizza", "seconds": 600}),
    ("en", "pasta timer for twelve minutes", "set_timer", {"label": "pasta", "seconds": 720}),
    ("en", "could you set a timer called laundry for 40 minutes", "set_timer", {"label": "laundry", "seconds": 2400}),
    ("en", "how's the pizza timer doing", "timer_remaining", {"label": "pizza"}),
    ("en", "how many timers do I have", "timer_remaining", {}),
    ("en", "knock a minute off the timer", "change_timer", {"seconds": 60, "direction": "subtract"}),
    # Russian
    ("ru", "поставь таймер для пиццы на десять минут", "set_timer", {"label": "пиццы", "seconds": 600}),
    ("ru", "таймер на 3 минуты для чая", "set_timer", {"label": "чая", "seconds": 180}),
    ("ru", "отмени все таймеры", "cancel_timer", {"all": True}),
    ("ru", "отмени таймер для пиццы", "cancel_timer", {"label": "пиццы"}),
    ("ru", "таймер для пиццы отмени", "cancel_timer", {"label": "пиццы"}),
    ("ru", "добавь пять минут к таймеру", "change_timer", {"seconds": 300, "direction": "add"}),
    ("ru", "сними две минуты с таймера для чая", "change_timer",
     {"seconds": 120, "direction": "subtract", "label": "чая"}),
    ("ru", "поставь таймер на паузу", "pause_timer", {"action": "pause"}),
    ("ru", "сними таймер с паузы", "pause_timer", {"action": "resume"}),
    ("ru", "сколько осталось на таймере", "timer_remaining", {}),
    ("ru", "сколько осталось на таймере для пиццы", "timer_remaining", {"label": "пиццы"}),
    # Hindi (Devanagari)
    ("hi", "पिज़्ज़ा का टाइमर दस मिनट का लगाओ", "set_timer", {"label": "पिज़्ज़ा", "seconds": 600}),
    ("hi", "पिज़्ज़ा वाला टाइमर रद्द कर दो", "cancel_timer", {"label": "पिज़्ज़ा"}),
    ("hi", "सारे टाइमर हटा दो", "cancel_timer", {"all": True}),
    ("hi", "टाइमर में पांच मिनट और जोड़ दो", "change_timer", {"seconds": 300, "direction": "add"}),
    ("hi", "टाइमर रोक दो", "pause_timer", {"action": "pause"}),
    ("hi", "पिज़्ज़ा के टाइमर में कितना समय बचा है", "timer_remaining", {"label": "पिज़्ज़ा"}),
    # Hinglish, English number words inside it included
    ("hi", "5 minute ka timer lagao", "set_timer", {"seconds": 300}),
    ("hi", "five minutes me timer set karo", "set_timer", {"seconds": 300}),
    ("hi", "dus minute ka timer laga do", "set_timer", {"seconds": 600}),
    ("hi", "pizza wala timer 10 minute ka lagao", "set_timer", {"label": "pizza", "seconds": 600}),
    ("hi", "10 minute ka pizza timer lagao", "set_timer", {"label": "pizza", "seconds": 600}),
    ("hi", "workout wala timer band karo", "cancel_timer", {"label": "workout"}),
    ("hi", "saare timer band karo", "cancel_timer", {"all": True}),
    ("hi", "timer mein 5 minute aur badhao", "change_timer", {"seconds": 300, "direction": "add"}),
    ("hi", "timer se do minute kam karo", "change_timer", {"seconds": 120, "direction": "subtract"}),
    ("hi", "timer roko", "pause_timer", {"action": "pause"}),
    ("hi", "timer resume karo", "pause_timer", {"action": "resume"}),
    ("hi", "timer par kitna time bacha hai", "timer_remaining", {}),
    ("hi", "pizza wale timer mein kitna time bacha hai", "timer_remaining", {"label": "pizza"}),
    ("hi", "timer ko roko", "pause_timer", {"action": "pause"}),
    ("hi", "टाइमर को रोक दो", "pause_timer", {"action": "pause"}),
    ("hi", "pizza wale timer ko band karo", "cancel_timer", {"label": "pizza"}),
    ("hi", "timer kitna bacha hai", "timer_remaining", {}),
    ("hi", "ek timer laga do 10 minute ka", "set_timer", {"seconds": 600}),
    ("hi", "pizza ke liye 10 minute ka timer lagao", "set_timer", {"label": "pizza", "seconds": 600}),
    ("hi", "पिज़्ज़ा के लिए दस मिनट का टाइमर लगाओ", "set_timer", {"label": "पिज़्ज़ा", "seconds": 600}),
    # a running timer changed, never a new one started (issue 25): "from", "shorter", "plus", elliptical, polite
    ("en", "take 5 minutes from my timer", "change_timer", {"seconds": 300, "direction": "subtract"}),
    ("en", "could you take two minutes off of the timer", "change_timer", {"seconds": 120, "direction": "subtract"}),
    ("en", "make the timer 3 minutes shorter", "change_timer", {"seconds": 180, "direction": "subtract"}),
    ("en", "make the pasta timer a minute longer", "change_timer",
     {"seconds": 60, "direction": "add", "label": "pasta"}),
    ("en", "shave 30 seconds off the timer", "change_timer", {"seconds": 30, "direction": "subtract"}),
    ("en", "timer plus ten minutes", "change_timer", {"seconds": 600, "direction": "add"}),
    ("en", "give me two more minutes on the timer please", "change_timer", {"seconds": 120, "direction": "add"}),
    ("ru", "убавь таймер на минуту", "change_timer", {"seconds": 60, "direction": "subtract"}),
    ("ru", "сделай таймер на пять минут длиннее", "change_timer", {"seconds": 300, "direction": "add"}),
    ("ru", "сними с таймера две минуты", "change_timer", {"seconds": 120, "direction": "subtract"}),
    ("ru", "ещё три минуты на таймер", "change_timer", {"seconds": 180, "direction": "add"}),
    ("hi", "टाइमर में पांच मिनट और जोड़ो", "change_timer", {"seconds": 300, "direction": "add"}),
    ("hi", "टाइमर को दो मिनट कम कर दो", "change_timer", {"seconds": 120, "direction": "subtract"}),
    ("hi", "2 minute aur jodo timer mein", "change_timer", {"seconds": 120, "direction": "add"}),
    # the time left on a named timer, "the" dropped, or asked as when it ends
    ("en", "how much time left on pizza timer", "timer_remaining", {"label": "pizza"}),
    ("en", "when will the pizza timer go off", "timer_remaining", {"label": "pizza"}),
    ("en", "how long until the timer goes off", "timer_remaining", {}),
    ("en", "is my tea timer done", "timer_remaining", {"label": "tea"}),
    ("ru", "когда зазвонит таймер для пиццы", "timer_remaining", {"label": "пиццы"}),
]


@pytest.mark.parametrize("lang,text,name,arguments", FAST)
def test_the_templates_read_timer_requests(lang: str, text: str, name: str, arguments: dict) -> None:
    decision = FastPath(ToolRegistry(AlarmBook().tools())).match(text, lang)
    assert decision is not None and decision.kind == "call", text
    assert [(c.name, c.arguments) for c in decision.calls] == [(name, arguments)]


@pytest.mark.parametrize("lang,text,name,arguments", FAST)
def test_the_same_requests_pass_the_checks_in_the_chain(hearthd: Components, lang: str, text: str, name: str,
                                                        arguments: dict) -> None:
    assert calls(hearthd, text, lang) == [(name, arguments)]


def test_a_label_made_of_the_words_around_a_name_is_no_name() -> None:
    assert timer_label("the") == timer_label("my") == timer_label("hey") == ""
    assert timer_label("the pizza") == "pizza" and timer_label("hey, tea") == "tea"
    turn_language.set("hi")
    assert timer_label("mera pizza") == "pizza"
    turn_language.set("en")
    assert same_name("пицца", "пиццы") and same_name("pizza timer", "pizza") and same_name("पिज्जा", "पिज़्ज़ा")
    assert not same_name("tea", "pizza")
    # Whisper writes a Hindi name in either script
    assert same_name("pizza", "पिज़्ज़ा") and same_name("chai", "चाय") and same_name("workout", "वर्कआउट")
    assert not same_name("pizza", "पास्ता") and not same_name("chai", "टी")


def test_a_hindi_name_is_found_in_the_other_script(hearthd: Components) -> None:
    say(hearthd, "पिज़्ज़ा का टाइमर दस मिनट का लगाओ", "hi")
    say(hearthd, "chai wala timer 3 minute ka lagao", "hi")
    assert say(hearthd, "pizza wale timer mein kitna time bacha hai", "hi") == \
        phrase("hi", "timer.remaining_named", label="पिज़्ज़ा", duration=dur(600, "hi"))
    assert say(hearthd, "चाय वाला टाइमर रद्द कर दो", "hi") == phrase("hi", "timer.cancelled_named", label="chai")
    assert names(hearthd) == [("पिज़्ज़ा", "pending")]


def test_the_new_arguments_are_grounded_in_the_users_words() -> None:
    tools = {t.name: t for t in AlarmBook().tools()}
    assert ungrounded_arguments(tools["change_timer"], {"seconds": 300, "direction": "add", "label": "pizza"},
                                "add five minutes to the pizza timer", "en") == []
    assert ungrounded_arguments(tools["change_timer"], {"seconds": 600, "direction": "add"},
                                "add five minutes to the timer", "en") == ["seconds"]
    assert ungrounded_arguments(tools["cancel_timer"], {"label": "pasta"}, "cancel the pizza timer", "en") == ["label"]
    assert ungrounded_arguments(tools["pause_timer"], {"action": "pause", "label": "чая"},
                                "поставь таймер для чая на паузу", "ru") == []
    schemas = [t.parameters for t in tools.values() if "timer" in t.name]
    assert all(s["additionalProperties"] is False for s in schemas)
    assert all(s["properties"]["label"]["x-ground"] == "words" for s in schemas)


# -- several timers, by name, in each language ------------------------------------------------------------------

def test_several_timers_are_said_with_names_and_time_left(hearthd: Components, clock: Clock) -> None:
    assert say(hearthd, "set a pizza timer for 10 minutes") == "The pizza timer is set for 10 minutes."
    assert say(hearthd, "set a tea timer for 1 minute") == "The tea timer is set for 1 minute."
    clock.advance(30)
    # the one to end first is said first
    assert say(hearthd, "how long is left on my timers") == \
        "You have 2 timers: tea, 30 seconds left; pizza, 9 minutes and 30 seconds left."
    assert say(hearthd, "how much time is left on the pizza timer") == \
        "The pizza timer has 9 minutes and 30 seconds left."
    assert say(hearthd, "cancel the pizza timer") == "Cancelled the pizza timer."
    assert say(hearthd, "how much time is left on the timer") == "The tea timer has 30 seconds left."


NAMED = [  # lang, set pizza, set tea, status of all, cancel pizza, pizza's name as stored
    ("ru", "поставь таймер для пиццы на десять минут", "таймер на 1 минуту для чая", "сколько осталось на таймерах",
     "отмени таймер для пиццы", "пиццы"),
    ("hi", "पिज़्ज़ा का टाइमर दस मिनट का लगाओ", "chai wala timer 1 minute ka lagao", "टाइमर में कितना समय बाकी है",
     "पिज़्ज़ा वाला टाइमर रद्द कर दो", "पिज़्ज़ा"),
    ("hi", "pizza wala timer 10 minute ka lagao", "1 minute ka chai timer lagao", "timer par kitna time bacha hai",
     "pizza wala timer band karo", "pizza"),
]


@pytest.mark.parametrize("lang,pizza,tea,status,cancel,name", NAMED)
def test_named_timers_in_russian_and_hindi(hearthd: Components, clock: Clock, lang: str, pizza: str, tea: str,
                                           status: str, cancel: str, name: str) -> None:
    tea_name = "чая" if lang == "ru" else "chai"
    assert say(hearthd, pizza, lang) == phrase(lang, "timer.set_named", label=name, duration=dur(600, lang))
    say(hearthd, tea, lang)
    clock.advance(30)
    items = phrase(lang, "timer.separator").join([
        phrase(lang, "timer.item_named", label=tea_name, duration=dur(30, lang)),
        phrase(lang, "timer.item_named", label=name, duration=dur(570, lang))])
    assert say(hearthd, status, lang) == phrase(lang, "timer.list", timers=say_count(2, "timer", lang), items=items)
    assert say(hearthd, cancel, lang) == phrase(lang, "timer.cancelled_named", label=name)
    assert names(hearthd) == [(tea_name, "pending")]


def test_russian_numbers_agree_in_the_list(hearthd: Components) -> None:
    for text in ("таймер для пиццы на 5 минут", "таймер для чая на 2 минуты", "таймер для яиц на 21 минуту"):
        say(hearthd, text, "ru")
    reply = say(hearthd, "сколько осталось на таймерах", "ru")
    assert reply.startswith("У вас три таймера. Осталось: для чая — две минуты; для пиццы — пять минут; ")
    assert reply.endswith("для яиц — двадцать одна минута.")


# -- add and take off time --------------------------------------------------------------------------------------

CHANGE = [("en", "add five minutes to the timer", "take five minutes off my timer", "take 20 minutes off my timer"),
          ("ru", "добавь пять минут к таймеру", "убавь пять минут с таймера", "сними двадцать минут с таймера"),
          ("hi", "timer mein 5 minute aur badhao", "timer se 5 minute kam karo", "टाइमर से बीस मिनट कम करो")]


@pytest.mark.parametrize("lang,add,subtract,too_much", CHANGE)
def test_time_is_added_and_taken_off(hearthd: Components, clock: Clock, lang: str, add: str, subtract: str,
                                     too_much: str) -> None:
    say(hearthd, "set a timer for 10 minutes")
    assert say(hearthd, add, lang) == phrase(lang, "timer.added", duration=dur(300, lang), left=dur(900, lang))
    clock.advance(60)
    assert say(hearthd, subtract, lang) == phrase(lang, "timer.subtracted", duration=dur(300, lang),
                                                  left=dur(540, lang))
    # more than is left: said, and nothing changed
    assert say(hearthd, too_much, lang) == phrase(lang, "timer.too_short", left=dur(540, lang))
    (timer,) = hearthd.alarms.timers()
    assert timer.at == clock.now + timedelta(seconds=540)


def test_a_named_timer_is_changed_and_the_others_are_not(hearthd: Components) -> None:
    say(hearthd, "set a pizza timer for 10 minutes")
    say(hearthd, "set a tea timer for 3 minutes")
    assert say(hearthd, "add 2 minutes to the tea timer") == \
        "Added 2 minutes to the tea timer. It has 5 minutes left."
    assert [hearthd.alarms.left(t) for t in hearthd.alarms.timers()] == [300, 600]
    # two timers and no name: which one?
    reply = say(hearthd, "add 2 minutes to the timer")
    assert reply == "You have 2 timers: tea, 5 minutes left; pizza, 10 minutes left. Which one do you mean?"


# -- pause and resume ---------------------------------------------------------------------------------------------

PAUSE = [("en", "pause the timer", "resume the timer"), ("ru", "поставь таймер на паузу", "продолжи таймер"),
         ("hi", "timer roko", "timer resume karo"), ("hi", "टाइमर रोक दो", "टाइमर फिर से चालू करो")]


@pytest.mark.parametrize("lang,pause,resume", PAUSE)
def test_a_paused_timer_keeps_its_time_and_does_not_ring(hearthd: Components, clock: Clock, lang: str, pause: str,
                                                          resume: str) -> None:
    say(hearthd, "set a timer for 2 minutes")
    clock.advance(30)
    assert say(hearthd, pause, lang) == phrase(lang, "timer.paused", left=dur(90, lang))
    assert say(hearthd, pause, lang) == phrase(lang, "timer.already_paused", left=dur(90, lang))
    clock.advance(600)
    rang: list[Alarm] = []

    async def ring(alarm: Alarm, count: int) -> None:
        rang.append(alarm)

    asyncio.run(Scheduler(hearthd.alarms, ring).tick())
    assert rang == []  # paused: not due, however long it waits
    assert say(hearthd, resume, lang) == phrase(lang, "timer.resumed", left=dur(90, lang))
    assert say(hearthd, resume, lang) == phrase(lang, "timer.not_paused", left=dur(90, lang))
    clock.advance(90)
    asyncio.run(Scheduler(hearthd.alarms, ring).tick())
    assert [a.kind for a in rang] == ["timer"]


def test_pause_picks_the_running_timer_and_resume_the_paused_one(hearthd: Components) -> None:
    say(hearthd, "set a pizza timer for 10 minutes")
    say(hearthd, "set a tea timer for 3 minutes")
    assert say(hearthd, "pause the tea timer") == "Paused the tea timer with 3 minutes left."
    assert say(hearthd, "pause the timer") == "Paused the pizza timer with 10 minutes left."
    assert say(hearthd, "resume the timer").startswith("You have 2 timers: tea, 3 minutes left, paused; ")
    assert say(hearthd, "resume the pizza timer") == "Resumed the pizza timer: 10 minutes left."
    assert say(hearthd, "resume the timer") == "Resumed the tea timer: 3 minutes left."


def test_the_status_says_which_timers_are_paused(hearthd: Components) -> None:
    say(hearthd, "set a pizza timer for 10 minutes")
    say(hearthd, "pause the timer")
    assert say(hearthd, "how long is left on my timers") == "The pizza timer is paused with 10 minutes left."
    say(hearthd, "set a timer for 1 minute")
    assert say(hearthd, "how long is left on my timers") == \
        "You have 2 timers: 1 minute left; pizza, 10 minutes left, paused."


# -- cancel one or all ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text", [("en", "stop all the timers"), ("ru", "отмени все таймеры"),
                                       ("hi", "saare timer band karo"), ("hi", "सारे टाइमर हटा दो")])
def test_cancelling_all_timers_does_not_ask(hearthd: Components, lang: str, text: str) -> None:
    for minutes in (1, 2, 3, 4, 5):
        say(hearthd, f"set a timer for {minutes} minutes")
    assert say(hearthd, text, lang) == phrase(lang, "timer.cancelled_all", timers=say_count(5, "timer", lang))
    assert hearthd.alarms.timers() == []


def test_cancelling_all_timers_asks_when_the_config_says_so(cfg: Config, clock: Clock) -> None:
    cfg.policy.confirm = ["cancel_timer"]
    c = start(cfg, clock)
    say(c, "set a timer for 5 minutes")
    assert say(c, "stop all the timers").endswith("Please say yes or no.")  # asked, nothing done yet
    assert len(c.alarms.timers()) == 1
    say(c, "yes")
    assert c.alarms.timers() == []


def test_cancelling_a_name_several_timers_share_asks_with_the_count(hearthd: Components) -> None:
    for minutes in (1, 2, 3):
        say(hearthd, f"set a pizza timer for {minutes} minutes")
    say(hearthd, "set a tea timer for 4 minutes")
    question = say(hearthd, "cancel the pizza timer")
    assert "3 timers" in question and len(hearthd.alarms.timers()) == 4  # asked first, nothing cancelled
    assert say(hearthd, "yes") == "Cancelled 3 timers."
    assert names(hearthd) == [("tea", "pending")]


@pytest.mark.parametrize("lang,text", [("en", "cancel the timer"), ("ru", "отмени таймер"), ("hi", "timer band karo")])
def test_cancel_with_two_running_asks_which(hearthd: Components, lang: str, text: str) -> None:
    say(hearthd, "set a pizza timer for 10 minutes")
    say(hearthd, "set a tea timer for 3 minutes")
    reply = say(hearthd, text, lang)
    assert reply.startswith(phrase(lang, "timer.which", timers=say_count(2, "timer", lang), items="").split(":")[0])
    assert len(hearthd.alarms.timers()) == 2


def test_an_unnamed_timer_is_known_by_its_duration(hearthd: Components) -> None:
    say(hearthd, "set a timer for 10 minutes")
    say(hearthd, "set a timer for 5 minutes")
    assert say(hearthd, "cancel the 10 minute timer") == "Timer cancelled."
    assert [t.seconds for t in hearthd.alarms.timers()] == [300]
    assert say(hearthd, "отмени таймер на 5 минут", "ru") == phrase("ru", "timer.cancelled")


def test_cancel_while_a_timer_rings_stops_it(hearthd: Components, clock: Clock) -> None:
    say(hearthd, "set a timer for 1 minute")
    clock.advance(61)

    async def ring(alarm: Alarm, count: int) -> None:
        pass

    asyncio.run(Scheduler(hearthd.alarms, ring).tick())
    assert [a.kind for a in hearthd.alarms.ringing()] == ["timer"]
    assert say(hearthd, "cancel the timer") == phrase("en", "alarm.stopped")
    assert hearthd.alarms.ringing() == []


# -- failure paths ---------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text", [
    ("en", "how long is left on my timers"), ("en", "cancel the timer"), ("en", "add five minutes to the timer"),
    ("en", "pause the timer"), ("en", "stop all the timers"), ("ru", "сколько осталось на таймере"),
    ("ru", "добавь пять минут к таймеру"), ("hi", "timer roko"), ("hi", "timer par kitna time bacha hai")])
def test_no_timer_running_is_said(hearthd: Components, lang: str, text: str) -> None:
    assert say(hearthd, text, lang) == phrase(lang, "timer.none")


@pytest.mark.parametrize("lang,text,name", [
    ("en", "cancel the pasta timer", "pasta"), ("en", "add 2 minutes to the pasta timer", "pasta"),
    ("en", "how much time is left on the pasta timer", "pasta"), ("ru", "отмени таймер для пасты", "пасты"),
    ("hi", "workout wala timer band karo", "workout"), ("hi", "workout wala timer roko", "workout")])
def test_an_unknown_name_is_said_and_nothing_changes(hearthd: Components, lang: str, text: str, name: str) -> None:
    say(hearthd, "set a pizza timer for 10 minutes")
    assert say(hearthd, text, lang) == phrase(lang, "timer.not_found", label=name)
    assert names(hearthd) == [("pizza", "pending")] and hearthd.alarms.left(hearthd.alarms.timers()[0]) == 600


@pytest.mark.parametrize("lang,text,name", [
    ("en", "how much time is left on the pizza timer", "pizza"), ("en", "how much time left on pizza timer", "pizza"),
    ("en", "when will the pasta timer ring", "pasta"), ("ru", "сколько осталось на таймере для пиццы", "пиццы"),
    ("hi", "pizza wale timer mein kitna time bacha hai", "pizza")])
def test_a_timer_that_does_not_exist_is_said_not_to_exist(hearthd: Components, lang: str, text: str,
                                                           name: str) -> None:
    """Asked about a timer that is not there: "There is no pizza timer" while another runs, "No timer is running"
    when none does — never the generic refusal, and nothing started or changed."""
    assert say(hearthd, text, lang) == phrase(lang, "timer.none")
    say(hearthd, "set a tea timer for 3 minutes")
    assert say(hearthd, text, lang) == phrase(lang, "timer.not_found", label=name)
    assert names(hearthd) == [("tea", "pending")]


def test_there_is_no_pizza_timer_in_those_words(hearthd: Components) -> None:
    say(hearthd, "set a tea timer for 3 minutes")
    assert say(hearthd, "how much time left on pizza timer") == "There is no pizza timer."
    assert say(hearthd, "cancel the pizza timer") == "There is no pizza timer."
    assert names(hearthd) == [("tea", "pending")]


@pytest.mark.parametrize("lang,text,seconds,left", [
    ("en", "take 5 minutes from my timer", -300, 300), ("en", "make the timer 2 minutes longer", 120, 720),
    ("ru", "убавь таймер на минуту", -60, 540), ("hi", "टाइमर में पांच मिनट और जोड़ो", 300, 900),
    ("hi", "timer ko 2 minute kam kar do", -120, 480)])
def test_changing_the_timer_says_the_new_time_left_and_starts_none(hearthd: Components, lang: str, text: str,
                                                                   seconds: int, left: int) -> None:
    say(hearthd, "set a timer for 10 minutes")
    key = "timer.added" if seconds > 0 else "timer.subtracted"
    assert say(hearthd, text, lang) == phrase(lang, key, duration=dur(abs(seconds), lang), left=dur(left, lang))
    assert [hearthd.alarms.left(t) for t in hearthd.alarms.timers()] == [left]  # the one timer, changed


# -- kept across a restart; old and corrupt stores -----------------------------------------------------------------

def test_named_and_paused_timers_survive_a_restart(cfg: Config, clock: Clock) -> None:
    c = start(cfg, clock)
    say(c, "set a pizza timer for 10 minutes")
    say(c, "таймер для чая на 3 минуты", "ru")
    say(c, "pause the pizza timer")
    clock.advance(120)
    c.alarms.close()  # the daemon goes away
    again = start(cfg, clock)
    assert [(t.label, t.state, t.lang, again.alarms.left(t)) for t in again.alarms.timers()] == \
        [("чая", "pending", "ru", 60), ("pizza", "paused", "en", 600)]
    assert say(again, "resume the pizza timer") == "Resumed the pizza timer: 10 minutes left."


OLD_SCHEMA = """
CREATE TABLE alarms (
    id INTEGER PRIMARY KEY AUTOINCREMENT, kind TEXT NOT NULL DEFAULT 'alarm', at_utc TEXT NOT NULL,
    zone TEXT NOT NULL, label TEXT NOT NULL DEFAULT '', lang TEXT NOT NULL DEFAULT 'en', seconds INTEGER,
    state TEXT NOT NULL DEFAULT 'pending', created_utc TEXT NOT NULL);
"""


def test_a_store_written_before_named_and_paused_timers_loads(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "alarms.db"
    old = sqlite3.connect(db)
    old.executescript(OLD_SCHEMA)
    at = (clock.now + timedelta(minutes=5)).astimezone(ZoneInfo("UTC")).isoformat()
    old.execute("INSERT INTO alarms (kind, at_utc, zone, seconds, created_utc) VALUES ('timer', ?, 'Europe/Berlin', "
                "300, ?)", (at, at))
    old.commit()
    old.close()
    book = AlarmBook(now=clock, path=db)
    assert book.store.moved_aside is None
    (timer,) = book.timers()
    assert (timer.label, timer.seconds, book.left(timer)) == ("", 300, 300)
    assert asyncio.run(book.pause_timer({"action": "pause"})).phrase == "timer.paused"
    book.close()
    assert AlarmBook(now=clock, path=db).timers()[0].state == "paused"


def test_a_corrupt_store_is_moved_aside_and_timers_work(tmp_path: Path, clock: Clock) -> None:
    db = tmp_path / "alarms.db"
    db.write_bytes(b"not a database at all" * 200)
    book = AlarmBook(now=clock, path=db)
    assert book.store.moved_aside is not None and book.store.moved_aside.exists()
    asyncio.run(book.set_timer({"seconds": 60, "label": "tea"}))
    assert [t.label for t in book.timers()] == ["tea"]


# -- a named timer rings with its name ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text,said", [
    ("en", "set a pizza timer for 1 minute", "Time's up! The pizza timer."),
    ("ru", "таймер для пиццы на 1 минуту", "Время вышло! Таймер для пиццы."),
    ("hi", "pizza wala timer 1 minute ka lagao", "समय पूरा हुआ! pizza का टाइमर।"),
    ("en", "set a timer for 1 minute", "Time's up!"),
])
def test_a_named_timer_rings_with_its_name(hearthd: Components, clock: Clock, lang: str, text: str,
                                           said: str) -> None:
    say(hearthd, text, lang)
    clock.advance(60)
    heard: list[str] = []

    async def ring(alarm: Alarm, count: int) -> None:  # as the daemon's ring says it (daemon/run.py's ring)
        heard.append(phrase(alarm.lang, "timer.done", label=alarm.label).strip())

    asyncio.run(Scheduler(hearthd.alarms, ring).tick())
    assert heard == [said]
    assert [t.label for t in hearthd.alarms.ringing()] != ["The pizza timer."]  # the store keeps the name itself


@pytest.mark.parametrize("lang,text", [("en", "set a timer called 7"), ("en", "set a timer for 7 am"),
                                       ("ru", "поставь таймер для семи"), ("hi", "सात बजे का टाइमर लगा दो")])
def test_a_time_or_a_number_is_never_a_timer_s_name(lang: str, text: str) -> None:
    """The name's wildcard takes what follows "called" or "for": a time or a number there is no name (asking "For
    how long?" of a timer named "7 am" would keep a name nobody gave)."""
    decision = FastPath(ToolRegistry(AlarmBook().tools())).match(text, lang)
    assert decision is None or all("label" not in c.arguments for c in decision.calls), decision


# -- restarted ------------------------------------------------------------------------------------------------------

RESTART = [("en", "restart the timer"), ("en", "could you start my timer over please"), ("en", "reset the timer"),
           ("ru", "перезапусти таймер"), ("ru", "начни таймер сначала"), ("hi", "टाइमर रीस्टार्ट करो"),
           ("hi", "timer ko shuru se chalao"), ("hi", "timer dobara shuru se chalao")]


@pytest.mark.parametrize("lang,text", RESTART)
def test_a_restarted_timer_runs_its_whole_length_again(hearthd: Components, clock: Clock, lang: str,
                                                        text: str) -> None:
    """"Restart the timer" was refused, or read as resuming it; now it runs again from the length it was set for."""
    say(hearthd, "set a timer for 10 minutes")
    clock.advance(4 * 60)
    assert say(hearthd, text, lang) == phrase(lang, "timer.restarted", duration=dur(600, lang))
    assert [hearthd.alarms.left(t) for t in hearthd.alarms.timers()] == [600]
    say(hearthd, "pause the timer")
    clock.advance(60)
    assert say(hearthd, text, lang) == phrase(lang, "timer.restarted", duration=dur(600, lang))
    assert [(t.state, hearthd.alarms.left(t)) for t in hearthd.alarms.timers()] == [("pending", 600)]  # runs again


def test_a_timer_restarted_while_it_rings_starts_over(hearthd: Components, clock: Clock) -> None:
    say(hearthd, "set a tea timer for 3 minutes")
    say(hearthd, "set a timer for 20 minutes")
    clock.advance(181)

    async def ring(alarm: Alarm, count: int) -> None:
        pass

    asyncio.run(Scheduler(hearthd.alarms, ring).tick())
    assert [a.label for a in hearthd.alarms.ringing()] == ["tea"]
    assert say(hearthd, "start the timer over") == "Restarted the tea timer: 3 minutes."  # the one ringing
    assert hearthd.alarms.ringing() == []
    assert sorted(hearthd.alarms.left(t) for t in hearthd.alarms.timers()) == [180, 1019]


def test_restart_asks_which_and_says_when_there_is_none(hearthd: Components) -> None:
    assert say(hearthd, "restart the timer") == phrase("en", "timer.none")
    say(hearthd, "set a pizza timer for 10 minutes")
    say(hearthd, "set a tea timer for 3 minutes")
    assert say(hearthd, "restart the timer").startswith("You have 2 timers: tea, 3 minutes left; ")
    assert say(hearthd, "restart the pasta timer") == phrase("en", "timer.not_found", label="pasta")
    assert say(hearthd, "start the timer again").startswith("You have 2 timers")  # resuming still, not restarting
    assert say(hearthd, "restart the pizza timer") == "Restarted the pizza timer: 10 minutes."
