"""Checks by code on every decision, from the fast path and the model alike, before anything is done.

A small model (and a template) can pick the opposite of what was said, act on a question, or set an alarm from a
number that was about something else. These checks read the user's words, never the model's, and turn such a
decision into an abstention with a phrase that says why; they never choose another action themselves.

- Polarity: for paired actions (on/off, open/close, lock/unlock, arm/disarm, mute/unmute) and paired argument
  values (louder/quieter, play/pause) a verb of the opposite side, with none of the chosen side, blocks the
  call. No verb at all ("the front door, please") is no disagreement.
- Questions: a sentence that asks for information ("what is the thermostat set to?", "какая температура…",
  "क्या लाइट जली है?") may only lead to read-only tools; "can you turn on the light?" is a request.
- Topics: a tool that declares one (`Tool.topic`: an alarm's) takes a time of day, and is removed at the model's
  word, only from a sentence about it (checks.toml [topics]); a date that does not exist is declined; words with
  no letters ("7:30", "#@! 7") never act.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..dates import impossible_date
from ..locale import phrases, read_with, table
from ..numbers import parse_number, words_of
from ..text import fold
from ..tools.registry import Tool, ToolRegistry
from .agent import Decision
from .grounding import GROUND_KEY
from .split import unglued
from .when import relative_duration, relative_span

Pattern = tuple[str, ...]


@dataclass(frozen=True)
class _Words:
    polarity: dict[str, tuple[Pattern, ...]]
    fillers: tuple[Pattern, ...]
    polite: tuple[Pattern, ...]
    polite_anywhere: tuple[Pattern, ...]
    info: tuple[Pattern, ...]
    starts: tuple[Pattern, ...]
    anywhere: tuple[Pattern, ...]
    topics: dict[str, tuple[Pattern, ...]]  # [topics]: the words that say what a sentence is about
    notify: tuple[Pattern, ...] = ()  # "let me know when …": told later, a request when a time or length follows


def _patterns(items: list[str]) -> tuple[Pattern, ...]:
    return tuple(tuple(fold(item).split()) for item in items if item.strip())


@cache
def _own(lang: str) -> dict[str, Any]:
    return table(lang, "checks.toml")


@cache
def _words(lang: str) -> _Words:
    """`lang`'s words with English's (English verbs turn up in Hindi and Russian speech: "front door खोलो")."""
    tables = [_own(source) for source in read_with(lang)]

    def merged(section: str, key: str) -> tuple[Pattern, ...]:
        return tuple(p for t in tables for p in _patterns(t.get(section, {}).get(key, [])))

    sides = {side for t in tables for side in t.get("polarity", {})}
    topics = {topic for t in tables for topic in t.get("topics", {})}
    return _Words({side: merged("polarity", side) for side in sides}, merged("question", "fillers"),
                  merged("question", "polite"), merged("question", "polite_anywhere"), merged("question", "info"),
                  tuple(p for p in merged("question", "starts") if p not in _patterns(
                      _own(lang).get("question", {}).get("not_starts", []))),
                  merged("question", "anywhere"), {topic: merged("topics", topic) for topic in topics},
                  merged("question", "notify"))


_STRIP = "\"'“”«»,;:!?()[]।॥.…¿¡"


def _tokens(text: str) -> list[str]:
    return [w.strip(_STRIP) for w in words_of(fold(text)) if w.strip(_STRIP)]


def _word_matches(pattern: str, word: str) -> bool:
    if pattern.startswith("*") and pattern.endswith("*") and len(pattern) > 2:
        return pattern[1:-1] in word
    if pattern.endswith("*") and len(pattern) > 1:
        return word.startswith(pattern[:-1])
    if pattern.startswith("*") and len(pattern) > 1:
        return word.endswith(pattern[1:]) and len(word) >= len(pattern)
    return word == pattern


def _at(tokens: list[str], i: int, pattern: Pattern) -> bool:
    return i + len(pattern) <= len(tokens) and all(_word_matches(p, tokens[i + k]) for k, p in enumerate(pattern))


def _anywhere(tokens: list[str], patterns: tuple[Pattern, ...]) -> bool:
    return any(_at(tokens, i, p) for p in patterns for i in range(len(tokens)))


def _start(tokens: list[str], words: _Words) -> int:
    """Where the sentence proper starts: after "hey", "um", "а", "अरे"…"""
    i = 0
    while i < len(tokens):
        skip = max((len(p) for p in words.fillers if _at(tokens, i, p)), default=0)
        if not skip:
            break
        i += skip
    return i


def says_many(text: str, lang: str) -> bool:
    """Whether a request names many things: "all", "every", a plural ("the lights"), a mass noun ("весь свет")."""
    return _anywhere(_tokens(text), tuple(p for t in (_own(source) for source in read_with(lang))
                                          for p in _patterns(t.get("group", {}).get("many", []))))


def without_fillers(text: str, lang: str) -> str:
    """The sentence after its leading fillers ("hey", "um", "ну", "अरे"): what a template should read."""
    raw = text.split()
    tokens = _tokens(text)
    skip = _start(tokens, _words(lang))
    if not skip or len(tokens) != len(raw):  # words the tokens cannot be mapped back to: left as said
        return text
    return " ".join(raw[skip:]) or text


def asks(text: str, lang: str) -> bool:
    """True when the sentence asks for information rather than for something to be done: a question word at its
    start (or, in Russian and Hindi, anywhere), a question mark, or "tell me…/скажи…/बताओ…". A request put as a
    question ("can you…", "можешь…", "…सकते हैं?") is not one, unless it asks to be told something."""
    words = _words(lang)
    tokens = _tokens(text)
    if not tokens:
        return False
    start = _start(tokens, words)
    polite = any(_at(tokens, start, p) for p in words.polite)
    after = start + max((len(p) for p in words.polite if _at(tokens, start, p)), default=0)
    told = max((len(p) for p in words.notify if _at(tokens, after, p)), default=0)
    if told and _numbers_said(" ".join(tokens[after + told:after + told + 1]), lang):
        return False  # "let me know when ten minutes have passed": to be told then, a request ("tell me when the 7
        #               am alarm is" asks: the number must come first)
    if _anywhere(tokens, words.info) and (polite or _info_anywhere(lang) or _anywhere(tokens[start:start + 3],
                                                                                     words.info)):
        return True  # "can you tell me whether…", "скажи, свет включён", not "set an alarm to check the news"
    if polite:
        return False
    if any(_at(tokens, start, p) for p in words.starts):
        return True
    if _anywhere(tokens, words.polite_anywhere):
        return False
    return _anywhere(tokens, words.anywhere) or text.rstrip().rstrip("\"'»”)").endswith(("?", "？"))


def opens_a_question(text: str, lang: str) -> bool:
    """Whether `text` begins as a question does ("what day it is", "который час", "сколько стоит молоко"): a reminder
    "of" that is a fact asked for, not something to be reminded of."""
    words = _words(lang)
    tokens = _tokens(text)
    return bool(tokens) and any(_at(tokens, _start(tokens, words), p) for p in words.starts)


@cache
def _info_anywhere(lang: str) -> bool:
    """Whether "tell me/check…" makes a question wherever it stands in `lang` (Hindi and Russian put it last:
    "दरवाज़ा बंद है या नहीं बताओ"); in English only at the start or after "can you…"."""
    return bool(_own(lang).get("question", {}).get("info_anywhere", True))


def said_side(text: str, lang: str, side: str) -> bool:
    """Whether the utterance says a verb of one side of a paired action ("खोलो" for unlock, "закрой" for lock)."""
    return _anywhere(_tokens(text), _words(lang).polarity.get(side, ()))


def opposite_said(tool: Tool | None, text: str, lang: str, arguments: dict[str, Any] | None = None) -> str:
    """For a paired action (or a paired argument value), as the tool declares it (`Tool.sides`,
    `Tool.argument_sides`): the opposite side, when it was said and the chosen side was not; else ""."""
    for chosen, other in tool.sides_of(arguments or {}) if tool is not None else ():
        if said_side(text, lang, other) and not said_side(text, lang, chosen):
            return other
    return ""


def about(topic: str, text: str, lang: str) -> bool:
    """Whether the sentence is about `topic` (a list of locales/<lang>/checks.toml [topics], read with English's):
    "alarm" — an alarm, a reminder or waking up ("wake me", "будильник", "जगा देना")."""
    return _anywhere(_tokens(text), _words(lang).topics.get(topic, ()))


def about_alarm(text: str, lang: str) -> bool:
    """Whether the sentence is about an alarm, a reminder or waking up (the fast path's own alarm templates)."""
    return about("alarm", text, lang)


def _tags(lang: str) -> set[str]:
    """Negation words that, said last after a request, plead instead (checks.toml [negation] tags)."""
    return {fold(w) for w in _own(lang).get("negation", {}).get("tags", [])}


def without_tag(text: str, lang: str) -> str:
    """The utterance without a pleading tag said last ("बत्ती जला दो ना" → "बत्ती जला दो"): a word that is a
    negation elsewhere, kept where it denies."""
    tags = _tags(lang)
    words = text.rstrip().split()
    if len(words) > 1 and fold(words[-1]).strip(_STRIP) in tags:
        return " ".join(words[:-1]) + words[-1][len(words[-1].rstrip(_STRIP)):]  # keep a final "?" or "!"
    return text


def negation_words(lang: str) -> frozenset[str]:
    """The words that say what not to do, in `lang` and in English (said inside it)."""
    return frozenset(fold(w) for source in read_with(lang) for w in _own(source).get("negation", {}).get("words", []))


@cache
def _not_negation(lang: str) -> tuple[str, ...]:
    """Phrases a negation word is part of without saying what not to do (checks.toml [negation] not_in), longest
    first."""
    phrases = {" ".join(fold(p).split()) for source in read_with(lang)
               for p in _own(source).get("negation", {}).get("not_in", [])}
    return tuple(sorted(phrases, key=len, reverse=True))


def negated(text: str, lang: str) -> bool:
    """Whether a part says what not to do ("and don't turn it off", "band mat karna", "и не выключай")."""
    words = negation_words(lang)
    # a tag said last, after the request, pleads rather than denies ("बत्ती जला दो ना": do turn it on)
    tags = _tags(lang)
    said = f" {' '.join(w for w in (w.strip(_STRIP) for w in fold(unglued(text, lang)).split()) if w)} "
    for phrase in _not_negation(lang):  # "no one's in the garage": who is there, not what not to do
        said = said.replace(f" {phrase} ", " ")
    kept = said.split()
    return any(w in words and not (w in tags and i == len(kept) - 1 and i > 0) for i, w in enumerate(kept))


CLOCK = re.compile(r"^\d{1,2}([:.\-]\d{2})?(am|pm|a\.m\.|p\.m\.)?$")  # "7-30": as whisper writes it


def time_said(text: str, lang: str) -> bool:
    """Whether the words hold a time of day as people say one: "7:30", "7am", a number with a word that makes it a
    time ("at 7", "на семь", "7 baje", "seven o'clock", "6 утра"), or an hour and its minutes ("seven thirty").
    A number alone beside an alarm word ("будильник 3 %", "alarm uh seven") is not a time."""
    from ..numbers import digits_for_times

    table = [_own(source).get("time", {}) for source in read_with(lang)]
    before = {fold(w) for t in table for w in t.get("before", [])}
    after = {fold(w) for t in table for w in t.get("after", [])}
    tokens = [w.strip(_STRIP) for w in fold(digits_for_times(text, lang)).split()]
    tokens = [w for w in tokens if w]
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        if following.startswith("%") or token.endswith("%"):
            continue
        clock = CLOCK.match(token)
        if clock and (clock.group(1) or clock.group(2)):
            return True
        if not (clock or parse_number(token, lang) is not None):
            continue
        if (i and tokens[i - 1] in before) or following in after:
            return True
        if following and (following.isdigit() or parse_number(following, lang) is not None):
            return True  # "seven thirty", "семь тридцать"
    return False


def clock_time_said(text: str, lang: str, levels: bool = False) -> bool:
    """Whether the words ask for something at a time of day: a clock ("6:30", "7pm"), a number with a word after it that
    makes it one ("6 am", "семь утра", "6 बजे"), or one before it ("at 6", "в семь", "सुबह छह") with no unit of a value
    after ("at 80 percent", "в 2 раза" are no times). Stricter than `time_said`, which an alarm's time is read with:
    "set the light to 50" is no time to act at. `levels`: the request sets a number of its own ("set the fan at 3"),
    so a number is a time only with a word after it or as a clock."""
    return _clock_time(text, lang, levels) is not None


def _clock_time(text: str, lang: str, levels: bool = False) -> tuple[list[str], int, int] | None:
    """The time of day `clock_time_said` finds: the words (numbers as digits), and where the time is in them."""
    from ..numbers import digits_for_times

    table = [_own(source).get("time", {}) for source in read_with(lang)]
    before = {fold(w) for t in table for w in t.get("at_before", [])}
    after = {fold(w) for t in table for w in t.get("at_after", [])}
    values = {fold(w) for t in table for w in t.get("values", [])}
    hours = {fold(w) for t in table for w in t.get("at_hours", [])}
    named = {fold(w) for t in table for w in t.get("at_named", [])}
    joins = {fold(w) for t in table for w in t.get("at_joins", [])}
    amount = {fold(w) for t in table for w in t.get("at_amount", [])}
    tokens = [w for w in (w.strip(_STRIP) for w in fold(digits_for_times(text, lang)).split()) if w]
    for i, token in enumerate(tokens):
        following = tokens[i + 1] if i + 1 < len(tokens) else ""
        clock = CLOCK.match(token)
        if token.endswith("%") or following.startswith("%"):
            continue
        start = i
        while start and (tokens[start - 1] in before or tokens[start - 1] in joins and start > 1
                         and tokens[start - 2] in before):  # "at 7", "शाम को 7 बजे"
            start -= 1
        if token in named and start < i:  # "at midnight", "в полдень"
            return tokens, start, i + 1
        if clock and (clock.group(1) or clock.group(2)):
            return tokens, start, i + 1 + (following in after)
        if not (clock or parse_number(token, lang) is not None):
            continue
        if following in after:
            return tokens, start, i + 2
        if start == i - 1 and start > 0 and tokens[start - 1] in amount:
            continue  # "volume up by 10": how much, not when
        if not levels and start < i and following not in values:
            return tokens, start, i + 1 + (following in hours)
    return None


def later_removed(text: str, lang: str) -> str | None:
    """`text` without the time it asks for something to be done at or in ("turn on the heater at 6 am" → "turn on
    the heater", "через полчаса выключи свет" → "выключи свет"), when it says one; else None. What is left is read
    by the templates to know what was asked for later."""
    for source in read_with(lang):
        span = relative_span(text, source)
        if span is not None:
            words = words_of(text)
            return " ".join(words[:span[0]] + words[span[1]:])
    found = _clock_time(text, lang)
    if found is None:
        return None
    tokens, start, end = found
    return " ".join(tokens[:start] + tokens[end:])


def _duration_as_value(decision: Decision, text: str, lang: str, registry: ToolRegistry | None) -> str:
    """The call (if any) that takes a length of time said as a number of its own (a temperature, a percent), when
    the tool takes no duration at all."""
    from .grounding import GROUND_KEY, durations_said

    said = durations_said(text, lang)
    if not said:
        return ""
    counts = {n for s in said for unit in (1, 60, 3600) if s % unit == 0 and (n := s // unit)}
    for call in decision.calls:
        tool = registry.get(call.name) if registry is not None and call.name in registry else None
        props = tool.model_parameters.get("properties", {}) if tool is not None else {}
        if any(isinstance(p, dict) and p.get(GROUND_KEY) in ("duration", "time") or k in ("minutes", "seconds")
               for k, p in props.items()):
            continue  # a timer, an alarm, a snooze's minutes: a length of time is what it takes
        numbers = [v for v in call.arguments.values() if isinstance(v, (int, float)) and not isinstance(v, bool)]
        if any(v in counts for v in numbers):
            return call.name
    return ""


def _grounded(tool: Tool | None, *kinds: str, required: bool = False) -> set[str]:
    """The arguments of `tool` whose schema grounds them as one of `kinds` (time, date, duration), the required ones
    only with `required`."""
    props = tool.parameters.get("properties", {}) if tool is not None else {}
    names = set(tool.parameters.get("required", [])) if tool is not None and required else set(props)
    return {k for k in names if isinstance(props.get(k), dict) and props[k].get(GROUND_KEY) in kinds}


def _takes_a_duration(tool: Tool | None) -> bool:
    """Whether a length of time from now is what `tool` requires ("in 5 minutes" is a timer's own duration)."""
    return bool(_grounded(tool, "duration", required=True))


def _numbers_said(text: str, lang: str) -> bool:
    """Whether any number is said, in digits or words ("7", "seven", "साढ़े सात", "полвосьмого" as a word of a time)."""
    return any(ch.isdigit() for ch in text) or time_said(text, lang) or any(
        parse_number(token, source) is not None for token in _tokens(text) for source in read_with(lang))


def _letters(text: str) -> int:
    return sum(ch.isalpha() for ch in text)


def _time_keys(tool: Tool | None) -> set[str]:
    """The arguments of `tool` that take a time of day or a date (its schema's grounding says so)."""
    return _grounded(tool, "time", "date")


def _said_key(kind: str, topic: str, lang: str) -> str:
    """The phrase for a refusal about a topic: its own ("check.time_without_alarm") when the language has one, else
    the general one ("check.time_without_topic")."""
    key = f"check.{kind}_{topic}"
    return key if key in phrases(lang) else f"check.{kind}_topic"


def _without_names(text: str, decision: Decision) -> str:
    """`text` without the names its calls give in the user's own words: what a reminder is for is no question,
    whatever it says ("напомни через полчаса проверить духовку", "remind me to ask Tom")."""
    for call in decision.calls:
        label = call.arguments.get("label")
        if isinstance(label, str) and label.strip() and (at := text.lower().find(label.lower())) >= 0:
            text = text[:at] + text[at + len(label):]
    return text


def review(decision: Decision, text: str, lang: str, registry: ToolRegistry | None,
           question: bool = True, said: str = "") -> Decision:
    """`decision`, or an abstention saying why it must not be acted on. `question`: whether the question check
    applies (not to the answer of a question hearthd asked: "7:30?" answers "For what time?"). `said`: the words as
    heard, when `text` is them as meant (heard.toml): a question only when both ask ("जला दोगे?" is a polite request
    as said, "जला दो?" as meant would ask; "can the music beat a bit quieter?" is polite only as meant)."""
    if decision.kind not in ("call", "clarify") or not decision.calls:
        return decision
    names = [c.name for c in decision.calls]
    def reads_only(name: str) -> bool:
        return registry is not None and registry.reads_only(name)

    acting = [n for n in names if not reads_only(n)]

    def declared(name: str) -> Tool | None:
        return registry.get(name) if registry is not None and name in registry else None

    def refuse(why: str, say: str) -> Decision:
        return Decision("abstain", reason=why, source=decision.source, say=say, name_probs=decision.name_probs,
                        relevance=decision.relevance, seconds=decision.seconds, evaluated=decision.evaluated,
                        prefix=decision.prefix, raw=decision.raw)

    if acting and _letters(text) < 2:
        return refuse(f"{acting[0]}: no words in {text[:40]!r}", "check.no_request")
    if question and acting and all(asks(_without_names(words, decision), lang) for words in {text, said or text}):
        return refuse(f"{acting[0]}: the sentence asks, it does not request", "check.question")
    for call in decision.calls if decision.kind == "call" and not decision.told_not else []:
        tool = registry.get(call.name) if registry is not None and call.name in registry else None
        if other := opposite_said(tool, _without_names(text, decision), lang, call.arguments):  # the name's words
            # are what it is for, not what is done ("remind me at 8 that the gas must be turned off")
            return refuse(f"{call.name}: the user said {other}", "check.opposite")
    for call in decision.calls:
        tool = declared(call.name)
        keys = _time_keys(tool) & set(call.arguments)
        if not keys and not (decision.kind == "clarify" and decision.missing in _time_keys(tool)):
            continue
        if impossible_date(text, lang):
            return refuse(f"{call.name}: the date said does not exist", "check.no_such_date")
        if tool is None or tool.read_only:  # "what day is the 22nd" only reads
            continue
        if tool.topic and not about(tool.topic, text, lang):
            if not _numbers_said(text, lang):  # the model's time: no number, nothing of the topic was said
                return refuse(f"{call.name}: no time and nothing about {tool.topic} said", "check.not_about_topic")
            return refuse(f"{call.name}: a time said, but nothing about {tool.topic}",
                          _said_key("time_without", tool.topic, lang))
        if decision.source == "model" and "time" in call.arguments and not time_said(text, lang):
            # the templates read only time expressions; the model may take any number beside the topic's word. The
            # tool was asked for all the same: when the time is what it needs, hearthd asks for it ("будильник 3 %" →
            # "For what time?")
            if "time" in tool.parameters.get("required", []) and len(decision.calls) == 1:
                rest = {k: v for k, v in call.arguments.items() if k != "time"}
                return Decision("clarify", calls=[type(call)(call.name, rest)], missing="time", source=decision.source,
                                reason=f"{call.name}: no time of day said", name_probs=decision.name_probs,
                                relevance=decision.relevance, seconds=decision.seconds, evaluated=decision.evaluated,
                                prefix=decision.prefix, raw=decision.raw)
            return refuse(f"{call.name}: no time of day said", _said_key("time_without", tool.topic, lang))
    if decision.kind == "clarify" and decision.source == "model" and len(decision.calls) == 1 \
            and decision.missing in _grounded(declared(decision.calls[0].name), "duration") \
            and not about("timer", text, lang) and not _numbers_said(text, lang):
        # "movie time", "bed time": the model's timer asking "for how long?" when nothing of a countdown was said
        return refuse(f"{decision.calls[0].name}: nothing about a timer said", "check.not_about_topic")
    if decision.source == "model" and (spent := _duration_as_value(decision, text, lang, registry)):
        # "поставь таймер на 5 минут" heard "поставьте мир на 5 минут" → set_temperature 5: a length of time said
        # is no temperature, level or volume
        return refuse(f"{spent}: the number said is a length of time", "check.duration_as_value")
    for call in decision.calls:
        tool = declared(call.name)
        if decision.source == "model" and tool is not None and tool.topic and tool.sides and tool.sides[0] == "unset" \
                and not about(tool.topic, text, lang):
            # removing things from a sentence that never speaks of them ("закрой все жалюзи" → cancel_all_alarms)
            return refuse(f"{call.name}: nothing about {tool.topic} was said", _said_key("not_about", tool.topic, lang))
    topics_said = any(t.topic and about(t.topic, text, lang) for n in acting if (t := declared(n)) is not None)
    levels = any(isinstance(v, int | float) and not isinstance(v, bool) for c in decision.calls
                 for v in c.arguments.values())
    later = relative_duration(text, lang) and not all(_takes_a_duration(declared(n)) for n in acting) \
        or clock_time_said(text, lang, levels) and not all(_grounded(declared(n), "time", "duration") for n in acting)
    if acting and later and not topics_said:
        # "in 5 minutes open the door", "turn on the heater at 6 am": done now it is not what was asked, and later is
        # not something hearthd does
        return refuse(f"{acting[0]}: asked for later", "check.later")
    return decision
