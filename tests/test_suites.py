"""The command suites (tests/data/commands/<lang>.yaml) through the real agent."""

from __future__ import annotations

from pathlib import Path

import pytest

from hearthd.agent.evaluate import load_suite

from .conftest import ROOT

SUITES = ROOT / "tests" / "data" / "commands"


def test_suites_are_well_formed() -> None:
    for lang in ("en", "ru", "hi"):
        cases = load_suite(SUITES / f"{lang}.yaml", lang)
        assert cases and any(c.abstain for c in cases) and any(not c.abstain for c in cases)


def test_a_case_needs_a_tool_or_an_abstention(tmp_path: Path) -> None:
    bad = tmp_path / "x.yaml"
    bad.write_text('- {text: "hello"}\n')
    with pytest.raises(ValueError, match="case 1"):
        load_suite(bad, "en")


@pytest.mark.parametrize("lang", ["en", "ru", "hi"])
def test_fast_path_is_never_wrong_on_the_suite(lang: str) -> None:
    """A template match skips the model, so it must be exact; what it does not know it leaves to the model."""
    from hearthd.agent.fastpath import FastPath
    from hearthd.tools.alarms import AlarmBook
    from hearthd.tools.registry import ToolRegistry

    fast = FastPath(ToolRegistry(AlarmBook().tools()))
    fast.match("warm up", lang)
    matched = 0
    for case in load_suite(SUITES / f"{lang}.yaml", lang):
        decision = fast.match(case.text, lang)
        if decision is None:
            continue
        matched += 1
        assert decision.source == "fastpath"
        assert case.judge([(c.name, c.arguments) for c in decision.calls]), case.text
    assert matched >= 5


@pytest.mark.models
@pytest.mark.parametrize("lang,floor", [("en", 0.85), ("ru", 0.8), ("hi", 0.7)])
def test_model_alone_on_the_command_suite(components, lang: str, floor: float) -> None:  # type: ignore[no-untyped-def]
    agent = components.agent()
    cases = load_suite(SUITES / f"{lang}.yaml", lang)
    misses = []
    for case in cases:
        decision = agent.decide(case.text, lang)
        calls = [(c.name, c.arguments) for c in decision.calls] if decision.kind == "call" else []
        if not case.judge(calls):
            misses.append((case.text, calls, decision.reason))
        if case.abstain:
            assert calls == [], f"acted on an out-of-scope request: {case.text!r} -> {calls}"
    assert 1 - len(misses) / len(cases) >= floor, misses
