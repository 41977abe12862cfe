"""Clarification: a missing required detail is asked for, in the user's language, and the next utterance
completes the request; "cancel", a timeout or too many unanswered questions end it without acting."""

from __future__ import annotations

import asyncio

import pytest

from hearthd.agent.fastpath import FastPath, Router, is_cancel
from hearthd.daemon.pipeline import Pipeline
from hearthd.events import EventType, Trace
from hearthd.tools.alarms import AlarmBook
from hearthd.tools.registry import ToolRegistry


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def no_model() -> None:  # type: ignore[return]
    raise AssertionError("these turns must be decided without the model")


@pytest.fixture()
def router() -> Router:
    return Router(FastPath(ToolRegistry(AlarmBook().tools())), no_model, clarify_timeout=30.0,  # type: ignore[arg-type]
                  clarify_turns=2, clock=Clock())


@pytest.mark.parametrize("lang,ask,answer,time", [
    ("en", "set an alarm", "for seven thirty", "07:30"),
    ("ru", "поставь будильник", "на семь утра", "07:00"),
    ("hi", "अलार्म लगा दो", "सुबह छह बजे", "06:00"),
])
def test_a_missing_time_is_asked_for_and_the_answer_completes_the_call(router: Router, lang: str, ask: str,
                                                                        answer: str, time: str) -> None:
    first = router.decide(ask, lang)
    assert (first.kind, first.missing, first.calls[0].name) == ("clarify", "time", "set_alarm")
    second = router.decide(answer, lang)
    assert second.kind == "call"
    assert [(c.name, c.arguments) for c in second.calls] == [("set_alarm", {"time": time})]
    assert router.pending is None


@pytest.mark.parametrize("lang,ask,cancel", [("en", "set an alarm", "never mind"),
                                             ("ru", "поставь будильник", "отмена"),
                                             ("hi", "अलार्म लगा दो", "रहने दो")])
def test_cancel_withdraws_the_request(router: Router, lang: str, ask: str, cancel: str) -> None:
    assert router.decide(ask, lang).kind == "clarify"
    out = router.decide(cancel, lang)
    assert (out.kind, out.say, out.calls) == ("abstain", "agent.cancelled", [])
    assert router.pending is None


def test_an_answer_after_the_timeout_is_a_new_request(router: Router) -> None:
    assert router.decide("set an alarm", "en").kind == "clarify"
    router.clock.now += 31  # type: ignore[attr-defined]
    fresh = router.decide("what alarms do I have", "en")
    assert [(c.name, c.arguments) for c in fresh.calls] == [("list_alarms", {})]


def test_cancel_words_are_whole_answers() -> None:
    assert is_cancel("No.", "en") and is_cancel("нет", "ru") and is_cancel("रहने दो", "hi")
    assert not is_cancel("set an alarm", "en") and not is_cancel("поставь будильник", "ru")


@pytest.mark.models
def test_unanswered_questions_end_after_the_turn_limit(components) -> None:  # type: ignore[no-untyped-def]
    router = Router(FastPath(components.tools), components.agent, clarify_turns=2)
    assert router.decide("set an alarm", "en").kind == "clarify"
    again = router.decide("hmm, let me think", "en")  # still no time: asked once more
    assert (again.kind, again.missing) == ("clarify", "time")
    out = router.decide("I don't know", "en")
    assert (out.kind, out.say, out.calls) == ("abstain", "agent.gave_up", [])
    assert router.pending is None


@pytest.mark.models
@pytest.mark.parametrize("lang,ask,question,answer,time", [
    ("en", "please set an alarm", "For what time?", "7:30", "07:30"),
    ("ru", "поставь будильник", "На какое время?", "7:30", "07:30"),
    ("hi", "अलार्म लगा दो", "किस समय के लिए?", "7:30", "07:30"),
])
def test_the_pipeline_asks_in_the_users_language_and_acts_on_the_answer(
        components, lang: str, ask: str, question: str, answer: str, time: str) -> None:  # type: ignore[no-untyped-def]
    components.router().reset()
    before = len(components.alarms.pending())
    trace = Trace()
    first = asyncio.run(Pipeline(components, trace).run_text(ask))
    assert first.reply == question
    (clarify,) = trace.of_type(EventType.CLARIFY)
    assert (clarify.missing, clarify.question) == ("time", question)
    assert len(components.alarms.pending()) == before  # nothing done yet
    trace = Trace()
    second = asyncio.run(Pipeline(components, trace).run_text(answer))  # digits only: the language carries over
    assert second.lang == lang
    assert [(c.name, c.arguments) for c in trace.of_type(EventType.TOOL_CALL)] == \
        [("set_alarm", {"time": time})]
    assert len(components.alarms.pending()) == before + 1


@pytest.mark.parametrize("lang,text,calls", [
    ("en", "turn off the kitchen light and set an alarm for 7 am",
     [("turn_off", {"device": "kitchen light"}), ("set_alarm", {"time": "07:00"})]),
    ("ru", "выключи свет на кухне и поставь будильник на семь утра",
     [("turn_off", {"device": "kitchen light"}), ("set_alarm", {"time": "07:00"})]),
    ("hi", "किचन की लाइट बंद करो और सुबह सात बजे का अलार्म लगा दो",
     [("turn_off", {"device": "kitchen light"}), ("set_alarm", {"time": "07:00"})]),
])
def test_two_requests_in_one_utterance_are_both_done(lang: str, text: str, calls: list) -> None:  # type: ignore[type-arg]
    from pathlib import Path

    from hearthd.evaluation.evaluate import load_catalogue

    catalogue = load_catalogue(Path(__file__).parent / "data" / "commands" / "tools.yaml")
    router = Router(FastPath(catalogue), no_model)  # type: ignore[arg-type]
    decision = router.decide(text, lang)
    assert [(c.name, c.arguments) for c in decision.calls] == calls


def test_a_part_that_does_not_match_sends_the_whole_utterance_on() -> None:
    from hearthd.agent.split import split_requests

    assert split_requests("set an alarm for 7 and then turn on the fan", "en") == ["set an alarm for 7",
                                                                                 "turn on the fan"]
    fast = FastPath(ToolRegistry(AlarmBook().tools()))
    assert fast.match("set an alarm for 7 am and tell me a joke", "en") is None


@pytest.mark.models
def test_an_unsure_language_guess_falls_back_to_the_conversations_language(components) -> None:  # type: ignore[no-untyped-def]
    """Noise gives Whisper nothing to go on: the previous turn's language is used instead of a coin toss."""
    import dataclasses

    from hearthd.audio.stt import WhisperSpeechToText
    from hearthd.audio.wavio import read_wav

    from .conftest import SAMPLES

    noise = read_wav(SAMPLES / "en_noise_only.wav")
    stt = components.stt()
    detected_lang, prob = stt.detect_language(noise.astype("float32") / 32768)
    other = "ru" if detected_lang != "ru" else "hi"
    strict = WhisperSpeechToText.__new__(WhisperSpeechToText)
    strict.__dict__.update(stt.__dict__)
    strict.cfg = dataclasses.replace(stt.cfg, min_language_probability=1.01)  # every guess counts as unsure
    out = strict.transcribe(noise, fallback=other)
    assert (out.lang, out.source) == (other, "fallback")
    forced = strict.transcribe(noise, language="en", fallback=other)
    assert (forced.lang, forced.source) == ("en", "forced")
