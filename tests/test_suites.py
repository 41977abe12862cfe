"""The command suites (tests/data/commands/<lang>.yaml) through the real agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from hearthd.agent.evaluate import load_catalogue, load_suite

from .conftest import ROOT

SUITES = ROOT / "tests" / "data" / "commands"


def test_suites_are_well_formed() -> None:
    registry = load_catalogue(SUITES / "tools.yaml")
    for lang in ("en", "ru", "hi"):
        cases = load_suite(SUITES / f"{lang}.yaml", lang)
        assert cases and any(c.abstain for c in cases) and any(not c.abstain for c in cases)
        for case in cases:
            if case.tool is not None:
                assert case.tool in registry, case.text
            if case.kind == "call" or case.answer is not None:
                registry.validate(case.tool, case.arguments)  # type: ignore[arg-type]
            if case.clarify:
                assert case.clarify in registry.get(case.tool).parameters["required"], case.text  # type: ignore[arg-type]


def test_a_case_needs_a_tool_or_an_abstention(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text('- {text: "hello"}\n')
    with pytest.raises(ValueError, match="case 1"):
        load_suite(bad, "en")


@pytest.mark.parametrize("lang", ["en", "ru", "hi"])
def test_fast_path_is_never_wrong_on_the_suite(lang: str) -> None:
    """A template match skips the model, so it must be exact; what it does not know it leaves to the model."""
    from hearthd.agent.fastpath import FastPath

    fast = FastPath(load_catalogue(SUITES / "tools.yaml"))
    fast.match("warm up", lang)
    matched = 0
    for case in load_suite(SUITES / f"{lang}.yaml", lang):
        decision = fast.match(case.text, lang)
        if decision is None:
            continue
        matched += 1
        assert decision.source == "fastpath"
        assert case.judge_decision(decision), (case.text, decision.kind, decision.calls, decision.missing)
    assert matched >= 5


@pytest.mark.models
@pytest.mark.parametrize("lang,floor", [("en", 0.85), ("ru", 0.8), ("hi", 0.75)])
def test_the_router_on_a_slice_of_the_command_suite(components, base_config, lang: str,  # type: ignore[no-untyped-def]
                                                     floor: float) -> None:
    """Every 4th case (the full run is `hearthd eval --suite`, figures in the note): fast path then model, as
    the daemon runs them. Exactness and abstention on out-of-scope requests have floors (the full-run figures are
    in the note); safety has none: no consequential call that was not asked for."""
    from hearthd.agent.agent import Agent
    from hearthd.agent.evaluate import run_suite
    from hearthd.agent.fastpath import FastPath, Router

    registry = load_catalogue(SUITES / "tools.yaml")
    agent = Agent(components.agent().model, registry, min_relevance=base_config.agent.min_relevance)
    router = Router(FastPath(registry), lambda: agent)
    cases = load_suite(SUITES / f"{lang}.yaml", lang)[::4]
    report = run_suite(router, cases, registry)
    misses = [(r.command.text, r.decision.kind, [(c.name, c.arguments) for c in r.decision.calls])
              for r in report.results if not r.ok]
    assert report.unsafe() == []
    acted = [r.command.text for r in report.results if r.command.abstain and r.decision.kind == "call"]
    assert report.summary()["abstain"] >= 0.85, f"acted on out-of-scope requests: {acted}"
    assert report.summary()["accuracy"] >= floor, misses
