"""The fast intent path: sentence templates per language (hassil), matched before the model is asked."""

from __future__ import annotations

import functools
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime
from functools import cache
from typing import Any, Protocol

from .. import locale
from ..numbers import parse_clock, parse_number, words_of
from ..text import fold
from ..tools.registry import SchemaError, ToolRegistry, UnknownTool
from ..tools.smarthome import KINDS, keep_area
from .agent import Agent, Decision
from .checks import (
    about_alarm,
    asks,
    later_removed,
    negated,
    opens_a_question,
    review,
    says_many,
    time_said,
    without_tag,
)
from .declines import decline_kind, decline_phrase
from .library import ROOM, Library, turn_area
from .parsing import ToolCall
from .split import (
    clauses,
    goes_on,
    left_out,
    sounds_left_out,
    split_requests,
    statement,
    tells_not_to,
    told_not_to,
    without_courtesy,
    without_there,
)
from .tolerant import TolerantMatcher
from .when import absolute_times

# How a slot's matched text becomes an argument value; a slot that cannot be read sends the turn to the model.


@functools.cache
def _every_language(section: str, key: str, name: str) -> frozenset[str]:
    """A word list of every supported language's `name` [section] together (code-mixed speech)."""
    return frozenset(w.lower() for lang in locale.languages()
                     for w in locale.table(lang, name).get(section, {}).get(key, []))


def _duration(text: str, lang: str) -> int | None:
    from ..numbers import parse_duration

    more = _every_language("duration", "more", "numbers.toml")  # "ten more minutes" is ten minutes more
    found = parse_duration(text, lang)
    if found is None and any(w in more for w in text.lower().split()):
        found = parse_duration(" ".join(w for w in text.split() if w.lower() not in more), lang)
    return found


def _percent(text: str, lang: str) -> int | None:
    from ..numbers import parse_percent

    return parse_percent(text, lang)


def _date(text: str, lang: str) -> str | None:
    from datetime import date

    from ..dates import parse_date

    found = parse_date(text, lang, date.today())
    return found.isoformat() if found else None


def _time_on_a_day(text: str, lang: str) -> tuple[str, str] | None:
    """A time with a day said by a word inside it, as (time, ISO date): "परसों सात बजे", "seven on friday"."""
    from datetime import date

    from ..dates import day_apart

    found = day_apart(text, lang, date.today())
    if found is None:
        return None
    day, rest = found
    clock = _clock(rest, lang)
    return (clock, day.isoformat()) if clock is not None else None


def _label(text: str, lang: str) -> str | None:
    label = " ".join(text.strip(" .,!?;:'\"«»").split())
    if label.lower() in _no_names(lang):  # "a timer for me for 90 seconds": no timer called "me"
        return None
    if label.lower().split()[-1:] and label.lower().split()[-1] in _no_names(lang):
        return None  # "never mind the timer, cancel it": a name never ends in "the", "my", "it"
    if parse_number(label, lang) is not None or parse_clock(label, lang) is not None:
        return None  # "a timer for 7 am", "a timer called 7": a time of day or a number is no name (a length is:
    #                   "cancel the 10 minute timer" names the timer by it)
    words = label.lower().split()
    if words and words[-1] in _fractions(lang) and all(
            w in _fractions(lang) or w in _no_names(lang) or parse_number(w, lang) is not None for w in words[:-1]):
        return None  # "a timer for quarter of an hour": "quarter" begins the length, it names nothing
    return label if 0 < len(label) <= 40 else None


@functools.cache
def _fractions(lang: str) -> frozenset[str]:
    """The words of a part of a unit ("quarter", "half", "четверть", "आधा"), in `lang` and in English."""
    return frozenset(fold(w) for source in locale.read_with(lang) if locale.has(source, "numbers.toml")
                     for w in locale.toml(source, "numbers.toml").get("cardinal", {}).get("fractions", {}))


@functools.cache
def _skip_file(lang: str) -> dict[str, Any]:
    return (locale.yaml(lang, "sentences/_skip.yaml") or {}) if locale.has(lang, "sentences/_skip.yaml") else {}


# the template lists that name a device, a room or a floor (FastPath.name_words)
_NAME_LISTS = frozenset({"device", "light", "room", "cover", "fan", "thermostat", "door", "area", "scene", "home_area",
                         "home_floor", "home_name"})


@functools.cache
def _no_names(lang: str) -> frozenset[str]:
    """What a wildcard may catch that names nothing: a skip word, or a word for the speaker ("me", "меня")."""
    table = _skip_file(lang)
    return frozenset(w.lower() for w in (*table.get("skip_words", []), *table.get("not_names", [])))


_TIME_SECTIONS = ("units", "minutes", "half", "ordinals", "quarter", "whole", "hours24", "phrases", "periods",
                  "before_hour", "joiners", "ambiguous")


@functools.cache
def _time_words(lang: str) -> frozenset[str]:
    """Every word a time of day is said with in `lang` (and English, spoken inside the others): the clock words of
    locales/<lang>/numbers.toml, number words, and the words around a time of checks.toml [time]."""
    words: set[str] = set()

    def add(value: Any) -> None:
        if isinstance(value, str):
            words.update(fold(value).split())
        elif isinstance(value, dict):
            for k, v in value.items():
                add(k)
                add(v)
        elif isinstance(value, list):
            for v in value:
                add(v)

    for source in locale.read_with(lang):
        numbers = locale.toml(source, "numbers.toml") if locale.has(source, "numbers.toml") else {}
        for section in _TIME_SECTIONS:
            add(numbers.get(section, {}))
        cardinal = numbers.get("cardinal", {})
        add(cardinal.get("words", {}))
        add(cardinal.get("tens", []))
        if locale.has(source, "checks.toml"):
            # (not the words that say an amount follows, "up", "more": those are no part of a time)
            add({k: v for k, v in locale.toml(source, "checks.toml").get("time", {}).items() if k != "at_amount"})
        add(list(_no_names(source)))  # "please", "um", "ज़रा", "mujhe": said inside a time as anywhere else
    # the little words of "seven o clock", "6 in the morning", "the 7 a.m.", "सुबह 6 बजे का" (checks.toml [time] around)
    add(sorted(_every_language("time", "around", "checks.toml")))
    return frozenset(words)


_AROUND_WORDS = ".,!?;:'\"«»()"  # stripped from a word of a time slot before it is looked up


def _clock(text: str, lang: str) -> str | None:
    """A {time} slot: a time of day when every word of it is one a time is said with ("quarter past seven", "без
    десяти семь", "सुबह 7 बजे"); never a time picked out of other words ("разбуди меня, когда будет 7 градусов")."""
    from ..numbers import digits_for_times

    known = _time_words(lang)
    for token in fold(digits_for_times(text.lower(), lang, in_time_slot=True)).split():
        bare = token.strip(_AROUND_WORDS)
        if bare and not any(ch.isdigit() for ch in bare) and bare not in known and token not in known:
            return None
    return parse_clock(text, lang)


def _clock_then_purpose(text: str, lang: str) -> str | None:
    """A time and what it is for, said together before "के लिए" ("7 baje news dekhne"): the time is the words from
    the start that are all time words, and the rest (no number, no duration) is the purpose, read as nothing."""
    from ..numbers import parse_duration

    words = text.split()
    for cut in range(len(words) - 1, 0, -1):
        head, tail = " ".join(words[:cut]), " ".join(words[cut:])
        if any(ch.isdigit() for ch in tail) or parse_duration(tail, lang) is not None:
            return None
        if (clock := _clock(head, lang)) is not None:
            return clock
    return None


def _clock_then_label(text: str, lang: str) -> tuple[str, str] | None:
    """A time and what a reminder is for, said one after the other with no word between them ("напомни в пять
    позвонить маме", "11:02 बजे दवाई लेनी है"): the time is the longest run of words from the start that reads as one,
    the rest is the reminder's name (the alarm says it when it rings). Two wildcards side by side cannot be a
    template, so the one slot is read in two."""
    words = text.split()
    known = _time_words(lang)
    for cut in range(len(words) - 1, 0, -1):
        clock = _clock(" ".join(words[:cut]), lang)
        if clock is not None:
            rest = words[cut:]
            if all(fold(w).strip(_AROUND_WORDS) in known for w in rest):
                return None  # "11:04 बजे": all of it is the time (the template with {time} alone reads it)
            label = _label(" ".join(rest), lang)
            return (clock, label) if label is not None else None
    return None


def _label_then_duration(text: str, lang: str) -> tuple[str, int] | None:
    """A timer's name and its length said one after the other ("a timer for pasta 10 minutes", "for the rice, twenty
    minutes"): the length is the longest run of words at the end that reads as one, the rest the name. Two
    wildcards side by side cannot be a template, so the one slot is read in two."""
    words = text.replace(",", " ").split()
    if _duration(text, lang) is not None:
        return None  # "an hour and a half": all of it is the length ({seconds} reads it)
    for cut in range(1, len(words)):
        seconds = _duration(" ".join(words[cut:]), lang)
        if seconds is not None:
            label = _label(" ".join(words[:cut]), lang)
            if label is None or any(ch.isdigit() for ch in label) or _duration(label, lang) is not None \
                    or words[0].lower() in _no_names(lang):  # "for me for 90 seconds": no timer called "me for"
                return None
            return label, seconds
    return None


def _ends_in_a_length(text: str, lang: str) -> bool:
    """"rice twenty minutes": a name and a length said together, never a timer's name (the template that reads the
    two does); a length alone is one ("cancel the 10 minute timer")."""
    return _label_then_duration(text, lang) is not None


def _place(text: str, lang: str) -> str | None:
    """A place asked about ("what time is it in London", "в Токио", "in Eastern time"): the user's words, never a
    duration or a number ("what time is it in ten minutes") nor an alarm or a reminder."""
    from ..numbers import parse_duration

    if any(ch.isdigit() for ch in text) or parse_duration(text, lang) is not None or about_alarm(text, lang):
        return None
    words = text.split()
    skip = {w.lower() for w in skip_words(lang)}
    for _ in range(2):  # "in Tokyo right now": the words around a request are no part of the place
        for n in (2, 1):
            if len(words) > n and " ".join(words[-n:]).lower().strip(".,!?") in skip:
                words = words[:-n]
    return _label(" ".join(words), lang)


SLOT_READERS: dict[str, Callable[[str, str], Any]] = {"time": _clock, "time_for": _clock_then_purpose,
                                                      "new_time": _clock, "time_label": _clock_then_label,
                                                      "label_seconds": _label_then_duration,
                                                      "seconds": _duration,
                                                      "percent": _percent, "label": _label, "date": _date,
                                                      "scene": _label, "place": _place}


HERE = "@here"  # a template slot value: the speaking device's room
DAY_DATE = "day_date"  # a template list of days said by a word ("tomorrow"), as days from today: read as the date
PURPOSE = "purpose"  # a template wildcard for what a request is for ("… to watch the news"), read as nothing
AMOUNT = "amount"  # a template wildcard for how much a change is by ("volume up by 10"): a number, read as nothing
EVERY = "every"  # a template slot: the words mean every device of the group, said in the singular or not at all
MAX_SLOT_WORDS = 6  # "quarter past seven in the evening"; a longer wildcard text is more than a time
MAX_LABEL_WORDS = 8  # what a reminder is for, said after its time in the same slot ("time_label")


# What a home with no smart-home devices says it lacks, for each smart-home tool whose templates read the words.
_NONE_HERE = {"set_brightness": "no_lights", "set_color": "no_lights", "set_temperature": "no_thermostat",
              "set_climate_mode": "no_thermostat", "open_cover": "no_covers", "close_cover": "no_covers",
              "set_cover_position": "no_covers", "lock_door": "no_locks", "unlock_door": "no_locks",
              "set_fan_speed": "no_fans"}


def _plausible_slot(text: str, lang: str, more: int = 0) -> bool:
    words = text.lower().split()
    return len(words) <= MAX_SLOT_WORDS + more and len(split_requests(text, lang)) == 1


@functools.cache
def _misheard(lang: str) -> tuple[tuple[re.Pattern[str], str], ...]:
    heard = locale.toml(lang, "heard.toml") if locale.has(lang, "heard.toml") else {}
    table = {**heard.get("misheard", {}), **heard.get("said_as", {})}
    # a phrase ending in "$" is one said last ("turn the tv of": "of" ends no request, "off" does)
    return tuple((re.compile(rf"(?<!\w){re.escape(heard.removesuffix('$').rstrip())}"
                             + (r"(?=[\s.!?…]*$)" if heard.endswith("$") else r"(?!\w)"), re.IGNORECASE), meant)
                 for heard, meant in sorted(table.items(), key=lambda kv: -len(kv[0])))


# two words joined by a hyphen, no digits in them (letters and the vowel signs of Devanagari, which \w leaves out)
_TARGETS = ("device", "door", "area", "floor", "domain", "name")


def _does(decision: Decision) -> tuple[Any, ...]:
    return tuple((c.name, repr(sorted(c.arguments.items()))) for c in decision.calls)


def _targets(decision: Decision) -> frozenset[tuple[str, str]]:
    """What a decision's calls act on: their devices, doors, rooms, floors and kinds of device."""
    return frozenset((k, str(v).casefold()) for c in decision.calls for k, v in c.arguments.items() if k in _TARGETS)


_HYPHENED = re.compile(r"(?<![^\s\"'«(])([^\s\d\-.,!?;:…\"'»)]+)-([^\s\d\-.,!?;:…\"'»)]+)(?![^\s.,!?;:…\"'»)])")


def as_meant(text: str, lang: str) -> str:
    """`text` with the sound-alike slips of speech to text put right, and a few ways of saying a request put as the
    templates know it (locales/<lang>/heard.toml `misheard`, `said_as`); two number words joined by a hyphen as two
    words (whisper writes a time said "пять сорок" as "пять-сорок", "seven thirty" as "seven-thirty")."""
    for pattern, meant in _misheard(lang):
        text = pattern.sub(meant, text)

    def apart(m: re.Match[str]) -> str:
        numbers = parse_number(m.group(1), lang) is not None and parse_number(m.group(2), lang) is not None
        return f"{m.group(1)} {m.group(2)}" if numbers else m.group(0)

    return _HYPHENED.sub(apart, text)


@functools.cache
def skip_words(lang: str) -> tuple[str, ...]:
    """Words said around a request that change nothing in it (a leftover wake word, "please", "um", "ну", "ज़रा"):
    locales/<lang>/sentences/_skip.yaml. hassil matches with them taken out and as said, so a template that
    holds one still reads it."""
    return tuple(_skip_file(lang).get("skip_words", []))


@functools.cache
def _load_intents() -> dict[str, Any]:
    """Every language's templates, parsed once per process (they do not depend on the tools declared)."""
    from hassil import Intents

    out = {}
    for lang in locale.languages():
        merged: dict[str, Any] = {"language": lang, "intents": {}, "lists": {}, "skip_words": []}
        for file in locale.sentence_files(lang):
            data = locale.yaml(lang, file) or {}
            for name, intent in (data.get("intents") or {}).items():  # an intent in two files: both its blocks
                merged["intents"].setdefault(name, {"data": []})["data"].extend(intent.get("data", []))
            merged["lists"].update(data.get("lists", {}))
            merged["skip_words"].extend(data.get("skip_words", []))
        out[lang] = Intents.from_dict(merged)
    return out


@functools.cache
def _unknown_device_intents() -> dict[str, Any]:
    """Each language's sentences that switch a named thing on or off (locales/<lang>/unknown_device.yaml)."""
    from hassil import Intents

    return {lang: Intents.from_dict(locale.yaml(lang, "unknown_device.yaml")) for lang in locale.languages()
            if locale.has(lang, "unknown_device.yaml")}


@functools.cache
def _template_words(lang: str) -> frozenset[str]:
    """Every word hearthd's own templates say in `lang` and in English (the words of their lists too): a name made of
    one of them ("wifi", "music", "heating") is something hearthd knows, never an unknown device."""
    words: set[str] = set()

    def add(template: str) -> None:
        template = re.sub(r"\{[^}]*\}", " ", template)
        words.update(fold(w) for w in words_of(re.sub(r"[\[\]()|<>]", " ", template)))

    for source in locale.read_with(lang):
        for file in locale.sentence_files(source):
            data = locale.yaml(source, file) or {}
            for intent in (data.get("intents") or {}).values():
                for block in intent.get("data", []):
                    for template in block.get("sentences", []):
                        add(str(template))
            for slot_list in (data.get("lists") or {}).values():
                for value in (slot_list.get("values") or []) if isinstance(slot_list, dict) else []:
                    add(str(value.get("in", "")) if isinstance(value, dict) else str(value))
    return frozenset(words)


def _bare_name(text: str, lang: str) -> str:
    """The name said, without the words around it that name nothing ("the", "мне", "को"); "" when what is left is
    no name: nothing, more than three words, a number, a duration or a time."""
    from ..numbers import parse_duration
    from ..tools.catalogue import home_words

    ignored = {w.lower() for w in (*home_words().fillers, *_no_names(lang))} | {
        w.lower() for w in skip_words(lang) if " " not in w}
    words = words_of(text)
    while words and words[0].lower() in ignored:
        words.pop(0)
    while words and words[-1].lower() in ignored:
        words.pop()
    name = " ".join(words)
    if not 0 < len(words) <= 3 or any(ch.isdigit() for ch in name) or parse_duration(name, lang) is not None \
            or parse_clock(name, lang) is not None:
        return ""
    return name


SOUNDS_LIKE = 0.75  # phonetic.similarity from which a word may be a misheard known one (left to the next tiers)


def _names_nothing_known(name: str, catalogue: Any, lang: str) -> bool:
    """Whether `name` is nothing hearthd knows: no device of the home (by name, alias, room or kind, spelled or
    sounding alike) and no word of its own templates."""
    from ..phonetic import similarity
    from ..tools.catalogue import home_words
    from ..tools.smarthome import CONTROLLABLE

    said = [fold(w) for w in words_of(name)]
    if any(w in _template_words(lang) for w in said) or catalogue.resolve(name, CONTROLLABLE).entities:
        return False
    vocabulary = home_words()
    known = {w.lower() for words in (*vocabulary.kinds.values(), *vocabulary.areas.values()) for w in words}
    for entity in catalogue.entities.values():
        known.update(w.lower() for w in words_of(f"{entity.name} {entity.area}"))
    for alias in catalogue.aliases:
        known.update(w.lower() for w in words_of(alias))
    return not any(w == k or similarity(w, k) >= SOUNDS_LIKE for w in said for k in known)


class FastPath:
    """Deterministic matches from locales/<lang>/sentences/*.yaml; only declared tools, validated arguments."""

    def __init__(self, registry: ToolRegistry, library: Library | None = None) -> None:
        self.registry = registry
        self.library = library  # Home Assistant's templates with this home's names (hearthd.agent.library)
        self._names_cache: tuple[Any, Any] | None = None  # the library's name list and the {home_name} built from it

    @property
    def _intents(self) -> dict[str, Any]:
        return _load_intents()

    def match(self, text: str, lang: str) -> Decision | None:
        """hearthd's own templates, then the sentence library: the library's reading wins for the home (it knows the
        home's own names, areas and floors), hearthd's for alarms, answers and the computer. Words speech to text
        often mishears ("turn of the light", "for to minutes") are read as meant when nothing reads them as heard."""
        found = self._match(text, lang)
        if found is None and (meant := as_meant(text, lang)) != text:
            found = self._match(meant, lang)
        return found if found is not None else self.unknown_device(text, lang)

    def unknown_device(self, text: str, lang: str) -> Decision | None:
        """"turn on the sauna" in a home with no sauna: the answer that hearthd knows no device called that
        (home.unknown_device), not the generic refusal. Only when the words clearly switch a named thing on or off
        (locales/<lang>/unknown_device.yaml) and the name is nothing hearthd knows: no device of this home, none like
        one in spelling or in sound (a misheard name is left to the next tiers), no word of hearthd's own templates,
        no kind of request it declines ("the news")."""
        from hassil import recognize_all

        catalogue = self.library.catalogue() if self.library is not None else None
        intents = _unknown_device_intents().get(lang)
        if catalogue is None or not catalogue.entities or intents is None:
            return None
        for result in recognize_all(text, intents):
            if result.intent.name not in self.registry or "name" not in result.entities:
                continue
            name = _bare_name(str(result.entities["name"].text), lang)
            if name and not decline_kind(name, lang) and _names_nothing_known(name, catalogue, lang):
                return Decision("abstain", reason=f"{result.intent.name}: no device called {name!r} in this home",
                                source="fastpath", say="home.unknown_device", say_values={"name": name})
        return None

    def _match(self, text: str, lang: str) -> Decision | None:
        # the danda ends a Hindi sentence as whisper writes it ("लाइट बंद करो।"): hassil's punctuation has no danda,
        # and the templates read none of these words with it (the tolerant tier did, or the model)
        text = text.replace("॥", ".").replace("।", ".")
        own = self._here(self._own(text, lang))
        if own is not None and own.kind == "clarify" and own.calls and all(
                c.name in _NONE_HERE and c.name in self.registry and self._nothing_of_its_kind(c.name)
                for c in own.calls):
            # "lock the door" where the smart-home link knows no lock: no question which, it is said there is none
            # (not a verb alone, "выключи": which thing is asked, the music or the computer may be meant)
            return _none_here(f"{own.calls[0].name}: nothing of its kind in this home", tool=own.calls[0].name)
        if own is not None and own.kind == "clarify" and own.missing == ROOM:
            return own  # "dim the lights" where no room is known: which room (Library.which_room)
        if own is not None and any(not (c.arguments.get("device") or c.arguments.get("door")) and any(
                c.arguments.get(k) for k in ("area", "domain", "device_class")) for c in own.calls):
            # a group hearthd's own templates read on purpose ("all the fans": the home's, not this room's), settled as
            # the library settles its own (the room as the home spells it; one light in the garage is that light)
            return self.library.settle(own, text, lang) if self.library is not None else own
        if self.library is not None and (own is None or all(
                c.name in self.registry and self.registry.get(c.name).family == "home" for c in own.calls)):
            found = self.library.match(text, lang)
            if found is not None and not (found.kind == "clarify" and own is not None):
                return found  # (a device hearthd's own templates named is no question of which room: "the fan")
        return own

    def _own(self, text: str, lang: str) -> Decision | None:
        """A call when a template matches, names a declared tool, and every slot reads as a valid value."""
        from hassil import recognize_all

        intents = self._intents.get(lang)
        readable: list[tuple[str, dict[str, Any]]] = []
        exact: list[tuple[str, dict[str, Any]]] = []  # matches with no wildcard: every word from a closed list
        blocked = False
        absent = ""  # a smart-home request in a home with no smart-home devices ("set the heating to 21")
        for result in recognize_all(text, intents, slot_lists=self._home_lists()) if intents is not None else []:
            if result.intent.name == FEELS:  # "it's freezing in the bedroom": what there is to do about it there
                felt = self._felt(result, asks(text, lang))
                if felt is not None:
                    readable.append(felt)
                    exact.append(felt)
                continue
            if result.intent.name not in self.registry:
                if not readable:
                    blocked = True  # a template that exists to send these words to the model, or an undeclared tool
                if result.intent.name in KINDS and not any(t.family == "home" for t in self.registry) and not (
                        result.intent.name == "set_brightness" and "screen_brightness" in self.registry):
                    absent = absent or result.intent.name  # ("make it brighter" on a desktop may be its screen)
                continue
            arguments = self._read_slots(result, lang)
            if arguments is not None:
                readable.append((result.intent.name, arguments))
                if not any(getattr(e, "is_wildcard", False) for e in result.entities.values()):
                    exact.append((result.intent.name, arguments))
        if blocked:
            # the words go to the model, unless a template read them all without a wildcard
            # ("alarm 5 minute snooze karo": the snooze list, not a time the model should read)
            readable = exact
        if not readable:
            if absent:  # said so, precisely: the model, left with the words, would reach for another tool (a volume)
                return _none_here(f"{absent}: no such device is set up in this home", tool=absent)
            return None
        # The template that reads the most: "7 am called gym" is a time and a label, not the time "7 am called gym";
        # a reading these tools cannot take (a room, where the tool knows only names) gives way to the next
        # as many slots each: a group when the words say many ("свет на кухне" is the kitchen's lights)
        # ... and a tool with nothing of its kind in this home (no lights: "turn up the brightness" is the screen's)
        # only after those that have
        many = says_many(text, lang)
        for intent, arguments in sorted(readable, key=lambda r: (self._nothing_of_its_kind(r[0]), -len(r[1]),
                                                                 not (many and "area" in r[1]))):
            every = bool(arguments.pop(EVERY, False))
            decision = self._decision(intent, arguments)
            if decision is not None:
                decision.every = every
                return decision
        return None

    def _felt(self, result: Any, asked: bool = False) -> tuple[str, dict[str, Any]] | None:
        """A room said to be cold or hot ("it's freezing in the bedroom", "на кухне жарища", "बेडरूम में बहुत ठंड है"):
        a thermostat there asks how warm it should be; else the room's one heater is switched on (cold) or its one fan
        (hot); else how warm it is there is said. Before, the model read these as nothing, or as the lights. `asked`:
        said as a question ("в спальне холодно?"), how warm it is there is the answer."""
        from ..tools.catalogue import home_words

        catalogue = self.library.catalogue() if self.library is not None else None
        area = str(result.entities["area"].value) if "area" in result.entities else ""
        feel = str(result.entities["feel"].value) if "feel" in result.entities else ""
        if catalogue is None or not area or feel not in ("cold", "hot"):
            return None
        there = [e for e in catalogue.entities.values() if e.area.lower() == area.lower()]
        heaters = home_words().heaters

        def called(e: Any) -> set[str]:
            said = [e.name, *(a for a, target in catalogue.aliases.items() if target.lower() == e.name.lower())]
            return {fold(s) for s in said} | {w for s in said for w in words_of(fold(s))}

        if asked and "sensor_value" in self.registry:
            return "sensor_value", {"area": area, "quantity": "temperature"}
        thermostats = [e for e in there if e.component == "climate"]
        if thermostats and "set_temperature" in self.registry:
            return "set_temperature", {"device": thermostats[0].name}
        helpers = [e for e in there if e.component == "switch" and called(e) & heaters] if feel == "cold" \
            else [e for e in there if e.component == "fan"]
        if len(helpers) == 1 and "turn_on" in self.registry:
            return "turn_on", {"device": helpers[0].name}
        if "sensor_value" in self.registry:
            return "sensor_value", {"area": area, "quantity": "temperature"}
        return None

    def home_thing(self, said: str, lang: str, components: tuple[str, ...]) -> str | None:
        """The room, floor or device of this home `said` names ("the bedroom", "спальни", "upstairs", "the floor
        lamp"), as the home spells it; None when it names none, or several devices."""
        from ..tools.catalogue import home_words

        if self.library is None:
            return None
        skip = {fold(w) for w in (*home_words().fillers, *_no_names(lang), *skip_words(lang))}
        words = [w for w in words_of(fold(said)) if w not in skip]
        if not words:
            return None
        phrase = " ".join(words)
        lists = self.library.slot_lists()
        for value in (*lists["area"].values, *lists["floor"].values):
            if " ".join(words_of(fold(str(value.text_in.text)))) == phrase:
                return str(value.value_out)
        catalogue = self.library.catalogue()
        found = catalogue.resolve(" ".join(words), components).entities if catalogue is not None and components \
            else []
        return found[0].name if len(found) == 1 else None

    def only_what_is_left_out(self, named: str, out: str, lang: str, components: tuple[str, ...]) -> bool:
        """Whether every device `named` means is in the room, or is the device, that `out` leaves out."""
        left = self.home_thing(out, lang, components)
        catalogue = self.library.catalogue() if self.library is not None else None
        if left is None or catalogue is None:
            return False
        found = catalogue.resolve(named, components).entities
        return bool(found) and all(left.lower() in (e.area.lower(), e.name.lower()) for e in found)

    def _nothing_of_its_kind(self, intent: str) -> bool:
        offered = self.registry.get(intent).offered
        return offered is not None and not offered()

    def _here(self, decision: Decision | None) -> Decision | None:
        """A template's "@here" room is the speaking device's; with none known, the sentence is not read."""
        if decision is None or not any(c.arguments.get("area") == HERE for c in decision.calls):
            return decision
        here = self.library.here if self.library is not None else ""
        if not here:  # no room for this microphone: which room, when the home has such devices in several
            found = self.library.which_room(decision) if self.library is not None else None
            names = [c.name for c in decision.calls]
            if found is None and all(n in KINDS and self._nothing_of_its_kind(n) for n in names):
                # "make it brighter in here" where the smart-home link knows no light (the shipped default: MQTT on,
                # nothing discovered): said so, as with no smart-home tools; the model reached for the volume
                return _none_here(f"{names[0]}: nothing of its kind in this home", tool=names[0],
                                  kind=str(decision.calls[0].arguments.get("domain") or ""))
            return found
        for call in decision.calls:
            if call.arguments.get("area") == HERE:
                call.arguments = {**call.arguments, "area": here}
        return decision

    def name_words(self, lang: str) -> frozenset[str]:
        """Every word a device, a room or a floor is called by in `lang`: this home's names, aliases and rooms, and
        the templates' own lists ("telly", "lounge")."""
        lists: list[Any] = []
        if lang in self._intents:
            lists += [v for k, v in self._intents[lang].slot_lists.items() if k in _NAME_LISTS]
        lists += list((self._home_lists() or {}).values())
        words: set[str] = set()

        def walk(node: Any) -> None:
            text = getattr(node, "text", None)
            if isinstance(text, str):
                words.update(words_of(text.lower()))
            for item in getattr(node, "items", None) or ():
                walk(item)

        for slot_list in lists:
            for value in getattr(slot_list, "values", None) or ():
                walk(value.text_in)
        return frozenset(words)

    def _home_lists(self) -> dict[str, Any] | None:
        """This home's rooms and floors for hearthd's own group templates ({home_area}, {home_floor}); their
        stand-in lists in the templates when no home is known."""
        if self.library is None:
            return None
        lists = self.library.slot_lists()
        return {"home_area": lists["area"], "home_floor": lists["floor"], "home_name": self._home_names(lists["name"])}

    def _home_names(self, names: Any) -> Any:
        """This home's device names and aliases for hearthd's own templates ({home_name}), each read as the device's
        name (as hearthd's other device lists are), with the library's context (domain, area) for requires_context."""
        from hassil import TextSlotList

        catalogue = self.library.catalogue() if self.library is not None else None
        entities = dict(catalogue.entities) if catalogue is not None else {}
        if self._names_cache is not None and self._names_cache[0] is names:
            return self._names_cache[1]
        rows = [(str(v.text_in.text), entities[v.value_out].name if v.value_out in entities else v.value_out,
                 dict(v.context or {})) for v in names.values]
        built = TextSlotList.from_tuples(rows, allow_template=False, name="home_name")
        self._names_cache = (names, built)
        return built

    def _read_slots(self, result: Any, lang: str) -> dict[str, Any] | None:
        """Slot values, or None when one cannot be read (then a less general template may still match:
        "set an alarm for 7 every day" is not the time "7 every day")."""
        arguments: dict[str, Any] = {}
        for name, entity in result.entities.items():
            if name == AMOUNT:  # "прибавь звук на десять": a step up, never the level 10 (no tool takes the step)
                if parse_number(str(entity.text).strip(" .,!?%"), lang) is None:
                    return None
                continue
            if name == PURPOSE:  # "set an alarm for 7 to watch the news": why, not what; no argument
                if not _plausible_slot(str(entity.text), lang):
                    return None
                continue
            if name == DAY_DATE:  # "what day is it tomorrow": the date that many days from today
                from datetime import date, timedelta

                arguments["date"] = (date.today() + timedelta(days=int(entity.value))).isoformat()
                continue
            reader = SLOT_READERS.get(name)
            if reader and not str(entity.text).strip() and not getattr(entity, "is_wildcard", False):
                arguments[name] = entity.value  # the template's own value ("the fan on high": 100), nothing said
                continue
            if reader and not _plausible_slot(str(entity.text), lang,
                                              MAX_LABEL_WORDS if name in ("time_label", "label_seconds") else 0):
                return None  # a wildcard that swallowed a second request: "7 am and tell me a joke"
            if name == "label" and (parse_clock(str(entity.text), lang) is not None
                                    or _ends_in_a_length(str(entity.text), lang)):
                return None  # "cancel the 6:45 alarm": a time, not an alarm called "6:45"
            if name == "label" and any(opens_a_question(said, lang) for said in (str(entity.text),
                                                                                 str(entity.text).split(None, 1)[-1])):
                return None  # "напомни, который час", "don't let me forget what day it is": a fact asked for
            if name == "time" and "date" not in result.entities and (apart := _time_on_a_day(str(entity.text), lang)):
                # "परसों सात बजे", "семь послезавтра": two wildcards side by side cannot be a template, so the day
                # is read out of the time (a tool without a date then takes no such reading)
                arguments["time"], arguments["date"] = apart
                continue
            if reader and name != "date" and self._names_a_when(str(entity.text), lang, dates=name == "time"):
                return None  # "7 every day": a repeat or a day inside the time; the template with {repeat} reads it
            value = reader(str(entity.text), lang) if reader else entity.value
            if value is None:
                return None
            if name == "time_label":
                arguments["time"], arguments["label"] = value
                continue
            if name == "label_seconds":
                arguments["label"], arguments["seconds"] = value
                continue
            arguments["time" if name == "time_for" else name] = value
        return arguments

    def _names_a_when(self, text: str, lang: str, dates: bool = False) -> bool:
        from datetime import date

        from ..dates import parse_date

        if dates and parse_date(text, lang, date.today()) is not None:
            return True  # "7 on friday": a day inside the time; a template with {date} reads both, or the model
        lists = self._intents[lang].slot_lists if lang in self._intents else {}
        words = set(words_of(text.lower()))
        for name in ("repeat", "day"):
            slot_list = lists.get(name)
            for value in getattr(slot_list, "values", []) or []:
                said = str(getattr(value.text_in, "text", "") or "")
                if said and set(words_of(said.lower())) <= words:
                    return True
        return False

    def _decision(self, intent: str, arguments: dict[str, Any]) -> Decision | None:
        tool = self.registry.get(intent)
        if set(arguments) - set(tool.parameters.get("properties", {})):
            return None  # a slot this tool has no parameter for
        missing = [k for k in tool.parameters.get("required", []) if k not in arguments]
        missing += _stood_in_for(tool.parameters, tool.model_parameters.get("required", []), arguments)
        if not missing and tool.family == "home" and not any(arguments.get(k) for k in TARGETS) \
                and not (arguments.get("question") == "which" and tool.read_only):  # ("what's on?": the whole home)
            # "turn on the", "выключи", "बंद कर दो": what to act on is all that is missing (these tools take a group
            # too, so the schema requires no name): asked for, as the model's own calls must name it
            missing = [k for k in tool.model_parameters.get("required", []) if k in NAMES][:1]
        if missing:  # "set an alarm": the tool is certain, the time was not said — ask for it
            return Decision("clarify", calls=[ToolCall(tool.name, arguments)], missing=missing[0],
                            source="fastpath", reason=f"{tool.name}: {missing[0]} not said")
        try:
            arguments = self.registry.validate(intent, arguments)
        except (UnknownTool, SchemaError):
            return None
        return Decision("call", calls=[ToolCall(intent, arguments)], source="fastpath", name_probs={intent: 1.0})


def _stood_in_for(parameters: dict[str, Any], model_required: list[str], arguments: dict[str, Any]) -> list[str]:
    """What the model must give that a template may fill instead with a code argument standing in for it
    (`x-instead-of`: "turn the heating up two degrees", a step for set_temperature's temperature), when neither was
    said: "make it warmer" asks to what temperature."""
    props = parameters.get("properties", {})
    out = []
    for name in model_required:
        stand_ins = [k for k, v in props.items() if isinstance(v, dict) and v.get("x-instead-of") == name]
        if stand_ins and name not in arguments and not any(k in arguments for k in stand_ins):
            out.append(name)
    return out


# what a home call acts on: a device or door by name, or a group (a room, a kind); NAMES are asked for by name
TARGETS = ("device", "door", "scene", "area", "domain", "device_class")
NAMES = ("device", "door")
FEELS = "feels"  # the templates' intent for a room said to be cold or hot (FastPath._felt)
# Router._sharing reads parts of one breath: at most this many parts of at most this many words, and this many
# readings tried per part (the fewest borrowed words first); a hostile run-on costs no more than
# that.
SHARED_MAX_PARTS, SHARED_MAX_WORDS, SHARED_MAX_TRIES = 5, 10, 24

_BARE_NUMBER = re.compile(r"[\d०-९]+(?:[.:,][\d०-९]+)*")  # "7", "7.30", "7:30" (not "6am": its unit is said)


@dataclass
class Pending:
    """A call waiting for one argument the user has been asked for."""

    call: ToolCall
    missing: str
    text: str
    lang: str
    deadline: float
    asked: int = 1
    held: tuple[ToolCall, ...] = ()  # the request's other parts, done with the answer (Decision.held)


@dataclass
class Done:
    """A request just done in a conversation, which "actually, make it 8 instead" corrects (until `deadline`)."""

    call: ToolCall
    lang: str
    deadline: float
    data: dict[str, Any] = field(default_factory=dict)  # what the tool said it did (the alarm set, with its id)


@functools.cache
def _correction_intents() -> dict[str, Any]:
    """Each language's corrections of what was just done (locales/<lang>/corrections.yaml)."""
    from hassil import Intents

    return {lang: Intents.from_dict(locale.yaml(lang, "corrections.yaml")) for lang in locale.languages()
            if locale.has(lang, "corrections.yaml")}


def _clock_like(text: str) -> bool:
    return re.search(r"\d{1,2}:\d{2}", text) is not None


_LEVELS = ("set_volume", "set_brightness", "set_fan_speed", "set_cover_position", "screen_brightness")
CORRECTABLE = ("set_alarm", "move_alarm", "set_temperature", *_LEVELS)


def corrected(call: ToolCall, value: str, lang: str, data: dict[str, Any] | None = None) -> ToolCall | None:
    """`call` (just done, `data` what its tool said it did) with `value` in place of what it set: an alarm's time
    (that very alarm moved, by its id: not a second one set, nor another at the same time), a thermostat's
    temperature, a level in percent. None when `value` does not read as one."""
    args = call.arguments
    if call.name in ("set_alarm", "move_alarm"):
        was = args.get("new_time") if call.name == "move_alarm" else args.get("time")
        now = _clock(value, lang)
        alarm = (data or {}).get("now", data or {})
        which = {"id": alarm["id"]} if isinstance(alarm.get("id"), int) else {}
        return ToolCall("move_alarm", {"time": was, "new_time": now, **which}) if was and now and now != was \
            else None
    if call.name == "set_temperature":
        if _clock_like(value):
            return None  # "8:30" is a time, never a temperature
        words = value.split()  # the number said first ("22 degrees", "двадцать три градуса")
        number = next((n for k in range(len(words), 0, -1) if (n := parse_number(" ".join(words[:k]), lang))
                       is not None), None)
        if number is None:
            return None
        kept = {k: v for k, v in args.items() if k == "device"}
        return ToolCall("set_temperature", {**kept, "temperature": float(number)})
    if call.name in _LEVELS:
        percent = _percent(value, lang)
        if percent is None:
            return None
        kept = {k: v for k, v in args.items() if k not in ("percent", "step", "by", "direction")}
        return ToolCall(call.name, {**kept, "percent": percent})
    return None


class OpenQuestion(Protocol):
    """Where one conversation's open question is kept (the Router itself, or a daemon's Dialogue)."""

    pending: Pending | None


# The kinds of device whose words say a request is about the home, and what a home without any says.
_NONE_OF_KIND = {"light": "no_lights", "climate": "no_thermostat", "cover": "no_covers", "lock": "no_locks",
                 "fan": "no_fans"}


def _none_here(reason: str, tool: str = "", kind: str = "") -> Decision:
    """What a home without such a device says ("There are no lights set up for me to control here."): by the tool
    read (_NONE_HERE), else by the kind of device (_NONE_OF_KIND), else any device."""
    none = _NONE_HERE.get(tool) or _NONE_OF_KIND.get(kind, "no_devices")
    return Decision("abstain", reason=reason, source="fastpath", say=f"home.{none}_here")


def _not_then(call: ToolCall) -> Decision | None:
    """What being told not to do `call` asks for when it is not leaving things be: "don't wake me up tomorrow", "не
    буди меня в семь", "कल मुझे मत उठाना" say there should be no alarm then, so that day's or that time's alarm is
    cancelled (a repeating one skips the day: `cancel_alarm`'s own rule; none then: it says so). Told not to wake
    them with no day or time said, or on a repeat ("don't wake me on weekdays"), nothing is done."""
    if call.name != "set_alarm" or "repeat" in call.arguments:
        return None
    when = {k: v for k, v in call.arguments.items() if k in ("day", "time")}
    if not when:
        return None
    return Decision("call", calls=[ToolCall("cancel_alarm", when)], source="fastpath",
                    reason="told not to set an alarm: that one cancelled", told_not=True)


class Router:
    """The fast path first, then the model (loaded only when a turn needs it); keeps the one open question.

    When a required argument is missing, hearthd asks for it and holds the call for `clarify_timeout`
    seconds; the next utterance is read together with the first ("set an alarm" + "for seven"), the tool
    fixed. After `clarify_turns` questions without an answer, or on "cancel"/"never mind", it gives up.
    """

    def __init__(self, fast_path: FastPath | None, agent: Callable[[], Agent], clarify_timeout: float = 30.0,
                 clarify_turns: int = 2, clock: Callable[[], float] = time.monotonic,
                 wall: Callable[[], datetime] = lambda: datetime.now().astimezone(),
                 tolerant: TolerantMatcher | None = None, domain_hint: bool = True) -> None:
        self.fast_path = fast_path
        self.tolerant = tolerant  # between the templates and the model (hearthd.agent.tolerant)
        self.domain_hint = domain_hint  # the model chooses among the tools of the domain the tiers point at
        self._agent = agent
        self.clarify_timeout = clarify_timeout
        self.clarify_turns = clarify_turns
        self.clock = clock
        self.wall = wall
        self.pending: Pending | None = None

    def reset(self) -> None:
        """Forget an open question (a new conversation)."""
        self.pending = None

    def decide(self, text: str, lang: str, conversation: OpenQuestion | None = None) -> Decision:
        """The decision for one utterance; an open question is read from and kept in `conversation` (by default the
        Router's own slot), so one conversation's answer never meets another's question."""
        state: OpenQuestion = self if conversation is None else conversation
        pending, state.pending = state.pending, None
        if pending is not None and self.clock() < pending.deadline:
            answered = self._follow_up(pending, text, state) if pending.missing != ROOM \
                else self._room_answer(pending, text, state)
            if answered is not None:
                return self._with_held(pending, answered, state)
        done = getattr(state, "done", None)
        if isinstance(done, Done) and self.clock() < done.deadline \
                and (fixed := self._correction(done, text, lang)) is not None:
            return fixed
        decision = self._fresh(text, lang)
        if decision.kind == "clarify":
            state.pending = Pending(decision.calls[0], decision.missing, decision.part or text, lang,
                                    self.clock() + self.clarify_timeout, held=tuple(decision.held))
        return decision

    @staticmethod
    def _with_held(pending: Pending, answered: Decision, state: OpenQuestion) -> Decision:
        """The answer's decision with the request's other parts, held while the question was open: done together
        when the answer completes the call, kept while it is asked again, dropped with it (a cancel, no answer)."""
        if not pending.held:
            return answered
        if answered.kind == "call" and answered.calls:
            answered.calls = [*pending.held, *(c for c in answered.calls
                                               if all(_call_key(c) != _call_key(h) for h in pending.held))]
        elif answered.kind == "clarify" and state.pending is not None:
            state.pending = replace(state.pending, held=pending.held)
        return answered

    def _correction(self, done: Done, text: str, lang: str) -> Decision | None:
        """"Actually, make it 8 instead", "нет, давай на восемь", "नहीं, आठ बजे का कर दो", said after a request was
        done in this conversation: that request with the new value (an alarm moved, the thermostat or a level set
        again). Before, the model was left with "make it 8" and refused it as a time with no alarm said."""
        from hassil import recognize_all

        intents = _correction_intents().get(lang)
        registry = self._registry()
        if intents is None or registry is None:
            return None
        for result in recognize_all(text.strip(" .!?…"), intents):
            value = result.entities.get("value")
            call = corrected(done.call, str(value.text), lang, done.data) if value is not None else None
            if call is None or call.name not in registry:
                continue
            try:
                call = ToolCall(call.name, registry.validate(call.name, call.arguments))
            except (UnknownTool, SchemaError):
                continue
            return Decision("call", calls=[call], source="fastpath", reason=f"a correction of {done.call.name}",
                            name_probs={call.name: 1.0})
        return None

    def candidates(self, text: str, lang: str, foreign: bool = False) -> list[str]:
        """The template sentences speech to text may have heard as `text`, nearest first (the tolerant tier's), for
        weighing against the audio (hearthd.audio.rescoring). None when the templates read `text` as it is, when it
        asks for what hearthd cannot do (the weather), or without the tolerant tier. `foreign`: `text` was heard as
        another language ("Bus Ruk Chao" for "बस, रुक जाओ"): sentences that sound like it are offered however well its
        words read."""
        if self.fast_path is None or self.tolerant is None:
            return []
        text = without_tag(without_courtesy(text, lang), lang)
        if decline_kind(text, lang) or len(split_requests(text, lang)) != 1:
            return []
        if self.fast_path.match(text, lang) is not None or self._with_reason(text, lang) is not None:
            return []
        if sounds_left_out(text, lang):  # "… को जोकर सारी …": no sentence of the rest, which would do the one left out
            return []
        offered = self.tolerant.sentences(text, lang, alike=foreign)
        if asks(text, lang):  # a question stays one: "Is the front door lock?" is never "the front door lock"
            offered = [s for s in offered if asks(s, lang)]
        return offered

    def rivals(self, one: str, other: str, lang: str) -> bool:
        """Whether two sentences offered for one utterance do different things to the same thing (on or off, the
        next song or the previous one, heat or cool on the thermostat), one of them more than reading: speech to text
        that fits both about as well did not hear which (hearthd.audio.rescoring)."""
        if self.fast_path is None:
            return False
        a, b = self.fast_path.match(one, lang), self.fast_path.match(other, lang)
        if a is None or b is None or not a.calls or not b.calls or _does(a) == _does(b):
            return False
        registry = self._registry()
        if registry is not None and all(registry.reads_only(c.name) for c in (*a.calls, *b.calls)):
            return False  # two questions: a wrong one is answered, nothing is done
        return _targets(a) == _targets(b)

    def complete(self, text: str, lang: str, decision: Decision) -> bool:
        """Whether `text` is a whole command already, so that the utterance may end on a short silence
        (vad.complete_silence_ms): the templates or the tolerant tier read it as calls with every argument filled, and
        what the speaker could add after a pause would change them in no way this reading can see — it does not stop
        on a number the call holds ("set an alarm for seven" may go on "… thirty"), nor on a word that leads into more
        ("… in the", "… and"), nor is it a device command that names no room ("turn on the light" may go on "… in the
        kitchen"). Anything else waits the whole vad.end_silence_ms."""
        if decision.kind != "call" or decision.source not in ("fastpath", "tolerant") or not decision.calls:
            return False
        words = words_of(text.rstrip(".!?…"))
        if not words or goes_on(text, lang) or len(split_requests(text, lang)) != 1:
            return False
        last = words[-1]
        if _BARE_NUMBER.fullmatch(last):
            return False
        said = parse_number(last, lang)
        if said is not None and any(str(said) in str(value) for c in decision.calls for value in c.arguments.values()):
            return False  # a number word the call reads ("… for seven": 07:00); not Hindi's "लगा दो", "give" as "two"
        if any(isinstance(label := c.arguments.get("label"), str) and words_of(label.lower())[-1:] == [last.lower()]
               for c in decision.calls):
            return False  # free words said last, a reminder's "call mum" or a timer's name: "… and dad" may follow
        registry = self._registry()
        library = self.fast_path.library if self.fast_path is not None else None
        for call in decision.calls:
            if registry is None or call.name not in registry:
                return False
            props = registry.get(call.name).model_parameters.get("properties", {})
            if "area" in props and not (library is not None and library.room_said(text)[1]):
                return False
        return True

    def _registry(self) -> ToolRegistry | None:
        if self.fast_path is not None:
            return self.fast_path.registry
        return getattr(self._agent(), "registry", None)

    def _fresh(self, text: str, lang: str) -> Decision:
        # "could you be a dear and …": the request is what follows; "जला दो ना": a plea, not a "no"
        text = without_tag(without_courtesy(text, lang), lang)
        meant, heard = as_meant(text, lang), text
        if meant != text and (self.fast_path is None or self.fast_path._match(text, lang) is None):
            # a slip speech to text makes ("turn of the kitchen lite"): what the templates do not read as heard, every
            # tier and every check reads as meant — the model, given the slip, switched the light on
            text = meant
        # Every decision, the fast path's and the model's, passes the same checks on the user's own words.
        decision = review(self._match(text, lang), text, lang, self._registry(), said=heard)
        if decision.kind == "abstain" and not decision.say and not decision.calls and self.tolerant is not None \
                and not decline_phrase(text, lang):
            # understood in part: what it seems to be about, asked, rather than "Sorry, I can't help with that"
            topic = self.tolerant.topic(text, lang)
            if topic and f"unclear.{topic}" in locale.phrases(lang):  # (a language added without these: the refusal)
                decision.say = f"unclear.{topic}"
        if len(split_requests(text, lang)) == 1:  # (several requests: each part keeps its own room, in _several)
            _keep_rooms(decision, text)
        return decision

    def _match(self, text: str, lang: str) -> Decision:
        if about_alarm(text, lang):  # "wake me in twenty minutes" → "at 14:25"; "in 5 minutes open…" stays
            text = absolute_times(text, lang, self.wall())
        among: list[str] = []
        guess: Decision | None = None
        if self.fast_path is not None:
            decision = self._leaving_out(text, lang) or self.fast_path.match(text, lang) or self._several(text, lang) \
                or self._with_reason(text, lang) or self._told_not(text, lang)
            if decision is not None:
                return decision
            if self.tolerant is not None and len(split_requests(text, lang)) == 1 and not decline_kind(text, lang):
                guess = self.tolerant.match(text, lang)
                if guess is not None and guess.kind != "abstain":
                    return guess
                if (beside := self._loosely_beside_remarks(text, lang)) is not None:
                    return beside
                among = guess.among if guess is not None and self.domain_hint else []
            if (none := self._none_of_it(text)) is not None:
                return none
            if (later := self._later(text, lang)) is not None:
                return later
        whole = self._agent().decide(text, lang, among=among) if among else self._agent().decide(text, lang)
        if guess is not None and guess.fallback is not None and (whole.kind == "abstain" and not whole.say
                                                                 and not whole.calls or whole.kind == "clarify"
                                                                 and whole.missing in NAMES):
            # the tier's reading, as a question ("Did you mean …?"), not a refusal, nor "which device?" when the
            # model's name was one the user did not say: the tier read one in the words
            return guess.fallback
        parts = split_requests(text, lang)
        if len(parts) >= 2 and whole.kind == "call" and len(whole.calls) < len(parts):
            # Fewer calls than requests said: the model may have done one and dropped the rest ("turn off the light
            # and also unlock the door" → the light only). Each part is decided on its own words.
            return self._each_part(text, parts, [None] * len(parts), lang, whole)
        return whole

    def _later(self, text: str, lang: str) -> Decision | None:
        """A request for later the templates read without its time ("turn on the heater at 6 am": "turn on the
        heater"): hearthd does things only now, and says so (`check.later`, the checks' own rule), where the model,
        given the whole, guessed a brightness or a blind's position from the time's number, or nothing at all."""
        assert self.fast_path is not None
        rest = later_removed(text, lang)
        if not rest or rest == text:
            return None
        meant = self.fast_path.match(rest, lang)
        if (meant is None or not meant.calls) and self.tolerant is not None:
            meant = self.tolerant.match(rest, lang)
        if meant is None or not meant.calls:
            return None
        later = review(meant, text, lang, self._registry())
        return later if later.say == "check.later" else None

    def _several(self, text: str, lang: str) -> Decision | None:
        """"turn off the light and set an alarm for seven": each part decided on its own words, done as a whole.
        A part the templates do not know is asked of the model alone (asked the whole, a small model often makes one
        call and drops the rest). A part that still cannot be done is said, and none is done: never half a request
        done and the other half dropped in silence. No part known to the templates: the model reads the whole."""
        assert self.fast_path is not None
        parts = split_requests(text, lang)
        if len(parts) < 2:
            return None
        decisions = self._sharing(parts, [self.fast_path.match(part, lang) for part in parts], lang)
        listed = [p for chunk in re.split(r"\s*[,;]\s*", without_courtesy(text, lang))
                  for p in split_requests(chunk, lang)]
        if not all(_acts(d) for d in decisions) and len(listed) > len(parts):
            # a list said with commas ("turn off the kitchen, hallway and bathroom lights"): its items share words too
            shared = self._sharing(listed, [self.fast_path.match(part, lang) for part in listed], lang)
            if all(_acts(d) for d in shared):
                parts, decisions = listed, shared
        if not any(d is not None and d.kind == "call" for d in decisions):
            return None
        return self._each_part(text, parts, decisions, lang, None)

    def _sharing(self, parts: list[str], decisions: list[Decision | None], lang: str) -> list[Decision | None]:
        """Parts that share a word said once: the action ("turn off the tv and the floor lamp", "выключи свет в
        спальне и в кабинете"), the kind of device ("turn on the kitchen and hallway lights"), or in Hindi the verb at
        the end ("टीवी और फ़्लोर लैंप बंद कर दो"). A part the templates do not read, or that is only a name (read alone
        as switching it on: "turn off the tv and the floor lamp" turned the lamp on), is read again with its
        neighbour's words: the start of the part before it ("turn off" + "the floor lamp"), or the end of the part
        after it ("turn on the kitchen" + "lights"; "टीवी" + "बंद कर दो"), the fewest words that the templates read
        as the same action as that neighbour's. What is found stands only when every part is then done."""
        assert self.fast_path is not None
        if len(parts) > SHARED_MAX_PARTS or any(len(p.split()) > SHARED_MAX_WORDS for p in parts):
            return decisions  # (what people say in one breath; a run-on of many parts is not searched)
        shared = list(decisions)
        alone = [_acts(d) and self._says_more_than_a_name(p, lang) for p, d in zip(parts, decisions, strict=True)]
        if all(alone):
            return decisions
        texts = list(parts)
        for _ in range(len(parts)):
            changed = False
            for i in range(len(texts)):
                if alone[i]:
                    continue
                found_as = self._shared_part(texts, shared, alone, i, lang)
                if found_as is not None:
                    texts[i], shared[i] = found_as
                    alone[i] = changed = True
            if not changed:
                break
        return shared if all(alone) else decisions

    def _shared_part(self, texts: list[str], shared: list[Decision | None], alone: list[bool], i: int,
                     lang: str) -> tuple[str, Decision] | None:
        """Part `i` read with its neighbours' words (see _sharing): the start or the end of the part before it when that
        part is done, the end of a part after it ("turn off the kitchen, hallway and bathroom lights": "lights" is the
        last part's), or both. The fewest words borrowed first; the reading must do something, say more than a name,
        and be the same action as the part it borrowed from when that part is done."""
        assert self.fast_path is not None
        words = texts[i].split()
        starts: list[tuple[list[str], list[str], Decision | None]] = [([], [], None)]
        if i and alone[i - 1]:
            before = texts[i - 1].split()
            starts += [(before[:n], [], shared[i - 1]) for n in range(1, len(before))]
            starts += [([], before[n:], shared[i - 1]) for n in range(len(before) - 1, 0, -1)]
        ends: list[tuple[list[str], Decision | None]] = [([], None)]
        for j in range(i + 1, len(texts)):
            after = texts[j].split()
            ends += [(after[n:], shared[j] if alone[j] else None) for n in range(len(after) - 1, 0, -1)]
        tries = sorted(((len(head) + len(tail) + len(end), head, tail, end, like, later)
                        for head, tail, like in starts for end, later in ends if head or tail or end),
                       key=lambda t: t[0])[:SHARED_MAX_TRIES]
        registry = self._registry()
        readings: list[tuple[int, str, Decision]] = []
        for _, head, tail, end, like, later in tries:
            said = " ".join(head + words + tail + end)
            found = self.fast_path.match(said, lang)
            if not _acts(found) or not self._says_more_than_a_name(said, lang):
                continue
            assert found is not None
            if not _on_devices(found, registry):
                continue  # only what is done to the home's devices is shared ("… and the kitchen light" is no timer)
            names = {c.name for c in found.calls}
            others = [{c.name for c in other.calls} for other in (like, later) if other is not None]
            if all(names == other for other in others):
                return said, found
            if all(len(names) == 1 and any(names | other <= way for way in _SAME_WAY) for other in others):
                # "закрой входную дверь и гараж": the same verb, a door locked and a garage door closed
                readings.append((len(readings), said, found))
        return (readings[0][1], readings[0][2]) if readings else self._it(texts, shared, alone, i, lang)

    def _it(self, texts: list[str], shared: list[Decision | None], alone: list[bool], i: int,
            lang: str) -> tuple[str, Decision] | None:
        """"Turn on the kitchen light and make it blue", "включи свет на кухне и сделай его ярче": the device the part
        before named, for the word that stands for it (split.toml `it`)."""
        assert self.fast_path is not None
        before = shared[i - 1] if i and alone[i - 1] else None
        if before is None or len(before.calls) != 1:
            return None
        target = next((str(before.calls[0].arguments[k]) for k in ("device", "door")
                       if before.calls[0].arguments.get(k)), "")
        pronouns = _pronouns(lang)
        words = texts[i].split()
        if not target or not any(w.lower().strip(",.!?") in pronouns for w in words):
            return None
        said = " ".join(target if w.lower().strip(",.!?") in pronouns else w for w in words)
        found = self.fast_path.match(said, lang)
        registry = self._registry()
        if _acts(found) and _on_devices(found, registry):  # type: ignore[arg-type]
            return said, found  # type: ignore[return-value]
        return None

    def _none_of_it(self, text: str) -> Decision | None:
        """"Turn off the lights", "включи свет" in a home whose smart-home link knows no device at all (the shipped
        default: MQTT on, nothing discovered): "There are no lights set up for me to control here.", as with no
        smart-home tools. The templates read these words only with the home's rooms and names; the model, left with
        them, reached for the volume or power off."""
        from ..tools.catalogue import home_words

        registry = self._registry()
        home = [t for t in registry if t.family == "home"] if registry is not None else []
        if not home or any(t.offered is None or t.offered() for t in home):
            return None
        said = set(words_of(fold(text)))
        for kind in _NONE_OF_KIND:
            if said & {fold(w) for w in home_words().kinds.get(kind, ()) if " " not in w}:
                return _none_here(f"no {kind} in this home", kind=kind)
        return None

    def _leaving_out(self, text: str, lang: str) -> Decision | None:
        """"Turn off all the lights except the bedroom", "выключи свет везде кроме спальни", "बेडरूम को छोड़कर सारी
        लाइटें बंद कर दो": the request for many, with the room, floor or device left out (a code argument, `except`).
        Before, the tolerant tier read the one room said, and turned off the bedroom's light alone. A left-out this
        home has nothing called, after a word that only means this, is asked about rather than guessed."""
        from ..tools.smarthome import KINDS

        assert self.fast_path is not None
        ways = left_out(text, lang)
        many = False
        for main, out, sure in ways:
            read = self.fast_path.match(main, lang)
            if read is None and self.tolerant is not None:
                read = self.tolerant.match(main, lang)
            if read is None or read.kind != "call" or len(read.calls) != 1:
                continue
            call = read.calls[0]
            registry = self._registry()
            tool = registry.get(call.name) if registry is not None and call.name in registry else None
            named = call.arguments.get("device") or call.arguments.get("door")
            if named and sure and tool is not None and "except" in tool.parameters.get("properties", {}) \
                    and self.fast_path.only_what_is_left_out(str(named), out, lang, KINDS.get(call.name, ())):
                # "закрой все шторы кроме спальни" where the only curtains are the bedroom's: nothing else to do (the
                # whole, read by the tolerant tier, had closed the bedroom's)
                return Decision("abstain", reason=f"{call.name}: {named} is what was left out", source="fastpath",
                                say="home.left_out_only")
            if tool is None or "except" not in tool.parameters.get("properties", {}) or named \
                    or not any(call.arguments.get(k) for k in ("area", "domain", "device_class")):
                continue
            many = True
            name = self.fast_path.home_thing(out, lang, KINDS.get(call.name, ()))
            if name is None:
                continue
            call.arguments = {**call.arguments, "except": name}
            return Decision("call", calls=[call], source=read.source, reason=f"{call.name}, all but {name}",
                            name_probs=read.name_probs)
        if many and any(sure for _, _, sure in ways):
            return Decision("abstain", reason="what to leave out names nothing in this home", source="fastpath",
                            say="home.left_out_unknown")
        return None

    def _told_not(self, text: str, lang: str) -> Decision | None:
        """"Don't turn off the light", "не выключай свет", "लाइट बंद मत करो": a request the templates (or the tolerant
        tier) read, told not to be done. Nothing is done and hearthd says it leaves things as they are; the model,
        given these, did the request or refused as if it had not understood."""
        assert self.fast_path is not None
        said = [told_not_to(text, lang)]
        # with its reason beside it ("I'm leaving, don't lock the front door", "дети спят, не выключай свет")
        parts = [p for p in clauses(text) if p.lower() not in _no_names(lang)]
        told = [p for p in parts if told_not_to(p, lang) is not None]
        if len(parts) >= 2 and len(told) == 1 and all(statement(p, lang) for p in parts if p is not told[0]):
            said.append(told_not_to(told[0], lang))
        for positive in dict.fromkeys(p for p in said if p is not None):
            if len(split_requests(positive, lang)) != 1:
                continue
            read = self.fast_path.match(positive, lang)
            if read is None and self.tolerant is not None:
                read = self.tolerant.match(positive, lang)
            if read is not None and read.kind in ("call", "clarify") and read.calls:
                return _not_then(read.calls[0]) or Decision("abstain", reason=f"told not to: {read.calls[0].name}",
                                                             source="fastpath", say="agent.leave_it")
        return None

    def _with_reason(self, text: str, lang: str) -> Decision | None:
        """"I'm heading out, lock the back door", "shut off the heater, it's getting too warm": one clause the
        templates read, the others remarks (the reason), none saying what not to do: the request is that clause."""
        assert self.fast_path is not None
        skip = _no_names(lang)
        parts = [p for p in clauses(text) if p.lower() not in skip]  # "…, пожалуйста": a clause of a skip word
        if len(parts) == 1:
            parts = self._run_on(parts[0], lang) or parts
        if len(parts) < 2:
            return None if len(parts) < 1 or parts == [text] else self.fast_path.match(parts[0], lang)
        read = [(p, self._read_there(p, parts, lang)) for p in parts]
        requests = [(p, d) for p, d in read if d is not None and d.kind in ("call", "clarify") and d.calls]
        if len(requests) >= 2 and all(d.kind == "call" and [(c.name, c.arguments) for c in d.calls] ==
                                      [(c.name, c.arguments) for c in requests[0][1].calls] for _, d in requests):
            requests = requests[:1]  # "it's way too loud, turn it down": the remark asks for the same
        if len(requests) >= 2 and any(d.kind == "call" for _, d in requests):
            # "it's freezing in here, turn the heater on": a remark that alone would be asked about ("To what
            # temperature?") is the reason beside a request that says what to do
            requests = [(p, d) for p, d in requests if d.kind == "call" or not statement(p, lang)]
        if len(requests) == 2 and [d.kind for _, d in requests].count("call") == 1 \
                and len({c.name for _, d in requests for c in d.calls}) == 1:
            # "I've got to be up at 4 tomorrow, put an alarm on": the plan says the time, the request asks for it
            requests = [r for r in requests if r[1].kind == "call"]
        if len(requests) != 1:
            return None
        others = [p for p, d in read if d is None or not d.calls]
        if not all(statement(p, lang) and not _remark_tells_not_to(p, lang) for p in others):
            return None
        if requests[0][1].kind == "clarify" and any(time_said(p, lang) or any(ch.isdigit() for ch in p)
                                                    for p in others):
            return None  # "I have to be up by six thirty, set an alarm": what is asked for is in the remark
        return requests[0][1]

    def _loosely_beside_remarks(self, text: str, lang: str) -> Decision | None:
        """"I'm off to work, lock everything": the one clause that is no remark, read by the tolerant tier when the
        templates read no clause (the remark's words, read with it, left it below the tier's bar); a remark that says
        what not to do leaves it to the later tiers."""
        assert self.tolerant is not None
        skip = _no_names(lang)
        parts = [p for p in clauses(text) if p.lower() not in skip]
        asking = [p for p in parts if not statement(p, lang)]
        if len(parts) < 2 or len(asking) != 1:
            return None
        if any(_remark_tells_not_to(p, lang) for p in parts):
            return None
        read = self.tolerant.match(asking[0], lang)
        return read if read is not None and read.kind == "call" and read.calls else None

    def _read_there(self, clause: str, parts: list[str], lang: str) -> Decision | None:
        """The templates' reading of `clause`; when it says "there" ("там", "वहाँ") and names no room, while another
        part names one ("nobody's in the garage, kill the light there"), read without the "there" as said in that
        room."""
        assert self.fast_path is not None
        library = self.fast_path.library
        bare = without_there(clause, lang)
        if bare is None or library is None or library.room_in(clause):
            return self.fast_path.match(clause, lang)
        rooms = {library.room_in(p) for p in parts if p != clause} - {""}
        if len(rooms) != 1:
            return self.fast_path.match(clause, lang)
        token = turn_area.set(rooms.pop())
        try:
            return self.fast_path.match(bare, lang)
        finally:
            turn_area.reset(token)

    def _run_on(self, clause: str, lang: str) -> list[str]:
        """"turn off the heater its too hot", "it's freezing turn the heater on": a request and a remark with no pause
        written between them (typed so, or a transcript without its comma), cut where the remark begins or ends when
        the other side is a request the templates read; [] when no such cut is found."""
        assert self.fast_path is not None
        if asks(clause, lang):  # "कितने बजे के अलार्म लगे हैं": a question's words are no request and remark
            return []
        words = clause.split()
        for i in range(2, len(words) - 1):
            head, tail = " ".join(words[:i]), " ".join(words[i:])
            for request, remark in ((head, tail), (tail, head)):
                if statement(remark, lang) and not goes_on(head, lang):
                    found = self.fast_path.match(request, lang)
                    if found is not None and found.kind == "call" and self._says_more_than_a_name(request, lang):
                        return [head, tail]
        return []

    def _says_more_than_a_name(self, request: str, lang: str) -> bool:
        """Whether `request` has a word besides a device's or a room's name and fillers: "the coffee machine" alone,
        which the library reads as turning it on, is no request when cut from "I'm done with the coffee machine"."""
        assert self.fast_path is not None
        names, fillers = self.fast_path.name_words(lang), _no_names(lang)
        return any(w not in names and w not in fillers for w in words_of(request.lower()))

    def _each_part(self, text: str, parts: list[str], decisions: list[Decision | None], lang: str,
                   whole: Decision | None) -> Decision:
        """Every part decided (the model for those the templates did not read) and done together, or none done and
        the part that cannot be done said. `whole` is the model's decision on the whole utterance, if it was asked."""
        registry = self._registry()
        for i, part in enumerate(parts):
            if decisions[i] is None:
                decisions[i] = review(self._agent().decide(part, lang), part, lang, registry)
            before = decisions[i - 1] if i else None
            if not _acts(decisions[i]) and not _asks_for_another(decisions[i], before) and before is not None \
                    and _acts(before) and registry is not None \
                    and len({c.name for c in before.calls}) == 1 and before.calls[0].name in registry \
                    and registry.get(before.calls[0].name).family == "home":
                # "turn on the garage light and the bedroom lamp": a part with only a device takes the action before it
                again = review(self._agent().decide(part, lang, only=before.calls[0].name), part, lang, registry)
                if _acts(again) and self._names_a_device(again):  # "all alarms" is no device: not this
                    decisions[i] = again
        done = [d for d in decisions if d is not None and d.kind == "call" and d.calls]
        # "turn the light on and don't turn it off": a part that says what not to do asks for nothing
        asked = [(p, d) for p, d in zip(parts, decisions, strict=True) if _acts(d) or not negated(p, lang)]
        if len(asked) < len(parts) and done and len(done) == len(asked):
            parts, decisions = [p for p, _ in asked], [d for _, d in asked]
        if len(done) == len(parts):
            for part, d in zip(parts, done, strict=True):
                _keep_rooms(d, part)
            calls = [c for d in done for c in d.calls]
            # "close the blinds and the curtains" where the room's one cover answers to both: done once, said once
            calls = [c for i, c in enumerate(calls) if all(_call_key(c) != _call_key(o) for o in calls[:i])]
            source = "fastpath" if all(d.source == "fastpath" for d in done) else "model"
            return Decision("call", calls=calls, source=source,
                            name_probs={k: v for d in done for k, v in d.name_probs.items()})
        left = next(p for p, d in zip(parts, decisions, strict=True) if d is None or d.kind != "call" or not d.calls)
        asking = [d for d in decisions if not _acts(d)]
        if whole is None and len(asking) == 1 and asking[0] is not None and asking[0].kind == "clarify" \
                and asking[0].calls and asking[0].source == "fastpath" and len(done) == len(parts) - 1 \
                and _acts(review(Decision("call", calls=[c for d in done for c in d.calls], source="fastpath"), text,
                                 lang, registry)):
            # "turn off the lights and lock the door": the one part the templates read without a detail ("which
            # door?") is asked, and the others wait for the answer, done with it; the model, given the whole, did one
            # part and dropped the other
            for part, one in zip(parts, decisions, strict=True):
                if one is not None and _acts(one):
                    _keep_rooms(one, part)
            asking[0].held = [c for d in done for c in d.calls]
            asking[0].part = next(p for p, one in zip(parts, decisions, strict=True) if one is asking[0])
            return asking[0]
        # The cut may have been wrong ("the light and the fan"): the model reads the whole, and its decision stands when
        # it does every part or chooses another action — not when it is one part's action with the rest dropped —
        # or when the part left over is inside its arguments ("play rock and roll": "roll" is in the query).
        if whole is None:
            whole = self._agent().decide(text, lang)
            known = {c.name for d in done for c in d.calls}
            if whole.kind == "call" and (len(whole.calls) >= len(parts) or any(c.name not in known for c in
                                                                                 whole.calls)):
                return whole
        if whole.kind == "call" and _inside_arguments(left, whole):
            return whole
        return Decision("abstain", reason=f"part of the request cannot be done: {left!r}", source="fastpath",
                        say="agent.left_out", say_values={"part": left})

    def _names_a_device(self, decision: Decision) -> bool:
        """Whether each call names a device of this home (when the home is known to the fast path)."""
        library = self.fast_path.library if self.fast_path is not None else None
        catalogue = library.catalogue() if library is not None else None
        if catalogue is None:
            return True
        for call in decision.calls:
            said = str(call.arguments.get("device") or call.arguments.get("door") or "")
            if not said or not catalogue.resolve(said, KINDS.get(call.name, ())).entities:
                return False
        return True

    def _room_answer(self, pending: Pending, answer: str, state: OpenQuestion) -> Decision | None:
        """The answer to "Which room — or all of them?": the held call in the room named ("the kitchen", "на кухне",
        "रसोई में") or in every room ("all of them", "везде", "सब"). A room this home does not have is said and asked
        again, as is an answer that names none, up to `clarify_turns` questions; "cancel" withdraws the request. None:
        the answer is a request of its own (the question is dropped)."""
        lang = pending.lang
        if is_cancel(answer, lang):
            return Decision("abstain", reason="clarification cancelled", source="clarify", say="agent.cancelled")
        library = self.fast_path.library if self.fast_path is not None else None
        registry = self._registry()
        if library is None or registry is None:
            return None
        said = f"{pending.text} {answer}"
        fresh = self.fast_path.match(answer, lang)  # type: ignore[union-attr]
        named, room = library.room_said(answer)
        everywhere = says_everywhere(answer)
        if fresh is not None and fresh.kind in ("call", "clarify") or (room or everywhere) and len(
                _beyond_room(answer, named, lang)) > 1:
            return None  # "what time is it", "включи лампу в спальне": a request of its own, not the room
        if room or everywhere:
            call = pending.call
            if room:
                calls = [ToolCall(call.name, {**call.arguments, "area": room})]
            elif any(call.arguments.get(k) for k in ("domain", "device_class")):
                calls = [ToolCall(call.name, dict(call.arguments))]  # every room: the kind, the home over
            else:  # a tool that groups by room only: each room that has such devices
                calls = [ToolCall(call.name, {**call.arguments, "area": r}) for r in library.rooms_of(call)]
            decision: Decision | None = Decision("call", calls=calls, source="clarify",
                                                 name_probs={call.name: 1.0}, every=not room)
            if room and decision is not None and not decision.every:
                decision = library.settle(decision, pending.text, lang)  # "the light" in a room of two: which one
            try:
                for c in decision.calls if decision is not None else []:
                    c.arguments = registry.validate(c.name, c.arguments)
            except (UnknownTool, SchemaError):
                decision = None
            if decision is None:
                return Decision("abstain", reason=f"{call.name} in {room or 'every room'} does not validate",
                                source="clarify", say="agent.invalid_call")
            return review(decision, said, lang, registry, question=False)
        if pending.asked >= self.clarify_turns:
            return Decision("abstain", reason="no room given", source="clarify", say="agent.gave_up")
        state.pending = Pending(pending.call, ROOM, pending.text, lang, self.clock() + self.clarify_timeout,
                                pending.asked + 1)
        unknown = unknown_room(answer, lang)
        return Decision("clarify", calls=[pending.call], missing=ROOM, source="clarify",
                        reason=f"no room of this home in {answer!r}", say="ask.area_unknown" if unknown else "",
                        say_values={"area": unknown} if unknown else {})

    def _answer_alone(self, pending: Pending, answer: str) -> Decision | None:
        """The answer is just the value asked for, said the way people answer ("half five", "five thirty", "7 baje",
        "в пять", "десять минут"): the question's slot reader reads it, and the held call is completed with what the
        first request said. The request and the answer read together often fit no template ("could you set me an
        alarm half five"), and the model is not needed for a value the code reads exactly. None when the answer is
        more than the value (then the templates or the model read both together)."""
        reader = SLOT_READERS.get(pending.missing)
        if reader is None or self.fast_path is None or not _plausible_slot(answer, pending.lang):
            return None
        bare = _bare(answer, pending.lang)
        value = reader(bare, pending.lang) if bare else None
        if value is None:
            return None
        return self.fast_path._decision(pending.call.name, {**pending.call.arguments, pending.missing: value})

    def _named(self, pending: Pending, answer: str) -> Decision | None:
        """The answer to "Which device?" ("the kitchen light", "किचन की लाइट"): the request read with the name where
        the language puts it (after the verb, "turn on the kitchen light"; before it, "किचन की लाइट बंद कर दो"), the
        word said twice at the seam once ("turn on the" + "the kitchen light"); else the answer as one of this
        home's names. None: neither reads as the call asked about."""
        lang, name = pending.lang, pending.call.name
        if self.fast_path is None:  # the model's own question, with no templates (`hearthd eval --no-fast-path`)
            return None
        for text in (_joined(pending.text, answer), _joined(answer, pending.text)):
            found = self.fast_path.match(text, lang)
            if found is not None and found.kind == "call" and [c.name for c in found.calls] == [name]:
                return found
        library = self.fast_path.library
        catalogue = library.catalogue() if library is not None else None
        bare = _bare(answer, lang)
        if catalogue is None or not bare:
            return None
        found_names = catalogue.resolve(bare, KINDS.get(name, ())).entities
        if len(found_names) != 1:
            return None  # none, or several (the fast path's reading of the whole asks which of them)
        return self.fast_path._decision(name, {**pending.call.arguments, pending.missing: found_names[0].name})

    def _follow_up(self, pending: Pending, answer: str, state: OpenQuestion) -> Decision:
        lang = pending.lang
        if is_cancel(answer, lang):
            return Decision("abstain", reason="clarification cancelled", source="clarify", say="agent.cancelled")
        said = f"{pending.text} {answer}"
        combined = absolute_times(said, lang, self.wall()) if about_alarm(said, lang) else said
        decision = self.fast_path.match(combined, lang) if self.fast_path is not None else None
        same = decision is not None and [c.name for c in decision.calls] == [pending.call.name]
        if pending.missing in NAMES and not (same and decision is not None and decision.kind == "call"):
            named = self._named(pending, answer)
            if named is not None:
                decision, same = named, True
        if not same or (decision is not None and decision.kind == "clarify" and decision.missing == pending.missing):
            # read together, the answer may not give the value asked for ("set a timer called laundry" + "an hour": the
            # name's wildcard takes "laundry an hour" and the duration is still missing): the answer alone may
            alone = self._answer_alone(pending, answer)
            decision = alone if alone is not None or not same else decision
        if decision is None or [c.name for c in decision.calls] != [pending.call.name]:
            decision = self._agent().decide(combined, lang, only=pending.call.name)
        decision.source = "clarify" if decision.source != "fastpath" else "fastpath"
        # the answer to "For what time?" may sound like a question ("7:30?"): the other checks still apply
        decision = review(decision, said, lang, self._registry(), question=False)
        if decision.kind == "clarify":
            if pending.asked >= self.clarify_turns:
                return Decision("abstain", reason=f"{pending.missing} still not given", source="clarify",
                                say="agent.gave_up")
            state.pending = Pending(pending.call, decision.missing, combined, lang,
                                    self.clock() + self.clarify_timeout, pending.asked + 1)
        return decision


def _bare(answer: str, lang: str) -> str:
    """An answer without the words around a value that are none ("um", "please"), and its punctuation."""
    return " ".join(w for w in answer.split() if w.lower().strip(".,!?") not in skip_words(lang)).strip(" .,!?")


def _joined(first: str, second: str) -> str:
    """Two utterances read as one, a word said at the end of one and the start of the other once ("the")."""
    a, b = first.split(), second.split()
    if a and b and a[-1].lower().strip(".,!?") == b[0].lower().strip(".,!?"):
        b = b[1:]
    return " ".join(a + b)


# Actions said with one verb on devices of different kinds: "close" locks a door and closes a garage door.
_SAME_WAY = (frozenset({"turn_off", "close_cover", "lock_door"}), frozenset({"turn_on", "open_cover", "unlock_door"}))


@functools.cache
def _pronouns(lang: str) -> frozenset[str]:
    """The words that stand for the device just named (split.toml `it`)."""
    from .split import _table

    return frozenset(w.lower() for w in _table(lang).get("it", []))


def _on_devices(decision: Decision, registry: ToolRegistry | None) -> bool:
    """Whether every call of `decision` is done to the home's devices (a tool of the "home" family)."""
    return registry is not None and all(c.name in registry and registry.get(c.name).family == "home"
                                        for c in decision.calls)


def _call_key(call: ToolCall) -> tuple[str, tuple[tuple[str, str], ...]]:
    """A call as said, whatever the case of its names ("tv" and "TV" are one device)."""
    return call.name, tuple(sorted((k, fold(str(v))) for k, v in call.arguments.items()))


def _remark_tells_not_to(clause: str, lang: str) -> bool:
    """A remark beside a request that says what not to do ("I don't want the light, …"): the request is not read
    alone then."""
    kind = statement(clause, lang)
    return bool(kind) and (negated(clause, lang) if kind == "start" else tells_not_to(clause, lang))


def _asks_for_another(decision: Decision | None, before: Decision | None) -> bool:
    """Whether a part is a request of its own the templates read with a detail to ask ("… and set a timer": how
    long?), not a device that takes the action before it."""
    return decision is not None and decision.kind == "clarify" and bool(decision.calls) and before is not None \
        and all(c.name != decision.calls[0].name for c in before.calls)


def _acts(decision: Decision | None) -> bool:
    return decision is not None and decision.kind == "call" and bool(decision.calls)


def _inside_arguments(part: str, decision: Decision) -> bool:
    """Whether every word of `part` is in one of the decision's text arguments (a cut inside a name or a query)."""
    words = set(words_of(part.lower()))
    for call in decision.calls:
        for value in call.arguments.values():
            if isinstance(value, str) and words and words <= set(words_of(value.lower())):
                return True
    return False


def _keep_rooms(decision: Decision, text: str) -> None:
    """The one room `text` names kept in each device call (tools.smarthome.keep_area): never a device elsewhere."""
    for call in decision.calls:
        call.arguments = keep_area(call.name, call.arguments, text)


@cache
def _everywhere_words() -> tuple[tuple[str, ...], ...]:
    """"all of them", "везде", "सब जगह": every language's (answers.toml `everywhere`), as word sequences."""
    return tuple(tuple(words_of(fold(w))) for lang in locale.languages()
                 for w in locale.table(lang, "answers.toml").get("everywhere", []))


def says_everywhere(text: str) -> bool:
    """Whether the answer to "Which room — or all of them?" means every room."""
    words = words_of(fold(text))
    return any(words[i:i + len(seq)] == list(seq) for seq in _everywhere_words() for i in range(len(words)))


def _beyond_room(answer: str, named: str, lang: str) -> list[str]:
    """The words of an answer to "Which room?" besides the room (`named`), "all" and the words around them ("the
    kitchen lights please" → ["lights"]; "включи лампу в спальне" → ["включи", "лампу"]: more than an answer)."""
    from ..tools.catalogue import home_words

    ignored = {fold(w) for w in (*home_words().fillers, *_no_names(lang), *skip_words(lang))} | {
        w for seq in _everywhere_words() for w in seq} | set(named.split())
    return [w for w in words_of(fold(answer)) if w not in ignored]


def unknown_room(answer: str, lang: str) -> str:
    """The name an answer to "Which room?" gives when it is short and names no room of this home ("the sauna" →
    "sauna"); "" when the answer is not a name (nothing left, or a sentence)."""
    from ..tools.catalogue import home_words

    ignored = {w.lower() for w in (*home_words().fillers, *_no_names(lang))} | {
        w.lower() for phrase in skip_words(lang) for w in phrase.split() if " " not in phrase}
    left = [w for w in words_of(answer) if w.lower() not in ignored]
    return " ".join(left) if 0 < len(left) <= 2 and not any(ch.isdigit() for ch in "".join(left)) else ""


@cache
def _cancel_words(lang: str) -> tuple[str, ...]:
    return tuple(w.lower() for w in locale.toml(lang, "answers.toml")["cancel"])


def is_cancel(text: str, lang: str) -> bool:
    """"cancel", "never mind", "отмена", "रहने दो": the user withdraws the request."""
    words = " ".join(w.strip(".,!?;:।") for w in words_of(text.lower())).strip()
    return any(words == w or words.startswith(w + " ") or words.endswith(" " + w) for w in _cancel_words(lang))
