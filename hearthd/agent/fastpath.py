"""The fast intent path: sentence templates per language (hassil), matched before the model is asked."""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from importlib import resources
from typing import Any

import yaml

from ..config import SUPPORTED_LANGUAGES
from ..numbers import parse_clock
from ..tools.registry import SchemaError, ToolRegistry, UnknownTool
from .agent import Agent, Decision
from .parsing import ToolCall

# How a slot's matched text becomes an argument value; a slot that cannot be read sends the turn to the model.
SLOT_READERS: dict[str, Callable[[str, str], Any]] = {"time": parse_clock}


class FastPath:
    """Deterministic matches from locales/<lang>/sentences/*.yaml; only declared tools, validated arguments."""

    def __init__(self, registry: ToolRegistry) -> None:
        self.registry = registry

    @cached_property
    def _intents(self) -> dict[str, Any]:
        from hassil import Intents

        out = {}
        for lang in SUPPORTED_LANGUAGES:
            folder = resources.files("hearthd.locales").joinpath(lang, "sentences")
            merged: dict[str, Any] = {"language": lang, "intents": {}, "lists": {}}
            for entry in sorted(folder.iterdir(), key=lambda e: e.name) if folder.is_dir() else []:
                if entry.name.endswith(".yaml"):
                    data = yaml.safe_load(entry.read_text(encoding="utf-8")) or {}
                    merged["intents"].update(data.get("intents", {}))
                    merged["lists"].update(data.get("lists", {}))
            out[lang] = Intents.from_dict(merged)
        return out

    def match(self, text: str, lang: str) -> Decision | None:
        """A call when a template matches, names a declared tool, and every slot reads as a valid value."""
        from hassil import recognize

        intents = self._intents.get(lang)
        result = recognize(text, intents) if intents is not None else None
        if result is None or result.intent.name not in self.registry:
            return None
        arguments: dict[str, Any] = {}
        for name, entity in result.entities.items():
            reader = SLOT_READERS.get(name)
            value = reader(str(entity.text), lang) if reader else entity.value
            if value is None:
                return None
            arguments[name] = value
        try:
            arguments = self.registry.validate(result.intent.name, arguments)
        except (UnknownTool, SchemaError):
            return None
        return Decision("call", calls=[ToolCall(result.intent.name, arguments)], source="fastpath",
                        name_probs={result.intent.name: 1.0})


class Router:
    """The fast path first, then the model (loaded only when a turn needs it)."""

    def __init__(self, fast_path: FastPath | None, agent: Callable[[], Agent]) -> None:
        self.fast_path = fast_path
        self._agent = agent

    def decide(self, text: str, lang: str) -> Decision:
        if self.fast_path is not None:
            decision = self.fast_path.match(text, lang)
            if decision is not None:
                return decision
        return self._agent().decide(text, lang)
