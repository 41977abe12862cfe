"""The hearthd agent against the naive baseline, on the same model and the same system prompts.

    .venv/bin/python bench/agent.py [-n 1] [--stride K] [--model PATH] [--tokens-only | --catalogue | --server]

naive:   llama-cpp-python `create_chat_completion(tools=...)` with the GGUF's own template, the answer
         parsed leniently (tool_calls, <tool_call> blocks, fenced or bare JSON);
hearthd: Agent.decide (prefilled call, grammar, validation, grounding, number words as digits).
All arms run warm (prompt prefix cached) over tests/data/commands/<lang>.yaml (every K-th case) with hearthd's
real tool declarations over the suites' home, tests/data/commands/home.yaml; prints accuracy (exact call,
abstention, or for a request missing a detail: hearthd asks for it, the naive arm at least does not guess),
median latency per language, and the median latency ratios against the naive arm.

--server: the model path run here (agent.engine = "local") against the same model on llama-cpp-python's inference
server (agent.engine = "server"; two `llama_cpp.server` processes started on 127.0.0.1, the agent's prompts on one
and the relevance check's on the other, or --uri/--check-uri for servers already running): on every case of the
suites, how many decisions are identical (kind, calls, arguments, the detail asked for), the latency of each engine
(median, p95) and their ratio, then the same with a CPU hog on every core.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hearthd.agent.agent import Agent  # noqa: E402
from hearthd.agent.fastpath import Router  # noqa: E402
from hearthd.agent.model import ChatModel  # noqa: E402
from hearthd.agent.parsing import ToolCallParseError, parse_tool_calls  # noqa: E402
from hearthd.config import load_config  # noqa: E402
from hearthd.daemon.components import make_store  # noqa: E402
from hearthd.evaluation.evaluate import Command, SuiteHome, load_home, load_suite  # noqa: E402
from hearthd.locale import system_prompt  # noqa: E402
from hearthd.tools.registry import ToolRegistry  # noqa: E402


def naive(model: ChatModel, registry: ToolRegistry, case: Command) -> list[tuple[str, dict]]:  # type: ignore[type-arg]
    out = model.llm.create_chat_completion(
        messages=[{"role": "system", "content": system_prompt(case.lang)}, {"role": "user", "content": case.text}],
        tools=[t.openai_schema() for t in registry],  # type: ignore[arg-type]
        temperature=0.0, max_tokens=model.cfg.max_tokens,
    )
    message = out["choices"][0]["message"]  # type: ignore[index]
    calls = []
    for tc in message.get("tool_calls") or []:
        with contextlib.suppress(KeyError, json.JSONDecodeError):
            calls.append((tc["function"]["name"], json.loads(tc["function"]["arguments"] or "{}")))
    if not calls:
        try:
            calls = [(c.name, c.arguments) for c in parse_tool_calls(message.get("content") or "")]
        except ToolCallParseError:
            calls = []
    return calls


def judge_naive(case: Command, calls: list[tuple[str, dict]], home: SuiteHome) -> bool:
    return calls == [] if case.kind == "clarify" else case.judge(calls, home)


def hearthd(agent: Agent | Router, case: Command, home: SuiteHome) -> bool:
    if isinstance(agent, Router):
        agent.reset()
    return case.judge_decision(agent.decide(case.text, case.lang), home)


def suites_agent(args: argparse.Namespace) -> tuple[Path, ChatModel, SuiteHome, Agent]:
    """The configured (or --model) model, the suites' home and an agent over its tools, as the daemon's bars set it."""
    with tempfile.NamedTemporaryFile("w", suffix=".toml") as empty:
        cfg = load_config(empty.name, environ={})
    path = args.model or make_store(cfg).resolve(cfg.agent.model)
    model = ChatModel(path, cfg.agent)
    home = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml")
    return path, model, home, Agent(model, home.registry, min_relevance=cfg.agent.min_relevance)


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("-n", type=int, default=1, help="passes over the suites (latency is the median of all)")
    ap.add_argument("--model", type=Path, help="a GGUF (default: the configured agent model)")
    ap.add_argument("--stride", type=int, default=1, help="every K-th case of each suite")
    ap.add_argument("--tokens-only", action="store_true", help="only the tokens-per-turn table")
    ap.add_argument("--catalogue", action="store_true",
                    help="only the whole catalogue against the requested tool's family alone (a smaller prompt)")
    ap.add_argument("--server", action="store_true", help="only the local engine against the inference server's")
    ap.add_argument("--uri", default="", help="with --server: a running llama_cpp.server (default: start one)")
    ap.add_argument("--check-uri", default="", help="with --server: the relevance check's server")
    ap.add_argument("--threads", type=int, default=1, help="with --server: threads of each server started")
    args = ap.parse_args()
    if args.server:
        return server_agreement(args)
    if args.tokens_only:
        return tokens_per_turn(args)
    if args.catalogue:
        return catalogue_size(args)
    path, model, home, agent = suites_agent(args)
    registry = home.registry
    router = home.router(lambda: agent)
    print(f"model: {path.name}; tools: {', '.join(t.name for t in registry)}")
    arms = [("naive", lambda c: judge_naive(c, naive(model, registry, c), home)),
            ("model", lambda c: hearthd(agent, c, home)), ("hearthd", lambda c: hearthd(router, c, home))]
    print("naive: create_chat_completion(tools=...); model: hearthd's model path alone; hearthd: fast path, then model")
    header = f"{'lang':<5}{'cases':>6}" + "".join(f"{a + ' ok':>12}{a + ' ms':>11}" for a, _ in arms[:3])
    header += f"{'model/naive':>13}{'hearthd/naive':>15}"
    print(header)
    print("-" * len(header))
    times: dict[str, list[float]] = {a: [] for a, _ in arms}
    for lang in ("en", "ru", "hi"):
        cases = load_suite(ROOT / "tests" / "data" / "commands" / f"{lang}.yaml", lang)[:: args.stride]
        row = f"{lang:<5}{len(cases):>6}"
        medians = {}
        for name, run in arms:
            run(cases[0])  # warm the prompt prefix of this arm, so every arm is measured warm
            oks, arm_times = 0, []
            for _ in range(args.n):
                for case in cases:
                    started = time.monotonic()
                    oks += run(case)
                    arm_times.append((time.monotonic() - started) * 1000)
            times[name] += arm_times
            medians[name] = statistics.median(arm_times)
            row += f"{oks / args.n:>8.0f}/{len(cases):<3}{medians[name]:>11.1f}"
        row += f"{medians['model'] / medians['naive']:>12.2f}x{medians['hearthd'] / medians['naive']:>14.4f}x"
        print(row)
    for name in ("model", "hearthd"):
        ratio = statistics.median(times[name]) / statistics.median(times["naive"])
        print(f"all languages: median latency {name}/naive = {ratio:.4f}x")
    print()
    return tokens_per_turn(args)


def tokens_per_turn(args: argparse.Namespace) -> int:
    """Tokens evaluated per model-path turn, the default model and a tiny qwen35 side by side."""
    from tests.tinymodel import QWEN35_TEMPLATE, write_tiny_qwen35

    with tempfile.NamedTemporaryFile("w", suffix=".toml") as empty:
        cfg = load_config(empty.name, environ={})
    default = args.model or make_store(cfg).resolve(cfg.agent.model)
    registry = load_home(ROOT / "tests" / "data" / "commands" / "home.yaml").registry
    cases = [c for lang in ("en", "ru", "hi")
             for c in load_suite(ROOT / "tests" / "data" / "commands" / f"{lang}.yaml", lang)[::max(args.stride, 8)]]
    with tempfile.TemporaryDirectory() as tmp:
        tiny = write_tiny_qwen35(Path(tmp) / "tiny-qwen35.gguf", default, QWEN35_TEMPLATE.read_text(encoding="utf-8"))
        print(f"tokens evaluated per model-path turn, {len(cases)} requests (en, ru, hi) in one process")
        header = (f"{'model':<28}{'cache':<9}{'calls':<6}{'prefix':>8}{'first':>8}{'later p50':>11}{'later max':>11}"
                  f"{'restores':>10}{'turn p50 ms':>13}")
        print(header)
        print("-" * len(header))
        for path, threads in ((default, 0), (tiny, 1)):
            cfg.agent.threads = threads
            model = ChatModel(path, cfg.agent)
            agent = Agent(model, registry, min_relevance=cfg.agent.min_relevance)
            counts, times, firsts = [], [], {}
            for case in cases:
                started = time.monotonic()
                d = agent.decide(case.text, case.lang)
                times.append((time.monotonic() - started) * 1000)
                if d.prefix == "warm":
                    counts.append(d.evaluated)
                else:
                    firsts[case.lang] = d.evaluated
            caps = model.capabilities
            prefix = len(model.tokens(agent.prefix("en")))
            print(f"{path.name[:27]:<28}{'hybrid' if caps.hybrid else 'kv':<9}{caps.dialect:<6}{prefix:>8}"
                  f"{firsts.get('en', 0):>8}{statistics.median(counts):>11.0f}{max(counts):>11}{model.restores:>10}"
                  f"{statistics.median(times):>13.0f}")
            model.llm.close()
    return 0


def catalogue_size(args: argparse.Namespace) -> int:
    """The model path with the whole catalogue in its prompt (what hearthd does) against a prompt showing only the
    tools of the requested family (a domain prompt, as if the domain were known before the model ran): prefix
    tokens, tokens per turn, turn time with each prefix cached, and how many decisions are right and the same."""
    path, model, home, agent = suites_agent(args)
    registry = home.registry
    families = {t.name: t.family for t in registry}
    cases = [c for lang in ("en", "ru", "hi")
             for c in load_suite(ROOT / "tests" / "data" / "commands" / f"{lang}.yaml", lang)[::max(args.stride, 4)]
             if c.tool is not None and families.get(c.tool)]
    whole = registry.offered
    arms: dict[str, list[tuple[int, int, float, bool, tuple[str, ...]]]] = {"whole catalogue": [], "its family": []}
    for _ in range(args.n):
        for case in cases:
            for arm in arms:
                family = families[case.tool or ""]
                registry.offered = whole if arm == "whole catalogue" else (  # type: ignore[method-assign]
                    lambda f=family: [t for t in whole() if t.family == f])
                agent.prepare([case.lang])  # each prefix cached before the turn: the turn's own cost
                started = time.monotonic()
                d = agent.decide(case.text, case.lang)
                ms = (time.monotonic() - started) * 1000
                arms[arm].append((len(model.prefix_tokens(agent.prefix(case.lang))), d.evaluated, ms,
                                  case.judge_decision(d, home), (d.kind, *(c.name for c in d.calls))))
    registry.offered = whole  # type: ignore[method-assign]
    print(f"model path, {path.name}, {len(cases)} requests with a call (en, ru, hi, every {max(args.stride, 4)}th), "
          f"{args.n} pass(es); each prefix cached before its turn\n")
    print("| prompt | prefix tokens p50 | tokens per turn p50 | turn ms p50 | turn ms p95 | right | same decision |")
    print("|---|---|---|---|---|---|---|")
    base = arms["whole catalogue"]
    for arm, rows in arms.items():
        ms = sorted(r[2] for r in rows)
        same = sum(a[4] == b[4] for a, b in zip(rows, base, strict=True))
        print(f"| {arm} | {statistics.median(r[0] for r in rows):.0f} | {statistics.median(r[1] for r in rows):.0f} | "
              f"{statistics.median(ms):.0f} | {ms[int(0.95 * (len(ms) - 1))]:.0f} | {sum(r[3] for r in rows)}/"
              f"{len(rows)} | {same}/{len(rows)} |")
    ratio = statistics.median(r[2] for r in arms["its family"]) / statistics.median(r[2] for r in base)
    print(f"\nturn time, family prompt / whole catalogue: {ratio:.2f}x")
    return 0


def _decision(d: object) -> tuple[object, ...]:
    calls = tuple((c.name, json.dumps(c.arguments, sort_keys=True)) for c in d.calls)  # type: ignore[attr-defined]
    return d.kind, calls, d.missing  # type: ignore[attr-defined]


def server_agreement(args: argparse.Namespace) -> int:
    """The same decisions through the server (issue 31): agreement and latency, idle and under load."""
    import os

    from contention import cpu_hogs  # the hogs bench/latency.py uses (bench/ is on sys.path when run)

    from hearthd.agent.server import ServerModel
    from hearthd.evaluation.servers import llama_server

    path, model, home, local = suites_agent(args)
    cases = [c for lang in ("en", "ru", "hi")
             for c in load_suite(ROOT / "tests" / "data" / "commands" / f"{lang}.yaml", lang)[:: args.stride]]
    with contextlib.ExitStack() as stack:
        uri = args.uri or stack.enter_context(llama_server(path, model.cfg.n_ctx, args.threads))
        check = args.check_uri or (stack.enter_context(llama_server(path, 2048, args.threads)) if not args.uri
                                   else "")
        remote = Agent(ServerModel(path, model.cfg, uri, check), home.registry,
                       min_relevance=local.min_relevance)
        print(f"model: {path.name}; {len(cases)} cases (en, ru, hi, every {args.stride}th); the model path alone "
              f"(Agent.decide); server: {uri}" + (f", relevance check: {check}" if check else ""))
        for load in (0, os.cpu_count() or 1):
            rows: dict[str, list[tuple[bool, float, float]]] = {}
            with cpu_hogs(load):
                for i, case in enumerate(cases):
                    if not i or case.lang != cases[i - 1].lang:
                        # the language's prompt prefix evaluated before its first measured turn (a server keeps one
                        # prompt: a turn in another language than the last evaluates its catalogue again)
                        for agent in (local, remote):
                            agent.prepare([case.lang])
                    began = time.monotonic()
                    mine = local.decide(case.text, case.lang)
                    middle = time.monotonic()
                    theirs = remote.decide(case.text, case.lang)
                    ended = time.monotonic()
                    same = _decision(mine) == _decision(theirs)
                    if not same:
                        print(f"  differs [{case.lang}] {case.text!r}: local {_decision(mine)} / server "
                              f"{_decision(theirs)} ({theirs.reason})")
                    rows.setdefault(case.lang, []).append((same, (middle - began) * 1000, (ended - middle) * 1000))
            print(f"\n{'idle' if not load else f'a CPU hog on each of {load} cores'}:")
            print("| lang | cases | same decisions | local ms p50 | local p95 | server ms p50 | server p95 | "
                  "server/local |")
            print("|---|---|---|---|---|---|---|---|")
            every = [r for lang_rows in rows.values() for r in lang_rows]
            for lang, lang_rows in [*rows.items(), ("all", every)]:
                loc = sorted(r[1] for r in lang_rows)
                srv = sorted(r[2] for r in lang_rows)
                same = sum(r[0] for r in lang_rows)
                ratio = statistics.median(srv) / statistics.median(loc)
                print(f"| {lang} | {len(lang_rows)} | {same} ({100 * same / len(lang_rows):.1f} %) | "
                      f"{statistics.median(loc):.0f} | {loc[int(0.95 * (len(loc) - 1))]:.0f} | "
                      f"{statistics.median(srv):.0f} | {srv[int(0.95 * (len(srv) - 1))]:.0f} | {ratio:.2f}x |")
        server_model = remote.model
        side = server_model.side(0)
        both = [server_model] + ([side] if side is not server_model else [])
        turns = 2 * len(cases) + 2
        print(f"\non the wire, per model turn (both servers): {sum(m.requests for m in both) / turns:.1f} requests, "
              f"{sum(m.sent for m in both) / turns / 1000:.1f} kB sent, "
              f"{sum(m.received for m in both) / turns / 1000:.1f} kB received")
    return 0


if __name__ == "__main__":
    sys.exit(main())
