"""Validation of tool arguments against the JSON Schema subset that tool declarations use."""

from __future__ import annotations

import re
from typing import Any

from ..errors import HearthdError

_TYPES: dict[str, tuple[type, ...]] = {
    "string": (str,),
    "integer": (int,),
    "number": (int, float),
    "boolean": (bool,),
    "object": (dict,),
    "array": (list,),
    "null": (type(None),),
}


class SchemaError(HearthdError):
    """Arguments that do not match a tool's schema; `path` says where."""

    code = "tool-arguments-invalid"
    phrase_key = "agent.invalid_call"

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path or '$'}: {message}")
        self.path = path


def validate(value: Any, schema: dict[str, Any], path: str = "") -> None:
    """Raise SchemaError unless `value` satisfies `schema` (type, enum, const, pattern, bounds, properties)."""
    if "const" in schema and value != schema["const"]:
        raise SchemaError(f"must be {schema['const']!r}", path)
    if "enum" in schema and value not in schema["enum"]:
        raise SchemaError(f"must be one of {schema['enum']}", path)
    typ = schema.get("type")
    if typ is not None:
        allowed = typ if isinstance(typ, list) else [typ]
        ok = any(
            isinstance(value, _TYPES[t]) and not (isinstance(value, bool) and t in ("integer", "number"))
            for t in allowed
        )
        if not ok:
            raise SchemaError(f"expected {' or '.join(allowed)}, got {type(value).__name__}", path)
    if isinstance(value, str):
        if "minLength" in schema and len(value) < schema["minLength"]:
            raise SchemaError(f"shorter than {schema['minLength']}", path)
        if "maxLength" in schema and len(value) > schema["maxLength"]:
            raise SchemaError(f"longer than {schema['maxLength']}", path)
        if "pattern" in schema and not re.search(schema["pattern"], value):
            raise SchemaError(f"does not match {schema['pattern']}", path)
    if isinstance(value, int | float) and not isinstance(value, bool):
        if "minimum" in schema and value < schema["minimum"]:
            raise SchemaError(f"below the minimum {schema['minimum']}", path)
        if "maximum" in schema and value > schema["maximum"]:
            raise SchemaError(f"above the maximum {schema['maximum']}", path)
    if isinstance(value, dict):
        props: dict[str, Any] = schema.get("properties", {})
        for req in schema.get("required", []):
            if req not in value:
                raise SchemaError(f"missing required argument {req!r}", path)
        for key, item in value.items():
            if key in props:
                validate(item, props[key], f"{path}.{key}" if path else key)
            elif schema.get("additionalProperties", True) is False:
                raise SchemaError(f"unexpected argument {key!r}", path)
    if isinstance(value, list) and "items" in schema:
        for i, item in enumerate(value):
            validate(item, schema["items"], f"{path}[{i}]")
