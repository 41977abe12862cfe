"""Endpointing: the silero VAD shipped with faster-whisper, run frame by frame with its state carried."""

from __future__ import annotations

import functools
import os
from dataclasses import dataclass
from enum import StrEnum
from typing import Any

import numpy as np

from ..config import VadConfig
from .pcm import SAMPLE_RATE

WINDOW = 512  # silero v6 works on 32 ms windows at 16 kHz
# Before speech is confirmed (vad.min_speech_ms), a pause this short between voiced windows keeps where the speech
# began: a first word is often a short burst, then a dip (a stop consonant, the gap before the next word), and
# starting again after the dip cut "lock", "book a", "kill" off the front of what whisper heard.
START_GAP_MS = 100.0
# the quiet kept after the last voiced window: the decay of the last syllable. vad.speculate_ms waits at least this
# long, so the utterance heard in the pause is the very audio the turn hears at the end of speech (whisper base hears
# a 96 ms tail otherwise than a 150 ms one: a Wyoming client's "wake me up" became "wait me up")
TAIL = int(0.15 * SAMPLE_RATE)
CONTEXT = 64


@functools.cache
def _silero() -> Any:
    """The silero VAD model, loaded once per process and shared by every stream: an ONNX Runtime session holds no
    stream's state and may be run from several threads at once. (Two per satellite, loaded each, took 3.1 GB for
    1,000 configured satellites before any connected.)"""
    import onnxruntime
    from faster_whisper.utils import get_assets_path

    from ..private import no_telemetry

    no_telemetry()
    opts = onnxruntime.SessionOptions()
    opts.inter_op_num_threads = 1
    opts.intra_op_num_threads = 1
    opts.log_severity_level = 4
    path = os.path.join(get_assets_path(), "silero_vad_v6.onnx")
    return onnxruntime.InferenceSession(path, providers=["CPUExecutionProvider"], sess_options=opts)


class SpeechProbability:
    """Streaming silero VAD: one speech probability per 512-sample window. The stream's state is its own; the model
    is shared."""

    def __init__(self) -> None:
        self._session = _silero()
        self.reset()

    def reset(self) -> None:
        self._h = np.zeros((1, 1, 128), dtype=np.float32)
        self._c = np.zeros((1, 1, 128), dtype=np.float32)
        self._context = np.zeros(CONTEXT, dtype=np.float32)

    def __call__(self, window: np.ndarray) -> float:
        """Probability of speech in one window of 512 float32 samples in [-1, 1]."""
        x = np.concatenate([self._context, window]).reshape(1, -1).astype(np.float32)
        out, self._h, self._c = self._session.run(None, {"input": x, "h": self._h, "c": self._c})
        self._context = window[-CONTEXT:]
        return float(np.asarray(out).reshape(-1)[0])


class EndpointState(StrEnum):
    WAITING = "waiting"
    SPEAKING = "speaking"
    DONE = "done"
    TIMEOUT = "timeout"


@dataclass
class Segment:
    """Where the speech is, in samples from the start of what the endpointer was fed."""

    start: int
    end: int


class Endpointer:
    """Finds the start and the end of one utterance: pre-roll, minimum speech, end silence, maximum length."""

    def __init__(self, cfg: VadConfig, vad: SpeechProbability) -> None:
        self.cfg = cfg
        self._vad = vad
        self.reset()

    def reset(self) -> None:
        self._vad.reset()
        self.state = EndpointState.WAITING
        self._pending = np.zeros(0, dtype=np.float32)
        self._pos = 0  # samples consumed in whole windows
        self._speech_start = -1
        self._last_voiced = -1
        self._voiced_run = 0  # voiced samples since the speech may have begun (before it is confirmed)
        self._gap = 0  # unvoiced samples since the last voiced window, while waiting
        self.segment: Segment | None = None
        self.ended_after_ms = 0.0  # the silence heard after the last voiced window when the utterance ended

    def _ms(self, samples: int) -> float:
        return samples * 1000.0 / SAMPLE_RATE

    def feed(self, audio: np.ndarray) -> EndpointState:
        """Feed int16 audio; returns the state after it (DONE once the utterance has ended)."""
        if self.state in (EndpointState.DONE, EndpointState.TIMEOUT):
            return self.state
        floats = np.asarray(audio, dtype=np.float32) / 32768.0
        self._pending = np.concatenate([self._pending, floats])
        cfg = self.cfg
        while len(self._pending) >= WINDOW:
            window, self._pending = self._pending[:WINDOW], self._pending[WINDOW:]
            prob = self._vad(window)
            start, self._pos = self._pos, self._pos + WINDOW
            voiced = prob >= cfg.threshold
            # hysteresis: once speaking, a dip just under the threshold is still speech
            if self.state == EndpointState.SPEAKING and prob >= cfg.threshold - 0.15:
                voiced = True
            if self.state == EndpointState.WAITING:
                # once it may have begun, the same hysteresis as while speaking, and a short gap keeps its start
                if voiced or (self._voiced_run and prob >= cfg.threshold - 0.15):
                    if self._voiced_run == 0:
                        self._speech_start = start
                    self._voiced_run += WINDOW
                    self._gap = 0
                    if self._ms(self._voiced_run) >= cfg.min_speech_ms:
                        self.state = EndpointState.SPEAKING
                        self._last_voiced = self._pos
                else:
                    self._gap += WINDOW
                    if self._ms(self._gap) > START_GAP_MS:  # a click or a breath, not the start of speech
                        self._voiced_run = 0
                    if self._ms(self._pos) >= cfg.no_speech_timeout_s * 1000:
                        self.state = EndpointState.TIMEOUT
                        return self.state
            elif self.state == EndpointState.SPEAKING:
                if voiced:
                    self._last_voiced = self._pos
                silence = self._pos - self._last_voiced
                too_long = self._ms(self._pos - self._speech_start) >= cfg.max_speech_s * 1000
                if self._ms(silence) >= cfg.end_silence_ms or too_long:
                    self._finish()
                    return self.state
        return self.state

    @property
    def trailing_silence_ms(self) -> float:
        """How long the speaker has been quiet (0 while speech goes on)."""
        return self._ms(self._pos - self._last_voiced) if self.state == EndpointState.SPEAKING else 0.0

    @property
    def last_voiced(self) -> int:
        """Where the last voiced window ends, in samples (-1 before speech): the same while the speaker stays quiet,
        so a guess made in the pause is still the speech's while it is."""
        return self._last_voiced

    def speech_so_far(self) -> Segment:
        """The utterance up to now, cut as `_finish` would cut it if it ended here (for speculative STT)."""
        pre = int(self.cfg.pre_roll_ms * SAMPLE_RATE / 1000)
        return Segment(max(0, self._speech_start - pre), min(self._pos, self._last_voiced + TAIL))

    def end_now(self) -> EndpointState:
        """The utterance ends here (its words already make a whole command: vad.complete_silence_ms), cut as
        `speech_so_far` cut it."""
        if self.state == EndpointState.SPEAKING:
            self._finish()
        return self.state

    def flush(self) -> EndpointState:
        """The input ended: an utterance in progress ends here."""
        if self.state == EndpointState.SPEAKING:
            self._finish()
        elif self.state == EndpointState.WAITING:
            self.state = EndpointState.TIMEOUT
        return self.state

    def _finish(self) -> None:
        pre = int(self.cfg.pre_roll_ms * SAMPLE_RATE / 1000)
        self.segment = Segment(max(0, self._speech_start - pre), min(self._pos, self._last_voiced + TAIL))
        self.ended_after_ms = self._ms(self._pos - self._last_voiced)
        self.state = EndpointState.DONE
