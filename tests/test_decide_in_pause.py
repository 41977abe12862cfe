"""Deciding while the speaker falls silent (issue 28): the utterance so far is heard and decided in the pause, acted on
only once the end of speech is confirmed, and an utterance whose words already make a whole command ends on the
shorter `vad.complete_silence_ms`. The speaker who goes on after a pause ("turn on the light … in the kitchen") is
heard whole: nothing is done, asked or said on the first half.

The live-loop tests speak with the English Piper voice through a microphone that holds its next block while a guess
is being made (`Unhurried`): a machine fast enough to hear and decide within the pause, whatever this one's load, so
the guess on the first half is always there to be (wrongly) acted on."""

from __future__ import annotations

import asyncio
import copy
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd.agent.agent import Decision
from hearthd.agent.split import goes_on
from hearthd.audio.io import MemorySink, WavSource
from hearthd.audio.pcm import SAMPLE_RATE
from hearthd.audio.stt import Stale
from hearthd.audio.wavio import read_wav
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.inference import InferenceGate
from hearthd.daemon.live import LiveLoop, LoopState
from hearthd.events import EventType, Trace

from .conftest import SAMPLES
from .mqtt_sim import CommandRecorder as Sent
from .speech import said
from .test_library import FLOORS, HOME


def home_components(base_config: Config, state: Path) -> tuple[Components, Sent]:
    cfg = copy.deepcopy(base_config)
    cfg.dbus.enabled = False
    cfg.mqtt.floors = FLOORS
    cfg.general.area = ""  # no room of its own: "the light" alone names none
    c = Components(cfg)
    for e in HOME:
        c.catalogue.entities[e.key] = e
    sent = Sent()
    c.mqtt_link = lambda: sent  # type: ignore[method-assign]
    return c, sent


class NoModel:
    """Where the model would be asked (no model loads for these): it declines."""

    def decide(self, text: str, lang: str, now: object = None, only: str | None = None,
               among: list[str] | None = None) -> Decision:
        return Decision("abstain", reason="no model here", source="model")


@pytest.fixture
def home(base_config: Config, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Components:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path))
    c = home_components(base_config, tmp_path)[0]
    monkeypatch.setattr(c, "agent", NoModel)
    return c


# -- what a whole command is ------------------------------------------------------------------------------------

WHOLE = [("en", "turn off the kitchen light"), ("en", "Could you switch the bedroom lamp on, please?"),
         ("en", "what time is it"), ("en", "set an alarm for 7 am"), ("en", "wake me up at 6am."),
         ("ru", "выключи свет на кухне"), ("ru", "который час"), ("hi", "रसोई की बत्ती बंद करो"),
         ("hi", "कितने बजे हैं"), ("hi", "रसोई की बत्ती बंद कर दो"), ("hi", "सुबह छह बजे का अलार्म लगा दो"),
         ("hi", "रसोई की बत्ती जला दो")]
GOES_ON = [("en", "set an alarm for seven"), ("en", "set an alarm for 7"), ("en", "Set an alarm for 7.30."),
           ("en", "turn on the light"), ("en", "switch the lights off"), ("en", "turn off the kitchen light and"),
           ("en", "set a timer for"), ("ru", "поставь будильник на семь"), ("ru", "включи свет"),
           ("ru", "выключи свет на кухне и"), ("hi", "बत्ती जला दो"), ("hi", "सात बजे का अलार्म लगाओ और"),
           ("en", "set the volume to twenty"), ("en", "dim the bedroom light to fifty")]


@pytest.mark.parametrize(("lang", "text"), WHOLE)
def test_a_whole_command_is_complete(home: Components, lang: str, text: str) -> None:
    router = home.router()
    decision = router.decide(text, lang)
    assert decision.kind == "call", decision
    assert router.complete(text, lang, decision)


@pytest.mark.parametrize(("lang", "text"), GOES_ON)
def test_what_could_go_on_is_not_complete(home: Components, lang: str, text: str) -> None:
    router = home.router()
    decision = router.decide(text, lang)  # a call, a question or a refusal: none ends the utterance early
    assert not router.complete(text, lang, decision), decision


def test_only_what_the_templates_read_is_complete(home: Components) -> None:
    router = home.router()
    said = "turn off the kitchen light"
    modelled = Decision("call", calls=router.decide(said, "en").calls, source="model")
    assert not router.complete(said, "en", modelled)  # the model's reading waits the whole silence
    assert not router.complete(said, "en", Decision("clarify", calls=modelled.calls, missing="area"))
    assert goes_on("включи свет в", "ru") and goes_on("रसोई की", "hi") and not goes_on("turn it off", "en")


def test_a_room_answered_as_whisper_writes_it(home: Components) -> None:
    # "Which room — or all of them?" answered "In the kitchen." (whisper's capital and full stop): that room
    from hearthd.daemon.pipeline import Pipeline

    sent = home.mqtt_link()
    pipeline = Pipeline(home, Trace())
    asked = asyncio.run(pipeline.run_text("turn on the light", language="en"))
    assert asked.decision is not None and asked.decision.kind == "clarify"
    asyncio.run(pipeline.run_text("In the kitchen.", language="en"))
    assert ("kl/set", "ON") in sent.sent


# -- the gate: a speculative decision asks the model inside its own job ----------------------------------------

def test_a_speculative_job_may_run_a_turn_of_its_own() -> None:
    gate = InferenceGate()
    inside: list[bool] = []

    def decision() -> str:
        with gate.turn():  # the agent's own gate: it must not wait for the job it runs in
            inside.append(gate.busy)
        return "decided"

    done: list[str] = []
    worker = threading.Thread(target=lambda: done.append(gate.speculative(decision)))
    worker.start()
    worker.join(10)
    assert done == ["decided"] and inside == [True]
    with gate.turn():  # and a turn after it is not held up by what the job did
        assert gate.busy


# -- the live loop ------------------------------------------------------------------------------------------------

def silence(seconds: float, seed: int = 1) -> np.ndarray:
    return np.random.default_rng(seed).normal(0.0, 8.0, int(seconds * SAMPLE_RATE)).astype(np.int16)


class Unhurried(WavSource):
    """A microphone whose next block waits while the loop's guess is being made (see the module's docstring)."""

    loop: LiveLoop | None = None

    async def read(self) -> np.ndarray:
        waited = 0.0
        while self.loop is not None and (guess := self.loop._speculation) is not None and not guess.task.done() \
                and waited < 3.0:  # (a guess that asks the model may take longer: the speaker goes on meanwhile)
            await asyncio.sleep(0.01)
            waited += 0.01
        return await super().read()


@pytest.fixture(scope="module")
def live_home(tmp_path_factory: pytest.TempPathFactory, base_config: Config) -> Iterator[tuple[Components, Sent]]:
    state = tmp_path_factory.mktemp("pause-state")
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_STATE_HOME", str(state))
    c, sent = home_components(base_config, state)
    c.stt(), c.wake(), c.endpointer()
    yield c, sent
    patch.undo()


def speak(c: Components, text: str) -> np.ndarray:
    """The English test voice, seeded (tests/speech.py)."""
    return said(text)


async def hear(c: Components, parts: list[str], pause_s: float) -> tuple[Trace, list[str]]:
    """Say "Okay Nabu." then `parts` with `pause_s` of silence between them; the trace of the one turn, and the texts
    decided in the pause."""
    audio = [silence(0.5), speak(c, "Okay Nabu."), silence(0.4, 2)]
    for i, part in enumerate(parts):
        audio += [speak(c, part), silence(pause_s if i + 1 < len(parts) else 1.5, 3 + i)]
    source = Unhurried(np.concatenate(audio), tail_s=None)
    trace = Trace()
    loop = LiveLoop(c, trace, source, MemorySink(realtime=False))
    source.loop = loop
    guessed: list[str] = []
    original = loop.pipeline.guess

    async def guess(*args: Any) -> Any:
        made = await original(*args)
        guessed.append(made.text)
        return made

    loop.pipeline.guess = guess  # type: ignore[method-assign]
    stopping = asyncio.Event()
    task = asyncio.create_task(loop.run(stopping))
    try:
        async with asyncio.timeout(120):
            while loop.turns_done < 1 or loop.state != LoopState.IDLE:
                await asyncio.sleep(0.05)
            await asyncio.sleep(0.3)  # nothing more comes of it
    finally:
        stopping.set()
        await asyncio.wait_for(task, 60)
    return trace, guessed


def acted_after_the_end(trace: Trace) -> None:
    """Nothing was done, asked, confirmed or said before the end of speech was confirmed."""
    kinds = [e.type for e in trace.events]
    end = kinds.index(EventType.SPEECH_END)
    for kind in (EventType.TOOL_CALL, EventType.TOOL_RESULT, EventType.CLARIFY, EventType.CONFIRM_REQUEST,
                 EventType.REPLY, EventType.AUDIO_OUT, EventType.ABSTAIN, EventType.TRANSCRIPT):
        assert all(i > end for i, k in enumerate(kinds) if k == kind), f"{kind} before the end of speech"


@pytest.mark.models
def test_the_light_then_after_a_pause_its_room(live_home: tuple[Components, Sent]) -> None:
    c, sent = live_home
    sent.sent.clear()
    trace, guessed = asyncio.run(hear(c, ["Turn on the light.", "In the kitchen."], 0.45))
    assert any("light" in g.lower() and "kitchen" not in g.lower() for g in guessed)  # decided in the pause …
    acted_after_the_end(trace)  # … and not acted on
    assert len(trace.of_type(EventType.SPEECH_END)) == 1  # one utterance: the pause did not end it
    said = [e.payload() for e in trace.events if e.type != EventType.TIMING]
    assert ("kl/set", "ON") in sent.sent and {p for _, p in sent.sent} == {"ON"}, said  # the kitchen's light
    assert {t for t, _ in sent.sent} <= {"kl/set", "ks/set"}
    assert trace.of_type(EventType.CLARIFY) == []


@pytest.mark.models
def test_an_alarm_time_said_in_two_goes(live_home: tuple[Components, Sent]) -> None:
    c, _ = live_home
    trace, guessed = asyncio.run(hear(c, ["Set an alarm for seven", "thirty in the morning."], 0.45))
    try:
        assert guessed and "alarm" in guessed[0].lower() and "30" not in guessed[0]  # decided in the pause …
        acted_after_the_end(trace)
        assert len(trace.of_type(EventType.SPEECH_END)) == 1
        calls = [(e.name, e.arguments.get("time")) for e in trace.of_type(EventType.TOOL_CALL)]
        assert calls == [("set_alarm", "07:30")]  # … the whole time, not seven o'clock
    finally:
        asyncio.run(c.tools.get("cancel_all_alarms").handler({}))


@pytest.mark.models
@pytest.mark.parametrize("speculate_ms", [150, 64])
def test_a_whole_command_ends_on_the_short_silence(live_home: tuple[Components, Sent], speculate_ms: int,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    """Also where the guess begins before the endpointer's tail is in (a vad.speculate_ms below 150 ms): the speech
    it heard is the same while no voiced window follows, though the utterance's cut grows as the quiet goes on."""
    c, sent = live_home
    monkeypatch.setattr(c.cfg.vad, "speculate_ms", speculate_ms)
    sent.sent.clear()
    trace, guessed = asyncio.run(hear(c, ["Turn off the kitchen light."], 0.0))
    (end,) = trace.of_type(EventType.SPEECH_END)
    assert end.complete is True  # ended on vad.complete_silence_ms, not end_silence_ms
    assert len(guessed) == 1  # heard and decided once: the quiet after it made it no less the speech's
    acted_after_the_end(trace)
    assert ("kl/set", "OFF") in set(sent.sent)
    (call,) = trace.of_type(EventType.TOOL_CALL)
    assert call.source in ("fastpath", "tolerant")


@pytest.mark.models
def test_a_stale_decision_frees_the_model_between_tokens(components: Components) -> None:
    agent = components.agent()
    agent.prepare(["en"])  # the catalogue ready, as the daemon has it
    # a long request, so that the model is still reading it when the speaker goes on
    said = "please remember that " + " and ".join(f"the {w} in the garden needs water" for w in
                                                  ("rose", "tulip", "daisy", "fern", "lily", "orchid") * 8)
    words = len(agent.model.tokens_plain(said))
    stale = threading.Event()
    decided: list[Decision] = []

    def speculate() -> None:
        with agent.speculating(stale):
            decided.append(agent.decide(said, "en"))

    worker = threading.Thread(target=speculate)
    worker.start()
    for _ in range(2000):  # until the model is the speculation's
        if agent._holder == "speculation" or not worker.is_alive():
            break
        threading.Event().wait(0.005)
    agent.cancel(stale)  # the speaker went on
    worker.join(60)
    assert not worker.is_alive()
    (decision,) = decided
    assert decision.kind == "abstain" and decision.reason.startswith("stale")
    assert decision.evaluated < words  # cut part-way: the request was not read to its end
    after = agent.decide("set an alarm for 6 am", "en")  # the model is free for the turn at once
    assert [(c.name, c.arguments.get("time")) for c in after.calls] == [("set_alarm", "06:00")]
    skipped = threading.Event()
    skipped.set()
    with agent.speculating(skipped):  # stale before it began: the model is not even asked
        assert agent.decide("set an alarm for 6 am", "en").reason.startswith("stale")


def test_a_stale_transcription_stops_before_its_next_stage(components: Components,
                                                          monkeypatch: pytest.MonkeyPatch) -> None:
    stt = components.stt()
    audio = read_wav(SAMPLES / "ru_alarm_0700.wav")[int(1.3 * SAMPLE_RATE):]
    stages: list[str] = []
    stale = threading.Event()
    detect, decode = stt.detect_language, stt._decode

    def detecting(floats: np.ndarray) -> tuple[str, float]:
        stages.append(f"language in {stt.model.frames or 3000} frames")
        stale.set()  # the speaker goes on while whisper asks which language it is
        return detect(floats)

    def decoding(*args: Any) -> str:
        stages.append("words")
        return decode(*args)

    monkeypatch.setattr(stt, "detect_language", detecting)
    monkeypatch.setattr(stt, "_decode", decoding)
    gate = InferenceGate()
    # a Russian conversation: the language in a glance, then whisper's 30 s pass and the decoding, ~0.9 s on 2 cores,
    # for words nobody will use: neither runs, and the gate is free for the next guess
    with pytest.raises(Stale):
        gate.speculative(stt.transcribe, audio, None, "ru", cancelled=stale)
    (only,) = stages
    assert only.startswith("language in ") and int(only.split()[2]) < 1000 and not gate.busy
    # not speculative, or not stale: heard whole
    stages.clear()
    assert stt.transcribe(audio, None, "ru").text and stages[-1] == "words"
    stages.clear()
    assert "будильник" in gate.speculative(stt.transcribe, audio, None, "ru", cancelled=threading.Event()).text.lower()
    assert stages[-1] == "words"


class Heard:
    """A transcript as speech to text gives it."""

    def __init__(self, text: str, lang: str = "en") -> None:
        self.text, self.lang, self.prob, self.source = text, lang, 0.99, "detected"


@pytest.mark.parametrize("text", ["", "…?!", "\x00\ufffd" * 50, "turn " * 400, "выключи свет на кухне"])
def test_a_guess_on_garbage_or_a_failing_router_is_left_to_the_turn(home: Components, text: str,
                                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    from hearthd.daemon.dialogue import LOCAL
    from hearthd.daemon.pipeline import Pipeline

    pipeline = Pipeline(home, Trace())
    audio = np.zeros(SAMPLE_RATE, dtype=np.int16)
    guess = asyncio.run(pipeline.guess(audio, Heard(text), LOCAL, threading.Event()))
    assert not guess.complete or guess.decision is not None  # whatever it made of it, nothing was done or said
    assert pipeline.trace.events == [] and home.mqtt_link().sent == []

    def broken(*args: Any, **kwargs: Any) -> Decision:
        raise RuntimeError("the templates broke")

    monkeypatch.setattr(home.router(), "decide", broken)
    failed = asyncio.run(pipeline.guess(audio, Heard("turn off the kitchen light"), LOCAL, threading.Event()))
    assert failed.decision is None and not failed.complete  # the turn decides again, and reports what fails
    result = asyncio.run(pipeline.run_utterance(audio, transcript=Heard("turn off the kitchen light"), guess=failed))
    assert result.error  # the turn's own apology, said by the loop; the loop itself goes on
