"""The spoken suites' home as the router tests use it: one conversation's open question, and deciding a sentence
there (the fixture, `living_room`, is in conftest.py: the home with the microphone in the living room)."""

from __future__ import annotations

from typing import Any

from hearthd.agent.agent import Decision
from hearthd.daemon.components import Components


class Asked:
    """One conversation's open question (none to begin with), as the router keeps it per conversation."""

    pending: Any = None


def decide(components: Components, text: str, lang: str) -> Decision:
    """The router's decision on `text`, said in a fresh conversation."""
    return components.router().decide(text, lang, Asked())
