"""Each question belongs to its conversation (issue 15, item 1): a confirmation, a clarification or a "which one?"
is answered only from the conversation that was asked; a request from another one is a turn of its own and the
question stays open. These turns run over the text chain with real components; the fast path decides them."""

from __future__ import annotations

import json
from typing import Any

import pytest

from hearthd.agent.parsing import ToolCall
from hearthd.daemon.choice import Choice
from hearthd.daemon.components import Components
from hearthd.daemon.dialogue import LOCAL, Dialogues
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.locale import phrase


@pytest.fixture()
def fresh(base_config, tmp_path, monkeypatch) -> Components:  # type: ignore[no-untyped-def]
    """Components with their own alarm store (the fast path handles these turns: no model loads)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return Components(base_config)


async def say(components: Components, text: str, conversation: str = LOCAL) -> tuple[str, list[Any]]:
    trace = Trace()
    reply = (await Pipeline(components, trace).run_text(text, conversation=conversation)).reply
    return reply, trace.events


def names(events: list[Any], kind: EventType = EventType.TOOL_CALL) -> list[str]:
    return [getattr(e, "name", "") for e in events if e.type == kind]


async def test_another_conversations_request_is_its_own_turn_and_the_question_stays(fresh: Components) -> None:
    """A asked "cancel all my alarms"; B's "set an alarm for 3:33 called bee" was taken as A's answer ("Okay, I
    didn't do it.") and B's request was lost."""
    fresh.alarms.add("06:00")
    question, _ = await say(fresh, "cancel all my alarms", "dbus::1.7")
    assert question == phrase("en", "confirm.cancel_all_alarms")
    reply, events = await say(fresh, "set an alarm for 3:33 called bee", "dbus::1.8")
    assert names(events) == ["set_alarm"] and not names(events, EventType.CONFIRM_ANSWER)
    assert reply != phrase("en", "confirm.cancelled")
    assert sorted(a.hhmm for a in fresh.alarms.pending()) == ["03:33", "06:00"]
    # B's "yes" is no answer to A's question either
    reply, events = await say(fresh, "yes", "dbus::1.8")
    assert reply == phrase("en", "confirm.nothing_open") and not names(events)
    assert len(fresh.alarms.pending()) == 2
    # A's question is still open: A's "no" answers it, and nothing is cancelled
    reply, events = await say(fresh, "no", "dbus::1.7")
    assert reply == phrase("en", "confirm.cancelled")
    assert [e.answer for e in events if e.type == EventType.CONFIRM_ANSWER] == ["no"]
    assert len(fresh.alarms.pending()) == 2
    # the audit says who asked each turn, and who answered
    assert fresh.audit is not None
    records = [json.loads(line) for line in fresh.audit.path.read_text().splitlines()]
    assert [(r["conversation"], r.get("policy")) for r in records] == [
        ("dbus::1.7", "asked"), ("dbus::1.8", "not_needed"), ("dbus::1.8", "not_needed"), ("dbus::1.7", "declined")]


async def test_only_the_asker_s_yes_confirms(fresh: Components) -> None:
    fresh.alarms.add("06:00")
    await say(fresh, "cancel all my alarms", "mqtt:a")
    for other in (LOCAL, "mqtt:b", "dbus::1.9"):
        reply, events = await say(fresh, "yes", other)
        assert not names(events) and reply == phrase("en", "confirm.nothing_open")
    assert len(fresh.alarms.pending()) == 1
    reply, events = await say(fresh, "yes", "mqtt:a")
    assert names(events) == ["cancel_all_alarms"] and fresh.alarms.pending() == []


async def test_a_clarification_is_answered_only_by_its_own_conversation(fresh: Components) -> None:
    question, _ = await say(fresh, "set an alarm", "dbus::1.7")
    assert question == phrase("en", "ask.time")
    # another requester's request is its own turn, not A's answer
    _, events = await say(fresh, "set a timer for 5 minutes", "dbus::1.8")
    assert names(events) == ["set_timer"] and fresh.alarms.pending() == [] and len(fresh.alarms.pending("timer")) == 1
    dialogue = fresh.dialogues.peek("dbus::1.7")
    assert dialogue is not None and dialogue.pending is not None  # still open
    _, events = await say(fresh, "for 7:30", "dbus::1.7")
    assert [e.arguments for e in events if e.type == EventType.TOOL_CALL] == [{"time": "07:30"}]
    assert [a.hhmm for a in fresh.alarms.pending()] == ["07:30"]


async def test_the_language_of_one_conversation_is_not_anothers(fresh: Components) -> None:
    await say(fresh, "поставь будильник", "mqtt:ru")  # "На какое время?"
    await say(fresh, "set a timer for 5 minutes", "mqtt:en")
    trace = Trace()
    result = await Pipeline(fresh, trace).run_text("7:30", conversation="mqtt:ru")  # no script: its own language
    assert result.lang == "ru" and [a.hhmm for a in fresh.alarms.pending()] == ["07:30"]


def test_the_registry_is_bounded_and_forgets_the_idle_first() -> None:
    now = [0.0]
    dialogues = Dialogues(max_size=4, idle_s=100, clock=lambda: now[0])
    dialogues.get(LOCAL)
    asking = dialogues.get("mqtt:asking")
    asking.choice = Choice(ToolCall("x", {}), "device", ["a", "b"], "en", float("inf"))
    for n in range(10):
        dialogues.get(f"mqtt:{n}")
    assert len(dialogues) == 4 and LOCAL in dialogues and "mqtt:asking" in dialogues  # open questions stay longest
    assert "mqtt:9" in dialogues and "mqtt:0" not in dialogues
    now[0] = 1000.0
    dialogues.get("mqtt:new")
    # idle past idle_s with nothing open: forgotten; the local one and an open question are kept
    assert sorted(k for k in ("local", "mqtt:asking", "mqtt:new", "mqtt:9") if k in dialogues) == \
        ["local", "mqtt:asking", "mqtt:new"]


def test_a_crowd_of_open_questions_never_pushes_out_another_doors_question() -> None:
    """Issue 26, item 7: 64 MQTT conversations each opening a question evicted a D-Bus requester's pending one. The
    crowd makes room within its own door; the D-Bus question stays open for its answer."""
    now = [0.0]
    dialogues = Dialogues(max_size=8, idle_s=100, clock=lambda: now[0])

    def ask(conversation: str) -> None:
        dialogues.get(conversation).choice = Choice(ToolCall("x", {}), "device", ["a", "b"], "en", float("inf"))

    ask("dbus:1.42")
    for n in range(64):
        ask(f"mqtt:{n}")
        now[0] += 1
    assert "dbus:1.42" in dialogues and dialogues.get("dbus:1.42").is_open(now[0])
    assert len(dialogues) == 8 and "mqtt:63" in dialogues and "mqtt:0" not in dialogues  # the crowd's own oldest went
    for n in range(8):  # a new door finding every place another door's open question: answered, but not kept
        ask(f"wyoming:{n}")
    assert "dbus:1.42" in dialogues and "mqtt:63" in dialogues
    assert len(dialogues) <= 8


async def test_a_question_pushed_out_or_not_kept_is_said_to_its_requester(fresh: Components) -> None:
    """Issue 26, item 7, "and must be said": a requester whose question was closed to make room for its own door's
    newer ones hears why when it answers, and one that finds every place taken by other doors' questions is not
    asked a question it could never answer. Nothing runs on either's yes; the D-Bus question survives the crowd."""
    fresh.alarms.add("06:00")
    fresh.dialogues.max_size = 4
    question = phrase("en", "confirm.cancel_all_alarms")
    assert (await say(fresh, "cancel all my alarms", "dbus::1.7"))[0] == question
    for n in range(5):  # the crowd makes room within its own door
        assert (await say(fresh, "cancel all my alarms", f"mqtt:{n}"))[0] == question
    reply, events = await say(fresh, "yes", "mqtt:0")
    assert reply == phrase("en", "confirm.dropped") and not names(events)
    assert (await say(fresh, "cancel all my alarms", "mqtt:5"))[0] == question  # every place an open question again
    # a door with no conversation of its own to give up: its question is not asked, and it hears why
    reply, events = await say(fresh, "cancel all my alarms", "wyoming:kitchen")
    assert reply == phrase("en", "confirm.too_many_open")
    assert [e.code for e in events if e.type == EventType.ERROR] == ["dialogue-full"]
    assert not names(events, EventType.CONFIRM_REQUEST)
    reply, _ = await say(fresh, "yes", "wyoming:kitchen")
    assert reply == phrase("en", "confirm.nothing_open")
    reply, _ = await say(fresh, "yes", "mqtt:0")  # told once; from then on, an ordinary stray "yes"
    assert reply == phrase("en", "confirm.nothing_open")
    assert [a.hhmm for a in fresh.alarms.pending()] == ["06:00"]
    # a turn that asks nothing is answered as usual from that door
    reply, events = await say(fresh, "set an alarm for 7:15", "wyoming:kitchen")
    assert names(events) == ["set_alarm"]
    # and the D-Bus requester's question was never pushed out
    reply, events = await say(fresh, "yes", "dbus::1.7")
    assert names(events) == ["cancel_all_alarms"] and fresh.alarms.pending() == []


def test_hearthd_ask_then_is_one_conversation(tmp_path) -> None:  # type: ignore[no-untyped-def]
    """`hearthd ask … --then …`: each --then answers the question the turn before asked (the local conversation)."""
    import json
    import os
    import subprocess
    import sys

    env = {**os.environ, "XDG_STATE_HOME": str(tmp_path / "state"), "XDG_CONFIG_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "hearthd", "ask", "set an alarm", "--then", "for 7:30",
                           "--then", "cancel all my alarms", "--then", "yes", "--json"],
                          capture_output=True, text=True, timeout=120, env=env)
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(x) for x in proc.stdout.splitlines() if x.startswith("{")]
    assert [e["name"] for e in events if e["type"] == "tool_call"] == ["set_alarm", "cancel_all_alarms"]
    replies = [e["text"] for e in events if e["type"] == "reply"]
    assert replies[:3] == [phrase("en", "ask.time"), "Alarm set for 7:30.", phrase("en", "confirm.cancel_all_alarms")]
    assert [e["answer"] for e in events if e["type"] == "confirm_answer"] == ["yes"]


# -- issue 17, item 3: one timeout rule on one clock, and the conversation's room --------------------------------

@pytest.fixture()
def clocked(base_config, tmp_path, monkeypatch) -> tuple[Components, list[float]]:  # type: ignore[no-untyped-def]
    """Components whose questions all run on one clock the test moves (the policy's, the Router's, the Dialogues')."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    now = [1000.0]
    return Components(base_config, ticks=lambda: now[0]), now


async def test_a_confirmation_answered_after_its_timeout_runs_nothing(clocked) -> None:  # type: ignore[no-untyped-def]
    c, now = clocked
    c.alarms.add("06:00")
    assert (await say(c, "cancel all my alarms", "mqtt:a"))[0] == phrase("en", "confirm.cancel_all_alarms")
    now[0] += c.cfg.policy.confirm_timeout_s - 1  # just inside: still open
    dialogue = c.dialogues.peek("mqtt:a")
    assert dialogue is not None and dialogue.is_open(now[0])
    now[0] += 1  # at the deadline: closed when the next turn begins
    reply, events = await say(c, "yes", "mqtt:a")
    assert reply == phrase("en", "confirm.nothing_open") and not names(events)
    assert [a.hhmm for a in c.alarms.pending()] == ["06:00"]


async def test_a_question_for_a_missing_detail_closes_on_the_same_rule(clocked) -> None:  # type: ignore[no-untyped-def]
    c, now = clocked
    assert (await say(c, "set an alarm", "dbus::1.4"))[0] == phrase("en", "ask.time")
    now[0] += c.cfg.agent.clarify_timeout_s
    dialogue = c.dialogues.get("dbus::1.4")  # the next turn of that conversation begins past the deadline
    assert dialogue.pending is None and not dialogue.is_open(now[0])
    assert c.alarms.pending() == []


def test_every_kind_of_question_expires_at_its_deadline() -> None:
    from hearthd.agent.fastpath import Pending
    from hearthd.daemon.policy import Held

    now = [0.0]
    dialogues = Dialogues(clock=lambda: now[0])
    d = dialogues.get("mqtt:x")
    call = ToolCall("set_alarm", {})
    d.pending = Pending(call, "time", "set an alarm", "en", 10.0)
    d.held = Held([call], "en", 20.0)
    d.choice = Choice(call, "device", ["a", "b"], "en", 30.0)
    for at, left in ((9.9, ("pending", "held", "choice")), (10.0, ("held", "choice")), (20.0, ("choice",)),
                     (30.0, ())):
        now[0] = at
        d = dialogues.get("mqtt:x")
        assert tuple(k for k in ("pending", "held", "choice") if getattr(d, k) is not None) == left, at
        assert d.is_open(at) == bool(left)


async def test_here_is_the_room_of_the_conversation(base_config, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """A conversation with a room of its own (a satellite's) reads "here" as that room; one without, as the
    configured room of the microphone; neither leaks into the other."""
    import copy

    from hearthd.tools.discovery import Entity

    from .mqtt_sim import CommandRecorder

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.general.area = "Kitchen"
    c = Components(cfg)
    for key, name, area in (("kl", "Kitchen Light", "Kitchen"), ("bl", "Bedroom Lamp", "Bedroom")):
        c.catalogue.entities[f"light.{key}"] = Entity(source=key, key=f"light.{key}", component="light", name=name,
                                                      area=area, config={"command_topic": f"{key}/set",
                                                                         "state_topic": key})
        c.catalogue.states[f"light.{key}"] = {"state": "off"}
    sent = CommandRecorder()
    monkeypatch.setattr(c, "mqtt_link", lambda: sent)
    c.dialogues.get("satellite:bedroom").area = "Bedroom"
    await say(c, "turn on the lights in here", "satellite:bedroom")
    assert sent.sent == [("bl/set", "ON")]
    await say(c, "turn on the lights in here")  # the local microphone: the configured room
    assert sent.sent[-1] == ("kl/set", "ON") and len(sent.sent) == 2
