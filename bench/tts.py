"""The Piper voice's time and memory: as Piper's own `PiperVoice.load` makes it (the baseline: onnxruntime's arena
keeps its peak) and as hearthd runs it (hearthd/audio/tts.py: each run gives the arena's free memory back).

    .venv/bin/python bench/tts.py [-n 3]

Each setting runs in a fresh process: the median time to speak an everyday reply, the time for one piece of
200 characters that espeak reads out as many words (digits), and the process's RSS once both are spoken (what a
daemon keeps after it). Idle, then with a busy loop on every core. No model but the English voice loads.
"""

from __future__ import annotations

import argparse
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

REPLIES = ["Turned off the Kitchen Light.", "It's 7:30 in the morning.", "Timer set for 10 minutes.",
           "Unlock the Front Door? Please say yes or no.", "The living room is at 21 degrees."]
LONG = ("123456789 " * 20)[:200]

CHILD = """
import json, os, sys, time
from pathlib import Path
from piper import PiperVoice
from hearthd.audio.tts import PiperTextToSpeech
model = Path(sys.argv[1]); piper = sys.argv[2] == "piper"; n = int(sys.argv[3])
replies = json.loads(sys.argv[4]); long = sys.argv[5]
tts = PiperTextToSpeech(model)
if piper:
    tts.voice = PiperVoice.load(str(model))
def rss():
    return int(next(l for l in open("/proc/self/status") if l.startswith("VmRSS")).split()[1]) // 1024
tts.synthesize("hello")
times = []
for _ in range(n):
    for r in replies:
        t = time.perf_counter(); tts.synthesize(r); times.append(time.perf_counter() - t)
t = time.perf_counter(); tts.synthesize(long); long_s = time.perf_counter() - t
for r in replies:
    tts.synthesize(r)
print(json.dumps({"times": times, "long_s": long_s, "rss_mb": rss()}))
"""


def model_path() -> Path:
    """The default English voice, as the daemon resolves it (the set-up installs it)."""
    from hearthd.config import load_config
    from hearthd.daemon.components import Components

    return Components(load_config(None))._piper_voice_path("piper-en-joe")


def run(model: Path, how: str, n: int) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", CHILD, str(model), how, str(n), json.dumps(REPLIES), LONG],
                         capture_output=True, text=True, check=True, cwd=Path(__file__).resolve().parent.parent)
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def hog(stop: float) -> None:
    while time.monotonic() < stop:
        pass


def table(model: Path, n: int, label: str) -> None:
    rows = {how: run(model, how, n) for how in ("piper", "hearthd")}
    base = statistics.median(rows["piper"]["times"])  # type: ignore[arg-type]
    print(f"\n{label}: {model.name}")
    print(f"  {'loaded by':<10}{'reply p50 ms':>14}{'ratio':>8}{'200 digits s':>14}{'RSS after MB':>14}")
    for how, r in rows.items():
        p50 = statistics.median(r["times"])  # type: ignore[arg-type]
        print(f"  {how:<10}{p50 * 1000:>14.0f}{p50 / base:>8.2f}{r['long_s']:>14.1f}{r['rss_mb']:>14}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("-n", type=int, default=3, help="rounds of the everyday replies per setting")
    args = parser.parse_args()
    model = model_path()
    table(model, args.n, "idle")
    stop = time.monotonic() + 600
    hogs = [multiprocessing.Process(target=hog, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 1)]
    for h in hogs:
        h.start()
    try:
        table(model, args.n, f"loaded ({len(hogs)} busy loops)")
    finally:
        for h in hogs:
            h.terminate()


if __name__ == "__main__":
    main()
