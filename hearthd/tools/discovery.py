"""Home Assistant MQTT discovery: config topics and payloads → entities hearthd can act on.

Parses `<prefix>/<component>/[<node_id>/]<object_id>/config` and device-based discovery
(`<prefix>/device/<id>/config` with `cmps`), expands abbreviated keys and `~` base topics, and treats an
empty payload as a removal. Pure functions: no MQTT here, so parsing is tested (and fuzzed) on its own.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import HearthdError

COMPONENTS = ("light", "switch", "fan", "cover", "climate", "lock", "alarm_control_panel", "scene", "button",
              "sensor", "binary_sensor", "select", "number", "text")


class DiscoveryError(HearthdError):
    """A discovery payload that cannot be used (not JSON, not an object, unknown component…)."""

    code = "discovery-invalid"


class JunkName(DiscoveryError):
    """An entity whose name has no letter in any script ("+", "-1"): nobody can say it, so it is not catalogued."""

    code = "discovery-junk-name"


class LongName(JunkName):
    """An entity, device or area name longer than anyone says (MAX_NAME_CHARS): a publisher's bug or an attack that
    would be read into every template and said in every reply about it. Not catalogued, like a name with no letter."""

    code = "discovery-long-name"


class UnsafeJson(HearthdError):
    """JSON hearthd refuses before or while parsing it: nested too deeply, or a number that is not finite. Not a
    ValueError: who reads network JSON catches `(ValueError, UnsafeJson)` (json.JSONDecodeError is one)."""

    code = "json-unsafe"


MAX_NAME_CHARS = 100  # "Living Room Ceiling Light Left" is 30; Home Assistant's longest generated names stay under 80
MAX_JSON_DEPTH = 32  # discovery nests 4-5 levels; a state rarely more. Deeper is refused before json.loads
MAX_JSON_INT = 10**18  # beyond it an integer cannot be a brightness, a position or a topic base, and float() of
# it (10**400) overflows where state is scaled
_STRINGS = re.compile(r'"(?:[^"\\]|\\.)*"', re.S)
_NOT_BRACKETS = re.compile(r"[^\[\]{}]+")
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F]")


def json_depth_within(text: str, max_depth: int) -> bool:
    """Whether the arrays and objects of `text` nest at most `max_depth` deep, counted without parsing (strings
    skipped), so that a payload of 100,000 '[' never reaches json.loads and its RecursionError."""
    if text.count("[") + text.count("{") <= max_depth:
        return True
    depth = 0
    for ch in _NOT_BRACKETS.sub("", _STRINGS.sub("", text)):
        if ch in "[{":
            depth += 1
            if depth > max_depth:
                return False
        else:
            depth -= 1
    return True


def _reject_constant(name: str) -> Any:
    raise UnsafeJson(f"{name} is not valid JSON")


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # 1e999
        raise UnsafeJson(f"{text[:20]} is not a finite number")
    return value


def _bounded_int(text: str) -> int:
    value = int(text)
    if abs(value) > MAX_JSON_INT:
        raise UnsafeJson(f"{text[:20]}… is out of range")
    return value


def load_json(text: str, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """`json.loads` for what arrives from the network: nesting beyond `max_depth` is refused before parsing, and
    NaN/Infinity, numbers that overflow to infinity and integers beyond 10**18 are refused while parsing.
    A lone surrogate (`"\\ud800"`, which no UTF-8 file can hold: saving the catalogue failed on it) is refused too.
    Raises ValueError (json.JSONDecodeError, or an integer beyond Python's digit limit) or UnsafeJson."""
    if not json_depth_within(text, max_depth):
        raise UnsafeJson(f"nested deeper than {max_depth}")
    try:
        data = json.loads(text, parse_constant=_reject_constant, parse_float=_finite_float, parse_int=_bounded_int)
    except RecursionError:  # the count above should make this unreachable; belt and braces
        raise UnsafeJson("nested too deeply") from None
    if _SURROGATE_ESCAPE.search(text):  # pairs decode to one character; a lone one stays a surrogate
        try:
            json.dumps(data, ensure_ascii=False).encode("utf-8")
        except UnicodeEncodeError:
            raise UnsafeJson("a lone surrogate (\\ud800-\\udfff) is not text") from None
    return data


def has_letter(name: str) -> bool:
    """A name someone can say: at least one letter, in any script."""
    return any(ch.isalpha() for ch in name)


@dataclass
class Entity:
    """One discovered entity; `config` has full key names and `~` already expanded."""

    source: str  # the discovery config it came from: "light/node/object" or "device/<id>"
    key: str  # stable id: "<component>.<unique_id>", else "<component>.<node_id>_<object_id>"
    component: str
    name: str  # what people call it: the entity name, or the device name (+ entity name)
    area: str = ""  # the device's suggested_area (or the config's own "area"/"suggested_area")
    device: str = ""  # the device's name
    config: dict[str, Any] = field(default_factory=dict)

    def topic(self, key: str) -> str:
        """A topic from the config ("command_topic"), "" when absent."""
        value = self.config.get(key)
        return value if isinstance(value, str) else ""

    def payload(self, key: str, default: str) -> str:
        value = self.config.get(key, default)
        return value if isinstance(value, str) else str(value)

    def to_dict(self) -> dict[str, Any]:
        return {"source": self.source, "key": self.key, "component": self.component, "name": self.name,
                "area": self.area, "device": self.device, "config": self.config}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Entity:
        return cls(**{k: data[k] for k in ("source", "key", "component", "name", "area", "device", "config")})


@dataclass
class Discovery:
    """What one config message says: the entities of `source` are now exactly `entities` (none = removed)."""

    source: str
    entities: list[Entity]


# Home Assistant's abbreviations for discovery payloads (homeassistant/components/mqtt/abbreviations.py).
ABBREVIATIONS: dict[str, str] = {
    "act_t": "action_topic", "act_tpl": "action_template", "atype": "automation_type",
    "aux_cmd_t": "aux_command_topic", "aux_stat_t": "aux_state_topic", "aux_stat_tpl": "aux_state_template",
    "av_tones": "available_tones", "avty": "availability", "avty_mode": "availability_mode",
    "avty_t": "availability_topic", "avty_tpl": "availability_template",
    "away_mode_cmd_t": "away_mode_command_topic", "away_mode_stat_t": "away_mode_state_topic",
    "away_mode_stat_tpl": "away_mode_state_template",
    "b_tpl": "blue_template", "bri_cmd_t": "brightness_command_topic", "bri_cmd_tpl": "brightness_command_template",
    "bri_scl": "brightness_scale", "bri_stat_t": "brightness_state_topic", "bri_tpl": "brightness_template",
    "bri_val_tpl": "brightness_value_template",
    "clr_temp_cmd_t": "color_temp_command_topic", "clr_temp_cmd_tpl": "color_temp_command_template",
    "clr_temp_k": "color_temp_kelvin", "clr_temp_stat_t": "color_temp_state_topic",
    "clr_temp_tpl": "color_temp_template", "clr_temp_val_tpl": "color_temp_value_template",
    "clrm": "color_mode", "clrm_stat_t": "color_mode_state_topic", "clrm_val_tpl": "color_mode_value_template",
    "cmd_off_tpl": "command_off_template", "cmd_on_tpl": "command_on_template", "cmd_t": "command_topic",
    "cmd_tpl": "command_template", "cmps": "components",
    "cod_arm_req": "code_arm_required", "cod_dis_req": "code_disarm_required", "cod_trig_req": "code_trigger_required",
    "cont_type": "content_type", "curr_hum_t": "current_humidity_topic", "curr_hum_tpl": "current_humidity_template",
    "curr_temp_t": "current_temperature_topic", "curr_temp_tpl": "current_temperature_template",
    "def_ent_id": "default_entity_id", "dev": "device", "dev_cla": "device_class",
    "dir_cmd_t": "direction_command_topic", "dir_cmd_tpl": "direction_command_template",
    "dir_stat_t": "direction_state_topic", "dir_val_tpl": "direction_value_template",
    "dsp_prc": "display_precision",
    "e": "encoding", "en": "enabled_by_default", "ent_cat": "entity_category", "ent_pic": "entity_picture",
    "evt_typ": "event_types", "exp_aft": "expire_after",
    "fan_mode_cmd_t": "fan_mode_command_topic", "fan_mode_cmd_tpl": "fan_mode_command_template",
    "fan_mode_stat_t": "fan_mode_state_topic", "fan_mode_stat_tpl": "fan_mode_state_template",
    "fanspd_lst": "fan_speed_list", "flsh": "flash", "flsh_tlng": "flash_time_long", "flsh_tsht": "flash_time_short",
    "frc_upd": "force_update",
    "fx_cmd_t": "effect_command_topic", "fx_cmd_tpl": "effect_command_template", "fx_list": "effect_list",
    "fx_stat_t": "effect_state_topic", "fx_tpl": "effect_template", "fx_val_tpl": "effect_value_template",
    "g_tpl": "green_template",
    "hs_cmd_t": "hs_command_topic", "hs_cmd_tpl": "hs_command_template", "hs_stat_t": "hs_state_topic",
    "hs_val_tpl": "hs_value_template",
    "hum_cmd_t": "target_humidity_command_topic", "hum_cmd_tpl": "target_humidity_command_template",
    "hum_stat_t": "target_humidity_state_topic", "hum_state_tpl": "target_humidity_state_template",
    "ic": "icon", "img_e": "image_encoding", "img_t": "image_topic", "init": "initial",
    "json_attr": "json_attributes", "json_attr_t": "json_attributes_topic", "json_attr_tpl": "json_attributes_template",
    "l_ver_t": "latest_version_topic", "l_ver_tpl": "latest_version_template",
    "lrst_t": "last_reset_topic", "lrst_val_tpl": "last_reset_value_template",
    "max": "max", "max_hum": "max_humidity", "max_k": "max_kelvin", "max_mirs": "max_mireds", "max_temp": "max_temp",
    "migr_discvry": "migrate_discovery",
    "min": "min", "min_hum": "min_humidity", "min_k": "min_kelvin", "min_mirs": "min_mireds", "min_temp": "min_temp",
    "mode": "mode", "mode_cmd_t": "mode_command_topic", "mode_cmd_tpl": "mode_command_template",
    "mode_stat_t": "mode_state_topic", "mode_stat_tpl": "mode_state_template", "modes": "modes",
    "name": "name", "o": "origin", "obj_id": "object_id", "off_dly": "off_delay", "on_cmd_type": "on_command_type",
    "ops": "options", "opt": "optimistic",
    "osc_cmd_t": "oscillation_command_topic", "osc_cmd_tpl": "oscillation_command_template",
    "osc_stat_t": "oscillation_state_topic", "osc_val_tpl": "oscillation_value_template",
    "p": "platform",
    "pct_cmd_t": "percentage_command_topic", "pct_cmd_tpl": "percentage_command_template",
    "pct_stat_t": "percentage_state_topic", "pct_val_tpl": "percentage_value_template",
    "pl": "payload", "pl_arm_away": "payload_arm_away", "pl_arm_custom_b": "payload_arm_custom_bypass",
    "pl_arm_home": "payload_arm_home", "pl_arm_nite": "payload_arm_night", "pl_arm_vacation": "payload_arm_vacation",
    "pl_avail": "payload_available", "pl_cln_sp": "payload_clean_spot", "pl_cls": "payload_close",
    "pl_dir_fwd": "payload_direction_forward", "pl_dir_rev": "payload_direction_reverse",
    "pl_disarm": "payload_disarm", "pl_home": "payload_home", "pl_inst": "payload_install",
    "pl_loc": "payload_locate", "pl_lock": "payload_lock", "pl_not_avail": "payload_not_available",
    "pl_not_home": "payload_not_home", "pl_off": "payload_off", "pl_on": "payload_on", "pl_open": "payload_open",
    "pl_osc_off": "payload_oscillation_off", "pl_osc_on": "payload_oscillation_on", "pl_paus": "payload_pause",
    "pl_prs": "payload_press", "pl_ret": "payload_return_to_base", "pl_rst": "payload_reset",
    "pl_rst_hum": "payload_reset_humidity", "pl_rst_mode": "payload_reset_mode",
    "pl_rst_pct": "payload_reset_percentage", "pl_rst_pr_mode": "payload_reset_preset_mode",
    "pl_stop": "payload_stop", "pl_stop_tilt": "payload_stop_tilt", "pl_strt": "payload_start",
    "pl_stpa": "payload_start_pause", "pl_toff": "payload_turn_off", "pl_ton": "payload_turn_on",
    "pl_trig": "payload_trigger", "pl_unlk": "payload_unlock",
    "pos": "reports_position", "pos_clsd": "position_closed", "pos_open": "position_open",
    "pos_t": "position_topic", "pos_tpl": "position_template",
    "pow_cmd_t": "power_command_topic", "pow_cmd_tpl": "power_command_template",
    "pr_mode_cmd_t": "preset_mode_command_topic", "pr_mode_cmd_tpl": "preset_mode_command_template",
    "pr_mode_stat_t": "preset_mode_state_topic", "pr_mode_val_tpl": "preset_mode_value_template",
    "pr_modes": "preset_modes", "ptrn": "pattern",
    "r_tpl": "red_template", "rel_s": "release_summary", "rel_u": "release_url", "ret": "retain",
    "rgb_cmd_t": "rgb_command_topic", "rgb_cmd_tpl": "rgb_command_template", "rgb_stat_t": "rgb_state_topic",
    "rgb_val_tpl": "rgb_value_template",
    "rgbw_cmd_t": "rgbw_command_topic", "rgbw_cmd_tpl": "rgbw_command_template", "rgbw_stat_t": "rgbw_state_topic",
    "rgbw_val_tpl": "rgbw_value_template",
    "rgbww_cmd_t": "rgbww_command_topic", "rgbww_cmd_tpl": "rgbww_command_template",
    "rgbww_stat_t": "rgbww_state_topic", "rgbww_val_tpl": "rgbww_value_template",
    "send_cmd_t": "send_command_topic", "send_if_off": "send_if_off", "set_fan_spd_t": "set_fan_speed_topic",
    "set_pos_t": "set_position_topic", "set_pos_tpl": "set_position_template",
    "spd_rng_max": "speed_range_max", "spd_rng_min": "speed_range_min", "src_type": "source_type",
    "stat_cla": "state_class", "stat_closing": "state_closing", "stat_clsd": "state_closed",
    "stat_jam": "state_jammed", "stat_locked": "state_locked", "stat_locking": "state_locking",
    "stat_off": "state_off", "stat_on": "state_on", "stat_open": "state_open", "stat_opening": "state_opening",
    "stat_stopped": "state_stopped", "stat_t": "state_topic", "stat_tpl": "state_template",
    "stat_unlocked": "state_unlocked", "stat_unlocking": "state_unlocking", "stat_val_tpl": "state_value_template",
    "step": "step", "stype": "subtype", "sug_dsp_prc": "suggested_display_precision",
    "sup_clrm": "supported_color_modes", "sup_dur": "support_duration", "sup_feat": "supported_features",
    "sup_vol": "support_volume_set",
    "swing_h_mode_cmd_t": "swing_horizontal_mode_command_topic",
    "swing_h_mode_cmd_tpl": "swing_horizontal_mode_command_template",
    "swing_h_mode_stat_t": "swing_horizontal_mode_state_topic",
    "swing_h_mode_stat_tpl": "swing_horizontal_mode_state_template", "swing_h_modes": "swing_horizontal_modes",
    "swing_mode_cmd_t": "swing_mode_command_topic", "swing_mode_cmd_tpl": "swing_mode_command_template",
    "swing_mode_stat_t": "swing_mode_state_topic", "swing_mode_stat_tpl": "swing_mode_state_template",
    "t": "topic",
    "temp_cmd_t": "temperature_command_topic", "temp_cmd_tpl": "temperature_command_template",
    "temp_hi_cmd_t": "temperature_high_command_topic", "temp_hi_cmd_tpl": "temperature_high_command_template",
    "temp_hi_stat_t": "temperature_high_state_topic", "temp_hi_stat_tpl": "temperature_high_state_template",
    "temp_lo_cmd_t": "temperature_low_command_topic", "temp_lo_cmd_tpl": "temperature_low_command_template",
    "temp_lo_stat_t": "temperature_low_state_topic", "temp_lo_stat_tpl": "temperature_low_state_template",
    "temp_stat_t": "temperature_state_topic", "temp_stat_tpl": "temperature_state_template",
    "temp_unit": "temperature_unit",
    "tilt_clsd_val": "tilt_closed_value", "tilt_cmd_t": "tilt_command_topic", "tilt_cmd_tpl": "tilt_command_template",
    "tilt_max": "tilt_max", "tilt_min": "tilt_min", "tilt_opnd_val": "tilt_opened_value",
    "tilt_opt": "tilt_optimistic", "tilt_status_t": "tilt_status_topic", "tilt_status_tpl": "tilt_status_template",
    "tit": "title", "trns": "transition",
    "uniq_id": "unique_id", "unit_of_meas": "unit_of_measurement", "url_t": "url_topic", "url_tpl": "url_template",
    "val_tpl": "value_template", "whit_cmd_t": "white_command_topic", "whit_scl": "white_scale",
    "xy_cmd_t": "xy_command_topic", "xy_cmd_tpl": "xy_command_template", "xy_stat_t": "xy_state_topic",
    "xy_val_tpl": "xy_value_template",
}

# Keys inside `device` and `origin` have their own (smaller) tables.
DEVICE_ABBREVIATIONS: dict[str, str] = {
    "cns": "connections", "cu": "configuration_url", "hw": "hw_version", "ids": "identifiers", "mf": "manufacturer",
    "mdl": "model", "mdl_id": "model_id", "name": "name", "sa": "suggested_area", "sn": "serial_number",
    "sw": "sw_version", "via_device": "via_device",
}
ORIGIN_ABBREVIATIONS: dict[str, str] = {"name": "name", "sw": "sw_version", "url": "support_url"}

# Options a device-based config's components inherit unless they set their own (HA's SHARED_OPTIONS, plus `~`).
SHARED_OPTIONS = ("availability", "availability_mode", "availability_template", "availability_topic",
                  "command_topic", "encoding", "payload_available", "payload_not_available", "qos", "state_topic",
                  "~")

TOPIC_BASE = "~"
_ID = re.compile(r"[A-Za-z0-9_-]+")  # HA ignores config topics whose ids have anything else

# A component is usable when it has at least one of these topics (a command-less light is a read-only one).
_NEEDS: dict[str, tuple[str, ...]] = {
    "light": ("command_topic", "state_topic"),
    "switch": ("command_topic", "state_topic"),
    "fan": ("command_topic", "state_topic"),
    "lock": ("command_topic", "state_topic"),
    "alarm_control_panel": ("command_topic", "state_topic"),
    "select": ("command_topic", "state_topic"),
    "number": ("command_topic", "state_topic"),
    "text": ("command_topic", "state_topic"),
    "cover": ("command_topic", "set_position_topic", "tilt_command_topic", "state_topic", "position_topic",
              "tilt_status_topic"),
    "scene": ("command_topic",),
    "button": ("command_topic",),
    "sensor": ("state_topic",),
    "binary_sensor": ("state_topic",),
}
# Topics that say nothing about the entity's own state or control, so they do not make a climate usable.
_AUXILIARY_TOPICS = ("availability_topic", "json_attributes_topic")


def _rename(config: dict[str, Any], table: dict[str, str]) -> dict[str, Any]:
    """A copy of `config` with `table`'s abbreviated keys replaced by their full names."""
    out = {key: value for key, value in config.items() if key not in table}
    # Second pass so that, as in HA, an abbreviated key wins over the same option spelled out.
    out.update((table[key], value) for key, value in config.items() if key in table)
    return out


def _expand_keys(config: dict[str, Any], component_only: bool = False) -> dict[str, Any]:
    """Full key names everywhere HA expands them; `~` untouched. Returns new dicts, never changes `config`."""
    out = _rename(config, ABBREVIATIONS)
    availability = out.get("availability")
    if isinstance(availability, list):
        out["availability"] = [_rename(item, ABBREVIATIONS) if isinstance(item, dict) else item
                                for item in availability]
    elif isinstance(availability, dict):
        out["availability"] = _rename(availability, ABBREVIATIONS)
    if component_only:  # a device-based component's device and origin come from the device config
        return out
    for key, table in (("device", DEVICE_ABBREVIATIONS), ("origin", ORIGIN_ABBREVIATIONS)):
        if isinstance(out.get(key), dict):
            out[key] = _rename(out[key], table)
    components = out.get("components")
    if isinstance(components, dict):
        out["components"] = {cid: _expand_keys(comp, component_only=True) if isinstance(comp, dict) else comp
                             for cid, comp in components.items()}
    return out


def _rebased(value: str, base: str) -> str:
    """`~` at the start or end of a topic → `base`."""
    if not value:
        return value
    out = base + value[1:] if value[0] == TOPIC_BASE else value
    if len(value) > 1 and value[-1] == TOPIC_BASE:
        out = out[:-1] + base
    return out


def _apply_base(config: dict[str, Any]) -> None:
    """Replace `~` in config's topics (top level and availability entries) in place, and drop the `~` key."""
    if TOPIC_BASE not in config:
        return
    base = config.pop(TOPIC_BASE)
    if isinstance(base, (int, float)) and not isinstance(base, bool):
        base = str(base)  # HA formats whatever it gets; a number still makes a topic
    if not isinstance(base, str):
        raise DiscoveryError(f"'~' must be a string, not {_json_type(base)}")
    for key, value in config.items():
        if key.endswith("topic") and isinstance(value, str):
            config[key] = _rebased(value, base)
    availability = config.get("availability")
    for item in availability if isinstance(availability, list) else [availability]:
        if isinstance(item, dict) and isinstance(item.get("topic"), str):
            item["topic"] = _rebased(item["topic"], base)


def expand(config: dict[str, Any]) -> dict[str, Any]:
    """Abbreviated keys → full keys (also inside `device`/`dev`, `availability`/`avty`, `origin`/`o`);
    `~` at the start or end of a *_topic value → the base topic.

    In a device-based config each component's topics use its own `~`, else the device config's.
    Returns a new dict; raises DiscoveryError for a `~` that is not a string."""
    out = _expand_keys(config)
    components = out.get("components")
    if isinstance(components, dict):
        for comp in components.values():
            if isinstance(comp, dict):
                if TOPIC_BASE in out:
                    comp.setdefault(TOPIC_BASE, out[TOPIC_BASE])
                _apply_base(comp)
    _apply_base(out)
    return out


def _json_type(value: object) -> str:
    """How JSON would call `value`'s type, for error messages."""
    names = {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}
    return names.get(type(value), "a number")


def _text(value: object, what: str) -> str:
    """A string option as text: "" for null; numbers accepted as HA's cv.string does."""
    if value is None:
        return ""
    if isinstance(value, str):
        return value.strip()
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        return str(value)
    raise DiscoveryError(f"{what} must be a string, not {_json_type(value)}")


def _load(payload: bytes | str, max_depth: int = MAX_JSON_DEPTH) -> dict[str, Any] | None:
    """The payload's JSON object; None for an empty payload (a removal)."""
    if isinstance(payload, (bytes, bytearray, memoryview)):
        try:
            text = bytes(payload).decode("utf-8")
        except UnicodeDecodeError as exc:
            raise DiscoveryError(f"payload is not UTF-8 ({exc.reason} at byte {exc.start})") from None
    elif isinstance(payload, str):
        text = payload
    else:
        raise DiscoveryError(f"payload must be bytes or str, not {type(payload).__name__}")
    if not text.strip():
        return None
    try:
        data = load_json(text, max_depth)
    except (ValueError, UnsafeJson) as exc:  # JSONDecodeError, and ints beyond Python's digit limit
        raise DiscoveryError(f"payload is not JSON: {exc}") from None
    if not isinstance(data, dict):
        raise DiscoveryError(f"payload must be a JSON object, not {_json_type(data)}")
    return data


def _parse_topic(topic: str, prefix: str) -> tuple[str, str, str] | None:
    """(component, node_id, object_id) of a config topic hearthd handles, node_id "" when absent; else None."""
    head = prefix.rstrip("/") + "/" if prefix else ""
    if not topic.startswith(head):
        return None
    parts = topic[len(head):].split("/")
    if len(parts) not in (3, 4) or parts[-1] != "config":
        return None
    component, ids = parts[0], parts[1:-1]
    if component != "device" and component not in COMPONENTS:
        return None  # vacuum, update, tag…: valid discovery, but nothing hearthd acts on
    if not all(_ID.fullmatch(part) for part in ids):
        return None
    node_id, object_id = (ids[0], ids[1]) if len(ids) == 2 else ("", ids[0])
    return component, node_id, object_id


def is_command_topic(key: str) -> bool:
    """Whether a config key names a topic hearthd publishes to (a command), not one it reads."""
    return key.endswith("command_topic") or key == "set_position_topic"


def _check(component: str, config: dict[str, Any]) -> None:
    """Raise DiscoveryError unless `config` has string topics and the ones `component` needs."""
    for key, value in config.items():
        if key.endswith("topic") and not isinstance(value, str):
            raise DiscoveryError(f"{component}: {key} must be a string, not {_json_type(value)}")
        if is_command_topic(key) and any(ch in value for ch in "+#\x00"):
            # HA's valid_publish_topic: a command cannot be published to a wildcard (the MQTT client refuses it)
            raise DiscoveryError(f"{component}: {key} {value[:40]!r} has a wildcard or NUL: nothing can be sent there")
    if "availability" in config and config["availability"] is None:
        del config["availability"]  # `"avty": null` means none, like leaving it out
    availability = config.get("availability")
    if availability is not None:
        items = [availability] if isinstance(availability, dict) else availability
        if not isinstance(items, list):
            raise DiscoveryError(f"{component}: availability must be a list, not {_json_type(availability)}")
        for item in items:
            if not isinstance(item, dict) or not isinstance(item.get("topic"), str) or not item["topic"]:
                raise DiscoveryError(f"{component}: each availability entry must be an object with a topic")
        config["availability"] = items  # HA's cv.ensure_list: one entry may come without its list
    needs = _NEEDS.get(component)
    if needs is None:  # climate: any topic of its own will do
        needs = tuple(key for key in config if key.endswith("_topic") and key not in _AUXILIARY_TOPICS)
    if not any(isinstance(config.get(key), str) and config[key] for key in needs):
        wanted = " or ".join(_NEEDS.get(component, ("command or state topic",)))
        raise DiscoveryError(f"{component} has no {wanted}")


def _entity(source: str, component: str, node_id: str, object_id: str, label: str,
            config: dict[str, Any]) -> Entity:
    """One entity from its expanded config; `label` is the id to name it by when nothing else names it."""
    _check(component, config)
    device = config.get("device")
    if device is not None and not isinstance(device, dict):
        raise DiscoveryError(f"{component}: device must be an object, not {_json_type(device)}")
    origin = config.get("origin")
    if origin is not None and not isinstance(origin, dict):
        raise DiscoveryError(f"{component}: origin must be an object, not {_json_type(origin)}")
    device = device or {}
    device_name = _text(device.get("name"), "device name")
    unique_id = config.get("unique_id")
    if isinstance(unique_id, (int, float)) and not isinstance(unique_id, bool):
        unique_id = str(unique_id)
    if unique_id is not None and not isinstance(unique_id, str):
        raise DiscoveryError(f"{component}: unique_id must be a string, not {_json_type(unique_id)}")
    if unique_id and unique_id.strip():
        key = f"{component}.{unique_id}"
    else:
        key = f"{component}.{node_id}_{object_id}" if node_id else f"{component}.{object_id}"
    # HA: a null name makes the entity the device's main feature, called by the device's name. An absent one
    # gets the same here: HA's own default ("MQTT Light") is no name anyone would say.
    name = (_text(config.get("name"), f"{component} name") or device_name
            or " ".join(label.replace("_", " ").split()) or label.strip() or component)
    if not has_letter(name):
        raise JunkName(f"{component}: the name {name[:40]!r} has no letter")
    area = _text(device.get("suggested_area"), "suggested_area")
    if not area:  # not an HA option, but some publishers put the room on the entity itself
        area = next((value.strip() for value in (config.get("suggested_area"), config.get("area"))
                     if isinstance(value, str) and value.strip()), "")
    for what, text in (("device name", device_name), ("area", area), ("name", name)):
        if len(text) > MAX_NAME_CHARS:
            raise LongName(f"{component}: the {what} {text[:40]!r}… is {len(text)} characters long "
                           f"(at most {MAX_NAME_CHARS})")
    return Entity(source=source, key=key, component=component, name=name, area=area, device=device_name,
                  config=config)


def _copy(value: Any) -> Any:
    """A copy of a shared option deep enough that rebasing one component's topics leaves the others alone."""
    if isinstance(value, list):
        return [dict(item) if isinstance(item, dict) else item for item in value]
    return dict(value) if isinstance(value, dict) else value


def _device_entities(source: str, node_id: str, device_id: str, data: dict[str, Any]) -> list[Entity]:
    """The entities of a device-based config: each of `components` with the device's shared options."""
    config = _expand_keys(data)
    device, origin, components = config.get("device"), config.get("origin"), config.get("components")
    if not isinstance(device, dict):
        raise DiscoveryError("device discovery needs a 'device' object")
    if not isinstance(components, dict):
        raise DiscoveryError("device discovery needs a 'components' object")
    if origin is not None and not isinstance(origin, dict):
        raise DiscoveryError(f"origin must be an object, not {_json_type(origin)}")
    entities = []
    for cid, comp in components.items():
        if not isinstance(comp, dict):
            raise DiscoveryError(f"component {cid!r} must be an object, not {_json_type(comp)}")
        platform = comp.pop("platform", None)  # comp is _expand_keys' own copy
        if not isinstance(platform, str) or not platform:
            raise DiscoveryError(f"component {cid!r} has no platform")
        if platform not in COMPONENTS:
            continue  # device_automation, update…: nothing hearthd acts on
        if not comp:
            continue  # HA: an entry with only its platform removes that component
        comp["device"] = dict(device)
        if origin is not None:
            comp["origin"] = dict(origin)
        for option in SHARED_OPTIONS:
            if option in config and option not in comp:
                comp[option] = _copy(config[option])
        _apply_base(comp)  # after merging, as HA does, so inherited "~…" topics get the component's base
        # As in HA, the device id is the components' node id, and a node id in the topic prefixes each object id.
        object_id = f"{node_id}_{cid}" if node_id else cid
        try:
            entities.append(_entity(source, platform, device_id, object_id, cid, comp))
        except JunkName:
            continue  # one component nobody can name does not take the device's others with it
    return entities


def parse_discovery(topic: str, payload: bytes | str, prefix: str = "homeassistant",
                    max_depth: int = MAX_JSON_DEPTH) -> Discovery | None:
    """The entities a discovery message defines; None when `topic` is not a discovery config topic.
    Raises DiscoveryError for a config topic whose payload cannot be used (JSON nested beyond `max_depth`,
    non-finite numbers, an entity whose name has no letter among them)."""
    parsed = _parse_topic(topic, prefix)
    if parsed is None:
        return None
    component, node_id, object_id = parsed
    source = "/".join(part for part in (component, node_id, object_id) if part)
    try:
        data = _load(payload, max_depth)
        # An empty payload removes; so does a migration request (the entities move to another config topic).
        if data is None or data.get("migrate_discovery", data.get("migr_discvry")) is True:
            return Discovery(source, [])
        if component == "device":
            return Discovery(source, _device_entities(source, node_id, object_id, data))
        if not data:  # HA treats "{}" like an empty payload
            return Discovery(source, [])
        config = _expand_keys(data)
        _apply_base(config)
        return Discovery(source, [_entity(source, component, node_id, object_id, object_id, config)])
    except DiscoveryError as exc:  # the same kind (a junk or a long name), said with its topic
        raise type(exc)(f"{topic}: {exc}") from None
