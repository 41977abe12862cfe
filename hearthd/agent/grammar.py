"""Constrained decoding derived from the tool declarations: the model can only write a valid call or `no_tool`.

The prompt is prefilled with `<tool_call>\\n{"name": "` so every turn starts at the one real decision, the
tool name. It is taken from the next-token probabilities over the declared names (plus `no_tool`), so an
undeclared name cannot come out; the name and the JSON around the arguments are then fed as prompt, and only
the argument values are decoded, under a GBNF grammar made from that tool's JSON Schema.
"""

from __future__ import annotations

from typing import Any

from llama_cpp.llama_grammar import SchemaConverter

from ..tools.registry import ToolRegistry

PREFILL = '<tool_call>\n{"name": "'
NO_TOOL = "no_tool"
NO_TOOL_DESCRIPTION = (
    "Use this when no other tool fits the request (general questions, chit-chat, facts, anything the "
    "other tools cannot do). Give a short reason."
)
NO_TOOL_PARAMETERS: dict[str, Any] = {
    "type": "object",
    "properties": {"reason": {"type": "string"}},  # length bounded by max_tokens
    "required": ["reason"],
    "additionalProperties": False,
}


def no_tool_schema() -> dict[str, Any]:
    """The abstention pseudo-tool as the chat template sees it."""
    return {"type": "function",
            "function": {"name": NO_TOOL, "description": NO_TOOL_DESCRIPTION, "parameters": NO_TOOL_PARAMETERS}}


def arguments_head(name: str) -> str:
    """What follows PREFILL once the tool is chosen: the name and the arguments key, fed as prompt, not decoded."""
    return f'{name}", "arguments": '


CALL_TAIL = "}\n</tool_call>"


def decodable(parameters: dict[str, Any]) -> dict[str, Any]:
    """The schema the model may fill: optional free-text values (`x-ground: words`, e.g. an alarm's label) are
    taken only from what a sentence template read, never decoded; a small model writes "7:30 alarm" as a label."""
    props = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    keep = {k: v for k, v in props.items()
            if k in required or not (isinstance(v, dict) and v.get("x-ground") in ("words", "date"))}
    return {**parameters, "properties": keep} if len(keep) != len(props) else parameters


def arguments_grammars(registry: ToolRegistry) -> dict[str, str]:
    """Per tool, a grammar for its arguments object alone: after the name is chosen by probability, only the
    values are decoded (the literal JSON around them is prompt), under that tool's schema."""
    out = {}
    for tool in registry:
        converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        rule = converter.visit(converter.resolve_refs(decodable(tool.parameters), tool.name), "args")
        out[tool.name] = f"root ::= {rule}\n" + converter.format_grammar()
    return out
