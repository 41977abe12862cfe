"""Smart home over MQTT against a real mosquitto on 127.0.0.1 and a simulated home (Zigbee2MQTT, Tasmota, ESPHome
devices announced by Home Assistant discovery). Every request here is one the fast path knows: no model loads."""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.mqtt import Handlers
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import Trace
from hearthd.language import language_of_text
from hearthd.locale import phrase
from hearthd.spoken import say_count
from hearthd.tools.catalogue import Catalogue
from hearthd.tools.smarthome import CommandNotSent

from .conversation import Conversation
from .mqtt_sim import DEVICES, DeviceSimulator, simulator
from .services import Broker

KITCHEN_SET = DEVICES["kitchen_light"].commands["command"]
LANGS = ["en", "ru", "hi"]


async def until(condition: Callable[[], object], what: str, timeout: float = 3) -> None:
    """Wait until `condition()` holds, looking every 10 ms; the test fails when it does not within `timeout`.
    For something that must happen; a wait that gives something the chance to happen wrongly stays a sleep."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail(f"not within {timeout:g} s: {what}")
        await asyncio.sleep(0.01)


def learned(catalogue: Catalogue, home: DeviceSimulator) -> bool:
    """Every device of the simulated home (those not removed) is catalogued, each entity with a state topic with
    the state the home published."""
    sources = {DEVICES[d].config_topic(home.prefix)[len(home.prefix) + 1:-len("/config")] for d in DEVICES
               if d not in home.removed}
    known = [(key, e) for key, e in catalogue.entities.items() if e.source in sources]
    return sources <= {e.source for _, e in known} and all(key in catalogue.states for key, e in known
                                                           if e.config.get("state_topic"))


def state_of(catalogue: Catalogue, name: str) -> dict[str, Any]:
    """The tracked state of the entity called `name` ({} while none arrived)."""
    return next((catalogue.states.get(key, {}) for key, e in catalogue.entities.items() if e.name == name), {})



@pytest.fixture
def mqtt_config(base_config: Config, broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))  # a device catalogue of this test's own
    cfg = copy.deepcopy(base_config)
    cfg.mqtt.port = broker.port
    cfg.mqtt.node_id = "testnode"
    cfg.mqtt.command_timeout_s = 2.0
    cfg.mqtt.settle_s = 0.15  # a broker on loopback replays its retained messages within milliseconds
    cfg.dbus.enabled = False
    return cfg


@pytest.fixture
async def home(broker: Broker) -> AsyncIterator[DeviceSimulator]:
    async with simulator(broker.port) as sim:
        yield sim


@pytest.fixture
async def hearthd(mqtt_config: Config) -> AsyncIterator[Conversation]:
    h = Conversation(mqtt_config)
    yield h
    await h.close()


# -- acting -----------------------------------------------------------------------------------------------------

TURN_OFF_KITCHEN = {"en": "turn off the kitchen light", "ru": "выключи свет на кухне", "hi": "रसोई की लाइट बंद करो"}


@pytest.mark.parametrize("lang", LANGS)
async def test_turn_off_the_kitchen_light_in_each_language(hearthd: Conversation, home: DeviceSimulator,
                                                           lang: str) -> None:
    reply = await hearthd.say(TURN_OFF_KITCHEN[lang])
    assert reply == phrase(lang, "home.off", name="Kitchen Light")
    await home.wait_for_state("kitchen_light", state="OFF")
    assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"}))]


@pytest.mark.parametrize("lang,said", [("en", "don't turn off the kitchen light"), ("ru", "не выключай свет на кухне"),
                                       ("hi", "रसोई की लाइट बंद मत करो")])
async def test_told_not_to_turn_off_the_light_it_stays_on(hearthd: Conversation, home: DeviceSimulator, lang: str,
                                                          said: str) -> None:
    assert await hearthd.say(said) == phrase(lang, "agent.leave_it")
    await asyncio.sleep(0.2)
    assert home.commands == []


async def test_a_tasmota_lamp_is_found_by_its_room(hearthd: Conversation, home: DeviceSimulator) -> None:
    await home.update("living_room_lamp", POWER="OFF")
    assert await hearthd.say("turn on the living room light") == phrase("en", "home.on", name="Living Room Lamp")
    await home.wait_for_command()
    assert home.commands == [("tasmota_ABC123/cmnd/POWER", "ON")]


async def test_brightness_colour_and_white(hearthd: Conversation, home: DeviceSimulator) -> None:
    assert await hearthd.say("set the kitchen light to 40 percent") == phrase(
        "en", "home.brightness", name="Kitchen Light", percent=say_count(40, "percent", "en"))
    await home.wait_for_command(1)
    assert json.loads(home.commands[-1][1]) == {"state": "ON", "brightness": 102}  # 40 % of Zigbee's 254
    await hearthd.say("make the kitchen light blue")
    await hearthd.say("make the kitchen light warm white")
    await home.wait_for_command(3)
    assert json.loads(home.commands[1][1]) == {"state": "ON", "color": {"r": 0, "g": 0, "b": 255}}
    assert json.loads(home.commands[2][1]) == {"state": "ON", "color_temp": 370}  # 2700 K in mireds


async def test_covers_climate_fan_and_scene(hearthd: Conversation, home: DeviceSimulator) -> None:
    await hearthd.say("close the bedroom blinds")
    await hearthd.say("set the heating to 22.5 degrees")
    await hearthd.say("set the bedroom fan to 60 percent")
    await hearthd.say("activate the movie night scene")
    await home.wait_for_command(4)
    assert home.commands_to("bedroom_blinds") == ["CLOSE"]
    assert home.commands_to("living_room_thermostat") == ["22.5"]
    assert home.commands_to("bedroom_fan") == ["60"]
    assert home.commands_to("movie_night") == ["ON"]


async def test_a_temperature_out_of_range_is_refused(hearthd: Conversation, home: DeviceSimulator) -> None:
    assert await hearthd.say("set the heating to 35 degrees") == phrase(
        "en", "home.out_of_range", name="Living Room Thermostat", low="7", high="30")
    await asyncio.sleep(0.2)
    assert home.commands == []


async def test_the_heating_turned_up_or_down_by_degrees_counts_from_its_target(hearthd: Conversation,
                                                                              home: DeviceSimulator) -> None:
    """"Turn the heating up two degrees": from the target the thermostat reports (21), in each language, the step
    read from the words; the reply says the temperature it now is. Past the thermostat's range it is refused."""
    await hearthd.components.mqtt_link().ready()
    catalogue = hearthd.components.catalogue
    await until(lambda: state_of(catalogue, "Living Room Thermostat").get("target") == 21.0, "the target tracked")
    steps = [("turn the heating up by two degrees", "en", 23.0), ("убавь отопление на полградуса", "ru", 22.5),
             ("एसी का तापमान दो डिग्री कम करो", "hi", 20.5), ("make it a degree warmer", "en", 21.5)]
    for said, lang, now in steps:
        assert await hearthd.say(said) == phrase(lang, "home.temperature_set", name="Living Room Thermostat",
                                                 temperature=f"{now:g}")
        await until(lambda now=now: state_of(catalogue, "Living Room Thermostat").get("target") == now,
                    f"{said!r}: the thermostat at {now}")
    assert home.commands_to("living_room_thermostat") == ["23", "22.5", "20.5", "21.5"]
    assert await hearthd.say("turn the heating up by nine degrees") == phrase(
        "en", "home.out_of_range", name="Living Room Thermostat", low="7", high="30")
    await asyncio.sleep(0.2)
    assert home.commands_to("living_room_thermostat") == ["23", "22.5", "20.5", "21.5"]


async def test_a_step_from_a_target_never_reported_is_not_guessed(hearthd: Conversation, home: DeviceSimulator) -> None:
    """A thermostat that has not said what it is set to: "two degrees warmer" than what? It says so and sends
    nothing; a temperature said outright still works."""
    await hearthd.components.mqtt_link().ready()
    catalogue = hearthd.components.catalogue
    await until(lambda: state_of(catalogue, "Living Room Thermostat").get("target") == 21.0, "the target tracked")
    key = next(k for k, e in catalogue.entities.items() if e.name == "Living Room Thermostat")
    catalogue.states[key].pop("target")
    for said, lang in [("turn the heating up by two degrees", "en"), ("прибавь отопление на два градуса", "ru")]:
        assert await hearthd.say(said) == phrase(lang, "home.temperature_unknown", name="Living Room Thermostat")
    await asyncio.sleep(0.2)
    assert home.commands_to("living_room_thermostat") == []
    await hearthd.say("set the heating to 19")
    await home.wait_for_command()
    assert home.commands_to("living_room_thermostat") == ["19"]
    # neither a temperature nor a step (no sentence makes such a call; the model's must give the temperature): asked
    neither = await hearthd.components.tools.get("set_temperature").handler({})
    assert (neither.ok, neither.phrase) == (False, "home.temperature_missing")
    assert home.commands_to("living_room_thermostat") == ["19"]


@pytest.mark.parametrize("lang,unlock,yes", [("en", "unlock the front door", "yes"),
                                             ("ru", "открой входную дверь", "да"),
                                             ("hi", "सामने का दरवाज़ा खोलो", "हाँ")])
async def test_unlocking_asks_first(hearthd: Conversation, home: DeviceSimulator, lang: str, unlock: str,
                                    yes: str) -> None:
    question = await hearthd.say(unlock)
    assert question.startswith(phrase(lang, "confirm.unlock_door", door="§").split("§")[0])
    await asyncio.sleep(0.3)
    assert home.commands == []  # nothing before the yes
    assert await hearthd.say(yes) == phrase(lang, "home.unlocked", name="Front Door")
    await home.wait_for_command()
    assert home.commands_to("front_door") == ["UNLOCK"]


async def test_arming_and_disarming_the_alarm_ask_first(hearthd: Conversation, home: DeviceSimulator) -> None:
    assert await hearthd.say("disarm the alarm") == phrase("en", "confirm.disarm_alarm")
    assert await hearthd.say("no") == phrase("en", "confirm.cancelled")
    assert await hearthd.say("arm the alarm") == phrase("en", "confirm.arm_alarm")
    assert await hearthd.say("yes") == phrase("en", "home.armed_away", name="House Alarm")
    await home.wait_for_command()
    assert home.commands_to("house_alarm") == ["ARM_AWAY"]


# -- asking ---------------------------------------------------------------------------------------------------


async def test_questions_are_answered_from_tracked_state(hearthd: Conversation, home: DeviceSimulator) -> None:
    await hearthd.say("turn off the kitchen light")
    await home.wait_for_state("kitchen_light", state="OFF")
    await until(lambda: state_of(hearthd.components.catalogue, "Kitchen Light").get("state") == "off",
                "the kitchen light's new state reaches hearthd")
    # a yes/no question says no, and what it is (the sentence library reads the question with the home's names)
    assert await hearthd.say("is the kitchen light on") == phrase("en", "home.q_one_no", name="Kitchen Light",
                                                                  state=phrase("en", "state_one.off"))
    assert await hearthd.say("what's the temperature in the bedroom") == phrase(
        "en", "home.temperature", value="19.5", place="Bedroom")
    assert await hearthd.say("какая температура в спальне") == phrase(
        "ru", "home.temperature", value="19.5", place="Bedroom")


async def test_an_unknown_device_is_said_not_guessed(hearthd: Conversation, home: DeviceSimulator) -> None:
    assert await hearthd.say("turn off the tv") == phrase("en", "home.unknown_device", name="tv")
    await asyncio.sleep(0.2)
    assert home.commands == []


async def test_a_device_asked_for_what_its_kind_cannot_do_says_what_it_can(hearthd: Conversation,
                                                                          home: DeviceSimulator) -> None:
    """The model's turn_on of the front door (a lock) was answered "I don't know a device called front door": the
    door is known, and what can be done with it is said; nothing is sent."""
    await hearthd.components.mqtt_link().ready()
    tools = hearthd.components.tools
    result = await tools.get("turn_on").handler({"device": "front door"})
    assert (result.ok, result.phrase, result.data["code"]) == (False, "home.other_kind_lock", "home-other-kind")
    assert phrase("en", result.phrase, **result.values) == "The Front Door can't do that; I can lock or unlock it."
    result = await tools.get("lock_door").handler({"door": "kitchen light"})
    assert result.phrase == "home.other_kind_light"
    result = await tools.get("turn_on").handler({"device": "sauna"})  # nothing of any kind: as before
    assert result.phrase == "home.unknown_device"
    await asyncio.sleep(0.2)
    assert home.commands_to("front_door") == [] and home.commands_to("kitchen_light") == []


# -- learning ---------------------------------------------------------------------------------------------------


async def test_discovery_learns_every_device_and_forgets_removed_ones(hearthd: Conversation, home: DeviceSimulator,
                                                                      mqtt_config: Config) -> None:
    await hearthd.components.mqtt_link().ready()
    catalogue = hearthd.components.catalogue
    by_name = {e.name: e for e in catalogue.entities.values()}
    assert by_name["Living Room Lamp"].config["command_topic"] == "tasmota_ABC123/cmnd/POWER"  # `~` and cmd_t
    assert by_name["Living Room Lamp"].area == "Living Room"
    sensors = [e for e in catalogue.entities.values() if e.source == "device/bedroom_multisensor"]
    assert sorted(e.component for e in sensors) == ["binary_sensor", "sensor", "sensor"]  # device-based `cmps`
    await home.remove("coffee_machine")
    await until(lambda: "Coffee Machine" not in {e.name for e in catalogue.entities.values()},
                "the empty retained config reaches hearthd")
    assert "Coffee Machine" not in {e.name for e in catalogue.entities.values()}
    # saved: the next start knows the devices before the broker says anything
    again = Components(mqtt_config)
    assert {e.name for e in again.catalogue.entities.values()} == {e.name for e in catalogue.entities.values()}


async def test_malformed_payloads_are_ignored(hearthd: Conversation, home: DeviceSimulator) -> None:
    link = await hearthd.components.mqtt_link().ready()
    await home.publish_raw("homeassistant/light/bad/config", b"{not json", retain=False)
    await home.publish_raw("homeassistant/light/bad2/config", json.dumps({"cmd_t": 5, "name": ["x"]}))
    await home.publish_raw("homeassistant/device/bad3/config", json.dumps({"cmps": "nope"}))
    await home.publish_raw(DEVICES["kitchen_light"].topics["state"], b"\xff\xfe garbage")
    await home.publish_raw(DEVICES["bedroom_multisensor"].topics.get("state", "esphome/bedroom_multisensor/state"),
                           "[1, 2")
    await asyncio.sleep(0.3)
    assert link.connected
    assert await hearthd.say("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")


# -- hearthd as a Home Assistant device ---------------------------------------------------------------------------


async def _collect(port: int, topic: str, seconds: float) -> list[tuple[str, str, bool]]:
    seen = []
    async with aiomqtt.Client("127.0.0.1", port, identifier="test-observer") as client:
        await client.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(seconds):
                async for m in client.messages:
                    seen.append((m.topic.value, bytes(m.payload).decode(), m.retain))
        except TimeoutError:
            pass
    return seen


async def test_automations_ask_and_control_hearthd(mqtt_config: Config, broker: Broker,
                                                   home: DeviceSimulator) -> None:
    components = Components(mqtt_config)
    pipeline = Pipeline(components, Trace())
    muted: list[bool] = []

    async def ask(text: str, lang: str | None, conversation: str, request_id: str | None = None) -> str:
        return (await pipeline.run_text(text, language=lang, conversation=conversation)).reply

    components.mqtt_one_shot = False
    components.mqtt_handlers = Handlers(ask=ask, mute=muted.append)
    await components.mqtt_link().ready()
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            await automation.subscribe("hearthd/testnode/reply", qos=1)
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": "выключи свет на кухне",
                                                                        "lang": "ru"}), qos=1)
            await automation.publish("hearthd/testnode/ask", "{broken", qos=1)  # logged and ignored
            await automation.publish("hearthd/testnode/mute/set", "ON", qos=1)
            async with asyncio.timeout(5):
                async for m in automation.messages:
                    reply = json.loads(bytes(m.payload))
                    break
        assert reply == {"text": phrase("ru", "home.off", name="Kitchen Light"), "lang": "ru", "id": reply["id"],
                         "conversation_id": reply["id"]}  # no id asked with: a fresh one, told
        await home.wait_for_command()
        assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"}))]
        await until(lambda: muted and components.mqtt.status["muted"] == "ON", "the mute is read and taken")
        assert muted == [True] and components.mqtt.status["muted"] == "ON"
    finally:
        await components.close()


@pytest.mark.parametrize(("text", "tag", "said_in"), [
    ("set a timer for 10 minutes", "ru", "en"),  # the automation's language, not the words': read as they are
    ("close the bedroom blinds", "hi", "en"),
    ("выключи свет на кухне", "en", "ru"),
    ("रसोई की लाइट बंद करो", "en-US", "hi"),
    ("light band kar do", "hi", "hi"),  # romanised Hindi is Hindi
    ("turn off the kitchen light", "en-GB", "en"),  # a region tag is its language
])
async def test_an_ask_is_read_in_the_language_its_words_are_written_in(mqtt_config: Config, broker: Broker,
                                                                        home: DeviceSimulator, text: str, tag: str,
                                                                        said_in: str) -> None:
    components = Components(mqtt_config)
    pipeline = Pipeline(components, Trace())
    read_in: list[str] = []

    async def ask(text: str, lang: str | None, conversation: str, request_id: str | None = None) -> str:
        result = await pipeline.run_text(text, language=lang, conversation=conversation)
        read_in.append(result.lang)
        return result.reply

    components.mqtt_one_shot = False
    components.mqtt_handlers = Handlers(ask=ask)
    await components.mqtt_link().ready()
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            await automation.subscribe("hearthd/testnode/reply", qos=1)
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": text, "lang": tag}), qos=1)
            async with asyncio.timeout(10):
                async for m in automation.messages:
                    reply = json.loads(bytes(m.payload))
                    break
        assert read_in == [said_in]
        assert language_of_text(reply["text"], ["en", "ru", "hi"], "xx") == said_in, reply  # answered in it too
    finally:
        await components.close()


# -- a broker that goes away ------------------------------------------------------------------------------------


async def test_a_command_given_while_the_broker_restarts_is_sent_once(hearthd: Conversation, home: DeviceSimulator,
                                                                      broker: Broker) -> None:
    link = await hearthd.components.mqtt_link().ready()
    broker.stop()
    await until(lambda: not link.connected, "hearthd sees the broker gone")
    assert not link.connected
    turn = asyncio.create_task(hearthd.say("turn off the kitchen light"))
    await asyncio.sleep(0.5)
    assert not turn.done()  # waiting for the broker, not failed, not dropped
    broker.start()
    reply = await asyncio.wait_for(turn, 10)
    assert reply == phrase("en", "home.off", name="Kitchen Light")
    await home.wait_connected(2)
    await home.wait_for_command()
    await asyncio.sleep(0.5)
    assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"}))]  # exactly once


async def test_a_command_the_broker_never_takes_is_reported_and_not_sent_late(hearthd: Conversation,
                                                                             home: DeviceSimulator,
                                                                             broker: Broker) -> None:
    link = await hearthd.components.mqtt_link().ready()
    broker.stop()
    for _ in range(100):  # a command handed over just as the connection breaks is "uncertain", rightly: not this
        if not link.connected:
            break
        await asyncio.sleep(0.05)
    assert not link.connected
    reply = await hearthd.say("выключи свет на кухне")
    assert reply == phrase("ru", "home.not_sent", name="Kitchen Light")
    (result,) = hearthd.results()
    assert result["ok"] is False and result["result"]["code"] == "mqtt-not-sent"
    broker.start()
    await home.wait_connected(2)
    for _ in range(200):  # hearthd reconnects too (its backoff may have grown to 4 s while the broker was away)
        if hearthd.components.mqtt.connected:
            break
        await asyncio.sleep(0.05)
    assert hearthd.components.mqtt.connected
    await asyncio.sleep(0.5)  # anything queued would go out right after the reconnect
    assert home.commands == []  # the user was told it failed: it must not happen behind their back


async def test_a_command_the_client_refuses_fails_alone_and_the_next_one_goes(hearthd: Conversation,
                                                                             home: DeviceSimulator) -> None:
    """A command to a topic the MQTT client will not publish to (a wildcard: discovery refuses such devices now, a
    hostile run found one) fails at once; the link keeps its connection and its sender, and the next command goes
    out. The sender used to end on it, leaving that turn waiting forever and every later command unsent."""
    link = await hearthd.components.mqtt_link().ready()
    connections = link.connections
    with pytest.raises(CommandNotSent) as refused:
        async with asyncio.timeout(3):
            await link.publish("zigbee2mqtt/+/set", json.dumps({"state": "OFF"}))
    assert not refused.value.uncertain  # never handed to the broker
    assert await hearthd.say("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")
    await home.wait_for_command()
    assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"}))]
    assert link.connections == connections


async def test_a_command_left_waiting_at_stop_is_not_logged_as_an_unread_error(mqtt_config: Config,
                                                                               broker: Broker) -> None:
    """A turn cancelled while its command waited for the broker (hearthd stopping): the command is failed, and
    asyncio does not log "Future exception was never retrieved" for it (an ERROR line at every such stop)."""
    import gc

    loop = asyncio.get_running_loop()
    unread: list[dict[str, Any]] = []
    loop.set_exception_handler(lambda _loop, context: unread.append(context))
    try:
        h = Conversation(mqtt_config)
        link = await h.components.mqtt_link().ready()
        broker.stop()
        await until(lambda: not link.connected, "the link saw the broker go")
        sending = asyncio.create_task(link.publish("zigbee2mqtt/kitchen/set", "OFF"))
        await until(lambda: len(link._queue) == 1, "the command queued")
        sending.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await sending
        await h.close()
        assert not link._queue
        del sending
        gc.collect()
        await asyncio.sleep(0)
        assert not [c for c in unread if "never retrieved" in str(c.get("message"))], unread
    finally:
        loop.set_exception_handler(None)


async def test_no_broker_at_all_is_not_available(mqtt_config: Config, broker: Broker) -> None:
    broker.stop()
    h = Conversation(mqtt_config)
    try:
        assert await h.say("turn off the kitchen light") == phrase("en", "unavailable.home")
    finally:
        await h.close()


@pytest.mark.parametrize("lang", LANGS)
async def test_hearthd_ask_from_the_command_line(broker: Broker, home: DeviceSimulator, tmp_path: Path,
                                                 lang: str) -> None:
    """`hearthd ask "…"` in its own process learns the devices from the broker and switches the light off."""
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state"),
           "HEARTHD__MQTT__PORT": str(broker.port), "HEARTHD__DBUS__ENABLED": "false"}
    proc = await asyncio.create_subprocess_exec(sys.executable, "-m", "hearthd", "ask", TURN_OFF_KITCHEN[lang],
                                                "--json", env=env, cwd=Path(__file__).resolve().parent.parent,
                                                stdout=subprocess.PIPE)
    out, _ = await asyncio.wait_for(proc.communicate(), 120)
    assert proc.returncode == 0, out
    events = [json.loads(line) for line in out.decode().splitlines() if line.startswith("{")]
    (reply,) = [e for e in events if e["type"] == "reply"]
    assert reply["text"] == phrase(lang, "home.off", name="Kitchen Light")
    await home.wait_for_command()
    assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"}))]


async def test_toggle_open_part_way_mode_and_lock(hearthd: Conversation, home: DeviceSimulator) -> None:
    await home.wait_for_state("kitchen_light", state="ON")
    await hearthd.components.mqtt_link().ready()
    await until(lambda: learned(hearthd.components.catalogue, home)
                and state_of(hearthd.components.catalogue, "Kitchen Light").get("state") == "on",
                "hearthd knows the devices and that the kitchen light is on")
    assert await hearthd.say("toggle the kitchen light") == phrase("en", "home.off", name="Kitchen Light")
    assert await hearthd.say("open the bedroom blinds") == phrase("en", "home.cover_open", name="Bedroom Blinds")
    assert await hearthd.say("открой шторы в спальне наполовину") == phrase(
        "ru", "home.cover_position", name="Bedroom Blinds", percent=say_count(50, "percent", "ru"))
    assert await hearthd.say("switch the thermostat to cooling") == phrase(
        "en", "home.mode_set", name="Living Room Thermostat", mode=phrase("en", "modes.cool"))
    assert await hearthd.say("lock the front door") == phrase("en", "home.locked", name="Front Door")  # no question
    await home.wait_for_command(5)
    assert json.loads(home.commands_to("kitchen_light")[0]) == {"state": "OFF"}
    assert home.commands_to("bedroom_blinds") == ["OPEN", "50"]
    assert home.commands_to("living_room_thermostat") == ["cool"]
    assert home.commands_to("front_door") == ["LOCK"]


async def test_a_broker_with_a_password(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """mqtt.username/password reach the broker; a wrong password is "not available", not a crash."""
    import shutil
    import subprocess

    if not shutil.which("mosquitto_passwd"):
        pytest.skip("mosquitto_passwd is not installed")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    broker = Broker(tmp_path)
    if broker.binary is None:
        pytest.skip("mosquitto is not installed")
    passwords = tmp_path / "passwords"
    subprocess.run(["mosquitto_passwd", "-b", "-c", str(passwords), "hearthd", "s3cret"], check=True)
    import os

    # As root mosquitto drops to its own user, which cannot read this test's private temp dir: stay root.
    stay = "user root\n" if os.geteuid() == 0 else ""
    broker.conf.write_text(f"listener {broker.port} 127.0.0.1\nallow_anonymous false\npersistence false\n"
                           f"password_file {passwords}\n{stay}")
    broker.start()
    try:
        cfg = copy.deepcopy(base_config)
        cfg.mqtt.port, cfg.mqtt.node_id, cfg.mqtt.command_timeout_s = broker.port, "auth", 2.0
        cfg.mqtt.username, cfg.mqtt.password = "hearthd", "wrong"
        h = Conversation(cfg)
        try:
            assert await h.say("turn off the kitchen light") == phrase("en", "unavailable.home")
        finally:
            await h.close()
        cfg.mqtt.password = "s3cret"
        components = Components(cfg)
        try:
            link = await components.mqtt_link().ready()
            assert link.connected
        finally:
            await components.close()
    finally:
        broker.stop()


async def test_two_lights_in_a_room_give_a_question_and_the_answer_acts(hearthd: Conversation,
                                                                        home: DeviceSimulator) -> None:
    ceiling = {"name": "Living Room Ceiling", "cmd_t": "home/lr_ceiling/set", "stat_t": "home/lr_ceiling",
               "uniq_id": "lr_ceiling", "dev": {"ids": ["lr_ceiling"], "name": "Living Room Ceiling",
                                                "sa": "Living Room"}}
    await home.publish_raw("homeassistant/light/lr_ceiling/config", json.dumps(ceiling), retain=True)
    await hearthd.components.mqtt_link().ready()
    await until(lambda: learned(hearthd.components.catalogue, home)
                and "Living Room Ceiling" in {e.name for e in hearthd.components.catalogue.entities.values()},
                "hearthd knows the devices and the ceiling light")
    question = await hearthd.say("turn off the living room light")
    assert question == phrase("en", "home.which", first="Living Room Ceiling", second="Living Room Lamp")
    assert await hearthd.say("the lamp") == phrase("en", "home.off", name="Living Room Lamp")
    await home.wait_for_command()
    assert home.commands == [("tasmota_ABC123/cmnd/POWER", "OFF")]


# -- isolation per message (issue 14) -----------------------------------------------------------------------------


@pytest.mark.parametrize("payload", [b"inf", b"nan", b"1e999"])
async def test_a_non_finite_state_leaves_the_link_running(hearthd: Conversation, home: DeviceSimulator,
                                                          payload: bytes) -> None:
    """3 bytes on a cover position / fan percentage / light brightness ended the link for good (no reconnect)."""
    link = await hearthd.components.mqtt_link().ready()
    for topic in (DEVICES["bedroom_blinds"].topics["position"], DEVICES["bedroom_fan"].topics["percentage_state"]):
        await home.publish_raw(topic, payload, retain=True)
    await home.publish_raw(DEVICES["kitchen_light"].topics["state"], b'{"state":"ON","brightness":1e999}')
    await asyncio.sleep(0.3)
    assert link._task is not None and not link._task.done()
    assert await hearthd.say("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")
    await home.wait_for_command()


async def test_a_handler_that_raises_drops_only_its_message(hearthd: Conversation, home: DeviceSimulator,
                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    link = await hearthd.components.mqtt_link().ready()
    tracked = link.catalogue.on_message

    def on_message(topic: str, payload: str) -> list[str]:
        if payload == "boom":
            raise RuntimeError("a handler's bug")
        return tracked(topic, payload)

    monkeypatch.setattr(link.catalogue, "on_message", on_message)
    await home.publish_raw(DEVICES["bedroom_fan"].topics["state"], "boom")
    await home.publish_raw("homeassistant/light/huge/config", b"x" * (link.cfg.max_payload_bytes + 1))
    await home.publish_raw("homeassistant/light/long/config",
                           json.dumps({"cmd_t": "long/set", "name": "Desk Lamp " * 1000}).encode())
    await until(lambda: link.rejected[("state", "error:RuntimeError")] and link.rejected[("discovery", "too-large")]
                and link.rejected[("discovery", "long-name")], "the messages are read and dropped")
    assert not [e for e in link.catalogue.entities.values() if e.name.startswith("Desk Lamp")]
    assert link.rejected[("state", "error:RuntimeError")] == 1
    assert link.rejected[("discovery", "too-large")] == 1
    assert link.metrics()["mqtt_rejected"]["state"] == {"error:RuntimeError": 1}
    assert await hearthd.say("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")


async def test_the_link_reconnects_after_any_failure_of_its_own(hearthd: Conversation, home: DeviceSimulator,
                                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Only MqttError was caught: anything else raised while connecting ended the link with no log line."""
    link = hearthd.components.mqtt_link()
    link.one_shot = False
    calls = {"n": 0}

    async def publish_self(client: object) -> None:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("first connect goes wrong")

    monkeypatch.setattr(link.device, "publish_self", publish_self)
    await link.ready(10)
    assert link.connections == 2 and link.connection_errors == 1
    assert await hearthd.say("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")


async def _ask_link(mqtt_config: Config, handlers: Handlers) -> Components:
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    components.mqtt_handlers = handlers
    await components.mqtt_link().ready()
    return components


RUN_ON = ("the kitchen the hallway and the garage lights are still on and the back door is open " * 11).strip()


def test_an_announcement_is_cut_in_pieces_at_sentences_then_words() -> None:
    from hearthd.daemon.mqtt import pieces

    assert pieces("Dinner is ready. Come down!", 200) == ["Dinner is ready. Come down!"]
    assert pieces("One. Two.", 6) == ["One.", "Two."]
    cut = pieces(RUN_ON, 200)
    assert " ".join(cut) == RUN_ON and all(len(p) <= 200 for p in cut) and len(cut) == 5
    assert pieces("x" * 450, 200) == ["x" * 200, "x" * 200, "x" * 50]


async def test_an_announcement_is_spoken_by_the_voice_of_its_words(mqtt_config: Config, broker: Broker) -> None:
    """An automation's announcement in Russian sent with "en" (or with no language) is said by the Russian voice,
    not read out by the English one."""
    said: list[tuple[str, str | None]] = []

    async def announce(text: str, lang: str | None) -> None:
        said.append((text, lang))

    components = await _ask_link(mqtt_config, Handlers(announce=announce))
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            for text, tag in (("ужин готов", "en"), ("dinner is ready", None), ("खाना तैयार है", "hi-IN"),
                              ("the washing is done", "ru")):
                await automation.publish("hearthd/testnode/announce", json.dumps({"text": text, "lang": tag}), qos=1)
        await until(lambda: len(said) == 4, "every announcement spoken", timeout=5)
        assert sorted(said) == sorted([("ужин готов", "ru"), ("dinner is ready", "en"), ("खाना तैयार है", "hi"),
                                       ("the washing is done", "en")])
    finally:
        await components.close()


async def test_bad_asks_and_announces_are_refused_and_counted(mqtt_config: Config, broker: Broker) -> None:
    asked: list[str] = []
    said: list[str] = []

    async def ask(text: str, lang: str | None, conversation: str, request_id: str | None = None) -> str:
        asked.append(text)
        return "ok"

    async def announce(text: str, lang: str | None) -> None:
        said.append(text)

    components = await _ask_link(mqtt_config, Handlers(ask=ask, announce=announce))
    link = components.mqtt
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            await automation.subscribe("hearthd/testnode/reply", qos=1)
            for topic in ("hearthd/testnode/ask", "hearthd/testnode/announce"):
                await automation.publish(topic, "[" * 100_000, qos=1)  # RecursionError before
                await automation.publish(topic, json.dumps({"text": "a\x00b"}), qos=1)  # NUL: Piper raised
                await automation.publish(topic, '{"text": "a \\ud800 b"}', qos=1)  # a lone surrogate
                await automation.publish(topic, json.dumps({"text": "x" * 5000}), qos=1)  # llama_decode failed
                await automation.publish(topic, json.dumps({"text": 1e300}), qos=1)
            await automation.publish("hearthd/testnode/announce", json.dumps({"text": "dinner is ready"}), qos=1)
            await automation.publish("hearthd/testnode/announce", json.dumps({"text": RUN_ON}), qos=1)
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": "what time is it"}), qos=1)
            async with asyncio.timeout(5):
                async for m in automation.messages:
                    reply = json.loads(bytes(m.payload))
                    break
        assert {k: reply[k] for k in ("text", "lang")} == {"text": "ok", "lang": ""}
        assert asked == ["what time is it"] and said[0] == "dinner is ready"
        # a run-on announcement is spoken in pieces: Piper's memory grows with the length of one utterance
        assert " ".join(said[1:]) == RUN_ON and max(map(len, said[1:])) <= 200
        for kind in ("ask", "announce"):
            assert link.rejected[(kind, "too-deep")] == 1
            assert link.rejected[(kind, "bad-text")] == 2
            assert link.rejected[(kind, "too-long")] == 1
            assert link.rejected[(kind, "no-text")] == 1
    finally:
        await components.close()


async def test_turns_run_beside_the_reader_and_a_full_house_is_busy(mqtt_config: Config, broker: Broker) -> None:
    """The link awaited whole turns inline: nothing was read (not even a mute) while an ask ran."""
    mqtt_config.mqtt.max_turns = 1
    release = asyncio.Event()
    muted: list[bool] = []

    async def ask(text: str, lang: str | None, conversation: str, request_id: str | None = None) -> str:
        await release.wait()
        return f"done: {text}"

    components = await _ask_link(mqtt_config, Handlers(ask=ask, mute=muted.append))
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            await automation.subscribe("hearthd/testnode/reply", qos=1)
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": "first"}), qos=1)
            await until(lambda: components.mqtt.metrics()["mqtt_turns_in_flight"] == 1, "the first ask is running")
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": "второй", "lang": "ru"}), qos=1)
            await automation.publish("hearthd/testnode/mute/set", "ON", qos=1)
            replies = []
            async with asyncio.timeout(5):
                async for m in automation.messages:
                    replies.append(json.loads(bytes(m.payload)))
                    if len(replies) == 1:
                        await until(lambda: muted, "the mute is read")
                        assert muted == [True]  # read and done while the first ask still runs
                        release.set()
                    if len(replies) == 2:
                        break
        assert replies[0]["error"] == "mqtt-busy" and replies[0]["lang"] == "ru"
        assert {k: replies[1][k] for k in ("text", "lang")} == {"text": "done: first", "lang": ""}
        assert components.mqtt.rejected[("ask", "busy")] == 1
    finally:
        await components.close()


async def test_an_ask_that_waited_in_line_past_its_budget_is_told_so_at_once(mqtt_config: Config,
                                                                            broker: Broker) -> None:
    """The daemon's ask topic (run.asker): an automation's ask that waited while other turns held hearthd longer than
    a turn's budget is answered with why as soon as its turn comes, not after a model turn of its own (issue 28.4);
    asked again with the line empty, it gets a turn of its own."""
    from hearthd.daemon.run import asker

    cfg = copy.deepcopy(mqtt_config)
    cfg.agent.max_turn_s = 3.0
    components = Components(cfg)
    agent = components.agent()
    agent.prepared_in_background = True  # as the daemon: its prefix made ready before the asks
    await asyncio.get_running_loop().run_in_executor(None, agent.prepare, ["en"])
    turns = asyncio.Lock()
    components.mqtt_one_shot = False
    components.mqtt_handlers = Handlers(ask=asker(Pipeline(components, Trace()), turns))
    await components.mqtt_link().ready()
    said = "my flat feels a bit dull, any ideas to liven it up"
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as automation:
            await automation.subscribe("hearthd/testnode/reply", qos=1)
            async with turns:  # someone else's turn, longer than a budget
                await automation.publish("hearthd/testnode/ask", json.dumps({"text": said, "lang": "en"}), qos=1)
                await asyncio.sleep(cfg.agent.max_turn_s + 0.5)
            await automation.publish("hearthd/testnode/ask", json.dumps({"text": said, "lang": "en"}), qos=1)
            replies = []
            async with asyncio.timeout(60):
                async for m in automation.messages:
                    replies.append(json.loads(bytes(m.payload))["text"])
                    if len(replies) == 2:
                        break
        assert replies[0] == phrase("en", "error.busy")
        # its own turn: the model's answer, or, on a machine too busy to decide within the 3 s budget, that it took
        # too long (its turn ran); never "busy" again
        assert replies[1] != phrase("en", "error.busy"), replies
    finally:
        await components.close()


async def test_hearthd_does_not_catalogue_its_own_entities(mqtt_config: Config, broker: Broker,
                                                           home: DeviceSimulator) -> None:
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    link = await components.mqtt_link().ready()
    try:
        # its own discovery comes back to it: the device with its entities
        await until(lambda: link.rejected[("discovery", "hearthd-itself")] >= 1, "its own discovery comes back")
        assert not [e for e in components.catalogue.entities.values() if e.source.startswith("device/hearthd_")]
        assert "Kitchen Light" in {e.name for e in components.catalogue.entities.values()}
    finally:
        await components.close()


# -- whose question it is (issue 15, item 1) -----------------------------------------------------------------------


class Served:
    """hearthd's MQTT asks handled by the text chain, one turn at a time (as `run --headless` does)."""

    def __init__(self, cfg: Config) -> None:
        self.components = Components(cfg)
        self.pipeline = Pipeline(self.components, Trace())
        self.turns = asyncio.Lock()
        self.components.mqtt_one_shot = False
        self.components.mqtt_handlers = Handlers(ask=self.ask)

    async def ask(self, text: str, lang: str | None, conversation: str = "local", request_id: str | None = None) -> str:
        async with self.turns:
            return (await self.pipeline.run_text(text, language=lang, conversation=conversation,
                                                 request_id=request_id)).reply


class Automation:
    """An MQTT client asking hearthd, reading `reply` and `reply/<id>`."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.seen: list[tuple[str, dict[str, Any]]] = []
        self._arrived = asyncio.Condition()
        self._task = asyncio.create_task(self._read())

    async def _read(self) -> None:
        async for m in self.client.messages:
            if m.topic.value != "hearthd/testnode/reply/attributes":  # the reply sensor's, not an answer
                async with self._arrived:
                    self.seen.append((m.topic.value, json.loads(bytes(m.payload))))  # type: ignore[arg-type]
                    self._arrived.notify_all()

    async def ask(self, request: dict[str, Any]) -> dict[str, Any]:
        """The reply to `request`, checked to come on both topics with the same body."""
        first = len(self.seen)
        await self.client.publish("hearthd/testnode/ask", json.dumps(request), qos=1)

        def both() -> bool:
            new = self.seen[first:]
            return any(t == "hearthd/testnode/reply" for t, _ in new) and any(t != "hearthd/testnode/reply"
                                                                              for t, _ in new)
        async with asyncio.timeout(10), self._arrived:
            await self._arrived.wait_for(both)
        (general,) = [body for t, body in self.seen[first:] if t == "hearthd/testnode/reply"]
        (own,) = [(t, body) for t, body in self.seen[first:] if t != "hearthd/testnode/reply"]
        assert own == (f"hearthd/testnode/reply/{general['id']}", general)
        return general


@pytest.fixture
async def automation(mqtt_config: Config, broker: Broker) -> AsyncIterator[tuple[Automation, Served]]:
    served = Served(mqtt_config)
    await served.components.mqtt_link().ready()
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="automation") as client:
            await client.subscribe([("hearthd/testnode/reply", 1), ("hearthd/testnode/reply/+", 1)])
            asker = Automation(client)
            yield asker, served
            asker._task.cancel()
    finally:
        await served.components.close()


async def test_an_ask_with_an_id_is_answered_with_it_and_only_its_own_yes_unlocks(automation, home: DeviceSimulator
                                                                                 ) -> None:
    asker, served = automation
    await until(lambda: learned(served.components.catalogue, home), "the devices are learned")
    question = await asker.ask({"text": "unlock the front door", "id": "a-1"})
    assert question["id"] == question["conversation_id"] == "a-1"
    assert question["text"] == phrase("en", "confirm.unlock_door", door="Front Door")  # as the home spells it
    for other in ({"text": "yes"}, {"text": "yes", "id": "b-2"}, {"text": "yes", "id": 7}):
        reply = await asker.ask(other)
        assert reply["text"] == phrase("en", "confirm.nothing_open") and reply["id"] not in ("a-1", "")
    assert reply["id"] == "7"
    await asyncio.sleep(0.3)
    assert home.commands_to("front_door") == []
    # a new request id in A's conversation answers it, and the reply says both
    done = await asker.ask({"text": "yes", "id": "a-2", "conversation_id": "a-1"})
    assert (done["text"], done["id"], done["conversation_id"]) == (phrase("en", "home.unlocked", name="Front Door"),
                                                                   "a-2", "a-1")
    await home.wait_for_command()
    assert home.commands_to("front_door") == ["UNLOCK"]


async def test_an_ask_resent_with_the_same_id_does_nothing_twice(automation) -> None:
    """Issue 26, item 8: a client resending after a crash with the same id got a second alarm. The id is the request's
    idempotency key on this door; another id (or none) is a request of its own."""
    asker, served = automation
    for alarm in served.components.alarms.pending():
        served.components.alarms.remove(alarm)
    first = await asker.ask({"text": "set an alarm for 6:40", "id": "wake-1"})
    again = await asker.ask({"text": "set an alarm for 6:40", "id": "wake-1"})
    assert first["text"] == again["text"] and again["id"] == "wake-1"
    assert [a.hhmm for a in served.components.alarms.pending()] == ["06:40"]  # one alarm, not two
    await asker.ask({"text": "set an alarm for 6:40", "id": "wake-2"})  # another request: done again
    assert [a.hhmm for a in served.components.alarms.pending()] == ["06:40", "06:40"]


async def test_an_ask_without_an_id_gets_one_and_can_be_answered_with_it(automation, home: DeviceSimulator) -> None:
    asker, served = automation
    await until(lambda: learned(served.components.catalogue, home), "the devices are learned")
    question = await asker.ask({"text": "unlock the front door"})
    given = question["id"]
    assert given and question["conversation_id"] == given
    again = await asker.ask({"text": "unlock the front door"})
    assert again["id"] != given  # each ask without an id is a conversation of its own
    assert (await asker.ask({"text": "yes", "id": given}))["text"] == phrase("en", "home.unlocked", name="Front Door")
    await home.wait_for_command()
    assert home.commands_to("front_door") == ["UNLOCK"]
    for bad in ("a/b", "#", "+", "attributes", "x" * 65, True, 1.5, [1]):  # a topic level of its own, or no id
        await asker.client.publish("hearthd/testnode/ask", json.dumps({"text": "yes", "id": bad}), qos=1)
    await until(lambda: served.components.mqtt.rejected[("ask", "bad-id")] >= 8, "the 8 bad ids are read")
    assert served.components.mqtt.rejected[("ask", "bad-id")] == 8


async def test_a_which_one_is_answered_only_by_its_own_conversation(automation, home: DeviceSimulator) -> None:
    asker, served = automation
    ceiling = {"name": "Living Room Ceiling", "cmd_t": "home/lr_ceiling/set", "stat_t": "home/lr_ceiling",
               "uniq_id": "lr_ceiling", "dev": {"ids": ["lr_ceiling"], "name": "Living Room Ceiling",
                                                "sa": "Living Room"}}
    await home.publish_raw("homeassistant/light/lr_ceiling/config", json.dumps(ceiling), retain=True)
    await until(lambda: learned(served.components.catalogue, home)
                and "Living Room Ceiling" in {e.name for e in served.components.catalogue.entities.values()},
                "the devices and the ceiling light are learned")
    question = await asker.ask({"text": "turn off the living room light", "id": "a"})
    assert question["text"] == phrase("en", "home.which", first="Living Room Ceiling", second="Living Room Lamp")
    other = await asker.ask({"text": "turn off the kitchen light", "id": "b"})  # B's own turn
    assert other["text"] == phrase("en", "home.off", name="Kitchen Light")
    answer = await asker.ask({"text": "the lamp", "id": "a"})  # A's question is still open
    assert answer["text"] == phrase("en", "home.off", name="Living Room Lamp")
    await home.wait_for_command(2)
    assert home.commands == [(KITCHEN_SET, json.dumps({"state": "OFF"})), ("tasmota_ABC123/cmnd/POWER", "OFF")]


async def test_a_dbus_yes_does_not_unlock_an_mqtt_askers_door(automation, home: DeviceSimulator,
                                                              dbus_address: str) -> None:
    """The hostile run: A (MQTT) asked to unlock the front door; B, a separate D-Bus client, sent Ask("yes", "")
    and heard "The Front Door is unlocked."."""
    from dbus_fast import Message, MessageType
    from dbus_fast.aio import MessageBus

    from hearthd.daemon.service import NAME, PATH, export

    asker, served = automation
    bus, _ = await export(served.pipeline, dbus_address, turns=served.turns)
    b = await MessageBus(bus_address=dbus_address).connect()

    async def b_asks(text: str) -> str:
        reply = await b.call(Message(destination=NAME, path=PATH, interface=NAME, member="Ask", signature="ss",
                                     body=[text, ""]))
        assert reply.message_type == MessageType.METHOD_RETURN, reply.body
        return str(reply.body[0])

    try:
        await until(lambda: learned(served.components.catalogue, home), "the devices are learned")
        question = await asker.ask({"text": "unlock the front door", "id": "door"})
        assert question["text"] == phrase("en", "confirm.unlock_door", door="Front Door")  # as the home spells it
        assert await b_asks("yes") == phrase("en", "confirm.nothing_open")
        assert await b_asks("turn off the kitchen light") == phrase("en", "home.off", name="Kitchen Light")
        await home.wait_for_command()
        assert home.commands_to("front_door") == []
        assert (await asker.ask({"text": "yes", "id": "door"}))["text"] == \
            phrase("en", "home.unlocked", name="Front Door")
        await home.wait_for_command(2)
        assert home.commands_to("front_door") == ["UNLOCK"]
        # and the other way round: B's question is not A's to answer
        assert await b_asks("unlock the front door") == phrase("en", "confirm.unlock_door", door="Front Door")
        assert (await asker.ask({"text": "yes", "id": "door"}))["text"] == phrase("en", "confirm.nothing_open")
        await asyncio.sleep(0.3)
        assert home.commands_to("front_door") == ["UNLOCK"]
    finally:
        b.disconnect()
        bus.disconnect()
