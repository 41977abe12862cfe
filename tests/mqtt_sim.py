"""A simulated smart home on a real MQTT broker, announced through Home Assistant MQTT discovery.

The devices speak like the firmware they imitate: a Zigbee2MQTT JSON-schema light, a Tasmota relay with
abbreviated keys and ``~``, ESPHome-style full-key entities, a device-based (``cmps``) ESPHome multisensor and
a few plain ones. Every discovery config and state is published retained, every command is answered with the
new state, and the simulator survives broker restarts, so the MQTT integration can be tested end to end.

``commands`` records every ``(topic, payload)`` received on a command topic, in order (retained messages the
broker replays on subscribe are not commands and are not recorded); ``state`` holds each device's current state
in its own firmware's vocabulary. Handler bugs do not kill the loop: they are kept in ``errors``.

Typical fixture::

    @pytest.fixture
    async def home(mqtt_port: int) -> AsyncIterator[DeviceSimulator]:
        async with simulator(mqtt_port) as sim:
            yield sim
"""

from __future__ import annotations

import asyncio
import contextlib
import copy
import json
import logging
import math
import secrets
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

import aiomqtt
from paho.mqtt.reasoncodes import ReasonCode

log = logging.getLogger(__name__)

RECONNECT_DELAY = 0.2  # seconds between connection attempts while the broker is away

# (topic, payload, retain)
Publication = tuple[str, str, bool]


@dataclass(frozen=True)
class SimDevice:
    """One simulated device: what it announces, where it listens and where it reports.

    ``commands`` maps a role to a topic the device obeys, ``topics`` a role to a topic it publishes (both
    with ``~`` already expanded, so tests can use them as they are); ``initial`` is its state at start.
    """

    id: str
    name: str
    area: str | None
    kind: str
    discovery: str  # config topic below the discovery prefix
    config: dict[str, Any]
    commands: dict[str, str] = field(default_factory=dict)
    topics: dict[str, str] = field(default_factory=dict)
    initial: dict[str, Any] = field(default_factory=dict)

    def config_topic(self, prefix: str = "homeassistant") -> str:
        """The discovery topic under ``prefix``."""
        return f"{prefix}/{self.discovery}"


# --- The devices ---------------------------------------------------------------------------------------------

_Z2M = "zigbee2mqtt/kitchen_light"
_IEEE = "0x00158d0001a2b3c4"
_TASMOTA = "tasmota_ABC123/"
_BLINDS = "esphome/bedroom/cover/blinds"
_THERMOSTAT = "esphome/living_room/climate/thermostat"
_FAN = "esphome/bedroom/fan/fan"
_MULTI = "esphome/bedroom_multisensor"

DEVICES: dict[str, SimDevice] = {d.id: d for d in [
    SimDevice(
        id="kitchen_light", name="Kitchen Light", area="Kitchen", kind="z2m_light",
        discovery=f"light/{_IEEE}/light/config",
        config={
            "schema": "json",
            "command_topic": f"{_Z2M}/set",
            "state_topic": _Z2M,
            "brightness": True,
            "brightness_scale": 254,
            "supported_color_modes": ["color_temp", "xy"],
            "max_mireds": 454,
            "min_mireds": 250,
            "unique_id": f"{_IEEE}_light_zigbee2mqtt",
            "name": None,
            "device": {"identifiers": [f"zigbee2mqtt_{_IEEE}"], "name": "Kitchen Light", "manufacturer": "IKEA",
                       "model": "LED1545G12", "suggested_area": "Kitchen"},
            "availability": [{"topic": "zigbee2mqtt/bridge/state", "value_template": "{{ value_json.state }}"}],
            "origin": {"name": "Zigbee2MQTT"},
        },
        commands={"command": f"{_Z2M}/set", "get": f"{_Z2M}/get"},
        topics={"state": _Z2M, "availability": "zigbee2mqtt/bridge/state"},
        initial={"state": "ON", "brightness": 254, "color_temp": 300, "color_mode": "color_temp"},
    ),
    SimDevice(
        id="living_room_lamp", name="Living Room Lamp", area="Living Room", kind="tasmota",
        discovery="light/ABC123_RL_1/config",
        config={
            "~": _TASMOTA, "name": None, "cmd_t": "~cmnd/POWER", "stat_t": "~tele/STATE",
            "val_tpl": "{{value_json.POWER}}", "pl_off": "OFF", "pl_on": "ON", "avty_t": "~tele/LWT",
            "pl_avail": "Online", "pl_not_avail": "Offline", "uniq_id": "ABC123_RL_1",
            "dev": {"ids": ["ABC123"], "name": "Living Room Lamp", "mdl": "Sonoff Basic", "sw": "13.2.0",
                    "mf": "Tasmota", "sa": "Living Room"},
        },
        commands={"command": f"{_TASMOTA}cmnd/POWER"},
        topics={"state": f"{_TASMOTA}tele/STATE", "result": f"{_TASMOTA}stat/RESULT",
                "power": f"{_TASMOTA}stat/POWER", "availability": f"{_TASMOTA}tele/LWT"},
        initial={"POWER": "OFF"},
    ),
    SimDevice(
        id="bedroom_blinds", name="Bedroom Blinds", area="Bedroom", kind="cover",
        discovery="cover/bedroom_blinds/config",
        config={
            "name": None,
            "unique_id": "bedroom_blinds_cover",
            "device_class": "blind",
            "command_topic": f"{_BLINDS}/command",
            "payload_open": "OPEN", "payload_close": "CLOSE", "payload_stop": "STOP",
            "state_topic": f"{_BLINDS}/state",
            "state_open": "open", "state_closed": "closed", "state_opening": "opening", "state_closing": "closing",
            "set_position_topic": f"{_BLINDS}/position/command",
            "position_topic": f"{_BLINDS}/position/state",
            "position_open": 100, "position_closed": 0,
            "availability_topic": "esphome/bedroom/status",
            "device": {"identifiers": ["esphome_bedroom_blinds"], "name": "Bedroom Blinds",
                       "manufacturer": "espressif", "model": "esp32dev", "sw_version": "2024.6.0",
                       "suggested_area": "Bedroom"},
            "origin": {"name": "ESPHome"},
        },
        commands={"command": f"{_BLINDS}/command", "position_command": f"{_BLINDS}/position/command"},
        topics={"state": f"{_BLINDS}/state", "position": f"{_BLINDS}/position/state",
                "availability": "esphome/bedroom/status"},
        initial={"state": "open", "position": 100},
    ),
    SimDevice(
        id="living_room_thermostat", name="Living Room Thermostat", area="Living Room", kind="climate",
        discovery="climate/living_room_thermostat/config",
        config={
            "name": None,
            "unique_id": "living_room_thermostat_climate",
            "mode_command_topic": f"{_THERMOSTAT}/mode/command",
            "mode_state_topic": f"{_THERMOSTAT}/mode/state",
            "temperature_command_topic": f"{_THERMOSTAT}/target_temperature/command",
            "temperature_state_topic": f"{_THERMOSTAT}/target_temperature/state",
            "current_temperature_topic": f"{_THERMOSTAT}/current_temperature/state",
            "modes": ["off", "heat", "cool", "auto"],
            "min_temp": 7, "max_temp": 30, "temp_step": 0.5, "precision": 0.5, "temperature_unit": "C",
            "availability_topic": "esphome/living_room/status",
            "device": {"identifiers": ["esphome_living_room_thermostat"], "name": "Living Room Thermostat",
                       "manufacturer": "espressif", "model": "esp32dev", "suggested_area": "Living Room"},
            "origin": {"name": "ESPHome"},
        },
        commands={"mode_command": f"{_THERMOSTAT}/mode/command",
                  "temperature_command": f"{_THERMOSTAT}/target_temperature/command"},
        topics={"mode_state": f"{_THERMOSTAT}/mode/state",
                "temperature_state": f"{_THERMOSTAT}/target_temperature/state",
                "current_temperature": f"{_THERMOSTAT}/current_temperature/state",
                "availability": "esphome/living_room/status"},
        initial={"mode": "heat", "target_temperature": 21.0, "current_temperature": 20.5},
    ),
    SimDevice(
        id="bedroom_fan", name="Bedroom Fan", area="Bedroom", kind="fan",
        discovery="fan/bedroom_fan/config",
        config={
            "name": None,
            "unique_id": "bedroom_fan",
            "command_topic": f"{_FAN}/command", "state_topic": f"{_FAN}/state",
            "payload_on": "ON", "payload_off": "OFF",
            "percentage_command_topic": f"{_FAN}/percentage/command",
            "percentage_state_topic": f"{_FAN}/percentage/state",
            "speed_range_min": 1, "speed_range_max": 100,
            "availability_topic": "esphome/bedroom/status",
            "device": {"identifiers": ["esphome_bedroom_fan"], "name": "Bedroom Fan", "manufacturer": "espressif",
                       "suggested_area": "Bedroom"},
            "origin": {"name": "ESPHome"},
        },
        commands={"command": f"{_FAN}/command", "percentage_command": f"{_FAN}/percentage/command"},
        topics={"state": f"{_FAN}/state", "percentage_state": f"{_FAN}/percentage/state",
                "availability": "esphome/bedroom/status"},
        initial={"state": "OFF", "percentage": 50},  # the speed it remembers for the next ON
    ),
    SimDevice(
        id="front_door", name="Front Door", area="Hallway", kind="lock",
        discovery="lock/front_door/config",
        config={
            "name": None,
            "unique_id": "front_door_lock",
            "command_topic": "home/hallway/front_door/set", "state_topic": "home/hallway/front_door/state",
            "payload_lock": "LOCK", "payload_unlock": "UNLOCK",
            "state_locked": "LOCKED", "state_unlocked": "UNLOCKED",
            "device": {"identifiers": ["front_door_lock"], "name": "Front Door", "manufacturer": "Nuki",
                       "model": "Smart Lock 3.0", "suggested_area": "Hallway"},
        },
        commands={"command": "home/hallway/front_door/set"},
        topics={"state": "home/hallway/front_door/state"},
        initial={"state": "LOCKED"},
    ),
    SimDevice(
        id="house_alarm", name="House Alarm", area=None, kind="alarm",
        discovery="alarm_control_panel/house_alarm/config",
        config={
            "name": None,
            "unique_id": "house_alarm_panel",
            "command_topic": "home/alarm/set", "state_topic": "home/alarm/state",
            "payload_arm_away": "ARM_AWAY", "payload_arm_home": "ARM_HOME", "payload_arm_night": "ARM_NIGHT",
            "payload_disarm": "DISARM", "payload_trigger": "TRIGGER",
            "supported_features": ["arm_home", "arm_away", "arm_night", "trigger"],
            "code_arm_required": False, "code_disarm_required": False, "code_trigger_required": False,
            "device": {"identifiers": ["house_alarm"], "name": "House Alarm", "manufacturer": "Generic"},
        },
        commands={"command": "home/alarm/set"},
        topics={"state": "home/alarm/state"},
        initial={"state": "disarmed"},
    ),
    SimDevice(
        id="movie_night", name="Movie Night", area=None, kind="scene",
        discovery="scene/movie_night/config",
        # No device block: a bare entity with an explicit name, as hand-written configs often are.
        config={"name": "Movie Night", "unique_id": "scene_movie_night",
                "command_topic": "home/scene/movie_night/set", "payload_on": "ON"},
        commands={"command": "home/scene/movie_night/set"},
        initial={"activations": 0},
    ),
    SimDevice(
        id="bedroom_multisensor", name="Bedroom Multisensor", area="Bedroom", kind="sensor",
        discovery="device/bedroom_multisensor/config",
        config={
            "dev": {"ids": "bedroom_multisensor", "name": "Bedroom Multisensor", "sa": "Bedroom"},
            "o": {"name": "ESPHome"},
            "stat_t": f"{_MULTI}/state",
            "avty_t": f"{_MULTI}/status",
            "cmps": {
                "temperature": {"p": "sensor", "dev_cla": "temperature", "unit_of_meas": "°C",
                                "val_tpl": "{{ value_json.temperature }}", "uniq_id": "bms_temp",
                                "name": "Temperature"},
                "humidity": {"p": "sensor", "dev_cla": "humidity", "unit_of_meas": "%",
                             "val_tpl": "{{ value_json.humidity }}", "uniq_id": "bms_hum", "name": "Humidity"},
                "motion": {"p": "binary_sensor", "dev_cla": "motion", "stat_t": f"{_MULTI}/motion",
                           "uniq_id": "bms_motion", "name": "Motion"},
            },
        },
        topics={"state": f"{_MULTI}/state", "motion": f"{_MULTI}/motion", "availability": f"{_MULTI}/status"},
        initial={"temperature": 19.5, "humidity": 48, "motion": "OFF"},
    ),
    SimDevice(
        id="coffee_machine", name="Coffee Machine", area="Kitchen", kind="switch",
        discovery="switch/coffee_machine/config",
        config={
            "name": "Coffee Machine",
            "unique_id": "coffee_machine_switch",
            "command_topic": "home/kitchen/coffee_machine/set", "state_topic": "home/kitchen/coffee_machine/state",
            "payload_on": "ON", "payload_off": "OFF",
            "device": {"identifiers": ["coffee_machine"], "name": "Coffee Machine", "suggested_area": "Kitchen"},
        },
        commands={"command": "home/kitchen/coffee_machine/set"},
        topics={"state": "home/kitchen/coffee_machine/state"},
        initial={"state": "OFF"},
    ),
    SimDevice(
        id="garage_door_opener", name="Garage Door Opener", area="Garage", kind="button",
        discovery="button/garage_door_opener/config",
        config={
            "name": None,
            "unique_id": "garage_door_opener_button",
            "command_topic": "home/garage/door_opener/press", "payload_press": "PRESS",
            "device": {"identifiers": ["garage_door_opener"], "name": "Garage Door Opener",
                       "suggested_area": "Garage"},
        },
        commands={"command": "home/garage/door_opener/press"},
        initial={"presses": 0},
    ),
]}

# Availability topics and their "online" payloads, published retained before any discovery config (as the
# bridges do), so an entity never shows up unavailable.
AVAILABILITY: dict[str, str] = {
    "zigbee2mqtt/bridge/state": '{"state":"online"}',
    f"{_TASMOTA}tele/LWT": "Online",
    "esphome/bedroom/status": "online",
    "esphome/living_room/status": "online",
    f"{_MULTI}/status": "online",
}

# Zigbee2MQTT's named colour temperatures (mireds), before clamping to the bulb's range.
_Z2M_COLOR_TEMP_PRESETS = {"coolest": 153, "cool": 250, "neutral": 370, "warm": 454, "warmest": 500}


def command_topics() -> dict[str, tuple[str, str]]:
    """Every command topic of every device, mapped to ``(device_id, role)``."""
    return {topic: (dev.id, role) for dev in DEVICES.values() for role, topic in dev.commands.items()}


# --- The simulator -------------------------------------------------------------------------------------------


@dataclass
class _Outgoing:
    """One message for the sender; ``done`` (when given) resolves once the broker acknowledged it."""

    topic: str
    payload: str | bytes
    retain: bool
    qos: int = 1
    done: asyncio.Future[None] | None = None


class DeviceSimulator:
    """All of ``DEVICES`` on one MQTT connection to ``host:port``, announced under ``prefix``."""

    def __init__(self, host: str, port: int, prefix: str = "homeassistant") -> None:
        self.host = host
        self.port = port
        self.prefix = prefix
        self.client_id = f"hearthd-sim-{secrets.token_hex(4)}"
        self.commands: list[tuple[str, str]] = []
        self.state: dict[str, dict[str, Any]] = {d.id: copy.deepcopy(d.initial) for d in DEVICES.values()}
        self.removed: set[str] = set()
        self.errors: list[BaseException] = []
        self.connections = 0  # successful connects, so tests can see a reconnect happened
        self.births = 0  # Home Assistant birth messages ("online" on <prefix>/status) seen
        self._routes = command_topics()
        self._outbox: asyncio.Queue[_Outgoing] | None = None  # the live connection's, once announced
        self._connected = asyncio.Event()
        self._changed = asyncio.Condition()
        self._task: asyncio.Task[None] | None = None
        self._started = time.monotonic()

    # --- lifecycle ---

    async def start(self, timeout: float = 10) -> None:
        """Connect, subscribe, announce every device and its state, then serve commands in the background.

        Raises ``aiomqtt.MqttError`` when the first connection fails; later losses are retried for ever.
        """
        if self._task is not None:
            raise RuntimeError("the simulator is already started")
        first: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        task = self._task = asyncio.create_task(self._run(first), name=self.client_id)
        # Wait on the task too: should it die of a bug before the first connect, `first` would never resolve.
        await asyncio.wait({first, task}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED)
        if first.done() and first.exception() is None:
            return
        error = first.exception() if first.done() else None
        if error is None and task.done() and not task.cancelled():
            error = task.exception()
        await self.stop()
        raise error or aiomqtt.MqttError(f"could not connect to {self.host}:{self.port} within {timeout}s")

    async def stop(self) -> None:
        """Cancel the loop and disconnect; a no-op when not started, so teardown may call it twice."""
        task, self._task = self._task, None
        if task is None:
            return
        # A graceful disconnect from a dead broker could wait out aiomqtt's timeout; teardown must not hang.
        with contextlib.suppress(TimeoutError):
            async with asyncio.timeout(5):
                await _cancel(task)
        if task.done() and not task.cancelled():
            task.exception()  # retrieved, so asyncio does not warn about it at exit
        self._outbox = None
        self._connected.clear()

    async def _run(self, first: asyncio.Future[None]) -> None:
        """Connect, announce, serve; on any connection loss wait a little and do it all again."""
        while True:
            outbox: asyncio.Queue[_Outgoing] = asyncio.Queue()
            try:
                # A fresh Client per connection: aiomqtt's client is reusable, but its message queue would carry
                # messages from the dead connection over to the next one.
                async with aiomqtt.Client(self.host, self.port, identifier=self.client_id, timeout=5,
                                          keepalive=10) as client:
                    await self._serve(client, outbox, first)
            except aiomqtt.MqttError as exc:
                if not first.done():
                    first.set_exception(exc)
                    return
                log.debug("simulator lost the broker (%s); reconnecting", exc)
            except Exception as exc:  # noqa: BLE001 - keep serving; the test sees the bug in `errors`
                if not first.done():
                    raise
                log.exception("simulator loop failed; reconnecting")
                self.errors.append(exc)
            finally:
                self._outbox = None
                self._connected.clear()
                _fail_pending(outbox)
            await asyncio.sleep(RECONNECT_DELAY)

    async def _serve(self, client: aiomqtt.Client, outbox: asyncio.Queue[_Outgoing],
                     first: asyncio.Future[None]) -> None:
        """Read and send side by side until either fails; raises why the connection ended.

        They are separate tasks because aiomqtt does not fail a publish that waits for its PUBACK when the
        connection drops: it waits out its whole timeout. Only the message iterator notices a dead broker at
        once, so the reader must keep reading while the sender waits.
        """
        reader = asyncio.create_task(self._read(client, outbox))
        sender = asyncio.create_task(self._send(client, outbox, first))
        tasks = {reader, sender}
        try:
            await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
        finally:
            await _cancel(*tasks)
        errors = [task.exception() for task in (reader, sender) if not task.cancelled()]
        raise next((e for e in errors if e is not None), aiomqtt.MqttError("connection ended"))

    async def _read(self, client: aiomqtt.Client, outbox: asyncio.Queue[_Outgoing]) -> None:
        """Handle incoming messages until the connection drops (aiomqtt then raises MqttError)."""
        async for message in client.messages:
            await self._dispatch(message, outbox)

    async def _send(self, client: aiomqtt.Client, outbox: asyncio.Queue[_Outgoing],
                    first: asyncio.Future[None]) -> None:
        """Subscribe and announce everything, then publish what the reader and the test queue, in order."""
        topics = [(topic, 1) for topic in self._routes] + [(f"{self.prefix}/status", 1)]
        granted = await client.subscribe(topics)
        # paho hands back ReasonCodes (even on MQTT 3.1.1) or, from older callbacks, bare granted-QoS ints.
        if any(code.is_failure if isinstance(code, ReasonCode) else code >= 0x80 for code in granted):
            raise aiomqtt.MqttError(f"broker refused a subscription: {granted}")
        # Availability first, as the bridges do, so no entity is ever seen unavailable; all QoS 1, so everything
        # is on the broker by the time start() returns.
        for topic, payload in AVAILABILITY.items():
            await client.publish(topic, payload, qos=1, retain=True)
        for topic, payload, retain in self._all_publications():
            await client.publish(topic, payload, qos=1, retain=retain)
        self._outbox = outbox
        self.connections += 1
        self._connected.set()
        if not first.done():
            first.set_result(None)
        while True:
            item = await outbox.get()
            try:
                await client.publish(item.topic, item.payload, qos=item.qos, retain=item.retain)
            except BaseException as exc:
                if item.done is not None and not item.done.done():
                    item.done.set_exception(aiomqtt.MqttError(f"connection lost while publishing: {exc!r}"))
                raise
            if item.done is not None and not item.done.done():
                item.done.set_result(None)
            task = asyncio.current_task()
            if task is not None and task.cancelling():
                raise asyncio.CancelledError  # a cancel that aiomqtt's wait for the PUBACK swallowed (see _cancel)

    def _all_publications(self) -> list[Publication]:
        """Every discovery config, then every state, of the devices not removed."""
        live = [dev for dev in DEVICES.values() if dev.id not in self.removed]
        configs = [(dev.config_topic(self.prefix), _json(dev.config), True) for dev in live]
        return configs + [pub for dev in live for pub in self._state_publications(dev)]

    # --- commands ---

    async def _dispatch(self, message: aiomqtt.Message, outbox: asyncio.Queue[_Outgoing]) -> None:
        """Handle one incoming message; a handler bug is kept in ``errors`` instead of killing the loop."""
        topic = message.topic.value
        payload = _text(message.payload)
        if message.retain:
            # Replayed by the broker on subscribe: left over from an earlier publisher, not sent to us now.
            return
        publications: list[Publication] = []
        if topic == f"{self.prefix}/status":
            if payload == "online":
                # Home Assistant restarted: bridges answer its birth message by announcing everything again.
                self.births += 1
                publications = self._all_publications()
        elif topic in self._routes:
            device_id, role = self._routes[topic]
            if device_id not in self.removed:
                try:
                    publications = self._apply(DEVICES[device_id], role, payload)
                except Exception as exc:  # noqa: BLE001 - a simulator bug must surface in the test, not hang it
                    log.exception("simulator failed on %s %r", topic, payload)
                    self.errors.append(exc)
            # Record after the state changed, so a test woken by wait_for_command already sees the new state.
            async with self._changed:
                self.commands.append((topic, payload))
                self._changed.notify_all()
        for pub_topic, pub_payload, retain in publications:
            outbox.put_nowait(_Outgoing(pub_topic, pub_payload, retain))

    def _apply(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        """Change ``dev``'s state for a command the way its firmware would; return what it publishes."""
        handler: Callable[[SimDevice, str, str], list[Publication]] = getattr(self, f"_cmd_{dev.kind}")
        return handler(dev, role, payload)

    def _cmd_z2m_light(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        if role == "get":
            return self._state_publications(dev)
        try:
            cmd = json.loads(payload)
        except ValueError:
            return []  # Z2M logs "Invalid JSON" and changes nothing
        if not isinstance(cmd, dict):
            return []
        want = str(cmd.get("state", "")).upper()
        if want == "TOGGLE":
            want = "OFF" if state["state"] == "ON" else "ON"
        if "brightness" in cmd and _is_number(cmd["brightness"]):
            level = round(cmd["brightness"])
            if level <= 0:
                want = "OFF"  # Z2M: brightness 0 turns the light off and keeps the old level
            else:
                state["brightness"] = min(254, level)
                want = want or "ON"
        if "brightness_step" in cmd and _is_number(cmd["brightness_step"]):
            level = state["brightness"] + round(cmd["brightness_step"])
            if level <= 0:
                want = "OFF"
            else:
                state["brightness"] = min(254, level)
                want = want or "ON"
        if "color_temp" in cmd:
            mireds: Any = _Z2M_COLOR_TEMP_PRESETS.get(str(cmd["color_temp"]).lower(), cmd["color_temp"])
            if _is_number(mireds):
                state["color_temp"] = max(250, min(454, round(mireds)))
                state["color_mode"] = "color_temp"
                state.pop("color", None)
                want = want or "ON"
        if isinstance(cmd.get("color"), dict):
            xy = _to_xy(cmd["color"])
            if xy is not None:
                state["color"] = {"x": xy[0], "y": xy[1]}
                state["color_mode"] = "xy"
                want = want or "ON"
        if want in ("ON", "OFF"):
            state["state"] = want
        return self._state_publications(dev)

    def _cmd_tasmota(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        # Tasmota is case-insensitive and also takes 0/1/2; an empty payload only asks for the state.
        word = {"0": "OFF", "1": "ON", "2": "TOGGLE", "FALSE": "OFF", "TRUE": "ON"}.get(payload.strip().upper(),
                                                                                       payload.strip().upper())
        if word == "TOGGLE":
            word = "OFF" if state["POWER"] == "ON" else "ON"
        if word in ("ON", "OFF"):
            state["POWER"] = word
        elif word:
            return [(dev.topics["result"], _json({"Command": "Error"}), False)]
        return [(dev.topics["result"], _json({"POWER": state["POWER"]}), False),
                (dev.topics["power"], state["POWER"], False), *self._state_publications(dev)]

    def _cmd_cover(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        if role == "position_command":
            target = _number(payload)
            if target is None:
                return []
            target = max(0, min(100, round(target)))
        else:
            word = payload.strip().upper()
            if word == "STOP":
                return self._state_publications(dev)
            if word not in ("OPEN", "CLOSE"):
                return []
            target = 100 if word == "OPEN" else 0
        # The blinds travel instantly, but still report the motion first like ESPHome does.
        moving = [(dev.topics["state"], "opening" if target > state["position"] else "closing", True)] \
            if target != state["position"] else []
        state["position"] = target
        state["state"] = "closed" if target == 0 else "open"
        return moving + self._state_publications(dev)

    def _cmd_climate(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        if role == "mode_command":
            if payload.strip() not in dev.config["modes"]:
                return []
            state["mode"] = payload.strip()
        else:
            value = _number(payload)
            if value is None:
                return []
            step = dev.config["temp_step"]
            value = round(value / step) * step
            state["target_temperature"] = float(max(dev.config["min_temp"], min(dev.config["max_temp"], value)))
        return self._state_publications(dev)

    def _cmd_fan(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        if role == "percentage_command":
            value = _number(payload)
            if value is None:
                return []
            value = max(0, min(100, round(value)))
            if value == 0:
                state["state"] = "OFF"  # like HA's fans: 0 % is off, and the last speed is kept for ON
            else:
                state["state"], state["percentage"] = "ON", value
        else:
            word = payload.strip().upper()
            if word == "TOGGLE":
                word = "OFF" if state["state"] == "ON" else "ON"
            if word not in ("ON", "OFF"):
                return []
            state["state"] = word
        return self._state_publications(dev)

    def _cmd_lock(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        new = {"LOCK": "LOCKED", "UNLOCK": "UNLOCKED"}.get(payload.strip())
        if new is None:
            return []
        self.state[dev.id]["state"] = new
        return self._state_publications(dev)

    def _cmd_alarm(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        state = self.state[dev.id]
        action = payload.strip()
        with contextlib.suppress(ValueError, AttributeError, TypeError):
            action = json.loads(action)["action"]  # a command_template may wrap it with the code
        new = {"ARM_AWAY": "armed_away", "ARM_HOME": "armed_home", "ARM_NIGHT": "armed_night",
               "DISARM": "disarmed", "TRIGGER": "triggered"}.get(str(action))
        if new is None:
            return []
        # Arming away goes through the exit delay, reported as "arming"; it is over at once here.
        arming = [(dev.topics["state"], "arming", True)] if new == "armed_away" and state["state"] != new else []
        state["state"] = new
        return arming + self._state_publications(dev)

    def _cmd_scene(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        if payload == dev.config["payload_on"]:
            self.state[dev.id]["activations"] += 1
        return []

    def _cmd_switch(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        if payload not in ("ON", "OFF"):
            return []
        self.state[dev.id]["state"] = payload
        return self._state_publications(dev)

    def _cmd_button(self, dev: SimDevice, role: str, payload: str) -> list[Publication]:
        if payload == dev.config["payload_press"]:
            self.state[dev.id]["presses"] += 1
        return []

    def _state_publications(self, dev: SimDevice) -> list[Publication]:
        """What ``dev`` publishes to report its whole current state (all retained)."""
        state = self.state[dev.id]
        t = dev.topics
        if dev.kind == "z2m_light":
            return [(t["state"], _json(state), True)]
        if dev.kind == "tasmota":
            uptime = int(time.monotonic() - self._started)
            tele = {"Time": time.strftime("%Y-%m-%dT%H:%M:%S"),
                    "Uptime": f"0T{uptime // 3600:02d}:{uptime // 60 % 60:02d}:{uptime % 60:02d}",
                    "POWER": state["POWER"]}
            return [(t["state"], _json(tele), True)]
        if dev.kind == "cover":
            return [(t["state"], state["state"], True), (t["position"], str(state["position"]), True)]
        if dev.kind == "climate":
            return [(t["mode_state"], state["mode"], True),
                    (t["temperature_state"], _num_text(state["target_temperature"]), True),
                    (t["current_temperature"], _num_text(state["current_temperature"]), True)]
        if dev.kind == "fan":
            return [(t["state"], state["state"], True), (t["percentage_state"], str(state["percentage"]), True)]
        if dev.kind in ("lock", "alarm", "switch"):
            return [(t["state"], state["state"], True)]
        if dev.kind == "sensor":
            readings = {k: v for k, v in state.items() if k != "motion"}
            return [(t["state"], _json(readings), True), (t["motion"], state["motion"], True)]
        return []  # scenes and buttons have no state topic

    # --- test-side API ---

    async def wait_for_command(self, n: int = 1, timeout: float = 5) -> list[tuple[str, str]]:
        """Wait until at least ``n`` commands arrived in all (``commands.clear()`` restarts the count)."""
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(lambda: len(self.commands) >= n)
        except TimeoutError:
            raise TimeoutError(f"expected {n} command(s) within {timeout}s, got {self.commands}") from None
        return list(self.commands)

    async def wait_for_state(self, device_id: str, timeout: float = 5, **expected: Any) -> dict[str, Any]:
        """Wait until ``device_id``'s state has every ``key=value`` of ``expected``; return that state."""
        def matches() -> bool:
            return all(self.state[device_id].get(k) == v for k, v in expected.items())
        try:
            async with asyncio.timeout(timeout), self._changed:
                await self._changed.wait_for(matches)
        except TimeoutError:
            raise TimeoutError(f"{device_id} never reached {expected}: {self.state[device_id]}") from None
        return dict(self.state[device_id])

    def commands_to(self, device_id: str) -> list[str]:
        """The payloads of every recorded command to ``device_id``, in order."""
        return [payload for topic, payload in self.commands if self._routes.get(topic, ("",))[0] == device_id]

    async def update(self, device_id: str, **changes: Any) -> None:
        """Change a device's state from the device side (a sensor reading, a wall switch) and publish it."""
        dev = DEVICES[device_id]
        unknown = set(changes) - set(self.state[device_id])
        if unknown:
            raise KeyError(f"{device_id} has no state {sorted(unknown)}")
        async with self._changed:
            self.state[device_id].update(changes)
            self._changed.notify_all()
        for topic, payload, retain in self._state_publications(dev):
            await self.publish_raw(topic, payload, retain=retain)

    async def remove(self, device_id: str) -> None:
        """Withdraw a device: an empty retained config, as the bridges send; it stays gone across reconnects."""
        self.removed.add(device_id)
        await self.publish_raw(DEVICES[device_id].config_topic(self.prefix), b"", retain=True)

    async def restore(self, device_id: str) -> None:
        """Announce a removed device again, with its current state."""
        self.removed.discard(device_id)
        dev = DEVICES[device_id]
        await self.publish_raw(dev.config_topic(self.prefix), _json(dev.config), retain=True)
        for topic, payload, retain in self._state_publications(dev):
            await self.publish_raw(topic, payload, retain=retain)

    async def publish_raw(self, topic: str, payload: str | bytes, retain: bool = False, qos: int = 1,
                          timeout: float = 5) -> None:
        """Publish anything (malformed configs, stray states) once the broker acknowledged it (QoS 1).

        Waits out a reconnect for up to ``timeout``; a message lost with a dropped connection is sent again.
        """
        async with asyncio.timeout(timeout):
            while True:
                await self._connected.wait()
                outbox = self._outbox
                if outbox is None:
                    await asyncio.sleep(RECONNECT_DELAY)
                    continue
                done: asyncio.Future[None] = asyncio.get_running_loop().create_future()
                outbox.put_nowait(_Outgoing(topic, payload, retain, qos, done))
                try:
                    await done
                    return
                except aiomqtt.MqttError:
                    await asyncio.sleep(RECONNECT_DELAY)

    async def wait_connected(self, connections: int = 1, timeout: float = 10) -> None:
        """Wait until the simulator is connected and has connected ``connections`` times in all."""
        async with asyncio.timeout(timeout):
            while not (self._connected.is_set() and self.connections >= connections):
                await asyncio.sleep(0.02)


@contextlib.asynccontextmanager
async def simulator(port: int, host: str = "127.0.0.1", prefix: str = "homeassistant"
                    ) -> AsyncIterator[DeviceSimulator]:
    """A started ``DeviceSimulator`` on ``host:port``, stopped on exit."""
    sim = DeviceSimulator(host, port, prefix)
    await sim.start()
    try:
        yield sim
    finally:
        await sim.stop()


# --- helpers -------------------------------------------------------------------------------------------------


def _json(value: Any) -> str:
    """JSON the way the firmware writes it: compact, and UTF-8 rather than escapes ("°C")."""
    return json.dumps(value, separators=(",", ":"), ensure_ascii=False)


async def _cancel(*tasks: asyncio.Task[Any]) -> None:
    """Cancel the tasks and wait until they are done, asking again while one lives on.

    Python 3.11's asyncio.wait_for, which aiomqtt awaits every PUBACK with, swallows a cancellation that races
    the result: the task then carries on (a sender back at its queue for ever) unless it is cancelled again.
    asyncio.wait itself neither raises the tasks' errors nor swallows a cancellation of the caller.
    """
    pending = {task for task in tasks if not task.done()}
    while pending:
        for task in pending:
            task.cancel()
        _, pending = await asyncio.wait(pending, timeout=0.05)


def _fail_pending(outbox: asyncio.Queue[_Outgoing]) -> None:
    """Fail what a dead connection never sent, so publish_raw sends it again on the next one."""
    while not outbox.empty():
        item = outbox.get_nowait()
        if item.done is not None and not item.done.done():
            item.done.set_exception(aiomqtt.MqttError("connection lost before publishing"))


def _text(payload: Any) -> str:
    """An incoming payload as text; aiomqtt hands over bytes, but its type allows numbers and None."""
    if isinstance(payload, bytes | bytearray):
        return bytes(payload).decode("utf-8", errors="replace")
    return "" if payload is None else str(payload)


def _is_number(value: Any) -> bool:
    return isinstance(value, int | float) and not isinstance(value, bool) and math.isfinite(value)


def _number(text: str) -> float | None:
    """A finite number from a payload, or None (firmware ignores what it cannot parse)."""
    try:
        value = float(text.strip())
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _num_text(value: float) -> str:
    """Numbers as ESPHome sends them: ``21.5``, ``21.0``."""
    return f"{float(value):.1f}"


def _to_xy(color: dict[str, Any]) -> tuple[float, float] | None:
    """CIE xy for a Z2M colour command: ``{"x","y"}``, ``{"r","g","b"}`` or ``{"hex"}``; None if unusable."""
    if _is_number(color.get("x")) and _is_number(color.get("y")):
        return round(float(color["x"]), 4), round(float(color["y"]), 4)
    rgb: list[Any]
    if isinstance(color.get("hex"), str) and len(color["hex"].lstrip("#")) == 6:
        try:
            raw = int(color["hex"].lstrip("#"), 16)
        except ValueError:
            return None
        rgb = [raw >> 16 & 255, raw >> 8 & 255, raw & 255]
    else:
        rgb = [color.get(k) for k in ("r", "g", "b")]
    if not all(_is_number(c) for c in rgb):
        return None
    # sRGB -> linear -> XYZ (D65), as Zigbee2MQTT converts before sending xy to the bulb.
    lin = [((c / 255 + 0.055) / 1.055) ** 2.4 if c / 255 > 0.04045 else c / 255 / 12.92
           for c in (max(0.0, min(255.0, float(v))) for v in rgb)]
    x = lin[0] * 0.4124 + lin[1] * 0.3576 + lin[2] * 0.1805
    y = lin[0] * 0.2126 + lin[1] * 0.7152 + lin[2] * 0.0722
    z = lin[0] * 0.0193 + lin[1] * 0.1192 + lin[2] * 0.9505
    total = x + y + z
    if total == 0:
        return 0.3127, 0.329  # black has no chromaticity: Z2M falls back to the white point
    return round(x / total, 4), round(y / total, 4)


class CommandRecorder:
    """The MQTT link as hearthd's smart-home tools see it, without a broker: every command that would reach a
    device is kept in `sent`, in order (for tests where the broker is not the point)."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str]] = []

    async def publish(self, topic: str, payload: str, retain: bool = False) -> None:
        self.sent.append((topic, payload))

    async def ready(self, timeout: float = 0) -> CommandRecorder:
        return self
