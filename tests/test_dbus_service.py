"""hearthd's own D-Bus interface, org.hearthd.Assistant1, on a private dbus-daemon: what a desktop widget or a
script sees when it asks, listens for signals and reads properties."""

from __future__ import annotations

import asyncio
import copy
import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from dbus_fast import Message, MessageType
from dbus_fast.aio import MessageBus

from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.pipeline import Pipeline
from hearthd.daemon.service import ERROR_FAILED, ERROR_LANGUAGE, ERROR_TEXT, ERROR_UNAVAILABLE, NAME, PATH, export
from hearthd.events import Trace
from hearthd.locale import phrase
from hearthd.tools.bus import ServiceFailed

from .dbus_mocks import MockLogin1, MockNotifications, MockPlayer, start_all, stop_all

ROOT = Path(__file__).resolve().parent.parent


class Client:
    """A program on the session bus talking to hearthd, collecting its signals."""

    def __init__(self, bus: MessageBus) -> None:
        self.bus = bus
        self.signals: list[tuple[str, list[Any]]] = []
        bus.add_message_handler(self._on_message)

    def _on_message(self, message: Message) -> None:
        if message.message_type == MessageType.SIGNAL and message.interface == NAME:
            self.signals.append((str(message.member), list(message.body)))

    @classmethod
    async def connect(cls, address: str) -> Client:
        client = cls(await MessageBus(bus_address=address).connect())
        await client.call("org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus", "AddMatch", "s",
                          [f"type='signal',interface='{NAME}'"])
        return client

    async def call(self, dest: str, path: str, iface: str, member: str, sig: str = "", body: list | None = None
                   ) -> Message:
        return await self.bus.call(Message(destination=dest, path=path, interface=iface, member=member,
                                           signature=sig, body=body or []))

    async def hearthd(self, member: str, sig: str = "", *body: Any) -> Message:
        return await self.call(NAME, PATH, NAME, member, sig, list(body))

    async def ask(self, text: str, lang: str = "") -> str:
        reply = await self.hearthd("Ask", "ss", text, lang)
        assert reply.message_type == MessageType.METHOD_RETURN, reply.body
        return str(reply.body[0])

    async def prop(self, name: str) -> Any:
        reply = await self.call(NAME, PATH, "org.freedesktop.DBus.Properties", "Get", "ss", [NAME, name])
        return reply.body[0].value


@pytest.fixture
async def served(dbus_config: Config, dbus_address: str) -> AsyncIterator[tuple[Client, Any]]:
    pipeline = Pipeline(Components(dbus_config), Trace())
    bus, assistant = await export(pipeline, dbus_address)
    client = await Client.connect(dbus_address)
    yield client, assistant
    client.bus.disconnect()
    bus.disconnect()
    await pipeline.c.bus.close()


async def _settle() -> None:
    await asyncio.sleep(0.1)  # signals are delivered after the method's reply


async def test_ask_over_dbus_acts_and_signals_what_happened(served, dbus_address: str) -> None:
    client, _ = served
    player = MockPlayer("vlc", status="Playing")
    await start_all(dbus_address, player)
    try:
        assert await client.ask("pause the music") == phrase("en", "media.pause")
        assert player.calls == [("Pause", ())]
        await _settle()
        kinds = [name for name, _ in client.signals if name != "PropertiesChanged"]
        assert kinds == ["Transcript", "Action", "Reply"]
        signals = dict(client.signals)
        assert signals["Transcript"] == ["pause the music", "en"]
        assert signals["Action"][0] == "media" and json.loads(signals["Action"][1]) == {"action": "pause"}
        assert signals["Reply"] == [phrase("en", "media.pause"), "en"]
        assert await client.prop("State") == "idle"
        assert await client.ask("пауза") and await client.prop("Language") == "ru"
    finally:
        await stop_all(player)


async def test_a_consequential_ask_still_needs_a_yes(served, dbus_address: str) -> None:
    client, _ = served
    login1 = MockLogin1()
    await start_all(dbus_address, login1)
    try:
        assert await client.ask("shut down the computer") == phrase("en", "confirm.power_off")
        assert login1.calls == []
        assert await client.ask("no") == phrase("en", "confirm.cancelled")
        assert await client.ask("कंप्यूटर बंद करो") == phrase("hi", "confirm.power_off")
        assert await client.ask("हाँ") == phrase("hi", "power.power_off")
        assert login1.calls == [("PowerOff", (False,))]
    finally:
        await stop_all(login1)


async def test_bad_requests_get_dbus_errors_not_silence(served) -> None:
    client, assistant = served
    reply = await client.hearthd("Ask", "ss", "pause the music", "fr")
    assert (reply.message_type, reply.error_name) == (MessageType.ERROR, ERROR_LANGUAGE)
    reply = await client.hearthd("Listen")  # headless: no microphone to listen with
    assert (reply.message_type, reply.error_name) == (MessageType.ERROR, ERROR_UNAVAILABLE)
    reply = await client.hearthd("Say", "ss", "hello", "en")  # headless without an output: nowhere to speak
    assert (reply.message_type, reply.error_name) == (MessageType.ERROR, ERROR_UNAVAILABLE)


async def test_mute_blocks_listening_until_unmuted(served) -> None:
    client, assistant = served
    heard: list[str] = []
    assistant.listen_hook = lambda: heard.append("listen")
    assert (await client.hearthd("Listen")).message_type == MessageType.METHOD_RETURN
    await client.hearthd("Mute", "b", True)
    assert await client.prop("Muted") is True
    reply = await client.hearthd("Listen")
    assert reply.error_name == ERROR_UNAVAILABLE and "muted" in reply.body[0]
    await client.hearthd("Mute", "b", False)
    await client.hearthd("Listen")
    assert heard == ["listen", "listen"]
    assert await client.prop("Muted") is False


async def test_say_speaks_through_the_daemons_speaker(served) -> None:
    client, assistant = served
    spoken: list[tuple[str, str]] = []

    async def speak(text: str, lang: str) -> None:
        spoken.append((text, lang))

    assistant.speak_hook = speak
    reply = await client.hearthd("Say", "ss", "Обед готов", "ru")
    assert reply.message_type == MessageType.METHOD_RETURN
    assert spoken == [("Обед готов", "ru")]
    await _settle()
    assert ("Reply", ["Обед готов", "ru"]) in client.signals


async def test_a_handler_that_raises_is_answered_counted_and_the_service_goes_on(served, dbus_address: str,
                                                                                  caplog: pytest.LogCaptureFixture
                                                                                  ) -> None:
    """An unexpected exception in a turn: the asker hears the apology, it is logged and counted, the turn lock is
    free again, and the next Ask is answered as usual."""
    client, assistant = served
    run_text = assistant.pipeline.run_text

    async def broken(*args: Any, **kwargs: Any) -> Any:
        raise RuntimeError("boom")

    assistant.pipeline.run_text = broken
    assert await client.ask("pause the music") == phrase("en", "error.internal")
    assert assistant.rejected[("Ask", "internal")] == 1
    assert any("D-Bus Ask failed" in r.getMessage() and r.exc_info for r in caplog.records)
    assert not assistant._turns.locked() and await client.prop("State") == "idle"

    async def speak(text: str, lang: str) -> None:
        raise OSError("the sound server went away")

    assistant.speak_hook = speak
    reply = await client.hearthd("Say", "ss", "dinner is ready", "en")
    assert (reply.message_type, reply.error_name) == (MessageType.ERROR, ERROR_FAILED)
    assert "the sound server went away" in reply.body[0]
    assert await client.prop("State") == "idle"

    assistant.listen_hook = lambda: 1 / 0
    reply = await client.hearthd("Listen")
    assert reply.error_name == ERROR_FAILED and "ZeroDivisionError" in reply.body[0]

    assistant.pipeline.run_text = run_text
    player = MockPlayer("vlc", status="Playing")
    await start_all(dbus_address, player)
    try:
        assert await client.ask("pause the music") == phrase("en", "media.pause")
    finally:
        await stop_all(player)
    assert assistant.rejected[("Say", "internal")] == 1 and assistant.rejected[("Listen", "internal")] == 1


async def test_a_huge_or_empty_text_is_refused_with_a_clear_error(served) -> None:
    client, assistant = served
    limit = assistant.pipeline.cfg.agent.max_text_chars
    reply = await client.hearthd("Ask", "ss", "turn on the light " * 15_000, "")  # 270 kB
    assert (reply.message_type, reply.error_name) == (MessageType.ERROR, ERROR_TEXT)
    assert f"at most {limit}" in reply.body[0] and "agent.max_text_chars" in reply.body[0]
    spoken: list[str] = []

    async def speak(text: str, lang: str) -> None:
        spoken.append(text)

    assistant.speak_hook = speak
    reply = await client.hearthd("Say", "ss", "x" * (limit + 1), "en")
    assert reply.error_name == ERROR_TEXT and spoken == []
    reply = await client.hearthd("Ask", "ss", "   ", "")
    assert reply.error_name == ERROR_TEXT and "empty" in reply.body[0]
    assert assistant.rejected[("Ask", "InvalidText")] == 2
    # what cannot travel on the bus (NUL, a lone surrogate) is cleaned when a caller in the process hands it over
    await type(assistant).Say.__wrapped__(assistant, "din\x00ner \udcff ready", "en")  # the method, undecorated
    assert spoken == ["dinner \ufffd ready"]


async def test_only_one_hearthd_owns_the_name(served, dbus_config: Config, dbus_address: str) -> None:
    with pytest.raises(ServiceFailed):
        await export(Pipeline(Components(dbus_config), Trace()), dbus_address)


async def _next_event(stream: asyncio.StreamReader, kind: str, timeout: float) -> dict:
    async def scan() -> dict:
        while line := await stream.readline():
            event = json.loads(line)
            if event.get("type") == kind:
                return event
        raise AssertionError(f"the daemon ended before a {kind!r} event")

    return await asyncio.wait_for(scan(), timeout)


async def test_the_headless_daemon_serves_the_interface_and_notifies_rings(dbus_address: str,
                                                                           tmp_path: Path) -> None:
    """`hearthd run --headless` owns the name; a timer set over D-Bus rings with a critical notification."""
    notes = MockNotifications()
    await start_all(dbus_address, notes)
    env = {**os.environ, "DBUS_SESSION_BUS_ADDRESS": dbus_address, "DBUS_SYSTEM_BUS_ADDRESS": dbus_address,
           "XDG_CONFIG_HOME": str(tmp_path), "XDG_STATE_HOME": str(tmp_path / "state")}
    daemon = await asyncio.create_subprocess_exec(sys.executable, "-m", "hearthd", "run", "--headless", "--json",
                                                  env=env, cwd=ROOT, stdout=subprocess.PIPE)
    client = None
    try:
        assert daemon.stdout is not None
        assert (await _next_event(daemon.stdout, "ready", 60))["service"] == NAME
        client = await Client.connect(dbus_address)
        reply = await client.ask("поставь таймер на 2 секунды")
        assert reply == phrase("ru", "timer.set", duration="две секунды")
        ring = await _next_event(daemon.stdout, "alarm", 30)
        assert (ring["kind"], ring["lang"]) == ("timer", "ru")
        await asyncio.sleep(0.3)
        summaries = [(n[3], n[4]) for n in notes.calls_to("Notify")]
        assert (phrase("ru", "notify.alarm"), ring["text"]) in summaries
        assert notes.raw_hints[-1]["urgency"].value == 2  # critical: an alarm stays on screen
    finally:
        if client is not None:
            client.bus.disconnect()
        daemon.send_signal(signal.SIGTERM)
        assert await asyncio.wait_for(daemon.wait(), 15) == 0
        await stop_all(notes)


def test_the_system_bus_policy_lets_only_the_hearthd_user_own_the_name(tmp_path: Path) -> None:
    """systemd/org.hearthd.Assistant1.conf, loaded by a real dbus-daemon: this test's user is not `hearthd`."""
    import shutil

    if not shutil.which("dbus-daemon"):
        pytest.skip("dbus-daemon is not installed")
    socket_path = tmp_path / "system_bus_socket"
    config = tmp_path / "system.conf"
    config.write_text(f"""<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-BUS Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>system</type>
  <listen>unix:path={socket_path}</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/><allow own="*"/>
    <allow send_type="method_call"/><allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/><allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/><allow receive_type="method_return"/>
    <allow receive_type="error"/><allow receive_type="signal"/>
  </policy>
  <include>{ROOT / "systemd" / "org.hearthd.Assistant1.conf"}</include>
</busconfig>
""")
    daemon = subprocess.Popen(["dbus-daemon", "--config-file", str(config), "--nofork", "--nopidfile"],
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    deadline = time.monotonic() + 10
    while not socket_path.exists() and daemon.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert socket_path.exists(), daemon.stderr.read() if daemon.poll() is not None else "no socket"  # type: ignore

    async def own(name: str) -> str:
        from dbus_fast import NameFlag

        bus = await asyncio.wait_for(MessageBus(bus_address=f"unix:path={socket_path}").connect(), 5)
        try:
            return (await asyncio.wait_for(bus.request_name(name, NameFlag.DO_NOT_QUEUE), 5)).name
        except Exception as e:
            return type(e).__name__ + ": " + str(e)
        finally:
            bus.disconnect()

    try:
        assert asyncio.run(own("org.example.Other")) == "PRIMARY_OWNER"  # the bus itself works
        denied = asyncio.run(own(NAME))
        assert "AccessDenied" in denied or "not allowed" in denied
    finally:
        daemon.terminate()
        daemon.wait(5)


# -- whose question it is (issue 15, item 1) -----------------------------------------------------------------------


@pytest.fixture
async def two_clients(dbus_config: Config, dbus_address: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                      ) -> AsyncIterator[tuple[Client, Client, Components]]:
    """hearthd on the bus with an alarm store of its own, and two programs on separate connections."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    components = Components(dbus_config)
    bus, _ = await export(Pipeline(components, Trace()), dbus_address)
    a, b = await Client.connect(dbus_address), await Client.connect(dbus_address)
    yield a, b, components
    a.bus.disconnect()
    b.bus.disconnect()
    bus.disconnect()
    await components.close()


async def test_another_connections_yes_does_not_answer_the_question(two_clients, dbus_address: str) -> None:
    """A asked to shut the computer down; B, another program, said "yes" — and it ran. Each sender is its own
    conversation now: B's yes answers nothing, B's own request is its own turn, A's question stays for A."""
    a, b, _ = two_clients
    login1, player = MockLogin1(), MockPlayer("vlc", status="Playing")
    await start_all(dbus_address, login1, player)
    try:
        assert await a.ask("shut down the computer") == phrase("en", "confirm.power_off")
        assert await b.ask("yes") == phrase("en", "confirm.nothing_open")
        assert login1.calls == []
        assert await b.ask("pause the music") == phrase("en", "media.pause")  # handled as B's own turn
        assert player.calls == [("Pause", ())] and login1.calls == []
        assert await a.ask("yes") == phrase("en", "power.power_off")  # A's question was still open
        assert login1.calls == [("PowerOff", (False,))]
        assert await a.ask("yes") == phrase("en", "confirm.nothing_open")  # and it ran once
    finally:
        await stop_all(login1, player)


async def test_another_connections_request_is_not_taken_as_the_answer(two_clients) -> None:
    """A: "cancel all my alarms" (asked); B: "set an alarm for 3:33 called bee" was taken as A's "no": B heard
    "Okay, I didn't do it." and B's alarm was never set."""
    a, b, components = two_clients
    components.alarms.add("06:00")
    assert await a.ask("cancel all my alarms") == phrase("en", "confirm.cancel_all_alarms")
    reply = await b.ask("set an alarm for 3:33 called bee")
    assert reply != phrase("en", "confirm.cancelled") and "bee" in reply
    assert sorted((x.hhmm, x.label) for x in components.alarms.pending()) == [("03:33", "bee"), ("06:00", "")]
    assert await a.ask("no") == phrase("en", "confirm.cancelled")  # A's question was still A's to answer
    assert len(components.alarms.pending()) == 2


async def test_ask_with_id_resent_from_a_new_connection_does_nothing_twice(served, dbus_address: str) -> None:
    """Issue 27, item 7: the same request resent after a crash (a new connection, so a new sender) set a second
    alarm. AskWithId's id is the request's idempotency key; another id is a request of its own."""
    client, assistant = served
    alarms = assistant.pipeline.c.alarms
    for alarm in alarms.pending():
        alarms.remove(alarm)
    first = await client.hearthd("AskWithId", "sss", "set an alarm for 6 am", "", "wake-1")
    assert first.message_type == MessageType.METHOD_RETURN, first.body
    retry = await Client.connect(dbus_address)
    try:
        again = await retry.hearthd("AskWithId", "sss", "set an alarm for 6 am", "", "wake-1")
        other = await retry.hearthd("AskWithId", "sss", "set an alarm for 6 am", "", "wake-2")
        bad = await retry.hearthd("AskWithId", "sss", "set an alarm for 6 am", "", "no spaces please")
    finally:
        retry.bus.disconnect()
    assert again.body == first.body and other.message_type == MessageType.METHOD_RETURN
    assert bad.message_type == MessageType.ERROR and bad.error_name == "org.hearthd.Assistant1.Error.InvalidText"
    assert [a.hhmm for a in alarms.pending()] == ["06:00", "06:00"]  # wake-1 once, wake-2 once


async def test_an_ask_that_waited_in_line_past_its_budget_is_told_so_at_once(dbus_config: Config,
                                                                            dbus_address: str) -> None:
    """Other turns held hearthd longer than a turn's budget (agent.max_turn_s) while an Ask waited: it is answered as
    soon as its turn comes, with why (its budget ran from when it was asked, issue 28.4), not after a model turn of its
    own; what the templates read is still done (they need no budget)."""
    cfg = copy.deepcopy(dbus_config)
    cfg.agent.max_turn_s = 3.0
    components = Components(cfg)
    agent = components.agent()
    agent.prepared_in_background = True  # as the daemon: its prefix ready before the asks
    await asyncio.get_running_loop().run_in_executor(None, agent.prepare, ["en"])
    pipeline = Pipeline(components, Trace())
    turns = asyncio.Lock()
    bus, assistant = await export(pipeline, dbus_address, turns=turns)
    client = await Client.connect(dbus_address)
    player = MockPlayer("vlc", status="Playing")
    await start_all(dbus_address, player)
    try:
        await turns.acquire()  # a long turn of someone else's
        model_ask = asyncio.create_task(client.ask("my flat feels a bit dull, any ideas to liven it up"))
        fast_ask = asyncio.create_task(client.ask("pause the music"))
        await asyncio.sleep(cfg.agent.max_turn_s + 0.5)
        assert not model_ask.done() and not fast_ask.done()  # both waited in line
        turns.release()
        assert await model_ask == phrase("en", "error.busy")
        assert await fast_ask == phrase("en", "media.pause") and player.calls == [("Pause", ())]
        # asked with the line empty, the same request is decided by the model in its own time
        assert await client.ask("my flat feels a bit dull, any ideas to liven it up") != phrase("en", "error.busy")
    finally:
        if turns.locked():
            turns.release()
        await stop_all(player)
        client.bus.disconnect()
        bus.disconnect()
        await pipeline.c.bus.close()
