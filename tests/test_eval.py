"""`hearthd eval --bfcl` on a tiny BFCL-format directory, with the real agent model."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.models

ALARM = {"name": "alarm.set", "description": "Set an alarm clock for a time of day.",
         "parameters": {"type": "dict", "properties": {"time": {"type": "string", "description": "HH:MM, 24-hour"}},
                        "required": ["time"]}}
TRIANGLE = {"name": "calculate_triangle_area", "description": "Calculate the area of a triangle from base and height.",
            "parameters": {"type": "dict", "properties": {"base": {"type": "integer", "description": "base"},
                                                          "height": {"type": "integer", "description": "height"}},
                           "required": ["base", "height"]}}


def write_jsonl(path: Path, rows: list[dict]) -> None:  # type: ignore[type-arg]
    path.write_text("\n".join(json.dumps(r) for r in rows) + "\n")


def test_eval_scores_calls_and_abstentions_by_the_bfcl_rules(tmp_path: Path) -> None:
    (tmp_path / "possible_answer").mkdir()
    write_jsonl(tmp_path / "BFCL_v4_simple_python.json", [
        {"id": "simple_python_0", "question": [[{"role": "user", "content": "Set an alarm for 07:30."}]],
         "function": [ALARM]},
        {"id": "simple_python_1", "question": [[{"role": "user", "content":
                                                 "Find the area of a triangle with base 10 and height 5."}]],
         "function": [TRIANGLE]},
    ])
    write_jsonl(tmp_path / "possible_answer" / "BFCL_v4_simple_python.json", [
        {"id": "simple_python_0", "ground_truth": [{"alarm.set": {"time": ["07:30"]}}]},
        {"id": "simple_python_1", "ground_truth": [{"calculate_triangle_area": {"base": [10], "height": [5]}}]},
    ])
    write_jsonl(tmp_path / "BFCL_v4_irrelevance.json", [
        {"id": "irrelevance_0", "question": [[{"role": "user", "content": "Tell me a joke about cats."}]],
         "function": [TRIANGLE]},
    ])
    proc = subprocess.run([sys.executable, "-m", "hearthd", "eval", "--bfcl", str(tmp_path), "--json"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    cases = {x["id"]: x for x in lines if x["type"] == "eval_case"}
    summaries = {x["category"]: x for x in lines if x["type"] == "eval"}
    assert set(summaries) == {"simple_python", "irrelevance"}
    # a dotted BFCL name is shown to the model in a safe form and scored under its real name
    assert cases["simple_python_0"]["calls"] == [["alarm.set", {"time": "07:30"}]]
    assert cases["simple_python_1"]["ok"], cases["simple_python_1"]
    assert summaries["simple_python"]["accuracy"] == 1.0 and summaries["simple_python"]["cases"] == 2
    assert cases["irrelevance_0"]["ok"] and cases["irrelevance_0"]["calls"] == []  # the relevance check says no
    assert {"p50_ms", "p95_ms", "abstention_rate"} <= set(summaries["irrelevance"])


def test_eval_names_the_missing_category(tmp_path: Path) -> None:
    args = ["eval", "--bfcl", str(tmp_path), "--category", "live_simple"]
    proc = subprocess.run([sys.executable, "-m", "hearthd", *args], capture_output=True, text=True, timeout=60)
    assert proc.returncode == 1 and "live_simple" in proc.stderr and "Traceback" not in proc.stderr


def test_the_relevance_check_tells_a_tools_requests_from_others(components) -> None:  # type: ignore[no-untyped-def]
    from hearthd.agent.relevance import RelevanceCheck
    from hearthd.tools.registry import Tool

    async def never(args: dict) -> None:  # type: ignore[type-arg]
        raise AssertionError

    triangle = Tool("triangle_area", TRIANGLE["description"], TRIANGLE["parameters"], never)  # type: ignore[arg-type]
    check = RelevanceCheck(components.agent().model)
    related = [check.probability(triangle, t) for t in ("What is the area of a triangle with base 4 and height 3?",
                                                          "triangle area, base 10 cm, height 7 cm")]
    unrelated = [check.probability(triangle, t) for t in ("Who wrote War and Peace?", "Play some jazz",
                                                            "What is the perimeter of a square with side 4?")]
    assert min(related) > max(unrelated), (related, unrelated)


def test_eval_suite_prints_a_table_per_language(tmp_path: Path) -> None:
    """The first cases of the English suite are template matches: the table comes without loading the model."""
    root = Path(__file__).parent / "data" / "commands"
    proc = subprocess.run([sys.executable, "-m", "hearthd", "eval", "--suite", str(root / "en.yaml"), "--limit", "5",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    (summary,) = [x for x in lines if x["type"] == "eval"]
    assert summary["lang"] == "en" and summary["cases"] == 5 and summary["accuracy"] == 1.0
    assert all(x["source"] == "fastpath" for x in lines if x["type"] == "eval_case")
