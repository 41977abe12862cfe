"""Spoken suites: each command of tests/data/spoken/<lang>.yaml said by a natural test voice (English: Piper; Russian:
festival + festvox-ru; Hindi: Kokoro-82M; hearthd/evaluation/voices.py, seeded and cached), run through the chain as
`hearthd run --input FILE --no-wake` runs it (endpointing, whisper base, the tiers, the policy) in the suites' home
(tests/data/commands/home.yaml), and judged as the typed suites are.

Per language a table: right or wrong, the tier that decided (the decision's source: fastpath, tolerant, model,
dialogue, ..., or error when the turn ended without a decision), what whisper wrote, and the action (tool and
arguments; "asks first" when the policy holds it for a yes). Then the right-action share per language and per tier.
The language is detected, as the product does, unless --lang-forced. --no-bias, --no-rescore, --no-tolerant and
--no-domain-hint switch off stt.bias, stt.rescore, agent.tolerant and agent.domain_hint, to measure what each step
brings.

The components are built once and reused (models load once); --cli instead shells each utterance out to the real
`hearthd run` (a process per utterance, slow: for a spot-check with --limit).

    .venv/bin/python bench/spoken.py                          # all three languages
    .venv/bin/python bench/spoken.py --lang hi --limit 10
    .venv/bin/python bench/spoken.py --no-tolerant --no-bias  # without two of the steps
    .venv/bin/python bench/spoken.py --cli --limit 3          # spot-check against the real command
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import statistics
import sys
import tempfile
import unicodedata
from collections import defaultdict
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from hearthd.audio.pcm import SAMPLE_RATE  # noqa: E402
from hearthd.audio.wavio import write_wav  # noqa: E402
from hearthd.config import load_config  # noqa: E402
from hearthd.evaluation.evaluate import Command, load_home, load_suite  # noqa: E402
from hearthd.evaluation.spoken_suites import Flags, Heard, SpokenRunner, run_cli, temporary_work  # noqa: E402
from hearthd.evaluation.voices import SpokenVoices  # noqa: E402

SUITES = ROOT / "tests" / "data" / "spoken"
HOME = ROOT / "tests" / "data" / "commands" / "home.yaml"
LANGS = ("en", "ru", "hi")


def width(text: str) -> int:
    """Columns `text` takes in a terminal (Devanagari's combining signs take none)."""
    return sum(0 if unicodedata.combining(c) or unicodedata.category(c) in ("Mn", "Me", "Cf") else 1 for c in text)


def cell(text: str, columns: int) -> str:
    while width(text) > columns:
        text = text[:-2] + "…"
    return text + " " * (columns - width(text))


def expected(command: Command) -> str:
    if command.abstain:
        return "declined"
    if command.clarify:
        return f"asks for {command.clarify} ({command.tool})"
    return f"{command.tool} {json.dumps(command.arguments, ensure_ascii=False, sort_keys=True)}"


def show(heard: Heard) -> None:
    mark = "ok  " if heard.ok else "MISS"
    line = f"  {mark} {cell(heard.tier, 10)} {cell(heard.transcript or '-', 44)} {heard.action}"
    if not heard.ok:
        line += f"   [said: {heard.command.text}; want: {expected(heard.command)}]"
    print(line, flush=True)


def summary(results: dict[str, list[Heard]], flags: Flags) -> list[dict[str, object]]:
    rows: list[dict[str, object]] = []
    for lang, heard in results.items():
        tiers: dict[str, list[bool]] = defaultdict(list)
        for h in heard:
            tiers[h.tier].append(h.ok)
        rows.append({
            "type": "spoken_summary", "lang": lang, "cases": len(heard), "right": sum(h.ok for h in heard),
            "accuracy": round(sum(h.ok for h in heard) / len(heard), 4) if heard else 0.0,
            "errors": sum(h.kind == "error" for h in heard),
            "heard_in_language": sum(h.heard_lang == lang for h in heard),
            "wrong_actions": sum(not h.ok and h.kind == "call" for h in heard),  # acted, and not as asked
            "tiers": {t: {"cases": len(oks), "right": sum(oks)} for t, oks in sorted(tiers.items())},
            "p50_ms": round(statistics.median(h.ms for h in heard), 0) if heard else 0.0,
            "flags": {"bias": flags.bias, "rescore": flags.rescore, "tolerant": flags.tolerant,
                      "domain_hint": flags.domain_hint, "lang_forced": flags.lang_forced,
                      "household": flags.household},
        })
    return rows


def print_summary(rows: list[dict[str, object]]) -> None:
    print("\nright action per language")
    print(f"  {'lang':<6}{'cases':>6}{'right':>7}{'share':>8}{'wrong acts':>12}{'errors':>8}{'heard as lang':>15}"
          f"{'p50 ms':>8}")
    for r in rows:
        print(f"  {r['lang']!s:<6}{r['cases']!s:>6}{r['right']!s:>7}{100 * float(r['accuracy']):>7.1f}%"  # type: ignore[arg-type]
              f"{r['wrong_actions']!s:>12}{r['errors']!s:>8}{r['heard_in_language']!s:>15}{r['p50_ms']!s:>8}")
    print("\nper tier (the decision's source): right / decided")
    tiers = sorted({t for r in rows for t in r["tiers"]})  # type: ignore[attr-defined]
    print(f"  {'tier':<12}" + "".join(f"{str(r['lang']):>12}" for r in rows) + f"{'all':>12}")
    for t in tiers:
        cells, right, cases = [], 0, 0
        for r in rows:
            got = r["tiers"].get(t, {"cases": 0, "right": 0})  # type: ignore[attr-defined]
            right, cases = right + got["right"], cases + got["cases"]
            cells.append(f"{got['right']}/{got['cases']}" if got["cases"] else "-")
        print(f"  {t:<12}" + "".join(f"{c:>12}" for c in cells) + f"{f'{right}/{cases}':>12}")
    flags = rows[0]["flags"] if rows else {}
    print(f"\nsteps: {', '.join(f'{k}={v}' for k, v in flags.items())}")  # type: ignore[attr-defined]


async def in_process(args: argparse.Namespace, flags: Flags, suites: dict[str, list[Command]]
                     ) -> dict[str, list[Heard]]:
    empty = Path(tempfile.mkdtemp(prefix="hearthd-spoken-cfg-")) / "config.toml"
    empty.write_text("")
    cfg = load_config(empty, environ={})
    if args.stt_window is not None:
        cfg.stt.window_s = args.stt_window
    if args.window_languages is not None:
        cfg.stt.window_languages = [code for code in args.window_languages.split(",") if code]
    runner = SpokenRunner(cfg, load_home(Path(args.home)), SpokenVoices(), flags, args.seed)
    runner.load()
    results: dict[str, list[Heard]] = {}
    for lang, commands in suites.items():
        if not args.json:
            print(f"\n== {lang}: {len(commands)} commands, voice {runner.voices.voice(lang)}, seed {args.seed}",
                  flush=True)
        results[lang] = await runner.hear_all(commands, on_heard=lambda h: print(
            json.dumps(h.as_json(), ensure_ascii=False), flush=True) if args.json else show(h))
    return results


def by_cli(args: argparse.Namespace, flags: Flags, suites: dict[str, list[Command]]) -> dict[str, list[Heard]]:
    empty = Path(tempfile.mkdtemp(prefix="hearthd-spoken-cfg-")) / "config.toml"
    empty.write_text("")
    cfg = load_config(empty, environ={})
    home = load_home(Path(args.home))
    voices = SpokenVoices()
    work = temporary_work()
    results: dict[str, list[Heard]] = {}
    for lang, commands in suites.items():
        if not args.json:
            print(f"\n== {lang} (hearthd run --input FILE --no-wake, a process each): {len(commands)} commands")
        results[lang] = []
        for i, command in enumerate(commands):
            wav = work / f"{lang}-{i}.wav"
            write_wav(wav, voices.speak(command.text, lang, args.seed), SAMPLE_RATE)
            heard = run_cli(command, wav, cfg, home, flags, work)
            results[lang].append(heard)
            print(json.dumps(heard.as_json(), ensure_ascii=False), flush=True) if args.json else show(heard)
    return results


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--lang", action="append", choices=LANGS, help="only this language (repeatable)")
    parser.add_argument("--limit", type=int, help="the first N commands of each suite")
    parser.add_argument("--seed", type=int, default=0, help="the voices' seed (Piper's variation)")
    parser.add_argument("--json", action="store_true", help="one JSON object per command, then the summaries")
    parser.add_argument("--no-bias", action="store_true", help="stt.bias = false")
    parser.add_argument("--no-rescore", action="store_true", help="stt.rescore = false")
    parser.add_argument("--no-tolerant", action="store_true", help="agent.tolerant = false")
    parser.add_argument("--no-domain-hint", action="store_true", help="agent.domain_hint = false")
    parser.add_argument("--stt-window", type=float, help="stt.window_s: the seconds whisper's encoder looks at")
    parser.add_argument("--window-languages", help="stt.window_languages, e.g. en,ru")
    parser.add_argument("--lang-forced", action="store_true", help="tell whisper the suite's language")
    parser.add_argument("--household", action="store_true",
                        help="each conversation already in the suite's language (else a new one in general.language)")
    parser.add_argument("--cli", action="store_true", help="shell each utterance out to `hearthd run` instead")
    parser.add_argument("--suites", default=str(SUITES), help="directory of <lang>.yaml spoken suites")
    parser.add_argument("--home", default=str(HOME), help="the home the suites are spoken in")
    args = parser.parse_args()
    os.environ.setdefault("XDG_STATE_HOME", tempfile.mkdtemp(prefix="hearthd-spoken-state-"))
    flags = Flags(bias=not args.no_bias, rescore=not args.no_rescore, tolerant=not args.no_tolerant,
                  domain_hint=not args.no_domain_hint,
                  lang_forced=args.lang_forced, household=args.household)
    suites = {lang: load_suite(Path(args.suites) / f"{lang}.yaml", lang)[: args.limit] for lang in args.lang or LANGS}
    results = by_cli(args, flags, suites) if args.cli else asyncio.run(in_process(args, flags, suites))
    rows = summary(results, flags)
    if args.json:
        for row in rows:
            print(json.dumps(row, ensure_ascii=False))
    else:
        print_summary(rows)


if __name__ == "__main__":
    main()
