"""One error base, and turns that end well whatever breaks: every exception class in hearthd is a HearthdError
with a code and a spoken apology that exists in every language; each stage of a turn (speech to text, the agent,
a tool, the voice, the speaker) that raises what nobody expected (a library's RuntimeError, a KeyError) ends that
turn with exactly one `error` event carrying the stage's code and an apology in the turn's language, and the
next turn works. Small fakes of the stages' Protocols stand in for the models (no model is loaded)."""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import importlib
import inspect
import pkgutil
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import hearthd
from hearthd.audio.io import MemorySink, WavSource
from hearthd.audio.stt import Transcript
from hearthd.audio.tts import Speech
from hearthd.audio.vad import Endpointer
from hearthd.audio.wavio import SAMPLE_RATE
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.dialogue import LOCAL
from hearthd.daemon.live import LiveLoop
from hearthd.daemon.pipeline import Pipeline
from hearthd.errors import HearthdError
from hearthd.events import EventType, Trace
from hearthd.locale import languages, phrase, toml

from .test_remote_engines import MARKER, FakeWake  # the marker-block wake word the live-loop tests share

ASK = {"en": "what time is it", "ru": "который час", "hi": "कितने बजे हैं"}
BLOCK = 480  # the WavSource's 30 ms block


# -- the one base ---------------------------------------------------------------------------------------------------


def every_error_class() -> list[type[BaseException]]:
    for info in pkgutil.walk_packages(hearthd.__path__, "hearthd."):
        if not info.name.endswith("__main__"):
            importlib.import_module(info.name)
    found: dict[str, type[BaseException]] = {}
    for name, module in list(__import__("sys").modules.items()):
        if name == "hearthd" or name.startswith("hearthd."):
            for _, value in inspect.getmembers(module, inspect.isclass):
                if issubclass(value, BaseException) and value.__module__.startswith("hearthd"):
                    found[f"{value.__module__}.{value.__qualname__}"] = value
    return [found[k] for k in sorted(found)]


def has_phrase(lang: str, key: str) -> bool:
    table: Any = toml(lang, "phrases.toml")
    for part in key.split("."):
        if not isinstance(table, dict) or part not in table:
            return False
        table = table[part]
    return isinstance(table, str)


def test_every_exception_class_is_a_hearthd_error_with_a_code_and_an_apology_in_every_language() -> None:
    classes = every_error_class()
    assert len(classes) >= 30  # the walk found them (35 when this was written)
    langs = sorted(languages())  # every language hearthd has (the locale folders)
    assert {"en", "ru", "hi"} <= set(langs)
    for cls in classes:
        if cls.__name__ == "_Malformed":  # private.py's sqlite3.DatabaseError, never seen outside the state store
            continue
        assert issubclass(cls, HearthdError), cls
        assert isinstance(cls.code, str) and cls.code.strip(), cls
        for lang in langs:
            assert has_phrase(lang, cls.phrase_key), (cls, lang, cls.phrase_key)


def test_the_base_keeps_the_old_signatures_and_wraps_what_it_does_not_know() -> None:
    from hearthd.assets import AssetMissing
    from hearthd.audio.stt import SttError
    from hearthd.daemon.pipeline import PipelineError
    from hearthd.private import StateWriteError
    from hearthd.tools.registry import SchemaError

    e = SttError("the service is down")
    assert (e.code, e.message, e.phrase_key, str(e)) == ("stt-unavailable", "the service is down", "error.internal",
                                                       "the service is down")
    assert SttError("x", "stt-failed").code == "stt-failed" and SttError.code == "stt-unavailable"
    assert (AssetMissing("no pack").code, AssetMissing("no pack", "asset-x").code) == ("asset-missing", "asset-x")
    p = PipelineError("text-too-long", "too long", "agent.too_much")
    assert (p.code, p.message, p.phrase_key) == ("text-too-long", "too long", "agent.too_much")
    assert StateWriteError("state-disk-full", "full").phrase_key == "error.disk_full"
    assert str(SchemaError("must be a string", "$.time")) == "$.time: must be a string"
    cause = KeyError("slot")
    wrapped = SttError.wrapping(cause, "stt-failed")
    assert isinstance(wrapped, SttError) and wrapped.code == "stt-failed" and wrapped.__cause__ is cause
    assert wrapped.message == "KeyError: 'slot'"
    assert SttError.wrapping(p, "stt-failed") is p  # a typed error already says what failed


# -- fakes of the stages' Protocols -----------------------------------------------------------------------------------


class Broken:
    """Raises `error` while it is set: an unexpected failure that the next turn no longer meets."""

    def __init__(self) -> None:
        self.error: Exception | None = None

    def check(self) -> None:
        if self.error is not None:
            raise type(self.error)(*self.error.args)  # a new one each time, as a library raises it


class FakeStt(Broken):
    def __init__(self, lang: str = "en") -> None:
        super().__init__()
        self.lang = lang

    def transcribe(self, audio: np.ndarray, language: str | None = None, fallback: str | None = None) -> Transcript:
        self.check()
        lang = language or fallback or self.lang  # the conversation's language when nothing says otherwise
        return Transcript(ASK[lang], lang, 1.0, "forced" if language else "detected")


class FakeVoices(Broken):
    def __init__(self) -> None:
        super().__init__()
        self.said: list[tuple[str, str]] = []

    def synthesize(self, text: str, lang: str) -> Speech:
        self.check()
        self.said.append((text, lang))
        return Speech(np.full(int(0.2 * SAMPLE_RATE), 500, dtype=np.int16), SAMPLE_RATE)


class BrokenSink(MemorySink):
    """A speaker that fails (as a sound device unplugged mid-reply does) while `error` is set, for replies only."""

    def __init__(self) -> None:
        super().__init__()
        self.error: Exception | None = None

    async def play(self, audio: np.ndarray, rate: int) -> bool:
        if self.error is not None and rate == SAMPLE_RATE:  # the chimes play at 22050 Hz
            raise type(self.error)(*self.error.args)
        return await super().play(audio, rate)


class Loud:
    """A speech probability without a model: loud windows are speech."""

    def reset(self) -> None:
        pass

    def __call__(self, window: np.ndarray) -> float:
        return 1.0 if float(np.sqrt(np.mean(np.square(window)))) > 0.05 else 0.0


def tone(seconds: float) -> np.ndarray:
    n = int(seconds * SAMPLE_RATE)
    return (8000 * np.sin(2 * np.pi * 300 * np.arange(n) / SAMPLE_RATE)).astype(np.int16)


@pytest.fixture
def home(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Components:
    """A hearthd without models: the templates answer, the stages are fakes (in `home.fakes`)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    cfg = copy.deepcopy(base_config)
    cfg.mqtt.enabled = cfg.dbus.enabled = False
    cfg.agent.model = cfg.agent.model_path = ""
    components = Components(cfg)
    stt, voices = FakeStt(), FakeVoices()
    components._cache.update(wake=FakeWake(), stt=stt, vad=Endpointer(cfg.vad, Loud()))
    monkeypatch.setattr(components, "speech_probability", Loud)  # the "stop" listener while it speaks
    components.voices = voices
    components.fakes = {"stt": stt, "voices": voices}  # type: ignore[attr-defined]
    return components


def errors(trace: Trace) -> list[str]:
    return [e.code for e in trace.of_type(EventType.ERROR)]


def replies(trace: Trace) -> list[tuple[str, str]]:
    return [(e.text, e.lang) for e in trace.of_type(EventType.REPLY)]


async def a_turn_works(home: Components, lang: str) -> None:
    """The next turn, with nothing broken: the time, said in `lang`, and no error."""
    trace = Trace()
    result = await Pipeline(home, trace).run_text(ASK[lang], speak=True)
    assert errors(trace) == [] and result.error == ""
    assert [c.name for c in trace.of_type(EventType.TOOL_CALL)] == ["get_time"]
    assert result.lang == lang and result.reply and result.speech is not None


def utterance() -> np.ndarray:
    return np.concatenate([np.zeros(SAMPLE_RATE // 2, dtype=np.int16), tone(1.0),
                           np.zeros(SAMPLE_RATE, dtype=np.int16)])


# -- the pipeline, stage by stage --------------------------------------------------------------------------------------


@pytest.mark.parametrize("lang", ["en", "ru"])
@pytest.mark.parametrize("error", [RuntimeError("the decoder crashed"), KeyError("tokens")],
                         ids=["RuntimeError", "KeyError"])
async def test_speech_to_text_that_breaks(home: Components, lang: str, error: Exception) -> None:
    home.cfg.wake.enabled = False
    stt = home.fakes["stt"]  # type: ignore[attr-defined]
    stt.error = error
    home.dialogues.get(LOCAL).lang = lang  # the conversation's language: the apology's, no words were heard
    trace = Trace()
    result = await Pipeline(home, trace).run_audio(utterance())
    assert errors(trace) == ["stt-failed"] and result.error == "stt-failed"
    assert type(error).__name__ in trace.of_type(EventType.ERROR)[0].message
    assert replies(trace) == [(phrase(lang, "error.internal"), lang)] and result.speech is not None
    stt.error = None
    trace = Trace()
    result = await Pipeline(home, trace).run_audio(utterance(), language=lang)
    assert errors(trace) == [] and [c.name for c in trace.of_type(EventType.TOOL_CALL)] == ["get_time"]
    await a_turn_works(home, lang)


@pytest.mark.parametrize("lang", ["en", "hi"])
async def test_an_agent_that_breaks(home: Components, lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    router = home.router()

    def decide(*args: Any) -> Any:
        raise KeyError("slot")  # a template's missing slot, a library's bug: nothing the router handles

    monkeypatch.setattr(router, "decide", decide)
    trace = Trace()
    result = await Pipeline(home, trace).run_text(ASK[lang], speak=True)
    assert errors(trace) == ["agent-failed"] and result.error == "agent-failed"
    assert replies(trace) == [(phrase(lang, "error.internal"), lang)]
    assert result.speech is not None and home.fakes["voices"].said[-1] == (result.reply, lang)  # type: ignore[attr-defined]
    assert not trace.of_type(EventType.TOOL_CALL)
    monkeypatch.undo()
    await a_turn_works(home, lang)


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_a_tool_that_breaks(home: Components, lang: str, monkeypatch: pytest.MonkeyPatch) -> None:
    tool = home.tools.get("get_time")

    async def handler(args: dict[str, Any]) -> Any:
        raise RuntimeError("the clock library broke")

    monkeypatch.setitem(home.tools._tools, "get_time", dataclasses.replace(tool, handler=handler))
    trace = Trace()
    result = await Pipeline(home, trace).run_text(ASK[lang], speak=True)
    assert errors(trace) == ["tool-failed"]
    assert "RuntimeError: the clock library broke" in trace.of_type(EventType.ERROR)[0].message
    (tool_result,) = trace.of_type(EventType.TOOL_RESULT)
    assert tool_result.ok is False
    assert replies(trace) == [(phrase(lang, "error.tool_failed"), lang)] and result.speech is not None
    monkeypatch.undo()
    await a_turn_works(home, lang)


@pytest.mark.parametrize("lang", ["en", "ru"])
async def test_a_voice_that_breaks(home: Components, lang: str) -> None:
    voices = home.fakes["voices"]  # type: ignore[attr-defined]
    voices.error = RuntimeError("onnxruntime: bad allocation")
    trace = Trace()
    result = await Pipeline(home, trace).run_text(ASK[lang], speak=True)
    assert errors(trace) == ["tts-failed"]
    ((text, reply_lang),) = replies(trace)
    assert reply_lang == lang and text and result.speech is None  # the answer stands, in words
    assert [c.name for c in trace.of_type(EventType.TOOL_CALL)] == ["get_time"]
    voices.error = None
    await a_turn_works(home, lang)


async def test_something_that_breaks_between_stages_is_one_internal_error(home: Components,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    import hearthd.daemon.pipeline as pipeline

    def held_choice(*args: Any) -> Any:
        raise TypeError("held_choice() got an unexpected keyword")

    monkeypatch.setattr(pipeline, "held_choice", held_choice)
    trace = Trace()
    result = await Pipeline(home, trace).run_text(ASK["ru"], speak=True)
    assert errors(trace) == ["internal"] and result.error == "internal"
    assert replies(trace)[-1] == (phrase("ru", "error.internal"), "ru")
    monkeypatch.undo()
    await a_turn_works(home, "ru")


# -- the live loop: the same, and the speaker --------------------------------------------------------------------------


async def live_turns(home: Components, sink: MemorySink, between: Any) -> tuple[Trace, LiveLoop]:
    """Two spoken turns in the live loop ("the wake word", a second of speech); `between()` runs after the first."""
    quiet = np.random.default_rng(1).normal(0, 8, 20 * BLOCK).astype(np.int16)
    said = np.concatenate([np.full(BLOCK, MARKER, dtype=np.int16), tone(1.0),
                           np.zeros(2 * SAMPLE_RATE, dtype=np.int16)])
    source = WavSource(np.concatenate([quiet, said]), tail_s=None)
    trace = Trace()
    loop = LiveLoop(home, trace, source, sink)
    stopping = asyncio.Event()
    task = asyncio.create_task(loop.run(stopping))
    try:
        async with asyncio.timeout(40):
            while loop.turns_done < 1:
                await asyncio.sleep(0.05)
            between()
            source.append(np.concatenate([quiet, said]))
            while loop.turns_done < 2:
                await asyncio.sleep(0.05)
    finally:
        stopping.set()
        await asyncio.wait_for(task, 30)
    return trace, loop


async def test_live_speech_to_text_that_breaks(home: Components) -> None:
    stt = home.fakes["stt"]  # type: ignore[attr-defined]
    stt.error = RuntimeError("the decoder crashed")
    home.dialogues.get(LOCAL).lang = "ru"

    def mend() -> None:
        stt.error = None

    trace, loop = await live_turns(home, MemorySink(), mend)
    assert errors(trace) == ["stt-failed"]
    first, second = replies(trace)
    assert first == (phrase("ru", "error.internal"), "ru")  # said (the fake voice heard it) in the turn's language
    assert (first[0], "ru") in home.fakes["voices"].said  # type: ignore[attr-defined]
    assert second[1] == "ru" and [c.name for c in trace.of_type(EventType.TOOL_CALL)] == ["get_time"]


async def test_live_a_speaker_that_breaks(home: Components) -> None:
    sink = BrokenSink()
    sink.error = RuntimeError("PortAudio: stream lost")

    def mend() -> None:
        sink.error = None

    trace, loop = await live_turns(home, sink, mend)
    assert errors(trace) == ["audio-out-failed"]
    assert "PortAudio" in trace.of_type(EventType.ERROR)[0].message
    assert [lang for _, lang in replies(trace)] == ["en", "en"]
    assert [c.name for c in trace.of_type(EventType.TOOL_CALL)] == ["get_time", "get_time"]
    spoken = [audio for audio, rate, _ in sink.played if rate == SAMPLE_RATE]
    assert spoken  # the second reply was heard
