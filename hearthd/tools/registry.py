"""Tool declarations: declared once, and grammar, validation, confirmation and docs derive from them."""

from __future__ import annotations

import functools
from collections.abc import Awaitable, Callable, Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

from ..errors import HearthdError
from .schema import SchemaError, validate


@dataclass
class ToolResult:
    """What a tool did: success, data for the trace, and the spoken reply as a locale key + values."""

    ok: bool
    data: dict[str, Any] = field(default_factory=dict)
    phrase: str = ""
    values: dict[str, Any] = field(default_factory=dict)
    # placeholders said in the reply's language with the right word forms: {name: (n, noun)} → "три будильника",
    # {name: seconds} → "одна минута тридцать секунд" (hearthd.spoken)
    counts: dict[str, tuple[int, str]] = field(default_factory=dict)
    durations: dict[str, int] = field(default_factory=dict)
    dates: dict[str, str] = field(default_factory=dict)  # {name: "YYYY-MM-DD"} → "December 5", "5 декабря"
    phrases: dict[str, str] = field(default_factory=dict)  # {name: phrase key} → that phrase in the reply's language
    nouns: dict[str, str] = field(default_factory=dict)  # {name: noun} → its plural ("lights", "ламп", "लाइटें")

    def spoken_values(self, lang: str) -> dict[str, Any]:
        from ..spoken import plural_noun, say_count, say_date, say_duration

        out = dict(self.values)
        out.update({k: plural_noun(noun, lang) for k, noun in self.nouns.items()})
        out.update({k: say_count(n, noun, lang) for k, (n, noun) in self.counts.items()})
        out.update({k: say_duration(s, lang) for k, s in self.durations.items()})
        out.update({k: say_date(d, lang) for k, d in self.dates.items()})
        if self.phrases:
            from ..locale import phrase

            out.update({k: phrase(lang, key) for k, key in self.phrases.items()})
        return out


Handler = Callable[[dict[str, Any]], Awaitable[ToolResult]]


@dataclass(frozen=True)
class Tool:
    """One action hearthd can take: a name, a description for the model, a JSON Schema and a handler."""

    name: str
    description: str
    parameters: dict[str, Any]
    handler: Handler
    family: str = ""
    consequential: bool = False  # needs a spoken yes before it runs; the model cannot change this
    # Whether the model is offered this tool now (None: always). Smart-home tools are offered only when a device
    # of their kind exists: a small model chooses better among fewer tools, and a shorter catalogue is faster.
    offered: Callable[[], bool] | None = None
    # For a tool that deletes or unlocks: how many things a call would act on, and the noun they are counted by
    # ((9, "alarm")). Above policy.confirm_many the call waits for a yes, and the question says the count.
    counted: Callable[[dict[str, Any]], tuple[int, str]] | None = None
    # Consequential for some arguments only: opening a cover is harmless for blinds, not for a garage door or a gate.
    sensitive: Callable[[dict[str, Any]], bool] | None = None
    # Only reads state ("is the door locked?", "how long is left?"): what a question may lead to. Any other tool
    # changes something, and a sentence that asks is never read as asking it to.
    read_only: bool = False
    # A paired action: (the side of the pair this tool is, the other side), e.g. ("on", "off"). The words of each
    # side are in locales/<lang>/checks.toml [polarity]; a call whose other side was said, and its own not, is refused.
    sides: tuple[str, str] | None = None
    # Paired values of one argument: {argument: {value: (its side, the other side)}}, e.g. a direction up or down.
    argument_sides: dict[str, dict[str, tuple[str, str]]] | None = None
    # What a sentence must be about for a call of this tool that takes a time of day, or one the model made to remove
    # things (its sides begin with "unset"): a word list of locales/<lang>/checks.toml [topics] ("alarm": "wake me",
    # "будильник", "अलार्म"). "seven thirty" alone sets no alarm; "close all the blinds" cancels none.
    topic: str = ""

    def sides_of(self, arguments: dict[str, Any]) -> list[tuple[str, str]]:
        """The paired sides a call with `arguments` takes: the tool's own, and those of its paired argument values."""
        out = [self.sides] if self.sides else []
        for key, values in (self.argument_sides or {}).items():
            if str(arguments.get(key)) in values:
                out.append(values[str(arguments[key])])
        return out

    def describe(self, lang: str) -> str:
        """The description in `lang` from locales/<lang>/tools.toml, else the declaration's own (English) one.
        The model's prompt keeps the English one (measured that way); people read these (`hearthd tools`)."""
        return _descriptions(lang).get(self.name, self.description)

    @functools.cached_property
    def model_parameters(self) -> dict[str, Any]:
        """The schema as the model sees and fills it: values only code fills (`x-ground: code`, e.g. the area of a
        group command the sentence library read) left out, and `x-model-required` as what is required."""
        props = self.parameters.get("properties", {})
        keep = {k: v for k, v in props.items() if not (isinstance(v, dict) and v.get("x-ground") == "code")}
        if len(keep) == len(props) and "x-model-required" not in self.parameters:
            return self.parameters
        view = {k: v for k, v in self.parameters.items() if k != "x-model-required"}
        view["properties"] = keep
        view["required"] = list(self.parameters.get("x-model-required", self.parameters.get("required", [])))
        return view

    def openai_schema(self) -> dict[str, Any]:
        """The declaration in the OpenAI/Qwen `tools` format that chat templates render. Every token of the catalogue
        is in every prompt, so what only the code needs is left out of it: hearthd's own annotations (`x-…`), and
        `additionalProperties` (the grammar already never emits a key the schema lacks, and validation rejects one;
        shown on every tool it cost ~200 catalogue tokens; bench/agent.py's accuracy is the same without it)."""
        return {
            "type": "function",
            "function": {"name": self.name, "description": self.description,
                         "parameters": _shown(self.model_parameters)},
        }


_UNSHOWN = frozenset({"additionalProperties"})


def _shown(schema: Any) -> Any:
    """`schema` without its `x-` keys and what only the code enforces, at every depth."""
    if isinstance(schema, dict):
        return {k: _shown(v) for k, v in schema.items()
                if not (isinstance(k, str) and (k.startswith("x-") or k in _UNSHOWN))}
    if isinstance(schema, list):
        return [_shown(v) for v in schema]
    return schema


@functools.cache
def _descriptions(lang: str) -> dict[str, str]:
    from ..locale import table

    return {k: str(v) for k, v in table(lang, "tools.toml").get("descriptions", {}).items()}


class UnknownTool(HearthdError):
    """The model named a tool that is not declared."""

    code = "tool-unknown"
    phrase_key = "agent.invalid_call"


class ToolFailed(HearthdError):
    """A tool whose handler raised what it should not have (a library's RuntimeError, a KeyError…): the turn goes
    on with an apology for that call, and the `error` event says what it was."""

    code = "tool-failed"
    phrase_key = "error.tool_failed"


class ToolRegistry:
    """The catalogue of declared tools."""

    def __init__(self, tools: Iterable[Tool] = ()) -> None:
        self._tools: dict[str, Tool] = {}
        for tool in tools:
            self.add(tool)

    def add(self, tool: Tool) -> None:
        if tool.name in self._tools:
            raise ValueError(f"tool {tool.name!r} declared twice")
        self._tools[tool.name] = tool

    def __iter__(self) -> Iterator[Tool]:
        return iter(self._tools.values())

    def __len__(self) -> int:
        return len(self._tools)

    def __contains__(self, name: object) -> bool:
        return name in self._tools

    def get(self, name: str) -> Tool:
        try:
            return self._tools[name]
        except KeyError:
            raise UnknownTool(f"no tool named {name!r}") from None

    def validate(self, name: str, arguments: Any) -> dict[str, Any]:
        """Check a proposed call against the tool's schema; raises UnknownTool or SchemaError."""
        tool = self.get(name)
        validate(arguments, tool.parameters)
        return dict(arguments)

    def reads_only(self, name: str) -> bool:
        """Whether the tool `name` is declared read-only (an unknown name is not: it could change anything)."""
        tool = self._tools.get(name)
        return tool is not None and tool.read_only

    def offered(self) -> list[Tool]:
        """The tools the model may choose from right now (every declared tool still validates and runs)."""
        return [t for t in self if t.offered is None or t.offered()]


__all__ = ["SchemaError", "Tool", "ToolRegistry", "ToolResult", "UnknownTool"]
