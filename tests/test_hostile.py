"""A hostile run against the running daemon (issue 14.8): `hearthd run --headless` as its own process on a real
mosquitto with a simulated home, then 10,000+ generated MQTT messages (fixed seed) on discovery, state, ask,
announce and hearthd's own topics: malformed JSON, deep nesting, inf/nan/1e999, huge, binary, NUL, lone
surrogates, wrong types, junk names, some of them retained. Afterwards the daemon is alive, answers an MQTT ask at
its usual latency, its RSS is within 20% of what it was once its models were loaded, the catalogue holds no junk,
and a restart with the bad retained messages still on the broker comes up and answers; so does a one-shot
`hearthd ask`. The counts are printed (`pytest -s`) and written to hostile.json in the test's tmp dir.

Model turns are kept few: one to load the model before the baseline, every other ask the fuzz sends that is
well-formed is a fast-path sentence."""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import random
import signal
import statistics
import sys
import time
from collections import Counter, deque
from pathlib import Path
from typing import Any

import aiomqtt
import pytest

from hearthd.locale import phrase

from .mqtt_sim import DEVICES, simulator
from .services import Broker

ROOT = Path(__file__).resolve().parent.parent
SEED = 14
MESSAGES = 10_400
NODE = "hostile"
BASE = f"hearthd/{NODE}"
MAX_ENTITIES = 60  # small, so that the fuzz reaches the bound (the simulated home has 19)
MAX_PAYLOAD = 262_144  # the default mqtt.max_payload_bytes
OFF = phrase("en", "home.off", name="Kitchen Light")
FAST_ASKS = ["turn off the kitchen light", "turn on the kitchen light", "what time is it", "выключи свет на кухне",
             "रसोई की लाइट बंद करो", "set a timer for 10 minutes", "close the bedroom blinds"]
# As long as an announcement may be, with no sentence break: 1.4 GB in Piper spoken whole (the RSS the fuzz grew)
RUN_ON = ("the kitchen the hallway and the garage lights are still on and the back door is open " * 12)[:999].strip()
# No template matches and nothing declines it before the model: the model answers, so it is loaded before the baseline
# (a weather request is now declined as out of scope without the model, and the model then loaded during the fuzz,
# at the first ask that reached it, counted as 1.8 GB of growth)
MODEL_ASK = "say something nice to me"
MODEL_ASKS = {"en": MODEL_ASK, "ru": "скажи мне что-нибудь приятное", "hi": "मुझसे कुछ अच्छा कहो"}
STATE_TOPICS = [DEVICES["kitchen_light"].topics["state"], DEVICES["bedroom_blinds"].topics["position"],
                DEVICES["bedroom_blinds"].topics["state"], DEVICES["bedroom_fan"].topics["percentage_state"],
                DEVICES["bedroom_fan"].topics["state"], DEVICES["living_room_lamp"].topics["state"],
                "esphome/living_room/climate/thermostat/current_temperature/state", "esphome/bedroom_multisensor/state",
                "random/state/topic", "zigbee2mqtt/other"]
COMPONENTS = ["light", "switch", "fan", "cover", "climate", "lock", "sensor", "binary_sensor", "device", "vacuum"]


# -- the generator ----------------------------------------------------------------------------------------------


def _junk(rng: random.Random) -> bytes:
    """A payload that is wrong in one of the ways the hostile run found (or nearby)."""
    choice = rng.randrange(16)
    if choice == 0:
        return rng.choice([b"inf", b"nan", b"1e999", b"-1e999", b"Infinity", b"NaN", b"-Infinity", b"1e-999"])
    if choice == 1:
        n = rng.choice([33, 100, 1000, 10_000, 100_000])
        return rng.choice([b"[" * n, b'{"a":' * n, b"[" * n + b"]" * n, b'{"text":' + b"[" * n + b"]" * n + b"}"])
    if choice == 2:
        return bytes(rng.randrange(256) for _ in range(rng.randrange(1, 64)))
    if choice == 3:
        return rng.choice([b"\x00", b"a\x00b", b"\xff\xfe\xfd", b"\xed\xa0\x80", b"\xc0\xaf", b""])
    if choice == 4:
        return rng.choice([b"x" * (MAX_PAYLOAD + 1), b"[" * 60_000, b"9" * 5000, b'"' + b"y" * 100_000 + b'"'])
    if choice == 5:
        return json.dumps(rng.choice([None, True, 0, -1, 1.5, [], {}, [1, 2], "", {"text": None}])).encode()
    if choice == 6:
        return b'{"state":"ON","brightness":1e999}'
    if choice == 7:
        return json.dumps({"state": rng.choice(["ON", "OFF", "\x00", "x" * 400]), "brightness":
                           rng.choice([0, 255, -5, 10**20, 1.5, "high", None, [1]])}).encode()
    if choice == 8:
        return b'{"state": "ON", "brightness": ' + rng.choice([b"NaN", b"Infinity", b"1e400", b"9" * 400]) + b"}"
    if choice == 9:
        return rng.choice([b"{not json", b'{"a": 1,}', b"[1, 2", b"'single'", b'{"a": "\\ud800"}', b"\xef\xbb\xbf{}"])
    if choice == 10:
        return '{"text": " ", "x": "\u202e\u200b\ufeff"}'.encode()
    if choice == 11:
        return json.dumps({"text": "x" * rng.choice([1001, 2600, 10_000, 250_000])}).encode()
    if choice == 12:
        return json.dumps({"text": rng.choice(["a\x00b", "\x07bell", "tab\x1bescape"])}).encode()
    if choice == 13:
        return b'{"text": "lone \\udc00 surrogate"}'
    if choice == 14:
        return json.dumps({"text": rng.choice([5, [], {}, None, True]),
                           "lang": rng.choice(["en", 5, [], "xx"])}).encode()
    return f"{rng.random()}e{rng.randrange(-500, 500)}".encode()


def _name(rng: random.Random) -> Any:
    return rng.choice(["+", "-1", "1", "💡", "", " ", None, 5, ["x"], {"en": "x"}, "12.5", "+/-", "x" * 300,
                       f"Hostile Lamp {rng.randrange(1000)}", "Лампа", "\x00", "\ud800"])


def _discovery(rng: random.Random) -> tuple[str, bytes]:
    component = rng.choice(COMPONENTS)
    oid = rng.choice([f"fz{rng.randrange(400)}", "-1", "_", "a b", "x" * 80, "fz_1/2"])
    topic = f"homeassistant/{component}/{oid}/config"
    if rng.random() < 0.05:
        topic = rng.choice([f"homeassistant/device/hearthd_{NODE}/config", "homeassistant/light/a.b/config",
                            "homeassistant//config", "homeassistant/light/fz/x/y/config"])
    kind = rng.randrange(6)
    if kind == 0:
        return topic, _junk(rng)
    config: dict[str, Any] = {"name": _name(rng), "uniq_id": rng.choice([f"fz{rng.randrange(400)}", 5, None, [1]]),
                              "cmd_t": rng.choice([f"fz/{oid}/set", "#", "+/x", 5, None, "", f"{BASE}/mute/set"]),
                              "stat_t": rng.choice([f"fz/{oid}", rng.choice(STATE_TOPICS), 1e300, "~/s"])}
    if kind == 1:
        config.update({"bri_scl": rng.choice([0, -1, 1e308, "x", None]), "pos_open": rng.choice([100, "x", 1e308]),
                       "~": rng.choice(["base/", 5, [], None]), "val_tpl": rng.choice([
                           "{{ value_json.state }}", "{% for i in range(100000) %}x{% endfor %}",
                           "{{ 'x' * 10**9 }}", "{{ value.__class__ }}", "{{", "{{ value_json" + ".a" * 500 + " }}"])})
    if kind == 2:
        config["dev"] = {"ids": [f"fz{rng.randrange(50)}"], "name": _name(rng), "sa": rng.choice(["Kitchen", 5, ""])}
    if kind == 3:
        topic = f"homeassistant/device/fzdev{rng.randrange(60)}/config"
        config = {"dev": {"ids": "d", "name": _name(rng)}, "o": {"name": "fuzz"},
                  "cmps": {f"c{i}": {"p": rng.choice(COMPONENTS[:8]), "name": _name(rng),
                                     "cmd_t": f"fz/dev/{i}/set", "stat_t": f"fz/dev/{i}"}
                           for i in range(rng.choice([1, 3, 10, 40]))}}
    if kind == 4:
        config["avty"] = rng.choice([None, "x", [1], [{"t": 5}], [{"t": "fz/avail"}]])
    try:
        return topic, json.dumps(config).encode("utf-8", "surrogatepass")
    except (TypeError, ValueError):
        return topic, b"{}"


def generate(rng: random.Random, n: int) -> list[tuple[str, str, bytes, bool]]:
    """(kind, topic, payload, retain): a fixed mix across the kinds, a few percent retained."""
    out: list[tuple[str, str, bytes, bool]] = []
    good_asks = good_announces = 0
    for _ in range(n):
        r = rng.random()
        if r < 0.30:
            topic, payload = _discovery(rng)
            out.append(("discovery", topic, payload, rng.random() < 0.1))
        elif r < 0.62:
            topic = rng.choice(STATE_TOPICS)
            payload = _junk(rng) if rng.random() < 0.8 else rng.choice([b"ON", b"OFF", b"50", b"open", b"21.5"])
            out.append(("state", topic, payload, rng.random() < 0.05 and len(payload) < 4096))
        elif r < 0.80:
            payload = _junk(rng)
            if rng.random() < 0.01 and good_asks < 60:  # well-formed: a fast-path sentence, never a model turn
                good_asks += 1
                payload = json.dumps({"text": rng.choice(FAST_ASKS), "lang": rng.choice(["en", "ru", "hi", "xx"])})\
                    .encode()
            out.append(("ask", f"{BASE}/ask", payload, False))
        elif r < 0.93:
            payload = _junk(rng)
            if rng.random() < 0.003 and good_announces < 4:  # a few real announcements: TTS runs, briefly
                good_announces += 1
                payload = json.dumps({"text": "dinner is ready" if good_announces % 2 else RUN_ON}).encode()
            out.append(("announce", f"{BASE}/announce", payload, False))
        else:
            name = rng.choice(["mute/set", "listen", "language/set", "volume/set", "wake_word/set", "nonsense",
                               "reply", "state"])
            out.append(("own", f"{BASE}/{name}", _junk(rng) if rng.random() < 0.7 else b"ON", False))
    return out


# -- the daemon ---------------------------------------------------------------------------------------------------


class Daemon:
    """`hearthd run --headless --json` in its own process; its trace read as it comes, its log kept in a file."""

    def __init__(self, env: dict[str, str], rings: Path, log: Path) -> None:
        self.env, self.rings, self.log_path = env, rings, log
        self.proc: asyncio.subprocess.Process | None = None
        self.events: list[dict[str, Any]] = []
        # every event's last few hundred, for a failure's report: what the daemon was doing when asks went unanswered
        self.recent: deque[str] = deque(maxlen=300)
        self._ready = asyncio.Event()
        self._reader: asyncio.Task[None] | None = None

    async def start(self, timeout: float = 60) -> None:
        self._ready.clear()
        log = self.log_path.open("ab")
        self.proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hearthd", "run", "--headless", "--json", "--ring-output", str(self.rings),
            env=self.env, cwd=ROOT, stdout=asyncio.subprocess.PIPE, stderr=log, limit=2**24)
        log.close()
        self._reader = asyncio.create_task(self._read())
        await asyncio.wait_for(self._ready.wait(), timeout)

    async def _read(self) -> None:
        assert self.proc is not None and self.proc.stdout is not None
        async for line in self.proc.stdout:
            if line.startswith(b"{"):
                with contextlib.suppress(ValueError):
                    event = json.loads(line)
                    self.recent.append(f"{time.monotonic():.1f} {json.dumps(event, ensure_ascii=False)[:240]}")
                    if event.get("type") in ("ready", "error", "metrics", "model"):
                        self.events.append(event)
                    if event.get("type") == "ready":
                        self._ready.set()

    @property
    def alive(self) -> bool:
        return self.proc is not None and self.proc.returncode is None

    def memory_kb(self) -> dict[str, int]:
        """VmRSS and its private part, RssAnon: what a leak grows. The rest is file pages (the model's weights,
        mapped once per context, the main one and the relevance check's: VmRSS counts a page each time it is
        mapped) that come and go with the page cache and with which context ran last."""
        assert self.proc is not None
        fields = dict(line.split(":", 1) for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines())
        return {key: int(fields[key].split()[0]) for key in ("VmRSS", "RssAnon")}

    def kept_mb(self) -> float:
        """What the model keeps for later turns, as its last turn reported: the catalogue prefixes' and relevance
        checks' states (bounded; which ones depends on which languages and tools the turns used)."""
        return max([0.0] + [e.get("kept_mb") or 0.0 for e in self.events if e["type"] == "model"][-1:])

    async def stop(self) -> int:
        assert self.proc is not None
        if self.proc.returncode is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                await asyncio.wait_for(self.proc.wait(), 30)
            except TimeoutError:
                self.proc.kill()
                await self.proc.wait()
        if self._reader is not None:
            await asyncio.wait([self._reader], timeout=5)
        return self.proc.returncode if self.proc.returncode is not None else -1

    def metrics(self) -> dict[str, Any]:
        """The link's last `MQTT metrics:` log line (written at every stop)."""
        found: dict[str, Any] = {}
        for line in self.log_path.read_text(errors="replace").splitlines():
            if "MQTT metrics: " in line:
                found = json.loads(line.split("MQTT metrics: ", 1)[1])
        return found


class Asker:
    """Asks over MQTT as an automation would, and times the answer."""

    def __init__(self, client: aiomqtt.Client) -> None:
        self.client = client
        self.replies: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.metrics: asyncio.Queue[dict[str, Any]] = asyncio.Queue()
        self.online = asyncio.Event()
        self._task = asyncio.create_task(self._read())

    @classmethod
    async def connected(cls, client: aiomqtt.Client, timeout: float = 30) -> Asker:
        """Once hearthd says it is online (it has subscribed to its topics by then)."""
        asker = cls(client)
        await client.subscribe([(f"{BASE}/reply", 1), (f"{BASE}/availability", 1), (f"{BASE}/metrics", 1)])
        await asyncio.wait_for(asker.online.wait(), timeout)
        return asker

    async def _read(self) -> None:
        async for m in self.client.messages:
            if m.topic.value == f"{BASE}/metrics":
                await self.metrics.put(json.loads(bytes(m.payload)))  # type: ignore[arg-type]
            elif m.topic.value == f"{BASE}/availability":
                if bytes(m.payload) == b"online":  # type: ignore[arg-type]
                    self.online.set()
                else:
                    self.online.clear()
            elif m.topic.value == f"{BASE}/reply":  # the fuzz writes junk here too: only hearthd's replies count
                try:
                    reply = json.loads(bytes(m.payload))  # type: ignore[arg-type]
                except (ValueError, RecursionError):
                    continue
                if isinstance(reply, dict) and isinstance(reply.get("text"), str):
                    await self.replies.put(reply)

    async def quiet(self, seconds: float = 1.5, limit: float = 120) -> None:
        """Until no reply has come for `seconds` (the fuzz's own asks are answered)."""
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                await asyncio.wait_for(self.replies.get(), seconds)
            except TimeoutError:
                return

    async def ask(self, text: str, expected: str | None, timeout: float = 60, lang: str = "en") -> float | None:
        """Seconds until the reply (the expected text, when given), None when none came within `timeout`; a
        "busy" reply is retried."""
        while not self.replies.empty():
            self.replies.get_nowait()
        started = time.monotonic()
        payload = json.dumps({"text": text, "lang": lang})
        await self.client.publish(f"{BASE}/ask", payload, qos=1)
        deadline = started + timeout
        while (left := deadline - time.monotonic()) > 0:
            try:
                reply = await asyncio.wait_for(self.replies.get(), left)
            except TimeoutError:
                break
            if reply.get("error") == "mqtt-busy":
                await asyncio.sleep(0.5)
                await self.client.publish(f"{BASE}/ask", payload, qos=1)
                continue
            if expected is None or reply.get("text") == expected:
                return time.monotonic() - started
        return None

    async def counts(self, timeout: float = 10) -> dict[str, Any]:
        """The link's counts, asked for over MQTT (the daemon's own stderr may be lost: llama.cpp's overlapping
        stdout/stderr suppression in two threads leaves fds 1 and 2 on /dev/null)."""
        await self.client.publish(f"{BASE}/metrics/get", b"", qos=1)
        return await asyncio.wait_for(self.metrics.get(), timeout)

    async def close(self) -> None:
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError, aiomqtt.MqttError):
            await self._task


def _catalogue(state: Path) -> list[dict[str, Any]]:
    path = state / "hearthd" / "devices.json"
    return json.loads(path.read_text(encoding="utf-8"))["entities"] if path.is_file() else []


async def _publish_all(client: aiomqtt.Client, messages: list[tuple[str, str, bytes, bool]]) -> None:
    """QoS 1, 200 in flight at a time: every message reaches the broker, quickly."""
    for i in range(0, len(messages), 200):
        await asyncio.gather(*(client.publish(topic, payload, qos=1, retain=retain)
                               for _, topic, payload, retain in messages[i:i + 200]))


# -- the run ------------------------------------------------------------------------------------------------------


@pytest.fixture
def broker(tmp_path: Path) -> Any:
    broker = Broker(tmp_path)
    if broker.binary is None:
        pytest.skip("mosquitto is not installed")
    broker.conf.write_text(f"listener {broker.port} 127.0.0.1\nallow_anonymous true\npersistence false\n"
                           "max_queued_messages 100000\nmessage_size_limit 0\n")
    broker.start()
    yield broker
    broker.stop()


async def test_the_running_daemon_survives_ten_thousand_hostile_messages(broker: Broker, tmp_path: Path) -> None:
    import logging

    logging.getLogger("mqtt").setLevel(logging.ERROR)  # aiomqtt's "There are 25 pending publish calls."
    started = time.monotonic()
    state, home_dir = tmp_path / "state", tmp_path / "home"
    home_dir.mkdir()
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")  # the models, as set up
    env = {**os.environ, "HOME": str(home_dir), "XDG_CONFIG_HOME": str(tmp_path / "config"),
           "XDG_STATE_HOME": str(state), "XDG_CACHE_HOME": cache, "HEARTHD__MQTT__PORT": str(broker.port),
           "HEARTHD__MQTT__NODE_ID": NODE, "HEARTHD__MQTT__SETTLE_S": "0.2", "HEARTHD__DBUS__ENABLED": "false",
           "HEARTHD__MQTT__MAX_ENTITIES": str(MAX_ENTITIES), "HEARTHD__AGENT__MAX_TURN_S": "20"}
    messages = generate(random.Random(SEED), MESSAGES)
    inputs = Counter(kind for kind, *_ in messages)
    report: dict[str, Any] = {"seed": SEED, "inputs": sum(inputs.values()), "inputs_by_kind": dict(inputs),
                              "retained": sum(1 for *_, retain in messages if retain)}
    daemon = Daemon(env, tmp_path / "rings", tmp_path / "daemon.log")
    async with simulator(broker.port) as home:
        await daemon.start()
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="hostile-automation",
                                  max_inflight_messages=200) as client:
            asker = await Asker.connected(client)
            # Models loaded (the agent by one model turn, the voice by one announcement), then the baseline.
            first = await asker.ask("turn off the kitchen light", OFF)
            assert first is not None, "no first answer"
            # A model turn in each language: each has its own catalogue prefix, kept in memory once evaluated (up to
            # model.Prompts.SNAPSHOTS, ~45 MB each): bounded, allocated once, not what the hostile messages leave.
            for lang, text in MODEL_ASKS.items():
                ran = sum(1 for e in daemon.events if e["type"] == "model")
                assert await asker.ask(text, None, timeout=120, lang=lang) is not None, f"no {lang} model turn"
                await asyncio.sleep(0.5)  # the trace's line may come just after the reply
                assert sum(1 for e in daemon.events if e["type"] == "model") > ran, f"the {lang} turn ran no model"
            # The voice is warm once it has spoken a piece as long as any it is handed (tts.PIECE_CHARS). Piper's
            # onnxruntime arena kept the peak of the largest piece (+21-22 % here from one fuzzed announcement, run 9
            # of issue 32); it now gives it back after each run (tts._ShrinkingSession), and the warm-up stays so that
            # growth is what the hostile messages leave, not what a first long reply allocates once.
            await client.publish(f"{BASE}/announce", json.dumps({"text": RUN_ON}), qos=1)
            deadline = time.monotonic() + 60
            while not list((tmp_path / "rings").glob("say-*.wav")) and time.monotonic() < deadline:
                await asyncio.sleep(0.2)
            await asyncio.sleep(1)
            latencies_before = [await asker.ask("turn off the kitchen light", OFF) for _ in range(3)]
            memory_before, kept_before = daemon.memory_kb(), daemon.kept_mb()

            report["warm_s"] = round(time.monotonic() - started, 1)
            print(f"\nwarm after {report['warm_s']} s, RSS {memory_before['VmRSS'] // 1024} MB (private "
                  f"{memory_before['RssAnon'] // 1024} MB); publishing {len(messages)}")
            fuzz_started = time.monotonic()
            await _publish_all(client, messages)
            report["publish_s"] = round(time.monotonic() - fuzz_started, 1)
            await asker.quiet()
            # the first ask after the fuzz is answered once hearthd has read everything before it (its backlog)
            drained = await asker.ask("turn off the kitchen light", OFF, timeout=120)
            report["drained_s"] = round(time.monotonic() - fuzz_started, 1)
            print(f"published in {report['publish_s']} s, all read and answered after {report['drained_s']} s")

            assert daemon.alive, "the daemon died"
            latencies_after = [await asker.ask("turn off the kitchen light", OFF, timeout=30) for _ in range(3)]
            hangs = sum(1 for t in [drained, *latencies_after] if t is None)
            memory_after, kept_after = daemon.memory_kb(), daemon.kept_mb()
            alive = daemon.alive
            metrics = await asker.counts()
            await asker.close()
            recent = list(daemon.recent)[-120:] if hangs else []  # what it was doing while the asks waited
        entities = _catalogue(state)
        rc = await daemon.stop()

        # The bad messages that were retained stay on the broker: the next start must come up and answer.
        daemon.log_path = tmp_path / "daemon-restart.log"
        await daemon.start()
        async with aiomqtt.Client("127.0.0.1", broker.port, identifier="hostile-automation-2") as client:
            asker = await Asker.connected(client)
            restart_latency = await asker.ask("turn off the kitchen light", OFF)
            restart_metrics = await asker.counts()
            await asker.close()
        restart_alive = daemon.alive
        restart_rc = await daemon.stop()

        # and so must a one-shot `hearthd ask`, which reads the same retained states
        one_shot = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "hearthd", "ask", "turn off the kitchen light", "--json", env=env, cwd=ROOT,
            stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE)
        out, err = await asyncio.wait_for(one_shot.communicate(), 120)
        one_shot_replies = [e["text"] for e in map(json.loads, filter(lambda b: b.startswith(b"{"),
                                                                       out.splitlines())) if e["type"] == "reply"]
        assert home.commands, "the simulated home received no command at all"

    junk = [e["name"] for e in entities if not any(ch.isalpha() for ch in e["name"])]
    own = [e["key"] for e in entities if e["source"].startswith("device/hearthd_")]
    ms = [round(t * 1000) if t is not None else None for t in latencies_before + latencies_after]
    report.update({
        "rejected_total": metrics.get("mqtt_rejected_total"), "rejected_by_kind": {
            kind: sum(reasons.values()) for kind, reasons in metrics.get("mqtt_rejected", {}).items()},
        "rejected": metrics.get("mqtt_rejected"), "received": metrics.get("mqtt_received"),
        "connections": metrics.get("mqtt_connections"), "connection_errors": metrics.get("mqtt_connection_errors"),
        "crashes": int(not alive) + int(rc != 0) + int(not restart_alive) + int(restart_rc != 0),
        "hangs": hangs, "ask_ms_before": ms[:3], "ask_ms_after": ms[3:],
        "ask_p50_ms_before": statistics.median(ms[:3]) if None not in ms[:3] else None,
        "ask_p50_ms_after": statistics.median([m for m in ms[3:] if m is not None] or [0]),
        "rss_mb_before": round(memory_before["VmRSS"] / 1024), "rss_mb_after": round(memory_after["VmRSS"] / 1024),
        "private_mb_before": round(memory_before["RssAnon"] / 1024),
        "private_mb_after": round(memory_after["RssAnon"] / 1024),
        "private_growth": round(memory_after["RssAnon"] / memory_before["RssAnon"] - 1, 3),
        "kept_mb_before": kept_before, "kept_mb_after": kept_after,
        "entities": len(entities), "junk_entities": len(junk),
        "own_entities": len(own), "restart_answer_ms": round(restart_latency * 1000) if restart_latency else None,
        "restart_rejected": restart_metrics.get("mqtt_rejected_total"), "one_shot_ask": one_shot_replies,
        "runtime_s": round(time.monotonic() - started, 1)})
    out_file = tmp_path / "hostile.json"
    out_file.write_text(json.dumps(report, indent=2, ensure_ascii=False))
    print("\nhostile MQTT run:", json.dumps({k: v for k, v in report.items() if k not in ("rejected",)},
                                            ensure_ascii=False))
    print("rejected by kind and reason:", json.dumps(report["rejected"], sort_keys=True))
    print("written to", out_file)

    assert report["crashes"] == 0, report
    assert hangs == 0, (report, "\n".join(recent))
    assert report["inputs"] >= 10_000
    assert report["rejected_total"], report
    for kind in ("ask", "announce"):  # every message on a topic hearthd listens to was read
        assert report["received"][kind] >= inputs[kind], report
    assert report["connection_errors"] == 0 and report["connections"] == 1, report
    # No leak: what private memory grew by, less what the model's bounded state caches grew by (the fuzz's model
    # turns check other tools than the warm-up's), stays within 20 %.
    grown_mb = (memory_after["RssAnon"] - memory_before["RssAnon"]) / 1024 - (kept_after - kept_before)
    assert grown_mb <= 0.2 * memory_before["RssAnon"] / 1024, report
    assert not junk and not own and len(entities) <= MAX_ENTITIES, report
    assert report["rejected"]["discovery"].get("catalogue-full"), report  # the bound was reached, and held
    assert {"Kitchen Light", "Bedroom Blinds"} <= {e["name"] for e in entities}
    assert restart_latency is not None, report
    assert one_shot.returncode == 0 and one_shot_replies == [OFF], (one_shot_replies, err.decode()[-2000:])
