"""Spoken numbers, clock times, durations and percentages, from locale data (locales/<lang>/numbers.toml).

Slot values arrive as words ("twenty five minutes", "полтора часа", "ढाई घंटे"); a small model copies words far more
reliably than it does arithmetic, so the conversion to digits and seconds happens here, in code that can be tested,
with every language-specific word kept in the locale tables rather than in this file.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from fractions import Fraction
from functools import cache
from typing import Any

from .locale import table as locale_table
from .text import fold

_PUNCT = "\"'“”«»,;:!?()[]।॥"


def words_of(text: str) -> list[str]:
    """Words split on whitespace with punctuation stripped. Not `\\w+`: Devanagari vowel signs are combining
    marks, and `\\w` would cut "शाम" into pieces."""
    return [w.strip(_PUNCT) for w in text.split() if w.strip(_PUNCT)]


@cache
def _table(lang: str) -> dict[str, Any] | None:
    found = locale_table(lang, "numbers.toml")
    return copy.deepcopy(found) if found else None  # its own copy: digits_for_times adds to it


def _clock(hour: int, minutes: int) -> str:
    if minutes < 0:
        hour, minutes = hour - 1, 60 + minutes
    hour = hour if hour > 0 else 12
    return f"{hour}:{minutes:02d}"


def digits_for_times(text: str, lang: str, in_time_slot: bool = False) -> str:
    """Replace number words (and Hindi's साढ़े/सवा/पौने + hour) with digits; other words are kept as they are.

    Languages whose table says `only_in_time_slots` are converted only when the text is known to be a time.
    """
    table = _table(lang)
    if not table or (table.get("options", {}).get("only_in_time_slots") and not in_time_slot):
        return text
    minute_alternatives = "|".join(re.escape(m) for m in table.get("minutes", {}))
    for phrase, hour in sorted(table.get("hours24", {}).items(), key=lambda kv: -len(kv[0])):
        if minute_alternatives:  # «двадцать два тридцать» → «22 тридцать»: an hour only where minutes follow
            text = re.sub(rf"\b{re.escape(phrase)}\s+(?=({minute_alternatives})\b)", f"{hour} ", text, flags=re.I)
    for phrase, minutes in sorted(table.get("phrases", {}).items(), key=lambda kv: -len(kv[0])):  # longest first
        marker = f"\u2063{minutes:+d}"  # one token that the before-hour rule below understands
        text = re.sub(rf"\b{re.escape(phrase)}\b", marker, text, flags=re.I)
        table.setdefault("before_hour", {})[marker] = minutes
    units: dict[str, int] = {k.lower(): v for k, v in table.get("units", {}).items()}
    before: dict[str, int] = {k.lower(): v for k, v in table.get("before_hour", {}).items()}
    whole: dict[str, str] = {k.lower(): v for k, v in table.get("whole", {}).items()}
    minutes_words: dict[str, int] = {k.lower(): v for k, v in table.get("minutes", {}).items()}
    half_words = {w.lower() for w in table.get("half", {}).get("words", [])}
    quarter_words = {w.lower() for w in table.get("quarter", {}).get("words", [])}
    ordinals: dict[str, int] = {k.lower(): v for k, v in table.get("ordinals", {}).items()}
    ambiguous = table.get("ambiguous", {})
    unit_words = set(ambiguous.get("units", []))
    for word in ambiguous.get("words", []):
        units.pop(word, None)
    joiners = {w.lower() for w in table.get("joiners", {}).get("words", [])}
    for joiner in [j for j in joiners if " " in j]:  # "baj kar" as "bajkar": the tokens below are single words
        text = re.sub(rf"(?<!\w){re.escape(joiner)}(?!\w)", joiner.replace(" ", ""), text, flags=re.I)
        joiners.add(joiner.replace(" ", ""))
    minute_units = {u for u, v in table.get("duration", {}).get("units", {}).items() if v == 60}
    tokens = re.split(r"(\s+)", text)
    out: list[str] = []
    i = 0
    while i < len(tokens):
        word = tokens[i].lower()
        nxt = tokens[i + 2].lower() if i + 2 < len(tokens) else ""
        if word in before and (nxt in table.get("units", {}) or nxt.isdigit()):
            hour = table["units"].get(nxt) or int(nxt)
            out.append(_clock(hour, before[word]))
            i += 3
            continue
        if word in half_words and nxt in ordinals:  # половина восьмого → 7:30
            out.append(_clock(ordinals[nxt], -30))
            i += 3
            continue
        if word in quarter_words and nxt in ordinals:  # четверть восьмого → 7:15
            out.append(_clock(ordinals[nxt], -45))
            i += 3
            continue
        into = _minutes_into_hour(tokens, i, lang, minute_units, ordinals)
        if into is not None:  # «десять минут восьмого» → 7:10, «двадцать пять минут девятого» → 8:25
            out.append(into[0])
            i = into[1]
            continue
        hour = units.get(word) if word in units else (int(word) if word.isdigit() and int(word) <= 24 else None)
        if hour is not None and nxt in joiners and i + 4 < len(tokens):  # सात बजकर बीस (मिनट) → 7:20
            minute = parse_number(tokens[i + 4], lang)
            if minute is not None and minute < 60:
                out.append(f"{hour}:{minute:02d}")
                i += 5
                if i + 1 < len(tokens) and tokens[i + 1].lower() in minute_units:
                    i += 2
                continue
        if hour is not None and nxt in minutes_words:  # семь тридцать (пять) → 7:30 / 7:35
            minute = minutes_words[nxt]
            i += 3
            unit_after = tokens[i + 1].lower() if i + 1 < len(tokens) else ""
            if minute >= 20 and units.get(unit_after, 10) < 10:
                minute += units[unit_after]
                i += 2
            out.append(f"{hour}:{minute:02d}")
            continue
        if word in whole:
            out.append(whole[word])
        elif word in units:
            out.append(str(units[word]))
        elif word in ambiguous.get("words", []) and nxt in unit_words:
            out.append(str(table["units"][tokens[i]]))
        else:
            out.append(tokens[i])
        i += 1
    return "".join(out)


def _minutes_into_hour(tokens: list[str], i: int, lang: str, minute_units: set[str],
                       ordinals: dict[str, int]) -> tuple[str, int] | None:
    """Minutes said into the hour named by its ordinal (Russian «пять минут девятого» = 8:05: five minutes of the
    ninth hour), from tokens[i]: the time and the index after it; None when the words are not that."""
    for size in (2, 1):  # «двадцать пять минут …» before «пять минут …»
        unit = i + 2 * size
        if unit + 2 < len(tokens) and tokens[unit].lower() in minute_units and tokens[unit + 2].lower() in ordinals:
            minute = parse_number("".join(tokens[i:unit]).strip(), lang)
            if minute is not None and 0 < minute < 60:
                return _clock(ordinals[tokens[unit + 2].lower()], minute - 60), unit + 3
    return None


def _hours_and_minutes(low: str, clock: dict[str, Any], lang: str) -> str:
    """«7 часов двадцать (пять) (минут)» as 7:20 (7:25), by the language's [clock] hour and minute words; a time whose
    minutes are said but cannot be read is made no time (a "?" the clock pattern never reads as one), so that "7" is
    not taken alone and the minutes dropped."""
    hours = "|".join(re.escape(w) for w in clock.get("hour_words", []))
    minute_words = set(clock.get("minute_words", []))
    if not hours or not minute_words:
        return low

    def minute_of(words: list[str]) -> int | None:
        said = parse_number(" ".join(words), lang)
        if said is None and len(words) == 2 and words[1].isdigit():  # «двадцать 5»: the units already digits
            tens = parse_number(words[0], lang)
            said = tens + int(words[1]) if tens is not None and tens % 10 == 0 and int(words[1]) < 10 else None
        return said if said is not None and 0 <= said < 60 else None

    def one(m: re.Match[str]) -> str:
        words = m.group(2).split()
        for size in (2, 1):
            minute = minute_of(words[:size]) if len(words) >= size else None
            if minute is not None:
                rest = words[size:]
                if rest and rest[0] in minute_words:
                    rest = rest[1:]
                return " ".join([f"{m.group(1)}:{minute:02d}", *rest]) + m.group(3)
        if any(w in minute_words for w in words):
            return "?"  # minutes said that are no number read: no time, rather than the hour alone
        return m.group(0)

    return re.sub(rf"(?<![\d:])(\d{{1,2}})\s+(?:{hours})(?!\w)((?:\s+[^\s]+){{0,3}})(\s*)", one, low)


_CLOCK = re.compile(r"(?<![\d:])(\d{1,2})(?:[:.](\d{2}))?(?![\d:])|(?<!\d)(\d)(\d{2})(?!\d)")


_HOUR_SPACE_MINUTES = re.compile(r"(?<![\d:.])([01]?\d|2[0-3])\s+([0-5]\d)(?![\d:.])")


def parse_clock(text: str, lang: str) -> str | None:
    """A spoken or written time of day as HH:MM ("quarter past six pm" → 18:15, "सुबह साढ़े छह" → 06:30,
    "половина восьмого вечера" → 19:30, "7.30 am" → 07:30), or None when the text holds no single clear time."""
    table = _table(lang) or {}
    if parse_duration(text, lang) is not None:  # "10 minutes" is a duration, not 10:00 ("в 6 часов" is a time)
        return None
    said = text.split()
    if len(said) > 1 and (tail := parse_duration(" ".join(said[1:]), lang)) is not None and tail < 3600:
        return None  # "for 7 minutes", "на 7 минут": minutes after a preposition ("в семь часов двадцать минут": 7:20)
    low = digits_for_times(re.sub(r"[,;!?]", " ", text.lower()), lang, in_time_slot=True)  # "six thirty, set…"
    low = _HOUR_SPACE_MINUTES.sub(r"\1:\2", low)  # "7 30 a.m.": speech to text's "7:30"
    low = _hours_and_minutes(low, table.get("clock", {}), lang)
    matches = _CLOCK.findall(low)
    if len(matches) != 1:
        return None
    h1, m1, h2, m2 = matches[0]
    hour, minute = (int(h1), int(m1 or 0)) if h1 else (int(h2), int(m2))
    words = set(words_of(low)) | {w.rstrip(".") for w in words_of(low)}
    periods = table.get("periods", {})
    if hour <= 12 and words & set(periods.get("pm", [])):
        hour = hour % 12 + 12
    elif hour == 12 and words & set(periods.get("am", [])):
        hour = 0
    elif hour <= 12 and words & set(periods.get("night", [])):  # 12 at night = 0:00, 2 at night = 2:00
        hour = 0 if hour == 12 else hour + 12 if hour >= 6 else hour
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


# ---------------------------------------------------------------------------------------------------------------
# Whole numbers, durations and percentages in a slot. The grammar below is the same for every language; the words
# come from the [cardinal], [duration] and [percent] sections of the locale's numbers.toml.

_MAX_NUMBER = 9999
_DEVANAGARI_DIGITS = str.maketrans("०१२३४५६७८९", "0123456789")
_HYPHEN = re.compile(r"(?<=\S)[-\u2010\u2011\u2013\u2014](?=\S)")  # "twenty-five", "пол-часа"; not "-5"
_DIGIT_EDGE = re.compile(r"(?<=[0-9])(?=[^\W\d_]|%)|(?<=[^\W\d_])(?=[0-9])")  # "15мин", "50%", "10मिनट"
_HALF = Fraction(1, 2)


def _tokens(text: str) -> tuple[str, ...]:
    """Folded words with digits split from letters and edge punctuation dropped ("50%" → "50", "%"), so that
    "15мин", "twenty-five" and "१० मिनट" read like their spaced, ASCII-digit forms."""
    text = _HYPHEN.sub(" ", fold(text).translate(_DEVANAGARI_DIGITS))
    text = _DIGIT_EDGE.sub(" ", text)
    return tuple(t for t in (w.strip(_PUNCT + ".") for w in text.split()) if t)


def _whole_digits(token: str, decimal_comma: bool) -> int | None:
    """Digits as a whole number: "25", or "1,200" where a comma groups thousands (not in Russian, where "1,5" is
    one and a half)."""
    if re.fullmatch(r"[0-9]+", token):
        return int(token)
    if not decimal_comma and re.fullmatch(r"[0-9]{1,3}(?:,[0-9]{3})+", token):
        return int(token.replace(",", ""))
    return None


def _decimal_digits(token: str, decimal_comma: bool) -> Fraction | None:
    """Digits with a decimal mark, "1.5" (or "1,5" where the comma is one): only durations have them ("1.5 hours")."""
    if re.fullmatch(r"[0-9]+\.[0-9]+", token) or (decimal_comma and re.fullmatch(r"[0-9]+,[0-9]+", token)):
        return Fraction(token.replace(",", "."))
    return None


@dataclass(frozen=True)
class _Spoken:
    """One language's number words, folded. See the comments in locales/en/numbers.toml for each part."""

    words: dict[str, int]  # single words below 100 (Hindi: 0-100)
    tens: frozenset[str]  # may take a ones word after them: "twenty five"
    hundreds: dict[str, int]  # Russian сто, двести ...: hundreds said as one word
    scales: dict[str, int]  # hundred, thousand, सौ, тысяча: multiply what precedes them
    fillers: frozenset[str]  # "and" after a scale word
    articles: frozenset[str]  # "a"/"an": one, before a scale or a unit
    fractions: dict[str, Fraction]  # half, полтора, डेढ़: amounts on their own
    before: dict[str, Fraction]  # साढ़े, सवा, पौने: added to the number after them
    and_half: tuple[tuple[str, ...], ...]  # "and a half", "с половиной"
    decimal_comma: bool
    units: dict[str, int]  # seconds in each unit word
    bare_units: frozenset[str]  # unit words that mean one of themselves: "час"
    whole_durations: dict[str, int]  # "полчаса": a whole duration in one word
    joiners: frozenset[str]  # between duration parts: "and", "и", "और"
    connectors: frozenset[str]  # between a fraction and its unit: "of"
    percent_signs: tuple[tuple[str, ...], ...]
    whole_percents: dict[str, int]  # "max", "половина", "पूरा"
    unit_first: bool = False  # the unit before the number says "about": "минут десять", "часа два"


def _folded(lang: str, name: str, section: dict[str, Any]) -> dict[str, Any]:
    """Keys folded; two spellings that fold together must agree, or the table is wrong (fail loudly, once)."""
    out: dict[str, Any] = {}
    for key, value in section.items():
        word = " ".join(_tokens(key))
        if out.get(word, value) != value:
            raise ValueError(f"locales/{lang}/numbers.toml [{name}]: {key!r} folds onto a word with another value")
        out[word] = value
    return out


def _own_spoken(lang: str) -> _Spoken:
    table = _table(lang) or {}
    cardinal: dict[str, Any] = table.get("cardinal", {})
    duration: dict[str, Any] = table.get("duration", {})
    percent: dict[str, Any] = table.get("percent", {})

    def words(section: dict[str, Any], name: str) -> dict[str, int]:
        return {k: int(v) for k, v in _folded(lang, name, section.get(name, {})).items()}

    def amounts(name: str) -> dict[str, Fraction]:
        return {k: Fraction(str(v)) for k, v in _folded(lang, name, cardinal.get(name, {})).items()}

    def wordset(section: dict[str, Any], name: str) -> frozenset[str]:
        return frozenset(" ".join(_tokens(w)) for w in section.get(name, []))

    def phrases(section: dict[str, Any], name: str) -> tuple[tuple[str, ...], ...]:
        return tuple(_tokens(p) for p in section.get(name, []))

    return _Spoken(
        words=words(cardinal, "words"),
        tens=wordset(cardinal, "tens"),
        hundreds=words(cardinal, "hundreds"),
        scales=words(cardinal, "scales"),
        fillers=wordset(cardinal, "fillers"),
        articles=wordset(cardinal, "articles"),
        fractions=amounts("fractions"),
        before=amounts("before"),
        and_half=phrases(cardinal, "and_half"),
        decimal_comma=bool(cardinal.get("decimal_comma", False)),
        units=words(duration, "units"),
        bare_units=wordset(duration, "bare"),
        whole_durations=words(duration, "whole"),
        joiners=wordset(duration, "joiners"),
        connectors=wordset(duration, "connectors"),
        percent_signs=phrases(percent, "signs"),
        whole_percents=words(percent, "whole"),
        unit_first=bool(duration.get("unit_first", False)),
    )


@cache
def _spoken(lang: str) -> _Spoken:
    """The language's own words, plus those of any language its table borrows from (Hindi speech is full of
    English numbers); the language's own entry wins where both have a word."""
    own = _own_spoken(lang)
    borrowed = (_table(lang) or {}).get("options", {}).get("borrow", [])
    merged: dict[str, Any] = {}
    for field in dataclasses.fields(_Spoken):
        value = getattr(own, field.name)
        for other in (_own_spoken(name) for name in borrowed if name != lang):
            theirs = getattr(other, field.name)
            if isinstance(value, dict):
                value = {**theirs, **value}
            elif isinstance(value, frozenset):
                value = value | theirs
            elif isinstance(value, tuple):
                value = value + tuple(p for p in theirs if p not in value)
        merged[field.name] = value
    return _Spoken(**merged)


class _Reader:
    """Every way the tokens from a position can be read as a number, an amount or a duration.

    Each method yields all its readings as (value, index after it), not just the longest: the callers keep only the
    readings that use up the whole slot, and answer only when those agree. That is what makes "five six", "twenty
    twenty" and "ten minutes please" come back as None instead of a guess.
    """

    def __init__(self, spoken: _Spoken, tokens: tuple[str, ...]) -> None:
        self.s = spoken
        self.tokens = tokens

    def at(self, i: int) -> str:
        return self.tokens[i] if i < len(self.tokens) else ""

    def small(self, i: int) -> Iterator[tuple[int, int]]:
        """A number with no scale word: digits, or [hundreds word] then a word below 100, or a tens word and a
        ones word ("сто двадцать пять", "ninety nine", "पच्चीस")."""
        s = self.s
        digits = _whole_digits(self.at(i), s.decimal_comma)
        if digits is not None:
            yield digits, i + 1
            return
        hundreds = s.hundreds.get(self.at(i), 0)
        if hundreds:
            yield hundreds, i + 1
            i += 1
        word = self.at(i)
        value = s.words.get(word)
        if value is None or (hundreds and not 0 < value < 100):
            return
        yield hundreds + value, i + 1
        ones = s.words.get(self.at(i + 1))
        if word in s.tens and ones is not None and 1 <= ones <= 9:
            yield hundreds + value + ones, i + 2

    def multiplier(self, i: int) -> Iterator[tuple[Fraction, int]]:
        """What a scale word multiplies: "two" hundred, "a" thousand, "डेढ़" सौ, "साढ़े तीन" सौ, "полторы" тысячи."""
        s = self.s
        for value, end in self.small(i):
            yield Fraction(value), end
        word = self.at(i)
        if word in s.articles:
            yield Fraction(1), i + 1
        if word in s.fractions:
            yield s.fractions[word], i + 1
        yield from self.shifted(i)

    def shifted(self, i: int) -> Iterator[tuple[Fraction, int]]:
        """Hindi's साढ़े/सवा/पौने before a number: साढ़े तीन = 3½, पौने दो = 1¾."""
        shift = self.s.before.get(self.at(i))
        if shift is not None:
            for value, end in self.small(i + 1):
                if value > 0:
                    yield value + shift, end

    def number(self, i: int, below: int | None = None) -> Iterator[tuple[Fraction, int]]:
        """A number with scale words, each smaller than the one before ("one thousand two hundred and five",
        "две тысячи пятьсот", "दो हज़ार पाँच सौ"); a scale word alone is one of itself ("тысяча", "सौ")."""
        s = self.s
        for plain, end in self.small(i):
            if below is None or plain < below:
                yield Fraction(plain), end
        for factor, j in [*self.multiplier(i), (Fraction(1), i)]:
            scale = s.scales.get(self.at(j))
            if scale is None or factor <= 0 or (below is not None and (scale >= below or factor * scale >= below)):
                continue
            value = factor * scale
            yield value, j + 1
            starts = [j + 1, j + 2] if self.at(j + 1) in s.fillers else [j + 1]
            for start in starts:
                for rest, end in self.number(start, below=scale):
                    if rest > 0:
                        yield value + rest, end

    def halves(self, i: int) -> Iterator[int]:
        for phrase in self.s.and_half:
            if self.tokens[i : i + len(phrase)] == phrase:
                yield i + len(phrase)

    def amount(self, i: int) -> Iterator[tuple[Fraction, int]]:
        """How many of a unit: a number, digits with a decimal point, a fraction word ("half", "полтора", "ढाई"),
        a number and a half ("two and a half", "два с половиной") or a number of fractions ("three quarters")."""
        s = self.s
        word = self.at(i)
        decimal = _decimal_digits(word, s.decimal_comma)
        if decimal is not None:
            yield decimal, i + 1
        if word in s.fractions:
            yield s.fractions[word], i + 1
        if word in s.articles and self.at(i + 1) in s.fractions:  # "a half hour", "a quarter of an hour"
            yield s.fractions[self.at(i + 1)], i + 2
        yield from self.shifted(i)
        for value, end in self.number(i):
            yield value, end
            if value.denominator == 1 and value > 0:
                for after in self.halves(end):
                    yield value + _HALF, after
                part = s.fractions.get(self.at(end))
                if part is not None and part < 1:
                    yield value * part, end + 1

    def parts(self, i: int) -> Iterator[tuple[Fraction, int, int]]:
        """One part of a duration as (seconds, size of its unit, index after it): "ten minutes", "half an hour",
        "an hour and a half", "час", "полчаса"."""
        s = self.s
        word = self.at(i)
        if word in s.whole_durations:
            seconds = s.whole_durations[word]
            yield Fraction(seconds), seconds, i + 1
        counts = list(self.amount(i))
        if word in s.articles:
            counts.append((Fraction(1), i + 1))  # "an hour"
        if word in s.bare_units:
            counts.append((Fraction(1), i))  # "час", "minute"
        for count, j in counts:
            if count <= 0:
                continue
            starts = {j}
            if count < 1:  # "half an hour", "quarter of an hour"
                if self.at(j) in s.connectors:
                    starts.add(j + 1)
                starts |= {k + 1 for k in starts if self.at(k) in s.articles}
            for k in starts:
                unit = s.units.get(self.at(k))
                if unit is None:
                    continue
                yield count * unit, unit, k + 1
                if count.denominator == 1:  # "an hour and a half", "час с половиной"
                    for end in self.halves(k + 1):
                        yield (count + _HALF) * unit, unit, end

    def durations(self, i: int, below: int | None = None) -> Iterator[Fraction]:
        """Whole-slot readings as seconds: parts from larger units to smaller ("два часа тридцать минут"), each
        unit once, optionally joined by "and"/"и"/"और"."""
        for seconds, size, j in self.parts(i):
            if below is not None and size >= below:
                continue
            if j == len(self.tokens):
                yield seconds
                continue
            starts = [j, j + 1] if self.at(j) in self.s.joiners else [j]
            for start in starts:
                for rest in self.durations(start, below=size):
                    yield seconds + rest


def _only(values: Iterable[Fraction], low: int, high: int | None = None) -> int | None:
    """The one whole value all full readings agree on, if it lies in range; None when there is none or they differ."""
    wholes = {int(v) for v in values if v.denominator == 1}
    if len(wholes) != 1:
        return None
    value = wholes.pop()
    return value if value >= low and (high is None or value <= high) else None


def parse_number(text: str, lang: str) -> int | None:
    """A whole number 0-9999 said in words or written in digits ("twenty five", "a hundred and ten", "две тысячи",
    "पच्चीस", "एक सौ दस", "pachees", "२५"), or None unless the text is exactly one such number.

    Slots like a count or a level reach tools as whatever Whisper wrote, and a tool must act on the number meant or
    not at all; so anything extra, a fraction ("полторы") or two numbers in a row gives None rather than a guess.
    """
    tokens = _tokens(text)
    reader = _Reader(_spoken(lang), tokens)
    return _only((v for v, end in reader.number(0) if end == len(tokens)), 0, _MAX_NUMBER) if tokens else None


def numbers_said(text: str, lang: str) -> set[Fraction]:
    """Every number said anywhere in `text`, in words or digits ("двадцать один", "साढ़े उन्नीस", "21"): what a
    value the model wrote may be checked against."""
    tokens = _tokens(text)
    reader = _Reader(_spoken(lang), tokens)
    return {value for start in range(len(tokens)) for value, _ in reader.number(start)}


def parse_duration(text: str, lang: str) -> int | None:
    """A duration in seconds: "ten minutes" → 600, "an hour and a half" → 5400, "quarter of an hour" → 900,
    "полчаса" → 1800, "два часа тридцать минут" → 9000, "15 мин" → 900, "ढाई घंटे" → 9000, "dedh ghanta" → 5400.

    Timers need seconds, and the ways to say a duration (fractions, halves added after the unit, Hindi's सवा/पौने,
    Russian's полтора) are too many to leave to the model. The text must be the duration and nothing else: "for"
    or "на" in front, a zero, or a part that is not whole seconds gives None.
    """
    tokens = _tokens(text)
    if not tokens:
        return None
    spoken = _spoken(lang)
    seconds = _only(_Reader(spoken, tokens).durations(0), 1)
    if seconds is None and spoken.unit_first and len(tokens) >= 2 and tokens[0] in spoken.units:
        # "минут десять", "часа два": the unit said first makes it approximate, the same length for a timer
        seconds = _only(_Reader(spoken, (*tokens[1:], tokens[0])).durations(0), 1)
    return seconds


def parse_percent(text: str, lang: str) -> int | None:
    """A level 0-100: a number with or without a percent word ("fifty percent", "50%", "пятьдесят процентов",
    "पचास प्रतिशत"), or a word that is a level on its own ("max", "половина", "पूरा"); None above 100 or otherwise.

    Volume and brightness are said as often as words like "full" as in numbers, and both should set the same level.
    """
    tokens = _tokens(text)
    if not tokens:
        return None
    spoken = _spoken(lang)
    values: list[Fraction] = []
    if len(tokens) == 1 and tokens[0] in spoken.whole_percents:
        values.append(Fraction(spoken.whole_percents[tokens[0]]))
    for value, end in _Reader(spoken, tokens).number(0):
        if end == len(tokens) or tokens[end:] in spoken.percent_signs or tokens[end:] == ("%",):  # "%" is universal
            values.append(value)
    return _only(values, 0, 100)
