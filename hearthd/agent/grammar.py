"""Constrained decoding derived from the tool declarations: the model can only write a valid call or `no_tool`.

The prompt is prefilled up to the tool's name, in the model's own call syntax (`dialect.py`), so every turn
starts at the one real decision, the tool name. It is taken from the next-token probabilities over the declared
names (plus `no_tool`), so an undeclared name cannot come out; the name and the syntax around the arguments
are then fed as prompt, and only the argument values are decoded, under a GBNF grammar made from that tool's
JSON Schema.
"""

from __future__ import annotations

from typing import Any

from ..tools.registry import ToolRegistry
from .dialect import Dialect, JsonDialect

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


def arguments_grammars(registry: ToolRegistry, dialect: Dialect | None = None) -> dict[str, str]:
    """Per tool, a grammar for its arguments alone: after the name is chosen by probability, only the values are
    decoded (the syntax around them is prompt), under that tool's schema."""
    dialect = dialect or JsonDialect()
    return {tool.name: dialect.grammar(tool) for tool in registry}
