"""hearthd as Home Assistant sees it, against a real mosquitto on 127.0.0.1: the device's entities (ids, qos,
categories, the controls a run really has), its diagnostic error sensor, event entity and ask text box, the whole
reply as an attribute, and settings (mute, language, volume, wake word) that survive a restart of the daemon."""

from __future__ import annotations

import asyncio
import copy
import json
import logging
import os
import signal
from pathlib import Path
from typing import Any

import aiomqtt
import numpy as np
import pytest

from hearthd.audio.io import MemorySink, VolumeSink, WavSource
from hearthd.config import Config, load_config
from hearthd.daemon.components import Components
from hearthd.daemon.ha_device import STATE_MAX, machine_key
from hearthd.daemon.mqtt import Handlers
from hearthd.daemon.run import _publish_state, run_daemon
from hearthd.daemon.settings import Settings, SettingsStore
from hearthd.events import (
    AlarmEvent,
    ErrorEvent,
    EventType,
    ReplyEvent,
    Trace,
    TranscriptEvent,
    WakeEvent,
)

from .services import Broker

PREFIX = "homeassistant/device"



@pytest.fixture
def mqtt_config(base_config: Config, broker: Broker, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Config:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    cfg = copy.deepcopy(base_config)
    cfg.mqtt.port = broker.port
    cfg.mqtt.node_id = "testnode"
    cfg.mqtt.command_timeout_s = 2.0
    cfg.mqtt.settle_s = 0.15
    cfg.dbus.enabled = False
    return cfg


async def _collect(port: int, topic: str, seconds: float) -> dict[str, tuple[str, bool]]:
    """The last message seen on each topic (retained ones replayed at subscribe), with its retain flag."""
    seen: dict[str, tuple[str, bool]] = {}
    async with aiomqtt.Client("127.0.0.1", port, identifier="test-observer") as client:
        await client.subscribe(topic, qos=1)
        try:
            async with asyncio.timeout(seconds):
                async for m in client.messages:
                    seen[m.topic.value] = (bytes(m.payload).decode(), m.retain)
        except TimeoutError:
            pass
    return seen


def _device_topic(node: str = "testnode") -> str:
    return f"{PREFIX}/hearthd_{machine_key(node)}/config"


def _live_handlers(calls: list[tuple[str, Any]]) -> Handlers:
    return Handlers(mute=lambda on: calls.append(("mute", on)), listen=lambda: calls.append(("listen", None)),
                    language=lambda lang: calls.append(("language", lang)),
                    volume=lambda v: calls.append(("volume", v)),
                    wake_word=lambda w: calls.append(("wake_word", w)), wake_words=["okay_nabu", "hey_jarvis"])


async def test_nothing_is_cleared_where_nothing_was(mqtt_config: Config, broker: Broker) -> None:
    """Issue 27, item 5: every start made Home Assistant log "No device components to cleanup for hearthd_…,
    node_id 'None'": hearthd emptied an older hearthd's discovery topic that held nothing."""
    legacy = f"{PREFIX}/hearthd_testnode/config"
    heard: list[bytes] = []
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="watcher") as watcher:
        await watcher.subscribe(legacy, qos=1)

        async def listen() -> None:
            async for m in watcher.messages:
                heard.append(bytes(m.payload))

        listening = asyncio.create_task(listen())
        components = Components(mqtt_config)
        components.mqtt_one_shot = False
        try:
            await components.mqtt_link().ready()
            await asyncio.sleep(0.5)
        finally:
            await components.close()
            listening.cancel()
    assert heard == []


async def test_home_assistant_sees_every_entity_with_qos_ids_and_categories(mqtt_config: Config,
                                                                             broker: Broker) -> None:
    # An older hearthd left its discovery under the host-name id: it is cleared, so HA shows one device.
    async with aiomqtt.Client("127.0.0.1", broker.port, identifier="old-hearthd") as old:
        await old.publish(f"{PREFIX}/hearthd_testnode/config", json.dumps({"dev": {"ids": ["hearthd_testnode"]}}),
                          qos=1, retain=True)
    calls: list[tuple[str, Any]] = []
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    components.mqtt_handlers = _live_handlers(calls)
    link = components.mqtt_link()
    await link.ready()
    try:
        seen = await _collect(broker.port, "#", 0.5)
        assert f"{PREFIX}/hearthd_testnode/config" not in seen  # the empty retained message removed it
        config, retained = seen[_device_topic()]
        assert retained
        payload = json.loads(config)
        cmps = payload["cmps"]
        assert {k: v["p"] for k, v in cmps.items()} == {
            "assist_state": "sensor", "transcript": "sensor", "reply": "sensor", "last_language": "sensor",
            "error": "sensor", "problems": "sensor", "events": "event", "ask": "text", "language": "select",
            "mute": "switch", "listen": "button", "volume": "number", "wake_word": "select"}
        for name, c in cmps.items():
            assert c["qos"] == 1, name  # HA 2025.4 does not pass the device's qos on to its components
            assert c["uniq_id"] == f"hearthd_{machine_key('testnode')}_{name}"
        assert machine_key("testnode") != machine_key("othernode")  # two nodes on one machine never clash
        assert "testnode" not in cmps["mute"]["uniq_id"]  # not from the host name: two hosts named alike differ
        assert {k for k, c in cmps.items() if c.get("ent_cat") == "config"} == {"language", "mute", "volume",
                                                                                "wake_word"}
        assert {k for k, c in cmps.items() if c.get("ent_cat") == "diagnostic"} == {"error", "last_language",
                                                                                    "problems"}
        assert cmps["events"]["evt_typ"] == ["wake", "reply", "error", "alarm", "timer"]
        assert cmps["ask"]["cmd_t"] == "hearthd/testnode/ask" and "tojson" in cmps["ask"]["cmd_tpl"]
        assert cmps["reply"]["json_attr_t"] == "hearthd/testnode/reply/attributes"
        assert cmps["wake_word"]["ops"] == ["okay_nabu", "hey_jarvis"]
        assert payload["avty_t"] == "hearthd/testnode/availability"
        assert seen["hearthd/testnode/availability"] == ("online", True)
        state = json.loads(seen["hearthd/testnode/state"][0])
        assert state["assist_state"] == "idle" and state["error"] == "none" and state["volume"] == 100

        # Home Assistant's controls reach the live loop's handlers; nonsense values change nothing
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
            for topic, value in [("mute/set", "ON"), ("volume/set", "35"), ("volume/set", "inf"),
                                 ("volume/set", "-3"), ("wake_word/set", "hey_jarvis"), ("wake_word/set", "bogus"),
                                 ("language/set", "ru"), ("language/set", "xx"), ("listen", "PRESS")]:
                await ha.publish(f"hearthd/testnode/{topic}", value, qos=1)
        for _ in range(50):
            if len(calls) >= 5:
                break
            await asyncio.sleep(0.05)
        assert calls == [("mute", True), ("volume", 35), ("wake_word", "hey_jarvis"), ("language", "ru"),
                         ("listen", None)]
        assert link.device.rejected == 4
        assert link.connected  # nothing above ended the link
        state = json.loads((await _collect(broker.port, "hearthd/testnode/state", 0.3))["hearthd/testnode/state"][0])
        assert (state["muted"], state["volume"], state["wake_word"], state["language"]) == ("ON", 35, "hey_jarvis",
                                                                                             "ru")
    finally:
        await components.close()


async def test_hearthd_comes_back_after_home_assistant_restarts_and_says_goodbye(mqtt_config: Config,
                                                                                  broker: Broker) -> None:
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    components.mqtt_handlers = _live_handlers([])
    await components.mqtt_link().ready()
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
            await ha.subscribe(_device_topic(), qos=1)
            await asyncio.sleep(0.2)
            await ha.publish("homeassistant/status", "online", qos=1)  # Home Assistant restarted
            fresh = []
            async with asyncio.timeout(3):
                async for m in ha.messages:
                    fresh.append(m)
                    if not m.retain:  # the republished one, not the retained copy replayed on subscribe
                        break
            assert json.loads(bytes(fresh[-1].payload))["cmps"]["listen"]["cmd_t"] == "hearthd/testnode/listen"
    finally:
        await components.close()
    seen = await _collect(broker.port, "hearthd/#", 0.3)
    assert seen["hearthd/testnode/availability"][0] == "offline"  # a clean stop says so


async def test_headless_withdraws_the_controls_it_cannot_honour(mqtt_config: Config, broker: Broker,
                                                                caplog: pytest.LogCaptureFixture) -> None:
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    components.mqtt_handlers = Handlers(language=lambda lang: None)  # what `run --headless` gives: no microphone
    link = components.mqtt_link()
    await link.ready()
    try:
        seen = await _collect(broker.port, _device_topic(), 0.3)
        cmps = json.loads(seen[_device_topic()][0])["cmps"]
        for name, platform in [("mute", "switch"), ("listen", "button"), ("volume", "number"),
                               ("wake_word", "select")]:
            assert cmps[name] == {"p": platform}  # a component with only its platform: HA removes it
        assert "uniq_id" in cmps["language"] and "uniq_id" in cmps["ask"]
        with caplog.at_level(logging.WARNING, logger="hearthd.daemon.ha_device"):
            async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
                await ha.publish("hearthd/testnode/mute/set", "ON", qos=1)  # a stale entity in HA
                await ha.publish("hearthd/testnode/listen", "PRESS", qos=1)
            for _ in range(40):
                if link.device.ignored == 2:
                    break
                await asyncio.sleep(0.05)
        assert link.device.ignored == 2
        assert link.status["muted"] == "OFF"  # not pretending it muted anything
        assert "without a microphone" in caplog.text
    finally:
        await components.close()


async def test_replies_errors_and_events_reach_home_assistant(mqtt_config: Config, broker: Broker) -> None:
    components = Components(mqtt_config)
    components.mqtt_one_shot = False
    components.mqtt_handlers = Handlers()
    link = components.mqtt_link()
    await link.ready()
    trace = Trace()
    trace.listen(_publish_state(link))
    long_reply = "You have these alarms: " + ", ".join(f"{h}:00 wake up for the early shift" for h in range(1, 13))
    assert len(long_reply) > 300
    events: list[dict[str, Any]] = []
    try:
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
            await ha.subscribe("hearthd/testnode/event", qos=1)
            await asyncio.sleep(0.1)
            trace.emit(WakeEvent(name="okay_nabu", score=0.9))
            trace.emit(TranscriptEvent(text="какие у меня будильники", lang="ru", prob=0.9))
            trace.emit(ReplyEvent(text=long_reply, lang="ru"))
            trace.emit(ErrorEvent(code="agent-model-failed", message="the model file is truncated"))
            trace.emit(AlarmEvent(id=3, kind="timer", label="pizza", lang="en", count=1, text="Time's up"))
            trace.emit(AlarmEvent(id=3, kind="timer", label="pizza", lang="en", count=2, text="Time's up"))
            async with asyncio.timeout(3):
                async for m in ha.messages:
                    events.append(json.loads(bytes(m.payload)))
                    if len(events) == 4:
                        break
        assert [e["event_type"] for e in events] == ["wake", "reply", "error", "timer"]  # a repeat ring: once
        assert events[3]["label"] == "pizza" and events[2]["code"] == "agent-model-failed"
        await asyncio.sleep(0.2)
        seen = await _collect(broker.port, "hearthd/testnode/#", 0.3)
        state = json.loads(seen["hearthd/testnode/state"][0])
        assert len(state["reply"]) <= STATE_MAX < len(long_reply)
        assert state["last_language"] == "ru" and state["language"] == "en"  # the setting is not the last one
        assert state["error"] == "agent-model-failed"
        assert json.loads(seen["hearthd/testnode/reply/attributes"][0]) == {"text": long_reply, "lang": "ru"}
        error = json.loads(seen["hearthd/testnode/error/attributes"][0])
        assert error["message"] == "the model file is truncated" and error["at"]
    finally:
        await components.close()


# -- settings that survive a restart ----------------------------------------------------------------------------


def _quiet_room() -> np.ndarray:
    return np.random.default_rng(5).normal(0, 8, 16000).astype(np.int16)


async def _run_daemon(cfg: Config, until: Any, timeout: float = 30.0,
                      config_path: Path | None = None) -> tuple[Trace, MemorySink, Any]:
    """hearthd run (live, a quiet room as the microphone) in this process until `until(trace)` holds, then
    SIGTERM as systemd would send it."""
    components = Components(cfg)
    trace = Trace()
    sink = MemorySink()
    source = WavSource(_quiet_room(), tail_s=None)
    daemon = asyncio.create_task(run_daemon(components, trace, audio=(source, sink), config_path=config_path))
    try:
        async with asyncio.timeout(timeout):
            while not trace.of_type(EventType.READY):
                assert not daemon.done(), daemon.exception() if daemon.done() else None
                await asyncio.sleep(0.05)
            if cfg.mqtt.enabled:  # subscribed, retained replayed: a command sent now is heard
                await components.mqtt.ready(10)
            while not await until(trace):
                await asyncio.sleep(0.1)
    finally:
        if trace.of_type(EventType.READY):
            os.kill(os.getpid(), signal.SIGTERM)  # the daemon's own handler takes it (and stops)
        await asyncio.wait_for(daemon, 20)
    return trace, sink, components


async def test_settings_chosen_in_home_assistant_survive_a_restart(mqtt_config: Config, broker: Broker,
                                                                   tmp_path: Path) -> None:
    cfg = copy.deepcopy(mqtt_config)
    assert cfg.wake.enabled and cfg.wake.model == "okay_nabu"

    async def state() -> dict[str, Any]:
        seen = await _collect(broker.port, "hearthd/testnode/state", 0.2)
        return json.loads(seen["hearthd/testnode/state"][0]) if "hearthd/testnode/state" in seen else {}

    async def chosen(trace: Trace) -> bool:
        if not getattr(chosen, "sent", False):
            async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
                for topic, value in [("mute/set", "ON"), ("language/set", "ru"), ("volume/set", "40"),
                                     ("wake_word/set", "hey_jarvis")]:
                    await ha.publish(f"hearthd/testnode/{topic}", value, qos=1)
            chosen.sent = True  # type: ignore[attr-defined]
        now = await state()
        return (now.get("muted"), now.get("language"), now.get("volume"), now.get("wake_word")) == \
            ("ON", "ru", 40, "hey_jarvis") and bool(trace.of_type(EventType.LISTENING)[1:])

    await _run_daemon(copy.deepcopy(cfg), chosen)
    saved = tmp_path / "state" / "hearthd" / "settings.json"
    assert json.loads(saved.read_text()) == {"muted": True, "language": "ru", "volume": 40,
                                             "wake_word": "hey_jarvis"}
    assert saved.stat().st_mode & 0o777 == 0o600

    seen_at_start: dict[str, Any] = {}

    async def started(trace: Trace) -> bool:
        seen_at_start.update(await state())
        return bool(seen_at_start)

    fresh = copy.deepcopy(cfg)
    trace, sink, components = await _run_daemon(fresh, started)
    assert (seen_at_start["muted"], seen_at_start["language"], seen_at_start["volume"],
            seen_at_start["wake_word"]) == ("ON", "ru", 40, "hey_jarvis")
    assert fresh.general.language == "ru" and fresh.wake.model == "hey_jarvis"  # the loop listened for it


async def test_a_reload_keeps_the_chosen_language_unless_the_file_changed_it(broker: Broker, tmp_path: Path,
                                                                            monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    path = tmp_path / "config.toml"
    body = (f'[mqtt]\nport = {broker.port}\nnode_id = "testnode"\nsettle_s = 0.15\n'
            '[dbus]\nenabled = false\n[general]\nlanguage = "{lang}"\n')
    path.write_text(body.format(lang="en"))
    cfg = load_config(path, environ={})
    steps: list[str] = []

    async def published_language() -> str:
        seen = await _collect(broker.port, "hearthd/testnode/state", 0.2)
        return json.loads(seen["hearthd/testnode/state"][0])["language"] if seen else ""

    async def script(trace: Trace) -> bool:
        reloads = len(trace.of_type(EventType.RELOAD))
        if not steps:
            async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fake-ha") as ha:
                await ha.publish("hearthd/testnode/language/set", "ru", qos=1)
            steps.append("chosen")
        elif steps == ["chosen"] and await published_language() == "ru":
            os.kill(os.getpid(), signal.SIGHUP)  # the file is unchanged: the choice stays
            steps.append("reload 1")
        elif steps[-1] == "reload 1" and reloads == 1:
            steps.append(f"after reload 1: {cfg.general.language}")
            path.write_text(body.format(lang="hi"))  # the user edits the file's default language
            os.kill(os.getpid(), signal.SIGHUP)
            steps.append("reload 2")
        elif steps[-1] == "reload 2" and reloads == 2 and await published_language() == "hi":
            steps.append(f"after reload 2: {cfg.general.language}")
            return True
        return False

    await _run_daemon(cfg, script, config_path=path)
    assert steps == ["chosen", "reload 1", "after reload 1: ru", "reload 2", "after reload 2: hi"]
    assert json.loads((tmp_path / "state" / "hearthd" / "settings.json").read_text())["language"] == ""


def test_settings_are_kept_and_a_damaged_file_is_moved_aside(tmp_path: Path,
                                                              caplog: pytest.LogCaptureFixture) -> None:
    path = tmp_path / "state" / "settings.json"
    store = SettingsStore(path)
    assert store.current == Settings()
    heard: list[set[str]] = []
    store.listeners.append(lambda new, changed: heard.append(changed))
    store.change(volume=30, muted=True)
    store.change(volume=30)  # no change: nobody is told
    assert heard == [{"volume", "muted"}]
    assert SettingsStore(path).current == Settings(muted=True, volume=30)
    with pytest.raises(ValueError):
        store.change(volume=300)
    assert store.current.volume == 30

    path.write_bytes(b"\xff\x00{not json")
    assert SettingsStore(path).current == Settings()
    assert [p.name for p in path.parent.iterdir() if p.name.startswith("settings.json.corrupt-")]
    path.write_text(json.dumps({"muted": "yes", "volume": 20}))  # a wrong type: defaults, file kept aside
    assert SettingsStore(path).current == Settings()
    path.write_text(json.dumps({"volume": 20, "from_a_newer_version": 1}))
    assert SettingsStore(path).current == Settings(volume=20)


def test_a_disk_that_cannot_be_written_keeps_settings_for_the_run(tmp_path: Path,
                                                                   caplog: pytest.LogCaptureFixture) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    store = SettingsStore(blocker / "settings.json")  # its directory cannot exist: every save fails
    with caplog.at_level(logging.WARNING, logger="hearthd.daemon.settings"):
        store.change(muted=True)
        store.change(volume=10)
    assert store.current == Settings(muted=True, volume=10) and store.unsaved
    assert caplog.text.count("cannot save the settings") == 1  # said once, not at every change


async def test_volume_scales_what_is_played() -> None:
    inner = MemorySink(realtime=False)
    sink = VolumeSink(inner, 100)
    tone = (np.sin(np.arange(1600) / 5) * 20000).astype(np.int16)
    await sink.play(tone, 16000)
    sink.volume = 25
    await sink.play(tone, 16000)
    full, quarter = inner.played[0][0], inner.played[1][0]
    assert np.array_equal(full, tone)
    assert abs(int(np.abs(quarter).max()) - int(np.abs(tone).max()) // 4) <= 1


async def test_dropped_messages_are_counted_in_the_trace(mqtt_config: Config, broker: Broker) -> None:
    sent: list[bool] = []

    async def hostile(trace: Trace) -> bool:
        if not sent:
            async with aiomqtt.Client("127.0.0.1", broker.port, identifier="fuzzer") as fuzzer:
                for payload in (b"{" * 200, b"\xff\xfe", b'{"text": 1e999}', b'"\\ud800"'):
                    await fuzzer.publish("hearthd/testnode/ask", payload, qos=1)
                await fuzzer.publish("hearthd/testnode/volume/set", b"nan", qos=1)
            sent.append(True)
            await asyncio.sleep(0.5)
        return True

    trace, _, _ = await _run_daemon(copy.deepcopy(mqtt_config), hostile)
    counted = [e for e in trace.of_type(EventType.METRICS) if e.source == "mqtt"]
    assert counted, "no mqtt metrics event"
    assert counted[-1].mqtt_rejected["ask"] and sum(counted[-1].mqtt_rejected["ask"].values()) == 4


async def test_a_model_that_cannot_load_shows_in_home_assistant_at_start(mqtt_config: Config, broker: Broker,
                                                                       tmp_path: Path) -> None:
    broken = tmp_path / "broken.gguf"
    broken.write_bytes(b"GGUF" + b"\x00" * 64)  # a truncated file
    cfg = copy.deepcopy(mqtt_config)
    cfg.agent.model_path = str(broken)
    seen: dict[str, Any] = {}

    async def reported(trace: Trace) -> bool:
        state = await _collect(broker.port, "hearthd/testnode/#", 0.2)
        if "hearthd/testnode/state" in state and json.loads(state["hearthd/testnode/state"][0])["problems"]:
            seen.update(json.loads(state["hearthd/testnode/problems/attributes"][0]))
            return True
        return False

    trace, _, _ = await _run_daemon(cfg, reported)
    assert "agent" in seen and "broken.gguf" in seen["agent"]  # no turn was needed to learn it
    assert not trace.of_type(EventType.TRANSCRIPT)


@pytest.mark.parametrize("area", ["Kitchen", ""])
async def test_the_device_is_suggested_to_the_room_hearthd_is_in(mqtt_config: Config, area: str) -> None:
    """Issue 27, item 6: Home Assistant put hearthd in no room; general.area is now its suggested area."""
    mqtt_config.general.area = area
    _, payload = Components(mqtt_config).mqtt_link().device.discovery()
    assert payload["dev"].get("sa") == (area or None)
