"""The MQTT link: learns devices from discovery, tracks their state, sends commands, and publishes hearthd itself.

One aiomqtt connection, reconnected with backoff. Commands are QoS 1. A command given while the broker is away
waits in a bounded queue and goes out once it is back; if it has not gone out within `mqtt.command_timeout_s`
it is taken off the queue and reported as not sent — never dropped silently. A command whose publish broke
mid-flight may have arrived, so it is reported as uncertain and never sent a second time.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import os
import re
import socket
import ssl
import time
from collections import deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import MqttConfig
from ..tools.discovery import DiscoveryError, parse_discovery
from ..tools.smarthome import Catalogue, CommandNotSent
from .ha_device import HaDevice

log = logging.getLogger(__name__)

def node_id(cfg: MqttConfig) -> str:
    raw = cfg.node_id or socket.gethostname() or "hearthd"
    return re.sub(r"[^a-zA-Z0-9_-]", "_", raw).lower()[:40]


@dataclass
class Command:
    topic: str
    payload: str
    retain: bool
    done: asyncio.Future[None]
    queued_at: float = field(default_factory=time.monotonic)


@dataclass
class Handlers:
    """What the daemon does when Home Assistant or an automation asks (all optional)."""

    ask: Callable[[str, str | None], Awaitable[str]] | None = None  # text, lang → reply
    announce: Callable[[str, str | None], Awaitable[None]] | None = None
    mute: Callable[[bool], None] | None = None
    listen: Callable[[], None] | None = None
    language: Callable[[str], None] | None = None
    volume: Callable[[int], None] | None = None  # percent; the live loop's replies and rings
    wake_word: Callable[[str], None] | None = None
    wake_words: list[str] = field(default_factory=list)  # what wake_word may be set to


class MqttLink:
    """The connection; `publish` is the smart-home tools' Publisher."""

    def __init__(self, cfg: MqttConfig, catalogue: Catalogue, languages: list[str], one_shot: bool = False,
                 handlers: Handlers | None = None, privacy: bool = False) -> None:
        self.cfg = cfg
        self.catalogue = catalogue
        self.languages = languages
        self.one_shot = one_shot  # `hearthd ask`: learn and command, but do not publish hearthd itself
        self.handlers = handlers or Handlers()
        self.privacy = privacy
        self.node = node_id(cfg)
        self.base = f"{cfg.topic_base}/{self.node}"
        self.client_id = cfg.client_id or (f"hearthd-{self.node}-{os.getpid()}" if one_shot else f"hearthd-{self.node}")
        self.device = HaDevice(self)
        self._queue: deque[Command] = deque()
        self._wake = asyncio.Event()
        self._connected = asyncio.Event()
        self._settled = asyncio.Event()
        self._client: Any = None
        self._task: asyncio.Task[None] | None = None
        self._subscribed: set[str] = set()
        self._last_message = 0.0
        self.connections = 0  # how many times it (re)connected: tests and the trace read it
        self.loop: asyncio.AbstractEventLoop | None = None

    # -- lifecycle --------------------------------------------------------------------------------------

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.get_running_loop().create_task(self._run(), name="mqtt-link")

    async def stop(self) -> None:
        task, self._task = self._task, None
        if task is not None:
            if self._client is not None and not self.one_shot and self.cfg.publish_self:
                with contextlib.suppress(Exception):  # a clean goodbye; the will covers a crash
                    await asyncio.wait_for(self._client.publish(f"{self.base}/availability", "offline", qos=1,
                                                                retain=True), 2)
            # Python 3.11's wait_for (aiomqtt waits for each ack with it) can swallow a cancel: cancel until done.
            while not task.done():
                task.cancel()
                await asyncio.wait([task], timeout=0.5)
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task
        for command in self._queue:
            if not command.done.done():
                command.done.set_exception(CommandNotSent("hearthd stopped before the broker came back"))
        self._queue.clear()

    async def ready(self, timeout: float | None = None) -> MqttLink:
        """Connected, and the retained discovery replayed on connect has been read (first call waits)."""
        self.start()
        wait = self.cfg.command_timeout_s if timeout is None else timeout
        try:
            await asyncio.wait_for(self._settled.wait(), wait)
        except TimeoutError:
            raise CommandNotSent(f"no MQTT broker at {self.cfg.host}:{self.cfg.port}") from None
        return self

    @property
    def connected(self) -> bool:
        return self._connected.is_set()

    # -- the Publisher --------------------------------------------------------------------------------------

    async def publish(self, topic: str, payload: str, retain: bool = False) -> None:
        """Send once with QoS 1, waiting up to mqtt.command_timeout_s for the broker."""
        self.start()
        if len(self._queue) >= self.cfg.queue_max:
            raise CommandNotSent(f"{len(self._queue)} commands are already waiting for the broker")
        command = Command(topic, payload, retain, asyncio.get_running_loop().create_future())
        self._queue.append(command)
        self._wake.set()
        try:
            await asyncio.wait_for(asyncio.shield(command.done), self.cfg.command_timeout_s)
        except TimeoutError:
            if command in self._queue:  # never handed to the broker: take it back, so it is never sent late
                self._queue.remove(command)
                raise CommandNotSent(f"the broker did not come back within {self.cfg.command_timeout_s:g} s") \
                    from None
            await command.done  # being sent right now: its outcome decides

    # -- the connection ---------------------------------------------------------------------------------

    def _client_args(self) -> dict[str, Any]:
        import aiomqtt

        args: dict[str, Any] = {"hostname": self.cfg.host, "port": self.cfg.port, "identifier": self.client_id,
                                "keepalive": self.cfg.keepalive_s, "timeout": 5}
        if self.cfg.username:
            args["username"], args["password"] = self.cfg.username, self.cfg.password or None
        if self.cfg.tls:
            context = ssl.create_default_context(cafile=self.cfg.ca_file or None)
            if self.cfg.cert_file:
                context.load_cert_chain(self.cfg.cert_file, self.cfg.key_file or None)
            args["tls_context"] = context
        if not self.one_shot and self.cfg.publish_self:
            args["will"] = aiomqtt.Will(f"{self.base}/availability", "offline", qos=1, retain=True)
        return args

    async def _run(self) -> None:
        import aiomqtt

        backoff = 0.5
        while True:
            try:
                async with aiomqtt.Client(**self._client_args()) as client:
                    self._client = client
                    self.connections += 1
                    backoff = 0.5
                    await self._on_connect(client)
                    sender = asyncio.create_task(self._send_loop(client))
                    settle = asyncio.create_task(self._settle())
                    try:
                        async for message in client.messages:
                            self._last_message = time.monotonic()
                            await self._on_message(client, message.topic.value, bytes(message.payload or b""))
                    finally:
                        sender.cancel()
                        settle.cancel()
            except aiomqtt.MqttError as e:
                log.warning("MQTT broker %s:%s: %s; retrying in %.1f s", self.cfg.host, self.cfg.port, e, backoff)
            finally:
                self._client = None
                self._connected.clear()
                self._subscribed.clear()
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 30.0)

    async def _settle(self) -> None:
        """Retained messages arrive right after subscribing; the catalogue is complete once they stop."""
        self._last_message = time.monotonic()
        started = time.monotonic()
        while time.monotonic() - self._last_message < self.cfg.settle_s and time.monotonic() - started < 5:
            await asyncio.sleep(0.05)
        await self._subscribe_states()
        self._settled.set()

    async def _on_connect(self, client: Any) -> None:
        prefix = self.cfg.discovery_prefix
        await client.subscribe(f"{prefix}/+/+/config", qos=1)
        await client.subscribe(f"{prefix}/+/+/+/config", qos=1)
        await self._subscribe_states(client)
        if not self.one_shot:
            await client.subscribe(f"{prefix}/status", qos=1)
            for name in ("ask", "announce", *self.device.commands):
                await client.subscribe(f"{self.base}/{name}", qos=1)
        self._connected.set()
        if not self.one_shot and self.cfg.publish_self:
            await self.device.publish_self(client)

    async def _subscribe_states(self, client: Any = None) -> None:
        client = client or self._client
        if client is None:
            return
        topics = sorted(self.catalogue.state_topics() - self._subscribed)
        if topics:  # one SUBSCRIBE for all of them: a round trip per topic made start-up wait ~20 ms a device
            self._subscribed.update(topics)
            await client.subscribe([(topic, 1) for topic in topics])

    async def _send_loop(self, client: Any) -> None:
        import aiomqtt

        while True:
            while self._queue:
                command = self._queue.popleft()
                try:
                    await client.publish(command.topic, command.payload, qos=1, retain=command.retain)
                except (aiomqtt.MqttError, asyncio.CancelledError) as e:
                    # It may have reached the broker (a publish also ends this way when the connection drops
                    # while it waits for the broker's ack): say so, and never send it again.
                    if not command.done.done():
                        command.done.set_exception(CommandNotSent(f"the connection broke while sending: {e!r}",
                                                                  uncertain=True))
                    raise
                if not command.done.done():
                    command.done.set_result(None)
            self._wake.clear()
            await self._wake.wait()

    # -- what arrives ---------------------------------------------------------------------------------------

    async def _on_message(self, client: Any, topic: str, payload: bytes) -> None:
        prefix = self.cfg.discovery_prefix
        if topic.startswith(prefix + "/") and topic.endswith("/config"):
            try:
                discovery = parse_discovery(topic, payload, prefix)
            except DiscoveryError as e:
                log.warning("ignoring discovery on %s: %s", topic, e)
                return
            if discovery is not None:
                self.catalogue.apply(discovery)
                if self._settled.is_set():
                    await self._subscribe_states(client)
            return
        text = payload.decode("utf-8", errors="replace")
        if topic == f"{prefix}/status":
            if text.strip().lower() == "online" and self.cfg.publish_self:
                await self.device.publish_self(client)  # Home Assistant restarted: tell it about hearthd again
            return
        if topic.startswith(self.base + "/"):
            await self._on_own(topic[len(self.base) + 1:], text)
            return
        self.catalogue.on_message(topic, text)

    async def _on_own(self, name: str, text: str) -> None:
        h = self.handlers
        if name in ("ask", "announce"):
            try:
                request = json.loads(text)
                if isinstance(request, str):
                    request = {"text": request}
                if not isinstance(request, dict) or not isinstance(request.get("text"), str) \
                        or not request["text"].strip():
                    raise ValueError("expected {\"text\": \"...\", \"lang\": \"ru\"}")
                lang = request.get("lang") if request.get("lang") in self.languages else None
            except ValueError as e:
                log.warning("ignoring %s/%s: %s", self.base, name, e)
                return
            if name == "ask" and h.ask is not None:
                reply = await h.ask(request["text"], lang)
                await self.send_now(f"{self.base}/reply", json.dumps({"text": reply, "lang": lang or ""},
                                                                      ensure_ascii=False))
            elif name == "announce" and h.announce is not None:
                await h.announce(request["text"], lang)
        else:
            await self.device.on_command(name, text)

    async def send_now(self, topic: str, payload: str, retain: bool = False) -> None:
        """Best effort, not queued: hearthd's own state is republished whole on reconnect anyway."""
        client = self._client
        if client is None:
            return
        with contextlib.suppress(Exception):
            await client.publish(topic, payload, qos=1, retain=retain)

    # -- hearthd as a device (ha_device.py) ---------------------------------------------------------------

    @property
    def status(self) -> dict[str, Any]:
        return self.device.status

    async def update(self, **changes: Any) -> None:
        await self.device.update(**changes)

    def discovery(self) -> tuple[str, dict[str, Any]]:
        return self.device.discovery()
