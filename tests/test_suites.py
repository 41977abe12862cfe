"""The command suites (tests/data/commands/<lang>.yaml), spoken in the suites' home (home.yaml), through the real
agent: hearthd's real tool declarations, its templates and the sentence library over the home's names."""

from __future__ import annotations

import copy
from collections import Counter
from pathlib import Path

import pytest

from hearthd.config import Config
from hearthd.evaluation.evaluate import Command, NoModel, SuiteHome, load_home, load_suite

from .conftest import ROOT

SUITES = ROOT / "tests" / "data" / "commands"
LANGS = ("en", "ru", "hi")


@pytest.fixture(scope="module")
def home() -> SuiteHome:
    return load_home(SUITES / "home.yaml")


def test_suites_are_well_formed(home: SuiteHome) -> None:
    registry = home.registry
    for lang in LANGS:
        cases = load_suite(SUITES / f"{lang}.yaml", lang)
        assert len(cases) >= 400, lang
        assert cases and any(c.abstain for c in cases) and any(not c.abstain for c in cases)
        assert len({c.text for c in cases}) == len(cases), [t for t, n in Counter(c.text for c in cases).items()
                                                            if n > 1]
        for case in cases:
            assert case.family, case.text
            if case.tool is not None:
                assert case.tool in registry, case.text
            if case.kind == "call" or case.answer is not None:
                registry.validate(case.tool, case.arguments)  # type: ignore[arg-type]
            if case.clarify:
                tool = registry.get(case.tool)  # type: ignore[arg-type]
                # required, or what the call must name to act at all (a device: "turn on the" asks which)
                assert case.clarify in {*tool.parameters["required"], *tool.model_parameters["required"]}, case.text


def test_the_suites_tools_are_the_daemons(home: SuiteHome, base_config: Config, tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    """The suites are scored against the declarations the daemon makes (alarms, timers, clock, desktop, smart home),
    not a copy that drifts from them."""
    from hearthd.daemon.components import Components

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = cfg.mqtt.enabled = True
    daemon = Components(cfg).tools

    def declared(tools: object) -> list[tuple[object, ...]]:
        return [(t.name, t.family, t.description, t.parameters, t.consequential) for t in tools]  # type: ignore[attr-defined]

    assert declared(home.registry) == declared(daemon)


def test_the_unit_tests_catalogue_matches_the_daemons_tools(home: SuiteHome) -> None:
    """tools.yaml, the fixed catalogue some unit tests declare, is checked against hearthd's real declarations: the
    same tools, the same arguments as the model sees them, the same types, bounds and required ones, the same
    confirmations; it may only narrow a free name to a list of the test home's devices (an enum)."""
    from hearthd.evaluation.evaluate import load_catalogue

    for tool in load_catalogue(SUITES / "tools.yaml"):
        assert tool.name in home.registry, tool.name
        real = home.registry.get(tool.name)
        assert tool.consequential == real.consequential, tool.name
        assert (tool.read_only, tool.sides, tool.argument_sides, tool.topic) == \
            (real.read_only, real.sides, real.argument_sides, real.topic), tool.name
        mine, theirs = tool.model_parameters, real.model_parameters
        assert sorted(mine.get("required", [])) == sorted(theirs.get("required", [])), tool.name
        assert mine["properties"].keys() == theirs["properties"].keys(), tool.name
        for key, prop in mine["properties"].items():
            want = theirs["properties"][key]
            for word in ("type", "pattern", "minimum", "maximum"):
                assert prop.get(word) == want.get(word), (tool.name, key, word)
            if "enum" in want:
                assert set(prop.get("enum", ())) <= set(want["enum"]), (tool.name, key)
            else:
                assert "enum" not in prop or prop.get("x-ground") == "name", (tool.name, key)


def test_a_case_needs_a_tool_or_an_abstention(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text('- {text: "hello"}\n')
    with pytest.raises(ValueError, match="case 1"):
        load_suite(bad, "en")


def test_families_come_from_section_marks_or_the_case(tmp_path: Path) -> None:
    suite = tmp_path / "x.yaml"
    suite.write_text('# family: clock\n- {text: "what time is it", tool: get_time, arguments: {}}\n'
                     '- {text: "the date", tool: get_time, arguments: {what: date}, family: dates}\n'
                     '# family: out_of_scope\n- {text: "tell me a joke", abstain: true, xfail_fast: "why"}\n')
    cases = load_suite(suite, "en")
    assert [(c.family, c.xfail_fast) for c in cases] == [("clock", ""), ("dates", ""), ("out_of_scope", "why")]


def test_a_device_call_is_judged_by_the_devices_it_acts_on(home: SuiteHome) -> None:
    """The library's group call for the bedroom's one light is the named call; a name is said in any case."""
    case = Command("turn off the lights in the bedroom", "en", "turn_off", {"device": "bedroom light"})
    assert case.judge([("turn_off", {"area": "Bedroom", "domain": "light"})], home)
    assert case.judge([("turn_off", {"device": "Bedroom Light"})], home)
    assert not case.judge([("turn_off", {"area": "Upstairs", "domain": "light"})], home)  # three lights
    assert not case.judge([("turn_on", {"device": "Bedroom Light"})], home)
    lights = Command("lights off", "en", "turn_off", {"area": "Living Room", "domain": "light"})
    assert not lights.judge([("turn_off", {"device": "Living Room Light"})], home)  # the floor lamp too
    clock = Command("what time is it", "en", "get_time", {})
    assert clock.judge([("get_time", {"what": "time"})], home) and not clock.judge([("get_time", {"what": "date"})])


def test_several_calls_asked_at_once_are_all_judged(home: SuiteHome, tmp_path: Path) -> None:
    """`also`: the bedroom's and the office's lights, each done, in any order; one of them alone, or the whole floor
    (the bathroom's light too), is a miss."""
    suite = tmp_path / "x.yaml"
    suite.write_text('- {text: "turn off the lights in the bedroom and the office", tool: turn_off, arguments: '
                     '{area: Bedroom, domain: light}, also: [{tool: turn_off, '
                     'arguments: {area: Office, domain: light}}]}\n')
    case = load_suite(suite, "en")[0]
    assert case.judge([("turn_off", {"device": "Desk Lamp"}), ("turn_off", {"device": "Bedroom Light"})], home)
    assert not case.judge([("turn_off", {"device": "Bedroom Light"})], home)
    assert not case.judge([("turn_off", {"area": "Upstairs", "domain": "light"})], home)
    assert not case.judge([("turn_off", {"device": "Bedroom Light"}), ("turn_off", {"device": "Bedroom Light"})], home)


def _fast_decisions(home: SuiteHome, lang: str, tolerant: bool = False) -> list[tuple[Command, object, bool]]:
    """Each case through the daemon's router with the model standing in: (case, decision, read without the model).
    The strict templates alone unless `tolerant`."""
    model = NoModel()
    router = home.router(lambda: model, tolerant=tolerant)
    out = []
    for case in load_suite(SUITES / f"{lang}.yaml", lang):
        router.reset()
        asked = len(model.asked)
        decision = router.decide(case.text, lang)
        if case.kind == "clarify" and case.answer is not None and decision.kind == "clarify":
            decision = router.decide(case.answer, lang) if len(model.asked) == asked else decision
        out.append((case, decision, len(model.asked) == asked))
    return out


@pytest.mark.parametrize("lang", LANGS)
def test_fast_path_is_never_wrong_on_the_suite(home: SuiteHome, lang: str) -> None:
    """A template match (or a decline by code) skips the model, so it must be exact; what it does not know it leaves
    to the model. Cases marked `xfail_fast` are hearthd's known misreadings: counted and printed, not failed."""
    from hearthd.evaluation.evaluate import route

    known, wrong, read = [], [], Counter()
    total = Counter()
    for case, decision, fast in _fast_decisions(home, lang):
        total[case.family] += 1
        if not fast:
            continue
        read[case.family] += 1
        assert route(decision) != "model"  # type: ignore[arg-type]
        ok = _judged(case, decision, home)
        if case.xfail_fast:
            known.append((case.text, ok, [(c.name, c.arguments) for c in decision.calls]))  # type: ignore[attr-defined]
        elif not ok:
            wrong.append((case.text, decision.kind, [(c.name, c.arguments) for c in decision.calls],  # type: ignore[attr-defined]
                          decision.missing))  # type: ignore[attr-defined]
    print(f"\n{lang}: read without the model {sum(read.values())}/{sum(total.values())}; " +
          ", ".join(f"{f} {read[f]}/{n}" for f, n in sorted(total.items())))
    for text, ok, calls in known:
        print(f"  known fast-path misreading{' (now right)' if ok else ''}: {text!r} -> {calls}")
    assert wrong == []
    assert sum(read.values()) >= 100


@pytest.mark.parametrize("lang", LANGS)
def test_the_tolerant_tier_on_the_suite_adds_readings_and_never_acts_unasked(home: SuiteHome, lang: str) -> None:
    """With the tolerant tier, more of the suite is read without the model, at least as many cases are right as by
    the templates alone, and none of its readings is an out-of-scope request acted on without a question."""
    strict = _fast_decisions(home, lang)
    loose = _fast_decisions(home, lang, tolerant=True)
    right = [sum(_judged(c, d, home) for c, d, fast in run if fast) for run in (strict, loose)]
    read = [sum(fast for _, _, fast in run) for run in (strict, loose)]
    # More is read in Russian and Hindi (inflection, particles, word order); the English suite's template misses are
    # now almost all requests hearthd cannot do ("book me a taxi", "what's 15 times 7"), which the tier rightly leaves
    # to the model, so there it reads as much as the templates, not more.
    assert (read[1] > read[0] if lang != "en" else read[1] >= read[0]) and right[1] >= right[0], (read, right)
    acted = [c.text for c, d, _ in loose if c.abstain and getattr(d, "source", "") == "tolerant"
             and getattr(d, "kind", "") == "call" and not getattr(d, "confirm", False)]
    assert acted == []
    print(f"\n{lang}: read without the model {read[0]} → {read[1]}, right {right[0]} → {right[1]}")


def _judged(case: Command, decision: object, home: SuiteHome) -> bool:
    if case.kind == "clarify" and case.answer is not None and getattr(decision, "kind", "") == "call":
        return case.judge([(c.name, c.arguments) for c in decision.calls], home)  # type: ignore[attr-defined]
    return case.judge_decision(decision, home)  # type: ignore[arg-type]


# Every STRIDE-th case (about 60 of each suite's 410-430, some 17 of them reaching the model): 40-65 s a language on
# 2 cores, measured; the floors sit a few points under the figures measured on the grown suites (en 84%, ru 83%,
# hi 81% at stride 7), which are harder than the first ones were (indirect, elliptical, group and question styles).
STRIDE = 7


@pytest.mark.models
@pytest.mark.parametrize("lang,floor", [("en", 0.8), ("ru", 0.78), ("hi", 0.75)])
def test_the_router_on_a_slice_of_the_command_suite(components, base_config, home: SuiteHome,  # type: ignore[no-untyped-def]
                                                     lang: str, floor: float) -> None:
    """Every STRIDE-th case (the full run is `hearthd eval --suite`, figures in the note): fast path, declines by
    code, then model, as the daemon runs them. Exactness and abstention on out-of-scope requests have floors (the
    full-run figures are in the note); safety has none: no consequential call that was not asked for."""
    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import run_suite

    agent = Agent(components.agent().model, home.registry, min_relevance=base_config.agent.min_relevance)
    router = home.router(lambda: agent)
    cases = load_suite(SUITES / f"{lang}.yaml", lang)[::STRIDE]
    report = run_suite(router, cases, home)
    misses = [(r.command.text, r.decision.kind, [(c.name, c.arguments) for c in r.decision.calls])
              for r in report.results if not r.ok]
    assert report.unsafe() == []
    acted = [r.command.text for r in report.results if r.command.abstain and r.decision.kind == "call"]
    assert report.summary()["abstain"] >= 0.85, f"acted on out-of-scope requests: {acted}"
    assert report.summary()["accuracy"] >= floor, misses


def test_eval_suite_reports_each_family_without_a_model() -> None:
    """`hearthd eval --suite --no-model`: the fast path's coverage per family, with the overall figures kept."""
    import json
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-m", "hearthd", "eval", "--suite", str(SUITES / "ru.yaml"), "--no-model",
                           "--json"], capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    lines = [json.loads(x) for x in proc.stdout.splitlines()]
    (summary,) = [x for x in lines if x["type"] == "eval"]
    families = {x["family"]: x for x in lines if x["type"] == "eval_family"}
    assert summary["cases"] == sum(f["cases"] for f in families.values()) >= 400
    assert {"unsafe", "accuracy", "relevance_refusals", "relevance_declines"} <= set(summary)
    assert summary["unsafe"] == 0 and summary["relevance_refusals"] == 0  # no model: nothing for the check to refuse
    assert {"groups", "questions", "named_timers", "clock", "out_of_scope"} <= set(families)
    assert families["named_timers"]["templates"] >= 10 and families["out_of_scope"]["declined"] >= 10
    cases = [x for x in lines if x["type"] == "eval_case"]
    assert {"family", "route", "relevance"} <= set(cases[0])
