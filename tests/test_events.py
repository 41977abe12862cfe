"""Typed events (issue 17): every event type survives its JSON, and the JSON of real turns carries exactly the
field names it carried when events were dicts (ARCHITECTURE.md and README name them: add fields, never rename)."""

from __future__ import annotations

import dataclasses
import io
import json
from typing import Any

import pytest

from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import (
    AbstainEvent,
    AlarmEvent,
    AlarmMissedEvent,
    AudioOutEvent,
    BargeInEvent,
    ClarifyEvent,
    ConfirmAnswerEvent,
    ConfirmRequestEvent,
    ErrorEvent,
    Event,
    EventType,
    ListeningEvent,
    MetricsEvent,
    ModelEvent,
    NotifyEvent,
    ReadyEvent,
    ReloadEvent,
    ReplyEvent,
    SatelliteEvent,
    SpeechEndEvent,
    SpeechStartEvent,
    TimingEvent,
    ToolCallEvent,
    ToolResultEvent,
    Trace,
    TranscriptEvent,
    WakeEvent,
    json_printer,
    text_printer,
)

# One of each type with every field set (none at the default the JSON leaves out).
FULL: list[Event] = [
    WakeEvent(name="okay_nabu", score=0.97, at_s=1.2, during="speaking", satellite="kitchen", source="wyoming"),
    SpeechStartEvent(at_s=1.5),
    SpeechEndEvent(at_s=3.25, satellite="kitchen"),
    TranscriptEvent(text="set an alarm for 7:30", lang="en", prob=0.9, lang_source="detected", source="text",
                    conversation="local"),
    ToolCallEvent(name="set_alarm", arguments={"time": "07:30"}, source="model", confidence=0.98, relevance=0.9),
    AbstainEvent(reason="not something set_alarm does", source="model", relevance=0.45),
    ClarifyEvent(question="Which one?", name="turn_on", missing="device", source="tool",
                 candidates=["Kitchen Light", "Kitchen Lamp"]),
    ConfirmRequestEvent(name="cancel_all_alarms", arguments={}, question="Cancel all your alarms?",
                        calls=[{"name": "cancel_all_alarms", "arguments": {}}]),
    ConfirmAnswerEvent(answer="yes", names=["cancel_all_alarms"]),
    ToolResultEvent(name="set_alarm", ok=True, result={"id": 1, "time": "07:30"}, duplicate=True),
    ReplyEvent(text="Alarm set for 7:30.", lang="en"),
    ErrorEvent(code="tts-failed", message="no voice", satellite="kitchen", source="wyoming"),
    TimingEvent(stage="stt_speculative", ms=12.5, used=False),
    AudioOutEvent(seconds=2.5, rate=22050, path="/tmp/out.wav", sentence=0, satellite="kitchen", cut_at_s=1.0,
                  of_s=2.5, ring=True),
    ReadyEvent(pending=2, service="org.hearthd.Assistant", mqtt="localhost:1883"),
    ReloadEvent(source="/etc/hearthd.toml", changed=["general.language"], restart=["mqtt.host"], language="ru"),
    AlarmEvent(id=3, kind="timer", label="tea", lang="en", count=1, text="Time's up!", local=False,
               satellites=["kitchen"], offline="bedroom", note="bedroom is offline"),
    AlarmMissedEvent(id=4, time="06:30", label="", text="You missed an alarm at 6:30."),
    NotifyEvent(id=17, kind="action"),
    ListeningEvent(state="idle", wake_word="hey_jarvis", source="SoundDeviceSource"),
    SatelliteEvent(satellite="kitchen", area="Kitchen", uri="tcp://10.0.0.5:10700", available=False,
                   reason="connection refused", retry_s=2.0),
    BargeInEvent(by="stop", text="stop", lang="en", satellite="kitchen", stopped=[3]),
    MetricsEvent(blocks=100, frames_dropped=0, turns=2, source="mqtt", mqtt_received={"ask": 1},
                 mqtt_rejected={"ask": {"too-long": 1}}, mqtt_rejected_total=1, mqtt_connections=1,
                 mqtt_connection_errors=0, mqtt_turns_in_flight=0),
    ModelEvent(evaluated=304, completion_tokens=12, thinking_tokens=0, prefix="warm", kept_mb=141.5),
]


def required_only(event: Event) -> Event:
    """The same event with every field the JSON may leave out back at its default."""
    kept = {f.name: getattr(event, f.name) for f in dataclasses.fields(event) if not f.metadata.get("optional")}
    return type(event)(**kept)


def through_json(event: Event) -> Event:
    return Event.from_dict(json.loads(json.dumps(event.to_dict())))


def test_every_event_type_has_one_class_and_a_sample_here() -> None:
    assert sorted(e.type for e in FULL) == sorted(EventType)
    assert len({type(e) for e in FULL}) == len(EventType)


@pytest.mark.parametrize("event", FULL, ids=[str(e.type) for e in FULL])
def test_every_event_type_survives_its_json(event: Event) -> None:
    stamped = dataclasses.replace(event, t=1.25)
    assert through_json(stamped) == stamped
    assert stamped.to_dict()["type"] == str(event.type) and stamped.to_dict()["t"] == 1.25
    assert json.loads(stamped.to_json()) == stamped.to_dict()
    bare = required_only(stamped)
    assert through_json(bare) == bare
    left_out = {f.name for f in dataclasses.fields(event) if f.metadata.get("optional")}
    assert not left_out & set(bare.to_dict()), "a field at its default is left out of the JSON"


def test_a_field_that_is_always_there_stays_there_as_null() -> None:
    call = ToolCallEvent(name="set_alarm", arguments={}, source="fastpath", confidence=1.0, relevance=None)
    assert call.to_dict()["relevance"] is None
    assert AbstainEvent(reason="", source="fastpath", relevance=None).to_dict()["relevance"] is None


def test_an_unknown_type_or_a_missing_field_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown event type 'frobnicate'"):
        Event.from_dict({"type": "frobnicate", "t": 0.0})
    with pytest.raises(ValueError, match="a reply event lacks lang"):
        Event.from_dict({"type": "reply", "t": 0.0, "text": "hi"})
    with pytest.raises(ValueError, match="tool_call event lacks .*relevance"):
        Event.from_dict({"type": "tool_call", "name": "x", "arguments": {}, "source": "model", "confidence": 1})
    with pytest.raises(ValueError, match="no type"):
        Event.from_dict({"text": "hi"})
    with pytest.raises(ValueError, match="not a TranscriptEvent"):
        TranscriptEvent.from_dict(ReplyEvent(text="hi", lang="en").to_dict())
    # a field this hearthd does not know (a newer one added it) is no error
    assert Event.from_dict({"type": "reply", "text": "hi", "lang": "en", "voice": "amy"}) == \
        ReplyEvent(text="hi", lang="en")
    with pytest.raises(dataclasses.FrozenInstanceError):
        ReplyEvent(text="hi", lang="en").text = "changed"  # type: ignore[misc]


def test_the_trace_stamps_events_and_finds_them_by_class_or_name() -> None:
    trace, seen = Trace(), []
    trace.listen(seen.append)
    out = trace.emit(ReplyEvent(text="hi", lang="en"))
    trace.timing("agent", 0.0123)
    assert out.t > 0 and seen == trace.events == [out, trace.events[1]]
    assert trace.of_type(ReplyEvent) == trace.of_type(EventType.REPLY) == [out]
    (timing,) = trace.of_type(TimingEvent)
    assert (timing.stage, timing.ms) == ("agent", 12.3)


def test_the_printers_show_typed_events() -> None:
    lines, text = io.StringIO(), io.StringIO()
    trace = Trace()
    trace.listen(json_printer(lines))
    trace.listen(text_printer(text))
    for event in FULL:
        trace.emit(event)
    assert [Event.from_dict(json.loads(line)) for line in lines.getvalue().splitlines()] == \
        [dataclasses.replace(e, t=round(e.t, 4)) for e in trace.events]
    shown = text.getvalue()
    assert "set_alarm {\"time\": \"07:30\"} (model)" in shown and "tts-failed: no voice" in shown
    assert "satellite=kitchen area=Kitchen" in shown


# -- the JSON of real turns, as it was when events were dicts ---------------------------------------------------

TRANSCRIPT = ("transcript", {"text", "lang", "prob", "source", "conversation"})
TIMING = ("timing", {"stage", "ms"})
TOOL_CALL = ("tool_call", {"name", "arguments", "source", "confidence", "relevance"})
TOOL_RESULT = ("tool_result", {"name", "ok", "result"})
REPLY = ("reply", {"text", "lang"})
CONFIRM_REQUEST = ("confirm_request", {"name", "arguments", "question", "calls"})
CONFIRM_ANSWER = ("confirm_answer", {"answer", "names"})

# (text, request id) -> the (type, field names) of each event of the turn, written from the dict-era code
TURNS: list[tuple[str, str | None, list[tuple[str, set[str]]]]] = [
    ("set an alarm for 7:30", "r1", [TRANSCRIPT, TIMING, TOOL_CALL, TIMING, TOOL_RESULT, REPLY]),
    ("set an alarm for 7:30", "r1", [TRANSCRIPT, TIMING, TOOL_CALL, ("tool_result", {"name", "ok", "result",
                                                                                       "duplicate"}), REPLY]),
    # a refused text's transcript (its start) is said first: the audit names who asked (issue 26)
    ("x" * 5000, None, [TRANSCRIPT, ("error", {"code", "message"}), REPLY]),
    ("cancel all my alarms", None, [TRANSCRIPT, TIMING, CONFIRM_REQUEST, REPLY]),
    ("no", None, [TRANSCRIPT, CONFIRM_ANSWER, REPLY]),
    ("cancel all my alarms", None, [TRANSCRIPT, TIMING, CONFIRM_REQUEST, REPLY]),
    ("yes", None, [TRANSCRIPT, CONFIRM_ANSWER, TOOL_CALL, TIMING, TOOL_RESULT, REPLY]),
    ("what's the weather", None, [TRANSCRIPT, TIMING, ("abstain", {"reason", "source", "relevance"}), REPLY]),
    ("set an alarm", None, [TRANSCRIPT, TIMING, ("clarify", {"question", "name", "missing", "source"}), REPLY]),
]


@pytest.fixture()
def fresh(base_config, tmp_path, monkeypatch) -> Components:  # type: ignore[no-untyped-def]
    """Components with their own alarm store (the fast path decides these turns: no model loads)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    return Components(base_config)


def shape(events: list[Event]) -> list[tuple[str, set[str]]]:
    return [(d["type"], set(d) - {"type", "t"}) for d in (e.to_dict() for e in events)]


async def test_real_turns_carry_the_field_names_they_always_did(fresh: Components) -> None:
    fresh.alarms.add("06:00")
    pipeline = Pipeline(fresh, Trace())
    for text, request_id, expected in TURNS:
        first = len(pipeline.trace.events)
        await pipeline.run_text(text, request_id=request_id)
        events = pipeline.trace.events[first:]
        assert shape(events) == expected, text[:40]
        assert [through_json(e) for e in events] == [dataclasses.replace(e, t=round(e.t, 4)) for e in events]
        assert all(e.source == "fastpath" for e in events if isinstance(e, ToolCallEvent) and e.source != "confirmed")


def wire(event: Event) -> dict[str, Any]:
    return json.loads(event.to_json())


def test_the_satellite_event_keeps_the_fields_listening_carried() -> None:
    up = SatelliteEvent(satellite="kitchen", area="Kitchen", uri="tcp://k:10700", available=True)
    assert wire(up) == {"type": "satellite", "t": 0.0, "satellite": "kitchen", "area": "Kitchen",
                        "uri": "tcp://k:10700", "available": True}
    down = SatelliteEvent(satellite="kitchen", area="", uri="tcp://k:10700", available=False, reason="refused",
                          retry_s=1.0)
    assert wire(down)["reason"] == "refused" and wire(down)["retry_s"] == 1.0


def test_a_long_lived_trace_keeps_the_recent_events_and_each_turn_finds_its_own() -> None:
    trace = Trace(keep=3)
    for i in range(10):
        trace.emit(TimingEvent(stage=f"s{i}", ms=float(i)))
    assert len(trace.events) <= 6 and trace.events[-1].stage == "s9"  # type: ignore[attr-defined]
    assert trace.mark() == 10 and [e.stage for e in trace.since(8)] == ["s8", "s9"]  # type: ignore[attr-defined]
    assert trace.since(0) == trace.events  # what was dropped is gone; what is held is all there is
    assert Trace().keep is None  # a one-shot command keeps everything


async def test_the_audit_records_each_turn_from_a_trace_that_drops_old_events(fresh: Components) -> None:
    """The daemon's trace keeps the recent events only: the audit still gets every turn, each with its own events."""
    trace = Trace(keep=5)  # about what one turn emits: old events go during every turn
    pipeline = Pipeline(fresh, trace)
    await pipeline.run_text("set an alarm for 6 am")
    await pipeline.run_text("what time is it")
    assert trace.dropped > 0
    assert fresh.audit is not None
    lines = [json.loads(line) for line in fresh.audit.path.read_text(encoding="utf-8").splitlines()]
    assert [entry.get("utterance") for entry in lines[-2:]] == ["set an alarm for 6 am", "what time is it"]
    assert [p["name"] for p in lines[-2]["proposed"]] == ["set_alarm"]  # each turn its own calls, not the other's
    assert [p["name"] for p in lines[-1]["proposed"]] == ["get_time"]
    assert lines[-2]["results"] == [{"name": "set_alarm", "ok": True}] and lines[-1]["reply"]
