"""Smart-home devices learned from Home Assistant MQTT discovery: the catalogue, their state, finding the one the
user means, and the commands that act on them.

No MQTT client here: commands go out through a `Publisher` (the daemon's MQTT link), so the tools stay testable
and the link owns reconnects and the queue. The catalogue is saved to a JSON file, so a restart knows every
device (and its last state) before the broker replays its retained messages.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import logging
import math
import os
import re
import tempfile
from collections.abc import Awaitable, Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

from ..errors import HearthdError
from ..locale import languages, table
from ..phonetic import similarity, weight
from ..private import move_aside, private_dir
from .discovery import MAX_JSON_DEPTH, Discovery, Entity, UnsafeJson, load_json
from .registry import Tool, ToolResult

log = logging.getLogger(__name__)

@dataclass(frozen=True)
class HomeWords:
    """The words for a home in every language together (locales/<lang>/home.toml): a device's name, a room or a kind
    may be said in any of them ("kitchen light", "свет на кухне", "रसोई की लाइट")."""

    kinds: dict[str, frozenset[str]]  # words for a kind of device: "kitchen light" finds the light in the Kitchen
    doors: frozenset[str]  # words in a cover's name that say it lets people in
    areas: dict[str, frozenset[str]]  # area words people say, under the English area names devices are given
    fillers: frozenset[str]  # words around a device's name that name nothing: articles, prepositions, particles
    not_alone: frozenset[str] = frozenset()  # words of a name that never name the device on their own ("back")


def home_words() -> HomeWords:
    """Every supported language's home words, merged (read once per set of languages)."""
    return _home_words(languages())


@functools.cache
def _home_words(langs: tuple[str, ...]) -> HomeWords:
    kinds: dict[str, set[str]] = {}
    areas: dict[str, set[str]] = {}
    doors: set[str] = set()
    fillers: set[str] = set()
    not_alone: set[str] = set()
    for lang in langs:
        words = table(lang, "home.toml")
        for kind, said in words.get("kinds", {}).items():
            kinds.setdefault(kind, set()).update(said)
        for area, said in words.get("areas", {}).items():
            areas.setdefault(area, set()).update(said)
        doors.update(words.get("doors", []))
        fillers.update(words.get("fillers", []))
        not_alone.update(words.get("not_alone", []))
    return HomeWords({k: frozenset(v) for k, v in kinds.items()}, frozenset(doors),
                     {k: frozenset(v) for k, v in areas.items()}, frozenset(fillers), frozenset(not_alone))


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


@dataclass
class Match:
    """What a name said by the user resolved to: one entity, several equally likely, or none."""

    entities: list[Entity]
    score: float = 0.0


# A name or a room heard by its sound (hearthd.phonetic): it must sound at least this alike, have this much sound to
# go by (a consonant 1, a vowel 0.5: "TV" 3, "fan" 2.5), and beat the next best by this margin; else it is not taken
# (a room) or hearthd asks which (a device).
PHONETIC_MIN = 0.75
AREA_HEARD_MIN = 0.85
PHONETIC_MIN_WEIGHT = 3.0
PHONETIC_MARGIN = 0.1

TEMPLATE_MAX_CHARS = 2000  # a template longer than this is no device's: refused
RENDERED_MAX_CHARS = 4096  # nor is a rendering longer than this
STATE_MAX_CHARS = 255  # Home Assistant's own limit for a state; longer ones are not kept
# Filters of Jinja2 and of Home Assistant that device templates use, each bounded in time and memory by its input.
_FILTERS = ("int", "float", "round", "lower", "upper", "trim", "string", "default", "d", "abs", "length", "count",
            "bool", "title", "capitalize", "first", "last", "min", "max", "join", "tojson", "to_json", "from_json",
            "is_defined", "list", "float_or_none")


class _Environment:
    """A sandboxed Jinja2 environment for templates that arrive over MQTT: expressions, `if` and `set` only (no
    loops, macros, calls or includes), a fixed set of filters, and operators that could allocate without limit
    (`'x' * 10**9`, `9 ** 9 ** 9`, `'%999999999d' % 1`) refused."""

    _env: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls._env is None:
            from jinja2 import StrictUndefined
            from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

            class Sandbox(ImmutableSandboxedEnvironment):
                intercepted_binops = frozenset({"*", "**", "%", "//"})

                def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
                    if operator == "%" and isinstance(left, str):
                        raise SecurityError("string formatting is not allowed")
                    if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 \
                            and (right > 64 or left.bit_length() * right > 8192):
                        raise SecurityError("result too large")
                    if operator == "*":
                        for seq, n in ((left, right), (right, left)):
                            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) \
                                    and len(seq) * n > RENDERED_MAX_CHARS:
                                raise SecurityError("result too large")
                    return super().call_binop(context, operator, left, right)

            def finalize(value: Any) -> Any:
                if isinstance(value, (dict, list)):
                    return json.dumps(value, ensure_ascii=False)
                return "" if value is None else value

            def is_defined(value: Any) -> Any:
                if isinstance(value, StrictUndefined):
                    raise ValueError("undefined")
                return value

            def float_or_none(value: Any) -> Any:
                return _number(str(value))

            env = Sandbox(undefined=StrictUndefined, finalize=finalize, autoescape=False)
            dumps = lambda value: json.dumps(value, ensure_ascii=False)  # noqa: E731 - HA's to_json: no escaping
            extra: dict[str, Any] = {"tojson": dumps, "to_json": dumps, "from_json": load_json,
                                     "is_defined": is_defined, "float_or_none": float_or_none}
            env.filters.update(extra)
            env.filters = {k: v for k, v in env.filters.items() if k in _FILTERS}
            env.globals.clear()
            cls._env = env
        return cls._env


_REFUSED_NODES = ("For", "Macro", "CallBlock", "FilterBlock", "Call", "Import", "FromImport", "Include", "Extends",
                  "Block", "Scope", "ScopedEvalContextModifier")


@functools.lru_cache(maxsize=256)
def _compiled(template: str) -> Any:
    """The template compiled, or None when it is too long, does not parse or uses what the sandbox refuses."""
    if len(template) > TEMPLATE_MAX_CHARS:
        return None
    from jinja2 import nodes

    env = _Environment.get()
    try:
        tree = env.parse(template)
        refused = tuple(getattr(nodes, name) for name in _REFUSED_NODES)
        if any(True for _ in tree.find_all(refused)):
            return None
        for node in tree.find_all((nodes.Filter, nodes.Test)):
            if isinstance(node, nodes.Filter) and node.name not in env.filters:
                return None
            if isinstance(node, nodes.Test) and node.name not in env.tests:
                return None
        return env.from_string(tree)
    except Exception:  # TemplateSyntaxError, and anything odd a hostile template makes the parser do
        return None


def render_template(template: str, **variables: Any) -> str | None:
    """`template` rendered in the sandbox with `variables`; None when it cannot be (refused, an undefined name,
    an error, a result over RENDERED_MAX_CHARS)."""
    compiled = _compiled(template)
    if compiled is None:
        return None
    try:
        out = compiled.render(**variables)
    except Exception:  # UndefinedError, SecurityError, TypeError, OverflowError…: the template does not apply
        return None
    return out if isinstance(out, str) and len(out) <= RENDERED_MAX_CHARS else None


def render_value_template(template: str, payload: str, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """A Home Assistant value template (`{{ value_json.a.b }}`, `{{ value | int }}`, `{% if %}`…) applied to a
    payload: `value` is the payload, `value_json` its JSON when it is JSON (bounded: no deep nesting, no
    non-finite numbers). None when the template does not apply (then the raw payload is used)."""
    variables: dict[str, Any] = {"value": payload}
    with contextlib.suppress(ValueError, UnsafeJson):  # not JSON: `value_json` is undefined, as in Home Assistant
        variables["value_json"] = load_json(payload, max_depth)
    return render_template(template, **variables)


def render_command(entity: Entity, template_key: str, value: Any, **variables: Any) -> str | None:
    """The payload of a command: `value` through the entity's `template_key` template when it has one
    (Zigbee2MQTT's lock: `{"state": "{{ value }}"}`), else `value` as text; None when the template fails."""
    template = entity.config.get(template_key)
    if not isinstance(template, str) or not template.strip():
        return str(value)
    return render_template(template, value=value, **variables)


class CatalogueFull(HearthdError):
    """A discovery that would take the catalogue past its `max_entities`: refused, the known devices kept."""

    code = "catalogue-full"


class Catalogue:
    """Every discovered entity by key, its tracked state and availability, saved to `path` on each change."""

    def __init__(self, path: Path | None = None, aliases: dict[str, str] | None = None,
                 min_score: float = 0.75, max_entities: int = 1000, max_json_depth: int = MAX_JSON_DEPTH) -> None:
        self.path = path
        self.max_entities = max_entities  # the MQTT link sets both from mqtt.max_entities / mqtt.max_json_depth
        self.max_json_depth = max_json_depth
        self.entities: dict[str, Entity] = {}
        self.states: dict[str, dict[str, Any]] = {}
        self.available: dict[str, bool] = {}
        self.aliases = {k.lower(): v for k, v in (aliases or {}).items()}  # "кухонный свет" → "Kitchen Light"
        self.min_score = min_score
        self.moved_aside: Path | None = None  # a saved catalogue that was no catalogue, kept under this name
        self.load()

    # -- persistence --------------------------------------------------------------------------------------

    def load(self) -> None:
        """The saved catalogue. One that is not a catalogue (bad JSON, a list, entries that make no entity) is moved
        aside (kept as devices.json.corrupt-<UTC time>, with a warning) and discovery rebuilds it; one that cannot be
        read (permissions, I/O) is left where it is."""
        if self.path is None or not self.path.is_file():
            return
        try:
            raw = self.path.read_bytes()
        except OSError as e:
            log.warning("ignoring an unreadable device catalogue %s: %s", self.path, e)
            return
        try:
            data = json.loads(raw.decode("utf-8"))
            if not isinstance(data, dict):
                raise TypeError(f"a JSON {type(data).__name__}, not an object")
            entities = {e["key"]: Entity.from_dict(e) for e in data.get("entities", [])}
            states = {k: v for k, v in data.get("states", {}).items() if k in entities and isinstance(v, dict)}
        except (ValueError, KeyError, TypeError, AttributeError) as e:
            try:
                self.moved_aside = move_aside(self.path, f"not a device catalogue: {e}")
            except OSError as moved:
                log.warning("ignoring an unreadable device catalogue %s: %s (could not move it aside: %s)",
                            self.path, e, moved)
            return
        self.entities, self.states = entities, states

    def save(self) -> None:
        if self.path is None:
            return
        private_dir(self.path.parent)  # mkstemp makes the file 0600; the rename keeps that
        data = {"entities": [e.to_dict() for e in self.entities.values()], "states": self.states}
        # write-then-rename: a crash mid-write leaves the previous catalogue, never half of one
        fd, tmp = tempfile.mkstemp(dir=self.path.parent, prefix=".devices.", suffix=".json")
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                try:
                    text = json.dumps(data, ensure_ascii=False)
                    text.encode("utf-8")
                except UnicodeEncodeError:  # a lone surrogate got in after all: escaped, so the file is still JSON
                    text = json.dumps(data)
                f.write(text)
            os.replace(tmp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise

    # -- learning ---------------------------------------------------------------------------------------

    def apply(self, discovery: Discovery) -> None:
        """The entities of `discovery.source` become exactly those it lists (none: the device was removed).
        Raises CatalogueFull, changing nothing, when that would grow the catalogue past `max_entities`."""
        gone = [k for k, e in self.entities.items() if e.source == discovery.source]
        after = len(set(self.entities) - set(gone) | {e.key for e in discovery.entities})
        if after > self.max_entities and after > len(self.entities):
            raise CatalogueFull(f"{discovery.source}: the catalogue holds {len(self.entities)} entities "
                                f"(mqtt.max_entities = {self.max_entities})")
        for key in gone:
            del self.entities[key]
        for entity in discovery.entities:
            self.entities[entity.key] = entity
        for key in gone:
            if key not in self.entities:
                self.states.pop(key, None)
                self.available.pop(key, None)
        self.save()

    def forget(self, sources: Iterable[str]) -> None:
        """Drop the entities of these discovery sources (hearthd's own, saved by an older version)."""
        keys = [k for k, e in self.entities.items() if e.source in set(sources)]
        for key in keys:
            del self.entities[key]
            self.states.pop(key, None)
            self.available.pop(key, None)
        if keys:
            self.save()

    def state_topics(self) -> set[str]:
        topics = set()
        for e in self.entities.values():
            for k, v in e.config.items():
                if k.endswith("_topic") and not k.endswith("command_topic") and k != "set_position_topic" \
                        and isinstance(v, str) and v:
                    topics.add(v)
            for item in e.config.get("availability", []) or []:
                if isinstance(item, dict) and isinstance(item.get("topic"), str):
                    topics.add(item["topic"])
        return topics

    def on_message(self, topic: str, payload: str) -> list[str]:
        """Track state and availability from a state topic; returns the keys whose state changed."""
        changed = []
        for key, e in self.entities.items():
            before = dict(self.states.get(key, {}))
            state = dict(before)
            try:
                self._availability(e, topic, payload)
                _track(e, topic, payload, state, self.max_json_depth)
            except Exception as exc:  # an odd config option or payload spoils this entity's update, not the others'
                log.debug("state of %s not updated from %s: %r", key, topic, exc)
                continue
            if state != before:
                self.states[key] = state
                changed.append(key)
        if changed:
            self.save()
        return changed

    def _availability(self, e: Entity, topic: str, payload: str) -> None:
        entries = [i for i in (e.config.get("availability") or []) if isinstance(i, dict)]
        if e.topic("availability_topic"):
            entries.append({"topic": e.topic("availability_topic"), "payload_available":
                            e.config.get("payload_available", "online"),
                            "payload_not_available": e.config.get("payload_not_available", "offline")})
        for item in entries:
            if item.get("topic") != topic:
                continue
            value = payload
            if isinstance(item.get("value_template"), str):
                value = render_value_template(item["value_template"], payload, self.max_json_depth) or payload
            if value == str(item.get("payload_available", e.config.get("payload_available", "online"))):
                self.available[e.key] = True
            elif value == str(item.get("payload_not_available", e.config.get("payload_not_available", "offline"))):
                self.available[e.key] = False

    # -- finding what the user means ----------------------------------------------------------------------

    def resolve(self, said: str, components: Iterable[str]) -> Match:
        """The entities `said` names among `components`: an alias, the name, "<area> <kind>", then a fuzzy
        match above min_score. Several equally good → all of them (hearthd asks which)."""
        wanted = set(components)
        pool = [e for e in self.entities.values() if e.component in wanted]
        text = said.strip().lower()
        if not pool or not text:
            return Match([])
        target = self.aliases.get(text)
        if target:
            hits = [e for e in pool if target.lower() in (e.key.lower(), e.name.lower())]
            if hits:
                return Match(hits, 1.0)
        exact = [e for e in pool if text in (e.name.lower(), f"{e.device} {e.name}".strip().lower())]
        if exact:
            return Match(exact, 1.0)
        area, area_said = self.area_heard(text)
        vocab = home_words()
        kinds = {c for c, words in vocab.kinds.items() if any(_has_word(text, w) for w in words)}
        kind_words = set().union(*vocab.kinds.values())
        if area:  # a room was said: a device elsewhere is never the one meant ("в кухне" is not the living room)
            pool = [e for e in pool if _in_area(e, area)]
            if kinds:
                pool = [e for e in pool if e.component in kinds
                        or any(_has_word(e.name.lower(), w) for k in kinds for w in vocab.kinds[k])]
            if not pool:
                return Match([])
            # several: a word of one name said beyond the room and the kind decides, else hearthd asks
            rest = text
            for phrase_ in sorted({*vocab.areas.get(area, ()), area_said}, key=len, reverse=True):  # "living room"
                rest = re.sub(rf"(?<!\w){re.escape(phrase_)}(?!\w)", " ", rest)
            extra = [w for w in _words(rest) if not _area_in(w) and w not in kind_words]
            named = [e for e in pool if extra and all(_has_word(e.name.lower(), w) for w in extra)]
            if named or kinds or not extra:
                return Match(named or pool, 0.9)
            # "bedroom coffee machine": a name no device in that room has, and no kind: only a near miss in the room
            return self._nearest(text, pool, " ".join(extra))
        if kinds:  # "the fan": the only fan there is (several: hearthd asks which)
            of_kind = [e for e in pool if e.component in kinds]
            extra = [w for w in _words(text) if w not in kind_words]
            named = [e for e in of_kind if all(_has_word(e.name.lower(), w) for w in extra)]
            if of_kind and not extra:
                # "the blinds" in a home whose covers are blinds, curtains and a garage door: covers are different
                # things by kind, and the word said is in the blinds' name, so the blinds are meant (no name with
                # the word: every cover). Not for lights: "the light" is any light, lamps included.
                said_kinds = [w for w in _words(text) if w in kind_words]
                worded = [e for e in of_kind if e.component == "cover"
                          and any(_has_word(e.name.lower(), w) for w in said_kinds)]
                return Match(worded or of_kind, 0.8)
            if named:
                return Match(named, 0.8)
            # "porch light": a name no light has is an unknown device, never "which of the lights?"
        return self._nearest(text, pool)

    def _nearest(self, text: str, pool: list[Entity], rest: str = "") -> Match:
        """The name `text` nearly is: spelled nearly the same (a typo), else sounding nearly the same in any script
        ("रूम्बा" for Roomba, "нано лиф" for Nanoleaf). A name heard by its sound is taken only when it is clearly the
        best; when another sounds almost as close, both are returned and hearthd asks which one, never picking one
        of two similar names silently. `rest`: the words left when the room said has narrowed `pool`."""
        scored = sorted(((difflib.SequenceMatcher(None, text, e.name.lower()).ratio(), e) for e in pool),
                        key=lambda x: -x[0])
        best = scored[0][0]
        if best >= self.min_score:
            return Match([e for s, e in scored if s >= best - 0.02], best)
        said = [t for t in (" ".join(_words(text)), rest) if weight(t) >= PHONETIC_MIN_WEIGHT]
        if not said:
            return Match([], best)  # too short to tell by its sound ("on", "it")
        floor = max(self.min_score, PHONETIC_MIN) - PHONETIC_MARGIN  # nearer than this is never a candidate
        by_sound = sorted(((max(similarity(t, form, floor) for t in said for form in self._spoken_forms(e)), e)
                           for e in pool), key=lambda x: -x[0])
        heard = by_sound[0][0]
        if heard < max(self.min_score, PHONETIC_MIN):
            return Match([], max(best, heard))
        return Match([e for s, e in by_sound if s == heard or not _clearly(heard, s)], heard)

    def _spoken_forms(self, e: Entity) -> list[str]:
        """What an entity is called: its name, its device's name with it, and the aliases that point at it."""
        forms = [e.name, f"{e.device} {e.name}".strip()]
        forms += [said for said, target in self.aliases.items() if target.lower() in (e.key.lower(), e.name.lower())]
        return list(dict.fromkeys(f for f in forms if f))

    def areas(self) -> set[str]:
        """The rooms devices are in, as the home spells them ("Kitchen", "Nursery")."""
        return {e.area for e in self.entities.values() if e.area}

    def area_heard(self, text: str) -> tuple[str, str]:
        """The room `text` names and the words that named it: a room word of any language (locales/*/home.toml) said
        as written, else one heard nearly ("किचिन", "bedrum", "гастиной") when it sounds clearly more like that room
        than any other; the home's own room names count too. ("", "") when none does."""
        area = _area_in(text)
        if area:
            return area, ""
        words = _words(text)
        if not words:
            return "", ""
        candidates: dict[str, list[str]] = {a: list(w) for a, w in home_words().areas.items()}
        for name in self.areas():
            candidates.setdefault(name.lower(), []).append(name.lower())
        spans = {" ".join(words[i:i + n]) for n in (1, 2) for i in range(len(words) - n + 1)}
        best: dict[str, tuple[float, str]] = {}
        for area_, said_as in candidates.items():
            for word in said_as:
                if weight(word) < PHONETIC_MIN_WEIGHT:
                    continue  # "hall", "зал", "हॉल": too short to be recognised by their sound alone
                for span in spans:
                    score = similarity(span, word, AREA_HEARD_MIN - PHONETIC_MARGIN)
                    if score > best.get(area_, (0.0, ""))[0]:
                        best[area_] = (score, span)
        ranked = sorted(best.items(), key=lambda x: -x[1][0])
        if not ranked or ranked[0][1][0] < AREA_HEARD_MIN:
            return "", ""
        if len(ranked) > 1 and not _clearly(ranked[0][1][0], ranked[1][1][0]):
            return "", ""  # "bedrum": the bedroom or the bathroom? Neither is taken
        return ranked[0][0], ranked[0][1][1]


def _clearly(best: float, second: float) -> bool:
    """Whether a sound-alike score beats the next: by PHONETIC_MARGIN, or by being the very same sounds ("bedrum" is
    the bedroom by its key, though "bathroom" is one vowel away)."""
    return best - second >= PHONETIC_MARGIN or (best >= 1.0 > second)


def _in_area(e: Entity, area: str) -> bool:
    """Whether entity `e` is in `area` (a home.toml room, or the home's own room name, lower case)."""
    return _area_in(e.area.lower()) == area or _area_in(e.name.lower()) == area or e.area.lower() == area


STATES = ("on", "off", "locked", "unlocked", "open", "closed")  # tracked states a question can ask about
STEPS = {"up": 25, "down": -25}  # "brighter" / "dim the lights": a quarter of the range from the tracked level
FAN_SPEEDS = (33, 66, 100)  # a fan's low, medium and high, as Home Assistant divides its percentage
NOUNS = {"light": "light", "switch": "switch", "fan": "fan", "cover": "cover", "lock": "lock"}  # spoken.toml nouns


def _noun(components: set[str]) -> str:
    """The noun a group is counted by: its kind when it is one kind, else "device"."""
    return NOUNS.get(next(iter(components)), "device") if len(components) == 1 else "device"


def _names(names: list[str], first: int = 5) -> str:
    """"Kitchen Light, Desk Lamp" — the first few names of a list, then how many more ("+3")."""
    return ", ".join(names[:first]) + (f" (+{len(names) - first})" if len(names) > first else "")


def _words(text: str) -> list[str]:
    fillers = home_words().fillers
    return [w for w in (w.strip(".,!?;:।") for w in text.split()) if w and w not in fillers]


def _has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def _area_in(text: str) -> str:
    for area, words in home_words().areas.items():
        if any(_has_word(text, w) for w in words):
            return area
    return ""


def _scale(cfg: dict[str, Any]) -> float:
    """The entity's brightness_scale when it is a usable one (a finite number above 0), else Home Assistant's 255."""
    scale = _number(str(cfg.get("brightness_scale", 255)))
    return scale if scale is not None and scale > 0 else 255.0


def _track(e: Entity, topic: str, payload: str, state: dict[str, Any], max_depth: int = MAX_JSON_DEPTH) -> None:
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
                state["brightness"] = round(100 * float(brightness) / _scale(cfg))
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
        n = _number(value("position_template"))
        if n is not None:
            state["position"] = round(n)
    if topic == cfg.get("brightness_state_topic"):
        n = _number(value("brightness_value_template"))
        if n is not None:
            state["brightness"] = round(100 * n / _scale(cfg))
    if topic == cfg.get("percentage_state_topic"):
        n = _number(value("percentage_value_template"))
        if n is not None:
            low, high = _speed_range(cfg)  # HA: ranged_value_to_percentage
            ranged = (round(n) - low + 1) * 100 // (high - low + 1)
            state["percentage"] = round(n) if (low, high) == (1, 100) else ranged
    if topic == cfg.get("temperature_state_topic"):
        n = _number(value("temperature_state_template"))
        if n is not None:
            state["target"] = n
    if topic == cfg.get("current_temperature_topic"):
        n = _number(value("current_temperature_template"))
        if n is not None:
            state["current"] = n
    if topic == cfg.get("mode_state_topic"):
        mode = value("mode_state_template")
        if len(mode) <= STATE_MAX_CHARS:
            state["mode"] = mode


def _speed_range(cfg: dict[str, Any]) -> tuple[int, int]:
    """A fan's speed_range_min/max (Zigbee2MQTT: 1-3 or 1-4), as Home Assistant reads them; 1-100 by default."""
    low, high = _number(str(cfg.get("speed_range_min", 1))), _number(str(cfg.get("speed_range_max", 100)))
    if low is None or high is None or not 1 <= low < high <= 1000:
        return 1, 100
    return int(low), int(high)


def _number(text: str) -> float | None:
    """A finite number from a state payload: "inf", "nan", "1e999" and 300-digit numbers are no reading."""
    if len(text) > 64:
        return None
    try:
        n = float(text)
    except (TypeError, ValueError):
        return None
    return n if math.isfinite(n) and abs(n) < 1e15 else None


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


def areas_in(text: str) -> set[str]:
    """Every room `text` names ("кухне" → kitchen)."""
    folded = text.lower()
    return {area for area, words in home_words().areas.items() if any(_has_word(folded, w) for w in words)}


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
        floor of mqtt.floors), of `device_class` ("blind"); sorted by name. Filled only by code (the sentence
        library reads the area and the kind from the user's words), never decoded by the model."""
        domain = str(args.get("domain") or "")
        wanted = {domain} & set(components) if domain else set(components)
        pool = [e for e in self.catalogue.entities.values() if e.component in wanted]
        area = str(args.get("area") or "").strip().lower()
        if area:
            areas = set(self.floors.get(area, [])) or {area}
            pool = [e for e in pool if e.area.lower() in areas]
        wanted_class = str(args.get("device_class") or "").lower()
        if wanted_class:
            classes = CLASS_FAMILIES.get(wanted_class, {wanted_class})  # "the garage door" is a door
            same = [e for e in pool if str(e.config.get("device_class", "")).lower() in classes
                    or (not e.config.get("device_class") and any(c in e.name.lower() for c in classes))]
            if same or wanted_class in DOOR_CLASSES:
                pool = same  # asked for a door: never the blinds instead
            else:  # "the blinds" and no cover says its class: the covers that are not doors
                pool = [e for e in pool if str(e.config.get("device_class", "")).lower() not in DOOR_CLASSES
                        and not any(_has_word(e.name.lower(), w) for w in home_words().doors)]
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
                    or any(_has_word(e.name.lower(), w) for w in home_words().doors):
                return True
        return False

    # -- shared steps -------------------------------------------------------------------------------------

    def _one(self, said: str, components: Iterable[str]) -> Entity:
        """The entity meant; a Refusal says why there is none (unknown, which one?, offline)."""
        match = self.catalogue.resolve(said, components)
        if not match.entities:
            raise Refusal(ToolResult(False, {"error": f"no device matches {said!r}", "code": "home-unknown-device"},
                                     "home.unknown_device", {"name": said}))
        if len(match.entities) > 1:
            raise Refusal(which_one(sorted(e.name for e in match.entities)))
        entity = match.entities[0]
        if self.catalogue.available.get(entity.key) is False:
            raise Refusal(ToolResult(False, {"entity": entity.key, "code": "home-offline"}, "home.offline",
                                     {"name": entity.name}))
        return entity

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
        entity = await self._climate(args)
        temperature = float(args["temperature"])
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
        low, high = _speed_range(entity.config)  # HA: ceil(percentage_to_ranged_value(range, percent))
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
        if not any(args.get(k) for k in ("area", "domain", "device_class")):
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
            found = [e for e in found if any(_in_area(e, a) for a in floor)]
        elif area:
            found = [e for e in found if _in_area(e, area)]
        readings = []
        for e in found:
            state = self.catalogue.states.get(e.key, {})
            raw = state.get("current") if e.component == "climate" else state.get("state")
            n = _number(str(raw)) if raw is not None else None
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
        group = {"area": code, "device_class": code}
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
            tool("set_temperature", "Set the thermostat's target temperature in degrees.",
                 schema({"temperature": {"type": "number", "minimum": 5, "maximum": 35, "x-ground": "number"},
                         "device": device},
                        ["temperature"]), self._temperature),
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
