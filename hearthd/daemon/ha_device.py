"""hearthd itself as a Home Assistant device: its discovery message, its published state, and the commands Home
Assistant sends to its own entities (mute, listen, language). The MQTT link (mqtt.py) carries the messages;
`ask` and `announce` are requests to the assistant and stay with the link."""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .mqtt import MqttLink

ASSIST_STATES = ("idle", "listening", "thinking", "speaking")


class HaDevice:
    """The entities Home Assistant shows for this hearthd, and their state."""

    commands = ("mute/set", "listen", "language/set")  # own topics under hearthd/<node>/ besides ask, announce

    def __init__(self, link: MqttLink) -> None:
        self.link = link
        self.status: dict[str, Any] = {"assist_state": "idle", "transcript": "", "reply": "",
                                       "language": link.languages[0], "muted": "OFF"}

    @property
    def base(self) -> str:
        return self.link.base

    @property
    def node(self) -> str:
        return self.link.node

    def discovery(self) -> tuple[str, dict[str, Any]]:
        """hearthd's device-based discovery message: an assist-state sensor, last transcript and reply, a mute
        switch, a listen button and a language select, all sharing one state topic and one availability."""
        state = f"{self.base}/state"
        cmps: dict[str, dict[str, Any]] = {
            "assist_state": {"p": "sensor", "name": "Assist state", "stat_t": state, "ic": "mdi:account-voice",
                             "val_tpl": "{{ value_json.assist_state }}", "dev_cla": "enum",
                             "ops": list(ASSIST_STATES), "uniq_id": f"{self.node}_assist_state"},
            "transcript": {"p": "sensor", "name": "Last transcript", "stat_t": state, "ic": "mdi:text",
                           "val_tpl": "{{ value_json.transcript }}", "uniq_id": f"{self.node}_transcript"},
            "reply": {"p": "sensor", "name": "Last reply", "stat_t": state, "ic": "mdi:message-reply-text",
                      "val_tpl": "{{ value_json.reply }}", "uniq_id": f"{self.node}_reply"},
            "mute": {"p": "switch", "name": "Mute", "stat_t": state, "cmd_t": f"{self.base}/mute/set",
                     "val_tpl": "{{ value_json.muted }}", "pl_on": "ON", "pl_off": "OFF", "ic": "mdi:microphone-off",
                     "uniq_id": f"{self.node}_mute"},
            "listen": {"p": "button", "name": "Start listening", "cmd_t": f"{self.base}/listen", "pl_prs": "PRESS",
                       "ic": "mdi:microphone", "uniq_id": f"{self.node}_listen"},
            "language": {"p": "select", "name": "Language", "stat_t": state, "cmd_t": f"{self.base}/language/set",
                         "val_tpl": "{{ value_json.language }}", "ops": list(self.link.languages),
                         "ic": "mdi:translate", "uniq_id": f"{self.node}_language"},
        }
        payload = {
            "dev": {"ids": [f"hearthd_{self.node}"], "name": f"hearthd {self.node}", "mf": "hearthd",
                    "mdl": "voice assistant", "sw": _version()},
            "o": {"name": "hearthd", "sw": _version()},
            "avty_t": f"{self.base}/availability",
            "qos": 1,
            "cmps": cmps,
        }
        return f"{self.link.cfg.discovery_prefix}/device/hearthd_{self.node}/config", payload

    async def publish_self(self, client: Any) -> None:
        if client is None:
            return
        topic, payload = self.discovery()
        await client.publish(topic, json.dumps(payload, ensure_ascii=False), qos=1, retain=True)
        await client.publish(f"{self.base}/availability", "online", qos=1, retain=True)
        await client.publish(f"{self.base}/state", json.dumps(self._state_payload(), ensure_ascii=False), qos=1,
                             retain=True)

    def _state_payload(self) -> dict[str, Any]:
        out = dict(self.status)
        if self.link.privacy:
            out["transcript"] = ""  # privacy mode: what was said stays on this machine
        return out

    async def update(self, **changes: Any) -> None:
        """Change hearthd's published state (assist_state, transcript, reply, language, muted)."""
        if "assist_state" in changes and changes["assist_state"] not in ASSIST_STATES:
            raise ValueError(changes["assist_state"])
        changes = {k: (v[:250] if isinstance(v, str) else v) for k, v in changes.items()}  # HA state limit 255
        if all(self.status.get(k) == v for k, v in changes.items()):
            return
        self.status.update(changes)
        if self.link.cfg.publish_self and not self.link.one_shot:
            await self.link.send_now(f"{self.base}/state", json.dumps(self._state_payload(), ensure_ascii=False),
                                     retain=True)

    async def on_command(self, name: str, text: str) -> None:
        """A command Home Assistant sent to one of hearthd's own entities."""
        h = self.link.handlers
        if name == "mute/set" and text.upper() in ("ON", "OFF"):
            if h.mute is not None:
                h.mute(text.upper() == "ON")
            await self.update(muted=text.upper())
        elif name == "listen" and h.listen is not None:
            h.listen()
        elif name == "language/set" and text in self.link.languages:
            if h.language is not None:
                h.language(text)
            await self.update(language=text)


def _version() -> str:
    from .. import __version__

    return __version__
