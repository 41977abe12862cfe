"""The sentence library: Home Assistant's own templates (home-assistant-intents, matched by hassil) read with the
names, areas and floors of this home, and mapped onto hearthd's tools.

The library knows how people talk to a home ("turn off all the kitchen lights", "are any doors unlocked?", "what
time is it", "выключи весь свет в доме", "रसोई की लाइट बंद करो"); hearthd's own templates (locales/<lang>/sentences)
keep what it lacks: alarms, answers to questions, the computer's own controls, and Hindi beyond the basics.
Everything a template reads is read by code, never decoded: names come back as the home spells them.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Callable
from contextvars import ContextVar
from typing import Any

from ..text import fold
from ..tools.catalogue import Catalogue, has_word, home_words
from ..tools.registry import SchemaError, ToolRegistry, UnknownTool
from ..tools.smarthome import COLOURS
from .agent import Decision
from .parsing import ToolCall

log = logging.getLogger(__name__)

# The room of the device that heard this turn (a room's satellite), when it is not the daemon's own
# (`general.area`): set around one turn, it is that turn's "here"; unset, every turn keeps the configured area.
turn_area: ContextVar[str] = ContextVar("turn_area", default="")


def covered(lang: str) -> bool:
    """Whether Home Assistant's sentence library has `lang` (its language.toml says `sentence_library = true`)."""
    from ..language import rules

    return rules(lang).sentence_library


ROOM = "area"  # the argument "Which room — or all of them?" asks for (ask.area), when no room is said or known
# The room a template that needs the speaking device's room is read with when none is known (no general.area, no
# satellite's): a call with it is a group "in here" said where "here" is no room, and becomes the question which room.
NO_ROOM = "\x00no room"


@functools.cache
def _intents(lang: str) -> Any:
    """The library's templates for `lang`, parsed once per process (None when it has none or is not installed)."""
    try:
        from hassil import Intents
        from home_assistant_intents import get_intents
    except ImportError:  # pragma: no cover - a dependency of the project; kept optional for a broken install
        return None
    from .fastpath import skip_words

    data = get_intents(lang)
    if not data:
        return None
    # hearthd's own skip words too: people leave a wake word, "um" or "zara" in what they say to the library's templates
    data = {**data, "skip_words": [*data.get("skip_words", []), *skip_words(lang)]}
    return Intents.from_dict(data)


# The library's response names for a state question, as device_state's `question`.
QUESTIONS = {"one_yesno": "one", "one": "one", "any": "any", "all": "all", "which": "which", "how_many": "how_many"}
# What each on/off intent does per kind of device.
ON = {"light": "turn_on", "switch": "turn_on", "fan": "turn_on", "cover": "open_cover", "lock": "lock_door",
      "scene": "activate_scene"}
OFF = {"light": "turn_off", "switch": "turn_off", "fan": "turn_off", "cover": "close_cover", "lock": "unlock_door"}
NAME_KEY = {"lock_door": "door", "unlock_door": "door", "activate_scene": "scene"}
GROUP_TOOLS = frozenset({"turn_on", "turn_off", "open_cover", "close_cover", "lock_door", "unlock_door",
                         "set_brightness", "set_color"})
GROUPING = ("area", "domain", "device_class")
# The library's intents hearthd maps onto its tools (Library._calls), with the tool each mostly becomes: the tolerant
# tier learns from these templates and tells two readings apart by the tool they lead to.
INTENT_TOOL = {"HassTurnOn": "turn_on", "HassTurnOff": "turn_off", "HassGetState": "device_state",
               "HassLightSet": "set_brightness", "HassSetPosition": "set_cover_position",
               "HassClimateSetTemperature": "set_temperature", "HassClimateGetTemperature": "sensor_value",
               "HassMediaPause": "media", "HassMediaUnpause": "media", "HassMediaNext": "media",
               "HassMediaPrevious": "media", "HassSetVolume": "set_volume", "HassMediaPlayerMute": "mute",
               "HassMediaPlayerUnmute": "unmute", "HassGetCurrentTime": "get_time", "HassGetCurrentDate": "get_time"}
# The context key of a name that is one word of a device's name ("coffee"): said exactly, never heard approximately
# (the tolerant tier leaves it out: "машине" is not "machine" misheard).
PARTIAL = "partial_name"
HANDLED = frozenset(INTENT_TOOL)  # what makes a call a group's
MEDIA = {"HassMediaPause": "pause", "HassMediaUnpause": "play", "HassMediaNext": "next",
         "HassMediaPrevious": "previous"}


class Library:
    """Matches an utterance against the library with this home's names; a Decision on hearthd's tools or None."""

    def __init__(self, registry: ToolRegistry, catalogue: Callable[[], Catalogue | None],
                 floors: dict[str, list[str]] | None = None, here: str = "") -> None:
        self.registry = registry
        self.catalogue = catalogue
        self.floors = dict(floors or {})
        self._here = here  # the area of the speaking device: "the lights in here"
        self._lists: tuple[Any, dict[str, Any]] | None = None

    @property
    def here(self) -> str:
        """The speaking device's room: this turn's own (`turn_area`), else the configured one."""
        return turn_area.get() or self._here

    @here.setter
    def here(self, value: str) -> None:
        self._here = value

    def slot_lists(self) -> dict[str, Any]:
        """name, area and floor lists from the catalogue (rebuilt when its entities change)."""
        from hassil import TextSlotList

        catalogue = self.catalogue()
        entities = dict(catalogue.entities) if catalogue is not None else {}
        signature = (tuple(sorted((k, e.name, e.area, e.component) for k, e in entities.items())),
                     tuple(sorted(catalogue.aliases.items())) if catalogue is not None else ())
        if self._lists is not None and self._lists[0] == signature:
            return self._lists[1]
        names: list[tuple[str, Any, dict[str, Any]]] = []
        for e in entities.values():
            context = {"domain": e.component, "area": e.area}
            names.append((e.name, e.key, context))
        taken = {e.name.lower() for e in entities.values()}
        for e in entities.values():  # "lock the front and back doors": each of them in the plural
            plural = _plural(e.name)  # (not "Kitchen Lights": the kitchen's lights, all of them, are a group)
            if plural and plural.lower() not in taken and not (e.area and e.name.lower().startswith(e.area.lower())):
                names.append((plural, e.key, {"domain": e.component, "area": e.area}))
        for said, target in (catalogue.aliases.items() if catalogue is not None else []):
            for e in entities.values():
                if target.lower() in (e.name.lower(), e.key.lower()):
                    names.append((said, e.key, {"domain": e.component, "area": e.area}))
        for word, e in self._partial_names(list(entities.values()), {said.lower() for said, _, _ in names}):
            names.append((word, e.key, {"domain": e.component, "area": e.area, PARTIAL: True}))
        areas: dict[str, str] = {}
        for e in entities.values():
            if e.area:
                areas.setdefault(e.area, e.area)
                for words in (w for a, w in home_words().areas.items() if a == e.area.lower()):
                    for word in words:  # "кухне", "रसोई": the area in the user's language
                        areas.setdefault(word, e.area)
        for floor_areas in self.floors.values():
            for a in floor_areas:
                areas.setdefault(a, a)
        lists = {
            "name": TextSlotList.from_tuples(names, allow_template=False, name="name"),
            "area": TextSlotList.from_tuples(list(areas.items()), allow_template=False, name="area"),
            "floor": TextSlotList.from_tuples([(f, f) for f in self.floors], allow_template=False, name="floor"),
        }
        self._lists = (signature, lists)
        return lists

    def _partial_names(self, entities: list[Any], full: set[str]) -> list[tuple[str, Any]]:
        """The words of a device's name that name it alone, as people shorten it: "the coffee" and "the machine" for the
        Coffee Machine when nothing else is called so. Never a kind ("light", "door"), a room or a floor (they name a
        group, or the device of that kind there), a filler, a word that never names a thing alone (home.toml
        `not_alone`: "back", "floor"), nor a word in two names ("desk" with two desk lamps)."""
        words = home_words()
        general = set().union(*words.kinds.values(), *words.areas.values(), words.doors, words.fillers, words.not_alone)
        general |= {e.area.lower() for e in entities if e.area} | {f.lower() for f in self.floors}
        general |= {a.lower() for areas in self.floors.values() for a in areas}
        split = {e.key: [w for w in e.name.lower().split() if w.isalpha()] for e in entities}
        counts: dict[str, int] = {}
        for said in split.values():
            for w in set(said):
                counts[w] = counts.get(w, 0) + 1
        return [(w, e) for e in entities if len(split[e.key]) > 1 for w in split[e.key]
                if counts[w] == 1 and len(w) > 2 and w not in general and w not in full]

    def match(self, text: str, lang: str, here: str = "") -> Decision | None:
        intents = _intents(lang) if covered(lang) else None
        if intents is None:
            return None
        from hassil import recognize_best

        from .checks import without_fillers

        area = here or self.here
        text = without_fillers(text, lang)  # "hey, turn off the lights": a leftover wake word is no part of a template
        try:
            result = recognize_best(text, intents, slot_lists=self.slot_lists(), language=lang,
                                    intent_context={"area": area} if area else None)
        except Exception:  # a template the matcher cannot take must never end a turn: the next path reads it
            log.exception("the sentence library failed on an utterance")
            return None
        if result is None:
            # the second reading costs a pass over the templates: only for words that name a kind of device
            return self._without_room(text, lang, intents) if not area and _names_a_kind(text) else None
        from .checks import asks

        response = str(result.response or "")
        if result.intent.name == "HassGetState" and response in QUESTIONS and not asks(text, lang):
            return None  # "all lights off" reads as "are all lights off" only when it is asked
        # "turn off the lights in here": the templates that need the speaking device's room take it from the context
        slots = {k: v.value for k, v in result.entities.items()}
        here_only = "area" in slots and not str(result.entities["area"].text or "").strip()
        decision = self._decision(result.intent.name, slots, response)
        if decision is None:
            return None
        if here_only:
            self._beyond_here(decision)
        self._one_or_which(decision, text, lang)
        # what the two steps above made of the calls is validated as the library's own reading was
        return self._validated(decision, "library match")

    def _without_room(self, text: str, lang: str, intents: Any) -> Decision | None:
        """A template that needs the speaking device's room ("turn the lights off", "выключи свет", "लाइट बंद करो")
        said where no room is known: read as if there were one, then the question which room (`which_room`)."""
        from hassil import recognize_best

        try:
            result = recognize_best(text, intents, slot_lists=self.slot_lists(), language=lang,
                                    intent_context={"area": NO_ROOM})
        except Exception:  # as in match: a template the matcher cannot take never ends a turn
            log.exception("the sentence library failed on an utterance")
            return None
        if result is None or "area" not in result.entities or str(result.entities["area"].text or "").strip():
            return None  # a room said in the words was read before, without the stand-in
        decision = self._decision(result.intent.name, {k: v.value for k, v in result.entities.items()},
                                  str(result.response or ""))
        if decision is None:
            return None
        asked = self.which_room(decision)
        if asked is None or asked.kind == "clarify":
            return asked
        self._one_or_which(asked, text, lang)
        return self._validated(asked, "library match")

    def rooms_of(self, call: ToolCall) -> list[str]:
        """The rooms, as the home spells them, that hold a device of the group `call` means (its room left out)."""
        home = self._home()
        if home is None:
            return []
        from ..tools.smarthome import KINDS

        anywhere = {k: v for k, v in call.arguments.items() if k != "area"}
        return sorted({str(e.area) for e in home.group(anywhere, KINDS.get(call.name, ())) if e.area})

    def which_room(self, decision: Decision) -> Decision | None:
        """A group of "this room" ("turn the lights off") where no room is known: "Which room — or all of them?" when
        the home has such devices in two rooms or more, that room when they are all in one. None (not read here) when
        the home has none or is not known, or the call is no action on a group."""
        if len(decision.calls) != 1 or decision.calls[0].name not in GROUP_TOOLS:
            return None
        from ..tools.smarthome import KINDS

        call = decision.calls[0]
        rest = {k: v for k, v in call.arguments.items() if k != "area"}
        kinds = KINDS.get(call.name, ())
        if len(kinds) == 1 and not any(rest.get(k) for k in ("domain", "device_class")) and call.name in self.registry \
                and "domain" in self.registry.get(call.name).parameters.get("properties", {}):
            rest["domain"] = kinds[0]  # "dim the lights": the lights, so that "all of them" is every room's
        rooms = self.rooms_of(call)
        if not rooms:
            return None
        if len(rooms) == 1:
            return Decision("call", calls=[ToolCall(call.name, {**rest, "area": rooms[0]})], source="fastpath",
                            name_probs={call.name: 1.0}, every=decision.every)
        return Decision("clarify", calls=[ToolCall(call.name, rest)], missing=ROOM, source="fastpath",
                        reason=f"{call.name}: no room said, and none is known where it was heard", every=decision.every)

    def room_in(self, text: str) -> str:
        """The home's room or floor `text` names, as the home spells it ("the kitchen", "на кухне", "रसोई में"); ""
        when it names none of them. The longest name said wins ("living room" over "room")."""
        return self.room_said(text)[1]

    def room_said(self, text: str) -> tuple[str, str]:
        """(the words `text` names a room or floor with, folded; that room as the home spells it), or ("", "")."""
        from ..numbers import words_of

        # "In the kitchen.": whisper ends a sentence with a full stop, which words_of keeps (it is a digit's "7.30")
        said = " " + " ".join(w.rstrip(".…") for w in words_of(fold(text))) + " "
        best = ("", "")
        lists = self.slot_lists()
        for value in [*getattr(lists["area"], "values", []), *getattr(lists["floor"], "values", [])]:
            name = " ".join(words_of(fold(str(getattr(value.text_in, "text", "") or ""))))
            if name and f" {name} " in said and len(name) > len(best[0]):
                best = (name, str(value.value_out))
        return best

    def settle(self, decision: Decision, text: str, lang: str) -> Decision | None:
        """A group read by hearthd's own templates, made what the library makes of its own: the room or floor as the
        home spells it, a group said in the singular as its one device (or the question which one), validated again.
        None when the reading does not validate."""
        catalogue = self.catalogue()
        if catalogue is not None:
            spelled = {str(e.area).lower(): str(e.area) for e in catalogue.entities.values() if getattr(e, "area", "")}
            spelled.update({f.lower(): f for f in self.floors})
            for call in decision.calls:
                area = call.arguments.get("area")
                if isinstance(area, str) and area.lower() in spelled:
                    call.arguments = {**call.arguments, "area": spelled[area.lower()]}
        if not decision.every:
            self._one_or_which(decision, text, lang)
        return self._validated(decision, "own group reading")

    def _home(self) -> Any:
        """The smart-home tools' view of the catalogue (groups by area, floor and kind), for reading, never acting."""
        from ..tools.smarthome import SmartHome

        catalogue = self.catalogue()
        return SmartHome(catalogue, None, self.floors) if catalogue is not None else None

    def _one_or_which(self, decision: Decision, text: str, lang: str) -> None:
        """A group said in the singular ("turn off the kitchen light") is one device: the only one of the group by
        its name, or, when there are several, the question which one ("Which one: Ceiling or Lamp?"). "All", a
        plural or a mass noun ("the lights", "весь свет", "सारी लाइटें") keeps the group."""
        home = self._home()
        if home is None:
            return
        from ..tools.smarthome import KIND_WORD, KINDS
        from .checks import says_many

        for call in decision.calls:
            kinds = KINDS.get(call.name, ())
            key = NAME_KEY.get(call.name, "device")
            if call.name == "device_state" and call.arguments.get("device_class") and key not in call.arguments:
                # "is the garage open": the home's one garage door, asked about by its name
                targets = home.group(call.arguments, ("cover", "lock", "binary_sensor"))
                if len(targets) == 1:
                    rest = {k: v for k, v in call.arguments.items() if k not in (*GROUPING, "question")}
                    call.arguments = {**rest, key: targets[0].name}
                continue
            if call.name not in GROUP_TOOLS or key in call.arguments or not kinds or not (
                    call.arguments.get("area") or call.arguments.get("domain") or call.arguments.get("device_class")):
                continue
            targets = home.group(call.arguments, kinds)
            rest = {k: v for k, v in call.arguments.items() if k not in GROUPING}  # the colour, the step
            if len(targets) > 1 and not says_many(text, lang):
                # "lamp on" in a room with a ceiling light and a floor lamp: the kind's word said is in one name
                said = {w for w in (w.strip(".,!?;:।") for w in fold(text).split()) if w in _kind_words()}
                said |= {n for w in said for n in home_words().name_words.get(w, ())}  # "лампу": lamp
                worded = [t for t in targets if any(has_word(fold(t.name), w) for w in said)]
                if len(worded) == 1:
                    targets = worded
            if len(targets) == 1:
                call.arguments = {**rest, key: targets[0].name}
            elif len(targets) > 1 and not says_many(text, lang) and str(call.arguments.get("area") or "") \
                    and str(call.arguments["area"]).lower() not in {f.lower() for f in self.floors}:
                # "the living room light" with two there: the room and the kind, which the resolver answers with
                # the question a name that fits several gets ("Which one: Living Room Ceiling or Living Room Lamp?")
                kind = KIND_WORD.get(targets[0].component, targets[0].component)
                call.arguments = {**rest, key: f"{call.arguments['area']} {kind}"}

    def _beyond_here(self, decision: Decision) -> None:
        """"switch on the fan" said in a room with no fan: the room came from the context, not the words, so when
        the home has exactly one such device elsewhere that one is meant ("закрой ворота гаража" from the living
        room is the garage door); with several elsewhere the room stays (and the reply says there is none here)."""
        home = self._home()
        if home is None:
            return
        from ..tools.smarthome import KINDS

        for call in decision.calls:
            kinds = KINDS.get(call.name, ())
            if call.name not in GROUP_TOOLS | {"device_state"} or "area" not in call.arguments or not kinds \
                    or home.group(call.arguments, kinds):
                continue
            anywhere = {k: v for k, v in call.arguments.items() if k != "area"}
            if len(home.group(anywhere, kinds)) == 1:
                call.arguments = anywhere

    # -- the library's intents as hearthd's calls -------------------------------------------------------------

    def _entity(self, key: Any) -> Any:
        catalogue = self.catalogue()
        return catalogue.entities.get(str(key)) if catalogue is not None else None

    def _validated(self, decision: Decision, what: str) -> Decision | None:
        """`decision` with each call's arguments validated against its tool's schema (changed in place: defaults,
        coercions); None when one does not validate (logged as `what` not taken)."""
        try:
            for call in decision.calls:
                call.arguments = self.registry.validate(call.name, call.arguments)
        except (UnknownTool, SchemaError) as e:
            log.debug("%s not taken: %s", what, e)
            return None
        return decision

    def _decision(self, intent: str, slots: dict[str, Any], response: str) -> Decision | None:
        if intent == "HassNevermind":
            return Decision("abstain", reason="the user withdrew", source="fastpath", say="agent.cancelled")
        calls = self._calls(intent, slots, response)
        if not calls:
            return None
        try:
            calls = [ToolCall(c.name, self.registry.validate(c.name, c.arguments)) for c in calls]
        except (UnknownTool, SchemaError) as e:
            log.debug("library match %s not taken: %s", intent, e)
            return None
        return Decision("call", calls=calls, source="fastpath", name_probs={c.name: 1.0 for c in calls})

    def _calls(self, intent: str, slots: dict[str, Any], response: str) -> list[ToolCall]:
        entity = self._entity(slots["name"]) if "name" in slots else None
        if "name" in slots and entity is None:
            return []
        group = {k: str(slots[k]) for k in ("area", "floor") if slots.get(k)}
        if "floor" in group:
            group["area"] = group.pop("floor")  # a floor is a group of areas (mqtt.floors)
        if slots.get("device_class"):
            group["device_class"] = str(slots["device_class"])
        if intent in ("HassTurnOn", "HassTurnOff"):
            table = ON if intent == "HassTurnOn" else OFF
            if entity is not None:
                tool = table.get(entity.component)
                return [ToolCall(tool, {NAME_KEY.get(tool, "device"): entity.name})] if tool else []
            domain = str(slots.get("domain") or "")
            tool = table.get(domain)
            if tool is None or not group and not domain:
                return []
            args: dict[str, Any] = dict(group)
            if tool in ("turn_on", "turn_off"):
                args["domain"] = domain
            return [ToolCall(tool, args)]
        if intent == "HassGetState":
            state = str(slots.get("state") or "")
            if entity is not None:
                return [ToolCall("device_state", {"device": entity.name, **({"state": state} if state else {})})]
            domain = str(slots.get("domain") or "")
            if not state or response not in QUESTIONS:
                return []
            return [ToolCall("device_state", {**group, **({"domain": domain} if domain else {}), "state": state,
                                              "question": QUESTIONS[response]})]
        if intent == "HassLightSet" and entity is not None and entity.component == "light":
            if "brightness" in slots:
                return [ToolCall("set_brightness", {"device": entity.name, "percent": int(slots["brightness"])})]
            if str(slots.get("color", "")).lower() in COLOURS:
                return [ToolCall("set_color", {"device": entity.name, "color": str(slots["color"]).lower()})]
            return []
        if intent == "HassSetPosition" and entity is not None and entity.component == "cover" and "position" in slots:
            return [ToolCall("set_cover_position", {"device": entity.name, "percent": int(slots["position"])})]
        if intent == "HassClimateSetTemperature" and "temperature" in slots:
            args = {"temperature": float(slots["temperature"])}
            if entity is not None and entity.component == "climate":
                args["device"] = entity.name
            return [ToolCall("set_temperature", args)]
        if intent == "HassClimateGetTemperature":
            return [ToolCall("sensor_value", {"quantity": "temperature",
                                              **({"area": group["area"]} if group.get("area") else {})})]
        if intent in MEDIA:
            return [ToolCall("media", {"action": MEDIA[intent]})]
        if intent == "HassSetVolume" and "volume" in slots:
            return [ToolCall("set_volume", {"percent": int(slots["volume"])})]
        if intent == "HassMediaPlayerMute":
            return [ToolCall("mute", {})]
        if intent == "HassMediaPlayerUnmute":
            return [ToolCall("unmute", {})]
        if intent == "HassGetCurrentTime" and "get_time" in self.registry:
            return [ToolCall("get_time", {"what": "time"})]
        if intent == "HassGetCurrentDate" and "get_time" in self.registry:
            return [ToolCall("get_time", {"what": "date"})]
        return []


@functools.cache
def _kind_words() -> frozenset[str]:
    """Every word for a kind of device, in every language, folded ("lamp", "лампа", "लैंप")."""
    return frozenset(fold(w) for words in home_words().kinds.values() for w in words)


def _plural(name: str) -> str:
    """An English name with its last word in the plural ("Front Door" → "Front Doors", "Desk Lamp" → "Desk Lamps"), as
    said of two of them at once: "the front and back doors", "the desk and floor lamps". "" for a name not written in
    Latin letters, one already plural, or one whose last word is not a plain word."""
    words = name.split()
    last = words[-1] if words else ""
    if not last.isascii() or not last.isalpha() or len(last) < 3 or last.lower().endswith("s"):
        return ""
    if last.lower().endswith(("sh", "ch", "x", "z")):
        last += "es"
    elif last.lower().endswith("y") and last.lower()[-2] not in "aeiou":
        last = last[:-1] + "ies"
    else:
        last += "s"
    return " ".join([*words[:-1], last])


def _names_a_kind(text: str) -> bool:
    """Whether `text` has a word for a kind of device ("lights", "свет", "बत्ती", any language's; a word may end
    otherwise than its entry: "лампы", "lamps")."""
    from ..numbers import words_of

    kinds = {fold(w) for words in home_words().kinds.values() for w in words}
    stems = {w[:-1] for w in kinds if len(w) >= 4}
    return any(w in kinds or any(w.startswith(stem) for stem in stems) for w in words_of(fold(text)))

