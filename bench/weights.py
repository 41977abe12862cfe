"""The agent model from its own 4-bit file against its 8-bit copy (agent.weights: "as-is" against "q8_0").

    .venv/bin/python bench/weights.py [--stride 12] [--model PATH] [--no-hog]

Both arms are the same Agent over the suites' home (tests/data/commands/home.yaml, hearthd's real tools), the model
deciding every K-th case of tests/data/commands/<lang>.yaml alone (no templates: the model path's own cost), warm
(catalogue prefixes evaluated or loaded from the prompt cache first), the arms taking turns case by case and in
alternating order, so the machine's drift falls on both alike. Prints per arm the median and p95 of a decision
(request tokens, name choice, relevance check, arguments), the prompt tokens evaluated per second, the ratio of the
medians against "as-is", and how many decisions are identical (kind, calls, arguments, the detail asked); then the
same with a busy loop on every core.
"""

from __future__ import annotations

import argparse
import dataclasses
import multiprocessing
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hearthd.agent.agent import Agent  # noqa: E402
from hearthd.agent.model import ChatModel  # noqa: E402
from hearthd.config import load_config  # noqa: E402
from hearthd.daemon.components import make_store, prompt_cache_dir  # noqa: E402
from hearthd.evaluation.evaluate import load_home, load_suite  # noqa: E402


def _spin() -> None:
    while True:
        pass


def _key(decision: Any) -> tuple[Any, ...]:
    return (decision.kind, decision.missing, tuple((c.name, repr(sorted(c.arguments.items()))) for c in decision.calls))


def run(arms: dict[str, Agent], cases: list[Any]) -> tuple[dict[str, list[float]], dict[str, float], int]:
    times: dict[str, list[float]] = {name: [] for name in arms}
    tokens: dict[str, int] = dict.fromkeys(arms, 0)
    seconds: dict[str, float] = dict.fromkeys(arms, 0.0)
    same = 0
    for i, case in enumerate(cases):
        order = list(arms) if i % 2 == 0 else list(reversed(arms))
        keys = {}
        for name in order:
            agent = arms[name]
            evaluated = agent.model.evaluated_total
            began = time.perf_counter()
            decision = agent.decide(case.text, case.lang)
            took = time.perf_counter() - began
            times[name].append(took * 1000)
            tokens[name] += agent.model.evaluated_total - evaluated
            seconds[name] += took
            keys[name] = _key(decision)
        same += len(set(keys.values())) == 1
    rates = {name: tokens[name] / seconds[name] if seconds[name] else 0.0 for name in arms}
    return times, rates, same


def table(label: str, times: dict[str, list[float]], rates: dict[str, float], same: int, cases: int) -> None:
    base = statistics.median(times["as-is"])
    print(f"\n{label}: {cases} model decisions per arm, {same} identical")
    print(f"{'weights':<8} {'p50 ms':>8} {'p95 ms':>8} {'tokens/s':>9} {'p50 / as-is':>12}")
    for name, values in times.items():
        ordered = sorted(values)
        p95 = ordered[min(len(ordered) - 1, int(0.95 * len(ordered)))]
        print(f"{name:<8} {statistics.median(values):8.0f} {p95:8.0f} {rates[name]:9.1f} "
              f"{statistics.median(values) / base:11.2f}x")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--model", type=Path, help="a GGUF (default: the configured agent model)")
    ap.add_argument("--stride", type=int, default=12, help="every K-th case of each suite")
    ap.add_argument("--no-hog", action="store_true", help="only the idle run")
    args = ap.parse_args()
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as empty:
        cfg = load_config(empty.name, environ={})
    path = args.model or make_store(cfg).resolve(cfg.agent.model)
    home = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml")
    arms = {}
    for weights in ("as-is", "q8_0"):
        model = ChatModel(path, dataclasses.replace(cfg.agent, weights=weights))
        print(f"{weights}: {model.path.name} ({model.path.stat().st_size / 1e6:.0f} MB)")
        arms[weights] = Agent.configured(model, home.registry, cfg.agent, state_dir=prompt_cache_dir())
    suites = ROOT / "tests" / "data" / "commands"
    cases = [c for lang in ("en", "ru", "hi") for c in load_suite(suites / f"{lang}.yaml", lang)[:: args.stride]]
    for agent in arms.values():  # warm: every language's catalogue and relevance states ready before timing
        agent.prepare(["en", "ru", "hi"])
        for lang in ("en", "ru", "hi"):
            agent.decide("turn on the light", lang)
    table("idle", *run(arms, cases), len(cases))
    if not args.no_hog:
        hogs = [multiprocessing.Process(target=_spin, daemon=True) for _ in range(os.cpu_count() or 2)]
        for hog in hogs:
            hog.start()
        try:
            table(f"{len(hogs)} busy loops", *run(arms, cases), len(cases))
        finally:
            for hog in hogs:
                hog.kill()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
