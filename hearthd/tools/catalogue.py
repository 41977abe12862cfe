"""The home's devices as Home Assistant MQTT discovery announced them: the catalogue (saved to a private JSON file,
so a restart knows every device and its last state before the broker replays its retained messages), their
availability, and finding the device or room a user means — by name, alias, room and kind in any language, then
by how it sounds.
"""

from __future__ import annotations

import contextlib
import difflib
import functools
import json
import logging
import os
import re
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import HearthdError
from ..locale import languages, table
from ..phonetic import similarity, weight
from ..private import move_aside, private_dir
from .devicestate import track
from .discovery import MAX_JSON_DEPTH, Discovery, Entity, is_command_topic
from .templates import render_value_template

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
    heaters: frozenset[str] = frozenset()  # words in a name that say it warms a room ("heater", "обогреватель")
    ones: frozenset[str] = frozenset()  # a word standing for the kind asked about ("the front one")
    name_words: dict[str, frozenset[str]] = field(default_factory=dict)  # a kind's word → in a name ("лампу": lamp)


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
    heaters: set[str] = set()
    ones: set[str] = set()
    name_words: dict[str, set[str]] = {}
    for lang in langs:
        words = table(lang, "home.toml")
        for kind, said in words.get("kinds", {}).items():
            kinds.setdefault(kind, set()).update(said)
        for area, said in words.get("areas", {}).items():
            areas.setdefault(area, set()).update(said)
        doors.update(words.get("doors", []))
        fillers.update(words.get("fillers", []))
        not_alone.update(words.get("not_alone", []))
        heaters.update(w.lower() for w in words.get("heaters", []))
        ones.update(w.lower() for w in words.get("ones", []))
        for said, named in words.get("name_words", {}).items():
            name_words.setdefault(said.lower(), set()).update(w.lower() for w in named)
    return HomeWords({k: frozenset(v) for k, v in kinds.items()}, frozenset(doors),
                     {k: frozenset(v) for k, v in areas.items()}, frozenset(fillers), frozenset(not_alone),
                     frozenset(heaters), frozenset(ones), {k: frozenset(v) for k, v in name_words.items()})


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
                if k.endswith("_topic") and not is_command_topic(k) and isinstance(v, str) and v:
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
                track(e, topic, payload, state, self.max_json_depth)
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
        kinds = {c for c, words in vocab.kinds.items() if any(has_word(text, w) for w in words)}
        kind_words = set().union(*vocab.kinds.values())
        if area:  # a room was said: a device elsewhere is never the one meant ("в кухне" is not the living room)
            everywhere = pool
            pool = [e for e in pool if in_area(e, area)]
            if kinds:
                pool = [e for e in pool if e.component in kinds
                        or any(has_word(e.name.lower(), w) for k in kinds for w in vocab.kinds[k])]
            if not pool:
                return Match([])
            # several: a word of one name said beyond the room and the kind decides, else hearthd asks
            rest = without_room(text, {*vocab.areas.get(area, ()), area_said})  # "living room"
            extra = [w for w in spoken_words(rest) if not area_in(w) and w not in kind_words]
            named = [e for e in pool if extra and all(has_word(e.name.lower(), w) for w in extra)]
            if kinds and extra and not named and any(all(has_word(e.name.lower(), w) for w in extra)
                                                     for e in everywhere):
                return Match([])  # "the desk lamp in the bedroom": the desk lamp is elsewhere, not the bedroom's light
            if named or kinds or not extra:
                return Match(named or pool, 0.9)
            # "bedroom coffee machine": a name no device in that room has, and no kind: only a near miss in the room,
            # by the words beyond the room alone ("bedroom tv" is not the Bedroom Light for the room both say)
            return self._nearest(text, pool, " ".join(extra), {*vocab.areas.get(area, ()), area_said, area.lower()})
        if kinds:  # "the fan": the only fan there is (several: hearthd asks which)
            of_kind = [e for e in pool if e.component in kinds]
            extra = [w for w in spoken_words(text) if w not in kind_words]
            named = [e for e in of_kind if all(has_word(e.name.lower(), w) for w in extra)]
            if of_kind and not extra:
                # "the blinds" in a home whose covers are blinds, curtains and a garage door: covers are different
                # things by kind, and the word said is in the blinds' name, so the blinds are meant (no name with
                # the word: every cover). Not for lights: "the light" is any light, lamps included.
                said_kinds = [w for w in spoken_words(text) if w in kind_words]
                worded = [e for e in of_kind if e.component == "cover"
                          and any(has_word(e.name.lower(), w) for w in said_kinds)]
                return Match(worded or of_kind, 0.8)
            if named:
                return Match(named, 0.8)
            # "porch light": a name no light has is an unknown device, never "which of the lights?"
        words = spoken_words(text)
        if len(words) > 1 and words[-1] in vocab.ones:
            # "the front one", answering which door: the one whose name has the words said (any of them, "front"
            # too, which alone names nothing: the kind is the one asked about)
            named = [e for e in pool if all(has_word(e.name.lower(), w) for w in words[:-1])]
            if named:
                return Match(named, 0.8)
        return self._nearest(text, pool)

    def _nearest(self, text: str, pool: list[Entity], rest: str = "", room: Iterable[str] = ()) -> Match:
        """The name `text` nearly is: spelled nearly the same (a typo), else sounding nearly the same in any script
        ("रूम्बा" for Roomba, "нано лиф" for Nanoleaf). A name heard by its sound is taken only when it is clearly the
        best; when another sounds almost as close, both are returned and hearthd asks which one, never picking one
        of two similar names silently. `rest`: the words left when the room said has narrowed `pool`; then `rest` is
        weighed against the names without the `room`'s words, which both share."""
        def forms(e: Entity) -> list[str]:
            if not rest:
                return self._spoken_forms(e)
            return [f for f in (without_room(form.lower(), room) for form in self._spoken_forms(e)) if f]

        said_as = rest or text
        scored = sorted(((max(difflib.SequenceMatcher(None, said_as, f).ratio()
                              for f in (forms(e) if rest else [e.name.lower()]) or [""]), e) for e in pool),
                        key=lambda x: -x[0])
        best = scored[0][0]
        if best >= self.min_score:
            return Match([e for s, e in scored if s >= best - 0.02], best)
        said = [t for t in ((rest,) if rest else (" ".join(spoken_words(text)),)) if weight(t) >= PHONETIC_MIN_WEIGHT]
        if not said:
            return Match([], best)  # too short to tell by its sound ("on", "it")
        floor = max(self.min_score, PHONETIC_MIN) - PHONETIC_MARGIN  # nearer than this is never a candidate
        by_sound = sorted(((max((similarity(t, form, floor) for t in said for form in forms(e)), default=0.0), e)
                           for e in pool), key=lambda x: -x[0])
        heard = by_sound[0][0]
        if heard < max(self.min_score, PHONETIC_MIN):
            return Match([], max(best, heard))
        return Match([e for s, e in by_sound if s == heard or not clearly(heard, s)], heard)

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
        area = area_in(text)
        if area:
            return area, ""
        words = spoken_words(text)
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
        if len(ranked) > 1 and not clearly(ranked[0][1][0], ranked[1][1][0]):
            return "", ""  # "bedrum": the bedroom or the bathroom? Neither is taken
        return ranked[0][0], ranked[0][1][1]


def clearly(best: float, second: float) -> bool:
    """Whether a sound-alike score beats the next: by PHONETIC_MARGIN, or by being the very same sounds ("bedrum" is
    the bedroom by its key, though "bathroom" is one vowel away)."""
    return best - second >= PHONETIC_MARGIN or (best >= 1.0 > second)


def in_area(e: Entity, area: str) -> bool:
    """Whether entity `e` is in `area` (a home.toml room, or the home's own room name, lower case)."""
    return area_in(e.area.lower()) == area or area_in(e.name.lower()) == area or e.area.lower() == area


def spoken_words(text: str) -> list[str]:
    fillers = home_words().fillers
    return [w for w in (w.strip(".,!?;:।") for w in text.split()) if w and w not in fillers]


def has_word(text: str, word: str) -> bool:
    return re.search(rf"(?<!\w){re.escape(word)}(?!\w)", text) is not None


def without_room(text: str, phrases: Iterable[str]) -> str:
    """`text` without the words that named a room (`phrases`, the longest first: "living room" before "room")."""
    for phrase in sorted(phrases, key=len, reverse=True):
        text = re.sub(rf"(?<!\w){re.escape(phrase)}(?!\w)", " ", text)
    return " ".join(text.split())


def area_in(text: str) -> str:
    for area, words in home_words().areas.items():
        if any(has_word(text, w) for w in words):
            return area
    return ""


def areas_in(text: str) -> set[str]:
    """Every room `text` names ("кухне" → kitchen)."""
    folded = text.lower()
    return {area for area, words in home_words().areas.items() if any(has_word(folded, w) for w in words)}
