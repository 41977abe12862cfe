"""Typed pipeline events: the one stream that the trace, logs, tests and benchmarks all read.

Each event type is a frozen dataclass; its JSON (`to_dict`) is an interface (ARCHITECTURE.md, README): the type
string, `t`, and the class's fields under the names below. A field made with `optional()` is left out of the JSON
while it holds its default, as the emitters always did; every other field is always there (`None` as null)."""

from __future__ import annotations

import builtins
import dataclasses
import json
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar, TextIO, TypeVar, overload


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
    # arguments, checks), completion_tokens, thinking_tokens, prefix: warm|loaded|evaluated,
    # kept_mb: the prefix and relevance states kept in memory for later turns (bounded)}
    MODEL = "model"
    # a satellite's link came up or went down: {satellite, area, uri, available, reason (down: why),
    # retry_s (down: the next try in)}; until issue 17 this was a `listening` event with these fields
    SATELLITE = "satellite"


def optional(default: Any = None) -> Any:
    """A field that only some emitters set: the JSON leaves it out while it holds `default`."""
    return field(default=default, metadata={"optional": True})


E = TypeVar("E", bound="Event")


@dataclass(frozen=True, kw_only=True)
class Event:
    """One thing that happened, `t` seconds after the trace started (`Trace.emit` stamps it)."""

    type: ClassVar[EventType]
    t: float = 0.0

    _classes: ClassVar[dict[EventType, builtins.type[Event]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Event._classes[cls.type] = cls

    def payload(self) -> dict[str, Any]:
        """The event's own fields as the JSON carries them (all but `type` and `t`), for logs and printers."""
        out: dict[str, Any] = {}
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            if f.name != "t" and not (f.metadata.get("optional") and value == f.default):
                out[f.name] = value
        return out

    def to_dict(self) -> dict[str, Any]:
        return {"type": str(self.type), "t": round(self.t, 4), **self.payload()}

    def to_json(self) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, default=str)

    @classmethod
    def from_dict(cls: builtins.type[E], data: Mapping[str, Any]) -> E:
        """The event a `to_dict()` (or a line of `--json`) describes; ValueError for an unknown type or a missing
        field. Fields it does not know are ignored: a newer hearthd may add some."""
        if not isinstance(data, Mapping) or "type" not in data:
            raise ValueError(f"not an event (no type): {data!r:.80}")
        try:
            kind = EventType(data["type"])
        except ValueError:
            raise ValueError(f"unknown event type {data['type']!r}") from None
        made = Event._classes[kind]
        if not issubclass(made, cls):
            raise ValueError(f"a {kind} event is not a {cls.__name__}")
        known = {f.name: f for f in dataclasses.fields(made)}
        missing = [name for name, f in known.items() if name not in data
                   and f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING]
        if missing:
            raise ValueError(f"a {kind} event lacks {', '.join(missing)}")
        return made(**{k: v for k, v in data.items() if k in known})


@dataclass(frozen=True, kw_only=True)
class WakeEvent(Event):
    """The wake word was heard."""

    type = EventType.WAKE
    name: str  # the wake word model that fired
    score: float  # its score (1.0 from a remote detector, which gives none)
    at_s: float | None = optional()  # where in the audio, seconds (a whole-file turn)
    during: str | None = optional()  # the live loop's state when it fired (listening, thinking, speaking...)
    satellite: str | None = optional()  # heard by this satellite
    source: str | None = optional()  # "wyoming": a Wyoming client's audio


@dataclass(frozen=True, kw_only=True)
class SpeechStartEvent(Event):
    """The endpointer found the start of the utterance."""

    type = EventType.SPEECH_START
    at_s: float  # seconds into the audio


@dataclass(frozen=True, kw_only=True)
class SpeechEndEvent(Event):
    """The endpointer found the end of the utterance."""

    type = EventType.SPEECH_END
    at_s: float  # seconds into the audio
    satellite: str | None = optional()  # said to this satellite
    complete: bool | None = optional()  # ended on vad.complete_silence_ms: the words made a whole command


@dataclass(frozen=True, kw_only=True)
class TranscriptEvent(Event):
    """What was said (or typed), in which language."""

    type = EventType.TRANSCRIPT
    text: str
    lang: str
    prob: float  # how sure the language guess is (1.0 for text)
    lang_source: str | None = optional()  # speech: detected | forced | fallback (how the language was chosen)
    source: str | None = optional()  # "text": typed, not heard
    conversation: str | None = optional()  # who asks: "local", "dbus:<sender>", "mqtt:<id>", "satellite:<name>"
    # speech: what whisper wrote, when a template sentence that fits the audio better was taken (audio/rescoring.py)
    heard: str | None = optional()


@dataclass(frozen=True, kw_only=True)
class ToolCallEvent(Event):
    """A call that runs now."""

    type = EventType.TOOL_CALL
    name: str
    arguments: dict[str, Any]
    source: str  # who decided it: fastpath | model | confirmed | chosen ...
    confidence: float  # the first-token probability of the tool name (0 off the model)
    relevance: float | None  # P(the tool does what was asked), null when the check did not run


@dataclass(frozen=True, kw_only=True)
class AbstainEvent(Event):
    """No call: hearthd declines, and says why."""

    type = EventType.ABSTAIN
    reason: str
    source: str
    relevance: float | None  # null when the relevance check did not run


@dataclass(frozen=True, kw_only=True)
class ClarifyEvent(Event):
    """A question back: an argument is missing, or which of several devices was meant."""

    type = EventType.CLARIFY
    question: str  # what hearthd asks
    name: str  # the tool waiting for the answer
    missing: str  # the argument asked for
    source: str  # who asked: the deciding path, or "tool" for "which one?"
    candidates: list[str] | None = optional()  # "which one?": the names to choose from


@dataclass(frozen=True, kw_only=True)
class ConfirmRequestEvent(Event):
    """A consequential call is held until a spoken yes."""

    type = EventType.CONFIRM_REQUEST
    name: str  # the first call that needs the yes
    arguments: dict[str, Any]
    question: str
    calls: list[dict[str, Any]]  # every held call: {name, arguments}


@dataclass(frozen=True, kw_only=True)
class ConfirmAnswerEvent(Event):
    """The answer to a held confirmation."""

    type = EventType.CONFIRM_ANSWER
    answer: str  # yes | no | ... (anything but yes cancels)
    names: list[str]  # the held calls it answers


@dataclass(frozen=True, kw_only=True)
class ToolResultEvent(Event):
    """What a call did."""

    type = EventType.TOOL_RESULT
    name: str
    ok: bool
    result: dict[str, Any]
    duplicate: bool = optional(False)  # the same request id again: answered from the first time, not run again


@dataclass(frozen=True, kw_only=True)
class ReplyEvent(Event):
    """What hearthd says back."""

    type = EventType.REPLY
    text: str
    lang: str


@dataclass(frozen=True, kw_only=True)
class ErrorEvent(Event):
    """Something failed (a turn's error ends it with an apology; others are told and go on)."""

    type = EventType.ERROR
    code: str  # stable, kebab-case ("stt-no-speech")
    message: str
    satellite: str | None = optional()  # on this satellite's link
    source: str | None = optional()  # "wyoming": serving a Wyoming client


@dataclass(frozen=True, kw_only=True)
class TimingEvent(Event):
    """How long a stage took."""

    type = EventType.TIMING
    stage: str
    ms: float
    used: bool | None = optional()  # a speculative transcription: whether the turn used it
    samples: int | None = optional()  # ... and how many samples of the stream it decoded (the speech, cut at its end)


@dataclass(frozen=True, kw_only=True)
class AudioOutEvent(Event):
    """Speech (or a ring) was played or written."""

    type = EventType.AUDIO_OUT
    seconds: float  # how much was played
    rate: int
    path: str | None = optional()  # written to this file
    sentence: int | None = optional()  # the live loop speaks a reply sentence by sentence: which one
    satellite: str | None = optional()  # played on this satellite
    cut_at_s: float | None = optional()  # cut short ("stop"): where
    of_s: float | None = optional()  # cut short: out of how long
    ring: bool = optional(False)  # an alarm or timer rang


@dataclass(frozen=True, kw_only=True)
class ReadyEvent(Event):
    """The daemon is up."""

    type = EventType.READY
    pending: int  # alarms and timers waiting
    service: str  # the D-Bus name exported ("" when none)
    mqtt: str  # the broker, host:port ("" when MQTT is off)


@dataclass(frozen=True, kw_only=True)
class ReloadEvent(Event):
    """SIGHUP re-read the config (see EventType.RELOAD)."""

    type = EventType.RELOAD
    source: str  # where the config came from
    changed: list[str]  # dotted keys applied
    restart: list[str]  # dotted keys that wait for a restart
    language: str  # general.language now


@dataclass(frozen=True, kw_only=True)
class AlarmEvent(Event):
    """An alarm or timer rings (`count`: the how-manieth ring)."""

    type = EventType.ALARM
    id: int
    kind: str  # alarm | timer
    label: str
    lang: str
    count: int
    text: str  # what it says
    local: bool | None = optional()  # with satellites: rung on the local speaker too
    satellites: list[str] | None = optional()  # with satellites: the satellites it rings on
    offline: str = optional("")  # the satellite it was set from, offline now
    note: str = optional("")  # why it rings where it does


@dataclass(frozen=True, kw_only=True)
class AlarmMissedEvent(Event):
    """An alarm that was due while hearthd was not running."""

    type = EventType.ALARM_MISSED
    id: int
    time: str  # HH:MM
    label: str
    text: str  # what is said of it


@dataclass(frozen=True, kw_only=True)
class NotifyEvent(Event):
    """A desktop notification was shown."""

    type = EventType.NOTIFY
    id: int  # the notification server's id
    kind: str  # confirm | action | error | alarm


@dataclass(frozen=True, kw_only=True)
class ListeningEvent(Event):
    """The live loop's state changed (or it started listening)."""

    type = EventType.LISTENING
    state: str
    wake_word: str | None = optional()  # the wake word switched to
    source: str | None = optional()  # at start: the audio source's class


@dataclass(frozen=True, kw_only=True)
class SatelliteEvent(Event):
    """A satellite's link came up or went down (see EventType.SATELLITE)."""

    type = EventType.SATELLITE
    satellite: str
    area: str
    uri: str
    available: bool
    reason: str = optional("")  # down: why
    retry_s: float | None = optional()  # down: the next try in


@dataclass(frozen=True, kw_only=True)
class BargeInEvent(Event):
    """hearthd stopped talking (or ringing) because it was interrupted."""

    type = EventType.BARGE_IN
    by: str  # "wake word" or "stop"
    text: str | None = optional()  # "stop": what was heard
    lang: str | None = optional()
    satellite: str | None = optional()  # on this satellite
    stopped: list[int] | None = optional()  # the ringing alarms it stopped


@dataclass(frozen=True, kw_only=True)
class MetricsEvent(Event):
    """Counters: the live loop's at its end, the MQTT link's now and then (`source`: "mqtt")."""

    type = EventType.METRICS
    blocks: int | None = optional()  # audio blocks read
    frames_dropped: int | None = optional()
    turns: int | None = optional()
    source: str | None = optional()
    mqtt_received: dict[str, int] | None = optional()  # messages by kind
    mqtt_rejected: dict[str, dict[str, int]] | None = optional()  # dropped messages by kind and reason
    mqtt_rejected_total: int | None = optional()
    mqtt_connections: int | None = optional()
    mqtt_connection_errors: int | None = optional()
    mqtt_turns_in_flight: int | None = optional()


@dataclass(frozen=True, kw_only=True)
class ModelEvent(Event):
    """The model's share of a turn (see EventType.MODEL)."""

    type = EventType.MODEL
    evaluated: int  # tokens evaluated
    completion_tokens: int
    thinking_tokens: int
    prefix: str  # how the catalogue prefix was made ready: warm | loaded | evaluated
    kept_mb: float | None = optional()  # memory of the states the model keeps for later turns, after this one


Listener = Callable[[Event], None]


class Trace:
    """Timestamps events against one start time and hands them to every listener.

    `keep`: how many recent events a long-lived trace holds (the daemon's: it emits for days); None keeps all (a
    one-shot command, a test). `mark()` and `since(mark)` give the events of a turn whatever was dropped before."""

    def __init__(self, keep: int | None = None) -> None:
        self.start = time.monotonic()
        self.events: list[Event] = []
        self.keep = keep
        self.dropped = 0  # events no longer held (the oldest, past `keep`)
        self._listeners: list[Listener] = []

    def mark(self) -> int:
        """How many events were ever emitted: where the next one will be for `since`."""
        return self.dropped + len(self.events)

    def since(self, mark: int) -> list[Event]:
        """The events emitted after `mark` that are still held."""
        return self.events[max(0, mark - self.dropped):]

    def listen(self, listener: Listener) -> None:
        self._listeners.append(listener)

    def emit(self, event: E) -> E:
        """Stamp `event` with the time since the start, keep it and tell every listener; the stamped event."""
        event = dataclasses.replace(event, t=time.monotonic() - self.start)
        self.events.append(event)
        if self.keep is not None and len(self.events) > 2 * self.keep:  # dropped in batches: amortised O(1)
            cut = len(self.events) - self.keep
            del self.events[:cut]
            self.dropped += cut
        for listener in self._listeners:
            listener(event)
        return event

    def timing(self, stage: str, seconds: float) -> None:
        self.emit(TimingEvent(stage=stage, ms=round(seconds * 1000, 1)))

    @overload
    def of_type(self, kind: type[E]) -> list[E]: ...

    @overload
    def of_type(self, kind: EventType) -> list[Event]: ...

    def of_type(self, kind: type[Event] | EventType) -> list[Any]:
        """The events of one type, by class (`TranscriptEvent`) or by name (`EventType.TRANSCRIPT`)."""
        if isinstance(kind, EventType):
            return [e for e in self.events if e.type == kind]
        return [e for e in self.events if isinstance(e, kind)]


def json_printer(stream: TextIO) -> Listener:
    """One JSON object per line (`--json`)."""

    def show(event: Event) -> None:
        stream.write(event.to_json() + "\n")
        stream.flush()

    return show


def _brief(event: Event) -> str:
    match event:
        case TimingEvent():
            return f"{event.stage} {event.ms:.0f} ms"
        case TranscriptEvent():
            return f"[{event.lang} {event.prob:.2f}] {event.text!r}"
        case ToolCallEvent():
            args = json.dumps(event.arguments, ensure_ascii=False)
            return f"{event.name} {args} ({event.source})"
        case ToolResultEvent():
            return f"{event.name} {'ok' if event.ok else 'FAILED'}: {event.result}"
        case ReplyEvent():
            return f"[{event.lang}] {event.text}"
        case ErrorEvent():
            return f"{event.code}: {event.message}"
        case _:
            return " ".join(f"{k}={v}" for k, v in event.payload().items())


def text_printer(stream: TextIO) -> Listener:
    """A compact human trace: time, stage, result."""

    def show(event: Event) -> None:
        stream.write(f"{event.t:7.3f}s  {event.type:<15} {_brief(event)}\n")
        stream.flush()

    return show
