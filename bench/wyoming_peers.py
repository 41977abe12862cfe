"""hearthd's Wyoming asr/tts against wyoming-faster-whisper and wyoming-piper, with the same models.

    .venv/bin/python bench/wyoming_peers.py [-n 5] [--hogs N] [--no-load] [--setup-only] [--keep-logs]

Starts three servers on 127.0.0.1, each on a free port of its own:
- hearthd: `hearthd run --headless` with a temporary XDG config and state (`[wyoming] uri`, MQTT and D-Bus off),
  its models from hearthd's own cache (whisper-base int8, beam 1; the Piper voice piper-en-joe);
- wyoming-faster-whisper with the SAME whisper-base CTranslate2 directory (--model DIR, int8, beam 1, cpu, en,
  --local-files-only);
- wyoming-piper with the SAME voice (--voice .../en_US-joe-medium.onnx, an empty --data-dir, no download).
The three programs and wyoming-bench each live in a virtual environment of their own under
~/.cache/hearthd/bench-venvs/<name> (each pins its own wyoming), made here with pip when missing; exit 2 when the
package registry cannot be reached.

Measured over the English samples (samples/en_*.wav that have a command, from AFTER_WAKE_S on, as Home Assistant
streams after the wake word) and a few sentences, N repetitions, idle and then with one CPU hog per core
(bench/contention.py's cpu_hogs):
- wyoming-bench `stt --mode non_streaming` (Total: transcribe sent -> transcript, the audio sent as fast as the
  socket takes it) and `tts --mode non_streaming` (TTFT: synthesize sent -> first audio-chunk);
- with the wyoming client here: transcript ready after audio-stop, the audio paced in real time (1024-sample chunks,
  each sent when it would have been recorded, audio-stop right after the last; wyoming-bench cannot measure this: it
  times from the first event and sends the audio unpaced), and first audio-chunk after synthesize.
Prints one table: medians, and hearthd / peer. The issue's goals: transcript-after-stop <= 0.5x the peer's,
first audio <= the peer's. Every process started here is stopped by its PID, on errors and Ctrl-C too.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import wave
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "bench"))

from contention import cpu_hogs  # noqa: E402
from wyoming.asr import Transcribe, Transcript  # noqa: E402
from wyoming.audio import AudioChunk, AudioStart, AudioStop  # noqa: E402
from wyoming.client import AsyncTcpClient  # noqa: E402
from wyoming.error import Error  # noqa: E402
from wyoming.info import Describe, Info  # noqa: E402
from wyoming.tts import Synthesize  # noqa: E402

from hearthd.config import Config, xdg_dir  # noqa: E402
from hearthd.daemon.components import make_store  # noqa: E402

PEERS = {"wyoming-bench": "2026.10.0", "wyoming-faster-whisper": "3.8.1", "wyoming-piper": "2.5.2"}
AFTER_WAKE_S = 1.3  # the samples' wake word ends at about 1.11 s (samples/README.md)
REFERENCES = {  # the commands of samples/generate.py, for wyoming-bench's accuracy columns
    "en_alarm_0730": "Set an alarm for seven thirty a.m.",
    "en_wakeup_0600": "Wake me up at six a.m.",
}
TEXTS = [
    "Your alarm is set for seven thirty tomorrow morning.",
    "It is twenty one degrees in the living room. The heating is off.",
    "The timer for ten minutes has started. I will ring when it is done. Anything else?",
]
CHUNK = 1024  # samples per audio-chunk, as Home Assistant and wyoming-bench send them
READ_S = 120.0  # the longest one answer may take
READY_S = 300.0  # the longest a server may take to start listening


class SetupError(Exception):
    """A bench virtual environment cannot be made (the registry cannot be reached, most likely)."""


# -- virtual environments --------------------------------------------------------------------------------------------


def venv_root() -> Path:
    return xdg_dir("XDG_CACHE_HOME", ".cache") / "hearthd" / "bench-venvs"


def ensure_venv(name: str, version: str) -> Path:
    """`name==version` in a venv of its own (made with pip when missing); its bin/ directory."""
    venv = venv_root() / name
    python = venv / "bin" / "python"
    if python.exists():
        shown = subprocess.run([str(python), "-m", "pip", "show", name], capture_output=True, text=True, check=False)
        if re.search(rf"^Version: {re.escape(version)}$", shown.stdout, re.M):
            return venv / "bin"
    print(f"setup: {name}=={version} into {venv} (pip, from the package registry)", flush=True)
    base = getattr(sys, "_base_executable", None) or sys.executable
    made = subprocess.run([base, "-m", "venv", "--clear", str(venv)], capture_output=True, text=True, check=False)
    if made.returncode != 0:
        raise SetupError(f"cannot make the virtual environment {venv}: {made.stderr.strip()[-800:]}")
    pip = subprocess.run([str(python), "-m", "pip", "install", "--disable-pip-version-check", "--retries", "2",
                          "--timeout", "30", f"{name}=={version}"], capture_output=True, text=True, check=False)
    if pip.returncode != 0:
        shutil.rmtree(venv, ignore_errors=True)  # half made: made afresh next time
        tail = "\n".join((pip.stdout + pip.stderr).strip().splitlines()[-12:])
        raise SetupError(f"pip cannot install {name}=={version} (is the package registry reachable?):\n{tail}")
    return venv / "bin"


# -- processes -------------------------------------------------------------------------------------------------------


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class Server:
    name: str  # as the table says it
    port: int
    proc: subprocess.Popen[bytes]
    log: Path


class Processes:
    """The servers started here, each stopped by its PID (SIGTERM, then SIGKILL) whatever happens."""

    def __init__(self, logs: Path) -> None:
        self.logs = logs
        self.servers: list[Server] = []
        self._files: list[TextIO] = []

    def start(self, name: str, port: int, argv: list[str], env: dict[str, str]) -> Server:
        log = self.logs / f"{name}.log"
        out = log.open("w")
        self._files.append(out)
        # its own session: a Ctrl-C reaches this script only, which then stops the server itself
        proc = subprocess.Popen(argv, cwd=ROOT, env=env, stdout=out, stderr=subprocess.STDOUT, start_new_session=True)
        server = Server(name, port, proc, log)
        self.servers.append(server)
        print(f"started {name} (pid {proc.pid}) on 127.0.0.1:{port}", flush=True)
        return server

    def stop_all(self) -> None:
        for server in self.servers:
            if server.proc.poll() is None:
                with contextlib.suppress(ProcessLookupError):
                    server.proc.terminate()
        for server in self.servers:
            try:
                server.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    server.proc.kill()
                server.proc.wait(timeout=10)
            print(f"stopped {server.name} (pid {server.proc.pid}, exit {server.proc.returncode})", flush=True)
        self.servers.clear()
        for f in self._files:
            f.close()


def tail(path: Path, lines: int = 25) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


async def wait_ready(server: Server) -> None:
    """Until the server answers describe (it exits or takes longer than READY_S: RuntimeError)."""
    deadline = time.monotonic() + READY_S
    while True:
        if server.proc.poll() is not None:
            raise RuntimeError(f"{server.name} exited ({server.proc.returncode}) before serving:\n{tail(server.log)}")
        try:
            client = AsyncTcpClient("127.0.0.1", server.port)
            await asyncio.wait_for(client.connect(), 5)
            try:
                await client.write_event(Describe().event())
                while True:
                    event = await asyncio.wait_for(client.read_event(), 10)
                    if event is None:
                        break
                    if Info.is_type(event.type):
                        return
            finally:
                with contextlib.suppress(Exception):
                    await client.disconnect()
        except (TimeoutError, OSError):
            pass
        if time.monotonic() > deadline:
            raise RuntimeError(f"{server.name} is not serving after {READY_S:.0f} s:\n{tail(server.log)}")
        await asyncio.sleep(0.5)


def cpu_seconds(pid: int) -> float:
    """CPU time a process has used so far (user + system)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def wait_idle(servers: list[Server], limit_s: float = 240.0) -> None:
    """Until every server has used less than 10% of a core for 3 s running (hearthd prepares its model's prompt in
    the background after it is ready): nothing of a start-up runs beside what is timed."""
    deadline = time.monotonic() + limit_s
    quiet = 0
    last = {s.name: cpu_seconds(s.proc.pid) for s in servers}
    while quiet < 3:
        if time.monotonic() > deadline:
            print(f"note: the servers were still busy after {limit_s:.0f} s; measuring anyway", flush=True)
            return
        time.sleep(1.0)
        now = {s.name: cpu_seconds(s.proc.pid) for s in servers}
        quiet = quiet + 1 if all(now[k] - last[k] < 0.1 for k in now) else 0
        last = now


def start_servers(procs: Processes, tmp: Path, bins: dict[str, Path], whisper_dir: Path, voice: Path,
                  threads: int) -> dict[str, Server]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("HEARTHD_", "DBUS_", "NOTIFY_SOCKET"))}
    env.update(HF_HUB_OFFLINE="1", PYTHONUNBUFFERED="1")
    servers: dict[str, Server] = {}

    port = free_port()
    config = tmp / "config" / "hearthd" / "config.toml"
    config.parent.mkdir(parents=True)
    (tmp / "state").mkdir()
    config.write_text(f'[wyoming]\nuri = "tcp://127.0.0.1:{port}"\n\n[mqtt]\nenabled = false\n\n'
                      '[dbus]\nenabled = false\n')
    hearthd_env = {**env, "XDG_CONFIG_HOME": str(tmp / "config"), "XDG_STATE_HOME": str(tmp / "state"),
                   "DBUS_SESSION_BUS_ADDRESS": f"unix:path={tmp}/no-bus"}
    servers["hearthd"] = procs.start("hearthd", port, [sys.executable, "-m", "hearthd", "run", "--headless"],
                                     hearthd_env)

    port = free_port()
    data = tmp / "faster-whisper-data"
    data.mkdir()
    servers["stt-peer"] = procs.start("wyoming-faster-whisper", port, [
        str(bins["wyoming-faster-whisper"] / "wyoming-faster-whisper"), "--uri", f"tcp://127.0.0.1:{port}",
        "--model", str(whisper_dir), "--data-dir", str(data), "--download-dir", str(data), "--local-files-only",
        "--language", "en", "--beam-size", "1", "--compute-type", "int8", "--device", "cpu",
        "--cpu-threads", str(threads)], env)

    port = free_port()
    data = tmp / "piper-data"
    data.mkdir()
    servers["tts-peer"] = procs.start("wyoming-piper", port, [
        str(bins["wyoming-piper"] / "wyoming-piper"), "--uri", f"tcp://127.0.0.1:{port}", "--voice", str(voice),
        "--data-dir", str(data), "--download-dir", str(data)], env)
    return servers


# -- measured with the wyoming client --------------------------------------------------------------------------------


@dataclass
class Sample:
    name: str
    pcm: bytes  # 16 kHz mono int16, from AFTER_WAKE_S on
    rate: int


def load_samples(corpus: Path) -> list[Sample]:
    """samples/en_*.wav with a known command, cut after the wake word; also written to `corpus` with a .txt each
    (wyoming-bench's corpus format)."""
    samples = []
    for path in sorted((ROOT / "samples").glob("en_*.wav")):
        if path.stem not in REFERENCES:
            print(f"note: {path.name} has no command (skipped)", flush=True)
            continue
        with wave.open(str(path), "rb") as w:
            rate, width, channels = w.getframerate(), w.getsampwidth(), w.getnchannels()
            frames = w.readframes(w.getnframes())
        if (width, channels) != (2, 1):
            raise SystemExit(f"{path}: not mono 16-bit PCM")
        pcm = frames[int(AFTER_WAKE_S * rate) * 2:]
        with wave.open(str(corpus / path.name), "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(rate)
            out.writeframes(pcm)
        (corpus / f"{path.stem}.txt").write_text(REFERENCES[path.stem] + "\n", encoding="utf-8")
        samples.append(Sample(path.stem, pcm, rate))
    if not samples:
        raise SystemExit("no English samples with a command in samples/")
    return samples


async def _read(client: AsyncTcpClient) -> Any:
    event = await asyncio.wait_for(client.read_event(), READ_S)
    if event is None:
        raise RuntimeError("the server closed the connection before answering")
    if Error.is_type(event.type):
        err = Error.from_event(event)
        raise RuntimeError(f"server error {err.code}: {err.text}")
    return event


async def transcript_after_stop(port: int, sample: Sample) -> tuple[float, str]:
    """Seconds from audio-stop to the transcript, the audio paced as a microphone gives it; and the text."""
    client = AsyncTcpClient("127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 10)
    try:
        await client.write_event(Transcribe(language="en").event())
        await client.write_event(AudioStart(rate=sample.rate, width=2, channels=1).event())
        started = time.perf_counter()
        step = CHUNK * 2
        for offset in range(0, len(sample.pcm), step):
            piece = sample.pcm[offset:offset + step]
            due = started + (offset + len(piece)) / 2 / sample.rate  # when its last sample was recorded
            await asyncio.sleep(max(0.0, due - time.perf_counter()))
            await client.write_event(AudioChunk(rate=sample.rate, width=2, channels=1, audio=piece).event())
        await client.write_event(AudioStop().event())
        stopped = time.perf_counter()
        while True:
            event = await _read(client)
            if Transcript.is_type(event.type):
                return time.perf_counter() - stopped, Transcript.from_event(event).text
    finally:
        with contextlib.suppress(Exception):
            await client.disconnect()


async def first_audio(port: int, text: str) -> float:
    """Seconds from synthesize to the first audio-chunk (the whole answer is read)."""
    client = AsyncTcpClient("127.0.0.1", port)
    await asyncio.wait_for(client.connect(), 10)
    try:
        sent = time.perf_counter()
        await client.write_event(Synthesize(text=text).event())
        first = None
        while True:
            event = await _read(client)
            if AudioChunk.is_type(event.type) and first is None:
                first = time.perf_counter() - sent
            elif AudioStop.is_type(event.type):
                if first is None:
                    raise RuntimeError(f"no audio for {text!r}")
                return first
    finally:
        with contextlib.suppress(Exception):
            await client.disconnect()


# -- measured with wyoming-bench -------------------------------------------------------------------------------------


def run_bench(bench: Path, args: list[str], log: Path) -> dict[str, float | None]:
    """wyoming-bench on one server; the medians of its non-streaming report (seconds) and its WER."""
    proc = subprocess.run([str(bench / "wyoming-bench"), *args], capture_output=True, text=True, timeout=1800,
                          check=False)
    with log.open("a") as f:
        f.write(f"$ wyoming-bench {' '.join(args)}\n{proc.stdout}{proc.stderr}\n")
    out: dict[str, float | None] = {"ttft": None, "total": None, "wer": None, "ok": None, "fail": None}
    block = proc.stdout.split("[non_streaming] ok=", 1)
    if proc.returncode != 0 or len(block) < 2:
        print(f"  wyoming-bench {args[0]} failed (exit {proc.returncode}); its output is in {log}", flush=True)
        return out
    head = re.match(r"(\d+) fail=(\d+)", block[1])
    if head:
        out["ok"], out["fail"] = float(head[1]), float(head[2])
    for key, label in (("ttft", "TTFT (ms)"), ("total", "Total (ms)")):
        row = re.search(rf"^\s+{re.escape(label)}\s+(.+)$", block[1], re.M)
        if row:
            cells = row[1].split()  # min mean median p95 max
            if len(cells) == 5 and cells[2] != "n/a":
                out[key] = float(cells[2]) / 1000
    wer = re.search(r"WER=([\d.]+)%", block[1])
    if wer:
        out["wer"] = float(wer[1]) / 100
    return out


def bench_stt(bench: Path, port: int, corpus: Path, n: int, log: Path) -> dict[str, float | None]:
    return run_bench(bench, ["stt", f"127.0.0.1:{port}", "--corpus", str(corpus), "--mode", "non_streaming",
                             "--config", json.dumps({"language": "en"}), "--rounds", str(n), "--warmup", "1",
                             "--trailing-silence", "0", "--timeout", str(READ_S)], log)


def bench_tts(bench: Path, port: int, n: int, log: Path) -> dict[str, float | None]:
    # --no-unique: neither server caches speech, and a random hex word at the end would only change the last sentence
    return run_bench(bench, ["tts", f"127.0.0.1:{port}", "--mode", "non_streaming", "--texts", *TEXTS,
                             "--no-unique", "--rounds", str(n), "--warmup", "1", "--timeout", str(READ_S)], log)


# -- one phase (idle or loaded) --------------------------------------------------------------------------------------


@dataclass
class Phase:
    stt_own: dict[str, list[float]] = field(default_factory=dict)  # hearthd / stt-peer: seconds after audio-stop
    tts_own: dict[str, list[float]] = field(default_factory=dict)  # hearthd / tts-peer: seconds to first audio
    stt_bench: dict[str, dict[str, float | None]] = field(default_factory=dict)
    tts_bench: dict[str, dict[str, float | None]] = field(default_factory=dict)
    texts: dict[tuple[str, str], set[str]] = field(default_factory=dict)  # (server, sample) -> transcripts
    load: tuple[float, float] = (0.0, 0.0)  # the machine's 1-minute load average at the start and the end


def measure(servers: dict[str, Server], samples: list[Sample], n: int, bench: Path, corpus: Path,
            logs: Path, label: str) -> Phase:
    phase = Phase()
    started_load = os.getloadavg()[0]
    stt_names, tts_names = ("hearthd", "stt-peer"), ("hearthd", "tts-peer")

    async def own() -> None:
        for rep in range(n):  # the servers take turns, so a drift of the machine hits both alike
            for sample in samples:
                for name in stt_names if rep % 2 == 0 else stt_names[::-1]:
                    seconds, text = await transcript_after_stop(servers[name].port, sample)
                    phase.stt_own.setdefault(name, []).append(seconds)
                    phase.texts.setdefault((name, sample.name), set()).add(text.strip())
            for text in TEXTS:
                for name in tts_names if rep % 2 == 0 else tts_names[::-1]:
                    phase.tts_own.setdefault(name, []).append(await first_audio(servers[name].port, text))

    print(f"[{label}] wyoming client: {n} x {len(samples)} paced transcriptions and {n} x {len(TEXTS)} syntheses "
          "per server", flush=True)
    asyncio.run(own())
    for name in stt_names:
        print(f"[{label}] wyoming-bench stt on {servers[name].name}", flush=True)
        phase.stt_bench[name] = bench_stt(bench, servers[name].port, corpus, n, logs / f"bench-{label}.log")
    for name in tts_names:
        print(f"[{label}] wyoming-bench tts on {servers[name].name}", flush=True)
        phase.tts_bench[name] = bench_tts(bench, servers[name].port, n, logs / f"bench-{label}.log")
    phase.load = (started_load, os.getloadavg()[0])
    return phase


async def warm_up(servers: dict[str, Server], samples: list[Sample]) -> None:
    """Each server's models loaded (they load on first use), before anything is timed."""
    for name in ("hearthd", "stt-peer"):
        _, text = await transcript_after_stop(servers[name].port, samples[0])
        print(f"warm: {servers[name].name} heard {text.strip()!r}", flush=True)
    for name in ("hearthd", "tts-peer"):
        await first_audio(servers[name].port, TEXTS[0])


# -- the table -------------------------------------------------------------------------------------------------------


def _ms(value: float | None) -> str:
    return "n/a" if value is None else f"{value * 1000:.0f}"


def _ratio(a: float | None, b: float | None) -> str:
    return "n/a" if a is None or b is None or b <= 0 else f"{a / b:.2f}x"


def _median(values: list[float] | None) -> float | None:
    return statistics.median(values) if values else None


def print_table(phases: dict[str, Phase], servers: dict[str, Server], n: int, hogs: int) -> None:
    rows = [  # label, peer key, goal, per phase: (hearthd value, peer value)
        ("transcript after audio-stop, paced (own)", "stt-peer", 0.5,
         lambda p: (_median(p.stt_own.get("hearthd")), _median(p.stt_own.get("stt-peer")))),
        ("stt Total, unpaced (wyoming-bench)", "stt-peer", None,
         lambda p: (p.stt_bench["hearthd"]["total"], p.stt_bench["stt-peer"]["total"])),
        ("first audio after synthesize (wyoming-bench TTFT)", "tts-peer", 1.0,
         lambda p: (p.tts_bench["hearthd"]["ttft"], p.tts_bench["tts-peer"]["ttft"])),
        ("first audio after synthesize (own)", "tts-peer", 1.0,
         lambda p: (_median(p.tts_own.get("hearthd")), _median(p.tts_own.get("tts-peer")))),
    ]
    names = list(phases)
    print()
    print(f"Wyoming asr/tts: hearthd vs wyoming-faster-whisper {PEERS['wyoming-faster-whisper']} / wyoming-piper "
          f"{PEERS['wyoming-piper']}, same models; medians of {n} repetitions, ms; {os.cpu_count()} cores")
    head = f"{'metric':<50}{'peer':<24}"
    for name in names:
        title = name if name == "idle" else f"{name} ({hogs} hogs)"
        head += f"{title:^30}"
    head += f"{'goal':>8}"
    print(head)
    sub = " " * 74 + f"{'hearthd':>10}{'peer':>10}{'ratio':>10}" * len(names)
    print(sub)
    print("-" * len(sub.rstrip() + " " * 8))
    verdicts = []
    for label, peer, goal, get in rows:
        line = f"{label:<50}{servers[peer].name:<24}"
        for name in names:
            ours, theirs = get(phases[name])
            line += f"{_ms(ours):>10}{_ms(theirs):>10}{_ratio(ours, theirs):>10}"
            if goal is not None and ours is not None and theirs:
                met = ours / theirs <= goal
                verdicts.append(f"{label} [{name}]: {ours / theirs:.2f}x, goal <= {goal:g}x: "
                                f"{'met' if met else 'NOT met'}")
        line += f"{'' if goal is None else f'<={goal:g}x':>8}"
        print(line)
    loads = ", ".join(f"{name} {p.load[0]:.1f} -> {p.load[1]:.1f}" for name, p in phases.items())
    print(f"1-minute load average during each phase (its hogs included): {loads}; more than the hogs means other "
          "work ran beside the bench")
    print()
    for verdict in verdicts:
        print(verdict)
    print()
    print("transcripts (own runs) and wyoming-bench WER:")
    for name in names:
        p = phases[name]
        for (server, sample), texts in sorted(p.texts.items()):
            print(f"  [{name}] {servers[server].name:<24} {sample:<16} {' | '.join(sorted(texts))}")
        for server in ("hearthd", "stt-peer"):
            wer = p.stt_bench[server]["wer"]
            print(f"  [{name}] {servers[server].name:<24} WER {'n/a' if wer is None else f'{wer:.0%}'}")


# -- main ------------------------------------------------------------------------------------------------------------


@contextlib.contextmanager
def terminated_as_interrupt() -> Iterator[None]:
    """SIGTERM to this script unwinds it like Ctrl-C, so the servers are stopped then too."""

    def raise_interrupt(signum: int, frame: Any) -> None:
        raise KeyboardInterrupt

    previous = signal.signal(signal.SIGTERM, raise_interrupt)
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", "--reps", type=int, default=5, help="repetitions of each sample and sentence")
    ap.add_argument("--hogs", type=int, default=os.cpu_count() or 2, help="CPU hogs in the loaded phase")
    ap.add_argument("--no-load", action="store_true", help="the idle phase only")
    ap.add_argument("--setup-only", action="store_true", help="make the bench virtual environments, then stop")
    ap.add_argument("--keep-logs", action="store_true", help="keep the servers' and wyoming-bench's logs")
    args = ap.parse_args()

    try:
        bins = {name: ensure_venv(name, version) for name, version in PEERS.items()}
    except SetupError as e:
        print(f"wyoming_peers: {e}", file=sys.stderr)
        return 2
    if args.setup_only:
        print(f"bench virtual environments ready in {venv_root()}")
        return 0

    cfg = Config()
    store = make_store(cfg)
    whisper_dir = store.resolve(cfg.stt.model)
    voice_spec = cfg.tts.voices["en"].partition(":")[2]
    voice = store.resolve(voice_spec)
    if voice.is_dir():
        voice = next(voice.glob("*.onnx"))
    print(f"whisper model: {whisper_dir}\nPiper voice:   {voice}", flush=True)

    tmp = Path(tempfile.mkdtemp(prefix="hearthd-wyoming-peers-"))
    logs = tmp / "logs"
    corpus = tmp / "corpus"
    logs.mkdir()
    corpus.mkdir()
    procs = Processes(logs)
    failed = True
    try:
        with terminated_as_interrupt():
            samples = load_samples(corpus)
            servers = start_servers(procs, tmp, bins, whisper_dir, voice, os.cpu_count() or 2)

            async def ready() -> None:
                await asyncio.gather(*(wait_ready(s) for s in servers.values()))
                await warm_up(servers, samples)

            asyncio.run(ready())
            wait_idle(list(servers.values()))
            phases = {"idle": measure(servers, samples, args.reps, bins["wyoming-bench"], corpus, logs, "idle")}
            if not args.no_load and args.hogs > 0:
                with cpu_hogs(args.hogs):
                    time.sleep(1.0)
                    phases["loaded"] = measure(servers, samples, args.reps, bins["wyoming-bench"], corpus, logs,
                                               "loaded")
            for server in servers.values():
                if server.proc.poll() is not None:
                    raise RuntimeError(f"{server.name} exited during the run:\n{tail(server.log)}")
            print_table(phases, servers, args.reps, args.hogs)
            failed = False
    except KeyboardInterrupt:
        print("\ninterrupted: stopping the servers", file=sys.stderr)
        return 130
    except (TimeoutError, RuntimeError, OSError) as e:
        print(f"wyoming_peers: {type(e).__name__}: {e}", file=sys.stderr)
        return 1
    finally:
        procs.stop_all()
        if args.keep_logs or failed:
            print(f"logs: {logs}", file=sys.stderr)
        else:
            shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
