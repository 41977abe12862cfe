"""Validation of tool arguments against their JSON Schema, by `jsonschema`, with hearthd's own error wording.

Two rules are hearthd's, not the library's defaults: an integer is an int (5.0 is refused, as a bool is), and the
one error reported is the first a reader meets going through the arguments in their order (the node's own
constraints, then its missing required ones, then each argument), said as `path: what is wrong`. hearthd's own
keywords (`x-ground`, `x-model-required`) are unknown to every draft and so ignored; `format` is an annotation
only (no format checker is given), and schemas are not checked against the meta-schema.
"""

from __future__ import annotations

from typing import Any

import jsonschema
from jsonschema.exceptions import ValidationError

from ..errors import HearthdError

_Draft = jsonschema.Draft7Validator  # `items` as a schema, as the declarations and the BFCL conversion write it
_STRICT_INTEGERS = _Draft.TYPE_CHECKER.redefine(
    "integer", lambda _checker, value: isinstance(value, int) and not isinstance(value, bool))
_Validator = jsonschema.validators.extend(_Draft, type_checker=_STRICT_INTEGERS)

# The order the constraints of one node are reported in; an argument's own errors come after all of these.
_RANK = {word: i for i, word in enumerate(
    ("const", "enum", "type", "minLength", "maxLength", "pattern", "minimum", "maximum", "required"))}
_CHILD = len(_RANK)

# Validators built once per schema (a declaration's schema lives as long as the tool): id -> (schema, validator).
_VALIDATORS: dict[int, tuple[dict[str, Any], Any]] = {}


class SchemaError(HearthdError):
    """Arguments that do not match a tool's schema; `path` says where."""

    code = "tool-arguments-invalid"
    phrase_key = "agent.invalid_call"

    def __init__(self, message: str, path: str = "") -> None:
        super().__init__(f"{path or '$'}: {message}")
        self.path = path


def validate(value: Any, schema: dict[str, Any], path: str = "") -> None:
    """Raise SchemaError unless `value` satisfies `schema`."""
    errors = list(_validator(schema).iter_errors(value))
    if errors:
        first = min(errors, key=lambda e: _order(e, value))
        raise SchemaError(_message(first), _path(path, first))


def _validator(schema: dict[str, Any]) -> Any:
    cached = _VALIDATORS.get(id(schema))
    if cached is None or cached[0] is not schema:
        if len(_VALIDATORS) > 4096:
            _VALIDATORS.clear()
        cached = _VALIDATORS[id(schema)] = (schema, _Validator(schema))
    return cached[1]


def _extras(error: ValidationError) -> list[str]:
    props = error.schema.get("properties", {}) if isinstance(error.schema, dict) else {}
    return [k for k in error.instance if k not in props]


def _order(error: ValidationError, instance: Any) -> list[tuple[int, int]]:
    """Where `error` comes going through the arguments (`instance`) depth first, in their order."""
    key: list[tuple[int, int]] = []
    for step in error.absolute_path:
        keys = list(instance) if isinstance(instance, dict) else list(range(len(instance)))
        key.append((_CHILD, keys.index(step) if step in keys else 0))
        instance = instance[step]
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        extras = _extras(error)
        key.append((_CHILD, list(error.instance).index(extras[0]) if extras else 0))
    else:
        key.append((_RANK.get(str(error.validator), _CHILD + 1), 0))
    return key


def _message(error: ValidationError) -> str:
    word, want, value = str(error.validator), error.validator_value, error.instance
    if word == "const":
        return f"must be {want!r}"
    if word == "enum":
        return f"must be one of {want}"
    if word == "type":
        allowed = want if isinstance(want, list) else [want]
        return f"expected {' or '.join(allowed)}, got {type(value).__name__}"
    if word in ("minLength", "maxLength", "pattern", "minimum", "maximum"):
        return {"minLength": "shorter than {}", "maxLength": "longer than {}", "pattern": "does not match {}",
                "minimum": "below the minimum {}", "maximum": "above the maximum {}"}[word].format(want)
    if word == "required":
        missing = [r for r in want if r not in value]
        return f"missing required argument {missing[0]!r}" if missing else error.message
    if word == "additionalProperties":
        extras = _extras(error)
        return f"unexpected argument {extras[0]!r}" if extras else error.message
    return error.message


def _path(base: str, error: ValidationError) -> str:
    out = base
    for step in error.absolute_path:
        out = f"{out}[{step}]" if isinstance(step, int) else f"{out}.{step}" if out else str(step)
    return out
