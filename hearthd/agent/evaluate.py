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
from .agent import Agent, Decision
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
    error: str = ""  # the case could not be run (an exception): an error, never counted as an ordinary miss


@dataclass
class Report:
    """Accuracy, abstention rate and latency of one category."""

    category: str
    results: list[CaseResult] = field(default_factory=list)

    @property
    def accuracy(self) -> float:
        return sum(r.ok for r in self.results) / len(self.results) if self.results else 0.0

    @property
    def errors(self) -> int:
        return sum(bool(r.error) for r in self.results)

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
            "errors": self.errors,
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
             min_tool_probability: float = 0.0, min_relevance: float = 0.0,
             thinking: int = 0) -> Iterator[CaseResult]:
    """Score the agent on each case of a category; yields results as they come."""
    for case in bfcl.load_cases(root, category, limit):
        text = "\n".join(m["content"] for m in case.messages if m.get("role") == "user")
        started = time.monotonic()
        try:
            agent = Agent(model, case_registry(case), state_dir=None, min_tool_probability=min_tool_probability,
                          min_relevance=min_relevance, thinking=thinking)
            decision = agent.decide(text, language_of_text(text, ["en", "hi", "ru"]))
            calls = [(bfcl.resolve_name(case, c.name), c.arguments) for c in decision.calls]
            abstained = decision.kind == "abstain"
            verdict = bfcl.check_calls(case, calls)
            ok, reason = verdict.ok, verdict.reason or ("" if verdict.ok else decision.reason)
            error = ""
        except Exception as e:  # one broken case (a schema the grammar cannot express, a model failure) ends no run
            calls, abstained, ok, reason = [], False, False, f"{type(e).__name__}: {e}"
            error = reason
        yield CaseResult(case.id, ok, reason, calls, abstained, (time.monotonic() - started) * 1000, error)


def evaluate(model: ChatModel, root: Path, categories: list[str], limit: int | None,
             on_case: Callable[[str, CaseResult], None] | None = None,
             min_tool_probability: float = 0.0, min_relevance: float = 0.0, thinking: int = 0) -> list[Report]:
    """Run several categories; `on_case` sees every result (for --json output and progress)."""
    reports = []
    for category in categories:
        report = Report(category)
        for result in run_bfcl(model, root, category, limit, min_tool_probability, min_relevance, thinking):
            report.results.append(result)
            if on_case:
                on_case(category, result)
        reports.append(report)
    return reports


@dataclass
class Command:
    """One case of a command suite: an utterance and the expected call, abstention or clarification.

    A clarification case names the tool and the argument hearthd must ask for; with `answer` it goes on:
    the answer is the user's next utterance and `arguments` the call it must complete.
    """

    text: str
    lang: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    clarify: str | None = None
    answer: str | None = None

    @property
    def abstain(self) -> bool:
        return self.tool is None

    @property
    def kind(self) -> str:
        return "abstain" if self.tool is None else "clarify" if self.clarify else "call"

    def judge(self, calls: list[tuple[str, dict[str, Any]]]) -> bool:
        """Exact: the one expected call with exactly these arguments, or no call at all."""
        return calls == [] if self.abstain else calls == [(self.tool, self.arguments)]

    def judge_decision(self, decision: Decision) -> bool:
        """The first turn: an expected call, an abstention, or a question about the expected argument."""
        if self.kind == "clarify":
            return decision.kind == "clarify" and decision.missing == self.clarify and \
                bool(decision.calls) and decision.calls[0].name == self.tool
        calls = [(c.name, c.arguments) for c in decision.calls] if decision.kind == "call" else []
        return self.judge(calls)


def load_suite(path: Path, lang: str) -> list[Command]:
    """A command suite: a YAML list of {text, tool, arguments}, {text, abstain: true} or
    {text, tool, clarify: <argument>[, answer, arguments]}."""
    import yaml

    rows = yaml.safe_load(path.read_text(encoding="utf-8")) or []
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "text" not in row or ("tool" in row) == bool(row.get("abstain")):
            raise ValueError(f"{path}: case {i + 1} needs `text` and either `tool` or `abstain: true`")
        if "answer" in row and "clarify" not in row:
            raise ValueError(f"{path}: case {i + 1} has an `answer` but asks no `clarify` question")
        out.append(Command(str(row["text"]), lang, row.get("tool"), dict(row.get("arguments") or {}),
                           row.get("clarify"), row.get("answer")))
    return out


def load_catalogue(path: Path) -> ToolRegistry:
    """The suites' tool catalogue (tests/data/commands/tools.yaml): declarations scored, never executed."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    tools = []
    for entry in data["tools"]:
        params = dict(entry.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("additionalProperties", False)
        tools.append(Tool(entry["name"], entry["description"], params, _not_executed, family="suite",
                          consequential=bool(entry.get("consequential", False))))
    return ToolRegistry(tools)


@dataclass
class SuiteResult:
    """One scored suite case."""

    command: Command
    ok: bool
    decision: Decision
    ms: float
    follow_up: Decision | None = None


@dataclass
class SuiteReport:
    """Exact accuracy, abstention on unknown requests, clarifications, unsafe calls and latency of one suite."""

    lang: str
    registry: ToolRegistry
    results: list[SuiteResult] = field(default_factory=list)

    def _share(self, kind: str) -> float:
        rows = [r for r in self.results if r.command.kind == kind]
        return sum(r.ok for r in rows) / len(rows) if rows else 0.0

    def unsafe(self) -> list[SuiteResult]:
        """Consequential calls the request did not ask for."""
        out = []
        for r in self.results:
            wanted = r.command.tool
            for d in (r.decision, r.follow_up):
                for c in (d.calls if d is not None and d.kind == "call" else []):
                    if c.name in self.registry and self.registry.get(c.name).consequential and c.name != wanted:
                        out.append(r)
        return out

    def summary(self) -> dict[str, Any]:
        times = sorted(r.ms for r in self.results)
        fast = [r.ms for r in self.results if r.decision.source == "fastpath"]
        model = [r.ms for r in self.results if r.decision.source != "fastpath"]
        return {
            "type": "eval", "suite": "commands", "lang": self.lang, "cases": len(self.results),
            "accuracy": round(sum(r.ok for r in self.results) / len(self.results), 4) if self.results else 0.0,
            "calls": round(self._share("call"), 4), "abstain": round(self._share("abstain"), 4),
            "clarify": round(self._share("clarify"), 4), "unsafe": len(self.unsafe()),
            "fast_path_share": round(len(fast) / len(self.results), 4) if self.results else 0.0,
            "p50_ms": round(statistics.median(times), 1) if times else 0.0,
            "p95_ms": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1) if times else 0.0,
            "fast_p50_ms": round(statistics.median(fast), 2) if fast else None,
            "model_p50_ms": round(statistics.median(model), 1) if model else None,
        }


def run_suite(router: Any, cases: list[Command], registry: ToolRegistry,
              on_case: Callable[[SuiteResult], None] | None = None) -> SuiteReport:
    """Each case through `router` (a Router: fast path then model) as a fresh conversation."""
    report = SuiteReport(cases[0].lang if cases else "", registry)
    for case in cases:
        router.reset()
        started = time.monotonic()
        decision = router.decide(case.text, case.lang)
        ms = (time.monotonic() - started) * 1000
        ok = case.judge_decision(decision)
        follow_up = None
        if ok and case.kind == "clarify" and case.answer is not None:
            follow_up = router.decide(case.answer, case.lang)
            ok = follow_up.kind == "call" and [(c.name, c.arguments) for c in follow_up.calls] == \
                [(case.tool, case.arguments)]
        result = SuiteResult(case, ok, decision, ms, follow_up)
        report.results.append(result)
        if on_case:
            on_case(result)
    router.reset()
    return report
