"""Reminders with what they are for: "remind me in an hour to call mum", "напомни через полчаса проверить духовку",
"पाँच बजे मम्मी को फ़ोन करना याद दिलाना". A reminder is an alarm named for what it is for (the alarm says the name when
it rings); a relative time is the wall clock's. Before, the time was read only when nothing followed it, and a
reminder of what went to the model, which asked "For what time?" of a time already said, or set it without the name."""

from __future__ import annotations

import asyncio
import copy
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from hearthd.agent.fastpath import FastPath, Router
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.registry import ToolRegistry

NOW = datetime(2026, 11, 30, 14, 5)


def no_model() -> Any:
    raise AssertionError("the templates read this; the model is not asked")


@pytest.fixture
def router() -> Router:
    return Router(FastPath(ToolRegistry(AlarmBook().tools())), no_model, wall=lambda: NOW)


REMINDERS = [
    # English: the time before or after what it is for, relative or a clock time, polite or plain, a reminder "set"
    ("en", "remind me in an hour to call mum", "15:05", "call mum"),
    ("en", "in ten minutes remind me to take the pizza out", "14:15", "take the pizza out"),
    ("en", "could you remind me at 6 pm to put the bins out", "18:00", "put the bins out"),
    ("en", "remind me to water the plants at 7 30 pm", "19:30", "water the plants"),
    ("en", "set a reminder for 9 pm to take my tablets", "21:00", "take my tablets"),
    ("en", "hey remind me about the dentist at 4 pm", "16:00", "the dentist"),
    ("en", "remind me in 20 minutes to check on the oven", "14:25", "check on the oven"),
    ("en", "remind me at 5 pm that the plumber is coming", "17:00", "the plumber is coming"),
    # Russian: the time and the what side by side with no word between them, either way round
    ("ru", "напомни через полчаса проверить духовку", "14:35", "проверить духовку"),
    ("ru", "напомни мне в семь вечера позвонить маме", "19:00", "позвонить маме"),
    ("ru", "напомни позвонить бабушке в шесть вечера", "18:00", "позвонить бабушке"),
    ("ru", "в восемь вечера напомни вынести мусор", "20:00", "вынести мусор"),
    ("ru", "поставь напоминание на девять вечера принять таблетки", "21:00", "принять таблетки"),
    ("ru", "можешь напомнить через час забрать посылку", "15:05", "забрать посылку"),
    # Hindi, in Devanagari and romanised
    ("hi", "शाम पाँच बजे मम्मी को फ़ोन करना याद दिलाना", "17:00", "मम्मी को फ़ोन करना"),
    ("hi", "आधे घंटे बाद दूध देखना याद दिला देना", "14:35", "दूध देखना"),
    ("hi", "रात आठ बजे याद दिलाना कि बिजली का बिल भरना है", "20:00", "बिजली का बिल भरना है"),
    ("hi", "shaam 6 baje dawai lena yaad dila dena", "18:00", "dawai lena"),
    # said as not forgetting, a nudge, or the reminding said before the time and the what
    ("en", "don't let me forget to feed the cat at 6 pm", "18:00", "feed the cat"),
    ("en", "at 3 pm make sure I remember to ring the garage", "15:00", "ring the garage"),
    ("en", "ping me at 5 pm to check the oven", "17:00", "check the oven"),
    ("ru", "не дай мне забыть полить цветы в семь вечера", "19:00", "полить цветы"),
    ("hi", "yaad dila dena ki raat 8 baje gas band karni hai", "20:00", "gas band karni hai"),
    ("hi", "याद दिलाना कि रात नौ बजे दवाई लेनी है", "21:00", "दवाई लेनी है"),
]


@pytest.mark.parametrize("lang,text,time,label", REMINDERS)
def test_a_reminder_of_what_is_an_alarm_named_for_it(router: Router, lang: str, text: str, time: str,
                                                    label: str) -> None:
    decision = router.decide(text, lang)
    assert decision.kind == "call" and decision.source == "fastpath", (text, decision)
    assert [(c.name, c.arguments.get("time"), c.arguments.get("label")) for c in decision.calls] == \
        [("set_alarm", time, label)]


@pytest.mark.parametrize("lang,text,time", [
    ("en", "remind me in 20 minutes", "14:25"), ("en", "set a reminder for 7 pm", "19:00"),
    ("ru", "напомни через 20 минут", "14:25"), ("ru", "напомни мне в пять тридцать вечера", "17:30"),
    ("hi", "20 मिनट बाद याद दिलाना", "14:25"), ("hi", "एक घंटे में याद दिला देना", "15:05"),
    ("hi", "aadhe ghante baad yaad dila dena", "14:35"),
])
def test_a_reminder_with_nothing_said_of_what_is_an_alarm_with_no_name(router: Router, lang: str, text: str,
                                                                       time: str) -> None:
    """The time's own words ("बजे" of "14:25 बजे") are never taken for what the reminder is for."""
    decision = router.decide(text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == [("set_alarm", {"time": time})], decision


def test_a_reminder_of_what_with_no_time_asks_for_the_time_and_keeps_the_name(router: Router) -> None:
    asked = router.decide("remind me to call mum", "en")
    assert asked.kind == "clarify" and asked.missing == "time"
    assert asked.calls[0].arguments == {"label": "call mum"}
    answered = router.decide("at 6 pm", "en")
    assert [(c.name, c.arguments) for c in answered.calls] == [("set_alarm", {"label": "call mum", "time": "18:00"})]


@pytest.mark.parametrize("lang,text,label", [("ru", "напомни купить хлеб", "купить хлеб"),
                                             ("ru", "напомни мне завтра забрать посылку", "забрать посылку"),
                                             ("en", "don't let me forget my passport", "my passport")])
def test_a_reminder_said_without_a_time_in_any_form_asks_for_it(router: Router, lang: str, text: str,
                                                                 label: str) -> None:
    asked = router.decide(text, lang)
    assert (asked.kind, asked.missing) == ("clarify", "time"), asked
    assert asked.calls[0].name == "set_alarm" and asked.calls[0].arguments.get("label") == label


@pytest.mark.parametrize("lang,text", [("ru", "напомни, сколько стоит молоко"), ("ru", "напомни мне который час"),
                                       ("en", "don't let me forget what day it is")])
def test_a_fact_asked_for_is_never_a_reminder_named_for_it(lang: str, text: str) -> None:
    decision = FastPath(ToolRegistry(AlarmBook().tools())).match(text, lang)
    assert decision is None or "label" not in decision.calls[0].arguments, decision


@pytest.mark.parametrize("lang,text,tool", [("en", "remind me what day it is", "get_time"),
                                            ("en", "remind me what date it is today", "get_time")])
def test_remind_me_of_a_fact_is_still_a_question(router: Router, lang: str, text: str, tool: str) -> None:
    def clock_router() -> Router:
        from hearthd.tools.clock import Clock

        registry = ToolRegistry([*AlarmBook().tools(), *Clock().tools()])
        return Router(FastPath(registry), no_model, wall=lambda: NOW)

    decision = clock_router().decide(text, lang)
    assert [c.name for c in decision.calls] == [tool]


def test_what_a_reminder_is_for_never_makes_it_a_question(router: Router) -> None:
    """"проверить" (check) asks in Russian wherever it stands ("проверь, закрыта ли дверь"); inside what a reminder is
    for it asks nothing: the check reads the words around the name, not the name."""
    from hearthd.agent.agent import Decision
    from hearthd.agent.checks import review
    from hearthd.agent.parsing import ToolCall

    decision = router.decide("напомни через полчаса проверить духовку", "ru")
    assert decision.kind == "call", decision.reason
    # the same word outside the name still asks: an alarm "set" for it is refused, not set
    registry = ToolRegistry(AlarmBook().tools())
    for text, label in [("проверь, стоит ли будильник на семь", ""), ("проверь будильник на семь утра", "утра")]:
        made = Decision("call", calls=[ToolCall("set_alarm", {"time": "07:00", **({"label": label} if label else {})})],
                        source="model")
        assert review(made, text, "ru", registry).say == "check.question", text


@pytest.mark.parametrize("lang,text", [("en", "remind me at 6 pm to call"), ("ru", "напомни в шесть вечера позвонить"),
                                       ("en", "remind me in an hour to check the oven")])
def test_a_reminder_whose_name_is_said_last_waits_for_the_whole_silence(router: Router, lang: str,
                                                                        text: str) -> None:
    """"remind me at 6 pm to call … mum": free words said last may go on after a pause, so the utterance does not end
    on the short silence of a whole command; one that ends on its time does not wait for a name."""
    decision = router.decide(text, lang)
    assert decision.kind == "call" and not router.complete(text, lang, decision)
    done = router.decide("remind me to call mum at 6 pm", "en")
    assert done.kind == "call" and router.complete("remind me to call mum at 6 pm", "en", done)


def test_the_reminder_is_kept_and_said_with_its_name(base_config: Config, tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    """Through a whole turn: the alarm is kept with its name, and the reply says both."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = cfg.mqtt.enabled = False
    c = Components(cfg)
    trace = Trace()
    result = asyncio.run(Pipeline(c, trace).run_text("remind me at 6 pm to take the bins out", language="en"))
    assert result.decision is not None and result.decision.calls[0].name == "set_alarm"
    (kept,) = c.alarms.pending()
    assert kept.label == "take the bins out" and kept.hhmm == "18:00"
    (reply,) = trace.of_type(EventType.REPLY)
    assert "take the bins out" in reply.text and "18:00" in reply.text.replace("6:00 PM", "18:00")
