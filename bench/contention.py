"""Model-path turns on a machine whose cores are busy elsewhere: OpenMP threads that spin vs threads that sleep.

    .venv/bin/python bench/contention.py [--cases K] [--hogs 0,1,2]

Each arm is a fresh process (the wait policy is read when the libraries load) that runs every K-th case of
tests/data/commands/en.yaml through Agent.decide (warm prefix) on the default model, with 0, 1 or 2 CPU hogs
(busy loops, one per core) beside it. Prints p50 / p95 / worst per turn, the ratio against the same policy idle,
and PASSIVE against ACTIVE under the same load, measured in the same run. hearthd's default is PASSIVE.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import multiprocessing
import os
import statistics
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

ARM = """
import json, sys, tempfile, time
sys.path.insert(0, {root!r})
from pathlib import Path
from hearthd.agent.agent import Agent
from hearthd.evaluation.evaluate import load_catalogue, load_suite
from hearthd.agent.model import ChatModel
from hearthd.config import load_config
from hearthd.daemon.components import make_store
with tempfile.NamedTemporaryFile("w", suffix=".toml") as f:
    cfg = load_config(f.name, environ={{}})
model = ChatModel(make_store(cfg).resolve(cfg.agent.model), cfg.agent)
agent = Agent(model, load_catalogue(Path({root!r}) / "tests/data/commands/tools.yaml"), min_relevance=0.55)
cases = load_suite(Path({root!r}) / "tests/data/commands/en.yaml", "en")[::{stride}]
agent.decide(cases[0].text, "en")
times = []
for case in cases:
    started = time.monotonic()
    agent.decide(case.text, "en")
    times.append((time.monotonic() - started) * 1000)
print(json.dumps(times))
"""


def _hog() -> None:
    while True:
        pass


@contextlib.contextmanager
def cpu_hogs(n: int) -> Iterator[None]:
    """`n` busy-loop processes (one per core to fill them) for as long as the context lasts; also used by
    bench/latency.py's loaded run."""
    workers = [multiprocessing.get_context("spawn").Process(target=_hog, daemon=True) for _ in range(n)]
    for w in workers:
        w.start()
    try:
        yield
    finally:
        for w in workers:
            w.terminate()
        for w in workers:
            w.join(5)


def run_arm(policy: str, hogs: int, stride: int) -> list[float]:
    with cpu_hogs(hogs):
        env = {**os.environ, "OMP_WAIT_POLICY": policy}
        out = subprocess.run([sys.executable, "-c", ARM.format(root=str(ROOT), stride=stride)], env=env,
                             capture_output=True, text=True, check=True, timeout=1800)
        return list(json.loads(out.stdout.strip().splitlines()[-1]))


def pct(times: list[float], q: float) -> float:
    ordered = sorted(times)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", type=int, default=12, help="every K-th case of the English suite")
    ap.add_argument("--hogs", default="0,1,2", help="CPU hogs beside the model, comma-separated")
    args = ap.parse_args()
    loads = [int(h) for h in args.hogs.split(",")]
    print(f"model-path turns, every {args.cases}th English suite case, on {os.cpu_count()} cores")
    header = (f"{'policy':<9}{'hogs':>5}{'turns':>7}{'p50 ms':>9}{'p95 ms':>9}{'worst ms':>10}{'vs idle':>9}"
              f"{'vs ACTIVE':>11}")
    print(header)
    print("-" * len(header))
    medians: dict[tuple[str, int], float] = {}
    for hogs in loads:
        for policy in ("ACTIVE", "PASSIVE"):
            times = run_arm(policy, hogs, args.cases)
            medians[(policy, hogs)] = statistics.median(times)
            idle = medians.get((policy, loads[0]), medians[(policy, hogs)])
            versus = medians[(policy, hogs)] / medians[("ACTIVE", hogs)]
            print(f"{policy:<9}{hogs:>5}{len(times):>7}{statistics.median(times):>9.0f}{pct(times, 0.95):>9.0f}"
                  f"{max(times):>10.0f}{medians[(policy, hogs)] / idle:>8.2f}x{versus:>10.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
