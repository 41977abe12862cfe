"""BFCL v4 (Berkeley Function Calling Leaderboard) cases and a reimplementation of its AST-matching scorer.

Data: ``BFCL_v4_<category>.json`` (one JSON object per line) with ground truth in ``possible_answer/`` of the same
name. Scoring follows the official AST checker's rules (see the README beside the data); the few places where this
module deliberately differs are marked "Deviation" below.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

_PREFIX = "BFCL_v4_"
_SUFFIX = ".json"

# BFCL's declared parameter types, as the Python types the checker demands of a decoded value.
# "any" and anything unknown (e.g. the Java/JS dialect's types) are absent: no type constraint.
_PY_TYPES: dict[str, type] = {
    "string": str,
    "integer": int,
    "float": float,
    "boolean": bool,
    "array": list,
    "tuple": list,  # JSON has no tuples; a decoded tuple is a list
    "dict": dict,
}

# Characters the official checker ignores in strings, so "April 1, 2024" and "April 1 2024" compare equal.
_STRING_NOISE = re.compile(r"[ ,./\-_*^]")


@dataclass
class BfclCase:
    """One BFCL test case: the question, the functions offered, and the acceptable calls (None: no ground truth)."""

    id: str
    category: str
    messages: list[dict[str, str]]
    functions: list[dict[str, Any]]
    answers: list[dict[str, dict[str, list[Any]]]] | None


@dataclass
class Verdict:
    """Outcome of scoring one case; ``reason`` says what was wrong and is empty when ``ok``."""

    ok: bool
    reason: str = ""


# --------------------------------------------------------------------------------------------------------- loading


def categories(root: Path) -> list[str]:
    """The categories with a question file in ``root``, sorted."""
    return sorted(p.name[len(_PREFIX) : -len(_SUFFIX)] for p in Path(root).glob(f"{_PREFIX}*{_SUFFIX}") if p.is_file())


def _read_lines(path: Path) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = []
    with path.open(encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                rows.append(json.loads(line))
            except json.JSONDecodeError as e:
                raise ValueError(f"{path}:{n}: not a JSON object ({e.msg})") from None
    return rows


def load_cases(root: Path, category: str, limit: int | None = None) -> list[BfclCase]:
    """The first ``limit`` cases (all when None) of ``category``, with ground truth where the category has any."""
    root = Path(root)
    path = root / f"{_PREFIX}{category}{_SUFFIX}"
    if not path.is_file():
        present = ", ".join(categories(root)) or "none"
        raise FileNotFoundError(f"no BFCL category {category!r} in {root} (expected {path.name}); present: {present}")
    rows = _read_lines(path)
    if limit is not None:
        rows = rows[: max(limit, 0)]
    answer_path = root / "possible_answer" / path.name
    truth: dict[str, Any] | None = None
    if answer_path.is_file():
        truth = {row["id"]: row["ground_truth"] for row in _read_lines(answer_path)}
    cases: list[BfclCase] = []
    for row in rows:
        case_id = str(row["id"])
        answers = None
        if truth is not None:
            if case_id not in truth:
                raise ValueError(f"{answer_path}: no ground truth for {case_id}")
            answers = truth[case_id]
        question = row.get("question") or [[]]
        # Only the first turn: the single-turn categories have exactly one, and multi-turn ones are not AST-scored.
        messages = [{"role": str(m["role"]), "content": str(m["content"])} for m in question[0]]
        cases.append(BfclCase(case_id, category, messages, list(row.get("function", [])), answers))
    return cases


def is_relevance_free(category: str) -> bool:
    """True when no call is the right answer for every case of ``category``."""
    return category in ("irrelevance", "live_irrelevance")


def _expects_any_call(category: str) -> bool:
    # live_relevance has no ground truth: the officially scored behaviour is "made at least one call".
    return category == "live_relevance"


# --------------------------------------------------------------------------------------------------------- schemas

# BFCL type -> JSON Schema type. "any" maps to None: the "type" keyword is left out, so anything validates.
_SCHEMA_TYPES: dict[str, str | None] = {
    "dict": "object",  # BFCL's name for a JSON object
    "float": "number",  # JSON has one number type; integer values remain valid, as the checker allows at top level
    "tuple": "array",  # a fixed-order sequence is a JSON array
    "any": None,  # no constraint
    "integer": "integer",
    "string": "string",
    "boolean": "boolean",
    "array": "array",
    "object": "object",  # already standard (the live categories use it sometimes)
    "number": "number",
    "null": "null",
}

# Keywords kept as they are; everything else (BFCL's "optional", stray annotations) is dropped because some
# validators and grammar compilers reject or choke on unknown keywords. "default" is harmless annotation.
_KEPT_KEYWORDS = (
    "description",
    "enum",
    "default",
    "format",
    "minimum",
    "maximum",
    "exclusiveMinimum",
    "exclusiveMaximum",
    "minItems",
    "maxItems",
    "minLength",
    "maxLength",
)


def _schema_type(bfcl_type: Any) -> str | list[str] | None:
    if isinstance(bfcl_type, list):  # a union: map each member; "any" (or an unknown one) makes it unconstrained
        mapped = [_schema_type(t) for t in bfcl_type]
        if any(m is None or isinstance(m, list) for m in mapped):
            return None
        names = list(dict.fromkeys(m for m in mapped if isinstance(m, str)))
        return names[0] if len(names) == 1 else names
    # Types outside the table (e.g. the Java/JS dialect's "String", "HashMap") get no constraint rather than a
    # schema that validators reject.
    return _SCHEMA_TYPES.get(bfcl_type) if isinstance(bfcl_type, str) else None


def _convert(node: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    json_type = _schema_type(node.get("type"))
    if json_type is not None:
        out["type"] = json_type
    for key in _KEPT_KEYWORDS:
        if key in node:
            out[key] = node[key]
    props = node.get("properties")
    if isinstance(props, dict):
        # Property names are data, not keywords: a parameter may well be called "type" or "format".
        out["properties"] = {name: _convert(sub) if isinstance(sub, dict) else {} for name, sub in props.items()}
        required = node.get("required")
        if isinstance(required, list):
            # A required name with no property would make an additionalProperties-false object unsatisfiable.
            out["required"] = [r for r in required if r in props]
    items = node.get("items")
    if isinstance(items, dict):
        out["items"] = _convert(items)
    extra = node.get("additionalProperties")
    if isinstance(extra, bool):
        out["additionalProperties"] = extra
    elif isinstance(extra, dict):
        out["additionalProperties"] = _convert(extra)
    return out


def to_json_schema(parameters: dict[str, Any]) -> dict[str, Any]:
    """BFCL's parameter dialect as standard JSON Schema (a new dict; the input is not changed)."""
    schema = _convert(parameters)
    if schema.get("type") == "object" and "properties" in schema:
        # Closed only at the top level: the checker rejects any argument outside the declared parameters anyway,
        # whereas nested dict parameters are often free-form or list only some of the keys the answers use.
        schema.setdefault("additionalProperties", False)
        schema.setdefault("required", [])
    return schema


def safe_name(name: str) -> str:
    """A tool name without dots, for chat templates and grammars that dislike them (``a.b`` -> ``a_b``)."""
    return name.replace(".", "_")


def resolve_name(case: BfclCase, name: str) -> str:
    """The case's real function name for ``name``, which may be its ``safe_name`` form; unknown names unchanged."""
    real = [str(f.get("name", "")) for f in case.functions]
    if name in real:  # an exact name wins over a safe form that happens to collide with it
        return name
    for candidate in real:
        if safe_name(candidate) == name:
            return candidate
    return name


def tool_schemas(case: BfclCase, safe_names: bool = False) -> list[dict[str, Any]]:
    """The case's functions as OpenAI/Qwen ``tools`` entries (names in ``safe_name`` form when asked)."""
    tools: list[dict[str, Any]] = []
    for fn in case.functions:
        name = str(fn.get("name", ""))
        tools.append(
            {
                "type": "function",
                "function": {
                    "name": safe_name(name) if safe_names else name,
                    "description": str(fn.get("description", "")),
                    "parameters": to_json_schema(fn.get("parameters") or {"type": "dict", "properties": {}}),
                },
            }
        )
    return tools


# --------------------------------------------------------------------------------------------------------- scoring


def _standardize(text: str) -> str:
    return _STRING_NOISE.sub("", text).lower().replace("'", '"')


def _norm(value: Any) -> Any:
    # Deviation: the official checker normalises strings only at the top level and as direct list items; here they
    # are normalised at any depth, so a dict value that is a list of strings is compared the same forgiving way.
    if isinstance(value, str):
        return _standardize(value)
    if isinstance(value, list | tuple):
        return [_norm(v) for v in value]
    if isinstance(value, dict):
        return {k: _norm(v) for k, v in value.items()}
    return value


def _same(a: Any, b: Any) -> bool:
    """Deep equality of normalised values in which a bool never equals a number (unlike Python's ``==``)."""
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b) and a == b
    if isinstance(a, int | float) and isinstance(b, int | float):
        return a == b  # ground truths write floats as ints (300000 for 300000.0)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    return type(a) is type(b) and a == b


def _matches(value: Any, acceptable: Any) -> bool:
    if _same(_norm(value), _norm(acceptable)):
        return True
    # A nested dict may itself be written in the answer format ({key: [acceptable values]}).
    return (
        isinstance(value, dict)
        and isinstance(acceptable, dict)
        and all(isinstance(v, list) for v in acceptable.values())
        and _dict_problem(value, acceptable) is None
    )


def _dict_problem(value: dict[str, Any], option: dict[str, list[Any]]) -> str | None:
    """Why ``value`` does not fit one acceptable dict (``{key: [acceptable values]}``), or None when it does."""
    for key, v in value.items():
        if key not in option:
            return f"unexpected key {key!r}"
        if not any(_matches(v, x) for x in option[key]):
            return f"key {key!r} has {v!r}, expected one of {option[key]!r}"
    for key, allowed in option.items():
        if key not in value and "" not in allowed:
            return f"missing key {key!r}"
    return None


def _first_type(values: list[Any]) -> type | None:
    # The type the ground truth writes this value in; "" only marks the value as omittable.
    for v in values:
        if not (isinstance(v, str) and v == ""):
            return type(v)
    return None


def _items_typed(value: list[Any], item_type: type | None, acceptable: list[Any]) -> bool:
    """The official one-level-deep item check: for some acceptable list, every item has the declared item type
    (an int is not a float here) or the type that list's items are written in."""
    if item_type is None or all(type(v) is item_type for v in value):
        return True
    for option in acceptable:
        if isinstance(option, list):
            written = _first_type(option)
            if all(type(v) is item_type or type(v) is written for v in value):
                return True
    return False


def _param_problem(name: str, spec: dict[str, Any], value: Any, acceptable: list[Any]) -> str | None:
    """Why one argument is wrong, or None when it is acceptable."""
    declared = spec.get("type")
    expected = _PY_TYPES.get(declared) if isinstance(declared, str) else None
    if isinstance(value, tuple):  # callers building calls in Python may pass tuples; JSON would give lists
        value = list(value)
    if expected is None:  # "any" or an unknown type: only the value counts
        if any(_matches(value, x) for x in acceptable):
            return None
        return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r}"
    if declared == "float" and type(value) is int:
        value = float(value)  # an integer is fine for a top-level float, as Python would convert it
    if type(value) is not expected:
        # The official checker lets a value through when it has the type the ground truth itself is written in
        # (BFCL treats such answers as variable names or literals, e.g. True for a "string" parameter); only an
        # exact (normalised) match can pass then.
        if type(value) is _first_type(acceptable):
            if any(_matches(value, x) for x in acceptable):
                return None
            return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r}"
        return f"wrong type for {name!r}: expected {declared}, got {type(value).__name__}"

    if isinstance(value, dict):
        problems = [_dict_problem(value, opt) for opt in acceptable if isinstance(opt, dict)]
        if any(p is None for p in problems):
            return None
        detail = problems[0] if problems else "no dict is acceptable"
        return f"wrong value for {name!r}: {detail}"

    if isinstance(value, list):
        items = spec.get("items")
        item_decl = items.get("type") if isinstance(items, dict) else None
        item_type = _PY_TYPES.get(item_decl) if isinstance(item_decl, str) else None
        if not _items_typed(value, item_type, acceptable):
            return f"wrong item type for {name!r}: expected items of type {item_decl}, got {value!r}"
        if item_type is dict:
            # A list of dicts: same length as an acceptable list, each dict acceptable for its position.
            for opt in acceptable:
                if (
                    isinstance(opt, list)
                    and len(opt) == len(value)
                    and all(
                        isinstance(v, dict) and isinstance(o, dict) and _dict_problem(v, o) is None
                        for v, o in zip(value, opt, strict=True)
                    )
                ):
                    return None
            return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r}"
        # The official checker turns an acceptable "" (omittable) into the empty list, so [] passes then too.
        options = [[] if isinstance(opt, str) and opt == "" else opt for opt in acceptable]
        if any(isinstance(opt, list) and _matches(value, opt) for opt in options):
            return None
        return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r} (in order)"

    if isinstance(value, str):
        if any(isinstance(x, str) and _standardize(value) == _standardize(x) for x in acceptable):
            return None
        return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r}"

    if any(_same(value, x) for x in acceptable):
        return None
    return f"wrong value for {name!r}: got {value!r}, expected one of {acceptable!r}"


def _call_problem(
    function: dict[str, Any] | None, call: tuple[str, dict[str, Any]], answer: dict[str, Any]
) -> str | None:
    """Why one (name-resolved) call does not match one ground-truth call, or None when it does."""
    expected_name, truth = next(iter(answer.items()))
    name, args = call
    if name != expected_name:
        return f"wrong function name: got {name}, expected {expected_name}"
    if function is None:
        # The ground truth names a function the case does not offer: judge by the ground truth alone.
        props: dict[str, Any] = {key: {} for key in truth}
        required: list[str] = []
    else:
        params = function.get("parameters") or {}
        props = params.get("properties") or {}
        required = list(params.get("required") or [])
    if not isinstance(args, dict):
        return f"arguments of {name} are not an object"
    for key in required:
        if key not in args:
            return f"missing required parameter {key!r}"
    for key, value in args.items():
        if key not in props:
            return f"unknown parameter {key!r}"
        if key not in truth:
            return f"unexpected parameter {key!r} (not in the ground truth)"
        spec = props[key] if isinstance(props[key], dict) else {}
        problem = _param_problem(key, spec, value, truth[key])
        if problem is not None:
            return problem
    for key, allowed in truth.items():
        if key not in args and "" not in allowed:
            return f"missing parameter {key!r}, which the ground truth requires"
    return None


def _assign(compatible: list[list[bool]], row: int, used: set[int]) -> bool:
    # Backtracking search for a one-to-one assignment; cases hold a handful of calls at most.
    if row == len(compatible):
        return True
    for col, ok in enumerate(compatible[row]):
        if ok and col not in used:
            used.add(col)
            if _assign(compatible, row + 1, used):
                return True
            used.discard(col)
    return False


def check_calls(case: BfclCase, calls: list[tuple[str, dict[str, Any]]]) -> Verdict:
    """Score the model's decoded calls (``[(name, arguments)]``, in the order made) against the case."""
    if is_relevance_free(case.category):
        if not calls:
            return Verdict(True)
        return Verdict(False, f"expected no call, got {len(calls)}: {', '.join(name for name, _ in calls)}")
    if case.answers is None:
        if _expects_any_call(case.category):
            return Verdict(True) if calls else Verdict(False, "expected a call, got none")
        raise ValueError(f"case {case.id} has no ground truth to score against")

    answers = case.answers
    if len(calls) != len(answers):
        return Verdict(False, f"wrong number of calls: got {len(calls)}, expected {len(answers)}")
    resolved = [(resolve_name(case, name), args) for name, args in calls]
    by_name = {str(f.get("name")): f for f in case.functions}

    # problems[i][j]: why call j fails ground-truth call i (None when it matches). Calls may come in any order;
    # with one call this is the plain simple/multiple check.
    problems = [[_call_problem(by_name.get(next(iter(a))), c, a) for c in resolved] for a in answers]
    if _assign([[p is None for p in row] for row in problems], 0, set()):
        return Verdict(True)
    if len(answers) == 1:
        return Verdict(False, str(problems[0][0]))
    # Deviation: the official checker pairs calls greedily; a full matching never rejects what greedy accepts.
    for i, row in enumerate(problems):
        if all(p is not None for p in row):
            expected = next(iter(answers[i]))
            same_name = [p for (n, _), p in zip(resolved, row, strict=True) if n == expected]
            detail = same_name[0] if same_name else f"no call to {expected}"
            return Verdict(False, f"expected call {i + 1} ({expected}) not matched: {detail}")
    return Verdict(False, "calls cannot be matched one-to-one with the expected calls")
