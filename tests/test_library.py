"""The sentence library (issue 16, items 1-3): Home Assistant's own templates read with this home's names, areas
and floors. Areas, floors, the whole home and "in here" as groups; questions about the home answered from the
tracked state; every name read by code. No model loads: what the library and hearthd's templates do not read goes
to a stand-in that declines, so a test that reaches it sees nothing done."""

from __future__ import annotations

import asyncio
import copy
from pathlib import Path
from typing import Any

import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.dialect import decodable
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.locale import phrase
from hearthd.spoken import say_count
from hearthd.tools.discovery import Entity

from .mqtt_sim import CommandRecorder as Sent


def ent(key: str, component: str, name: str, area: str, **config: Any) -> Entity:
    return Entity(source=key, key=f"{component}.{key}", component=component, name=name, area=area,
                  config={"command_topic": f"{key}/set", "state_topic": key, **config})


HOME = [ent("kl", "light", "Kitchen Light", "Kitchen"), ent("ks", "light", "Kitchen Spots", "Kitchen"),
        ent("lr", "light", "Living Room Lamp", "Living Room"), ent("bl", "light", "Bedroom Lamp", "Bedroom"),
        ent("ll", "light", "Landing Light", "Landing"), ent("cm", "switch", "Coffee Machine", "Kitchen"),
        ent("cf", "fan", "Ceiling Fan", "Bedroom"),
        ent("bb", "cover", "Bedroom Blinds", "Bedroom", device_class="blind"),
        ent("gd", "cover", "Garage Door", "Garage", device_class="garage"), ent("fd", "lock", "Front Door", "Hallway"),
        ent("bd", "lock", "Back Door", "Garden")]
FLOORS = {"Upstairs": ["Bedroom", "Landing"], "Ground floor": ["Kitchen", "Living Room", "Hallway"]}


class Declines:
    """The model's part, declining everything: a request only the model would read is seen doing nothing."""

    def __init__(self) -> None:
        self.asked: list[str] = []

    def decide(self, text: str, lang: str, now: object = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append(text)
        return Decision("abstain", reason="no tool fits", source="model")


@pytest.fixture
def home(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Components, Sent, Declines]:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.mqtt.floors = FLOORS
    cfg.general.area = "Kitchen"  # where the local microphone is
    c = Components(cfg)
    for e in HOME:
        c.catalogue.entities[e.key] = e
    states = {"light.kl": "on", "light.ks": "off", "light.lr": "on", "light.bl": "off", "light.ll": "on",
              "switch.cm": "on", "fan.cf": "off", "cover.bb": "closed", "cover.gd": "closed", "lock.fd": "unlocked",
              "lock.bd": "locked"}
    for key, state in states.items():
        c.catalogue.states[key] = {"state": state}
    sent, model = Sent(), Declines()
    monkeypatch.setattr(c, "mqtt_link", lambda: sent)
    monkeypatch.setattr(c, "agent", lambda: model)
    return c, sent, model


def say(c: Components, text: str, lang: str) -> str:
    return asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang)).reply


# -- areas, floors, the home, "in here" --------------------------------------------------------------------------

KITCHEN_OFF = {("kl/set", "OFF"), ("ks/set", "OFF")}
GROUPS = [
    ("en", "turn off all the kitchen lights", KITCHEN_OFF),
    ("en", "kitchen lights off please", KITCHEN_OFF),
    ("en", "hey could you switch the lights off in the kitchen", KITCHEN_OFF),
    ("en", "turn off the lights in here", KITCHEN_OFF),  # general.area
    ("en", "lights off", KITCHEN_OFF),  # elliptical: the room the microphone is in
    ("en", "turn the lights on in the living room", {("lr/set", "ON")}),
    ("en", "turn off the lights upstairs", {("bl/set", "OFF"), ("ll/set", "OFF")}),  # a floor of mqtt.floors
    ("en", "switch on the lights on the ground floor", {("kl/set", "ON"), ("ks/set", "ON"), ("lr/set", "ON")}),
    ("en", "turn off all the lights", {(f"{k}/set", "OFF") for k in ("kl", "ks", "lr", "bl", "ll")}),
    ("en", "close the blinds in the bedroom", {("bb/set", "CLOSE")}),
    ("ru", "выключи весь свет на кухне", KITCHEN_OFF),
    ("ru", "включи свет в спальне", {("bl/set", "ON")}),
    ("ru", "выключи весь свет в доме", {(f"{k}/set", "OFF") for k in ("kl", "ks", "lr", "bl", "ll")}),
    ("ru", "закрой жалюзи в спальне", {("bb/set", "CLOSE")}),
    ("hi", "रसोई की लाइट बंद करो", KITCHEN_OFF),
    ("hi", "बेडरूम की लाइट जला दो", {("bl/set", "ON")}),
]


@pytest.mark.parametrize("lang,text,commands", GROUPS)
def test_a_group_command_reaches_every_device_of_the_group_and_no_other(
        home: tuple[Components, Sent, Declines], lang: str, text: str, commands: set[tuple[str, str]]) -> None:
    c, sent, model = home
    reply = say(c, text, lang)
    assert set(sent.sent) == commands and len(sent.sent) == len(commands), reply
    assert model.asked == []  # read by the templates, never decoded


@pytest.mark.parametrize("lang,text,count,noun,area", [
    ("en", "turn off all the kitchen lights", 2, "light", "Kitchen"),
    ("ru", "выключи весь свет на кухне", 2, "light", "Kitchen"),
    ("hi", "रसोई की लाइट बंद करो", 2, "light", "Kitchen"),
    ("ru", "выключи весь свет в доме", 5, "light", ""),
])
def test_a_group_command_says_how_many_it_did_in_the_users_language(
        home: tuple[Components, Sent, Declines], lang: str, text: str, count: int, noun: str, area: str) -> None:
    c, _, _ = home
    key = "home.many_off_in" if area else "home.many_off"
    assert say(c, text, lang) == phrase(lang, key, count=say_count(count, noun, lang), area=area)


def test_a_device_that_does_not_answer_is_named_and_the_rest_still_done(
        home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    c.catalogue.available["light.ks"] = False
    assert say(c, "turn on the lights in the kitchen", "en") == phrase(
        "en", "home.many_partial", count=say_count(1, "light", "en"), failed="Kitchen Spots")
    assert sent.sent == [("kl/set", "ON")]


def test_an_area_the_home_does_not_have_does_nothing(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    say(c, "turn off the lights in the attic", "en")
    assert sent.sent == []


def test_a_new_device_is_known_by_name_at_once(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, model = home
    c.catalogue.entities["light.pl"] = ent("pl", "light", "Porch Lantern", "Porch")
    say(c, "turn on the porch lantern", "en")
    assert sent.sent == [("pl/set", "ON")] and model.asked == []


def test_opening_a_group_that_has_a_garage_door_asks_first_with_the_count(
        home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    question = say(c, "open the garage door", "en")
    assert sent.sent == [] and question.endswith("Please say yes or no.")
    say(c, "yes", "en")
    assert sent.sent == [("gd/set", "OPEN")]


def test_a_group_call_with_nothing_named_never_means_everything(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    result = asyncio.run(c.tools.get("turn_off").handler({}))
    assert not result.ok and result.phrase == "home.name_missing" and sent.sent == []


def test_the_model_never_sees_nor_fills_what_only_code_reads(home: tuple[Components, Sent, Declines]) -> None:
    c, _, _ = home
    for name in ("turn_on", "turn_off", "open_cover", "close_cover", "lock_door", "unlock_door", "device_state"):
        tool = c.tools.get(name)
        shown = tool.openai_schema()["function"]["parameters"]
        assert not {"area", "domain", "state", "question", "device_class"} & set(shown["properties"]), name
        assert shown["required"] in (["device"], ["door"]), name
        assert not any(k.startswith("x-") for k in str(shown).split("'") if k.startswith("x-")), name
        assert set(decodable(tool.model_parameters)["properties"]) <= set(shown["properties"])


# -- questions about the home ------------------------------------------------------------------------------------

QUESTIONS = [
    ("en", "are any doors unlocked", "home.q_any_yes", {"names": "Front Door"}, "unlocked"),
    ("en", "which lights are on", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
    ("en", "are all the doors locked", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("en", "how many lights are on upstairs", "home.q_how_many_1", {"names": "Landing Light"}, "on"),
    ("ru", "какие лампы включены", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
    ("ru", "все двери заперты?", "home.q_all_no", {"names": "Front Door"}, "locked"),
    # "the door", no name said: every door's lock, the one left unlocked named
    ("en", "is the door locked", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("en", "hey did I lock the door", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("ru", "дверь заперта?", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("ru", "а я закрыл дверь", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("hi", "क्या दरवाज़ा लॉक है", "home.q_all_no", {"names": "Front Door"}, "locked"),
    ("hi", "darwaza lock hai kya", "home.q_all_no", {"names": "Front Door"}, "locked"),
    # the lights, no room said: the ones on, anywhere at home
    ("en", "are the lights on", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
    ("en", "are there any lights still on", "home.q_which",
     {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
    ("ru", "свет горит?", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
    ("ru", "а где-нибудь горит свет", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"},
     "on"),
    ("hi", "क्या लाइट जल रही है", "home.q_which", {"names": "Kitchen Light, Landing Light, Living Room Lamp"}, "on"),
]


@pytest.mark.parametrize("lang,text,key,values,state", QUESTIONS)
def test_a_question_about_the_home_is_answered_from_the_tracked_state(
        home: tuple[Components, Sent, Declines], lang: str, text: str, key: str, values: dict[str, str],
        state: str) -> None:
    c, sent, model = home
    trace = Trace()
    reply = asyncio.run(Pipeline(c, trace).run_text(text, language=lang)).reply
    assert reply == phrase(lang, key, state=phrase(lang, f"states.{state}"), **values)
    assert sent.sent == [] and model.asked == []  # nothing commanded, nothing decoded
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["device_state"]


@pytest.mark.parametrize("lang,text,count", [("en", "how many lights are on", 3), ("ru", "сколько ламп включено", 3)])
def test_how_many_says_the_count_with_its_word_form(home: tuple[Components, Sent, Declines], lang: str, text: str,
                                                     count: int) -> None:
    c, _, _ = home
    assert say(c, text, lang) == phrase(lang, "home.q_how_many", count=say_count(count, "light", lang),
                                        state=phrase(lang, "states.on"),
                                        names="Kitchen Light, Landing Light, Living Room Lamp")


def test_no_device_in_the_state_asked_is_said_plainly(home: tuple[Components, Sent, Declines]) -> None:
    c, _, _ = home
    c.catalogue.states["lock.fd"] = {"state": "locked"}
    assert say(c, "are any doors unlocked", "en") == phrase("en", "home.q_none", kind="locks",
                                                            state=phrase("en", "states.unlocked"))


@pytest.mark.parametrize("lang,text,key,state", [
    ("en", "is the back door locked", "home.q_one_yes", "locked"),
    ("en", "is the front door locked?", "home.q_one_no", "unlocked"),
    ("en", "is the coffee machine on", "home.q_one_yes", "on"),
])
def test_a_yes_no_question_about_one_device_says_its_state(home: tuple[Components, Sent, Declines], lang: str,
                                                           text: str, key: str, state: str) -> None:
    c, sent, _ = home
    name = {"back": "Back Door", "front": "Front Door", "coffee": "Coffee Machine"}[text.split()[2]]
    assert say(c, text, lang) == phrase(lang, key, name=name, state=phrase(lang, f"state_one.{state}"))
    assert sent.sent == []


def test_a_statement_is_not_read_as_a_question(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text("all lights off", language="en"))
    assert "device_state" not in [e.name for e in trace.of_type(EventType.TOOL_CALL)]


@pytest.mark.parametrize("lang,text,command", [
    ("en", "switch on the fan", ("cf/set", "ON")),  # the only fan is in the bedroom; the microphone is in the kitchen
    ("ru", "закрой ворота гаража", ("gd/set", "CLOSE")),
])
def test_a_room_taken_from_the_microphone_gives_way_to_the_one_such_device(
        home: tuple[Components, Sent, Declines], lang: str, text: str, command: tuple[str, str]) -> None:
    c, sent, _ = home
    say(c, text, lang)
    assert sent.sent == [command]


def test_with_several_elsewhere_the_microphones_room_stays(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    c.catalogue.entities["fan.of"] = ent("of", "fan", "Office Fan", "Office")
    assert say(c, "switch on the fan", "en") == phrase("en", "home.none_in", kind="fans", area="Kitchen")
    assert sent.sent == []


def test_the_singular_names_one_device_or_asks_which(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, _ = home
    assert say(c, "turn on the landing light", "en") == phrase("en", "home.on", name="Landing Light")
    assert say(c, "turn off the kitchen light", "en") == phrase("en", "home.off", name="Kitchen Light")  # its name
    c.catalogue.entities["light.rl"] = ent("rl", "light", "Reading Lamp", "Living Room")
    assert say(c, "turn off the living room light", "en") == phrase("en", "home.which", first="Living Room Lamp",
                                                                    second="Reading Lamp")
    assert sent.sent == [("ll/set", "ON"), ("kl/set", "OFF")]
    say(c, "the reading lamp", "en")  # the answer to "which one?"
    assert sent.sent[-1] == ("rl/set", "OFF")
    say(c, "turn off the living room lights", "en")  # the plural: the room's lights
    assert set(sent.sent[-2:]) == {("rl/set", "OFF"), ("lr/set", "OFF")}


@pytest.mark.parametrize("lang,text", [("ru", "закрой все жалюзи"), ("en", "close all the blinds"),
                                       ("en", "please shut all of the blinds")])
def test_every_blind_of_the_home_by_hearthds_own_templates(home: tuple[Components, Sent, Declines], lang: str,
                                                           text: str) -> None:
    c, sent, model = home
    say(c, text, lang)
    assert sent.sent == [("bb/set", "CLOSE")] and model.asked == []  # the blinds, never the garage door


@pytest.mark.parametrize("lang,text,payload", [
    ("en", "turn off all the fans", "OFF"), ("en", "switch every fan on", "ON"),
    ("ru", "выключи все вентиляторы", "OFF"),
    ("hi", "सारे पंखे बंद कर दो", "OFF"), ("hi", "saare pankhe chala do", "ON"),
])
def test_every_fan_of_the_home_wherever_the_microphone_is(home: tuple[Components, Sent, Declines], lang: str,
                                                          text: str, payload: str) -> None:
    c, sent, model = home
    c.catalogue.entities["fan.of"] = ent("of", "fan", "Office Fan", "Office")
    say(c, text, lang)
    assert sorted(sent.sent) == [("cf/set", payload), ("of/set", payload)] and model.asked == []


# -- lights dimmed, brightened and coloured as a group ------------------------------------------------------------

def _dimmable(c: Components) -> None:
    """The kitchen's two lights take a brightness and a colour (the fixture's take only on/off); the spots are off."""
    for key, name in (("kl", "Kitchen Light"), ("ks", "Kitchen Spots")):
        c.catalogue.entities[f"light.{key}"] = ent(key, "light", name, "Kitchen", brightness_command_topic=f"{key}/bri",
                                                    rgb_command_topic=f"{key}/rgb")
    c.catalogue.states["light.kl"] = {"state": "on", "brightness": 80}


@pytest.mark.parametrize("lang,text", [
    ("en", "dim the lights"), ("en", "lower the lights in the kitchen a bit"), ("en", "make the kitchen lights dimmer"),
    ("ru", "приглуши свет"), ("ru", "сделай свет на кухне потусклее"),
    ("hi", "लाइट थोड़ी धीमी कर दो"), ("hi", "kitchen ki light dim karo"),
])
def test_dimming_the_lights_steps_each_one_down_from_where_it_is(home: tuple[Components, Sent, Declines],
                                                                 lang: str, text: str) -> None:
    c, sent, model = home
    _dimmable(c)
    reply = say(c, text, lang)
    assert sent.sent == [("kl/bri", str(round(255 * 0.55)))], reply  # 80% → 55%; the spots stay off
    assert model.asked == []
    assert reply == phrase(lang, "home.many_dimmer_in", count=say_count(2, "light", lang), area="Kitchen")


@pytest.mark.parametrize("lang,text,rgb", [
    ("en", "make the kitchen lights pink", "255,105,180"), ("en", "change the lights to blue", "0,0,255"),
    ("ru", "сделай свет на кухне красным", "255,0,0"), ("hi", "लाइट का रंग हरा कर दो", "0,255,0"),
])
def test_a_colour_for_the_rooms_lights_reaches_each(home: tuple[Components, Sent, Declines], lang: str, text: str,
                                                    rgb: str) -> None:
    from hearthd.tools.smarthome import COLOURS

    c, sent, model = home
    _dimmable(c)
    reply = say(c, text, lang)
    colour = next(k for k, v in COLOURS.items() if ",".join(map(str, v)) == rgb)
    assert sorted(sent.sent) == [("kl/rgb", ",".join(map(str, COLOURS[colour]))),
                                 ("ks/rgb", ",".join(map(str, COLOURS[colour])))], reply
    assert model.asked == []


def test_dimming_with_no_room_known_asks_which_room(home: tuple[Components, Sent, Declines]) -> None:
    """No room for the microphone: "dim the lights" is not guessed (nor left to the model) but asked about, and the
    room answered is the one dimmed."""
    c, sent, model = home
    c.cfg.general.area = ""  # a daemon that does not know the microphone's room (set before its router is made)
    _dimmable(c)
    assert say(c, "dim the lights", "en") == phrase("en", "ask.area")
    assert sent.sent == [] and model.asked == []
    say(c, "in the kitchen", "en")
    assert sorted(topic for topic, _ in sent.sent) == ["kl/bri"] and model.asked == []  # the spots are off


# -- a device the home does not have is said not to exist (issue 25) -----------------------------------------------

@pytest.mark.parametrize("lang,text,name", [
    ("en", "turn on the sauna", "sauna"), ("en", "could you switch off the jacuzzi please", "jacuzzi"),
    ("en", "turn the aquarium on", "aquarium"), ("en", "hey, power off my dehumidifier", "dehumidifier"),
    ("ru", "включи сауну", "сауну"), ("ru", "выключи джакузи пожалуйста", "джакузи"),
    ("hi", "सौना चालू करो", "सौना"), ("hi", "geyser on kar do", "geyser"),
])
def test_a_device_the_home_does_not_have_is_said_not_to_exist(home: tuple[Components, Sent, Declines], lang: str,
                                                                text: str, name: str) -> None:
    c, sent, model = home
    assert say(c, text, lang) == phrase(lang, "home.unknown_device", name=name)
    assert sent.sent == [] and model.asked == []  # nothing sent, and no model turn spent on it


@pytest.mark.parametrize("lang,text", [
    ("en", "turn on the celing fan"),  # a known device misheard: for the tiers after the templates, never unknown
    ("ru", "включи вентилятр"), ("hi", "बंखा चालू करो"),
    ("en", "turn on wifi"), ("en", "turn on the music"),  # words of hearthd's own requests
    ("en", "turn on the news"),  # a kind of request it declines says why instead
])
def test_what_may_be_a_known_thing_is_not_called_unknown(home: tuple[Components, Sent, Declines], lang: str,
                                                          text: str) -> None:
    c, _, _ = home
    assert say(c, text, lang) != phrase(lang, "home.unknown_device", name=text.split()[-1])
    decision = c.router().fast_path.match(text, lang)
    assert decision is None or decision.say != "home.unknown_device", text


def test_with_no_home_known_nothing_is_called_unknown(home: tuple[Components, Sent, Declines]) -> None:
    c, _, model = home
    c.catalogue.entities.clear()  # the devices not learned (yet): hearthd cannot know what the home lacks
    assert say(c, "turn on the sauna", "en") != phrase("en", "home.unknown_device", name="sauna")
    assert model.asked == ["turn on the sauna"]


def test_known_devices_are_still_switched(home: tuple[Components, Sent, Declines]) -> None:
    c, sent, model = home
    say(c, "turn on the kitchen light", "en")
    say(c, "выключи вентилятор", "ru")
    assert [topic for topic, _ in sent.sent] == ["kl/set", "cf/set"] and model.asked == []


@pytest.mark.parametrize("lang,text", [("hi", "दरवाज़ा बंद करो"), ("hi", "दरवाजा बंद कर दो"), ("en", "lock the door"),
                                       ("ru", "запри дверь"), ("en", "turn the lights on"), ("ru", "включи свет")])
def test_a_request_like_a_question_about_the_door_or_the_lights_is_not_answered_as_one(
        home: tuple[Components, Sent, Declines], lang: str, text: str) -> None:
    """"दरवाज़ा बंद करो" shares its words with "दरवाज़ा बंद है?": a request, never answered with the locks' state."""
    c, _, _ = home
    trace = Trace()
    asyncio.run(Pipeline(c, trace).run_text(text, language=lang))
    assert "device_state" not in [e.name for e in trace.of_type(EventType.TOOL_CALL)]


# -- several requests, one of them asked about ----------------------------------------------------------------------

ASKED_IN_PART = [
    ("en", "turn off the kitchen light and lock the door", "the back door", {("kl/set", "OFF"), ("bd/set", "LOCK")}),
    ("en", "lock the door and switch the fan on", "front door please", {("fd/set", "LOCK"), ("cf/set", "ON")}),
    ("ru", "выключи свет в спальне и запри дверь", "входную", {("bl/set", "OFF"), ("fd/set", "LOCK")}),
    ("hi", "बेडरूम की लाइट जला दो और दरवाज़ा लॉक कर दो", "पीछे वाला दरवाज़ा", {("bl/set", "ON"), ("bd/set", "LOCK")}),
]


@pytest.mark.parametrize("lang,said,answer,commands", ASKED_IN_PART)
def test_a_request_with_one_part_to_ask_about_asks_it_and_does_every_part_with_the_answer(
        home: tuple[Components, Sent, Declines], lang: str, said: str, answer: str,
        commands: set[tuple[str, str]]) -> None:
    """"Turn off the kitchen light and lock the door": which door is asked, and the light waits for the answer, then
    both are done; the model (given the whole, it did one part and dropped the other) is not asked."""
    c, sent, model = home
    pipeline = Pipeline(c, Trace())
    first = asyncio.run(pipeline.run_text(said, language=lang))
    assert first.decision is not None and first.decision.kind == "clarify", first.reply
    assert first.reply.endswith(phrase(lang, "confirm.rest_waits"))  # told the rest waits for the answer
    assert sent.sent == []  # nothing done before the answer
    second = asyncio.run(pipeline.run_text(answer, language=lang))
    assert set(sent.sent) == commands and len(sent.sent) == len(commands), second.reply
    assert model.asked == []


@pytest.mark.parametrize("lang,cancel", [("en", "never mind"), ("ru", "отмена"), ("hi", "रहने दो")])
def test_a_request_asked_about_in_part_and_then_cancelled_does_no_part(
        home: tuple[Components, Sent, Declines], lang: str, cancel: str) -> None:
    c, sent, _ = home
    said = {"en": "turn off the kitchen light and lock the door", "ru": "выключи свет на кухне и запри дверь",
            "hi": "रसोई की लाइट बंद करो और दरवाज़ा लॉक कर दो"}[lang]
    pipeline = Pipeline(c, Trace())
    assert asyncio.run(pipeline.run_text(said, language=lang)).decision.kind == "clarify"  # type: ignore[union-attr]
    reply = asyncio.run(pipeline.run_text(cancel, language=lang)).reply
    assert sent.sent == [] and reply == phrase(lang, "agent.cancelled")


@pytest.mark.parametrize("lang,text,names", [
    ("en", "what's on in the house", {"Kitchen Light", "Living Room Lamp", "Landing Light", "Coffee Machine"}),
    ("en", "what did I leave on", {"Kitchen Light", "Living Room Lamp", "Landing Light", "Coffee Machine"}),
    ("en", "what's on in the kitchen", {"Kitchen Light", "Coffee Machine"}),
    ("ru", "что у нас сейчас включено", {"Kitchen Light", "Living Room Lamp", "Landing Light", "Coffee Machine"}),
    ("ru", "что включено на кухне", {"Kitchen Light", "Coffee Machine"}),
    ("hi", "घर में क्या क्या चालू है", {"Kitchen Light", "Living Room Lamp", "Landing Light", "Coffee Machine"}),
])
def test_what_is_on_names_whatever_is_on_there_or_in_the_whole_home(
        home: tuple[Components, Sent, Declines], lang: str, text: str, names: set[str]) -> None:
    """"What's on in the house?", "что включено на кухне?": the devices that are on, named (not only the lights; the
    whole home when no room is said), where hearthd asked which device was meant."""
    c, sent, model = home
    result = asyncio.run(Pipeline(c, Trace()).run_text(text, language=lang))
    assert result.decision is not None and result.decision.kind == "call", result.reply
    assert all(name in result.reply for name in names), result.reply
    others = {e.name for e in HOME} - names
    assert not [name for name in others if name in result.reply], result.reply
    assert sent.sent == [] and model.asked == []
