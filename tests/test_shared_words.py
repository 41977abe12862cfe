"""Several things in one request that share a word said once: the verb ("turn off the tv and the floor lamp"), the kind
of device ("turn on the kitchen and hallway lights"), a list with commas, Hindi's verb said last ("टीवी और टेबल लैंप
बंद कर दो"), and "it" for the device just named ("turn on the kitchen light and make it blue"). Before, the part
without its verb was read alone: "the floor lamp" as switching it on (so "turn off the tv and the floor lamp" was
refused as on-and-off), "turn on the kitchen" as nothing (the whole refused)."""

from __future__ import annotations

from typing import Any

import pytest

from hearthd.daemon.components import Components

from .spoken_home import decide

CASES: list[tuple[str, str, list[tuple[str, dict[str, Any]]]]] = [
    ("en", "turn off the tv and the floor lamp",
     [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Floor Lamp"})]),
    ("en", "turn on the kitchen and hallway lights",
     [("turn_on", {"device": "Kitchen Light"}), ("turn_on", {"device": "Hallway Light"})]),
    ("en", "lock the front and back doors",
     [("lock_door", {"door": "Front Door"}), ("lock_door", {"door": "Back Door"})]),
    ("en", "turn off the kitchen, hallway and bathroom lights",
     [("turn_off", {"device": "Kitchen Light"}), ("turn_off", {"device": "Hallway Light"}),
      ("turn_off", {"device": "Bathroom Light"})]),
    ("en", "could you turn the tv and the coffee machine off",
     [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Coffee Machine"})]),
    ("en", "turn off both the fan and the tv",
     [("turn_off", {"device": "Ceiling Fan"}), ("turn_off", {"device": "TV"})]),
    ("en", "dim the kitchen and living room lights",
     [("set_brightness", {"area": "Kitchen", "step": "down"}),
      ("set_brightness", {"area": "Living Room", "step": "down"})]),
    ("en", "turn on the kitchen light and make it blue",
     [("turn_on", {"device": "Kitchen Light"}), ("set_color", {"device": "Kitchen Light", "color": "blue"})]),
    ("en", "switch on the desk lamp and dim it",
     [("turn_on", {"device": "Desk Lamp"}), ("set_brightness", {"device": "Desk Lamp", "step": "down"})]),
    ("ru", "выключи телевизор и обогреватель", [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Heater"})]),
    ("ru", "включи свет на кухне и в коридоре",
     [("turn_on", {"device": "Kitchen Light"}), ("turn_on", {"device": "Hallway Light"})]),
    ("ru", "выключи свет на кухне и в ванной и в коридоре",
     [("turn_off", {"device": "Kitchen Light"}), ("turn_off", {"device": "Bathroom Light"}),
      ("turn_off", {"device": "Hallway Light"})]),
    ("ru", "закрой входную дверь и гараж",
     [("lock_door", {"door": "front door"}), ("close_cover", {"device": "Garage Door"})]),
    ("ru", "включи свет на кухне и сделай его синим",
     [("turn_on", {"device": "Kitchen Light"}), ("set_color", {"device": "Kitchen Light", "color": "blue"})]),
    ("hi", "टीवी और टेबल लैंप बंद कर दो", [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Desk Lamp"})]),
    ("hi", "रसोई और बाथरूम की बत्ती जलाओ",
     [("turn_on", {"device": "Kitchen Light"}), ("turn_on", {"device": "Bathroom Light"})]),
    ("hi", "टीवी बंद करो और टेबल लैंप भी", [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Desk Lamp"})]),
    ("hi", "सामने और पीछे का दरवाज़ा लॉक कर दो",
     [("lock_door", {"door": "front door"}), ("lock_door", {"door": "back door"})]),
    ("hi", "tv aur heater band kar do", [("turn_off", {"device": "TV"}), ("turn_off", {"device": "Heater"})]),
]


@pytest.mark.parametrize("lang,text,calls", CASES)
def test_a_word_said_once_is_shared(living_room: Components, lang: str, text: str,
                                    calls: list[tuple[str, dict[str, Any]]]) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == calls, decision


def test_the_same_device_twice_is_done_once(living_room: Components) -> None:
    """The living room's one cover answers to "the blinds" and to "the curtains": closed once, said once."""
    decision = decide(living_room, "close the blinds and the curtains", "en")
    assert [(c.name, c.arguments) for c in decision.calls] == [("close_cover", {"device": "Living Room Blinds"})]


@pytest.mark.parametrize("lang,text,calls", [
    # a timer is no device: its part keeps its own reading, the light is switched on
    ("en", "set a timer for 5 minutes and the kitchen light",
     [("set_timer", {"seconds": 300}), ("turn_on", {"device": "Kitchen Light"})]),
    # each part said whole: as before
    ("en", "turn off the heater and set an alarm for 7",
     [("turn_off", {"device": "Heater"}), ("set_alarm", {"time": "07:00"})]),
])
def test_only_what_is_done_to_devices_is_shared(living_room: Components, lang: str, text: str,
                                               calls: list[tuple[str, dict[str, Any]]]) -> None:
    decision = decide(living_room, text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == calls, decision


@pytest.mark.parametrize("lang,text,calls", [
    ("en", "brighter please", [("set_brightness", {"step": "up", "area": "Living Room"})]),
    ("en", "a bit dimmer", [("set_brightness", {"step": "down", "area": "Living Room"})]),
    ("ru", "свет выключи", [("turn_off", {"domain": "light", "area": "Living Room"})]),
    ("ru", "а свет включи пожалуйста", [("turn_on", {"domain": "light", "area": "Living Room"})]),
    ("en", "turn off the tv too", [("turn_off", {"device": "TV"})]),
    ("ru", "телевизор тоже выключи", [("turn_off", {"device": "tv"})]),
    # shut, of a lock: locked (as "खोल दो" of a lock unlocks it, after a yes)
    ("hi", "सामने का दरवाज़ा बंद कर दो", [("lock_door", {"door": "front door"})]),
    ("hi", "front door ko band kar do", [("lock_door", {"door": "front door"})]),
    ("en", "lock the back doors", [("lock_door", {"door": "Back Door"})]),
])
def test_words_said_of_one_thing(living_room: Components, lang: str, text: str,
                                 calls: list[tuple[str, dict[str, Any]]]) -> None:
    decision = decide(living_room, text, lang)
    assert decision.kind == "call" and [(c.name, c.arguments) for c in decision.calls] == calls, decision


def test_a_run_on_of_many_parts_is_not_searched(living_room: Components, monkeypatch: pytest.MonkeyPatch) -> None:
    """Sixty parts with no verb of their own: the sharing tries nothing (else thousands of template readings), and
    the turn still ends in a decision."""
    from hearthd.agent.fastpath import SHARED_MAX_PARTS

    router = living_room.router()
    tried: list[int] = []
    original = type(router)._shared_part

    def counted(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        tried.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(type(router), "_shared_part", counted)
    parts = ["the floor lamp"] * (SHARED_MAX_PARTS + 55)
    decisions = router._sharing(["turn off the tv", *parts], [None] * (len(parts) + 1), "en")
    assert tried == [] and decisions == [None] * (len(parts) + 1)
    # a list of one breath is still shared
    assert [c.arguments for c in decide(living_room, "turn off the tv and the floor lamp", "en").calls] == [
        {"device": "TV"}, {"device": "Floor Lamp"}]
