"""Finding the device the user means, and reading device state, without a broker."""

from __future__ import annotations

import pytest

from hearthd.tools.discovery import Entity
from hearthd.tools.smarthome import Catalogue, render_value_template


def entity(key: str, component: str, name: str, area: str = "", **config: object) -> Entity:
    return Entity(source=key, key=f"{component}.{key}", component=component, name=name, area=area,
                  config={"command_topic": f"{key}/set", "state_topic": key, **config})


@pytest.fixture
def home() -> Catalogue:
    catalogue = Catalogue(None, aliases={"кухонный свет": "Kitchen Light"})
    for e in [entity("k", "light", "Kitchen Light", "Kitchen"), entity("lr", "light", "Lamp", "Living Room"),
              entity("b1", "light", "Bed Lamp Left", "Bedroom"), entity("b2", "light", "Bed Lamp Right", "Bedroom"),
              entity("f", "fan", "Ceiling Fan", "Bedroom"), entity("s", "switch", "Coffee Machine", "Kitchen")]:
        catalogue.entities[e.key] = e
    return catalogue


@pytest.mark.parametrize("said,expected", [
    ("kitchen light", ["Kitchen Light"]),  # the name
    ("кухонный свет", ["Kitchen Light"]),  # an alias from the config
    ("living room light", ["Lamp"]),  # room + kind
    ("свет в гостиной", ["Lamp"]),
    ("बैठक की लाइट", ["Lamp"]),
    ("the fan", ["Ceiling Fan"]),  # the only one of its kind
    ("coffe machine", ["Coffee Machine"]),  # a near miss
    ("bedroom light", ["Bed Lamp Left", "Bed Lamp Right"]),  # two: hearthd asks which
    ("garage door", []),  # nothing like it: never a guess
    ("tv", []),
])
def test_resolution(home: Catalogue, said: str, expected: list[str]) -> None:
    match = home.resolve(said, ("light", "switch", "fan"))
    assert sorted(e.name for e in match.entities) == expected


def test_state_tracking_and_availability(home: Catalogue) -> None:
    home.entities["light.k"].config.update({"schema": "json", "brightness_scale": 254,
                                            "availability_topic": "k/availability"})
    home.on_message("k", '{"state": "ON", "brightness": 127}')
    assert home.states["light.k"] == {"state": "on", "brightness": 50}
    home.on_message("k", "garbage {")  # ignored, nothing lost
    assert home.states["light.k"] == {"state": "on", "brightness": 50}
    home.on_message("k/availability", "offline")
    assert home.available["light.k"] is False


@pytest.mark.parametrize("template,payload,value", [
    ("{{ value_json.POWER }}", '{"POWER": "OFF"}', "OFF"),
    ("{{value_json['temperature']}}", '{"temperature": 19.5}', "19.5"),
    ("{{ value_json.a.b }}", '{"a": {"b": 3}}', "3"),
    ("{{ value }}", "ON", "ON"),
    ("{{ value_json.missing }}", '{"POWER": "OFF"}', None),
    ("{{ value_json.x }}", "not json", None),
    ("{% if value == 'x' %}1{% endif %}", "x", None),  # richer templates: not guessed at
])
def test_value_templates(template: str, payload: str, value: str | None) -> None:
    assert render_value_template(template, payload) == value


@pytest.mark.parametrize("answer,picked", [
    ("the left one", "Bed Lamp Left"), ("Bed Lamp Right", "Bed Lamp Right"), ("правую", None),
    ("the second", "Bed Lamp Right"), ("первую", "Bed Lamp Left"), ("दूसरी वाली", "Bed Lamp Right"),
    ("bed lamp rihgt", "Bed Lamp Right"), ("what time is it", None),
])
def test_which_one_is_read_from_the_answer(answer: str, picked: str | None) -> None:
    from hearthd.agent.parsing import ToolCall
    from hearthd.daemon.choice import chosen, held_choice, resolved_call
    from hearthd.tools.registry import ToolResult

    asked = ToolResult(False, {"code": "home-ambiguous", "candidates": ["Bed Lamp Left", "Bed Lamp Right"]},
                       "home.which")
    choice = held_choice(ToolCall("turn_off", {"device": "bedroom light"}), asked, "en", 30)
    assert choice is not None
    assert chosen(choice, answer) == picked
    if picked:
        assert resolved_call(choice, picked).arguments == {"device": picked}
