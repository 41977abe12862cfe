"""The MQTT link: learns devices from discovery, tracks their state, sends commands, and publishes hearthd itself.

One aiomqtt connection, reconnected with backoff; only cancellation ends it. Every message is handled inside a
guard: one that is too large, nested too deeply, not finite, too long or that makes a handler raise is dropped,
counted in `rejected` by kind and reason, and logged (rate-limited); the link reads on. Asks and announces run as
tasks beside the reader, at most `mqtt.max_turns` at once (an ask beyond that is answered "busy"). An ask's
`conversation_id` (else its `id`) names its conversation: only a later ask with the same one answers a question it
got; an ask with neither gets a fresh id. Every reply carries the ask's id and is also published on `reply/<id>`.
Commands are QoS 1. A command given while the broker is away
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
import secrets
import socket
import ssl
import time
import unicodedata
from collections import Counter, deque
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from ..config import MqttConfig
from ..language import agreeing_language, language_of_text
from ..locale import DEFAULT_LANGUAGE, phrase
from ..sentences import BETWEEN_SENTENCES, MARKS
from ..sentences import pieces as sentence_pieces
from ..tools.catalogue import Catalogue, CatalogueFull
from ..tools.discovery import DiscoveryError, JunkName, LongName, UnsafeJson, load_json, parse_discovery
from ..tools.smarthome import CommandNotSent
from .ha_device import HaDevice

log = logging.getLogger(__name__)

REJECT_LOG_EVERY_S = 30.0  # one warning per kind and reason this often; the ones between are counted in it
METRICS_LOG_EVERY_S = 300.0  # a summary of what was dropped, when anything was
CLIENT_TIMEOUT_S = 5.0  # aiomqtt's: the broker's acknowledgement of a publish or subscribe, at most
TURN_TIMEOUT_S = 300.0  # an ask or announce still running after this has hung: cancelled, its slot freed
# Piper's memory grows ~1.4 MB per character of one utterance and onnxruntime keeps the peak (1,000 characters
# without a sentence break: 1.4 GB; 6,000: 12 GB; 250 kB: an allocation failure). An announcement is spoken in
# pieces of at most this many characters, cut at sentence ends, else between words.
ANNOUNCE_PIECE_CHARS = 200
# An ask's id or conversation_id: it becomes a topic level (`reply/<id>`), so no `/`, `+`, `#` or spaces, and
# "attributes" is the reply sensor's own `reply/attributes`.
REQUEST_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@-]{0,63}")
RESERVED_IDS = frozenset({"attributes"})

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
class Request:
    """An ask or announce as checked: its text and language, and for an ask who asks (`id` matches the reply,
    `conversation` is whose question it may answer)."""

    text: str
    lang: str | None
    id: str = ""
    conversation: str = ""
    given: str = ""  # the id the client gave, if any: a resend with it does nothing twice


@dataclass
class Handlers:
    """What the daemon does when Home Assistant or an automation asks (all optional)."""

    # text, lang, conversation, the client's own request id (an idempotency key; None when it gave none) → reply
    ask: Callable[[str, str | None, str, str | None], Awaitable[str]] | None = None
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
                 handlers: Handlers | None = None, privacy: bool = False, area: str = "") -> None:
        self.cfg = cfg
        self.area = area  # general.area: the room Home Assistant suggests for hearthd's device
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
        # What arrived and what was dropped, by kind (discovery, state, ask, announce, own, status) and reason.
        self.received: Counter[str] = Counter()
        self.rejected: Counter[tuple[str, str]] = Counter()
        self.connection_errors = 0
        self.on_metrics: Callable[[dict[str, Any]], object] | None = None  # the daemon's `metrics` trace event
        self._turns: set[asyncio.Task[None]] = set()  # asks and announces in flight, held until done
        self._logged: dict[tuple[str, str], float] = {}
        self._unlogged: Counter[tuple[str, str]] = Counter()
        self._metrics_logged = (time.monotonic(), 0)
        catalogue.max_entities, catalogue.max_json_depth = cfg.max_entities, cfg.max_json_depth
        catalogue.forget({e.source for e in catalogue.entities.values() if self._is_own(e.source, e.config)})

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
        for turn in list(self._turns):  # the daemon has let the turn in progress finish; the rest do not start
            turn.cancel()
        if self._turns:
            await asyncio.wait(list(self._turns), timeout=2)
        self._log_metrics(force=True)
        for command in self._queue:  # a turn cancelled first no longer awaits its command: _fail reads the error
            _fail(command, CommandNotSent("hearthd stopped before the broker came back"))
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
            try:  # being sent right now: its outcome decides, within the client's own wait for the broker's ack
                await asyncio.wait_for(asyncio.shield(command.done), CLIENT_TIMEOUT_S + 5)
            except TimeoutError:
                raise CommandNotSent("the broker did not acknowledge it", uncertain=True) from None

    # -- the connection ---------------------------------------------------------------------------------

    def _client_args(self) -> dict[str, Any]:
        import aiomqtt

        args: dict[str, Any] = {"hostname": self.cfg.host, "port": self.cfg.port, "identifier": self.client_id,
                                "keepalive": self.cfg.keepalive_s, "timeout": CLIENT_TIMEOUT_S}
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
        """Connect, read, reconnect with backoff: whatever breaks (the broker, a handler, hearthd's own code) is
        logged and retried; only cancellation ends it."""
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
                    reader = asyncio.create_task(self._read_loop(client))
                    settle = asyncio.create_task(self._settle())
                    try:
                        # Either ending ends the connection: the reader when the broker goes, the sender when the
                        # broker stops acknowledging (a sender that ended alone left every later command unsent).
                        done, _ = await asyncio.wait({sender, reader}, return_when=asyncio.FIRST_COMPLETED)
                        for task in done:
                            task.result()
                        raise aiomqtt.MqttError("the connection ended")
                    finally:
                        for task in (sender, reader, settle):
                            task.cancel()
                        await asyncio.wait([sender, reader, settle], timeout=1)
            except aiomqtt.MqttError as e:
                log.warning("MQTT broker %s:%s: %s; retrying in %.1f s", self.cfg.host, self.cfg.port, e, backoff)
            except Exception as e:  # never the end of the link: logged, and the connection starts again
                self.connection_errors += 1
                log.warning("MQTT link %s:%s failed: %r; reconnecting in %.1f s", self.cfg.host, self.cfg.port, e,
                            backoff, exc_info=self.connection_errors <= 3)
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
        try:
            await self._subscribe_states()
        except Exception as e:  # ready() must not wait forever on it: the devices are known, commands can go
            log.warning("MQTT: subscribing to the devices' state topics failed: %r", e)
        self._settled.set()

    async def _on_connect(self, client: Any) -> None:
        prefix = self.cfg.discovery_prefix
        await client.subscribe(f"{prefix}/+/+/config", qos=1)
        await client.subscribe(f"{prefix}/+/+/+/config", qos=1)
        await self._subscribe_states(client)
        if not self.one_shot:
            await client.subscribe(f"{prefix}/status", qos=1)
            for name in ("ask", "announce", "metrics/get", *self.device.commands):
                await client.subscribe(f"{self.base}/{name}", qos=1)
        self._connected.set()
        if not self.one_shot and self.cfg.publish_self:
            await self.device.publish_self(client)

    async def _subscribe_states(self, client: Any = None) -> None:
        client = client or self._client
        if client is None:
            return
        topics = sorted(t for t in self.catalogue.state_topics() - self._subscribed if _subscribable(t))
        if topics:  # one SUBSCRIBE for all of them: a round trip per topic made start-up wait ~20 ms a device
            self._subscribed.update(topics)
            await client.subscribe([(topic, 1) for topic in topics])

    async def _read_loop(self, client: Any) -> None:
        async for message in client.messages:
            self._last_message = time.monotonic()
            await self._guarded(client, message.topic.value, message.payload)

    async def _send_loop(self, client: Any) -> None:
        """Hands the queued commands to the broker one by one. Every command taken ends with a result or an error;
        a command the client refuses fails alone, and only the connection's own failure ends the loop."""
        import aiomqtt

        while True:
            while self._queue:
                command = self._queue.popleft()
                try:
                    await client.publish(command.topic, command.payload, qos=1, retain=command.retain)
                except (aiomqtt.MqttError, asyncio.CancelledError) as e:
                    # It may have reached the broker (a publish also ends this way when the connection drops
                    # while it waits for the broker's ack): say so, and never send it again.
                    _fail(command, CommandNotSent(f"the connection broke while sending: {e!r}", uncertain=True))
                    raise
                except (ValueError, TypeError) as e:  # refused before sending (paho checks the topic and payload)
                    log.warning("MQTT: a command to %r could not be sent: %s", command.topic[:80], e)
                    _fail(command, CommandNotSent(f"the MQTT client refused it: {e}"))
                except Exception as e:  # the client's own bookkeeping failed after handing it over: it may be out
                    log.warning("MQTT: a command to %r failed while sending: %r", command.topic[:80], e)
                    _fail(command, CommandNotSent(f"sending failed: {e!r}", uncertain=True))
                else:
                    if not command.done.done():
                        command.done.set_result(None)
            self._wake.clear()
            await self._wake.wait()

    # -- what arrives ---------------------------------------------------------------------------------------

    def _kind(self, topic: str) -> str:
        prefix = self.cfg.discovery_prefix
        if topic.startswith(prefix + "/") and topic.endswith("/config"):
            return "discovery"
        if topic == f"{prefix}/status":
            return "status"
        if topic.startswith(self.base + "/"):
            name = topic[len(self.base) + 1:]
            return name if name in ("ask", "announce") else "metrics" if name == "metrics/get" else "own"
        return "state"

    async def _guarded(self, client: Any, topic: str, payload: Any) -> None:
        """One message, isolated: whatever it makes go wrong is counted, logged and dropped."""
        kind = self._kind(topic)
        self.received[kind] += 1
        try:
            if not isinstance(payload, (bytes, bytearray)):  # aiomqtt hands bytes; anything else as its text
                payload = b"" if payload is None else str(payload).encode("utf-8", "replace")
            if len(payload) > self.cfg.max_payload_bytes:
                self.reject(kind, "too-large", topic, f"{len(payload)} bytes (mqtt.max_payload_bytes = "
                                                      f"{self.cfg.max_payload_bytes})")
                return
            await self._on_message(client, topic, bytes(payload), kind)
        except asyncio.CancelledError:
            raise
        except Exception as e:  # a handler's bug, a payload nobody foresaw: this message only
            self.reject(kind, f"error:{type(e).__name__}", topic, repr(e)[:200], trace=True)
        self._log_metrics()

    def reject(self, kind: str, reason: str, topic: str, detail: str = "", trace: bool = False) -> None:
        """Count a dropped message; warn about the first of each kind and reason, then once every
        REJECT_LOG_EVERY_S with how many were dropped since (a flood of bad messages is no flood of log lines)."""
        key = (kind, reason)
        self.rejected[key] += 1
        now = time.monotonic()
        last = self._logged.get(key)
        if last is not None and now - last < REJECT_LOG_EVERY_S:
            self._unlogged[key] += 1
            return
        self._logged[key] = now
        since = self._unlogged.pop(key, 0)
        more = f" (and {since} more like it since the last report)" if since else ""
        level = logging.DEBUG if reason == "hearthd-itself" else logging.WARNING
        log.log(level, "MQTT: dropped a %s message on %s: %s%s%s", kind, _shown(topic), reason,
                f": {detail}" if detail else "", more, exc_info=trace)

    def metrics(self) -> dict[str, Any]:
        """What arrived and what was dropped (the `metrics` event's mqtt_* fields)."""
        rejected: dict[str, dict[str, int]] = {}
        for (kind, reason), n in sorted(self.rejected.items()):
            rejected.setdefault(kind, {})[reason] = n
        return {"mqtt_received": dict(self.received), "mqtt_rejected": rejected,
                "mqtt_rejected_total": sum(self.rejected.values()), "mqtt_connections": self.connections,
                "mqtt_connection_errors": self.connection_errors, "mqtt_turns_in_flight": len(self._turns)}

    def _log_metrics(self, force: bool = False) -> None:
        at, total = self._metrics_logged
        now, rejected = time.monotonic(), sum(self.rejected.values())
        if rejected == total and not force or not force and now - at < METRICS_LOG_EVERY_S:
            return
        self._metrics_logged = (now, rejected)
        data = self.metrics()
        log.info("MQTT metrics: %s", json.dumps(data, sort_keys=True))
        if self.on_metrics is not None:
            with contextlib.suppress(Exception):
                self.on_metrics(data)

    def _is_own(self, source: str, config: dict[str, Any]) -> bool:
        """hearthd's own device (its discovery is on the same broker): never a device to control by voice."""
        if source.startswith("device/hearthd_") and source[len("device/hearthd_"):] in (self.node,
                                                                                         self.device_key):
            return True
        own = self.base + "/"
        return any(isinstance(v, str) and v.startswith(own) for k, v in config.items() if k.endswith("topic"))

    @property
    def device_key(self) -> str:
        return str(getattr(self.device, "key", self.node))

    async def _on_message(self, client: Any, topic: str, payload: bytes, kind: str = "") -> None:
        kind = kind or self._kind(topic)
        if kind == "discovery":
            await self._on_discovery(client, topic, payload)
            return
        if kind in ("ask", "announce"):
            self._on_request(kind, payload, topic)
            return
        if kind == "metrics":  # an automation (or the hostile suite) reads the counts: <base>/metrics
            await self.send_now(f"{self.base}/metrics", json.dumps(self.metrics(), sort_keys=True))
            return
        text = payload.decode("utf-8", errors="replace")
        if kind == "status":
            if text.strip().lower() == "online" and self.cfg.publish_self:
                await self.device.publish_self(client)  # Home Assistant restarted: tell it about hearthd again
            return
        if kind == "own":
            await self.device.on_command(topic[len(self.base) + 1:], text)
            return
        self.catalogue.on_message(topic, text)

    async def _on_discovery(self, client: Any, topic: str, payload: bytes) -> None:
        if topic == self.device.discovery_topic and not self.one_shot:  # its own, replayed: a satellite gone?
            await self.device.on_own_discovery(client, payload)
        elif topic == self.device.legacy_topic and payload and not self.one_shot:  # an older hearthd's: cleared
            await client.publish(topic, b"", qos=1, retain=True)
        try:
            discovery = parse_discovery(topic, payload, self.cfg.discovery_prefix, self.cfg.max_json_depth)
        except DiscoveryError as e:
            self.reject("discovery", _discovery_reason(e), topic, str(e)[:200])
            return
        if discovery is None:
            return
        if any(self._is_own(discovery.source, e.config) for e in discovery.entities) \
                or self._is_own(discovery.source, {}):
            self.reject("discovery", "hearthd-itself", topic)
            return
        try:
            self.catalogue.apply(discovery)
        except CatalogueFull as e:
            self.reject("discovery", "catalogue-full", topic, str(e))
            return
        if self._settled.is_set():
            await self._subscribe_states(client)

    def _request(self, kind: str, payload: bytes) -> Request:
        """An ask or announce payload, checked; ValueError with a short reason when it is refused."""
        try:
            raw = payload.decode("utf-8")
        except UnicodeDecodeError:
            raise ValueError("not-utf8") from None
        try:
            request = load_json(raw, self.cfg.max_json_depth)
        except (ValueError, UnsafeJson) as e:
            reason = "too-deep" if "nested" in str(e) else "bad-text" if "surrogate" in str(e) else "bad-json"
            raise ValueError(reason) from None
        if isinstance(request, str):
            request = {"text": request}
        if not isinstance(request, dict) or not isinstance(request.get("text"), str):
            raise ValueError("no-text")
        text = request["text"].strip()
        if not text:
            raise ValueError("no-text")
        if len(text) > self.cfg.max_text_chars:
            raise ValueError("too-long")
        if not _speakable_text(text):
            raise ValueError("bad-text")
        # the language given, when the text is written in it ("en-US" too); else the text's own is read
        checked = Request(text, agreeing_language(text, request.get("lang"), self.languages))
        if kind == "ask":
            given = _request_id(request.get("id"))
            conversation = _request_id(request.get("conversation_id")) or given
            checked.id = given or conversation or secrets.token_hex(8)  # no id: a conversation of one turn
            checked.conversation = conversation or checked.id
            checked.given = given
        return checked

    def _said_in(self, request: Request) -> str:
        """The language to answer `request` in when hearthd itself answers (busy, an error): the one given, when its
        words agree, else theirs."""
        return request.lang or language_of_text(request.text, self.languages or [DEFAULT_LANGUAGE], DEFAULT_LANGUAGE)

    def _on_request(self, kind: str, payload: bytes, topic: str) -> None:
        """An ask or announce: checked here, then run as a task beside the reader (so messages keep being read);
        beyond `mqtt.max_turns` in flight an ask is answered "busy" at once and an announce dropped."""
        handler = self.handlers.ask if kind == "ask" else self.handlers.announce
        try:
            request = self._request(kind, payload)
        except ValueError as e:
            self.reject(kind, str(e), topic)
            return
        if handler is None:
            self.reject(kind, "not-offered", topic)
            return
        if len(self._turns) >= self.cfg.max_turns:
            self.reject(kind, "busy", topic, f"{len(self._turns)} turns in flight (mqtt.max_turns)")
            if kind == "ask":
                self._spawn(self._reply(_busy_phrase(self._said_in(request)), request, "mqtt-busy"))
            return
        self._spawn(self._turn(kind, handler, request, topic), counted=True)

    def _spawn(self, coro: Any, counted: bool = False) -> None:
        task: asyncio.Task[None] = asyncio.get_running_loop().create_task(coro)
        if counted:
            self._turns.add(task)  # held until done: a task nobody holds may be collected mid-flight
            task.add_done_callback(self._turns.discard)
        else:
            _background.add(task)
            task.add_done_callback(_background.discard)

    async def _turn(self, kind: str, handler: Any, request: Request, topic: str) -> None:
        lang = request.lang
        try:
            async with asyncio.timeout(TURN_TIMEOUT_S):
                if kind == "announce":  # spoken by the voice of the language it is written in
                    for piece in pieces(request.text, ANNOUNCE_PIECE_CHARS):
                        await handler(piece, self._said_in(request))
                    return
                # the client's id is the request's idempotency key: resent after a crash or a timeout, the same
                # request returns what it did the first time and does nothing again (a second alarm, a second unlock)
                result = await handler(request.text, lang, f"mqtt:{request.conversation}",
                                       f"mqtt:{request.given}" if request.given else None)
        except asyncio.CancelledError:
            raise
        except TimeoutError:
            self.reject(kind, "timeout", topic, f"still running after {TURN_TIMEOUT_S:g} s")
            if kind == "ask":
                await self._reply(_error_phrase(self._said_in(request)), request, "mqtt-timeout")
            return
        except Exception as e:  # the turn's own failure: this request only
            self.reject(kind, f"error:{type(e).__name__}", topic, repr(e)[:200], trace=True)
            if kind == "ask":
                await self._reply(_error_phrase(self._said_in(request)), request, "internal")
            return
        if kind == "ask":
            await self._reply(str(result), request)

    async def _reply(self, text: str, request: Request, error: str = "") -> None:
        """The answer to one ask, on `reply` (every asker sees it: they match the id) and on `reply/<id>`."""
        body: dict[str, Any] = {"text": text, "lang": request.lang or "", "id": request.id,
                                "conversation_id": request.conversation}
        if error:
            body["error"] = error
        payload = json.dumps(body, ensure_ascii=False)
        await self.send_now(f"{self.base}/reply", payload)
        await self.send_now(f"{self.base}/reply/{request.id}", payload)

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


_background: set[asyncio.Task[None]] = set()  # "busy" replies in flight


def _request_id(value: Any) -> str:
    """An ask's id or conversation_id as text ("" when absent); ValueError ("bad-id") when it cannot be one."""
    if value is None or value == "":
        return ""
    if isinstance(value, int) and not isinstance(value, bool) and abs(value) < 10**18:
        value = str(value)
    if not isinstance(value, str) or not REQUEST_ID.fullmatch(value) or value in RESERVED_IDS:
        raise ValueError("bad-id")
    return value


def _shown(topic: str) -> str:
    """A topic as it may appear in the log: bounded, and printable."""
    return ascii(topic[:120]) if not topic.isprintable() else topic[:120]


def _fail(command: Command, error: CommandNotSent) -> None:
    if not command.done.done():
        command.done.set_exception(error)
        command.done.exception()  # whoever sent it may have stopped waiting: not an unread error then


def _subscribable(topic: str) -> bool:
    """A state topic that can be subscribed to: no wildcard (hearthd matches topics exactly), no NUL, UTF-8."""
    if not topic or "+" in topic or "#" in topic or "\x00" in topic:
        return False
    try:
        return len(topic.encode("utf-8")) <= 65535
    except UnicodeEncodeError:  # a lone surrogate from a JSON escape
        return False




def pieces(text: str, limit: int) -> list[str]:
    """`text` in pieces of at most `limit` characters for one announcement each: whole sentences where they fit
    (short ones together: one utterance), else cut between words (hearthd.sentences.pieces)."""
    out: list[str] = []
    for sentence in BETWEEN_SENTENCES.split(text):
        parts = sentence_pieces(sentence, limit, at_clauses=False)
        if len(parts) == 1 and out and len(out[-1]) + 1 + len(parts[0]) <= limit and out[-1][-1:] in MARKS:
            out[-1] = f"{out[-1]} {parts[0]}"  # short sentences stay together: one utterance
        else:
            out += parts
    return out


def _speakable_text(text: str) -> bool:
    """Text TTS and the model can take: valid Unicode (no lone surrogates) and no control characters but
    whitespace (a NUL made Piper raise)."""
    for ch in text:
        if ch in "\n\t\r":
            continue
        if unicodedata.category(ch) in ("Cc", "Cs"):
            return False
    return True


def _discovery_reason(e: DiscoveryError) -> str:
    message = str(e)
    if isinstance(e, LongName):
        return "long-name"
    if isinstance(e, JunkName) or "no letter" in message:
        return "junk-name"
    if "nested" in message:
        return "too-deep"
    if "surrogate" in message:
        return "bad-text"
    if "finite" in message or "valid JSON" in message or "out of range" in message:
        return "not-finite"
    if "not UTF-8" in message:
        return "not-utf8"
    if "not JSON" in message:
        return "bad-json"
    return "invalid"


def _busy_phrase(lang: str | None) -> str:
    for key in ("error.busy", "error.internal"):  # error.busy: when the locales have it
        try:
            return phrase(lang or DEFAULT_LANGUAGE, key)
        except Exception:
            continue
    return "hearthd is busy"


def _error_phrase(lang: str | None) -> str:
    try:
        return phrase(lang or DEFAULT_LANGUAGE, "error.internal")
    except Exception:
        return "Sorry, something went wrong."
