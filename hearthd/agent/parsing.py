"""Tool-call extraction from model text: Qwen `<tool_call>` blocks (JSON or the XML `<function=…>` form), fenced
JSON, or bare JSON."""

from __future__ import annotations

import json
import re
from dataclasses import dataclass, field
from typing import Any

from ..errors import HearthdError

_THINK = re.compile(r"<think>.*?(</think>|$)", re.S)
_BLOCK = re.compile(r"<tool_call>\s*(.*?)\s*(?:</tool_call>|$)", re.S)
_FENCE = re.compile(r"```(?:json|tool_call)?\s*(.*?)\s*```", re.S)


@dataclass
class ToolCall:
    """A call the model proposed; nothing has validated or run it yet."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    textual: bool = field(default=False, compare=False)  # values are text (the XML form) until typed by the schema


class ToolCallParseError(HearthdError):
    """The model tried to call a tool but the call cannot be read."""

    code = "agent-output-malformed"
    phrase_key = "agent.invalid_call"


def _to_call(obj: Any) -> ToolCall:
    if not isinstance(obj, dict):
        raise ToolCallParseError(f"a tool call must be a JSON object, got {type(obj).__name__}")
    inner = obj.get("function")
    fn: dict[str, Any] = inner if isinstance(inner, dict) else obj
    name = fn.get("name")
    args = fn.get("arguments", fn.get("parameters", {}))
    if isinstance(args, str):  # some models write the arguments as a JSON string
        try:
            args = json.loads(args) if args.strip() else {}
        except json.JSONDecodeError as e:
            raise ToolCallParseError(f"arguments of {name!r} are not JSON: {e.msg}") from None
    if not isinstance(name, str) or not name:
        raise ToolCallParseError("a tool call has no name")
    if not isinstance(args, dict):
        raise ToolCallParseError(f"arguments of {name!r} must be an object")
    return ToolCall(name, args)


def _load(text: str) -> list[ToolCall]:
    try:
        obj = json.loads(text)
    except json.JSONDecodeError as e:
        raise ToolCallParseError(f"tool call is not valid JSON ({e.msg} at {e.pos}): {text[:80]!r}") from None
    objs = obj if isinstance(obj, list) else [obj]
    return [_to_call(o) for o in objs]


_FUNCTION = re.compile(r"<function=([^>\n]*)>\s*(.*?)\s*(?:</function>|$)", re.S)
_PARAMETER = re.compile(r"<parameter=([^>\n]+)>\n?(.*?)\n?</parameter>", re.S)


def _load_xml(block: str) -> list[ToolCall]:
    """The `<function=…>` calls of one block; values stay text until the tool's schema types them."""
    calls = []
    for name, body in _FUNCTION.findall(block):
        if not name.strip():
            raise ToolCallParseError("a tool call has no name")
        arguments = {key.strip(): value for key, value in _PARAMETER.findall(body)}
        calls.append(ToolCall(name.strip(), arguments, textual=True))
    if not calls:
        raise ToolCallParseError(f"no <function=...> in the call: {block[:80]!r}")
    return calls


def _load_block(block: str) -> list[ToolCall]:
    return _load_xml(block) if block.lstrip().startswith("<function") else _load(block)


def _looks_like_call(text: str) -> bool:
    return text.startswith(("{", "[")) and '"name"' in text


def parse_tool_calls(text: str) -> list[ToolCall]:
    """All calls in `text`; [] when it is a plain answer; ToolCallParseError when a call is broken."""
    text = _THINK.sub("", text).strip()
    if "<tool_call>" in text:
        return [c for block in _BLOCK.findall(text) for c in _load_block(block)]
    if text.startswith("<function="):
        return _load_xml(text)
    fences = [f for f in _FENCE.findall(text) if _looks_like_call(f.strip())]
    if fences:
        return [c for f in fences for c in _load(f)]
    if _looks_like_call(text):
        return _load(text)
    return []


def strip_thinking(text: str) -> str:
    """Text without a Qwen3-style <think> block (closed or cut off)."""
    return _THINK.sub("", text).strip()
