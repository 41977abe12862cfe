"""One typed configuration: defaults, then a TOML file, then HEARTHD__SECTION__KEY environment overrides."""

from __future__ import annotations

import dataclasses
import math
import os
import re
import stat
import tomllib
import types
import typing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .errors import HearthdError
from .locale import DEFAULT_LANGUAGE
from .locale import languages as supported_languages


def _language_rules() -> types.ModuleType:
    """hearthd.language, where each language's own defaults (language.toml) are read."""
    from . import language

    return language


class ConfigError(HearthdError):
    """A configuration problem, with the dotted key path that caused it."""

    code = "config-invalid"

    def __init__(self, message: str, key: str = "") -> None:
        # Bounded and visible: a message quotes the value, and a 3 MB one made the reload's STATUS= datagram too
        # big to send; a NUL in a key (`"host\u0000" = 1`) made systemd ignore it. Either left systemd at RELOADING.
        message, key = _clip(message, MAX_MESSAGE_CHARS), _clip(key, MAX_KEY_CHARS)
        super().__init__(f"{key}: {message}" if key else message)
        self.key = key
        self.message = message


MAX_MESSAGE_CHARS = 1000  # a ConfigError's text; its key (a dotted key, or the file's path) at most MAX_KEY_CHARS
MAX_KEY_CHARS = 4096


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f]")


def _clip(text: str, limit: int) -> str:
    """`text` at most `limit` characters (and how long it was), its control characters written as escapes."""
    text = text if len(text) <= limit else f"{text[:limit]}… ({len(text)} characters)"
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


@dataclass
class GeneralConfig:
    """Language defaults and time zone."""

    language: str = DEFAULT_LANGUAGE  # used when detection is unsure and nothing else is known
    timezone: str = ""  # IANA name; empty = the system's zone
    privacy: bool = False  # keep transcripts out of logs
    area: str = ""  # the room the local microphone is in: "turn off the lights in here"


@dataclass
class AssetsConfig:
    """Where models are cached and whether they may be downloaded."""

    cache_dir: str = ""  # empty = $XDG_CACHE_HOME/hearthd/models
    allow_download: bool = False  # the hub path is for users with internet; off by default
    hub_url: str = "https://huggingface.co"


@dataclass
class WakeConfig:
    """Wake word detection (pymicro-wakeword)."""

    enabled: bool = True
    model: str = "okay_nabu"  # okay_nabu, hey_jarvis, hey_mycroft, alexa
    refractory_s: float = 2.0
    engine: str = "micro"  # "micro" (microWakeWord here) or "wyoming" (a Wyoming wake service at `uri`)
    uri: str = ""  # with engine = "wyoming": tcp://HOST:PORT or unix:///PATH


@dataclass
class VadConfig:
    """Endpointing with the silero VAD shipped in faster-whisper."""

    threshold: float = 0.5
    min_speech_ms: int = 250
    end_silence_ms: int = 600
    pre_roll_ms: int = 300
    max_speech_s: float = 15.0
    no_speech_timeout_s: float = 8.0
    # silence after which speech to text starts on the utterance so far (0: off). Not below the tail the endpointer
    # keeps after the last voiced window (hearthd.audio.vad.TAIL, 150 ms): the guess then hears the very audio the turn
    # would, so it decides as the turn would. At 96 ms an English command was decided ~60 ms sooner, but whisper base
    # heard the shorter tail otherwise: spoken suites ru 47 -> 43 and hi 30 -> 27 of 64 and 63, English 57 of 65 with
    # two decisions changed. A guess made stale by more speech stops between whisper's stages.
    speculate_ms: int = 150
    # the silence that ends an utterance whose words, heard in the pause, already make a whole command (every detail
    # said, nothing it could go on with: hearthd.agent.fastpath.Router.complete); 0: every utterance waits
    # end_silence_ms. Below speculate_ms it is speculate_ms plus the time to hear and decide.
    complete_silence_ms: int = 250
    follow_up_s: float = 8.0  # after a question, speech within this window needs no wake word
    engine: str = "silero"  # the voice-activity engine (hearthd.engines: "silero", shipped in faster-whisper)


@dataclass
class SttConfig:
    """Speech to text (faster-whisper)."""

    model: str = "whisper-base"
    model_path: str = ""
    compute_type: str = "int8"
    beam_size: int = 1
    temperature: float = 0.0  # no sampling fallback: deterministic, and no slow retries on noise
    max_new_tokens: int = 96  # a spoken command is short; this bounds a hallucination loop
    languages: list[str] = field(default_factory=lambda: list(supported_languages()))
    language: str = ""  # force one language (no detection); empty = detect among `languages`
    min_language_probability: float = 0.5  # below it: the last turn's language, then general.language
    threads: int = 0  # 0 = the cores free when whisper loads (allowed cores less what other processes use)
    engine: str = "whisper"  # "whisper" (faster-whisper here) or "wyoming" (a Wyoming asr service at `uri`)
    uri: str = ""  # with engine = "wyoming": tcp://HOST:PORT or unix:///PATH (e.g. a bigger Whisper elsewhere)
    bias: bool = True  # the home's device names, rooms and command words bias what whisper hears
    # a transcript the templates cannot read is weighed against the nearest template sentences, by how well each fits
    # the audio (hearthd.audio.rescoring); one is taken when it fits within `rescore_margin` of what whisper wrote
    # (mean log-probability per token) and no worse than `rescore_floor`
    rescore: bool = True
    rescore_margin: float = 1.0
    rescore_floor: float = -2.3
    # whisper this unsure of the language it heard (its probability): the other languages' sentences are weighed too
    rescore_languages_below: float = 0.8
    # the seconds of audio whisper's encoder looks at for a short utterance (its padded window; the utterance and a
    # second of silence always fit, up to whisper's own 30 s): the encoder's cost grows with it, and a command of 3 s
    # encoded in a 10 s window took 120 ms where the full 30 s took 800 ms on 2 cores (whisper.cpp's `audio_ctx`)
    window_s: float = 10.0
    # the languages whose commands whisper base reads as well in that window (the spoken suites, 10 s against 30 s:
    # English 57 of 65 right against 56; Russian 45 of 64 against 48 and Hindi 25 of 63 against 32): the others get
    # whisper's 30 s, their language detected in it too
    window_languages: list[str] = field(default_factory=lambda: _language_rules().short_window_languages())


@dataclass
class AgentConfig:
    """The local tool-calling model (llama-cpp-python)."""

    model: str = "qwen2.5-coder-0.5b"
    model_path: str = ""  # any Qwen-family tool-calling GGUF, e.g. BotPsy-0.8B
    # where the model runs (hearthd.engines): "local", llama-cpp-python in this process; or "server", an inference
    # server at `uri` (llama-cpp-python's llama_cpp.server) running the same GGUF (read here for its vocabulary only)
    engine: str = "local"
    uri: str = ""  # with engine = "server": http://HOST:PORT
    # with engine = "server": a second server process for the relevance check's prompt (http://HOST:PORT; "" = the
    # same server). One server keeps one prompt evaluated: the agent's and the check's then take turns evicting each
    # other, and the catalogue is evaluated again every turn
    check_uri: str = ""
    server_timeout_s: float = 30.0  # the longest wait for one answer of the server (a turn's own limit comes first)
    api_key: str = ""  # with engine = "server": the server's --api_key, sent as a bearer token ("" = none)
    n_ctx: int = 8192
    # "q8_0": a model shipped at 4-6 bits (the default's Q4_K_M) runs from an 8-bit copy made once in the cache,
    # whose prompts the CPU evaluates ~25 % faster, deciding the same (hearthd.agent.weights); "as-is": its own file
    weights: str = "q8_0"
    threads: int = 0  # 0 = the cores free now, looked at again each turn (prompt batches use the same number)
    max_tokens: int = 160
    temperature: float = 0.0
    min_tool_probability: float = 0.0  # abstain when the chosen tool's first-token probability is lower
    min_relevance: float = 0.55  # abstain when P(the chosen tool does what was asked) is lower; 0 turns it off
    # ...down to this when every required time, duration or name of the call is read in the user's words
    min_relevance_grounded: float = 0.4
    fast_path: bool = True  # sentence templates (locales/<lang>/sentences) before the model
    # the tolerant tier between the templates and the model: the nearest template sentence, scored; at or above
    # tolerant_act it is acted on, between tolerant_ask and it a question ("did you mean …?"), below it the model
    tolerant: bool = True
    tolerant_act: float = 0.75
    tolerant_ask: float = 0.6
    domain_hint: bool = True  # the model chooses among the tools of the domain the tiers point at, not all of them
    clarify_timeout_s: float = 30.0  # how long a question for a missing detail stays open
    clarify_turns: int = 2  # questions asked for one request before giving up
    max_calls: int = 3  # tool calls one utterance may make; more stops the turn and says so
    max_turn_s: float = 10.0  # wall time the model may spend on one turn; past it the turn stops and says so
    # "off" (default, for latency), or a budget of N tokens the model may think before its call (models whose
    # template has a thinking mode, e.g. Qwen3.5/BotPsy); `</think>` is forced at the budget
    thinking: str = "off"
    # the longest text one request may carry (D-Bus Ask/Say, `hearthd ask`, and any other text front end): longer
    # is refused with a clear error before anything is evaluated
    max_text_chars: int = 2000

    @property
    def thinking_budget(self) -> int:
        """Tokens the model may think before its call (0: thinking off)."""
        return 0 if self.thinking.strip().lower() == "off" else int(self.thinking)




@dataclass
class TtsConfig:
    """Text to speech: one voice per language, `piper:<asset or path>`, `kokoro:<voice>` (hf_alpha, af_heart …),
    `festival:<voice>` or `espeak:<voice>`. The defaults are the best offline voice of each language; a Piper voice
    fetched for a language (`hearthd models fetch voices`) speaks instead, and espeak-ng where a voice cannot."""

    voices: dict[str, str] = field(default_factory=lambda: _language_rules().default_voices())  # language.toml
    length_scale: float = 1.0
    engine: str = "local"  # "local" (the voices above) or "wyoming" (a Wyoming tts service at `uri`)
    uri: str = ""  # with engine = "wyoming": tcp://HOST:PORT or unix:///PATH
    voice: str = ""  # with engine = "wyoming": the remote voice's name; empty = the remote's voice for the language


@dataclass
class AudioConfig:
    """Sound devices (by name or index; empty = system default)."""

    input_device: str = ""
    output_device: str = ""
    sample_rate: int = 16000
    volume_backend: str = "auto"  # system volume: wpctl (PipeWire), pactl (PulseAudio/pipewire-pulse), auto
    volume_step: int = 10  # percent per "louder"/"quieter"
    max_input_s: float = 300.0  # a WAV given to `run --input`/`transcribe` longer than this is refused unread


@dataclass
class MqttConfig:
    """The MQTT broker for home automation."""

    enabled: bool = True
    host: str = "127.0.0.1"
    port: int = 1883
    username: str = ""
    password: str = ""
    discovery_prefix: str = "homeassistant"
    client_id: str = ""  # empty = hearthd-<node_id> (the daemon) or hearthd-<node_id>-<pid> (one-shot commands)
    node_id: str = ""  # hearthd's own device and topics: hearthd/<node_id>/…; empty = from the host name
    topic_base: str = "hearthd"
    publish_self: bool = True  # the daemon appears in Home Assistant via discovery (state, mute, listen, language)
    tls: bool = False
    ca_file: str = ""  # with tls: the CA to trust; empty = the system's
    cert_file: str = ""  # with tls: client certificate and key, if the broker wants them
    key_file: str = ""
    keepalive_s: int = 30
    command_timeout_s: float = 10.0  # a command the broker has not taken within it is reported as not sent
    queue_max: int = 32  # commands held while the broker is away; more are refused at once, out loud
    settle_s: float = 0.4  # after connecting, wait until retained discovery has stopped arriving for this long
    min_match: float = 0.75  # fuzzy device-name matches below it are not taken
    aliases: dict[str, str] = field(default_factory=dict)  # "кухонный свет" = "Kitchen Light"
    # floors as groups of areas: "First floor" = ["Kitchen", "Living Room"] ("all the lights on the first floor")
    floors: dict[str, list[str]] = field(default_factory=dict)
    # Bounds on what arrives over MQTT (issue 14): a message past one is dropped, logged and counted, never fatal.
    max_payload_bytes: int = 262_144  # device-based discovery runs to tens of kB; nothing legitimate is near this
    max_json_depth: int = 32  # counted before parsing, so deep nesting never reaches json.loads
    max_text_chars: int = 1000  # an ask or announce; longer ones are refused (the model's context, TTS memory)
    max_entities: int = 1000  # in the device catalogue; new discoveries beyond it are refused
    max_turns: int = 4  # asks and announces in flight at once; beyond, an ask is answered "busy"


@dataclass
class DbusConfig:
    """D-Bus device control and hearthd's own D-Bus interface."""

    enabled: bool = True  # media (MPRIS), power/screen (logind), battery (UPower), Wi-Fi (NetworkManager)
    session_address: str = ""  # empty = $DBUS_SESSION_BUS_ADDRESS
    system_address: str = ""  # empty = $DBUS_SYSTEM_BUS_ADDRESS, else /run/dbus/system_bus_socket
    timeout_s: float = 5.0  # a service that does not answer within it is reported as failed
    notifications: bool = True  # desktop notifications of actions, questions and alarms
    service: bool = True  # `hearthd run` exports org.hearthd.Assistant1 on the session bus
    backlight: str = ""  # screen brightness: a /sys/class/backlight device name or directory; empty = the first


@dataclass
class AlarmsConfig:
    """Ringing: how late an alarm missed while hearthd was down may still ring, repeats, snooze."""

    grace_s: float = 300.0  # missed by more than this at start-up: reported, not rung
    repeat_s: float = 30.0  # ring again (chime + label) this often until "stop" or "snooze"
    max_rings: int = 10  # then it stops by itself
    snooze_minutes: int = 9


@dataclass
class PolicyConfig:
    """What waits for a spoken yes: every tool declared consequential, plus these."""

    confirm: list[str] = field(default_factory=list)  # more tool names to confirm (e.g. "set_alarm")
    confirm_timeout_s: float = 15.0  # no answer within it: cancelled
    confirm_many: int = 2  # a call that deletes or unlocks more things than this asks first, saying how many
    audit: bool = True  # one JSON line per turn in <state dir>/audit.jsonl (`hearthd history`)
    audit_max_bytes: int = 1_000_000  # rotated at this size
    audit_keep: int = 3  # rotated files kept


@dataclass
class WyomingConfig:
    """hearthd as Wyoming services (asr, tts, wake, handle) for Home Assistant and other clients: off unless a uri
    is set, and bound only where it says (tcp://127.0.0.1:10700 for this machine alone)."""

    uri: str = ""  # tcp://HOST:PORT or unix:///path; empty = no Wyoming server
    name: str = "hearthd"  # the name clients see in `describe`
    zeroconf: bool = False  # announce the server as _wyoming._tcp on the local network (needs the zeroconf package)
    max_connections: int = 64  # open at once; one more is told "busy" and closed (1,100 idle ones took every door)
    idle_timeout_s: float = 300.0  # a connection that sends nothing this long is closed (a turn never takes as long)
    # The language a client names (Home Assistant: its pipeline's, on every request): "detect" takes it as a hint,
    # each utterance and reply in the language it is in; "pipeline" forces it on speech to text, turns and voices
    language: str = "detect"


@dataclass
class SatelliteConfig:
    """A room's Wyoming satellite (the stock wyoming-satellite program) that hearthd serves as its hub."""

    uri: str = ""  # where the satellite listens: tcp://kitchen-pi:10700
    area: str = ""  # the satellite's room: its default room for "turn on the light"
    name: str = ""  # how hearthd names it (default: the area, else the uri)
    rings: str = "here"  # alarms and timers set from it ring: "here" (this satellite) or "all"


@dataclass
class Config:
    """The whole effective configuration."""

    general: GeneralConfig = field(default_factory=GeneralConfig)
    assets: AssetsConfig = field(default_factory=AssetsConfig)
    wake: WakeConfig = field(default_factory=WakeConfig)
    vad: VadConfig = field(default_factory=VadConfig)
    stt: SttConfig = field(default_factory=SttConfig)
    agent: AgentConfig = field(default_factory=AgentConfig)
    tts: TtsConfig = field(default_factory=TtsConfig)
    audio: AudioConfig = field(default_factory=AudioConfig)
    mqtt: MqttConfig = field(default_factory=MqttConfig)
    dbus: DbusConfig = field(default_factory=DbusConfig)
    policy: PolicyConfig = field(default_factory=PolicyConfig)
    alarms: AlarmsConfig = field(default_factory=AlarmsConfig)
    wyoming: WyomingConfig = field(default_factory=WyomingConfig)
    satellites: list[SatelliteConfig] = field(default_factory=list)
    source: str = field(default="defaults", metadata={"internal": True})

    def to_dict(self) -> dict[str, Any]:
        """The config as plain data, without internal fields."""
        def plain(value: Any) -> Any:
            return [plain(v) for v in value] if isinstance(value, list) else dataclasses.asdict(value)

        return {f.name: plain(getattr(self, f.name)) for f in dataclasses.fields(self)
                if not f.metadata.get("internal")}


def xdg_dir(env: str, fallback: str) -> Path:
    """An XDG base directory, honouring the environment variable when it is an absolute path."""
    value = os.environ.get(env, "")
    if value and os.path.isabs(value):
        return Path(value)
    return Path.home() / fallback


def default_config_path() -> Path:
    """Where the config file lives when --config is not given."""
    return xdg_dir("XDG_CONFIG_HOME", ".config") / "hearthd" / "config.toml"


def state_dir() -> Path:
    """Where durable state (alarms, audit trail) lives."""
    return xdg_dir("XDG_STATE_HOME", ".local/state") / "hearthd"


def _type_name(tp: Any) -> str:
    return {str: "string", int: "integer", float: "number", bool: "boolean"}.get(tp, str(tp))


_WORD_OR_NUMBER = {"agent.thinking"}  # text keys that also take a number


def _shown(value: Any) -> str:
    """A value as an error message quotes it, bounded in depth and length: repr() of a table 1,000 levels deep
    (`language.a.a.a… = 1` nests by dotted keys, which tomllib does not recurse for) raised RecursionError."""
    import reprlib

    shown = reprlib.Repr()
    shown.maxlevel, shown.maxstring, shown.maxother, shown.maxlong = 4, 200, 200, 200
    return shown.repr(value)


def _coerce(value: Any, tp: Any, key: str) -> Any:
    """Check one value against a field type; ints are accepted where floats are expected."""
    origin = typing.get_origin(tp)
    if origin is list:
        (item_tp,) = typing.get_args(tp)
        if not isinstance(value, list):
            raise ConfigError(f"expected a list, got {type(value).__name__}", key)
        if dataclasses.is_dataclass(item_tp):  # an array of tables: [[satellites]]
            items = []
            for i, v in enumerate(value):
                if not isinstance(v, dict):
                    raise ConfigError(f"expected a table, got {type(v).__name__}", f"{key}[{i}]")
                item = item_tp()  # type: ignore[operator]
                _apply(item, v, f"{key}[{i}]")
                items.append(item)
            return items
        return [_coerce(v, item_tp, f"{key}[{i}]") for i, v in enumerate(value)]
    if origin is dict:
        _, val_tp = typing.get_args(tp)
        if not isinstance(value, dict):
            raise ConfigError(f"expected a table, got {type(value).__name__}", key)
        return {str(k): _coerce(v, val_tp, f"{key}.{k}") for k, v in value.items()}
    if origin in (typing.Union, types.UnionType):
        raise ConfigError("union types are not supported in config", key)
    if tp is float and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if key in _WORD_OR_NUMBER and isinstance(value, int) and not isinstance(value, bool):
        return str(value)  # `agent.thinking = 256` as well as `"off"`
    if tp is bool and not isinstance(value, bool):
        raise ConfigError(f"expected boolean, got {type(value).__name__} {_shown(value)}", key)
    if tp in (int, float, str) and (not isinstance(value, tp) or isinstance(value, bool)):
        raise ConfigError(f"expected {_type_name(tp)}, got {type(value).__name__} {_shown(value)}", key)
    return value


def _apply(section: Any, data: dict[str, Any], prefix: str) -> None:
    hints = typing.get_type_hints(type(section))
    names = {f.name for f in dataclasses.fields(section) if not f.metadata.get("internal")}  # `source` is no key
    for key, value in data.items():
        path = f"{prefix}.{key}" if prefix else key
        if key not in names:
            raise ConfigError(f"unknown key (known: {', '.join(sorted(names))})", path)
        current = getattr(section, key)
        if dataclasses.is_dataclass(current):
            if not isinstance(value, dict):
                raise ConfigError(f"expected a table, got {type(value).__name__}", path)
            _apply(current, value, path)
        else:
            setattr(section, key, _coerce(value, hints[key], path))


def _validate(cfg: Config) -> None:
    _check_finite(cfg)
    for key, langs in (("stt.languages", cfg.stt.languages), ("tts.voices", list(cfg.tts.voices)),
                       ("stt.window_languages", cfg.stt.window_languages)):
        for lang in langs:
            if lang not in supported_languages():
                raise ConfigError(f"unsupported language {lang!r} (supported: {', '.join(supported_languages())})", key)
    if cfg.general.language not in supported_languages():
        raise ConfigError(f"unsupported language {cfg.general.language!r}", "general.language")
    if not cfg.stt.languages:
        raise ConfigError("at least one language is needed", "stt.languages")
    for i, satellite in enumerate(cfg.satellites):
        if satellite.rings not in ("here", "all"):
            raise ConfigError(f"must be \"here\" or \"all\", got {satellite.rings!r}", f"satellites[{i}].rings")
        if not satellite.uri:
            raise ConfigError("a satellite needs its uri (tcp://HOST:PORT)", f"satellites[{i}].uri")
    from .audio.tts import voice_spec_problem

    for lang, voice in cfg.tts.voices.items():
        if problem := voice_spec_problem(voice):  # the voice engines registered (hearthd.audio.tts.VOICE_ENGINES)
            raise ConfigError(problem, f"tts.voices.{lang}")
    if not 0.0 < cfg.vad.threshold < 1.0:
        raise ConfigError("must be between 0 and 1", "vad.threshold")
    if not 0 < cfg.mqtt.port < 65536:
        raise ConfigError("must be a TCP port number", "mqtt.port")
    for key, low, high in (("max_payload_bytes", 1024, 16_777_216), ("max_json_depth", 4, 256),
                           ("max_text_chars", 16, 100_000), ("max_entities", 1, 100_000), ("max_turns", 1, 64)):
        if not low <= getattr(cfg.mqtt, key) <= high:
            raise ConfigError(f"must be between {low} and {high}", f"mqtt.{key}")
    if cfg.audio.volume_backend not in ("auto", "wpctl", "pactl"):
        raise ConfigError("must be auto, wpctl or pactl", "audio.volume_backend")
    if not 1 <= cfg.audio.volume_step <= 50:
        raise ConfigError("must be between 1 and 50", "audio.volume_step")
    if not cfg.audio.max_input_s > 0:
        raise ConfigError("must be positive", "audio.max_input_s")
    if not 1 <= cfg.wyoming.max_connections <= 10_000:
        raise ConfigError("must be between 1 and 10000", "wyoming.max_connections")
    if not 1.0 <= cfg.wyoming.idle_timeout_s <= 86_400.0:
        raise ConfigError("must be between 1 and 86400 seconds", "wyoming.idle_timeout_s")
    if cfg.wyoming.language not in ("detect", "pipeline"):
        raise ConfigError('must be "detect" or "pipeline"', "wyoming.language")
    if cfg.dbus.timeout_s <= 0:
        raise ConfigError("must be positive", "dbus.timeout_s")
    from . import engines

    for section in engines.STAGES:  # each stage's engine is one registered for it (hearthd.engines)
        part = getattr(cfg, section)
        if part.engine not in engines.names(section):
            raise ConfigError(f"expected one of {', '.join(map(repr, engines.names(section)))}, got {part.engine!r}",
                              f"{section}.engine")
        uri, chosen = getattr(part, "uri", ""), engines.engine(section, part.engine)
        if chosen.remote and not uri:
            raise ConfigError(f"the {part.engine} engine runs elsewhere and needs its uri", f"{section}.uri")
        # the uri is checked as the chosen engine reads it, or (kept for later) as one of the stage's remote ones does
        checks = [chosen.uri_problem] if chosen.uri_problem else [
            e.uri_problem for e in map(lambda n: engines.engine(section, n), engines.names(section)) if e.uri_problem]
        for key, value in vars(part).items():  # `uri`, and any other service address of the stage (`check_uri`)
            if (key == "uri" or key.endswith("_uri")) and value and checks \
                    and all(problems := [check(value) for check in checks]):
                raise ConfigError(f"{problems[0]}, got {value!r}", f"{section}.{key}")
    # where hearthd serves Wyoming, and each satellite it serves: checked at load, not when the server starts
    for key, uri in [("wyoming.uri", cfg.wyoming.uri)] + [(f"satellites[{i}].uri", sat.uri)
                                                         for i, sat in enumerate(cfg.satellites)]:
        if uri and (problem := wyoming_uri_problem(uri)):
            raise ConfigError(f"{problem}, got {_shown(uri)}", key)
    if cfg.stt.language and cfg.stt.language not in cfg.stt.languages:
        # "de", "EN": every turn would fail on a language with no templates, phrases or voice
        raise ConfigError(f"expected one of stt.languages ({', '.join(cfg.stt.languages)}) or \"\" to detect, got "
                          f"{cfg.stt.language!r}", "stt.language")
    if cfg.general.timezone and (problem := _zone_problem(cfg.general.timezone)):
        raise ConfigError(problem, "general.timezone")
    _check_mqtt_names(cfg.mqtt)
    for key, value in (("assets.cache_dir", cfg.assets.cache_dir), ("stt.model_path", cfg.stt.model_path),
                       ("agent.model_path", cfg.agent.model_path), ("mqtt.ca_file", cfg.mqtt.ca_file),
                       ("mqtt.cert_file", cfg.mqtt.cert_file), ("mqtt.key_file", cfg.mqtt.key_file)):
        if value and (problem := _path_problem(value)):
            raise ConfigError(problem, key)
    if cfg.agent.weights not in ("q8_0", "as-is"):
        raise ConfigError(f"expected \"q8_0\" or \"as-is\", got {cfg.agent.weights!r}", "agent.weights")
    thinking = cfg.agent.thinking.strip().lower()
    # isascii: "²" and "٣" are digits to str.isdigit (int("²") raised); len: int() refuses 4,300 digits and more
    if thinking != "off" and not (thinking.isascii() and thinking.isdigit() and len(thinking) <= 4
                                  and 1 <= int(thinking) <= 4096):
        raise ConfigError(f"expected \"off\" or a token budget from 1 to 4096, got {cfg.agent.thinking!r}",
                          "agent.thinking")
    _check_ranges(cfg)


MAX_NAME_BYTES = 255  # a file name (NAME_MAX); a whole path at most PATH_MAX - 1
MAX_PATH_BYTES = 4095
MAX_HOST_CHARS = 253  # a DNS name
MAX_TOPIC_PART_CHARS = 128  # a discovery prefix, a topic base, a node id, a client id: far below MQTT's 64 kB


def _path_problem(value: str) -> str:
    """Why `value` cannot be a path on this system ("" when it can be one): too long, or a NUL in it."""
    if "\0" in value:  # before expanduser: "~a\0b" made pwd raise ValueError
        return "a path cannot hold a NUL character"
    raw = os.fsencode(os.path.expanduser(value))
    if len(raw) > MAX_PATH_BYTES:
        return f"a path of {len(raw)} bytes (at most {MAX_PATH_BYTES})"
    if any(len(part) > MAX_NAME_BYTES for part in raw.split(b"/")):
        return f"a path with a name longer than {MAX_NAME_BYTES} bytes"
    return ""


def _zone_problem(zone: str) -> str:
    """Why `zone` is not an IANA time zone hearthd can load ("" when it is one)."""
    from zoneinfo import ZoneInfo

    if len(zone) > MAX_TOPIC_PART_CHARS or "\0" in zone:
        return f"not an IANA time zone name such as Europe/Moscow (got {len(zone)} characters)"
    try:
        ZoneInfo(zone)
    except Exception:  # ZoneInfoNotFoundError, ValueError ("../x"), OSError (a name too long for the disk)
        return f"not an IANA time zone name such as Europe/Moscow, got {zone!r}"
    return ""


def _check_mqtt_names(mqtt: MqttConfig) -> None:
    """The broker's host and hearthd's topic parts: a wildcard in a prefix made the link reconnect for ever."""
    if len(mqtt.host) > MAX_HOST_CHARS or any(ch.isspace() or ch == "\0" for ch in mqtt.host):
        raise ConfigError(f"not a host name or address (at most {MAX_HOST_CHARS} characters, no spaces)", "mqtt.host")
    for key in ("discovery_prefix", "topic_base", "node_id", "client_id"):
        value = getattr(mqtt, key)
        if len(value) > MAX_TOPIC_PART_CHARS:
            raise ConfigError(f"{len(value)} characters (at most {MAX_TOPIC_PART_CHARS})", f"mqtt.{key}")
        if any(ch in value for ch in "+#\0"):
            raise ConfigError(f"MQTT wildcards (+, #) cannot be part of it, got {value!r}", f"mqtt.{key}")
        if key in ("discovery_prefix", "topic_base") and (not value.strip("/") or value != value.strip("/ ")):
            raise ConfigError(f"expected a topic such as \"homeassistant\", without a leading or trailing /, got "
                              f"{value!r}", f"mqtt.{key}")
        if key == "node_id" and "/" in value:
            raise ConfigError(f"one topic level, without /, got {value!r}", "mqtt.node_id")


def wyoming_uri_problem(uri: str) -> str:
    """Why `uri` is not a Wyoming service hearthd can connect to ("" when it is one)."""
    from urllib.parse import urlparse

    try:
        parsed = urlparse(uri)
    except ValueError:  # "tcp://[::1": an IPv6 address not closed
        return "expected tcp://HOST:PORT or unix:///PATH"
    if parsed.scheme == "tcp":
        try:
            port = parsed.port
        except ValueError:
            port = None
        return "" if parsed.hostname and port is not None else "expected tcp://HOST:PORT"
    if parsed.scheme == "unix":
        return "" if parsed.path else "expected unix:///PATH"
    return "expected tcp://HOST:PORT or unix:///PATH"


# Numbers that take nonsense otherwise (a zero queue that can send nothing, a negative timeout, `nan`): key, lowest,
# highest (None: no bound), and whether the lowest itself is refused (a duration that must be above zero).
_RANGES: tuple[tuple[str, float, float | None, bool], ...] = (
    ("wake.refractory_s", 0, None, False),
    ("vad.min_speech_ms", 0, None, False), ("vad.end_silence_ms", 0, None, True), ("vad.pre_roll_ms", 0, None, False),
    ("vad.max_speech_s", 0, None, True), ("vad.no_speech_timeout_s", 0, None, True),
    ("vad.speculate_ms", 0, None, False), ("vad.follow_up_s", 0, None, False),
    ("vad.complete_silence_ms", 0, None, False),
    ("stt.beam_size", 1, None, False), ("stt.temperature", 0, None, False), ("stt.max_new_tokens", 1, None, False),
    ("stt.min_language_probability", 0, 1, False), ("stt.threads", 0, None, False),
    ("stt.window_s", 1, 30, False),
    ("agent.n_ctx", 256, None, False), ("agent.threads", 0, None, False), ("agent.max_tokens", 1, None, False),
    ("agent.temperature", 0, None, False), ("agent.min_tool_probability", 0, 1, False),
    ("agent.min_relevance", 0, 1, False), ("agent.min_relevance_grounded", 0, 1, False),
    ("agent.clarify_timeout_s", 0, None, True),
    ("agent.clarify_turns", 1, None, False), ("agent.max_calls", 1, None, False), ("agent.max_turn_s", 0, None, True),
    ("agent.max_text_chars", 1, None, False),
    ("tts.length_scale", 0, None, True),
    ("audio.sample_rate", 8000, 192000, False),
    ("mqtt.keepalive_s", 1, 65535, False), ("mqtt.command_timeout_s", 0, None, True),
    ("mqtt.queue_max", 1, None, False),
    ("mqtt.settle_s", 0, None, False), ("mqtt.min_match", 0, 1, False),
    # bounded above: a timedelta holds at most 999,999,999 days, and 1e300 failed the reload half-applied
    ("alarms.grace_s", 0, 604_800, False), ("alarms.repeat_s", 0, 86_400, True),
    ("alarms.max_rings", 1, None, False),
    ("alarms.snooze_minutes", 1, 60, False),
    ("policy.confirm_timeout_s", 0, None, True), ("policy.confirm_many", 0, None, False),
    ("policy.audit_max_bytes", 1024, None, False),
    ("policy.audit_keep", 1, None, False),
)


def _check_finite(cfg: Config) -> None:
    """No number of any section is `nan` or `inf`: nan passes every comparison of a range check unnoticed (and a
    timeout of nan is no timeout), inf fails where it is made a count (int(inf) raises)."""
    for sect in dataclasses.fields(cfg):
        parts = getattr(cfg, sect.name)
        for i, part in enumerate(parts if isinstance(parts, list) else [parts]):
            if not dataclasses.is_dataclass(part):
                continue
            for f in dataclasses.fields(part):
                value = getattr(part, f.name)
                if isinstance(value, float) and not math.isfinite(value):
                    where = f"{sect.name}[{i}]" if isinstance(parts, list) else sect.name
                    raise ConfigError(f"must be a finite number, got {value!r}", f"{where}.{f.name}")


def _check_ranges(cfg: Config) -> None:
    for key, low, high, above in _RANGES:
        section, name = key.split(".")
        value = getattr(getattr(cfg, section), name)
        if isinstance(value, float) and not math.isfinite(value):
            raise ConfigError(f"must be a finite number, got {value!r}", key)
        if above and not value > low:
            raise ConfigError(f"must be above {low:g}, got {value!r}", key)
        if value < low or (high is not None and value > high):
            bounds = f"between {low:g} and {high:g}" if high is not None else f"at least {low:g}"
            raise ConfigError(f"must be {bounds}, got {value!r}", key)


def _env_overrides(environ: typing.Mapping[str, str]) -> dict[str, Any]:
    """HEARTHD__STT__BEAM_SIZE=2 → {"stt": {"beam_size": 2}}; values are parsed as TOML, else taken as text."""
    out: dict[str, Any] = {}
    for name, raw in environ.items():
        if not name.startswith("HEARTHD__"):
            continue
        parts = [p.lower() for p in name[len("HEARTHD__"):].split("__") if p]
        if len(parts) < 2:
            continue
        try:
            value = tomllib.loads(f"v = {raw}")["v"]
        except ValueError:  # TOMLDecodeError, or an integer of 4,300 digits and more (int() refuses it)
            value = raw
        except RecursionError:  # "[[[[…": tomllib recurses per level
            raise ConfigError(f"nested too deeply ({len(raw)} characters)", ".".join(parts)) from None
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return out


MAX_CONFIG_BYTES = 4 * 1024 * 1024  # a home's config is a few kB; more is read no further


def _read_config(file: Path) -> str:
    """The config file's text (newlines as text mode reads them): a regular file, or a character device such as
    /dev/null, of at most MAX_CONFIG_BYTES. Opened without blocking and checked once open: a FIFO put where the
    config was stalled the daemon's reload (its event loop) for ever, and /dev/zero was read until memory ran out."""
    try:
        fd = os.open(file, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
        try:
            mode = os.fstat(fd).st_mode
            if not (stat.S_ISREG(mode) or stat.S_ISCHR(mode)):
                kind = ("a directory" if stat.S_ISDIR(mode) else "a FIFO" if stat.S_ISFIFO(mode)
                        else f"file type {stat.S_IFMT(mode):#o}")
                raise ConfigError(f"cannot read: {kind}, not a regular file", str(file))
            with open(fd, "rb", closefd=False) as f:
                raw = f.read(MAX_CONFIG_BYTES + 1)
        finally:
            os.close(fd)
    except OSError as e:
        raise ConfigError(f"cannot read: {e.strerror}", str(file)) from None
    if len(raw) > MAX_CONFIG_BYTES:
        raise ConfigError(f"larger than {MAX_CONFIG_BYTES} bytes: not a config file", str(file))
    return raw.decode("utf-8").replace("\r\n", "\n").replace("\r", "\n")


def load_config(path: str | Path | None = None, environ: typing.Mapping[str, str] | None = None) -> Config:
    """Defaults, then the TOML file (an explicit path must exist), then environment overrides."""
    environ = os.environ if environ is None else environ
    cfg = Config()
    explicit = path is not None or bool(environ.get("HEARTHD_CONFIG"))
    file = Path(path) if path is not None else Path(environ.get("HEARTHD_CONFIG") or default_config_path())
    try:
        exists = file.exists()
    except OSError as e:  # a directory on the way that may not be searched (EACCES): Path.exists raises it
        raise ConfigError(f"cannot read: {e.strerror}", str(file)) from None
    if exists:
        try:
            data = tomllib.loads(_read_config(file))
        except tomllib.TOMLDecodeError as e:
            raise ConfigError(f"not valid TOML: {e}", str(file)) from e
        except RecursionError:  # "languages = [[[[…": tomllib recurses per level; said, not a 3,000-line traceback
            raise ConfigError("not valid TOML: arrays or tables nested too deeply", str(file)) from None
        except UnicodeDecodeError as e:  # a binary file, or one saved in another encoding
            raise ConfigError(f"not a UTF-8 TOML file (byte 0x{e.object[e.start]:02x} at offset {e.start})",
                              str(file)) from None
        except ValueError as e:  # an integer of 4,300 digits and more: tomllib's int() refuses it
            raise ConfigError(f"not valid TOML: {e}", str(file)) from None
        try:
            _apply(cfg, data, "")
        except ConfigError as e:
            raise ConfigError(f"{e.message} (in {file})", e.key) from None
        cfg.source = str(file)
    elif explicit:
        raise ConfigError("config file does not exist", str(file))
    overrides = _env_overrides(environ)
    if overrides:
        _apply(cfg, overrides, "")
        cfg.source += " + environment"
    _validate(cfg)
    return cfg


MASK = "********"
_SECRET = re.compile(r"password|passwd|secret|token|credential|api_key", re.IGNORECASE)


def masked_dict(cfg: Config) -> dict[str, Any]:
    """`cfg.to_dict()` with every secret that is set (mqtt.password, any text key named like a password, token or
    secret) shown as MASK; an empty one stays empty, so the output still says whether it is set."""
    data = cfg.to_dict()
    for section in data.values():
        for values in section if isinstance(section, list) else [section]:
            for key, value in values.items():
                if isinstance(value, str) and value and _SECRET.search(key):
                    values[key] = MASK
    return data


def dump_toml(cfg: Config) -> str:
    """The effective config as TOML (what `hearthd config show` prints), its secrets masked. A list of tables is
    printed as `[[satellites]]` blocks, one per item (tomli-w would inline short ones); its items are flat."""
    import tomli_w

    data = masked_dict(cfg)
    out = [f"# effective configuration (from {cfg.source})\n\n",
           tomli_w.dumps({k: v for k, v in data.items() if not isinstance(v, list)})]
    for section, items in data.items():
        if isinstance(items, list):
            out.extend(f"\n[[{section}]]\n" + tomli_w.dumps(item) for item in items)
    return "".join(out)
