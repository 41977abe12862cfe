"""The call syntax a model was trained on, as one object the agent asks for its prefill, names, grammar and parser.

Qwen2.5 and Qwen3 write `<tool_call>\\n{"name": …, "arguments": {…}}\\n</tool_call>` (JSON); Qwen3.5 and its
fine-tunes (BotPsy) write `<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n
</tool_call>` (XML). Which one is read from the GGUF's chat template (`Capabilities.dialect`). In both, the
prompt is prefilled up to the tool name, the name is chosen by probability over the model's own tokens for
each declared name, and only argument values are decoded, under a grammar made from the tool's JSON Schema.
"""

from __future__ import annotations

import json
from typing import Any

from llama_cpp.llama_grammar import SchemaConverter

from ..tools.registry import Tool


def decodable(parameters: dict[str, Any]) -> dict[str, Any]:
    """The schema the model may fill: optional free-text values (`x-ground: words`, e.g. an alarm's label) are
    taken only from what a sentence template read, never decoded; a small model writes "7:30 alarm" as a label."""
    props = parameters.get("properties", {})
    required = set(parameters.get("required", []))
    keep = {k: v for k, v in props.items()
            if k in required or not (isinstance(v, dict) and v.get("x-ground") in ("words", "date"))}
    return {**parameters, "properties": keep} if len(keep) != len(props) else parameters


class Dialect:
    """One call syntax. `prefill` ends right before the tool's name; `head(name)` is fed once the name is
    chosen; the model decodes the arguments under `grammar(tool)`; `tail` closes the call."""

    name = ""
    prefill = ""
    tail = ""

    def name_pieces(self, name: str) -> list[str]:
        """The text after the prefill that names the tool, up to where the name has surely ended, in the pieces
        it is tokenised in (the model's tokens for each declared name are followed one by one)."""
        raise NotImplementedError

    def head(self, name: str) -> str:
        raise NotImplementedError

    def grammar(self, tool: Tool) -> str:
        raise NotImplementedError

    def arguments_text(self, arguments: dict[str, Any]) -> str:
        """Arguments read by code written as the model would have decoded them."""
        raise NotImplementedError

    def call_text(self, name: str, decoded: str) -> str:
        """The whole call: prefill, head, what was decoded (or written for it), tail."""
        return self.prefill + self.head(name) + decoded + self.tail


class JsonDialect(Dialect):
    """`<tool_call>\\n{"name": "NAME", "arguments": {…}}\\n</tool_call>` (Qwen2.5, Qwen3)."""

    name = "json"
    prefill = '<tool_call>\n{"name": "'
    tail = "}\n</tool_call>"

    def name_pieces(self, name: str) -> list[str]:
        return [name, '"']  # the quote alone: in the prompt it merges with what follows (`", "`)

    def head(self, name: str) -> str:
        return f'{name}", "arguments": '

    def grammar(self, tool: Tool) -> str:
        converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        rule = converter.visit(converter.resolve_refs(decodable(tool.model_parameters), tool.name), "args")
        return f"root ::= {rule}\n" + converter.format_grammar()

    def arguments_text(self, arguments: dict[str, Any]) -> str:
        return json.dumps(arguments)


def _gbnf_literal(text: str) -> str:
    return json.dumps(text)  # a JSON string literal is a GBNF literal (\n, \", \\ escapes)


def _is_text(schema: Any) -> bool:
    """A value written as raw text between the parameter tags (a string, or an enum of strings)."""
    if not isinstance(schema, dict):
        return False
    if "enum" in schema:
        return all(isinstance(v, str) for v in schema["enum"]) and bool(schema["enum"])
    return schema.get("type") == "string"


class XmlDialect(Dialect):
    """`<tool_call>\\n<function=NAME>\\n<parameter=KEY>\\nVALUE\\n</parameter>\\n</function>\\n</tool_call>`
    (Qwen3.5, BotPsy). Strings are raw text on one line (so they cannot contain `\\n</parameter>`); numbers,
    booleans and enums are their text; objects and arrays are JSON."""

    name = "xml"
    prefill = "<tool_call>\n<function"
    tail = "\n</tool_call>"

    def name_pieces(self, name: str) -> list[str]:
        return [f"={name}>\n"]

    def head(self, name: str) -> str:
        return f"={name}>\n"

    def grammar(self, tool: Tool) -> str:
        params = decodable(tool.model_parameters)
        converter = SchemaConverter(prop_order={}, allow_fetch=False, dotall=False, raw_pattern=False)
        params = converter.resolve_refs(params, tool.name)
        props: dict[str, Any] = params.get("properties", {}) or {}
        required = set(params.get("required", []))
        # Required parameters first, each in declared order: every call starts with what it cannot do without.
        order = [k for k in props if k in required] + [k for k in props if k not in required]
        parts = []
        for key in order:
            value = self._value_rule(converter, props[key], f"{tool.name}-{key}")
            block = converter._add_rule(f"param-{tool.name}-{key}", " ".join(
                [_gbnf_literal(f"<parameter={key}>\n"), value, _gbnf_literal("\n</parameter>\n")]))
            parts.append(block if key in required else f"{block}?")
        body = " ".join([*parts, _gbnf_literal("</function>")])
        return f"root ::= {body}\n" + converter.format_grammar()

    @staticmethod
    def _value_rule(converter: SchemaConverter, schema: Any, name: str) -> str:
        if not _is_text(schema):
            return str(converter.visit(schema if isinstance(schema, dict) else {}, f"value-{name}"))
        if "enum" in schema:
            return "(" + " | ".join(_gbnf_literal(v) for v in schema["enum"]) + ")"
        if "const" in schema and isinstance(schema["const"], str):
            return _gbnf_literal(schema["const"])
        if "pattern" in schema:
            converter._raw_pattern = True  # the pattern's text itself, not a quoted JSON string
            try:
                return str(converter._visit_pattern(schema["pattern"], f"value-{name}"))
            finally:
                converter._raw_pattern = False
        low = max(1, int(schema.get("minLength", 1)))
        high = schema.get("maxLength")
        count = f"{{{low},{int(high)}}}" if isinstance(high, int) and high >= low else f"{{{low},}}"
        return converter._add_rule(f"value-{name}", f"[^\\n]{count}")

    def arguments_text(self, arguments: dict[str, Any]) -> str:
        blocks = []
        for key, value in arguments.items():
            text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
            blocks.append(f"<parameter={key}>\n{text}\n</parameter>\n")
        return "".join(blocks) + "</function>"


def typed_arguments(arguments: dict[str, Any], parameters: dict[str, Any]) -> dict[str, Any]:
    """Arguments written as text (the XML form) typed as the tool's schema says."""
    props = parameters.get("properties", {}) if isinstance(parameters, dict) else {}
    return {key: typed_value(value, props.get(key)) for key, value in arguments.items()}


def typed_value(text: Any, schema: Any) -> Any:
    """A parameter's text as its schema's type; text that does not parse stays text (validation refuses it)."""
    if not isinstance(text, str) or _is_text(schema) or not isinstance(schema, dict):
        return text
    types = schema.get("type")
    allowed = types if isinstance(types, list) else [types] if types else []
    raw = text.strip()
    if "string" in allowed and not raw:
        return text
    try:
        value = json.loads(raw)
    except json.JSONDecodeError:
        return text
    if "integer" in allowed and isinstance(value, float) and value.is_integer():
        return int(value)
    return value


DIALECTS: dict[str, Dialect] = {"json": JsonDialect(), "xml": XmlDialect()}


def dialect_named(name: str) -> Dialect:
    return DIALECTS[name]
