"""The engine registries: one per stage (speech to text, the voices, the wake word, voice activity, the agent model),
each a name → how to build it, what it is (`describe`) and its `hearthd doctor` check.

Config values name registered engines (`stt.engine`, `tts.engine`, `wake.engine`, `vad.engine`, `agent.engine`: the
config refuses a name no engine registered, and asks a remote one for its `uri`); the components build the stage with
the engine's factory; the doctor runs the engine's own check. Nothing else names an engine, so adding one is its
module and one `register` call: the built-in ones are registered at the end of this file (their factories import
their modules only when built: config and doctor stay light); another module registers its own the same way.

What a factory returns, per stage (the daemon's Protocols): stt → SpeechToText; tts → Voices; wake → a function of the
wake word's name → WakeWordDetector; vad → a new SpeechProbability-like callable (one per stream: each keeps its own
state); agent → Agent. Factories get the daemon's Components (its config, model store, tool registry, home names and
inference gate).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .assets import AssetStore
    from .config import Config
    from .doctor import Finding

STAGES = ("stt", "tts", "wake", "vad", "agent")

Check = Callable[["Config", "AssetStore | None", dict[str, Any]], "list[Finding]"]


def _no_check(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
    return []


@dataclass(frozen=True)
class Engine:
    """One way of running a stage."""

    stage: str
    name: str
    build: Callable[..., Any]  # (components) → the stage's object; for "wake", (components, wake word) → a detector
    summary: str  # what it is, one line ("faster-whisper on this machine")
    remote: bool = False  # served elsewhere: needs `<stage>.uri`, and no model on this machine
    # `hearthd doctor`'s findings for it: (config, model store or None, a dict shared by one doctor run, so a service
    # several stages use is asked once)
    check: Check = _no_check
    uri_problem: Callable[[str], str] | None = None  # what is wrong with a `<stage>.uri` for it ("" when nothing)

    def describe(self) -> str:
        """`stage: name — summary` (hearthd doctor, hearthd engines)."""
        return f"{self.stage}: {self.name} — {self.summary}" + (" (needs a uri)" if self.remote else "")


_ENGINES: dict[str, dict[str, Engine]] = {stage: {} for stage in STAGES}


def register(engine: Engine) -> Engine:
    """Add an engine to its stage's registry (a name taken already is an error: one engine per name)."""
    if engine.stage not in _ENGINES:
        raise ValueError(f"no stage {engine.stage!r} (stages: {', '.join(STAGES)})")
    if engine.name in _ENGINES[engine.stage]:
        raise ValueError(f"{engine.stage} engine {engine.name!r} registered twice")
    _ENGINES[engine.stage][engine.name] = engine
    return engine


def unregister(stage: str, name: str) -> None:
    """Take an engine out of its registry (a test's own engine, when the test ends)."""
    _ENGINES[stage].pop(name, None)


def names(stage: str) -> tuple[str, ...]:
    """The engines registered for `stage`, in registration order."""
    return tuple(_ENGINES[stage])


def engine(stage: str, name: str) -> Engine:
    """The engine `name` of `stage`; KeyError naming the registered ones when there is none."""
    try:
        return _ENGINES[stage][name]
    except KeyError:
        raise KeyError(f"no {stage} engine {name!r} (registered: {', '.join(names(stage))})") from None


def selected(cfg: Config, stage: str) -> Engine:
    """The engine the config chose for `stage` (`<stage>.engine`)."""
    return engine(stage, getattr(cfg, stage).engine)


# -- the built-in engines -----------------------------------------------------------------------------------------


def _whisper(components: Any) -> Any:
    from dataclasses import replace

    from .audio.stt import WhisperSpeechToText
    from .cores import threads_for

    cfg = components.cfg
    path = components.store.resolve(cfg.stt.model, explicit_path=cfg.stt.model_path or None)
    # stt.threads = 0: the cores free when it loads (CTranslate2 fixes its pool then)
    return WhisperSpeechToText(path, replace(cfg.stt, threads=threads_for(cfg.stt.threads)),
                               components.home_names if cfg.stt.bias else None)


def _wyoming_stt(components: Any) -> Any:
    from .audio.remote import WyomingSpeechToText

    cfg = components.cfg
    return WyomingSpeechToText(cfg.stt.uri, cfg.stt, cfg.general.language)


def _local_voices(components: Any) -> Any:
    from .daemon.components import voice_bank

    return voice_bank(components.cfg, components.store)


def _wyoming_voices(components: Any) -> Any:
    from .audio.remote import WyomingVoices

    return WyomingVoices(components.cfg.tts.uri, components.cfg.tts.voice)


def _micro(components: Any, name: str) -> Any:
    from .audio.wake import MicroWakeWordDetector

    return MicroWakeWordDetector(name)


def _wyoming_wake(components: Any, name: str) -> Any:
    from .audio.remote import WyomingWakeWordDetector

    return WyomingWakeWordDetector(components.cfg.wake.uri, name)


def _silero(components: Any) -> Any:
    from .audio.vad import SpeechProbability

    return SpeechProbability()


def _local_agent(components: Any) -> Any:
    from .agent.agent import Agent
    from .agent.model import ChatModel
    from .daemon.components import prompt_cache_dir

    cfg = components.cfg
    path = components.store.resolve(cfg.agent.model, explicit_path=cfg.agent.model_path or None)
    return Agent.configured(ChatModel(path, cfg.agent), components.tools, cfg.agent, state_dir=prompt_cache_dir(),
                            max_calls=cfg.agent.max_calls, max_turn_s=cfg.agent.max_turn_s,
                            gate=components.inference.turn)


def _server_agent(components: Any) -> Any:
    from .agent.agent import Agent
    from .agent.server import ServerModel

    cfg = components.cfg
    path = components.store.resolve(cfg.agent.model, explicit_path=cfg.agent.model_path or None)
    model = ServerModel(path, cfg.agent, cfg.agent.uri, cfg.agent.check_uri)
    return Agent.configured(model, components.tools, cfg.agent, state_dir=None, max_calls=cfg.agent.max_calls,
                            max_turn_s=cfg.agent.max_turn_s,
                            gate=components.inference.turn)


def _wyoming_uri(uri: str) -> str:
    from .config import wyoming_uri_problem

    return wyoming_uri_problem(uri)


def _server_uri(uri: str) -> str:
    from .agent.server import server_uri_problem

    return server_uri_problem(uri)


def _doctor(name: str, *args: Any) -> Check:
    """The doctor's check `name` (hearthd.doctor), imported when doctor runs."""

    def check(cfg: Config, store: AssetStore | None, memo: dict[str, Any]) -> list[Finding]:
        from . import doctor

        return list(getattr(doctor, name)(cfg, store, memo, *args))

    return check


register(Engine("stt", "whisper", _whisper, "faster-whisper on this machine (stt.model)",
                check=_doctor("local_stt_findings")))
register(Engine("stt", "wyoming", _wyoming_stt, "a Wyoming asr service (stt.uri)", remote=True,
                check=_doctor("remote_findings", "stt"), uri_problem=_wyoming_uri))
register(Engine("tts", "local", _local_voices, "the voices of tts.voices on this machine (Piper, Kokoro, festival, "
                "espeak-ng)", check=_doctor("local_voice_findings")))
register(Engine("tts", "wyoming", _wyoming_voices, "a Wyoming tts service (tts.uri, tts.voice)", remote=True,
                check=_doctor("remote_findings", "tts"), uri_problem=_wyoming_uri))
register(Engine("wake", "micro", _micro, "microWakeWord on this machine (wake.model)",
                check=_doctor("local_wake_findings")))
register(Engine("wake", "wyoming", _wyoming_wake, "a Wyoming wake service (wake.uri, wake.model)", remote=True,
                check=_doctor("remote_findings", "wake"), uri_problem=_wyoming_uri))
register(Engine("vad", "silero", _silero, "silero VAD, as shipped in faster-whisper"))
register(Engine("agent", "local", _local_agent, "llama-cpp-python on this machine (agent.model)",
                check=_doctor("local_agent_findings")))
register(Engine("agent", "server", _server_agent, "an inference server (agent.uri: llama-cpp-python's "
                "llama_cpp.server); the vocabulary and chat template read here from agent.model", remote=True,
                check=_doctor("server_agent_findings"), uri_problem=_server_uri))
