"""hearthd itself as a Home Assistant device: its discovery message, its published state, and the commands Home
Assistant sends to its own entities (mute, listen, language). The MQTT link (mqtt.py) carries the messages;
`ask` and `announce` are requests to the assistant and stay with the link.

Each configured Wyoming satellite (daemon/satellites.py) is a connectivity binary_sensor of the device ("<name>
satellite"): ON while hearthd is connected to it, OFF when not, retained on `<base>/satellite/<key>`. A satellite
no longer configured is withdrawn: its component is sent as only its platform (Home Assistant removes it) and its
retained state is cleared, once hearthd sees its own retained discovery still naming it."""

from __future__ import annotations

import contextlib
import hashlib
import json
import logging
import math
import re
from collections.abc import Awaitable
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..events import AlarmEvent, ErrorEvent, Event, ReplyEvent, TranscriptEvent, WakeEvent

if TYPE_CHECKING:
    from .mqtt import MqttLink

log = logging.getLogger(__name__)

ASSIST_STATES = ("idle", "listening", "thinking", "speaking")
EVENT_TYPES = ("wake", "reply", "error", "alarm", "timer")
STATE_MAX = 250  # Home Assistant refuses a state longer than 255 characters: the whole text is an attribute


def machine_key(node: str) -> str:
    """A short stable id for unique ids: this machine's id and the node, hashed (two hosts with one name, or
    two hearthd on one machine with different node ids, never share one; the machine id itself is not shown)."""
    machine = ""
    for path in ("/etc/machine-id", "/var/lib/dbus/machine-id"):
        with contextlib.suppress(OSError):
            machine = Path(path).read_text(encoding="ascii", errors="replace").strip()
            if machine:
                break
    return hashlib.sha256(f"hearthd:{machine}:{node}".encode()).hexdigest()[:12]


class HaDevice:
    """The entities Home Assistant shows for this hearthd, and their state.

    Controls appear only where they do something: Mute, Start listening, Volume and Wake word need the live loop
    (its handlers set); in `--headless` they are withdrawn from Home Assistant, and a command that still arrives
    for one is logged, not silently dropped."""

    # own topics under hearthd/<node>/ besides ask and announce
    commands = ("mute/set", "listen", "language/set", "volume/set", "wake_word/set")

    def __init__(self, link: MqttLink) -> None:
        self.link = link
        self.key = machine_key(link.node)
        self.status: dict[str, Any] = {"assist_state": "idle", "transcript": "", "reply": "",
                                       "language": link.languages[0], "last_language": "", "muted": "OFF",
                                       "volume": 100, "wake_word": "", "error": "none", "problems": 0}
        self.reply_attributes: dict[str, Any] = {"text": "", "lang": ""}
        self.error_attributes: dict[str, Any] = {"code": "", "message": "", "at": ""}
        self.problems: dict[str, str] = {}  # part → what is wrong with it (Components.problems)
        self.satellites: dict[str, bool] = {}  # the configured satellites (by name) → connected now (the daemon)
        self._withdrawn: set[str] = set()  # satellite components of an earlier run to remove (their keys)
        self.ignored = 0  # commands for a control this hearthd does not have
        self.rejected = 0  # commands with a value the control does not take

    @property
    def base(self) -> str:
        return self.link.base

    @property
    def node(self) -> str:
        return self.link.node

    def _id(self, name: str) -> str:
        return f"hearthd_{self.key}_{name}"

    def discovery(self) -> tuple[str, dict[str, Any]]:
        """hearthd's device-based discovery message: its sensors, the event entity, the ask text box and the
        controls this run has, sharing one state topic and one availability; every component carries qos 1
        (Home Assistant does not pass a device-level qos on to the components)."""
        state, base, h = f"{self.base}/state", self.base, self.link.handlers
        cmps: dict[str, dict[str, Any]] = {
            "assist_state": {"p": "sensor", "name": "Assist state", "stat_t": state, "ic": "mdi:account-voice",
                             "val_tpl": "{{ value_json.assist_state }}", "dev_cla": "enum",
                             "ops": list(ASSIST_STATES)},
            "transcript": {"p": "sensor", "name": "Last transcript", "stat_t": state, "ic": "mdi:text",
                           "val_tpl": "{{ value_json.transcript }}"},
            "reply": {"p": "sensor", "name": "Last reply", "stat_t": state, "ic": "mdi:message-reply-text",
                      "val_tpl": "{{ value_json.reply }}", "json_attr_t": f"{base}/reply/attributes"},
            "last_language": {"p": "sensor", "name": "Last language", "stat_t": state, "ic": "mdi:translate",
                              "val_tpl": "{{ value_json.last_language }}", "ent_cat": "diagnostic"},
            "error": {"p": "sensor", "name": "Last error", "stat_t": state, "ic": "mdi:alert-circle-outline",
                      "val_tpl": "{{ value_json.error }}", "json_attr_t": f"{base}/error/attributes",
                      "ent_cat": "diagnostic"},
            "problems": {"p": "sensor", "name": "Problems", "stat_t": state, "ic": "mdi:alert",
                         "val_tpl": "{{ value_json.problems }}", "json_attr_t": f"{base}/problems/attributes",
                         "ent_cat": "diagnostic"},
            "events": {"p": "event", "name": "Events", "stat_t": f"{base}/event", "evt_typ": list(EVENT_TYPES),
                       "ic": "mdi:bell-ring-outline"},
            # one conversation for the text box, so a "yes" typed there answers the question it got
            "ask": {"p": "text", "name": "Ask", "cmd_t": f"{base}/ask",
                    "cmd_tpl": '{"text": {{ value | tojson }}, "conversation_id": "homeassistant"}',
                    "max": 255, "ic": "mdi:chat-question"},
            "language": {"p": "select", "name": "Language", "stat_t": state, "cmd_t": f"{base}/language/set",
                         "val_tpl": "{{ value_json.language }}", "ops": list(self.link.languages),
                         "ic": "mdi:translate", "ent_cat": "config"},
        }
        controls: dict[str, dict[str, Any]] = {
            "mute": {"p": "switch", "name": "Mute", "stat_t": state, "cmd_t": f"{base}/mute/set",
                     "val_tpl": "{{ value_json.muted }}", "pl_on": "ON", "pl_off": "OFF", "ic": "mdi:microphone-off",
                     "ent_cat": "config"},
            "listen": {"p": "button", "name": "Start listening", "cmd_t": f"{base}/listen", "pl_prs": "PRESS",
                       "ic": "mdi:microphone"},
            "volume": {"p": "number", "name": "Volume", "stat_t": state, "cmd_t": f"{base}/volume/set",
                       "val_tpl": "{{ value_json.volume }}", "min": 0, "max": 100, "step": 5, "unit_of_meas": "%",
                       "ic": "mdi:volume-high", "ent_cat": "config"},
            "wake_word": {"p": "select", "name": "Wake word", "stat_t": state, "cmd_t": f"{base}/wake_word/set",
                          "val_tpl": "{{ value_json.wake_word }}", "ops": list(h.wake_words),
                          "ic": "mdi:account-voice", "ent_cat": "config"},
        }
        present = {"mute": h.mute is not None, "listen": h.listen is not None, "volume": h.volume is not None,
                   "wake_word": h.wake_word is not None and bool(h.wake_words)}
        for name, config in controls.items():
            # Withdrawn where it would do nothing: a component with only its platform is removed by Home Assistant
            cmps[name] = config if present[name] else {"p": config["p"]}
        for name, key in self._satellite_keys().items():
            cmps[f"satellite_{key}"] = {"p": "binary_sensor", "name": f"{name} satellite", "dev_cla": "connectivity",
                                        "stat_t": self._satellite_topic(key), "pl_on": "ON", "pl_off": "OFF",
                                        "ent_cat": "diagnostic"}
        for key in sorted(self._withdrawn - set(self._satellite_keys().values())):
            cmps[f"satellite_{key}"] = {"p": "binary_sensor"}
        for name, config in cmps.items():
            if len(config) > 1:
                config.update(uniq_id=self._id(name), obj_id=f"hearthd_{self.node}_{name}", qos=1)
        device = {"ids": [f"hearthd_{self.key}"], "name": f"hearthd {self.node}", "mf": "hearthd",
                  "mdl": "voice assistant", "sw": _version()}
        if self.link.area:  # Home Assistant puts a newly discovered device in this room (the user may move it)
            device["sa"] = self.link.area
        payload = {
            "dev": device,
            "o": {"name": "hearthd", "sw": _version()},
            "avty_t": f"{self.base}/availability",
            "qos": 1,
            "cmps": cmps,
        }
        return self.discovery_topic, payload

    @property
    def discovery_topic(self) -> str:
        return f"{self.link.cfg.discovery_prefix}/device/hearthd_{self.key}/config"

    @property
    def legacy_topic(self) -> str:
        """Where hearthd before 0.x kept its discovery (ids from the host name): cleared so HA shows one device —
        only when a retained config is found there (clearing an empty one made Home Assistant log "No device
        components to cleanup" at every start)."""
        return f"{self.link.cfg.discovery_prefix}/device/hearthd_{self.node}/config"

    async def publish_self(self, client: Any) -> None:
        if client is None:
            return
        topic, payload = self.discovery()
        await client.publish(topic, json.dumps(payload, ensure_ascii=False), qos=1, retain=True)
        await client.publish(f"{self.base}/availability", "online", qos=1, retain=True)
        await client.publish(f"{self.base}/state", json.dumps(self._state_payload(), ensure_ascii=False), qos=1,
                             retain=True)
        await client.publish(f"{self.base}/reply/attributes", json.dumps(self._reply_attributes(),
                                                                          ensure_ascii=False), qos=1, retain=True)
        await client.publish(f"{self.base}/error/attributes", json.dumps(self.error_attributes, ensure_ascii=False),
                             qos=1, retain=True)
        await client.publish(f"{self.base}/problems/attributes", json.dumps(self.problems, ensure_ascii=False),
                             qos=1, retain=True)
        for name, key in self._satellite_keys().items():
            await client.publish(self._satellite_topic(key), "ON" if self.satellites[name] else "OFF", qos=1,
                                 retain=True)

    # -- the satellites' connectivity ------------------------------------------------------------------------

    def _satellite_keys(self) -> dict[str, str]:
        """Each satellite's key in ids and topics: its name in lower-case letters and digits ("Living room" →
        living_room), with a short hash where that is empty or taken."""
        keys: dict[str, str] = {}
        for name in self.satellites:
            key = re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")
            if not key or key in keys.values():
                key = f"{key}_{hashlib.sha256(name.encode()).hexdigest()[:6]}".lstrip("_")
            keys[name] = key
        return keys

    def _satellite_topic(self, key: str) -> str:
        return f"{self.base}/satellite/{key}"

    async def set_satellite(self, name: str, connected: bool) -> None:
        """A satellite connected or was lost (SatelliteHub's on_availability): its binary_sensor follows."""
        if name not in self.satellites:
            return
        self.satellites[name] = connected
        if self._publishing:
            await self.link.send_now(self._satellite_topic(self._satellite_keys()[name]),
                                     "ON" if connected else "OFF", retain=True)

    async def on_own_discovery(self, client: Any, payload: bytes) -> None:
        """hearthd's own retained discovery, as the broker replays it: satellites it still names that are no
        longer configured are withdrawn (discovery sent again without them, their retained state cleared)."""
        if client is None or not self._publishing:
            return
        try:
            cmps = json.loads(payload or b"{}").get("cmps") or {}
        except (ValueError, AttributeError):
            return
        if not isinstance(cmps, dict):
            return
        now = set(self._satellite_keys().values())
        stale = {name[len("satellite_"):] for name, config in cmps.items()
                 if name.startswith("satellite_") and isinstance(config, dict) and len(config) > 1}
        stale -= now
        if not stale - self._withdrawn:
            return
        self._withdrawn |= stale
        topic, discovery = self.discovery()
        await client.publish(topic, json.dumps(discovery, ensure_ascii=False), qos=1, retain=True)
        for key in sorted(stale):
            await client.publish(self._satellite_topic(key), b"", qos=1, retain=True)

    def _state_payload(self) -> dict[str, Any]:
        out = dict(self.status)
        if self.link.privacy:
            out["transcript"] = ""  # privacy mode: what was said stays on this machine
        return out

    def _reply_attributes(self) -> dict[str, Any]:
        return dict(self.reply_attributes)

    @property
    def _publishing(self) -> bool:
        return self.link.cfg.publish_self and not self.link.one_shot

    async def update(self, **changes: Any) -> None:
        """Change hearthd's published state (assist_state, transcript, reply, language, last_language, muted,
        volume, wake_word, error); a reply longer than a state may be is whole in the reply's attributes."""
        if "assist_state" in changes and changes["assist_state"] not in ASSIST_STATES:
            raise ValueError(changes["assist_state"])
        if isinstance(changes.get("reply"), str):
            full = {"text": changes["reply"], "lang": str(changes.pop("reply_lang", ""))}
            if full != self.reply_attributes:
                self.reply_attributes = full
                if self._publishing:
                    await self.link.send_now(f"{self.base}/reply/attributes",
                                             json.dumps(self._reply_attributes(), ensure_ascii=False), retain=True)
        changes.pop("reply_lang", None)
        changes = {k: (_cut(v) if isinstance(v, str) else v) for k, v in changes.items()}
        if all(self.status.get(k) == v for k, v in changes.items()):
            return
        self.status.update(changes)
        if self._publishing:
            await self.link.send_now(f"{self.base}/state", json.dumps(self._state_payload(), ensure_ascii=False),
                                     retain=True)

    async def report_error(self, code: str, message: str) -> None:
        """The diagnostic sensor: the last error's code as its state, the message and time as attributes."""
        self.error_attributes = {"code": code, "message": message[:1000],
                                 "at": datetime.now(UTC).isoformat(timespec="seconds")}
        if self._publishing:
            await self.link.send_now(f"{self.base}/error/attributes",
                                     json.dumps(self.error_attributes, ensure_ascii=False), retain=True)
        await self.update(error=code)

    async def report_problems(self, problems: dict[str, str]) -> None:
        """The Problems sensor: how many parts do not work now (a model that will not load, a read-only store, audit
        turns lost), each part's message as an attribute; published when it changes, so once, not every turn."""
        problems = {part: message[:500] for part, message in problems.items()}
        if problems == self.problems:
            return
        self.problems = problems
        if self._publishing:
            await self.link.send_now(f"{self.base}/problems/attributes", json.dumps(problems, ensure_ascii=False),
                                     retain=True)
        await self.update(problems=len(problems))

    async def fire(self, event_type: str, **attributes: Any) -> None:
        """One occurrence on the event entity (not retained: an event happens once)."""
        if event_type not in EVENT_TYPES or not self._publishing:
            return
        payload = {"event_type": event_type, **{k: v for k, v in attributes.items() if v is not None}}
        await self.link.send_now(f"{self.base}/event", json.dumps(payload, ensure_ascii=False))

    async def on_command(self, name: str, text: str) -> None:
        """A command Home Assistant sent to one of hearthd's own entities."""
        h = self.link.handlers
        value = text.strip()
        if name == "mute/set":
            if value.upper() not in ("ON", "OFF"):
                return self._reject(f"mute: expected ON or OFF, got {value[:20]!r}")
            if h.mute is None:
                return self._no_control("mute")
            h.mute(value.upper() == "ON")
            await self.update(muted=value.upper())
        elif name == "listen":
            if h.listen is None:
                return self._no_control("start listening")
            h.listen()
        elif name == "language/set":
            if value not in self.link.languages:
                return self._reject(f"language: expected one of {', '.join(self.link.languages)}")
            if h.language is not None:
                h.language(value)
            await self.update(language=value)
        elif name == "volume/set":
            try:
                number = float(value)
            except ValueError:
                number = math.nan
            if not math.isfinite(number) or not 0 <= number <= 100:
                return self._reject(f"volume: expected a number 0-100, got {value[:20]!r}")
            if h.volume is None:
                return self._no_control("volume")
            h.volume(round(number))
            await self.update(volume=round(number))
        elif name == "wake_word/set":
            if h.wake_word is None:
                return self._no_control("wake word")
            if value not in h.wake_words:
                return self._reject(f"wake word: expected one of {', '.join(h.wake_words)}")
            h.wake_word(value)
            await self.update(wake_word=value)

    def _no_control(self, what: str) -> None:
        self.ignored += 1
        if self.ignored <= 5 or self.ignored % 100 == 0:
            log.warning("ignoring %s from Home Assistant: this hearthd runs without a microphone (--headless; "
                        "%d so far)", what, self.ignored)

    def _reject(self, why: str) -> None:
        self.rejected += 1
        if self.rejected <= 5 or self.rejected % 100 == 0:
            log.warning("ignoring a command to hearthd's own entities: %s (%d so far)", why, self.rejected)

    def on_event(self, event: Event) -> list[Awaitable[None]]:
        """What a trace event changes in Home Assistant (the daemon runs the returned coroutines)."""
        match event:
            case TranscriptEvent():
                return [self.update(assist_state="thinking", transcript=event.text, last_language=event.lang)]
            case ReplyEvent():
                return [self.update(assist_state="idle", reply=event.text, reply_lang=event.lang),
                        self.fire("reply", text=_cut(event.text), lang=event.lang)]
            case ErrorEvent():
                return [self.report_error(event.code, event.message), self.fire("error", code=event.code)]
            case WakeEvent():
                return [self.fire("wake", name=event.name)]
            case AlarmEvent(count=1):
                kind = "timer" if event.kind == "timer" else "alarm"
                return [self.fire(kind, id=event.id, label=event.label or None)]
        return []


def _cut(text: str) -> str:
    return text if len(text) <= STATE_MAX else text[:STATE_MAX - 1] + "…"


def _version() -> str:
    from .. import __version__

    return __version__
