"""A speaker for wyoming-satellite's --snd-command: what one reply plays (raw 16-bit mono PCM on stdin, until
the satellite closes it) becomes OUTDIR/reply-<n>.wav, renamed into place whole once the reply has ended; beside it
reply-<n>.json says when its first audio arrived (`time.monotonic()`, for the latency bench)."""

from __future__ import annotations

import sys
import time

first_audio = 0.0


def main() -> None:
    global first_audio
    stdin = sys.stdin.buffer
    audio = stdin.read1(65536)
    first_audio = time.monotonic()
    audio += stdin.read()

    import json
    import wave
    from pathlib import Path

    out_dir, rate = Path(sys.argv[1]), int(sys.argv[2])
    n = 1
    while (out_dir / f"reply-{n}.wav").exists() or (out_dir / f".reply-{n}.wav.part").exists():
        n += 1
    partial = out_dir / f".reply-{n}.wav.part"
    with wave.open(str(partial), "wb") as w:
        w.setnchannels(1)
        w.setsampwidth(2)
        w.setframerate(rate)
        w.writeframes(audio)
    (out_dir / f"reply-{n}.json").write_text(json.dumps({"first": first_audio, "bytes": len(audio)}))
    partial.rename(out_dir / f"reply-{n}.wav")


if __name__ == "__main__":
    main()
