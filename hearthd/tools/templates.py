"""What a device sends over MQTT, read safely: Home Assistant's templates in a sandboxed Jinja2 (expressions,
`if` and `set` only, bounded operators and filters) and numbers that are finite and of a sane size.

A device's discovery config is text from the network: nothing in it may run code, allocate without limit or make
hearthd hang. Used by the catalogue (state, availability) and by the tools (command payloads).
"""

from __future__ import annotations

import contextlib
import functools
import json
import math
from typing import Any

from .discovery import MAX_JSON_DEPTH, Entity, UnsafeJson, load_json

TEMPLATE_MAX_CHARS = 2000  # a template longer than this is no device's: refused
RENDERED_MAX_CHARS = 4096  # nor is a rendering longer than this
# Filters of Jinja2 and of Home Assistant that device templates use, each bounded in time and memory by its input.
_FILTERS = ("int", "float", "round", "lower", "upper", "trim", "string", "default", "d", "abs", "length", "count",
            "bool", "title", "capitalize", "first", "last", "min", "max", "join", "tojson", "to_json", "from_json",
            "is_defined", "list", "float_or_none")


class _Environment:
    """A sandboxed Jinja2 environment for templates that arrive over MQTT: expressions, `if` and `set` only (no
    loops, macros, calls or includes), a fixed set of filters, and operators that could allocate without limit
    (`'x' * 10**9`, `9 ** 9 ** 9`, `'%999999999d' % 1`) refused."""

    _env: Any = None

    @classmethod
    def get(cls) -> Any:
        if cls._env is None:
            from jinja2 import StrictUndefined
            from jinja2.sandbox import ImmutableSandboxedEnvironment, SecurityError

            class Sandbox(ImmutableSandboxedEnvironment):
                intercepted_binops = frozenset({"*", "**", "%", "//"})

                def call_binop(self, context: Any, operator: str, left: Any, right: Any) -> Any:
                    if operator == "%" and isinstance(left, str):
                        raise SecurityError("string formatting is not allowed")
                    if operator == "**" and isinstance(left, int) and isinstance(right, int) and abs(left) > 1 \
                            and (right > 64 or left.bit_length() * right > 8192):
                        raise SecurityError("result too large")
                    if operator == "*":
                        for seq, n in ((left, right), (right, left)):
                            if isinstance(seq, (str, list, tuple)) and isinstance(n, int) \
                                    and len(seq) * n > RENDERED_MAX_CHARS:
                                raise SecurityError("result too large")
                    return super().call_binop(context, operator, left, right)

            def finalize(value: Any) -> Any:
                if isinstance(value, (dict, list)):
                    return json.dumps(value, ensure_ascii=False)
                return "" if value is None else value

            def is_defined(value: Any) -> Any:
                if isinstance(value, StrictUndefined):
                    raise ValueError("undefined")
                return value

            def float_or_none(value: Any) -> Any:
                return number(str(value))

            env = Sandbox(undefined=StrictUndefined, finalize=finalize, autoescape=False)
            dumps = lambda value: json.dumps(value, ensure_ascii=False)  # noqa: E731 - HA's to_json: no escaping
            extra: dict[str, Any] = {"tojson": dumps, "to_json": dumps, "from_json": load_json,
                                     "is_defined": is_defined, "float_or_none": float_or_none}
            env.filters.update(extra)
            env.filters = {k: v for k, v in env.filters.items() if k in _FILTERS}
            env.globals.clear()
            cls._env = env
        return cls._env


_REFUSED_NODES = ("For", "Macro", "CallBlock", "FilterBlock", "Call", "Import", "FromImport", "Include", "Extends",
                  "Block", "Scope", "ScopedEvalContextModifier")


@functools.lru_cache(maxsize=256)
def _compiled(template: str) -> Any:
    """The template compiled, or None when it is too long, does not parse or uses what the sandbox refuses."""
    if len(template) > TEMPLATE_MAX_CHARS:
        return None
    from jinja2 import nodes

    env = _Environment.get()
    try:
        tree = env.parse(template)
        refused = tuple(getattr(nodes, name) for name in _REFUSED_NODES)
        if any(True for _ in tree.find_all(refused)):
            return None
        for node in tree.find_all((nodes.Filter, nodes.Test)):
            if isinstance(node, nodes.Filter) and node.name not in env.filters:
                return None
            if isinstance(node, nodes.Test) and node.name not in env.tests:
                return None
        return env.from_string(tree)
    except Exception:  # TemplateSyntaxError, and anything odd a hostile template makes the parser do
        return None


def render_template(template: str, **variables: Any) -> str | None:
    """`template` rendered in the sandbox with `variables`; None when it cannot be (refused, an undefined name,
    an error, a result over RENDERED_MAX_CHARS)."""
    compiled = _compiled(template)
    if compiled is None:
        return None
    try:
        out = compiled.render(**variables)
    except Exception:  # UndefinedError, SecurityError, TypeError, OverflowError…: the template does not apply
        return None
    return out if isinstance(out, str) and len(out) <= RENDERED_MAX_CHARS else None


def render_value_template(template: str, payload: str, max_depth: int = MAX_JSON_DEPTH) -> str | None:
    """A Home Assistant value template (`{{ value_json.a.b }}`, `{{ value | int }}`, `{% if %}`…) applied to a
    payload: `value` is the payload, `value_json` its JSON when it is JSON (bounded: no deep nesting, no
    non-finite numbers). None when the template does not apply (then the raw payload is used)."""
    variables: dict[str, Any] = {"value": payload}
    with contextlib.suppress(ValueError, UnsafeJson):  # not JSON: `value_json` is undefined, as in Home Assistant
        variables["value_json"] = load_json(payload, max_depth)
    return render_template(template, **variables)


def render_command(entity: Entity, template_key: str, value: Any, **variables: Any) -> str | None:
    """The payload of a command: `value` through the entity's `template_key` template when it has one
    (Zigbee2MQTT's lock: `{"state": "{{ value }}"}`), else `value` as text; None when the template fails."""
    template = entity.config.get(template_key)
    if not isinstance(template, str) or not template.strip():
        return str(value)
    return render_template(template, value=value, **variables)



def number(text: str) -> float | None:
    """A finite number from a state payload: "inf", "nan", "1e999" and 300-digit numbers are no reading."""
    if len(text) > 64:
        return None
    try:
        n = float(text)
    except (TypeError, ValueError):
        return None
    return n if math.isfinite(n) and abs(n) < 1e15 else None
