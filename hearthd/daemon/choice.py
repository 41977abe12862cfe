""""Which one: the Bed Lamp Left or the Bed Lamp Right?" — the question a tool asks when a name fits several
devices, and reading the answer ("the left one", "Bed Lamp Right", "второй") as part of the same request."""

from __future__ import annotations

import difflib
import functools
import time
from dataclasses import dataclass

from ..agent.parsing import ToolCall
from ..locale import languages, table
from ..tools.registry import ToolResult

NAME_ARGUMENTS = ("device", "door", "scene")


@dataclass
class Choice:
    """A call held until the user says which of `candidates` they meant."""

    call: ToolCall
    argument: str
    candidates: list[str]
    lang: str
    deadline: float


def held_choice(call: ToolCall, result: ToolResult, lang: str, timeout_s: float) -> Choice | None:
    """The choice to hold when a tool answered "which one?" (code home-ambiguous)."""
    if result.data.get("code") != "home-ambiguous":
        return None
    argument = next((a for a in NAME_ARGUMENTS if a in call.arguments), None)
    candidates = [str(c) for c in result.data.get("candidates", [])]
    if argument is None or len(candidates) < 2:
        return None
    return Choice(call, argument, candidates, lang, time.monotonic() + timeout_s)


def chosen(choice: Choice, answer: str) -> str | None:
    """The candidate the answer names: a word only that candidate's name has, an ordinal, or a close match."""
    words = [w.strip(".,!?।").lower() for w in answer.split()]
    names = [c.lower().split() for c in choice.candidates]
    for i, own in enumerate(names):
        others = {w for j, n in enumerate(names) if j != i for w in n}
        distinctive = [w for w in own if w not in others]
        if distinctive and any(w in words for w in distinctive):
            return choice.candidates[i]
    for index, forms in ordinals().items():
        if index < len(choice.candidates) and any(w in forms for w in words):  # -1: "the last one"
            return choice.candidates[index]
    scored = sorted((difflib.SequenceMatcher(None, answer.lower(), c.lower()).ratio(), c) for c in choice.candidates)
    return scored[-1][1] if scored[-1][0] >= 0.75 else None


def ordinals() -> dict[int, frozenset[str]]:
    """Ordinals people answer with, in every language (locales/<lang>/answers.toml [ordinals]): "the first one",
    "второй", "दूसरी"; -1 is "the last one" ("one" alone is not one: "the third one" is the third)."""
    return _ordinals(languages())


@functools.cache
def _ordinals(langs: tuple[str, ...]) -> dict[int, frozenset[str]]:
    found: dict[int, set[str]] = {}
    for lang in langs:
        for index, words in table(lang, "answers.toml").get("ordinals", {}).items():
            found.setdefault(int(index), set()).update(w.lower() for w in words)
    return {k: frozenset(v) for k, v in found.items()}


def resolved_call(choice: Choice, name: str) -> ToolCall:
    return ToolCall(choice.call.name, {**choice.call.arguments, choice.argument: name})
