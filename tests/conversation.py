"""One conversation with hearthd over its text chain, for the D-Bus and MQTT tests (real components, no model)."""

from __future__ import annotations

from typing import Any

from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace

# How a call may be decided without the model: the fast path, a yes to a confirmation, an answer to "which one?"
WITHOUT_MODEL = ("fastpath", "confirmed", "chosen")


class Conversation:
    """`say` returns hearthd's reply; every call in these tests must come from a template, never the model."""

    def __init__(self, cfg: Config) -> None:
        self.components = Components(cfg)
        self.trace = Trace()
        self.pipeline = Pipeline(self.components, self.trace)

    async def say(self, text: str, lang: str | None = None) -> str:
        first = len(self.trace.events)
        reply = (await self.pipeline.run_text(text, language=lang)).reply
        calls = [e for e in self.trace.events[first:] if e.type == EventType.TOOL_CALL]
        assert all(e.source in WITHOUT_MODEL for e in calls), calls
        return reply

    def events(self, kind: EventType) -> list[dict[str, Any]]:
        return [e.payload() for e in self.trace.of_type(kind)]  # the fields as the JSON carries them

    def results(self) -> list[dict[str, Any]]:
        return self.events(EventType.TOOL_RESULT)

    async def close(self) -> None:
        await self.components.close()
