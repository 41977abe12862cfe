"""The daemon (`hearthd run`): the alarm scheduler, hearthd's D-Bus interface, its MQTT presence, the Wyoming
server and the rooms' satellites, and with a microphone and a speaker the live loop (wake word, turns, spoken
replies, rings; without them, `--headless`, rings and Say() go to `ring_output`), until SIGTERM/SIGINT; SIGHUP
reloads the config, and systemd hears of each step (lifecycle.py). Pending alarms come from the store, so a restart
(or a crash) loses none."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any

from ..audio.io import VolumeSink
from ..audio.tts import speak
from ..audio.wake import builtin_models
from ..config import state_dir
from ..events import (
    AlarmEvent,
    AlarmMissedEvent,
    AudioOutEvent,
    ErrorEvent,
    Event,
    MetricsEvent,
    ReadyEvent,
    ReloadEvent,
    ReplyEvent,
    Trace,
)
from ..locale import phrase
from ..tools.alarms import spoken_time
from .components import Components
from .lifecycle import Lifecycle
from .notify import SdNotify
from .pipeline import Pipeline
from .scheduler import Scheduler
from .settings import Settings, SettingsStore

LOOP_ERRORS_LOG_S = 60.0  # the event loop's own errors (a failed accept): each kind logged at most once per this


def throttled_loop_errors(interval: float = LOOP_ERRORS_LOG_S,
                          clock: Callable[[], float] = time.monotonic) -> Callable[[Any, dict[str, Any]], None]:
    """An event-loop exception handler that logs each kind of error (its message) at most once per `interval`,
    saying how many like it were not shown: out of descriptors, asyncio retried accept() and wrote 168,697
    tracebacks (75 MB) in 45 s."""
    said: dict[str, tuple[float, int]] = {}

    def handler(loop: Any, context: dict[str, Any]) -> None:
        key = str(context.get("message", ""))[:200]
        now = clock()
        last, hidden = said.get(key, (float("-inf"), 0))
        if now - last < interval:
            said[key] = (last, hidden + 1)
            return
        if hidden:
            context = {**context, "message": f"{key} ({hidden} more like it in the last {interval:.0f} s not shown)"}
        if len(said) >= 256:  # bounded: endless kinds of message never grow it for ever
            said.clear()
        said[key] = (now, 0)
        loop.default_exception_handler(context)

    return handler


async def run_daemon(components: Components, trace: Trace, ring_output: str | None = None,
                     config_path: str | Path | None = None, notify: SdNotify | None = None,
                     audio: tuple[Any, Any] | None = None) -> None:
    """Run until SIGTERM/SIGINT; `config_path` is the file SIGHUP re-reads (None: as `load_config` finds it).
    With `audio` (a capture source and a sink) the live loop runs too: wake word, turns, spoken replies, rings."""
    cfg = components.cfg
    asyncio.get_running_loop().set_exception_handler(throttled_loop_errors())
    components.prepares_in_background = True  # the model is made ready after READY: turns before that are budgeted
    said = {"n": 0}
    satellites: Any = None  # the rooms' satellites (a SatelliteHub), once started below; rings may go there
    # One turn at a time, whoever asks (microphone, D-Bus, MQTT); a question is answered only in its own
    # conversation (dialogue.py): another requester's "yes" is a request of its own.
    turns = asyncio.Lock()
    pipeline = Pipeline(components, trace)
    settings = SettingsStore(state_dir() / "settings.json")  # what Home Assistant / D-Bus changed, kept
    file_language = cfg.general.language
    chosen = settings.current
    if chosen.language in cfg.stt.languages:
        cfg.general.language = chosen.language
    if chosen.wake_word in builtin_models():
        cfg.wake.model = chosen.wake_word
    live = None
    sink: VolumeSink | None = None
    if audio is not None:
        from .live import LiveLoop

        sink = VolumeSink(audio[1], chosen.volume)
        live = LiveLoop(components, trace, audio[0], sink, pipeline, turns)
        live.set_muted(chosen.muted)

    async def write(name: str, audio: Any, rate: int) -> Path:
        from ..audio.wavio import write_wav

        assert ring_output is not None
        out = Path(ring_output) / name
        out.parent.mkdir(parents=True, exist_ok=True)
        write_wav(out, audio, rate)
        trace.emit(AudioOutEvent(seconds=round(len(audio) / rate, 2), rate=rate, path=str(out)))
        return out

    async def ring(alarm: Any, count: int) -> None:
        key = "timer.done" if alarm.kind == "timer" else "alarm.ringing"
        text = phrase(alarm.lang, key, time=spoken_time(alarm.hhmm), label=alarm.label).strip()
        # set from a satellite: it rings there (or everywhere, `rings = "all"`); here when that one is offline
        route = satellites.route(alarm) if satellites is not None else None
        trace.emit(AlarmEvent(id=alarm.id, kind=alarm.kind, label=alarm.label, lang=alarm.lang, count=count, text=text,
                              **(route.fields() if route is not None else {})))
        if route is not None and route.satellites and satellites is not None:
            await satellites.ring_on(route.satellites, alarm, text)
        local = route is None or route.local
        if ring_output and local:  # the chime, then the words in the alarm's own language (the sink plays this live)
            import numpy as np

            from ..audio.chime import chime

            try:
                speech = await speak(components.voices, text, alarm.lang)
                audio, rate = np.concatenate([chime(speech.rate), speech.audio]), speech.rate
            except Exception as e:  # no voice: the chime alone still wakes you
                trace.emit(ErrorEvent(code="tts-failed", message=str(e)))
                audio, rate = chime(22050), 22050
            await write(f"ring-{alarm.id}-{count}.wav", audio, rate)
        if live is not None and local:  # heard now; the wake word (then "stop") cuts it like any reply
            await live.ring(text, alarm.lang)
        if components.notifier is not None and count == 1:
            await components.notifier.notify(phrase(alarm.lang, "notify.alarm"), text, urgency="critical")

    async def say(text: str, lang: str | None) -> None:
        """Say() over D-Bus and the MQTT announce topic: spoken live, or (headless) where rings go."""
        if live is not None:
            await live.say(text, lang or cfg.general.language)
            return
        speech = await speak(components.voices, text, lang or cfg.general.language)
        said["n"] += 1
        await write(f"say-{said['n']}.wav", speech.audio, speech.rate)

    ask = asker(pipeline, turns)

    life = Lifecycle(components, trace, turns, config_path, notify)
    life.start()
    stopping = life.stopping

    assistant = None
    bus = None
    exported = ""
    if cfg.dbus.enabled and cfg.dbus.service:
        from ..tools.bus import ServiceFailed, ServiceMissing
        from .service import NAME, export

        try:
            bus, assistant = await export(pipeline, cfg.dbus.session_address,
                                          listen=live.listen if live is not None else None,
                                          speak=say if ring_output or live is not None else None, turns=turns)
            assistant.set_muted(chosen.muted)
            assistant.on_mute = _setter(settings, "muted")
            exported = NAME
        except (ServiceMissing, ServiceFailed) as e:  # no session bus: everything else still works
            trace.emit(ErrorEvent(code=e.code, message=str(e)))

    link = None
    if cfg.mqtt.enabled:
        from .mqtt import Handlers

        components.mqtt_one_shot = False
        live_controls = live is not None  # without a microphone there is nothing to mute, start or turn down
        components.mqtt_handlers = Handlers(
            ask=ask, announce=say if ring_output or live is not None else None,
            mute=_setter(settings, "muted") if live_controls else None,
            language=_setter(settings, "language"),
            listen=live.listen if live is not None else None,
            volume=_setter(settings, "volume") if live_controls else None,
            wake_word=_setter(settings, "wake_word") if live_controls and cfg.wake.enabled else None,
            wake_words=builtin_models())
        link = components.mqtt_link()
        if cfg.satellites:  # each satellite's connectivity in Home Assistant (ha_device.py)
            from .satellites import satellite_name

            link.device.satellites = {satellite_name(s): False for s in cfg.satellites if s.uri}
        link.device.status.update(muted="ON" if chosen.muted else "OFF", language=cfg.general.language,
                                  volume=chosen.volume, wake_word=cfg.wake.model if cfg.wake.enabled else "")
        link.start()
        trace.listen(_publish_state(link, lambda: components.problems))
        link.on_metrics = lambda counts: trace.emit(MetricsEvent(source="mqtt", **counts))

    wyoming = None
    if cfg.wyoming.uri:  # hearthd's ears, voice and agent for Home Assistant (daemon/wyoming.py)
        from .wyoming import start_wyoming

        wyoming = await start_wyoming(components, pipeline, turns, trace, stopping)

    background: set[asyncio.Task[Any]] = set()

    def later(coro: Any) -> None:
        task = asyncio.get_running_loop().create_task(coro)
        background.add(task)  # kept until done: a task nobody holds may be collected mid-flight
        task.add_done_callback(background.discard)

    def apply(new: Settings, changed: set[str]) -> None:
        """A setting changed (from Home Assistant or D-Bus): the parts follow, and both sides show it."""
        if "muted" in changed:
            if live is not None:
                live.set_muted(new.muted)
            if assistant is not None:
                assistant.set_muted(new.muted)
        if "language" in changed:
            cfg.general.language = new.language or file_language  # used when an utterance does not show its own
        if "volume" in changed and sink is not None:
            sink.volume = new.volume
        if "wake_word" in changed and live is not None and new.wake_word:
            later(_switch_wake_word(live, new.wake_word, trace))
        if link is not None:
            later(link.update(muted="ON" if new.muted else "OFF", language=cfg.general.language,
                              volume=new.volume, wake_word=new.wake_word or cfg.wake.model))

    settings.listeners.append(apply)

    def on_reload(event: Event) -> None:
        """A reload sets general.language from the file: a language changed *in the file* wins (the user edited
        it just now); otherwise the one chosen in Home Assistant stays."""
        nonlocal file_language
        if not isinstance(event, ReloadEvent):
            return
        if cfg.general.language != file_language:
            file_language = cfg.general.language
            if settings.current.language:
                settings.change(language="")
        elif settings.current.language in cfg.stt.languages:
            cfg.general.language = settings.current.language

    trace.listen(on_reload)

    if live is not None:
        def on_state(state: str) -> None:
            """The loop's state for Home Assistant (assist state) and D-Bus (State)."""
            if assistant is not None:
                assistant.set_state(state)
            if link is not None:
                later(link.update(assist_state=state))

        live.on_state = on_state

    scheduler = Scheduler(components.alarms, ring, cfg.alarms.grace_s, cfg.alarms.repeat_s, cfg.alarms.max_rings)
    life.scheduler = scheduler
    for alarm in scheduler.start():
        trace.emit(AlarmMissedEvent(id=alarm.id, time=alarm.hhmm, label=alarm.label,
                                    text=phrase(alarm.lang, "alarm.missed", time=spoken_time(alarm.hhmm))))
    satellites = None
    if cfg.satellites:  # the rooms' Wyoming satellites, each served in its own room (daemon/satellites.py)
        from .satellites import SatelliteHub

        def available(name: str, up: bool) -> None:
            if link is not None:
                later(link.device.set_satellite(name, up))

        satellites = SatelliteHub(components, trace, pipeline, turns, stopping=stopping, on_availability=available)
        await satellites.start()
    if live is not None:
        await live.prepare()  # the microphone is open before anyone is told hearthd is ready
    trace.emit(ReadyEvent(pending=len(components.alarms.pending()) + len(components.alarms.pending("timer")),
                          service=exported, mqtt=f"{cfg.mqtt.host}:{cfg.mqtt.port}" if link is not None else ""))
    life.ready()
    # The model and its prompt prefixes load beside the fast path, so the first model turn pays for neither (one
    # that comes sooner goes first and the warm-up resumes after it).
    preparing = asyncio.get_running_loop().run_in_executor(None, components.prepare_model)
    if link is not None:  # what cannot work (a model that will not load, a read-only store) shows in HA at once
        preparing.add_done_callback(lambda _: later(link.device.report_problems(components.problems)))
    try:
        if live is not None:
            await asyncio.gather(scheduler.run(stopping), live.run(stopping))
        else:
            await scheduler.run(stopping)
        await life.finish()  # the turn in progress (a D-Bus or MQTT request) completes before the parts close
    finally:
        if satellites is not None:  # a satellite's turn in progress was finished by life.finish()
            await satellites.stop()
        components.stop_preparing()
        await preparing
        try:
            if wyoming is not None:
                await wyoming.stop()
            if bus is not None:
                bus.disconnect()
            await components.close()
        finally:
            life.close()  # the signal handlers stay until the end: a second SIGTERM must not cut the flush short


def asker(pipeline: Pipeline, turns: asyncio.Lock) -> Callable[..., Awaitable[str]]:
    """The MQTT ask topic's turns: one at a time, in line with the others (`turns`); the model's budget runs from
    when the request arrived, so waiting in line is part of it (an ask is answered within agent.max_turn_s)."""

    async def ask(text: str, lang: str | None, conversation: str, request_id: str | None = None) -> str:
        asked = time.monotonic()
        async with turns:
            return (await pipeline.run_text(text, language=lang, conversation=conversation,
                                            request_id=request_id, asked_at=asked)).reply

    return ask


def _setter(settings: SettingsStore, key: str) -> Callable[[Any], None]:
    """A handler (Home Assistant's control, D-Bus Mute) that changes one setting."""

    def change(value: Any) -> None:
        settings.change(**{key: value})

    return change


def _publish_state(link: Any, problems: Callable[[], dict[str, str]] | None = None) -> Any:
    """Trace events → hearthd in Home Assistant (assist state, transcript, reply, last language, last error, the
    event entity, and after each turn what does not work now): the device decides what each event changes."""
    pending: set[asyncio.Task[None]] = set()

    def on_event(event: Event) -> None:
        coros = list(link.device.on_event(event))
        if problems is not None and isinstance(event, ReplyEvent | ErrorEvent):
            coros.append(link.device.report_problems(problems()))
        for coro in coros:
            task = asyncio.get_running_loop().create_task(coro)
            pending.add(task)
            task.add_done_callback(pending.discard)

    return on_event


async def _switch_wake_word(live: Any, name: str, trace: Trace) -> None:
    try:
        await live.set_wake_word(name)
    except Exception as e:  # a model that will not load: the old wake word keeps listening
        trace.emit(ErrorEvent(code="wake-word-failed", message=f"cannot switch to {name}: {e}"))
