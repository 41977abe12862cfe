"""Short generated sounds: the alarm chime (no sample files to ship, license or lose)."""

from __future__ import annotations

import numpy as np


def chime(rate: int, notes: tuple[float, ...] = (880.0, 1174.7, 1568.0), note_s: float = 0.16) -> np.ndarray:
    """A rising three-note chime, int16 at `rate`, each note with a soft attack and decay so it does not click."""
    t = np.arange(int(rate * note_s)) / rate
    envelope = np.minimum(1.0, t / 0.01) * np.exp(-t * 9.0)
    tones = [np.sin(2 * np.pi * f * t) * envelope for f in notes]
    gap = np.zeros(int(rate * 0.04))
    audio = np.concatenate([np.concatenate([tone, gap]) for tone in tones] + [np.zeros(int(rate * 0.25))])
    return (audio * 0.5 * 32767).astype(np.int16)
