"""The loaded parts of the assistant, each built once on first use and reused for every turn."""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from ..agent.agent import Agent
from ..agent.declines import DeclineFirst
from ..agent.fastpath import FastPath, Router
from ..assets import AssetStore
from ..audio.bias import HomeNames
from ..audio.stt import SpeechToText
from ..audio.tts import TtsError, VoiceBank, Voices, tts_engines
from ..audio.vad import Endpointer, SpeechProbability
from ..audio.wake import WakeWordDetector
from ..config import Config, TtsConfig, state_dir, xdg_dir
from ..engines import selected
from ..tools.alarms import AlarmBook
from ..tools.battery import Battery
from ..tools.bus import Bus
from ..tools.catalogue import Catalogue
from ..tools.clock import Clock
from ..tools.media import MediaPlayers
from ..tools.network import NetworkManager
from ..tools.notify import Notifier
from ..tools.power import Login1
from ..tools.registry import Tool, ToolRegistry
from ..tools.smarthome import CONTROLLABLE, SmartHome
from ..tools.volume import SystemVolume, volume_backend
from .audit import AuditLog
from .dialogue import Dialogues
from .idempotency import DoneRequests
from .inference import InferenceGate, SpeechBatch
from .policy import ConfirmationPolicy

if TYPE_CHECKING:  # the MQTT link imports paho when it is made, not when the daemon starts
    from .mqtt import Handlers, MqttLink

T = TypeVar("T")

log = logging.getLogger(__name__)


def make_store(cfg: Config, progress: Callable[[str, int, int], None] | None = None) -> AssetStore:
    """The asset store the config describes."""
    cache = Path(cfg.assets.cache_dir).expanduser() if cfg.assets.cache_dir else None
    return AssetStore(cache_dir=cache, allow_download=cfg.assets.allow_download, hub_url=cfg.assets.hub_url,
                      progress=progress)


def prompt_cache_dir() -> Path:
    """Saved llama.cpp states of evaluated prompt prefixes (rebuilt whenever model or prompt changes)."""
    return xdg_dir("XDG_CACHE_HOME", ".cache") / "hearthd" / "prompts"


def voice_bank(cfg: Config, store: AssetStore) -> VoiceBank:
    """The local voices of `tts.voices` (VoiceBank: a fetched Piper voice first, espeak-ng where nothing else can
    speak); `hearthd doctor` and `hearthd models list` ask it which voice each language gets."""

    def piper_path(name: str) -> Path:
        if name.endswith(".onnx") or "/" in name:
            path = Path(name).expanduser()
            if not path.is_file():
                raise TtsError(f"Piper voice {path} does not exist (tts.voices)")
            return path
        return store.resolve(name)

    def fetched(lang: str) -> Path | None:
        """A Piper voice for `lang` in the model cache (`hearthd models fetch voices`), spoken instead of the
        default voice; a voice the config chose (anything but the default) is kept."""
        if cfg.tts.voices.get(lang) != TtsConfig().voices.get(lang):
            return None
        return store.natural_voice(lang)

    return VoiceBank(cfg.tts.voices, tts_engines(cfg, store, piper_path), fetched, TtsConfig().voices)


class Components:
    """Lazily loaded models and the tool catalogue; `on_load(name, seconds)` reports each load."""

    def __init__(self, cfg: Config, store: AssetStore | None = None,
                 on_load: Callable[[str, float], None] | None = None,
                 ticks: Callable[[], float] = time.monotonic) -> None:
        self.cfg = cfg
        self.store = store or make_store(cfg)
        self.on_load = on_load
        self.alarms = AlarmBook(path=state_dir() / "alarms.db", zone=cfg.general.timezone,
                                snooze_minutes=cfg.alarms.snooze_minutes)
        self.bus = Bus(cfg.dbus.session_address, cfg.dbus.system_address, cfg.dbus.timeout_s)
        self.media = MediaPlayers(self.bus)
        self.notifier = Notifier(self.bus) if cfg.dbus.enabled and cfg.dbus.notifications else None
        # Devices learned over MQTT, saved so a restart knows them before the broker replays anything.
        self.catalogue = Catalogue(state_dir() / "devices.json", cfg.mqtt.aliases, cfg.mqtt.min_match)
        self.mqtt: MqttLink | None = None  # the link of the running event loop (made on first use)
        self.mqtt_one_shot = True  # `hearthd run` sets False: then hearthd also publishes itself
        self.mqtt_handlers: Handlers | None = None  # what an MQTT ask/announce runs (`hearthd run` sets them)
        home = SmartHome(self.catalogue, self._home_link, cfg.mqtt.floors).tools() if cfg.mqtt.enabled else []
        self.clock = Clock(zone=cfg.general.timezone)  # the time and date, read in the configured zone
        self.tools = ToolRegistry(self.alarms.tools() + self.clock.tools() + self.desktop_tools() + home)
        self._cache: dict[str, Any] = {}
        self._warmed = False  # warm_templates has run (the live loop runs it before the microphone opens)
        self._lock = threading.Lock()
        self._load_problems: dict[str, str] = {}  # a part that failed to load → why (reported once, see `problems`)
        self.last_problem = ""  # the newest problem recorded, "<part>: <message>" ("" while there is none)
        # one clock for every question's deadline: the held confirmation, the open question, the "which one?"
        self.ticks = ticks
        self.policy = ConfirmationPolicy(self.tools, cfg.policy.confirm, cfg.policy.confirm_timeout_s,
                                         confirm_many=cfg.policy.confirm_many, clock=self.ticks)
        self.audit = AuditLog(state_dir() / "audit.jsonl", cfg.policy.audit_max_bytes, cfg.policy.audit_keep,
                              cfg.general.privacy) if cfg.policy.audit else None
        self.done_requests = DoneRequests(state_dir() / "requests.db")
        self.last_lang: str | None = None  # the language last heard, in any conversation (D-Bus `Language`)
        # Each conversation's open question, held confirmation and "which one?", and its language (dialogue.py)
        self.dialogues = Dialogues(clock=self.ticks)
        self.voices: Voices = self._voices()
        self.inference = InferenceGate()  # whisper and the model never run at once (daemon/inference.py)
        # what every stream heard in its pause, heard together (speech to text as `stt` gives it when the pause comes)
        self.speech = SpeechBatch(self.inference, lambda: self.stt())
        self._stop_preparing = threading.Event()
        # The daemon makes the model's prompt ready beside its turns (run_daemon, prepare_model): set before it serves
        # anyone, so a turn that comes before the preparation has begun is on its budget too, not a one-shot that
        # prepares the whole prefix first (150 s on a loaded 2-core machine, while every other asker waited)
        self.prepares_in_background = False

    def desktop_tools(self) -> list[Tool]:
        """Volume (the sound server's client), and with dbus.enabled media, power, screen, battery and Wi-Fi."""
        cfg = self.cfg
        volume = SystemVolume(volume_backend(cfg.audio.volume_backend, cfg.dbus.timeout_s), cfg.audio.volume_step,
                              self.media if cfg.dbus.enabled else None)
        tools = volume.tools()
        if cfg.dbus.enabled:
            tools += self.media.tools() + Login1(self.bus, cfg.dbus.backlight).tools() + Battery(self.bus).tools()
            tools += NetworkManager(self.bus).tools()
        return tools

    def mqtt_link(self) -> MqttLink:
        """The MQTT link for the running event loop (a link belongs to the loop that started it)."""
        import asyncio

        from .mqtt import MqttLink

        loop = asyncio.get_running_loop()
        if self.mqtt is None or self.mqtt.loop is not loop:
            self.mqtt = MqttLink(self.cfg.mqtt, self.catalogue, list(self.cfg.stt.languages), self.mqtt_one_shot,
                                 self.mqtt_handlers, self.cfg.general.privacy, area=self.cfg.general.area)
            self.mqtt.loop = loop
        return self.mqtt

    async def _home_link(self) -> MqttLink:
        return await self.mqtt_link().ready(min(3.0, self.cfg.mqtt.command_timeout_s))

    async def close(self) -> None:
        """Let go of the connections made in the running loop (MQTT first: queued commands are answered)."""
        if self.mqtt is not None:
            await self.mqtt.stop()
            self.mqtt = None
        await self.bus.close()
        close = getattr(self._cache.get("wake"), "close", None)  # a remote wake word's open stream
        if close is not None:
            close()

    @property
    def problems(self) -> dict[str, str]:
        """What does not work now, part → message, for `hearthd doctor`, the log and the MQTT diagnostic: a model that
        cannot load ("agent", "stt", ...), a store that is read-only on a full/read-only disk or was moved aside
        as corrupt ("alarms", "requests"), audit turns that could not be recorded ("audit"). Empty when all is well."""
        out = dict(self._load_problems)
        for part, store in (("alarms", self.alarms.store), ("requests", self.done_requests.store)):
            if store.read_only is not None:
                out[part] = f"{store.read_only.message}; reads work, changes fail"
            elif store.moved_aside is not None:
                out[part] = f"was corrupt: kept as {store.moved_aside}, a fresh one is in use"
        if self.audit is not None and self.audit.lost:
            out["audit"] = f"{self.audit.lost} turn(s) not recorded: {self.audit.last_loss}"
        return out

    def built(self, name: str) -> Any:
        """The component `name` if it has been built (never builds it), else None."""
        with self._lock:
            return self._cache.get(name)

    def _once(self, name: str, build: Callable[[], T]) -> T:
        with self._lock:
            if name not in self._cache:
                started = time.monotonic()
                try:
                    self._cache[name] = build()
                except Exception as e:
                    # Tried again by the next turn that needs it (the file may be fixed by then), reported once.
                    message = str(getattr(e, "message", "") or e) or type(e).__name__
                    if self._load_problems.get(name) != message:
                        self._load_problems[name] = message
                        self.last_problem = f"{name}: {message}"
                        log.warning("%s cannot be loaded: %s (turns that need it end with an apology; "
                                    "`hearthd doctor` checks it)", name, message)
                    raise
                if self._load_problems.pop(name, None) is not None:
                    log.warning("%s loads now", name)
                if self.on_load:
                    self.on_load(name, time.monotonic() - started)
            return self._cache[name]

    def _voices(self) -> Voices:
        """The voices of the configured engine (tts.engine, hearthd.engines): the local voice bank, a remote's…"""
        return cast(Voices, selected(self.cfg, "tts").build(self))

    def wake(self) -> WakeWordDetector:
        return self._once("wake", lambda: self.wake_detector(self.cfg.wake.model))

    def wake_detector(self, name: str) -> WakeWordDetector:
        """A new detector of the wake word `name` on the configured engine (wake.engine); an unknown local one raises
        WakeWordError (a remote one says so when it is asked)."""
        return cast(WakeWordDetector, selected(self.cfg, "wake").build(self, name))

    def speech_probability(self) -> SpeechProbability:
        """A new voice-activity stream on the configured engine (vad.engine): each listener keeps its own state."""
        return cast(SpeechProbability, selected(self.cfg, "vad").build(self))

    def endpointer(self) -> Endpointer:
        return self._once("vad", lambda: Endpointer(self.cfg.vad, self.speech_probability()))

    def stt(self) -> SpeechToText:
        """Speech to text on the configured engine (stt.engine, hearthd.engines), built once."""
        return self._once("stt", lambda: cast(SpeechToText, selected(self.cfg, "stt").build(self)))

    def home_names(self) -> HomeNames:
        """The names of this home's devices (with their aliases) and rooms, as the catalogue knows them now: what
        speech to text is biased toward (stt.bias). With mqtt off there is no home to name."""
        if not self.cfg.mqtt.enabled:
            return HomeNames()
        # the devices people command first: with a large catalogue, its sensors' names are the ones left out
        entities = sorted(self.catalogue.entities.values(), key=lambda e: e.component not in CONTROLLABLE)
        devices = [e.name for e in entities if e.name] + list(self.catalogue.aliases)
        return HomeNames(tuple(dict.fromkeys(devices)), tuple(sorted(self.catalogue.areas())))

    def fast_path(self) -> FastPath:
        """hearthd's templates and the sentence library, reading this home's names, areas and floors."""
        from ..agent.library import Library

        return FastPath(self.tools, Library(self.tools, lambda: self.catalogue, self.cfg.mqtt.floors,
                                            self.cfg.general.area))

    def router(self) -> Router:
        """The fast path, then the model; the model loads only when a turn reaches it."""
        # with the templates, "what's the weather" is declined by code, not by a model turn (agent/declines.py)
        first = cast(Agent, DeclineFirst(self.agent))
        model = (lambda: first) if self.cfg.agent.fast_path else self.agent
        return self._once("router", lambda: self._router(model))

    def _router(self, model: Callable[[], Agent]) -> Router:
        from ..agent.tolerant import TolerantMatcher

        fast = self.fast_path() if self.cfg.agent.fast_path else None
        tolerant = TolerantMatcher(fast, self.cfg.agent.tolerant_act, self.cfg.agent.tolerant_ask) \
            if fast is not None and self.cfg.agent.tolerant else None
        return Router(fast, model, self.cfg.agent.clarify_timeout_s, self.cfg.agent.clarify_turns, clock=self.ticks,
                      tolerant=tolerant, domain_hint=self.cfg.agent.domain_hint)

    def agent(self) -> Agent:
        """The agent on the configured engine (agent.engine, hearthd.engines), built once."""
        agent = self._once("agent", lambda: cast(Agent, selected(self.cfg, "agent").build(self)))
        if self.prepares_in_background:
            agent.prepared_in_background = True
        return agent

    def prefix_languages(self) -> list[str]:
        """The languages whose catalogue prefix is kept ready: those configured, the default one last (it is
        the one left in the cache)."""
        default = self.cfg.stt.language or self.cfg.general.language
        langs = [lang for lang in self.cfg.stt.languages if lang != default]
        return [*langs, default]

    def prepare_model(self) -> dict[str, str]:
        """Blocking (an executor thread): load the model and make the prompt prefixes ready (evaluated, or restored
        from their saved states), so a first model turn pays for neither; turns that come meanwhile go first. A
        model that cannot load is left for the turn that needs it to report. The sentence templates are compiled
        first (a few hundred ms per language, once per process), then each language's voice is loaded and run once
        (`warm_voices`), so no first turn or first reply pays for them either."""
        self.prepares_in_background = True
        if not self._warmed:  # the live loop warmed them before the microphone opened: not again beside it
            self.warm_templates()
        self.warm_voices()
        if (not self.cfg.agent.model and not self.cfg.agent.model_path) or self._stop_preparing.is_set():
            return {}
        try:
            agent = self.agent()
            agent.prepared_in_background = True  # from now on a turn's budget covers what is not ready yet
            return agent.prepare(self.prefix_languages(), self._stop_preparing)
        except Exception as e:  # noqa: BLE001 — the turn that needs the model reports it, with its code
            import logging

            logging.getLogger(__name__).warning("the model's prompt was not prepared: %s", e)
            return {}

    def warm_voices(self) -> None:
        """Blocking: build the voice of each language listened for and have it say one short word, so a first reply
        pays neither the load (Kokoro: ~1 s) nor the first run of its network (~2-4 s more on 2 cores). A voice that
        cannot speak is left for the reply that needs it to report (and fall back)."""
        if not isinstance(self.voices, VoiceBank):
            return  # a remote engine's voices: nothing to load here
        for lang in self.prefix_languages():
            if self._stop_preparing.is_set():
                return
            if lang in self.cfg.tts.voices:
                try:
                    self.voices.synthesize("1", lang)
                except Exception as e:  # noqa: BLE001 — the reply that needs the voice says what is wrong
                    log.warning("the %s voice was not warmed: %s", lang, e)

    def load_model(self) -> None:
        """Blocking: load the agent model now (not its prompt prefixes), or leave a model that cannot load to the
        turn that needs it. The live loop calls it before the microphone opens: beside a running stream the load
        cost the reader a block (512 frames dropped on a dummy JACK device)."""
        if not self.cfg.agent.model and not self.cfg.agent.model_path:
            return
        try:
            self.agent().load()
        except Exception as e:  # noqa: BLE001 — the turn that needs the model reports it, with its code
            import logging

            logging.getLogger(__name__).warning("the model did not load: %s", e)

    def warm_templates(self) -> None:
        """Match one sentence per language, so hearthd's templates and the sentence library are compiled now."""
        if not self.cfg.agent.fast_path:
            return
        fast_path, tolerant = self.router().fast_path, self.router().tolerant
        for lang in self.prefix_languages():
            if self._stop_preparing.is_set():  # shutting down: a language not compiled yet is not waited for
                return
            try:
                if fast_path is not None:
                    fast_path.match("turn off the light", lang)
                if tolerant is not None and self.cfg.stt.rescore:
                    tolerant.warm(lang)  # the word bags and what the rescoring writes sentences from sound with
                elif tolerant is not None:
                    tolerant.index(lang)  # the tolerant tier's word bags (a second or two per language)
            except Exception as e:  # noqa: BLE001 — a template problem shows on the turn that meets it
                import logging

                logging.getLogger(__name__).warning("the %s sentence templates did not compile: %s", lang, e)
        self._warmed = True

    def stop_preparing(self) -> None:
        """End a prefix warm-up in progress (shutting down)."""
        self._stop_preparing.set()
        agent = self._cache.get("agent")
        if agent is not None:
            agent.stop_preparing()
