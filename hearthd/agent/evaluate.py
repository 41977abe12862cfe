"""`hearthd eval --bfcl`: the agent on the Berkeley Function Calling Leaderboard's own cases and rules."""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..language import language_of_text
from ..tools.registry import Tool, ToolRegistry, ToolResult
from . import bfcl
from .agent import Agent
from .model import ChatModel


async def _not_executed(args: dict[str, Any]) -> ToolResult:
    raise RuntimeError("benchmark tools are scored, never executed")


@dataclass
class CaseResult:
    """One scored case."""

    id: str
    ok: bool
    reason: str
    calls: list[tuple[str, dict[str, Any]]]
    abstained: bool
    ms: float


@dataclass
class Report:
    """Accuracy, abstention rate and latency of one category."""

    category: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return sum(r.ok for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def abstention_rate(self) -> float:
        return sum(r.abstained for r in self.results) / len(self.results) if self.results else 0.0

    def percentile(self, q: float) -> float:
        times = sorted(r.ms for r in self.results)
        if not times:
            return 0.0
        return times[min(len(times) - 1, round(q * (len(times) - 1)))]

    def summary(self) -> dict[str, Any]:
        return {
            "type": "eval", "suite": "bfcl", "category": self.category, "cases": len(self.results),
            "accuracy": round(self.accuracy, 4), "abstention_rate": round(self.abstention_rate, 4),
            "p50_ms": round(statistics.median([r.ms for r in self.results]) if self.results else 0.0, 1),
            "p95_ms": round(self.percentile(0.95), 1),
        }


def case_registry(case: bfcl.BfclCase) -> ToolRegistry:
    """The case's functions as hearthd tool declarations (model-safe names, standard JSON Schema)."""
    tools = []
    for entry in bfcl.tool_schemas(case, safe_names=True):
        fn = entry["function"]
        tools.append(Tool(fn["name"], fn.get("description", ""), fn["parameters"], _not_executed, family="bfcl"))
    return ToolRegistry(tools)


def run_bfcl(model: ChatModel, root: Path, category: str, limit: int | None = None,
             min_tool_probability: float = 0.0) -> Iterator[CaseResult]:
    """Score the agent on each case of a category; yields results as they come."""
    for case in bfcl.load_cases(root, category, limit):
        text = "\n".join(m["content"] for m in case.messages if m.get("role") == "user")
        started = time.monotonic()
        try:
            agent = Agent(model, case_registry(case), state_dir=None, min_tool_probability=min_tool_probability)
            decision = agent.decide(text, language_of_text(text, ["en", "hi", "ru"]))
            calls = [(bfcl.resolve_name(case, c.name), c.arguments) for c in decision.calls]
            abstained = decision.kind == "abstain"
            verdict = bfcl.check_calls(case, calls)
            ok, reason = verdict.ok, verdict.reason or ("" if verdict.ok else decision.reason)
        except Exception as e:  # one unusable case (e.g. a schema the grammar cannot express) is a miss, not a crash
            calls, abstained, ok, reason = [], False, False, f"{type(e).__name__}: {e}"
        yield CaseResult(case.id, ok, reason, calls, abstained, (time.monotonic() - started) * 1000)


def evaluate(model: ChatModel, root: Path, categories: list[str], limit: int | None,
             on_case: Callable[[str, CaseResult], None] | None = None,
             min_tool_probability: float = 0.0) -> list[Report]:
    """Run several categories; `on_case` sees every result (for --json output and progress)."""
    reports = []
    for category in categories:
        report = Report(category)
        for result in run_bfcl(model, root, category, limit, min_tool_probability):
            report.results.append(result)
            if on_case:
                on_case(category, result)
        reports.append(report)
    return reports


@dataclass
class Command:
    """One case of a command suite: an utterance and the expected call, or an expected abstention."""

    text: str
    lang: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)

    @property
    def abstain(self) -> bool:
        return self.tool is None

    def judge(self, calls: list[tuple[str, dict[str, Any]]]) -> bool:
        """Exact: the one expected call with exactly these arguments, or no call at all."""
        return calls == [] if self.abstain else calls == [(self.tool, self.arguments)]


def load_suite(path: Path, lang: str) -> list[Command]:
    """A command suite: a YAML list of {text, tool, arguments} or {text, abstain: true}."""
    import yaml

    rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "text" not in row or ("tool" in row) == bool(row.get("abstain")):
            raise ValueError(f"{path}: case {i + 1} needs `text` and either `tool` or `abstain: true`")
        out.append(Command(str(row["text"]), lang, row.get("tool"), dict(row.get("arguments") or {})))
    return out
