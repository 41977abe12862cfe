"""Specific declines: a request of a kind hearthd cannot serve (the weather, the news, shopping, messages, calls, chat,
general knowledge) is told why in the user's language ("I can't check the weather: I have no internet connection.")
instead of the generic "Sorry, I can't help with that".

The kinds and their words are locales/<lang>/declines.toml (English's count too: English words turn up in Hindi and
Russian speech). A sentence that also names anything hearthd does (an alarm, a light, music: the file's `keep`) is
not of such a kind: "set an alarm for 7 to watch the news" is an alarm. Nothing here makes or changes a call: it
chooses what a decline says, and (DeclineFirst) declines by code a request the model would have been asked alone.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from functools import cache
from typing import Any

from ..locale import read_with, table
from .agent import Agent, Decision
from .checks import Pattern, _anywhere, _patterns, _tokens, about_alarm
from .split import split_requests


@cache
def _tables(lang: str) -> tuple[tuple[Pattern, ...], tuple[tuple[str, tuple[Pattern, ...]], ...]]:
    """`lang`'s words with English's: what keeps a sentence in scope, and each kind's words, in the file's order."""
    sources = [table(source, "declines.toml") for source in read_with(lang)]
    keep = tuple(p for t in sources for p in _patterns(t.get("keep", [])))
    kinds: dict[str, list[Pattern]] = {}
    for t in sources:
        for kind, words in t.get("kinds", {}).items():
            kinds.setdefault(kind, []).extend(_patterns(words))
    return keep, tuple((k, tuple(v)) for k, v in kinds.items())


def decline_kind(text: str, lang: str) -> str:
    """The out-of-scope kind the sentence names ("weather", "news", …), or "" when it names none, or also names
    something hearthd does (an alarm, a reminder, a device, music)."""
    tokens = _tokens(text)
    keep, kinds = _tables(lang)
    if not tokens or _anywhere(tokens, keep) or about_alarm(text, lang):
        return ""
    return next((kind for kind, words in kinds if _anywhere(tokens, words)), "")


def names_known(text: str, lang: str) -> bool:
    """Whether the sentence names something hearthd does (an alarm, a light, music: the declines' `keep` words)."""
    keep, _ = _tables(lang)
    tokens = _tokens(text)
    return bool(tokens) and _anywhere(tokens, keep)


def decline_phrase(text: str, lang: str) -> str:
    """The phrase key of the specific decline for `text` ("decline.weather"), or "" for the generic one."""
    kind = decline_kind(text, lang)
    return f"decline.{kind}" if kind else ""


GENERIC_REFUSAL = "agent.cannot_help"  # "Sorry, I can't help with that": for requests that name nothing hearthd knows


def refusal_phrase(decision: Decision, text: str, lang: str) -> str:
    """The phrase key an abstention is answered with: the decision's own (a tool's "no such timer", "too many
    calls"), the specific decline for the kind of request (`decline_phrase`), else GENERIC_REFUSAL."""
    return decision.say or decline_phrase(text, lang) or GENERIC_REFUSAL


class DeclineFirst:
    """Stands before the model: a single request that clearly names an out-of-scope kind (and nothing hearthd does)
    is declined by code, so "what's the weather" costs no model turn. The Router asks it only what its templates did
    not read; several requests in one sentence, and every follow-up answer (`only`), go to the model as before."""

    def __init__(self, agent: Callable[[], Agent]) -> None:
        self._agent = agent

    def decide(self, text: str, lang: str, now: datetime | None = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        kind = decline_kind(text, lang) if only is None and len(split_requests(text, lang)) == 1 else ""
        if kind:
            return Decision("abstain", reason=f"out of scope: {kind}", source="fastpath", say=f"decline.{kind}")
        if among:
            return self._agent().decide(text, lang, now, only, among=among)
        return self._agent().decide(text, lang, now, only)

    def __getattr__(self, name: str) -> Any:  # the model's registry, prepare(), …: the agent's own
        return getattr(self._agent(), name)
