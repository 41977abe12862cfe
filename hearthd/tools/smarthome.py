"""The smart-home tools: turning devices on and off, dimming, colours, covers, climate, fans, scenes, locks, the
alarm panel, and questions about their state — on the devices Home Assistant MQTT discovery announced
(`tools.catalogue`: what there is and which one the user means; `tools.devicestate`: what their state topics say;
`tools.templates`: the sandbox their command templates run in).

No MQTT client here: commands go out through a `Publisher` (the daemon's MQTT link), so the tools stay testable
and the link owns reconnects and the queue.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable
from typing import Any, Protocol

from ..errors import HearthdError
from .catalogue import Catalogue, areas_in, has_word, home_words, in_area, without_room
from .devicestate import STATES, speed_range
from .discovery import Entity
from .registry import Tool, ToolResult
from .templates import number, render_command

# A cover that lets people in: opening it waits for a yes (Home Assistant's garage, door and gate device classes,
# or a name that says so); blinds, curtains and shutters open without one.
DOOR_CLASSES = frozenset({"garage", "door", "gate"})
# Home Assistant's cover device classes a word covers: "the doors" are the garage door and the gate too.
CLASS_FAMILIES = {"door": {"door", "garage", "gate"}, "blind": {"blind", "shade"}, "shade": {"shade", "blind"}}
COLOURS = {  # name → RGB; localized names are in the fast-path lists, which give these English values
    "red": (255, 0, 0), "orange": (255, 128, 0), "yellow": (255, 220, 0), "green": (0, 255, 0),
    "cyan": (0, 255, 255), "blue": (0, 0, 255), "purple": (128, 0, 255), "pink": (255, 105, 180),
    "white": (255, 255, 255),
}
WHITES = {"warm white": 2700, "cool white": 6500, "neutral white": 4000}  # kelvin
SWITCHABLE = ("light", "switch", "fan")
# The kinds of device whose own actions are said when a call asked one for another kind's (home.other_kind_<kind>)
OTHER_KIND = ("light", "switch", "fan", "cover", "climate", "lock", "sensor", "binary_sensor")
CONTROLLABLE = {"light", "switch", "fan", "cover", "climate", "lock", "alarm_control_panel", "scene", "button"}
# The kinds of device each tool needs; the model is offered a tool only when one exists.
KINDS: dict[str, tuple[str, ...]] = {
    "turn_on": SWITCHABLE, "turn_off": SWITCHABLE, "toggle": SWITCHABLE,
    "set_brightness": ("light",),
    "set_color": ("light",), "open_cover": ("cover",), "close_cover": ("cover",), "set_cover_position": ("cover",),
    "set_temperature": ("climate",), "set_climate_mode": ("climate",), "set_fan_speed": ("fan",),
    "activate_scene": ("scene",), "lock_door": ("lock",), "unlock_door": ("lock",),
    "arm_alarm": ("alarm_control_panel",), "disarm_alarm": ("alarm_control_panel",),
    "device_state": (*CONTROLLABLE, "binary_sensor"), "sensor_value": ("sensor", "climate"),
}


class Publisher(Protocol):
    """Sends one command; raises CommandNotSent when it could not (the broker is away past the timeout)."""

    async def publish(self, topic: str, payload: str, retain: bool = False) -> None: ...


class CommandNotSent(HearthdError):
    """A command that did not reach the broker; `uncertain` when it may have (never sent a second time)."""

    code = "mqtt-not-sent"
    phrase_key = "error.tool_failed"

    def __init__(self, message: str, uncertain: bool = False) -> None:
        super().__init__(message)
        self.uncertain = uncertain


STEPS = {"up": 25, "down": -25}  # "brighter" / "dim the lights": a quarter of the range from the tracked level
FAN_SPEEDS = (33, 66, 100)  # a fan's low, medium and high, as Home Assistant divides its percentage
NOUNS = {"light": "light", "switch": "switch", "fan": "fan", "cover": "cover", "lock": "lock"}  # spoken.toml nouns


def _noun(components: set[str]) -> str:
    """The noun a group is counted by: its kind when it is one kind, else "device"."""
    return NOUNS.get(next(iter(components)), "device") if len(components) == 1 else "device"


def _names(names: list[str], first: int = 5) -> str:
    """"Kitchen Light, Desk Lamp" — the first few names of a list, then how many more ("+3")."""
    return ", ".join(names[:first]) + (f" (+{len(names) - first})" if len(names) > first else "")


def _speakable(n: float) -> str:
    return str(int(n)) if float(n).is_integer() else str(n)


WHICH_NAMED = 4  # a "Which one?" names every candidate up to this many; beyond, the count and the first few


def which_one(names: list[str]) -> ToolResult:
    """"Which one: A, B or C?" — every candidate named (past WHICH_NAMED: how many, and the first three)."""
    data = {"error": "ambiguous", "candidates": names, "code": "home-ambiguous"}
    if len(names) == 2:
        return ToolResult(False, data, "home.which", {"first": names[0], "second": names[1]})
    if len(names) <= WHICH_NAMED:
        return ToolResult(False, data, "home.which_many", {"names": ", ".join(names[:-1]), "last": names[-1]})
    return ToolResult(False, data, "home.which_count", {"names": ", ".join(names[:3])},
                      counts={"count": (len(names), "device")})


# The word for a tool's kind of device, for a call that named none: "set it to 20" said "в кухне" → "kitchen thermostat"
KIND_WORD = {"light": "light", "switch": "switch", "fan": "fan", "cover": "blinds", "climate": "thermostat",
             "lock": "door"}


def keep_area(tool: str, arguments: dict[str, Any], text: str) -> dict[str, Any]:
    """The call's arguments with the one room the user named kept in its device name: a model that dropped the
    room ("установи температуру на 20 в кухне" → no device) or named another must not reach the device elsewhere.
    Calls that are not about a device, and utterances naming no room or several, are left as they are."""
    kinds = KINDS.get(tool)
    said = areas_in(text)
    if kinds is None or len(said) != 1:
        return arguments
    (area,) = said
    if tool == "sensor_value":
        if areas_in(str(arguments.get("area", ""))) == said:
            return arguments
        return {**arguments, "area": area}
    if tool in ("activate_scene", "arm_alarm", "disarm_alarm"):
        return arguments
    key = "door" if kinds == ("lock",) else "device"
    name = str(arguments.get(key, "")).strip()
    if not name and any(arguments.get(k) for k in ("area", "domain", "device_class")):
        return arguments  # a group the sentence library read from the words: its area is the one said
    if areas_in(name) == said:
        return arguments
    for other in areas_in(name):  # the model's room, not the user's: dropped
        for w in sorted(home_words().areas[other], key=len, reverse=True):
            name = re.sub(rf"(?<!\w){re.escape(w)}(?!\w)", " ", name, flags=re.IGNORECASE)
    name = " ".join(name.split()) or KIND_WORD.get(kinds[0], "")
    return {**arguments, key: f"{area} {name}".strip()}


class Refusal(HearthdError):
    """A request that ends in a spoken answer instead of a command (no such device, which one?, offline)."""

    code = "tool-refused"
    phrase_key = "error.tool_failed"

    def __init__(self, result: ToolResult) -> None:
        super().__init__(result.phrase, phrase_key=result.phrase)
        self.result = result


def _answering(handler: Any) -> Any:
    """The handler, with a Refusal raised anywhere inside it returned as the tool's result."""

    async def run(args: dict[str, Any]) -> ToolResult:
        try:
            result: ToolResult = await handler(args)
            return result
        except Refusal as refusal:
            return refusal.result

    return run


class SmartHome:
    """The smart-home tools. `link()` gives the publisher once the link has connected and learned the devices."""

    def __init__(self, catalogue: Catalogue, link: Any, floors: dict[str, list[str]] | None = None) -> None:
        self.catalogue = catalogue
        self.link = link  # async () -> Publisher; raises CommandNotSent when no broker can be reached
        self.floors = {k.lower(): [a.lower() for a in v] for k, v in (floors or {}).items()}  # mqtt.floors

    # -- groups: an area, a floor, a kind, the whole home --------------------------------------------------

    def group(self, args: dict[str, Any], components: Iterable[str]) -> list[Entity]:
        """The devices a call without a name means: of `domain` (else any of `components`), in `area` (an area or a
        floor of mqtt.floors), of `device_class` ("blind"), but for `except` (a room, a floor or a device's name);
        sorted by name. Filled only by code (the sentence
        library reads the area and the kind from the user's words), never decoded by the model."""
        domain = str(args.get("domain") or "")
        wanted = {domain} & set(components) if domain else set(components)
        pool = [e for e in self.catalogue.entities.values() if e.component in wanted]
        area = str(args.get("area") or "").strip().lower()
        if area:
            areas = set(self.floors.get(area, [])) or {area}
            pool = [e for e in pool if e.area.lower() in areas]
        left = str(args.get("except") or "").strip().lower()
        if left:  # "all the lights except the bedroom": that room (or floor, or device) left out
            out = set(self.floors.get(left, [])) or {left}
            pool = [e for e in pool if e.area.lower() not in out and e.name.lower() != left]
        wanted_class = str(args.get("device_class") or "").lower()
        if wanted_class:
            classes = CLASS_FAMILIES.get(wanted_class, {wanted_class})  # "the garage door" is a door
            same = [e for e in pool if str(e.config.get("device_class", "")).lower() in classes
                    or (not e.config.get("device_class") and any(c in e.name.lower() for c in classes))]
            if same or wanted_class in DOOR_CLASSES or wanted_class in ("window", "damper", "awning"):
                pool = same  # asked for a door or a window: never the blinds instead
            else:  # "the blinds" and no cover says its class: the covers that are not doors
                pool = [e for e in pool if str(e.config.get("device_class", "")).lower() not in DOOR_CLASSES
                        and not any(has_word(e.name.lower(), w) for w in home_words().doors)]
        return sorted(pool, key=lambda e: e.name.lower())

    async def _many(self, args: dict[str, Any], components: Iterable[str], verb: str,
                    act: Callable[[Entity], Awaitable[ToolResult]],
                    phrases: dict[str, str] | None = None) -> ToolResult:
        """One action on every device of a group; the reply counts them ("Turned off 4 lights in the Kitchen") and
        names the ones that did not respond or are offline."""
        await self._ready()
        if not any(args.get(k) for k in ("area", "domain", "device_class")):  # nothing named: never "everything"
            return ToolResult(False, {"code": "home-no-device"}, "home.name_missing")
        targets = self.group(args, components)
        area = str(args.get("area") or "")
        kinds = set(components)
        noun = _noun({e.component for e in targets} or ({str(args["domain"])} if args.get("domain") else kinds))
        where = {"area": area} if area else {}
        if not targets:
            return ToolResult(False, {"code": "home-none-there", "area": area}, "home.none_in" if area else "home.none",
                              where, nouns={"kind": noun})
        # the room as the home spells it ("kitchen" said, "Kitchen" declared)
        area = next((str(e.area) for e in targets if str(e.area or "").lower() == area.lower()), area) if area else ""
        where = {"area": area} if area else {}
        if len(targets) == 1 and self.catalogue.available.get(targets[0].key) is not False:
            return await act(targets[0])  # the garage's one light: said by its name, as if named
        done: list[str] = []
        failed: list[str] = []
        for e in targets:
            if self.catalogue.available.get(e.key) is False:
                failed.append(e.name)
                continue
            result = await act(e)
            (done if result.ok else failed).append(e.name)
        data = {"done": done, "failed": failed, "area": area}
        if failed:
            return ToolResult(bool(done), {**data, "code": "home-some-failed"}, "home.many_partial",
                              {"failed": ", ".join(failed)}, counts={"count": (len(done), noun)})
        counts = {"count": (len(done), noun)}
        if verb == "brightness" and args.get("percent") is None:
            verb = "brighter" if STEPS[str(args["step"])] > 0 else "dimmer"
        elif verb == "brightness":
            counts["percent"] = (int(args["percent"]), "percent")
        return ToolResult(True, data, f"home.many_{verb}" + ("_in" if area else ""), where, counts=counts,
                          phrases=phrases or {})

    def _counted(self, tool: str) -> Callable[[dict[str, Any]], tuple[int, str]]:
        """How many devices an opening or unlocking call acts on (a name: one): above policy.confirm_many, or any
        group at all that lets people in, hearthd asks first with the count."""
        components = KINDS[tool]

        def count(args: dict[str, Any]) -> tuple[int, str]:
            if args.get("device") or args.get("door"):
                return 1, NOUNS.get(components[0], "device")
            return len(self.group(args, components)), NOUNS.get(components[0], "device")

        return count

    def lets_people_in(self, args: dict[str, Any]) -> bool:
        """Whether a cover a call would open is a garage door, a door or a gate (then it waits for a yes)."""
        said = str(args.get("device") or "")
        found = self.catalogue.resolve(said, ("cover",)).entities if said else self.group(args, ("cover",))
        for e in found:
            if str(e.config.get("device_class", "")).lower() in DOOR_CLASSES \
                    or any(has_word(e.name.lower(), w) for w in home_words().doors):
                return True
        return False

    # -- shared steps -------------------------------------------------------------------------------------

    def _other_kind(self, said: str, components: Iterable[str]) -> Entity | None:
        """The one device `said` names that is of another kind than the call's ("turn on the bedroom curtains"):
        it is said what that device can do, not that hearthd knows no such device."""
        others = tuple(sorted({e.component for e in self.catalogue.entities.values()} - set(components)))
        found = self.catalogue.resolve(said, others).entities if others else []
        return found[0] if len(found) == 1 else None

    def _one(self, said: str, components: Iterable[str]) -> Entity:
        """The entity meant; a Refusal says why there is none (unknown, which one?, offline)."""
        match = self.catalogue.resolve(said, components)
        if not match.entities:
            if (elsewhere := self._elsewhere(said, components)) is not None:
                raise Refusal(ToolResult(False, {"error": f"{elsewhere.name} is not in the room said",
                                                 "entity": elsewhere.key, "code": "home-unknown-device"},
                                         "home.elsewhere", {"name": elsewhere.name, "there": elsewhere.area}))
            if (other := self._other_kind(said, components)) is not None:
                raise Refusal(ToolResult(False, {"error": f"{other.name} is a {other.component}", "entity": other.key,
                                                 "code": "home-other-kind"},
                                         f"home.other_kind_{other.component}" if other.component in OTHER_KIND
                                         else "home.other_kind", {"name": other.name}))
            raise Refusal(ToolResult(False, {"error": f"no device matches {said!r}", "code": "home-unknown-device"},
                                     "home.unknown_device", {"name": said}))
        if len(match.entities) > 1:
            raise Refusal(which_one(sorted(e.name for e in match.entities)))
        entity = match.entities[0]
        if self.catalogue.available.get(entity.key) is False:
            raise Refusal(ToolResult(False, {"entity": entity.key, "code": "home-offline"}, "home.offline",
                                     {"name": entity.name}))
        return entity

    def _elsewhere(self, said: str, components: Iterable[str]) -> Entity | None:
        """"The tv in the bedroom" where the one TV is in the living room: that TV (said to be elsewhere, nothing
        done), when the words beside the room name exactly one device, in another room."""
        area, area_said = self.catalogue.area_heard(said.lower())
        if not area:
            return None
        rest = without_room(said.lower(), {*home_words().areas.get(area, ()), area_said, area})
        found = self.catalogue.resolve(rest, components).entities if rest else []
        return found[0] if len(found) == 1 and found[0].area and not in_area(found[0], area) else None

    async def _find(self, said: str, components: Iterable[str]) -> Entity:
        """The devices learned (`_ready`), then the one meant (`_one`)."""
        await self._ready()
        return self._one(said, components)

    async def _send(self, entity: Entity, topic: str, payload: str, ok: ToolResult) -> ToolResult:
        if not topic:
            return ToolResult(False, {"entity": entity.key, "code": "home-unsupported"}, "home.unsupported",
                              {"name": entity.name})
        try:
            publisher = await self.link()
            await publisher.publish(topic, payload)
        except CommandNotSent as e:
            return ToolResult(False, {"entity": entity.key, "code": e.code, "error": str(e), "uncertain": e.uncertain},
                              "home.uncertain" if e.uncertain else "home.not_sent", {"name": entity.name})
        ok.data.update({"entity": entity.key, "topic": topic, "payload": payload})
        return ok

    @staticmethod
    def _payload(entity: Entity, template_key: str, value: Any, **variables: Any) -> str:
        """The command payload through the entity's command template (render_command); a template hearthd cannot
        render is a Refusal ("unsupported"), never a guess at what the device wants."""
        payload = render_command(entity, template_key, value, **variables)
        if payload is None:
            raise Refusal(ToolResult(False, {"entity": entity.key, "code": "home-unsupported",
                                             "error": f"cannot render {template_key}"}, "home.unsupported",
                                     {"name": entity.name}))
        return payload

    async def _ready(self) -> None:
        """Learn the devices before resolving a name (a fresh `hearthd ask` knows only the saved catalogue); with no
        broker and no saved devices, a Refusal says smart-home control is not available."""
        try:
            await self.link()
        except CommandNotSent as e:
            if not self.catalogue.entities:
                raise Refusal(ToolResult(False, {"error": str(e), "code": e.code}, "unavailable.home")) from None

    # -- actions ------------------------------------------------------------------------------------------

    async def _switch(self, entity: Entity, on: bool) -> ToolResult:
        reply = ToolResult(True, {"on": on}, "home.on" if on else "home.off", {"name": entity.name})
        if entity.config.get("schema") == "json":
            return await self._send(entity, entity.topic("command_topic"), json.dumps({"state": "ON" if on else "OFF"}),
                                    reply)
        payload = entity.payload("payload_on" if on else "payload_off", "ON" if on else "OFF")
        if entity.component == "fan":  # HA's fan renders on/off through command_template; lights and switches don't
            payload = self._payload(entity, "command_template", payload)
        return await self._send(entity, entity.topic("command_topic"), payload, reply)

    async def _toggle(self, args: dict[str, Any]) -> ToolResult:
        """The opposite of the tracked state (as Home Assistant toggles: MQTT has no toggle payload of its own);
        an unknown state is switched on."""
        entity = await self._find(args["device"], SWITCHABLE)
        return await self._switch(entity, self.catalogue.states.get(entity.key, {}).get("state") != "on")

    async def _turn_on(self, args: dict[str, Any]) -> ToolResult:
        if not args.get("device"):
            return await self._many(args, SWITCHABLE, "on", lambda e: self._switch(e, True))
        return await self._switch(await self._find(args["device"], SWITCHABLE), True)

    async def _turn_off(self, args: dict[str, Any]) -> ToolResult:
        if not args.get("device"):
            return await self._many(args, SWITCHABLE, "off", lambda e: self._switch(e, False))
        return await self._switch(await self._find(args["device"], SWITCHABLE), False)

    async def _brightness(self, args: dict[str, Any]) -> ToolResult:
        """A brightness in percent, or a step up or down from the one tracked ("dim the lights", "brighter"); one
        light by its name, or the lights of a room or the home (a group by code, like turn_off)."""
        if args.get("percent") is None and args.get("step") not in STEPS:
            return ToolResult(False, {"code": "home-no-level"}, "home.level_missing")
        if not args.get("device"):
            return await self._many(args, ("light",), "brightness", self._set_level(args))
        return await self._set_level(args)(await self._find(args["device"], ("light",)))

    def _set_level(self, args: dict[str, Any]) -> Callable[[Entity], Awaitable[ToolResult]]:
        async def level(entity: Entity) -> ToolResult:
            if args.get("percent") is not None:
                return await self._brightness_of(entity, int(args["percent"]))
            state = self.catalogue.states.get(entity.key, {})
            now = state.get("brightness")
            if not isinstance(now, int):
                now = 0 if state.get("state") == "off" else 100  # on at an unknown level: as if full
            step = STEPS[str(args["step"])]
            if now <= 0 and step < 0:  # dimming a light that is off leaves it off
                return ToolResult(True, {"entity": entity.key, "percent": 0}, "home.is_off", {"name": entity.name})
            return await self._brightness_of(entity, max(10, min(100, now + step)))

        return level

    async def _brightness_of(self, entity: Entity, percent: int) -> ToolResult:
        reply = ToolResult(True, {"percent": percent}, "home.brightness", {"name": entity.name},
                           counts={"percent": (percent, "percent")})
        cfg = entity.config
        if cfg.get("schema") == "json":
            if not cfg.get("brightness"):
                return await self._send(entity, "", "", reply)
            scale = int(cfg.get("brightness_scale", 255) or 255)
            body = {"state": "ON" if percent > 0 else "OFF", "brightness": round(scale * percent / 100)}
            return await self._send(entity, entity.topic("command_topic"), json.dumps(body), reply)
        scale = int(cfg.get("brightness_scale", 255) or 255)
        return await self._send(entity, entity.topic("brightness_command_topic"),
                                self._payload(entity, "brightness_command_template", round(scale * percent / 100)),
                                reply)

    async def _colour(self, args: dict[str, Any]) -> ToolResult:
        if not args.get("device"):  # "make the kitchen lights pink": every light of the group
            return await self._many(args, ("light",), "colour", lambda e: self._colour_of(e, str(args["color"])),
                                    phrases={"colour": f"colours.{str(args['color']).replace(' ', '_')}"})
        return await self._colour_of(await self._find(args["device"], ("light",)), str(args["color"]))

    async def _colour_of(self, entity: Entity, colour: str) -> ToolResult:
        reply = ToolResult(True, {"color": colour}, "home.colour", {"name": entity.name},
                           phrases={"colour": f"colours.{colour.replace(' ', '_')}"})
        cfg = entity.config
        modes = set(cfg.get("supported_color_modes") or [])
        if colour in WHITES:
            kelvin = WHITES[colour]
            if cfg.get("schema") == "json":
                if "color_temp" not in modes:
                    return await self._send(entity, "", "", reply)
                value = kelvin if cfg.get("color_temp_kelvin") else round(1_000_000 / kelvin)
                return await self._send(entity, entity.topic("command_topic"),
                                        json.dumps({"state": "ON", "color_temp": value}), reply)
            value = kelvin if cfg.get("color_temp_kelvin") else round(1_000_000 / kelvin)
            return await self._send(entity, entity.topic("color_temp_command_topic"),
                                    self._payload(entity, "color_temp_command_template", value), reply)
        r, g, b = COLOURS[colour]
        if cfg.get("schema") == "json":
            if not modes & {"rgb", "xy", "hs", "rgbw", "rgbww"}:
                return await self._send(entity, "", "", reply)
            return await self._send(entity, entity.topic("command_topic"),
                                    json.dumps({"state": "ON", "color": {"r": r, "g": g, "b": b}}), reply)
        rgb = f"{r},{g},{b}"
        if isinstance(cfg.get("rgb_command_template"), str):  # HA's variables: red, green, blue
            rgb = self._payload(entity, "rgb_command_template", rgb, red=r, green=g, blue=b)
        return await self._send(entity, entity.topic("rgb_command_topic"), rgb, reply)

    async def _cover(self, args: dict[str, Any], action: str) -> ToolResult:
        if not args.get("device") and action in ("open", "close"):
            return await self._many(args, ("cover",), action, lambda e: self._cover_one(e, args, action))
        return await self._cover_one(await self._find(args["device"], ("cover",)), args, action)

    async def _cover_one(self, entity: Entity, args: dict[str, Any], action: str) -> ToolResult:
        if action == "position":
            percent = int(args["percent"])
            top, bottom = int(entity.config.get("position_open", 100)), int(entity.config.get("position_closed", 0))
            value = round(bottom + (top - bottom) * percent / 100)
            payload = self._payload(entity, "set_position_template", value, position=value, position_open=top,
                                    position_closed=bottom)
            return await self._send(entity, entity.topic("set_position_topic"), payload,
                                    ToolResult(True, {"percent": percent}, "home.cover_position",
                                               {"name": entity.name}, counts={"percent": (percent, "percent")}))
        payload = entity.payload("payload_open" if action == "open" else "payload_close",
                                 "OPEN" if action == "open" else "CLOSE")
        return await self._send(entity, entity.topic("command_topic"), payload,
                                ToolResult(True, {}, f"home.cover_{action}", {"name": entity.name}))

    async def _open(self, args: dict[str, Any]) -> ToolResult:
        return await self._cover(args, "open")

    async def _close(self, args: dict[str, Any]) -> ToolResult:
        return await self._cover(args, "close")

    async def _position(self, args: dict[str, Any]) -> ToolResult:
        return await self._cover(args, "position")

    async def _climate(self, args: dict[str, Any]) -> Entity:
        await self._ready()
        said = args.get("device") or ""
        if not said:  # "set the heating to 21": the only thermostat, if there is one
            thermostats = [e for e in self.catalogue.entities.values() if e.component == "climate"]
            if len(thermostats) == 1:
                return thermostats[0]
            said = "thermostat"
        return self._one(said, ("climate",))

    async def _temperature(self, args: dict[str, Any]) -> ToolResult:
        if args.get("temperature") is None and args.get("step") not in STEPS:
            return ToolResult(False, {"code": "home-no-level"}, "home.temperature_missing")
        entity = await self._climate(args)
        if args.get("temperature") is not None:
            temperature = float(args["temperature"])
        else:
            now = self.catalogue.states.get(entity.key, {}).get("target")
            by = float(args.get("by") or 1.0) * (1 if args["step"] == "up" else -1)
            if not isinstance(now, (int, float)) or isinstance(now, bool):
                # the thermostat never said what it is set to (no temperature_state_topic, or nothing retained):
                # a step from a guess could heat the house to anything
                return ToolResult(False, {"code": "home-target-unknown"}, "home.temperature_unknown",
                                  {"name": entity.name})
            temperature = float(now) + by
        low, high = float(entity.config.get("min_temp", 7)), float(entity.config.get("max_temp", 35))
        if not low <= temperature <= high:
            return ToolResult(False, {"temperature": temperature, "min": low, "max": high, "code": "home-out-of-range"},
                              "home.out_of_range", {"name": entity.name, "low": _speakable(low),
                                                    "high": _speakable(high)})
        step = float(entity.config.get("temp_step", 0.5) or 0.5)
        temperature = round(round(temperature / step) * step, 1)
        payload = _speakable(temperature)
        if isinstance(entity.config.get("temperature_command_template"), str):
            payload = self._payload(entity, "temperature_command_template", temperature)
        return await self._send(entity, entity.topic("temperature_command_topic"), payload,
                                ToolResult(True, {"temperature": temperature}, "home.temperature_set",
                                           {"name": entity.name, "temperature": _speakable(temperature)}))

    async def _mode(self, args: dict[str, Any]) -> ToolResult:
        entity = await self._climate(args)
        mode = args["mode"]
        modes = entity.config.get("modes") or ["auto", "off", "cool", "heat", "dry", "fan_only"]
        if mode not in modes:
            return ToolResult(False, {"mode": mode, "modes": modes, "code": "home-unsupported"}, "home.unsupported",
                              {"name": entity.name})
        return await self._send(entity, entity.topic("mode_command_topic"),
                                self._payload(entity, "mode_command_template", mode),
                                ToolResult(True, {"mode": mode}, "home.mode_set", {"name": entity.name},
                                           phrases={"mode": f"modes.{mode}"}))

    async def _fan(self, args: dict[str, Any]) -> ToolResult:
        """A speed in percent, or a step to the next of Home Assistant's three speeds up or down from the one
        tracked ("turn the fan up", "पंखा धीमा करो"); turned down, a fan stays at its lowest speed, never off."""
        if args.get("percent") is None and args.get("step") not in STEPS:
            return ToolResult(False, {"code": "home-no-level"}, "home.speed_missing")
        entity = await self._find(args["device"], ("fan",))
        if args.get("percent") is not None:
            percent = int(args["percent"])
        else:
            state = self.catalogue.states.get(entity.key, {})
            now = state.get("percentage")
            if not isinstance(now, int):
                now = 0 if state.get("state") == "off" else FAN_SPEEDS[1]  # on at an unknown speed: the middle one
            if args["step"] == "up":
                percent = next((s for s in FAN_SPEEDS if s > now), FAN_SPEEDS[-1])
            elif now <= 0:
                return ToolResult(True, {"entity": entity.key, "percent": 0}, "home.is_off", {"name": entity.name})
            else:
                percent = next((s for s in reversed(FAN_SPEEDS) if s < now), FAN_SPEEDS[0])
        low, high = speed_range(entity.config)  # HA: ceil(percentage_to_ranged_value(range, percent))
        speed = percent if (low, high) == (1, 100) else math.ceil((high - low + 1) * percent / 100) + low - 1
        return await self._send(entity, entity.topic("percentage_command_topic"),
                                self._payload(entity, "percentage_command_template", speed),
                                ToolResult(True, {"percent": percent}, "home.fan_speed", {"name": entity.name},
                                           counts={"percent": (percent, "percent")}))

    async def _scene(self, args: dict[str, Any]) -> ToolResult:
        entity = await self._find(args["scene"], ("scene",))
        return await self._send(entity, entity.topic("command_topic"), entity.payload("payload_on", "ON"),
                                ToolResult(True, {}, "home.scene", {"name": entity.name}))

    async def _lock(self, args: dict[str, Any], lock: bool) -> ToolResult:
        if not args.get("door"):
            return await self._many(args, ("lock",), "locked" if lock else "unlocked",
                                    lambda e: self._lock_one(e, lock))
        return await self._lock_one(await self._find(args["door"], ("lock",)), lock)

    async def _lock_one(self, entity: Entity, lock: bool) -> ToolResult:
        payload = entity.payload("payload_lock" if lock else "payload_unlock", "LOCK" if lock else "UNLOCK")
        # Zigbee2MQTT's locks: command_template '{"state": "{{ value }}"}' (HA's variables: value, code)
        payload = self._payload(entity, "command_template", payload, code=None)
        return await self._send(entity, entity.topic("command_topic"), payload,
                                ToolResult(True, {"locked": lock}, "home.locked" if lock else "home.unlocked",
                                           {"name": entity.name}))

    async def _lock_door(self, args: dict[str, Any]) -> ToolResult:
        return await self._lock(args, True)

    async def _unlock_door(self, args: dict[str, Any]) -> ToolResult:
        return await self._lock(args, False)

    async def _panel(self, mode: str) -> ToolResult:
        await self._ready()
        panels = [e for e in self.catalogue.entities.values() if e.component == "alarm_control_panel"]
        if not panels:
            return ToolResult(False, {"code": "home-unknown-device"}, "home.no_alarm_panel")
        entity = panels[0] if len(panels) == 1 else self._one("alarm", ("alarm_control_panel",))
        key = {"home": "payload_arm_home", "away": "payload_arm_away", "night": "payload_arm_night",
               "disarm": "payload_disarm"}[mode]
        default = {"home": "ARM_HOME", "away": "ARM_AWAY", "night": "ARM_NIGHT", "disarm": "DISARM"}[mode]
        phrase_key = "home.disarmed" if mode == "disarm" else f"home.armed_{mode}"
        action = entity.payload(key, default)
        payload = action
        if isinstance(entity.config.get("command_template"), str):  # HA's variables: action, code
            payload = self._payload(entity, "command_template", action, action=action, code="")
        return await self._send(entity, entity.topic("command_topic"), payload,
                                ToolResult(True, {"mode": mode}, phrase_key, {"name": entity.name}))

    async def _arm(self, args: dict[str, Any]) -> ToolResult:
        return await self._panel(args.get("mode", "away"))

    async def _disarm(self, args: dict[str, Any]) -> ToolResult:
        return await self._panel("disarm")

    # -- questions ----------------------------------------------------------------------------------------

    async def _state(self, args: dict[str, Any]) -> ToolResult:
        if not args.get("device"):
            return await self._question(args)
        entity = await self._find(args["device"], CONTROLLABLE | {"binary_sensor"})
        if args.get("state") and args.get("question", "one") == "one":  # "is the front door locked?"
            now = str(self.catalogue.states.get(entity.key, {}).get("state") or "")
            if now in STATES:
                key = "home.q_one_yes" if now == args["state"] else "home.q_one_no"  # "No, it is unlocked."
                return ToolResult(True, {"entity": entity.key, "state": now}, key, {"name": entity.name},
                                  phrases={"state": f"state_one.{now}"})
        state = self.catalogue.states.get(entity.key, {})
        value = state.get("state")
        data = {"entity": entity.key, "state": state}
        values = {"name": entity.name}
        if value in ("on", "off", "locked", "unlocked", "open", "closed", "opening", "closing"):
            if value == "on" and "brightness" in state:
                return ToolResult(True, data, "home.is_on_at", values, counts={"percent": (state["brightness"],
                                                                                        "percent")})
            return ToolResult(True, data, f"home.is_{value}", values)
        return ToolResult(True, data, "home.state_unknown", values)

    async def _question(self, args: dict[str, Any]) -> ToolResult:
        """"Are any doors unlocked?", "how many lights are on upstairs?", "which windows are open?": answered from the
        tracked state of a group."""
        await self._ready()
        if not any(args.get(k) for k in ("area", "domain", "device_class")) \
                and not (args.get("question") == "which" and args.get("state")):
            # (but "what's on?": whatever is, in the whole home)
            return ToolResult(False, {"code": "home-no-device"}, "home.name_missing")
        domain = str(args.get("domain") or "")
        targets = self.group(args, (domain,) if domain else CONTROLLABLE | {"binary_sensor"})
        wanted, question = str(args.get("state") or ""), str(args.get("question") or "any")
        noun = _noun({e.component for e in targets} or {domain})
        if not targets:
            area = str(args.get("area") or "")
            return ToolResult(False, {"code": "home-none-there", "area": area}, "home.none_in" if area else "home.none",
                              {"area": area} if area else {}, nouns={"kind": noun})
        states = {e.key: str(self.catalogue.states.get(e.key, {}).get("state") or "") for e in targets}
        known = [e for e in targets if states[e.key] in STATES]
        if not known:
            return ToolResult(True, {"code": "home-state-unknown"}, "home.q_unknown", nouns={"kind": noun})
        hits = [e.name for e in known if states[e.key] == wanted]
        misses = [e.name for e in known if states[e.key] != wanted]
        data = {"state": wanted, "matching": hits, "other": misses, "unknown": len(targets) - len(known)}
        state = {"state": f"states.{wanted}"}
        if question == "how_many":
            key = "home.q_how_many_0" if not hits else "home.q_how_many_1" if len(hits) == 1 else "home.q_how_many"
            return ToolResult(True, data, key, {"names": _names(hits)}, counts={"count": (len(hits), noun)},
                              phrases=state)
        if question == "all":
            if not misses:
                return ToolResult(True, data, "home.q_all_yes", counts={"count": (len(hits), noun)}, phrases=state)
            return ToolResult(True, data, "home.q_all_no", {"names": _names(misses)}, phrases=state)
        if not hits:  # "any" and "which" with none
            return ToolResult(True, data, "home.q_none", nouns={"kind": noun}, phrases=state)
        return ToolResult(True, data, "home.q_which" if question == "which" else "home.q_any_yes",
                          {"names": _names(hits)}, phrases=state)

    async def _sensor(self, args: dict[str, Any]) -> ToolResult:
        await self._ready()
        quantity = args["quantity"]
        said = str(args.get("area", "")).strip().lower()
        floor = self.floors.get(said, [])  # "how warm is it upstairs": the rooms of that floor (mqtt.floors)
        area = "" if floor else self.catalogue.area_heard(said)[0]
        # a thermostat's current temperature counts as a temperature sensor
        found = [e for e in self.catalogue.entities.values()
                 if (e.component == "sensor" and e.config.get("device_class") == quantity)
                 or (e.component == "climate" and quantity == "temperature" and e.topic("current_temperature_topic"))]
        if floor:
            found = [e for e in found if any(in_area(e, a) for a in floor)]
        elif area:
            found = [e for e in found if in_area(e, area)]
        readings = []
        for e in found:
            state = self.catalogue.states.get(e.key, {})
            raw = state.get("current") if e.component == "climate" else state.get("state")
            n = number(str(raw)) if raw is not None else None
            if n is not None:
                readings.append((e, n))
        if not readings:
            return ToolResult(False, {"quantity": quantity, "area": area, "code": "home-no-sensor"}, "home.no_sensor",
                              phrases={"quantity": f"quantities.{quantity}"})
        entity, n = readings[0]
        return ToolResult(True, {"entity": entity.key, "value": n}, f"home.{quantity}",
                          {"value": _speakable(round(n, 1)), "place": entity.area or entity.name})

    # -- declarations ------------------------------------------------------------------------------------

    def _has(self, *components: str) -> Any:
        return lambda: any(e.component in components for e in self.catalogue.entities.values())

    def tools(self) -> list[Tool]:
        device = {"type": "string", "minLength": 1, "maxLength": 60, "x-ground": "name",
                  "description": "the device, as the user named it"}
        percent = {"type": "integer", "minimum": 0, "maximum": 100, "x-ground": "percent"}  # said, never a default
        door = {**device, "description": "the door, as the user named it"}

        def schema(props: dict[str, Any], required: list[str], model: list[str] | None = None) -> dict[str, Any]:
            out = {"type": "object", "properties": props, "required": required, "additionalProperties": False}
            return {**out, "x-model-required": model} if model is not None else out

        # Filled by code only (the sentence library reads them from the user's words; never shown to the model nor
        # decoded): a call with these and no name acts on a group, "turn off the lights in the kitchen".
        code = {"type": "string", "maxLength": 60, "x-ground": "code"}
        group = {"area": code, "device_class": code, "except": code}  # except: a room, floor or device left out
        named = ["device"]  # what the model must fill in these tools: it never makes a group call
        switchable = {"domain": {**code, "enum": list(SWITCHABLE)}}
        lights = {"domain": {**code, "enum": ["light"]}}  # "dim the lights" in every room: the home's lights
        question = {"domain": {**code, "enum": sorted(CONTROLLABLE | {"binary_sensor"})},
                    "state": {**code, "enum": list(STATES)},
                    "question": {**code, "enum": ["one", "any", "all", "which", "how_many"]}}

        def tool(name: str, description: str, parameters: dict[str, Any], handler: Any,
                 consequential: bool = False, read_only: bool = False, sides: tuple[str, str] | None = None) -> Tool:
            return Tool(name, description, parameters, _answering(handler), family="home", consequential=consequential,
                        read_only=read_only, sides=sides,
                        offered=self._has(*KINDS[name]),
                        sensitive=self.lets_people_in if name in ("open_cover", "set_cover_position") else None,
                        counted=self._counted(name) if name in ("open_cover", "unlock_door") else None)

        return [
            tool("turn_on", "Switch on a light or a device.",
                 schema({"device": device, **group, **switchable}, [], named), self._turn_on, sides=("on", "off")),
            tool("turn_off", "Switch off a light or a device.",
                 schema({"device": device, **group, **switchable}, [], named), self._turn_off, sides=("off", "on")),
            tool("toggle", "Switch a light or a device on if it is off, off if it is on.",
                 schema({"device": device}, ["device"]), self._toggle),
            tool("set_brightness", "Set a light's brightness in percent.",
                 schema({"device": device, "percent": percent, "step": {**code, "enum": list(STEPS)}, **group,
                         **lights}, [], ["device", "percent"]), self._brightness),
            tool("set_color", "Set a light's colour.",
                 schema({"device": device, "color": {"type": "string", "enum": [*COLOURS, *WHITES]}, **group,
                         **lights}, ["color"], ["device", "color"]), self._colour),
            tool("open_cover", "Open blinds, curtains or shutters.", schema({"device": device, **group}, [], named),
                 self._open, sides=("open", "close")),
            tool("close_cover", "Close blinds, curtains or shutters.", schema({"device": device, **group}, [], named),
                 self._close, sides=("close", "open")),
            tool("set_cover_position", "Open blinds or curtains part way, in percent.",
                 schema({"device": device, "percent": percent}, ["device", "percent"]), self._position),
            # "turn the heating up two degrees": a step up or down `by` degrees (one if not said) from the target the
            # thermostat reports, filled by code (the sentence library); it stands in for the temperature, which the
            # model must always give and the templates ask for when neither is said ("make it warmer")
            tool("set_temperature", "Set the thermostat's target temperature in degrees.",
                 schema({"temperature": {"type": "number", "minimum": 5, "maximum": 95, "x-ground": "number"},
                         "device": device,
                         "step": {**code, "enum": list(STEPS), "x-instead-of": "temperature"},
                         "by": {"type": "number", "minimum": 0.5, "maximum": 10, "x-ground": "code"}},
                        [], ["temperature"]), self._temperature),
            tool("set_climate_mode", "Switch the thermostat to heating, cooling, auto or off.",
                 schema({"mode": {"type": "string", "enum": ["heat", "cool", "auto", "off"]}, "device": device},
                        ["mode"]), self._mode),
            tool("set_fan_speed", "Set a fan's speed in percent.",
                 schema({"device": device, "percent": percent, "step": {**code, "enum": list(STEPS)}}, ["device"],
                        ["device", "percent"]), self._fan),
            tool("activate_scene", "Turn on a scene.", schema({"scene": device}, ["scene"]), self._scene),
            tool("lock_door", "Lock a door.", schema({"door": door, **group}, [], ["door"]), self._lock_door,
                 sides=("lock", "unlock")),
            tool("unlock_door", "Unlock a door.", schema({"door": door, **group}, [], ["door"]), self._unlock_door,
                 consequential=True, sides=("unlock", "lock")),
            tool("arm_alarm", "Arm the security alarm.",
                 schema({"mode": {"type": "string", "enum": ["home", "away", "night"]}}, []), self._arm,
                 consequential=True, sides=("arm", "disarm")),
            tool("disarm_alarm", "Disarm the security alarm.", schema({}, []), self._disarm, consequential=True,
                 sides=("disarm", "arm")),
            tool("device_state", "Say whether a device is on or off, open or closed, locked or unlocked.",
                 schema({"device": device, **group, **question}, [], named), self._state, read_only=True),
            tool("sensor_value", "Say the temperature or humidity, optionally in one room.",
                 schema({"quantity": {"type": "string", "enum": ["temperature", "humidity"]},
                         "area": {"type": "string", "maxLength": 40, "x-ground": "name"}}, ["quantity"]),
                 self._sensor, read_only=True),
        ]
