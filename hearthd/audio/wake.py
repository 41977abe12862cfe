"""Wake word detection with pymicro-wakeword (microWakeWord TFLite models, its own runtime)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

import numpy as np

from ..errors import HearthdError

CHUNK_SAMPLES = 160  # the feature frontend works in 10 ms steps


class WakeWordError(HearthdError):
    """A wake word model that does not exist or cannot load."""

    code = "wake-model-missing"


@dataclass
class WakeDetection:
    """The wake word fired: which model, how sure, and at which sample of the stream."""

    name: str
    score: float
    sample: int


class WakeWordDetector(Protocol):
    """Consumes 16 kHz int16 audio, reports a detection once per utterance."""

    name: str

    def process(self, audio: np.ndarray) -> WakeDetection | None: ...

    def reset(self) -> None: ...


def builtin_models() -> list[str]:
    from pymicro_wakeword import Model

    return [m.value for m in Model]


class MicroWakeWordDetector:
    """Streams audio through the microWakeWord feature frontend and model."""

    def __init__(self, model: str = "okay_nabu") -> None:
        from pymicro_wakeword import MicroWakeWord, MicroWakeWordFeatures, Model

        try:
            builtin = Model(model)
        except ValueError:
            raise WakeWordError(
                f"unknown wake word model {model!r}; built in: {', '.join(builtin_models())} (wake.model)"
            ) from None
        self.name = model
        self._model = MicroWakeWord.from_builtin(builtin)
        self._features = MicroWakeWordFeatures()
        self._samples = 0
        self.max_score = 0.0

    @property
    def cutoff(self) -> float:
        return float(self._model.probability_cutoff)

    def process(self, audio: np.ndarray) -> WakeDetection | None:
        """Feed int16 samples; returns the detection on the chunk where the score crosses the cutoff."""
        data = np.asarray(audio, dtype=np.int16)
        for start in range(0, len(data), CHUNK_SAMPLES):
            chunk = data[start:start + CHUNK_SAMPLES]
            self._samples += len(chunk)
            for features in self._features.process_streaming(chunk.tobytes()):
                prob = self._model.process_streaming_prob(features)
                if prob is None:
                    continue
                self.max_score = max(self.max_score, prob)
                if prob > self.cutoff:
                    return WakeDetection(self.name, round(float(prob), 3), self._samples)
        return None

    def reset(self) -> None:
        """Forget the stream so far (after a detection, so it does not fire twice)."""
        self._model.reset()
        self._features.reset()
        self._samples = 0
        self.max_score = 0.0
