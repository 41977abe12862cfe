"""The confirmation policy: a consequential call runs only after the user says yes, and runs once.

What is consequential comes from the tool declarations (`Tool.consequential`) and the config
(`policy.confirm` adds tools, `policy.no_confirm` may relax a declaration only for non-security families),
never from the model's output: the model proposes calls, this module decides whether they wait for a yes.
The question repeats the key arguments in the user's language ("Unlock the front door?"); the answer must
be a yes word of that language; anything else, or silence past `policy.confirm_timeout_s`, cancels.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable
from dataclasses import dataclass
from functools import cache
from typing import Any

from ..agent.parsing import ToolCall
from ..locale import phrase, phrases, toml
from ..numbers import words_of
from ..phonetic import similarity
from ..spoken import say_count
from ..tools.alarms import TIME_PATTERN, spoken_time
from ..tools.registry import Tool, ToolRegistry


@dataclass
class Held:
    """Calls waiting for a yes."""

    calls: list[ToolCall]
    lang: str
    deadline: float
    guess: bool = False  # held because hearthd is not sure it understood (a weak reading), not for what it does


@cache
def _answers(lang: str) -> dict[str, tuple[str, ...]]:
    data = toml(lang, "answers.toml")
    return {k: tuple(w.lower() for w in data.get(k, [])) for k in ("yes", "no", "cancel", "stop", "off", "courtesy")}


MAX_ANSWER_WORDS = 8  # a yes or a no with its courtesies; longer is a request of its own


def answer_of(text: str, lang: str) -> str:
    """"yes", "no" or "other": the whole utterance must be yes (or no) phrases of the language, with courtesy words
    around them ("да", "जी हाँ", "yes please", "да, конечно", "no, thanks"); "yes, but unlock the back door" is not a
    yes, nor is "yes no", nor "please" alone."""
    said = " ".join(w.strip(".,!?;:।—-") for w in words_of(text.lower())).split()
    table = _answers(lang)
    joined = " ".join(said)
    for kind in ("yes", "no"):
        if joined in table[kind]:
            return kind
    if joined in table["cancel"]:
        return "no"
    if not said or len(said) > MAX_ANSWER_WORDS:
        return "other"
    found = _cover(tuple(said), _phrases(lang))
    return next(iter(found)) if len(found) == 1 else "other"


@cache
def _phrases(lang: str) -> tuple[tuple[tuple[str, ...], str], ...]:
    """Every answer phrase as words, with what it says ("yes", "no" — cancel is a no — or "" for a courtesy)."""
    table = _answers(lang)
    kinds = [("yes", "yes"), ("no", "no"), ("cancel", "no"), ("courtesy", "")]
    return tuple((tuple(p.split()), kind) for key, kind in kinds for p in table[key] if p.split())


def _cover(words: tuple[str, ...], phrases: tuple[tuple[tuple[str, ...], str], ...]) -> set[str]:
    """What the words say when they are answer phrases from end to end: {"yes"}, {"no"}, both (said both), or
    set() (some word is none of them, or only courtesies were said)."""
    @cache
    def rest(i: int) -> frozenset[frozenset[str]]:
        if i == len(words):
            return frozenset({frozenset()})
        out: set[frozenset[str]] = set()
        for words_of_phrase, kind in phrases:
            if words[i:i + len(words_of_phrase)] == words_of_phrase:
                out |= {said | ({kind} if kind else set()) for said in rest(i + len(words_of_phrase))}
        return frozenset(out)

    # a word that is both a courtesy and an answer ("конечно") is read as a courtesy beside another answer
    single = {next(iter(said)) for said in rest(0) if len(said) == 1}
    if single:
        return set(single)  # {"yes"}, {"no"}, or both: read either way, not an answer
    return {"yes", "no"} if rest(0) - {frozenset()} else set()


# How alike (hearthd.phonetic) a short utterance must sound to a stop phrase to be one: whisper base, given a word
# alone, writes something near it — "Кватит" for "хватит", "bus" or "Баскарой" for "बस"/"बस करो", "Рук, ciao" for
# "रुक जाओ". Short words that are no stop stay below ("Тихон" 0.75, "shop" 0.76, "что" 0.73, "top" 0.71).
STOP_ALIKE = 0.8


def stop_phrase(text: str, *langs: str) -> tuple[str, str] | None:
    """The stop phrase of one of `langs` ("stop", "хватит", "बस करो") the whole utterance is, as said or as whisper
    writes such a word heard alone (STOP_ALIKE), and its language; None when it asks for something else."""
    said = " ".join(w.strip(".,!?;:।") for w in words_of(text.lower())).strip()
    if not said:
        return None
    stops = [(p, lang) for lang in dict.fromkeys(langs) for p in _answers(lang)["stop"]]
    exact = [stop for stop in stops if stop[0] == said]
    if exact:
        return exact[0]
    alike = [(similarity(said, p), p, lang) for p, lang in stops]
    best = max(alike, default=None)
    return (best[1], best[2]) if best is not None and best[0] >= STOP_ALIKE else None


def stop_phrases(lang: str) -> tuple[str, ...]:
    """The stop phrases of `lang` (answers.toml), lower case."""
    return _answers(lang)["stop"]


def off_phrase(text: str, *langs: str) -> tuple[str, str] | None:
    """The "off" of one of `langs` ("turn it off", "выключи", "बंद कर दो") the whole utterance is, said exactly (its
    sound-alikes turn things on), and its language: what stops a ringing alarm besides the stop phrases."""
    said = " ".join(w.strip(".,!?;:।") for w in words_of(text.lower())).strip()
    return next(((said, lang) for lang in dict.fromkeys(langs) if said and said in _answers(lang)["off"]), None)


class ConfirmationPolicy:
    """Holds consequential calls until a yes; `clock` is injected so tests control the timeout."""

    def __init__(self, registry: ToolRegistry, extra: list[str] | None = None, timeout: float = 15.0,
                 clock: Callable[[], float] = time.monotonic, confirm_many: int = 2) -> None:
        self.registry = registry
        self.confirm_many = confirm_many
        self.extra = set(extra or [])
        self.timeout = timeout
        self.clock = clock
        self.held: Held | None = None

    def needs_confirmation(self, call: ToolCall) -> bool:
        tool = self.registry.get(call.name) if call.name in self.registry else None
        return call.name in self.extra or (tool is not None and (tool.consequential or _sensitive(tool, call))) \
            or self.too_many(call) > 0

    def too_many(self, call: ToolCall) -> int:
        """The count of things a deleting or unlocking call would act on when it is above `confirm_many` ("cancel the
        7:30 alarm" finding nine), else 0: such a call waits for a yes, and the question says the count."""
        tool = self.registry.get(call.name) if call.name in self.registry else None
        if tool is None or tool.counted is None:
            return 0
        try:
            count, _ = tool.counted(call.arguments)
        except Exception:  # arguments the tool cannot read: it refuses them itself when run
            return 0
        return count if count > self.confirm_many else 0

    def confirm_phrase(self, call: ToolCall, lang: str) -> str:
        """The question for one held call: with the count when it acts on many ("Cancel 9 alarms at 7:30?")."""
        tool = self.registry.get(call.name) if call.name in self.registry else None
        if (count := self.too_many(call)) and tool is not None and tool.counted is not None:
            return many_phrase(call, lang, count, tool.counted(call.arguments)[1])
        if tool is not None and tool.family == "home" and tool.counted is not None \
                and not (call.arguments.get("device") or call.arguments.get("door")):
            count, noun = tool.counted(call.arguments)  # a group ("open the garage doors"): the question counts them
            return many_phrase(call, lang, count, noun)
        return confirm_phrase(call, lang)

    def review(self, calls: list[ToolCall], lang: str, guess: bool = False) -> list[ToolCall] | None:
        """The calls that may run now, or None when they wait for a yes (then `question` says what to ask).
        A request with one consequential call waits as a whole: half of "lock up and power off" is not done.
        `guess`: the request was understood only approximately, so even a harmless call waits ("Did you mean…?")."""
        if not guess and not any(self.needs_confirmation(c) for c in calls):
            return calls
        self.held = Held(list(calls), lang, self.clock() + self.timeout, guess)
        return None

    def question(self, lang: str) -> str:
        assert self.held is not None
        if self.held.guess:
            return guess_phrase(self.held.calls, lang, self.registry)
        parts = [self.confirm_phrase(c, lang) for c in self.held.calls if self.needs_confirmation(c)]
        if len(parts) < len(self.held.calls):  # "unlock the door and set an alarm": the alarm is said to wait too
            parts.append(phrase(lang, "confirm.rest_waits"))
        return " ".join(parts)

    def pending(self) -> bool:
        if self.held is not None and self.clock() >= self.held.deadline:
            self.held = None  # silence past the timeout: cancelled (nothing ran)
        return self.held is not None

    def answer(self, text: str) -> tuple[str, list[ToolCall]]:
        """("yes", calls to run now) or ("no"/"other", []). The held calls are released exactly once: a second
        "yes" finds nothing to confirm."""
        held, self.held = self.held, None
        if held is None:
            return "other", []
        kind = answer_of(text, held.lang)
        return kind, (held.calls if kind == "yes" else [])


def _sensitive(tool: Tool, call: ToolCall) -> bool:
    """Whether these arguments make the call consequential (a garage door, not the blinds); a check that fails asks."""
    if tool.sensitive is None:
        return False
    try:
        return bool(tool.sensitive(call.arguments))
    except Exception:  # arguments the check cannot read: asking is the safe side
        return True


def confirm_phrase(call: ToolCall, lang: str) -> str:
    """"Unlock the front door?" — `confirm.<tool>` with the call's arguments, or the generic question."""
    table = phrases(lang)
    values: dict[str, Any] = {k: v for k, v in call.arguments.items()}
    for key in (*_of_day(f"confirm.{call.name}", call), f"confirm.{call.name}"):
        if key in table:
            try:
                return table[key].format(**values)
            except (KeyError, IndexError):
                pass
    return phrase(lang, "confirm.generic", action=call.name.replace("_", " "))


def _of_day(key: str, call: ToolCall) -> tuple[str, ...]:
    """The question's key for the day the call is limited to ("cancel all alarms for tomorrow" is not all of them),
    tried first; none when it names no day."""
    day = call.arguments.get("day")
    return (f"{key}_{day}",) if isinstance(day, str) and day.isidentifier() else ()


def guess_phrase(calls: list[ToolCall], lang: str, registry: ToolRegistry) -> str:
    """"Did you mean: switch off a light or a device (Kitchen Light)?" — each call as its tool is described in the
    user's language (locales/<lang>/tools.toml), with the values it would act on."""
    said = []
    for call in calls:
        what = registry.get(call.name).describe(lang) if call.name in registry else call.name.replace("_", " ")
        what = what.rstrip(".。।").strip()
        values = [str(v) for k, v in call.arguments.items() if k not in ("domain", "question") and v not in ("", None)]
        said.append(f"{what} ({', '.join(values)})" if values else what)
    return phrase(lang, "confirm.guess", what="; ".join(said))


def many_phrase(call: ToolCall, lang: str, count: int, noun: str) -> str:
    """"Cancel 9 alarms at 7:30?" — `confirm.<tool>_many` with the count said in words, or the generic one."""
    table = phrases(lang)
    values: dict[str, Any] = {**call.arguments, "count": say_count(count, noun, lang)}
    if re.fullmatch(TIME_PATTERN, str(values.get("time", ""))):
        values["time"] = spoken_time(str(values["time"]))  # 07:30 → 7:30, as the reply says it
    for key in (*_of_day(f"confirm.{call.name}_many", call),
                f"confirm.{call.name}_many_labeled" if "label" in call.arguments else "",
                f"confirm.{call.name}_many"):
        if key in table:
            try:
                return table[key].format(**values)
            except (KeyError, IndexError):
                pass
    return phrase(lang, "confirm.many", action=call.name.replace("_", " "), count=values["count"])
