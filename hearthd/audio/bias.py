"""What speech to text should expect to hear in this home: its devices' names, its rooms in the language spoken and the
words hearthd's commands are made of, given to whisper as hot words and/or in its prompt (stt.bias).

Whisper reads both as text it has just transcribed (faster-whisper puts the hot words, then the prompt, before the
start of the transcript), so the words are kept few: a long prompt slows every decode and is at times written back
out instead of what was said. `Bias.echoed` tells such an echo from speech; the engine then decodes again unbiased.
"""

from __future__ import annotations

import re
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import cache

from ..language import rules
from ..locale import optional_text, sentence_files, table, yaml
from ..sentences import split_sentences

STYLES = ("off", "hotwords", "prompt", "both")
# of whisper's 223 for the prompt (hot words and prompt together): Hindi's words take about four tokens each, and its
# spoken commands were heard best with the home's names and the commands' own words all in (bench/recognition.py)
MAX_TOKENS = 200
ECHO_MIN_WORDS = 3  # a run of the prompt this long, across two of its entries, is the prompt written back


@dataclass(frozen=True)
class HomeNames:
    """The names this home's devices (and their aliases) and rooms go by, as the catalogue spells them."""

    devices: tuple[str, ...] = ()
    areas: tuple[str, ...] = ()


@dataclass(frozen=True)
class Bias:
    """What one decode is given: whisper's `initial_prompt` and `hotwords` (None: not given), and the entries they were
    written from, for telling a transcript that is the prompt written back from speech."""

    prompt: str | None
    hotwords: str | None
    entries: tuple[str, ...] = ()  # the home's and the commands' words, in the order written
    sentences: tuple[str, ...] = ()  # the language's own prompt (locales/<lang>/stt_prompt.txt), sentence by sentence
    _sequence: tuple[tuple[str, int], ...] = field(default=(), repr=False, compare=False)

    def echoed(self, text: str) -> bool:
        """Whether `text` is (or ends with, or holds) the prompt written back: a run of at least ECHO_MIN_WORDS of its
        words across two of its entries ("Kitchen Light, Nanoleaf, Roomba"), or one of its sentences whole. A device's
        name said alone is one entry, and speech."""
        said = _words(text)
        sequence = self._sequence or _sequence(self.sentences, self.entries)
        if not said or not sequence:
            return False
        spans = {e: (min(i for i, (_, e2) in enumerate(sequence) if e2 == e),
                     max(i for i, (_, e2) in enumerate(sequence) if e2 == e)) for _, e in sequence}
        # every run of `said` found in a row in `sequence` (a longest-common-substring table, in words)
        previous = [0] * (len(sequence) + 1)
        for word in said:
            current = [0] * (len(sequence) + 1)
            for j, (prompt_word, _) in enumerate(sequence):
                if word != prompt_word:
                    continue
                run = current[j + 1] = previous[j] + 1
                entries = {e for _, e in sequence[j - run + 1:j + 1]}
                if run >= ECHO_MIN_WORDS and len(entries) >= 2:
                    return True
                if any(e < 0 and spans[e][1] > spans[e][0] and j - run + 1 <= spans[e][0] and spans[e][1] <= j
                       for e in entries):
                    return True  # a sentence of the language's own prompt, whole
            previous = current
        return False


LOOP_TIMES = 3  # a run of two to four words said this many times in a row is whisper repeating itself (one word: 4)
_LETTER_LOOP = re.compile(r"(\S{1,4}?)\1{4,}")  # "आवावावावा", "बपपपपप": a syllable five times or more


def looped(text: str) -> bool:
    """Whether whisper went round in a loop ("बादरूम, बादरूम, बादरूम, …", "आवावावावावा…"): a known failure of its
    greedy decode, made likelier by a prompt that is a list (it goes on listing). People do not say a command's words
    over and over ("no no no" is three times, not a loop); the utterance is then decoded again without the prompt."""
    for m in _LETTER_LOOP.finditer(text.lower()):
        if any(unicodedata.category(c)[0] in "LM" for c in m.group(1)):  # letters, not "11111" or "....."
            return True
    said = _words(text)
    for n in range(1, 5):
        times = LOOP_TIMES + (n == 1)
        for i in range(len(said) - n * times + 1):
            unit = said[i:i + n]
            if all(said[i + n * k:i + n * (k + 1)] == unit for k in range(1, times)):
                return True
    return False


def _words(text: str) -> list[str]:
    """Lower-case words without punctuation (whisper changes both when it writes a prompt back)."""
    cleaned = "".join(" " if unicodedata.category(ch).startswith("P") else ch for ch in text.lower())
    return cleaned.split()


def _sequence(sentences: Iterable[str], entries: Iterable[str]) -> tuple[tuple[str, int], ...]:
    """The prompt's words, each with the entry it belongs to: sentences numbered -1, -2…, entries 0, 1…"""
    out = [(w, -1 - i) for i, s in enumerate(sentences) for w in _words(s)]
    out += [(w, i) for i, e in enumerate(entries) for w in _words(e)]
    return tuple(out)


def _in_script(word: str, script: str) -> bool:
    """Whether a word is written in `script` (latin, cyrillic, devanagari)."""
    letters = [ch for ch in word if ch.isalpha()]
    if not letters:
        return False
    if script == "devanagari":
        return all("\u0900" <= ch <= "\u097f" for ch in letters)
    if script == "cyrillic":
        return all("\u0400" <= ch <= "\u04ff" for ch in letters)
    return all(ch.isascii() or "\u00c0" <= ch <= "\u024f" for ch in letters)


_SLOT = re.compile(r"\{[^}]*\}|<[^>]*>")
_GROUP = re.compile(r"\(([^()]*)\)")  # an innermost group of alternatives: "(turn|switch)", "(जला दो|जलाओ)"


def own_words(lang: str) -> tuple[str, ...]:
    """The words of hearthd's commands speech to text must hear right in `lang` (locales/<lang>/recognition.toml)."""
    return tuple(str(w) for w in table(lang, "recognition.toml").get("words", []))


@cache
def command_words(lang: str) -> tuple[str, ...]:
    """The words hearthd's commands are made of in `lang`: locales/<lang>/recognition.toml's own, then the words said
    in their place in hearthd's sentence templates (locales/<lang>/sentences), an alternative of one of them in a
    group ("(поставь|установи|заведи) таймер", "(जला दो|जलाओ|चालू करो)"), the ones in the most templates first; in
    the language's script, slots and fillers left out."""
    own = list(own_words(lang))
    script = rules(lang).script
    fillers = {str(w).lower() for w in table(lang, "home.toml").get("fillers", [])}
    known = {w.lower() for w in own}
    counts: Counter[str] = Counter()
    for file in sentence_files(lang):
        data = yaml(lang, file) or {}
        for intent in (data.get("intents") or {}).values():
            for block in (intent or {}).get("data", []) or []:
                for sentence in block.get("sentences", []) or []:
                    for group in _GROUP.findall(_SLOT.sub(" ", str(sentence))):
                        said = [" ".join(_words(re.sub(r"[\[\]]", " ", a))) for a in group.split("|")]
                        if any(a in known or any(w in known for w in a.split()) for a in said):
                            counts.update({a for a in said if a})
    ranked = [w for w, _ in sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
              if len(w) >= 3 and w not in fillers and _in_script(w, script)]
    return tuple(_unique([*own, *ranked]))


def room_words(lang: str, areas: Iterable[str]) -> list[str]:
    """The home's rooms as `lang` says them (locales/<lang>/home.toml [areas], the first two forms: "кухня", "кухне");
    a room the language has no words for, by its own name."""
    said = {str(k).lower(): [str(w) for w in v] for k, v in table(lang, "home.toml").get("areas", {}).items()}
    out: list[str] = []
    for area in areas:
        words = said.get(area.lower())
        out += words[:2] if words else [area]
    return out


class RecognitionBias:
    """The words whisper is given for each language, rebuilt when the home's names change. `names()` returns the
    current names (the catalogue grows as MQTT discovery arrives); `count_tokens` measures text in whisper's tokens."""

    def __init__(self, names: Callable[[], HomeNames], style: str = "prompt", max_tokens: int = MAX_TOKENS,
                 count_tokens: Callable[[str], int] | None = None, template_words: bool = False) -> None:
        if style not in STYLES:
            raise ValueError(f"unknown bias style {style!r} (one of {', '.join(STYLES)})")
        self.names = names
        self.style = style
        self.max_tokens = max_tokens
        self.count_tokens = count_tokens or (lambda text: len(text.encode("utf-8")) // 3 + 1)
        # the templates' alternatives of the commands' words after those words: measured, they made Hindi worse
        # (whisper base heard 2 of 14 spoken commands whole with them, 6 without), so only on request
        self.template_words = template_words
        self._built: dict[str, tuple[HomeNames, Bias]] = {}

    def for_language(self, lang: str) -> Bias:
        """The prompt and hot words for a decode in `lang` (the language's own prompt alone when the style is "off")."""
        names = self.names()
        built = self._built.get(lang)
        if built is None or built[0] != names:
            built = (names, self._build(lang, names))
            self._built[lang] = built
        return built[1]

    def _build(self, lang: str, names: HomeNames) -> Bias:
        if self.style == "off":
            return unbiased(lang)
        own, sentences = _own_prompt(lang)
        script = rules(lang).script
        # a device's name in the language's script or in Latin letters (brands: "Roomba" in any language)
        devices = [n for n in names.devices if _in_script(n, script) or _in_script(n, "latin")]
        home = _unique([*room_words(lang, names.areas), *devices])
        words = command_words(lang) if self.template_words else own_words(lang)
        commands = [w for w in words if w.lower() not in {h.lower() for h in home}]
        budget = self.max_tokens - (self.count_tokens(own) if own else 0)
        home = self._fit(home, budget)
        commands = self._fit(commands, budget - self._cost(home))
        entries = (*home, *commands)
        if self.style == "hotwords":
            bias = Bias(own, _listed(entries), entries, sentences)
        elif self.style == "prompt":
            bias = Bias(_joined(own, _listed(entries)), None, entries, sentences)
        else:  # both: the home's names as hot words, the commands' words in the prompt
            bias = Bias(_joined(own, _listed(commands)), _listed(home), entries, sentences)
        return Bias(bias.prompt, bias.hotwords, entries, sentences, _sequence(sentences, entries))

    def _cost(self, words: list[str]) -> int:
        return self.count_tokens(_listed(words) or "") if words else 0

    def _fit(self, words: list[str], budget: int) -> list[str]:
        """The first words that fit `budget` tokens, listed."""
        kept: list[str] = []
        for word in words:
            if self._cost([*kept, word]) > budget:
                break
            kept.append(word)
        return kept


def _own_prompt(lang: str) -> tuple[str | None, tuple[str, ...]]:
    """The language's own prompt (Hindi's: whisper writes Devanagari, not Urdu or Latin) and its sentences."""
    own = optional_text(lang, "stt_prompt.txt")
    return own, tuple(split_sentences(own or ""))


@cache
def unbiased(lang: str) -> Bias:
    """A decode with the language's own prompt only, as with stt.bias off."""
    own, sentences = _own_prompt(lang)
    return Bias(own, None, (), sentences, _sequence(sentences, ()))


def _unique(words: Iterable[str]) -> list[str]:
    seen: set[str] = set()
    out = []
    for w in words:
        if w.strip() and w.lower() not in seen:
            seen.add(w.lower())
            out.append(w.strip())
    return out


def _listed(words: Iterable[str]) -> str | None:
    text = ", ".join(words)
    return f"{text}." if text else None


def _joined(*parts: str | None) -> str | None:
    text = " ".join(p for p in parts if p)
    return text or None
