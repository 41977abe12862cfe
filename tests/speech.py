"""Speech for the tests that listen: a test voice with its random generator seeded, so every run hears the same audio.

hearthd's own `voices.synthesize` draws each utterance's variation afresh (Piper's noise), which is right for a reply
and wrong for a test: one run in a few, "Be quiet." came out as whisper base hears "Recruit.", and a test of "stop"
failed on a machine where it had passed many times. `said` is the evaluation's seeded voice
(hearthd.evaluation.voices: the same text and seed give the same audio, cached on disk), its own quiet lead and tail
cut off so the pauses are the test's.
"""

from __future__ import annotations

import numpy as np

from hearthd.audio.pcm import SAMPLE_RATE
from hearthd.evaluation.voices import speak


def said(text: str, lang: str = "en", seed: int = 0) -> np.ndarray:
    """`text` in `lang`'s test voice: 16 kHz mono int16, the voice's own quiet onsets and decays kept."""
    audio = speak(text, lang, seed)
    level = np.abs(audio.astype(np.int32))
    loud = np.flatnonzero(level > 0.02 * level.max())
    margin = int(0.03 * SAMPLE_RATE)
    return audio[max(0, loud[0] - margin):loud[-1] + 1 + margin] if len(loud) else audio
