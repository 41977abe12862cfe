"""Per-stage latency of the whole chain on the committed samples.

    .venv/bin/python bench/pipeline.py [-n 5] [--samples samples/en_alarm_0730.wav ...]

Prints model load times (once), then for each sample the median over N runs of every stage, the
end-of-speech → reply-audio latency, and the first (cold) run against the warm median.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import sys
import tempfile
import time
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hearthd.audio.wavio import read_wav  # noqa: E402
from hearthd.config import load_config  # noqa: E402
from hearthd.daemon.components import Components  # noqa: E402
from hearthd.daemon.pipeline import Pipeline  # noqa: E402
from hearthd.events import AbstainEvent, ErrorEvent, EventType, Trace  # noqa: E402

STAGES = ["wake", "vad", "stt", "agent", "tool", "tts", "end_of_speech_to_reply_audio"]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5, help="runs per sample (the first is reported as cold)")
    ap.add_argument("--samples", nargs="*", type=Path,
                    default=sorted(p for p in (ROOT / "samples").glob("*_0[0-9][0-9]0.wav")))
    args = ap.parse_args()

    with tempfile.NamedTemporaryFile("w", suffix=".toml") as empty:
        cfg = load_config(empty.name, environ={})
    loads: dict[str, float] = {}
    components = Components(cfg, on_load=lambda name, s: loads.__setitem__(name, s * 1000))
    started = time.monotonic()
    for get in (components.wake, components.endpointer, components.stt, components.agent):
        get()
    components.voices.voice("en")
    print("model loads (ms): " + ", ".join(f"{k} {v:.0f}" for k, v in loads.items())
          + f"; total {1000 * (time.monotonic() - started):.0f}")

    header = f"{'sample':<22}" + "".join(f"{s if s != 'end_of_speech_to_reply_audio' else 'eos->reply':>11}"
                                           for s in STAGES) + f"{'cold/warm':>11}  result"
    print(f"\nmedian ms over {args.n} runs (2 threads per model, warm models)")
    print(header)
    print("-" * len(header))
    for sample in args.samples:
        audio = read_wav(sample)
        runs: dict[str, list[float]] = defaultdict(list)
        outcome = ""
        for _ in range(args.n):
            trace = Trace()
            asyncio.run(Pipeline(components, trace).run_audio(audio))
            for e in trace.of_type(EventType.TIMING):
                runs[e.stage].append(e.ms)
            calls = trace.of_type(EventType.TOOL_CALL)
            outcome = (f"{calls[0].name} {calls[0].arguments}" if calls else
                       "no call: " + "; ".join(e.code if isinstance(e, ErrorEvent) else e.reason
                                              for e in trace.events if isinstance(e, ErrorEvent | AbstainEvent)))
        row = f"{sample.name:<22}"
        for stage in STAGES:
            row += f"{statistics.median(runs[stage]):>11.0f}" if runs.get(stage) else f"{'-':>11}"
        total = runs.get("end_of_speech_to_reply_audio", [])
        ratio = total[0] / statistics.median(total[1:]) if len(total) > 1 else float("nan")
        print(row + f"{ratio:>10.2f}x  {outcome}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
