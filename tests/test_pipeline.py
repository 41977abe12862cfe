"""The real chain on the committed sample utterances, with the real embedded models (loaded once)."""

from __future__ import annotations

import asyncio
import json
import math
import subprocess
import sys
import wave
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd.agent.relevance import SIDE_CONTEXT_TOKENS
from hearthd.audio.wavio import read_wav
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.locale import phrase

from .conftest import SAMPLES

pytestmark = pytest.mark.models

CASES = [
    # sample, language, tool, arguments, words the transcript must contain (any of)
    ("en_alarm_0730.wav", "en", "set_alarm", {"time": "07:30"}, ["7:30", "730", "seven thirty", "7.30"]),
    ("en_wakeup_0600.wav", "en", "set_alarm", {"time": "06:00"}, ["6", "six"]),
    ("ru_alarm_0700.wav", "ru", "set_alarm", {"time": "07:00"}, ["7", "семь"]),
]


def run_audio(components, audio: np.ndarray) -> tuple[Trace, object]:  # type: ignore[no-untyped-def]
    trace = Trace()
    result = asyncio.run(Pipeline(components, trace).run_audio(audio))
    return trace, result


def script_of(text: str) -> set[str]:
    scripts = set()
    for ch in text:
        if "\u0900" <= ch <= "\u097f":
            scripts.add("hi")
        elif "\u0400" <= ch <= "\u04ff":
            scripts.add("ru")
        elif ch.isascii() and ch.isalpha():
            scripts.add("en")
    return scripts


@pytest.mark.parametrize("sample,lang,tool,arguments,words", CASES, ids=[c[0] for c in CASES])
def test_sample_end_to_end(components, sample, lang, tool, arguments, words) -> None:  # type: ignore[no-untyped-def]
    trace, result = run_audio(components, read_wav(SAMPLES / sample))
    kinds = [e.type for e in trace.events]
    assert kinds.index(EventType.WAKE) < kinds.index(EventType.SPEECH_START) < kinds.index(EventType.TRANSCRIPT)
    (transcript,) = trace.of_type(EventType.TRANSCRIPT)
    assert transcript.lang == lang
    assert any(w in transcript.text.lower() for w in words), transcript.text
    calls = trace.of_type(EventType.TOOL_CALL)
    assert [(c.name, c.arguments) for c in calls] == [(tool, arguments)], transcript
    assert 0.5 < calls[0].confidence <= 1.0  # the first-token probability of the chosen tool name
    (reply,) = trace.of_type(EventType.REPLY)
    assert reply.lang == lang and lang in script_of(reply.text)
    assert result.speech is not None and result.speech.seconds > 0.5  # type: ignore[attr-defined]
    assert np.abs(result.speech.audio).max() > 1000  # type: ignore[attr-defined]  # audible, not silence
    stages = {e.stage for e in trace.of_type(EventType.TIMING)}
    assert {"wake", "vad", "stt", "agent", "tool", "tts", "end_of_speech_to_reply_audio"} <= stages


def test_hindi_sample_is_heard_as_hindi_and_never_acted_on_wrongly(components) -> None:  # type: ignore[no-untyped-def]
    """espeak-ng's robotic Hindi is beyond Whisper base (see samples/README.md): the chain must still route it
    as Hindi, in Devanagari, answer in Hindi, and either set the right alarm or set none."""
    trace, result = run_audio(components, read_wav(SAMPLES / "hi_alarm_0600.wav"))
    (transcript,) = trace.of_type(EventType.TRANSCRIPT)
    assert transcript.lang == "hi" and "hi" in script_of(transcript.text)
    calls = [(c.name, c.arguments) for c in trace.of_type(EventType.TOOL_CALL)]
    assert calls in ([], [("set_alarm", {"time": "06:00"})])
    (reply,) = trace.of_type(EventType.REPLY)
    assert reply.lang == "hi" and "hi" in script_of(reply.text)
    assert result.speech is not None  # type: ignore[attr-defined]


def test_alarm_really_exists_after_the_spoken_command(components) -> None:  # type: ignore[no-untyped-def]
    before = len(components.alarms.pending())
    run_audio(components, read_wav(SAMPLES / "en_alarm_0730.wav"))
    assert len(components.alarms.pending()) == before + 1
    assert "07:30" in [a.hhmm for a in components.alarms.pending()]


def test_noise_without_wake_word_is_an_error_with_a_spoken_apology(components) -> None:  # type: ignore[no-untyped-def]
    trace, result = run_audio(components, read_wav(SAMPLES / "en_noise_only.wav"))
    (error,) = trace.of_type(EventType.ERROR)
    assert error.code == "wake-not-detected"
    assert not trace.of_type(EventType.TOOL_CALL)
    assert trace.of_type(EventType.REPLY)[0].text == "I didn't hear the wake word."
    assert result.speech is not None  # type: ignore[attr-defined]


def test_wake_word_then_silence_says_nothing_was_heard(components) -> None:  # type: ignore[no-untyped-def]
    audio = read_wav(SAMPLES / "en_alarm_0730.wav")
    trace = Trace()
    pipeline = Pipeline(components, trace)
    detector = components.wake()
    detector.reset()
    hit = detector.process(audio)
    assert hit is not None
    cut = np.concatenate([audio[: hit.sample], np.zeros(16000 * 3, dtype=np.int16)])
    asyncio.run(pipeline.run_audio(cut))
    assert [e.code for e in trace.of_type(EventType.ERROR)] == ["stt-no-speech"]


def test_tiny_audio_is_rejected_cleanly(components) -> None:  # type: ignore[no-untyped-def]
    trace, _ = run_audio(components, np.zeros(100, dtype=np.int16))
    assert trace.of_type(EventType.ERROR)[0].code == "audio-too-short"


@pytest.mark.parametrize("text,args", [
    ("set an alarm for 6 am", {"time": "06:00"}),
    ("wake me up at seven thirty", {"time": "07:30"}),
    ("поставь будильник на семь тридцать утра", {"time": "07:30"}),
    ("सुबह छह बजे का अलार्म लगाओ", {"time": "06:00"}),
    ("कल सुबह साढ़े छह बजे का अलार्म लगा दो", {"time": "06:30", "day": "tomorrow"}),
])
def test_text_request_sets_alarm(components, text: str, args: dict) -> None:  # type: ignore[no-untyped-def, type-arg]
    trace = Trace()
    result = asyncio.run(Pipeline(components, trace).run_text(text))
    assert trace.of_type(EventType.REPLY)[0].lang == result.lang  # type: ignore[attr-defined]
    calls = trace.of_type(EventType.TOOL_CALL)
    assert [(c.name, c.arguments) for c in calls] == [("set_alarm", args)]


@pytest.mark.parametrize("text,lang,kind", [("what is the capital of France", "en", "knowledge"),
                                            ("tell me a joke", "en", "chat"),
                                            ("какая столица Франции", "ru", "knowledge")])
def test_out_of_scope_question_calls_no_tool(components, text: str, lang: str, kind: str) -> None:  # type: ignore[no-untyped-def]
    trace = Trace()
    result = asyncio.run(Pipeline(components, trace).run_text(text))
    assert not trace.of_type(EventType.TOOL_CALL)
    assert trace.of_type(EventType.ABSTAIN)
    assert result.reply == phrase(lang, f"decline.{kind}")  # type: ignore[attr-defined]  # why (agent/declines.py)


def test_cli_run_writes_trace_and_reply_wav(tmp_path: Path) -> None:
    out = tmp_path / "reply.wav"
    proc = subprocess.run(
        [sys.executable, "-m", "hearthd", "run", "--input", str(SAMPLES / "en_alarm_0730.wav"),
         "--output", str(out), "--json"],
        capture_output=True, text=True, timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    events = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{")]
    assert all("type" in e and "t" in e for e in events)
    calls = [e for e in events if e["type"] == "tool_call"]
    assert calls and calls[0]["arguments"] == {"time": "07:30"}
    with wave.open(str(out)) as w:
        assert w.getnframes() > w.getframerate() * 0.5


def fresh_process(model: Any) -> None:
    """The model as a new process finds it: an empty cache and no prefix state kept in memory (the relevance
    check's side context too)."""
    for context in (model, model.side(SIDE_CONTEXT_TOKENS)):
        context.llm.reset()
        context._snapshots.clear()
        context._held.clear()


def test_saved_prompt_prefix_gives_the_same_decision(components, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """The system prompt + tool catalogue state, and the relevance check's examples, saved to disk and loaded back
    (what a one-shot `hearthd ask` does) decide exactly as fresh ones, with neither evaluated again."""
    agent = components.agent()
    saved_dir = agent.state_dir
    try:
        agent.state_dir = tmp_path
        fresh_process(agent.model)
        assert agent.prepare(["en"]) == {"relevance": "evaluated", "en": "evaluated"}
        assert len(list(tmp_path.glob("*.kv"))) == 2
        first = agent.decide("set an alarm for 6 am", "en")
        fresh_process(agent.model)  # a restart: the saved files are all that is left
        assert agent.prepare(["en"]) == {"relevance": "loaded", "en": "loaded"}
        again = agent.decide("set an alarm for 6 am", "en")
        assert [(c.name, c.arguments) for c in again.calls] == [(c.name, c.arguments) for c in first.calls]
        assert first.relevance is not None and again.relevance == first.relevance
        fresh_process(agent.model)  # no warm-up at all (a one-shot ask): the turn loads both instead
        side = agent.model.side(SIDE_CONTEXT_TOKENS)
        before, before_side = agent.model.evaluated, side.evaluated
        agent.decide("set an alarm for 6 am", "en")
        # the request and its answer in each context: not the catalogue (~3,700 tokens) nor the examples (~600)
        assert agent.model.evaluated - before < 200 and 0 < side.evaluated - before_side < 200
        agent.decide("cancel my alarm at 6 am", "en")
        assert agent.prefix_status == "warm"
    finally:
        agent.state_dir = saved_dir


def test_a_tool_checked_again_after_another_costs_only_the_request(components) -> None:  # type: ignore[no-untyped-def]
    """The relevance check keeps each tool's state (the worked examples, then its signature): checking the alarm after
    the timer, the timer after the volume, evaluates the request's words only, and answers as a fresh context does."""
    agent = components.agent()
    check = agent._relevance
    side = agent.model.side(SIDE_CONTEXT_TOKENS)
    asked = [("set_alarm", "I have to be up at half six"), ("set_timer", "ten minutes for the pasta please"),
             ("change_volume", "a bit louder, I can't hear it")]
    for name, text in asked:  # each tool checked once: its state is kept
        agent.relevant(name, text)
    again = [("set_alarm", "get me up at seven tomorrow"), ("set_timer", "how about a timer for the eggs"),
             ("set_alarm", "what's the capital of Peru")]
    held = []
    for name, text in again:
        tool = agent.registry.get(name)
        prefix = check._prefix(side)
        rest = check.prompt(tool, text)[len(prefix):]
        words = len(side.prefix_tokens(prefix)) + len(side.tokens_special(rest)) - len(check._head(side, prefix, rest))
        before = side.evaluated
        held.append(agent.relevant(name, text))
        assert side.evaluated - before == words  # not the signature (15-30 tokens) nor the examples (~300)
    fresh_process(agent.model)  # nothing kept: each check evaluated whole
    whole = [agent.relevant(name, text) for name, text in again]
    assert held == pytest.approx(whole, abs=0.03)  # batch sizes differ: see test_budget
    assert held[0] > held[2] + 0.1  # a wake-up time reads as the alarm far more than a capital city


def test_language_choice_and_transcription_share_one_encoder_pass(components, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    stt = components.stt()
    base = type(stt.model).__mro__[1]
    calls = []
    original = base.encode

    def counting(self, features):  # type: ignore[no-untyped-def]
        calls.append(features.shape)
        return original(self, features)

    monkeypatch.setattr(base, "encode", counting)
    audio = read_wav(SAMPLES / "ru_alarm_0700.wav")[int(1.3 * 16000):]
    for _ in range(2):  # the same audio twice: encoded once each time, nothing carried over
        transcript = stt.transcribe(audio)
        assert transcript.lang == "ru" and "будильник" in transcript.text
    # Russian, found in the short window (stt.window_s), is read in whisper's 30 s (not in stt.window_languages):
    # the language chosen again there and the words share that one pass
    assert calls == [(80, 1000), (80, 3000)] * 2
    calls.clear()
    english = read_wav(SAMPLES / "en_alarm_0730.wav")[int(1.6 * 16000):]
    assert "alarm" in stt.transcribe(english).text.lower()
    assert calls == [(80, 1000)]  # English: one pass, in the short window
    # a conversation already in Russian: its language is asked in a glance (the least window that holds the words,
    # not the short window's 10 s), and the words are read in whisper's 30 s at once, not chosen again there
    calls.clear()
    for _ in range(2):
        transcript = stt.transcribe(audio, None, "ru")
        assert transcript.lang == "ru" and "будильник" in transcript.text
    glance = (80, 100 * math.ceil(len(audio) / 16000 + 1.0))
    assert glance[1] < 1000 and calls == [glance, (80, 3000)] * 2
    # English said in it is still English, and read in the short window as any English, not in those 30 s
    calls.clear()
    transcript = stt.transcribe(english, None, "ru")
    assert transcript.lang == "en" and "alarm" in transcript.text.lower()
    assert calls == [(80, 100 * math.ceil(len(english) / 16000 + 1.0)), (80, 1000)]
    calls.clear()
    assert stt.transcribe(english, None, "en").lang == "en" and calls == [(80, 1000)]  # back to the short window


def test_templates_answer_first_and_the_model_takes_the_rest(components) -> None:  # type: ignore[no-untyped-def]
    trace = Trace()
    asyncio.run(Pipeline(components, trace).run_text("set an alarm for quarter past six pm"))
    (call,) = trace.of_type(EventType.TOOL_CALL)
    assert (call.source, call.arguments) == ("fastpath", {"time": "18:15"})
    trace = Trace()
    asyncio.run(Pipeline(components, trace).run_text("I'd like to be woken at 6:45 tomorrow"))
    calls = trace.of_type(EventType.TOOL_CALL)
    assert [c.source for c in calls] in ([], ["model"])
    assert all(c.arguments == {"time": "06:45", "day": "tomorrow"} for c in calls)


@pytest.mark.parametrize("heard", ["...", " ?", "—"])
async def test_a_transcript_with_no_words_is_not_understood_without_the_model(components, heard: str) -> None:  # type: ignore[no-untyped-def]
    """Whisper writes "..." or "?" for a breath or a cough: nothing the model should be asked about."""
    from hearthd.audio.stt import Transcript

    trace = Trace()
    result = await Pipeline(components, trace).run_utterance(
        np.zeros(16000, dtype=np.int16), transcript=Transcript(heard, "en", 0.9, "detected"), conversation="x")
    assert result.error == "stt-no-text-recognized" and result.reply == phrase("en", "agent.not_understood")
    assert not trace.of_type(EventType.MODEL) and not trace.of_type(EventType.TOOL_CALL)


@pytest.mark.parametrize("text", ["\u202eSet an alarm for 6 am.", "\ufeffset an alarm for 6 am!",
                                  "set\u200ban alarm\u2060 for 6 am", "\u2067set an alarm for 6 am\u2069\u200f"])
async def test_marks_that_only_change_how_text_is_shown_do_not_hide_a_command(components, text: str) -> None:  # type: ignore[no-untyped-def]
    """Bidi marks, a BOM, zero-width spaces around a request (a client pasting it) kept the templates from matching:
    a fast command became a model turn of seconds."""
    trace = Trace()
    await Pipeline(components, trace).run_text(text, conversation="marks")
    calls = [e.payload() for e in trace.of_type(EventType.TOOL_CALL)]
    assert [(c["name"], c["arguments"].get("time")) for c in calls] == [("set_alarm", "06:00")]
    assert not trace.of_type(EventType.MODEL)
    for alarm in components.alarms.pending():
        components.alarms.remove(alarm)


async def test_a_refused_text_is_in_the_audit_under_who_asked(components) -> None:  # type: ignore[no-untyped-def]
    import json

    trace = Trace()
    result = await Pipeline(components, trace).run_text("x" * 100_000, conversation="dbus::1.99")
    assert result.error == "text-too-long"
    record = json.loads(components.audit.path.read_text().splitlines()[-1])
    assert record["conversation"] == "dbus::1.99" and record["utterance"].startswith("xxxx")
