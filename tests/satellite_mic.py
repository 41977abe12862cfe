"""A microphone for wyoming-satellite's --mic-command: raw 16 kHz mono int16 on stdout at real-time pace.

Silence until a WAV appears as DIR/say.wav (the test renames it into place whole); then that WAV's frames
(16 kHz mono 16-bit), and silence again. Stops when the satellite closes the pipe.

A block is written once its last sample has been "captured" (as a sound card delivers it), and when a WAV starts
DIR/said-<n>.json says when its first sample was (`time.monotonic()`, the clock every process on the machine
shares): the latency bench measures from there."""

from __future__ import annotations

import json
import sys
import time
import wave
from pathlib import Path

RATE = 16000
BLOCK = 1024  # samples written at a time (the satellite reads 1024-sample chunks)


def main() -> None:
    control = Path(sys.argv[1])
    out = sys.stdout.buffer
    started = time.monotonic()
    written = 0
    pending = b""
    said = 0
    while True:
        say = control / "say.wav"
        if not pending and say.exists():
            with wave.open(str(say), "rb") as w:
                assert (w.getframerate(), w.getnchannels(), w.getsampwidth()) == (RATE, 1, 2)
                pending = w.readframes(w.getnframes())
            say.unlink()
            said += 1
            part = control / f".said-{said}.json.part"
            part.write_text(json.dumps({"t": started + written / RATE, "samples": len(pending) // 2}))
            part.rename(control / f"said-{said}.json")
        block, pending = (pending[:BLOCK * 2], pending[BLOCK * 2:]) if pending else (bytes(BLOCK * 2), b"")
        block = block.ljust(BLOCK * 2, b"\0")
        ahead = started + (written + BLOCK) / RATE - time.monotonic()
        if ahead > 0:
            time.sleep(ahead)  # the block's last sample is "captured" now
        try:
            out.write(block)
            out.flush()
        except (BrokenPipeError, ValueError):
            return
        written += BLOCK


if __name__ == "__main__":
    main()
