"""Exhaustion on a running daemon (issue 26, item 5): `hearthd run --headless` in its own process under systemd's
default of 1,024 open files, serving Wyoming on 127.0.0.1, D-Bus on a private bus and MQTT on a real mosquitto. A
client opens 1,100 Wyoming connections and holds them open, sending nothing. Before the connection cap, each took a
descriptor until accept() failed with EMFILE: every door went down (D-Bus Ask `OSError: [Errno 24]`, the MQTT ask
"Sorry, something went wrong", an alarm not set) and asyncio wrote an accept traceback per try (75 MB in 45 s).

Now, with the crowd still holding its sockets: a D-Bus Ask sets an alarm, an MQTT ask is answered, a Wyoming
client past `wyoming.max_connections` is told "busy", the log stays small and holds no traceback, and once the
crowd lets go the Wyoming door serves again. No model loads: every request is a template sentence."""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

import aiomqtt
import pytest
from wyoming.client import AsyncTcpClient
from wyoming.error import Error
from wyoming.event import async_read_event
from wyoming.info import Describe, Info

from hearthd.tools.alarms import AlarmBook

from .services import Broker, free_port
from .test_dbus_service import Client
from .test_hostile import BASE, NODE, Asker, Daemon

ROOT = Path(__file__).resolve().parent.parent
CROWD = 1_100
DAEMON_FILES = 1_024  # systemd's default LimitNOFILE soft limit, which the run had
TIME_REPLY = "It's"  # how every English "what time is it" answer starts (the time itself changes)



def _enough_files_here() -> None:
    """This test process holds the crowd: it needs more than 1,100 descriptors of its own."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    want = CROWD + 400
    if soft < want:
        if hard != resource.RLIM_INFINITY and hard < want:
            pytest.skip(f"this process may open only {hard} files; the crowd needs {want}")
        resource.setrlimit(resource.RLIMIT_NOFILE, (want, hard))


def _systemd_default_limit() -> None:
    """In the daemon's process, before exec: the soft limit systemd gives a unit that sets none."""
    _, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (DAEMON_FILES, hard))


class LimitedDaemon(Daemon):
    async def start(self, timeout: float = 60) -> None:
        self._ready.clear()
        log = self.log_path.open("ab")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hearthd", "run", "--headless", "--json", "--ring-output", str(self.rings),
            env=self.env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log, limit=2**24,
            preexec_fn=_systemd_default_limit)
        log.close()
        self._reader = asyncio.create_task(self._read())
        await asyncio.wait_for(self._ready.wait(), timeout)

    def open_files(self) -> int:
        assert self.proc is not None
        return len(os.listdir(f"/proc/{self.proc.pid}/fd"))


async def _describe(port: int) -> Any:
    async with AsyncTcpClient("127.0.0.1", port) as client:
        await client.write_event(Describe().event())
        return await asyncio.wait_for(client.read_event(), 10)


async def test_a_crowd_of_idle_wyoming_connections_takes_no_other_door_down(broker: Broker, dbus_address: str,
                                                                            tmp_path: Path) -> None:
    _enough_files_here()
    port = free_port()
    state = tmp_path / "state"
    (tmp_path / "config" / "hearthd").mkdir(parents=True)
    (tmp_path / "config" / "hearthd" / "config.toml").write_text(f'[wyoming]\nuri = "tcp://127.0.0.1:{port}"\n')
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")  # the models, as set up
    env = {**os.environ, "XDG_CONFIG_HOME": str(tmp_path / "config"), "XDG_STATE_HOME": str(state),
           "XDG_CACHE_HOME": cache, "DBUS_SESSION_BUS_ADDRESS": dbus_address, "DBUS_SYSTEM_BUS_ADDRESS": dbus_address,
           "HEARTHD__MQTT__PORT": str(broker.port), "HEARTHD__MQTT__NODE_ID": NODE,
           "HEARTHD__MQTT__SETTLE_S": "0.2"}
    daemon = LimitedDaemon(env, tmp_path / "rings", tmp_path / "daemon.log")
    crowd: list[tuple[asyncio.StreamReader, asyncio.StreamWriter]] = []
    await daemon.start()
    try:
        info = await _describe(port)
        assert Info.is_type(info.type), info  # the door works before the crowd
        for _ in range(CROWD):
            crowd.append(await asyncio.open_connection("127.0.0.1", port))
        held = sum(1 for _, w in crowd if not w.is_closing())
        # the ones past the cap were told "busy" and hung up on; read what the last of them got
        refusal = await asyncio.wait_for(async_read_event(crowd[-1][0]), 10)
        assert refusal is not None and Error.is_type(refusal.type) and Error.from_event(refusal).code == "busy"
        open_files = daemon.open_files()

        dbus = await Client.connect(dbus_address)
        try:
            alarm = await asyncio.wait_for(dbus.ask("set an alarm for 6 am"), 60)
        finally:
            dbus.bus.disconnect()
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="exhaustion") as client:
            asker = await Asker.connected(client)
            await client.publish(f"{BASE}/ask", json.dumps({"text": "what time is it", "lang": "en"}), qos=1)
            mqtt_reply = await asyncio.wait_for(asker.replies.get(), 60)
            await asker.close()
        busy = await _describe(port)  # still full: a newcomer is told so at once, not left waiting
        assert daemon.alive, "the daemon died"

        for _, writer in crowd:
            writer.close()
        crowd.clear()
        await asyncio.sleep(1.0)
        after = await _describe(port)
    finally:
        for _, writer in crowd:
            writer.close()
        rc = await daemon.stop()

    log = daemon.log_path.read_text(errors="replace")
    alarms = [a.hhmm for a in AlarmBook(path=state / "hearthd" / "alarms.db").pending()]
    print(f"\n{CROWD} connections opened and held ({held} still open on the client's side); the daemon had "
          f"{open_files} files open of its {DAEMON_FILES}; log {len(log)} bytes")
    assert alarm == "Alarm set for 6:00.", alarm
    assert alarms == ["06:00"], alarms  # set, and kept
    assert mqtt_reply["text"].startswith(TIME_REPLY) and mqtt_reply.get("error") is None, mqtt_reply
    assert Error.is_type(busy.type) and Error.from_event(busy).code == "busy", busy
    assert Info.is_type(after.type), after  # the crowd gone, the door serves again
    assert open_files < DAEMON_FILES // 2, open_files  # the cap held: no descriptor per idle client
    assert "Traceback" not in log and "Errno 24" not in log, log[-3000:]
    assert len(log) < 20_000, f"{len(log)} bytes of log"  # a warning per interval, not a line per refused client
    assert rc == 0
