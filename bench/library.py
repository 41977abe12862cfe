"""The sentence library's cost: compiling Home Assistant's templates once per process, and each turn after that.

    .venv/bin/python bench/library.py [-n 5]

Prints, per language: the first match in a fresh process (the templates compiled), then the median per-turn time of
the library and of hearthd's own templates (the baseline, the same sentences, the same run), idle and with a CPU
hog on every core; then the whole fast path as the daemon runs it (own templates, then the library) and the tolerant
tier on sentences the templates miss (TOLERANT), p50 and p95 per utterance, idle and loaded. No model loads.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

SENTENCES = {
    "en": ["turn off all the kitchen lights", "are any doors unlocked", "how many lights are on upstairs",
           "what time is it", "turn on the living room lamp", "close the blinds in the bedroom",
           "set an alarm for 7", "is the front door locked"],
    "ru": ["выключи весь свет на кухне", "сколько ламп включено", "который час", "включи свет в спальне",
           "поставь будильник на семь"],
    "hi": ["रसोई की लाइट बंद करो", "कितने बजे हैं", "बेडरूम की लाइट जला दो", "सात बजे का अलार्म लगाओ"],
}

# Said loosely or misheard: the strict templates miss them, the tolerant tier reads them (hearthd/agent/tolerant.py)
TOLERANT = {
    "en": ["lamp bedroom on now thanks", "bedroom blinds shut them", "kitchen light, switch it off would you"],
    "ru": ["свет на кухне погаси-ка", "включи-ка лампу в спальне", "поставь ты мир на пять минут"],
    "hi": ["ज़रा बेडरूम की बत्ती जला दो ना", "पंखा जालू करो", "दस मिनेत का तामर लगा दो"],
}

COLD = """
import sys, time
sys.path.insert(0, {root!r})
t = time.perf_counter()
from bench.library import library
lib = library()
lib.match({text!r}, {lang!r})
print(time.perf_counter() - t)
"""


def library():  # type: ignore[no-untyped-def]
    from hearthd.agent.library import Library
    from hearthd.tools.alarms import AlarmBook
    from hearthd.tools.catalogue import Catalogue
    from hearthd.tools.discovery import Entity
    from hearthd.tools.registry import ToolRegistry
    from hearthd.tools.smarthome import SmartHome

    catalogue = Catalogue(None)
    for key, component, name, area in [("kl", "light", "Kitchen Light", "Kitchen"),
                                       ("lr", "light", "Living Room Lamp", "Living Room"),
                                       ("bl", "light", "Bedroom Lamp", "Bedroom"),
                                       ("fd", "lock", "Front Door", "Hallway"),
                                       ("bb", "cover", "Bedroom Blinds", "Bedroom")]:
        catalogue.entities[f"{component}.{key}"] = Entity(key, f"{component}.{key}", component, name, area,
                                                          config={"command_topic": f"{key}/set"})

    async def link() -> None:
        return None

    registry = ToolRegistry([*SmartHome(catalogue, link).tools(), *AlarmBook().tools()])
    return Library(registry, lambda: catalogue, {"Upstairs": ["Bedroom"]})


def _hog(stop: float) -> None:
    while time.monotonic() < stop:
        pass


def medians(n: int) -> dict[str, tuple[float, float]]:
    from hearthd.agent.fastpath import FastPath

    lib = library()
    own = FastPath(lib.registry)
    out = {}
    for lang, sentences in SENTENCES.items():
        lib.match(sentences[0], lang)
        own.match(sentences[0], lang)
        times: dict[str, list[float]] = {"library": [], "own": []}
        for _ in range(n):
            for text in sentences:
                for name, match in (("library", lib.match), ("own", own.match)):
                    t = time.perf_counter()
                    match(text, lang)
                    times[name].append((time.perf_counter() - t) * 1000)
        out[lang] = (statistics.median(times["library"]), statistics.median(times["own"]))
    return out


def tiers(n: int) -> dict[str, dict[str, list[float]]]:
    """Per language, ms per utterance: the fast path as the daemon runs it, and the tolerant tier on what it misses."""
    from hearthd.agent.fastpath import FastPath
    from hearthd.agent.tolerant import TolerantMatcher

    lib = library()
    fast = FastPath(lib.registry, lib)
    tolerant = TolerantMatcher(fast)
    out: dict[str, dict[str, list[float]]] = {}
    for lang, sentences in SENTENCES.items():
        fast.match(sentences[0], lang)
        tolerant.index(lang)
        times: dict[str, list[float]] = {"fast path": [], "tolerant": []}
        for _ in range(n):
            for name, texts, match in (("fast path", sentences, fast.match),
                                       ("tolerant", TOLERANT[lang], tolerant.match)):
                for text in texts:
                    t = time.perf_counter()
                    match(text, lang)
                    times[name].append((time.perf_counter() - t) * 1000)
        out[lang] = times
    return out


def _p95(values: list[float]) -> float:
    return sorted(values)[max(0, int(round(0.95 * len(values))) - 1)]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=5, help="passes over the sentences")
    args = ap.parse_args()
    root = str(Path(__file__).resolve().parent.parent)
    print("| language | first match, fresh process (compile) ms |")
    print("|---|---|")
    for lang, sentences in SENTENCES.items():
        runs = [float(subprocess.run([sys.executable, "-c", COLD.format(root=root, text=sentences[0], lang=lang)],
                                     capture_output=True, text=True, check=True).stdout) * 1000 for _ in range(3)]
        print(f"| {lang} | {statistics.median(runs):.0f} |")
    idle, idle_tiers = medians(args.n), tiers(args.n)
    stop = time.monotonic() + 3600
    hogs = [multiprocessing.Process(target=_hog, args=(stop,), daemon=True) for _ in range(os.cpu_count() or 1)]
    for h in hogs:
        h.start()
    try:
        loaded, loaded_tiers = medians(args.n), tiers(args.n)
    finally:
        for h in hogs:
            h.terminate()
    print()
    print("| language | library p50 ms | own templates p50 ms | ratio | library p50, a hog per core | own, hogs |")
    print("|---|---|---|---|---|---|")
    for lang in SENTENCES:
        (lib, own), (lib_l, own_l) = idle[lang], loaded[lang]
        print(f"| {lang} | {lib:.1f} | {own:.1f} | {lib / own:.2f} | {lib_l:.1f} | {own_l:.1f} |")
    print()
    print("| language | tier | p50 ms | p95 ms | p50, a hog per core | p95, hogs |")
    print("|---|---|---|---|---|---|")
    for lang in SENTENCES:
        for tier in ("fast path", "tolerant"):
            a, b = idle_tiers[lang][tier], loaded_tiers[lang][tier]
            print(f"| {lang} | {tier} | {statistics.median(a):.1f} | {_p95(a):.1f} | {statistics.median(b):.1f} "
                  f"| {_p95(b):.1f} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
