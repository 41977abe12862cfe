"""`hearthd eval`: the agent on the Berkeley Function Calling Leaderboard's own cases and rules (--bfcl), and on
hearthd's own command suites (--suite), spoken in a home of their own (tests/data/commands/home.yaml)."""

from __future__ import annotations

import dataclasses
import re
import statistics
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from datetime import date, timedelta
from pathlib import Path
from typing import Any, cast

from ..agent.agent import Agent, Decision
from ..agent.model import ChatModel
from ..language import language_of_text
from ..locale import languages
from ..tools.catalogue import Catalogue
from ..tools.discovery import Entity
from ..tools.registry import Tool, ToolRegistry, ToolResult
from ..tools.smarthome import KINDS, SmartHome
from . import bfcl


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
            decision = agent.decide(text, language_of_text(text, list(languages())))
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
    the answer is the user's next utterance and `arguments` the call it must complete. `family` is the kind of
    request (the suite's `# family: <name>` sections, or the case's own `family:`), for the per-family figures;
    `xfail_fast` marks a case hearthd's templates are known to read wrongly (the reason): counted, not failed.
    """

    text: str
    lang: str
    tool: str | None = None
    arguments: dict[str, Any] = field(default_factory=dict)
    clarify: str | None = None
    answer: str | None = None
    family: str = ""
    xfail_fast: str = ""
    also: list[tuple[str, dict[str, Any]]] = field(default_factory=list)  # more calls asked at once ("… and …")

    @property
    def abstain(self) -> bool:
        return self.tool is None

    @property
    def kind(self) -> str:
        return "abstain" if self.tool is None else "clarify" if self.clarify else "call"

    @property
    def expected(self) -> str:
        """What the case wants, in words, for a miss's line: "decline", "ask time of set_alarm", or the call."""
        if self.tool is None:
            return "decline"
        return f"ask {self.clarify} of {self.tool}" if self.clarify else f"{self.tool} {self.arguments}"

    def judge(self, calls: list[tuple[str, dict[str, Any]]], home: SuiteHome | None = None) -> bool:
        """The one expected call, or no call at all. Text values compare without case ("Kitchen Light" is the
        "kitchen light" said); with the suites' `home`, a device call compares by the devices it acts on, so the
        group call the sentence library makes for "lights on in the bedroom" is the named call of its one light."""
        if self.abstain:
            return calls == []
        if self.tool is None or len(calls) != 1 + len(self.also):
            return False
        left = list(calls)
        for want in [(self.tool, self.arguments), *self.also]:  # each asked call done, in any order
            same = next((got for got in left if (home.same_call(got, want) if home is not None
                                                 else _same_arguments(got, want))), None)
            if same is None:
                return False
            left.remove(same)
        return True

    def judge_decision(self, decision: Decision, home: SuiteHome | None = None) -> bool:
        """The first turn: an expected call, an abstention, or a question about the expected argument."""
        if self.kind == "clarify":
            return decision.kind == "clarify" and decision.missing == self.clarify and \
                bool(decision.calls) and decision.calls[0].name == self.tool
        calls = [(c.name, c.arguments) for c in decision.calls] if decision.kind == "call" else []
        return self.judge(calls, home)


def _folded(value: Any) -> Any:
    if isinstance(value, str):
        return " ".join(value.casefold().split())
    if isinstance(value, dict):
        return {k: _folded(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_folded(v) for v in value]
    return value


# Arguments a tool takes as said when left out: "what time is it" is get_time{} or get_time{what: time}.
DEFAULTS: dict[str, dict[str, Any]] = {"get_time": {"what": "time"}}


def _same_arguments(got: tuple[str, dict[str, Any]], want: tuple[str, dict[str, Any]]) -> bool:
    if got[0] != want[0]:
        return False
    defaults = DEFAULTS.get(got[0], {})
    return _folded({**defaults, **got[1]}) == _folded({**defaults, **want[1]})


FAMILY_MARK = re.compile(r"^#\s*family:\s*([\w-]+)", re.MULTILINE)
NEXT_DATE = re.compile(r"@next:(?:(\d{1,2})-)?(\d{1,2})")
WEEKDAYS = ("monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday")


def next_date(month: int | None, day: int, today: date) -> date:
    """The first date on or after `today` that is this day (of this month, else of any month)."""
    for ahead in range(0, 800):
        d = today + timedelta(days=ahead)
        if d.day == day and (month is None or d.month == month):
            return d
    raise ValueError(f"no date {month}-{day}")


def _expected(value: Any, today: date) -> Any:
    """A case's argument, with `@next:DD` / `@next:MM-DD` ("what day is the 22nd") as the date it is today."""
    if isinstance(value, str) and (m := NEXT_DATE.fullmatch(value)):
        return next_date(int(m.group(1)) if m.group(1) else None, int(m.group(2)), today).isoformat()
    if isinstance(value, str) and value.startswith("@next:") and value[6:] in WEEKDAYS:  # "on saturday": after today
        ahead = (WEEKDAYS.index(value[6:]) - today.weekday() - 1) % 7 + 1
        return (today + timedelta(days=ahead)).isoformat()
    return value


def load_suite(path: Path, lang: str) -> list[Command]:
    """A command suite: a YAML list of {text, tool, arguments}, {text, abstain: true} or
    {text, tool, clarify: <argument>[, answer, arguments]}; each may say its `family` and `xfail_fast: <why>`, and a
    call `also: [{tool, arguments}, …]`, the other calls asked for in the same breath (done in any order).
    A date argument may be `@next:DD` or `@next:MM-DD` (the next such date from today) or `@next:<weekday>`.
    A comment line `# family: <name>` names the family of the cases below it."""
    import yaml

    source = path.read_text(encoding="utf-8")
    rows = yaml.safe_load(source) or []
    node = yaml.compose(source)
    lines = [item.start_mark.line for item in node.value] if isinstance(node, yaml.SequenceNode) else []
    marks = [(source.count("\n", 0, m.start()), m.group(1)) for m in FAMILY_MARK.finditer(source)]
    today = date.today()
    out = []
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or "text" not in row or ("tool" in row) == bool(row.get("abstain")):
            raise ValueError(f"{path}: case {i + 1} needs `text` and either `tool` or `abstain: true`")
        if "answer" in row and "clarify" not in row:
            raise ValueError(f"{path}: case {i + 1} has an `answer` but asks no `clarify` question")
        line = lines[i] if i < len(lines) else 0
        family = str(row.get("family") or next((f for at, f in reversed(marks) if at < line), ""))
        xfail = row.get("xfail_fast") or ""
        arguments = {k: _expected(v, today) for k, v in (row.get("arguments") or {}).items()}
        also = [(str(more["tool"]), {k: _expected(v, today) for k, v in (more.get("arguments") or {}).items()})
                for more in row.get("also") or []]
        out.append(Command(str(row["text"]), lang, row.get("tool"), arguments,
                           row.get("clarify"), row.get("answer"), family,
                           "known" if xfail is True else str(xfail), also))
    return out


@dataclass
class SuiteHome:
    """The home the suites are spoken in (tests/data/commands/home.yaml): hearthd's real tool declarations (alarms,
    timers, the clock, volume, media, the computer, and the smart home over this home's devices), whose handlers are
    never run, and the devices, floors and the microphone's room the sentence library reads names from."""

    catalogue: Catalogue
    floors: dict[str, list[str]]
    here: str
    registry: ToolRegistry
    smarthome: SmartHome

    def fast_path(self) -> Any:
        """hearthd's templates, then the sentence library over this home, as the daemon builds them."""
        from ..agent.fastpath import FastPath
        from ..agent.library import Library

        return FastPath(self.registry, Library(self.registry, lambda: self.catalogue, self.floors, self.here))

    def router(self, agent: Callable[[], Any], fast_path: bool = True, clarify_timeout: float = 30.0,
               clarify_turns: int = 2, tolerant: bool = True, domain_hint: bool = True) -> Any:
        """The daemon's router: the fast path, the tolerant tier, out-of-scope requests declined by code, the model."""
        from ..agent.declines import DeclineFirst
        from ..agent.fastpath import Router
        from ..agent.tolerant import TolerantMatcher

        if not fast_path:
            return Router(None, agent, clarify_timeout, clarify_turns)
        first = cast(Agent, DeclineFirst(agent))
        fast = self.fast_path()
        return Router(fast, lambda: first, clarify_timeout, clarify_turns,
                      tolerant=TolerantMatcher(fast) if tolerant else None, domain_hint=domain_hint)

    def targets(self, tool: str, arguments: dict[str, Any]) -> frozenset[str] | None:
        """The devices a home call acts on (a name as hearthd resolves it, or a group), None when it names none."""
        kinds = KINDS.get(tool)
        if kinds is None or tool == "sensor_value":
            return None
        key = {"lock_door": "door", "unlock_door": "door", "activate_scene": "scene"}.get(tool, "device")
        said = str(arguments.get(key) or "").strip()
        if said:
            found = self.catalogue.resolve(said, kinds).entities
            return frozenset(e.key for e in found) if len(found) == 1 else None
        if any(arguments.get(k) for k in ("area", "domain", "device_class")):
            return frozenset(e.key for e in self.smarthome.group(arguments, kinds)) or None
        if tool in ("set_temperature", "set_climate_mode"):  # the one thermostat, unnamed
            only = [e.key for e in self.catalogue.entities.values() if e.component == "climate"]
            return frozenset(only) if len(only) == 1 else None
        return None

    def same_call(self, got: tuple[str, dict[str, Any]], want: tuple[str, dict[str, Any]]) -> bool:
        if got[0] != want[0]:
            return False
        found, wanted = self.targets(*got), self.targets(*want)
        if found is None or wanted is None:
            return _same_arguments(got, want)
        rest: tuple[str, ...] = ("device", "door", "scene", "area", "domain", "device_class")
        if got[0] == "device_state" and len(found) == 1:
            rest += ("state", "question")  # "is the front door locked?": one device's state is said either way
        return found == wanted and _same_arguments((got[0], {k: v for k, v in got[1].items() if k not in rest}),
                                                    (want[0], {k: v for k, v in want[1].items() if k not in rest}))


def load_home(path: Path) -> SuiteHome:
    """home.yaml: `entities` ({key, component, name, area, device_class}), `floors` and `here`."""
    import yaml

    from ..tools.alarms import AlarmBook
    from ..tools.battery import Battery
    from ..tools.bus import Bus
    from ..tools.clock import Clock
    from ..tools.media import MediaPlayers
    from ..tools.network import NetworkManager
    from ..tools.power import Login1
    from ..tools.volume import SystemVolume, volume_backend

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    catalogue = Catalogue(None, data.get("aliases") or {})
    for row in data.get("entities") or []:
        key, component = str(row["key"]), str(row["component"])
        config = {"command_topic": f"{key}/set", "state_topic": key}
        if row.get("device_class"):
            config["device_class"] = str(row["device_class"])
        catalogue.entities[key] = Entity(source=key, key=key, component=component, name=str(row["name"]),
                                         area=str(row.get("area") or ""), config=config)
        if row.get("state"):
            catalogue.states[key] = {"state": str(row["state"])}
    floors = {str(k): [str(a) for a in v] for k, v in (data.get("floors") or {}).items()}

    async def no_link() -> Any:
        raise RuntimeError("suite tools are scored, never executed")

    # The providers the daemon declares (daemon.components.Components, with dbus and mqtt enabled), never run.
    bus = Bus("", "", 1.0)
    media = MediaPlayers(bus)
    home = SmartHome(catalogue, no_link, floors)
    provided = (AlarmBook(path=None).tools() + Clock().tools()
                + SystemVolume(volume_backend("pactl", 1.0), 10, media).tools() + media.tools()
                + Login1(bus).tools() + Battery(bus).tools() + NetworkManager(bus).tools() + home.tools())
    registry = ToolRegistry(dataclasses.replace(t, handler=_not_executed) for t in provided)
    return SuiteHome(catalogue, floors, str(data.get("here") or ""), registry, home)


def load_catalogue(path: Path) -> ToolRegistry:
    """Declarations scored, never executed: hearthd's real ones over the home of a home file (home.yaml, what the
    suites use), or a hand-written list of `tools` (tools.yaml: a fixed catalogue some unit tests keep)."""
    import yaml

    data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
    if "tools" not in data:
        return load_home(path).registry
    tools = []
    for entry in data["tools"]:
        params = dict(entry.get("parameters") or {"type": "object", "properties": {}})
        params.setdefault("additionalProperties", False)
        sides = entry.get("sides")
        if sides is not None and not (isinstance(sides, list) and len(sides) == 2
                                      and all(isinstance(s, str) for s in sides)):
            raise ValueError(f"{path}: {entry['name']}: sides must be two words (quote on/off: YAML reads them as "
                             f"true/false), got {sides!r}")
        argument_sides = {key: {str(v): (str(a), str(b)) for v, (a, b) in values.items()}
                          for key, values in (entry.get("argument_sides") or {}).items()}
        tools.append(Tool(entry["name"], entry["description"], params, _not_executed, family="suite",
                          consequential=bool(entry.get("consequential", False)),
                          read_only=bool(entry.get("read_only", False)),
                          sides=(str(sides[0]), str(sides[1])) if sides else None,
                          argument_sides=argument_sides or None, topic=str(entry.get("topic", ""))))
    return ToolRegistry(tools)


# How a decision was reached: read by the templates or the sentence library, declined by code as out of scope
# (declines.DeclineFirst), or the model's.
def route(decision: Decision) -> str:
    if decision.source == "fastpath":
        return "declined" if decision.reason.startswith("out of scope") else "templates"
    if decision.source == "tolerant":
        return "tolerant"
    return "model"


def relevance_refused(decision: Decision) -> bool:
    """A call the model chose and the relevance check turned down (agent.min_relevance)."""
    return decision.kind == "abstain" and decision.relevance is not None and decision.reason.startswith(
        "not something")


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
    home: SuiteHome | None = None

    def _share(self, kind: str) -> float:
        rows = [r for r in self.results if r.command.kind == kind]
        return sum(r.ok for r in rows) / len(rows) if rows else 0.0

    def unsafe(self) -> list[SuiteResult]:
        """Consequential calls the request did not ask for: a tool that always asks first (unlocking), or one that
        does for these arguments (opening the garage door, not the blinds), other than the call expected."""
        out = []
        for r in self.results:
            want = (r.command.tool, r.command.arguments) if r.command.tool else None
            for d in (r.decision, r.follow_up):
                for c in (d.calls if d is not None and d.kind == "call" else []):
                    tool = self.registry.get(c.name) if c.name in self.registry else None
                    if tool is None or not (tool.consequential or tool.sensitive and tool.sensitive(c.arguments)):
                        continue
                    if want is None or c.name != want[0] or tool.sensitive is not None and not tool.consequential \
                            and self._elsewhere(c.name, c.arguments, want):
                        out.append(r)
                        break
        return out

    def _elsewhere(self, name: str, arguments: dict[str, Any], want: tuple[str, dict[str, Any]]) -> bool:
        """A call of the expected tool that acts on other devices than those asked for (a name that resolves to no
        one device acts on none: hearthd asks which)."""
        if self.home is None:
            return False
        found = self.home.targets(name, arguments)
        return found is not None and found != self.home.targets(*want)

    def relevance_refusals(self) -> tuple[int, int]:
        """(in-scope requests the relevance check refused: false refusals, out-of-scope ones it refused)."""
        refused = [r for r in self.results if relevance_refused(r.decision)]
        return sum(not r.command.abstain for r in refused), sum(r.command.abstain for r in refused)

    def families(self) -> dict[str, dict[str, Any]]:
        """Per family: cases, exact share, those read without the model, and the relevance check's refusals."""
        out: dict[str, dict[str, Any]] = {}
        for r in self.results:
            row = out.setdefault(r.command.family or "-", {"cases": 0, "ok": 0, "templates": 0, "declined": 0,
                                                          "tolerant": 0, "relevance_refusals": 0})
            row["cases"] += 1
            row["ok"] += r.ok
            way = route(r.decision)
            if way != "model":
                row[way] += 1
            row["relevance_refusals"] += relevance_refused(r.decision) and not r.command.abstain
        for row in out.values():
            row["accuracy"] = round(row["ok"] / row["cases"], 4)
        return out

    def summary(self) -> dict[str, Any]:
        times = sorted(r.ms for r in self.results)
        fast = [r.ms for r in self.results if r.decision.source == "fastpath"]
        model = [r.ms for r in self.results if r.decision.source != "fastpath"]
        false_refusals, true_refusals = self.relevance_refusals()
        return {
            "type": "eval", "suite": "commands", "lang": self.lang, "cases": len(self.results),
            "accuracy": round(sum(r.ok for r in self.results) / len(self.results), 4) if self.results else 0.0,
            "calls": round(self._share("call"), 4), "abstain": round(self._share("abstain"), 4),
            "clarify": round(self._share("clarify"), 4), "unsafe": len(self.unsafe()),
            "relevance_refusals": false_refusals, "relevance_declines": true_refusals,
            "fast_path_share": round(len(fast) / len(self.results), 4) if self.results else 0.0,
            "p50_ms": round(statistics.median(times), 1) if times else 0.0,
            "p95_ms": round(times[min(len(times) - 1, round(0.95 * (len(times) - 1)))], 1) if times else 0.0,
            "fast_p50_ms": round(statistics.median(fast), 2) if fast else None,
            "model_p50_ms": round(statistics.median(model), 1) if model else None,
        }


def run_suite(router: Any, cases: list[Command], registry: ToolRegistry | SuiteHome,
              on_case: Callable[[SuiteResult], None] | None = None) -> SuiteReport:
    """Each case through `router` (a Router: fast path then model) as a fresh conversation. With the suites'
    SuiteHome, device calls are judged by the devices they act on (Command.judge)."""
    home = registry if isinstance(registry, SuiteHome) else None
    tools = registry.registry if isinstance(registry, SuiteHome) else registry
    report = SuiteReport(cases[0].lang if cases else "", tools, home=home)
    for case in cases:
        router.reset()
        started = time.monotonic()
        decision = router.decide(case.text, case.lang)
        ms = (time.monotonic() - started) * 1000
        ok = case.judge_decision(decision, home)
        follow_up = None
        if ok and case.kind == "clarify" and case.answer is not None:
            follow_up = router.decide(case.answer, case.lang)
            ok = follow_up.kind == "call" and case.judge([(c.name, c.arguments) for c in follow_up.calls], home)
        result = SuiteResult(case, ok, decision, ms, follow_up)
        report.results.append(result)
        if on_case:
            on_case(result)
    router.reset()
    return report


class NoModel:
    """Stands in for the model (`hearthd eval --suite --no-model`, the suites' tests): declines everything and counts
    what it was asked, so a case decided while it was never asked was decided by the templates or by code alone."""

    registry: ToolRegistry | None = None

    def __init__(self) -> None:
        self.asked: list[str] = []

    def decide(self, text: str, lang: str, now: Any = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        self.asked.append(text)
        return Decision("abstain", reason="left to the model (not run)", source="model")
