"""The live loop on real models, driven by a WAV-backed audio source at real-time pace (no sound card here):
leading noise and silence, two utterances in a row, a clarification answered without a second wake word, and a
barge-in during a long reply."""

from __future__ import annotations

import asyncio
import copy
import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd.audio.io import MemorySink, WavSource, as_int16
from hearthd.audio.pcm import SAMPLE_RATE
from hearthd.audio.wavio import read_wav
from hearthd.config import Config
from hearthd.daemon.components import Components
from hearthd.daemon.dialogue import LOCAL
from hearthd.daemon.live import LiveLoop, LoopState, sentences
from hearthd.events import EventType, Trace

from .speech import said

pytestmark = pytest.mark.models

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def silence(seconds: float, level: float = 8.0, seed: int = 1) -> np.ndarray:
    """A quiet room: low noise, never digital silence."""
    rng = np.random.default_rng(seed)
    return (rng.normal(0.0, level, int(seconds * SAMPLE_RATE))).astype(np.int16)


@pytest.fixture(scope="module")
def live_components(tmp_path_factory: pytest.TempPathFactory, base_config: Config) -> Iterator[Components]:
    cfg = copy.deepcopy(base_config)
    cfg.mqtt.enabled = False
    cfg.dbus.enabled = False
    patch = pytest.MonkeyPatch()
    patch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("live-state")))
    components = Components(cfg)
    components.stt(), components.wake(), components.endpointer()  # loaded once for the module
    yield components
    patch.undo()


def speak(components: Components, text: str) -> np.ndarray:
    """Real speech from the English Piper voice, at 16 kHz, seeded: the same audio every run (tests/speech.py)."""
    return said(text)


async def run_until(loop: LiveLoop, done: object, timeout: float) -> None:
    stopping = asyncio.Event()
    task = asyncio.create_task(loop.run(stopping))
    try:
        async with asyncio.timeout(timeout):
            while not done():  # type: ignore[operator]
                await asyncio.sleep(0.05)
    finally:
        stopping.set()
        await asyncio.wait_for(task, 60)


def of(trace: Trace, kind: EventType) -> list[dict]:
    return [e.payload() for e in trace.of_type(kind)]  # the fields as the JSON carries them


async def test_two_utterances_in_a_row_after_noise_and_silence(live_components: Components) -> None:
    # The second command is said a second after the first reply ends, as people wait for an answer: said at a fixed
    # time instead, on a busy machine it would fall on the reply still playing, and the wake word rightly cuts it.
    first = np.concatenate([silence(1.0), read_wav(SAMPLES / "en_alarm_0730.wav"), silence(1.0, seed=2)])
    second = np.concatenate([silence(1.0, seed=2), read_wav(SAMPLES / "en_wakeup_0600.wav"), silence(1.0, seed=3)])
    source = WavSource(first, tail_s=None)
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, MemorySink())
    said = False

    def done() -> bool:
        nonlocal said
        if not said and loop.turns_done >= 1 and loop.state == LoopState.IDLE:
            source.append(second)
            said = True
        return loop.turns_done >= 2

    await run_until(loop, done, 90)
    calls = [(c["name"], c["arguments"].get("time")) for c in of(trace, EventType.TOOL_CALL)]
    assert calls == [("set_alarm", "07:30"), ("set_alarm", "06:00")]
    assert len(of(trace, EventType.WAKE)) == 2
    assert len(of(trace, EventType.REPLY)) == 2
    (metrics,) = of(trace, EventType.METRICS)
    assert metrics["frames_dropped"] == 0  # the models ran, the capture kept every frame
    timings = {t["stage"] for t in of(trace, EventType.TIMING)}
    assert {"end_of_speech_to_action", "end_of_speech_to_reply_audio"} <= timings
    played = loop.sink.played
    assert [completed for _, _, completed in played] == [True] * 4  # wake chime, reply, wake chime, reply
    assert of(trace, EventType.BARGE_IN) == []
    await live_components.tools.get("cancel_all_alarms").handler({})  # leave no alarm for the next test


async def test_a_clarification_is_answered_without_the_wake_word(live_components: Components) -> None:
    ask = np.concatenate([silence(0.5), speak(live_components, "Okay Nabu."), silence(0.4, seed=4),
                          speak(live_components, "Set an alarm."), silence(1.0, seed=5)])
    answer = np.concatenate([speak(live_components, "Seven thirty a.m."), silence(1.2, seed=6)])
    source = WavSource(ask, tail_s=None)
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, MemorySink())
    answered = False

    def done() -> bool:
        nonlocal answered
        if not answered and loop.follow_up_until > 0:  # the question has been spoken
            source.append(answer)  # the user answers it, no "Okay Nabu"
            answered = True
        return loop.turns_done >= 2

    await run_until(loop, done, 90)
    assert of(trace, EventType.CLARIFY)[0]["missing"] == "time"
    (call,) = of(trace, EventType.TOOL_CALL)
    assert (call["name"], call["arguments"]["time"]) == ("set_alarm", "07:30")
    assert len(of(trace, EventType.WAKE)) == 1  # one wake word for the whole exchange
    await live_components.tools.get("cancel_all_alarms").handler({})


async def test_the_wake_word_during_a_long_reply_stops_it_and_listens(live_components: Components) -> None:
    source = WavSource(silence(0.6), tail_s=None)
    sink = MemorySink()
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, sink)
    long_reply = " ".join(["This is a long announcement that goes on for a while."] * 6)
    results: list[bool] = []

    async def announce() -> None:
        await asyncio.sleep(0.5)
        results.append(await loop.say(long_reply, "en"))

    speaker = asyncio.create_task(announce())

    def done() -> bool:
        if loop.state == LoopState.SPEAKING and not getattr(done, "sent", False):
            source.append(np.concatenate([read_wav(SAMPLES / "en_alarm_0730.wav"), silence(1.0)]))
            done.sent = True  # type: ignore[attr-defined]
        return loop.turns_done >= 1

    await run_until(loop, done, 90)
    await speaker
    assert results == [False]  # cut short
    assert of(trace, EventType.BARGE_IN) == [{"by": "wake word"}]
    cut = [seconds for audio, rate, completed in sink.played if not completed for seconds in [len(audio) / rate]]
    assert cut and cut[0] < 8.0  # the long reply stopped early
    (call,) = of(trace, EventType.TOOL_CALL)
    assert (call["name"], call["arguments"]["time"]) == ("set_alarm", "07:30")
    await live_components.tools.get("cancel_all_alarms").handler({})


def test_replies_are_cut_into_sentences() -> None:
    assert sentences("Alarm set for 7:30. It's Monday!  Ok?") == ["Alarm set for 7:30.", "It's Monday!", "Ok?"]
    assert sentences("अलार्म लग गया। कल सुबह।") == ["अलार्म लग गया।", "कल सुबह।"]
    assert sentences("") == []
    # a long first sentence gives its first clause on its own (what the listener waits for is only that)
    assert sentences("Хорошо, будильник на семь тридцать поставлен. Спокойной ночи.") == [
        "Хорошо,", "будильник на семь тридцать поставлен.", "Спокойной ночи."]
    assert sentences("माफ़ कीजिए, मैं यह नहीं समझ पाया। क्या आप फिर से कह सकते हैं?") == [
        "माफ़ कीजिए,", "मैं यह नहीं समझ पाया।", "क्या आप फिर से कह सकते हैं?"]
    assert sentences("Done, ok.") == ["Done, ok."]  # short: one piece
    assert sentences("Turn on the light in the kitchen, please.") == ["Turn on the light in the kitchen, please."]


async def ringing(loop: LiveLoop, ring: Any, done: object, timeout: float) -> None:
    """Run `loop` until `done()`, beside a scheduler that calls `ring` for the alarms due. The models are loaded
    first, so the ring is not spent waiting for them."""
    from hearthd.daemon.scheduler import Scheduler

    await loop.prepare()
    scheduler = Scheduler(loop.c.alarms, ring, grace=60, repeat=30, max_rings=3)
    scheduler.start()
    stopping = asyncio.Event()
    ticking = asyncio.create_task(scheduler.run(stopping))
    try:
        await run_until(loop, done, timeout)
    finally:
        stopping.set()
        await ticking


async def test_okay_nabu_stop_silences_a_ringing_alarm(live_components: Components) -> None:
    """A timer rings through the speaker; the wake word cuts the ring and "stop" stops the alarm itself."""
    book = live_components.alarms
    await live_components.tools.get("set_timer").handler({"seconds": 1})
    source = WavSource(silence(0.5), tail_s=None)
    sink = MemorySink()
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, sink)
    rang: list[int] = []

    async def ring(alarm: object, count: int) -> None:
        rang.append(count)
        if count == 1:
            source.append(np.concatenate([speak(live_components, "Okay Nabu."), silence(0.3, seed=8),
                                          speak(live_components, "Stop."), silence(1.2, seed=9)]))
        await loop.ring("Time's up!", "en")

    await ringing(loop, ring, lambda: loop.turns_done >= 1, 60)
    heard = [(e.type.value, e.payload()) for e in trace.events
             if e.type in (EventType.TRANSCRIPT, EventType.ERROR, EventType.WAKE, EventType.REPLY)]
    try:
        assert rang == [1], heard
        assert of(trace, EventType.BARGE_IN) == [{"by": "wake word"}], heard
        assert [c["name"] for c in of(trace, EventType.TOOL_CALL)] == ["stop"], heard
        assert book.pending("timer") == [] and book.ringing() == []
    finally:  # nothing left ringing for the tests after this one, whatever happened
        for alarm in book.ringing() + book.pending("timer"):
            book.remove(alarm)


async def test_a_stop_heard_in_other_letters_stops_a_ringing_alarm_itself(live_components: Components) -> None:
    """A timer rings in a Hindi household and "बस करो" is said without the wake word: whisper base writes it in other
    letters, it sounds like the stop phrase, and the turn then reads that phrase, which stops the alarm itself."""
    book = live_components.alarms
    dialogue = live_components.dialogues.get(LOCAL)
    before, dialogue.lang = dialogue.lang, "hi"
    await live_components.tools.get("set_timer").handler({"seconds": 1})
    source = WavSource(silence(0.5), tail_s=None)
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, MemorySink())
    rang: list[int] = []

    async def ring(alarm: object, count: int) -> None:
        rang.append(count)
        # long enough to outlast hearing the stop on a busy machine (it is cut the moment the stop is recognised)
        await loop.ring(" ".join(["समय पूरा हुआ, टाइमर बज रहा है।"] * 12), "hi")

    def heard() -> bool:
        if loop.state == LoopState.SPEAKING and not getattr(heard, "sent", False):
            source.append(np.concatenate([silence(0.8, seed=13), said("बस करो।", "hi"), silence(1.2, seed=14)]))
            heard.sent = True  # type: ignore[attr-defined]
        return loop.turns_done >= 1

    try:
        await ringing(loop, ring, heard, 90)
        (barge,) = of(trace, EventType.BARGE_IN)
        assert (barge["by"], barge["text"], barge["lang"]) == ("stop", "बस करो", "hi"), barge
        assert [c["name"] for c in of(trace, EventType.TOOL_CALL)] == ["stop"], trace.events
        assert rang == [1] and book.pending("timer") == [] and book.ringing() == []
    finally:  # nothing left ringing for the tests after this one, whatever happened
        dialogue.lang = before
        for alarm in book.ringing() + book.pending("timer"):
            book.remove(alarm)


@pytest.mark.parametrize("lang,word,home", [
    ("en", "Stop.", None), ("en", "Be quiet.", None), ("ru", "Хватит.", None),
    # said in a Hindi household: whisper base writes these in other letters ("Баскарой", "Рук, ciao"), alike enough
    ("hi", "बस करो।", "hi"), ("hi", "रुक जाओ।", "hi")])
async def test_stop_without_the_wake_word_silences_a_reply(live_components: Components, lang: str, word: str,
                                                           home: str | None) -> None:
    assert live_components.alarms.ringing() == []  # "stop" here only quiets the reply
    dialogue = live_components.dialogues.get(LOCAL)
    before, dialogue.lang = dialogue.lang, home or dialogue.lang
    try:
        await _stop_silences_a_reply(live_components, lang, word, home)
    finally:
        dialogue.lang = before


async def _stop_silences_a_reply(live_components: Components, lang: str, word: str, home: str | None) -> None:
    source = WavSource(silence(0.6), tail_s=None)
    sink = MemorySink()
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, sink)
    results: list[bool] = []
    stop_audio = said(word, lang)

    async def announce() -> None:
        await asyncio.sleep(0.3)
        # long enough to outlast hearing the stop on a machine busy on every core (the stop is said as soon as the
        # reply starts and cuts it the moment it is recognised, so the length costs nothing when it works)
        results.append(await loop.say(" ".join(["This is a long announcement that goes on."] * 24), "en"))

    # the microphone opens once the models are loaded (the agent's too: seconds on a busy machine, which the stop
    # then waited behind while the announcement ran on); what is measured is hearing the stop, not the loading
    await loop.prepare()
    speaker = asyncio.create_task(announce())

    def done() -> bool:
        if loop.state == LoopState.SPEAKING and not getattr(done, "sent", False):
            source.append(np.concatenate([silence(0.8, seed=11), stop_audio, silence(1.0, seed=12)]))
            done.sent = True  # type: ignore[attr-defined]
        return bool(results)

    await run_until(loop, done, 60)
    await speaker
    assert results == [False]
    (barge,) = of(trace, EventType.BARGE_IN)
    assert barge["by"] == "stop" and (home is not None or barge["lang"] == lang), barge
    assert of(trace, EventType.TOOL_CALL) == []  # nothing rang: just quiet



@pytest.mark.parametrize("text,lang,stop", [("Stop!", "en", True), ("please stop", "en", True),
                                            ("stop the music and set an alarm", "en", False),
                                            ("Хватит!", "ru", True), ("Стоп.", "ru", True),
                                            ("хватит играть эту песню", "ru", False),
                                            ("बस करो", "hi", True), ("रुको।", "hi", True), ("बस से जाना है", "hi", False)])
def test_only_a_whole_stop_utterance_counts(text: str, lang: str, stop: bool) -> None:
    from hearthd.daemon.policy import stop_phrase

    assert (stop_phrase(text, lang) is not None) is stop


@pytest.mark.parametrize("heard,langs,stop", [
    # a stop word said alone, as whisper base wrote it (the language it heard first, then the conversation's)
    ("Кватит.", ("ru",), True), ("Тиши!", ("ru",), True), ("bus", ("en", "hi"), True),
    ("Баскарой!", ("ru", "hi", "en"), True), ("Рук, ciao!", ("ru", "hi", "en"), True), ("Chup.", ("en", "hi"), True),
    # short words that are no stop, alike or not; and one language's stop is not another's
    ("Спасибо!", ("ru",), False), ("Тихон.", ("ru",), False), ("Что?", ("ru",), False), ("Shop.", ("en", "hi"), False),
    ("Thank you.", ("en",), False), ("Okay.", ("en",), False), ("Bus stop.", ("en", "hi"), False),
    ("bus", ("en",), False), ("Да.", ("ru",), False), ("नहीं", ("hi", "en"), False),
    ("Shh!", ("en",), True), ("Hush.", ("en",), True), ("Sure.", ("en",), False), ("She.", ("en",), False)])
def test_a_stop_word_whisper_misheard_alone_still_stops(heard: str, langs: tuple[str, ...], stop: bool) -> None:
    from hearthd.daemon.policy import stop_phrase

    assert (stop_phrase(heard, *langs) is not None) is stop


@pytest.mark.parametrize("text,lang,off", [("turn it off", "en", True), ("Turn it on.", "en", False),
                                           ("Выключи!", "ru", True), ("Включи.", "ru", False),
                                           ("बंद कर दो।", "hi", True), ("लाइट बंद कर दो", "hi", False)])
def test_an_alarms_off_is_said_exactly(text: str, lang: str, off: bool) -> None:
    """"turn it off" stops a ringing alarm; its sound-alike "turn it on" (and "включи" beside "выключи") must not."""
    from hearthd.daemon.policy import off_phrase, stop_phrase

    assert (off_phrase(text, lang) is not None) is off
    assert stop_phrase(text, lang) is None or lang == "hi"  # (the stop phrases' "बंद करो" sounds like it)


async def test_turn_it_off_without_the_wake_word_is_a_stop_only_while_an_alarm_rings(
        live_components: Components) -> None:
    book = live_components.alarms
    head = LiveLoop(live_components, Trace(), WavSource(silence(0.1)), MemorySink()).head
    audio = speak(live_components, "Turn it off.")
    assert await head.stop_said(audio) is None  # nothing rings: a request for the model, with the wake word
    assert (await live_components.tools.get("set_alarm").handler({"time": "07:00"})).ok
    (alarm,) = book.pending()
    book.set_state(alarm, "ringing")
    try:
        heard = await head.stop_said(audio)
        assert heard is not None and heard.text == "turn it off"
    finally:
        for alarm in book.ringing() + book.pending():
            book.remove(alarm)


@pytest.mark.parametrize("text,lang,written,stop", [
    # whisper base on an AVX2-only CPU writes the Kokoro "रुक जाओ" as a loop; its ear still fits the phrase
    ("रुक जाओ।", "hi", "अप्रूव़ व़ व़ व़ व़ व़ व़ व़ व़ व़ व़ व़ व़ व़ व", "रुक जाओ"),
    ("चुप हो जाओ।", "hi", "jupo jiao wui.", "चुप हो जाओ"),  # heard unsure, as English
    # a request of its own fits its own words better than any stop phrase: the reply goes on
    ("लाइट जलाओ।", "hi", "बाचलाओ, जलाओ,", None), ("अभी कितने बजे हैं?", "hi", "अपी कितने बची है?", None),
    ("What time is it?", "en", "What time is it?", None), ("Stop the music.", "en", "Stop the music.", None),
    ("Спасибо.", "ru", "Спасибо!", None)])
async def test_a_stop_whisper_wrote_otherwise_is_heard_by_its_fit_to_the_audio(
        live_components: Components, text: str, lang: str, written: str, stop: str | None) -> None:
    from hearthd.audio.stt import Transcript

    head = LiveLoop(live_components, Trace(), WavSource(silence(0.1)), MemorySink()).head
    sure = not written.isascii() or lang == "en"
    heard = Transcript(written, lang if sure else "en", 0.95 if sure else 0.6)
    found = await asyncio.get_running_loop().run_in_executor(None, head._stop_heard, said(text, lang), heard,
                                                             (heard.lang, lang))
    assert (found and found[0]) == stop and (found is None or found[1] == lang), found


def _raise_on_first_turn(loop: LiveLoop, monkeypatch: pytest.MonkeyPatch) -> None:
    real = loop.pipeline.run_utterance
    calls = {"n": 0}

    async def first_one_raises(*args: Any, **kwargs: Any) -> Any:
        calls["n"] += 1
        if calls["n"] == 1:
            raise RuntimeError("a stage let this escape")
        return await real(*args, **kwargs)

    monkeypatch.setattr(loop.pipeline, "run_utterance", first_one_raises)


async def test_a_turn_that_raises_ends_alone_and_the_loop_listens_again(live_components: Components,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    """Whatever a stage lets escape (here the first turn's pipeline raises, as a model failing to load on first use
    did) ends that turn with an error event and the error chime; the loop goes back to waiting, never stays stuck
    in THINKING, and the next utterance is heard and done."""
    source = WavSource(np.concatenate([silence(1.0), read_wav(SAMPLES / "en_alarm_0730.wav"), silence(1.0, seed=7)]),
                       tail_s=None)
    trace = Trace()
    loop = LiveLoop(live_components, trace, source, MemorySink())
    _raise_on_first_turn(loop, monkeypatch)
    said = False

    def done() -> bool:
        nonlocal said
        if not said and of(trace, EventType.ERROR) and loop.state == LoopState.IDLE:  # the apology has ended
            source.append(np.concatenate([silence(1.0, seed=7), read_wav(SAMPLES / "en_wakeup_0600.wav"),
                                          silence(1.0, seed=8)]))
            said = True
        return loop.turns_done >= 1

    await run_until(loop, done, 90)
    assert [(e["code"], e["message"]) for e in of(trace, EventType.ERROR)] == [("internal", "a stage let this escape")]
    assert [(c["name"], c["arguments"].get("time")) for c in of(trace, EventType.TOOL_CALL)] == [("set_alarm", "06:00")]
    await live_components.tools.get("cancel_all_alarms").handler({})


class _LongApology(MemorySink):
    """A speaker on which whatever is said after an error lasts half a minute more (silence), so the next command
    certainly falls on the apology, however slow the machine."""

    def __init__(self, trace: Trace) -> None:
        super().__init__()
        self.trace = trace
        self.loop: LiveLoop | None = None
        self.apologies: list[bool] = []  # whether each ran to its end

    async def play(self, audio: np.ndarray, rate: int) -> bool:
        if self.loop is not None and self.loop.state == LoopState.SPEAKING and of(self.trace, EventType.ERROR) \
                and not self.apologies:
            audio = np.concatenate([as_int16(audio), np.zeros(30 * rate, dtype=np.int16)])
            self.apologies.append(await super().play(audio, rate))
            return self.apologies[-1]
        return await super().play(audio, rate)


async def test_the_wake_word_cuts_the_apology_and_its_command_is_heard(live_components: Components,
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """After a failed turn hearthd apologises; the user, not waiting for the end, says the wake word and the next
    command over it. The apology stops and that command is done: the failed turn's end does not put the loop back
    to waiting over the command being heard."""
    source = WavSource(np.concatenate([silence(1.0), read_wav(SAMPLES / "en_alarm_0730.wav"), silence(1.0, seed=7)]),
                       tail_s=None)
    trace = Trace()
    sink = _LongApology(trace)
    loop = LiveLoop(live_components, trace, source, sink)
    sink.loop = loop
    _raise_on_first_turn(loop, monkeypatch)
    said = False

    def done() -> bool:
        nonlocal said
        if not said and loop.state == LoopState.SPEAKING and of(trace, EventType.ERROR):  # the apology has begun
            source.append(np.concatenate([read_wav(SAMPLES / "en_wakeup_0600.wav"), silence(1.0, seed=8)]))
            said = True
        return loop.turns_done >= 1

    await run_until(loop, done, 90)
    assert [b["by"] for b in of(trace, EventType.BARGE_IN)] == ["wake word"]
    assert [(c["name"], c["arguments"].get("time")) for c in of(trace, EventType.TOOL_CALL)] == [("set_alarm", "06:00")]
    assert sink.apologies == [False]  # cut by the wake word, not played to its end
    await live_components.tools.get("cancel_all_alarms").handler({})


class _TimedStt:
    """The real speech to text, slowed down (a busy machine) and timed: when each decode ran."""

    def __init__(self, real: Any, extra_s: float) -> None:
        self.real = real
        self.extra_s = extra_s
        self.spans: list[tuple[float, float]] = []

    def transcribe(self, *args: Any) -> Any:
        import time

        began = time.monotonic()
        time.sleep(self.extra_s)
        try:
            return self.real.transcribe(*args)
        finally:
            self.spans.append((began, time.monotonic()))

    def prepare_many(self, requests: Any) -> Any:  # hearing in the pause, its first half (encoding)
        return self.transcribe_many(requests, "prepare_many")

    def finish_many(self, prepared: Any) -> Any:  # and its second (decoding)
        return self.transcribe_many(prepared, "finish_many")

    def transcribe_many(self, items: Any, half: str = "transcribe_many") -> Any:
        import time

        began = time.monotonic()
        time.sleep(self.extra_s)
        try:
            return getattr(self.real, half)(items)
        finally:
            self.spans.append((began, time.monotonic()))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


async def test_whisper_and_the_turn_never_run_at_once(live_components: Components,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """A pause mid-sentence starts a speculative transcription that more speech makes stale; it cannot be
    stopped, so the next one and the turn (its speech to text, the agent) wait for it instead of running beside
    it on the same cores."""
    import time

    stt = _TimedStt(live_components.stt(), extra_s=2.0)
    monkeypatch.setitem(live_components._cache, "stt", stt)
    entered: list[float] = []
    real_enter = live_components.inference.enter

    def enter(started: float | None = None) -> float:
        since = real_enter(started)
        entered.append(time.monotonic())
        return since

    monkeypatch.setattr(live_components.inference, "enter", enter)
    wake = read_wav(SAMPLES / "en_alarm_0730.wav")[: int(1.6 * SAMPLE_RATE)]  # noise, "Okay Nabu", a pause
    audio = np.concatenate([silence(0.5), wake, speak(live_components, "Set an alarm"), silence(0.25, seed=9),
                            speak(live_components, "for seven thirty."), silence(1.5, seed=10)])
    trace = Trace()
    loop = LiveLoop(live_components, trace, WavSource(audio, tail_s=None), MemorySink())
    await run_until(loop, lambda: loop.turns_done >= 1, 90)
    spans = sorted(stt.spans)
    assert len(spans) >= 2  # the stale speculation and the one (or the turn's own) after it
    for (_, end), (begin, _) in itertools.pairwise(spans):
        assert begin >= end - 0.01, spans  # one decode at a time
    assert entered and all(end <= entered[0] + 0.01 or begin >= entered[0] for begin, end in spans)
    heard = [(e["text"], e.get("source")) for e in of(trace, EventType.TRANSCRIPT)]
    replies = [e["text"] for e in of(trace, EventType.REPLY)]
    assert [c["name"] for c in of(trace, EventType.TOOL_CALL)] == ["set_alarm"], (heard, replies, spans)
    await live_components.tools.get("cancel_all_alarms").handler({})


async def test_a_stop_check_whose_weighing_breaks_hears_no_stop_and_the_next_is_heard(
        live_components: Components, monkeypatch: pytest.MonkeyPatch) -> None:
    head = LiveLoop(live_components, Trace(), WavSource(silence(0.1)), MemorySink()).head
    stt = live_components.stt()

    def broken(*args: Any) -> Any:
        raise RuntimeError("the aligner broke")

    monkeypatch.setattr(stt, "fit", broken)
    assert await head.stop_said(said("What time is it?", "en")) is None  # no stop heard, nothing raised
    monkeypatch.undo()
    heard = await head.stop_said(said("Stop.", "en"))
    assert heard is not None and heard.text == "stop"
