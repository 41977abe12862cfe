"""BFCL loader and AST scorer: hand-written rule cases, plus self-checks on the real sample data when present."""

from __future__ import annotations

import copy
import json
import os
from collections import Counter
from pathlib import Path
from typing import Any

import pytest

from hearthd.evaluation.bfcl import (
    BfclCase,
    categories,
    check_calls,
    is_relevance_free,
    load_cases,
    resolve_name,
    safe_name,
    to_json_schema,
    tool_schemas,
)

DATA = Path(os.environ.get("HEARTHD_BFCL_DIR", "/work/shared/eval/bfcl"))
needs_data = pytest.mark.skipif(not (DATA / "BFCL_v4_simple_python.json").is_file(), reason=f"no BFCL data in {DATA}")

# --------------------------------------------------------------------------------------------- hand-written cases

AREA: dict[str, Any] = {
    "name": "geo.area",
    "description": "Area of a shape.",
    "parameters": {
        "type": "dict",
        "properties": {
            "shape": {"type": "string", "description": "Shape name."},
            "size": {"type": "integer"},
            "mode": {"type": "string"},
            "scale": {"type": "float"},
            "exact": {"type": "boolean", "optional": True, "default": False},
            "unit": {"type": "string", "default": "m"},
            "title": {"type": "string"},
            "points": {"type": "array", "items": {"type": "integer"}},
            "tags": {"type": "array", "items": {"type": "string"}},
            "origin": {"type": "dict", "properties": {"x": {"type": "integer"}, "label": {"type": "string"}}},
            "pair": {"type": "tuple", "items": {"type": "float"}},
            "rows": {"type": "array", "items": {"type": "dict"}},
            "data": {"type": "any"},
            "venue": {"type": "string"},
            "hands": {"type": "dict"},
            "note": {"type": "string"},  # offered by the function, absent from the ground truth
        },
        "required": ["shape", "size"],
    },
}
VOLUME: dict[str, Any] = {
    "name": "geo.volume",
    "description": "Volume of a solid.",
    "parameters": {"type": "dict", "properties": {"solid": {"type": "string"}}, "required": ["solid"]},
}
AREA_TRUTH: dict[str, list[Any]] = {
    "shape": ["circle"],
    "size": [5],
    "mode": ["fast"],  # not required by the function, but the ground truth has no "" for it
    "scale": ["", 2.0],
    "exact": ["", True],
    "unit": ["", "m"],
    "title": ["", "It's New-York"],
    "points": ["", [1, 2, 3]],
    "tags": ["", ["Red Apple", "b"]],
    "origin": ["", {"x": [0], "label": ["", "Home"]}],
    "pair": ["", [1.5, 2.0]],
    "rows": ["", [{"k": ["a"]}, {"k": ["b"]}]],
    "data": ["", "my_data"],
    "venue": ["", True],  # a ground truth written in another type than declared (as simple_python_307 is)
    "hands": ["", {"Alex": [["A of spades", "K of spades"]]}],
}
BASE: dict[str, Any] = {"shape": "circle", "size": 5, "mode": "fast"}
DROP = object()  # marks a key to remove from BASE


def _case(
    answers: list[dict[str, dict[str, list[Any]]]] | None,
    functions: list[dict[str, Any]] | None = None,
    category: str = "simple_python",
) -> BfclCase:
    return BfclCase("t_0", category, [{"role": "user", "content": "?"}], functions or [AREA], answers)


SIMPLE = _case([{"geo.area": AREA_TRUTH}])

# (label, argument changes on top of BASE, ok, substring of the reason)
RULES: list[tuple[str, dict[str, Any], bool, str]] = [
    ("base call", {}, True, ""),
    ("missing required", {"shape": DROP}, False, "missing required parameter 'shape'"),
    ("unknown param", {"colour": "red"}, False, "unknown parameter 'colour'"),
    ("known param not in ground truth", {"note": "hi"}, False, "unexpected parameter 'note'"),
    ("omitted key without ''", {"mode": DROP}, False, "missing parameter 'mode'"),
    ("omitted key with '' allowed", {"unit": DROP, "exact": DROP}, True, ""),
    ("explicit '' for an omittable string", {"unit": ""}, True, ""),
    ("bool is not an int", {"size": True}, False, "wrong type for 'size': expected integer, got bool"),
    ("5.0 is not an int", {"size": 5.0}, False, "wrong type for 'size': expected integer, got float"),
    ("numeric string is not an int", {"size": "5"}, False, "wrong type for 'size'"),
    ("wrong int", {"size": 6}, False, "wrong value for 'size'"),
    ("int accepted for a float", {"scale": 2}, True, ""),
    ("float accepted for a float", {"scale": 2.0}, True, ""),
    ("wrong float", {"scale": 2.5}, False, "wrong value for 'scale'"),
    ("bool is not a float", {"scale": True}, False, "wrong type for 'scale'"),
    ("int is not a bool", {"exact": 1}, False, "wrong type for 'exact'"),
    ("bool value", {"exact": True}, True, ""),
    ("wrong bool", {"exact": False}, False, "wrong value for 'exact'"),
    ("string case", {"shape": "CIRCLE"}, True, ""),
    ("string punctuation and spaces", {"shape": " c-i_r.c/l*e^,"}, True, ""),
    ("string quotes", {"title": 'it"s new york'}, True, ""),
    ("string quote removed is a different string", {"title": "Its New York"}, False, "wrong value for 'title'"),
    ("wrong string", {"shape": "square"}, False, "wrong value for 'shape'"),
    ("list in order", {"points": [1, 2, 3]}, True, ""),
    ("list out of order", {"points": [3, 2, 1]}, False, "wrong value for 'points'"),
    ("list too short", {"points": [1, 2]}, False, "wrong value for 'points'"),
    ("empty list where '' allowed", {"points": []}, True, ""),
    ("list items strictly typed", {"points": [1.0, 2.0, 3.0]}, False, "wrong item type for 'points'"),
    ("list string items normalised", {"tags": ["red apple", "B"]}, True, ""),
    ("list string items in order", {"tags": ["b", "Red Apple"]}, False, "wrong value for 'tags'"),
    ("tuple of floats", {"pair": [1.5, 2.0]}, True, ""),
    ("ints not accepted as float items", {"pair": [1.5, 2]}, False, "wrong item type for 'pair'"),
    ("dict, omittable key left out", {"origin": {"x": 0}}, True, ""),
    ("dict, string value normalised", {"origin": {"x": 0, "label": "home"}}, True, ""),
    ("dict, wrong value", {"origin": {"x": 1}}, False, "key 'x' has 1"),
    ("dict, bool for int value", {"origin": {"x": False}}, False, "key 'x' has False"),
    ("dict, unexpected key", {"origin": {"x": 0, "z": 1}}, False, "unexpected key 'z'"),
    ("dict, missing key", {"origin": {"label": "Home"}}, False, "missing key 'x'"),
    ("dict, not a dict", {"origin": [0]}, False, "wrong type for 'origin'"),
    ("dict value list normalised", {"hands": {"Alex": ["a of Spades", "k of spades"]}}, True, ""),
    ("dict value list in order", {"hands": {"Alex": ["K of spades", "A of spades"]}}, False, "key 'Alex'"),
    ("list of dicts", {"rows": [{"k": "A"}, {"k": "b"}]}, True, ""),
    ("list of dicts out of order", {"rows": [{"k": "b"}, {"k": "a"}]}, False, "wrong value for 'rows'"),
    ("list of dicts too short", {"rows": [{"k": "a"}]}, False, "wrong value for 'rows'"),
    ("any: normalised value", {"data": "My_Data"}, True, ""),
    ("any: wrong value", {"data": 3}, False, "wrong value for 'data'"),
    ("value in the ground truth's own type", {"venue": True}, True, ""),
    ("wrong value in the ground truth's own type", {"venue": False}, False, "wrong value for 'venue'"),
    ("neither declared nor ground-truth type", {"venue": 1}, False, "wrong type for 'venue'"),
]


@pytest.mark.parametrize(("label", "changes", "ok", "reason"), RULES, ids=[r[0] for r in RULES])
def test_rules(label: str, changes: dict[str, Any], ok: bool, reason: str) -> None:
    args = {**BASE, **changes}
    args = {k: v for k, v in args.items() if v is not DROP}
    verdict = check_calls(SIMPLE, [("geo.area", args)])
    assert verdict.ok is ok, verdict.reason
    assert (verdict.reason == "") if ok else (reason in verdict.reason), verdict.reason


def test_name_is_exact() -> None:
    verdict = check_calls(SIMPLE, [("geo.Area", BASE)])
    assert not verdict.ok
    assert verdict.reason == "wrong function name: got geo.Area, expected geo.area"


def test_safe_name_accepted_back() -> None:
    assert safe_name("geo.area") == "geo_area"
    assert safe_name("plain_name") == "plain_name"
    assert check_calls(SIMPLE, [("geo_area", BASE)]).ok
    # A name that is neither the real one nor its safe form stays wrong.
    assert not check_calls(SIMPLE, [("geo-area", BASE)]).ok


def test_exact_name_wins_over_safe_form() -> None:
    dotted = {**VOLUME, "name": "a.b"}
    flat = {**VOLUME, "name": "a_b"}
    case = _case([{"a_b": {"solid": ["cube"]}}], [dotted, flat], category="multiple")
    assert resolve_name(case, "a_b") == "a_b"
    assert resolve_name(case, "a.b") == "a.b"
    assert check_calls(case, [("a_b", {"solid": "cube"})]).ok
    assert not check_calls(case, [("a.b", {"solid": "cube"})]).ok


def test_call_count() -> None:
    assert check_calls(SIMPLE, []).reason == "wrong number of calls: got 0, expected 1"
    assert check_calls(SIMPLE, [("geo.area", BASE), ("geo.area", BASE)]).reason.startswith("wrong number of calls")


def test_multiple_picks_the_ground_truth_function() -> None:
    case = _case([{"geo.volume": {"solid": ["cube"]}}], [AREA, VOLUME], category="multiple")
    assert check_calls(case, [("geo.volume", {"solid": "Cube"})]).ok
    assert check_calls(case, [("geo_volume", {"solid": "cube"})]).ok
    verdict = check_calls(case, [("geo.area", BASE)])
    assert verdict.reason == "wrong function name: got geo.area, expected geo.volume"


PARALLEL = _case(
    [
        {"geo.volume": {"solid": ["cube"]}},
        {"geo.volume": {"solid": ["sphere"]}},
        {"geo.area": {"shape": ["circle"], "size": [5]}},
    ],
    [AREA, VOLUME],
    category="parallel_multiple",
)
P_CUBE = ("geo.volume", {"solid": "cube"})
P_SPHERE = ("geo.volume", {"solid": "sphere"})
P_AREA = ("geo.area", {"shape": "circle", "size": 5})


@pytest.mark.parametrize(
    "calls",
    [[P_CUBE, P_SPHERE, P_AREA], [P_AREA, P_SPHERE, P_CUBE], [P_SPHERE, P_AREA, P_CUBE]],
)
def test_parallel_any_order(calls: list[tuple[str, dict[str, Any]]]) -> None:
    assert check_calls(PARALLEL, calls).ok


def test_parallel_failures() -> None:
    assert check_calls(PARALLEL, [P_CUBE, P_AREA]).reason == "wrong number of calls: got 2, expected 3"
    twice = check_calls(PARALLEL, [P_CUBE, P_CUBE, P_AREA])
    assert not twice.ok
    assert "expected call 2 (geo.volume) not matched" in twice.reason
    wrong = check_calls(PARALLEL, [P_CUBE, P_SPHERE, ("geo.area", {"shape": "circle", "size": 6})])
    assert "wrong value for 'size'" in wrong.reason


def test_parallel_full_matching_not_greedy() -> None:
    # The first expected call accepts either value; pairing it with the first call greedily would starve the second.
    case = _case(
        [{"geo.volume": {"solid": ["cube", "sphere"]}}, {"geo.volume": {"solid": ["cube"]}}],
        [VOLUME],
        category="parallel",
    )
    assert check_calls(case, [P_CUBE, P_SPHERE]).ok
    assert not check_calls(case, [P_SPHERE, P_SPHERE]).ok


@pytest.mark.parametrize("category", ["irrelevance", "live_irrelevance"])
def test_irrelevance(category: str) -> None:
    assert is_relevance_free(category)
    case = _case(None, [AREA], category=category)
    assert check_calls(case, []).ok
    verdict = check_calls(case, [("geo.area", BASE)])
    assert not verdict.ok
    assert verdict.reason == "expected no call, got 1: geo.area"


def test_relevance_flags() -> None:
    assert not is_relevance_free("simple_python")
    assert not is_relevance_free("live_relevance")
    live_relevance = _case(None, [AREA], category="live_relevance")
    assert check_calls(live_relevance, [("geo.area", {})]).ok
    assert not check_calls(live_relevance, []).ok
    with pytest.raises(ValueError, match="no ground truth"):
        check_calls(_case(None), [("geo.area", BASE)])


# --------------------------------------------------------------------------------------------------------- schemas

STANDARD_TYPES = {"object", "array", "string", "integer", "number", "boolean", "null"}
SCHEMA_KEYS = {
    "type",
    "description",
    "properties",
    "required",
    "items",
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
    "additionalProperties",
}


def _walk(schema: dict[str, Any], path: str, top: bool = False) -> None:
    """Assert ``schema`` uses only standard keywords and types, at every depth."""
    assert set(schema) <= SCHEMA_KEYS, (path, set(schema) - SCHEMA_KEYS)
    kind = schema.get("type")
    kinds = kind if isinstance(kind, list) else [] if kind is None else [kind]
    assert set(kinds) <= STANDARD_TYPES, (path, kind)
    if "additionalProperties" in schema:
        assert top, f"{path}: only the top level is closed"
    props = schema.get("properties", {})
    for name, sub in props.items():
        _walk(sub, f"{path}.{name}")
    assert set(schema.get("required", [])) <= set(props), path
    if "items" in schema:
        assert "array" in kinds, path
        _walk(schema["items"], f"{path}[]")


def test_to_json_schema_mapping() -> None:
    params = copy.deepcopy(AREA["parameters"])
    params["properties"]["coords"] = {"type": "array", "items": {"type": "tuple", "items": {"type": "float"}}}
    params["properties"]["format"] = {"type": "string", "enum": ["a", "b"], "format": "date"}
    params["properties"]["type"] = {"type": "dict", "properties": {"type": {"type": "string"}}, "required": ["type"]}
    params["required"] = ["shape", "size", "ghost"]
    before = copy.deepcopy(params)
    schema = to_json_schema(params)
    assert params == before, "the input must not be changed"
    props = schema["properties"]
    assert schema["type"] == "object"
    assert schema["additionalProperties"] is False
    assert schema["required"] == ["shape", "size"]  # "ghost" has no property
    assert props["scale"] == {"type": "number"}
    assert props["pair"] == {"type": "array", "items": {"type": "number"}}
    assert props["data"] == {}  # "any": no constraint
    assert props["exact"] == {"type": "boolean", "default": False}  # "optional" dropped, "default" kept
    assert props["shape"] == {"type": "string", "description": "Shape name."}
    assert props["origin"] == {
        "type": "object",
        "properties": {"x": {"type": "integer"}, "label": {"type": "string"}},
    }
    assert props["rows"] == {"type": "array", "items": {"type": "object"}}
    assert props["coords"] == {"type": "array", "items": {"type": "array", "items": {"type": "number"}}}
    assert props["format"] == {"type": "string", "enum": ["a", "b"], "format": "date"}
    assert props["type"] == {"type": "object", "properties": {"type": {"type": "string"}}, "required": ["type"]}
    _walk(schema, "AREA", top=True)


def test_tool_schemas() -> None:
    case = _case(None, [AREA, VOLUME], category="irrelevance")
    tools = tool_schemas(case)
    assert [t["type"] for t in tools] == ["function", "function"]
    assert [t["function"]["name"] for t in tools] == ["geo.area", "geo.volume"]
    assert tools[1]["function"] == {
        "name": "geo.volume",
        "description": "Volume of a solid.",
        "parameters": {
            "type": "object",
            "properties": {"solid": {"type": "string"}},
            "required": ["solid"],
            "additionalProperties": False,
        },
    }
    assert [t["function"]["name"] for t in tool_schemas(case, safe_names=True)] == ["geo_area", "geo_volume"]


# ------------------------------------------------------------------------------------------------------ real data


def _first(values: list[Any]) -> Any:
    return next((v for v in values if not (isinstance(v, str) and v == "")), None)


def _from_answer_dict(option: dict[str, list[Any]]) -> dict[str, Any]:
    return {k: _first(v) for k, v in option.items() if _first(v) is not None}


def _rebuild(spec: dict[str, Any], values: list[Any]) -> Any:
    """A concrete argument from a ground-truth entry: its first non-"" value, taken the same way inside dicts."""
    value = _first(values)
    items = spec.get("items") or {}
    if spec.get("type") == "dict" and isinstance(value, dict):
        return _from_answer_dict(value)
    if items.get("type") == "dict" and isinstance(value, list):
        return [_from_answer_dict(v) for v in value]
    return value


def _truth_calls(case: BfclCase) -> list[tuple[str, dict[str, Any]]] | str:
    """The ground truth as the calls a perfect model would make, or why it cannot be rebuilt."""
    assert case.answers is not None
    functions = {f["name"]: f for f in case.functions}
    calls = []
    for answer in case.answers:
        ((name, truth),) = answer.items()
        if name not in functions:
            return "ground truth names a function the case lacks"
        props = functions[name]["parameters"].get("properties", {})
        if set(truth) - set(props):
            return "ground truth key that is not a parameter"
        args = {k: _rebuild(props[k], v) for k, v in truth.items() if _first(v) is not None}
        calls.append((name, args))
    return calls


def _wrong(value: Any, acceptable: list[Any]) -> Any:
    """A value of the same type that no acceptable value can match, or None when there is none."""
    if isinstance(value, bool):
        candidate: Any = not value
    elif isinstance(value, int | float):
        candidate = type(value)(987654321)
    elif isinstance(value, str):
        candidate = value + "zq"
    elif isinstance(value, list):
        candidate = [*value, value[0]] if value else None
    elif isinstance(value, dict):
        candidate = {**value, "zq_extra": 1}
    else:
        return None
    return None if candidate in acceptable else candidate


@pytest.fixture(scope="module")
def real_cases() -> dict[str, list[BfclCase]]:
    return {cat: load_cases(DATA, cat) for cat in ("simple_python", "multiple", "irrelevance")}


@needs_data
def test_categories_and_loading(real_cases: dict[str, list[BfclCase]]) -> None:
    assert {"simple_python", "multiple", "irrelevance"} <= set(categories(DATA))
    sizes = {cat: len(cases) for cat, cases in real_cases.items()}
    assert sizes == {"simple_python": 400, "multiple": 200, "irrelevance": 240}
    for cat, cases in real_cases.items():
        assert [c.id for c in cases] == [f"{cat}_{i}" for i in range(len(cases))]
        assert all(c.category == cat for c in cases)
        assert all(c.messages and all(set(m) == {"role", "content"} for m in c.messages) for c in cases)
        assert all(c.functions for c in cases)
        assert all((c.answers is None) == is_relevance_free(cat) for c in cases)
    assert real_cases["multiple"][0].functions[0]["name"] == "triangle_properties.get"
    assert real_cases["simple_python"][0].messages[0]["role"] == "user"


@needs_data
def test_load_limit() -> None:
    cases = load_cases(DATA, "simple_python", limit=3)
    assert [c.id for c in cases] == ["simple_python_0", "simple_python_1", "simple_python_2"]
    assert cases[1].answers == [{"math.factorial": {"number": [5]}}]
    assert load_cases(DATA, "multiple", limit=0) == []


@needs_data
def test_missing_category_lists_present_ones() -> None:
    with pytest.raises(FileNotFoundError) as err:
        load_cases(DATA, "live_simple")
    assert "live_simple" in str(err.value)
    assert "irrelevance, multiple, simple_python" in str(err.value)


def test_load_any_category_name(tmp_path: Path) -> None:
    question = {"id": "live_simple_0-0-0", "question": [[{"role": "user", "content": "hi"}]], "function": [VOLUME]}
    second = {**question, "id": "live_simple_1-1-0"}
    (tmp_path / "BFCL_v4_live_simple.json").write_text(f"{json.dumps(question)}\n\n{json.dumps(second)}\n")
    (tmp_path / "possible_answer").mkdir()
    truth = [{"id": i, "ground_truth": [{"geo.volume": {"solid": [s]}}]} for i, s in [("live_simple_1-1-0", "b")]]
    truth.append({"id": "live_simple_0-0-0", "ground_truth": [{"geo.volume": {"solid": ["a"]}}]})
    (tmp_path / "possible_answer" / "BFCL_v4_live_simple.json").write_text("\n".join(json.dumps(t) for t in truth))
    (tmp_path / "BFCL_v4_live_irrelevance.json").write_text(json.dumps(question) + "\n")
    assert categories(tmp_path) == ["live_irrelevance", "live_simple"]
    cases = load_cases(tmp_path, "live_simple")
    assert [c.id for c in cases] == ["live_simple_0-0-0", "live_simple_1-1-0"]
    assert cases[0].answers == [{"geo.volume": {"solid": ["a"]}}]  # matched by id, not by line
    assert check_calls(cases[1], [("geo_volume", {"solid": "B"})]).ok
    assert load_cases(tmp_path, "live_irrelevance")[0].answers is None
    with pytest.raises(FileNotFoundError, match="present: live_irrelevance, live_simple"):
        load_cases(tmp_path, "simple_python")


@needs_data
def test_ground_truth_scores_ok(real_cases: dict[str, list[BfclCase]]) -> None:
    skipped: Counter[str] = Counter()
    covered = 0
    failures = []
    for cat in ("simple_python", "multiple"):
        for case in real_cases[cat]:
            calls = _truth_calls(case)
            if isinstance(calls, str):
                skipped[calls] += 1
                continue
            covered += 1
            verdict = check_calls(case, calls)
            if not verdict.ok:
                failures.append((case.id, verdict.reason))
            # Shown safe names, a model is still scored against the real ones.
            assert check_calls(case, [(safe_name(n), a) for n, a in calls]).ok, case.id
    assert not failures, failures[:10]
    assert sum(skipped.values()) <= 6, skipped  # at most 1% of the 600 cases
    assert covered == 600 - sum(skipped.values())


@needs_data
def test_wrong_values_rejected(real_cases: dict[str, list[BfclCase]]) -> None:
    tried = 0
    for cat in ("simple_python", "multiple"):
        for case in real_cases[cat][::5]:
            calls = _truth_calls(case)
            assert case.answers is not None and not isinstance(calls, str)
            name, args = calls[0]
            truth = case.answers[0][name]
            for key, value in args.items():
                wrong = _wrong(value, truth[key])
                if wrong is not None:
                    verdict = check_calls(case, [(name, {**args, key: wrong})])
                    assert not verdict.ok, (case.id, key, wrong)
                    assert key in verdict.reason, (case.id, verdict.reason)
                    tried += 1
                    break
            verdict = check_calls(case, [(name + "_x", args)])
            assert verdict.reason.startswith("wrong function name"), case.id
    assert tried >= 110  # nearly every one of the 120 sampled cases has a perturbable argument


@needs_data
def test_real_irrelevance(real_cases: dict[str, list[BfclCase]]) -> None:
    for case in real_cases["irrelevance"]:
        assert check_calls(case, []).ok
        assert not check_calls(case, [(case.functions[0]["name"], {})]).ok


@needs_data
def test_real_schemas_are_standard(real_cases: dict[str, list[BfclCase]]) -> None:
    count = 0
    for cases in real_cases.values():
        for case in cases:
            for tool in tool_schemas(case):
                schema = tool["function"]["parameters"]
                _walk(schema, tool["function"]["name"], top=True)
                assert schema["type"] == "object" and schema["additionalProperties"] is False
                count += 1
            for fn in case.functions:
                assert resolve_name(case, safe_name(fn["name"])) == fn["name"]
                assert "." not in safe_name(fn["name"])
    assert count > 1000
