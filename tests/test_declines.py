"""Specific declines (issue 16, item 6): the weather, the news, shopping, messages, calls, chat and general knowledge
are declined with the reason, in en/ru/hi, by code before a model turn when the request is that alone, and after
the model's abstention otherwise; requests that name something hearthd does still act. No model loads."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path

import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.declines import DeclineFirst, decline_kind, decline_phrase
from hearthd.agent.fastpath import FastPath, Router, as_meant
from hearthd.agent.parsing import ToolCall
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import Trace
from hearthd.locale import phrase
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.clock import Clock
from hearthd.tools.registry import ToolRegistry


class StandIn:
    """The model's part: a fixed decision per text, abstaining otherwise; records what it was asked."""

    def __init__(self, registry: ToolRegistry, answers: dict[str, list[ToolCall]] | None = None) -> None:
        self.registry = registry
        self.answers = answers or {}
        self.asked: list[str] = []

    def decide(self, text: str, lang: str, now: object = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append(text if only is None else f"{only}: {text}")
        calls = self.answers.get(text)
        if calls is None:
            return Decision("abstain", reason="no tool fits", source="model")
        return Decision("call", calls=[ToolCall(c.name, dict(c.arguments)) for c in calls], source="model")


OUT_OF_SCOPE = [
    ("en", "what's the weather", "weather"), ("en", "hey, what's the weather like tomorrow?", "weather"),
    ("en", "is it going to rain today", "weather"), ("en", "do i need an umbrella", "weather"),
    ("en", "read me the news", "news"), ("en", "what's in the news today", "news"), ("en", "headlines please", "news"),
    ("en", "order a pizza", "shopping"), ("en", "buy some milk", "shopping"),
    ("en", "add eggs to my shopping list", "shopping"), ("en", "send mom 500 rupees", "shopping"),
    ("en", "send a message to john", "messages"), ("en", "check my email", "messages"),
    ("en", "text my wife i'm late", "messages"), ("en", "call mom", "calls"),
    ("en", "phone my brother please", "calls"), ("en", "tell me a joke", "chat"), ("en", "how are you", "chat"),
    ("en", "who is the president of france", "knowledge"),
    ("en", "what is the capital of japan", "knowledge"), ("en", "how tall is mount everest", "knowledge"),
    ("ru", "какая погода", "weather"), ("ru", "какая сегодня погода?", "weather"), ("ru", "будет ли дождь", "weather"),
    ("ru", "а что по погоде на завтра", "weather"), ("ru", "расскажи новости", "news"),
    ("ru", "какие новости", "news"), ("ru", "закажи пиццу", "shopping"), ("ru", "купи молоко", "shopping"),
    ("ru", "переведи маме 500 рублей", "shopping"), ("ru", "отправь сообщение маме", "messages"),
    ("ru", "проверь почту", "messages"), ("ru", "позвони маме", "calls"), ("ru", "набери брата", "calls"),
    ("ru", "расскажи анекдот", "chat"), ("ru", "как дела", "chat"), ("ru", "кто такой пушкин", "knowledge"),
    ("ru", "какая столица франции", "knowledge"), ("ru", "что такое фотосинтез", "knowledge"),
    ("hi", "आज मौसम कैसा है", "weather"), ("hi", "aaj mausam kaisa hai", "weather"),
    ("hi", "kya aaj barish hogi", "weather"), ("hi", "aaj weather kaisa rahega", "weather"),
    ("hi", "आज की ख़बरें सुनाओ", "news"), ("hi", "aaj ki news batao", "news"), ("hi", "ताज़ा समाचार सुनाओ", "news"),
    ("hi", "दूध ऑर्डर कर दो", "shopping"), ("hi", "mummy ko 500 rupaye bhej do", "shopping"),
    ("hi", "मम्मी को 500 रुपये भेज दो", "shopping"), ("hi", "मम्मी को मैसेज भेजो", "messages"),
    ("hi", "papa ko message bhejo", "messages"), ("hi", "papa ko call karo", "calls"),
    ("hi", "पापा को फ़ोन लगाओ", "calls"),
    ("hi", "ek chutkula sunao", "chat"), ("hi", "कैसे हो", "chat"), ("hi", "भारत की राजधानी क्या है", "knowledge"),
    ("hi", "shahrukh khan kaun hai", "knowledge"),
    # said to hearthd rather than asked of it: answered in kind, not "Sorry, I can't help with that"
    ("en", "thank you", "thanks"), ("en", "thanks a lot", "thanks"), ("ru", "спасибо большое", "thanks"),
    ("hi", "धन्यवाद", "thanks"), ("hi", "shukriya", "thanks"), ("en", "good night", "goodnight"),
    ("en", "I'm off to bed", "goodnight"), ("ru", "я спать", "goodnight"), ("hi", "मैं सोने जा रहा हूँ", "goodnight"),
    ("en", "good morning", "hello"), ("en", "I'm home", "hello"), ("ru", "привет", "hello"), ("ru", "я дома", "hello"),
    ("hi", "नमस्ते", "hello"),
]


@pytest.mark.parametrize("lang,text,kind", OUT_OF_SCOPE)
def test_the_kind_is_read_from_the_words(lang: str, text: str, kind: str) -> None:
    assert decline_kind(text, lang) == kind
    assert decline_phrase(text, lang) == f"decline.{kind}"


IN_SCOPE = [  # words of those kinds, inside something hearthd does: no kind, so no specific decline
    ("en", "set an alarm for 7 to watch the news"), ("en", "remind me to call mom"),
    ("en", "wake me up at 6 for the weather report"), ("en", "play the news"), ("en", "what's the temperature outside"),
    ("en", "turn on the light and what's the weather"), ("en", "set an alarm for 7 called shopping"),
    ("ru", "поставь будильник на 7 с названием новости"), ("ru", "разбуди меня в 7 посмотреть новости"),
    ("ru", "включи новости"), ("ru", "какая температура на улице"),
    ("hi", "7 baje news dekhne ke liye alarm laga do"), ("hi", "सात बजे का अलार्म लगाओ ख़बरें देखने के लिए"),
    ("hi", "mummy ko call karne ke liye yaad dila dena"),
]


@pytest.mark.parametrize("lang,text", IN_SCOPE)
def test_words_of_a_kind_inside_an_in_scope_request_are_no_kind(lang: str, text: str) -> None:
    assert decline_kind(text, lang) == ""


def router(answers: dict[str, list[ToolCall]] | None = None) -> tuple[Router, StandIn]:
    registry = ToolRegistry([*AlarmBook().tools(), *Clock().tools()])
    model = StandIn(registry, answers)
    first = DeclineFirst(lambda: model)  # type: ignore[arg-type, return-value]
    return Router(FastPath(registry), lambda: first), model  # type: ignore[arg-type, return-value]


@pytest.mark.parametrize("lang,text,kind", OUT_OF_SCOPE)
def test_a_request_of_such_a_kind_costs_no_model_turn(lang: str, text: str, kind: str) -> None:
    r, model = router()
    decision = r.decide(text, lang)
    assert (decision.kind, decision.say, decision.calls) == ("abstain", f"decline.{kind}", [])
    assert model.asked == []


@pytest.mark.parametrize("lang,text,time", [("en", "set an alarm for 7 to watch the news", "07:00"),
                                            ("en", "wake me up at 6 for the weather report", "06:00"),
                                            ("ru", "поставь будильник на 7 с названием новости", "07:00"),
                                            ("hi", "7 baje news dekhne ke liye alarm laga do", "07:00"),
                                            ("en", "remind me at 8 to call mom", "08:00")])
def test_in_scope_requests_mentioning_those_words_still_act(lang: str, text: str, time: str) -> None:
    r, model = router()
    decision = r.decide(text, lang)
    assert decision.kind == "call" and [c.name for c in decision.calls] == ["set_alarm"]
    assert decision.calls[0].arguments["time"] == time


@pytest.mark.parametrize("lang,text,call", [
    ("ru", "разбуди меня в 7 посмотреть новости", ToolCall("set_alarm", {"time": "07:00"})),
    ("en", "I've got to call mom at 8, remind me", ToolCall("set_alarm", {"time": "08:00", "label": "call mom"})),
    ("hi", "mummy ko call karne ke liye 8 baje yaad dila dena", ToolCall("set_alarm", {"time": "08:00"})),
])
def test_what_the_templates_do_not_read_still_goes_to_the_model(lang: str, text: str, call: ToolCall) -> None:
    meant = as_meant(text, lang)  # ("… yaad dila dena", Hindi's "-ना" request, is asked as "… yaad dila do")
    r, model = router({meant: [call]})
    decision = r.decide(text, lang)
    assert model.asked == [meant]
    assert decision.kind == "call" and decision.calls[0].name == "set_alarm"


def test_several_requests_and_follow_up_answers_go_to_the_model() -> None:
    r, model = router()
    r.decide("what's the weather and tell me a joke", "en")  # two requests: the model reads the whole
    assert "what's the weather and tell me a joke" in model.asked
    first = DeclineFirst(lambda: model)  # type: ignore[arg-type, return-value]
    first.decide("the weather", "en", only="set_alarm")  # an answer to "for what time?" is never declined here
    assert model.asked[-1] == "set_alarm: the weather"


@pytest.fixture
def hearthd(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Components, StandIn]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    c = Components(cfg)
    model = StandIn(c.tools)
    monkeypatch.setattr(c, "agent", lambda: model)
    return c, model


def say(c: Components, text: str, lang: str) -> str:
    return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply


@pytest.mark.parametrize("lang,text,kind", [("en", "what's the weather", "weather"), ("ru", "позвони маме", "calls"),
                                            ("hi", "aaj ki news batao", "news"), ("hi", "ek chutkula sunao", "chat"),
                                            ("ru", "закажи пиццу", "shopping"), ("en", "check my email", "messages")])
def test_the_pipeline_says_the_specific_decline(hearthd: tuple[Components, StandIn], lang: str, text: str,
                                                kind: str) -> None:
    c, model = hearthd
    assert say(c, text, lang) == phrase(lang, f"decline.{kind}")
    assert model.asked == []


@pytest.mark.parametrize("lang,text,kind", [("en", "what's the weather and tell me a joke", "weather"),
                                            ("ru", "какая погода и какие новости", "weather"),
                                            ("hi", "aaj mausam kaisa hai aur news kya hai", "weather")])
def test_after_the_model_abstains_the_decline_is_specific_too(hearthd: tuple[Components, StandIn], lang: str,
                                                             text: str, kind: str) -> None:
    c, model = hearthd
    assert say(c, text, lang) == phrase(lang, f"decline.{kind}")
    assert text in model.asked  # the model was asked (several requests), and abstained


def test_the_generic_decline_stays_for_everything_else(hearthd: tuple[Components, StandIn]) -> None:
    c, _ = hearthd
    assert say(c, "frobnicate the zorblax", "en") == phrase("en", "agent.cannot_help")
    assert say(c, "сделай что-нибудь интересное", "ru") == phrase("ru", "agent.cannot_help")


def test_a_decline_never_stops_an_action(hearthd: tuple[Components, StandIn]) -> None:
    c, model = hearthd
    assert say(c, "set an alarm for 7 to watch the news", "en") == phrase("en", "alarm.set", time="7:00")
    assert [a.hhmm for a in c.alarms.pending()] == ["07:00"]
    assert say(c, "7 baje news dekhne ke liye alarm laga do", "hi") == phrase("hi", "alarm.set", time="7:00")
    assert model.asked == []


# -- a home with no smart-home devices (the shipped default: no MQTT broker configured) ------------------------------

@pytest.mark.parametrize("lang,text,say", [
    ("en", "could you set the heating to 21", "home.no_thermostat_here"),
    ("en", "it's way too dark in here", "home.no_lights_here"),
    ("en", "make it brighter please", "home.no_lights_here"),
    ("en", "shut the blinds", "home.no_covers_here"),
    ("en", "lock the front door", "home.no_locks_here"),
    ("ru", "сделай потеплее", "home.no_thermostat_here"),
    ("ru", "включи свет на кухне", "home.no_devices_here"),
    ("ru", "приглуши свет", "home.no_lights_here"),
])
def test_a_home_request_where_no_device_is_set_up_is_told_so_not_guessed(lang: str, text: str, say: str) -> None:
    """The templates know these words are about the home; with no smart-home device set up, the model was left to
    reach for another tool ("set the heating to 21" became the volume at 21 %). Now hearthd says what is missing,
    in the speaker's language, and the model is not asked."""
    registry = ToolRegistry([*AlarmBook().tools(), *Clock().tools()])
    stand_in = StandIn(registry)
    decision = Router(FastPath(registry), lambda: stand_in).decide(text, lang)
    assert (decision.kind, decision.say) == ("abstain", say), decision
    assert stand_in.asked == [] and phrase(lang, say)


def test_brighter_where_a_screen_can_be_is_not_said_to_lack_lights() -> None:
    """On a desktop with no lights set up, "make it brighter" may mean the screen: not declined as lights."""
    from hearthd.tools.registry import Tool, ToolResult

    async def brightness(args: dict[str, object]) -> ToolResult:
        return ToolResult(True, {}, "power.brightness")

    screen = Tool("screen_brightness", "Set the screen's brightness in percent.",
                  {"type": "object", "properties": {"percent": {"type": "integer", "minimum": 0, "maximum": 100}},
                   "required": ["percent"], "additionalProperties": False}, brightness, family="power")
    registry = ToolRegistry([*AlarmBook().tools(), screen])
    stand_in = StandIn(registry)
    decision = Router(FastPath(registry), lambda: stand_in).decide("make it brighter please", "en")
    assert decision.say != "home.no_lights_here" and stand_in.asked
    registry = ToolRegistry(AlarmBook().tools())  # and where there is none, the lights are what is missing
    assert Router(FastPath(registry), lambda: StandIn(registry)).decide("make it brighter please",
                                                                        "en").say == "home.no_lights_here"


@pytest.mark.parametrize("lang,text,say", [
    ("en", "turn off the lights", "home.no_lights_here"),
    ("en", "make it brighter in here", "home.no_lights_here"),
    ("ru", "включи свет", "home.no_lights_here"),
    ("ru", "сделай потемнее", "home.no_lights_here"),
    ("hi", "लाइट बंद करो", "home.no_lights_here"),
    ("en", "lock the door", "home.no_locks_here"),
])
def test_a_home_request_where_the_link_knows_no_device_is_told_so(base_config: Config, tmp_path: Path,
                                                                  monkeypatch: pytest.MonkeyPatch, lang: str,
                                                                  text: str, say: str) -> None:
    """The shipped default: MQTT on, nothing discovered (the smart-home tools declared, none offered). "Turn off the
    lights" went to the model, which reached for power off or the volume and answered with a vague refusal."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    assert base_config.mqtt.enabled
    c = Components(base_config)
    monkeypatch.setattr(c, "agent", lambda: pytest.fail("the model was asked"))
    decision = c.router().decide(text, lang)
    assert (decision.kind, decision.say) == ("abstain", say), decision
