"""The tolerant tier: what the strict templates miss, read as the nearest template sentence, scored.

Between the strict templates and the model. It is trained from the same templates the fast path matches (hearthd's
own, locales/<lang>/sentences, and the sentence library's): every template is expanded into word bags, its lists left
as slots ("{name}", "{area}", a number "{#}", free text "{*}"). An utterance is read the same way: the home's names,
rooms and the templates' list values are found in the words said (exactly, by stem, or by how they sound:
hearthd.phonetic), numbers become "{#}", fillers and particles go. Each intent scores the best F-measure of its bags
against the utterance, every word weighted by how much it tells intents apart (inverse intent frequency), a word said
approximately (inflected, misheard) counting for most of a word said right. Word order does not count, dropped words
cost what they tell. The best intent is then *realised*: its nearest template sentence is written out with the words
the user said in its slots and read by the strict matcher, so slots come only from words said and every argument is
read, validated and settled as the fast path does; an intent whose template cannot be realised takes its tool's
times, durations and names read by code from the words (hearthd.agent.grounding), or asks for the one missing.

Why not hassil's own fuzzy matcher (hassil.fuzzy, up to hassil 3.8.1): it scores with n-gram models that Home
Assistant trains and ships for its own intents only (nothing trains them for hearthd's templates), it finds names and
rooms only when said exactly (a trie), so "बदती" never reaches "बत्ती" nor "ты мир" "таймер", and it is gone from the
hassil the project uses. The bags here are built from whatever templates a language has, at warm-up.

A score at or above `act` with a clear margin is the call; a weaker one (or a near tie of two intents of one tool) is
a question: the call is held until the user says yes (`Decision.confirm`). A tie between intents of different tools
and anything below `ask` goes to the model, told the domain the tier points at (`Decision.among`); when the model
finds nothing there, a tied reading of at least `ask` is asked as a question rather than refused (`Decision.fallback`).
"""

from __future__ import annotations

import functools
import heapq
import itertools
import logging
import math
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from .. import locale
from ..numbers import digits_for_times, words_of
from ..phonetic import key as sound_key
from ..phonetic import phrase_key, similarity
from ..phonetic import weight as sound_weight
from ..text import fold
from ..tools.registry import ToolRegistry
from .agent import Decision
from .checks import asks
from .grounding import missing_arguments, read_arguments
from .library import PARTIAL
from .parsing import ToolCall

log = logging.getLogger(__name__)

NUMBER = "{#}"  # a number said ("7", "7:30", "20"), and a range list's slot in a template
FREE = "{*}"  # a template's wildcard of a time, a duration, a date or a percent: numbers and time words fill it
WORDS = "{~}"  # a template's wildcard of free words (a label, a place, a purpose): words no template knows fill it
NUMERIC_WILDCARDS = frozenset({"time", "time_for", "seconds", "date", "percent", "minutes"})
DURATION_WILDCARDS = frozenset({"seconds", "minutes"})  # said with a unit of time ("11 minutes")
CLOCK_WILDCARDS = frozenset({"time"})  # a time of day: never a duration ("see that I'm awake for 11 minutes")
MAX_BAGS = 48  # expansions kept per template sentence (a deterministic sample beyond it)
# hearthd's own group lists are the library's rooms, floors and device names
SLOT_ALIASES = {"home_area": "area", "home_floor": "floor", "home_name": "name"}
# How much a word heard approximately counts: inflected (the same stem) or misheard (the same sound classes)
STEM_CREDIT = 0.85
SOUND_CREDIT = 0.7
# A word no template knows ("pizza", "молоко", "ट्रैफिक") weighs as a telling word: a request about something hearthd
# has no template for is not one of its intents with a word left over
UNKNOWN_WEIGHT = 1.5
MIN_SHARE = 0.6  # a reading acted on or asked about explains this share of the words said, and says this share of its
# template's
TIE = 0.01  # two readings' scores this close are alike; the more balanced one is taken (`rank`)
CONTENT = 1.5  # a word at least this telling is a content word (in about a third of the intents or fewer)
MIN_CONTENT = 0.5  # a reading needs this share of its bag's content words said (never a match on "the", "me")
SHORTLIST = 300  # bags scored in full: those sharing the most telling words with the utterance
# The sentences offered to speech to text to choose among (`sentences`): at most this many, from bags scoring at least
# this, this many bags an intent, and a slot nobody filled written with this many of its values
SENTENCES = 20
SENTENCE_SCORE = 0.3
SENTENCES_PER_INTENT = 3
SENTENCES_PER_ACTION = 2
SENTENCES_PER_BAG = 2
SAME_NAME = 0.95  # two values this alike are one name spelled two ways
OTHER_ACTIONS = 6  # of them, sentences of other actions on the device or room heard
OTHER_VALUES = 6  # and of the action heard on the devices or rooms that sound most like the one heard
FILLS = 8
# And sentences that sound like the whole utterance, its word breaks ignored (`_sounding_like`): whisper base writes a
# Hindi command it hears clearly as words no template has ("बातचा" for "गाना", "खलारम" for "अलार्म"), which the bags
# cannot read, yet the sounds of the sentence said are mostly there. At most this many, from the bags sharing the most
# sound trigrams with it (a shortlist), written out with the home's names and rooms that sound most like it and the
# numbers said, the nearest by sound compared in full.
SOUND_ALIKE = 8
SOUND_SHORTLIST = 300
SOUND_VALUES = 3
SOUND_WRITTEN = 120
SOUND_COMPARED = 60
# Each sentence written out is verified by a pass of the strict templates (~3-7 ms on 2 cores): no more are verified
# after MISSES that none of them reads (SOUND_MISSES among the sound-alikes). A home without the devices a request names
# verified 257 sentences (1.4 s of the pause before the model) and offered none. (A bag is never given up on its own
# misses: the number "जाली" sounds like is tried as many numbers, and "चालीस", forty, came fourth.)
MISSES = 64
# A word run into a particle before it ("канастольную"): what follows the particle is taken when it is a word the
# templates or the home know and at least UNGLUED_LEAST letters, or any word of UNGLUED_ANY letters or more (misheard)
UNGLUED_LEAST = 4
UNGLUED_ANY = 6
SOUND_MISSES = 30


def _fold(word: str) -> str:
    return fold(word).strip("'’-")


def tokens_of(text: str) -> list[str]:
    """Folded words of `text` (ё as е, no nukta, punctuation and full stops off); hyphenated particles apart
    ("погаси-ка")."""
    out: list[str] = []
    for word in words_of(text.lower()):
        word = word.strip(".…") or word  # whisper ends a sentence with a full stop: "включи." is "включи"
        if re.fullmatch(r"\d+(?:[:.]\d+)?", word):
            out.append(word)
            continue
        if (percent := re.fullmatch(r"(\d+)%", word)) is not None:  # "50%": the number and its sign, as templates say
            out += [percent.group(1), "%"]
            continue
        out.extend(_fold(w) for w in re.split(r"[-‐]", word) if _fold(w))
    return out


def _stem_alike(a: str, b: str) -> bool:
    """The same word inflected ("кухне"/"кухня", "лампу"/"лампа", "turned"/"turn", "जलाओ"/"जला")."""
    if a == b:
        return True
    short = min(len(a), len(b))
    if short < 3:
        return False
    common = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        common += 1
    if common < short and common < 4 and a.isascii() and b.isascii():
        return False  # Latin letters inflect by adding to a word ("light", "lights"): "colve" is no "cold"
    return common >= max(3, math.ceil(0.6 * max(len(a), len(b)))) or (common >= 4 and common >= short - 1)


def _sound_alike(a: str, b: str) -> bool:
    """Heard approximately: the same sound classes ("बदती"/"बत्ती", "जालू"/"चालू"), or nearly, from the same first
    sound ("तामर"/"टाइमर", "таймир"/"таймер"); never a short word, nor another first sound ("joke"/"wake")."""
    ka, kb = sound_key(a), sound_key(b)
    if min(len(ka), len(kb)) < 3:
        return False
    if ka == kb:
        return True
    return ka[0] == kb[0] and min(sound_weight(a), sound_weight(b)) >= 2.5 and similarity(a, b) >= 0.75


# -- the templates as word bags ---------------------------------------------------------------------------------


class _Free(str):
    """FREE as a template says it, knowing its wildcard ("time", "seconds", "percent", "date"): equal to FREE, and
    read as FREE everywhere; a sentence written from sound fills it only with an amount of its kind."""

    kind: str

    def __new__(cls, kind: str) -> _Free:
        token = super().__new__(cls, FREE)
        token.kind = kind
        return token


def _expand(expr: Any, rules: dict[str, Any], wild: set[str], ranges: set[str],
            depth: int = 0) -> list[tuple[str, ...]]:
    """Every word sequence an expression says (slots as tokens), at most MAX_BAGS of them."""
    from hassil.expression import Alternative, ListReference, Permutation, RuleReference, Sequence, TextChunk

    if depth > 12:
        return [()]
    if isinstance(expr, TextChunk):
        return [tuple(tokens_of(expr.text))]
    if isinstance(expr, ListReference):
        name = SLOT_ALIASES.get(expr.list_name, expr.list_name)
        if expr.list_name in wild:
            return [(_Free(expr.list_name) if expr.list_name in NUMERIC_WILDCARDS else WORDS,)]
        if expr.list_name in ranges:
            return [(NUMBER,)]
        return [("{" + name + "}",)]
    if isinstance(expr, RuleReference):
        rule = rules.get(expr.rule_name)
        return _expand(rule.expression, rules, wild, ranges, depth + 1) if rule is not None else [()]
    if isinstance(expr, Alternative):
        out: list[tuple[str, ...]] = []
        for item in expr.items:
            out.extend(_expand(item, rules, wild, ranges, depth + 1))
        return _capped(list(dict.fromkeys(out)))
    if isinstance(expr, (Sequence, Permutation)):
        parts = [_expand(item, rules, wild, ranges, depth + 1) for item in expr.items]
        total = math.prod(len(p) for p in parts)
        if total <= MAX_BAGS:
            combos: Iterable[tuple[tuple[str, ...], ...]] = itertools.product(*parts)
        else:
            rng = random.Random(total)  # deterministic: the same templates give the same bags
            combos = [tuple(rng.choice(p) for p in parts) for _ in range(MAX_BAGS)]
        return _capped(list(dict.fromkeys(tuple(w for part in c for w in part) for c in combos)))
    return [()]


def _capped(seqs: list[tuple[str, ...]]) -> list[tuple[str, ...]]:
    if len(seqs) <= MAX_BAGS:
        return seqs
    return random.Random(len(seqs)).sample(seqs, MAX_BAGS)


@dataclass
class Bag:
    """One way a template says an intent: its words in order (slots as tokens)."""

    intent: str
    source: str  # "own" (hearthd's templates) or "library"
    words: tuple[str, ...]
    fixed: tuple[tuple[str, Any], ...] = ()  # the values its template data sets without a word ("what": "date")
    unique: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        self.unique = frozenset(self.words)


@dataclass
class Index:
    """A language's bags, which words tell intents apart, and the values of its lists."""

    bags: list[Bag]
    weight: dict[str, float]
    postings: dict[str, list[int]]
    values: dict[str, list[tuple[tuple[str, ...], str]]]  # first word → (value's words, list slot token)
    skip: frozenset[str]  # words said around a request that change nothing ("please", "ну", "ज़रा", "-ка")
    skip_phrases: tuple[tuple[str, ...], ...]  # the same, of several words ("будь добр", "could you"), longest first
    need: list[float]  # per bag: the weight of all its words
    content: list[float]  # per bag: the weight of its words that tell intents apart (CONTENT and more)
    root_need: list[float] = field(default_factory=list)  # per bag: √need, how the shortlist normalises overlap
    vocabulary: dict[str, frozenset[str]] = field(default_factory=dict)  # per intent: every word of its bags
    words: tuple[str, ...] = ()  # every template word, one tuple (the key of the near-word cache, held once)
    actions: list[tuple[tuple[str, ...], frozenset[str]]] = field(default_factory=list)  # (patterns, template words)
    # little words whisper runs into the next one: a particle said after a word with a hyphen ("-ка"), and those of
    # _skip.yaml `glued` ("и вентилятор" written "Ивентилятор")
    particles: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        self.root_need = [max(n, 1e-9) ** 0.5 for n in self.need]
        words: dict[str, set[str]] = defaultdict(set)
        for bag in self.bags:
            words[bag.intent] |= bag.unique
        self.vocabulary = {intent: frozenset(w) for intent, w in words.items()}
        self.words = tuple(self.weight)

    @classmethod
    def build(cls, sources: list[tuple[str, Any, set[str]]], skip: Iterable[str]) -> Index:
        """`sources`: (name, hassil Intents, the intent names to take from it)."""
        from hassil.intents import RangeSlotList, TextSlotList, WildcardSlotList

        bags: list[Bag] = []
        values: dict[str, list[tuple[tuple[str, ...], str]]] = defaultdict(list)
        for source, intents, wanted in sources:
            lists = intents.slot_lists
            for name, slot_list in lists.items():
                if isinstance(slot_list, TextSlotList):
                    token = "{" + SLOT_ALIASES.get(name, name) + "}"
                    for value in slot_list.values:
                        for words in _expand(value.text_in, intents.expansion_rules, set(), set()):
                            if words:
                                values[words[0]].append((words, token))
            ranges = {n for n, s in lists.items() if isinstance(s, RangeSlotList)}
            wild_lists = {n for n, s in lists.items() if isinstance(s, WildcardSlotList)}
            for name, intent in intents.intents.items():
                if name not in wanted:
                    continue
                for data in intent.data:
                    rules = {**intents.expansion_rules, **data.expansion_rules}
                    wild = wild_lists | set(data.wildcard_list_names)
                    local_ranges = ranges | {n for n, s in data.slot_lists.items() if isinstance(s, RangeSlotList)}
                    fixed = tuple(sorted((k, v) for k, v in (data.slots or {}).items()))
                    for sentence in data.sentences:
                        for words in _expand(sentence.expression, rules, wild, local_ranges):
                            if words:
                                bags.append(Bag(name, source, words, fixed))
        said = [tuple(tokens_of(s)) for s in skip]
        skip_words = frozenset(w[0] for w in said if len(w) == 1)
        skip_phrases = tuple(sorted({w for w in said if len(w) > 1}, key=len, reverse=True))
        unique: dict[tuple[str, frozenset[str], tuple[tuple[str, Any], ...]], Bag] = {}
        for bag in bags:
            words = tuple(w for w in _without(list(bag.words), skip_phrases) if w not in skip_words)
            if words:
                bag = Bag(bag.intent, bag.source, words, bag.fixed)
                unique.setdefault((bag.intent, bag.unique, bag.fixed), bag)
        bags = list(unique.values())
        intents_of: dict[str, set[str]] = defaultdict(set)
        for bag in bags:
            for word in bag.unique:
                intents_of[word].add(bag.intent)
        total = len({b.intent for b in bags}) or 1
        weight = {w: math.log(1 + total / len(i)) for w, i in intents_of.items()}
        postings: dict[str, list[int]] = defaultdict(list)
        for i, bag in enumerate(bags):
            for word in bag.unique:
                postings[word].append(i)
        need = [sum(weight.get(w, 1.0) for w in bag.unique) for bag in bags]
        content = [sum(weight[w] for w in bag.unique if not w.startswith("{") and weight[w] >= CONTENT)
                   for bag in bags]
        return cls(bags, weight, dict(postings), dict(values), skip_words, skip_phrases, need, content)


# -- reading an utterance -------------------------------------------------------------------------------------


@dataclass
class Reading:
    """An utterance as the bags see it: per position the tokens it may be (a word, or the slots it fills)."""

    said: list[str]  # the words as said (folded), for writing a template sentence out
    options: list[dict[str, float]]  # per position: token → credit (1 exact; less for a stem or a sound alike)
    spans: list[tuple[int, int]]  # per position: the words of `said` it covers
    canon: list[dict[str, str]] = field(default_factory=list)  # per position: a slot heard nearly → its value's words


@dataclass
class Match:
    """An intent the tier reads, with its score and the bag that gave it."""

    intent: str
    source: str
    score: float
    bag: Bag
    used: dict[int, str]  # reading position → the bag token it stood for
    recall: float = 0.0  # the share of the template's words said (by weight)
    precision: float = 0.0  # the share of the words said that the template explains (by weight)


# The bags per (language, declared tools, library or not), shared by every matcher of the process: a router rebuilt
# (a reload, a settings change) reuses them instead of building tens of MB again.
_INDEXES: dict[tuple[str, frozenset[str], bool], Index] = {}


class TolerantMatcher:
    """Scores an utterance against every intent's template bags; realises the best one through the strict matcher."""

    def __init__(self, fast_path: Any, act: float = 0.75, ask: float = 0.6, margin: float = 0.08) -> None:
        self.fast_path = fast_path
        self.registry: ToolRegistry = fast_path.registry
        self.act = act
        self.ask = ask
        self.margin = margin
        self._indexes: dict[str, Index] = {}
        self._timed_words: dict[str, frozenset[str]] = {}
        self._first_cache: tuple[Any, dict[str, list[str]]] = ({}, {})
        self._home_values: tuple[Any, Index, dict[str, list[tuple[tuple[str, ...], str]]]] | None = None
        self._value_words: frozenset[str] = frozenset()  # every word of the values: each is heard as itself

    # -- the index ------------------------------------------------------------------------------------------

    def warm(self, lang: str) -> None:
        """Build what reading `lang` needs ahead of the first utterance: its word bags and the sound trigrams that
        sentences are written from when the words read weakly (~0.5 s of Python on 2 cores, which the first such
        utterance after a start paid beside the model's decision)."""
        index = self.index(lang)
        _sounds(index, self._fillers(index, lang))

    def index(self, lang: str) -> Index:
        """The language's bags (built once per process and language; the home's names are looked up per turn)."""
        key = (lang, frozenset(t.name for t in self.registry), self.fast_path.library is not None)
        if key not in _INDEXES:
            if len(_INDEXES) >= 9:  # a few languages and catalogues; never one index per rebuilt router
                _INDEXES.pop(next(iter(_INDEXES)))
            _INDEXES[key] = self._build(lang)
        return _INDEXES[key]

    def _build(self, lang: str) -> Index:
        from .fastpath import _load_intents, skip_words
        from .library import HANDLED, covered
        from .library import _intents as library_intents

        sources: list[tuple[str, Any, set[str]]] = []
        own = _load_intents().get(lang)
        if own is not None:
            sources.append(("own", own, {n for n in own.intents if n in self.registry}))
        if covered(lang) and self.fast_path.library is not None:
            lib = library_intents(lang)
            if lib is not None:
                sources.append(("library", lib, set(HANDLED) & set(lib.intents)))
        skip = list(skip_words(lang))
        particles: list[str] = []
        glued: list[str] = []
        if locale.has(lang, "sentences/_skip.yaml"):
            table = locale.yaml(lang, "sentences/_skip.yaml") or {}
            particles = [str(w) for w in table.get("particles", [])]
            glued = [str(w) for w in table.get("glued", [])]
        index = Index.build(sources, skip + particles)
        index.actions = _actions(lang, index)
        index.particles = tuple(dict.fromkeys(_fold(p) for p in (*particles, *glued) if _fold(p)))
        return index

    # -- reading --------------------------------------------------------------------------------------------

    def read(self, text: str, lang: str, loose: bool = False) -> Reading:
        """The utterance's words, with the home's names and rooms, list values and numbers found in them (`loose`: a
        word like no template word is also taken for one that sounds like it but for its first sound, "खलारम" for
        "अलार्म", "पामर" for "टाइमर": only for offering sentences to the audio, never to decide on)."""
        index = self.index(lang)
        values = self._values(index)
        said = [self._unglued(w, index, values) for w in _without(tokens_of(digits_for_times(text, lang)),
                                                                  index.skip_phrases) if w not in index.skip]
        timed = self._timed(lang, index)
        options: list[dict[str, float]] = []
        spans: list[tuple[int, int]] = []
        canons: list[dict[str, str]] = []
        i = 0
        while i < len(said):
            word = said[i]
            if len(canons) < len(options):
                canons.append({})
            firsts = self._firsts(word, values)
            if not firsts and len(word) > GLUED + 3 and not self._word_options(word, index) \
                    and _script_of(word) != "latin":
                # a little word whisper glued to a name ("ивентилятор": "и вентилятор"): the name, if one is there
                rest = self._firsts(word[GLUED:], values)
                if any(f == word[GLUED:] or _stem_alike(f, word[GLUED:]) for f in rest):
                    word = said[i] = word[GLUED:]
                    firsts = rest
            found: dict[str, float] = {}
            canon: dict[str, str] = {}
            length = 0
            for n in range(min(5, len(said) - i), 0, -1):
                found, canon = self._value_at(said[i:i + n], firsts, values, lang, self._value_words, index.weight)
                if found:
                    length = n
                    break
            if length:
                if length == 1:
                    found = {**found, **self._word_options(word, index)}  # "kitchen": a room, or a template's word
                    if re.fullmatch(r"\d+(?:[:.]\d+)?", word):
                        found.update({NUMBER: 1.0, FREE: 1.0})  # "10": a snooze's minutes, or any number
                    elif word in timed:
                        found[FREE] = 1.0  # "минут": a list's word, and part of a duration said
                options.append(found)
                spans.append((i, i + length))
                canons.append(canon)
                i += length
                continue
            if re.fullmatch(r"\d+(?:[:.]\d+)?", word):
                options.append({NUMBER: 1.0, FREE: 1.0})
                spans.append((i, i + 1))
                i += 1
                continue
            here = self._word_options(word, index)
            if loose and not here and not re.fullmatch(r"\d+(?:[:.]\d+)?", word):
                here = {k: SOUND_CREDIT for k in _near_but_first(word, index.words)}
            after = self._word_options(said[i + 1], index) if i + 1 < len(said) else {}
            if i + 1 < len(said) and len(word) > 1 and not self._telling(here, index) \
                    and not self._telling(after, index) and not _exact(here) and not _exact(after):
                # "ты мир" heard for "таймер"; never a preposition ("в машине"), nor a word that is a template's own
                # as said ("for the" is no "would", which sounds like it)
                both = word + said[i + 1]
                joined = {k: c for k, c in self._word_options(both, index).items()
                          if index.weight.get(k, 0.0) >= CONTENT and similarity(both, k) >= JOINED_SIMILARITY}
                if joined:
                    options.append({k: min(c, SOUND_CREDIT) for k, c in joined.items()})
                    spans.append((i, i + 2))
                    i += 2
                    continue
            if word in timed and word not in index.weight:
                options.append({FREE: 1.0})  # "minutes", "बजे", "утра": part of a time or a duration said
            else:
                # "मिनेत" for "मिनट"; never a number heard approximately ("full" is not "for", read as four)
                timely = max((c for k, c in here.items() if k in timed and (c >= 1.0 or not _number_word(k, lang))),
                             default=0.0)
                options.append({**here, **({FREE: timely} if timely else {})})
            spans.append((i, i + 1))
            i += 1
        canons += [{}] * (len(options) - len(canons))
        return Reading(said, options, spans, canons)

    def _firsts(self, word: str, values: dict[str, list[tuple[tuple[str, ...], str]]]) -> list[str]:
        """The list values' first words `word` may be (kept while the lists are the same: words come back)."""
        if self._first_cache[0] is not values:
            self._first_cache = (values, {})
        cache = self._first_cache[1]
        if word not in cache:
            if len(cache) > 4096:  # bounded: a daemon hears endless new words
                cache.clear()
            cache[word] = [f for f in values if f == word or _stem_alike(f, word) or _sound_alike(f, word)]
        return cache[word]

    def _timed(self, lang: str, index: Index) -> frozenset[str]:
        """The words a time or a duration is said with that tell something ("minutes", "बजे", "утра"), not the little
        words around them ("at", "the", "me")."""
        from .fastpath import _no_names, _time_words

        if lang not in self._timed_words:
            little = _no_names(lang) | index.skip
            duration = locale.table(lang, "numbers.toml").get("duration", {})
            units = [*duration.get("units", {}), *duration.get("bare", []), *duration.get("whole", {})]
            words = {_fold(w) for w in (*_time_words(lang), *units) if isinstance(w, str)}
            self._timed_words[lang] = frozenset(w for w in words if w not in little and " " not in w
                                                and not w.isdigit() and len(w) > 2)
        return self._timed_words[lang]

    def _amounts(self, said: list[str], lang: str, index: Index) -> list[str]:
        """A time, a duration or a percent written from the digits heard: each number with the unit said after it as
        the templates spell the units it sounds like ("5-minute" as "5 मिनट", "50%" as 50); nothing without a digit
        (a number heard as no number is never made up)."""
        units = sorted(self._timed(lang, index))
        out: list[str] = []
        for i, word in enumerate(said):
            number = re.fullmatch(r"(\d+(?:[:.]\d+)?)(%?)(?:-(\w+))?", word)
            if number is None:
                continue
            digits, percent, glued = number.groups()
            if percent:
                out.append(digits)  # (the templates say their "%" or "परसेंट" themselves)
                continue
            after = glued or (said[i + 1].strip(".…") if i + 1 < len(said) else "")
            if _day_word(index, after):
                after = ""  # "6.45 tomorrow": the day is its own slot's ("… tomorrow at 6.45"), no unit of the time
            near = sorted((u for u in units if after and similarity(after, u) >= 0.5),
                          key=lambda u: -similarity(after, u))[:2]
            out += [f"{digits} {u}" for u in near] or [digits]
            if len(out) >= SOUND_VALUES:
                break
        return out[:SOUND_VALUES]

    def _unglued(self, word: str, index: Index, values: dict[str, list[tuple[tuple[str, ...], str]]]) -> str:
        """`word` without a particle whisper ran into it from the word before ("зажги-ка настольную" heard "зажди,
        канастольную", "заведи-ка будильник" heard "завидя кабудинник"): when the word is none the templates or the
        home know, and what follows the particle is one, or long enough to be one misheard."""
        if not index.particles or word in index.weight or word in values or word in self._value_words:
            return word
        for particle in index.particles:
            rest = word[len(particle):]
            if word.startswith(particle) and len(rest) >= UNGLUED_LEAST and (
                    rest in index.weight or rest in values or rest in self._value_words or len(rest) >= UNGLUED_ANY):
                return rest
        return word

    def _values(self, index: Index) -> dict[str, list[tuple[tuple[str, ...], str]]]:
        """The templates' list values and this home's names, rooms and floors, by first word (kept while the home's
        lists are the same)."""
        library = self.fast_path.library
        lists = library.slot_lists() if library is not None else {}
        if self._home_values is not None and self._home_values[0] is lists and self._home_values[1] is index:
            return self._home_values[2]
        values = {k: list(v) for k, v in index.values.items()}
        for name, slot_list in lists.items():
            for value in getattr(slot_list, "values", []):
                if (getattr(value, "context", None) or {}).get(PARTIAL):
                    continue  # one word of a name ("coffee"): the templates read it said exactly, never approximately
                words = tuple(tokens_of(str(getattr(value.text_in, "text", "") or "")))
                if words:
                    values.setdefault(words[0], []).append((words, "{" + name + "}"))
        self._home_values = (lists, index, values)
        self._value_words = frozenset(w for found in values.values() for words, _ in found for w in words)
        return values

    @staticmethod
    def _value_at(words: list[str], firsts: list[str], values: dict[str, list[tuple[tuple[str, ...], str]]],
                  lang: str = locale.DEFAULT_LANGUAGE, known: frozenset[str] = frozenset(),
                  spoken: Mapping[str, float] | None = None) -> tuple[dict[str, float], dict[str, str]]:
        """The slots `words` fill as a whole: said exactly, inflected or heard approximately (not one short word);
        and for a slot filled approximately, the value's own words. A number word is never heard approximately: a
        number is what was said or nothing ("full brightness" is not "four"); nor is a word of another value
        (`known`): "bathroom" said in a home with a bathroom is not "bedroom" misheard; nor a word the templates
        say (`spoken`): "kill the lights" is the verb "kill", not the colour "cool" misheard."""
        found: dict[str, float] = {}
        canon: dict[str, str] = {}
        for first in firsts:
            for value, token in values[first]:
                if len(value) != len(words):
                    continue
                credit = 1.0
                for a, b in zip(value, words, strict=True):
                    if a == b:
                        continue
                    if _stem_alike(a, b) or (a in _FILLERS() and b in _FILLERS()):
                        # (or a little word of a name said as another: "bedroom ki parde" for "… ke parde")
                        credit = min(credit, STEM_CREDIT)
                    elif _sound_alike(a, b) and len(a) > 3 and not _number_word(a, lang) and b not in known \
                            and (spoken is None or b not in spoken):
                        credit = min(credit, SOUND_CREDIT)
                    else:
                        credit = 0.0
                        break
                if credit and credit > found.get(token, 0.0):
                    found[token] = credit
                    if credit < 1.0:
                        canon[token] = " ".join(value)
                    else:
                        canon.pop(token, None)
        return found, canon

    @staticmethod
    def _telling(options: dict[str, float], index: Index) -> bool:
        return any(index.weight.get(k, 0.0) >= CONTENT for k in options)

    @staticmethod
    def _word_options(word: str, index: Index) -> dict[str, float]:
        if word in index.weight:
            return {word: 1.0}
        options: dict[str, float] = {}
        for known in _near(word, index.words):
            credit = STEM_CREDIT if _stem_alike(word, known) else SOUND_CREDIT
            options[known] = max(options.get(known, 0.0), credit)
        if word not in index.weight:
            # a verb no template uses, of an action the language's polarity table knows ("врубай", "потуши", "kill"):
            # the templates' words for that action
            for patterns, words in index.actions:
                if any(_fits(word, p) for p in patterns):
                    options.update({w: max(options.get(w, 0.0), ACTION_CREDIT) for w in words if w not in options})
        return options

    # -- scoring --------------------------------------------------------------------------------------------

    def scores(self, text: str, lang: str) -> list[Match]:
        """Every intent's best bag for `text`, best first."""
        return self.rank(self.read(text, lang), self.index(lang))

    def rank(self, reading: Reading, index: Index) -> list[Match]:
        """Each intent's best bag for the reading, best first."""
        best: dict[str, Match] = {}
        for match in self._bags(reading, index):
            kept = best.setdefault(match.intent, match)
            # of two readings of one intent scoring alike, the one that says enough of its template and explains
            # enough of the words: "какой сегодня число" is "какое число сегодня" said with one word inflected, not
            # "какой сегодня месяц и число" with two words left out, though the second scores a hair higher
            if kept is not match and match.score >= kept.score - TIE and _lopsided(kept) and not _lopsided(match):
                best[match.intent] = match
        return sorted(best.values(), key=lambda m: -m.score)

    def _bags(self, reading: Reading, index: Index) -> list[Match]:
        """Every shortlisted bag that reads something of the utterance, best first."""
        overlap: dict[int, float] = defaultdict(float)
        for options in reading.options:
            for token, credit in options.items():
                w = index.weight.get(token, 0.0)
                if w >= 1.0 or token.startswith("{"):
                    for i in index.postings.get(token, ()):
                        overlap[i] += credit * w
        root = index.root_need
        shortlist = heapq.nlargest(SHORTLIST, overlap, key=lambda i: overlap[i] / root[i])
        said_weight = [max((index.weight.get(t, UNKNOWN_WEIGHT) for t in o), default=UNKNOWN_WEIGHT) if o
                       else UNKNOWN_WEIGHT for o in reading.options]
        total_said = sum(said_weight) or 1.0
        positions = range(len(reading.options))
        passes = [(True, p) for p in positions] + [(False, p) for p in positions]
        found: list[Match] = []
        for i in shortlist:
            bag = index.bags[i]
            used: dict[int, str] = {}
            got = covered = content = 0.0
            taken: set[str] = set()
            # words said exactly are placed first, then the ones only like a template word: in "कार की लाइट ऑफ कर
            # दो" the "कर" said is the template's, and "कार" (car) stays unread instead of taking it
            for exact, position in passes:
                if position in used:
                    continue
                options = reading.options[position]
                pick, credit = "", 0.0
                for token, c in options.items():
                    if token in bag.unique and token not in taken and c > credit and (c >= 1.0 or not exact):
                        pick, credit = token, c
                if exact and not pick:
                    continue
                if not pick and FREE in bag.unique and FREE in options:
                    pick, credit = FREE, options[FREE]  # a number or a time word: a wildcard's time or duration
                if not pick and WORDS in bag.unique and not options:
                    pick, credit = WORDS, 0.5  # a word no template knows: a label's, a place's
                if pick:
                    w = index.weight.get(pick, 1.0)
                    if pick not in (FREE, WORDS):
                        taken.add(pick)
                        got += credit * w
                    elif pick not in taken:
                        taken.add(pick)
                        got += credit * w  # a wildcard counts once however many words fill it
                    used[position] = pick
                    covered += credit * said_weight[position]
                    if not pick.startswith("{") and w >= CONTENT:
                        content += credit * w
            if not got or (index.content[i] and content < MIN_CONTENT * index.content[i]):
                continue
            recall = got / index.need[i]
            precision = covered / total_said
            score = 2 * recall * precision / (recall + precision)
            found.append(Match(bag.intent, bag.source, score, bag, used, recall, precision))
        return sorted(found, key=lambda m: -m.score)  # (stable: of equal scores, the shortlist's order)

    # -- deciding -------------------------------------------------------------------------------------------

    def match(self, text: str, lang: str) -> Decision | None:
        """The call (or question) the nearest template reads, with its score; None when no intent is near enough, or
        an abstention pointing the model at the domain (`among`) when the tier is torn between tools."""
        from .checks import negated

        try:
            reading = self.read(text, lang)
            ranked = self.rank(reading, self.index(lang))
        except Exception:  # a template the tier cannot take must never end a turn: the model still reads it
            log.exception("the tolerant tier failed on an utterance")
            return None
        if negated(" ".join(reading.said), lang):
            # "बत्ती बंद मत करो", "не гаси свет": what is said not to be done is never read as done ("не подскажешь"
            # is a courtesy, set apart with the skip words before this). Only a question whose template says the
            # "не" itself is read ("телевизор не выключили?"), and only as a question: a call that reads state, never
            # one that changes it
            decision = self._decide(text, lang, reading, ranked) if self._says_the_not(reading, ranked, lang) \
                else None
            if decision is None or decision.kind != "call" \
                    or any(not self.registry.reads_only(c.name) for c in decision.calls):
                return None
            return decision
        return self._decide(text, lang, reading, ranked)

    def _says_the_not(self, reading: Reading, ranked: list[Match], lang: str) -> bool:
        """Whether the best reading's template says each negation word said, and reads state only."""
        from .checks import negation_words

        denials = negation_words(lang)
        said = [p for p, o in enumerate(reading.options) if any(k in denials for k in o)]
        if not ranked or not said:
            return False
        top = ranked[0]
        return top.score >= self.act and self.registry.reads_only(self._tool_of(top) or "") \
            and all(top.used.get(p) in denials for p in said)

    def _decide(self, text: str, lang: str, reading: Reading, ranked: list[Match]) -> Decision | None:
        if not ranked or ranked[0].score < self.ask:
            return self._pointer(ranked)
        for match in ranked[:3]:
            if match.score < self.ask or _lopsided(match):
                break
            if not any(reading.options[p].get(token, 0.0) > SOUND_CREDIT for p, token in match.used.items()):
                # every word of it only sounds somewhat like the template's ("set the table" as "shut down"), none
                # said as the template says it or as a form of its word ("погасок" for "погаси"): too little to act
                # on, or to ask about; the model reads it within the domain
                break
            decision = self._realise(match, reading, text, lang)
            if decision is None:
                continue
            rivals = [m for m in ranked if m.score >= match.score - self.margin and m is not match]
            rival_tools = {self._tool_of(m) for m in rivals} - {self._tool_of(match), None}
            if rival_tools and decision.kind == "call":
                # torn between two actions: the model chooses among them; if it finds nothing, the best reading is
                # asked as a question ("Выключим везде свет наверху": off, on, or whether they are off; the model
                # picked no room), never a reading that acts on what was asked
                pointer = self._pointer(ranked)
                if pointer is not None and match.score >= self.ask and not _unsaid(match, self.index(lang)) \
                        and not asks(text, lang):
                    decision.confirm = True
                    decision.source = "tolerant"
                    decision.reason = f"tolerant {match.intent} {match.score:.2f}, asked: torn between " \
                                      f"{', '.join(sorted(t for t in rival_tools if t))}"
                    pointer.fallback = decision
                return pointer
            decision.source = "tolerant"
            decision.reason = f"tolerant {match.intent} {match.score:.2f}"
            decision.name_probs = {c.name: round(match.score, 3) for c in decision.calls}
            # a word no template knows, or one only like a template word and left unread by this reading ("कार की
            # लाइट ऑफ कर दो": "car" is not "kar", which is said already): a thing the home does not have
            unknown = [reading.said[a] for p, ((a, b), o) in enumerate(zip(reading.spans, reading.options, strict=True))
                       if not o or (p not in match.used and max(o.values()) < 1.0)]
            if unknown and len(unknown) * 2 >= len(reading.options):
                return None  # mostly words no template knows ("सूरज कितने बजे उगेगा"): not one of these requests
            index = self.index(lang)
            # a telling word said that no template of this intent has, though another intent's does
            own = index.vocabulary.get(match.intent, frozenset())
            unexplained = [p for p, o in enumerate(reading.options) if p not in match.used and o
                           and all(index.weight.get(k, 0.0) >= CONTENT and k not in own and not k.startswith("{")
                                   for k in o)]
            if unexplained or unknown:
                # a reading that leaves a telling word unread ("громкость на 10 больше" is no volume of 10), or one
                # beside words no template knows ("включи свет в машине", "side entrance आधा खोल दो"): the model reads
                # the whole, within the domain; if it finds nothing there, the reading is asked as a question
                pointer = self._pointer(ranked)
                if pointer is not None and decision.kind == "call" and not _unsaid(match, index):
                    # (only a reading whose template's telling words were all said: "сколько стоит биткоин" is no
                    # question about alarms, though "на сколько стоит будильник" shares two of its words)
                    decision.confirm = True
                    decision.reason += ", asked: the model found nothing"
                    pointer.fallback = decision
                return pointer
            if decision.kind == "call" and match.score < self.act:
                # a weak reading is a question: held until a yes
                decision.confirm = True
            return decision
        return self._pointer(ranked)

    def topic(self, text: str, lang: str) -> str:
        """What a request nobody could read is about, for a question in place of the generic refusal
        (locales/<lang>/phrases.toml [unclear]): the family of the nearest readings' tools, when the words name
        something hearthd knows (a device, a room, an alarm, the music: a home list's value or the declines' `keep`
        words), or are a fair reading of a question about the clock; "" when they name nothing hearthd knows."""
        from .declines import names_known

        try:
            reading = self.read(text, lang)
            ranked = self.rank(reading, self.index(lang))
        except Exception:  # never the reason a turn fails: the generic refusal is said instead
            log.exception("the tolerant tier failed on an utterance")
            return ""
        named = {p for p, options in enumerate(reading.options)
                 if any(token in NAMED and credit >= 1.0 for token, credit in options.items())}
        near = [m for m in ranked[:5] if m.score >= self.ask * 0.6]
        if named:  # the reading that takes the thing named: "в спальне холодрыга" is about the bedroom's devices
            near = [m for m in near if named & set(m.used)]
            if not near:  # none does ("sing me a song"): the thing itself says what it is about
                music = any("{media_class}" in reading.options[p] for p in named)
                return TOPICS["media"] if music else TOPICS["home"]
        elif not names_known(text, lang):
            # naming nothing: only a fair reading of a question about the clock ("what time is it on the moon")
            near = [m for m in near[:1] if m.score >= self.ask]
        families = [self.registry.get(t).family for m in near
                    if (t := (self._tool_of(m) or "").split(".")[0]) in self.registry]
        if not (named or names_known(text, lang)):
            return TOPICS["clock"] if families[:1] == ["clock"] else ""
        return next((TOPICS[f] for f in families if f in TOPICS), TOPICS["home"] if named else "")

    def sentences(self, text: str, lang: str, limit: int = SENTENCES, alike: bool = False) -> list[str]:
        """The template sentences nearest `text`, best first, each one the strict templates read as a request: for
        speech to text to choose among by how well each fits the audio (hearthd.audio.rescoring). The nearest bags of
        a few intents are written out with the words said in their slots, the names and rooms heard nearly as the
        home spells them; a room or a name not heard at all is filled with each of the home's (a few), so the audio
        decides which one was said; and, when the words read weakly (or `alike`), sentences that sound like the whole
        of it. Nothing when the words say what not to do."""
        from .checks import negated

        if not text.strip() or negated(text, lang):
            return []
        try:
            reading = self.read(text, lang, loose=True)
            index = self.index(lang)
            bags = self._bags(reading, index)
        except Exception:  # a template the tier cannot take: no sentences, what whisper wrote stands
            log.exception("the tolerant tier failed on an utterance")
            return []
        fills = self._fillers(index, lang)
        heard_numbers = _numbers_in(text, lang)
        out: dict[str, Decision] = {}  # each sentence offered, with the strict templates' reading of it
        per_intent: dict[str, int] = defaultdict(int)
        actions: dict[tuple[Any, ...], int] = defaultdict(int)
        misses = 0

        def verified(sentence: str, kinds: tuple[str, ...] = ("call", "clarify")) -> Decision | None:
            nonlocal misses
            found = self.fast_path.match(sentence, lang)
            if found is None or not found.calls or found.kind not in kinds:
                misses += 1
                return None
            return found

        limit -= OTHER_ACTIONS + OTHER_VALUES
        for match in bags:
            if len(out) >= limit or match.score < SENTENCE_SCORE or misses >= MISSES:
                break
            if per_intent[match.intent] >= SENTENCES_PER_INTENT or not _amount_read(match, reading, lang, index):
                continue
            before, read = len(out), False
            for sentence in self._filled(match, reading, fills, lang):
                if sentence in out or not heard_numbers <= _numbers_in(sentence, lang):
                    continue  # (a number said is never dropped: "…потусклее, процентов на тридцать" is no step)
                found = verified(sentence)
                if found is None:
                    if misses >= MISSES:
                        break
                    continue
                read = True
                action = _action(found)
                if actions[action] >= SENTENCES_PER_ACTION:
                    continue  # two ways of saying one action are enough: the others say another
                actions[action] += 1
                out[sentence] = found
                if len(out) >= limit or len(out) - before >= SENTENCES_PER_BAG:
                    break
            # (a bag read as an action already offered counts too: the intent's next bags would say it again, each
            # read by the templates for nothing — 80 of them, 250 ms, for "I want to get up when it's 6.45 tomorrow")
            per_intent[match.intent] += read or len(out) > before
        written = 0
        from ..language import rules

        script = rules(lang).script
        scripts: dict[tuple[Any, ...], set[str]] = defaultdict(set)
        for sentence, found in out.items():
            scripts[_action(found)].add(_script_of(sentence))
        for sentence in self._other_values(bags, reading, fills):
            # the action heard on the home's other devices or rooms that sound nearly alike ("बाथरुम" or "बेडरूम"); and
            # the one heard once in the language's letters when it was offered only in others: told Hindi, whisper
            # fits a "bedroom" it wrote in Latin worse than a "बाथरूम" it did not hear
            if written >= OTHER_VALUES or misses >= MISSES:
                break
            if sentence in out or not heard_numbers <= _numbers_in(sentence, lang):
                continue
            found = verified(sentence)
            if found is not None:
                action = _action(found)
                mine = _script_of(sentence) == script
                if not actions[action] or (mine and script not in scripts[action]):
                    actions[action] += 1
                    scripts[action].add(_script_of(sentence))
                    out[sentence] = found
                    written += 1
        for sentence in self._other_actions(bags, reading, index):
            # the same device or room with another action's words ("बाथरुम की बपती बूचाडू": off, not a colour)
            if len(out) >= limit + OTHER_ACTIONS + written or misses >= MISSES:
                break
            found = verified(sentence, ("call",)) \
                if sentence not in out and heard_numbers <= _numbers_in(sentence, lang) else None
            if found is not None:
                action = _action(found)
                if not actions[action]:
                    actions[action] += 1
                    out[sentence] = found
        # (only when the words read weakly: a reading the tier would act on or ask about stands against sentences
        # that merely sound alike, "Bedroom Light" heard is no "बाथरूम लाइट ऑफ")
        if alike or not out or not bags or bags[0].score < self.ask:
            self._add_sounding(text, lang, index, fills, out, actions, heard_numbers)
        return list(out)

    def _add_sounding(self, text: str, lang: str, index: Index, fills: dict[str, list[str]],
                      out: dict[str, Decision], actions: dict[tuple[Any, ...], int],
                      heard_numbers: frozenset[Any]) -> None:
        """Up to SOUND_ALIKE sentences that sound like `text` added to `out` (each with its reading), one per action
        not offered yet, or once more in the language's own letters for an action offered only in others."""
        from ..language import rules

        script = rules(lang).script
        scripts: dict[tuple[Any, ...], set[str]] = defaultdict(set)
        for sentence, found in out.items():  # (read when they were offered: not read again)
            scripts[_action(found)].add(_script_of(sentence))
        written = misses = 0
        for sentence in self._sounding_like(text, lang, index, fills)[:SOUND_COMPARED]:
            # whatever the words were read as: the template sentences that sound most like the whole of it; an
            # action offered only in other letters ("light band") once more in the language's ("लाइट बंद करो")
            if written >= SOUND_ALIKE or misses >= SOUND_MISSES:
                break
            if sentence in out or not heard_numbers <= _numbers_in(sentence, lang):
                continue
            found = self.fast_path.match(sentence, lang)
            if found is not None and found.calls and found.kind in ("call", "clarify"):
                action = _action(found)
                mine = _script_of(sentence) == script
                if not actions[action] or (mine and script not in scripts[action]):
                    actions[action] += 1
                    scripts[action].add(_script_of(sentence))
                    out[sentence] = found
                    written += 1
            else:
                misses += 1

    def _sounding_like(self, text: str, lang: str, index: Index, fills: dict[str, list[str]]) -> list[str]:
        """Template sentences that sound like `text` as a whole, nearest first: the bags sharing the most sound
        trigrams with it (hearthd.phonetic's keys, word breaks ignored), their names and rooms filled with the home's
        that sound most like it, a number with the numbers said, then compared by weighted edit distance."""
        heard = _grams(text)
        total = sum(heard.values())
        if total == 0:
            return []
        sounds = _sounds(index, fills)
        shared: dict[int, int] = defaultdict(int)
        for gram, n in heard.items():
            for i, m in sounds.postings.get(gram, ()):
                shared[i] += min(n, m)
        from ..language import rules

        script = rules(lang).script
        best: dict[str, list[str]] = {}
        for slot, values in sounds.values.items():
            # those that sound most like it, one spelling each (the language's own letters: "बेडरूम लाइट", not
            # "bedroom light", which whisper writes Hindi speech in less)
            ranked = sorted(values, key=lambda v: (-2 * sum((heard & v[1]).values()) / (total + sum(v[1].values())),
                                                   _script_of(v[0]) != script))
            keys: dict[str, str] = {}
            for value, _ in ranked:
                keys.setdefault(phrase_key(value), value)
                if len(keys) >= SOUND_VALUES:
                    break
            best[slot] = list(keys.values())
        numbers = sorted({str(n) for n in _numbers_in(text, lang) if isinstance(n, int)})
        best[FREE] = self._amounts(words_of(text.lower()), lang, index)
        durations = _duration_units(lang)
        amounts = {kind: [a for a in best[FREE] if _amount_fits(a, kind, durations)] for kind in NUMERIC_WILDCARDS}
        shortlist = heapq.nlargest(SOUND_SHORTLIST, shared, key=lambda i: shared[i] / (total + sounds.sizes[i]))
        written: dict[str, None] = {}
        for i in shortlist:
            bag = sounds.bags[i]
            slots = [w for w in bag.words if w.startswith("{")]
            choices = [numbers[:2] if slot == NUMBER else [a for a in amounts.get(getattr(slot, "kind", ""), best[FREE])
                                                            if not bag.unique.intersection(a.split()[1:])]
                       if slot == FREE else best.get(slot, [])[:SOUND_VALUES if len(slots) == 1 else 2]
                       for slot in slots]  # (an amount's word the bag says itself is said twice: "tomorrow at 6.45
            # tomorrow"; an amount of another kind is never read: "see that I'm awake for 11 minutes")
            if FREE in slots and len(slots) > 2:
                continue  # (a time or an amount beside two names: too many sentences to write from sound)
            if not all(choices):
                continue  # a number nobody said is never made up
            for combo in itertools.product(*choices):
                filling = iter(combo)
                written[_seamed([next(filling) if w.startswith("{") else w for w in bag.words])] = None

        def shares(sentence: str) -> float:
            grams = _grams(sentence)
            return 2 * sum((heard & grams).values()) / (total + sum(grams.values()))

        nearest = heapq.nlargest(SOUND_WRITTEN, written, key=shares)
        return sorted(nearest, key=lambda s: -similarity(text, s))

    def _other_values(self, bags: list[Match], reading: Reading, fills: dict[str, list[str]]) -> list[str]:
        """The nearest reading that names one device or room, written out with each of the home's others of its list
        instead, those that sound most like the words heard first."""
        for match in bags[:SENTENCES]:
            slots = [(p, t) for p, t in sorted(match.used.items())
                     if t.startswith("{") and t not in (FREE, WORDS, NUMBER) and t in fills]
            if len(slots) != 1:
                continue
            position, token = slots[0]
            start, end = reading.spans[position]
            heard = " ".join(reading.said[start:end])
            said = reading.canon[position].get(token) or heard
            others = sorted((v for v in fills[token] if v != said), key=lambda v: -similarity(heard, v))
            out = []
            for value in others[:OTHER_VALUES * 2]:
                canon = [dict(c) for c in reading.canon]
                canon[position][token] = value
                written = self._write_out(match, Reading(reading.said, reading.options, reading.spans, canon))
                if written:
                    out.append(written)
            if out:
                return out
        return []

    def _other_actions(self, bags: list[Match], reading: Reading, index: Index) -> list[str]:
        """The device or room the nearest reading heard (as each list it may be of: "बेडरूम की बत्ती" a device and a
        light), written into the shortest templates of the other intents that say just it: its action not heard,
        the audio chooses among on, off, open, close, a colour..."""
        values: dict[str, str] = {}
        for match in bags[:SENTENCES]:
            for position, token in sorted(match.used.items()):
                if not token.startswith("{") or token in (FREE, WORDS, NUMBER):
                    continue
                start, end = reading.spans[position]
                for slot in reading.options[position]:
                    if slot.startswith("{") and slot not in (FREE, WORDS, NUMBER):
                        values.setdefault(slot, reading.canon[position].get(slot) or " ".join(reading.said[start:end]))
            if values:
                break
        else:
            return []
        table = _by_slots(index)
        out = []
        if len(values) > 1:
            for intent, shortest in table.get(frozenset(values), {}).items():
                if intent != match.intent:
                    out += [" ".join(values.get(w, w) for w in bag.words) for bag in shortest]
        # one device or room: each other action on it, and on the two that sound most like it ("बाथरूम", "बेडरूम")
        for slot, value in values.items():
            script = _script_of(value)
            near = sorted((v for v in _slot_values(self._values(index), slot)
                           if _script_of(v) == script and similarity(value, v) < SAME_NAME),
                          key=lambda v: -similarity(value, v))[:2]  # (another device, not this one spelled otherwise)
            for intent, shortest in table.get(frozenset({slot}), {}).items():
                if intent != match.intent:
                    out += [" ".join(v if w == slot else w for w in shortest[0].words) for v in (value, *near)]
        return out

    def _fillers(self, index: Index, lang: str) -> dict[str, list[str]]:
        """Per list slot ("{area}", "{name}"), the values a sentence may be written out with, shortest first: in the
        language's letters (a room's other languages' names are no Hindi sentence) or Latin ones (a brand)."""
        from ..language import rules

        script = rules(lang).script
        by_slot: dict[str, dict[str, None]] = defaultdict(dict)
        for found in self._values(index).values():
            for words, token in found:
                value = " ".join(words)
                if _script_of(value) in (script, "latin"):
                    by_slot[token][value] = None
        return {token: sorted(values, key=len) for token, values in by_slot.items()}

    def _filled(self, match: Match, reading: Reading, fills: dict[str, list[str]], lang: str) -> list[str]:
        """The bag written out: with the words said in its slots (a time or a duration also with the number words
        they sound like: "जाली सेकन्द" as "चालीस सेकन्द"), or, for one list slot nothing said fills, with each of a few of
        the list's values."""
        written = [self._write_out(match, heard, as_said=as_said) for heard in _numbers_nearly(match, reading, lang)
                   for as_said in (False, True)]
        out = [w for w in written if w]
        if out:
            return list(dict.fromkeys(out))
        filled = set(match.used.values())
        empty = [w for w in match.bag.words if w.startswith("{") and w not in filled]
        if len(empty) != 1 or empty[0] in (FREE, WORDS, NUMBER) or empty[0] not in fills:
            return []  # a number, a time or free words nobody said are never made up
        slot = empty[0]
        tail: list[str] = []
        for value in fills[slot][:FILLS]:
            words = [value if w == slot else w for w in match.bag.words]
            if any(w.startswith("{") for w in words):  # other slots: as said
                used = Match(match.intent, match.source, match.score, Bag(match.intent, match.source, tuple(words)),
                             match.used, match.recall, match.precision)
                written_out = self._write_out(used, reading, as_said=False)
                if written_out:
                    tail.append(written_out)
            else:
                tail.append(" ".join(words))
        return tail

    def _pointer(self, ranked: list[Match]) -> Decision | None:
        """No reading to act on: the tools the best readings point at, for the model to choose among. Those tools
        themselves, not their whole family: told the home's 18 tools, the model chose set_temperature for a lock
        ("मेन दरवाज़े पे ताला लगा दो") and set_brightness for the heater; the readings' own tools held the right one
        in about nine of ten everyday misses."""
        near = [m for m in ranked[:4] if m.score >= max(self.ask * 0.6, ranked[0].score - 2 * self.margin)]
        tools = {t.split(".")[0] for m in near if (t := self._tool_of(m))}
        families = {self.registry.get(t).family for t in tools if t in self.registry}
        if not families:
            return None
        among = [t.name for t in self.registry.offered() if t.name in tools] \
            or [t.name for t in self.registry.offered() if t.family in families]
        return Decision("abstain", reason=f"tolerant: domain {', '.join(sorted(families))}", source="tolerant",
                        among=among)

    def _tool_of(self, match: Match) -> str | None:
        if match.source == "own":
            return match.intent if match.intent in self.registry else None
        from .library import INTENT_TOOL, MEDIA

        tool = INTENT_TOOL.get(match.intent)
        return f"{tool}.{MEDIA[match.intent]}" if match.intent in MEDIA else tool  # "next" is not "play"

    def _realise(self, match: Match, reading: Reading, text: str, lang: str) -> Decision | None:
        """The bag's sentence written out with the words said in its slots, read by the strict matcher; for
        hearthd's own tools, else the tool's arguments read by code from the words."""
        # the words said in the slots first; then a time word heard approximately written as the template knows it
        # ("минт" as "минут"), only when the words as said do not read ("full" is not "for", which reads as four).
        # Each first with only the template's words that were said: the arguments are read from those, never from a
        # template word that was not ("have I got any alarm set?" read by "... alarm set tomorrow" is no question
        # about tomorrow, "how much time is still left on the timer" by "... left on of the timer" names no timer "of
        # the"); the whole template sentence only when every telling word of it was said ("light")
        omit = match.bag.unique - set(match.used.values())
        whole = not _unsaid(match, self.index(lang))
        written = [self._write_out(match, reading, as_said=as_said, omit=cut)
                   for as_said in (True, False) for cut in (omit, frozenset()) if whole or cut]
        sentence = self._write_out(match, reading, omit=omit)
        for candidate in dict.fromkeys(written):
            found = self.fast_path.match(candidate, lang) if candidate else None
            if found is not None and found.kind == "clarify" and found.missing in ("device", "door"):
                continue  # "which device?" is for a verb said alone ("выключи"), never for words read loosely
            if found is not None and found.calls and found.kind in ("call", "clarify"):
                want = self._tool_of(match)
                if want is None or any(c.name == want.split(".")[0] for c in found.calls) or match.source == "library":
                    return found
        if match.source == "own" and match.intent in self.registry:
            tool = self.registry.get(match.intent)
            text = sentence or text  # the words as the template knows them ("10 मिनट" for "10 मिनेत")
            missing = missing_arguments(tool, text, lang)
            if missing and (match.score < self.act or FREE in match.used.values()):
                # a weak reading asks nothing ("tell me a joke" is no alarm with its time missing), nor one whose
                # detail was said but not read ("set a time for ten minutes"): the model reads it, told the domain
                return None
            if missing:
                return Decision("clarify", calls=[ToolCall(tool.name, {})], missing=missing[0],
                                reason=f"{tool.name}: {missing[0]} not said")
            read = read_arguments(tool, text, lang)
            # what the template's data says without a word ("какой сегодня месяц и число" asks the date): as the
            # strict templates read it, where the words themselves read no such argument
            props = tool.model_parameters.get("properties", {})
            read.update({k: v for k, v in match.bag.fixed if k in props and k not in read})
            required = set(tool.model_parameters.get("required", []))
            if required <= set(read):
                try:
                    return Decision("call", calls=[ToolCall(tool.name, self.registry.validate(tool.name, read))])
                except Exception:
                    return None
        return None

    @staticmethod
    def _write_out(match: Match, reading: Reading, as_said: bool = False, omit: frozenset[str] = frozenset()) -> str:
        """The bag's words in its order, each slot filled with the words the user said for it (`as_said`: a time word
        heard approximately too), without the words in `omit`."""
        said_for: dict[str, list[str]] = defaultdict(list)
        for position, token in sorted(match.used.items()):
            if token.startswith("{"):
                start, end = reading.spans[position]
                words = reading.canon[position].get(token) or " ".join(reading.said[start:end])
                if token == FREE and not as_said:  # a time word heard approximately, as the template knows it
                    known = [k for k, c in reading.options[position].items() if not k.startswith("{") and c >= 0.7]
                    words = max(known, key=lambda k: reading.options[position][k]) if known and end - start == 1 \
                        and words not in reading.options[position] else words
                said_for[token].append(words)
        out: list[str] = []
        for word in match.bag.words:
            if word.startswith("{"):
                if not said_for.get(word):
                    return ""  # a slot the user did not fill: this sentence cannot be written out
                out.append(said_for[word].pop(0) if word not in (FREE, WORDS) else " ".join(said_for.pop(word)))
            elif word not in omit:
                out.append(word)
        return _seamed(out)


# A tool's family → the [unclear] phrase that asks what was meant (`topic`)
TOPICS = {"home": "home", "alarms": "alarms", "clock": "clock", "media": "media", "volume": "volume",
          "power": "computer", "battery": "computer", "network": "computer"}
# Slot tokens that name a thing of the home (a device, a kind of device, a room, a floor) or the music: not a state, a
# mode, a colour, a day or a number
NAMED = frozenset("{" + n + "}" for n in (
    "name", "area", "floor", "room", "room_group", "room_hi", "room_hi_other", "device", "device_nom", "door",
    "door_nom", "light", "light_nom", "light_gen", "light_place", "fan", "fan_gen", "cover", "cover_classes",
    "thermostat", "media_class"))

# The actions whose words are interchangeable in a request (locales/<lang>/checks.toml [polarity]); "set" and "unset"
# are left out: "добавь минуту к таймеру" is not "поставь таймер".
ACTIONS = ("on", "off", "open", "close", "lock", "unlock", "mute", "unmute", "volume_up", "volume_down", "play",
           "pause")
ACTION_CREDIT = 0.8
JOINED_SIMILARITY = 0.75  # two words heard for one: only when they sound nearly as it does
GLUED = 1  # letters of a little word glued to the name after it ("и", "в", "к"), at most


@functools.cache
def _FILLERS() -> frozenset[str]:  # noqa: N802 — a constant read once, from the home's words
    """The little words around a device's name that tell nothing of it (locales/*/home.toml `fillers`: "का", "की",
    "के", "ki", "в"), folded."""
    from ..tools.catalogue import home_words

    return frozenset(_fold(w) for w in home_words().fillers)


def _fits(word: str, pattern: str) -> bool:
    """A checks.toml pattern of one word: "вруб*" any ending, "*ишь" any beginning, "*x*" inside, else the word."""
    if pattern.startswith("*") and pattern.endswith("*") and len(pattern) > 2:
        return pattern[1:-1] in word
    if pattern.endswith("*"):
        return word.startswith(pattern[:-1])
    if pattern.startswith("*"):
        return word.endswith(pattern[1:])
    return word == pattern


def _actions(lang: str, index: Index) -> list[tuple[tuple[str, ...], frozenset[str]]]:
    """Per action of the polarity tables (the language's and English, said inside it): its one-word patterns, and the
    templates' words that say it."""
    out = []
    for action in ACTIONS:
        patterns = tuple(_fold(p) for source in locale.read_with(lang)
                         for p in locale.table(source, "checks.toml").get("polarity", {}).get(action, [])
                         if " " not in p.strip())
        words = frozenset(w for w in index.weight if not w.startswith("{") and any(_fits(w, p) for p in patterns))
        if patterns and words:
            out.append((patterns, words))
    return out


def _without(words: list[str], phrases: tuple[tuple[str, ...], ...]) -> list[str]:
    """`words` with every skip phrase of several words taken out where said whole (the first phrase listed wins)."""
    starting = _phrases_by_first_word(phrases)
    out: list[str] = []
    i = 0
    while i < len(words):
        hit = next((p for p in starting.get(words[i], ()) if tuple(words[i:i + len(p)]) == p), None)
        if hit is None:
            out.append(words[i])
            i += 1
        else:
            i += len(hit)
    return out


@functools.lru_cache(maxsize=32)
def _phrases_by_first_word(phrases: tuple[tuple[str, ...], ...]) -> dict[str, list[tuple[str, ...]]]:
    """The skip phrases by their first word, in their order: the index's build tries them at every word of
    every sentence (tens of thousands), where a scan of the whole list was two thirds of the build."""
    starting: dict[str, list[tuple[str, ...]]] = {}
    for phrase in phrases:
        if phrase:
            starting.setdefault(phrase[0], []).append(phrase)
    return starting


def _lopsided(match: Match) -> bool:
    """A reading that says too little of its template, or explains too few of the words said, to be acted on."""
    return min(match.recall, match.precision) < MIN_SHARE


def _unsaid(match: Match, index: Index) -> list[str]:
    """The telling words of the reading's template that the user did not say."""
    return [w for w in match.bag.unique - set(match.used.values())
            if not w.startswith("{") and index.weight.get(w, 0.0) >= CONTENT]


@functools.lru_cache(maxsize=4096)
def _number_word(word: str, lang: str) -> bool:
    from ..numbers import numbers_said

    return bool(numbers_said(word, lang))


@functools.lru_cache(maxsize=4096)
def _near(word: str, vocabulary: tuple[str, ...]) -> tuple[str, ...]:
    """The template words `word` may be: inflected or heard approximately."""
    if len(word) < 3:
        return ()
    return tuple(k for k in vocabulary if not k.startswith("{") and (_stem_alike(word, k) or _sound_alike(word, k)))


def _exact(options: dict[str, float]) -> bool:
    """Whether a word's options hold a template word as it was said (not one it only sounds like)."""
    return any(c >= 1.0 and not k.startswith("{") for k, c in options.items())


def _script_of(text: str) -> str:
    """The letters `text` is written in: devanagari, cyrillic, latin, or "" (none, or several)."""
    found = set()
    for ch in text:
        if not ch.isalpha():
            continue
        found.add("devanagari" if "\u0900" <= ch <= "\u097f" else "cyrillic" if "\u0400" <= ch <= "\u04ff" else "latin")
    return found.pop() if len(found) == 1 else ""


@functools.cache
def _number_words(lang: str) -> tuple[str, ...]:
    """The single words the language says numbers, times and durations with (locales/<lang>/numbers.toml: the keys
    of its number tables and the words of its lists), in its letters."""
    from ..language import rules

    script = rules(lang).script
    words: set[str] = set()

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key, value in node.items():
                if isinstance(value, (dict, list)):
                    walk(value)
                elif isinstance(value, (int, float, str)) and not isinstance(value, bool):
                    words.update(tokens_of(str(key)))
        elif isinstance(node, list):
            for item in node:
                if isinstance(item, str):
                    words.update(tokens_of(item))
                else:
                    walk(item)

    walk(locale.table(lang, "numbers.toml"))
    return tuple(sorted(w for w in words if len(w) >= 2 and not w.isdigit() and _script_of(w) == script))


@functools.lru_cache(maxsize=4096)
def _number_words_near(word: str, lang: str) -> tuple[str, ...]:
    """The language's number words `word` sounds nearly like, nearest first, at most four (none for a number word, a
    digit or a unit heard as one: "बजे" is what was said). Kept: a bag's every reading asks again of the same words."""
    vocabulary = _number_words(lang)
    if word.isdigit() or len(word) < 2 or word in vocabulary:
        return ()
    found = [v for v in vocabulary if v != word
             and (sound_key(v) == sound_key(word) or _stem_alike(word, v) or similarity(word, v) >= 0.6)]
    return tuple(sorted(found, key=lambda v: (v[0] != word[0], -similarity(word, v)))[:4])  # same first letter first


NUMBER_VARIANTS = 30  # readings of a time or a duration heard approximately, at most, per bag


def _numbers_nearly(match: Match, reading: Reading, lang: str) -> list[Reading]:
    """The reading, then the same with the words of its time or duration replaced by the number words they sound
    nearly like ("बारे" as "बारह", "पोनी" as "पौने", "अद" as "आठ"): for the audio to choose among, never acted on as
    heard."""
    positions = [p for p, token in match.used.items() if token == FREE]
    if not positions:
        return [reading]

    covered = {i for p, _ in match.used.items() for i in range(*reading.spans[p])}
    spans = list(reading.spans)
    choices: list[list[str]] = []
    indices: list[int] = []
    for p in positions:
        start, end = spans[p]
        if start > 0 and start - 1 not in covered and _number_words_near(reading.said[start - 1], lang):
            start = start - 1  # "बारे मिनेद": the number before its unit, heard as no number, is the duration's
            spans[p] = (start, end)
        for i in range(start, end):
            choices.append([reading.said[i], *_number_words_near(reading.said[i], lang)])
            indices.append(i)
    widened = Reading(reading.said, reading.options, spans, reading.canon)
    out = [reading] if spans == reading.spans else [reading, widened]
    for combo in itertools.islice(itertools.product(*choices), 1, NUMBER_VARIANTS + 1):
        said = list(reading.said)
        for i, word in zip(indices, combo, strict=True):
            said[i] = word
        out.append(Reading(said, reading.options, spans, reading.canon))
    return out


_BY_SLOTS: dict[int, tuple[Index, dict[frozenset[str], dict[str, list[Bag]]]]] = {}


def _by_slots(index: Index) -> dict[frozenset[str], dict[str, list[Bag]]]:
    """The index's bags by the list slots they say (no number, time or free words), per intent its two shortest."""
    held = _BY_SLOTS.get(id(index))
    if held is not None and held[0] is index:
        return held[1]
    grouped: dict[frozenset[str], dict[str, list[Bag]]] = defaultdict(lambda: defaultdict(list))
    for bag in index.bags:
        slots = [w for w in bag.words if w.startswith("{")]
        if not slots or any(w in (FREE, WORDS, NUMBER) for w in slots) or len(slots) != len(set(slots)):
            continue
        grouped[frozenset(slots)][bag.intent].append(bag)
    table = {key: {intent: sorted(found, key=lambda b: len(b.words))[:2] for intent, found in intents.items()}
             for key, intents in grouped.items()}
    if len(_BY_SLOTS) >= 9:
        _BY_SLOTS.pop(next(iter(_BY_SLOTS)))
    _BY_SLOTS[id(index)] = (index, table)
    return table


def _slot_values(values: dict[str, list[tuple[tuple[str, ...], str]]], slot: str) -> list[str]:
    """Every value of one list slot, as words."""
    return list(dict.fromkeys(" ".join(words) for found in values.values() for words, token in found if token == slot))


@functools.lru_cache(maxsize=4096)
def _near_but_first(word: str, vocabulary: tuple[str, ...]) -> tuple[str, ...]:
    """Telling template words that sound like `word` but for its first sound, one sound more or less at the start
    ("खलारम"/"अलार्म", "पामर"/"टाइमर", "जर्वाजा"/"दरवाज़ा"): whisper base mishears a command's first sound most."""
    if len(word) < 4:
        return ()
    heard = sound_key(word)
    out = []
    for known in vocabulary:
        if known.startswith("{") or len(known) < 4 or known == word:
            continue
        k = sound_key(known)
        if min(len(k), len(heard)) < 3:
            continue
        if heard[1:] == k[1:] or heard[1:] == k or heard == k[1:] or similarity(word[1:], known[1:]) >= 0.8:
            out.append(known)
    return tuple(out[:4])


def _numbers_in(text: str, lang: str) -> frozenset[Any]:
    """The numbers `text` says, in words or digits, times read as such ("half past six" as 6:30, its 6 and 30)."""
    from ..numbers import numbers_said

    try:
        return frozenset(numbers_said(digits_for_times(text, lang), lang))
    except Exception:  # a text the number reader cannot take says no number it can hold a sentence to
        return frozenset()


def _action(decision: Decision) -> tuple[Any, ...]:
    """What a decision does, as a key: two sentences with the same one say one thing."""
    return (decision.kind, decision.missing,
            tuple((c.name, repr(sorted(c.arguments.items()))) for c in decision.calls))


def _grams(text: str) -> Counter[str]:
    """The sound trigrams of a text, its words run together (hearthd.phonetic.phrase_key)."""
    sounds = phrase_key(" ".join(tokens_of(text)))
    return Counter(sounds[i:i + 3] for i in range(len(sounds) - 2))


@dataclass
class Sounds:
    """An index's bags by their sound trigrams (those of the words between their slots), and its list values'."""

    bags: list[Bag]
    sizes: list[int]  # per bag: how many trigrams its words have
    postings: dict[str, list[tuple[int, int]]]  # trigram → (bag, how often the bag has it)
    values: dict[str, list[tuple[str, Counter[str]]]]  # list slot → (value, its trigrams)


_SOUNDS: dict[int, tuple[Index, tuple[tuple[str, tuple[str, ...]], ...], Sounds]] = {}


def _sounds(index: Index, fills: dict[str, list[str]]) -> Sounds:
    """The sound trigrams of the index's bags that a sentence can be written out of: list slots the home fills,
    numbers, times and amounts (free words are not written from sound)."""
    filled = tuple((slot, tuple(values)) for slot, values in sorted(fills.items()))
    held = _SOUNDS.get(id(index))
    if held is not None and held[0] is index and held[1] == filled:
        return held[2]  # (the home's names the same: a device discovered since is written out, and heard, too)
    bags: list[Bag] = []
    sizes: list[int] = []
    postings: dict[str, list[tuple[int, int]]] = defaultdict(list)
    for bag in index.bags:
        if any(w.startswith("{") and w not in (NUMBER, FREE) and w not in fills for w in bag.words):
            continue
        grams: Counter[str] = Counter()
        run: list[str] = []
        for word in (*bag.words, "{"):
            if word.startswith("{"):
                grams += _grams(" ".join(run)) if run else Counter()
                run = []
            else:
                run.append(word)
        for gram, n in grams.items():
            postings[gram].append((len(bags), n))
        bags.append(bag)
        sizes.append(sum(grams.values()))
    values = {slot: [(v, _grams(v)) for v in found] for slot, found in fills.items()}
    sounds = Sounds(bags, sizes, dict(postings), values)
    if len(_SOUNDS) >= 9:
        _SOUNDS.pop(next(iter(_SOUNDS)))
    _SOUNDS[id(index)] = (index, filled, sounds)
    return sounds


@functools.lru_cache(maxsize=8)
def _duration_units(lang: str) -> frozenset[str]:
    """The words a duration's unit is said with in `lang` ("minutes", "мин", "घंटे"), folded as the tier's words are."""
    duration = locale.table(lang, "numbers.toml").get("duration", {})
    units = [*duration.get("units", {}), *duration.get("bare", []), *duration.get("whole", {})]
    return frozenset(_fold(w) for w in units if isinstance(w, str))


def _amount_fits(amount: str, kind: str, durations: frozenset[str]) -> bool:
    """Whether an amount written from the digits heard (Tolerant._amounts: "11 minutes", "7:30", "6 am", "50") can
    fill a wildcard of `kind`: a duration's needs its unit, a time of day's never has one, a percent is a number."""
    unit = amount.partition(" ")[2]
    if kind in DURATION_WILDCARDS:
        return unit in durations
    if kind in CLOCK_WILDCARDS:
        return unit not in durations
    if kind == "percent":
        return not unit
    return True


_TIME_OF_DAY = re.compile(r"\d{1,2}[:.]\d\d")


def _amount_read(match: Match, reading: Reading, lang: str, index: Index) -> bool:
    """Whether the words a reading took for its template's time, duration or percent can be one: never a duration for a
    time of day or a percent ("turn the back door to 11 minutes"), nor a time with its day for a percent ("set the fan
    up to 6.45 tomorrow"). A bag whose amount cannot be is not written out: each sentence would be read for nothing."""
    frees = [w for w in match.bag.words if w == FREE]
    kind = getattr(frees[0], "kind", "") if len(frees) == 1 else ""
    if kind not in CLOCK_WILDCARDS and kind != "percent":
        return True
    said = [_fold(w) for p, token in match.used.items() if token == FREE
            for w in reading.said[slice(*reading.spans[p])]]
    if any(w in _duration_units(lang) for w in said):
        return False
    return kind != "percent" or not any(_TIME_OF_DAY.fullmatch(w) or _day_word(index, w) for w in said)


def _day_word(index: Index, word: str) -> bool:
    """Whether `word` begins a value of the templates' {day} list ("tomorrow", "завтра", "कल")."""
    return any(slot == "{day}" for _, slot in index.values.get(word, ()))


def _seamed(parts: list[str]) -> str:
    """Template words and slot values joined, a short word twice running once: "is the {door} locked" with "the front
    door" heard is "is the front door locked" (whisper never writes "the the", and fits it badly); a longer word
    doubled is meant ("धीरे धीरे"). A percent sign is written on its number ("50%"), as the templates read it."""
    words: list[str] = []
    for part in parts:
        for word in part.split():
            if word == "%" and words and words[-1].isdigit():
                words[-1] += "%"
            elif not words or word.casefold() != words[-1].casefold() or len(word) > 3:
                words.append(word)
    return " ".join(words)
