"""A device's state as its state topics say it (Home Assistant's MQTT state, brightness, position, percentage,
temperature and mode topics, through the entity's value templates), normalised for hearthd's answers: "on"/"off",
"locked", a brightness in percent, a fan's percentage on Home Assistant's ranged scale.
"""

from __future__ import annotations

import math
from typing import Any

from .discovery import MAX_JSON_DEPTH, Entity, UnsafeJson, load_json
from .templates import number, render_value_template

STATE_MAX_CHARS = 255  # Home Assistant's own limit for a state; longer ones are not kept
STATES = ("on", "off", "locked", "unlocked", "open", "closed")  # tracked states a question can ask about


def brightness_scale(cfg: dict[str, Any]) -> float:
    """The entity's brightness_scale when it is a usable one (a finite number above 0), else Home Assistant's 255."""
    scale = number(str(cfg.get("brightness_scale", 255)))
    return scale if scale is not None and scale > 0 else 255.0


def track(e: Entity, topic: str, payload: str, state: dict[str, Any], max_depth: int = MAX_JSON_DEPTH) -> None:
    """Update `state` from one message on one of the entity's state topics (normalised: "on"/"off", numbers).
    JSON is read bounded (no deep nesting, no non-finite numbers), numbers must be finite, and a state longer
    than STATE_MAX_CHARS is not kept: a retained bad state must not break a restart."""
    cfg = e.config
    if topic not in {v for k, v in cfg.items() if k.endswith("_topic")}:
        return

    def value(template_key: str = "value_template") -> str:
        tpl = cfg.get(template_key)
        rendered = render_value_template(tpl, payload, max_depth) if isinstance(tpl, str) else None
        return payload if rendered is None else rendered

    if topic == cfg.get("state_topic"):
        if e.component == "light" and cfg.get("schema") == "json":
            try:
                data = load_json(payload, max_depth)
            except (ValueError, UnsafeJson):
                return
            if not isinstance(data, dict):
                return
            if isinstance(data.get("state"), str) and len(data["state"]) <= STATE_MAX_CHARS:
                state["state"] = data["state"].lower()
            brightness = data.get("brightness")
            if isinstance(brightness, (int, float)) and not isinstance(brightness, bool) \
                    and math.isfinite(brightness):
                state["brightness"] = round(100 * float(brightness) / brightness_scale(cfg))
            return
        raw = value("state_value_template" if "state_value_template" in cfg else "value_template")
        if len(raw) > STATE_MAX_CHARS:
            return
        if e.component in ("light", "switch", "fan"):
            on = str(cfg.get("state_on", cfg.get("payload_on", "ON")))
            off = str(cfg.get("state_off", cfg.get("payload_off", "OFF")))
            if raw == on:
                state["state"] = "on"
            elif raw == off:
                state["state"] = "off"
        elif e.component == "lock":
            table = {str(cfg.get("state_locked", "LOCKED")): "locked", str(cfg.get("state_unlocked", "UNLOCKED")):
                     "unlocked", str(cfg.get("state_jammed", "JAMMED")): "jammed"}
            if raw in table:
                state["state"] = table[raw]
        elif e.component == "cover":
            table = {str(cfg.get("state_open", "open")): "open", str(cfg.get("state_closed", "closed")): "closed",
                     str(cfg.get("state_opening", "opening")): "opening",
                     str(cfg.get("state_closing", "closing")): "closing"}
            if raw in table:
                state["state"] = table[raw]
        elif e.component in ("sensor", "binary_sensor", "alarm_control_panel", "select", "number"):
            if e.component == "binary_sensor":
                on = str(cfg.get("payload_on", "ON"))
                state["state"] = "on" if raw == on else "off" if raw == str(cfg.get("payload_off", "OFF")) else raw
            else:
                state["state"] = raw
    if topic == cfg.get("position_topic"):
        n = number(value("position_template"))
        if n is not None:
            state["position"] = round(n)
    if topic == cfg.get("brightness_state_topic"):
        n = number(value("brightness_value_template"))
        if n is not None:
            state["brightness"] = round(100 * n / brightness_scale(cfg))
    if topic == cfg.get("percentage_state_topic"):
        n = number(value("percentage_value_template"))
        if n is not None:
            low, high = speed_range(cfg)  # HA: ranged_value_to_percentage
            ranged = (round(n) - low + 1) * 100 // (high - low + 1)
            state["percentage"] = round(n) if (low, high) == (1, 100) else ranged
    if topic == cfg.get("temperature_state_topic"):
        n = number(value("temperature_state_template"))
        if n is not None:
            state["target"] = n
    if topic == cfg.get("current_temperature_topic"):
        n = number(value("current_temperature_template"))
        if n is not None:
            state["current"] = n
    if topic == cfg.get("mode_state_topic"):
        mode = value("mode_state_template")
        if len(mode) <= STATE_MAX_CHARS:
            state["mode"] = mode


def speed_range(cfg: dict[str, Any]) -> tuple[int, int]:
    """A fan's speed_range_min/max (Zigbee2MQTT: 1-3 or 1-4), as Home Assistant reads them; 1-100 by default."""
    low, high = number(str(cfg.get("speed_range_min", 1))), number(str(cfg.get("speed_range_max", 100)))
    if low is None or high is None or not 1 <= low < high <= 1000:
        return 1, 100
    return int(low), int(high)
