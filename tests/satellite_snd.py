"""A speaker for wyoming-satellite's --snd-command: what one reply plays (raw 16-bit mono PCM on stdin, until
the satellite closes it) becomes OUTDIR/reply-<n>.wav, renamed into place whole once the reply has ended."""

from __future__ import annotations

import sys
import wave
from pathlib import Path


def main() -> None:
    out_dir, rate = Path(sys.argv[1]), int(sys.argv[2])
    audio = sys.stdin.buffer.read()
    n = 1
    while (out_dir / f"reply-{n}.wav").exists():
        n += 1
    partial = out_dir / f".reply-{n}.wav.part"
    with wave.open(str(partial), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(audio)
    partial.rename(out_dir / f"reply-{n}.wav")


if __name__ == "__main__":
    main()
