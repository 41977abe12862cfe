"""Live-loop latency at real-time pace, as the user feels it: from the last voiced frame of the command (the last
voiced VAD window, measured by the bench on the audio it plays, on the source's capture clock) to the action
dispatched and to the first reply audio; also from the end of speech (the endpoint), whether the utterance ended on
a whole command (vad.complete_silence_ms), and the speech to text left after the end of speech. "streaming" is the
daemon as it runs (heard and decided in the pause: vad.speculate_ms), "batch" with nothing done before the end of
speech (vad.speculate_ms = 0). Then idle CPU while waiting for the wake word.

Audio comes from samples/ (the fast path, four languages) and from the English Piper voice (the model path, and one
the tolerant tier reads), fed by a WAV-backed source at real-time pace, so the models run while capture goes on
exactly as with a microphone. `--hog` measures the same again with a CPU hog (a busy loop) per core, and gives each
path's loaded/idle ratio. Against another commit, in one run (the bench measures the other tree's hearthd the same
way, its last-voice figures included):

    .venv/bin/python bench/against.py --base REV -- "$PWD/bench/latency.py" -n 2 --hog

The loaded run (`--loaded`) puts a CPU hog (a busy loop) on every core and measures the model path in streaming
mode against its budget (agent.max_turn_s, the default and `--budgets`), idle and loaded in the same run:
p50 / p95 / worst end of speech → action, and how many turns ended within budget + 1 s.

The satellite run (`--satellite`) puts the stock `wyoming-satellite` program (1.0.0, in the virtual environment
tests/test_satellites.py makes: ~/.cache/hearthd/satellite-venv) between the microphone and hearthd: it streams a
microphone that plays the same WAVs (tests/satellite_mic.py, at real-time pace) to hearthd's satellite hub, which
answers to its speaker (tests/satellite_snd.py). End of speech there is when the satellite's microphone captured the
sample the endpointer decides on (the mic says when each WAV began, on the clock all processes share), so the hop
(1024-sample chunks, the satellite, TCP, the hub) counts; → reply audio is when the satellite's speaker program got
its first audio. The same utterances go through the local live loop in the same run, idle and with a CPU hog per
core, and the table gives the medians and the ratio to the local loop as the daemon runs it (speculative speech to
text, which the hub does too; batch for reference). The goal: the hop adds ≤ 15 % to end of speech → action.

    .venv/bin/python bench/latency.py -n 3 [--hog]
    .venv/bin/python bench/latency.py --loaded-only -n 3 --budgets 3
    .venv/bin/python bench/latency.py --satellite -n 3
    .venv/bin/python bench/latency.py --satellite --rooms 10 -n 2

`--rooms N` (with --satellite): N stock satellites, one per room, each asking for its own timer; one room alone, all
N at once, and in waves (one room a second): end of speech → action per room, whether each room's action and reply
were its own, and hearthd's CPU. The goal: p95 with ten at once ≤ 3× the one-room figure on 2 cores.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import dataclasses
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
if not os.environ.get("PYTHONPATH"):  # bench/against.py gives another tree's hearthd: that one is measured
    sys.path.insert(0, str(ROOT))

sys.path.insert(0, str(ROOT / "bench"))

from contention import cpu_hogs  # noqa: E402

from hearthd.audio.io import MemorySink, WavSource, resample  # noqa: E402
from hearthd.audio.pcm import SAMPLE_RATE  # noqa: E402
from hearthd.audio.wavio import read_wav, write_wav  # noqa: E402
from hearthd.config import SatelliteConfig, load_config  # noqa: E402
from hearthd.cores import allowed_cores  # noqa: E402
from hearthd.daemon.components import Components  # noqa: E402
from hearthd.daemon.live import LiveLoop  # noqa: E402
from hearthd.events import EventType, Trace  # noqa: E402

# said by the English Piper voice: the first three are the model's (no template reads them), the last the tolerant's
# (until session 32: "Start counting down eleven minutes for the eggs.", "Could you do a countdown of twelve
# minutes?" and "I need to be up by seven tomorrow, can you make sure of that?", which the templates now read)
MODEL_PATH_TEXTS = ["I want to get up when it's six forty five tomorrow.",
                    "Watch the clock for eleven minutes for me.",
                    "Alert me after twelve minutes.",
                    "Set an alarm for every weekday at six forty five."]


def quiet(seconds: float, seed: int = 0) -> np.ndarray:
    return np.random.default_rng(seed).normal(0, 8, int(seconds * SAMPLE_RATE)).astype(np.int16)


def utterances(components: Components) -> list[tuple[str, np.ndarray]]:
    out = [(name, read_wav(ROOT / "samples" / f"{name}.wav")) for name in ("en_alarm_0730", "en_wakeup_0600",
                                                                           "ru_alarm_0700", "hi_alarm_0600")]
    wake = read_wav(ROOT / "samples" / "en_alarm_0730.wav")[: int(1.6 * SAMPLE_RATE)]  # noise + "Okay Nabu" + pause
    for i, text in enumerate(MODEL_PATH_TEXTS):
        speech = components.voices.synthesize(text, "en")
        out.append((f"piper_{i}", np.concatenate([wake, resample(np.asarray(speech.audio), speech.rate, SAMPLE_RATE),
                                                  quiet(0.8, i)])))
    return out


LEAD_S = 0.5  # quiet before each utterance


_LAST_VOICED: dict[bytes, int] = {}


def last_voiced(components: Components, audio: np.ndarray) -> int:
    """The sample at which the last voiced VAD window of `audio` ends (the command's last word), as the daemon's VAD
    sees it: measured here, by the bench, so that a tree that does not report it is measured the same way."""
    from hearthd.audio.vad import Endpointer, SpeechProbability

    key = np.ascontiguousarray(audio, dtype=np.int16).tobytes()
    if key not in _LAST_VOICED:
        vad = dataclasses.replace(components.cfg.vad, end_silence_ms=100_000, max_speech_s=1_000.0)
        endpointer = Endpointer(vad, SpeechProbability())
        endpointer.feed(audio)
        _LAST_VOICED[key] = int(endpointer._last_voiced)
    return _LAST_VOICED[key]


async def one_turn(components: Components, audio: np.ndarray) -> dict[str, float | str]:
    trace = Trace()
    source = WavSource(np.concatenate([quiet(LEAD_S), audio]), tail_s=None)
    loop = LiveLoop(components, trace, source, MemorySink(realtime=False))
    marks: dict[str, float] = {}

    def mark(event: Any) -> None:
        if event.type == EventType.TIMING and event.stage in ("end_of_speech_to_action",
                                                              "end_of_speech_to_reply_audio"):
            marks.setdefault(str(event.stage), time.monotonic())

    trace.listen(mark)
    spoken = last_voiced(components, audio)
    stopping = asyncio.Event()
    task = asyncio.create_task(loop.run(stopping))
    deadline = time.monotonic() + 60
    while loop.turns_done < 1 and time.monotonic() < deadline and not task.done():
        await asyncio.sleep(0.02)
    started = source._t0  # the source's capture clock (the event loop's, time.monotonic): sample k is heard by then
    stopping.set()
    await task
    block_s = source.block / SAMPLE_RATE
    heard = (started or 0.0) + math.ceil((LEAD_S * SAMPLE_RATE + spoken) / source.block) * block_s
    timings: dict[str, float] = {}
    for e in trace.of_type(EventType.TIMING):
        timings.setdefault(str(e.stage), float(e.ms))
    calls = trace.of_type(EventType.TOOL_CALL)
    abstained = trace.of_type(EventType.ABSTAIN)
    source = str(calls[0].source) if calls else str(abstained[0].source) \
        if abstained else "none"
    cut = any("budget" in str(e.reason) for e in abstained)
    stt_left = timings.get("stt_speculative", timings.get("stt", float("nan")))
    if "stt_speculative" in timings and "stt" in timings:  # the speculation was not usable: STT ran again
        stt_left += timings["stt"]
    await components.tools.get("cancel_all_alarms").handler({})
    await components.tools.get("cancel_timer").handler({})
    ends = [getattr(e, "complete", None) for e in trace.of_type(EventType.SPEECH_END)]
    heard_as = trace.of_type(EventType.TRANSCRIPT)
    return {"heard": f"{heard_as[0].lang}: {heard_as[0].text}" if heard_as else "",
            "source": source, "cut": float(cut), "agent": timings.get("agent", float("nan")),
            "complete": float(bool(ends and ends[0])),
            "last_action": 1000 * (marks["end_of_speech_to_action"] - heard)
            if "end_of_speech_to_action" in marks else float("nan"),
            "last_audio": 1000 * (marks["end_of_speech_to_reply_audio"] - heard)
            if "end_of_speech_to_reply_audio" in marks else float("nan"),
            "action": timings.get("end_of_speech_to_action", float("nan")),
            "audio": timings.get("end_of_speech_to_reply_audio", float("nan")), "stt_left": stt_left,
            "dropped": float(trace.of_type(EventType.METRICS)[0].frames_dropped)}


async def idle_cpu(components: Components, seconds: float) -> float:
    """Percent of one core used while only the wake word is being looked for."""
    loop = LiveLoop(components, Trace(), WavSource(quiet(seconds + 5), tail_s=None), MemorySink(realtime=False))
    stopping = asyncio.Event()
    task = asyncio.create_task(loop.run(stopping))
    await asyncio.sleep(1.0)  # past start-up
    cpu, wall = time.process_time(), time.monotonic()
    await asyncio.sleep(seconds)
    used = (time.process_time() - cpu) / (time.monotonic() - wall)
    stopping.set()
    await task
    return 100.0 * used


def p95(values: list[float]) -> float:
    return float(np.percentile(values, 95)) if values else float("nan")


async def loaded_run(components: Components, samples: list[tuple[str, np.ndarray]], n: int,
                     budgets: list[float]) -> None:
    """The model path, streaming, idle and with a CPU hog per core, for each budget (agent.max_turn_s)."""
    model_samples = [(name, audio) for name, audio in samples if name.startswith("piper_")]
    cores = len(allowed_cores())
    agent = components.agent()
    rows: list[tuple[float, str, list[dict[str, float | str]]]] = []
    for budget in budgets:
        components.cfg.agent.max_turn_s = agent.max_turn_s = budget
        for label, hogs in (("idle", 0), (f"{cores} hogs", cores)):
            with cpu_hogs(hogs):
                await asyncio.sleep(1.5)  # the free-core count sees the load
                runs = [await one_turn(components, audio) for _ in range(n) for _, audio in model_samples]
            rows.append((budget, label, runs))
            each = [f"{float(r['action']):.0f}/{float(r['stt_left']):.0f}/{float(r['agent']):.0f}" for r in runs]
            print(f"  budget {budget:g} s, {label}: action/STT after/agent ms " + ", ".join(each), flush=True)
    print(f"\nmodel path, streaming, {n} runs × {len(model_samples)} utterances, {cores} cores; a hog = a busy "
          "loop per core (ms; end of speech = endpoint)\n")
    print("| agent.max_turn_s | load | turns | → action p50 | → action p95 | → action worst | STT after p50 | "
          "agent p50 | agent worst | cut at the budget | within budget + 1 s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for budget, label, runs in rows:
        action = [float(r["action"]) for r in runs]
        within = sum(a <= (budget + 1) * 1000 for a in action)
        print(f"| {budget:g} s | {label} | {len(runs)} | {statistics.median(action):.0f} | {p95(action):.0f} | "
              f"{max(action):.0f} | {statistics.median(float(r['stt_left']) for r in runs):.0f} | "
              f"{statistics.median(float(r['agent']) for r in runs):.0f} | "
              f"{max(float(r['agent']) for r in runs):.0f} | "
              f"{sum(int(r['cut']) for r in runs)} | {within}/{len(runs)} |")


# -- every caller's budget ----------------------------------------------------------------------------------------

CALLER_TEXTS = [("en", MODEL_PATH_TEXTS[0]), ("en", MODEL_PATH_TEXTS[1]),
                ("ru", "Разбуди меня, когда будет без четверти семь."), ("hi", "मुझे पौने सात बजे उठा देना, ठीक है?")]


def ask_once(lang: str, text: str) -> tuple[float, float]:
    """`hearthd ask` as a process: (its turn, from the transcript to the reply, by its own trace; the whole
    process, start-up and model load included), in seconds."""
    env = dict(os.environ, HEARTHD__MQTT__ENABLED="false", HEARTHD__DBUS__ENABLED="false")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "hearthd", "ask", "--json", "--lang", lang, text], env=env,
                          capture_output=True, text=True, timeout=600)
    wall = time.monotonic() - started
    events = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    heard = next((e["t"] for e in events if e.get("type") == "transcript"), float("nan"))
    replied = next((e["t"] for e in events if e.get("type") == "reply"), float("nan"))
    return replied - heard, wall


async def callers_run(components: Components, n: int) -> None:
    """A text turn (what D-Bus Ask, MQTT and Wyoming `handle` run: Pipeline.run_text) in process, and the one-shot
    `hearthd ask`, on the model path, idle and with two busy loops per core: each turn against agent.max_turn_s + 1."""
    from hearthd.daemon.pipeline import Pipeline

    cores = len(allowed_cores())
    budget = components.cfg.agent.max_turn_s
    rows: list[tuple[str, str, list[float]]] = []
    for label, hogs in (("idle", 0), (f"{2 * cores} hogs", 2 * cores)):
        with cpu_hogs(hogs):
            await asyncio.sleep(1.5)
            turns: list[float] = []
            asked: list[float] = []
            walls: list[float] = []
            for _ in range(n):
                for lang, text in CALLER_TEXTS:
                    began = time.monotonic()
                    await Pipeline(components, Trace()).run_text(text, language=lang)
                    turns.append(time.monotonic() - began)
                    await components.tools.get("cancel_all_alarms").handler({})
                    await components.tools.get("cancel_timer").handler({})
                    turn, wall = await asyncio.get_running_loop().run_in_executor(None, ask_once, lang, text)
                    asked.append(turn)
                    walls.append(wall)
            rows += [(label, "text turn (D-Bus, MQTT, Wyoming handle)", turns),
                     (label, "hearthd ask: its turn", asked), (label, "hearthd ask: the whole process", walls)]
            print(f"  {label}: " + ", ".join(f"{t:.1f}/{a:.1f}/{w:.1f}" for t, a, w in zip(turns, asked, walls,
                                                                                         strict=True)), flush=True)
    print(f"\nevery caller, model path, {n} runs × {len(CALLER_TEXTS)} requests (en, ru, hi), {cores} cores, "
          f"agent.max_turn_s {budget:g} (s)\n")
    print("| load | caller | turns | p50 | p95 | worst | within max_turn_s + 1 s |")
    print("|---|---|---|---|---|---|---|")
    for label, caller, got in rows:
        clean = [g for g in got if g == g]
        within = sum(g <= budget + 1 for g in clean)
        print(f"| {label} | {caller} | {len(got)} | {statistics.median(clean):.1f} | {p95(clean):.1f} | "
              f"{max(clean):.1f} | {within}/{len(got)} |")


# -- the satellite hop --------------------------------------------------------------------------------------------

FAST_SAMPLES = ("en_alarm_0730", "en_wakeup_0600", "ru_alarm_0700")  # the fast path: the hop is a large share there


def satellite_python() -> Path | None:
    cache = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
    venv = Path(os.environ.get("HEARTHD_SATELLITE_VENV") or cache / "hearthd" / "satellite-venv")
    python = venv / "bin" / "python"
    return python if python.exists() else None


def decision_sample(components: Components, audio: np.ndarray) -> int:
    """The sample the endpointer decides the utterance is over on (after the wake word, as the hub listens),
    to a 32 ms VAD window: the satellite's end of speech is when its microphone captured that sample."""
    from hearthd.audio.vad import WINDOW, Endpointer, EndpointState, SpeechProbability

    detector = components.wake()
    detector.reset()
    detection = detector.process(audio)
    start = detection.sample if detection is not None else 0
    endpointer = Endpointer(components.cfg.vad, SpeechProbability())
    for at in range(start, len(audio) - WINDOW, WINDOW):
        if endpointer.feed(audio[at:at + WINDOW]) == EndpointState.DONE:
            return at + WINDOW
    raise RuntimeError("the endpointer never decided on this sample")


class BenchSatellite:
    """One wyoming-satellite process with the tests' WAV microphone and file speaker."""

    def __init__(self, python: Path, root: Path, name: str = "bench", area: str = "Kitchen") -> None:
        import socket

        with socket.socket() as sock:
            sock.bind(("127.0.0.1", 0))
            self.port = int(sock.getsockname()[1])
        self.mic, self.speaker = root / "mic", root / "speaker"
        self.mic.mkdir(parents=True)
        self.speaker.mkdir(parents=True)
        tests = ROOT / "tests"
        self.log = (root / "satellite.log").open("ab")
        self.proc = subprocess.Popen(
            [str(python), "-m", "wyoming_satellite", "--uri", f"tcp://127.0.0.1:{self.port}", "--name", name,
             "--area", area, "--no-zeroconf", "--mic-command",
             f"{sys.executable} {tests / 'satellite_mic.py'} {self.mic}",
             "--snd-command", f"{sys.executable} {tests / 'satellite_snd.py'} {self.speaker} 22050",
             "--snd-command-rate", "22050"], stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)
        self.said = 0

    def say(self, wav: Path) -> None:
        part = self.mic / "say.wav.part"
        part.write_bytes(wav.read_bytes())
        part.rename(self.mic / "say.wav")
        self.said += 1

    def close(self) -> None:
        import signal

        with contextlib.suppress(ProcessLookupError):
            os.killpg(self.proc.pid, signal.SIGTERM)
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, signal.SIGKILL)
            self.proc.wait(10)
        self.log.close()


async def satellite_turns(components: Components, sat: BenchSatellite, hub: Any, trace: Trace,
                          marks: dict[str, list[float]], wav: Path, decided: int) -> dict[str, float]:
    """One utterance through the satellite: its end of speech → action, → first audio at its speaker."""
    link = hub.links["bench"]
    done, replies = link.turns_done, len(list(sat.speaker.glob("reply-*.json")))
    marks.clear()
    sat.say(wav)
    deadline = time.monotonic() + 60
    while (link.turns_done <= done or len(list(sat.speaker.glob("reply-*.json"))) <= replies) \
            and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    said = json.loads((sat.mic / f"said-{sat.said}.json").read_text())
    reply = json.loads(sorted(sat.speaker.glob("reply-*.json"), key=lambda p: int(p.stem.split("-")[1]))[-1]
                       .read_text())
    end_of_speech = float(said["t"]) + decided / SAMPLE_RATE
    calls = [e for e in trace.of_type(EventType.TOOL_CALL)]
    await components.tools.get("cancel_all_alarms").handler({})
    await components.tools.get("cancel_timer").handler({})
    while link.mode != "wake" and time.monotonic() < deadline:
        await asyncio.sleep(0.02)
    return {"action": 1000 * (marks["action"][-1] - end_of_speech) if marks.get("action") else float("nan"),
            "audio": 1000 * (float(reply["first"]) - end_of_speech),
            "hop": 1000 * (marks["speech_end"][-1] - end_of_speech) if marks.get("speech_end") else float("nan"),
            "source": str(calls[-1].source) if calls else "none"}


async def satellite_run(components: Components, samples: list[tuple[str, np.ndarray]], n: int) -> None:
    """Local live loop and the satellite hop, same utterances, same run: idle, then a CPU hog per core."""
    from hearthd.daemon.satellites import SatelliteHub

    python = satellite_python()
    if python is None:
        print("no wyoming-satellite virtual environment (run tests/test_satellites.py once to make it): skipped")
        return
    chosen = [(name, np.concatenate([quiet(0.3), audio, quiet(1.0)])) for name, audio in samples
              if name in FAST_SAMPLES]
    root = Path(tempfile.mkdtemp(prefix="hearthd-satellite-bench-"))
    wavs = {}
    decided = {}
    for name, audio in chosen:
        wavs[name] = root / f"{name}.wav"
        write_wav(wavs[name], audio, SAMPLE_RATE)
        decided[name] = decision_sample(components, audio)
    streaming_ms = components.cfg.vad.speculate_ms
    sat = BenchSatellite(python, root / "satellite")
    trace = Trace()
    marks: dict[str, list[float]] = {}

    def mark(event: Any) -> None:
        if event.type == EventType.SPEECH_END:
            marks.setdefault("speech_end", []).append(time.monotonic())
        elif event.type == EventType.TIMING and event.stage == "end_of_speech_to_action":
            marks.setdefault("action", []).append(time.monotonic())

    trace.listen(mark)
    hub = SatelliteHub(components, trace, satellites=[SatelliteConfig(uri=f"tcp://127.0.0.1:{sat.port}",
                                                                      area="Kitchen", name="bench")])
    rows: list[tuple[str, str, list[dict[str, float | str]]]] = []
    cores = len(allowed_cores())
    try:
        await hub.start()
        deadline = time.monotonic() + 30
        while hub.links["bench"].mode != "wake" and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        if hub.links["bench"].mode != "wake":
            raise RuntimeError(f"the satellite did not start listening: {(root / 'satellite.log').read_text()}")
        await satellite_turns(components, sat, hub, trace, marks, wavs[chosen[0][0]], decided[chosen[0][0]])  # warm
        for label, hogs in (("idle", 0), (f"{cores} hogs", cores)):
            with cpu_hogs(hogs):
                await asyncio.sleep(1.5)
                runs: dict[str, list[dict[str, float | str]]] = {"local batch": [], "local streaming": [],
                                                                 "satellite": []}
                for _ in range(n):
                    for name, audio in chosen:  # interleaved: drift and load hit every path alike
                        for mode, speculate in (("local batch", 0), ("local streaming", streaming_ms)):
                            components.cfg.vad.speculate_ms = speculate
                            runs[mode].append(await one_turn(components, audio))
                        runs["satellite"].append(await satellite_turns(components, sat, hub, trace, marks,
                                                                       wavs[name], decided[name]))
                for path, got in runs.items():
                    rows.append((label, path, got))
                    each = [f"{float(r['action']):.0f}/{float(r['audio']):.0f}" for r in got]
                    print(f"  {label}, {path}: action/reply audio ms " + ", ".join(each), flush=True)
    finally:
        components.cfg.vad.speculate_ms = streaming_ms
        await hub.stop()
        sat.close()
    print(f"\nthe satellite hop, {n} runs × {len(chosen)} utterances (fast path), {cores} cores, real-time pace; "
          "ms, end of speech = the endpointer's sample captured (the satellite: by its microphone)\n")
    print("| load | path | turns | → action p50 | → action p95 | → reply audio p50 | → reply audio p95 | "
          "hop to the hub p50 | / local streaming, → action |")
    print("|---|---|---|---|---|---|---|---|---|")
    for label in dict.fromkeys(r[0] for r in rows):
        local = statistics.median(float(r["action"]) for lab, p, got in rows
                                  if lab == label and p == "local streaming" for r in got)
        for lab, path, got in rows:
            if lab != label:
                continue
            action = [float(r["action"]) for r in got]
            audio = [float(r["audio"]) for r in got]
            hop = statistics.median(float(r["hop"]) for r in got) if path == "satellite" else float("nan")
            ratio = f"{statistics.median(action) / local:.2f}×"
            print(f"| {label} | {path} | {len(got)} | {statistics.median(action):.0f} | {p95(action):.0f} | "
                  f"{statistics.median(audio):.0f} | {p95(audio):.0f} | "
                  f"{'' if hop != hop else f'{hop:.0f}'} | {ratio} |")


ROOM_MINUTES = 2  # room i asks for a timer of ROOM_MINUTES + i minutes: each room's action is told apart by it


async def rooms_run(components: Components, rooms: int, n: int) -> None:
    """`rooms` stock wyoming-satellite programs, each asking for its own timer ("set a timer for K minutes", K told
    apart per room, said by the English Piper voice after the wake word): one room alone, then all at once, then in
    waves (one room every WAVE_S); per room, its last word → action (the tool call made in that room's turn) and
    whether the room's action and reply were its own (its timer set from it, with its duration; one reply at its
    speaker); and the CPU hearthd's process used."""
    from hearthd.context import turn_origin
    from hearthd.daemon.satellites import SatelliteHub

    python = satellite_python()
    if python is None:
        print("no wyoming-satellite virtual environment (run tests/test_satellites.py once to make it): skipped")
        return
    root = Path(tempfile.mkdtemp(prefix="hearthd-rooms-bench-"))
    wake = read_wav(ROOT / "samples" / "en_alarm_0730.wav")[: int(1.6 * SAMPLE_RATE)]  # noise + "Okay Nabu" + pause
    wavs, decided = {}, {}
    for i in range(rooms):
        speech = components.voices.synthesize(f"Set a timer for {ROOM_MINUTES + i} minutes.", "en")
        audio = np.concatenate([quiet(0.3, i), wake, resample(np.asarray(speech.audio), speech.rate, SAMPLE_RATE),
                                quiet(1.0, i)])
        wavs[i] = root / f"room{i}.wav"
        write_wav(wavs[i], audio, SAMPLE_RATE)
        decided[i] = last_voiced(components, audio)  # the room's last word, as its microphone captured it
    sats = [BenchSatellite(python, root / f"room{i}", f"room{i}", f"Room {i}") for i in range(rooms)]
    trace = Trace()
    acted: dict[str, list[tuple[float, dict[str, Any]]]] = {}

    def mark(event: Any) -> None:
        if event.type == EventType.TOOL_CALL:  # in the turn's own context: the room it runs for
            acted.setdefault(turn_origin.get(), []).append((time.monotonic(), dict(event.arguments)))

    trace.listen(mark)
    hub = SatelliteHub(components, trace, satellites=[
        SatelliteConfig(uri=f"tcp://127.0.0.1:{sat.port}", area=f"Room {i}", name=f"room{i}")
        for i, sat in enumerate(sats)])

    lag = [0.0]  # the event loop's longest late wake-up in the wave (s): work done on the loop thread holds every room

    async def watch_lag() -> None:
        while True:
            began = time.monotonic()
            await asyncio.sleep(0.02)
            lag[0] = max(lag[0], time.monotonic() - began - 0.02)

    async def wave(which: list[int], gap_s: float) -> tuple[list[float], int, float]:
        """Rooms `which` speak (`gap_s` apart); their end of speech → action (ms), how many got their own action
        and reply, and hearthd's CPU (cores busy) meanwhile."""
        acted.clear()
        lag[0] = 0.0
        for timer in components.alarms.timers():
            components.alarms.remove(timer)
        replies = {i: len(list(sats[i].speaker.glob("reply-*.json"))) for i in which}
        cpu, wall = time.process_time(), time.monotonic()
        for k, i in enumerate(which):
            if k and gap_s:
                await asyncio.sleep(gap_s)
            sats[i].say(wavs[i])
        deadline = time.monotonic() + 60 + 10 * len(which)
        while time.monotonic() < deadline and not all(
                f"room{i}" in acted and len(list(sats[i].speaker.glob("reply-*.json"))) > replies[i] for i in which):
            await asyncio.sleep(0.05)
        busy = (time.process_time() - cpu) / (time.monotonic() - wall)
        times, own = [], 0
        timers = {t.origin: t.seconds for t in components.alarms.timers()}
        for i in which:
            said = json.loads((sats[i].mic / f"said-{sats[i].said}.json").read_text())
            end_of_speech = float(said["t"]) + decided[i] / SAMPLE_RATE  # the last voiced window's end
            calls = acted.get(f"room{i}", [])
            if calls:
                times.append(1000 * (calls[0][0] - end_of_speech))
            heard = len(list(sats[i].speaker.glob("reply-*.json"))) - replies[i]
            own += len(calls) == 1 and calls[0][1].get("seconds") == 60 * (ROOM_MINUTES + i) \
                and timers.get(f"room{i}") == 60 * (ROOM_MINUTES + i) and heard == 1
        while any(link.mode != "wake" for link in hub.links.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.05)
        return times, own, busy

    results: dict[str, tuple[list[float], int, int, float]] = {}
    watcher = asyncio.get_running_loop().create_task(watch_lag())
    try:
        await hub.start()
        deadline = time.monotonic() + 60
        while any(link.mode != "wake" for link in hub.links.values()) and time.monotonic() < deadline:
            await asyncio.sleep(0.1)
        idle_cpu, idle_wall = time.process_time(), time.monotonic()
        await asyncio.sleep(5)
        idle = (time.process_time() - idle_cpu) / (time.monotonic() - idle_wall)
        await wave([0], 0)  # warm
        for label, which, gap in [("one room", [0], 0.0), (f"{rooms} at once", list(range(rooms)), 0.0),
                                  (f"{rooms} in waves, {WAVE_S:g} s apart", list(range(rooms)), WAVE_S)]:
            every: list[float] = []
            owned, asked, cpu = 0, 0, []
            for _ in range(n if len(which) > 1 else 3 * n):
                times, own, busy = await wave(which, gap)
                every += times
                owned += own
                asked += len(which)
                cpu.append(busy)
                print(f"  {label}: last word → action ms " + ", ".join(f"{t:.0f}" for t in times)
                      + f"; own action and reply {own}/{len(which)}; hearthd {busy:.2f} cores; the event loop "
                      f"late by up to {1000 * lag[0]:.0f} ms", flush=True)
            results[label] = (every, owned, asked, statistics.median(cpu))
    finally:
        watcher.cancel()
        await hub.stop()
        for sat in sats:
            sat.close()
    single = p95(sorted(results["one room"][0]))
    print(f"\n{rooms} stock wyoming-satellite programs, {len(allowed_cores())} cores, real-time pace, fast path "
          f"(a timer each); ms from each room's last word (its last voiced VAD window, as its microphone captured it); "
          f"hearthd idle with {rooms} streams open: {idle:.2f} cores\n")
    print("| rooms speaking | turns | own action and reply | last word → action p50 | p95 | worst | p95 / one room's "
          "p95 | hearthd CPU (cores) |")
    print("|---|---|---|---|---|---|---|---|")
    for label, (times, owned, asked, cpu) in results.items():
        ordered = sorted(times) or [float("nan")]
        print(f"| {label} | {asked} | {owned}/{asked} | {statistics.median(ordered):.0f} | {p95(ordered):.0f} | "
              f"{ordered[-1]:.0f} | {p95(ordered) / single:.2f}× | {cpu:.2f} |")


WAVE_S = 1.0  # the gap between two rooms speaking "in waves"


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("-n", type=int, default=3, help="runs per sample and mode")
    parser.add_argument("--idle-s", type=float, default=10.0)
    parser.add_argument("-v", "--verbose", action="store_true", help="each live-loop turn as it ends")
    parser.add_argument("--callers", action="store_true",
                        help="only every caller's turn (text, one-shot ask) on the model path, idle and at 2x cores")
    parser.add_argument("--hog", action="store_true", help="the live-loop table again with a CPU hog per core")
    parser.add_argument("--loaded", action="store_true", help="also the model path with a CPU hog per core")
    parser.add_argument("--loaded-only", action="store_true", help="only the loaded run")
    parser.add_argument("--budgets", default="", help="agent.max_turn_s values besides the default, e.g. 3")
    parser.add_argument("--rooms", type=int, default=0,
                        help="with --satellite: N satellites, one room alone, all at once and in waves")
    parser.add_argument("--satellite", action="store_true",
                        help="only the satellite hop: wyoming-satellite against the local microphone, idle, loaded")
    args = parser.parse_args()
    with contextlib.suppress(ImportError):  # the same Piper utterances every run (as bench/against.py pins it)
        import onnxruntime

        onnxruntime.set_seed(0)  # before any session exists: a seed set later does not give the same draws
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="hearthd-bench-"))
    empty = Path(tempfile.mkdtemp()) / "config.toml"
    empty.write_text("")
    cfg = load_config(empty, environ={})
    cfg.mqtt.enabled = cfg.dbus.enabled = False
    components = Components(cfg)
    components.stt(), components.wake(), components.endpointer(), components.agent()
    components.prepare_model()  # as the daemon does after READY: the catalogue prefixes ready
    samples = utterances(components)
    await one_turn(components, samples[0][1])  # warm-up: caches, first-call costs
    if args.satellite and args.rooms:
        await rooms_run(components, args.rooms, args.n)
        return
    if args.satellite:
        await satellite_run(components, samples, args.n)
        return
    if args.callers:
        await callers_run(components, args.n)
        return
    if args.loaded or args.loaded_only:
        budgets = [cfg.agent.max_turn_s] + [float(b) for b in args.budgets.split(",") if b.strip()]
        await loaded_run(components, samples, args.n, budgets)
        components.cfg.agent.max_turn_s = components.agent().max_turn_s = budgets[0]
        if args.loaded_only:
            return
    cores = len(allowed_cores())
    loads = [("idle", 0)] + ([(f"{cores} hogs", cores)] if args.hog else [])
    rows: dict[tuple[str, str], dict[str, list[dict[str, float | str]]]] = {}
    streaming_ms = cfg.vad.speculate_ms  # read once: the batch runs set it to 0 (cfg is the components' own)
    for label, hogs in loads:
        with cpu_hogs(hogs):
            if hogs:
                await asyncio.sleep(1.5)  # the free-core count sees the load
            for _ in range(args.n):  # interleaved: drift hits every sample and mode alike
                for mode, speculate in (("streaming", streaming_ms), ("batch", 0)):
                    components.cfg.vad.speculate_ms = speculate
                    for name, audio in samples:
                        run = await one_turn(components, audio)
                        rows.setdefault((label, name), {}).setdefault(mode, []).append(run)
                        if args.verbose:
                            print(f"  {label} {mode} {name}: {run['source']}, last voice → action "
                                  f"{float(run['last_action']):.0f} ms, whole command {bool(run['complete'])}, "
                                  f"heard {run['heard']!r}", flush=True)
    components.cfg.vad.speculate_ms = streaming_ms
    print(f"\nlive loop, {args.n} runs per sample and mode, real-time pace, {cores} cores (ms, medians; last voice = "
          "the last voiced VAD window; end of speech = the endpoint; streaming = heard and decided in the pause, "
          "batch = after the end of speech)\n")
    print("| load | sample | path | mode | last voice → action | last voice → reply audio | end of speech → action | "
          "ended on a whole command | STT after end of speech | frames dropped |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    keys = ("last_action", "last_audio", "action", "audio", "stt_left")
    by_path: dict[tuple[str, str, str], dict[str, list[float]]] = {}
    for (label, name), modes in rows.items():
        for mode, runs in modes.items():
            path = str(runs[0]["source"])
            med = {k: statistics.median(float(r[k]) for r in runs) for k in keys}
            dropped = sum(float(r["dropped"]) for r in runs)
            print(f"| {label} | {name} | {path} | {mode} | {med['last_action']:.0f} | {med['last_audio']:.0f} | "
                  f"{med['action']:.0f} | {sum(int(r['complete']) for r in runs)}/{len(runs)} | "
                  f"{med['stt_left']:.0f} | {dropped:.0f} |")
            group = by_path.setdefault((label, path, mode), {k: [] for k in keys})
            for r in runs:
                for k in group:
                    group[k].append(float(r[k]))
    print("\n| load | path | mode | turns | last voice → action p50 | p95 | last voice → reply audio p50 | p95 | "
          "end of speech → action p50 | / idle, last voice → action p50 |")
    print("|---|---|---|---|---|---|---|---|---|---|")
    for (label, path, mode), g in sorted(by_path.items(), key=lambda kv: (kv[0][1], kv[0][2], kv[0][0] != "idle")):
        idle = by_path.get(("idle", path, mode))
        ratio = statistics.median(g["last_action"]) / statistics.median(idle["last_action"]) if idle else float("nan")
        print(f"| {label} | {path} | {mode} | {len(g['action'])} | {statistics.median(g['last_action']):.0f} | "
              f"{p95(g['last_action']):.0f} | {statistics.median(g['last_audio']):.0f} | {p95(g['last_audio']):.0f} | "
              f"{statistics.median(g['action']):.0f} | {ratio:.2f}× |")
    for label, _ in loads:
        streaming = [v for (lab, _p, m), g in by_path.items() if lab == label and m == "streaming"
                     for v in g["last_action"]]
        batch = [v for (lab, _p, m), g in by_path.items() if lab == label and m == "batch" for v in g["last_action"]]
        if streaming and batch:
            print(f"\n{label}: last voice → action, streaming/batch (medians): "
                  f"{statistics.median(streaming) / statistics.median(batch):.2f}×")
    print(f"idle CPU while waiting for the wake word: {await idle_cpu(components, args.idle_s):.1f} % of one core")


if __name__ == "__main__":
    asyncio.run(main())
