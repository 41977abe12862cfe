"""Grounding checks: an argument value the user never said (e.g. a time in "what is the capital of France")
is the model guessing, and a guess is never acted on."""

from __future__ import annotations

import re
from functools import cache
from typing import Any

from ..locale import languages, read_with, sentence_files, table, toml, yaml
from ..numbers import words_of
from ..tools.registry import Tool

GROUND_KEY = "x-ground"  # schema annotation: how a value must show up in the utterance


@cache
def _hour_words(lang: str) -> dict[str, int]:
    return {k.lower(): int(v) for k, v in toml(lang, "grounding.toml")["hour_words"].items()}


@cache
def _ambiguous(lang: str) -> tuple[frozenset[str], frozenset[str]]:
    found = table(lang, "numbers.toml").get("ambiguous", {})
    return frozenset(w.lower() for w in found.get("words", [])), frozenset(w.lower() for w in found.get("units", []))


def hours_said(utterance: str, lang: str) -> set[int]:
    """Hours (1-12) the utterance names: digits ("7", "7:30", "730", "19.30") or hour words of its language."""
    low = utterance.lower()
    hours = set()
    for match in re.findall(r"\d+", low):
        n = int(match)
        n = n // 100 if n >= 100 else n  # "730" as Whisper writes seven thirty
        if n <= 24:
            hours.add(n % 12 or 12)
    words: dict[str, int] = {}
    for source in reversed(read_with(lang)):  # English numbers turn up in Hindi and Russian speech
        words.update(_hour_words(source))
    ambiguous, units = _ambiguous(lang)
    said = [w.rstrip(".") for w in words_of(low)]
    for i, word in enumerate(said):
        if word in ambiguous and (i + 1 >= len(said) or said[i + 1] not in units):
            continue  # Hindi "एक" is also "a", "दो" also "give": an hour only before बजे, मिनट…
        if word in words:
            hours.add(words[word] % 12 or 12)
    return hours


def time_is_grounded(utterance: str, lang: str, value: str | None = None) -> bool:
    """True when the utterance names the hour of `value` (HH:MM), or the hour after it ("quarter to eight",
    "पौने आठ"); without a value, when it names any hour at all."""
    said = hours_said(utterance, lang)
    if value is None:
        return bool(said)
    hour = int(value.split(":")[0]) % 12 or 12
    return hour in said or (hour % 12) + 1 in said


def durations_said(utterance: str, lang: str) -> set[int]:
    """The durations (seconds) the utterance says: the longest runs of its words that read as one ("an hour
    and a half" is 5400, not also 3600 for its "an hour"), e.g. "ten minutes", "полчаса", "दस मिनट"."""
    from ..numbers import parse_duration

    words = words_of(utterance.lower())
    spans: list[tuple[int, int, int]] = []
    for i in range(len(words)):
        for j in range(i + 1, min(len(words), i + 7) + 1):
            seconds = parse_duration(" ".join(words[i:j]), lang)
            if seconds:
                spans.append((i, j, seconds))
    return {s for i, j, s in spans
            if not any(a <= i and j <= b and (a, b) != (i, j) for a, b, _ in spans)}


def missing_arguments(tool: Tool, utterance: str, lang: str) -> list[str]:
    """Required arguments of `tool` that the utterance cannot supply at all (no hour said for a time, no
    duration for a timer): asked for, instead of letting the model invent them."""
    props: dict[str, Any] = tool.model_parameters.get("properties", {})
    missing = []
    for key in tool.model_parameters.get("required", []):
        kind = props.get(key, {}).get(GROUND_KEY)
        said = hours_said(utterance, lang) if kind == "time" else \
            durations_said(utterance, lang) if kind == "duration" else {True}
        if not said:
            missing.append(key)
    return missing


def read_arguments(tool: Tool, utterance: str, lang: str) -> dict[str, Any]:
    """Arguments read by code rather than decoded: a time or duration argument whose value the utterance
    says exactly once ("ten minute timer please" → seconds=600). A small model decoding "600" from "ten
    minutes" gets it wrong often enough (60, 10, 6000000…); the parsers do not."""
    from ..numbers import parse_clock

    props: dict[str, Any] = tool.model_parameters.get("properties", {})
    out: dict[str, Any] = {}
    for key, schema in props.items():
        kind = schema.get(GROUND_KEY) if isinstance(schema, dict) else None
        if kind == "duration":
            said = durations_said(utterance, lang)
            if len(said) == 1:
                out[key] = next(iter(said))
        elif kind == "time":
            clock = parse_clock(utterance, lang)
            if clock is not None:
                out[key] = clock
        elif kind == "name" and isinstance(schema.get("enum"), list):
            named = [v for v in schema["enum"] if name_is_grounded(str(v), utterance, lang)]
            if len(named) == 1:  # "tomorrow", "every day", "the kitchen light": named once, unambiguously
                out[key] = named[0]
    return out


@cache
def _alias_words(lang: str) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """Per canonical value of a sentence-template list (device, door…), every word its spoken names use in
    `lang` (templates' alternatives flattened), plus the words of the value itself; and the lists' value sets."""
    words: dict[str, set[str]] = {}
    lists: dict[str, frozenset[str]] = {}
    for name in sentence_files(lang):
        for list_name, spec in (yaml(lang, name) or {}).get("lists", {}).items():
            values = set()
            for item in spec.get("values", []) if isinstance(spec, dict) else []:
                if isinstance(item, dict) and "in" in item and isinstance(item.get("out"), str):
                    said = re.sub(r"[()\[\]|]", " ", str(item["in"])).lower()
                    words.setdefault(item["out"], set()).update(words_of(said) + words_of(item["out"].lower()))
                    values.add(item["out"])
            if values:
                lists[list_name] = lists.get(list_name, frozenset()) | values
    return {k: frozenset(v) for k, v in words.items()}, lists


def _same_word(a: str, b: str) -> bool:
    """Equal, or the same stem with another ending (Russian and Hindi inflect: кухне / кухня, входную /
    входная): a shared prefix of at least 4 letters and all but the last two of the shorter word, so "weekday"
    and "weekends" stay apart."""
    if a == b:
        return True
    stem = max(4, min(len(a), len(b)) - 2)
    return len(a) >= stem and len(b) >= stem and a[:stem] == b[:stem]


def name_is_grounded(value: str, utterance: str, lang: str) -> bool:
    """A named thing (a device, a door) counts as said when the utterance has a word that few things' names use:
    "kitchen" for the kitchen light, not "light"; "входную" for the front door, not "дверь". Words most names
    share are not evidence; a value with no names known needs its own words."""
    said = [w.strip(".,!?;:") for w in words_of(utterance.lower())]
    return any(_same_word(d, w) for d in _distinctive_words(value, lang) for w in said)


@cache
def _merged_names(lang: str) -> tuple[dict[str, frozenset[str]], dict[str, frozenset[str]]]:
    """The names of `lang` and English together (English device names turn up in Hindi and Russian speech)."""
    table: dict[str, set[str]] = {}
    lists: dict[str, frozenset[str]] = {}
    for source in read_with(lang):
        names, groups = _alias_words(source)
        for k, v in names.items():
            table.setdefault(k, set()).update(v)
        for k, g in groups.items():
            lists[k] = lists.get(k, frozenset()) | g
    return {k: frozenset(v) for k, v in table.items()}, lists


def qualifier_lists() -> frozenset[str]:
    """The template lists (of any language) marked `qualifier: true`: their values place or describe a thing rather
    than name one ("kitchen", "blue"), or name smart-home things by room and kind ("kitchen blinds", "bedroom fan"):
    they share words with the fixed device names without making "kitchen" a word every name uses. Their own values
    are still grounded by their own words."""
    return _qualifier_lists(languages())


@cache
def _qualifier_lists(langs: tuple[str, ...]) -> frozenset[str]:
    return frozenset(list_name for lang in langs for name in sentence_files(lang)
                     for list_name, spec in ((yaml(lang, name) or {}).get("lists") or {}).items()
                     if isinstance(spec, dict) and spec.get("qualifier"))


@cache
def _distinctive_words(value: str, lang: str) -> frozenset[str]:
    """The words that count as naming `value` (computed once per value and language, not per utterance)."""
    qualifying = qualifier_lists()
    table, lists = _merged_names(lang)
    own = table.get(value, frozenset(words_of(value.lower())))
    qualifiers = frozenset().union(*(g for k, g in lists.items() if k in qualifying)) - \
        frozenset().union(*(g for k, g in lists.items() if k not in qualifying))
    names = {v: words for v, words in table.items() if v not in qualifiers or v == value}
    lists = {k: g for k, g in lists.items() if k not in qualifying or value in g}

    def generic(word: str) -> bool:
        # "light", "свет", "в" name most things, "door" names every door, "सुबह"/"morning" turn up in days and
        # in repeats alike; "спальне" names two devices (the bedroom light, the bedroom heater) and is evidence
        holders = {v for v, words in names.items() if word in words}
        scattered = len(holders) >= 2 and not any(holders <= g for g in lists.values())
        return (len(holders) >= 3 or scattered
                or any(value in g and len(g) > 1 and all(word in names.get(v, ()) for v in g) for g in lists.values()))

    # short words ("at", "on", "в", "на") are grammar, not names, unless the name itself is that short ("tv");
    # Devanagari words are short in code points ("कल") and are kept
    return frozenset(w for w in own if not generic(w)
                     and (len(w) >= 3 or w in words_of(value.lower()) or any("\u0900" <= ch <= "\u097f" for ch in w)))


def _level_said(value: Any, utterance: str, lang: str) -> bool:
    """Whether a run of one to three words of `utterance` is the level `value` on its own ("full", "max", "पूरा")."""
    from ..numbers import parse_percent

    words = words_of(utterance.lower())
    return any(parse_percent(" ".join(words[i:i + n]), lang) == value
               for n in (1, 2, 3) for i in range(len(words) - n + 1))


_CLOCK = re.compile(r"(?<![\d.,])\d{1,2}:\d{2}(?![\d])")


def _number_said(value: Any, utterance: str, lang: str, halves: bool = True) -> bool:
    """Whether `value` is a number said in `utterance` (in digits or words), or one said and a half ("nineteen and a
    half", "девятнадцать с половиной", "साढ़े उन्नीस")."""
    from ..numbers import numbers_said

    try:
        number = float(value)
    except (TypeError, ValueError):
        return False
    # a time of day on the clock is no amount: "change it to 7:30" never grounds a temperature of 7 (the model's
    # set_temperature(7) would have set the heating to 7 °C)
    utterance = _CLOCK.sub(" ", utterance)
    said = {float(n) for n in numbers_said(utterance, lang)}
    said |= {float(n.replace(",", ".")) for n in re.findall(r"\d+(?:[.,]\d+)?", utterance)}
    return any(abs(number - n) < 1e-6 or (halves and abs(number - n - 0.5) < 1e-6) for n in said)


def ungrounded_arguments(tool: Tool, arguments: dict[str, Any], utterance: str, lang: str) -> list[str]:
    """Names of the arguments whose values the utterance does not support."""
    props: dict[str, Any] = tool.model_parameters.get("properties", {})
    bad = []
    for key in arguments:
        kind = props.get(key, {}).get(GROUND_KEY)
        if kind == "time":
            grounded = time_is_grounded(utterance, lang, str(arguments[key]))
        elif kind == "duration":
            grounded = arguments[key] in durations_said(utterance, lang)
        elif kind == "name":
            grounded = name_is_grounded(str(arguments[key]), utterance, lang)
        elif kind == "number":  # a temperature: a number the user said (or it and a half), never one made up
            grounded = _number_said(arguments[key], utterance, lang)
        elif kind == "percent":  # a level: a number said, or a word that is a level ("full", "половина", "पूरा")
            grounded = _number_said(arguments[key], utterance, lang, halves=False) \
                or _level_said(arguments[key], utterance, lang)
        elif kind == "words":  # free text such as a label: every word of it was said
            said = {w.strip(".,!?;:'\"") for w in words_of(utterance.lower())}
            grounded = all(w.strip(".,!?;:'\"") in said for w in words_of(str(arguments[key]).lower()))
        else:
            grounded = True
        if not grounded:
            bad.append(key)
    return bad
