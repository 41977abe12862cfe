"""Typed pipeline events: the one stream that the trace, logs, tests and benchmarks all read."""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, TextIO


class EventType(StrEnum):
    """Event names are an interface (ARCHITECTURE.md): add new ones, never rename these."""

    WAKE = "wake"
    SPEECH_START = "speech_start"
    SPEECH_END = "speech_end"
    TRANSCRIPT = "transcript"
    TOOL_CALL = "tool_call"
    ABSTAIN = "abstain"
    CLARIFY = "clarify"
    CONFIRM_REQUEST = "confirm_request"
    CONFIRM_ANSWER = "confirm_answer"
    TOOL_RESULT = "tool_result"
    REPLY = "reply"
    ERROR = "error"
    TIMING = "timing"
    AUDIO_OUT = "audio_out"
    READY = "ready"
    # SIGHUP re-read the config: {source, changed: keys applied, restart: keys that wait for a restart,
    # language: general.language now}; keys are dotted ("general.language"); a rejected config is an `error`
    RELOAD = "reload"
    ALARM = "alarm"
    ALARM_MISSED = "alarm_missed"
    NOTIFY = "notify"
    LISTENING = "listening"
    BARGE_IN = "barge_in"
    METRICS = "metrics"
    # the model's share of a turn: {evaluated: tokens evaluated (prompt past the cached prefix, name choice,
    # arguments, checks), completion_tokens, thinking_tokens, prefix: warm|loaded|evaluated, restores}
    MODEL = "model"


@dataclass
class Event:
    """One thing that happened, `t` seconds after the trace started."""

    type: EventType
    t: float
    fields: dict[str, Any] = field(default_factory=dict)

    def to_dict(self) -> dict[str, Any]:
        return {"type": str(self.type), "t": round(self.t, 4), **self.fields}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)


Listener = Callable[[Event], None]


class Trace:
    """Timestamps events against one start time and hands them to every listener."""

    def __init__(self) -> None:
        self.start = time.monotonic()
        self.events: list[Event] = []
        self._listeners: list[Listener] = []

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, type_: EventType, **fields: Any) -> Event:
        event = Event(type_, time.monotonic() - self.start, fields)
        self.events.append(event)
        for listener in self._listeners:
            listener(event)
        return event

    def timing(self, stage: str, seconds: float) -> None:
        self.emit(EventType.TIMING, stage=stage, ms=round(seconds * 1000, 1))

    def of_type(self, type_: EventType) -> list[Event]:
        return [e for e in self.events if e.type == type_]


def json_printer(stream: TextIO) -> Listener:
    """One JSON object per line (`--json`)."""

    def show(event: Event) -> None:
        stream.write(event.to_json() + "\n")
        stream.flush()

    return show


def _brief(event: Event) -> str:
    f = event.fields
    match event.type:
        case EventType.TIMING:
            return f"{f['stage']} {f['ms']:.0f} ms"
        case EventType.TRANSCRIPT:
            return f"[{f.get('lang')} {f.get('prob', 0):.2f}] {f.get('text')!r}"
        case EventType.TOOL_CALL:
            args = json.dumps(f.get("arguments"), ensure_ascii=False)
            return f"{f.get('name')} {args} ({f.get('source')})"
        case EventType.TOOL_RESULT:
            return f"{f.get('name')} {'ok' if f.get('ok') else 'FAILED'}: {f.get('result')}"
        case EventType.REPLY:
            return f"[{f.get('lang')}] {f.get('text')}"
        case EventType.ERROR:
            return f"{f.get('code')}: {f.get('message')}"
        case _:
            return " ".join(f"{k}={v}" for k, v in f.items())


def text_printer(stream: TextIO) -> Listener:
    """A compact human trace: time, stage, result."""

    def show(event: Event) -> None:
        stream.write(f"{event.t:7.3f}s  {event.type:<15} {_brief(event)}\n")
        stream.flush()

    return show
