"""The confirmation policy: consequential calls wait for a spoken yes in the user's language; anything else,
or silence, cancels; a confirmed call runs once; nothing the model writes changes what needs confirming."""

from __future__ import annotations

import asyncio

import pytest

from hearthd.agent.parsing import ToolCall
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.daemon.policy import ConfirmationPolicy, answer_of
from hearthd.events import EventType, Trace
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.registry import ToolRegistry


@pytest.mark.parametrize("text,lang,kind", [
    ("yes", "en", "yes"), ("Yes please.", "en", "yes"), ("go ahead", "en", "yes"), ("no", "en", "no"),
    ("nope", "en", "no"), ("what?", "en", "other"), ("yes but unlock the back door", "en", "other"),
    ("да", "ru", "yes"), ("ага", "ru", "yes"), ("Да, конечно", "ru", "yes"), ("нет", "ru", "no"),
    # courtesies around one answer: still that answer; both answers, or a request besides, or a courtesy alone: not
    ("Yes, of course.", "en", "yes"), ("no thanks then", "en", "no"), ("нет, конечно", "ru", "no"),
    ("нет, спасибо", "ru", "no"), ("जी नहीं, धन्यवाद", "hi", "no"), ("हाँ, बिल्कुल", "hi", "yes"),
    ("yes no", "en", "other"), ("please", "en", "other"), ("yes, unlock the back door too", "en", "other"),
    ("да нет", "ru", "other"), ("спасибо", "ru", "other"),
    ("отмена", "ru", "no"), ("может быть", "ru", "other"),
    ("हाँ", "hi", "yes"), ("जी हाँ", "hi", "yes"), ("haan ji", "hi", "yes"), ("नहीं", "hi", "no"),
    ("रहने दो", "hi", "no"), ("पता नहीं", "hi", "other"),
])
def test_yes_and_no_words_per_language(text: str, lang: str, kind: str) -> None:
    assert answer_of(text, lang) == kind


class Clock:
    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now


def test_consequential_calls_are_held_and_released_once() -> None:
    clock = Clock()
    policy = ConfirmationPolicy(ToolRegistry(AlarmBook().tools()), timeout=15, clock=clock)
    assert policy.review([ToolCall("list_alarms", {})], "en") == [ToolCall("list_alarms", {})]
    assert policy.review([ToolCall("cancel_all_alarms", {})], "en") is None and policy.pending()
    assert policy.answer("yes") == ("yes", [ToolCall("cancel_all_alarms", {})])
    assert policy.answer("yes") == ("other", [])  # a repeated yes finds nothing: the action ran once
    assert policy.review([ToolCall("cancel_all_alarms", {})], "en") is None
    clock.now += 16
    assert not policy.pending()  # silence past the timeout cancels


def test_config_adds_tools_to_confirm_and_a_mixed_request_waits_as_a_whole() -> None:
    policy = ConfirmationPolicy(ToolRegistry(AlarmBook().tools()), extra=["set_alarm"])
    calls = [ToolCall("list_alarms", {}), ToolCall("set_alarm", {"time": "07:00"})]
    assert policy.review(calls, "en") is None and policy.held is not None and policy.held.calls == calls


def ask(components: Components, text: str) -> tuple[str, Trace]:
    trace = Trace()
    result = asyncio.run(Pipeline(components, trace).run_text(text))
    return result.reply, trace


@pytest.fixture()
def fresh(base_config, tmp_path, monkeypatch) -> Components:  # type: ignore[no-untyped-def]
    """Components with their own alarm store and policy (the fast path handles these turns: no model loads)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return Components(base_config)


@pytest.mark.parametrize("lang,request_text,question,no,yes", [
    ("en", "cancel all my alarms", "Cancel all your alarms? Please say yes or no.", "no", "yes"),
    ("ru", "удали все будильники", "Отменить все будильники? Скажите да или нет.", "нет", "да"),
    ("hi", "सारे अलार्म हटा दो", "क्या सारे अलार्म रद्द कर दूँ? हाँ या नहीं बोलिए।", "नहीं", "हाँ"),
])
def test_cancel_all_alarms_asks_first_and_no_changes_nothing(fresh: Components, lang: str, request_text: str,
                                                             question: str, no: str, yes: str) -> None:
    for hhmm in ("06:00", "07:30"):
        fresh.alarms.add(hhmm)
    reply, trace = ask(fresh, request_text)
    assert reply == question
    (request,) = trace.of_type(EventType.CONFIRM_REQUEST)
    assert (request.name, request.arguments, request.question) == \
        ("cancel_all_alarms", {}, question)  # the trace interface of ARCHITECTURE.md
    assert not trace.of_type(EventType.TOOL_CALL)
    assert len(fresh.alarms.pending()) == 2
    reply, trace = ask(fresh, no)
    assert [e.answer for e in trace.of_type(EventType.CONFIRM_ANSWER)] == ["no"]
    assert len(fresh.alarms.pending()) == 2 and not trace.of_type(EventType.TOOL_CALL)
    # asked again, a yes runs it, once
    ask(fresh, request_text)
    reply, trace = ask(fresh, yes)
    assert [e.name for e in trace.of_type(EventType.TOOL_CALL)] == ["cancel_all_alarms"]
    assert fresh.alarms.pending() == []
    assert not fresh.policy.pending()  # released once: the same yes again has nothing to confirm


def test_anything_but_yes_cancels(fresh: Components) -> None:
    fresh.alarms.add("06:00")
    ask(fresh, "cancel all my alarms")
    reply, _ = ask(fresh, "set an alarm for 7 am")  # not an answer: the held call is dropped, nothing else runs
    assert reply == "Okay, I didn't do it." and [a.hhmm for a in fresh.alarms.pending()] == ["06:00"]


def test_a_consequential_call_cannot_reach_its_handler_unconfirmed(fresh: Components) -> None:
    fresh.alarms.add("06:00")
    result = asyncio.run(Pipeline(fresh, Trace())._execute("cancel_all_alarms", {}))
    assert not result.ok and len(fresh.alarms.pending()) == 1


def test_more_calls_than_the_ceiling_stop_the_turn_and_say_so(base_config, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = dataclasses.replace(base_config, agent=dataclasses.replace(base_config.agent, max_calls=1))
    c = Components(cfg)
    reply, trace = ask(c, "set an alarm for 6 am and set an alarm for 7 am")
    assert reply == "That's more than I can do at once. Please ask for one or two things at a time."
    assert not trace.of_type(EventType.TOOL_CALL) and c.alarms.pending() == []


@pytest.mark.models
def test_the_model_turn_stops_at_its_time_and_token_ceilings(components) -> None:  # type: ignore[no-untyped-def]
    import dataclasses

    from hearthd.agent.agent import Agent
    from hearthd.agent.model import ChatModel

    model = components.agent().model
    slow = Agent(model, components.tools, max_turn_s=0.001)
    out = slow.decide("could you wake me up at half past six tomorrow", "en")
    assert (out.kind, out.say, out.calls) == ("abstain", "agent.too_slow", [])
    tight = ChatModel.__new__(ChatModel)
    tight.__dict__.update(model.__dict__)
    tight.cfg = dataclasses.replace(model.cfg, max_tokens=2)
    from pathlib import Path

    from hearthd.evaluation.evaluate import load_catalogue

    catalogue = load_catalogue(Path(__file__).parent / "data" / "commands" / "tools.yaml")
    # "в спальне" names two things (the bedroom light, the bedroom heater): the model must decode which
    out = Agent(tight, catalogue).decide("включи свет в спальне", "ru", only="turn_on")
    assert (out.kind, out.say, out.calls) == ("abstain", "agent.too_long", [])
    out = Agent(model, catalogue).decide("turn on the kitchen light", "en", only="turn_on")
    assert [(c.name, c.arguments) for c in out.calls] == [("turn_on", {"device": "kitchen light"})]


def test_a_request_sent_twice_with_its_id_acts_once(tmp_path) -> None:  # type: ignore[no-untyped-def]
    import json as _json
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path)}

    def send(request_id: str) -> list[dict]:  # type: ignore[type-arg]
        out = subprocess.run([sys.executable, "-m", "hearthd", "ask", "set an alarm for 6 am", "--request-id",
                              request_id, "--json"], env=env, capture_output=True, text=True, timeout=120, check=True)
        return [_json.loads(x) for x in out.stdout.splitlines() if x.startswith("{")]

    first, again, other = send("r-1"), send("r-1"), send("r-2")
    results = [[e for e in run if e["type"] == "tool_result"][0] for run in (first, again, other)]
    assert [r.get("duplicate", False) for r in results] == [False, True, False]
    assert [e["text"] for e in again if e["type"] == "reply"] == ["Alarm set for 6:00."]  # answered the same
    assert len(AlarmBook(path=tmp_path / "hearthd" / "alarms.db").pending()) == 2  # r-1 once, r-2 once
