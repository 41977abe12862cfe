"""Code checks on every decision (issue 15, items 3, 5 and 6): the opposite action, a question that would change
something, an alarm time from nothing. Each case drives the Router (fast path, then "the model") the way the
daemon does. Where the point is what code does with a wrong proposal, the model is a stand-in that proposes what
a small model was seen to propose; the last tests run the real default model on the same patterns."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.fastpath import FastPath, Router
from hearthd.agent.parsing import ToolCall
from hearthd.evaluation.evaluate import load_catalogue
from hearthd.locale import phrase
from hearthd.tools.registry import Tool, ToolRegistry

SUITES = Path(__file__).parent / "data" / "commands"
COVERS = ["bedroom blinds", "living room curtains"]


async def _never(args: dict[str, Any]) -> Any:
    raise AssertionError("scored, never run")


def _catalogue() -> ToolRegistry:
    """The suites' catalogue and the smart-home tools the hostile run met (thermostat, covers, a state question)."""
    registry = load_catalogue(SUITES / "tools.yaml")
    cover = {"type": "object", "properties": {"device": {"type": "string", "enum": COVERS, "x-ground": "name"}},
             "required": ["device"], "additionalProperties": False}
    for name, params in [
        ("set_temperature", {"type": "object", "properties": {"temperature": {"type": "number", "minimum": 5,
                                                                              "maximum": 35}},
                             "required": ["temperature"], "additionalProperties": False}),
        ("sensor_value", {"type": "object", "properties": {"quantity": {"type": "string",
                                                                        "enum": ["temperature", "humidity"]}},
                          "required": ["quantity"], "additionalProperties": False}),
        ("device_state", {"type": "object", "properties": {"device": {"type": "string"}}, "required": ["device"],
                          "additionalProperties": False}),
        ("open_cover", cover), ("close_cover", cover),
    ]:
        sides = {"open_cover": ("open", "close"), "close_cover": ("close", "open")}.get(name)
        registry.add(Tool(name, name.replace("_", " "), params, _never, family="test", sides=sides,
                          read_only=name in ("sensor_value", "device_state")))
    return registry


REGISTRY = _catalogue()


class Proposes:
    """Stands in for the model: proposes one call, as a small model was seen to (or asks for its time)."""

    def __init__(self, name: str, arguments: dict[str, Any] | None = None, missing: str = "") -> None:
        self.registry = REGISTRY
        self.call = ToolCall(name, arguments or {})
        self.missing = missing
        self.asked: list[str] = []

    def decide(self, text: str, lang: str, now: Any = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append(text)
        if self.missing:
            return Decision("clarify", calls=[self.call], missing=self.missing, source="model")
        return Decision("call", calls=[ToolCall(self.call.name, dict(self.call.arguments))], source="model",
                        name_probs={self.call.name: 0.9})


def _router(model: Proposes) -> Router:
    return Router(FastPath(REGISTRY), lambda: model)  # type: ignore[arg-type, return-value]


def _outcome(text: str, lang: str, name: str, arguments: dict[str, Any] | None = None) -> Decision:
    return _router(Proposes(name, arguments)).decide(text, lang)


def _calls(decision: Decision) -> list[tuple[str, dict[str, Any]]]:
    return [(c.name, c.arguments) for c in decision.calls] if decision.kind == "call" else []


def _refused(decision: Decision, lang: str, key: str) -> None:
    """Nothing is done, and the user hears why, in their language."""
    assert _calls(decision) == [] and decision.kind == "abstain", (decision.kind, decision.calls, decision.reason)
    assert decision.say == key, (decision.say, decision.reason)
    assert phrase(lang, key)


# -- item 3: the opposite action ------------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text,proposed", [
    ("hi", "मेन गेट वाला front door खोल देना", ("lock_door", {"door": "front door"})),
    ("hi", "front door ko khol dena zara", ("lock_door", {"door": "front door"})),
    ("hi", "सामने वाला दरवाज़ा ज़रा खोल दीजिए", ("lock_door", {"door": "front door"})),
    ("hi", "back door ka tala khol do yaar", ("lock_door", {"door": "back door"})),
    ("hi", "kitchen wali light ko band kar dena bhai", ("turn_on", {"device": "kitchen light"})),
    ("hi", "पंखे को बंद कर देना ज़रा", ("turn_on", {"device": "fan"})),
    ("ru", "будь добр, открой входную", ("lock_door", {"door": "front door"})),
    ("ru", "front door открой", ("lock_door", {"door": "front door"})),
    ("ru", "выключай-ка обогреватель", ("turn_on", {"device": "heater"})),
    ("ru", "опусти шторы в спальне", ("open_cover", {"device": "bedroom blinds"})),
    ("en", "open up the back door for me", ("lock_door", {"door": "back door"})),
    ("en", "hallway light, kill it", ("turn_on", {"device": "hallway light"})),
    ("en", "uh, shut the bedroom blinds", ("open_cover", {"device": "bedroom blinds"})),
    ("en", "the telly, switch it off", ("turn_on", {"device": "tv"})),
    # paired values of one argument: louder/quieter, play/pause
    ("en", "make it a bit quieter now", ("change_volume", {"direction": "up"})),
    ("en", "the music, hold on a sec", ("media", {"action": "play"})),
    ("ru", "музыку на паузу поставь-ка", ("media", {"action": "play"})),
    ("ru", "тише сделай звук", ("change_volume", {"direction": "up"})),
    ("hi", "gaana thoda rok do", ("media", {"action": "play"})),
    ("hi", "awaaz thodi kam kar dena bhai", ("change_volume", {"direction": "up"})),
])
def test_a_verb_of_the_opposite_action_blocks_the_call(lang: str, text: str,
                                                       proposed: tuple[str, dict[str, Any]]) -> None:
    # the model's proposal itself (the templates read some of these sentences right, and would never ask it)
    model = Proposes(*proposed)
    _refused(Router(None, lambda: model).decide(text, lang), lang, "check.opposite")  # type: ignore[arg-type, return-value]


@pytest.mark.parametrize("lang,text,proposed", [
    ("hi", "कल सुबह आठ बजे का अलार्म रद्द कर दो", ("set_alarm", {"time": "08:00", "day": "tomorrow"})),
    ("hi", "saat baje wala alarm hata do", ("set_alarm", {"time": "07:00"})),
    ("ru", "отложи будильник на десять минут", ("set_alarm", {"time": "10:00"})),
    ("ru", "убери будильник на шесть утра", ("set_alarm", {"time": "06:00"})),
    ("en", "get rid of my 6:45 alarm", ("set_alarm", {"time": "06:45"})),
    ("en", "I don't need a timer for ten minutes any more", ("set_timer", {"seconds": 600})),
    ("en", "set a new alarm for 7", ("cancel_all_alarms", {})),
    ("ru", "поставь будильник на семь", ("cancel_alarm", {"time": "07:00"})),
])
def test_taking_an_alarm_away_never_sets_one_nor_setting_one_takes_them_away(
        lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    model = Proposes(*proposed)
    _refused(Router(None, lambda: model).decide(text, lang), lang, "check.opposite")  # type: ignore[arg-type, return-value]


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "set an alarm for 7 to remind me to cancel the booking", ("set_alarm", {"time": "07:00"})),
    ("ru", "поставь будильник на семь и выключи свет", ("set_alarm", {"time": "07:00"})),
    ("hi", "7 baje ka alarm laga do", ("set_alarm", {"time": "07:00"})),
])
def test_an_alarm_set_with_other_words_around_it_is_still_set(lang: str, text: str,
                                                              proposed: tuple[str, dict[str, Any]]) -> None:
    model = Proposes(*proposed)
    decision = Router(None, lambda: model).decide(text, lang)  # type: ignore[arg-type, return-value]
    assert decision.say != "check.opposite", decision.reason


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "the front door, please", ("lock_door", {"door": "front door"})),  # no verb: nothing disagrees
    ("en", "lock up the back door", ("lock_door", {"door": "back door"})),
    ("ru", "входную дверь на замок", ("lock_door", {"door": "front door"})),
    ("ru", "обогреватель", ("turn_on", {"device": "heater"})),
    ("hi", "पीछे वाले दरवाज़े पर ताला लगा दो", ("lock_door", {"door": "back door"})),
    ("hi", "light on karo aur band mat karna", ("turn_on", {"device": "kitchen light"})),  # both said
])
def test_an_agreeing_or_missing_verb_still_acts(lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    assert _calls(_outcome(text, lang, *proposed)) == [proposed]


@pytest.mark.parametrize("lang,text", [("hi", "front door खोलो"), ("ru", "открой входную дверь"),
                                       ("en", "unlock the front door")])
def test_the_fast_path_unlock_is_not_blocked(lang: str, text: str) -> None:
    decision = _outcome(text, lang, "lock_door", {"door": "front door"})
    assert _calls(decision) == [("unlock_door", {"door": "front door"})] and decision.source == "fastpath"


# -- item 5: a question never acts ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text,proposed", [
    ("ru", "какая температура задана на термостате?", ("set_temperature", {"temperature": 25})),
    # (the templates answer "на сколько градусов стоит термостат" with its state, tests/test_said_at_home.py)
    ("ru", "а сколько градусов сейчас показывает термостат", ("set_temperature", {"temperature": 20})),
    ("ru", "а на кухне свет до сих пор включён?", ("turn_on", {"device": "kitchen light"})),
    ("ru", "скажи, входная дверь заперта", ("lock_door", {"door": "front door"})),
    # (the templates answer "what's the thermostat set to" with its state; this one they do not)
    ("en", "what did somebody set the thermostat to", ("set_temperature", {"temperature": 25})),
    ("en", "hey, are the blinds in the bedroom up?", ("open_cover", {"device": "bedroom blinds"})),
    ("en", "is the light in the kitchen on", ("turn_on", {"device": "kitchen light"})),
    ("en", "can you tell me whether the front door is locked", ("lock_door", {"door": "front door"})),
    ("en", "the heater's on?", ("turn_off", {"device": "heater"})),
    ("hi", "थर्मोस्टेट पर कितना तापमान सेट है?", ("set_temperature", {"temperature": 25})),
    ("hi", "kitchen ki light jali hui hai kya", ("turn_on", {"device": "kitchen light"})),
    ("hi", "ज़रा बताओ आगे का दरवाज़ा लॉक है या नहीं", ("lock_door", {"door": "front door"})),
    # (the templates answer "अलार्म कितने बजे का है?" with the alarms, tests/test_said_at_home.py; this one they do not)
    ("hi", "अलार्म किस वक़्त का है?", ("set_alarm", {"time": "07:00"})),
])
def test_a_question_does_not_change_anything(lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    _refused(_outcome(text, lang, *proposed), lang, "check.question")


def test_a_question_does_not_ask_for_a_time_to_set() -> None:
    model = Proposes("set_alarm", missing="time")
    decision = Router(None, lambda: model).decide("when is my alarm?", "en")  # type: ignore[arg-type, return-value]
    _refused(decision, "en", "check.question")
    # with the templates, the question is answered: the alarms are listed
    assert _calls(_router(Proposes("set_alarm", missing="time")).decide("when is my alarm?", "en")) == [
        ("list_alarms", {})]


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "can you turn on the kitchen light?", ("turn_on", {"device": "kitchen light"})),
    ("en", "could you set an alarm for 7?", ("set_alarm", {"time": "07:00"})),
    ("en", "would you mind switching the fan off?", ("turn_off", {"device": "fan"})),
    ("en", "how about some light in the kitchen?", ("turn_on", {"device": "kitchen light"})),
    ("ru", "можешь включить свет на кухне?", ("turn_on", {"device": "kitchen light"})),
    ("ru", "не могли бы вы поставить будильник на семь?", ("set_alarm", {"time": "07:00"})),
    ("ru", "включишь свет в спальне?", ("turn_on", {"device": "bedroom light"})),
    ("hi", "क्या आप किचन की लाइट जला सकते हैं?", ("turn_on", {"device": "kitchen light"})),
    ("hi", "kya aap 7 baje ka alarm laga sakte hain?", ("set_alarm", {"time": "07:00"})),
    ("hi", "पंखा बंद कर दोगे?", ("turn_off", {"device": "fan"})),
])
def test_a_polite_request_put_as_a_question_still_acts(lang: str, text: str,
                                                       proposed: tuple[str, dict[str, Any]]) -> None:
    assert _calls(_outcome(text, lang, *proposed)) == [proposed]


@pytest.mark.parametrize("lang,text,proposed", [
    ("ru", "какая температура в спальне?", ("sensor_value", {"quantity": "temperature", "area": "bedroom"})),
    ("en", "is the front door locked?", ("device_state", {"device": "front door"})),
    ("hi", "कितने बजे के अलार्म लगे हैं?", ("list_alarms", {})),
])
def test_a_question_is_answered_from_state(lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    assert _calls(_outcome(text, lang, *proposed)) == [proposed]


# -- item 6: times from words only ----------------------------------------------------------------------------

@pytest.mark.parametrize("lang,text,key", [
    # the templates read the rest ("सामने का दरवाज़ा खोलो") as a door to unlock: asked for later, and said so
    ("hi", "in 5 minutes सामने का दरवाज़ा खोलो", "check.later"),
    ("en", "in 5 minutes open the front door", "check.time_without_alarm"),
    ("ru", "через пять минут открой входную дверь", "check.later"),
    ("en", "7:30", "check.no_request"),
    ("ru", "7.30", "check.no_request"),
    ("hi", "७:३०", "check.no_request"),
    ("en", "seven thirty", "check.time_without_alarm"),
    ("ru", "в половине восьмого", "check.time_without_alarm"),
    ("hi", "साढ़े सात बजे", "check.time_without_alarm"),
    ("en", "#@!% 7 &&** ~~", "check.no_request"),
    ("ru", "№;% 7 *** ---", "check.no_request"),
    ("hi", "॥ 7 ॥ ??? ###", "check.no_request"),
    ("en", "7:30 on February 30", "check.no_such_date"),
    ("en", "set an alarm for 7:30 on the 30th of February", "check.no_such_date"),
    ("ru", "поставь будильник на семь утра 31 апреля", "check.no_such_date"),
    ("hi", "31 जून को सुबह 6 बजे का अलार्म लगा दो", "check.no_such_date"),
])
def test_an_alarm_time_from_nothing_is_not_set(lang: str, text: str, key: str) -> None:
    decision = _outcome(text, lang, "set_alarm", {"time": "07:30"})
    _refused(decision, lang, key)


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "in ten minutes turn off the fan", ("turn_off", {"device": "fan"})),
    ("ru", "через полчаса выключи свет на кухне", ("turn_off", {"device": "kitchen light"})),
    ("hi", "10 मिनट बाद पंखा बंद कर देना", ("turn_off", {"device": "fan"})),
    # at a time of day: a clock, a number with its "am", "утра", "बजे", or "at"/"в" before it
    ("en", "turn on the heater at 6 am", ("turn_on", {"device": "heater"})),
    ("en", "could you switch the porch light off at eleven", ("turn_off", {"device": "porch light"})),
    ("en", "turn the kitchen light on at 7:30 tomorrow", ("turn_on", {"device": "kitchen light"})),
    ("ru", "включи обогреватель в шесть утра", ("turn_on", {"device": "обогреватель"})),
    ("ru", "выключи свет в спальне в 11", ("turn_off", {"device": "bedroom light"})),
    ("hi", "सुबह छह बजे हीटर चला देना", ("turn_on", {"device": "heater"})),
    ("hi", "raat 11 baje light band kar dena", ("turn_off", {"device": "light"})),
    ("en", "set the fan to 50 percent at 7 pm", ("set_fan_speed", {"device": "fan", "percent": 50})),
    ("en", "turn the heater up by 11 pm", ("set_temperature", {"step": "up"})),  # "by" a time still is one
])
def test_a_request_for_later_is_not_done_now(lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    _refused(_outcome(text, lang, *proposed), lang, "check.later")


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "set the living room light at 80 percent", ("set_brightness", {"device": "living room light",
                                                                          "percent": 80})),
    ("en", "set the fan at 3", ("set_fan_speed", {"device": "fan", "percent": 3})),
    ("en", "turn on the light at the stairs", ("turn_on", {"device": "stairs light"})),
    ("ru", "сделай свет в 2 раза ярче", ("set_brightness", {"device": "light", "percent": 100})),
    ("ru", "поставь вентилятор на 50 процентов", ("set_fan_speed", {"device": "fan", "percent": 50})),
    ("hi", "पंखा 50 प्रतिशत पर कर दो", ("set_fan_speed", {"device": "fan", "percent": 50})),
    ("en", "set an alarm at 6 am", ("set_alarm", {"time": "06:00"})),  # a time is what an alarm is for
    ("ru", "включи обогреватель на два часа", ("turn_on", {"device": "обогреватель"})),  # for two hours: now
    ("hi", "हीटर दो घंटे के लिए चला दो", ("turn_on", {"device": "heater"})),
    ("en", "volume up by 10", ("change_volume", {"direction": "up"})),  # by how much, not by when
    ("en", "turn the lights down by 20", ("set_brightness", {"step": "down"})),
])
def test_a_number_that_is_a_level_or_an_alarms_time_is_no_request_for_later(
        lang: str, text: str, proposed: tuple[str, dict[str, Any]]) -> None:
    decision = _outcome(text, lang, *proposed)
    assert decision.say != "check.later" and decision.reason != f"{proposed[0]}: asked for later", decision


@pytest.mark.parametrize("lang,text,proposed", [
    ("ru", "Поставьте мир на 5 минут.", ("set_temperature", {"temperature": 5})),  # "таймер" heard as "мир"
    ("en", "tamer for twenty minutes please", ("set_volume", {"percent": 20})),
    ("hi", "तीस मिनट का तामर लगा दो", ("set_brightness", {"device": "desk lamp", "percent": 30})),
    ("ru", "на полчаса поставь", ("set_volume", {"percent": 30})),
    ("en", "two hours, the heating", ("set_temperature", {"temperature": 2})),
])
def test_a_length_of_time_is_never_taken_for_a_setting(lang: str, text: str,
                                                       proposed: tuple[str, dict[str, Any]]) -> None:
    _refused(_outcome(text, lang, *proposed), lang, "check.duration_as_value")


@pytest.mark.parametrize("lang,text,proposed", [
    ("en", "set a timer for 20 minutes", ("set_timer", {"seconds": 1200})),  # a length of time is what a timer takes
    ("ru", "громкость на 20, уже минут десять орёт", ("set_volume", {"percent": 20})),  # another number's minutes
    ("hi", "डेस्क लैंप 40 पर कर दो", ("set_brightness", {"device": "desk lamp", "percent": 40})),
])
def test_a_setting_beside_no_length_of_time_or_another_is_still_made(lang: str, text: str,
                                                                     proposed: tuple[str, dict[str, Any]]) -> None:
    assert _calls(_outcome(text, lang, *proposed)) == [proposed]


def test_a_duration_in_another_request_is_not_rewritten_into_a_clock_time() -> None:
    model = Proposes("unlock_door", {"door": "front door"})
    _router(model).decide("in 5 minutes open the front door", "en")
    assert model.asked == ["in 5 minutes open the front door"]  # the model sees the words as said, not "at 14:25"


@pytest.mark.parametrize("lang,text,time", [
    ("en", "set an alarm for 7:30 on March 3", "07:30"),
    ("ru", "разбуди меня 5 мая в семь", "07:00"),
    ("hi", "kal subah 6 baje utha dena", "06:00"),
    ("en", "remind me at 6 pm", "18:00"),
])
def test_an_alarm_said_as_one_is_still_set(lang: str, text: str, time: str) -> None:
    decision = _outcome(text, lang, "set_alarm", {"time": time})
    assert _calls(decision) == [("set_alarm", {"time": time})] or \
        [c.name for c in decision.calls] == ["set_alarm"] and decision.kind == "call"


@pytest.mark.parametrize("lang,text", [
    ("en", "set an alarm for uh"), ("en", "alarm alarm %"), ("ru", "будильник 3 %"), ("ru", "поставь будильник э"),
    ("hi", "alarm laga do na"), ("hi", "अलार्म लगा दो"),
])
def test_an_alarm_asked_for_without_a_time_asks_for_the_time(lang: str, text: str) -> None:
    """The model put a time the user never said: nothing is set, hearthd asks for it, and the answer is taken."""
    router = _router(Proposes("set_alarm", {"time": "03:00"}))
    decision = router.decide(text, lang)
    assert decision.kind == "clarify" and decision.missing == "time", (decision.kind, decision.reason)
    assert [c.arguments for c in decision.calls] == [{}]
    router._agent().call = ToolCall("set_alarm", {"time": "07:30"})  # type: ignore[attr-defined]
    assert _calls(router.decide("7:30", lang)) == [("set_alarm", {"time": "07:30"})]


@pytest.mark.parametrize("text", ["set an alarm for 7-30", "wake me up at 6-45 please"])
def test_a_time_written_with_a_dash_is_a_time(text: str) -> None:
    time = "07:30" if "7-30" in text else "06:45"
    assert _calls(_outcome(text, "en", "set_alarm", {"time": time})) == [("set_alarm", {"time": time})]


def test_a_clarified_alarm_time_is_still_taken() -> None:
    """"set an alarm" / "7:30?": the answer to hearthd's question is an answer, even with a question mark."""
    router = _router(Proposes("set_alarm", {"time": "07:30"}))
    assert router.decide("set an alarm", "en").kind == "clarify"
    assert _calls(router.decide("7:30?", "en")) == [("set_alarm", {"time": "07:30"})]


# -- the real default model on the same patterns ----------------------------------------------------------------

@pytest.fixture(scope="module")
def real_router(components: Any, base_config: Any) -> Router:
    from hearthd.agent.agent import Agent

    agent = Agent(components.agent().model, REGISTRY, min_relevance=base_config.agent.min_relevance)
    return Router(FastPath(REGISTRY), lambda: agent)


@pytest.mark.models
@pytest.mark.parametrize("lang,text", [
    ("hi", "in 5 minutes सामने का दरवाज़ा खोलो"),
    ("en", "7:30"),
    ("en", "7:30 on February 30"),
    ("en", "#@!% 7 &&** ~~"),
    ("ru", "какая температура задана на термостате?"),
    ("hi", "थर्मोस्टेट पर कितना तापमान सेट है?"),
    ("en", "what temperature is the thermostat set to?"),
])
def test_the_real_model_sets_no_alarm_and_changes_nothing(real_router: Router, lang: str, text: str) -> None:
    real_router.reset()
    decision = real_router.decide(text, lang)
    registry = real_router.fast_path.registry if real_router.fast_path is not None else None
    assert registry is not None
    acted = [c.name for c in decision.calls if not registry.reads_only(c.name)] if decision.kind == "call" else []
    assert acted == [] and decision.kind != "clarify", (decision.kind, decision.calls, decision.reason)


@pytest.mark.models
@pytest.mark.parametrize("lang,text,call", [
    ("en", "can you turn on the kitchen light?", ("turn_on", {"device": "kitchen light"})),
    ("ru", "можешь включить свет на кухне?", ("turn_on", {"device": "kitchen light"})),
    ("hi", "front door खोलो", ("unlock_door", {"door": "front door"})),
])
def test_the_real_model_still_does_polite_and_code_mixed_requests(real_router: Router, lang: str, text: str,
                                                                 call: tuple[str, dict[str, Any]]) -> None:
    real_router.reset()
    assert _calls(real_router.decide(text, lang)) == [call]


@pytest.mark.parametrize("text,question", [
    ("set an alarm for 7 to check the news", False), ("wake me at 6 so I can check my email", False),
    ("can you check if the front door is locked", True), ("check whether the garage light is on", True),
    ("hey tell me if the lights are on", True),
])
def test_tell_me_or_check_inside_an_english_request_does_not_make_it_a_question(text: str, question: bool) -> None:
    from hearthd.agent.checks import asks

    assert asks(text, "en") is question


@pytest.mark.parametrize("lang,text,source,kept", [
    ("ru", "закрой все жалюзи", "model", False), ("en", "clear everything please", "model", False),
    ("en", "delete all my alarms", "model", True), ("hi", "saare alarm hata do", "model", True),
    ("en", "clear everything please", "fastpath", True),  # a template never reads an alarm without its words
])
def test_the_model_cancels_no_alarm_from_a_sentence_about_none(lang: str, text: str, source: str,
                                                               kept: bool) -> None:
    from hearthd.agent.agent import Decision
    from hearthd.agent.checks import review
    from hearthd.agent.parsing import ToolCall

    decision = review(Decision("call", calls=[ToolCall("cancel_all_alarms", {})], source=source), text, lang, REGISTRY)
    assert (decision.kind == "call") is kept, decision.reason


def test_a_new_family_is_checked_by_what_its_tools_declare() -> None:
    """A tool family the checks have never heard of (issue 30: a new family is its module and its locale files, no
    edit in agent/checks.py): its declarations alone — paired sides, read-only — give it the opposite-action check
    and the question check, in every language."""
    from hearthd.agent.checks import review

    empty = {"type": "object", "properties": {}, "additionalProperties": False}
    kettle = ToolRegistry([
        Tool("kettle_on", "Boil the kettle.", empty, _never, family="kettle", sides=("on", "off")),
        Tool("kettle_off", "Stop the kettle.", empty, _never, family="kettle", sides=("off", "on")),
        Tool("kettle_state", "Say whether the kettle is boiling.", empty, _never, family="kettle", read_only=True),
    ])

    def reviewed(name: str, text: str, lang: str) -> Decision:
        return review(Decision("call", calls=[ToolCall(name, {})], source="model"), text, lang, kettle)

    for lang, off in [("en", "switch the kettle off"), ("ru", "выключи чайник"), ("hi", "केतली बंद करो")]:
        assert reviewed("kettle_on", off, lang).say == "check.opposite", (lang, off)
        assert reviewed("kettle_off", off, lang).kind == "call", (lang, off)
    assert reviewed("kettle_on", "put the kettle on", "en").kind == "call"
    assert reviewed("kettle_off", "is the kettle on?", "en").say == "check.question"
    assert reviewed("kettle_state", "is the kettle on?", "en").kind == "call"
    assert reviewed("kettle_state", "чайник включён?", "ru").kind == "call"


def test_a_new_family_with_a_time_is_checked_by_its_declared_topic() -> None:
    """Times and removals by topic (issue 30): the alarm-only rules are now each tool's declared `topic`. A wake-up
    light that declares the alarm's topic takes a time only from a sentence about waking; a dishwasher that
    declares none starts at the time said (it was refused before: "nothing about an alarm"); a topic whose
    language has no words and no phrase of its own is refused with the general phrase; a model's removal of a
    topic's things needs the topic said, in every language."""
    from hearthd.agent.checks import review

    at = {"type": "object", "properties": {"time": {"type": "string", "pattern": r"^\d\d:\d\d$", "x-ground": "time"}},
          "required": ["time"], "additionalProperties": False}
    empty = {"type": "object", "properties": {}, "additionalProperties": False}
    home = ToolRegistry([
        Tool("wake_light", "Fade the bedroom light up at a time.", at, _never, family="light", sides=("set", "unset"),
             topic="alarm"),
        Tool("start_dishwasher", "Start the dishwasher at a time.", at, _never, family="dishes"),
        Tool("water_plants", "Water the plants at a time.", at, _never, family="garden", topic="watering"),
        Tool("forget_wake_lights", "Cancel every wake-up light.", empty, _never, family="light",
             sides=("unset", "set"), topic="alarm"),
        Tool("turn_off", "Switch a device off.", empty, _never, family="home", sides=("off", "on")),
    ])

    def reviewed(name: str, text: str, lang: str, time: str | None = "07:30") -> Decision:
        arguments = {"time": time} if time else {}
        return review(Decision("call", calls=[ToolCall(name, arguments)], source="model"), text, lang, home)

    for lang, bare, waking in [("en", "seven thirty", "wake me with the light at seven thirty"),
                               ("ru", "в половине восьмого", "разбуди меня светом в половине восьмого"),
                               ("hi", "साढ़े सात बजे", "साढ़े सात बजे रोशनी से जगा देना")]:
        assert reviewed("wake_light", bare, lang).say == "check.time_without_alarm", (lang, bare)
        assert phrase(lang, "check.time_without_alarm")
        assert reviewed("wake_light", waking, lang).kind == "call", (lang, waking)
        assert reviewed("water_plants", bare, lang).say == "check.time_without_topic", (lang, bare)
        assert phrase(lang, "check.time_without_topic")
    # no number and nothing of the topic said: the time is the model's own, and hearthd does not say it heard one
    for lang, vague in [("en", "make the bedroom nice"), ("ru", "сделай в спальне уютно"), ("hi", "चाय के लिए टाइमर")]:
        assert reviewed("wake_light", vague, lang).say == "check.not_about_topic", (lang, vague)
    assert reviewed("start_dishwasher", "start the dishwasher at half past seven", "en").kind == "call"
    assert reviewed("start_dishwasher", "посудомойку на семь тридцать", "ru").kind == "call"
    for lang, clear in [("en", "clear everything please"), ("ru", "убери всё"), ("hi", "sab hata do")]:
        refused = reviewed("forget_wake_lights", clear, lang, None)
        assert refused.say == "check.not_about_alarm", (lang, clear, refused.reason)
    assert reviewed("forget_wake_lights", "cancel all the wake up alarms", "en", None).kind == "call"
    # "later" is not something hearthd does, even when an alarm word is in the sentence: only a tool of that topic
    # (or one that takes the length of time itself, a timer) may act on "in 5 minutes"
    assert reviewed("turn_off", "remind me in 5 minutes to turn off the oven", "en", None).say == "check.later"
