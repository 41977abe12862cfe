"""Finding the device the user means, and reading device state, without a broker."""

from __future__ import annotations

import pytest

from hearthd.tools.catalogue import Catalogue
from hearthd.tools.discovery import Entity
from hearthd.tools.templates import render_value_template

from .mqtt_sim import CommandRecorder as Recorder


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
    ("porch light", []),  # a kind word, but no light has that name: unknown, not "which of the lights?"
    ("свет на крыльце", []),
    ("बरामदे की लाइट", []),
    ("kitchen fan", []),  # a room with no fan: never the kitchen's other devices, nor a fan elsewhere
    ("вентилятор на кухне", []),
    ("bedroom coffee machine", []),  # the coffee machine is in the kitchen
    ("tv", []),
])
def test_resolution(home: Catalogue, said: str, expected: list[str]) -> None:
    match = home.resolve(said, ("light", "switch", "fan"))
    assert sorted(e.name for e in match.entities) == expected


@pytest.fixture
def named_home() -> Catalogue:
    """Names in three scripts, brand names whisper does not know, and two names one sound apart."""
    catalogue = Catalogue(None, aliases={"पढ़ने की लाइट": "Desk Lamp"})
    for e in [entity("k", "light", "Kitchen Light", "Kitchen"), entity("n", "light", "Nanoleaf", "Living Room"),
              entity("t", "light", "Торшер", "Living Room"), entity("g", "switch", "गीज़र", "Bathroom"),
              entity("r", "switch", "Roomba", "Hallway"), entity("tv", "switch", "TV", "Living Room"),
              entity("d1", "light", "Desk Lamp", "Office"), entity("d2", "light", "Deck Lamp", "Garden"),
              entity("bl", "light", "Bathroom Light", "Bathroom"), entity("bd", "light", "Bedroom Light", "Bedroom"),
              entity("c", "switch", "Cooler", "Nursery")]:
        catalogue.entities[e.key] = e
    return catalogue


@pytest.mark.parametrize("said,expected", [
    ("रूम्बा", ["Roomba"]),  # heard in Hindi, written in Latin in the catalogue
    ("румба", ["Roomba"]),
    ("rumba", ["Roomba"]),
    ("нано лиф", ["Nanoleaf"]),
    ("नैनोलीफ़", ["Nanoleaf"]),
    ("торжер", ["Торшер"]),  # a voiced ш: one sound off
    ("torsher", ["Торшер"]),
    ("geyser", ["गीज़र"]),
    ("गीजर", ["गीज़र"]),
    ("टीवी", ["TV"]),  # initials said as letters
    ("ти ви", ["TV"]),
    ("कूलर", ["Cooler"]),
    ("किचिन की लाइट", ["Kitchen Light"]),  # a room heard nearly, then the kind
    ("свет в гастиной", ["Nanoleaf", "Торшер"]),  # the living room (heard nearly) has two lights: which one?
    ("नर्सरी का कूलर", ["Cooler"]),  # the home's own room name, said in Devanagari
    ("पढ़ने की लाइट", ["Desk Lamp"]),  # an alias
    # near both of two names: both, and hearthd asks which; never one of them silently
    ("डेस लैंप", ["Deck Lamp", "Desk Lamp"]),
    ("डेक लैंप", ["Deck Lamp"]),  # each, said as it sounds, is that one
    ("डेस्क लैंप", ["Desk Lamp"]),
    ("बेडरुम लाइट", ["Bedroom Light"]),  # the Devanagari room word, as whisper spells it: the bedroom
    # nothing sounds like these: nothing, never the nearest device
    ("ट्यूबलाइट", []),
    ("пылесос", []),
    ("dishwasher", []),
    ("on", []),
])
def test_a_name_heard_nearly_is_found_by_its_sound(named_home: Catalogue, said: str, expected: list[str]) -> None:
    match = named_home.resolve(said, ("light", "switch"))
    assert sorted(e.name for e in match.entities) == expected


@pytest.mark.parametrize("said,expected", [
    ("blinds", ["Living Room Blinds"]),  # the kind word is in one cover's name: that one, not every cover
    ("the curtains", ["Bedroom Curtains"]),
    ("shutters", ["Bedroom Curtains", "Garage Door", "Living Room Blinds"]),  # in no name: every cover; hearthd asks
])
def test_a_kind_word_in_a_devices_name_names_that_device(said: str, expected: list[str]) -> None:
    catalogue = Catalogue(None)
    for e in [entity("lb", "cover", "Living Room Blinds", "Living Room"),
              entity("bc", "cover", "Bedroom Curtains", "Bedroom"), entity("gd", "cover", "Garage Door", "Garage")]:
        catalogue.entities[e.key] = e
    assert sorted(e.name for e in catalogue.resolve(said, ("cover",)).entities) == expected


@pytest.mark.parametrize("said,expected", [
    # a device said with a room it is not in: nothing (hearthd says it knows no such device), never the room's own
    # light, whose name shares the room's word ("bedroom tv" was the Bedroom Light, "bedroom desk lamp" too)
    ("bedroom tv", []), ("the tv in the bedroom", []), ("bedroom desk lamp", []), ("kitchen heater", []),
    ("bedroom lamp", ["Bedroom Light"]),  # the room's light, by its kind
    ("bedroom heatr", ["Heater"]), ("bedroom ceiling fen", ["Ceiling Fan"]),  # a near miss in the room: that one
    ("office desk lamp", ["Desk Lamp"]), ("tv", ["TV"]),
])
def test_a_device_said_in_a_room_it_is_not_in_is_not_the_rooms_own(said: str, expected: list[str]) -> None:
    catalogue = Catalogue(None)
    for e in [entity("t", "switch", "TV", "Living Room"), entity("b", "light", "Bedroom Light", "Bedroom"),
              entity("h", "switch", "Heater", "Bedroom"), entity("f", "fan", "Ceiling Fan", "Bedroom"),
              entity("d", "light", "Desk Lamp", "Office"), entity("k", "light", "Kitchen Light", "Kitchen")]:
        catalogue.entities[e.key] = e
    found = catalogue.resolve(said, ("light", "switch", "fan"))
    assert sorted(e.name for e in found.entities) == expected


@pytest.mark.parametrize("said,reply", [
    ("bedroom TV", "There's no TV there: the TV is in the Living Room."),
    ("the desk lamp in the bedroom", "There's no Desk Lamp there: the Desk Lamp is in the Office."),
    ("bedroom sauna", "I don't know a device called bedroom sauna."),  # nothing by that name anywhere
])
async def test_a_device_said_in_another_room_is_said_to_be_there_and_nothing_is_done(said: str, reply: str) -> None:
    """Before, "turn on the tv in the bedroom" switched on the Bedroom Light, whose name shares the room's word."""
    from hearthd.locale import phrase
    from hearthd.tools.registry import ToolRegistry
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    for e in [entity("t", "switch", "TV", "Living Room"), entity("b", "light", "Bedroom Light", "Bedroom"),
              entity("d", "light", "Desk Lamp", "Office")]:
        catalogue.entities[e.key] = e
    recorder = Recorder()

    async def link() -> Recorder:
        return recorder

    registry = ToolRegistry(SmartHome(catalogue, link).tools())
    result = await registry.get("turn_on").handler(registry.validate("turn_on", {"device": said}))
    assert not result.ok and recorder.sent == []
    assert phrase("en", result.phrase, **result.values) == reply


def test_a_room_heard_nearly_is_taken_only_when_it_is_clearly_that_room(named_home: Catalogue) -> None:
    assert named_home.area_heard("बेडरुम में") == ("bedroom", "बेडरुम")
    assert named_home.area_heard("в гастиной")[0] == "living room"
    assert named_home.area_heard("the nursry lamp")[0] == "nursery"  # the home's own room, not in home.toml
    assert named_home.area_heard("bedrum")[0] == "bedroom"  # the bedroom's very sounds; the bathroom is a vowel away
    assert named_home.area_heard("bidroom") == ("", "")  # as near one as the other: neither
    assert named_home.area_heard("turn it on") == ("", "")
    assert named_home.area_heard("the hole punch") == ("", "")  # "hall" is too short to be found by its sound


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
    ("{% if value == 'x' %}1{% endif %}", "x", "1"),  # Home Assistant's templates, in a sandbox
    ("{{ value_json.t | round(1) }}", '{"t": 19.456}', "19.5"),
    ("{{ value_json.b | default('off') }}", '{"a": 1}', "off"),
    ("{{ value_json.a }}", '{"a": {"b": 3}}', '{"b": 3}'),
    ("{% for i in range(9) %}{% for j in range(9) %}x{% endfor %}{% endfor %}", "x", None),  # no loops
    ("{{ value.center(1000000000) }}", "x", None),  # no calls
    ("{{ 'x' * 1000000000 }}", "x", None),  # no allocation without limit
    ("{{ 9 ** 9 ** 9 ** 9 ** 9 ** 9 }}", "x", None),
    ("{{ '%999999999d' % 1 }}", "x", None),
    ("{{ value.__class__.__mro__ }}", "x", None),  # the sandbox
    ("{{ value_json.x }}", "[" * 100_000, None),  # no RecursionError: refused before parsing
    ("{{ value_json.x }}", '{"x": Infinity}', None),
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


# -- hostile state (issue 14): a retained bad state must not break tracking, a restart or `hearthd ask` ---------


@pytest.mark.parametrize("payload", ["inf", "nan", "1e999", "-inf", "9" * 400, "Infinity"])
@pytest.mark.parametrize("key,field", [("position_topic", "position"), ("percentage_state_topic", "percentage"),
                                       ("brightness_state_topic", "brightness")])
def test_a_non_finite_number_on_a_state_topic_is_no_reading(payload: str, key: str, field: str) -> None:
    """Was `cannot convert float infinity to integer` out of on_message, which ended the MQTT link."""
    catalogue = Catalogue(None)
    e = entity("c", "cover", "Blinds", **{key: "c/value"})
    catalogue.entities[e.key] = e
    catalogue.on_message("c/value", "40")
    catalogue.on_message("c/value", payload)
    assert catalogue.states[e.key][field] in (40, round(100 * 40 / 255))


@pytest.mark.parametrize("payload", ['{"state":"ON","brightness":1e999}', '{"state":"ON","brightness":NaN}',
                                     '{"state":"ON","brightness":' + "9" * 400 + "}", "[" * 50_000,
                                     '{"state":"ON","x":' + "[" * 5000 + "]" * 5000 + "}"])
def test_a_json_light_state_that_is_not_finite_or_too_deep_is_ignored(payload: str) -> None:
    catalogue = Catalogue(None)
    e = entity("k", "light", "Kitchen Light", schema="json")
    catalogue.entities[e.key] = e
    catalogue.on_message("k", '{"state": "ON", "brightness": 127}')
    catalogue.on_message("k", payload)
    assert catalogue.states[e.key] == {"state": "on", "brightness": 50}


def test_a_deep_value_json_state_and_an_odd_scale_spoil_only_their_entity() -> None:
    catalogue = Catalogue(None)
    a = entity("a", "sensor", "Temperature", value_template="{{ value_json.t }}", state_topic="shared")
    b = entity("b", "light", "Lamp", brightness_state_topic="shared", brightness_scale="not a number")
    c = entity("c", "sensor", "Humidity", state_topic="shared")
    for e in (a, b, c):
        catalogue.entities[e.key] = e
    catalogue.on_message("shared", "[" * 100_000)  # RecursionError before
    assert "sensor.a" not in catalogue.states or catalogue.states["sensor.a"].get("state") != "[" * 10
    catalogue.on_message("shared", "12")
    assert catalogue.states["sensor.c"] == {"state": "12"}
    assert catalogue.states["light.b"] == {"brightness": 5}  # the scale that is no number: HA's 255


def test_a_state_longer_than_home_assistant_allows_is_not_kept() -> None:
    catalogue = Catalogue(None)
    e = entity("s", "sensor", "Note")
    catalogue.entities[e.key] = e
    catalogue.on_message("s", "x" * 100_000)
    assert catalogue.states.get(e.key, {}) == {}


def test_the_catalogue_refuses_entities_beyond_its_bound() -> None:
    from hearthd.tools.catalogue import CatalogueFull
    from hearthd.tools.discovery import Discovery

    catalogue = Catalogue(None, max_entities=3)
    for i in range(3):
        catalogue.apply(Discovery(f"l{i}", [entity(f"l{i}", "light", f"Lamp {i}")]))
    with pytest.raises(CatalogueFull):
        catalogue.apply(Discovery("l3", [entity("l3", "light", "Lamp 3")]))
    assert len(catalogue.entities) == 3
    catalogue.apply(Discovery("l0", [entity("l0", "light", "Lamp zero")]))  # a known one may still change
    assert catalogue.entities["light.l0"].name == "Lamp zero"
    catalogue.apply(Discovery("l1", []))  # and go
    catalogue.apply(Discovery("l3", [entity("l3", "light", "Lamp 3")]))
    assert len(catalogue.entities) == 3


# -- command templates: what Home Assistant would send -----------------------------------------------------------


async def _command(config: dict[str, object], component: str, tool: str, args: dict[str, object]) -> list:
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    e = entity("d", component, "Front Door", **config)
    catalogue.entities[e.key] = e
    recorder = Recorder()

    async def link() -> Recorder:
        return recorder

    (found,) = [t for t in SmartHome(catalogue, link).tools() if t.name == tool]
    result = await found.handler(args)
    return [result.ok, *recorder.sent]


@pytest.mark.parametrize("component,tool,args,config,sent", [
    # Zigbee2MQTT's lock: HA renders command_template (was a bare LOCK)
    ("lock", "lock_door", {"door": "front door"}, {"command_template": '{"state": "{{ value }}"}'},
     ("d/set", '{"state": "LOCK"}')),
    ("lock", "unlock_door", {"door": "front door"},
     {"command_template": '{"state": "{{ value }}"}', "payload_unlock": "OPEN"}, ("d/set", '{"state": "OPEN"}')),
    ("lock", "lock_door", {"door": "front door"}, {}, ("d/set", "LOCK")),  # no template: the payload itself
    ("fan", "set_fan_speed", {"device": "front door", "percent": 60},
     {"percentage_command_topic": "d/pct", "percentage_command_template": '{"speed": {{ value }}}'},
     ("d/pct", '{"speed": 60}')),
    ("fan", "turn_on", {"device": "front door"}, {"command_template": '{"state": "{{ value }}"}'},
     ("d/set", '{"state": "ON"}')),
    ("cover", "set_cover_position", {"device": "front door", "percent": 30},
     {"set_position_topic": "d/pos", "set_position_template": '{"position": {{ position }}}'},
     ("d/pos", '{"position": 30}')),
    ("light", "set_brightness", {"device": "front door", "percent": 50},
     {"brightness_command_topic": "d/bri", "brightness_command_template": "Dimmer {{ value }}"},
     ("d/bri", "Dimmer 128")),
    ("light", "set_color", {"device": "front door", "color": "red"},
     {"rgb_command_topic": "d/rgb", "rgb_command_template": "{{ '%02x%02x%02x' | format(red, green, blue) }}"},
     None),  # `format` is not among the sandbox's filters: refused, nothing sent
    ("light", "set_color", {"device": "front door", "color": "blue"},
     {"rgb_command_topic": "d/rgb", "rgb_command_template": '{"r": {{ red }}, "g": {{ green }}, "b": {{ blue }}}'},
     ("d/rgb", '{"r": 0, "g": 0, "b": 255}')),
    # Zigbee2MQTT's fans: a speed range and a template that names the speed
    ("fan", "set_fan_speed", {"device": "front door", "percent": 60},
     {"percentage_command_topic": "d/pct", "speed_range_min": 1, "speed_range_max": 3,
      "percentage_command_template": "{{ {0: 'off', 1: 'low', 2: 'medium', 3: 'high'}[value] | default('') }}"},
     ("d/pct", "medium")),
    ("climate", "set_climate_mode", {"device": "front door", "mode": "heat"},
     {"mode_command_topic": "d/mode", "mode_command_template": '{"system_mode": "{{ value }}"}'},
     ("d/mode", '{"system_mode": "heat"}')),
])
async def test_command_templates_are_rendered_as_home_assistant_does(component: str, tool: str,
                                                                     args: dict[str, object],
                                                                     config: dict[str, object],
                                                                     sent: tuple[str, str] | None) -> None:
    outcome = await _command(config, component, tool, args)
    if sent is None:
        assert outcome == [False]
    else:
        assert outcome == [True, sent]


def test_a_lone_surrogate_in_a_state_does_not_stop_the_catalogue_saving(tmp_path) -> None:  # type: ignore[no-untyped-def]
    catalogue = Catalogue(tmp_path / "devices.json")
    e = entity("s", "sensor", "Note", value_template="{{ value_json.v }}")
    catalogue.entities[e.key] = e
    catalogue.on_message("s", '{"v": "a \\ud800 b"}')  # refused by the bounded JSON: the raw payload is kept
    catalogue.states[e.key]["extra"] = "\ud800"  # and should one get in anyway, the file is still written
    catalogue.save()
    assert Catalogue(tmp_path / "devices.json").states[e.key]["extra"] == "\ud800"


def test_a_fan_speed_in_a_range_is_read_back_as_a_percentage() -> None:
    catalogue = Catalogue(None)
    e = entity("f", "fan", "Fan", percentage_state_topic="f/pct", speed_range_min=1, speed_range_max=3,
               percentage_value_template="{{ {'off': 0, 'low': 1, 'medium': 2, 'high': 3}[value_json.fan_mode] }}")
    catalogue.entities[e.key] = e
    catalogue.on_message("f/pct", '{"fan_mode": "medium"}')
    assert catalogue.states[e.key]["percentage"] == 66


@pytest.mark.parametrize("reported,step,sent", [
    ('{"fan_mode": "low"}', "up", "medium"), ('{"fan_mode": "medium"}', "up", "high"),
    ('{"fan_mode": "high"}', "up", "high"),  # at its fastest it stays there
    ('{"fan_mode": "high"}', "down", "medium"), ('{"fan_mode": "low"}', "down", "low"),  # turned down, never off
    (None, "up", "high"),  # on at a speed never reported: taken as the middle one
])
async def test_a_fan_turned_up_or_down_goes_one_speed_from_where_it_is(reported: str | None, step: str,
                                                                      sent: str) -> None:
    """"Turn the fan up", "पंखा धीमा कर दो", «вентилятор побыстрее»: one of Home Assistant's three speeds from the
    one the fan last reported, sent as the fan's own template names it."""
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    e = entity("f", "fan", "Ceiling Fan", percentage_state_topic="f/pct", percentage_command_topic="f/pct/set",
               speed_range_min=1, speed_range_max=3,
               percentage_value_template="{{ {'off': 0, 'low': 1, 'medium': 2, 'high': 3}[value_json.fan_mode] }}",
               percentage_command_template="{{ {0: 'off', 1: 'low', 2: 'medium', 3: 'high'}[value] }}")
    catalogue.entities[e.key] = e
    if reported is not None:
        catalogue.on_message("f/pct", reported)
    recorder = Recorder()

    async def link() -> Recorder:
        return recorder

    (fan,) = [t for t in SmartHome(catalogue, link).tools() if t.name == "set_fan_speed"]
    result = await fan.handler({"device": "ceiling fan", "step": step})
    assert result.ok and recorder.sent == [("f/pct/set", sent)]


async def test_a_fan_that_is_off_is_not_turned_down_and_a_speed_is_asked_for_when_none_is_said() -> None:
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    e = entity("f", "fan", "Ceiling Fan", state_topic="f/state", percentage_command_topic="f/pct/set")
    catalogue.entities[e.key] = e
    catalogue.on_message("f/state", "OFF")
    recorder = Recorder()

    async def link() -> Recorder:
        return recorder

    (fan,) = [t for t in SmartHome(catalogue, link).tools() if t.name == "set_fan_speed"]
    off = await fan.handler({"device": "ceiling fan", "step": "down"})
    assert off.ok and off.phrase == "home.is_off" and recorder.sent == []
    nothing = await fan.handler({"device": "ceiling fan"})
    assert not nothing.ok and nothing.phrase == "home.speed_missing" and recorder.sent == []


@pytest.mark.parametrize("unit,low,high,sent", [("F", 45, 95, [("t/set", "72")]), ("C", 7, 30, [])])
async def test_a_thermostat_in_fahrenheit_takes_seventy_two_and_one_in_celsius_says_its_range(
        unit: str, low: int, high: int, sent: list[tuple[str, str]]) -> None:
    """"Set the thermostat to seventy two": a thermostat Home Assistant runs in °F (45-95) is set to it (the tool's
    schema stopped at 35 °C, so it never could be, and the model then chose the lights' brightness); one in °C says
    the range it can be set between, and nothing is sent."""
    from hearthd.tools.registry import ToolRegistry
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    e = entity("t", "climate", "Thermostat", "Living Room", temperature_command_topic="t/set", min_temp=low,
               max_temp=high, temperature_unit=unit)
    catalogue.entities[e.key] = e
    recorder = Recorder()

    async def link() -> Recorder:
        return recorder

    registry = ToolRegistry(SmartHome(catalogue, link).tools())
    result = await registry.get("set_temperature").handler(registry.validate("set_temperature", {"temperature": 72}))
    assert recorder.sent == sent
    assert (result.ok, result.phrase) == ((True, "home.temperature_set") if sent else (False, "home.out_of_range"))
