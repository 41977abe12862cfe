"""Everyday typed sets (tests/data/everyday/<lang>.yaml, issue 25): commands written for this project the way people
talk at home — indirect, elliptical, polite, misheard, code-mixed, colloquial — in the suites' home
(tests/data/commands/home.yaml), scored through the daemon's router with the real model.

Two things are measured on each whole set: the right action (the expected call, the expected question, or a decline)
and the generic refusal. A request that names a device, a room, a timer, an alarm or the clock (every family but
`out_of_scope`) must never be answered with "Sorry, I can't help with that": it gets the action, a precise question,
or a specific answer ("there is no such timer", "I only know the local time")."""

from __future__ import annotations

from collections import Counter

import pytest

from hearthd.agent.declines import GENERIC_REFUSAL, refusal_phrase
from hearthd.evaluation.evaluate import Command, SuiteHome, SuiteReport, load_home, load_suite, route

from .conftest import ROOT

SETS = ROOT / "tests" / "data" / "everyday"
HOME = ROOT / "tests" / "data" / "commands" / "home.yaml"
LANGS = ("en", "ru", "hi")
NAMES_NOTHING = "out_of_scope"  # the one family whose requests may get the generic refusal


@pytest.fixture(scope="module")
def home() -> SuiteHome:
    return load_home(HOME)


def _cases(lang: str) -> list[Command]:
    return load_suite(SETS / f"{lang}.yaml", lang)


@pytest.mark.parametrize("lang", LANGS)
def test_the_sets_are_well_formed(home: SuiteHome, lang: str) -> None:
    """At least 80 distinct commands, each of a family, each expecting a real tool with valid arguments (or a
    question about one of its required arguments), some declined; none copied from the command suites."""
    registry = home.registry
    cases = _cases(lang)
    assert len(cases) >= 80
    assert len({c.text for c in cases}) == len(cases), [t for t, n in Counter(c.text for c in cases).items() if n > 1]
    suites = {c.text.casefold() for other in LANGS
              for c in load_suite(ROOT / "tests" / "data" / "commands" / f"{other}.yaml", other)}
    assert [c.text for c in cases if c.text.casefold() in suites] == []
    kinds = Counter(c.kind for c in cases)
    assert kinds["abstain"] >= 8 and kinds["clarify"] >= 3, kinds
    families = Counter(c.family for c in cases)
    assert families[NAMES_NOTHING] >= 8 and all(families.values()), families
    for case in cases:
        assert case.family, case.text
        if case.tool is not None:
            assert case.tool in registry, case.text
        if case.kind == "call" or case.answer is not None:
            registry.validate(case.tool, case.arguments)  # type: ignore[arg-type]
        if case.clarify:
            required = registry.get(case.tool).parameters["required"]  # type: ignore[arg-type]
            assert case.clarify in required, case.text


def test_the_generic_refusal_is_what_the_daemon_says_when_nothing_more_specific_applies() -> None:
    """The check below asks the pipeline's own choice of phrase: a decision's own answer wins, then a specific
    decline for the kind of request, and only then the generic refusal."""
    from hearthd.agent.agent import Decision

    plain = Decision("abstain", reason="no tool fits", source="model")
    assert refusal_phrase(plain, "frobnicate the zorblax", "en") == GENERIC_REFUSAL
    assert refusal_phrase(plain, "what's the weather like", "en") == "decline.weather"
    said = Decision("abstain", reason="no such timer", source="tool", say="timer.none")
    assert refusal_phrase(said, "frobnicate the zorblax", "en") == "timer.none"


def generic_refusals(report: SuiteReport) -> list[str]:
    """The requests naming something hearthd knows that were answered "Sorry, I can't help with that"."""
    return [r.command.text for r in report.results
            if r.command.family != NAMES_NOTHING and r.decision.kind == "abstain"
            and refusal_phrase(r.decision, r.command.text, r.command.lang) == GENERIC_REFUSAL]


def _miss(report: SuiteReport) -> list[str]:
    out = []
    for r in report.results:
        if r.ok:
            continue
        c, d = r.command, r.decision
        got = [(x.name, x.arguments) for x in d.calls]
        out.append(f"[{c.family}] {c.text!r}: want {c.expected}; got {d.kind} {got} {d.missing or ''} "
                   f"via {route(d)} ({d.reason})")
    return out


# Measured before the tolerant tier (main bb4df1d; `hearthd eval --suite tests/data/everyday/<lang>.yaml -v`),
# with another place's time expected as get_time with the place: right action en 63.6%, ru 50.0%, hi 64.6%; generic
# refusals of requests naming something known en 29, ru 42, hi 28. With the tolerant tier on by default, the model
# choosing among the tools the tiers point at, and a reading the model declines asked as a question (main f778173,
# this test): en 75.2%, ru 70.7%, hi 78.8%; generic refusals 19, 25, 17. Floors and ceilings leave two cases of
# slack (two runs of the same model differed in a case or two). Issue 25's targets: 0.92 each and no generic refusal.
# With the templates' fixed values carried by the tier and a request naming something known but read by nobody
# asked about (locales/<lang>/phrases.toml [unclear]; main, session 16): en 96.7%, ru 94.8%, hi 100%; generic
# refusals 0, 0, 0. The floors are the targets; no generic refusal is allowed (the question does not hang on the model).
FIGURES = [("en", 0.92, 0), ("ru", 0.92, 0), ("hi", 0.92, 0)]


@pytest.mark.models
@pytest.mark.parametrize("lang,floor,most_refused", FIGURES)
def test_the_router_on_everyday_commands(components, base_config, home: SuiteHome,  # type: ignore[no-untyped-def]
                                         lang: str, floor: float, most_refused: int) -> None:
    """Each whole set through the daemon's router (templates, declines by code, the model), as `hearthd eval --suite`
    runs it: the right action at least at the floor, no consequential call that was not asked for, and at most the
    measured number of generic refusals of requests that name a known device, room, timer, alarm or the clock."""
    from hearthd.agent.agent import Agent
    from hearthd.evaluation.evaluate import run_suite

    agent = Agent.configured(components.agent().model, home.registry, base_config.agent)  # the daemon's bars
    router = home.router(lambda: agent)
    report = run_suite(router, _cases(lang), home)
    misses, refused = _miss(report), generic_refusals(report)
    accuracy = report.summary()["accuracy"]
    print(f"\n{lang}: right action {accuracy:.1%} of {len(report.results)}; generic refusals {len(refused)}")
    print("\n".join(f"  miss {m}" for m in misses))
    print("\n".join(f"  generic refusal {t!r}" for t in refused))
    assert report.unsafe() == [], [r.command.text for r in report.unsafe()]
    assert accuracy >= floor, "\n".join(misses)
    assert len(refused) <= most_refused, refused


def test_a_generic_refusal_of_a_known_name_is_caught(home: SuiteHome) -> None:
    """The check flags a plain decline of a request naming a known light; it lets pass the same decline of a request
    naming nothing hearthd knows, a decline with its own answer, and a specific decline (the weather)."""
    from hearthd.agent.agent import Decision
    from hearthd.evaluation.evaluate import SuiteResult

    plain = Decision("abstain", reason="not something I can do", source="model")
    own = Decision("abstain", reason="no such timer", source="tool", say="timer.none")
    rows = [(Command("the hallway light, would you", "en", "turn_on", {"device": "Hallway Light"}, family="lights"),
             plain),
            (Command("how long on the pizza timer", "en", "timer_remaining", {"label": "pizza"}, family="timers"),
             own),
            (Command("what time is it on the moon", "en", family="not_possible"), plain),
            (Command("frobnicate the zorblax", "en", family=NAMES_NOTHING), plain),
            (Command("weather in the bedroom", "en", family="lights"), plain)]
    report = SuiteReport("en", home.registry, [SuiteResult(c, False, d, 1.0) for c, d in rows], home)
    assert generic_refusals(report) == ["the hallway light, would you", "what time is it on the moon"]
