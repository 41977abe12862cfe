"""Several rooms speaking at once (issue 31): what each stream heard in its pause is transcribed in one whisper job
(SpeechBatch, WhisperSpeechToText.transcribe_many), each utterance exactly as it is heard alone; deciding what was
heard goes before hearing more; and replies waiting for their voice hold none of the workers the turns need."""

from __future__ import annotations

import asyncio
import threading
import time
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from hearthd.audio.pcm import SAMPLE_RATE
from hearthd.audio.stt import Transcript
from hearthd.audio.wavio import read_wav
from hearthd.daemon.inference import InferenceGate, Skipped, SpeechBatch

SAMPLES = Path(__file__).resolve().parent.parent / "samples"


def said(components: Any) -> dict[str, np.ndarray]:
    """Real speech: the sample recordings (English, Russian, Hindi), and Piper's English."""
    out = {path.stem: read_wav(path) for path in sorted(SAMPLES.glob("*_*.wav"))
           if path.stem.split("_")[0] in ("en", "ru", "hi")}
    from hearthd.audio.pcm import resample

    for text in ("Turn off the kitchen light.", "Set a timer for twelve minutes."):
        speech = components.voices.synthesize(text, "en")
        out[text] = np.asarray(resample(np.asarray(speech.audio), speech.rate, SAMPLE_RATE), dtype=np.int16)
    return out


def test_utterances_heard_together_are_heard_as_each_alone(components: Any) -> None:
    stt = components.stt()
    speech = said(components)
    assert {"en_alarm_0730", "ru_alarm_0700", "hi_alarm_0600"} <= set(speech)
    rng = np.random.default_rng(7)
    requests: list[tuple[np.ndarray, str | None, str | None]] = [(audio, None, None) for audio in speech.values()]
    requests += [
        (np.zeros(SAMPLE_RATE, dtype=np.int16), None, None),  # silence
        (rng.normal(0, 900, 2 * SAMPLE_RATE).astype(np.int16), None, None),  # noise
        (speech["en_alarm_0730"], "en", None),  # the language told
        (speech["en_alarm_0730"], None, "ru"),  # a Russian conversation: whisper's glance, alone
        (np.concatenate([speech["en_alarm_0730"]] * 3), None, None),  # past the short window: alone
        (speech["ru_alarm_0700"], None, "en"),  # Russian, heard in whisper's 30 s: alone after its language
    ]
    alone = [stt.transcribe(*request) for request in requests]
    together = stt.transcribe_many(requests)
    assert together == alone
    assert stt.transcribe_many(requests[:1]) == alone[:1]  # one, through the same two halves
    # the rescoring reuses the encoder's output of the one just heard, as after transcribe: the same fit
    fit = stt.fit(requests[0][0], "en", ["set an alarm for seven thirty"])
    stt.transcribe(requests[0][0])
    assert fit == stt.fit(requests[0][0], "en", ["set an alarm for seven thirty"])
    assert any("alarm" in t.text.lower() for t in alone)  # real words were heard, not only silence
    assert together[len(speech)].text == ""  # silence is no words, together too


def test_a_clip_with_no_sound_in_it_is_no_words_and_quiet_speech_is_still_heard(components: Any) -> None:
    """Whisper normalises what it hears to its loudest: given digital silence or a microphone's hiss, it writes words
    into it ("music,", "Thank you."), which words depending on the CPU. Such a clip is no words, alone and together;
    speech forty times quieter than the sample (-43 dBFS at its loudest) is still heard."""
    stt = components.stt()
    speech = said(components)["en_alarm_0730"]
    rng = np.random.default_rng(3)
    hiss = [np.zeros(2 * SAMPLE_RATE, dtype=np.int16), rng.normal(0, 8, 3 * SAMPLE_RATE).astype(np.int16),
            np.full(SAMPLE_RATE, -40, dtype=np.int16)]
    for audio in hiss:
        for fallback in (None, "ru"):
            heard = stt.transcribe(audio, None, fallback)
            assert heard.text == "" and heard.lang == (fallback or "en"), heard
    assert [t.text for t in stt.transcribe_many([(a, None, None) for a in hiss])] == ["", "", ""]  # type: ignore[union-attr]
    assert stt.transcribe(hiss[0], "hi").lang == "hi"  # the language told stands
    quiet = (speech.astype(np.float64) * 230 / np.abs(speech).max()).astype(np.int16)
    assert "alarm" in stt.transcribe(quiet).text.lower()


def test_an_utterance_that_cannot_be_heard_fails_alone(components: Any) -> None:
    stt = components.stt()
    speech = said(components)
    requests: list[tuple[np.ndarray, str | None, str | None]] = [
        (speech["en_alarm_0730"], None, None), (np.zeros(0, dtype=np.int16), None, None),
        (np.zeros(100, dtype=np.int16), None, None), (speech["en_wakeup_0600"], None, None)]
    out = stt.transcribe_many(requests)
    assert isinstance(out[1], Exception) and isinstance(out[2], Exception)
    assert isinstance(out[0], Transcript) and "alarm" in out[0].text.lower()
    assert isinstance(out[3], Transcript) and "wake" in out[3].text.lower()
    with pytest.raises(ValueError):  # what each alone gets: the same error
        stt.transcribe(np.zeros(0, dtype=np.int16))


async def test_streams_that_fall_silent_together_are_heard_in_one_job(components: Any) -> None:
    stt = components.stt()
    speech = said(components)
    batch = SpeechBatch(InferenceGate(), components.stt)
    names = ["en_alarm_0730", "en_wakeup_0600", "Turn off the kitchen light.", "Set a timer for twelve minutes."]
    gate = batch.gate
    gate.enter()  # a turn runs: every room's pause waits for the gate
    stale = {name: threading.Event() for name in names}
    asked = [asyncio.ensure_future(batch.transcribe(speech[name], None, None, stale[name])) for name in names]
    await asyncio.sleep(0.3)
    stale[names[1]].set()  # that room's speaker went on before it was heard
    gate.leave()
    results = await asyncio.gather(*asked, return_exceptions=True)
    assert batch.sizes == [3]  # one job heard the three still wanted
    assert isinstance(results[1], Skipped)
    for name, result in zip(names, results, strict=True):
        if name != names[1]:
            assert result == stt.transcribe(speech[name], None, None)
    assert "kitchen" in results[2].text.lower() and "12" in results[3].text  # type: ignore[union-attr]


async def test_one_stream_alone_is_heard_alone_and_stops_when_the_speaker_goes_on(components: Any) -> None:
    speech = said(components)
    batch = SpeechBatch(InferenceGate(), components.stt)
    heard = await batch.transcribe(speech["en_alarm_0730"], None, None, threading.Event())
    assert "alarm" in heard.text.lower() and batch.sizes == [1]
    stale = threading.Event()
    stale.set()
    with pytest.raises(Skipped):
        await batch.transcribe(speech["en_alarm_0730"], None, None, stale)
    assert not batch.gate.busy


async def test_a_failing_engine_fails_each_utterance_and_the_next_are_heard(components: Any) -> None:
    class Broken:
        """The real engine, failing whole batches (what a fault in the engine does to every utterance it held)."""

        def __init__(self, real: Any) -> None:
            self.real, self.fail = real, True

        def transcribe(self, *args: Any) -> Transcript:
            return self.real.transcribe(*args)

        def prepare_many(self, requests: Any) -> list[Any]:
            if self.fail:
                raise MemoryError("no memory for the batch")
            return self.real.prepare_many(requests)

        def finish_many(self, prepared: Any) -> list[Any]:
            return self.real.finish_many(prepared)

    speech = said(components)
    engine = Broken(components.stt())
    batch = SpeechBatch(InferenceGate(), lambda: engine)
    batch.gate.enter()
    asked = [asyncio.ensure_future(batch.transcribe(speech[n], None, None, threading.Event()))
             for n in ("en_alarm_0730", "en_wakeup_0600")]
    await asyncio.sleep(0.2)
    batch.gate.leave()
    failed = await asyncio.gather(*asked, return_exceptions=True)
    # each utterance gets the error (its turn hears it again)
    assert all(isinstance(f, MemoryError) for f in failed), failed
    assert not batch.gate.busy
    engine.fail = False
    again = await batch.transcribe(speech["en_wakeup_0600"], None, None, threading.Event())
    assert "wake" in again.text.lower()


def test_hearing_more_waits_for_deciding_what_was_heard() -> None:
    gate = InferenceGate()
    order: list[str] = []
    gate.enter()  # a turn runs: both wait for it
    hear = threading.Thread(target=gate.speculative, args=(lambda: order.append("hear"),), kwargs={"later": True})
    hear.start()
    time.sleep(0.1)  # the job that hears more asked first
    decide = threading.Thread(target=gate.speculative, args=(lambda: order.append("decide"),))
    decide.start()
    time.sleep(0.1)
    gate.leave()
    hear.join(5)
    decide.join(5)
    assert order == ["decide", "hear"]
    assert not gate.busy


async def test_replies_waiting_for_their_voice_hold_none_of_the_turns_workers(components: Any) -> None:
    from hearthd.audio.tts import speak

    bank = components.voices
    lock = bank._voice_lock("en")  # the English voice is busy with a sentence
    lock.acquire()
    try:
        waiting = [asyncio.ensure_future(speak(bank, f"Timer set for {n} minutes.", "en")) for n in range(11, 21)]
        await asyncio.sleep(0.2)
        # a turn's step in the loop's default workers runs at once, beside ten replies waiting for the voice
        step = asyncio.get_running_loop().run_in_executor(None, lambda: "acted")
        assert await asyncio.wait_for(step, 5) == "acted"
        assert not any(w.done() for w in waiting)
    finally:
        lock.release()
    speeches = await asyncio.gather(*waiting)
    assert all(s.seconds > 0.5 for s in speeches)


def test_a_language_heard_in_whisper_s_30_s_costs_no_more_in_the_job(components: Any,
                                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """Russian (and Hindi) are read in whisper's 30 s after a glance in the short window: in the job as alone, the
    short window is encoded once, not once for the job and again for the utterance heard alone."""
    from faster_whisper import WhisperModel

    stt = components.stt()
    russian = said(components)["ru_alarm_0700"]
    windows: list[int] = []
    encode = WhisperModel.encode

    def counted(self: Any, features: np.ndarray) -> Any:
        windows.append(int(features.shape[-1]))
        return encode(self, features)

    monkeypatch.setattr(WhisperModel, "encode", counted)
    alone = stt.transcribe(russian)
    by_itself = list(windows)
    windows.clear()
    assert stt.transcribe_many([(russian, None, None)]) == [alone]
    assert alone.lang == "ru" and windows == by_itself == [1000, 3000]
