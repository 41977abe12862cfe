"""A GBNF grammar derived from the tool declarations: the model can only write a valid call or `no_tool`.

The prompt is prefilled with `<tool_call>\\n{"name": "` so every turn starts at the one real decision, the
tool name; the grammar then admits exactly the declared names (plus `no_tool` with a short reason) and,
after each name, only arguments that match that tool's JSON Schema.
"""

from __future__ import annotations

import json
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


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a valid GBNF literal for these characters


def tool_grammar(registry: ToolRegistry) -> str:
    """Continuation of PREFILL: `<name>", "arguments": <args matching the schema>}\\n</tool_call>`."""
    converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
    variants = []
    entries = [(t.name, t.parameters) for t in registry] + [(NO_TOOL, NO_TOOL_PARAMETERS)]
    for i, (name, parameters) in enumerate(entries):
        rule = converter.visit(converter.resolve_refs(parameters, name), f"args-{i}")
        head = _gbnf_literal(f'{name}", "arguments": ')
        variants.append(f'{head} {rule} "}}\\n</tool_call>"')
    root = "root ::= " + " | ".join(f"( {v} )" for v in variants)
    return root + "\n" + converter.format_grammar()
