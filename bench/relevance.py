"""The relevance check's two kinds of error, on one run: real commands it refuses and irrelevant requests it lets by.

    .venv/bin/python bench/relevance.py [--stride 3] [--bfcl-limit 60]

For each command of tests/data/commands/<lang>.yaml and of the everyday sets (tests/data/everyday/<lang>.yaml) that
hearthd's templates, the sentence library and the tolerant tier do not decide (the ones that reach the model, told the
domain the tolerant tier points at unless --no-domain-hint), the model decides with the check measuring but never
refusing; kept are P(yes) of the tool it chose, split into: answerable cases where it chose the expected tool (a
refusal there is a false refusal), and out-of-scope cases where it made a call (an acceptance there is a false
acceptance). The same for the benchmark's irrelevance category (any call is wrong). Prints both curves over the
threshold and the figures at the configured `agent.min_relevance`.
"""

from __future__ import annotations

import argparse
import statistics
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

ROOT = Path(__file__).resolve().parent.parent
MEASURE = 1e-9  # the check runs (and reports P(yes)) but never refuses
FEATURES: list[dict[str, object]] = []  # per scored call, for --dump


SUITES = ("commands", "everyday")  # tests/data/<name>/<lang>.yaml: the project's suites and the everyday sets


def suite_scores(stride: int, hint: bool = True) -> tuple[list[float], list[float], int]:
    """(P(yes) of right picks on answerable commands, P(yes) of calls on out-of-scope ones, model turns)."""
    import copy
    import os
    import tempfile

    from hearthd.agent.agent import Agent
    from hearthd.config import load_config
    from hearthd.daemon.components import Components
    from hearthd.evaluation.evaluate import load_suite
    from tests.test_library import HOME

    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp())
    empty = Path(tempfile.mkdtemp()) / "config.toml"
    empty.write_text("")
    cfg = copy.deepcopy(load_config(empty, environ={}))
    cfg.dbus.enabled = False
    c = Components(cfg)
    for e in HOME:
        c.catalogue.entities[e.key] = e
    fast = c.fast_path()
    base = c.agent()
    agent = Agent(base.model, c.tools, state_dir=base.state_dir, min_relevance=MEASURE)
    right: list[float] = []
    wrong: list[float] = []
    turns = 0
    from hearthd.agent.tolerant import TolerantMatcher

    tolerant = TolerantMatcher(fast)
    cases = [(lang, case) for lang in ("en", "ru", "hi") for name in SUITES
             if (ROOT / "tests" / "data" / name / f"{lang}.yaml").exists()
             for case in load_suite(ROOT / "tests" / "data" / name / f"{lang}.yaml", lang)[::stride]]
    for lang, case in cases:
        if fast.match(case.text, lang) is not None or (case.tool is None and not case.abstain):
            continue
        guess = tolerant.match(case.text, lang)  # what the tolerant tier decides never reaches the model
        if guess is not None and guess.kind != "abstain":
            continue
        among = guess.among if guess is not None and hint else []
        decision = agent.decide(case.text, lang, among=among) if among else agent.decide(case.text, lang)
        turns += 1
        if decision.relevance is None or not decision.calls:
            continue
        kind = "out_of_scope" if case.abstain else ("right" if decision.calls[0].name == case.tool else "wrong")
        keys = agent._grounded_keys(decision.calls[0].name)
        grounded = decision.kind == "call" and bool(keys) and keys <= set(decision.calls[0].arguments)
        FEATURES.append({"set": "suite", "lang": lang, "kind": kind, "text": case.text, "grounded": grounded,
                         "tool": decision.calls[0].name, "relevance": decision.relevance,
                         "p_tool": decision.name_probs.get(decision.calls[0].name, 0.0),
                         "p_none": decision.name_probs.get("no_tool", 0.0)})
        if case.abstain:
            wrong.append(decision.relevance)
        elif decision.calls[0].name == case.tool:
            right.append(decision.relevance)
    return right, wrong, turns


def bfcl_scores(limit: int) -> list[float]:
    import tempfile

    from hearthd.agent.agent import Agent
    from hearthd.config import load_config
    from hearthd.daemon.components import Components
    from hearthd.evaluation import bfcl
    from hearthd.evaluation.evaluate import (
        case_registry,
        run_bfcl,  # noqa: F401 — the same cases and registry the eval uses
    )

    empty = Path(tempfile.mkdtemp()) / "config.toml"
    empty.write_text("")
    model = Components(load_config(empty, environ={})).agent().model
    out = []
    for case in bfcl.load_cases(ROOT.parent / "shared" / "eval" / "bfcl", "irrelevance", limit):
        text = "\n".join(m["content"] for m in case.messages if m.get("role") == "user")
        decision = Agent(model, case_registry(case), state_dir=None, min_relevance=MEASURE).decide(text, "en")
        if decision.calls and decision.relevance is not None:
            out.append(decision.relevance)
            FEATURES.append({"set": "bfcl", "kind": "irrelevant", "text": text[:80], "tool": decision.calls[0].name,
                             "grounded": False,
                             "relevance": decision.relevance,
                             "p_tool": decision.name_probs.get(decision.calls[0].name, 0.0),
                             "p_none": decision.name_probs.get("no_tool", 0.0)})
        elif decision.kind == "call":
            out.append(1.0)
    return out


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--stride", type=int, default=3, help="every K-th command of each suite")
    ap.add_argument("--bfcl-limit", type=int, default=60, help="irrelevance cases of the benchmark")
    ap.add_argument("--dump", type=Path, help="write each scored call's P(yes) and name probabilities (JSON lines)")
    ap.add_argument("--no-domain-hint", action="store_true", help="the model chooses among every tool")
    args = ap.parse_args()
    right, wrong, turns = suite_scores(args.stride, not args.no_domain_hint)
    irrelevant = bfcl_scores(args.bfcl_limit)
    if args.dump:
        import json

        args.dump.write_text("".join(json.dumps(f, ensure_ascii=False) + "\n" for f in FEATURES), encoding="utf-8")
    n_bfcl = args.bfcl_limit
    print(f"model turns on the suites: {turns}; right picks scored: {len(right)}; out-of-scope calls: {len(wrong)}; "
          f"benchmark irrelevance cases: {n_bfcl} ({len(irrelevant)} reached a call)")
    for name, xs in (("right picks", right), ("out-of-scope calls", wrong), ("benchmark irrelevant", irrelevant)):
        if xs:
            print(f"  P(yes) {name}: median {statistics.median(xs):.2f}, min {min(xs):.2f}, max {max(xs):.2f}")
    print()
    print("| min_relevance | right picks refused | out-of-scope calls let by | benchmark irrelevance declined |")
    print("|---|---|---|---|")
    for t in (0.2, 0.25, 0.3, 0.35, 0.4, 0.45, 0.5, 0.55, 0.6):
        refused = sum(p < t for p in right) / len(right) if right else 0.0
        let_by = sum(p >= t for p in wrong) / len(wrong) if wrong else 0.0
        declined = 1 - sum(p >= t for p in irrelevant) / n_bfcl
        print(f"| {t:.2f} | {refused:.0%} | {let_by:.0%} | {declined:.1%} |")
    # Two bars: `high` for every call, `low` for a call whose required time/duration/name code read in the words
    # (agent.min_relevance / agent.min_relevance_grounded). The benchmark's functions carry no such evidence.
    suite = [f for f in FEATURES if f["set"] == "suite"]
    rights = [f for f in suite if f["kind"] == "right"]
    oos = [f for f in suite if f["kind"] == "out_of_scope"]
    print()
    print("| min_relevance / _grounded | right picks refused | out-of-scope calls let by "
          "| benchmark irrelevance declined |")
    print("|---|---|---|---|")
    for high, low in ((0.55, 0.55), (0.55, 0.45), (0.55, 0.4), (0.55, 0.35), (0.6, 0.4), (0.5, 0.4)):
        def passes(f: dict[str, object], high: float = high, low: float = low) -> bool:
            p = float(f["relevance"])  # type: ignore[arg-type]
            return p >= high or (bool(f["grounded"]) and p >= low)

        refused = sum(not passes(f) for f in rights) / len(rights) if rights else 0.0
        let_by = sum(passes(f) for f in oos) / len(oos) if oos else 0.0
        declined = 1 - sum(float(p) >= high for p in irrelevant) / n_bfcl
        print(f"| {high:.2f} / {low:.2f} | {refused:.0%} | {let_by:.0%} | {declined:.1%} |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
